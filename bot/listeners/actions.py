"""Buttons: Stop, Pause / Resume, Rewind on a step, Correct / Wrong (and 👍 / 👎) on a
diagnosis, Approve / Deny a tool that changes things. A click that reaches a replica not
running the investigation is left in the store for the one that does (listeners.forward)."""

from __future__ import annotations

import logging
import re
from typing import Any, Literal

from slack_bolt.app.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_sdk.errors import SlackApiError

from bot import render, render_steering, render_stream
from bot.feedback import Feedback
from bot.listeners._common import allowed, correct, tell
from bot.listeners.forward import forward, running_elsewhere
from bot.services import Services

log = logging.getLogger(__name__)


def _where(body: dict[str, Any]) -> tuple[str, str, str | None]:
    """(user, channel, thread) of a click."""
    message = body.get("message") or {}
    channel = (body.get("channel") or {}).get("id", "")
    return body["user"]["id"], channel, message.get("thread_ts") or message.get("ts")


def register(app: AsyncApp, services: Services) -> None:
    @app.action(render.STOP_ACTION)
    async def on_stop(ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        await ack()
        user, channel, thread = _where(body)
        if not await allowed(services, channel, user, thread):
            return
        investigation_id = str(action.get("value", ""))
        investigation = services.investigations.get(investigation_id)
        if investigation is not None:
            services.investigations.stop(investigation, user)
        elif not await forward(services, investigation_id, "stop",
                               {"channel": channel, "thread_ts": thread, "user": user}):
            tell(services, channel, user, "That investigation has already ended.", thread)

    @app.action(re.compile(f"^({render.PAUSE_ACTION}|{render.RESUME_ACTION})$"))
    async def on_pause(ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        """Pause holds the engine before its next step (no model call) until Resume."""
        await ack()
        user, channel, thread = _where(body)
        if not await allowed(services, channel, user, thread):
            return
        investigation_id = str(action.get("value", ""))
        investigation = services.investigations.get(investigation_id)
        resuming = action["action_id"] == render.RESUME_ACTION
        # one reply id per click, so Undo (or Resume) lifts exactly this pause
        reply = f"pause-{action.get('action_ts') or user}"
        if investigation is None:
            if not await forward(services, investigation_id, "resume" if resuming else "pause",
                                 {"channel": channel, "thread_ts": thread, "user": user,
                                  "reply": reply}):
                tell(services, channel, user, "That investigation has already ended.", thread)
            return
        steering = services.investigations.steering
        if resuming:
            steering.resume(investigation, user)
        else:
            steering.pause(investigation, user, reply)

    @app.action(re.compile(f"^({render.REWIND_ACTION}|{render.REWIND_MENU_ACTION})$"))
    async def on_rewind(ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        """Rewind on a step's message, or a step picked in the status message's menu: back
        to the end of that step, paused for a word."""
        await ack()
        user, channel, thread = _where(body)
        if not await allowed(services, channel, user, thread):
            return
        picked = action.get("selected_option") or {}
        try:
            step = int(str(picked.get("value") or action.get("value", "")))
        except ValueError:
            log.warning("a Rewind button sent an unknown value %r", action.get("value"))
            return
        reply = f"rewind-{action.get('action_ts') or user}"
        investigation = services.investigations.active(channel, thread)
        if investigation is None:
            if not await forward(services, await running_elsewhere(services, channel, thread),
                                 "rewind", {"channel": channel, "thread_ts": thread,
                                            "user": user, "reply": reply, "step": step}):
                tell(services, channel, user, "That investigation has already ended.", thread)
            return
        services.investigations.steering.rewind_to(investigation, user, step, reply)

    @app.action(render_steering.UNDO_ACTION)
    async def on_undo(ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        """Undo on a "Noted" message: the constraints of that reply no longer hold."""
        await ack()
        user, channel, thread = _where(body)
        if not await allowed(services, channel, user, thread):
            return
        investigation = services.investigations.active(channel, thread)
        reply = str(action.get("value", ""))
        if investigation is None:
            if not await forward(services, await running_elsewhere(services, channel, thread),
                                 "withdraw", {"channel": channel, "thread_ts": thread,
                                              "user": user, "reply": reply, "why": "undone"}):
                tell(services, channel, user, "That investigation has already ended.", thread)
            return
        if not services.investigations.withdraw(investigation, reply, user, "undone"):
            tell(services, channel, user, "That instruction was already withdrawn.", thread)

    @app.action(re.compile(f"^({render.CORRECT_ACTION}|{render.WRONG_ACTION})$"))
    async def on_verdict(ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        """Keep the verdict with the investigation and show it in place of the buttons."""
        await ack()
        verdict: Literal["correct", "wrong"] = (
            "correct" if action["action_id"] == render.CORRECT_ACTION else "wrong"
        )
        await _judged(services, body, str(action.get("value", "")), verdict)

    @app.action(render_stream.FEEDBACK_ACTION)
    async def on_thumbs(ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        """👍 / 👎 (feedback_buttons): the same verdicts as Correct / Wrong."""
        await ack()
        side, _, investigation_id = str(action.get("value", "")).partition(":")
        if side not in (render_stream.POSITIVE, render_stream.NEGATIVE) or not investigation_id:
            log.warning("feedback buttons sent an unknown value %r", action.get("value"))
            return
        await _judged(services, body, investigation_id,
                      "correct" if side == render_stream.POSITIVE else "wrong")

    @app.action(re.compile(f"^({render.APPROVE_ACTION}|{render.DENY_ACTION})$"))
    async def on_approval(ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
        await ack()
        user, channel, thread = _where(body)
        if not await allowed(services, channel, user, thread):
            return
        approved = action["action_id"] == render.APPROVE_ACTION
        approval_id = str(action.get("value", ""))
        if services.investigations.decide(approval_id, approved, user):
            return
        investigation_id = approval_id.rpartition(":")[0]  # approvals.py numbers them so
        if services.investigations.get(investigation_id) is None and await forward(
                services, investigation_id or None, "decide",
                {"channel": channel, "thread_ts": thread, "user": user,
                 "approval_id": approval_id, "approved": approved}):
            return
        tell(services, channel, user, "That request was already answered.", thread)


async def _judged(services: Services, body: dict[str, Any], investigation_id: str,
                  verdict: Literal["correct", "wrong"]) -> None:
    """A verdict on a diagnosis: kept with the investigation, shown in place of the buttons;
    "correct" keeps the confirmed diagnosis as a lesson, "wrong" opens the correction path
    (a new attempt, and the reply saying what it was becomes the lesson)."""
    user, channel, thread = _where(body)
    if not await allowed(services, channel, user, thread):
        return
    record = await services.store.get(investigation_id)
    if record is None:
        tell(services, channel, user, "I no longer know that investigation.", thread)
        return
    await services.store.add_feedback(Feedback(investigation_id, user, "verdict", verdict))
    if verdict == "correct" and record.diagnosis is not None:
        await services.investigations.lessons.confirmed(
            investigation_id, record.text, record.diagnosis, user)
    message = body.get("message") or {}
    if message.get("ts"):
        try:
            await services.client.chat_update(
                channel=channel, ts=message["ts"],
                text=str(message.get("text", "Diagnosis")),
                blocks=render.with_verdict(message.get("blocks") or [], verdict, user),
            )
        except SlackApiError as exc:
            log.warning("could not show the verdict: %s", exc.response.get("error"))
    if verdict == "wrong":
        record = await services.store.get(investigation_id)  # it may have ended meanwhile
        if record is not None and record.outcome != "running":
            await correct(services, record, "", user)
