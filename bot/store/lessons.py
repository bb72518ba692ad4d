"""Reflexion's lessons: what one incident taught, found again on the next similar one.

Reflexion's own reflections are kept "pending", with the investigation they came from,
until a human confirms that diagnosis (`confirm_lessons`); search finds only "confirmed"
lessons, so nothing the engine told itself reaches another incident without a human's word.

A lesson is text plus tags (services, namespaces, symptoms). Search is full text over both,
ranked by relevance (bm25 on SQLite, ts_rank on PostgreSQL; see `_search.py`), so "orders
pods fail to reach the database" finds the lesson tagged `orders-db` about its connection
pool before one about an unrelated OOM. The search index is written in the same transaction
as the lesson (by triggers on SQLite, a generated column on PostgreSQL), so it is never
out of step with the table.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

import sqlalchemy as sa

from bot.store import _rows, _search
from bot.store._base import StoreBase, guarded, now, require_investigation
from bot.store.errors import StoreError, UnknownLessonError
from bot.store.records import Lesson, LessonState
from bot.store.schema import LESSON_STATES
from bot.store.schema import lessons as lessons_table


class LessonsMixin(StoreBase):
    """The lesson half of the store's API."""

    @guarded
    async def add_lesson(
        self,
        text: str,
        *,
        services: Iterable[str] = (),
        namespaces: Iterable[str] = (),
        symptoms: Iterable[str] = (),
        source_investigation: str | None = None,
        at: datetime | None = None,
        state: LessonState = "confirmed",
    ) -> Lesson:
        """Keep a lesson; a confirmed one is searchable as soon as the transaction commits,
        a pending one (Reflexion's reflection) once `confirm_lessons` confirms it."""
        if state not in LESSON_STATES:
            raise StoreError(f"unknown lesson state {state!r}: one of {', '.join(LESSON_STATES)}")
        if state == "pending" and source_investigation is None:
            raise StoreError("a pending lesson waits for its investigation's confirmation: "
                             "name the investigation")
        tagged = {
            "services": list(_rows.clean_tags(services)),
            "namespaces": list(_rows.clean_tags(namespaces)),
            "symptoms": list(_rows.clean_tags(symptoms)),
        }
        tags = " ".join(tag for values in tagged.values() for tag in values)
        created_at = at or now()
        async with self._write() as conn:
            if source_investigation is not None:
                await require_investigation(conn, source_investigation)
            result = await conn.execute(
                lessons_table.insert().values(
                    text=text.strip(),
                    tags=tags,
                    source_investigation=source_investigation,
                    created_at=created_at,
                    state=state,
                    **tagged,
                )
            )
            lesson_id = result.inserted_primary_key[0] if result.inserted_primary_key else None
        assert lesson_id is not None
        return await self.lesson(int(lesson_id))

    @guarded
    async def search_lessons(self, query_text: str, limit: int = 5) -> list[Lesson]:
        """The lessons most relevant to `query_text` (an incident, a symptom), best first."""
        words = _search.terms(query_text)
        if not words or limit <= 0:
            return []
        query = _search.search_statement(self.dialect, words, limit)
        async with self._db.connect() as conn:
            rows = (await conn.execute(query)).mappings().all()
        return [_rows.lesson(row) for row in rows]

    @guarded
    async def confirm_lessons(self, investigation_id: str) -> int:
        """A human confirmed the investigation's diagnosis: its pending lessons (Reflexion's
        reflections on it) become lessons other incidents retrieve. How many did."""
        confirm = (
            lessons_table.update()
            .where((lessons_table.c.source_investigation == investigation_id)
                   & (lessons_table.c.state == "pending"))
            .values(state="confirmed")
        )
        async with self._write() as conn:
            return int((await conn.execute(confirm)).rowcount or 0)

    @guarded
    async def lessons(self, limit: int | None = None, *,
                      state: LessonState | None = None) -> list[Lesson]:
        """All lessons (or those in `state`), the newest first."""
        query = sa.select(lessons_table).order_by(lessons_table.c.id.desc())
        if state is not None:
            query = query.where(lessons_table.c.state == state)
        if limit is not None:
            query = query.limit(max(limit, 0))
        async with self._db.connect() as conn:
            rows = (await conn.execute(query)).mappings().all()
        return [_rows.lesson(row) for row in rows]

    @guarded
    async def lesson(self, lesson_id: int) -> Lesson:
        query = sa.select(lessons_table).where(lessons_table.c.id == lesson_id)
        async with self._db.connect() as conn:
            row = (await conn.execute(query)).mappings().first()
        if row is None:
            raise UnknownLessonError(lesson_id)
        return _rows.lesson(row)

    @guarded
    async def delete_lesson(self, lesson_id: int) -> None:
        """Forget a lesson (a wrong one would mislead every later investigation)."""
        async with self._write() as conn:
            result = await conn.execute(
                lessons_table.delete().where(lessons_table.c.id == lesson_id)
            )
            if result.rowcount == 0:
                raise UnknownLessonError(lesson_id)
