"""Every source, sandbox and live, has every member its protocol declares, in the
protocol's shape: the tools call any of them on whatever source a setting holds, with no
`getattr` and no look at the concrete class."""

from __future__ import annotations

import inspect
from collections.abc import Callable

import httpx
import pytest

from tests.tools._tooling import scenario
from tools.sources.base import ClusterSource, LogSource, MetricSource, Series
from tools.sources.live_elasticsearch import ElasticsearchLogs
from tools.sources.live_kubernetes import KubernetesCluster
from tools.sources.live_prometheus import PrometheusMetrics
from tools.sources.sandbox import SandboxCluster, SandboxLogs, SandboxMetrics

IMPLEMENTATIONS = [
    (ClusterSource, SandboxCluster), (ClusterSource, KubernetesCluster),
    (LogSource, SandboxLogs), (LogSource, ElasticsearchLogs),
    (MetricSource, SandboxMetrics), (MetricSource, PrometheusMetrics),
]


def members(protocol: type) -> list[str]:
    return sorted(name for name in vars(protocol) if not name.startswith("_"))


def shape(function: Callable[..., object]) -> list[tuple[str, object, object]]:
    """Parameter names, kinds and defaults (the types are mypy's to check)."""
    return [(p.name, p.kind, p.default) for p in inspect.signature(function).parameters.values()]


def test_the_metric_protocol_declares_what_the_tools_use() -> None:
    assert members(MetricSource) == ["metric_names", "metric_type", "promql", "series"]

    class SeriesOnly:
        async def series(self, metric: str) -> list[Series]:
            return []

    assert not isinstance(SeriesOnly(), MetricSource), "a store of raw series only is not one"


@pytest.mark.parametrize(("protocol", "implementation"), IMPLEMENTATIONS,
                         ids=lambda item: item.__name__)
def test_each_source_implements_its_whole_protocol(protocol: type,
                                                   implementation: type) -> None:
    for name in members(protocol):
        declared = inspect.getattr_static(protocol, name)
        implemented = inspect.getattr_static(implementation, name, None)
        assert implemented is not None, f"{implementation.__name__} lacks {name}"
        if isinstance(declared, property):
            assert isinstance(implemented, property), f"{name} is a property"
            continue
        assert inspect.iscoroutinefunction(implemented) == \
            inspect.iscoroutinefunction(declared), f"{name}: async or not as declared"
        assert shape(implemented) == shape(declared), f"{implementation.__name__}.{name}"


async def test_the_sandbox_has_no_promql_engine_and_prometheus_is_its_own() -> None:
    assert SandboxMetrics(scenario()).promql is None
    async with httpx.AsyncClient() as client:
        live = PrometheusMetrics(client, url="http://prometheus:9090")
        assert live.promql is live
        assert isinstance(live, MetricSource)
