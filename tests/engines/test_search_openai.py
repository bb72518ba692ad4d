"""tot and got through the real `openai` client and the strict loopback API: the search
operations are forced tool calls, invented names are dropped, got's verifier sends back a
quote that no observation holds (the router: tests/engines/test_router_survey.py)."""

from __future__ import annotations

from typing import Any

from engines.constraints import ConstraintSet
from engines.diagnosis import Diagnosis, is_correct
from engines.events import Event, HypothesesUpdated, ThoughtRecorded
from engines.got import GotEngine
from engines.incident import Incident
from engines.openai_model import OpenAIModel
from engines.react import EngineConfig, InvestigationResult
from engines.router import AutoEngine
from engines.tot import TotConfig, TotEngine
from engines.verification import mechanical_problems, untimely
from tests.engines.test_e2e_openai import DIAGNOSIS, FAST, SCENARIO, k8s_pod_status
from tests.fakes.openai_server import Completion, FakeOpenAIServer, plain_http, tool_call
from tools.context import ToolContext
from tools.sources.sandbox import sandbox_sources
from tools.toolset import Toolset

OOM = "oom_killed:Deployment/shop/checkout"
ROLLOUT = "bad_rollout:Deployment/shop/checkout"
PODS = {"namespace": "shop"}


def _calls(name: str, arguments: dict[str, Any]) -> Completion:
    return Completion(None, (tool_call(name, arguments),))


async def _run(server: FakeOpenAIServer, engine: TotEngine | GotEngine | AutoEngine,
               model: Any = None) -> tuple[InvestigationResult, list[Event]]:
    constraints = ConstraintSet()
    context = ToolContext(now=SCENARIO.now, sources=sandbox_sources(SCENARIO),
                          constraints=constraints)
    toolset = Toolset([k8s_pod_status], context)
    events: list[Event] = []

    async def sink(event: Event) -> None:
        events.append(event)

    incident = Incident(SCENARIO.report, now=SCENARIO.now)
    if model is not None:
        return await engine.run(incident, model, toolset, None, sink,
                                constraints=constraints), events
    async with OpenAIModel("gpt-test", base_url=server.base_url, api_key="sk-test",
                           retry=FAST, http_client=plain_http()) as llm:
        result = await engine.run(incident, llm, toolset, None, sink, constraints=constraints)
    return result, events


def _forced(body: dict[str, Any]) -> str | None:
    choice = body.get("tool_choice")
    return choice["function"]["name"] if isinstance(choice, dict) else None


async def test_tot_through_the_loopback_api() -> None:
    hypotheses = {"hypotheses": [
        {"category": "oom_killed", "culprit": {"kind": "Deployment", "namespace": "shop",
                                               "name": "checkout"},
         "confirm_by": "OOMKilled in the pod status", "refute_by": "no OOMKilled",
         "score": 0.8},
        {"category": "bad_rollout", "culprit": {"kind": "Deployment", "namespace": "shop",
                                                "name": "checkout"},
         "confirm_by": "the new revision fails", "refute_by": "no new revision", "score": 0.4},
        {"category": "network", "culprit": {"kind": "Deployment", "namespace": "shop",
                                            "name": "ledger"},  # named nowhere: invented
         "confirm_by": "x", "refute_by": "y", "score": 0.9},
        {"category": "teleport", "culprit": {"kind": "Deployment", "namespace": "shop",
                                             "name": "checkout"},  # not a category
         "confirm_by": "x", "refute_by": "y", "score": 0.9}]}
    scores = {"scores": [
        {"id": OOM, "score": 0.9, "state": "confirmed", "evidence": ["OOMKilled"],
         "refuted_by": ""},
        {"id": ROLLOUT, "score": 0.2, "state": "refuted", "evidence": [],
         "refuted_by": "the pods restart with exit code 137 on the old revision too"}]}
    async with FakeOpenAIServer() as server:
        server.script(
            _calls("k8s_pod_status", PODS),  # step 1
            _calls("record_hypotheses", hypotheses),  # propose
            _calls("k8s_pod_status", {"namespace": "payments"}),  # step 2, told what to test
            _calls("record_scores", scores),  # score: one confirmed, its rival refuted
            _calls("submit_diagnosis", DIAGNOSIS),  # the final turn, forced
        )
        engine = TotEngine(EngineConfig(max_steps=6, timeout_seconds=20), TotConfig(k=3))
        result, events = await _run(server, engine)
        bodies = server.chat_requests
        assert not server.refusals
    assert result.reason == "diagnosed", result.detail
    assert is_correct(result.diagnosis, SCENARIO.truth)
    assert result.diagnosis is not None
    assert [(r.category, r.reason) for r in result.diagnosis.ruled_out] == [
        ("bad_rollout", "the pods restart with exit code 137 on the old revision too")]
    assert [_forced(b) for b in bodies] == [None, "record_hypotheses", None, "record_scores",
                                            "submit_diagnosis"]
    note = bodies[2]["messages"][-1]["content"]
    assert "Hypotheses to test now" in note and "oom killed in Deployment shop/checkout" in note
    boards = [e for e in events if isinstance(e, HypothesesUpdated)]
    assert {h.id for b in boards for h in b.hypotheses} == {OOM, ROLLOUT}  # invented: dropped


