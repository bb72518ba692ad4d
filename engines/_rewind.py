"""Roll a running investigation back to the end of step N and go on from there.

The event log is the state: a rewind is itself an event (`RewoundTo`) appended to the log,
and the run is rebuilt by replaying its log as the rewind left it, exactly as a replica
that resumes it after a restart would (engines/_replay.py). Nothing is deleted: the events
of the dropped steps stay in the store and in the thread, superseded. The model is told
what was withdrawn; the constraints that came with the rewind are taken right after it, so
they hold from the step that follows N.
"""

from __future__ import annotations

from engines import prompts
from engines._history import History
from engines._loop import LoopDetector, call_key
from engines._replay import replay, superseded
from engines.constraints import Constraint
from engines.events import ObservationReceived, RewoundTo
from engines.model import ToolMessage, UserMessage
from engines.run_state import RunState
from engines.short_catalog import asked_for
from engines.steering import Vocabulary


def target_of(asked: Constraint, run: RunState) -> tuple[int, tuple[int, ...]]:
    """The step to go back to (within this run's complete steps) and the steps dropped.
    The run is at the start of step `run.step`: the steps before it are complete."""
    done = run.step - 1
    try:
        wanted = int(asked.value)
    except ValueError:
        wanted = done
    target = max(run.first_step, min(wanted, done))
    return target, tuple(range(target + 1, done + 1))


async def rewind(run: RunState, asked: Constraint) -> RewoundTo:
    """Log the rewind, rebuild the run from the log and tell the model; the loop then goes
    on with step N+1."""
    target, dropped = target_of(asked, run)
    event = RewoundTo(run.incident.id, target, dropped, asked.author, asked.reply)
    await run.emit(event)
    rebuild(run)
    run.history.append(UserMessage(prompts.rewind_message(asked.author, target, dropped)))
    run.step = target + 1
    return event


def rebuild(run: RunState) -> None:
    """The conversation, constraints and counters as the log says, after its rewinds."""
    events = superseded(run.log)
    state = replay(events, vocabulary=Vocabulary.of(tools=run.toolset.names))
    history = History(run.history.budget_tokens)
    for message in (*run.opening, *state.messages):
        history.append(message)
    run.history = history
    run.constraints.items[:] = [*run.given, *state.constraints]
    run.tool_calls = state.tool_calls
    run.loop = LoopDetector()
    run.loop.seen_calls.update(call_key(name, args) for name, args in state.calls)
    run.asked_tools = set(asked_for(state.calls))
    steps = {e.call_id: e.step for e in events if isinstance(e, ObservationReceived)}
    run.observations = [(steps.get(m.call_id, run.first_step), m.name, m.content)
                        for m in (*run.opening, *state.messages) if isinstance(m, ToolMessage)]
    run.diagnosis = None
    run.empty_replies = 0
    if run.guide is not None:
        run.guide.rewound(events)
