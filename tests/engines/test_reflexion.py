"""Reflexion: the evaluator, reflections, and retries that do not repeat the failed path."""

from __future__ import annotations

from typing import Any

from engines.constraints import ConstraintInbox
from engines.diagnosis import REJECTION_PREFIX, Diagnosis
from engines.events import Event, ReflectionRecorded
from engines.incident import Incident
from engines.model import ModelReply, ModelRequest, Usage, UserMessage
from engines.react import EngineConfig, InvestigationResult
from engines.reflexion import ReflexionEngine, evaluate
from engines.scripted_model import FunctionModel, ScriptedModel, call, reply
from engines.steering import put_reply
from tests.engines.test_react import DIAGNOSIS, NOW, k8s_pods, make

WRONG = {
    **DIAGNOSIS,
    "category": "node_failure",
    "culprit": {"kind": "Node", "namespace": "", "name": "node-1"},
    "evidence": [{"tool": "k8s_pods", "quote": "NodeNotReady since 09:12"}],
}


async def run(model: Any, **options: Any) -> tuple[InvestigationResult, list[Event]]:
    toolset, constraints = make((k8s_pods,))
    events: list[Event] = []

    async def sink(event: Event) -> None:
        events.append(event)

    result = await ReflexionEngine(EngineConfig(max_steps=4)).run(
        Incident("checkout restarts", now=NOW),
        model,
        toolset,
        None,
        sink,
        constraints=constraints,
        **options,
    )
    return result, events


async def test_hallucinated_evidence_is_rejected_reflected_on_and_retried() -> None:
    def model_fn(request: ModelRequest) -> ModelReply:
        if not request.tools:  # the reflection request: no tools offered
            return reply("The node theory had no support; read the pods' last states.")
        notes = [m.content for m in request.messages if isinstance(m, UserMessage)]
        retried = any(n.startswith(REJECTION_PREFIX) for n in notes)
        if request.step in (1, 3):
            return reply("look", call("k8s_pods", {"namespace": "shop" if retried else "x"}))
        return reply("answer", call("submit_diagnosis", DIAGNOSIS if retried else WRONG))

    model = FunctionModel(model_fn)
    result, events = await run(model)
    reflections = [e for e in events if isinstance(e, ReflectionRecorded)]
    assert len(reflections) == 1
    assert reflections[0].problems == (
        "the evidence 'NodeNotReady since 09:12' occurs in no observation",
    )
    assert reflections[0].retrying
    assert "read the pods' last states" in reflections[0].text
    assert result.diagnosis is not None and result.diagnosis.category == "oom_killed"
    assert result.attempts == 2
    assert result.steps == 4  # step numbers keep rising across attempts
    second_attempt = next(r for r in model.requests if r.tools and r.step == 3)
    notes = [m.content for m in second_attempt.messages if isinstance(m, UserMessage)]
    assert any("node_failure of Node node-1 was rejected" in n for n in notes)
    assert any(n.startswith("REFLECTION on attempt 1:") for n in notes)
    assert [e.kind for e in events].count("started") == 1
    assert [e.kind for e in events].count("stopped") == 1


def test_evaluator_rules() -> None:
    base = InvestigationResult("i", None, "max_steps", "", 3, 2, Usage(), 0.1)
    assert evaluate(base).problems == ("no diagnosis was submitted",)
    good = Diagnosis.model_validate(DIAGNOSIS)
    observed = (("k8s_pods", "pods:\n- {name: checkout-1, reason:   OOMKilled}"),)
    ok = InvestigationResult("i", good, "diagnosed", "", 2, 1, Usage(), 0.1, observations=observed)
    assert evaluate(ok).passed
    unsure = good.model_copy(update={"confidence": 0.2, "category": "unknown"})
    problems = evaluate(
        InvestigationResult("i", unsure, "diagnosed", "", 2, 1, Usage(), 0.1, observations=observed)
    ).problems
    assert problems == ("the category is unknown", "confidence 0.20 is below 0.50")


