"""The sandbox sources serve a scenario with the real backends' semantics."""

from __future__ import annotations

import itertools
from datetime import timedelta

import pytest

from engines.errors import BackendError
from tests.tools._tooling import scenario
from tools.sources.base import ClusterSource, LogQuery, LogSource, MetricSource
from tools.sources.sandbox import SandboxCluster, SandboxLogs, SandboxMetrics, sandbox_sources

NOW = scenario().now
OOM_POD = "checkout-7c9d5f8b4-x2k4p"
OTHER_POD = "checkout-7c9d5f8b4-q8w2z"


@pytest.fixture
def cluster() -> SandboxCluster:
    return SandboxCluster(scenario())


@pytest.fixture
def logs() -> SandboxLogs:
    return SandboxLogs(scenario())


@pytest.fixture
def metrics() -> SandboxMetrics:
    return SandboxMetrics(scenario())


def test_sources_implement_the_protocols() -> None:
    sources = sandbox_sources(scenario())
    assert isinstance(sources.cluster, ClusterSource)
    assert isinstance(sources.logs, LogSource)
    assert isinstance(sources.metrics, MetricSource)
    assert "fixture-shop" in sources.description


async def test_list_by_kind_alias_namespace_and_labels(cluster: SandboxCluster) -> None:
    pods = await cluster.list_objects("pods", "shop")
    assert {p["metadata"]["namespace"] for p in pods} == {"shop"}
    every = await cluster.list_objects("Pod")
    assert any(p["metadata"]["namespace"] == "kube-system" for p in every)
    labelled = await cluster.list_objects("Pod", "shop", label_selector={"app": "checkout"})
    assert {p["metadata"]["name"] for p in labelled} == {OOM_POD, OTHER_POD}
    nodes = await cluster.list_objects("Node", "shop")  # cluster-scoped: namespace ignored
    assert len(nodes) == 2


async def test_returned_objects_are_copies(cluster: SandboxCluster) -> None:
    first = await cluster.get_object("Pod", "shop", OOM_POD)
    assert first is not None
    first["metadata"]["name"] = "changed"
    again = await cluster.get_object("Pod", "shop", OOM_POD)
    assert again is not None and again["metadata"]["name"] == OOM_POD


async def test_event_field_selectors(cluster: SandboxCluster) -> None:
    about_pod = await cluster.list_objects("Event", "shop", field_selector={
        "involvedObject.kind": "Pod", "involvedObject.name": OOM_POD})
    assert {e["reason"] for e in about_pod} == {"BackOff", "Unhealthy", "Pulled"}
    warnings = await cluster.list_objects("Event", field_selector={"type": "Warning",
                                                                   "reason": "BackOff"})
    assert {e["metadata"]["namespace"] for e in warnings} == {"shop", "kube-system"}


async def test_pod_field_selectors(cluster: SandboxCluster) -> None:
    on_node = await cluster.list_objects("Pod", field_selector={"spec.nodeName": "node-b"})
    assert on_node == []
    pending = await cluster.list_objects("Pod", "shop", field_selector={"status.phase": "Pending"})
    assert [p["metadata"]["name"] for p in pending] == ["report-28861440-zx9vw"]


async def test_unsupported_field_selector_fails_as_live(cluster: SandboxCluster) -> None:
    with pytest.raises(BackendError, match="field label not supported"):
        await cluster.list_objects("Pod", field_selector={"spec.containers": "x"})


@pytest.mark.parametrize("kind", ["Secret", "secrets", "secret"])
async def test_secrets_are_refused(cluster: SandboxCluster, kind: str) -> None:
    with pytest.raises(BackendError, match="never read"):
        await cluster.list_objects(kind)
    with pytest.raises(BackendError, match="never read"):
        await cluster.get_object(kind, "shop", "payment-api")


async def test_unknown_kind_and_missing_object(cluster: SandboxCluster) -> None:
    with pytest.raises(BackendError, match="unknown kind"):
        await cluster.list_objects("Gizmo")
    assert await cluster.get_object("Pod", "shop", "nope") is None
    assert await cluster.get_object("Node", "", "node-a") is not None


async def test_pod_logs_current_previous_tail_since(cluster: SandboxCluster) -> None:
    current = await cluster.pod_logs("shop", OOM_POD)
    assert "listening on :8080" in current
    previous = await cluster.pod_logs("shop", OOM_POD, "checkout", previous=True)
    assert "heap usage" in previous
    tail = await cluster.pod_logs("shop", OOM_POD, previous=True, tail_lines=2)
    assert tail.count("\n") == 2 and "238MB" in tail
    recent = await cluster.pod_logs("shop", OOM_POD, previous=True,
                                    since=NOW - timedelta(minutes=4, seconds=30))
    assert "starting checkout" not in recent and "heap usage 200MB" in recent


async def test_missing_previous_log_says_what_the_api_says(cluster: SandboxCluster) -> None:
    with pytest.raises(BackendError, match='previous terminated container "checkout" in pod'):
        await cluster.pod_logs("shop", OTHER_POD, previous=True)


