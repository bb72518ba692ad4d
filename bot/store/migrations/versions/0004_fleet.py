"""What replicas sharing one database agree on: claimed Slack events and queued mentions.

Revision ID: 0004
Revises: 0003
Create Date: 2027-01-10

`event_claims` holds one row per Slack message that started (or may start) an
investigation; its primary key is what makes two replicas receiving the same event agree
that only one of them acts on it. `admission_queue` holds the mentions that arrived while
the limits of concurrent investigations were reached, in arrival order, so a restart or a
second replica finds them. Spelled out rather than imported from `bot.store.schema`, like
every migration.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Stamp = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "event_claims",
        sa.Column("key", sa.String(255), primary_key=True),
        sa.Column("claimed_at", Stamp, nullable=False),
    )
    op.create_index("ix_event_claims_claimed_at", "event_claims", ["claimed_at"])
    op.create_table(
        "admission_queue",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("channel", sa.String(64), nullable=False),
        sa.Column("thread_ts", sa.String(64), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("requested_by", sa.String(128), nullable=False, server_default=""),
        sa.Column("queued_at", Stamp, nullable=False),
        sa.UniqueConstraint("channel", "thread_ts", name="uq_admission_queue_thread"),
        sqlite_autoincrement=True,
    )


def downgrade() -> None:
    op.drop_table("admission_queue")
    op.drop_index("ix_event_claims_claimed_at", table_name="event_claims")
    op.drop_table("event_claims")
