"""Rewind (#15): "rewind to step 2, stay out of db" rolls the investigation back to the end
of step 2 and goes on from there with the new constraint obeyed. The rewind is an event in
the log; the steps after 2 logged before it are superseded (kept, not replayed), so a run
resumed from the log after a restart goes on from the rewound state too."""

from __future__ import annotations

import asyncio

from engines.constraints import Constraint, ConstraintInbox
from engines.events import ConstraintApplied, Event, ObservationReceived, RewoundTo, ToolCalled
from engines.incident import Incident
from engines.model import ModelReply, ModelRequest, ToolMessage, UserMessage
from engines.react import EngineConfig, ReactEngine
from engines.scripted_model import FunctionModel, call, reply
from engines.steering import Vocabulary, put_reply, read_reply
from tests.engines.test_react import DIAGNOSIS, NOW, investigate, make

VOCAB = Vocabulary.of(namespaces=("shop", "db", "web"))


def observed(events: list[Event]) -> list[tuple[int, str, str]]:
    calls = {e.call_id: e for e in events if isinstance(e, ToolCalled)}
    return [(e.step, str(calls[e.call_id].arguments.get("namespace")), e.status)
            for e in events if isinstance(e, ObservationReceived)]


async def run_with_a_rewind() -> tuple[list[ModelRequest], list[Event], object]:
    toolset, constraints = make()
    inbox = ConstraintInbox()
    seen: list[ModelRequest] = []
    plan = ["shop", "web", "db", "db"]  # steps 1-4 go down the database path

    def model(request: ModelRequest) -> ModelReply:
        seen.append(request)
        if len(seen) == 4:
            put_reply(inbox, "rewind to step 2, stay out of db", VOCAB, author="alice",
                      reply="r1")
        if len(seen) <= 4:
            return reply(f"step {request.step}", call("k8s_pods",
                                                      {"namespace": plan[len(seen) - 1]}))
        if len(seen) == 5:  # the new step 3: the model tries db again; it is refused
            return reply("db again", call("k8s_pods", {"namespace": "db"}))
        return reply("done", call("submit_diagnosis", DIAGNOSIS))

    result, events = await investigate(FunctionModel(model), toolset, constraints,
                                       inbox=inbox, config=EngineConfig(max_steps=8))
    return seen, events, result


async def test_a_rewind_to_step_2_drops_steps_3_on_and_the_new_constraint_is_obeyed() -> None:
    seen, events, result = await run_with_a_rewind()
    assert result.reason == "diagnosed"  # type: ignore[attr-defined]
    rewinds = [e for e in events if isinstance(e, RewoundTo)]
    assert [(r.step, r.dropped, r.author) for r in rewinds] == [(2, (3, 4), "alice")]
    assert rewinds[0].said == "Rewound to step 2: dropped steps 3-4"
    after = seen[4]  # the first request after the rewind
    assert after.step == 3
    answered = [m.content for m in after.messages if isinstance(m, ToolMessage)]
    assert len(answered) == 2  # steps 1 and 2 only: what steps 3-4 found is gone
    assert all("db" not in text for text in answered)
    assert after.constraint_set.excluded_namespaces == {"db"}
    told = [m.content for m in after.messages if isinstance(m, UserMessage)]
    assert any(t.startswith("REWIND by alice") for t in told)
    # The old steps 3-4 stay in the log; the new step 3's call to db is refused.
    assert observed(events) == [(1, "shop", "success"), (2, "web", "success"),
                                (3, "db", "success"), (4, "db", "success"),
                                (3, "db", "error")]
    assert result.tool_calls == 3  # type: ignore[attr-defined]  # 1, 2 and the new 3
    applied = [e for e in events if isinstance(e, ConstraintApplied)]
    assert [(a.constraint, a.value, a.step) for a in applied] == [
        ("exclude_namespace", "db", 3)]
    assert events.index(applied[0]) > events.index(rewinds[0])


