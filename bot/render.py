"""Pure functions from what an investigation did to Slack messages (Block Kit).

Nothing here talks to Slack or reads a clock, so every message can be tested as data. Every
piece of text that came from a tool, a model or a human goes through `_clean` (credentials
masked, mrkdwn control characters escaped) and every message respects Slack's limits: 50
blocks, 3000 characters a section, 150 a header, and about 12 KB for the whole payload.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from engines.diagnosis import Diagnosis
from engines.events import ObservationReceived, ToolCalled
from tools.redact import redact

Block = dict[str, Any]
State = Literal["running", "waiting for approval", "done", "stopped", "failed"]

MAX_BLOCKS = 50
MAX_SECTION = 3000
MAX_HEADER = 150
MAX_MESSAGE_BYTES = 12_000
MAX_FALLBACK = 2_000
PREVIEW_LINES = 6
PREVIEW_CHARS = 600

# action_ids the listeners route on; the value is the investigation (or approval) id.
STOP_ACTION = "triage_stop"
CORRECT_ACTION = "triage_correct"
WRONG_ACTION = "triage_wrong"
APPROVE_ACTION = "triage_approve"
DENY_ACTION = "triage_deny"
FEEDBACK_BLOCK = "triage_feedback"

_STATE_ICON: dict[State, str] = {
    "running": ":hourglass_flowing_sand:",
    "waiting for approval": ":raised_hand:",
    "done": ":white_check_mark:",
    "stopped": ":octagonal_sign:",
    "failed": ":x:",
}


@dataclass(frozen=True, slots=True)
class Message:
    """What one chat.postMessage or chat.update sends: notification text and blocks."""

    text: str
    blocks: list[Block] = field(default_factory=list)

    @property
    def size(self) -> int:
        return len(json.dumps({"text": self.text, "blocks": self.blocks}).encode())


def fits(message: Message) -> bool:
    """Whether Slack will take the message as it is."""
    return len(message.blocks) <= MAX_BLOCKS and message.size <= MAX_MESSAGE_BYTES


def escape(text: str) -> str:
    """Slack mrkdwn treats &, < and > as control characters."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


MAX_LINE = 300
MAX_TEXT = 3500


def bounded(text: str, chars: int = MAX_TEXT, line: int = MAX_LINE) -> str:
    """Cut before masking: the masking rules cost time that grows steeply with the length of
    an unbroken run of characters, and nothing longer than this is ever shown anyway."""
    lines = text[: chars + line].splitlines()
    kept = [part if len(part) <= line else part[: line - 1] + "…" for part in lines]
    return "\n".join(kept)[:chars]


def _masked(text: str) -> str:
    return redact(bounded(text))


def _clean(text: str) -> str:
    """Untrusted text (tools, models), safe to show: cut, credentials masked, escaped."""
    return escape(_masked(text))


_BROADCAST = re.compile(r"<!(channel|here|everyone|subteam\^[^>]*)(\|[^>]*)?>")


def _human(text: str) -> str:
    """A human's own Slack text: credentials masked and broadcasts (@channel) defused, but
    their links and mentions kept as they wrote them."""
    return _BROADCAST.sub(lambda m: f"&lt;!{escape(m.group(1))}&gt;", _masked(text))


def clip(text: str, limit: int) -> str:
    """Cut to `limit` characters, saying so."""
    if len(text) <= limit:
        return text
    return text[: limit - 1].rstrip() + "…"


def _code(text: str, limit: int = PREVIEW_CHARS) -> str:
    """A preformatted block; triple backticks inside would end it early."""
    body = clip(text.replace("```", "ʼʼʼ"), limit)
    return f"```{body}```" if body.strip() else ""


def _section(text: str) -> Block:
    return {"type": "section", "text": {"type": "mrkdwn", "text": clip(text, MAX_SECTION)}}


def _context(text: str) -> Block:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": clip(text, MAX_SECTION)}]}


def _button(text: str, action_id: str, value: str, style: str | None = None) -> Block:
    button: Block = {
        "type": "button",
        "text": {"type": "plain_text", "text": text, "emoji": True},
        "action_id": action_id,
        "value": value,
    }
    if style:
        button["style"] = style
    return button


def preview(text: str, lines: int = PREVIEW_LINES, chars: int = PREVIEW_CHARS) -> str:
    """The first lines of an observation, saying how many were left out."""
    kept = text.strip().splitlines()
    shown = bounded("\n".join(kept[:lines]), chars * 2)
    if len(kept) > lines:
        shown += f"\n… {len(kept) - lines} more lines"
    return clip(shown, chars)


