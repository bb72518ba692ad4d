"""Pure functions from what an investigation did to Slack messages (Block Kit).

Nothing here talks to Slack or reads a clock, so every message can be tested as data. Every
piece of text that came from a tool, a model or a human goes through `clean` or `human`
(cut, credentials masked, mrkdwn control characters escaped), and every message respects
Slack's limits (bot._blocks): 50 blocks, 3000 characters a section, about 12 KB in all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from bot._blocks import (
    MAX_BLOCKS,
    MAX_HEADER,
    MAX_MESSAGE_BYTES,
    MAX_SECTION,
    Block,
    Message,
    bounded,
    button,
    clean,
    clip,
    context,
    elapsed,
    escape,
    fits,
    human,
    preview,
    section,
)
from bot.render_steps import REWIND_ACTION, StepView, step_message
from engines.diagnosis import Diagnosis, Evidence

# Re-exported: the steps' names live in bot.render_steps.
__all__ = [
    "MAX_BLOCKS", "MAX_HEADER", "MAX_MESSAGE_BYTES", "MAX_SECTION", "REWIND_ACTION", "Block",
    "Message", "StepView", "bounded", "clip", "elapsed", "escape", "fits", "preview",
    "step_message",
]

State = Literal["running", "waiting for approval", "done", "stopped", "failed"]

# action_ids the listeners route on; the value is the investigation (or approval) id.
STOP_ACTION = "triage_stop"
PAUSE_ACTION = "triage_pause"
RESUME_ACTION = "triage_resume"
CORRECT_ACTION = "triage_correct"
WRONG_ACTION = "triage_wrong"
APPROVE_ACTION = "triage_approve"
DENY_ACTION = "triage_deny"
REWIND_MENU_ACTION = "triage_rewind_menu"  # on the status message: pick the step
REWIND_CHOICES = 25  # the latest steps offered in the status message's menu
FEEDBACK_BLOCK = "triage_feedback"
THUMBS_BLOCK = "triage_thumbs"  # 👍 / 👎 (bot.render_stream)

_STATE_ICON: dict[State, str] = {
    "running": ":hourglass_flowing_sand:",
    "waiting for approval": ":raised_hand:",
    "done": ":white_check_mark:",
    "stopped": ":octagonal_sign:",
    "failed": ":x:",
}


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
    paused: bool = False  # a pause in force: the engine takes no step until Resume


def status_message(view: StatusView) -> Message:
    icon = _STATE_ICON[view.state]
    incident = clip(human(view.incident.strip()), 1500)
    who = f" · asked by <@{view.requested_by}>" if view.requested_by else ""
    steps = f"step {view.step} of {view.max_steps}" if view.max_steps else f"step {view.step}"
    shown = "paused" if view.paused and view.state == "running" else view.state
    icon = ":double_vertical_bar:" if shown == "paused" else icon
    facts = (
        f"{icon} *{shown}* · {steps} · {elapsed(view.elapsed_seconds)} elapsed · "
        f"model `{escape(view.model)}`{who}"
    )
    blocks = [section(f":mag: *Investigating:* {incident}"), context(facts)]
    if view.detail:
        blocks.append(context(clip(clean(view.detail), 500)))
    if view.state in ("running", "waiting for approval"):
        blocks.append(
            {
                "type": "actions",
                "block_id": "triage_status",
                "elements": [
                    button("Resume", RESUME_ACTION, view.investigation_id, "primary")
                    if view.paused else button("Pause", PAUSE_ACTION, view.investigation_id),
                    button("Stop", STOP_ACTION, view.investigation_id, "danger"),
                    *_rewind_menu(view.step),
                ],
            }
        )
    text = f"Investigating: {clip(clean_line(view.incident), 200)} ({shown}, {steps})"
    return Message(text, blocks)


def _rewind_menu(step: int) -> list[Block]:
    """"Rewind to…" with the steps so far: the Rewind a streamed thread has no step
    messages to carry (the engine keeps to the steps already complete)."""
    if step < 1:
        return []
    first = max(1, step - REWIND_CHOICES + 1)
    options = [{"text": {"type": "plain_text", "text": f"Step {n}"}, "value": str(n)}
               for n in range(step, first - 1, -1)]
    return [{"type": "static_select", "action_id": REWIND_MENU_ACTION, "options": options,
             "placeholder": {"type": "plain_text", "text": "Rewind to…"}}]


# --- replies, diagnosis, endings ----------------------------------------------------------


def noted(summary: str, author: str) -> Message:
    who = f"<@{author}>" if author else "you"
    text = f"Noted: {clean_line(summary)}"
    return Message(text, [section(f":memo: *Noted*, {who}: {human(summary)}")])


def clean_line(text: str) -> str:
    """One line of untrusted text for a notification's fallback `text`."""
    return clip(clean(text).replace("\n", " "), 300)


def diagnosis_message(
    investigation_id: str, diagnosis: Diagnosis, *, final_turn: bool = False
) -> Message:
    """Category, culprit, summary, evidence, fix and confidence, with Correct / Wrong."""
    title = "Best diagnosis so far" if final_turn else "Diagnosis"
    culprit = clean(str(diagnosis.culprit))
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
        section(clip(clean(diagnosis.summary.strip()), MAX_SECTION)),
    ]
    if diagnosis.evidence:
        lines = [evidence_line(e) for e in diagnosis.evidence]
        blocks.append(section(clip("*Evidence*\n" + "\n".join(lines), MAX_SECTION)))
    if diagnosis.fix.strip():
        blocks.append(section(f"*Fix*\n{clip(clean(diagnosis.fix.strip()), 2900)}"))
    blocks.append(
        {
            "type": "actions",
            "block_id": FEEDBACK_BLOCK,
            "elements": [
                button("Correct", CORRECT_ACTION, investigation_id, "primary"),
                button("Wrong", WRONG_ACTION, investigation_id),
            ],
        }
    )
    text = f"{title}: {diagnosis.category} in {clean_line(str(diagnosis.culprit))}"
    return Message(text, blocks)


