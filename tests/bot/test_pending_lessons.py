"""Reflexion's lessons wait for a human: a reflection stays with its incident until someone
confirms that diagnosis (✅ or a reply such as "right"); only then do similar incidents
retrieve it, and their threads name the lessons they applied by id."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest_asyncio

from bot import render
from bot.store import Store
from engines.events import LessonsRetrieved
from tests.bot.harness import button, ended, posted_with
from tests.bot.test_memory import (
    INCIDENT,
    SIMILAR,
    SqlBot,
    _eventually,
    _idle,
    any_db_url,
    any_store,
    postgres_server,
    reflecting_model,
)
from tests.bot.threads import statuses
from tests.fakes.slack_api import FakeSlack, SlackSender

__all__ = ["any_db_url", "any_store", "postgres_server"]  # fixtures, found by name

REFLECTION = "I quoted a database error that no tool returned; read the pods."


@pytest_asyncio.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as client:
        yield client


async def _reflected(slack: FakeSlack, sender: SlackSender, store: Store, channel: str,
                     text: str) -> tuple[str, str]:
    """An incident Reflexion reflects on before answering: (thread, investigation id)."""
    _, ts = await sender.mention(channel, "UALICE", text)
    await ended(slack, channel, ts)
    assert posted_with(slack, channel, ts, "Reflection on attempt 1")
    investigation = button(posted_with(slack, channel, ts, "Diagnosis")[-1],
                           render.CORRECT_ACTION)
    await _idle(store, investigation)

    async def kept() -> bool:  # the reflection is kept right after the end is recorded
        return any(lesson.source_investigation == investigation for lesson in
                   await store.lessons(state="pending"))

    await _eventually(kept)
    return ts, investigation


async def _retrieved(store: Store, channel: str, ts: str) -> tuple[str, ...]:
    record = await store.find_by_thread(channel, ts)
    assert record is not None
    events = await store.events(record.id)
    return next((e.lessons for e in events if isinstance(e, LessonsRetrieved)), ())


async def test_a_reflection_is_retrieved_only_after_a_human_confirms_its_diagnosis(
    session: aiohttp.ClientSession, any_store: Store,
) -> None:
    store = any_store
    async with FakeSlack() as slack, SqlBot(slack, store, reflecting_model()) as bot:
        sender = SlackSender(f"{bot.url}/slack/events", session)
        first, investigation = await _reflected(slack, sender, store, "CPEND", INCIDENT)
        (pending,) = await store.lessons(state="pending")
        assert pending.text == REFLECTION and pending.source_investigation == investigation
        assert await store.search_lessons(SIMILAR) == [], "nobody agreed yet"

        # A similar incident before anyone confirmed: it is given nothing.
        before, _ = await _reflected(slack, sender, store, "CPEND", SIMILAR)
        assert await _retrieved(store, "CPEND", before) == ()
        assert not posted_with(slack, "CPEND", before, "Lessons from past incidents")

        diagnosis = posted_with(slack, "CPEND", first, "Diagnosis")[-1]
        await sender.click("CPEND", "UBOB", diagnosis, render.CORRECT_ACTION, investigation)

        async def confirmed() -> bool:
            return (await store.lesson(pending.id)).state == "confirmed"

        await _eventually(confirmed)
        # The other incident's reflection still waits for its own confirmation.
        assert [lesson.source_investigation for lesson in await store.lessons(state="pending")
                ] == [(await store.find_by_thread("CPEND", before) or pending).id]

        after, _ = await _reflected(slack, sender, store, "CPEND", SIMILAR)
        applied = await _retrieved(store, "CPEND", after)
        assert REFLECTION in applied
        shown = posted_with(slack, "CPEND", after, "Lessons from past incidents")
        assert len(shown) == 1
        ids = {lesson.id: lesson.text for lesson in await store.lessons(state="confirmed")}
        named = [i for i, text in ids.items() if text in applied]
        assert pending.id in named
        assert shown[0].text.startswith(f"Using {len(applied)} lessons from past incidents (#")
        for lesson_id in named:
            assert f"#{lesson_id}" in shown[0].text, shown[0].text


async def test_a_reply_saying_right_confirms_like_the_button(
    session: aiohttp.ClientSession, any_store: Store,
) -> None:
    store = any_store
    async with FakeSlack() as slack, SqlBot(slack, store, reflecting_model()) as bot:
        sender = SlackSender(f"{bot.url}/slack/events", session)
        ts, investigation = await _reflected(slack, sender, store, "CRIGHT", INCIDENT)
        _, thanks = await sender.message("CRIGHT", "UBOB", "thanks!", thread_ts=ts)
        _, right = await sender.message("CRIGHT", "UBOB", "right, that was it", thread_ts=ts)
        await slack.wait_for(lambda f: [c for c in f.calls_of("reactions.add")
                                        if c.args["timestamp"] == right
                                        and c.args["name"] == "white_check_mark"])
        (lesson,) = [lesson for lesson in await store.lessons() if lesson.text == REFLECTION]
        assert lesson.state == "confirmed" and lesson.source_investigation == investigation
        found = await store.search_lessons(SIMILAR)
        assert any(f.text == REFLECTION for f in found)
        assert any("confirmed the diagnosis" in f.text for f in found)
        assert not [c for c in slack.calls_of("reactions.add")
                    if c.args["timestamp"] == thanks and c.args["name"] == "white_check_mark"]
        assert len(statuses(slack, "CRIGHT", ts)) == 1, "a confirmation starts no new attempt"
