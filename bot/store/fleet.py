"""What replicas sharing one database agree on: which Slack message starts an investigation,
and the mentions waiting for a free slot.

Two replicas can receive the same message (Slack's retry reaching the other one, or the
`app_mention` and `message` events of one message): whoever inserts its claim first starts
the investigation, the other's insert does nothing (`ON CONFLICT DO NOTHING` on both
backends, SQLite's spelling of `INSERT OR IGNORE`). Claims older than the TTL are deleted,
at most once a minute, so the table stays the size of an hour of traffic.

The admission queue is a table rather than a list in memory so that a restart, or another
replica, finds what was waiting. Taking an entry is a `DELETE ... RETURNING`: of two
replicas taking the same one, exactly one gets a row back.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import timedelta

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from bot.feedback import CLAIM_TTL, QueuedMention
from bot.store._base import StoreBase, guarded, now
from bot.store.schema import admission_queue, event_claims, workspace_surfaces

PURGE_EVERY_SECONDS = 60.0


class FleetMixin(StoreBase):
    """Event claims and the admission queue: the store's half of bot/investigations/admission.py."""

    _purged_at = 0.0
    claim_ttl: timedelta = CLAIM_TTL

    @guarded
    async def claim_event(self, key: str) -> bool:
        """True for the first claim of `key` within the TTL, on any replica; False after."""
        at = now()
        dialect_insert = postgresql.insert if self.dialect == "postgresql" else sqlite.insert
        claim = (
            dialect_insert(event_claims)
            .values(key=key, claimed_at=at)
            .on_conflict_do_nothing(index_elements=[event_claims.c.key])
            .returning(event_claims.c.key)
        )
        async with self._write() as conn:
            if time.monotonic() - self._purged_at > PURGE_EVERY_SECONDS:
                self._purged_at = time.monotonic()
                await conn.execute(
                    event_claims.delete().where(event_claims.c.claimed_at < at - self.claim_ttl)
                )
            return (await conn.execute(claim)).first() is not None

    @guarded
    async def enqueue(self, mention: QueuedMention) -> int:
        """Queue a mention (a thread at most once); how many are queued ahead of it."""
        dialect_insert = postgresql.insert if self.dialect == "postgresql" else sqlite.insert
        insert = (
            dialect_insert(admission_queue)
            .values(channel=mention.channel, thread_ts=mention.thread_ts, text=mention.text,
                    requested_by=mention.requested_by, queued_at=mention.queued_at)
            .on_conflict_do_nothing(
                index_elements=[admission_queue.c.channel, admission_queue.c.thread_ts]
            )
        )
        mine = (
            sa.select(admission_queue.c.id)
            .where((admission_queue.c.channel == mention.channel)
                   & (admission_queue.c.thread_ts == mention.thread_ts))
            .scalar_subquery()
        )
        ahead = sa.select(sa.func.count()).where(admission_queue.c.id < mine)
        async with self._write() as conn:
            await conn.execute(insert)
            return int((await conn.execute(ahead)).scalar_one())

    @guarded
    async def queued(self) -> Sequence[QueuedMention]:
        """The queue, oldest first."""
        query = sa.select(admission_queue).order_by(admission_queue.c.id)
        async with self._db.connect() as conn:
            rows = (await conn.execute(query)).mappings().all()
        return tuple(
            QueuedMention(row["channel"], row["thread_ts"], row["text"], row["requested_by"],
                          row["queued_at"], int(row["id"]))
            for row in rows
        )

    @guarded
    async def take_queued(self, queue_id: int) -> bool:
        """Remove one from the queue: True for the one caller, on any replica, that did."""
        take = (
            admission_queue.delete()
            .where(admission_queue.c.id == queue_id)
            .returning(admission_queue.c.id)
        )
        async with self._write() as conn:
            return (await conn.execute(take)).first() is not None

    @guarded
    async def surface_refusals(self) -> dict[str, str]:
        """The workspaces that refused the agent surfaces, with Slack's error."""
        async with self._db.connect() as conn:
            rows = await conn.execute(sa.select(workspace_surfaces.c.team,
                                                workspace_surfaces.c.refused))
            return {str(team): str(error) for team, error in rows}

    @guarded
    async def remember_surface_refusal(self, team: str, error: str) -> None:
        """Keep a workspace's refusal (the first one stands: the decision is made once)."""
        dialect_insert = postgresql.insert if self.dialect == "postgresql" else sqlite.insert
        insert = (dialect_insert(workspace_surfaces)
                  .values(team=team, refused=error[:255], refused_at=now())
                  .on_conflict_do_nothing(index_elements=[workspace_surfaces.c.team]))
        async with self._write() as conn:
            await conn.execute(insert)
