"""The analyzer on every bundled scenario, through the real engine, tools and sandbox.

Each investigation must be correct by the scoring rule, quote only what an observation of
the named tool says, stay within the step budget, and obey the scenario's interventions.
Results are computed once per scenario and shared by the assertions.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from bot.wiring import investigate, scenario_setting
from engines.analyzer import AnalyzerModel
from engines.analyzer.quotes import MAX_QUOTE
from engines.constraints import ConstraintInbox
from engines.diagnosis import is_correct
from engines.events import ConstraintApplied, Event, ObservationReceived, ToolCalled
from engines.evidence import locate, occurs, widen
from engines.react import InvestigationResult
from engines.steering import put_reply
from tests.engines.analyzer.handmade import write_all
from tests.engines.analyzer.handmade_regressions import write_regressions
from tools.scenarios import bundled_ids, load_scenario

MAX_MEAN_STEPS = 8


@dataclass
class Run:
    result: InvestigationResult
    events: list[Event] = field(default_factory=list)
    seconds: float = 0.0


_RUNS: dict[str, Run] = {}


def run(scenario_id: str) -> Run:
    """Investigate a bundled scenario once (interventions injected after their step)."""
    if scenario_id in _RUNS:
        return _RUNS[scenario_id]
    scenario = load_scenario(scenario_id)
    inbox = ConstraintInbox()
    events: list[Event] = []

    async def sink(event: Event) -> None:
        events.append(event)

    async def after_step(step: int) -> None:
        for intervention in scenario.interventions:
            if intervention.after_step == step:
                put_reply(inbox, intervention.text, author="on-call")

    started = time.perf_counter()
    result = asyncio.run(investigate(scenario.report, scenario_setting(scenario_id),
                                     AnalyzerModel(), sink=sink, inbox=inbox,
                                     after_step=after_step))
    _RUNS[scenario_id] = Run(result, events, time.perf_counter() - started)
    return _RUNS[scenario_id]


@pytest.mark.parametrize("scenario_id", bundled_ids())
def test_diagnosis_is_correct(scenario_id: str) -> None:
    outcome = run(scenario_id).result
    truth = load_scenario(scenario_id).truth
    assert outcome.reason == "diagnosed", outcome.detail
    assert is_correct(outcome.diagnosis, truth), (outcome.diagnosis, truth)
    assert outcome.steps <= MAX_MEAN_STEPS


@pytest.mark.parametrize("scenario_id", bundled_ids())
def test_every_quote_is_in_an_observation_of_its_tool(scenario_id: str) -> None:
    observed = run(scenario_id)
    diagnosis = observed.result.diagnosis
    assert diagnosis is not None and diagnosis.evidence
    texts: dict[str, list[str]] = {}
    for event in observed.events:
        if isinstance(event, ObservationReceived):
            texts.setdefault(event.tool, []).append(event.text)
    for evidence in diagnosis.evidence:
        assert any(occurs(evidence.quote, text) for text in texts.get(evidence.tool, [])), evidence
        assert evidence.found and evidence.step is not None, evidence
    assert 0.0 < diagnosis.confidence <= 0.95


def _between_words(text: str, start: int, end: int) -> bool:
    """Neither end of text[start:end] cuts a word in two."""
    def cuts(index: int) -> bool:
        return 0 < index < len(text) and (text[index - 1] + text[index]).isalnum()
    return not cuts(start) and not cuts(end)


@pytest.mark.parametrize("scenario_id", bundled_ids())
def test_every_quote_is_whole(scenario_id: str) -> None:
    """A human reads the evidence: each quote starts and ends between words of the
    observation at the step it names, and is a whole line or value (widening it again
    changes nothing)."""
    observed = run(scenario_id)
    diagnosis = observed.result.diagnosis
    assert diagnosis is not None
    for evidence in diagnosis.evidence:
        (text,) = [e.text for e in observed.events if isinstance(e, ObservationReceived)
                   and e.tool == evidence.tool and e.step == evidence.step
                   and occurs(evidence.quote, e.text)][-1:]
        located = locate(text, evidence.quote)
        assert located is not None and _between_words(text, located.start, located.end), (
            evidence.quote)
        assert widen(text, evidence.quote).quote == evidence.quote
        assert len(evidence.quote) <= MAX_QUOTE and "\n" not in evidence.quote


@pytest.mark.parametrize("scenario_id", bundled_ids())
def test_interventions_are_obeyed(scenario_id: str) -> None:
    observed = run(scenario_id)
    excluded: set[str] = set()
    for event in observed.events:
        if isinstance(event, ConstraintApplied) and event.summary.startswith(
                "staying out of namespace"):
            excluded.add(event.summary.rsplit(" ", 1)[-1])
        if isinstance(event, ToolCalled):
            assert event.arguments.get("namespace") not in excluded, event
    diagnosis = observed.result.diagnosis
    assert diagnosis is not None and diagnosis.culprit.namespace not in excluded


def test_suite_is_fast_and_short() -> None:
    runs = [run(i) for i in bundled_ids()]
    assert sum(r.result.steps for r in runs) / len(runs) <= MAX_MEAN_STEPS
    assert all(r.seconds < 10 for r in runs)


VAGUE_REPORTS = {
    "pricing-cpu-throttle": "the site feels slow",
    "query-api-slow-release": "the site feels slow",
    "payments-netpol": "payments are timing out for customers",
    "cart-service-selector": "users cannot add items to the basket",
    "node-not-ready": "errors everywhere since 16:05",
}


@pytest.mark.parametrize("scenario_id", sorted(VAGUE_REPORTS))
def test_a_vague_report_still_finds_the_cause(scenario_id: str) -> None:
    """Reports that name no workload (or the wrong one) must still lead to the cause."""
    assert scenario_id in bundled_ids(), f"{scenario_id} is not bundled: renamed or removed?"
    scenario = load_scenario(scenario_id)
    outcome = asyncio.run(investigate(VAGUE_REPORTS[scenario_id], scenario_setting(scenario_id),
                                      AnalyzerModel()))
    assert is_correct(outcome.diagnosis, scenario.truth), outcome.diagnosis


def test_handmade_scenarios_written_after_the_detectors(tmp_path: Path) -> None:
    """Five scenarios in other shapes and names, never tuned for, are all diagnosed."""
    wrong = []
    for folder in write_all(tmp_path):
        scenario = load_scenario(folder)
        outcome = asyncio.run(investigate(scenario.report, scenario_setting(folder),
                                          AnalyzerModel()))
        if not is_correct(outcome.diagnosis, scenario.truth):
            wrong.append((folder.name, outcome.diagnosis))
    assert not wrong


def test_handmade_regressions_and_a_dns_outage_are_diagnosed(tmp_path: Path) -> None:
    """A Deployment and a DaemonSet whose new revision fails one route (a probe flapping
    along), and a DNS server under another name that is OOM-killed: each within the budget,
    every quote read from an observation of its tool."""
    for folder in write_regressions(tmp_path):
        scenario = load_scenario(folder)
        events: list[Event] = []

        async def sink(event: Event, into: list[Event] = events) -> None:
            into.append(event)

        outcome = asyncio.run(investigate(scenario.report, scenario_setting(folder),
                                          AnalyzerModel(), sink=sink))
        assert is_correct(outcome.diagnosis, scenario.truth), (folder.name, outcome.diagnosis)
        assert outcome.steps <= MAX_MEAN_STEPS and outcome.diagnosis is not None
        texts = [e.text for e in events if isinstance(e, ObservationReceived)]
        assert outcome.diagnosis.evidence
        assert all(any(occurs(q.quote, t) for t in texts) for q in outcome.diagnosis.evidence)
