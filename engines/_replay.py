"""Rebuild an interrupted investigation's state from its event log.

The event log is the investigation's state: a replica that takes over replays the events
into the conversation, the constraints and the counters, and the loop goes on from the
step after the last complete one. A step whose calls were asked for but not all answered is
dropped and asked again, so no observation is ever duplicated and at most the step in
flight is lost; a complete step without calls (a thought, a proposal, constraints) is
replayed like any other. A rewind (`RewoundTo`) supersedes the steps after its target.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from engines.constraints import KINDS, Constraint, ConstraintKind
from engines.events import (
    ConstraintApplied,
    ConstraintWithdrawn,
    DiagnosisSubmitted,
    Event,
    ObservationReceived,
    RewoundTo,
    ThoughtRecorded,
    ToolCalled,
)
from engines.model import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from engines.prompts import NO_CALL_NUDGE, constraint_message, withdrawal_message
from engines.steering import Vocabulary, read_reply


@dataclass(slots=True)
class Replayed:
    """What the log says happened, ready to be loaded into a new run."""

    messages: list[Message] = field(default_factory=list)
    constraints: list[Constraint] = field(default_factory=list)
    last_step: int = 0
    tool_calls: int = 0
    calls: list[tuple[str, dict[str, object] | None]] = field(default_factory=list)
    diagnosed: DiagnosisSubmitted | None = None


def _steps(events: Sequence[Event]) -> dict[int, list[Event]]:
    by_step: dict[int, list[Event]] = {}
    for event in events:
        step = getattr(event, "step", None)
        if isinstance(step, int):
            by_step.setdefault(step, []).append(event)
    return by_step


def constraints_of(event: ConstraintApplied, vocab: Vocabulary) -> list[Constraint]:
    """The typed constraint an event records; an event stored before constraints were
    typed is read again from its reply's text."""
    if event.constraint in KINDS:
        kind: ConstraintKind = event.constraint  # type: ignore[assignment]  # checked above
        return [Constraint(kind, event.text, event.value, event.author, event.reply)]
    return list(read_reply(event.text, vocab, author=event.author).constraints)


def superseded(events: Sequence[Event]) -> list[Event]:
    """The log as it stands after its rewinds: a `RewoundTo(step=N)` supersedes the events
    of steps after N that came before it (they stay in the store, they are not replayed);
    what follows it is the investigation going on from N."""
    kept: list[Event] = []
    for event in events:
        if isinstance(event, RewoundTo):
            kept = [e for e in kept if not _after(e, event.step)]
        else:
            kept.append(event)
    return kept


def _after(event: Event, step: int) -> bool:
    at = getattr(event, "step", None)
    return isinstance(at, int) and at > step


def replay(events: Sequence[Event], *, vocabulary: Vocabulary | None = None) -> Replayed:
    """Turn a log into messages and counters. Every complete step is replayed, also one
    without tool calls (a thought only, a search engine's proposal, constraints only); the
    last step, when its calls are not all answered or it has none, is the step in flight
    and is asked again."""
    state = Replayed()
    vocab = vocabulary or Vocabulary.of()
    by_step = sorted(_steps(superseded(events)).items())
    last = by_step[-1][0] if by_step else 0
    for step, step_events in by_step:
        for event in step_events:
            if isinstance(event, ConstraintApplied):
                for constraint in constraints_of(event, vocab):
                    state.constraints.append(constraint)
                    state.messages.append(
                        UserMessage(constraint_message(constraint.author, constraint.rule))
                    )
            elif isinstance(event, ConstraintWithdrawn):
                gone = [c for c in state.constraints if c.reply == event.reply]
                state.constraints = [c for c in state.constraints if c not in gone]
                for constraint in gone:
                    state.messages.append(
                        UserMessage(withdrawal_message(event.author, constraint.rule)))
        if any(isinstance(e, DiagnosisSubmitted) for e in step_events):
            state.diagnosed = next(e for e in step_events if isinstance(e, DiagnosisSubmitted))
        actions = [e for e in step_events if isinstance(e, ToolCalled)]
        observations = {e.call_id: e for e in step_events if isinstance(e, ObservationReceived)}
        if any(a.call_id not in observations for a in actions):
            break  # the step in flight: it is asked again
        if not actions and step == last and state.diagnosed is None:
            break  # the last step has asked nothing yet: it is asked again
        thought = " ".join(e.text for e in step_events if isinstance(e, ThoughtRecorded))
        if actions or thought:
            calls = tuple(ToolCall(a.call_id, a.tool, dict(a.arguments)) for a in actions)
            state.messages.append(AssistantMessage(thought, calls))
        if thought and not actions and state.diagnosed is None:
            state.messages.append(UserMessage(NO_CALL_NUDGE))  # as the loop said it then
        for action in actions:
            seen = observations[action.call_id]
            state.messages.append(
                ToolMessage(seen.call_id, seen.tool, seen.text, seen.status)
            )
            state.calls.append((action.tool, dict(action.arguments)))
        state.tool_calls += len(actions)
        state.last_step = step
    return state
