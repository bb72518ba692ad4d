"""`message.*`: direct messages start investigations; replies in threads steer them."""

from __future__ import annotations

from typing import Any

from slack_bolt.app.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext

from bot.listeners._common import from_human, on_message, strip_mention
from bot.services import Services


def register(app: AsyncApp, services: Services) -> None:
    @app.event("message")
    async def on_channel_message(event: dict[str, Any], context: AsyncBoltContext) -> None:
        """Only thread replies matter in channels; a message that mentions the bot is left
        to `app_mention`, which Slack sends for the same message."""
        channel = event.get("channel")
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
