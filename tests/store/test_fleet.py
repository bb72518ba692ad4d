"""Event claims and the admission queue, on SQLite and PostgreSQL, from several replicas."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from bot.feedback import QueuedMention
from bot.store import Store
from bot.store.schema import event_claims


async def test_a_key_is_claimed_once_across_replicas_racing_for_it(db_url: str) -> None:
    replicas = [await Store.open(db_url) for _ in range(4)]
    try:
        won = await asyncio.gather(*(r.claim_event("message:C1:1.0") for r in replicas * 3))
        assert sorted(won) == [False] * 11 + [True]
        assert await replicas[0].claim_event("message:C1:2.0"), "another key is its own"
    finally:
        for replica in replicas:
            await replica.close()


async def test_claims_expire_after_the_ttl(store: Store) -> None:
    assert await store.claim_event("old") and await store.claim_event("recent")
    async with store._db.begin() as conn:  # claimed two hours ago
        await conn.execute(event_claims.update().where(event_claims.c.key == "old")
                           .values(claimed_at=datetime.now(UTC) - timedelta(hours=2)))
    assert not await store.claim_event("recent")
    store._purged_at = 0.0  # the purge runs at most once a minute: due now
    assert await store.claim_event("old"), "an expired claim is purged and claimed again"
    assert not await store.claim_event("old")
    assert not await store.claim_event("recent"), "a claim within the hour stays"


async def test_the_queue_keeps_order_and_survives_a_new_connection(db_url: str) -> None:
    first = await Store.open(db_url)
    try:
        assert await first.enqueue(QueuedMention("C1", "1.0", "api down", "U1")) == 0
        assert await first.enqueue(QueuedMention("C2", "2.0", "db slow", "U2")) == 1
        assert await first.enqueue(QueuedMention("C1", "1.0", "api down", "U1")) == 0, (
            "a thread is queued once")
    finally:
        await first.close()
    second = await Store.open(db_url)
    other = await Store.open(db_url)
    try:
        queued = await second.queued()
        assert [(m.channel, m.thread_ts, m.text, m.requested_by) for m in queued] == [
            ("C1", "1.0", "api down", "U1"), ("C2", "2.0", "db slow", "U2")]
        taken = await asyncio.gather(second.take_queued(queued[0].id),
                                     other.take_queued(queued[0].id))
        assert sorted(taken) == [False, True], "one replica takes it"
        assert [m.thread_ts for m in await other.queued()] == ["2.0"]
        assert await other.enqueue(QueuedMention("C3", "3.0", "x", "U3")) == 1
    finally:
        await second.close()
        await other.close()


async def test_a_workspaces_refusal_of_streaming_is_kept_across_replicas(db_url: str) -> None:
    """Decided once per workspace: what one replica learnt, a restarted or another one
    knows, and a later refusal does not overwrite the first."""
    first = await Store.open(db_url)
    try:
        assert await first.surface_refusals() == {}
        await first.remember_surface_refusal("T1", "invalid_blocks")
        await first.remember_surface_refusal("T1", "not_allowed")
    finally:
        await first.close()
    other = await Store.open(db_url)
    try:
        assert await other.surface_refusals() == {"T1": "invalid_blocks"}
    finally:
        await other.close()
