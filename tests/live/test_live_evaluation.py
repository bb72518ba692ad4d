"""The live evaluation: every bundled scenario, served by the real servers through the live
sources, must reach the diagnosis the sandbox reaches, scenario by scenario.

Scenarios are loaded one after another (see tests/live/_live.py): one API server for the
whole run, emptied and reloaded between scenarios with the recorded creation times
restored; one index per scenario in the session Elasticsearch; a fresh Prometheus per
scenario. The bot reads the cluster as the read-only viewer, like the Helm chart's
service account. TRIAGE_LIVE_EVAL=id,id,... narrows the run to some scenarios.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.config import close_sources
from bot.evaluation import EvalResult, evaluate
from bot.wiring import Setting
from tests.live._live import (
    ScenarioSwitcher,
    cluster_of,
    logs_of,
    metrics_of,
    prometheus_for,
    provisioned,
)
from tests.services.elasticsearch import ElasticsearchServer
from tests.services.kube import KubeApiServer
from tools.scenarios import Scenario, bundled_ids, bundled_root
from tools.sources.base import Sources

pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def evaluation_kube() -> Iterator[KubeApiServer]:
    """An API server of the evaluation's own: the session one keeps its scenario."""
    server: KubeApiServer = provisioned(KubeApiServer)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def _chosen() -> list[str]:
    wanted = [s.strip() for s in os.environ.get("TRIAGE_LIVE_EVAL", "").split(",") if s.strip()]
    return wanted or bundled_ids()


def _verdict(row: EvalResult) -> tuple[Any, Any]:
    diagnosis = row.diagnosis or {}
    return diagnosis.get("category"), diagnosis.get("culprit")


async def test_live_sources_reach_the_sandbox_diagnoses(
    evaluation_kube: KubeApiServer, elasticsearch_server: ElasticsearchServer
) -> None:
    ids = _chosen()
    expected = {row.scenario: row for row in
                (await evaluate(list(ids), model="analyzer", jobs=4)).results}
    switcher = ScenarioSwitcher(evaluation_kube, elasticsearch_server)
    mismatches: list[str] = []
    lines: list[str] = []
    began = time.monotonic()
    for scenario_id in ids:
        folder: Path = bundled_root() / scenario_id
        loading = time.monotonic()
        await asyncio.to_thread(switcher.load, folder)
        with prometheus_for(folder) as prometheus:
            loaded = time.monotonic() - loading
            opened: list[Sources] = []

            def live(scenario: Scenario, opened: list[Sources] = opened,
                     prometheus: Any = prometheus) -> Setting:
                sources = Sources(cluster_of(evaluation_kube),
                                  logs_of(elasticsearch_server, scenario.id),
                                  metrics_of(prometheus), f"live: {scenario.id}")
                opened.append(sources)
                return Setting(sources, now=scenario.now)

            try:
                row = (await evaluate([scenario_id], model="analyzer",
                                      setting_factory=live)).results[0]
            finally:
                for sources in opened:
                    await close_sources(sources)
        sandbox = expected[scenario_id]
        same = _verdict(row) == _verdict(sandbox) and row.error is None
        lines.append(f"{'same' if same else 'DIFF'} {scenario_id:<28} load {loaded:5.1f}s "
                     f"run {row.seconds:5.1f}s live={_verdict(row)[0]} "
                     f"correct={row.correct}/{sandbox.correct}")
        if not same:
            mismatches.append(f"{scenario_id}: live {_verdict(row)} {row.error or ''} vs "
                              f"sandbox {_verdict(sandbox)}")
    print(f"\nlive evaluation of {len(ids)} scenarios in {time.monotonic() - began:.0f}s",
          *lines, sep="\n", file=sys.stderr)
    assert not mismatches, "\n".join(mismatches)
