"""What every part of the store shares: the engine, its name in messages, the error guard."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator, Callable, Coroutine
from datetime import UTC, datetime
from typing import Any, Concatenate, ParamSpec, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import URL
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.store._sqlite import WRITE
from bot.store.errors import StoreError, UnknownInvestigationError
from bot.store.schema import investigations
from bot.store.url import describe

P = ParamSpec("P")
T = TypeVar("T")
S = TypeVar("S", bound="StoreBase")


def now() -> datetime:
    """The store's clock: the application's, in UTC, so both backends agree on it."""
    return datetime.now(UTC)


class StoreBase:
    """An open async engine and how to name it without its password."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._db = engine
        # Writes take SQLite's write lock when they begin (see _sqlite.py); on PostgreSQL
        # the option means nothing and this is the same engine.
        self._writer = engine.execution_options(**WRITE)
        self._write_lock = asyncio.Lock() if engine.dialect.name == "sqlite" else None
        self.url: URL = engine.url
        self.where = describe(engine.url)

    @contextlib.asynccontextmanager
    async def _write(self) -> AsyncIterator[AsyncConnection]:
        """A write transaction. On SQLite, one at a time in this process: the file has one
        write lock, and connections racing for it through the busy timeout starve each
        other under load (50 investigations starting at once met "database is locked"
        after the 10 s timeout). Queued on an asyncio lock they take turns in order; another
        process (the command line) still waits on the busy timeout."""
        if self._write_lock is None:
            async with self._writer.begin() as conn:
                yield conn
            return
        async with self._write_lock, self._writer.begin() as conn:
            yield conn

    @property
    def dialect(self) -> str:
        """"sqlite" or "postgresql"."""
        return self._db.dialect.name


def guarded(
    method: Callable[Concatenate[S, P], Coroutine[Any, Any, T]],
) -> Callable[Concatenate[S, P], Coroutine[Any, Any, T]]:
    """Turn driver failures into one-line StoreErrors naming the database (not its password).

    The bot and the command line catch `TriageError`; a raw asyncpg or sqlite3 exception
    would reach them as a traceback instead of a sentence.
    """

    @functools.wraps(method)
    async def wrapper(self: S, *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await method(self, *args, **kwargs)
        except DBAPIError as exc:
            reason = str(exc.orig).strip().splitlines()[0] if exc.orig else str(exc)
            raise StoreError(f"database {self.where}: {reason}") from exc
        except OSError as exc:  # asyncpg's connection refused and timeouts
            raise StoreError(f"database {self.where}: {exc}") from exc

    return wrapper


async def require_investigation(conn: AsyncConnection, investigation_id: str) -> None:
    """Fail the transaction cleanly when the investigation does not exist."""
    query = sa.select(investigations.c.id).where(investigations.c.id == investigation_id)
    if (await conn.execute(query)).first() is None:
        raise UnknownInvestigationError(investigation_id)
