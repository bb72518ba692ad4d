"""The analyzer, through the real engine, tools and sandbox, on five hand-written scenarios
of whose fault a failed connection is (handmade_tls_egress.py): a client's expired mTLS
certificate (told by an alert, or only found by its pod's IP), an egress NetworkPolicy
changed just before its callers lost their database, and a cache that is really down."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bot.wiring import investigate, scenario_setting
from engines.analyzer import AnalyzerModel
from engines.diagnosis import is_correct
from engines.events import Event, ObservationReceived, ToolCalled
from engines.evidence import occurs
from tests.engines.analyzer.handmade_tls_egress import write_tls_egress
from tools.scenarios import load_scenario

MAX_STEPS = 8


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return {f.name: f for f in write_tls_egress(tmp_path_factory.mktemp("tls-egress"))}


@pytest.mark.parametrize("name", ["lab-results-client-cert", "lab-results-client-cert-silent",
                                  "lab-results-client-cert-mute", "claims-egress-changed",
                                  "basket-cache-down"])
def test_whose_fault_a_failed_connection_is(folders: dict[str, Path], name: str) -> None:
    scenario = load_scenario(folders[name])
    events: list[Event] = []

    async def sink(event: Event) -> None:
        events.append(event)

    outcome = asyncio.run(investigate(scenario.report, scenario_setting(folders[name]),
                                      AnalyzerModel(), sink=sink))
    assert outcome.diagnosis is not None
    assert is_correct(outcome.diagnosis, scenario.truth), outcome.diagnosis
    assert outcome.steps <= MAX_STEPS
    texts = [e.text for e in events if isinstance(e, ObservationReceived)]
    assert outcome.diagnosis.evidence
    assert all(any(occurs(q.quote, t) for t in texts) for q in outcome.diagnosis.evidence)
    if "silent" in name or "mute" in name:  # the refused client found by its pod IP
        assert any(isinstance(e, ToolCalled) and e.tool == "k8s_list_pods"
                   and e.arguments.get("ip") == "10.42.1.17" for e in events)
