"""Buttons of the hypothesis board: *Rule out* and *Dig into* on an open hypothesis.

A click is a typed instruction, the same as a reply in the thread ("it's not the database",
"dig into checkout"): it goes into the investigation's inbox as a constraint the engine
obeys from its next step on, and is confirmed in the thread with Undo, like a reply. The
hypothesis is looked up in the reporter's latest board, so a click on a stale board (the
hypothesis meanwhile refuted or confirmed) is answered rather than acted on.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from slack_bolt.app.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck

from bot import render_board
from bot.listeners._common import allowed, tell
from bot.services import Services
from engines.constraints import Constraint, ConstraintKind
from engines.hypotheses import Hypothesis
from engines.steering import Reading

log = logging.getLogger(__name__)


def rule_out(h: Hypothesis, user: str, reply: str) -> Constraint:
    """Rule out this cause: its category of fault in its culprit, not every fault there."""
    return Constraint("rule_out", f"Rule out: {h.label}", f"{h.category}:{h.culprit.name}",
                      author=user, reply=reply)


def dig_into(h: Hypothesis, user: str, reply: str) -> Constraint:
    """Narrow the focus to the culprit: its namespace when the culprit is one."""
    kind: ConstraintKind = "focus_namespace" if h.culprit.kind.lower() == "namespace" \
        else "focus_workload"
    return Constraint(kind, f"Dig into: {h.label}", h.culprit.name, author=user, reply=reply)


def register(app: AsyncApp, services: Services) -> None:
    pattern = re.compile(
        f"^({render_board.RULE_OUT_ACTION}|{render_board.DIG_INTO_ACTION})-\\d+$")

    @app.action(pattern)
    async def on_board(ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        await ack()
        message = body.get("message") or {}
        user = body["user"]["id"]
        channel = (body.get("channel") or {}).get("id", "")
        thread = message.get("thread_ts") or message.get("ts")
        if not await allowed(services, channel, user, thread):
            return
        investigation_id, key = render_board.parse_value(str(action.get("value", "")))
        if not investigation_id:
            log.warning("a board button sent an unknown value %r", action.get("value"))
            return
        investigation = services.investigations.get(investigation_id)
        if investigation is None:
            tell(services, channel, user, "That investigation has already ended.", thread)
            return
        hypothesis = render_board.find(investigation.reporter.hypotheses, key)
        if hypothesis is None:
            tell(services, channel, user, "That hypothesis is no longer on the board.", thread)
            return
        if hypothesis.state != "open":
            tell(services, channel, user,
                 f"That hypothesis is already {hypothesis.state}.", thread)
            return
        # One reply id per click, so Undo withdraws exactly what this click asked.
        reply = f"board-{action.get('action_ts') or action['action_id']}"
        ruling_out = str(action["action_id"]).startswith(render_board.RULE_OUT_ACTION)
        constraint = (rule_out if ruling_out else dig_into)(hypothesis, user, reply)
        services.investigations.steering.apply(
            investigation, Reading((constraint,)), constraint.text, user, reply)