async def test_pod_logs_errors(cluster: SandboxCluster) -> None:
    with pytest.raises(BackendError, match="not found"):
        await cluster.pod_logs("shop", "ghost")
    with pytest.raises(BackendError, match="not valid for pod"):
        await cluster.pod_logs("shop", OOM_POD, "sidecar")
    with pytest.raises(BackendError, match="waiting to start"):
        await cluster.pod_logs("kube-system", "coredns-5d78c9869d-abcde")


async def test_log_search_newest_first_with_total(logs: SandboxLogs) -> None:
    query = LogQuery(start=NOW - timedelta(hours=2), end=NOW, text="Redis RESET peer")
    hits = await logs.search(query, limit=5)
    assert hits.total == 60 and len(hits.records) == 5
    stamps = [r.timestamp for r in hits.records]
    assert stamps == sorted(stamps, reverse=True)
    assert all("redis connection reset" in r.message for r in hits.records)


async def test_log_filters_and_exclusion(logs: SandboxLogs) -> None:
    start = NOW - timedelta(hours=2)
    errors = await logs.search(LogQuery(start, NOW, levels=("error",)), limit=1000)
    assert {r.namespace for r in errors.records} == {"shop", "kube-system"}
    kept = await logs.search(LogQuery(start, NOW, levels=("error",),
                                      exclude_namespaces=frozenset({"kube-system"})), limit=1000)
    assert {r.namespace for r in kept.records} == {"shop"}
    nested = await logs.search(LogQuery(start, NOW, pod="frontend-8d6c5b4f2-a1b2c"), limit=1)
    assert nested.total == 75  # nested ECS objects are read like flat keys
    assert (await logs.search(LogQuery(start, NOW, service="nope"))).total == 0


async def test_count_over_time_has_every_bucket(logs: SandboxLogs) -> None:
    query = LogQuery(start=NOW - timedelta(hours=2), end=NOW, service="frontend")
    buckets = await logs.count_over_time(query, interval_seconds=600)
    assert len(buckets) == 13  # 08:00 … 10:00 inclusive, empty ones included
    assert sum(n for _, n in buckets) == 75
    assert all(b[0] < a[0] for b, a in itertools.pairwise(buckets))
    with pytest.raises(BackendError):
        await logs.count_over_time(query, interval_seconds=0)


async def test_top_values(logs: SandboxLogs) -> None:
    query = LogQuery(start=NOW - timedelta(hours=2), end=NOW, levels=("error", "warn"))
    services = await logs.top_values(query, "service", size=2)
    assert services == [("frontend", 75), ("checkout", 60)]
    codes = await logs.top_values(query, "http.response.status_code")
    assert codes == [("502", 75)]


async def test_metric_matchers_regex_anchored(metrics: SandboxMetrics) -> None:
    start, end = NOW - timedelta(hours=1), NOW
    exact = await metrics.series("container_memory_working_set_bytes",
                                 {"pod": OOM_POD}, start, end)
    assert len(exact) == 1
    regex = await metrics.series("container_memory_working_set_bytes",
                                 {"pod": "~checkout-7c9d5f8b4-.*"}, start, end)
    assert {s.labels["pod"] for s in regex} == {OOM_POD, OTHER_POD}
    anchored = await metrics.series("container_memory_working_set_bytes",
                                    {"pod": "~7c9d5f8b4"}, start, end)
    assert anchored == []
    absent_label = await metrics.series("container_memory_working_set_bytes",
                                        {"nonexistent": ""}, start, end)
    assert len(absent_label) == 5  # PromQL: label="" matches series without it
    with pytest.raises(BackendError, match="regular expression"):
        await metrics.series("up", {"pod": "~("}, start, end)


async def test_metric_step_downsampling(metrics: SandboxMetrics) -> None:
    start, end = NOW - timedelta(hours=1), NOW
    fine = await metrics.series("container_memory_working_set_bytes", {"pod": OOM_POD},
                                start, end, step_seconds=60)
    coarse = await metrics.series("container_memory_working_set_bytes", {"pod": OOM_POD},
                                  start, end, step_seconds=600)
    assert len(fine[0].samples) == 51  # the pod started at 09:10
    assert len(coarse[0].samples) == 6
    gaps = {(b.timestamp - a.timestamp).total_seconds()
            for a, b in zip(coarse[0].samples, coarse[0].samples[1:], strict=False)}
    assert gaps == {600.0}


async def test_metrics_stop_after_lookback(metrics: SandboxMetrics) -> None:
    # revision 1 pods stopped at the rollout (09:10): five minutes of lookback, then nothing
    old = await metrics.series("container_memory_working_set_bytes",
                               {"pod": "checkout-6f7d8b9c5-h7j9k"}, NOW - timedelta(hours=1), NOW)
    assert old[0].samples[-1].timestamp <= NOW - timedelta(minutes=45)
