"""The store API on both backends: the log, its transactions, the bot's protocol."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa

from bot.feedback import MemoryStore
from bot.store import (
    CodecError,
    Feedback,
    InvestigationRecord,
    Store,
    StoreError,
    UnknownInvestigationError,
)
from bot.store.schema import events as events_table
from engines.constraints import Constraint
from engines.events import InvestigationStarted, ThoughtRecorded
from tests.store.samples import DIAGNOSIS, T0, at, one_of_each


def record(investigation_id: str = "inv1", **changes: object) -> InvestigationRecord:
    base = InvestigationRecord(
        investigation_id, "C042", "1700000000.000100", "checkout pods keep restarting", "alice",
        "analyzer", started_at=T0,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


async def test_events_come_back_equal_and_in_order(store: Store) -> None:
    await store.create(record(), engine="react")
    log = one_of_each()
    for event in log:
        await store.append_event("inv1", event)
    assert list(await store.events("inv1")) == log
    stored = await store.investigation("inv1")
    assert (stored.events, stored.step, stored.status) == (len(log), 3, "running")
    assert (stored.outcome, stored.engine, stored.model) == ("diagnosed", "react", "analyzer")


async def test_logs_of_concurrent_investigations_do_not_mix(store: Store) -> None:
    for name in ("a", "b"):
        await store.create(record(name, thread_ts=name))

    async def write(name: str) -> None:
        for step in range(1, 16):
            await store.append_event(name, ThoughtRecorded(name, step, f"{name}{step}", at(step)))

    await asyncio.gather(write("a"), write("b"))
    for name in ("a", "b"):
        texts = [e.text for e in await store.events(name) if isinstance(e, ThoughtRecorded)]
        assert texts == [f"{name}{step}" for step in range(1, 16)]


async def test_fifty_investigations_starting_at_once_all_get_recorded(store: Store) -> None:
    """A burst of mentions: every run creates its record and appends its events at once.
    On SQLite the writers take turns in the process instead of racing for the file's lock
    (which, under load, ran past the busy timeout: "database is locked")."""
    names = [f"burst{i:02d}" for i in range(50)]

    async def run(name: str) -> None:
        await store.create(record(name, thread_ts=name))
        for step in range(1, 11):
            await store.append_event(name, ThoughtRecorded(name, step, f"{name}/{step}", at(step)))

    await asyncio.gather(*(run(name) for name in names))
    for name in names:
        texts = [e.text for e in await store.events(name) if isinstance(e, ThoughtRecorded)]
        assert texts == [f"{name}/{step}" for step in range(1, 11)]


async def test_an_append_that_fails_leaves_no_trace(store: Store) -> None:
    await store.create(record())
    await store.append_event("inv1", ThoughtRecorded("inv1", 1, "one", at(1)))
    # Occupy the next sequence number behind the store's back: the insert must then fail,
    # and the counter and step it moved in the same transaction must move back.
    async with store._db.begin() as conn:
        await conn.execute(
            events_table.insert().values(
                investigation_id="inv1", seq=2, kind="thought", step=9, payload={}
            )
        )
    with pytest.raises(StoreError):
        await store.append_event("inv1", ThoughtRecorded("inv1", 5, "two", at(2)))
    stored = await store.investigation("inv1")
    assert (stored.events, stored.step) == (1, 1)


async def test_appending_to_an_unknown_investigation_is_refused(store: Store) -> None:
    with pytest.raises(UnknownInvestigationError):
        await store.append_event("nope", ThoughtRecorded("nope", 1, "x", at(1)))
    assert await store.events("nope") == ()


async def test_finish_records_status_diagnosis_and_end_together(store: Store) -> None:
    await store.create(record())
    before = datetime.now(UTC)
    await store.finish("inv1", "done", DIAGNOSIS)
    reopened = await Store.open(store.url)
    try:
        stored = await reopened.investigation("inv1")
    finally:
        await reopened.close()
    assert stored.status == "done" and stored.diagnosis == DIAGNOSIS
    assert stored.ended_at is not None and stored.ended_at >= before
    assert await store.unfinished() == []
    with pytest.raises(UnknownInvestigationError):
        await store.finish("nope", "done", DIAGNOSIS)


async def test_unfinished_lists_what_to_resume_oldest_first(store: Store) -> None:
    await store.create(record("new", thread_ts="2", started_at=at(60)))
    await store.create(record("old", thread_ts="1"))
    await store.create(record("over", thread_ts="3"))
    await store.set_status("new", "waiting")
    await store.finish("over", "stopped", None)
    assert [i.id for i in await store.unfinished()] == ["old", "new"]
    assert (await store.get("new")).outcome == "running"  # type: ignore[union-attr]


async def test_a_new_attempt_reopens_a_finished_investigation(store: Store) -> None:
    await store.create(record())
    await store.finish("inv1", "done", DIAGNOSIS)
    await store.append_event(
        "inv1", InvestigationStarted("inv1", "retry", "gpt-4o", "reflexion", 12, at=at(9))
    )
    stored = await store.investigation("inv1")
    assert (stored.status, stored.engine, stored.model, stored.ended_at) == (
        "running", "reflexion", "gpt-4o", None
    )


async def test_history_is_newest_first_and_limited(store: Store) -> None:
    for n in range(5):
        await store.create(record(f"i{n}", thread_ts=str(n), started_at=at(n)))
    assert [i.id for i in await store.history(3)] == ["i4", "i3", "i2"]
    assert len(await store.history(50)) == 5


async def test_constraints_and_feedback_are_kept_in_order(store: Store) -> None:
    await store.create(record())
    await store.add_constraint(
        "inv1", Constraint("exclude_namespace", "stay out of kube-system",
                              "kube-system", "alice"), at=at(2)
    )
    await store.add_constraint("inv1", Constraint("stop", "stop", author="bob"), at=at(3))
    kinds = [(c.kind, c.value, c.author) for c in await store.constraints("inv1")]
    assert kinds == [("exclude_namespace", "kube-system", "alice"), ("stop", "", "bob")]
    given = [
        Feedback("inv1", "bob", "verdict", "wrong", at(10)),
        Feedback("inv1", "bob", "reply", "wrong, it was the connection pool of orders-db", at(11)),
        Feedback("inv1", "carol", "verdict", "correct", at(12)),
    ]
    for item in given:
        await store.add_feedback(item)
    assert list(await store.feedback("inv1")) == given
    with pytest.raises(CodecError):
        await store.add_feedback(Feedback("inv1", "bob", "verdict", "maybe", at(13)))
    with pytest.raises(UnknownInvestigationError):
        await store.add_feedback(Feedback("nope", "bob", "verdict", "wrong", at(13)))


async def test_it_behaves_like_the_bots_memory_store(store: Store) -> None:
    """The same calls through the bot's protocol give the same answers as MemoryStore."""
    memory = MemoryStore()
    results = []
    for target in (memory, store):
        await target.create(record(thread_ts=""))
        assert await target.find_by_thread("C042", "1700000000.000100") is None
        await target.set_thread("inv1", "1700000000.000100")
        for event in one_of_each():
            await target.append_event("inv1", event)
        await target.finish("inv1", "done", DIAGNOSIS)
        await target.add_feedback(Feedback("inv1", "bob", "verdict", "correct", at(20)))
        found = await target.find_by_thread("C042", "1700000000.000100")
        assert found is not None
        results.append(
            (
                replace(found, ended_at=None),
                list(await target.events("inv1")),
                list(await target.feedback("inv1")),
                await target.get("unknown"),
            )
        )
    assert results[0] == results[1]


async def test_timestamps_are_aware_utc_on_both_backends(store: Store) -> None:
    await store.create(record())
    stored = await store.investigation("inv1")
    assert stored.created_at == T0 and stored.created_at.tzinfo is not None
    assert stored.created_at.utcoffset().total_seconds() == 0  # type: ignore[union-attr]


async def test_an_unreachable_database_is_one_clear_error() -> None:
    store = await Store.open("postgresql://triage:s3cret@127.0.0.1:1/triage")
    try:
        with pytest.raises(StoreError) as caught:
            await store.migrate()
    finally:
        await store.close()
    message = str(caught.value)
    assert "127.0.0.1:1" in message and "s3cret" not in message and "\n" not in message


async def test_rows_are_deleted_with_their_investigation(store: Store) -> None:
    await store.create(record())
    await store.append_event("inv1", ThoughtRecorded("inv1", 1, "x", at(1)))
    lesson = await store.add_lesson("x", source_investigation="inv1")
    async with store._db.begin() as conn:
        await conn.execute(sa.text("DELETE FROM investigations WHERE id = 'inv1'"))
    assert await store.events("inv1") == ()
    assert (await store.lesson(lesson.id)).source_investigation is None
