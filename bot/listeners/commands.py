"""`/triage TEXT`: start an investigation whose thread begins with the bot's status."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.app.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.respond.async_respond import AsyncRespond

from bot import render
from bot.services import Services

log = logging.getLogger(__name__)


def register(app: AsyncApp, services: Services) -> None:
    @app.command("/triage")
    async def on_triage(ack: AsyncAck, command: dict[str, Any], respond: AsyncRespond) -> None:
        """Slash commands must be answered within 3 s: refusals and help go back in the ack
        itself (ephemeral), everything else after it."""
        text = " ".join(str(command.get("text", "")).split())
        user, channel = command["user_id"], command["channel_id"]
        if not text:
            await ack(text=render.help_message(), response_type="ephemeral")
            return
        decided = services.access.allowed_now(user, channel)
        if decided is False:
            refusal = await services.access.refusal(user, channel)
            await ack(text=refusal or render.refusal_user(user), response_type="ephemeral")
            return
        await ack()
        if decided is None:
            refusal = await services.access.refusal(user, channel)
            if refusal is not None:
                await respond(text=refusal, response_type="ephemeral")
                return

        def cannot_post(error: str) -> None:
            message = (
                f"I cannot post in this conversation ({error}). Invite me with "
                "`/invite @Triage` and try again."
            )
            services.background.spawn(respond(text=message, response_type="ephemeral"),
                                      name="respond")

        services.investigations.start(
            channel=channel, thread_ts=None, text=text, user=user, on_dead=cannot_post
        )
