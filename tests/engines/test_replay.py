"""Replaying an event log (#17): a complete step without tool calls (a thought only, a tot
proposal, constraints only) is replayed and replay goes on; only the step in flight at the
end is dropped. A rewind supersedes the steps after its target."""

from __future__ import annotations

from engines._replay import replay, superseded
from engines.events import (
    ConstraintApplied,
    Event,
    HypothesesUpdated,
    ObservationReceived,
    RewoundTo,
    ThoughtRecorded,
    ToolCalled,
)
from engines.incident import Incident
from engines.model import AssistantMessage, ModelReply, ModelRequest, ToolMessage
from engines.react import EngineConfig, ReactEngine
from engines.scripted_model import FunctionModel, call, reply
from tests.engines.test_react import DIAGNOSIS, NOW, make

ID = "i-1"


def called(step: int, call_id: str, namespace: str, *, answered: bool = True) -> list[Event]:
    events: list[Event] = [ToolCalled(ID, step, call_id, "k8s_pods", {"namespace": namespace},
                                      f"Listing pods in {namespace}")]
    if answered:
        events.append(ObservationReceived(ID, step, call_id, "k8s_pods", "success",
                                          f"pods of {namespace}"))
    return events


def log_with_steps_without_calls() -> list[Event]:
    return [
        ThoughtRecorded(ID, 1, "look at the pods"), *called(1, "c1", "shop"),
        ThoughtRecorded(ID, 2, "I think it is memory"),  # a thought only, no call
        HypothesesUpdated(ID, 3, ()),  # a proposal step
        ConstraintApplied(ID, 3, "stay out of kube-system", "s", "alice",
                          constraint="exclude_namespace", value="kube-system", reply="r1"),
        ThoughtRecorded(ID, 4, "now the web pods"), *called(4, "c4", "web"),
        ThoughtRecorded(ID, 5, "and the cache"), *called(5, "c5", "cache", answered=False),
    ]


def test_steps_without_calls_are_replayed_and_replay_goes_on() -> None:
    state = replay(log_with_steps_without_calls())
    assert state.last_step == 4  # not 1: the old replay stopped at the thought-only step
    assert state.tool_calls == 2
    assert [c for c, _ in state.calls] == ["k8s_pods", "k8s_pods"]
    assert [(c.kind, c.value) for c in state.constraints] == [
        ("exclude_namespace", "kube-system")]
    thoughts = [m.content for m in state.messages if isinstance(m, AssistantMessage)]
    assert thoughts == ["look at the pods", "I think it is memory", "now the web pods"]
    answered = [m.call_id for m in state.messages if isinstance(m, ToolMessage)]
    assert answered == ["c1", "c4"]  # c5 was in flight: asked again


def test_a_last_step_that_asked_nothing_yet_is_asked_again() -> None:
    log = [*called(1, "c1", "shop"), ThoughtRecorded(ID, 2, "hmm")]
    assert replay(log).last_step == 1


async def test_a_resumed_run_goes_on_after_a_thought_only_step() -> None:
    seen: list[ModelRequest] = []

    def model(request: ModelRequest) -> ModelReply:
        seen.append(request)
        return reply("done", call("submit_diagnosis", DIAGNOSIS))

    toolset, constraints = make()
    result = await ReactEngine(EngineConfig(max_steps=8)).run(
        Incident("checkout restarts", now=NOW), FunctionModel(model), toolset,
        constraints=constraints, resume=log_with_steps_without_calls())
    assert result.reason == "diagnosed"
    assert seen[0].step == 5  # steps 1-4 replayed, not lost nor repeated
    assert result.tool_calls == 2
    assert constraints.excluded_namespaces == {"kube-system"}


def test_a_rewind_supersedes_the_later_steps_logged_before_it() -> None:
    log: list[Event] = [
        *called(1, "c1", "shop"), *called(2, "c2", "db"), *called(3, "c3", "db"),
        ConstraintApplied(ID, 3, "skip db", "s", "bob", constraint="exclude_namespace",
                          value="db", reply="r0"),
        *called(4, "c4", "db"),
        RewoundTo(ID, 2, (3, 4), "alice", "r1"),
        ConstraintApplied(ID, 3, "it's not the database", "s", "alice",
                          constraint="rule_out", value="database", reply="r1"),
        *called(3, "c3b", "web"),
    ]
    kept = superseded(log)
    assert not any(getattr(e, "call_id", "") in ("c3", "c4") for e in kept)
    assert len(kept) == len(log) - 6  # the old steps 3-4 and the rewind itself
    state = replay(log)
    assert state.last_step == 3 and state.tool_calls == 3
    assert [m.call_id for m in state.messages if isinstance(m, ToolMessage)] == [
        "c1", "c2", "c3b"]
    assert [(c.kind, c.value) for c in state.constraints] == [("rule_out", "database")]
