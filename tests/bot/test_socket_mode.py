"""The real `triage serve` in Socket Mode: no public URL, events over a WebSocket that the
bot opens to (a loopback) Slack, each envelope acknowledged by its id. This one runs the
`triage` command itself with the offline analyzer, nothing substituted."""

from __future__ import annotations

import asyncio

import aiohttp

from tests.bot.harness import bot_process, ended, posted_with, state_of
from tests.fakes.slack_api import BOT_USER, FakeSlack, SlackSender
from tests.fakes.socket_mode import FakeSocketMode

REPORT = "checkout in prod keeps restarting, customers get 502s on payment"


async def test_socket_mode_investigates_and_deduplicates() -> None:
    env = {"SLACK_APP_TOKEN": "xapp-1-ATRIAGE-1-test", "SLACK_SIGNING_SECRET": ""}
    async with FakeSocketMode() as socket, FakeSlack(socket_url=socket.url) as slack, \
            bot_process(slack, env=env, module="bot.cli", args=("--model", "analyzer")) as bot, \
            aiohttp.ClientSession() as session:
        await asyncio.wait_for(socket.connected.wait(), 10)
        assert slack.calls_of("apps.connections.open")
        async with session.get(f"{bot.url}/healthz") as response:
            assert response.status == 200
        async with session.get(f"{bot.url}/readyz") as response:
            body = await response.json()
            assert response.status == 200 and body["mode"] == "socket", body
        async with session.post(f"{bot.url}/slack/events", data=b"{}") as response:
            assert response.status == 404, "no HTTP events endpoint in Socket Mode"

        ts = SlackSender.new_ts()
        event = {"type": "app_mention", "user": "UALICE", "channel": "CSOCKET",
                 "text": f"<@{BOT_USER}> {REPORT}", "ts": ts, "event_ts": ts}
        first = await socket.send_event(event, event_id="EvSOCKET1")
        assert await socket.ack(first) < 1.0
        retried = await socket.send_event(event, event_id="EvSOCKET1", retry_attempt=1)
        await socket.ack(retried)

        status = await ended(slack, "CSOCKET", ts)
        assert state_of(status) == "done" and "analyzer" in status.all_text
        assert posted_with(slack, "CSOCKET", ts, "*Step 2*")
        assert posted_with(slack, "CSOCKET", ts, "oom_killed")
        assert posted_with(slack, "CSOCKET", ts, "Deployment shop/checkout")
        statuses = [m for m in slack.in_channel("CSOCKET") if m.text.startswith("Investigating")]
        assert len(statuses) == 1, "the redelivered envelope started nothing"
        assert await bot.stop() == 0, bot.log()
