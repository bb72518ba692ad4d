"""Every store test runs against SQLite (a temporary file) and a real PostgreSQL.

PostgreSQL comes from the shared test-server infrastructure: the session fixture
`postgres_server` of `tests/live/conftest.py`, imported here, starts the throwaway cluster
of `tests/services/postgres.py` once. Without Debian's `postgresql` package it skips the
PostgreSQL half with one line saying how to get it, except under CI=true, where it fails.

Creating a database costs a few hundred milliseconds, so most tests share one migrated
database that is emptied before each of them (`db_url`); the migration tests, which need a
database nobody has touched, get a new one each (`fresh_db_url`).
"""

from __future__ import annotations

import asyncio
import itertools
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from bot.store import Store
from tests._ci import in_ci
from tests.live.conftest import postgres_server
from tests.services._process import NotProvisionedError
from tests.services.postgres import PostgresServer

__all__ = ["postgres_server"]  # a fixture: pytest finds it by name in this module

BACKENDS = ("sqlite", "postgresql")
_databases = itertools.count(1)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Without PostgreSQL (and outside CI), skip its half before setup, folded into one line
    per file, instead of one line per test."""
    if in_ci():
        return  # the fixture fails instead
    try:
        PostgresServer.check_installed()
    except NotProvisionedError as exc:
        skip = pytest.mark.skip(reason=f"PostgreSQL store tests: {exc}")
        for item in items:
            params = getattr(item, "callspec", None)
            chosen = params.params if params is not None else {}
            if "postgresql" in (chosen.get("db_url"), chosen.get("fresh_db_url")):
                item.add_marker(skip)


def new_postgres_database(server: PostgresServer) -> str:
    name = f"store_{os.getpid()}_{next(_databases)}"
    server.psql(f"CREATE DATABASE {name}", database="postgres")
    return server.dsn.rsplit("/", 1)[0] + f"/{name}"


async def _migrated(url: str) -> None:
    store = await Store.open(url)
    try:
        await store.migrate()
    finally:
        await store.close()


async def _emptied(url: str) -> None:
    """Delete every row (investigations cascade to their events, constraints, feedback)."""
    store = await Store.open(url)
    try:
        async with store._db.begin() as conn:
            await conn.execute(sa.text("DELETE FROM investigations"))
            await conn.execute(sa.text("DELETE FROM lessons"))
            await conn.execute(sa.text("DELETE FROM event_claims"))
            await conn.execute(sa.text("DELETE FROM admission_queue"))
            await conn.execute(sa.text("DELETE FROM workspace_surfaces"))
            await conn.execute(sa.text("DELETE FROM inbox"))
    finally:
        await store.close()


@pytest.fixture(scope="session")
def shared_postgres_url(postgres_server: PostgresServer) -> str:
    """One migrated database for the tests that only need an empty one."""
    url = new_postgres_database(postgres_server)
    asyncio.run(_migrated(url))
    return url


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated SQLite file, copied for each test: cheaper than migrating each time."""
    path = tmp_path_factory.mktemp("template") / "triage.db"
    asyncio.run(_migrated(str(path)))
    return path


@pytest.fixture(params=BACKENDS)
def fresh_db_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A URL of a database nobody has touched, not even migrated, on each backend."""
    if request.param == "sqlite":
        return str(tmp_path_factory.mktemp("store") / "triage.db")
    return new_postgres_database(request.getfixturevalue("postgres_server"))


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A URL of a migrated, empty database on each backend."""
    if request.param == "sqlite":
        path = tmp_path_factory.mktemp("store") / "triage.db"
        shutil.copyfile(request.getfixturevalue("sqlite_template"), path)
        return str(path)
    url: str = request.getfixturevalue("shared_postgres_url")
    asyncio.run(_emptied(url))
    return url


@pytest.fixture
async def store(db_url: str) -> AsyncIterator[Store]:
    """A migrated, empty store."""
    opened = await Store.open(db_url)
    try:
        yield opened
    finally:
        await opened.close()
