"""What each investigation cost (migration 0007), and the runs `triage stats` summarises.

The figures are written once, when a run ends, beside its outcome; reading them is one
narrow SELECT over an index on `ended_at`, so a summary of thousands of investigations
reads no event log and no diagnosis.
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa

from bot.monitor import EndedRun, RunFigures
from bot.store._base import StoreBase, guarded, now
from bot.store.errors import UnknownInvestigationError
from bot.store.schema import investigations


class FiguresMixin(StoreBase):
    """Run figures in, ended runs out."""

    @guarded
    async def record_figures(self, investigation_id: str, figures: RunFigures) -> None:
        """Keep what the run cost on its record (replacing what a previous attempt left:
        a resumed run reports its own calls and tokens)."""
        statement = (
            investigations.update()
            .where(investigations.c.id == investigation_id)
            .values(tool_calls=figures.tool_calls, cached_calls=figures.cached_calls,
                    input_tokens=figures.input_tokens, output_tokens=figures.output_tokens,
                    updated_at=now())
        )
        async with self._write() as conn:
            if (await conn.execute(statement)).rowcount == 0:
                raise UnknownInvestigationError(investigation_id)

    @guarded
    async def ended_runs(self, since: datetime | None = None) -> list[EndedRun]:
        """Every investigation that ended (at or after `since`), oldest first."""
        c = investigations.c
        query = (
            sa.select(c.engine, c.model, c.status, c.step, c.created_at, c.ended_at,
                      c.tool_calls, c.cached_calls, c.input_tokens, c.output_tokens)
            .where(c.ended_at.is_not(None))
            .order_by(c.ended_at)
        )
        if since is not None:
            query = query.where(c.ended_at >= since)
        async with self._db.connect() as conn:
            rows = (await conn.execute(query)).all()
        return [
            EndedRun(row.engine, row.model, row.status, row.step, row.created_at, row.ended_at,
                     RunFigures(row.tool_calls, row.cached_calls, row.input_tokens,
                                row.output_tokens))
            for row in rows
        ]
