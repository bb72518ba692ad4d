"""The inbox: events Slack delivered to one replica for an investigation another one runs.

Sending is an INSERT and, on PostgreSQL, a `pg_notify` in the same transaction, so the
notification goes out exactly when the row is visible (NOTIFY is delivered at commit).
Claiming is `UPDATE ... SET delivered_at WHERE delivered_at IS NULL RETURNING`: of two
claimers one gets each row back (PostgreSQL re-checks the WHERE after the other's commit;
SQLite has one writer), so an event is applied once. The notification carries only the
row's id: the row is the truth, and a missed notification costs a poll, never an event.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection, Mapping
from datetime import timedelta
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.inbox_items import INBOX_KINDS, InboxItem, InboxKind
from bot.store._base import StoreBase, guarded, now
from bot.store.errors import StoreError, UnknownInvestigationError
from bot.store.schema import UNFINISHED_STATUSES, inbox, investigations

log = logging.getLogger(__name__)

NOTIFY_CHANNEL = "triage_inbox"
# Delivered events are kept a day (what a replica received, for `triage show`-style
# debugging), then deleted, at most once a minute, by whoever claims.
KEEP_DELIVERED = timedelta(days=1)
PURGE_EVERY_SECONDS = 60.0


class PostgresListening:
    """One dedicated connection held out of the pool with LISTEN on the inbox's channel."""

    def __init__(self, connection: AsyncConnection, driver: Any,
                 callback: Callable[..., None]) -> None:
        self._connection = connection
        self._driver = driver  # asyncpg.Connection
        self._callback = callback

    @property
    def alive(self) -> bool:
        return not self._driver.is_closed()

    async def close(self) -> None:
        try:
            if self.alive:
                await self._driver.remove_listener(NOTIFY_CHANNEL, self._callback)
        except Exception:  # a broken connection: it is discarded below all the same
            log.info("could not UNLISTEN the inbox channel", exc_info=True)
        # Never back into the pool: the next user would not expect a LISTEN on it.
        await self._connection.invalidate()
        await self._connection.close()


class InboxMixin(StoreBase):
    """The store's half of bot/investigations/inbox.py."""

    _inbox_purged_at = 0.0

    @guarded
    async def send_to_owner(self, investigation_id: str, kind: InboxKind,
                            payload: Mapping[str, Any]) -> int | None:
        """Leave an event for the owner: its id, or None when the investigation has ended
        (nobody will claim it any more)."""
        if kind not in INBOX_KINDS:
            raise StoreError(f"unknown inbox kind {kind!r}: one of {', '.join(INBOX_KINDS)}")
        insert = (inbox.insert()
                  .values(investigation_id=investigation_id, kind=kind, payload=dict(payload),
                          created_at=now())
                  .returning(inbox.c.id))
        # The row lock orders this with the owner's `finish`: either the event is in before
        # the end is recorded (and the owner's sweep after the end finds it), or the end is
        # seen here and the caller keeps the event as it would after the end.
        status = (sa.select(investigations.c.status)
                  .where(investigations.c.id == investigation_id).with_for_update())
        async with self._write() as conn:
            found = (await conn.execute(status)).scalar_one_or_none()
            if found is None:
                raise UnknownInvestigationError(investigation_id)
            if found not in UNFINISHED_STATUSES:
                return None
            item_id = int((await conn.execute(insert)).scalar_one())
            if self.dialect == "postgresql":
                await conn.execute(sa.select(sa.func.pg_notify(NOTIFY_CHANNEL, str(item_id))))
        return item_id

    @guarded
    async def claim_inbox(self, investigation_ids: Collection[str]) -> list[InboxItem]:
        if not investigation_ids:
            return []
        claim = (inbox.update()
                 .where(inbox.c.delivered_at.is_(None)
                        & inbox.c.investigation_id.in_(sorted(investigation_ids)))
                 .values(delivered_at=now())
                 .returning(inbox.c.id, inbox.c.investigation_id, inbox.c.kind,
                            inbox.c.payload, inbox.c.created_at))
        async with self._write() as conn:
            if time.monotonic() - self._inbox_purged_at > PURGE_EVERY_SECONDS:
                self._inbox_purged_at = time.monotonic()
                await conn.execute(inbox.delete().where(
                    inbox.c.delivered_at < now() - KEEP_DELIVERED))
            rows = (await conn.execute(claim)).mappings().all()
        items = [InboxItem(int(row["id"]), row["investigation_id"], cast(InboxKind, row["kind"]),
                           row["payload"], row["created_at"]) for row in rows]
        return sorted(items, key=lambda item: item.id)  # RETURNING promises no order

    @guarded
    async def undelivered(self, investigation_id: str) -> int:
        """How many events wait for the investigation's owner (for tests and `doctor`)."""
        query = (sa.select(sa.func.count())
                 .where((inbox.c.investigation_id == investigation_id)
                        & inbox.c.delivered_at.is_(None)))
        async with self._db.connect() as conn:
            return int((await conn.execute(query)).scalar_one())

    @guarded
    async def listen_inbox(self, wake: Callable[[], None]) -> PostgresListening | None:
        """LISTEN on a dedicated connection of asyncpg's own (SQLAlchemy has no API for
        notifications); None on SQLite, where polling is the only way."""
        if self.dialect != "postgresql":
            return None
        connection = await self._db.connect()
        try:
            raw = await connection.get_raw_connection()
            driver = raw.driver_connection
            assert driver is not None

            def notified(_connection: object, _pid: int, _channel: str, _payload: str) -> None:
                wake()

            await driver.add_listener(NOTIFY_CHANNEL, notified)
        except BaseException:
            await connection.invalidate()
            await connection.close()
            raise
        return PostgresListening(connection, driver, notified)
