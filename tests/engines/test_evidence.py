"""Evidence a human can read: quotes located in observations and widened to whole lines or
values (engines/evidence.py), placed at their step by the engine, accepted by the evaluator."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from engines.constraints import ConstraintSet
from engines.diagnosis import Diagnosis, Evidence
from engines.events import DiagnosisSubmitted, Event
from engines.evidence import locate, occurs, placed, widen
from engines.incident import Incident
from engines.model import Usage
from engines.react import SUBMIT_SPEC, EngineConfig, InvestigationResult, ReactEngine
from engines.reflexion import evaluate
from engines.scripted_model import ScriptedModel, call, reply
from tools.compress import to_text
from tools.context import ToolContext
from tools.registry import tool
from tools.sources.base import Sources
from tools.toolset import Toolset

EVENTS = to_text({"namespace": "risk", "events": [
    {"type": "Warning", "reason": "Failed", "object": "Pod/fraud-scorer-cbk6bckdmv-qk2z2",
     "similar_objects": 1, "count": 146, "last_seen": "2026-12-14T21:29:56Z (4s ago)",
     "message": "Error: ImagePullBackOff", "first_seen": "2026-12-14T20:38:55Z (51m ago)"},
    {"type": "Normal", "reason": "BackOff", "object": "Pod/fraud-scorer-cbk6bckdmv-qk2z2",
     "count": 98, "message": 'Back-off pulling image "registry.acme-risk.io/risk/fraud:1.22.0"'},
]})
POD = to_text({"name": "checkout-7d9f-abcde", "status": "CrashLoopBackOff", "containers": [
    {"name": "app", "ready": False,
     "last_state": {"terminated": "OOMKilled", "exit_code": 137,
                    "finished": "2026-11-30T09:54:40Z (5m ago)"},
     "limits": {"cpu": "500m", "memory": "256Mi"}}]})
LONG = to_text({"why": "CPU throttling rose from 5% to 62% of periods at 2026-12-04T08:44:00Z: "
                       "the CPU limit slows the container; CPU use peaked at 107% of the limit "
                       "in pod price-engine-xqbfswj9t-44skw, which serves every quote of the "
                       "storefront and the partner API alike"})


def between_words(text: str, start: int, end: int) -> bool:
    def cuts(index: int) -> bool:
        return 0 < index < len(text) and (text[index - 1] + text[index]).isalnum()
    return not cuts(start) and not cuts(end)


def test_the_fixtures_are_what_the_tools_print() -> None:
    """The YAML wraps the first event's message over two lines: what the tests are about."""
    assert "message: 'Error:\n    ImagePullBackOff'" in EVENTS
    assert "  last_state: {terminated: OOMKilled, exit_code: 137, finished:" in POD


@pytest.mark.parametrize(("quote", "whole"), [
    # mid-word at both ends, over the wrap: the field it sits in
    ("rror: ImagePullBack", "message: 'Error: ImagePullBackOff'"),
    # at a line's start: the whole line, which fits
    ("name: checkout-7d9", "name: checkout-7d9f-abcde"),
    # a field cut mid-word at both ends: that field, whole
    ("emory: 256M", "memory: 256Mi"),
    # a value at a line's end, cut: the line
    ("56M", "limits: {cpu: 500m, memory: 256Mi}"),
    # a value alone: the line it is a value of
    ("OOMKilled", "last_state: {terminated: OOMKilled, exit_code: 137, finished: "
                  "'2026-11-30T09:54:40Z (5m ago)'}"),
    # a fragment astride two fields: both fields
    ("4s ago)', message: 'Err", "last_seen: '2026-12-14T21:29:56Z (4s ago)', message: "
                                "'Error: ImagePullBackOff'"),
    # a row too long to show: its first fields name it
    ("Failed", "type: Warning, reason: Failed, object: Pod/fraud-scorer-cbk6bckdmv-qk2z2"),
    # any case: the observation's own spelling comes back
    ("imagepullbackoff", "message: 'Error: ImagePullBackOff'"),
])
def test_a_fragment_becomes_the_whole_line_or_value_it_sits_in(quote: str, whole: str) -> None:
    text = EVENTS if "Pod" in whole or "Error" in whole else POD
    widened = widen(text, quote)
    assert widened.found and widened.quote == whole
    assert occurs(widened.quote, text)


