"""Who runs each investigation: leases, their renewal, takeover and fencing.

A replica owns an investigation through its row in `leases` (owner, generation, expires_at).
It renews the lease while the run goes on; a replica that stops renewing (killed, frozen,
cut off) loses it once `expires_at` passes, and another one claims it in `claim_expired`:
`SELECT … FOR UPDATE OF leases SKIP LOCKED` on PostgreSQL, so two replicas looking at the
same moment claim disjoint sets, each claim bumping the generation.

Fencing: every write an owner makes for an investigation passes the generation it holds
(`generation=` on the store's writes); `fence` reads the lease row in the write's own
transaction, locked FOR SHARE, and refuses the write with `LeaseLostError` when the
generation moved on. A takeover has to wait for that lock, so a write that passed the
fence is committed before the generation changes, and none lands after. Both kinds of
transaction lock the lease row before anything of the investigation, so they cannot
deadlock. On SQLite the one write lock serialises everything and the same code holds.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import timedelta

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.store import _rows
from bot.store._base import StoreBase, guarded, now
from bot.store.errors import LeaseLostError, UnknownInvestigationError
from bot.store.records import StoredInvestigation
from bot.store.schema import UNFINISHED_STATUSES, investigations, leases


async def fence(conn: AsyncConnection, investigation_id: str, generation: int | None) -> None:
    """Refuse the transaction's write unless `generation` is the investigation's lease
    generation (None: a writer that holds no lease, like `triage investigate`)."""
    if generation is None:
        return
    query = (
        sa.select(leases.c.generation)
        .where(leases.c.investigation_id == investigation_id)
        .with_for_update(read=True)
    )
    current = (await conn.execute(query)).scalar_one_or_none()
    if current != generation:
        raise LeaseLostError(investigation_id, generation, current)


class LeasesMixin(StoreBase):
    """Leases: taken at the start of a run, renewed, released, and claimed when expired."""

    @guarded
    async def acquire_lease(self, investigation_id: str, owner: str, ttl: timedelta) -> int:
        """Own the investigation from now on (a new run, a new attempt, a resume at start):
        the new generation. Whoever held it before is fenced off from here."""
        at = now()
        dialect_insert = postgresql.insert if self.dialect == "postgresql" else sqlite.insert
        insert = dialect_insert(leases).values(
            investigation_id=investigation_id, owner=owner, generation=1, expires_at=at + ttl
        )
        statement = insert.on_conflict_do_update(
            index_elements=[leases.c.investigation_id],
            set_={"owner": owner, "generation": leases.c.generation + 1,
                  "expires_at": at + ttl},
        ).returning(leases.c.generation)
        async with self._write() as conn:
            exists = sa.select(investigations.c.id).where(investigations.c.id == investigation_id)
            if (await conn.execute(exists)).first() is None:
                raise UnknownInvestigationError(investigation_id)
            return int((await conn.execute(statement)).scalar_one())

    @guarded
    async def renew_leases(
        self, owner: str, held: Mapping[str, int], ttl: timedelta
    ) -> set[str]:
        """Push back the expiry of the leases `owner` holds ({investigation id: generation}),
        in one statement: the ids it still holds. An id missing from the answer was taken
        over; its run must stop."""
        if not held:
            return set()
        statement = (
            leases.update()
            .where((leases.c.owner == owner) & leases.c.investigation_id.in_(list(held))
                   & leases.c.expires_at.is_not(None))
            .values(expires_at=now() + ttl)
            .returning(leases.c.investigation_id, leases.c.generation)
        )
        async with self._write() as conn:
            rows = (await conn.execute(statement)).all()
        return {str(iid) for iid, generation in rows if held.get(str(iid)) == generation}

    @guarded
    async def release_lease(self, investigation_id: str, generation: int) -> bool:
        """The run ended: nobody needs to take it over. False when it was no longer ours."""
        statement = (
            leases.update()
            .where((leases.c.investigation_id == investigation_id)
                   & (leases.c.generation == generation))
            .values(expires_at=None)
        )
        async with self._write() as conn:
            return bool((await conn.execute(statement)).rowcount)

    @guarded
    async def lease(self, investigation_id: str) -> tuple[str, int] | None:
        """(owner, generation) of the investigation's lease, None when it never had one."""
        query = sa.select(leases.c.owner, leases.c.generation).where(
            leases.c.investigation_id == investigation_id)
        async with self._db.connect() as conn:
            row = (await conn.execute(query)).first()
        return (str(row[0]), int(row[1])) if row is not None else None

    @guarded
    async def claim_expired(
        self, owner: str, ttl: timedelta, *, limit: int, exclude: Collection[str] = ()
    ) -> Sequence[tuple[StoredInvestigation, int]]:
        """Claim up to `limit` unfinished Slack investigations whose lease expired, oldest
        first, with the new generation of each. One that has no lease at all (started by a
        version without leases, or in the instant between its record and its lease) counts
        as expired once its record was untouched for `ttl`. `exclude`: what runs here."""
        if limit <= 0:
            return []
        at = now()
        mine = investigations.c.id.not_in(list(exclude)) if exclude else sa.true()
        unfinished = (investigations.c.status.in_(UNFINISHED_STATUSES)
                      & (investigations.c.origin == "slack") & mine)
        orphans = sa.select(
            investigations.c.id, sa.literal(""), sa.literal(0), investigations.c.updated_at
        ).where(
            unfinished & (investigations.c.updated_at < at - ttl)
            & ~sa.exists().where(leases.c.investigation_id == investigations.c.id)
        )
        dialect_insert = postgresql.insert if self.dialect == "postgresql" else sqlite.insert
        adopt = dialect_insert(leases).from_select(
            ["investigation_id", "owner", "generation", "expires_at"], orphans
        ).on_conflict_do_nothing(index_elements=[leases.c.investigation_id])
        expired = (
            sa.select(leases.c.investigation_id)
            .join(investigations, investigations.c.id == leases.c.investigation_id)
            .where(unfinished & (leases.c.expires_at < at))
            .order_by(investigations.c.created_at, investigations.c.id)
            .limit(limit)
            .with_for_update(of=leases, skip_locked=True)
        )
        async with self._write() as conn:
            await conn.execute(adopt)
            ids = [str(i) for i in (await conn.execute(expired)).scalars().all()]
            if not ids:
                return []
            bumped = (
                leases.update()
                .where(leases.c.investigation_id.in_(ids))
                .values(owner=owner, generation=leases.c.generation + 1, expires_at=at + ttl)
                .returning(leases.c.investigation_id, leases.c.generation)
            )
            generations = {str(i): int(g) for i, g in (await conn.execute(bumped)).all()}
            rows = (await conn.execute(
                sa.select(investigations).where(investigations.c.id.in_(ids))
                .order_by(investigations.c.created_at, investigations.c.id)
            )).mappings().all()
        return [(_rows.investigation(row), generations[row["id"]]) for row in rows]
