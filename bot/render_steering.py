"""What the bot says when humans steer: what it will enforce (with Undo), what it no longer
enforces, a question answered from the investigation's state, a reply it could not read.

Kept apart from bot/render.py (the steps and the diagnosis) because these messages answer a
human, one reply at a time, and carry the reply's id for Undo.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot._blocks import Message, button, clean, clip, context, human, section
from bot.render import Finding, clean_line

UNDO_ACTION = "undo_reply"


def _who(author: str) -> str:
    return f"<@{author}>" if author else "you"


def noted(summaries: Sequence[str], author: str, reply: str = "", *,
          updated: bool = False) -> Message:
    """Exactly what will be enforced from the next step on, with Undo for this reply."""
    verb = "Updated" if updated else "Noted"
    listed = "; ".join(summaries)
    lines = "\n".join(f"• {human(s)}" for s in summaries)
    blocks = [section(f":memo: *{verb}*, {_who(author)}: I will now\n{lines}")]
    if reply:
        blocks.append({"type": "actions", "elements": [
            button("Undo", UNDO_ACTION, reply)]})
    return Message(f"{verb}: {clean_line(listed)}", blocks)


def withdrawn(summaries: Sequence[str], author: str, why: str) -> Message:
    """Constraints that no longer hold, and why (undone, reply edited, reply deleted)."""
    listed = "; ".join(summaries) or "nothing was in force"
    return Message(f"Withdrawn ({why}): {clean_line(listed)}",
                   [section(f":leftwards_arrow_with_hook: *Withdrawn* ({why}, {_who(author)}): "
                            f"no longer {human(listed)}")])


def resumed(author: str) -> Message:
    return Message("Going on.", [section(f":arrow_forward: Going on, {_who(author)}.")])


def rewound(said: str, author: str) -> Message:
    """A rewind done: which step the investigation went back to and what it dropped (the
    dropped steps' messages stay in the thread, as the events stay in the store)."""
    return Message(said, [section(f":rewind: *{clean(said)}* ({_who(author)}). The "
                                  "steps after it above no longer count.")])


def paused(author: str) -> Message:
    return Message("Paused.", [section(f":double_vertical_bar: Paused by {_who(author)}: no "
                                       "further step until someone resumes.")])


def not_understood(author: str) -> Message:
    """A reply that looked like an instruction the bot could not type: it says so rather
    than guess, and shows phrasings it reads."""
    examples = ("`stay out of kube-system`, `focus on checkout`, `it's not the database`, "
                "`only the last 30 minutes`, `read-only`, `stop`")
    return Message("I did not take that as an instruction.",
                   [context(f"{_who(author)}: I did not take that as an instruction and carry "
                            f"on. I read replies such as {examples}.")])


def answer(question: str, *, step: int, findings: Sequence[Finding], thought: str,
           constraints: Sequence[str], leading: str = "") -> Message:
    """A question to the bot answered from what the investigation has done so far."""
    done = [f for f in findings if f.status != "pending"]
    checked = "\n".join(
        f"• {clean(f.description)}" + (" (failed)" if f.status == "error" else "")
        for f in done[-8:]) or "• nothing yet"
    parts = [f"> {clip(clean(' '.join(question.split())), 200)}",
             f":speech_balloon: *So far* (step {step}), I checked:\n{checked}"]
    if len(done) > 8:
        parts.append(f"…and {len(done) - 8} earlier checks.")
    if leading:
        parts.append(f"*Leading hypothesis:* {clean(leading)}")
    if thought:
        parts.append(f"*My latest reasoning:* {clip(clean(thought), 600)}")
    if constraints:
        parts.append("*Following your instructions:* " + "; ".join(constraints))
    text = f"So far (step {step}): {len(done)} checks"
    return Message(text, [section("\n".join(parts))])
