"""SQLite settings that make one file safe for a bot and a command line at once.

WAL lets `triage history` read while the bot writes; `synchronous=NORMAL` in WAL mode keeps
every committed transaction through a process crash (only a power cut can lose the last
ones), which is the durability the event log promises; a busy timeout makes a second writer
wait for the lock instead of failing; foreign keys are off in SQLite unless asked for.

Python's sqlite3 driver begins transactions on its own, lazily, and only before DML: a
migration's CREATE TABLEs would run outside any transaction, and a write transaction that
reads first can fail with "database is locked" when it tries to write. So the driver's
transaction handling is switched off and the store says BEGIN itself: DEFERRED for reads,
IMMEDIATE (take the write lock now, waiting up to the busy timeout) for writes and
migrations, which are then atomic like on PostgreSQL.
"""

from __future__ import annotations

import asyncio
import sqlite3
from typing import Any

from sqlalchemy import Connection, event
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine
from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential

BUSY_TIMEOUT_MS = 10_000
BEGIN_OPTION = "sqlite_begin"
WRITE = {BEGIN_OPTION: "IMMEDIATE"}
# Per connection. WAL is not among them: it is a property of the file, set once by
# `ensure_wal`, because switching to it needs an exclusive lock that SQLite may refuse at
# once, without its busy timeout, while another process is migrating the same new file.
PRAGMAS = (
    f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}",
    "PRAGMA synchronous=NORMAL",
    "PRAGMA foreign_keys=ON",
)
WAL_ATTEMPTS = 40


def _on_connect(dbapi_connection: Any, connection_record: Any) -> None:
    dbapi_connection.isolation_level = None  # the driver emits no BEGIN: `_on_begin` does
    cursor = dbapi_connection.cursor()
    try:
        for pragma in PRAGMAS:
            cursor.execute(pragma)
    finally:
        cursor.close()


def _on_begin(connection: Connection) -> None:
    mode = connection.get_execution_options().get(BEGIN_OPTION, "DEFERRED")
    connection.exec_driver_sql(f"BEGIN {mode}")


def _locked(exc: BaseException) -> bool:
    return isinstance(exc, OperationalError | sqlite3.OperationalError) and "locked" in str(exc)


async def ensure_wal(engine: AsyncEngine) -> None:
    """Switch the file to WAL (a no-op once it is), retrying while another process holds
    the lock: up to about the busy timeout, without blocking the event loop."""
    retrying = AsyncRetrying(stop=stop_after_attempt(WAL_ATTEMPTS),
                             wait=wait_exponential(multiplier=0.02, max=0.5),
                             retry=retry_if_exception(_locked), sleep=asyncio.sleep,
                             reraise=True)
    async for attempt in retrying:
        with attempt:
            async with engine.connect() as conn:
                # On the driver's connection: outside any transaction, as SQLite requires.
                driver = (await conn.get_raw_connection()).driver_connection
                assert driver is not None
                await driver.execute("PRAGMA journal_mode=WAL")


def configure_sqlite(engine: AsyncEngine) -> None:
    """Apply the pragmas and explicit transactions to every connection of `engine`."""
    event.listen(engine.sync_engine, "connect", _on_connect)
    event.listen(engine.sync_engine, "begin", _on_begin)