async def test_a_passing_first_attempt_costs_no_extra_step() -> None:
    model = ScriptedModel(
        [
            reply("look", call("k8s_pods", {"namespace": "shop"})),
            reply("done", call("submit_diagnosis", DIAGNOSIS)),
        ]
    )
    result, events = await run(model)
    model.assert_all_used()
    assert result.attempts == 1 and result.steps == 2
    assert not [e for e in events if isinstance(e, ReflectionRecorded)]


async def test_attempts_are_bounded_and_the_last_answer_is_marked_unverified() -> None:
    def model_fn(request: ModelRequest) -> ModelReply:
        if not request.tools:
            return reply("try harder")
        if request.step % 2:
            return reply("", call("k8s_pods", {"namespace": f"n{request.step}"}))
        return reply("", call("submit_diagnosis", WRONG))

    result, events = await run(FunctionModel(model_fn))
    reflections = [e for e in events if isinstance(e, ReflectionRecorded)]
    assert [r.retrying for r in reflections] == [True, True, False]
    assert result.attempts == 3
    assert result.detail.startswith("unverified after 3 attempts")


async def test_lessons_are_shown_and_given_to_the_model() -> None:
    model = ScriptedModel(
        [
            reply("done", call("k8s_pods", {"namespace": "shop"})),
            reply("done", call("submit_diagnosis", DIAGNOSIS)),
        ]
    )
    lesson = "checkout OOMs after every release that raises the cache size"
    _, events = await run(model, lessons=[lesson])
    assert events[1].kind == "lessons" and events[1].lessons == (lesson,)
    assert model.requests[0].lessons == (lesson,)
    assert lesson in model.requests[0].messages[0].content


async def test_a_human_stop_is_not_retried() -> None:
    toolset, constraints = make((k8s_pods,))
    inbox = ConstraintInbox()
    put_reply(inbox, "stop")
    model = ScriptedModel([reply("", call("submit_diagnosis", WRONG))])  # the final turn
    result = await ReflexionEngine().run(
        Incident("x", now=NOW), model, toolset, inbox, constraints=constraints
    )
    assert result.reason == "stopped" and result.attempts == 1


async def test_when_every_attempt_fails_the_least_doubtful_answer_is_kept() -> None:
    timid = {**DIAGNOSIS, "confidence": 0.45}
    worse = {**WRONG, "confidence": 0.2}

    def model_fn(request: ModelRequest) -> ModelReply:
        if not request.tools:
            return reply("look elsewhere")
        retried = any(
            isinstance(m, UserMessage) and m.content.startswith(REJECTION_PREFIX)
            for m in request.messages
        )
        if request.step % 2:
            return reply("", call("k8s_pods", {"namespace": f"n{request.step}"}))
        return reply("", call("submit_diagnosis", worse if retried else timid))

    result, _ = await run(FunctionModel(model_fn))
    assert result.attempts == 3
    assert result.diagnosis is not None and result.diagnosis.category == "oom_killed"
    assert result.detail == "unverified after 3 attempts: confidence 0.45 is below 0.50"


async def test_a_retry_replaces_an_earlier_answer_only_when_clearly_more_confident() -> None:
    first = {**DIAGNOSIS, "confidence": 0.36}
    nudged = {**DIAGNOSIS, "category": "node_failure", "confidence": 0.4,  # as doubtful:
              "culprit": {"kind": "Node", "namespace": "", "name": "node-1"}}  # merely pushed

    def model_fn(request: ModelRequest) -> ModelReply:
        if not request.tools:
            return reply("look elsewhere")
        retried = any(
            isinstance(m, UserMessage) and m.content.startswith(REJECTION_PREFIX)
            for m in request.messages
        )
        if request.step % 2:
            return reply("", call("k8s_pods", {"namespace": f"n{request.step}"}))
        return reply("", call("submit_diagnosis", nudged if retried else first))

    result, _ = await run(FunctionModel(model_fn))
    assert result.attempts == 3
    assert result.diagnosis is not None and result.diagnosis.category == "oom_killed"
