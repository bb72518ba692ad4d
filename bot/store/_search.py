"""Full-text search of lessons: the only query that differs between the two backends.

SQLite ranks with FTS5's bm25 over the `lessons_fts` table, PostgreSQL with `ts_rank` over
the generated `search` column; both index tags above the text (see the first migration).
An incident is described in prose ("checkout pods keep restarting after the deploy"), not in
a query language, so the text is cut into words and any word may match: a lesson that
shares more, and rarer, words with the incident ranks higher. The words are passed as bound
parameters in a syntax built here from letters and digits only, so no user text can break
(or inject into) either backend's query syntax.
"""

from __future__ import annotations

import re

import sqlalchemy as sa

from bot.store.schema import lessons

MAX_TERMS = 32
_WORD = re.compile(r"[^\W_]+")
# Words that say nothing about an incident. PostgreSQL drops English stop words itself;
# FTS5 does not, so the two backends agree better when the common ones never reach either.
_STOP_WORDS = frozenset(
    {
        "a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "for", "from", "has",
        "have", "in", "is", "it", "its", "of", "on", "or", "our", "so", "that", "the", "their",
        "there", "these", "this", "to", "was", "we", "were", "what", "when", "which", "while",
        "with",
    }
)

_fts = sa.table("lessons_fts", sa.column("rowid", sa.Integer()))
# bm25 column weights, in the FTS5 table's column order (text, tags): tags count more.
_BM25 = sa.text("bm25(lessons_fts, 1.0, 2.5)")
_SEARCH: sa.ColumnClause[object] = sa.literal_column("lessons.search")
# Another incident's search never finds a reflection no human has confirmed yet.
_CONFIRMED = lessons.c.state == "confirmed"
_ENGLISH: sa.ColumnClause[object] = sa.literal_column("'english'::regconfig")


def terms(query_text: str) -> list[str]:
    """The distinct words of a text, lower-cased, stop words left out, at most MAX_TERMS."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(query_text.lower()):
        if word not in _STOP_WORDS:
            seen.setdefault(word, None)
    return list(seen)[:MAX_TERMS]


def search_statement(dialect: str, words: list[str], limit: int) -> sa.Select[tuple[object, ...]]:
    """Confirmed lessons matching any of `words`, the most relevant first (ties: the newest
    first)."""
    if dialect == "postgresql":
        query = sa.func.to_tsquery(
            _ENGLISH, sa.bindparam("q", " | ".join(f"'{w}'" for w in words), type_=sa.Text())
        )
        rank = sa.func.ts_rank(_SEARCH, query)
        return (
            sa.select(lessons)
            .where(_SEARCH.op("@@")(query) & _CONFIRMED)
            .order_by(rank.desc(), lessons.c.id.desc())
            .limit(limit)
        )
    match = sa.bindparam("q", " OR ".join(f'"{w}"' for w in words), type_=sa.Text())
    return (
        sa.select(lessons)
        .join(_fts, _fts.c.rowid == lessons.c.id)
        .where(sa.literal_column("lessons_fts").op("MATCH")(match) & _CONFIRMED)
        .order_by(_BM25, lessons.c.id.desc())
        .limit(limit)
    )
