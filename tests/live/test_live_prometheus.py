"""The live metric source against a real Prometheus, compared with the sandbox.

Prometheus holds the session scenario's metrics.om (backfilled with promtool). For every
metric, several label matchers (equality and `~regex`), windows and steps, both sources
must return the same series with the same values at the same steps. Then the PromQL tool
(offered live only) and the errors.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from engines.constraints import Constraint, ConstraintSet
from engines.errors import BackendError
from engines.model import ToolCall
from tests._ci import skip_or_fail
from tests.live._live import metrics_of
from tests.services._process import free_port
from tests.services.prometheus import PrometheusServer
from tools._series import summarize
from tools.catalog import available_tools
from tools.context import ToolContext
from tools.scenarios import Scenario, load_scenario
from tools.sources.base import MetricSource, Series, Sources
from tools.sources.live_prometheus import MAX_POINTS, PrometheusMetrics, selector
from tools.sources.sandbox import SandboxMetrics, sandbox_sources
from tools.toolset import Toolset

pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def scenario(live_scenario: Path) -> Scenario:
    return load_scenario(live_scenario)


@pytest.fixture
async def metrics(prometheus_server: PrometheusServer) -> AsyncIterator[PrometheusMetrics]:
    source = metrics_of(prometheus_server)
    yield source
    await source.close()


def _as_rows(series: list[Series]) -> list[tuple[Any, ...]]:
    return sorted((s.metric, sorted(s.labels.items()), [(p.timestamp, p.value)
                                                         for p in s.samples]) for s in series)


async def test_series_match_the_sandbox_for_every_metric(
    metrics: PrometheusMetrics, scenario: Scenario
) -> None:
    assert isinstance(metrics, MetricSource)
    sandbox = SandboxMetrics(scenario)
    namespace = next(s.labels["namespace"] for s in scenario.metric_series
                     if s.labels.get("namespace"))
    pod = next(s.labels["pod"] for s in scenario.metric_series if s.labels.get("pod"))
    matchers: list[dict[str, str]] = [
        {}, {"namespace": namespace}, {"namespace": namespace, "pod": "~" + pod[:4] + ".*"},
        {"container": "~.+"}, {"container": ""}, {"namespace": "~(?:" + namespace + "|x)"}]
    compared = 0
    for name in sandbox.metric_names():
        for labels in matchers:
            for hours, step in ((1, 60), (3, 60), (6, 120), (24, 600), (0.5, 15)):
                start = scenario.now - timedelta(hours=hours) + timedelta(seconds=7)
                live = await metrics.series(name, labels, start, scenario.now, step_seconds=step)
                recorded = await sandbox.series(name, labels, start, scenario.now,
                                                step_seconds=step)
                assert _as_rows(live) == _as_rows(recorded), (name, labels, hours)
                compared += bool(recorded)
    assert compared > 20


async def test_range_queries_are_bounded(metrics: PrometheusMetrics, scenario: Scenario) -> None:
    name = scenario.metric_series[0].metric
    found = await metrics.series(name, {}, scenario.now - timedelta(days=7), scenario.now,
                                 step_seconds=1)
    assert found and all(len(s.samples) <= MAX_POINTS for s in found)


def test_selectors_quote_values_and_refuse_bad_names() -> None:
    assert selector("up", {"job": 'a"b\\c', "pod": "~web-.*"}) == \
        '{__name__="up", job="a\\"b\\\\c", pod=~"web-.*"}'
    for bad in ("up or vector(1)", "up{}"):
        with pytest.raises(BackendError, match="invalid metric name"):
            selector(bad, {})
    with pytest.raises(BackendError, match="invalid label name"):
        selector("up", {"bad-label": "x"})


async def test_raw_promql_instant_and_range(metrics: PrometheusMetrics, scenario: Scenario
                                            ) -> None:
    name = "kube_pod_container_status_restarts_total"
    recorded = await SandboxMetrics(scenario).series(
        name, {}, scenario.now - timedelta(minutes=1), scenario.now, step_seconds=60)
    if not recorded:
        skip_or_fail(f"the scenario has no {name}")
    instant = await metrics.query(f"sum({name})", scenario.now)
    assert instant.result_type == "vector"
    assert instant.series[0].samples[0].value == sum(s.samples[-1].value for s in recorded)
    hour = scenario.now - timedelta(hours=1)
    ranged = await metrics.query_range(f"max by (pod) ({name})", hour, scenario.now, 300)
    assert ranged.result_type == "matrix" and ranged.step_seconds == 300
    in_window = await SandboxMetrics(scenario).series(name, {}, hour, scenario.now,
                                                      step_seconds=300)
    assert {s.labels["pod"] for s in ranged.series} == {s.labels["pod"] for s in in_window}
    scalar = await metrics.query("scalar(vector(42))", scenario.now)
    assert scalar.result_type == "scalar" and scalar.value == 42.0


async def test_promql_tool_is_offered_live_only_and_summarises(
    metrics: PrometheusMetrics, scenario: Scenario
) -> None:
    live_sources = Sources(metrics=metrics)
    assert "metrics_promql" in {t.name for t in available_tools(live_sources)}
    assert "metrics_promql" not in {t.name for t in available_tools(sandbox_sources(scenario))}
    namespace = next(s.labels["namespace"] for s in scenario.metric_series
                     if s.metric == "container_memory_working_set_bytes")
    constraints = ConstraintSet()
    toolset = Toolset(available_tools(live_sources),
                      ToolContext(now=scenario.now, sources=live_sources, constraints=constraints))
    query = f'max by (pod) (container_memory_working_set_bytes{{namespace="{namespace}"}})'
    ranged = await toolset.call(ToolCall("1", "metrics_promql", {"query": query, "since": "3h"}))
    assert ranged.status == "success", ranged.text
    assert ranged.data["type"] == "matrix" and ranged.data["series"] >= 1
    top = ranged.data["by_series"][0]
    memory = await SandboxMetrics(scenario).series(
        "container_memory_working_set_bytes", {"namespace": namespace},
        scenario.now - timedelta(hours=3), scenario.now, step_seconds=60)
    stats = summarize([p.value for s in memory for p in s.samples])
    assert stats is not None and top["max"] == pytest.approx(stats.maximum, rel=1e-2)
    instant = await toolset.call(ToolCall("2", "metrics_promql", {"query": query,
                                                                   "instant": True}))
    assert instant.status == "success" and instant.data["type"] == "vector"
    constraints.add(Constraint("exclude_namespace", f"stay out of {namespace}", namespace))
    refused = await toolset.call(ToolCall("3", "metrics_promql", {"query": query + " "}))
    assert refused.status == "error" and f"namespace {namespace} is excluded" in refused.text
    filtered = await toolset.call(ToolCall("4", "metrics_promql", {
        "query": "max by (namespace, pod) (container_memory_working_set_bytes)"}))
    assert all(namespace not in str(row) for row in filtered.data.get("by_series", []))
    bad = await toolset.call(ToolCall("5", "metrics_promql", {"query": "sum(rate(x[5m]"}))
    assert bad.status == "error" and "Prometheus rejected the query (bad_data)" in bad.text


# ---------------------------------------------------------------------- errors


async def test_unreachable_wrong_path_and_refused_credentials(
    prometheus_server: PrometheusServer, scenario: Scenario
) -> None:
    window = (scenario.now - timedelta(hours=1), scenario.now)
    url = f"http://127.0.0.1:{free_port()}"
    dead = PrometheusMetrics.connect(url)
    with pytest.raises(BackendError) as unreachable:
        await dead.series("up", {}, *window)
    assert str(unreachable.value) == f"cannot reach Prometheus at {url}: connection refused"
    await dead.close()
    wrong = PrometheusMetrics.connect(prometheus_server.url + "/prometheus")
    with pytest.raises(BackendError, match=r"not found: .*/prometheus/api/v1/query_range \(404\)"
                                           r": PROMETHEUS_URL must be the server's root"):
        await wrong.series("up", {}, *window)
    await wrong.close()

    class Refusing(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.send_response(401 if "Bearer" not in self.headers.get("Authorization", "")
                               else 403)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST

        def log_message(self, format: str, *args: object) -> None:
            """Quiet."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Refusing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    proxy = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        basic = PrometheusMetrics.connect(proxy, username="u", password="hunter2hunter2")
        with pytest.raises(BackendError, match=r"rejected the credentials \(401\): check "
                                               r"PROMETHEUS_TOKEN or PROMETHEUS_USERNAME"):
            await basic.series("up", {}, *window)
        await basic.close()
        bearer = PrometheusMetrics.connect(proxy, token="s3cr3t-t0ken-value")
        with pytest.raises(BackendError, match=r"forbidden: .* \(403\)") as forbidden:
            await bearer.check()
        assert "s3cr3t" not in str(forbidden.value)
        await bearer.close()
    finally:
        server.shutdown()
        server.server_close()


async def test_start_up_check_reports_missing_metrics(metrics: PrometheusMetrics) -> None:
    notes = await metrics.check(("container_memory_working_set_bytes", "no_such_metric_total"))
    assert notes[0].startswith("Prometheus ") and "metric names" in notes[0]
    assert notes[1:] == ["missing metrics: no_such_metric_total"]
    assert "container_memory_working_set_bytes" in metrics.metric_names()


async def test_metric_types_come_from_metadata_when_the_server_has_any(
    metrics: PrometheusMetrics, scenario: Scenario
) -> None:
    """Backfilled series carry no metadata (only scrapes do): the type is unknown, and
    metrics_query then falls back on the name and the values."""
    name = next(s.metric for s in scenario.metric_series if s.metric.endswith("_total"))
    assert await metrics.metric_type(name) is None
    toolset = Toolset(available_tools(Sources(metrics=metrics)),
                      ToolContext(now=scenario.now, sources=Sources(metrics=metrics)))
    result = await toolset.call(ToolCall("q", "metrics_query", {"metric": name, "since": "3h"}))
    assert result.status == "success", result.text
    assert "per-second rate" in result.text
