"""The Kubernetes tools find the facts that matter in the fixture scenario."""

from __future__ import annotations

from pathlib import Path

import pytest

from engines.errors import BackendError, ConstraintViolationError, ToolError, ToolRetryError
from tests.tools._tooling import call, context, text
from tools.compress import fit
from tools.redact import MASK

OOM_POD = "checkout-7c9d5f8b4-x2k4p"


async def test_list_pods_puts_unhealthy_first_with_their_last_exit() -> None:
    data = await call(context(), "k8s_list_pods", namespace="shop")
    assert data["total"] == 8 and data["unhealthy"] == 3
    first = data["pods"][0]
    assert first["name"] == OOM_POD and first["status"] == "CrashLoopBackOff"
    assert first["last_exit"].startswith("OOMKilled (exit 137)")
    assert first["owner"] == "Deployment/checkout"
    healthy = data["pods"][-1]
    assert "node" not in healthy and "restarts" not in healthy  # healthy pods in short
    pending = next(p for p in data["pods"] if p["status"] == "Pending:Unschedulable")
    assert "Insufficient memory" in pending["message"]


async def test_list_pods_filters() -> None:
    ctx = context()
    only = await call(ctx, "k8s_list_pods", namespace="shop", problems_only=True)
    assert only["total"] == 3
    by_label = await call(ctx, "k8s_list_pods", namespace="shop", selector="app=checkout")
    assert by_label["total"] == 2
    cut = await call(ctx, "k8s_list_pods", limit=2)
    assert cut["pods"][-1] == {"omitted": cut["total"] - 2}
    with pytest.raises(ToolRetryError):
        await call(ctx, "k8s_list_pods", selector="app!=x")


async def test_list_workloads_rolls_up_pod_problems() -> None:
    data = await call(context(), "k8s_list_workloads", namespace="shop", problems_only=True)
    checkout = next(w for w in data["workloads"] if w["name"] == "checkout")
    assert checkout["ready"] == "0/2"
    assert checkout["pods"]["last_exit_reasons"] == {"OOMKilled": 2}
    assert checkout["pods"]["restarts"] == 9
    assert any("MinimumReplicasUnavailable" in p for p in checkout["problems"])
    assert "frontend" not in {w["name"] for w in data["workloads"]}


async def test_list_workloads_puts_the_sickest_first_and_healthy_ones_short() -> None:
    data = await call(context(), "k8s_list_workloads")
    rows = data["workloads"]
    sick = rows[: data["unhealthy"]]
    assert sick and all("problems" in row for row in sick)
    weight = [row.get("pods", {}).get("unhealthy", 0) + len(row["problems"]) for row in sick]
    assert weight == sorted(weight, reverse=True)  # a budget cuts the mildest first
    healthy = rows[data["unhealthy"]:]
    assert healthy and all(set(row) <= {"kind", "name", "namespace", "ready", "completed",
                                        "images"} for row in healthy)


async def test_list_workloads_by_name_shows_resources() -> None:
    data = await call(context(), "k8s_list_workloads", namespace="shop", name="checkout")
    container = data["workloads"][0]["containers"][0]
    assert container["limits"]["memory"] == "256Mi"
    assert container["liveness_probe"].startswith("http-get")
    with pytest.raises(ToolError):
        await call(context(), "k8s_list_workloads", namespace="shop", name="nope")


async def test_a_workload_s_age_is_told_in_words_and_given_in_seconds() -> None:
    """Readers compare the number (the analyzer judges a failed run's age by it); a model
    reads the words."""
    data = await call(context(), "k8s_list_workloads", namespace="shop", name="checkout")
    row = data["workloads"][0]
    assert (row["age"], row["age_seconds"]) == ("30d", 30 * 86400)  # created 2026-10-31T10:00
    assert "\n  age: 30d\n  age_seconds: 2592000\n" in fit(data, 4000)[0]  # as a model sees it


