"""Reflexion's lessons: what one incident taught, found again on the next similar one.

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
from bot.store.errors import UnknownLessonError
from bot.store.records import Lesson
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
    ) -> Lesson:
        """Keep a lesson; it is searchable as soon as the transaction commits."""
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
    async def lessons(self, limit: int | None = None) -> list[Lesson]:
        """All lessons, the newest first."""
        query = sa.select(lessons_table).order_by(lessons_table.c.id.desc())
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
