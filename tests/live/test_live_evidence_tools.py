"""The evidence tools (issue 16) against a real kube-apiserver and a real Prometheus.

The evidence-shop scenario is loaded beside the session scenario (its own namespace, one
StorageClass) into the session API server, and its metrics into a Prometheus of its own.
Each tool must say over the live sources what it says over the sandbox, with one known
difference: a live object comes without managedFields (as `kubectl get -o json` prints
it), so the time a ConfigMap last changed is not known live and only its creation is shown.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.live._backdate import restore_creation_times
from tests.live._live import cluster_of, metrics_of, prometheus_for, unload_scenario
from tests.services.kube import KubeApiServer
from tests.services.kube_loader import load_objects, read_objects
from tests.services.prometheus import PrometheusServer
from tests.tools._tooling import TOOLS
from tools.context import ToolContext
from tools.scenarios import Scenario, load_scenario
from tools.sources.base import Sources
from tools.sources.sandbox import sandbox_sources

pytestmark = pytest.mark.live

EVIDENCE = Path(__file__).resolve().parents[1] / "tools" / "data" / "evidence-shop"
NS = "evidence"
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("k8s_pod_limit_ranges", {"namespace": NS, "pod": "worker"}),
    ("k8s_pod_limit_ranges", {"namespace": NS, "pod": "nightly-report"}),
    ("k8s_list_volume_claims", {"namespace": NS}),
    ("k8s_mounted_config", {"namespace": NS, "workload": "payments-client"}),
    ("k8s_service_endpoints", {"namespace": NS, "service": "cart"}),
    ("k8s_service_endpoints", {"namespace": NS, "service": "orders-db"}),
    ("k8s_service_endpoints", {"namespace": NS, "service": "ledger-db"}),
]


@pytest.fixture(scope="module")
def scenario() -> Scenario:
    return load_scenario(EVIDENCE)


@pytest.fixture(scope="module")
def loaded(kube_server: KubeApiServer) -> Iterator[KubeApiServer]:
    """The session API server with evidence-shop loaded (and unloaded after the module)."""
    load_objects(kube_server, read_objects(EVIDENCE / "cluster.yaml"))
    restore_creation_times(kube_server, EVIDENCE)
    try:
        yield kube_server
    finally:
        unload_scenario(kube_server, EVIDENCE)


@pytest.fixture(scope="module")
def prometheus() -> Iterator[PrometheusServer]:
    with prometheus_for(EVIDENCE) as server:
        yield server


@pytest.fixture
async def live(loaded: KubeApiServer, prometheus: PrometheusServer,
               scenario: Scenario) -> AsyncIterator[ToolContext]:
    cluster = cluster_of(loaded)
    metrics = metrics_of(prometheus)
    yield ToolContext(now=scenario.now, sources=Sources(cluster=cluster, metrics=metrics))
    cluster.close()
    await metrics.close()


async def _run(ctx: ToolContext, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    tool = TOOLS[name]
    result = await tool.run(ctx, tool.validate(arguments))
    result.pop("_raw_tokens", None)
    return dict(result)


def _without_change_times(data: dict[str, Any]) -> dict[str, Any]:
    """The sandbox's answer less what only managedFields tell (see the module docstring)."""
    mounted = [{k: v for k, v in row.items() if k not in ("changed", "created")}
               for row in data.get("mounted") or []]
    findings = [f for f in data.get("findings") or [] if "changed after" not in f]
    return data | {"mounted": mounted, "findings": findings}


@pytest.mark.parametrize(("name", "arguments"), CALLS,
                         ids=[f"{n}-{next(iter(a.values()))}-{list(a.values())[-1]}"
                              for n, a in CALLS])
async def test_an_evidence_tool_says_live_what_it_says_in_the_sandbox(
    live: ToolContext, scenario: Scenario, name: str, arguments: dict[str, Any]
) -> None:
    sandbox = ToolContext(now=scenario.now, sources=sandbox_sources(scenario))
    expected = await _run(sandbox, name, arguments)
    got = await _run(live, name, arguments)
    if name == "k8s_mounted_config":
        bundle = next(r for r in got["mounted"] if r.get("configmap") == "trust-bundle")
        assert bundle["created"].startswith("2025-10-26T10:00:00Z")  # backdated, no change
        expected, got = _without_change_times(expected), _without_change_times(got)
    assert got == expected


async def test_volume_fullness_comes_from_the_live_prometheus(live: ToolContext) -> None:
    data = await _run(live, "k8s_list_volume_claims", {"namespace": NS, "workload": "orders-db"})
    claim = data["claims"][0]
    assert claim["usage"] == "9.8Gi of 10Gi (98%), 88% an hour ago"
    assert claim["problems"] == ["volume 98% full: writes fail when it fills"]