async def test_describe_pod_finds_the_oom_kill() -> None:
    data = await call(context(), "k8s_describe_pod", namespace="shop", pod="checkout")
    assert data["name"] == OOM_POD and "least healthy" in data["note"]
    assert data["owner"] == "Deployment/checkout → ReplicaSet/checkout-7c9d5f8b4"
    container = data["containers"][0]
    assert container["last_state"]["terminated"] == "OOMKilled"
    assert container["last_state"]["exit_code"] == 137
    assert container["last_state"]["finished"].startswith("2026-11-30T09:58:00Z")
    assert container["limits"] == {"cpu": "500m", "memory": "256Mi"}
    assert container["state"]["waiting"] == "CrashLoopBackOff"
    assert container["restarts"] == 5
    env = {e["name"]: e["value"] for e in container["env"]}
    assert env["DB_PASSWORD"] == MASK and "hunter2" not in text(data)
    assert env["PAYMENT_API_TOKEN"] == "<from secret payment-api/token>"
    backoff = next(e for e in data["events"] if e["reason"] == "BackOff")
    assert backoff["count"] == 12 and backoff["type"] == "Warning"
    assert "Pulled" in data["normal_events"]


async def test_describe_pod_of_a_workload_without_pods() -> None:
    with pytest.raises(ToolError, match="no pod"):
        await call(context(), "k8s_describe_pod", namespace="shop", pod="payments")


async def test_pod_logs_previous_instance_summarised_and_redacted() -> None:
    data = await call(context(), "k8s_pod_logs", namespace="shop", pod=OOM_POD, previous=True)
    assert data["instance"] == "previous" and data["container"] == "checkout"
    assert data["lines_read"] == 23
    heap = data["patterns"][0]
    assert heap["count"] == 20 and "heap usage" in heap["template"]
    assert len(data["last_lines"]) == 8 and data["earlier_lines_omitted"] == 15
    assert "abcDEF123456ghiJKL789" not in text(data)


async def test_pod_logs_grep_and_missing_previous() -> None:
    ctx = context()
    data = await call(ctx, "k8s_pod_logs", namespace="shop", pod=OOM_POD, previous=True,
                      grep="cache|starting")
    assert data["lines_matching"] == 2
    with pytest.raises(BackendError, match="previous terminated container"):
        await call(ctx, "k8s_pod_logs", namespace="shop", pod="checkout-7c9d5f8b4-q8w2z",
                   previous=True)


async def test_events_warnings_first_grouped_with_counts() -> None:
    data = await call(context(), "k8s_events", namespace="shop")
    types = [e["type"] for e in data["events"]]
    assert types == sorted(types, key=lambda t: t != "Warning")
    backoff = next(e for e in data["events"] if e["reason"] == "BackOff")
    assert backoff["count"] == 21 and backoff["similar_objects"] == 1  # both pods of the RS
    assert backoff["last_seen"].endswith("(1m ago)")


async def test_events_filters() -> None:
    ctx = context()
    about = await call(ctx, "k8s_events", namespace="shop", object_name="checkout",
                       type="Warning")
    assert {e["reason"] for e in about["events"]} == {"BackOff", "Unhealthy"}
    scheduling = await call(ctx, "k8s_events", reason="FailedScheduling")
    assert scheduling["total"] == 7
    none = await call(ctx, "k8s_events", namespace="shop", reason="Evicted")
    assert none["events"] == [] and "note" in none


async def test_rollout_history_shows_revisions_and_the_change() -> None:
    data = await call(context(), "k8s_rollout_history", namespace="shop", workload="checkout")
    assert data["current_revision"] == 2
    current, previous = data["revisions"]
    assert current["current"] and current["images"] == ["shop/checkout:2.3.1"]
    assert current["last_exit_reasons"] == ["OOMKilled"] and current["restarts"] == 9
    assert current["created"].startswith("2026-11-30T09:10:00Z")
    assert not previous["current"] and previous["revision"] == 1
    assert "checkout: memory limit 512Mi → 256Mi" in data["changes_from_previous"]
    assert "checkout: image shop/checkout:2.3.0 → shop/checkout:2.3.1" in \
        data["changes_from_previous"]
    assert not any("DB_PASSWORD" in change for change in data["changes_from_previous"])


async def test_rollout_history_of_a_statefulset_and_of_nothing() -> None:
    ctx = context()
    data = await call(ctx, "k8s_rollout_history", namespace="shop", workload="redis")
    assert data["workload"] == "StatefulSet shop/redis" and data["rolling"] is False
    with pytest.raises(ToolError):
        await call(ctx, "k8s_rollout_history", namespace="shop", workload="nope")


async def test_nodes_pressure_taints_and_requests() -> None:
    data = await call(context(), "k8s_list_nodes")
    first = data["nodes"][0]
    assert first["name"] == "node-b"
    assert any(p.startswith("MemoryPressure") for p in first["problems"])
    assert first["taints"] == ["node.kubernetes.io/memory-pressure:NoSchedule"]
    assert first["warnings"][0]["reason"] == "EvictionThresholdMet"
    node_a = data["nodes"][1]
    assert node_a["requested"]["cpu"] == "1 (25%)" and node_a["pods"] == 8