def test_a_whole_quote_is_kept_and_widening_twice_changes_nothing() -> None:
    for text in (EVENTS, POD, LONG):
        for line in text.splitlines():
            for word in line.split()[::3]:
                once = widen(text, word)
                assert once.found
                assert widen(text, once.quote).quote == once.quote, (word, once.quote)
    assert widen(POD, "exit_code: 137").quote == "exit_code: 137"  # a whole field already


def test_a_long_line_is_trimmed_between_words_with_marked_cuts() -> None:
    widened = widen(LONG, "107%", max_chars=80)
    assert widened.found and len(widened.quote) <= 80
    assert widened.quote.startswith("… ") and widened.quote.endswith(" …")
    assert "107%" in widened.quote
    located = locate(LONG, widened.quote)
    assert located is not None and between_words(LONG, located.start, located.end)
    head = widen(LONG, "CPU throttling", max_chars=80).quote
    assert head.startswith("why: 'CPU throttling") and head.endswith(" …")
    tail = widen(LONG, "partner API alike", max_chars=80).quote
    assert tail.startswith("… ") and tail.endswith("partner API alike'")
    # the evaluator takes the trimmed quote as the observation's text
    assert all(occurs(q, LONG) for q in (widened.quote, head, tail))
    assert not occurs("… the CPU limit is fine …", LONG)


def test_a_quote_over_several_lines_keeps_its_lines_whole() -> None:
    widened = widen(POD, "CrashLoopBackOff\ncontain")
    assert widened.found and widened.quote == "status: CrashLoopBackOff\ncontainers:"
    assert occurs(widened.quote, POD)
    bounded = widen(EVENTS, "(51m ago)'}\n- {type: Normal, reason: Back", max_chars=60)
    assert bounded.found and len(bounded.quote) <= 60
    assert bounded.quote.startswith("- {type: Warning, reason: Failed,")
    assert bounded.quote.endswith(" …") and occurs(bounded.quote, EVENTS)


def test_unicode_words_are_not_cut() -> None:
    text = to_text({"message": "Überlauf des Puffers: Größe überschritten",
                    "journal": ["файл не найден: /var/lib/данные", "ok ✓ done"]})
    assert widen(text, "berlauf des Puf").quote == (
        "message: 'Überlauf des Puffers: Größe überschritten'")
    assert widen(text, "найден").quote == "journal: ['файл не найден: /var/lib/данные', ok ✓ done]"
    assert widen(text, "найден", max_chars=40).quote == "'файл не найден: /var/lib/данные'"
    assert widen(text, "✓").quote.endswith("ok ✓ done]")


def test_a_quote_not_found_is_unchanged_and_flagged() -> None:
    for quote in ("OOMKilled at 512Mi", "Error:ImagePull", "   "):
        widened = widen(EVENTS + POD, quote)
        assert not widened.found and widened.quote == quote
    assert locate(POD, "") is None


def test_plain_text_and_tab_indented_traces_stay_one_line_a_line() -> None:
    trace = ("java.lang.NullPointerException: Cannot invoke getRate()\n"
             "\tat com.acme.Promo.apply(Promo.java:42)\n\tat com.acme.Cart.total(Cart.java:7)")
    assert widen(trace, "Promo.app").quote == "at com.acme.Promo.apply(Promo.java:42)"
    text = "error: don't retry {broken, [unclosed\nnext line"
    assert widen(text, "retry").quote == "error: don't retry {broken, [unclosed"