def elapsed(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m {seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


# --- status -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StatusView:
    """The status message at the top of the thread, as it is now."""

    investigation_id: str
    incident: str
    model: str
    step: int
    max_steps: int
    state: State
    elapsed_seconds: float
    requested_by: str = ""
    detail: str = ""


def status_message(view: StatusView) -> Message:
    icon = _STATE_ICON[view.state]
    incident = clip(_human(view.incident.strip()), 1500)
    who = f" · asked by <@{view.requested_by}>" if view.requested_by else ""
    steps = f"step {view.step} of {view.max_steps}" if view.max_steps else f"step {view.step}"
    facts = (
        f"{icon} *{view.state}* · {steps} · {elapsed(view.elapsed_seconds)} elapsed · "
        f"model `{escape(view.model)}`{who}"
    )
    blocks = [_section(f":mag: *Investigating:* {incident}"), _context(facts)]
    if view.detail:
        blocks.append(_context(clip(_clean(view.detail), 500)))
    if view.state in ("running", "waiting for approval"):
        blocks.append(
            {
                "type": "actions",
                "block_id": "triage_status",
                "elements": [
                    _button("Stop", STOP_ACTION, view.investigation_id, "danger"),
                ],
            }
        )
    text = f"Investigating: {clip(clean_line(view.incident), 200)} ({view.state}, {steps})"
    return Message(text, blocks)


# --- steps --------------------------------------------------------------------------------


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
        line = f":wrench: {_clean(call.description)}"
        if observation is not None:
            mark = ":warning: " if observation.status == "error" else ""
            cached = " _(cached)_" if observation.cached else ""
            body = _code(escape(redact(preview(observation.text))))
            line = f"{line}{cached}\n{mark}{body}"
        calls.append(line)
    view.cleaned = _CleanStep(
        clip(_clean(view.thought.strip()), 2500),
        tuple(calls),
        tuple(f":warning: {clip(_clean(note), 500)}" for note in view.notes),
    )
    return view.cleaned


def _step_blocks(view: StepView, max_calls: int) -> list[Block]:
    clean = _clean_step(view)
    thought = f" _{clean.thought}_" if clean.thought else ""
    blocks: list[Block] = [_section(f"*Step {view.step}*{thought}")]
    blocks.extend(_section(line) for line in clean.calls[:max_calls])
    if len(view.calls) > max_calls:
        blocks.append(_context(f"… and {len(view.calls) - max_calls} more calls in this step"))
    blocks.extend(_context(note) for note in clean.notes)
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


# --- replies, diagnosis, endings ----------------------------------------------------------


def noted(summary: str, author: str) -> Message:
    who = f"<@{author}>" if author else "you"
    text = f"Noted: {clean_line(summary)}"
    return Message(text, [_section(f":memo: *Noted*, {who}: {_human(summary)}")])


def clean_line(text: str) -> str:
    """One line of untrusted text for a notification's fallback `text`."""
    return clip(_clean(text).replace("\n", " "), 300)


def diagnosis_message(
    investigation_id: str, diagnosis: Diagnosis, *, final_turn: bool = False
) -> Message:
    """Category, culprit, summary, evidence, fix and confidence, with Correct / Wrong."""
    title = "Best diagnosis so far" if final_turn else "Diagnosis"
    culprit = _clean(str(diagnosis.culprit))
    blocks: list[Block] = [
        {"type": "header", "text": {"type": "plain_text", "text": clip(title, MAX_HEADER)}},
        {
            "type": "section",
            "fields": [
                {"type": "mrkdwn", "text": f"*Category*\n`{diagnosis.category}`"},
                {"type": "mrkdwn", "text": f"*Culprit*\n{clip(culprit, 1900)}"},
                {"type": "mrkdwn", "text": f"*Confidence*\n{diagnosis.confidence:.0%}"},
            ],
        },
        _section(clip(_clean(diagnosis.summary.strip()), MAX_SECTION)),
    ]
    if diagnosis.evidence:
        lines = [
            f"• {clip(_clean(e.quote), 400)} _({escape(e.tool)})_" for e in diagnosis.evidence
        ]
        blocks.append(_section(clip("*Evidence*\n" + "\n".join(lines), MAX_SECTION)))
    if diagnosis.fix.strip():
        blocks.append(_section(f"*Fix*\n{clip(_clean(diagnosis.fix.strip()), 2900)}"))
    blocks.append(
        {
            "type": "actions",
            "block_id": FEEDBACK_BLOCK,
            "elements": [
                _button("Correct", CORRECT_ACTION, investigation_id, "primary"),
                _button("Wrong", WRONG_ACTION, investigation_id),
            ],
        }
    )
    text = f"{title}: {diagnosis.category} in {clean_line(str(diagnosis.culprit))}"
    return Message(text, blocks)


def with_verdict(blocks: Sequence[Block], verdict: Literal["correct", "wrong"],
                 user: str) -> list[Block]:
    """The diagnosis message once someone judged it: the buttons become who said what."""
    if verdict == "correct":
        note = f":white_check_mark: <@{user}> marked this diagnosis correct. Thanks!"
    else:
        note = (
            f":x: <@{user}> marked this diagnosis wrong. Reply in the thread with what it was; "
            "I keep it with the investigation."
        )
    kept = [b for b in blocks if b.get("block_id") != FEEDBACK_BLOCK]
    return [*kept, {**_context(note), "block_id": FEEDBACK_BLOCK}]


@dataclass(frozen=True, slots=True)
class Finding:
    """An action taken before the run ended, for the summary of a stopped run."""

    description: str
    status: Literal["success", "error", "pending"]
    first_line: str = ""


def stopped_summary(
    findings: Sequence[Finding], *, steps: int, who: str = "", detail: str = "",
    has_diagnosis: bool = False,
) -> Message:
    """What was found before a stop: the actions taken and their first result line."""
    by = f" at <@{who}>'s request" if who else ""
    reason = f" ({_clean(detail)})" if detail and not who else ""
    head = f":octagonal_sign: *Stopped{by} after {steps} step{'s' if steps != 1 else ''}*{reason}."
    lines: list[str] = []
    for finding in findings[-15:]:
        mark = {"success": "•", "error": ":warning:", "pending": "…"}[finding.status]
        result = f": {_clean(clip(finding.first_line, 200))}" if finding.first_line else ""
        lines.append(f"{mark} {_clean(finding.description)}{result}")
    if not lines:
        lines.append("Nothing was looked at yet.")
    tail = (
        "My best diagnosis from that is above."
        if has_diagnosis
        else "No conclusion yet: there was not enough evidence for a diagnosis."
    )
    body = clip("*What I found so far*\n" + "\n".join(lines), MAX_SECTION)
    return Message(f"Stopped after {steps} steps", [_section(head), _section(body), _context(tail)])


def failure_message(message: str) -> Message:
    text = clip(_clean(message), 1500)
    return Message(
        f"I could not finish this investigation: {clean_line(message)}",
        [
            _section(f":x: *I could not finish this investigation.*\n{text}"),
            _context("Nothing was changed. Mention me again to retry once it is fixed."),
        ],
    )


def ended_message(reason: str, detail: str) -> Message:
    """A run the engine ended itself (max steps, timeout, budget, loop) without a diagnosis."""
    why = _clean(detail or reason)
    return Message(
        f"Ended without a diagnosis: {clean_line(detail or reason)}",
        [_section(f":hourglass: *Ended without a diagnosis*: {why}.")],
    )


def lessons_message(lessons: Sequence[str]) -> Message:
    """Lessons from past incidents that the engine brings to this one."""
    lines = "\n".join(f"• {clip(_clean(lesson), 300)}" for lesson in lessons[:8])
    return Message(
        f"Using {len(lessons)} lessons from past incidents",
        [_context(clip(f":books: *Lessons from past incidents I am applying*\n{lines}",
                       MAX_SECTION))],
    )


def reflection_message(attempt: int, problems: Sequence[str], text: str,
                       retrying: bool) -> Message:
    """Reflexion judged an attempt and found it wanting."""
    listed = "\n".join(f"• {clip(_clean(p), 300)}" for p in problems[:8])
    then = "Trying again with that in mind." if retrying else "Keeping the best answer I have."
    body = f":repeat: *Reflection on attempt {attempt}*\n{clip(_clean(text), 1500)}"
    if listed:
        body += f"\n{listed}"
    return Message(f"Reflection on attempt {attempt}",
                   [_section(clip(body, MAX_SECTION)), _context(then)])


def approval_request(approval_id: str, description: str, tool: str) -> Message:
    return Message(
        f"Approval needed: {clean_line(description)}",
        [
            _section(
                f":raised_hand: *Approval needed.* I want to run `{escape(tool)}`, which changes "
                f"something:\n>{_clean(description)}"
            ),
            {
                "type": "actions",
                "block_id": "triage_approval",
                "elements": [
                    _button("Approve", APPROVE_ACTION, approval_id, "primary"),
                    _button("Deny", DENY_ACTION, approval_id, "danger"),
                ],
            },
        ],
    )


def approval_decided(description: str, approved: bool, user: str) -> Message:
    verdict = "approved" if approved else "denied"
    icon = ":white_check_mark:" if approved else ":no_entry_sign:"
    by = f"<@{user}>" if user else "nobody in time"
    return Message(
        f"{verdict}: {clean_line(description)}",
        [_section(f"{icon} *{verdict.capitalize()}* by {by}:\n>{_clean(description)}")],
    )


def help_message() -> str:
    return (
        "Tell me what is wrong and I will investigate in a thread, for example: "
        "`@Triage checkout in prod keeps restarting, customers get 502s`. "
        "While I work, reply in the thread to steer me (\"stay out of kube-system\") or say "
        "\"stop\"."
    )


def refusal_channel(allowed: Sequence[str]) -> str:
    where = ", ".join(f"<#{c}>" for c in sorted(allowed)[:10])
    return (
        f"Sorry, I only investigate in {where}. Ask there, or ask an admin to add this "
        "channel to TRIAGE_ALLOWED_CHANNELS."
    )


def refusal_user(user: str) -> str:
    return (
        f"Sorry <@{user}>, starting investigations and steering them is limited to the "
        "on-call team here. Ask someone on it, or ask an admin to add you to "
        "TRIAGE_ALLOWED_USERS."
    )


def ended_already() -> str:
    return (
        "This investigation has ended. I kept your reply as feedback; mention me in the "
        "channel to start a new one."
    )
