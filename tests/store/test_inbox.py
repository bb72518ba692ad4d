"""The inbox on both backends: events for the replica that runs an investigation, claimed
in order and exactly once, even by two replicas claiming at the same moment; on PostgreSQL
a NOTIFY wakes the listener the moment the row commits."""

from __future__ import annotations

import asyncio

import pytest
import sqlalchemy as sa

from bot.store import InvestigationRecord, Store, StoreError, UnknownInvestigationError
from tests.store.samples import T0


async def _investigation(store: Store, investigation_id: str) -> None:
    await store.create(InvestigationRecord(
        investigation_id, "C042", f"17000000{len(investigation_id)}.0001", "checkout is down",
        "alice", "analyzer", started_at=T0))


async def test_events_are_claimed_in_order_once_and_only_for_the_claimers_runs(
    store: Store,
) -> None:
    await _investigation(store, "mine")
    await _investigation(store, "theirs")
    sent = [await store.send_to_owner("mine", "reply", {"text": f"reply {n}", "user": "U1"})
            for n in range(3)]
    other = await store.send_to_owner("theirs", "stop", {"user": "U2"})
    claimed = await store.claim_inbox(["mine"])
    assert [item.id for item in claimed] == sent and sent == sorted(sent)
    assert [item.payload["text"] for item in claimed] == ["reply 0", "reply 1", "reply 2"]
    assert {item.kind for item in claimed} == {"reply"}
    assert await store.claim_inbox(["mine"]) == [], "a delivered event is never claimed again"
    assert await store.undelivered("theirs") == 1, "another run's event stays for its owner"
    (stop,) = await store.claim_inbox(["theirs", "unknown"])
    assert stop.id == other and stop.payload == {"user": "U2"}
    assert await store.claim_inbox([]) == []


async def test_two_replicas_claiming_at_once_split_the_events_between_them(
    db_url: str,
) -> None:
    replicas = [await Store.open(db_url) for _ in range(2)]
    try:
        await _investigation(replicas[0], "shared")
        sent = [await replicas[0].send_to_owner("shared", "reply", {"text": str(n)})
                for n in range(40)]
        rounds = [await asyncio.gather(*(r.claim_inbox(["shared"]) for r in replicas))
                  for _ in range(3)]
        ids = [item.id for both in rounds for claimed in both for item in claimed]
        assert sorted(ids) == sent, "every event claimed exactly once across the replicas"
        assert len(ids) == len(set(ids))
    finally:
        for replica in replicas:
            await replica.close()


async def test_an_event_needs_a_known_investigation_and_a_known_kind(store: Store) -> None:
    with pytest.raises(UnknownInvestigationError):
        await store.send_to_owner("nobody", "reply", {"text": "hi"})
    await _investigation(store, "known")
    with pytest.raises(StoreError, match="unknown inbox kind 'shout'"):
        await store.send_to_owner("known", "shout", {})  # type: ignore[arg-type]
    assert await store.undelivered("known") == 0


async def test_a_deleted_investigation_takes_its_events_with_it(store: Store) -> None:
    await _investigation(store, "gone")
    await store.send_to_owner("gone", "reply", {"text": "hi"})
    async with store._db.begin() as conn:
        await conn.execute(sa.text("DELETE FROM investigations WHERE id = 'gone'"))
    assert await store.claim_inbox(["gone"]) == []


async def test_postgres_notifies_a_listener_at_commit_and_sqlite_has_none(store: Store) -> None:
    await _investigation(store, "loud")
    woken = asyncio.Event()
    listening = await store.listen_inbox(woken.set)
    if store.dialect == "sqlite":
        assert listening is None
        return
    assert listening is not None and listening.alive
    try:
        sender = await Store.open(store.url)
        try:
            await sender.send_to_owner("loud", "reply", {"text": "now"})
        finally:
            await sender.close()
        await asyncio.wait_for(woken.wait(), 5)
    finally:
        await listening.close()
    assert not listening.alive
    woken.clear()  # closed: no longer listening (and its connection left the pool)
    await store.send_to_owner("loud", "reply", {"text": "later"})
    await asyncio.sleep(0.3)
    assert not woken.is_set()


async def test_delivered_events_are_deleted_after_a_day(store: Store) -> None:
    await _investigation(store, "old")
    await store.send_to_owner("old", "reply", {"text": "long ago"})
    await store.send_to_owner("old", "reply", {"text": "just now"})
    assert len(await store.claim_inbox(["old"])) == 2
    async with store._db.begin() as conn:
        await conn.execute(sa.text(
            "UPDATE inbox SET delivered_at = :at WHERE id = (SELECT MIN(id) FROM inbox)"),
            {"at": T0.replace(tzinfo=None) if store.dialect == "sqlite" else T0})
    store._inbox_purged_at = 0.0
    await store.claim_inbox(["old"])
    async with store._db.connect() as conn:
        left = (await conn.execute(sa.text("SELECT payload FROM inbox"))).scalars().all()
    texts = [p["text"] if isinstance(p, dict) else p for p in left]
    assert len(texts) == 1 and "just now" in str(texts[0])


async def test_an_ended_investigation_takes_no_more_events(store: Store) -> None:
    await _investigation(store, "over")
    await store.finish("over", "done", None)
    assert await store.send_to_owner("over", "reply", {"text": "too late"}) is None
    assert await store.undelivered("over") == 0
