"""Migrations: idempotent, safe to run from two processes at once, and true to schema.py."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.operations import Operations
from alembic.runtime.migration import MigrationContext

from bot.store import Store, _migrate
from bot.store._migrate import VERSION_TABLE, alembic_config, head_revision
from bot.store.schema import metadata

TABLES = {"investigations", "events", "constraints", "feedback", "lessons", "event_claims",
          "admission_queue", "workspace_surfaces", "leases", "inbox"}
# What full-text search adds per backend, deliberately absent from schema.py.
SEARCH_OBJECTS = {"lessons_fts", "search", "ix_lessons_search", VERSION_TABLE}


def _tables(connection: sa.Connection) -> set[str]:
    return set(sa.inspect(connection).get_table_names())


async def test_migrate_creates_the_schema_and_is_idempotent(fresh_db_url: str) -> None:
    store = await Store.open(fresh_db_url)
    try:
        assert await store.revision() is None
        await store.migrate()
        assert await store.revision() == head_revision() == "0008"
        await store.migrate()  # again: nothing to do, nothing breaks
        assert await store.revision() == head_revision()
        async with store._db.connect() as conn:
            assert await conn.run_sync(_tables) >= TABLES
    finally:
        await store.close()


async def test_two_processes_starting_at_once_both_end_up_migrated(fresh_db_url: str) -> None:
    stores = [await Store.open(fresh_db_url) for _ in range(4)]
    try:
        await asyncio.gather(*(store.migrate() for store in stores))
        assert [await store.revision() for store in stores] == [head_revision()] * 4
        if stores[0].dialect == "sqlite":  # the file itself is in WAL mode from now on
            async with stores[0]._db.connect() as conn:
                mode = (await conn.exec_driver_sql("PRAGMA journal_mode")).scalar()
            assert mode == "wal"
    finally:
        for store in stores:
            await store.close()


def _differences(connection: sa.Connection) -> list[Any]:
    def include(obj: Any, name: str | None, type_: str, reflected: bool, compare_to: Any) -> bool:
        return not (name or "").startswith(tuple(SEARCH_OBJECTS))

    context = MigrationContext.configure(
        connection, opts={"include_object": include, "compare_type": True}
    )
    return list(compare_metadata(context, metadata))


async def test_the_migrations_build_exactly_the_tables_the_queries_expect(db_url: str) -> None:
    store = await Store.open(db_url)
    try:
        async with store._db.connect() as conn:
            assert await conn.run_sync(_differences) == []
    finally:
        await store.close()


def _down_and_up(connection: sa.Connection) -> set[str]:
    config = alembic_config()
    config.attributes["connection"] = connection
    command.downgrade(config, "base")
    left = _tables(connection)
    command.upgrade(config, "head")
    return left


async def test_migrations_can_be_reversed_and_replayed(fresh_db_url: str) -> None:
    store = await Store.open(fresh_db_url)
    try:
        await store.migrate()
        await store.add_lesson("pool exhausted", services=["orders-db"])
        async with store._writer.begin() as conn:
            left = await conn.run_sync(_down_and_up)
        assert not (left & (TABLES | {"lessons_fts"}))
        await store.add_lesson("pool exhausted again", services=["orders-db"])
        assert [lesson.text for lesson in await store.search_lessons("orders-db")] == [
            "pool exhausted again"
        ]
    finally:
        await store.close()


async def test_a_migration_that_fails_half_way_leaves_nothing_behind(
    fresh_db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Migrations are one transaction on both backends (SQLite's DDL included)."""
    original = Operations.execute

    def failing(self: Operations, sqltext: Any, **kwargs: Any) -> Any:
        if "lessons_fts_update" in str(sqltext) or "ix_lessons_search" in str(sqltext):
            raise RuntimeError("killed during the last statement")
        return original(self, sqltext, **kwargs)

    monkeypatch.setattr(Operations, "execute", failing)
    store = await Store.open(fresh_db_url)
    try:
        with pytest.raises(RuntimeError):
            await store.migrate()
        async with store._db.connect() as conn:
            assert await conn.run_sync(_tables) == set()
        monkeypatch.setattr(Operations, "execute", original)
        await store.migrate()
        assert await store.revision() == head_revision()
    finally:
        await store.close()


async def test_a_database_of_the_first_schema_upgrades_with_its_investigations(
    fresh_db_url: str,
) -> None:
    """A bot upgraded mid-incident: the unfinished run survives the migration, without a
    status message on record (it gets a new one when resumed), and can keep one from then;
    it was the bot's (origin "slack"), as every investigation before `triage investigate`
    recorded its own."""
    store = await Store.open(fresh_db_url)
    try:
        await _migrate.upgrade(store._writer, "0001")
        async with store._writer.begin() as conn:  # the row as the code of that time wrote it
            await conn.execute(sa.text(
                "INSERT INTO investigations (id, incident, channel, thread_ts, requested_by, "
                "model, engine, status, created_at, updated_at) VALUES ('old1', "
                "'checkout 502s', 'C042', '1700000000.000100', 'alice', 'analyzer', '', "
                "'running', :now, :now)"), {"now": datetime(2026, 11, 30, 10, 0)})
        await store.migrate()
        [stored] = await store.unfinished()
        assert (stored.id, stored.status_ts, stored.origin) == ("old1", None, "slack")
        await store.set_status_message("old1", "1700000001.000200")
        [stored] = await store.unfinished()
        assert stored.status_ts == "1700000001.000200"
    finally:
        await store.close()
