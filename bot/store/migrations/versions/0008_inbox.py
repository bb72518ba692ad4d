"""Events for the replica that runs an investigation, and lessons waiting for a human.

Revision ID: 0008
Revises: 0007
Create Date: 2027-01-12

`inbox` holds what Slack delivered to a replica that does not run the investigation (a
reply, a click, an approval) until the replica that does claims it: in order (by id),
exactly once (`delivered_at` is set in the transaction that claims it). `lessons.state` is
"pending" for what Reflexion reflected on one incident until a human confirms that
incident's diagnosis, and "confirmed" for everything else (the lessons kept so far were
already retrieved by later incidents: they stay so). Spelled out rather than imported from
`bot.store.schema`, like every migration.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Stamp = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "inbox",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column(
            "investigation_id",
            sa.String(64),
            sa.ForeignKey("investigations.id", ondelete="CASCADE",
                          name="fk_inbox_investigation"),
            nullable=False,
        ),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("created_at", Stamp, nullable=False),
        sa.Column("delivered_at", Stamp, nullable=True),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_inbox_undelivered", "inbox", ["investigation_id", "delivered_at"])
    op.add_column(
        "lessons",
        sa.Column("state", sa.String(16), nullable=False, server_default="confirmed"),
    )
    op.create_index("ix_lessons_source_investigation", "lessons", ["source_investigation"])


def downgrade() -> None:
    op.drop_index("ix_lessons_source_investigation", table_name="lessons")
    with op.batch_alter_table("lessons") as batch:
        batch.drop_column("state")
    op.drop_index("ix_inbox_undelivered", table_name="inbox")
    op.drop_table("inbox")