SEEN = [(1, "k8s_events", EVENTS), (2, "k8s_describe_pod", POD), (3, "k8s_events", EVENTS)]


def diagnosis(*evidence: tuple[str, str]) -> Diagnosis:
    return Diagnosis.model_validate({
        "category": "image_pull", "summary": "s", "confidence": 0.9,
        "culprit": {"kind": "Deployment", "namespace": "risk", "name": "fraud-scorer"},
        "evidence": [{"tool": tool, "quote": quote} for tool, quote in evidence]})


def test_placed_widens_each_quote_in_the_newest_observation_of_its_tool() -> None:
    done = placed(diagnosis(("k8s_events", "ImagePull"), ("k8s_events", "OOMKilled"),
                            ("k8s_describe_pod", "x509")), SEEN)
    first, elsewhere, missing = done.evidence
    assert first == Evidence(tool="k8s_events", quote="message: 'Error: ImagePullBackOff'",
                             step=3, found=True)
    # quoted from another tool's output: shown as that tool's, at its step
    assert (elsewhere.tool, elsewhere.step, elsewhere.found) == ("k8s_describe_pod", 2, True)
    assert missing == Evidence(tool="k8s_describe_pod", quote="x509", found=False)


def test_the_model_is_not_shown_the_engines_fields() -> None:
    schema = SUBMIT_SPEC.parameters["properties"]["evidence"]["items"]
    assert set(schema["properties"]) == {"tool", "quote"}


def test_the_evaluator_accepts_trimmed_and_rewrapped_quotes_only() -> None:
    trimmed = widen(LONG, "107%", max_chars=80).quote
    for quotes, passes in (([trimmed, "message: 'Error: ImagePullBackOff'"], True),
                           (["… peaked at 99% …"], False)):
        done = diagnosis(*(("k8s_events", q) for q in quotes))
        result = InvestigationResult("i", done, "diagnosed", "", 2, 2, Usage(), 0.1,
                                     observations=(("k8s_events", EVENTS), ("m", LONG)))
        assert evaluate(result).passed is passes, evaluate(result).problems


@tool(describe="Listing events in {namespace}")
async def k8s_events(ctx: ToolContext, namespace: str) -> dict[str, Any]:
    """List events.

    Args:
        namespace: Only this namespace.
    """
    return {"namespace": namespace, "events": [
        {"type": "Warning", "reason": "Failed", "object": "Pod/fraud-scorer-cbk6bckdmv-qk2z2",
         "similar_objects": 1, "count": 146, "last_seen": "2026-12-14T21:29:56Z (4s ago)",
         "message": "Error: ImagePullBackOff",
         "first_seen": "2026-12-14T20:38:55Z (51m ago)"}]}


async def test_the_engine_shows_a_models_fragment_whole_with_its_step() -> None:
    now = datetime(2026, 12, 14, 21, 30, tzinfo=UTC)
    context = ToolContext(now=now, sources=Sources(), constraints=ConstraintSet())
    submitted = diagnosis(("k8s_events", "ImagePullBack"), ("k8s_events", "x509 expired"))
    model = ScriptedModel([
        reply("events first", call("k8s_events", {"namespace": "risk"})),
        reply("done", call("submit_diagnosis", submitted.model_dump(exclude_none=True))),
    ])
    events: list[Event] = []

    async def sink(event: Event) -> None:
        events.append(event)

    result = await ReactEngine(EngineConfig(max_steps=4)).run(
        Incident("fraud scorer down", now=now), model, Toolset((k8s_events,), context),
        sink=sink)
    (shown,) = [e.diagnosis for e in events if isinstance(e, DiagnosisSubmitted)]
    assert shown == result.diagnosis
    assert [(e.quote, e.step, e.found) for e in shown.evidence] == [
        ("message: 'Error: ImagePullBackOff'", 1, True), ("x509 expired", None, False)]