async def test_services_say_when_a_selector_matches_no_pod() -> None:
    data = await call(context(), "k8s_list_services", namespace="shop")
    services = {s["name"]: s for s in data["services"]}
    assert services["payments"]["problems"] == [
        "selector app=payments matches no pod in the namespace"]
    assert services["checkout"]["endpoints"] == {"ready": 0, "not_ready": 2}
    assert "problems" not in services["frontend"]


async def test_autoscaler_at_its_maximum() -> None:
    data = await call(context(), "k8s_list_autoscalers", namespace="shop")
    hpa = data["autoscalers"][0]
    assert hpa["at_max"] is True and hpa["metrics"] == ["cpu 96% / target 70%"]
    assert any("cannot add capacity" in p for p in hpa["problems"])


async def test_quotas_used_against_hard() -> None:
    data = await call(context(), "k8s_list_quotas", namespace="shop")
    memory = data["quotas"][0]["resources"][0]
    assert memory == {"resource": "limits.memory", "used": "3.8Gi", "hard": "4Gi",
                      "used_ratio": 0.94, "state": "near limit"}
    assert data["limit_ranges"][0]["limits"][0]["max"] == {"memory": "1Gi"}


async def test_network_policy_and_ingress() -> None:
    ctx = context()
    policies = await call(ctx, "k8s_list_network_policies", namespace="shop")
    deny = policies["policies"][0]
    assert deny["ingress"] == "deny all" and deny["selected_pods"] == 8
    ingresses = await call(ctx, "k8s_list_ingresses", namespace="shop")
    storefront = ingresses["ingresses"][0]
    assert storefront["problems"] == ["backend service billing does not exist in shop"]
    assert storefront["tls"] == [{"hosts": ["shop.example.com"], "secretName": "shop-tls"}]


async def test_get_object_trims_and_masks() -> None:
    data = await call(context(), "k8s_get_object", kind="ConfigMap", namespace="shop",
                      name="checkout-config")
    assert data["data"]["DATABASE_URL"] == f"postgres://app:{MASK}@db.shop:5432/shop"
    node = await call(context(), "k8s_get_object", kind="node", name="node-b")
    assert node["metadata"]["name"] == "node-b"


@pytest.mark.parametrize("kind", ["Secret", "secrets"])
async def test_secrets_are_never_read(kind: str) -> None:
    with pytest.raises(ToolError, match="never read"):
        await call(context(), "k8s_get_object", kind=kind, namespace="shop", name="payment-api")


CROSS_NAMESPACE: list[tuple[str, dict[str, object]]] = [
    ("k8s_list_pods", {}), ("k8s_list_workloads", {}), ("k8s_events", {}),
    ("k8s_list_services", {}), ("k8s_list_autoscalers", {}), ("k8s_list_quotas", {}),
    ("k8s_list_network_policies", {}), ("k8s_list_ingresses", {}),
]


@pytest.mark.parametrize(("name", "arguments"), CROSS_NAMESPACE)
async def test_excluded_namespace_never_appears(name: str, arguments: dict[str, object]) -> None:
    included = await call(context(), name, **arguments)
    excluded = await call(context(exclude=("kube-system",)), name, **arguments)
    assert "kube-system" not in text(excluded) and "coredns" not in text(excluded)
    if name in ("k8s_list_pods", "k8s_list_workloads", "k8s_events"):
        assert "kube-system" in text(included)  # the fixture does have it


@pytest.mark.parametrize("name", ["k8s_list_pods", "k8s_events", "k8s_list_workloads"])
async def test_explicit_excluded_namespace_is_refused(name: str) -> None:
    with pytest.raises(ConstraintViolationError):
        await call(context(exclude=("kube-system",)), name, namespace="kube-system")


async def test_pod_logs_say_when_the_current_instance_has_ended() -> None:
    """A failed Job's pod is not restarted: its current log is the run's last words."""
    rotas = context(Path(__file__).parents[1] / "data/holdout17/volunteer-rotas-not-sent")
    data = await call(rotas, "k8s_pod_logs", namespace="foodbank", pod="rota-mailer")
    assert data["container_state"] == "terminated: Error (exit 1)"
    assert "No space left on device" in data["first_error"]
    running = await call(context(), "k8s_pod_logs", namespace="shop", pod=OOM_POD)
    assert "container_state" not in running
