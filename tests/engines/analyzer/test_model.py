"""The analyzer as a Model: constraints, final turns, missing tools, rejected diagnoses."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from bot.wiring import build_toolset, engine_config, investigate, scenario_setting
from engines.analyzer import AnalyzerModel, reflect
from engines.analyzer.model import decide
from engines.constraints import ConstraintInbox, ConstraintSet
from engines.diagnosis import Diagnosis, rejection_message
from engines.events import ConstraintApplied, Event, ToolCalled
from engines.incident import Incident
from engines.model import ModelRequest, ToolSpec, UserMessage
from engines.react import SUBMIT_SPEC, ReactEngine
from engines.steering import Vocabulary, read_reply
from tools.catalog import ALL_TOOLS
from tools.scenarios import load_scenario
from tools.sources.base import Sources

SCENARIO = "checkout-oom"


def _run(inbox_after: dict[int, str], scenario_id: str = SCENARIO,
         sources: Sources | None = None) -> tuple[object, list[Event]]:
    scenario = load_scenario(scenario_id)
    setting = scenario_setting(scenario_id)
    if sources is not None:
        setting = type(setting)(sources, setting.now, setting.scenario)
    inbox = ConstraintInbox()
    vocab = Vocabulary.of({"shop", "kube-system", "monitoring"},
                          tools=[tool.name for tool in ALL_TOOLS])
    events: list[Event] = []

    async def sink(event: Event) -> None:
        events.append(event)

    async def after_step(step: int) -> None:
        if step in inbox_after:
            for constraint in read_reply(inbox_after[step], vocab, author="on-call").constraints:
                inbox.put(constraint)

    result = asyncio.run(investigate(scenario.report, setting, AnalyzerModel(), sink=sink,
                                     inbox=inbox, after_step=after_step))
    return result, events


def _calls_after_constraint(events: Sequence[Event]) -> list[ToolCalled]:
    applied = next(e.step for e in events if isinstance(e, ConstraintApplied))
    return [e for e in events if isinstance(e, ToolCalled) and e.step >= applied]


def test_an_excluded_namespace_is_never_queried_nor_blamed() -> None:
    result, events = _run({1: "stay out of the shop namespace"})
    assert all(call.arguments.get("namespace") != "shop"
               for call in _calls_after_constraint(events))
    diagnosis = result.diagnosis  # type: ignore[attr-defined]
    assert diagnosis is not None and diagnosis.culprit.namespace != "shop"
    assert diagnosis.confidence <= 0.5


def test_excluding_another_namespace_leaves_the_investigation_on_course() -> None:
    result, events = _run({1: "don't look at the monitoring namespace"})
    later = _calls_after_constraint(events)
    assert later and all(call.arguments.get("namespace") != "monitoring" for call in later)
    diagnosis = result.diagnosis  # type: ignore[attr-defined]
    assert diagnosis is not None and diagnosis.category == "oom_killed"


def test_a_banned_tool_is_not_called_again() -> None:
    _, events = _run({1: "don't use k8s_describe_pod"})
    assert all(call.tool != "k8s_describe_pod" for call in _calls_after_constraint(events))


def test_stop_submits_the_best_so_far() -> None:
    result, _ = _run({2: "stop"})
    assert result.reason == "stopped"  # type: ignore[attr-defined]
    diagnosis = result.diagnosis  # type: ignore[attr-defined]
    assert diagnosis is not None and diagnosis.category == "oom_killed"


def test_only_offered_tools_are_called() -> None:
    full = scenario_setting(SCENARIO).sources
    without_metrics = Sources(cluster=full.cluster, logs=full.logs, metrics=None)
    result, events = _run({}, sources=without_metrics)
    assert not any(isinstance(e, ToolCalled) and e.tool.startswith("metrics_") for e in events)
    assert result.diagnosis is not None  # type: ignore[attr-defined]


def test_the_final_turn_submits_at_once() -> None:
    request = ModelRequest(messages=(UserMessage("checkout keeps restarting"),),
                           tools=(SUBMIT_SPEC,), step=3, max_steps=12, final=True,
                           context={"incident": "checkout keeps restarting"})
    reply = decide(request)
    assert [c.name for c in reply.tool_calls] == ["submit_diagnosis"]
    Diagnosis.model_validate(reply.tool_calls[0].arguments)


def test_a_step_never_repeats_a_call_or_names_an_excluded_namespace() -> None:
    constraints = ConstraintSet()
    constraints.add(read_reply("stay out of namespace kube-system",
                               Vocabulary.of({"kube-system"})).constraints[0])
    tools = (ToolSpec("k8s_list_workloads", "", {"properties": {"namespace": {}, "limit": {}}}),
             ToolSpec("k8s_events", "", {"properties": {"namespace": {}, "type": {},
                                                         "limit": {}}}), SUBMIT_SPEC)
    reply = decide(ModelRequest(messages=(UserMessage("kube-system dns is down"),), tools=tools,
                                constraint_set=constraints, step=1, max_steps=12,
                                context={"incident": "kube-system dns is down"}))
    names = [c.name for c in reply.tool_calls]
    assert names == ["k8s_list_workloads", "k8s_events"]
    assert all((c.arguments or {}).get("namespace") != "kube-system" for c in reply.tool_calls)


def test_a_rejected_diagnosis_is_not_submitted_again_and_reflection_says_why() -> None:
    scenario = load_scenario(SCENARIO)
    setting = scenario_setting(SCENARIO)
    model = AnalyzerModel()
    engine = ReactEngine(engine_config(model))

    async def attempt(lessons: Sequence[str]) -> object:
        constraints = ConstraintSet()
        incident = Incident(text=scenario.report, now=scenario.now)
        toolset = build_toolset(setting, incident.now, constraints)
        return await engine.run(incident, model, toolset, constraints=constraints,
                                lessons=lessons)

    first = asyncio.run(attempt(()))
    diagnosis = first.diagnosis  # type: ignore[attr-defined]
    assert diagnosis is not None and diagnosis.category == "oom_killed"
    lesson = rejection_message(diagnosis, "memory looked fine to the owners")
    second = asyncio.run(attempt((lesson,)))
    retry = second.diagnosis  # type: ignore[attr-defined]
    assert retry is not None
    assert (retry.category, retry.culprit.name) != ("oom_killed", "checkout")
    reflection = reflect(first.transcript, diagnosis, "memory looked fine")  # type: ignore
    assert reflection.startswith("The previous diagnosis oom_killed of Deployment shop/checkout "
                                 "was rejected: memory looked fine.")
    assert "What was missed" in reflection and "Check next" in reflection
    assert reflection == reflect(first.transcript, diagnosis, "memory looked fine")  # type: ignore


def test_a_retry_attempt_counts_its_own_steps() -> None:
    tools = (ToolSpec("k8s_list_workloads", "", {"properties": {"limit": {}}}), SUBMIT_SPEC)
    reply = decide(ModelRequest(messages=(UserMessage("api is down"),), tools=tools, step=13,
                                max_steps=24, context={"incident": "api is down"}))
    assert [c.name for c in reply.tool_calls] == ["k8s_list_workloads"]


def test_the_model_reflects_for_reflexion() -> None:
    from engines.reflexion import Reflective

    model = AnalyzerModel()
    assert isinstance(model, Reflective)
    result, _ = _run({})
    text = asyncio.run(model.reflect(result, ["confidence 0.40 is below 0.50"]))
    assert text.startswith("The previous diagnosis oom_killed of Deployment shop/checkout was "
                           "rejected: confidence 0.40 is below 0.50.")


def test_a_ruled_out_cause_is_never_submitted() -> None:
    result, _ = _run({1: "it's not an OOM"})
    diagnosis = getattr(result, "diagnosis", None)
    assert diagnosis is None or diagnosis.category != "oom_killed"
