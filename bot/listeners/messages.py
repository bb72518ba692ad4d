"""`message.*`: direct messages start investigations; replies in threads steer them."""

from __future__ import annotations

from typing import Any

from slack_bolt.app.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext

from bot.listeners._common import allowed, from_human, on_message, strip_mention
from bot.listeners.forward import forward, running_elsewhere
from bot.services import Services

CHANGED, DELETED = "message_changed", "message_deleted"


async def _reply_changed(services: Services, event: dict[str, Any], bot: str | None) -> None:
    """An edited or deleted reply in a running investigation's thread: its constraints are
    read again or withdrawn. Edits of other messages (and of bots' messages) change nothing."""
    channel = event.get("channel")
    before = event.get("previous_message") or {}
    after = event.get("message") or {}
    thread_ts = after.get("thread_ts") or before.get("thread_ts")
    user = after.get("user") or before.get("user")
    reply = str(event.get("deleted_ts") or after.get("ts") or before.get("ts") or "")
    if not isinstance(channel, str) or not isinstance(user, str) or not thread_ts or \
            reply == thread_ts or after.get("bot_id") or before.get("bot_id"):
        return
    deleted = event.get("subtype") == DELETED or after.get("subtype") == "tombstone"
    text = strip_mention(str(after.get("text", "")), bot)
    if not deleted and text == strip_mention(str(before.get("text", "")), bot):
        return
    investigation = services.investigations.active(channel, thread_ts)
    elsewhere = None if investigation is not None else \
        await running_elsewhere(services, channel, thread_ts)
    if investigation is None and elsewhere is None:
        return
    if not await allowed(services, channel, user, thread_ts):
        return
    where = {"channel": channel, "thread_ts": thread_ts, "user": user, "reply": reply}
    if investigation is None:  # another replica runs it: the change is for its owner
        await forward(services, elsewhere, "withdraw" if deleted else "edit",
                      where | ({"why": "reply deleted"} if deleted else {"text": text}))
    elif deleted:
        services.investigations.withdraw(investigation, reply, user, "reply deleted")
    else:
        services.investigations.edited(investigation, text, user, reply)


def register(app: AsyncApp, services: Services) -> None:
    @app.event("message")
    async def on_channel_message(event: dict[str, Any], context: AsyncBoltContext) -> None:
        """Only thread replies matter in channels; a message that mentions the bot is left
        to `app_mention`, which Slack sends for the same message."""
        channel = event.get("channel")
        if event.get("subtype") in (CHANGED, DELETED):
            await _reply_changed(services, event, context.bot_user_id)
            return
        if not from_human(event) or not isinstance(channel, str):
            return
        text = str(event.get("text", ""))
        direct = event.get("channel_type") == "im" or channel.startswith("D")
        bot = context.bot_user_id
        if not direct and bot and f"<@{bot}" in text:
            return
        thread_ts = event.get("thread_ts")
        if not direct and not thread_ts:
            return  # ordinary channel chatter
        await on_message(
            services,
            channel=channel,
            user=event["user"],
            text=strip_mention(text, bot),
            ts=str(event.get("ts", "")),
            thread_ts=thread_ts,
            may_start=direct,
            mentioned=False,
        )