async def test_a_run_resumed_after_a_rewind_goes_on_from_the_rewound_state() -> None:
    _, log, _ = await run_with_a_rewind()
    # Crash once the new step 3 is done, before the diagnosis of step 4 was logged.
    rewound = next(j for j, r in enumerate(log) if isinstance(r, RewoundTo))
    cut = max(i for i, e in enumerate(log) if isinstance(e, ObservationReceived)
              and e.step == 3 and i > rewound)
    interrupted = log[:cut + 1]
    seen: list[ModelRequest] = []

    def model(request: ModelRequest) -> ModelReply:
        seen.append(request)
        return reply("done", call("submit_diagnosis", DIAGNOSIS))

    toolset, constraints = make()
    result = await ReactEngine(EngineConfig(max_steps=8)).run(
        Incident("checkout restarts", now=NOW), FunctionModel(model), toolset,
        constraints=constraints, resume=interrupted)
    assert result.reason == "diagnosed"
    assert seen[0].step == 4  # steps 1, 2 and the new 3 replayed, the old 3-4 not
    answered = [m for m in seen[0].messages if isinstance(m, ToolMessage)]
    assert len(answered) == 3 and answered[-1].status == "error"  # the refused db call
    assert constraints.excluded_namespaces == {"db"}
    assert result.tool_calls == 3


def test_the_reader_types_a_rewind_and_what_comes_with_it() -> None:
    from_reply = read_reply("rewind to step 2, it's not the database", VOCAB)
    assert [(c.kind, c.value) for c in from_reply.constraints] == [
        ("rewind", "2"), ("rule_out", "database")]
    assert [(c.kind, c.value) for c in read_reply("go back to step 3", VOCAB).constraints] \
        == [("rewind", "3")]
    rollout = read_reply("roll back checkout", VOCAB).constraints  # a fix, not a rewind
    assert not any(c.kind == "rewind" for c in rollout)


def test_a_rewind_is_not_a_standing_constraint_and_undo_cancels_it() -> None:
    inbox = ConstraintInbox()
    put_reply(inbox, "rewind to step 2, stay out of db", VOCAB, reply="r1")
    assert [c.kind for c in inbox.drain()] == ["exclude_namespace"]
    assert inbox.rewind is not None and inbox.rewind.value == "2"
    inbox.withdraw("r1")
    assert inbox.take_rewind() is None


async def test_a_rewind_asked_during_a_pause_rolls_back_and_a_new_pause_holds_again() -> None:
    """The Rewind button's shape: a pause is in force, then "rewind to step 1" comes with a
    pause of its own; the engine rolls back at once (not after the next model call) and
    holds until Resume, with no model request in between."""
    toolset, constraints = make()
    inbox = ConstraintInbox()
    seen: list[ModelRequest] = []
    held = asyncio.Event()

    def model(request: ModelRequest) -> ModelReply:
        seen.append(request)
        if len(seen) == 2:
            inbox.put(Constraint("pause", "hold on", author="bob", reply="p1"))
        if len(seen) <= 2:
            return reply(f"step {request.step}", call("k8s_pods", {"namespace": "shop"}))
        return reply("done", call("submit_diagnosis", DIAGNOSIS))

    async def keep(event: Event) -> None:
        events.append(event)
        if isinstance(event, ConstraintApplied) and event.constraint == "pause":
            held.set()

    events: list[Event] = []
    run = asyncio.create_task(ReactEngine(EngineConfig(max_steps=6)).run(
        Incident("checkout restarts", now=NOW), FunctionModel(model), toolset, inbox, keep,
        constraints=constraints))
    await asyncio.wait_for(held.wait(), 5)  # paused at the start of step 3
    held.clear()
    inbox.put(Constraint("rewind", "rewind to step 1", "1", author="carol", reply="w1"))
    inbox.put(Constraint("pause", "pause", author="carol", reply="w1"))
    await asyncio.wait_for(held.wait(), 5)  # rolled back, and held by the rewind's pause
    assert len(seen) == 2 and not run.done()
    rewinds = [e for e in events if isinstance(e, RewoundTo)]
    assert [(r.step, r.dropped) for r in rewinds] == [(1, (2,))]
    inbox.resume()
    result = await asyncio.wait_for(run, 5)
    assert result.reason == "diagnosed" and len(seen) == 3
    assert seen[2].step == 2  # it went on from step 1
