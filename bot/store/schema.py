"""The tables, as SQLAlchemy Core objects the queries are written against.

The migrations in `bot/store/migrations/versions/` create these tables; this module only
describes them to the queries, and a test compares the two so they cannot drift. What is
backend-specific (SQLite's FTS5 table of lessons, PostgreSQL's `tsvector` column) lives only
in the migrations and in `_search.py`: every other query is the same on both backends.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Dialect

INVESTIGATION_STATUSES = ("running", "waiting", "done", "stopped", "failed")
ORIGINS = ("slack", "cli")
UNFINISHED_STATUSES = ("running", "waiting")
FEEDBACK_VERDICTS = ("correct", "wrong", "reply")

# SQLite's rowid alias must be INTEGER exactly; PostgreSQL gets 64 bits for the event log.
BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


class UTCDateTime(sa.TypeDecorator[datetime]):
    """Aware UTC datetimes in and out, on both backends.

    SQLite has no time zone type and hands back naive values; PostgreSQL's `timestamptz`
    hands back the session's zone. The engine's events compare timestamps with aware UTC
    ones, so everything is converted to UTC on the way in and marked UTC on the way out.
    """

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to the store: pass an aware UTC datetime")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


metadata = sa.MetaData()


def _owner(table: str) -> sa.Column[str]:
    """The investigation a row belongs to; deleting the investigation deletes the row."""
    return sa.Column(
        "investigation_id",
        sa.String(64),
        sa.ForeignKey("investigations.id", ondelete="CASCADE", name=f"fk_{table}_investigation"),
        nullable=False,
    )


investigations = sa.Table(
    "investigations",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("incident", sa.Text(), nullable=False),
    sa.Column("channel", sa.String(64), nullable=True),
    sa.Column("thread_ts", sa.String(64), nullable=True),
    sa.Column("status_ts", sa.String(64), nullable=True),
    # "slack" (the bot) or "cli" (`triage investigate`): only the bot's are resumed at start
    sa.Column("origin", sa.String(16), nullable=False, server_default="slack"),
    sa.Column("requested_by", sa.String(128), nullable=False, server_default=""),
    sa.Column("model", sa.String(128), nullable=False, server_default=""),
    sa.Column("engine", sa.String(32), nullable=False, server_default=""),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("step", sa.Integer(), nullable=False, server_default="0"),
    sa.Column("last_seq", sa.Integer(), nullable=False, server_default="0"),
    sa.Column("created_at", UTCDateTime(), nullable=False),
    sa.Column("updated_at", UTCDateTime(), nullable=False),
    sa.Column("ended_at", UTCDateTime(), nullable=True),
    sa.Column("diagnosis", sa.JSON(), nullable=True),
    sa.Column("outcome", sa.String(32), nullable=True),
    sa.Column("outcome_detail", sa.Text(), nullable=False, server_default=""),
    # what the run cost (migration 0007): bot/store/figures.py
    sa.Column("tool_calls", sa.Integer(), nullable=False, server_default="0"),
    sa.Column("cached_calls", sa.Integer(), nullable=False, server_default="0"),
    sa.Column("input_tokens", sa.Integer(), nullable=False, server_default="0"),
    sa.Column("output_tokens", sa.Integer(), nullable=False, server_default="0"),
    sa.CheckConstraint(
        "status IN ('running', 'waiting', 'done', 'stopped', 'failed')",
        name="ck_investigations_status",
    ),
    sa.Index("ix_investigations_created_at", "created_at"),
    sa.Index("ix_investigations_status", "status"),
    sa.Index("ix_investigations_thread", "channel", "thread_ts"),
    sa.Index("ix_investigations_ended_at", "ended_at"),
)

events = sa.Table(
    "events",
    metadata,
    sa.Column("id", BigId, primary_key=True, autoincrement=True),
    _owner("events"),
    sa.Column("seq", sa.Integer(), nullable=False),
    sa.Column("kind", sa.String(32), nullable=False),
    sa.Column("step", sa.Integer(), nullable=True),
    sa.Column("payload", sa.JSON(), nullable=False),
    sa.UniqueConstraint("investigation_id", "seq", name="uq_events_investigation_seq"),
)

constraints = sa.Table(
    "constraints",
    metadata,
    sa.Column("id", BigId, primary_key=True, autoincrement=True),
    _owner("constraints"),
    sa.Column("kind", sa.String(32), nullable=False),
    sa.Column("text", sa.Text(), nullable=False),
    sa.Column("value", sa.Text(), nullable=False, server_default=""),
    sa.Column("author", sa.String(128), nullable=False, server_default=""),
    sa.Column("at", UTCDateTime(), nullable=False),
    sa.Index("ix_constraints_investigation", "investigation_id"),
)

feedback = sa.Table(
    "feedback",
    metadata,
    sa.Column("id", BigId, primary_key=True, autoincrement=True),
    _owner("feedback"),
    sa.Column("verdict", sa.String(16), nullable=False),
    sa.Column("text", sa.Text(), nullable=False, server_default=""),
    sa.Column("author", sa.String(128), nullable=False, server_default=""),
    sa.Column("at", UTCDateTime(), nullable=False),
    sa.CheckConstraint(
        "verdict IN ('correct', 'wrong', 'reply')", name="ck_feedback_verdict"
    ),
    sa.Index("ix_feedback_investigation", "investigation_id"),
)

lessons = sa.Table(
    "lessons",
    metadata,
    sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
    sa.Column("text", sa.Text(), nullable=False),
    sa.Column("services", sa.JSON(), nullable=False),
    sa.Column("namespaces", sa.JSON(), nullable=False),
    sa.Column("symptoms", sa.JSON(), nullable=False),
    # The tags as one searchable string, written with the lists: what full-text search reads.
    sa.Column("tags", sa.Text(), nullable=False, server_default=""),
    sa.Column(
        "source_investigation",
        sa.String(64),
        sa.ForeignKey(
            "investigations.id", ondelete="SET NULL", name="fk_lessons_source_investigation"
        ),
        nullable=True,
    ),
    sa.Column("created_at", UTCDateTime(), nullable=False),
    # "pending": Reflexion's own reflection, kept with its incident until a human confirms
    # that diagnosis; only "confirmed" lessons are retrieved by other incidents (0006).
    sa.Column("state", sa.String(16), nullable=False, server_default="confirmed"),
    sa.Index("ix_lessons_source_investigation", "source_investigation"),
    sqlite_autoincrement=True,
)
LESSON_STATES = ("pending", "confirmed")


def json_list(value: Any) -> tuple[str, ...]:
    """A JSON list column as a tuple of strings (tolerating NULL and stray scalars)."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(str(item) for item in value)


