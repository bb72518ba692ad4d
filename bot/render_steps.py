"""A step of the engine as a Slack message: its thought, its calls and what they returned,
and a Rewind button to go back to the end of it.

Pure, like bot.render: every text is cleaned and masked once per step (a queued step may
be rendered several times while its channel coalesces), and a message always fits Slack's
limits (bot._blocks).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from bot._blocks import (
    Block,
    Message,
    button,
    clean,
    clip,
    code,
    context,
    escape,
    fits,
    preview,
    section,
)
from engines.events import ObservationReceived, ToolCalled
from tools.redact import redact

REWIND_ACTION = "triage_rewind"  # on a step's message; the value is the step's number


@dataclass(slots=True)
class StepView:
    """One step of the engine: its thought, its calls and what they returned."""

    step: int
    thought: str = ""
    calls: list[ToolCalled] = field(default_factory=list)
    observations: dict[str, ObservationReceived] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # Masked, escaped texts, made once: a queued step may be rendered several times while
    # the channel coalesces, and masking is the expensive part. Set once the step is final.
    cleaned: _CleanStep | None = field(default=None, repr=False, compare=False)

    @property
    def complete(self) -> bool:
        return bool(self.calls) and all(c.call_id in self.observations for c in self.calls)

    @property
    def empty(self) -> bool:
        return not (self.thought or self.calls or self.notes)


@dataclass(frozen=True, slots=True)
class _CleanStep:
    thought: str
    calls: tuple[str, ...]
    notes: tuple[str, ...]


def _clean_step(view: StepView) -> _CleanStep:
    if view.cleaned is not None:
        return view.cleaned
    calls = []
    for call in view.calls:
        observation = view.observations.get(call.call_id)
        line = f":wrench: {clean(call.description)}"
        if observation is not None:
            mark = ":warning: " if observation.status == "error" else ""
            cached = " _(cached)_" if observation.cached else ""
            body = code(escape(redact(preview(observation.text))))
            line = f"{line}{cached}\n{mark}{body}"
        calls.append(line)
    view.cleaned = _CleanStep(
        clip(clean(view.thought.strip()), 2500),
        tuple(calls),
        tuple(f":warning: {clip(clean(note), 500)}" for note in view.notes),
    )
    return view.cleaned


def _step_blocks(view: StepView, max_calls: int) -> list[Block]:
    clean = _clean_step(view)
    thought = f" _{clean.thought}_" if clean.thought else ""
    blocks: list[Block] = [section(f"*Step {view.step}*{thought}")]
    blocks.extend(section(line) for line in clean.calls[:max_calls])
    if len(view.calls) > max_calls:
        blocks.append(context(f"… and {len(view.calls) - max_calls} more calls in this step"))
    blocks.extend(context(note) for note in clean.notes)
    # Roll back to the end of this step; the run then pauses for a new instruction.
    blocks.append({"type": "actions", "block_id": f"rewind-{view.step}", "elements": [
        button("Rewind to here", REWIND_ACTION, str(view.step))]})
    return blocks


def step_message(views: Sequence[StepView]) -> Message:
    """One message for one or several steps (several when the channel was behind).

    A single step always fits: its calls are cut, then its previews, until it does.
    """
    blocks: list[Block] = []
    for view in views:
        blocks.extend(_step_blocks(view, max_calls=20))
    steps = ", ".join(str(v.step) for v in views)
    text = f"Step {steps}" if len(views) == 1 else f"Steps {steps}"
    message = Message(text, blocks)
    if fits(message) or len(views) > 1:
        return message
    for max_calls in (10, 5, 2, 1):
        message = Message(text, _step_blocks(views[0], max_calls))
        if fits(message):
            return message
    short = StepView(views[0].step, views[0].thought[:500], views[0].calls[:1])
    return Message(text, _step_blocks(short, 1))
