"""👍 / 👎 on a streamed diagnosis: the bot in-process (streaming auto) against the loopback
Slack, the store a real SQLite file. 👎 opens the correction path (a new attempt in the
thread); 👍 confirms the diagnosis, which keeps it as a lesson for the next similar one."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest_asyncio

from bot.cli.serve import make_runner
from bot.render_stream import FEEDBACK_ACTION, NEGATIVE, POSITIVE
from bot.store import Store
from bot.wiring import scenario_setting
from tests.bot.harness import InProcessBot, ended
from tests.bot.models import Gates, build_test_model
from tests.bot.threads import runs_ended
from tests.fakes.slack_api import FakeSlack, Posted, SlackSender

REPORT = "checkout in prod keeps restarting, customers get 502s on payment"


@pytest_asyncio.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    opened = await Store.open(f"sqlite:///{tmp_path / 'triage.db'}")
    await opened.migrate()
    yield opened
    await opened.close()


class StreamingBot(InProcessBot):
    def __init__(self, slack: FakeSlack, store: Store) -> None:
        runner = make_runner(scenario_setting("checkout-oom"), build_test_model(Gates()),
                             "reflexion")
        super().__init__(slack, runner=runner, streaming="auto")
        self.store = store  # type: ignore[assignment]


def thumbs(message: Posted) -> dict[str, str]:
    """The values of the 👍 / 👎 of a message."""
    for block in message.blocks:
        if block["type"] == "context_actions":
            element = block["elements"][0]
            assert element["type"] == "feedback_buttons"
            return {"positive": element["positive_button"]["value"],
                    "negative": element["negative_button"]["value"]}
    raise AssertionError(f"no feedback buttons in {message.all_text[:300]}")


async def _diagnosed(slack: FakeSlack, bot: InProcessBot, session: aiohttp.ClientSession,
                     channel: str) -> tuple[SlackSender, str, Posted]:
    sender = SlackSender(f"{bot.url}/slack/events", session)
    _, ts = await sender.mention(channel, "UALICE", REPORT)
    await ended(slack, channel, ts)
    diagnosis = next(m for m in slack.thread(channel, ts) if m.text.startswith("Diagnosis"))
    return sender, ts, diagnosis


async def _eventually(check: object, within: float = 10) -> None:
    for _ in range(int(within / 0.02)):
        if await check():  # type: ignore[operator]
            return
        await asyncio.sleep(0.02)
    raise AssertionError("never got there")


async def test_thumbs_down_opens_the_correction_path(tmp_path: Path, store: Store) -> None:
    async with aiohttp.ClientSession() as session, FakeSlack() as slack, \
            StreamingBot(slack, store) as bot:
        sender, ts, diagnosis = await _diagnosed(slack, bot, session, "CTHUMBS1")
        values = thumbs(diagnosis)
        assert values["negative"].startswith(f"{NEGATIVE}:")
        sent = await sender.click("CTHUMBS1", "UBOB", diagnosis, FEEDBACK_ACTION,
                                  values["negative"])
        assert sent.status == 200
        await runs_ended(slack, "CTHUMBS1", ts, runs=2)
        thread = slack.thread("CTHUMBS1", ts)
        assert any(m.text.startswith("Trying again") for m in thread), "a new attempt"
        judged = next(m for m in thread if m.ts == diagnosis.ts)
        assert "marked this diagnosis wrong" in judged.all_text
        assert "context_actions" not in [b["type"] for b in judged.blocks]
        investigation = values["negative"].split(":", 1)[1]
        given = await store.feedback(investigation)
        assert [(f.kind, f.text, f.user) for f in given] == [("verdict", "wrong", "UBOB")]


async def test_thumbs_up_confirms_and_keeps_a_lesson(tmp_path: Path, store: Store) -> None:
    async with aiohttp.ClientSession() as session, FakeSlack() as slack, \
            StreamingBot(slack, store) as bot:
        sender, ts, diagnosis = await _diagnosed(slack, bot, session, "CTHUMBS2")
        values = thumbs(diagnosis)
        assert values["positive"].startswith(f"{POSITIVE}:")
        investigation = values["positive"].split(":", 1)[1]
        await sender.click("CTHUMBS2", "UBOB", diagnosis, FEEDBACK_ACTION, values["positive"])

        async def confirmed() -> bool:
            given = await store.feedback(investigation)
            return [(f.kind, f.text) for f in given] == [("verdict", "correct")]

        await _eventually(confirmed)

        async def learnt() -> bool:  # kept right after the verdict
            lessons = await store.search_lessons("checkout restarting 502s")
            return any("confirmed the diagnosis" in lesson.text and "oom_killed" in lesson.text
                       for lesson in lessons)

        await _eventually(learnt)
        assert not [m for m in slack.thread("CTHUMBS2", ts) if m.text.startswith("Trying")]

        async def shown() -> bool:
            message = next(m for m in slack.thread("CTHUMBS2", ts) if m.ts == diagnosis.ts)
            return "marked this diagnosis correct" in message.all_text

        await _eventually(shown)
        # Nonsense from Slack changes nothing.
        await sender.click("CTHUMBS2", "UBOB", diagnosis, FEEDBACK_ACTION, "meh:x")
        assert len(await store.feedback(investigation)) == 1
