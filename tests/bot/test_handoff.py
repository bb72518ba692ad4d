"""Events are acknowledged at once and handed to the app once a burst has been answered."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import pytest
from slack_bolt.app.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.handoff import Handoff
from bot.server import HttpServer
from tests.fakes.slack_api import SIGNING_SECRET, TOKEN, FakeSlack, SlackSender


async def test_items_wait_for_a_quiet_moment_then_leave_in_order() -> None:
    delivered: list[int] = []
    handoff: Handoff[int] = Handoff(delivered.append, quiet=0.05, longest=10)
    for item in range(5):
        handoff.add(item)
        await asyncio.sleep(0)
    assert delivered == [] and len(handoff) == 5, "nothing leaves while requests arrive"
    await asyncio.sleep(0.3)
    assert delivered == [0, 1, 2, 3, 4] and len(handoff) == 0


async def test_a_steady_stream_still_delivers_within_the_longest_wait() -> None:
    delivered: list[int] = []
    handoff: Handoff[int] = Handoff(delivered.append, quiet=0.05, longest=0.1)
    sent = 0
    loop = asyncio.get_running_loop()
    stop_at = loop.time() + 0.6
    while loop.time() < stop_at:  # never quiet for 50 ms: only `longest` lets items out
        handoff.add(sent)
        sent += 1
        await asyncio.sleep(0.01)
    assert delivered, "the oldest item waited at most `longest`, not until the stream ended"
    handoff.flush()
    assert delivered == list(range(sent)), "each item once, in arrival order"


async def test_flush_delivers_at_once_and_cancels_the_timer() -> None:
    delivered: list[str] = []
    handoff: Handoff[str] = Handoff(delivered.append, quiet=60, longest=60)
    handoff.add("a")
    handoff.add("b")
    handoff.flush()
    assert delivered == ["a", "b"]
    handoff.flush()
    assert delivered == ["a", "b"], "nothing twice"


def test_quiet_must_not_exceed_longest() -> None:
    with pytest.raises(ValueError):
        Handoff(print, quiet=1.0, longest=0.5)


async def test_the_server_acks_an_event_before_the_app_sees_it_and_delivers_it_on_stop(
) -> None:
    async with FakeSlack() as slack, aiohttp.ClientSession() as session:
        client = AsyncWebClient(token=TOKEN, base_url=f"{slack.url}/")
        app = AsyncApp(client=client, signing_secret=SIGNING_SECRET)
        mentions: list[dict[str, Any]] = []

        @app.event("app_mention")
        async def on_mention(event: dict[str, Any]) -> None:
            mentions.append(event)

        async def ready() -> dict[str, Any]:
            return {"ready": True}

        server = HttpServer(ready, app=app, signing_secret=SIGNING_SECRET, event_quiet=60)
        port = await server.start("127.0.0.1", 0)
        try:
            sender = SlackSender(f"http://127.0.0.1:{port}/slack/events", session)
            sent, _ = await sender.mention("CHAND", "UALICE", "checkout is down")
            assert sent.status == 200
            await asyncio.sleep(0.05)
            assert mentions == [], "acknowledged, and held while the port is busy"
        finally:
            await server.stop()
        for _ in range(100):  # the app's listener runs after its ack, in the background
            if mentions:
                break
            await asyncio.sleep(0.02)
        assert [m["text"] for m in mentions] == ["<@UTRIAGE> checkout is down"], \
            "stopping hands every acknowledged event to the app: none is lost"
