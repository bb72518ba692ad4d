"""Buttons of the hypothesis board: *Rule out* and *Dig into* on an open hypothesis.

A click is a typed instruction, the same as a reply in the thread ("it's not the database",
"dig into checkout"): it goes into the investigation's inbox as a constraint the engine
obeys from its next step on, and is confirmed in the thread with Undo, like a reply. The
hypothesis is looked up in the reporter's latest board, so a click on a stale board (the
hypothesis meanwhile refuted or confirmed) is answered rather than acted on. Only the replica
running the investigation has that board: another one leaves the click in the store's inbox
for it (bot/listeners/forward.py).
"""

from __future__ import annotations

import logging
import re
from typing import Any

from slack_bolt.app.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck

from bot import render_board
from bot.investigations.board_clicks import board_constraint
from bot.listeners._common import allowed, tell
from bot.listeners.forward import forward
from bot.services import Services
from engines.steering import Reading

log = logging.getLogger(__name__)


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
        # One reply id per click, so Undo withdraws exactly what this click asked.
        reply = f"board-{action.get('action_ts') or action['action_id']}"
        ruling_out = str(action["action_id"]).startswith(render_board.RULE_OUT_ACTION)
        investigation = services.investigations.get(investigation_id)
        if investigation is None:
            if not await forward(services, investigation_id, "board", {
                    "channel": channel, "thread_ts": thread, "user": user, "key": key,
                    "ruling_out": ruling_out, "reply": reply}):
                tell(services, channel, user, "That investigation has already ended.", thread)
            return
        constraint = board_constraint(investigation, key, ruling_out, user, reply)
        if isinstance(constraint, str):
            tell(services, channel, user, constraint, thread)
            return
        services.investigations.steering.apply(
            investigation, Reading((constraint,)), constraint.text, user, reply)
