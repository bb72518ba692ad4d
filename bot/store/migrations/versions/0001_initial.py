"""The first schema: investigations, their event log, constraints, feedback and lessons.

Revision ID: 0001
Revises:
Create Date: 2026-11-30

The tables are spelled out here rather than imported from `bot.store.schema`: a migration
must keep creating the schema of its own time after the models have moved on. Lessons get
full-text search in each backend's own way: an FTS5 table kept in sync by triggers on
SQLite, a generated `tsvector` column with a GIN index on PostgreSQL. Both index the
lesson's text and its tags, tags weighing more.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Stamp = sa.DateTime(timezone=True)

SQLITE_FTS = (
    "CREATE VIRTUAL TABLE lessons_fts USING fts5(text, tags, tokenize = 'porter unicode61')",
    """CREATE TRIGGER lessons_fts_insert AFTER INSERT ON lessons BEGIN
         INSERT INTO lessons_fts (rowid, text, tags) VALUES (new.id, new.text, new.tags);
       END""",
    """CREATE TRIGGER lessons_fts_delete AFTER DELETE ON lessons BEGIN
         DELETE FROM lessons_fts WHERE rowid = old.id;
       END""",
    """CREATE TRIGGER lessons_fts_update AFTER UPDATE OF text, tags ON lessons BEGIN
         UPDATE lessons_fts SET text = new.text, tags = new.tags WHERE rowid = old.id;
       END""",
)

POSTGRES_FTS = (
    """ALTER TABLE lessons ADD COLUMN search tsvector GENERATED ALWAYS AS (
         setweight(to_tsvector('english', tags), 'A')
         || setweight(to_tsvector('english', text), 'B')
       ) STORED""",
    "CREATE INDEX ix_lessons_search ON lessons USING GIN (search)",
)


def _owner(name: str) -> sa.Column[str]:
    return sa.Column(
        "investigation_id",
        sa.String(64),
        sa.ForeignKey("investigations.id", ondelete="CASCADE", name=f"fk_{name}_investigation"),
        nullable=False,
    )


def upgrade() -> None:
    op.create_table(
        "investigations",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("incident", sa.Text(), nullable=False),
        sa.Column("channel", sa.String(64), nullable=True),
        sa.Column("thread_ts", sa.String(64), nullable=True),
        sa.Column("requested_by", sa.String(128), nullable=False, server_default=""),
        sa.Column("model", sa.String(128), nullable=False, server_default=""),
        sa.Column("engine", sa.String(32), nullable=False, server_default=""),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("step", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("last_seq", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("created_at", Stamp, nullable=False),
        sa.Column("updated_at", Stamp, nullable=False),
        sa.Column("ended_at", Stamp, nullable=True),
        sa.Column("diagnosis", sa.JSON(), nullable=True),
        sa.Column("outcome", sa.String(32), nullable=True),
        sa.Column("outcome_detail", sa.Text(), nullable=False, server_default=""),
        sa.CheckConstraint(
            "status IN ('running', 'waiting', 'done', 'stopped', 'failed')",
            name="ck_investigations_status",
        ),
    )
    op.create_index("ix_investigations_created_at", "investigations", ["created_at"])
    op.create_index("ix_investigations_status", "investigations", ["status"])
    op.create_index("ix_investigations_thread", "investigations", ["channel", "thread_ts"])

    op.create_table(
        "events",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        _owner("events"),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("step", sa.Integer(), nullable=True),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.UniqueConstraint("investigation_id", "seq", name="uq_events_investigation_seq"),
    )

    op.create_table(
        "constraints",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        _owner("constraints"),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("value", sa.Text(), nullable=False, server_default=""),
        sa.Column("author", sa.String(128), nullable=False, server_default=""),
        sa.Column("at", Stamp, nullable=False),
    )
    op.create_index("ix_constraints_investigation", "constraints", ["investigation_id"])

    op.create_table(
        "feedback",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        _owner("feedback"),
        sa.Column("verdict", sa.String(16), nullable=False),
        sa.Column("text", sa.Text(), nullable=False, server_default=""),
        sa.Column("author", sa.String(128), nullable=False, server_default=""),
        sa.Column("at", Stamp, nullable=False),
        sa.CheckConstraint("verdict IN ('correct', 'wrong', 'reply')", name="ck_feedback_verdict"),
    )
    op.create_index("ix_feedback_investigation", "feedback", ["investigation_id"])

    op.create_table(
        "lessons",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("services", sa.JSON(), nullable=False),
        sa.Column("namespaces", sa.JSON(), nullable=False),
        sa.Column("symptoms", sa.JSON(), nullable=False),
        sa.Column("tags", sa.Text(), nullable=False, server_default=""),
        sa.Column(
            "source_investigation",
            sa.String(64),
            sa.ForeignKey(
                "investigations.id", ondelete="SET NULL", name="fk_lessons_source_investigation"
            ),
            nullable=True,
        ),
        sa.Column("created_at", Stamp, nullable=False),
        # A deleted lesson's id is never handed out again: ids are what humans type.
        sqlite_autoincrement=True,
    )
    statements = POSTGRES_FTS if op.get_bind().dialect.name == "postgresql" else SQLITE_FTS
    for statement in statements:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for trigger in ("insert", "delete", "update"):
            op.execute(f"DROP TRIGGER IF EXISTS lessons_fts_{trigger}")
        op.execute("DROP TABLE IF EXISTS lessons_fts")
    for table in ("lessons", "feedback", "constraints", "events", "investigations"):
        op.drop_table(table)
