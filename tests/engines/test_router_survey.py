"""The router (`--engine auto`): a first survey as step 1 through the one ReAct loop, a
choice by the report's and the survey's signals recorded as an event, and the chosen engine
going on from step 2 with the survey's observations, never asking for them again."""

from __future__ import annotations

from engines.analyzer import AnalyzerModel
from engines.constraints import ConstraintSet
from engines.diagnosis import is_correct
from engines.events import EngineChosen, Event, ToolCalled
from engines.incident import Incident
from engines.openai_model import OpenAIModel
from engines.react import EngineConfig
from engines.router import AutoEngine, assess, choose
from engines.survey import SURVEY, Found, found_in
from tests.engines.test_e2e_openai import DIAGNOSIS, FAST, SCENARIO
from tests.fakes.openai_server import Completion, FakeOpenAIServer, plain_http, tool_call
from tools.catalog import available_tools
from tools.context import ToolContext
from tools.sources.sandbox import sandbox_sources
from tools.toolset import Toolset


def test_the_router_picks_by_the_report_and_the_survey() -> None:
    base = EngineConfig()
    simple = choose(assess("checkout pods keep restarting",
                           Found(True, (("shop", "checkout"),))), base)
    assert simple.engine == "tot" and simple.config.max_steps < base.max_steps
    assert simple.tot.settle_at > 0 and "1 unhealthy workload" in simple.reason
    chain = choose(assess("frontend 504s: checkout calls payments-api upstream, timeouts"),
                   base)
    assert chain.engine == "tot" and chain.config.max_steps == base.max_steps
    assert chain.config.min_steps == 2 and not chain.tot.settle_at
    # The report names one workload; the survey finds the trouble is wider.
    wide = Found(True, (("shop", "checkout"), ("shop", "cart")))
    assert choose(assess("checkout pods keep restarting", wide), base).reason.startswith(
        "complex")
    outage = Found(True, (("shop", "a"), ("web", "b"), ("data", "c")))
    broad = choose(assess("things are failing", outage), base)
    assert broad.engine == "tot" and broad.reason.startswith("broad")
    assert broad.config.min_steps == 2 and not broad.tot.settle_at
    assert choose(assess("several services are failing across the cluster"),
                  base).reason.startswith("broad")


def _toolset() -> tuple[Toolset, ConstraintSet]:
    sources = sandbox_sources(SCENARIO)
    constraints = ConstraintSet()
    context = ToolContext(now=SCENARIO.now, sources=sources, constraints=constraints)
    return Toolset(list(available_tools(sources)), context), constraints


async def _auto(model: object) -> tuple[object, list[Event]]:
    toolset, constraints = _toolset()
    events: list[Event] = []

    async def sink(event: Event) -> None:
        events.append(event)

    result = await AutoEngine(EngineConfig(max_steps=12)).run(
        Incident(SCENARIO.report, now=SCENARIO.now), model, toolset, None, sink,  # type: ignore[arg-type]
        constraints=constraints)
    return result, events


async def test_the_survey_is_step_one_and_the_choice_an_event_after_it() -> None:
    result, events = await _auto(AnalyzerModel())
    assert is_correct(result.diagnosis, SCENARIO.truth)  # type: ignore[attr-defined]
    assert events[0].kind == "started" and events[0].engine == "auto"  # type: ignore[union-attr]
    chosen = [e for e in events if isinstance(e, EngineChosen)]
    assert len(chosen) == 1 and chosen[0].step == 1
    at = events.index(chosen[0])
    survey = [e for e in events[:at] if isinstance(e, ToolCalled)]
    assert {e.step for e in survey} == {1}
    assert [e.tool for e in survey] == [t for t, _ in SURVEY if t != "list_tools"]
    assert all(getattr(e, "step", 0) <= 1 for e in events[:at])
    expected = choose(assess(SCENARIO.report, found_in(events)), EngineConfig(max_steps=12))
    assert (chosen[0].engine, chosen[0].reason) == (expected.engine, expected.reason)
    assert "the survey found" in chosen[0].reason
    # Reused, not repeated: no later step asks the survey's calls again.
    asked = {(e.tool, repr(sorted(e.arguments.items()))) for e in survey}
    later = [e for e in events[at:] if isinstance(e, ToolCalled)]
    assert later and min(e.step for e in later) == 2
    assert not asked & {(e.tool, repr(sorted(e.arguments.items()))) for e in later}
    assert result.tool_calls == len(survey) + len(later)  # type: ignore[attr-defined]


async def test_the_survey_asks_no_model_and_the_model_starts_from_its_observations() -> None:
    async with FakeOpenAIServer() as server:
        server.script(  # tot on the OpenAI path: proposals (unreadable: no board), a step
            Completion(None, (tool_call("record_hypotheses", "{not json"),)),
            Completion(None, (tool_call("submit_diagnosis", DIAGNOSIS),)),
        )
        async with OpenAIModel("gpt-test", base_url=server.base_url, api_key="sk-test",
                               retry=FAST, http_client=plain_http()) as llm:
            result, events = await _auto(llm)
        bodies = server.chat_requests
        assert not server.refusals
    assert result.reason == "diagnosed"  # type: ignore[attr-defined]
    assert len(bodies) == 2  # the survey made no request
    answered = [m["tool_call_id"] for m in bodies[0]["messages"] if m["role"] == "tool"]
    survey = [e.call_id for e in events if isinstance(e, ToolCalled) and e.step == 1]
    assert survey and answered == survey


async def test_a_resumed_auto_run_keeps_its_survey_and_its_choice() -> None:
    _, log = await _auto(AnalyzerModel())
    chosen = next(e for e in log if isinstance(e, EngineChosen))
    cut = max(i for i, e in enumerate(log) if getattr(e, "step", 0) == 1)  # after the survey
    toolset, constraints = _toolset()
    again: list[Event] = []

    async def sink(event: Event) -> None:
        again.append(event)

    result = await AutoEngine(EngineConfig(max_steps=12)).run(
        Incident(SCENARIO.report, now=SCENARIO.now), AnalyzerModel(), toolset, None, sink,
        constraints=constraints, resume=log[:cut + 1])
    assert is_correct(result.diagnosis, SCENARIO.truth)
    assert not [e for e in again if e.kind in ("started", "engine")]  # announced once
    assert min(e.step for e in again if isinstance(e, ToolCalled)) == 2  # no second survey
    assert result.tool_calls == len([e for e in log if isinstance(e, ToolCalled)])
    assert chosen.engine in ("tot", "got")