def evidence_line(item: Evidence) -> str:
    """A quote as it was printed, in code (a backtick in it would end the span early), and
    where it comes from: its tool and step, or a warning that the tool's output lacks it."""
    quote = clip(clean(item.quote), 400).replace("`", "ˋ")
    shown = f"```{quote}```" if "\n" in quote else f"`{quote}`"
    warning = ":warning: " if item.found is False else ""
    return f"• {shown} _({warning}{escape(item.origin)})_"


def with_verdict(blocks: Sequence[Block], verdict: Literal["correct", "wrong"],
                 user: str) -> list[Block]:
    """The diagnosis message once someone judged it: the buttons become who said what."""
    if verdict == "correct":
        note = f":white_check_mark: <@{user}> marked this diagnosis correct. Thanks!"
    else:
        note = (
            f":x: <@{user}> marked this diagnosis wrong. I am looking again; reply in the "
            "thread with what it was and I will take it into account and remember it."
        )
    kept = [b for b in blocks if b.get("block_id") not in (FEEDBACK_BLOCK, THUMBS_BLOCK)]
    return [*kept, {**context(note), "block_id": FEEDBACK_BLOCK}]


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
    reason = f" ({clean(detail)})" if detail and not who else ""
    head = f":octagonal_sign: *Stopped{by} after {steps} step{'s' if steps != 1 else ''}*{reason}."
    lines: list[str] = []
    for finding in findings[-15:]:
        mark = {"success": "•", "error": ":warning:", "pending": "…"}[finding.status]
        result = f": {clean(clip(finding.first_line, 200))}" if finding.first_line else ""
        lines.append(f"{mark} {clean(finding.description)}{result}")
    if not lines:
        lines.append("Nothing was looked at yet.")
    tail = (
        "My best diagnosis from that is above."
        if has_diagnosis
        else "No conclusion yet: there was not enough evidence for a diagnosis."
    )
    body = clip("*What I found so far*\n" + "\n".join(lines), MAX_SECTION)
    return Message(f"Stopped after {steps} steps", [section(head), section(body), context(tail)])


def failure_message(message: str) -> Message:
    text = clip(clean(message), 1500)
    return Message(
        f"I could not finish this investigation: {clean_line(message)}",
        [
            section(f":x: *I could not finish this investigation.*\n{text}"),
            context("Nothing was changed. Mention me again to retry once it is fixed."),
        ],
    )


def ended_message(reason: str, detail: str) -> Message:
    """A run the engine ended itself (max steps, timeout, budget, loop) without a diagnosis."""
    why = clean(detail or reason)
    return Message(
        f"Ended without a diagnosis: {clean_line(detail or reason)}",
        [section(f":hourglass: *Ended without a diagnosis*: {why}.")],
    )


def lessons_message(lessons: Sequence[str], ids: Sequence[int | None] = ()) -> Message:
    """Lessons from past incidents that the engine brings to this one, by their store ids
    when known (`triage lessons show ID`): all confirmed by a human."""
    lines = "\n".join(f"• {clip(clean(lesson), 300)}" for lesson in lessons[:8])
    which = ", ".join(f"#{i}" for i in ids if i is not None)
    named = f" ({which}, confirmed by humans; `triage lessons show ID`)" if which else ""
    return Message(
        f"Using {len(lessons)} lessons from past incidents{named}",
        [context(clip(f":books: *Lessons from past incidents I am applying*{named}\n{lines}",
                       MAX_SECTION))],
    )


def engine_message(engine: str, reason: str, limits: str) -> Message:
    """The router's choice of engine and limits for this incident, and why."""
    return Message(f"Using the {engine} engine: {clean_line(reason)}",
                   [context(clip(f":compass: *{engine}* engine: {clean(reason)} ({limits})",
                                 MAX_SECTION))])


def reflection_message(attempt: int, problems: Sequence[str], text: str,
                       retrying: bool) -> Message:
    """Reflexion judged an attempt and found it wanting."""
    listed = "\n".join(f"• {clip(clean(p), 300)}" for p in problems[:8])
    then = "Trying again with that in mind." if retrying else "Keeping the best answer I have."
    body = f":repeat: *Reflection on attempt {attempt}*\n{clip(clean(text), 1500)}"
    if listed:
        body += f"\n{listed}"
    return Message(f"Reflection on attempt {attempt}",
                   [section(clip(body, MAX_SECTION)), context(then)])


def resumed_message(*, by_another_replica: bool = False) -> Message:
    """The bot restarted in the middle of this investigation and picks it up again, or
    (`by_another_replica`) the replica running it died and another one took it over."""
    title = "Resumed by another replica" if by_another_replica else "Resumed after a restart"
    return Message(
        title,
        [section(f":arrows_counterclockwise: *{title}.* I am carrying on from "
                 "the last step I had recorded; nothing already done is repeated.")],
    )


def retry_message(correction: str, author: str) -> Message:
    """A human said the diagnosis was wrong: a new attempt starts with that as a constraint."""
    who = f"<@{author}>" if author else "someone"
    said = human(correction.strip()) if correction.strip() else "_marked it wrong_"
    return Message(
        f"Trying again: {clean_line(correction or 'marked wrong')}",
        [section(f":repeat: *Trying again* with {who}'s correction as a constraint: {said}"),
         context("I keep the correction as a lesson for similar incidents.")],
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
