"""The store's failures, under the one `TriageError` tree.

The command line prints a `TriageError` as one line, and the bot says it in the thread, so
a database that is down or an id that does not exist never ends as a traceback. Driver
exceptions (SQLAlchemy's, asyncpg's, sqlite3's) are translated here, at the store's edge,
with the password masked out of any URL they mention.
"""

from __future__ import annotations

from engines.errors import TriageError


class StoreError(TriageError):
    """The database cannot be reached, migrated, read or written."""


class CodecError(StoreError):
    """An event cannot be turned into JSON, or stored JSON is not an event."""


class UnknownInvestigationError(StoreError):
    """No investigation has this id."""

    def __init__(self, investigation_id: str) -> None:
        super().__init__(f"no investigation with id {investigation_id!r}")
        self.investigation_id = investigation_id


class UnknownLessonError(StoreError):
    """No lesson has this id."""

    def __init__(self, lesson_id: int | str) -> None:
        super().__init__(f"no lesson with id {lesson_id!r}")
        self.lesson_id = lesson_id


class LeaseLostError(StoreError):
    """A write for an investigation carried a lease generation that is no longer current:
    another replica took the investigation over, and this writer must stop."""

    def __init__(self, investigation_id: str, generation: int, current: int | None) -> None:
        now = f"generation {current}" if current is not None else "no lease"
        super().__init__(f"investigation {investigation_id!r} was taken over: this writer holds "
                         f"lease generation {generation}, the store has {now}")
        self.investigation_id = investigation_id
        self.generation = generation
        self.current = current
