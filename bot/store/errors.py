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
