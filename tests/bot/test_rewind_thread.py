"""A rewind asked in the thread, through `serve` in-process and the loopback Slack: the
reply is confirmed, the engine rolls back at its next step, the thread says what was
dropped, and the store keeps every event (the rewind among them)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import aiohttp
import pytest_asyncio

from bot.cli.serve import make_runner
from bot.wiring import scenario_setting
from engines.analyzer import AnalyzerModel
from engines.events import ConstraintApplied, RewoundTo, ToolCalled
from engines.model import ModelReply, ModelRequest
from tests.bot.harness import InProcessBot, ended, posted_with, state_of
from tests.fakes.slack_api import FakeSlack, SlackSender

CHANNEL = "CREWIND"
REPORT = "checkout in prod keeps restarting, customers get 502s on payment"


class HeldAnalyzer(AnalyzerModel):
    """The analyzer, held at its third step until the test opens the gate."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.at_three = asyncio.Event()

    async def complete(self, request: ModelRequest) -> ModelReply:
        if request.step == 3 and not request.final:
            self.at_three.set()
            await self.gate.wait()
        return await super().complete(request)


@pytest_asyncio.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as client:
        yield client


async def test_a_rewind_reply_rolls_back_and_the_thread_says_what_was_dropped(
        session: aiohttp.ClientSession) -> None:
    model = HeldAnalyzer()
    runner = make_runner(scenario_setting("checkout-oom"), model, "react")
    async with FakeSlack() as slack, InProcessBot(slack, runner=runner) as bot:
        sender = SlackSender(f"{bot.url}/slack/events", session)
        _, ts = await sender.mention(CHANNEL, "UALICE", REPORT)
        await asyncio.wait_for(model.at_three.wait(), 15)
        await sender.message(CHANNEL, "UBOB", "rewind to step 1, stay out of monitoring",
                             thread_ts=ts)
        noted = (await slack.wait_for(lambda f: posted_with(f, CHANNEL, ts, "Noted")))[0]
        assert "rolling back to step 1" in noted.all_text
        model.gate.set()
        said = (await slack.wait_for(lambda f: posted_with(f, CHANNEL, ts, "Rewound to")))[0]
        assert "Rewound to step 1: dropped steps 2-3" in said.all_text
        assert state_of(await ended(slack, CHANNEL, ts)) == "done"
        record = await bot.store.find_by_thread(CHANNEL, ts)
        assert record is not None
        events = list(await bot.store.events(record.id))
    rewinds = [e for e in events if isinstance(e, RewoundTo)]
    assert [(r.step, r.dropped, r.author) for r in rewinds] == [(1, (2, 3), "UBOB")]
    at = events.index(rewinds[0])
    assert any(isinstance(e, ToolCalled) and e.step == 3 for e in events[:at])  # kept
    applied = [e for e in events[at:] if isinstance(e, ConstraintApplied)]
    assert [(a.constraint, a.value, a.step) for a in applied] == [
        ("exclude_namespace", "monitoring", 2)]
    after = [e for e in events[at:] if isinstance(e, ToolCalled)]
    assert after and min(e.step for e in after) == 2  # it went on from step 1
    assert all(e.arguments.get("namespace") != "monitoring" for e in after)
