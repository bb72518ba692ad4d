"""Leases: taken, renewed, released, claimed when expired, and fencing a stale owner off."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any, cast

import pytest

from bot.investigations.investigation import Investigation
from bot.investigations.leases import Leases
from bot.outbox_items import Thread
from bot.store import InvestigationRecord, Store
from bot.store.errors import LeaseLostError, UnknownInvestigationError
from engines.constraints import ConstraintInbox
from engines.events import ThoughtRecorded
from tests.store._appender import event

TTL = timedelta(seconds=30)
SHORT = timedelta(milliseconds=50)


async def _running(store: Store, investigation_id: str, *, origin: str = "slack") -> None:
    await store.create(InvestigationRecord(investigation_id, "C1", f"{investigation_id}.ts",
                                           "checkout restarts", "alice", "analyzer"),
                       origin=origin)


async def test_each_acquire_is_a_new_generation_and_fences_the_previous_one(
    store: Store,
) -> None:
    await _running(store, "inv1")
    assert await store.acquire_lease("inv1", "replica-a", TTL) == 1
    await store.append_event("inv1", event(1, "inv1"), generation=1)
    assert await store.acquire_lease("inv1", "replica-b", TTL) == 2  # a new attempt elsewhere
    assert await store.lease("inv1") == ("replica-b", 2)
    before = await store.investigation("inv1")

    with pytest.raises(LeaseLostError, match="generation 1, the store has generation 2"):
        await store.append_event("inv1", event(2, "inv1"), generation=1)
    with pytest.raises(LeaseLostError):
        await store.set_status_message("inv1", "999.1", generation=1)
    with pytest.raises(LeaseLostError):
        await store.set_thread("inv1", "999.2", generation=1)
    with pytest.raises(LeaseLostError):
        await store.set_status("inv1", "waiting", generation=1)
    with pytest.raises(LeaseLostError):
        await store.finish("inv1", "done", None, generation=1)
    # Nothing of the stale writer landed: not the event, not the counters, not the row.
    after = await store.investigation("inv1")
    assert after == before and after.status == "running" and after.status_ts is None
    assert list(await store.events("inv1")) == [event(1, "inv1")]

    await store.append_event("inv1", event(2, "inv1"), generation=2)
    await store.finish("inv1", "done", None, generation=2)
    assert (await store.investigation("inv1")).status == "done"
    assert len(await store.events("inv1")) == 2


async def test_a_write_for_an_investigation_without_a_lease_is_refused_when_fenced(
    store: Store,
) -> None:
    await _running(store, "bare")
    with pytest.raises(LeaseLostError, match="no lease"):
        await store.append_event("bare", event(1, "bare"), generation=1)
    await store.append_event("bare", event(1, "bare"))  # unfenced: `triage investigate`
    with pytest.raises(UnknownInvestigationError):
        await store.acquire_lease("nobody", "replica-a", TTL)


async def test_renewal_keeps_what_is_held_and_reports_what_was_taken_over(store: Store) -> None:
    for name in ("a1", "a2"):
        await _running(store, name)
    held = {"a1": await store.acquire_lease("a1", "replica-a", SHORT),
            "a2": await store.acquire_lease("a2", "replica-a", SHORT)}
    await asyncio.sleep(0.1)  # both expired; replica-b claims one of them
    [(taken, generation)] = await store.claim_expired("replica-b", TTL, limit=1)
    assert generation == 2
    kept = await store.renew_leases("replica-a", held, TTL)
    assert kept == {"a1", "a2"} - {taken.id}
    assert await store.claim_expired("replica-c", TTL, limit=10) == []  # renewed, and b's


async def test_a_released_lease_is_never_claimed_and_a_stale_release_does_nothing(
    store: Store,
) -> None:
    await _running(store, "r1")
    await store.acquire_lease("r1", "replica-a", SHORT)
    assert await store.acquire_lease("r1", "replica-b", SHORT) == 2
    assert not await store.release_lease("r1", 1)  # replica-a's, stale: b keeps it
    assert await store.release_lease("r1", 2)
    await asyncio.sleep(0.1)
    assert await store.claim_expired("replica-c", TTL, limit=10) == []


async def test_only_unfinished_slack_investigations_with_expired_leases_are_claimed(
    store: Store,
) -> None:
    await _running(store, "expired")
    await _running(store, "alive")
    await _running(store, "ended")
    await _running(store, "cli", origin="cli")
    await _running(store, "local")
    await _running(store, "orphan")  # no lease at all (a version before leases)
    for name in ("expired", "ended", "cli", "local"):
        await store.acquire_lease(name, "replica-a", SHORT)
    await store.acquire_lease("alive", "replica-a", TTL)
    await store.finish("ended", "done", None)
    await asyncio.sleep(0.1)
    claimed = await store.claim_expired("replica-b", TTL, limit=10, exclude=["local"])
    assert [(s.id, g) for s, g in claimed] == [("expired", 2)]
    assert claimed[0][0].thread_ts == "expired.ts" and claimed[0][0].status == "running"
    # The orphan's record is recent: it may be a run between its record and its lease.
    # Once untouched for the TTL it is claimed like an expired lease.
    [(orphan, generation)] = await store.claim_expired("replica-b", SHORT, limit=10,
                                                       exclude=["local"])
    assert orphan.id == "orphan" and generation == 1
    assert await store.lease("orphan") == ("replica-b", 1)


async def test_two_replicas_claiming_at_once_split_the_expired_leases(db_url: str) -> None:
    stores = [await Store.open(db_url) for _ in range(3)]
    try:
        names = [f"dead{n:02}" for n in range(12)]
        for name in names:
            await _running(stores[0], name)
            await stores[0].acquire_lease(name, "dead-replica", SHORT)
        await asyncio.sleep(0.1)
        claims = await asyncio.gather(*(
            store.claim_expired(f"replica-{n}", TTL, limit=5) for n, store in enumerate(stores)))
        ids = [stored.id for claim in claims for stored, _ in claim]
        assert sorted(ids) == sorted(set(ids)), "an investigation was claimed twice"
        assert len(ids) == 12 and all(len(claim) <= 5 for claim in claims)
        for n, claim in enumerate(claims):
            for stored, generation in claim:
                assert generation == 2
                assert await stores[0].lease(stored.id) == (f"replica-{n}", 2)
    finally:
        for store in stores:
            await store.close()


async def test_no_write_of_the_old_owner_lands_after_a_takeover(db_url: str) -> None:
    """The old owner appends as fast as it can while another replica takes over: every
    one of its events is ordered before the new owner's first, and after the takeover
    every one of its writes is refused."""
    old, new = await Store.open(db_url), await Store.open(db_url)
    try:
        await _running(old, "race")
        generation = await old.acquire_lease("race", "old", SHORT)
        refused = asyncio.Event()

        async def old_owner() -> int:
            n = 0
            while True:
                n += 1
                try:
                    await old.append_event(
                        "race", ThoughtRecorded("race", 1, f"old {n}"), generation=generation)
                except LeaseLostError:
                    refused.set()
                    return n - 1

        writer = asyncio.create_task(old_owner())
        await asyncio.sleep(0.15)
        # A row the writer holds locked at that instant is skipped: look again, as the
        # takeover loop does at its next beat.
        claimed: list[tuple[object, int]] = []
        for _ in range(500):
            claimed = list(await new.claim_expired("new", TTL, limit=1))
            if claimed:
                break
        [(_, taken)] = claimed
        await new.append_event("race", ThoughtRecorded("race", 1, "new 1"), generation=taken)
        written = await asyncio.wait_for(writer, 10)
        assert refused.is_set() and written > 0
        texts = [e.text for e in await new.events("race") if isinstance(e, ThoughtRecorded)]
        first_new = texts.index("new 1")
        assert texts[:first_new] == [f"old {n}" for n in range(1, first_new + 1)]
        assert all(not t.startswith("old") for t in texts[first_new:])
        assert len(texts) == written + 1
    finally:
        await old.close()
        await new.close()


async def test_a_threads_messages_wait_for_a_renewal_once_the_lease_is_stale_and_stop_if_taken(
    store: Store,
) -> None:
    """The outbox's guard (bot.investigations.leases.Leases.still_ours): while the last
    renewal is recent it answers at once, with no statement; once it is older than two
    thirds of the TTL (a process frozen, then woken) it renews first, and a lease another
    replica took meanwhile cuts the run off and silences its thread."""
    await _running(store, "frozen")
    leases = Leases(store, seconds=0.6, owner="replica-a")
    thread = Thread("C1", "frozen.ts")
    investigation = Investigation("frozen", "checkout restarts", "alice", thread,
                                  ConstraintInbox(), cast(Any, None))
    await leases.acquire(investigation)
    assert thread.guard is not None and await thread.guard()  # fresh: trusted as it is
    await asyncio.sleep(0.5)  # stale by this replica's clock, still valid in the store
    assert await thread.guard() and not investigation.lost  # renewed, so still ours
    await asyncio.sleep(0.7)  # expired in the store too: replica-b takes it over
    assert [r.id for r, _ in await store.claim_expired("replica-b", TTL, limit=1)] == ["frozen"]
    assert not await thread.guard()
    assert investigation.lost and thread.dead and leases.lost == 1


class _Blinking:
    """The store, whose next lease renewal fails once (the database away for a moment)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.failures = 1

    async def renew_leases(self, *args: Any) -> set[str]:
        if self.failures:
            self.failures -= 1
            raise OSError("connection refused")
        return set(await self.store.renew_leases(*args))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


async def test_a_message_waits_out_a_store_blink_instead_of_being_dropped(store: Store) -> None:
    await _running(store, "blink")
    blinking = _Blinking(store)
    leases = Leases(cast(Any, blinking), seconds=0.6, owner="replica-a")
    thread = Thread("C1", "blink.ts")
    investigation = Investigation("blink", "checkout restarts", "alice", thread,
                                  ConstraintInbox(), cast(Any, None))
    await leases.acquire(investigation)
    await asyncio.sleep(0.45)  # stale by this replica's clock, still valid in the store
    assert thread.guard is not None and await thread.guard()  # held back, then confirmed
    assert blinking.failures == 0 and not investigation.lost
