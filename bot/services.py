"""What the listeners share, in a module of its own.

The app registers the listeners and the listeners use the services: with `Services` in
bot/app.py the two imported each other. Here it depends on neither, so both import it.
"""

from __future__ import annotations

from dataclasses import dataclass

from slack_sdk.web.async_client import AsyncWebClient

from bot.access import AccessControl
from bot.background import Background
from bot.dedupe import EventDeduper
from bot.feedback import Store
from bot.investigations.registry import Investigations


@dataclass(eq=False)
class Services:
    """What listeners need, handed to them at registration."""

    client: AsyncWebClient
    investigations: Investigations
    access: AccessControl
    store: Store
    background: Background
    deduper: EventDeduper
