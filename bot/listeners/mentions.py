"""`app_mention`: someone wrote @Triage in a channel."""

from __future__ import annotations

from typing import Any

from slack_bolt.app.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext

from bot.listeners._common import from_human, on_message, strip_mention
from bot.services import Services


def register(app: AsyncApp, services: Services) -> None:
    @app.event("app_mention")
    async def on_mention(event: dict[str, Any], context: AsyncBoltContext) -> None:
        """A mention starts an investigation in a thread under it; in a thread that already
        has one it is a constraint, like any reply there."""
        channel = event.get("channel")
        if not from_human(event) or not isinstance(channel, str) or channel.startswith("D"):
            return  # direct messages arrive as `message.im`, once
        await on_message(
            services,
            channel=channel,
            user=event["user"],
            text=strip_mention(str(event.get("text", "")), context.bot_user_id),
            ts=str(event.get("ts", "")),
            thread_ts=event.get("thread_ts"),
            may_start=True,
            mentioned=True,
        )
