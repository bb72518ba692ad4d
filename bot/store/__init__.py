"""Where Triage remembers: investigations, their event logs, what humans said, and lessons.

`Store` is the one entry point: `store = await Store.open(url)` (None: `TRIAGE_DATABASE_URL`
or a SQLite file in the user's data directory), then `await store.migrate()` at start. The
same code runs on SQLite (one process, nothing to install) and PostgreSQL (replicas sharing
the work); `codec` turns engine events into JSON and back for the log.
"""

from bot.store.errors import (
    CodecError,
    StoreError,
    UnknownInvestigationError,
    UnknownLessonError,
)
from bot.store.records import (
    Feedback,
    InvestigationDetails,
    InvestigationRecord,
    Lesson,
    Status,
    StoredConstraint,
    StoredInvestigation,
)
from bot.store.store import Store, opened
from bot.store.url import ENV_VAR, default_sqlite_path, resolve_url

__all__ = [
    "ENV_VAR",
    "CodecError",
    "Feedback",
    "InvestigationDetails",
    "InvestigationRecord",
    "Lesson",
    "Status",
    "Store",
    "StoreError",
    "StoredConstraint",
    "StoredInvestigation",
    "UnknownInvestigationError",
    "UnknownLessonError",
    "default_sqlite_path",
    "opened",
    "resolve_url",
]
