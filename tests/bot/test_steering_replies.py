"""Typed replies through `serve` in-process and the loopback Slack: two instructions in one
reply, Undo, an edited reply, a deleted reply, a question answered from the state, chat
left alone, and a "thanks" after the end that changes nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest_asyncio

from bot import render_steering
from engines.events import ConstraintApplied, ConstraintWithdrawn, Event
from tests.bot.harness import InProcessBot, button, ended, posted_with, state_of
from tests.fakes.slack_api import FakeSlack, SlackSender

REPORT = "checkout in prod keeps restarting, customers get 502s on payment"
CHANNEL = "CREPLY"


@pytest_asyncio.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as client:
        yield client


async def _held(slack: FakeSlack, sender: SlackSender) -> str:
    """An investigation held by its gate after step 1; its thread ts."""
    _, ts = await sender.mention(CHANNEL, "UALICE", f"[gate:steer] {REPORT}")
    await slack.wait_for(lambda f: posted_with(f, CHANNEL, ts, "*Step 1*"))
    return ts


async def _events(bot: InProcessBot, ts: str) -> list[Event]:
    record = await bot.store.find_by_thread(CHANNEL, ts)
    assert record is not None
    return list(await bot.store.events(record.id))


def _applied(events: list[Event]) -> list[tuple[str, str]]:
    return [(e.constraint, e.value) for e in events if isinstance(e, ConstraintApplied)]


async def test_two_instructions_in_one_reply_are_both_enforced_and_undone_together(
        session: aiohttp.ClientSession) -> None:
    async with FakeSlack() as slack, InProcessBot(slack) as bot:
        sender = SlackSender(f"{bot.url}/slack/events", session)
        ts = await _held(slack, sender)
        _, reply = await sender.message(CHANNEL, "UBOB",
                                        "skip kube-system and check the cart logs", thread_ts=ts)
        noted = (await slack.wait_for(lambda f: posted_with(f, CHANNEL, ts, "Noted")))[0]
        assert "staying out of namespace kube-system" in noted.all_text
        assert "focusing on workload cart" in noted.all_text
        assert "looking at logs first" in noted.all_text
        assert button(noted, render_steering.UNDO_ACTION) == reply
        await sender.click(CHANNEL, "UBOB", noted, render_steering.UNDO_ACTION, reply)
        withdrawn = await slack.wait_for(lambda f: posted_with(f, CHANNEL, ts, "Withdrawn"))
        assert "undone" in withdrawn[0].all_text
        bot.gates.open("steer")
        assert state_of(await ended(slack, CHANNEL, ts)) == "done"
        events = await _events(bot, ts)
    # Undone while the engine was still on its step: none of it ever reached the engine.
    assert _applied(events) == []


async def test_an_edited_reply_replaces_its_constraints_and_a_deleted_one_withdraws_them(
        session: aiohttp.ClientSession) -> None:
    async with FakeSlack() as slack, InProcessBot(slack) as bot:
        sender = SlackSender(f"{bot.url}/slack/events", session)
        ts = await _held(slack, sender)
        _, reply = await sender.message(CHANNEL, "UBOB", "stay out of shop", thread_ts=ts)
        await slack.wait_for(lambda f: posted_with(f, CHANNEL, ts, "Noted"))
        await sender.edit(CHANNEL, "UBOB", reply, ts, "stay out of kube-system",
                          "stay out of shop")
        updated = await slack.wait_for(lambda f: posted_with(f, CHANNEL, ts, "Updated"))
        assert "staying out of namespace kube-system" in updated[0].all_text
        _, other = await sender.message(CHANNEL, "UCAROL", "only the last 30 minutes",
                                        thread_ts=ts)
        await slack.wait_for(lambda f: len(posted_with(f, CHANNEL, ts, "Noted")) >= 2)
        await sender.delete(CHANNEL, "UCAROL", other, ts, "only the last 30 minutes")
        gone = await slack.wait_for(lambda f: posted_with(f, CHANNEL, ts, "reply deleted"))
        assert "last 30m" in gone[0].all_text
        bot.gates.open("steer")
        await ended(slack, CHANNEL, ts)
        events = await _events(bot, ts)
    applied = [e for e in events if isinstance(e, ConstraintApplied)]
    withdrawn = [e for e in events if isinstance(e, ConstraintWithdrawn)]
    in_force = {e.reply for e in applied} - {e.reply for e in withdrawn}
    assert {(e.constraint, e.value) for e in applied if e.reply in in_force} == {
        ("exclude_namespace", "kube-system")}


async def test_a_question_is_answered_and_chat_is_left_alone(
        session: aiohttp.ClientSession) -> None:
    async with FakeSlack() as slack, InProcessBot(slack) as bot:
        sender = SlackSender(f"{bot.url}/slack/events", session)
        ts = await _held(slack, sender)
        await sender.message(CHANNEL, "UBOB", "<@UDANA> can you page the db team?",
                             thread_ts=ts)
        await sender.message(CHANNEL, "UBOB", "what have you checked so far?", thread_ts=ts)
        answer = await slack.wait_for(lambda f: posted_with(f, CHANNEL, ts, "So far"))
        assert "I checked" in answer[0].all_text
        bot.gates.open("steer")
        await ended(slack, CHANNEL, ts)
        events = await _events(bot, ts)
        thread = slack.thread(CHANNEL, ts)
    assert _applied(events) == []
    assert not [m for m in thread if "Noted" in m.all_text or "did not take" in m.all_text]


async def test_thanks_after_the_end_is_not_a_correction(session: aiohttp.ClientSession) -> None:
    async with FakeSlack() as slack, InProcessBot(slack) as bot:
        sender = SlackSender(f"{bot.url}/slack/events", session)
        _, ts = await sender.mention(CHANNEL, "UALICE", REPORT)
        await ended(slack, CHANNEL, ts)
        before = len(slack.thread(CHANNEL, ts))
        await sender.message(CHANNEL, "UBOB", "great, thanks! :pray:", thread_ts=ts)
        await sender.message(CHANNEL, "UBOB", "it's fixed now", thread_ts=ts)
        await bot.services_idle()
        record = await bot.store.find_by_thread(CHANNEL, ts)
        assert record is not None
        after = slack.thread(CHANNEL, ts)
    assert record.outcome != "running"
    assert not [m for m in after[before:] if "again" in m.all_text.lower()]
