"""Killing a writer at any point loses at most the event in flight, never the log."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import sqlalchemy as sa

from bot.store import InvestigationRecord, Store
from tests.store._appender import event

ROOT = Path(__file__).resolve().parents[2]
ACKS_BEFORE_KILL = 25
TIMEOUT = 60.0


def append_until_killed(url: str, investigation_id: str) -> int:
    """Run the appender, SIGKILL it mid-stream, return the last acknowledged event number."""
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.store._appender", url, investigation_id],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    acknowledged = 0
    deadline = time.monotonic() + TIMEOUT
    try:
        assert child.stdout is not None
        while acknowledged < ACKS_BEFORE_KILL:
            line = child.stdout.readline()
            assert line, f"the appender died: {child.stderr.read() if child.stderr else ''}"
            acknowledged = int(line)
            assert time.monotonic() < deadline, "the appender is too slow"
        # Let it run on a little, so the kill lands at an arbitrary point of an append.
        time.sleep(random.uniform(0.0, 0.03))
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
        assert child.stdout is not None and child.stderr is not None
        tail = child.stdout.read().split()
        child.stdout.close()
        child.stderr.close()
    return int(tail[-1]) if tail else acknowledged


async def check_log(store: Store, investigation_id: str, acknowledged: int) -> int:
    log = list(await store.events(investigation_id))
    assert len(log) >= acknowledged  # nothing that was acknowledged is lost
    assert len(log) <= acknowledged + 1  # at most the event in flight got in unannounced
    assert log == [event(n, investigation_id) for n in range(1, len(log) + 1)]
    stored = await store.investigation(investigation_id)
    # The counter and step moved in the same transactions as the events, no further.
    assert stored.events == len(log)
    assert stored.step == getattr(log[-1], "step", 0)
    return len(log)


async def test_a_killed_writer_leaves_a_consistent_prefix(db_url: str) -> None:
    store = await Store.open(db_url)
    await store.create(InvestigationRecord("crash", "", "", "crash test", "tester", "analyzer"))
    await store.close()
    acknowledged = await asyncio.to_thread(append_until_killed, db_url, "crash")
    store = await Store.open(db_url)
    try:
        await store.migrate()  # what the bot does at start: the schema must be intact
        if store.dialect == "sqlite":
            async with store._db.connect() as conn:
                result = await conn.exec_driver_sql("PRAGMA integrity_check")
                assert result.scalar() == "ok"
        kept = await check_log(store, "crash", acknowledged)
        assert [i.id for i in await store.unfinished()] == ["crash"]  # to be resumed
        # The log goes on from where it stopped.
        await store.append_event("crash", event(kept + 1, "crash"))
        await check_log(store, "crash", kept + 1)
        async with store._db.connect() as conn:
            count = await conn.scalar(sa.text("SELECT count(*) FROM events"))
        assert count == kept + 1
    finally:
        await store.close()
