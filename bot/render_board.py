"""The hypothesis board: one message under the status message, edited in place, listing the
search engines' hypotheses (tot, got) with their state and score; each open one carries
*Rule out* and *Dig into*, which become constraints the engine obeys at its next step.

Kept apart from bot/render.py because the board is its own message with its own buttons,
and the button values are parsed back here (`parse_value`), next to where they are made.
A button's value carries the investigation's id and the hypothesis's id (or, for an id too
long for Slack's 2000 characters, a digest of it); the click handler looks the hypothesis
up in the reporter's latest board, so a stale button can never act on a guess.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from bot._blocks import MAX_BLOCKS, Block, Message, button, clean, context, fits, section
from engines.hypotheses import Hypothesis

RULE_OUT_ACTION = "board_rule_out"
DIG_INTO_ACTION = "board_dig_into"
MAX_VALUE = 2000  # Slack's limit on a button's value
MAX_SHOWN = 15  # two blocks each (the line, its buttons): well under Slack's 50
_SEP = "|"
_DIGEST = "#"
_MARK = {"open": ":grey_question:", "confirmed": ":white_check_mark:", "refuted": ":x:"}


def action_id(action: str, index: int) -> str:
    """Slack wants the action ids of one message unique: the row's index tells them apart
    (the listener matches the prefix)."""
    return f"{action}-{index}"


def digest(hypothesis_id: str) -> str:
    return hashlib.sha256(hypothesis_id.encode()).hexdigest()[:24]


def value_of(investigation_id: str, hypothesis_id: str) -> str:
    """What a board button carries: the investigation and the hypothesis, within Slack's
    limit (a digest of the hypothesis's id when the id itself does not fit)."""
    plain = f"{investigation_id}{_SEP}{hypothesis_id}"
    if len(plain) <= MAX_VALUE:
        return plain
    return f"{investigation_id[:MAX_VALUE - 30]}{_SEP}{_DIGEST}{digest(hypothesis_id)}"


def parse_value(value: str) -> tuple[str, str]:
    """(investigation id, hypothesis id or "#digest") of a board button; ("", "") when the
    value is not one of ours."""
    investigation_id, sep, hypothesis = value.partition(_SEP)
    if not sep or not investigation_id or not hypothesis:
        return "", ""
    return investigation_id, hypothesis


def find(board: Sequence[Hypothesis], key: str) -> Hypothesis | None:
    """The hypothesis a button names, in the latest board."""
    if key.startswith(_DIGEST):
        return next((h for h in board if digest(h.id) == key[1:]), None)
    return next((h for h in board if h.id == key), None)


def _line(h: Hypothesis) -> str:
    why = f" — {clean(h.refuted_by)}" if h.state == "refuted" and h.refuted_by else ""
    return f"{_MARK[h.state]} *{h.state}* `{h.score:.2f}` {clean(h.label)}{why}"


def board_message(investigation_id: str, hypotheses: Sequence[Hypothesis], step: int,
                  expanding: Sequence[str] = (), *, buttons: bool = True) -> Message:
    """The board as it stands after `step`: best first, buttons on the open ones (none
    once the run has ended: nothing would obey them)."""
    ranked = sorted(hypotheses, key=lambda h: ({"confirmed": 0, "open": 1, "refuted": 2}
                                               [h.state], -h.score, h.id))
    counts = {s: sum(h.state == s for h in ranked) for s in ("open", "confirmed", "refuted")}
    summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "none yet"
    text = f"Hypotheses (step {step}): {summary}"
    blocks: list[Block] = [section(f":mag: *Hypotheses* (step {step}): {summary}")]
    for index, h in enumerate(ranked[:MAX_SHOWN]):
        testing = " _(testing now)_" if h.id in expanding and h.state == "open" else ""
        blocks.append(section(_line(h) + testing))
        if h.state == "open" and buttons:
            value = value_of(investigation_id, h.id)
            blocks.append({"type": "actions", "elements": [
                button("Rule out", action_id(RULE_OUT_ACTION, index), value, "danger"),
                button("Dig into", action_id(DIG_INTO_ACTION, index), value)]})
    if len(ranked) > MAX_SHOWN:
        blocks.append(context(f"…and {len(ranked) - MAX_SHOWN} more with lower scores."))
    message = Message(text, blocks[:MAX_BLOCKS])
    if fits(message):
        return message
    # Too large for Slack (long names): the lines alone, without buttons; at worst one.
    bare = Message(text, [b for b in message.blocks if b["type"] != "actions"])
    if fits(bare):
        return bare
    lines = "\n".join(_line(h) for h in ranked[:MAX_SHOWN])
    return Message(text, [section(f":mag: *Hypotheses* (step {step}): {summary}\n{lines}")])

