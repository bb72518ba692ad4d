"""The metric tools compute signals from raw series, each saying if it is abnormal and why."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from engines.errors import ConstraintViolationError, ToolError
from tests.tools._tooling import RawSeriesStore, call, context
from tools import _signals
from tools.context import ToolContext
from tools.sources.base import Sample, Series, Sources
from tools.sources.sandbox import SandboxMetrics


@pytest.fixture(scope="module")
def signals() -> dict[str, Any]:
    """Computed once for the module: the sandbox is read-only and the clock fixed."""
    return asyncio.run(call(context(), "metrics_workload_signals", namespace="shop",
                            workload="checkout"))


async def test_memory_against_the_limit(signals: dict[str, Any]) -> None:
    memory = signals["signals"]["memory"]
    assert memory["abnormal"] is True
    container = memory["containers"][0]
    assert container["limit"] == "256Mi" and container["peak"] == "252Mi"
    assert container["peak_ratio"] == pytest.approx(0.98, abs=0.01)
    assert container["drops_near_limit"] >= 4
    assert "OOM" in memory["why"]


async def test_restarts_requests_and_latency(signals: dict[str, Any]) -> None:
    assert set(signals["abnormal"]) == {"memory", "restarts", "requests", "latency"}
    assert signals["signals"]["restarts"]["restarts"] == 4
    requests = signals["signals"]["requests"]
    change = requests["change"]
    assert change["error_ratio_before"] == pytest.approx(0.005, abs=0.002)
    assert change["error_ratio_after"] == pytest.approx(0.194, abs=0.01)
    assert abs(datetime.fromisoformat(change["at"]) - datetime(2026, 11, 30, 9, 10, tzinfo=UTC)
               ) <= timedelta(minutes=2)
    latency = signals["signals"]["latency"]["change"]
    assert latency["before"]["p99"] < 1.0 < 2.0 < latency["after"]["p99"]
    cpu = signals["signals"]["cpu"]
    assert cpu["abnormal"] is False and cpu["throttled_ratio"] == pytest.approx(0.02)


async def test_pods_of_a_sibling_workload_are_left_out(signals: dict[str, Any]) -> None:
    seen = signals["pods_seen"]
    assert "checkout-worker-5b8d4c7f9-m4n6p" not in seen
    assert "checkout-6f7d8b9c5-h7j9k" in seen  # past pods of the workload count


async def test_signals_without_a_cluster_match_pods_by_name() -> None:
    ctx = context()
    bare = ToolContext(now=ctx.now, sources=Sources(metrics=ctx.sources.metrics))
    data = await call(bare, "metrics_workload_signals", namespace="shop", workload="checkout")
    assert data["signals"]["memory"]["abnormal"] is True


async def test_signals_say_what_is_missing() -> None:
    data = await call(context(), "metrics_workload_signals", namespace="shop",
                      workload="redis")
    assert any(item.startswith("memory") for item in data["no_data"])
    with pytest.raises(ConstraintViolationError):
        await call(context(exclude=("shop",)), "metrics_workload_signals", namespace="shop",
                   workload="checkout")


async def test_query_a_gauge_a_counter_and_a_histogram() -> None:
    ctx = context()
    gauge = await call(ctx, "metrics_query", metric="container_memory_working_set_bytes",
                       labels={"pod": "~checkout-7c9d5f8b4-.*"}, since="1h")
    assert gauge["series"] == 2 and gauge["values"] == "raw values"
    assert gauge["common_labels"]["namespace"] == "shop"
    counter = await call(ctx, "metrics_query", metric="http_requests_total",
                         labels={"code": "502"}, since="2h")
    assert counter["values"] == "per-second rate"
    assert any("change" in row for row in counter["by_series"])
    histogram = await call(ctx, "metrics_query", metric="http_request_duration_seconds_bucket",
                           since="2h")
    assert histogram["histogram"]["abnormal"] is True


async def test_query_unknown_metric_suggests_names() -> None:
    with pytest.raises(ToolError, match="similar metric names: http_requests_total"):
        await call(context(), "metrics_query", metric="http_request_total")


def _series(pod: str, values: list[float], metric: str = "m", **labels: str) -> Series:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    return Series(metric, {"pod": pod, "container": "app", **labels},
                  [Sample(start + timedelta(minutes=i), v) for i, v in enumerate(values)])


def test_cpu_throttling_is_abnormal_above_a_quarter() -> None:
    periods = _series("p", [i * 100.0 for i in range(20)])
    throttled = _series("p", [i * 40.0 for i in range(20)])
    result = _signals.cpu([throttled], [periods], [], {}, 60)
    assert result["abnormal"] is True and result["throttled_ratio"] == pytest.approx(0.4)


def test_requests_without_status_codes_and_latency_without_buckets() -> None:
    flat = _series("p", [i * 60.0 for i in range(30)])
    result = _signals.requests([flat], "requests_total", 60)
    assert result["share_by_class"] == {"all": 1.0} and result["abnormal"] is False
    assert _signals.latency([], "x_bucket")["why"] == "no observations in the window"


async def test_the_sandbox_lists_its_metric_names() -> None:
    ctx = context()
    assert isinstance(ctx.sources.metrics, SandboxMetrics)
    assert "http_requests_total" in ctx.sources.metrics.metric_names()


class _GrpcOnly(RawSeriesStore):
    """A metric store that holds only a gRPC server's handling-time histogram."""

    async def series(self, metric: str, matchers: Any, start: datetime, end: datetime, *,
                     step_seconds: int = 60) -> list[Series]:
        if metric != "grpc_server_handling_seconds_bucket":
            return []
        minutes = range(int((end - start).total_seconds() // 60))
        rows = []
        for le, (fast, slow) in {"0.05": (9.0, 1.0), "0.5": (10.0, 2.0), "2.5": (10.0, 9.0),
                                 "+Inf": (10.0, 10.0)}.items():
            total, samples = 0.0, []
            for i in minutes:
                total += fast if i < len(minutes) - 40 else slow
                samples.append(Sample(start + timedelta(minutes=i), total))
            rows.append(Series(metric, {"pod": "geo-index-7d9f8-abcde", "le": le,
                                        "namespace": "maps"}, samples))
        return rows


async def test_a_grpc_server_s_handling_time_is_its_latency() -> None:
    bare = ToolContext(now=datetime(2026, 11, 30, 10, 0, tzinfo=UTC),
                       sources=Sources(metrics=_GrpcOnly()))
    data = await call(bare, "metrics_workload_signals", namespace="maps", workload="geo-index")
    latency = data["signals"]["latency"]
    assert latency["metric"] == "grpc_server_handling_seconds_bucket"
    assert latency["abnormal"] is True and data["abnormal"] == ["latency"]


def _counter(pod: str, per_minute: list[float]) -> Series:
    """A CPU-seconds counter that grows by the given amounts, one sample a minute."""
    total, values = 1000.0, []
    for step in per_minute:
        total += step
        values.append(total)
    return _series(pod, values)


def test_a_workload_whose_pods_use_several_times_their_cpu_is_abnormal() -> None:
    old = _counter("agent-old", [3.6] * 30)  # 60m each, replaced at minute 30
    start = datetime(2026, 1, 1, 0, 30, tzinfo=UTC)  # its successor: 2.3 cores each
    new = Series("m", {"pod": "agent-new", "container": "app"},
                 [Sample(start + timedelta(minutes=i), 5000.0 + 138 * i) for i in range(30)])
    result = _signals.cpu([], [], [old, new], {}, 60)
    assert result["abnormal"] is True and "rose from 60m to 2.3 cores" in result["why"]
    assert result["usage_per_pod_change"]["after_cores"] == "2.3"
    assert result["usage_peak_cores"] == "2.3"  # the busiest pod, though neither has a limit

    steady = _signals.cpu([], [], [_counter("a", [3.6] * 30 + [6.0] * 30)], {}, 60)
    assert steady["abnormal"] is False and "usage_per_pod_change" not in steady


class _Gauges(RawSeriesStore):
    """A store whose connection gauge ends in _count: `# TYPE ... gauge` says what it is."""

    def __init__(self, declared: str | None) -> None:
        self.declared = declared

    async def series(self, metric: str, matchers: Any, start: datetime, end: datetime, *,
                     step_seconds: int = 60) -> list[Series]:
        values = [150.0 + i for i in range(60)]  # a leak: it only rises in the window
        return [Series(metric, {"application_name": "reporter"},
                       [Sample(start + timedelta(minutes=i), v) for i, v in enumerate(values)])]

    async def metric_type(self, metric: str) -> str | None:
        return self.declared


@pytest.mark.parametrize(("declared", "values"), [("gauge", "raw values"),
                                                  ("counter", "per-second rate")])
async def test_a_declared_type_decides_whether_count_is_a_rate(declared: str,
                                                                values: str) -> None:
    ctx = ToolContext(now=datetime(2026, 1, 1, 1, 0, tzinfo=UTC),
                      sources=Sources(metrics=_Gauges(declared)))
    data = await call(ctx, "metrics_query", metric="pg_stat_activity_count")
    assert data["values"] == values
    if declared == "gauge":
        assert data["by_series"][0]["last"] >= 200


async def test_without_a_declared_type_a_count_that_falls_is_a_gauge() -> None:
    class Falling(_Gauges):
        async def series(self, metric: str, matchers: Any, start: datetime, end: datetime, *,
                         step_seconds: int = 60) -> list[Series]:
            values = [20.0, 19.0, 21.0, 18.0] * 15
            return [Series(metric, {}, [Sample(start + timedelta(minutes=i), v)
                                        for i, v in enumerate(values)])]

    ctx = ToolContext(now=datetime(2026, 1, 1, 1, 0, tzinfo=UTC),
                      sources=Sources(metrics=Falling(None)))
    data = await call(ctx, "metrics_query", metric="pg_stat_activity_count")
    assert data["values"] == "raw values"


async def test_the_sandbox_reads_types_from_the_openmetrics_file() -> None:
    metrics = context().sources.metrics
    assert isinstance(metrics, SandboxMetrics)
    assert await metrics.metric_type("http_requests_total") == "counter"
    assert await metrics.metric_type("container_memory_working_set_bytes") == "gauge"
    assert await metrics.metric_type("no_such_metric") is None


def test_throttling_that_began_mid_window_is_reported_from_when_it_began() -> None:
    periods = _series("p", [i * 100.0 for i in range(120)])
    throttled = _counter("p", [2.0] * 80 + [65.0] * 39)  # 2% of periods, then 65%
    result = _signals.cpu([throttled], [periods], [], {}, 60)
    assert result["throttled_ratio"] < 0.25  # over the whole window it looks mild...
    change = result["throttled_change"]  # ...but since it began, most periods are throttled
    assert change["ratio_before"] == pytest.approx(0.02) and change["ratio_after"] >= 0.6
    assert change["at"] == "2026-01-01T01:20:00Z" and "rose from 2% to 65%" in result["why"]


def test_a_consumer_lag_that_keeps_growing_is_a_backlog_and_a_steady_one_is_not() -> None:
    growing = [_series("exporter", [200.0] * 20 + [200.0 + 400 * i for i in range(1, 21)],
                       "kafka_consumergroup_lag", partition=str(p)) for p in range(2)]
    signal = _signals.backlog(growing, "kafka_consumergroup_lag")
    assert signal["abnormal"] is True and signal["early"] == 400.0  # two partitions
    assert signal["growing_since"] == "2026-01-01T00:20:00Z"
    assert "consumer lag grew from 400 to 16400 messages" in signal["why"]
    steady = [_series("exporter", [300.0, 900.0, 250.0, 800.0] * 10, "kafka_consumergroup_lag")]
    assert _signals.backlog(steady, "kafka_consumergroup_lag")["abnormal"] is False
