"""Admission through the real bot: one investigation per Slack message across replicas
sharing a store, and the limits with a queue kept in the store."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import aiohttp
import pytest
import pytest_asyncio

from bot.cli.serve import make_runner
from bot.investigations.admission import AdmissionLimits
from bot.store import Store
from bot.wiring import scenario_setting
from tests.bot.harness import InProcessBot, ended, posted_with
from tests.bot.models import Gates, build_test_model
from tests.bot.test_memory import any_db_url, postgres_server
from tests.bot.threads import statuses
from tests.fakes.slack_api import FakeSlack, SlackSender

__all__ = ["any_db_url", "postgres_server"]  # fixtures: pytest finds them by name here


class StoreBot(InProcessBot):
    """`serve` in-process over its own connection to a shared SQL store: one replica."""

    def __init__(self, slack: FakeSlack, store: Store, gates: Gates | None = None) -> None:
        gates = gates or Gates()
        super().__init__(slack, runner=make_runner(scenario_setting("checkout-oom"),
                                                   build_test_model(gates)))
        self.gates = gates
        self.store = store  # type: ignore[assignment]


@pytest_asyncio.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as client:
        yield client


async def _replica(url: str) -> Store:
    store = await Store.open(url)
    await store.migrate()
    return store


async def test_the_same_mention_on_two_replicas_starts_one_investigation(
    any_db_url: str, session: aiohttp.ClientSession
) -> None:
    first, second = await _replica(any_db_url), await _replica(any_db_url)
    try:
        async with FakeSlack() as slack, StoreBot(slack, first) as one, \
                StoreBot(slack, second) as two:
            senders = [SlackSender(f"{bot.url}/slack/events", session) for bot in (one, two)]
            ts = SlackSender.new_ts()
            acks = await asyncio.gather(*(
                sender.mention("CFLEET", "UALICE", "[quick] checkout is down", ts=ts,
                               event_id="EvFLEET1", retry=retry)
                for retry, sender in ((None, senders[0]), (1, senders[1]))
            ))
            assert all(sent.status == 200 for sent, _ in acks)
            # The same message as a second event (its own id), on the other replica.
            await senders[1].mention("CFLEET", "UALICE", "[quick] checkout is down", ts=ts,
                                     event_id="EvFLEET2")
            status = await ended(slack, "CFLEET", ts)
            assert "done" in status.text
            await asyncio.sleep(0.3)  # a second start would have posted its status by now
            assert len(statuses(slack, "CFLEET", ts)) == 1
        assert len(await first.history()) == 1, "one investigation recorded in the store"
    finally:
        await first.close()
        await second.close()


async def test_above_the_limit_a_mention_waits_in_the_store_and_starts_when_a_slot_frees(
    any_db_url: str, session: aiohttp.ClientSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRIAGE_MAX_INVESTIGATIONS", "1")
    store = await _replica(any_db_url)
    try:
        async with FakeSlack() as slack, StoreBot(slack, store) as bot:
            sender = SlackSender(f"{bot.url}/slack/events", session)
            _, running = await sender.mention("CQ", "UALICE", "[gate:first] checkout down")
            await slack.wait_for(lambda fake: statuses(fake, "CQ", running) or None, 10)
            _, second = await sender.mention("CQ", "UBOB", "[quick] orders slow")
            # The ack comes before the store has queued it: the third mention is sent once
            # the second is known to wait, so that "ahead" has one right answer.
            await slack.wait_for(lambda f: posted_with(f, "CQ", second, "Queued") or None, 10)
            _, third = await sender.mention("CQ2", "UCAROL", "[quick] cart slow")
            await slack.wait_for(lambda f: posted_with(f, "CQ2", third, "Queued") or None, 10)
            assert posted_with(slack, "CQ", second, "Queued, 0 ahead")
            assert posted_with(slack, "CQ2", third, "Queued, 1 ahead")
            assert not statuses(slack, "CQ", second) and not statuses(slack, "CQ2", third)
            assert [m.thread_ts for m in await store.queued()] == [second, third]

            bot.gates.open("first")
            await ended(slack, "CQ", running)
            await ended(slack, "CQ", second)
            await ended(slack, "CQ2", third)
            assert await store.queued() == ()
    finally:
        await store.close()


async def test_the_queue_outlives_the_replica_that_queued(
    any_db_url: str, session: aiohttp.ClientSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRIAGE_MAX_INVESTIGATIONS", "1")
    store = await _replica(any_db_url)
    try:
        async with FakeSlack() as slack:
            async with StoreBot(slack, store) as bot:
                sender = SlackSender(f"{bot.url}/slack/events", session)
                _, running = await sender.mention("CR", "UALICE", "[gate:never] checkout down")
                await slack.wait_for(lambda fake: statuses(fake, "CR", running) or None, 10)
                _, waiting = await sender.mention("CR", "UBOB", "[quick] orders slow")
                await slack.wait_for(lambda f: posted_with(f, "CR", waiting, "Queued") or None,
                                     10)
            assert [m.thread_ts for m in await store.queued()] == [waiting], (
                "a stopped replica leaves its queue in the store")
            later = await _replica(any_db_url)
            try:
                async with StoreBot(slack, later) as replacement:
                    replacement.gates.open("never")
                    await ended(slack, "CR", waiting)
                assert await later.queued() == ()
            finally:
                await later.close()
    finally:
        await store.close()


def test_the_limits_come_from_the_environment_and_refuse_nonsense() -> None:
    assert AdmissionLimits.from_env({}) == AdmissionLimits(20, 5)
    assert AdmissionLimits.from_env({"TRIAGE_MAX_INVESTIGATIONS": "3",
                                     "TRIAGE_MAX_PER_CHANNEL": " 2 "}) == AdmissionLimits(3, 2)
    with pytest.raises(ValueError, match="TRIAGE_MAX_PER_CHANNEL='many'"):
        AdmissionLimits.from_env({"TRIAGE_MAX_PER_CHANNEL": "many"})
    with pytest.raises(ValueError, match="TRIAGE_MAX_INVESTIGATIONS must be at least 1"):
        AdmissionLimits.from_env({"TRIAGE_MAX_INVESTIGATIONS": "0"})


async def test_the_channel_limit_queues_in_one_channel_while_another_starts(
    session: aiohttp.ClientSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRIAGE_MAX_PER_CHANNEL", "1")
    async with FakeSlack() as slack, InProcessBot(slack) as bot:
        sender = SlackSender(f"{bot.url}/slack/events", session)
        _, busy = await sender.mention("CBUSY", "UALICE", "[gate:busy] checkout down")
        await slack.wait_for(lambda fake: statuses(fake, "CBUSY", busy) or None, 10)
        _, waiting = await sender.mention("CBUSY", "UBOB", "[quick] orders slow")
        _, other = await sender.mention("COTHER", "UCAROL", "[quick] cart slow")
        await ended(slack, "COTHER", other)
        assert posted_with(slack, "CBUSY", waiting, "Queued, 0 ahead")
        assert not statuses(slack, "CBUSY", waiting)
        bot.gates.open("busy")
        await ended(slack, "CBUSY", waiting)
