"""The store: investigations, their event log, constraints, feedback and lessons.

One code path for SQLite and PostgreSQL (SQLAlchemy Core over aiosqlite or asyncpg); only
lesson search differs (`_search.py`). Every write is one transaction, so a process killed at
any point leaves the database as it was before the write in flight or after it, never in
between: appending an event allocates its sequence number, moves the investigation's step
and status, and inserts the event together. That is what makes the log trustworthy enough
to resume an investigation from.

The store satisfies the bot's narrow `bot.feedback.Store` protocol (checked by mypy below),
and adds what the command line, the resume at start and Reflexion's lessons need.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

import sqlalchemy as sa
from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import create_async_engine

from bot.store import _rows
from bot.store._base import guarded, now, require_investigation
from bot.store._sqlite import configure_sqlite, ensure_wal
from bot.store.codec import decode_event, encode_event
from bot.store.errors import StoreError, UnknownInvestigationError
from bot.store.figures import FiguresMixin
from bot.store.fleet import FleetMixin
from bot.store.inbox import InboxMixin
from bot.store.leases import LeasesMixin, fence
from bot.store.lessons import LessonsMixin
from bot.store.records import (
    Feedback,
    InvestigationDetails,
    InvestigationRecord,
    StoredConstraint,
    StoredInvestigation,
)
from bot.store.schema import ORIGINS, UNFINISHED_STATUSES, investigations
from bot.store.schema import constraints as constraints_table
from bot.store.schema import events as events_table
from bot.store.schema import feedback as feedback_table
from bot.store.url import resolve_url, sqlite_file
from engines.constraints import Constraint
from engines.diagnosis import Diagnosis
from engines.events import Event, InvestigationStarted, InvestigationStopped

if TYPE_CHECKING:
    from bot.feedback import Outcome
    from bot.feedback import Store as StoreProtocol
    from bot.inbox_items import InboxStore


class Store(LessonsMixin, FleetMixin, LeasesMixin, FiguresMixin, InboxMixin):
    """Everything Triage remembers. Open with `await Store.open(url)`, then `await migrate()`."""

    @classmethod
    async def open(cls, url: str | URL | None = None) -> Store:
        """Connect lazily to `url`, `TRIAGE_DATABASE_URL`, or the default SQLite file."""
        resolved = resolve_url(url)
        path = sqlite_file(resolved)
        if path is not None:
            try:
                await asyncio.to_thread(path.parent.mkdir, parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create {path.parent}: {exc}") from exc
        if resolved.get_backend_name() == "sqlite":
            engine = create_async_engine(resolved)
            configure_sqlite(engine)
        else:
            # Replicas hold connections across idle hours: check them before use.
            engine = create_async_engine(resolved, pool_pre_ping=True)
        return cls(engine)

    async def close(self) -> None:
        await self._db.dispose()

    async def __aenter__(self) -> Store:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @guarded
    async def migrate(self) -> None:
        """Create or upgrade the schema to the newest revision; a no-op when it is there."""
        from bot.store import _migrate  # Alembic takes ~0.4 s to import: only here

        if self.dialect == "sqlite":
            await ensure_wal(self._db)
        await _migrate.upgrade(self._writer)

    @guarded
    async def revision(self) -> str | None:
        """The schema revision of the database (None before `migrate`)."""
        from bot.store import _migrate

        return await _migrate.current_revision(self._db)

    # --- investigations -------------------------------------------------------------------

    @guarded
    async def create(
        self, record: InvestigationRecord, *, engine: str = "", origin: str = "slack"
    ) -> None:
        """Record a new investigation (the bot's `InvestigationRecord`), status "running".
        `origin` says who started it: "slack" (the bot) or "cli" (`triage investigate`)."""
        if origin not in ORIGINS:
            raise StoreError(f"unknown origin {origin!r}: one of {', '.join(ORIGINS)}")
        async with self._write() as conn:
            await conn.execute(
                investigations.insert().values(
                    id=record.id,
                    incident=record.text,
                    channel=record.channel or None,
                    thread_ts=record.thread_ts or None,
                    requested_by=record.requested_by,
                    model=record.model,
                    engine=engine,
                    origin=origin,
                    status=record.outcome,
                    created_at=record.started_at,
                    updated_at=record.started_at,
                    ended_at=record.ended_at,
                    diagnosis=_dump(record.diagnosis),
                )
            )

    # Every write of a run below takes `generation`: the lease its writer holds
    # (leases.py). A stale one is refused with LeaseLostError; None writes unfenced.

    @guarded
    async def set_thread(
        self, investigation_id: str, thread_ts: str, *, generation: int | None = None
    ) -> None:
        await self._update(investigation_id, {"thread_ts": thread_ts or None}, generation)

    @guarded
    async def set_status_message(
        self, investigation_id: str, ts: str, *, generation: int | None = None
    ) -> None:
        """Remember the thread's status message, so a resumed run edits it rather than
        posting a second one."""
        await self._update(investigation_id, {"status_ts": ts or None}, generation)

    @guarded
    async def set_status(
        self, investigation_id: str, status: Literal["running", "waiting"], *,
        generation: int | None = None,
    ) -> None:
        """Mark an investigation waiting for a human (an approval) or running again."""
        await self._update(investigation_id, {"status": status}, generation)

    @guarded
    async def append_event(
        self, investigation_id: str, event: Event, *, generation: int | None = None
    ) -> None:
        """Append one event to the log; its sequence number is the next of the investigation.

        One transaction: the investigation's counter, step and status move with the event,
        or neither is written. Cheap enough to call for every event the engine emits.
        """
        payload = encode_event(event)  # before the transaction: a codec error writes nothing
        step = getattr(event, "step", None)
        values: dict[str, Any] = {"last_seq": investigations.c.last_seq + 1, "updated_at": now()}
        if isinstance(step, int):
            values["step"] = step
        if isinstance(event, InvestigationStarted):
            # A new attempt (Reflexion's retry after a human said Wrong) reopens it.
            values.update(
                model=event.model, engine=event.engine, status="running", ended_at=None
            )
        elif isinstance(event, InvestigationStopped):
            values.update(outcome=event.reason, outcome_detail=event.detail)
        bump = (
            investigations.update()
            .where(investigations.c.id == investigation_id)
            .values(**values)
            .returning(investigations.c.last_seq)
        )
        async with self._write() as conn:
            await fence(conn, investigation_id, generation)
            seq = (await conn.execute(bump)).scalar_one_or_none()
            if seq is None:
                raise UnknownInvestigationError(investigation_id)
            await conn.execute(
                events_table.insert().values(
                    investigation_id=investigation_id,
                    seq=seq,
                    kind=event.kind,
                    step=step if isinstance(step, int) else None,
                    payload=payload,
                )
            )

    @guarded
    async def events(self, investigation_id: str) -> Sequence[Event]:
        """The log in the order it was written; empty for an unknown id."""
        query = (
            sa.select(events_table.c.payload)
            .where(events_table.c.investigation_id == investigation_id)
            .order_by(events_table.c.seq)
        )
        async with self._db.connect() as conn:
            payloads = (await conn.execute(query)).scalars().all()
        return tuple(decode_event(payload) for payload in payloads)

    @guarded
    async def finish(
        self,
        investigation_id: str,
        outcome: Outcome,
        diagnosis: Diagnosis | None,
        *,
        at: datetime | None = None,
        generation: int | None = None,
    ) -> None:
        """Record how it ended: the status, the diagnosis and the time, all at once."""
        await self._update(
            investigation_id,
            {"status": outcome, "diagnosis": _dump(diagnosis), "ended_at": at or now()},
            generation,
        )

    @guarded
    async def get(self, investigation_id: str) -> InvestigationRecord | None:
        found = await self._select_one(investigations.c.id == investigation_id)
        return found.record() if found else None

    @guarded
    async def investigation(self, investigation_id: str) -> StoredInvestigation:
        """Everything the row says; UnknownInvestigationError when there is none."""
        found = await self._select_one(investigations.c.id == investigation_id)
        if found is None:
            raise UnknownInvestigationError(investigation_id)
        return found

    @guarded
    async def find_by_thread(self, channel: str, thread_ts: str) -> InvestigationRecord | None:
        """The newest investigation of a Slack thread."""
        found = await self._select_one(
            (investigations.c.channel == channel) & (investigations.c.thread_ts == thread_ts)
        )
        return found.record() if found else None

    @guarded
    async def unfinished(self) -> list[StoredInvestigation]:
        """Investigations a crash or a restart interrupted, oldest first: to resume at start."""
        query = (
            sa.select(investigations)
            .where(investigations.c.status.in_(UNFINISHED_STATUSES))
            .order_by(investigations.c.created_at, investigations.c.id)
        )
        async with self._db.connect() as conn:
            rows = (await conn.execute(query)).mappings().all()
        return [_rows.investigation(row) for row in rows]

    @guarded
    async def history(self, limit: int = 20) -> list[StoredInvestigation]:
        """The newest investigations first."""
        query = (
            sa.select(investigations)
            .order_by(investigations.c.created_at.desc(), investigations.c.id.desc())
            .limit(max(limit, 0))
        )
        async with self._db.connect() as conn:
            rows = (await conn.execute(query)).mappings().all()
        return [_rows.investigation(row) for row in rows]

    async def details(self, investigation_id: str) -> InvestigationDetails:
        """The row, the log, the constraints and the feedback of one investigation."""
        found = await self.investigation(investigation_id)
        return InvestigationDetails(
            found,
            await self.events(investigation_id),
            await self.constraints(investigation_id),
            await self.feedback(investigation_id),
        )

    # --- what humans said -----------------------------------------------------------------

    @guarded
    async def add_constraint(
        self, investigation_id: str, constraint: Constraint, *, at: datetime | None = None
    ) -> None:
        """Remember a steering reply (as read by `engines.steering`) when it was given."""
        async with self._write() as conn:
            await require_investigation(conn, investigation_id)
            await conn.execute(
                constraints_table.insert().values(
                    investigation_id=investigation_id,
                    kind=constraint.kind,
                    text=constraint.text,
                    value=constraint.value,
                    author=constraint.author,
                    at=at or now(),
                )
            )

    @guarded
    async def constraints(self, investigation_id: str) -> Sequence[StoredConstraint]:
        query = (
            sa.select(constraints_table)
            .where(constraints_table.c.investigation_id == investigation_id)
            .order_by(constraints_table.c.at, constraints_table.c.id)
        )
        async with self._db.connect() as conn:
            rows = (await conn.execute(query)).mappings().all()
        return tuple(_rows.constraint(row) for row in rows)

    @guarded
    async def add_feedback(self, item: Feedback) -> None:
        """A Correct/Wrong verdict or a reply after the end."""
        values = _rows.feedback_values(item)
        async with self._write() as conn:
            await require_investigation(conn, item.investigation_id)
            await conn.execute(
                feedback_table.insert().values(investigation_id=item.investigation_id, **values)
            )

    @guarded
    async def feedback(self, investigation_id: str) -> Sequence[Feedback]:
        query = (
            sa.select(feedback_table)
            .where(feedback_table.c.investigation_id == investigation_id)
            .order_by(feedback_table.c.at, feedback_table.c.id)
        )
        async with self._db.connect() as conn:
            rows = (await conn.execute(query)).mappings().all()
        return tuple(_rows.feedback(row) for row in rows)

    # --- helpers --------------------------------------------------------------------------

    async def _update(
        self, investigation_id: str, values: dict[str, Any], generation: int | None = None
    ) -> None:
        values.setdefault("updated_at", now())
        statement = (
            investigations.update()
            .where(investigations.c.id == investigation_id)
            .values(**values)
        )
        async with self._write() as conn:
            await fence(conn, investigation_id, generation)
            result = await conn.execute(statement)
            if result.rowcount == 0:
                raise UnknownInvestigationError(investigation_id)

    async def _select_one(self, where: sa.ColumnElement[bool]) -> StoredInvestigation | None:
        query = (
            sa.select(investigations)
            .where(where)
            .order_by(investigations.c.created_at.desc())
            .limit(1)
        )
        async with self._db.connect() as conn:
            row = (await conn.execute(query)).mappings().first()
        return _rows.investigation(row) if row is not None else None


@asynccontextmanager
async def opened(url: str | URL | None = None) -> AsyncIterator[Store]:
    """A migrated store for one command: open, migrate, use, close."""
    store = await Store.open(url)
    try:
        await store.migrate()
        yield store
    finally:
        await store.close()


def _dump(diagnosis: Diagnosis | None) -> dict[str, Any] | None:
    return diagnosis.model_dump(mode="json") if diagnosis is not None else None


if TYPE_CHECKING:

    def _satisfies_the_bots_protocol(store: Store) -> StoreProtocol:
        return store

    def _keeps_an_inbox(store: Store) -> InboxStore:
        return store