async def test_tot_falls_back_when_the_hypotheses_are_not_json() -> None:
    async with FakeOpenAIServer() as server:
        server.script(
            _calls("k8s_pod_status", PODS),
            Completion(None, (tool_call("record_hypotheses", "{not json"),)),
            _calls("submit_diagnosis", DIAGNOSIS),  # no board: an ordinary ReAct step
        )
        engine = TotEngine(EngineConfig(max_steps=4, timeout_seconds=20))
        result, events = await _run(server, engine)
    assert result.reason == "diagnosed" and is_correct(result.diagnosis, SCENARIO.truth)
    assert not [e for e in events if isinstance(e, HypothesesUpdated)]


async def test_got_through_the_loopback_api_fixes_an_unquoted_merge() -> None:
    made_up = {**DIAGNOSIS, "evidence": [{"tool": "k8s_pod_status",
                                          "quote": "memory leak in v2.4"}]}
    async with FakeOpenAIServer() as server:
        server.script(
            _calls("record_subproblems", {"subproblems": [
                {"source": "cluster", "focus": "checkout's pods"},
                {"source": "logs", "focus": "no log tools here: dropped"}]}),
            _calls("k8s_pod_status", PODS),  # the cluster sub-problem
            _calls("submit_diagnosis", DIAGNOSIS),  # its partial answer
            _calls("submit_diagnosis", made_up),  # the merge quotes what nobody observed
            _calls("record_verdict", {"problems": []}),  # the model sees nothing wrong...
            _calls("submit_diagnosis", DIAGNOSIS),  # ...the quote check does: fixed
            _calls("record_verdict", {"problems": []}),
        )
        result, events = await _run(server, GotEngine(EngineConfig(max_steps=5,
                                                                   timeout_seconds=20)))
        bodies = server.chat_requests
        assert not server.refusals
    assert result.reason == "diagnosed" and result.attempts == 2
    assert result.diagnosis is not None
    # the fixed answer's quote, made whole (engines.evidence) from the row that shows it
    assert [e.found for e in result.diagnosis.evidence] == [True]
    assert "last_reason: OOMKilled" in result.diagnosis.evidence[0].quote
    said = [e.text for e in events if isinstance(e, ThoughtRecorded)]
    assert any("'memory leak in v2.4' occurs in no observation" in t for t in said)
    assert "failed verification" in bodies[5]["messages"][-1]["content"]
    assert [_forced(b) for b in bodies] == ["record_subproblems", None, None,
                                            "submit_diagnosis", "record_verdict", None,
                                            "record_verdict"]


async def test_got_gives_a_merge_that_names_no_cause_another_look() -> None:
    """`unknown` is never right: while fixes remain, got sends it back to be read further."""
    unknown = {**DIAGNOSIS, "category": "unknown", "confidence": 0.3}
    async with FakeOpenAIServer() as server:
        server.script(
            _calls("record_subproblems", {"subproblems": [
                {"source": "cluster", "focus": "checkout's pods"}]}),
            _calls("k8s_pod_status", PODS),
            _calls("submit_diagnosis", unknown),  # the part finds no cause
            _calls("submit_diagnosis", unknown),  # nor does the merge
            _calls("record_verdict", {"problems": []}),  # the model is content...
            _calls("k8s_pod_status", PODS),  # ...got is not: a fix reads again
            _calls("submit_diagnosis", DIAGNOSIS),
            _calls("record_verdict", {"problems": []}),
        )
        result, _ = await _run(server, GotEngine(EngineConfig(max_steps=5,
                                                              timeout_seconds=20)))
        fix_note = server.chat_requests[5]["messages"][-1]["content"]
        assert not server.refusals
    assert result.attempts == 2 and result.diagnosis is not None
    assert is_correct(result.diagnosis, SCENARIO.truth)
    assert "names no cause" in fix_note


def test_the_verifier_checks_quotes_and_the_onset() -> None:
    diagnosis = Diagnosis.model_validate({**DIAGNOSIS, "evidence": [
        {"tool": "k8s_events", "quote": "OOMKilled at 10:40"}]})
    assert mechanical_problems(diagnosis, [("k8s_events", "pod x OOMKilled at 10:40")],
                               "checkout errors", SCENARIO.now) == []
    assert mechanical_problems(diagnosis, [("k8s_events", "nothing here")], "checkout errors",
                               SCENARIO.now) == [
        "the evidence 'OOMKilled at 10:40' occurs in no observation"]
    now = SCENARIO.now.replace(hour=11, minute=0)
    assert untimely(diagnosis, "checkout 500s since 10:05", now)  # cause seen 35 min late
    assert not untimely(diagnosis, "checkout 500s since 10:35", now)
