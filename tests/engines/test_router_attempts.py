"""The router runs its chosen engine inside Reflexion's evaluator (#15): an attempt that
fails outright (here evidence that no observation holds) is reflected on and tried once
more, and a human's correction opens every attempt, through the strict loopback OpenAI
server. A low confidence, or `unknown` with its leads, is no failure for the router: it is
reported as it is."""

from __future__ import annotations

from typing import Any

from engines.constraints import ConstraintSet
from engines.diagnosis import is_correct
from engines.events import Event, ReflectionRecorded
from engines.incident import Incident
from engines.openai_model import OpenAIModel
from engines.react import EngineConfig, InvestigationResult
from engines.router import AutoEngine
from tests.engines.test_e2e_openai import DIAGNOSIS, FAST, SCENARIO
from tests.fakes.openai_server import Completion, FakeOpenAIServer, plain_http, tool_call
from tools.catalog import available_tools
from tools.context import ToolContext
from tools.sources.sandbox import sandbox_sources
from tools.toolset import Toolset

UNKNOWN = {**DIAGNOSIS, "category": "unknown", "confidence": 0.2,
           "summary": "Nothing explains the restarts yet."}
UNSURE = {**DIAGNOSIS, "confidence": 0.35}
MADE_UP = {**DIAGNOSIS, "evidence": [{"tool": "k8s_list_pods", "quote": "disk quota 99%"}]}
NO_BOARD = Completion(None, (tool_call("record_hypotheses", "{not json"),))
PODS = Completion(None, (tool_call("k8s_list_pods", {"namespace": "shop"}),))


async def _auto(server: FakeOpenAIServer, notes: tuple[str, ...] = ()) -> tuple[
        InvestigationResult, list[Event], list[dict[str, Any]]]:
    sources = sandbox_sources(SCENARIO)
    constraints = ConstraintSet()
    toolset = Toolset(list(available_tools(sources)),
                      ToolContext(now=SCENARIO.now, sources=sources, constraints=constraints))
    events: list[Event] = []

    async def sink(event: Event) -> None:
        events.append(event)

    async with OpenAIModel("gpt-test", base_url=server.base_url, api_key="sk-test",
                           retry=FAST, http_client=plain_http()) as llm:
        result = await AutoEngine(EngineConfig(max_steps=12)).run(
            Incident(SCENARIO.report, now=SCENARIO.now), llm, toolset, None, sink,
            constraints=constraints, notes=notes)
    assert not server.refusals
    return result, events, server.chat_requests


def _said(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content") or "") for m in body["messages"])


async def test_made_up_evidence_is_reflected_on_and_tried_again() -> None:
    async with FakeOpenAIServer() as server:
        server.script(
            NO_BOARD, Completion(None, (tool_call("submit_diagnosis", MADE_UP),)),
            Completion("The quote was not read anywhere: read the pods' last terminations.",
                       ()),
            PODS, NO_BOARD, Completion(None, (tool_call("submit_diagnosis", DIAGNOSIS),)),
        )
        result, events, bodies = await _auto(server)
    assert result.reason == "diagnosed" and result.attempts == 2
    assert is_correct(result.diagnosis, SCENARIO.truth)
    reflections = [e for e in events if isinstance(e, ReflectionRecorded)]
    assert len(reflections) == 1 and "occurs in no observation" in reflections[0].problems[0]
    assert result.reflections == (reflections[0].text,)
    assert "REFLECTION on attempt 1" in _said(bodies[3])  # the second attempt opens with it
    assert [e.kind for e in events].count("stopped") == 1


async def test_a_low_confidence_or_unknown_answer_is_reported_without_a_retry() -> None:
    for answer, category in ((UNSURE, "oom_killed"), (UNKNOWN, "unknown")):
        async with FakeOpenAIServer() as server:
            server.script(NO_BOARD, Completion(None, (tool_call("submit_diagnosis", answer),)))
            result, events, bodies = await _auto(server)
        assert result.attempts == 1 and result.diagnosis is not None
        assert result.diagnosis.category == category and len(bodies) == 2
        assert not [e for e in events if isinstance(e, ReflectionRecorded)]


async def test_a_correction_opens_the_attempt() -> None:
    correction = "CORRECTION by alice: the earlier answer was wrong, it is not the database"
    async with FakeOpenAIServer() as server:
        server.script(NO_BOARD, Completion(None, (tool_call("submit_diagnosis", DIAGNOSIS),)))
        result, _, bodies = await _auto(server, notes=(correction,))
    assert result.reason == "diagnosed"
    assert correction in _said(bodies[-1])
