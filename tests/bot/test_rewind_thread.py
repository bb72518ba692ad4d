"""A rewind asked in the thread, through `serve` in-process and the loopback Slack: the
reply is confirmed, the engine rolls back at its next step, the thread says what was
dropped, and the store keeps every event (the rewind among them)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import aiohttp
import pytest_asyncio

from bot import render
from bot.cli.serve import make_runner
from bot.wiring import scenario_setting
from engines.analyzer import AnalyzerModel
from engines.events import ConstraintApplied, RewoundTo, ToolCalled
from engines.model import ModelReply, ModelRequest
from tests.bot.harness import (
    InProcessBot,
    button,
    ended,
    posted_with,
    state_of,
    status_message,
)
from tests.fakes.slack_api import FakeSlack, Posted, SlackSender

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


def _step_with_rewind(slack: FakeSlack, ts: str, step: int) -> Posted | None:
    """The step message whose Rewind button goes back to `step`."""
    for message in slack.thread(CHANNEL, ts):
        for block in message.blocks:
            if any(e.get("action_id") == render.REWIND_ACTION and e.get("value") == str(step)
                   for e in block.get("elements", [])):
                return message
    return None


async def test_the_rewind_button_rolls_back_pauses_and_obeys_the_next_reply(
        session: aiohttp.ClientSession) -> None:
    model = HeldAnalyzer()
    runner = make_runner(scenario_setting("checkout-oom"), model, "react")
    async with FakeSlack() as slack, InProcessBot(slack, runner=runner) as bot:
        sender = SlackSender(f"{bot.url}/slack/events", session)
        _, ts = await sender.mention(CHANNEL, "UALICE", REPORT)
        await asyncio.wait_for(model.at_three.wait(), 15)
        step_one = await slack.wait_for(lambda f: _step_with_rewind(f, ts, 1))
        await sender.click(CHANNEL, "UBOB", step_one, render.REWIND_ACTION, "1")
        noted = (await slack.wait_for(lambda f: posted_with(f, CHANNEL, ts, "Noted")))[0]
        assert "rolling back to step 1" in noted.all_text and "pausing" in noted.all_text
        model.gate.set()
        said = (await slack.wait_for(lambda f: posted_with(f, CHANNEL, ts, "Rewound to")))[0]
        assert "Rewound to step 1: dropped steps 2-3" in said.all_text
        paused = await slack.wait_for(
            lambda f: (m := status_message(f, CHANNEL, ts)) and state_of(m) == "paused" and m)
        record = await bot.store.find_by_thread(CHANNEL, ts)
        assert record is not None
        at_pause = list(await bot.store.events(record.id))
        rewind = next(e for e in at_pause if isinstance(e, RewoundTo))
        assert not any(isinstance(e, ToolCalled)  # held: nothing after the rewind yet
                       for e in at_pause[at_pause.index(rewind):])
        await sender.message(CHANNEL, "UBOB", "stay out of monitoring", thread_ts=ts)
        await slack.wait_for(lambda f: len(posted_with(f, CHANNEL, ts, "Noted")) >= 2)
        await sender.click(CHANNEL, "UBOB", paused, render.RESUME_ACTION,
                           button(paused, render.RESUME_ACTION))
        assert state_of(await ended(slack, CHANNEL, ts)) == "done"
        events = list(await bot.store.events(record.id))
    rewinds = [e for e in events if isinstance(e, RewoundTo)]
    assert [(r.step, r.dropped, r.author) for r in rewinds] == [(1, (2, 3), "UBOB")]
    at = events.index(rewinds[0])
    applied = [(a.constraint, a.value) for a in events[at:] if isinstance(a, ConstraintApplied)]
    assert applied == [("pause", ""), ("exclude_namespace", "monitoring")]
    after = [e for e in events[at:] if isinstance(e, ToolCalled)]
    assert after and min(e.step for e in after) == 2
    assert all(e.arguments.get("namespace") != "monitoring" for e in after)


def _menu_steps(message: Posted | None) -> list[str]:
    for block in message.blocks if message else ():
        for element in block.get("elements", []):
            if element.get("action_id") == render.REWIND_MENU_ACTION:
                return [o["value"] for o in element["options"]]
    return []


async def test_the_status_messages_rewind_menu_rolls_back_to_the_step_picked(
        session: aiohttp.ClientSession) -> None:
    """The menu a streamed thread relies on (it has no step messages to carry a button)."""
    model = HeldAnalyzer()
    runner = make_runner(scenario_setting("checkout-oom"), model, "react")
    async with FakeSlack() as slack, InProcessBot(slack, runner=runner) as bot:
        sender = SlackSender(f"{bot.url}/slack/events", session)
        _, ts = await sender.mention(CHANNEL, "UALICE", REPORT)
        await asyncio.wait_for(model.at_three.wait(), 15)
        status = await slack.wait_for(
            lambda f: (m := status_message(f, CHANNEL, ts)) and "1" in _menu_steps(m) and m)
        await sender.select(CHANNEL, "UBOB", status, render.REWIND_MENU_ACTION, "1")
        await slack.wait_for(lambda f: posted_with(f, CHANNEL, ts, "rolling back to step 1"))
        model.gate.set()
        said = (await slack.wait_for(lambda f: posted_with(f, CHANNEL, ts, "Rewound to")))[0]
        assert "Rewound to step 1: dropped steps 2-3" in said.all_text
        paused = await slack.wait_for(
            lambda f: (m := status_message(f, CHANNEL, ts)) and state_of(m) == "paused" and m)
        await sender.click(CHANNEL, "UBOB", paused, render.RESUME_ACTION,
                           button(paused, render.RESUME_ACTION))
        assert state_of(await ended(slack, CHANNEL, ts)) == "done"
        record = await bot.store.find_by_thread(CHANNEL, ts)
        assert record is not None
        events = list(await bot.store.events(record.id))
    assert [(r.step, r.author) for r in events if isinstance(r, RewoundTo)] == [(1, "UBOB")]
