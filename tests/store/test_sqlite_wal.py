"""Switching a new SQLite file to WAL waits out another process's lock, and only that."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from bot.store import _sqlite
from bot.store._sqlite import WAL_ATTEMPTS, ensure_wal


class _Busy:
    """An engine whose first `failures` connections fail with `error`, then a real one."""

    def __init__(self, path: Path, failures: int, error: str) -> None:
        self.real = create_async_engine(f"sqlite+aiosqlite:///{path}")
        self.failures, self.error, self.tries = failures, error, 0

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[Any]:
        self.tries += 1
        if self.tries <= self.failures:
            raise sqlite3.OperationalError(self.error)
        async with self.real.connect() as conn:
            yield conn


@pytest.fixture
def pauses(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr(_sqlite.asyncio, "sleep", sleep)
    return slept


async def test_a_locked_file_is_tried_again_with_growing_pauses(tmp_path: Path,
                                                                pauses: list[float]) -> None:
    busy = _Busy(tmp_path / "t.db", failures=3, error="database is locked")
    await ensure_wal(busy)  # type: ignore[arg-type]
    assert busy.tries == 4 and pauses == [0.02, 0.04, 0.08]
    async with busy.real.connect() as conn:
        assert (await conn.execute(text("PRAGMA journal_mode"))).scalar() == "wal"
    await busy.real.dispose()


async def test_other_errors_fail_at_once_and_a_lock_that_stays_fails_in_the_end(
    tmp_path: Path, pauses: list[float]
) -> None:
    broken = _Busy(tmp_path / "t.db", failures=1, error="disk I/O error")
    with pytest.raises(sqlite3.OperationalError, match="disk I/O error"):
        await ensure_wal(broken)  # type: ignore[arg-type]
    assert broken.tries == 1 and pauses == []
    stuck = _Busy(tmp_path / "t.db", failures=WAL_ATTEMPTS, error="database is locked")
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        await ensure_wal(stuck)  # type: ignore[arg-type]
    assert stuck.tries == WAL_ATTEMPTS and max(pauses) == 0.5
    await asyncio.gather(broken.real.dispose(), stuck.real.dispose())