# --- what replicas sharing the database agree on (migration 0004) --------------------------

event_claims = sa.Table(
    "event_claims",
    metadata,
    # "message:<channel>:<ts>": the Slack message an investigation starts from
    sa.Column("key", sa.String(255), primary_key=True),
    sa.Column("claimed_at", UTCDateTime(), nullable=False),
    sa.Index("ix_event_claims_claimed_at", "claimed_at"),
)

admission_queue = sa.Table(
    "admission_queue",
    metadata,
    sa.Column("id", BigId, primary_key=True, autoincrement=True),
    sa.Column("channel", sa.String(64), nullable=False),
    sa.Column("thread_ts", sa.String(64), nullable=False),
    sa.Column("text", sa.Text(), nullable=False),
    sa.Column("requested_by", sa.String(128), nullable=False, server_default=""),
    sa.Column("queued_at", UTCDateTime(), nullable=False),
    sa.UniqueConstraint("channel", "thread_ts", name="uq_admission_queue_thread"),
    sqlite_autoincrement=True,
)


# --- what each Slack workspace refused of the agent surfaces (migration 0005) --------------

workspace_surfaces = sa.Table(
    "workspace_surfaces",
    metadata,
    sa.Column("team", sa.String(64), primary_key=True),
    sa.Column("refused", sa.String(255), nullable=False),  # Slack's error: invalid_blocks...
    sa.Column("refused_at", UTCDateTime(), nullable=False),
)


# --- who runs each investigation, and since which takeover (migration 0006) ---------------

leases = sa.Table(
    "leases",
    metadata,
    sa.Column(
        "investigation_id",
        sa.String(64),
        sa.ForeignKey("investigations.id", ondelete="CASCADE", name="fk_leases_investigation"),
        primary_key=True,
    ),
    sa.Column("owner", sa.String(128), nullable=False),  # a replica id, unique per process
    sa.Column("generation", sa.Integer(), nullable=False),  # bumped by every new owner
    sa.Column("expires_at", UTCDateTime(), nullable=True),  # NULL: released, the run ended
    sa.Index("ix_leases_expires_at", "expires_at"),
)


# --- events for the replica that runs the investigation (migration 0008) -----------------

inbox = sa.Table(
    "inbox",
    metadata,
    sa.Column("id", BigId, primary_key=True, autoincrement=True),
    _owner("inbox"),
    sa.Column("kind", sa.String(32), nullable=False),  # reply, edit, withdraw, stop, ...
    sa.Column("payload", sa.JSON(), nullable=False),
    sa.Column("created_at", UTCDateTime(), nullable=False),
    sa.Column("delivered_at", UTCDateTime(), nullable=True),  # set by the claiming owner
    sa.Index("ix_inbox_undelivered", "investigation_id", "delivered_at"),
    sqlite_autoincrement=True,
)
