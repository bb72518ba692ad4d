"""What the mention, message and command listeners share: who may act, and what a message
in a thread means (start, steer, or feedback)."""

from __future__ import annotations

import logging
import re
from typing import Any

from slack_sdk.errors import SlackApiError

from bot import render
from bot.feedback import Feedback, InvestigationRecord
from bot.listeners.forward import forward, in_arrival_order, running_elsewhere
from bot.services import Services
from engines.reflexion import rejection_note
from engines.steering.corrections import is_confirmation, is_correction

log = logging.getLogger(__name__)

# Subtypes that are a human writing; edits, deletions, joins and bot posts are not.
HUMAN_SUBTYPES = frozenset({None, "file_share", "thread_broadcast"})
def strip_mention(text: str, bot_user_id: str | None) -> str:
    """The text without the bot's own mention (`<@U123>` or `<@U123|triage>`)."""
    if bot_user_id:
        text = re.sub(rf"<@{re.escape(bot_user_id)}(\|[^>]*)?>", " ", text)
    return " ".join(text.split())


def from_human(event: dict[str, Any]) -> bool:
    """Other bots' messages (and the bot's own) are never taken as instructions."""
    return (
        event.get("subtype") in HUMAN_SUBTYPES
        and not event.get("bot_id")
        and not event.get("bot_profile")
        and isinstance(event.get("user"), str)
    )


def tell(services: Services, channel: str, user: str, text: str,
         thread_ts: str | None = None) -> None:
    """An ephemeral message only `user` sees, sent in the background."""

    async def send() -> None:
        arguments: dict[str, Any] = {"channel": channel, "user": user, "text": text}
        if thread_ts:
            arguments["thread_ts"] = thread_ts
        try:
            await services.client.chat_postEphemeral(**arguments)
        except SlackApiError as exc:
            log.warning("could not tell %s in %s: %s", user, channel, exc.response.get("error"))

    services.background.spawn(send(), name="ephemeral")


async def allowed(services: Services, channel: str, user: str,
                  thread_ts: str | None = None) -> bool:
    """Check access; refuse politely (ephemeral) when not allowed."""
    decided = services.access.allowed_now(user, channel)
    if decided:
        return True
    refusal = await services.access.refusal(user, channel)
    if refusal is None:
        return True
    log.info("refused %s in %s", user, channel)
    tell(services, channel, user, refusal, thread_ts)
    return False


async def on_message(
    services: Services, *, channel: str, user: str, text: str, ts: str,
    thread_ts: str | None, may_start: bool, mentioned: bool,
) -> None:
    """One human message for the bot: steer a running investigation in its thread, keep it as
    feedback on an ended one, or (when `may_start`) start a new investigation."""
    investigations = services.investigations
    running = investigations.active(channel, thread_ts)
    if running is None and thread_ts and await _forwarded(services, channel, user, text, ts,
                                                          thread_ts):
        return
    if running is None and thread_ts and await _kept_as_feedback(
        services, channel, user, text, ts, thread_ts, mentioned=mentioned
    ):
        return
    steering = running is not None or investigations.active(channel, thread_ts) is not None
    if not steering and not may_start:
        return
    if not text:
        if not steering:
            tell(services, channel, user, render.help_message(), thread_ts)
        return
    if not await allowed(services, channel, user, thread_ts):
        return
    running = investigations.active(channel, thread_ts or ts)  # it may have started or ended
    if running is not None:
        investigations.steer(running, text, user, ts)
    elif steering:  # it ended while access was checked: the reply is feedback now
        await _kept_as_feedback(services, channel, user, text, ts, thread_ts or ts,
                                mentioned=mentioned)
    else:
        # Claimed in the store (one start per message across replicas), then started or
        # queued within the limits (bot/investigations/admission.py).
        await investigations.admission.mention(channel=channel, thread_ts=thread_ts or ts,
                                               text=text, user=user, ts=ts)


async def _forwarded(services: Services, channel: str, user: str, text: str, ts: str,
                     thread_ts: str) -> bool:
    """A reply in the thread of an investigation another replica runs: left for its owner,
    once access is checked here, in the order the replies arrived. False when no other
    replica runs it (it ended meanwhile)."""
    async with in_arrival_order(channel, thread_ts):
        record = await running_elsewhere(services, channel, thread_ts)
        if record is None:
            return False
        if not text or not await allowed(services, channel, user, thread_ts):
            return True
        here = services.investigations.active(channel, thread_ts)
        if here is not None:  # taken over by this replica meanwhile
            services.investigations.steer(here, text, user, ts)
            return True
        return await forward(services, record, "reply", {
            "channel": channel, "thread_ts": thread_ts, "user": user, "text": text,
            "reply": ts})


async def _kept_as_feedback(
    services: Services, channel: str, user: str, text: str, ts: str, thread_ts: str, *,
    mentioned: bool,
) -> bool:
    """A message in the thread of an ended investigation is feedback on it."""
    record = await services.store.find_by_thread(channel, thread_ts)
    if record is None or services.investigations.active(channel, thread_ts) is not None:
        return False
    await services.store.add_feedback(Feedback(record.id, user, "reply", text))
    react(services, channel, ts, "memo")
    if is_correction(text) and record.outcome != "running":
        await correct(services, record, text, user)
        return True
    if is_confirmation(text) and record.outcome == "done" and record.diagnosis is not None \
            and await allowed(services, channel, user, thread_ts):
        # "right": the same as ✅, Reflexion's reflections on it become lessons.
        await services.investigations.lessons.confirmed(record.id, record.text,
                                                        record.diagnosis, user)
        react(services, channel, ts, "white_check_mark")
        return True
    if mentioned:
        tell(services, channel, user, render.ended_already(), thread_ts)
    return True


async def correct(services: Services, record: InvestigationRecord, text: str,
                  user: str) -> None:
    """A human said an ended investigation's answer is wrong: keep that as a lesson and
    investigate again in the same thread, the correction a constraint of the new attempt."""
    investigations = services.investigations
    if text:
        await investigations.learn_correction(record.id, record.text, text, record.diagnosis)
    if not record.thread_ts or investigations.active(record.channel, record.thread_ts):
        return
    if not await allowed(services, record.channel, user, record.thread_ts):
        return
    if investigations.active(record.channel, record.thread_ts) is not None:
        return
    note = rejection_note(record.diagnosis, [f"a human said: {text or 'wrong'}"])
    investigations.retry(record, text, user, note)


def react(services: Services, channel: str, ts: str, name: str) -> None:
    async def send() -> None:
        try:
            await services.client.reactions_add(channel=channel, timestamp=ts, name=name)
        except SlackApiError as exc:
            log.info("could not react in %s: %s", channel, exc.response.get("error"))

    services.background.spawn(send(), name="reaction")
