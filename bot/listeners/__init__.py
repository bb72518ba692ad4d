"""Slack listeners: thin. Each validates what Slack sent, acks, and hands the work on.

Listeners ask slack-bolt for what they need by parameter name (`event`, `command`, `body`,
`ack`, `respond`, `context`) and receive the bot's services through `register`.
"""

from __future__ import annotations

from slack_bolt.app.async_app import AsyncApp

from bot.listeners import actions, board, commands, mentions, messages
from bot.services import Services


def register_all(app: AsyncApp, services: Services) -> None:
    for module in (mentions, messages, commands, actions, board):
        module.register(app, services)
