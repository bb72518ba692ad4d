"""Put a resumed run where the interrupted one stopped: its conversation, constraints,
counters, the calls it already made and what they showed, and its diagnosis if it had one.

engines._replay reads an event log into a state; this applies that state to a new run.
Apart from react.py because it is about an earlier run's log, read once before the loop
starts, not about how the loop asks, acts and stops.
"""

from __future__ import annotations

from collections.abc import Sequence

from engines._loop import call_key
from engines._replay import replay
from engines.events import Event, ObservationReceived
from engines.model import ToolMessage
from engines.run_state import _Run
from engines.short_catalog import asked_for
from engines.steering import Vocabulary


def restore(run: _Run, events: Sequence[Event]) -> None:
    """Replay `events` (an interrupted run's log) into `run`."""
    state = replay(events, vocabulary=Vocabulary.of(tools=run.toolset.names))
    for message in state.messages:
        run.history.append(message)
    for constraint in state.constraints:
        run.constraints.add(constraint)
    run.step, run.tool_calls = state.last_step, state.tool_calls
    run.loop.seen_calls.update(call_key(name, args) for name, args in state.calls)
    steps = {e.call_id: e.step for e in events if isinstance(e, ObservationReceived)}
    run.asked_tools |= asked_for(state.calls)
    run.observations.extend(
        (steps.get(m.call_id, run.step), m.name, m.content)
        for m in state.messages if isinstance(m, ToolMessage)
    )
    if state.diagnosed is not None:
        run.diagnosis = state.diagnosed.diagnosis
