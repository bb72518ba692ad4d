"""Replicas for tests and the benchmark: real `triage serve` processes sharing one real
PostgreSQL and one loopback Slack, and what to read of the store about them."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping

import sqlalchemy as sa

from bot.store import Store
from bot.store.schema import leases
from engines.events import ObservationReceived
from tests.bot.harness import BotProcess, bot_process
from tests.fakes.slack_api import FakeSlack


def replica_env(database_url: str, lease_seconds: float) -> dict[str, str]:
    """What every replica of a test fleet is started with."""
    return {
        "TRIAGE_DATABASE_URL": database_url,
        "TRIAGE_LEASE_SECONDS": f"{lease_seconds:g}",
        "TRIAGE_MAX_PER_CHANNEL": "20",
    }


@contextlib.asynccontextmanager
async def replica(slack: FakeSlack, database_url: str, lease_seconds: float,
                  env: Mapping[str, str] | None = None) -> AsyncIterator[BotProcess]:
    """One replica; stopped (SIGTERM) at the end unless the test killed it. Reflexion: the
    test model tells a ReAct story (pods at step 1, events at step 2, held between)."""
    async with bot_process(slack, env={**replica_env(database_url, lease_seconds),
                                       **(env or {})}, args=("--engine", "reflexion")) as bot:
        yield bot


async def eventually(check: Callable[[], Awaitable[bool]], within: float = 20,
                     every: float = 0.02, what: str = "the store never got there") -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not await check():
        if loop.time() > deadline:
            raise AssertionError(what)
        await asyncio.sleep(every)


async def investigation_ids(store: Store, channel_threads: Iterable[tuple[str, str]]
                            ) -> list[str]:
    """The investigation of each thread, once the store has them all."""
    found: list[str] = []

    async def all_recorded() -> bool:
        found.clear()
        for channel, ts in channel_threads:
            record = await store.find_by_thread(channel, ts)
            if record is None:
                return False
            found.append(record.id)
        return True

    await eventually(all_recorded, what="not every mention has its investigation")
    return list(found)


async def held_after_step_one(store: Store, ids: Iterable[str]) -> None:
    """Wait until every one has its first step logged (the test model then holds step 2
    at its gate) and its status message's ts kept: the state a takeover starts from."""
    ids = list(ids)

    async def ready() -> bool:
        for investigation_id in ids:
            stored = await store.investigation(investigation_id)
            events = await store.events(investigation_id)
            if stored.status_ts is None or not any(
                    isinstance(e, ObservationReceived) for e in events):
                return False
        return True

    await eventually(ready, what="the investigations never reached their gate")


async def lease_rows(store: Store, ids: Iterable[str]) -> dict[str, tuple[str, int, bool]]:
    """{id: (owner, generation, released)} of the investigations' leases."""
    query = sa.select(leases.c.investigation_id, leases.c.owner, leases.c.generation,
                      leases.c.expires_at).where(leases.c.investigation_id.in_(list(ids)))
    async with store._db.connect() as conn:
        rows = (await conn.execute(query)).all()
    return {str(i): (str(owner), int(g), expires is None) for i, owner, g, expires in rows}


async def event_counts(store: Store, ids: Iterable[str]) -> dict[str, int]:
    """How many events each investigation's log holds."""
    return {i: (await store.investigation(i)).events for i in ids}
