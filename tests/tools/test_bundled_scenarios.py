"""Every tool runs on every bundled scenario, stays small, and finds checkout-oom's facts.

A tool may answer an error (a pod without a previous instance), never crash; its data is
JSON, and its rendering stays well inside what an observation may cost.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from engines.errors import TriageError
from engines.tokens import count_tokens
from tests._ci import skip_or_fail
from tests.tools._tooling import call, context, scenario
from tools.compress import to_text
from tools.scenarios import bundled_ids

MAX_TOKENS = 1600  # rendered; the toolset fits observations to its budget after this


def _battery(namespace: str, name: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("k8s_list_workloads", {}), ("k8s_list_workloads", {"namespace": namespace, "name": name}),
        ("k8s_list_pods", {}), ("k8s_list_pods", {"namespace": namespace}),
        ("k8s_describe_pod", {"namespace": namespace, "pod": name}),
        ("k8s_pod_logs", {"namespace": namespace, "pod": name}),
        ("k8s_pod_logs", {"namespace": namespace, "pod": name, "previous": True}),
        ("k8s_events", {}), ("k8s_events", {"namespace": namespace, "object_name": name}),
        ("k8s_rollout_history", {"namespace": namespace, "workload": name}),
        ("k8s_list_nodes", {}), ("k8s_list_services", {}), ("k8s_list_autoscalers", {}),
        ("k8s_list_quotas", {}), ("k8s_list_network_policies", {}), ("k8s_list_ingresses", {}),
        ("logs_error_patterns", {"since": "3h"}), ("logs_search", {"level": "error"}),
        ("logs_count_over_time", {"level": "error"}),
        ("metrics_workload_signals", {"namespace": namespace, "workload": name}),
    ]


@pytest.mark.parametrize("scenario_id", bundled_ids())
async def test_every_tool_runs_small_on_every_scenario(scenario_id: str) -> None:
    truth = scenario(scenario_id).truth.culprit
    ctx = context(scenario_id)
    answered = 0
    for name, arguments in _battery(truth.namespace, truth.name):
        try:
            data = await call(ctx, name, **arguments)
        except TriageError:
            continue  # an error observation, which the toolset shows the model
        answered += 1
        tokens = count_tokens(to_text(data))
        assert tokens <= MAX_TOKENS, f"{name}{arguments} renders {tokens} tokens"
    assert answered >= 15


@pytest.mark.parametrize("scenario_id", bundled_ids())
async def test_excluded_namespace_stays_out_of_every_scenario(scenario_id: str) -> None:
    loaded = scenario(scenario_id)
    namespaces = {o["metadata"].get("namespace") for o in loaded.cluster_objects
                  if o.get("kind") == "Pod"} - {None, loaded.truth.culprit.namespace}
    if not namespaces:  # every bundled scenario has some today; CI keeps it so
        skip_or_fail(f"{scenario_id} has pods in the culprit's namespace only: nothing to "
                     "exclude")
    excluded = sorted(namespaces)[0]
    ctx = context(scenario_id, exclude=(excluded,))
    for name in ("k8s_list_pods", "k8s_list_workloads", "k8s_events", "k8s_list_services",
                 "logs_error_patterns", "logs_search"):
        data = await call(ctx, name)
        rendered = json.dumps(data)
        assert f'"namespace": "{excluded}"' not in rendered, name
        assert f"{excluded}/" not in rendered, name


CHECKOUT = "checkout-oom"


async def test_checkout_oom_facts() -> None:
    assert CHECKOUT in bundled_ids(), f"{CHECKOUT} is not bundled: renamed or removed?"
    ctx = context(CHECKOUT)
    pod = await call(ctx, "k8s_describe_pod", namespace="shop", pod="checkout")
    container = pod["containers"][0]
    assert container["last_state"]["terminated"] == "OOMKilled"
    assert container["last_state"]["exit_code"] == 137
    assert container["limits"]["memory"] == "256Mi"

    history = await call(ctx, "k8s_rollout_history", namespace="shop", workload="checkout")
    current = next(r for r in history["revisions"] if r["current"])
    assert current["images"][0].endswith(":2.3.1") and "OOMKilled" in current["last_exit_reasons"]
    assert any("2.3.0 →" in change and change.endswith(":2.3.1")
               for change in history["changes_from_previous"])

    signals = await call(ctx, "metrics_workload_signals", namespace="shop", workload="checkout")
    memory = signals["signals"]["memory"]
    assert memory["abnormal"] and memory["containers"][0]["peak_ratio"] >= 0.95
    assert memory["containers"][0]["limit"] == "256Mi"
    assert signals["signals"]["restarts"]["restarts"] > 0

    workloads = await call(ctx, "k8s_list_workloads", problems_only=True)
    assert [w["name"] for w in workloads["workloads"]] == ["checkout"]

    patterns = await call(ctx, "logs_error_patterns", since="2h")
    top = patterns["patterns"][0]
    assert "checkout" in top["template"] and top["services"] == {"frontend": top["count"]}
