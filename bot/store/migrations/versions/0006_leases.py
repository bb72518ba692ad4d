"""Who runs each investigation: one lease row per investigation, with a generation.

Revision ID: 0006
Revises: 0005
Create Date: 2027-01-12

A replica owns an investigation while its lease has not expired; it renews it while the
run goes on. Another replica takes over an expired lease by bumping `generation`, and every
write an owner makes carries the generation it holds, so a replica that was presumed dead
and wakes up has its writes refused (bot/store/leases.py). `expires_at` is NULL once the
run ended and released it. Spelled out rather than imported from `bot.store.schema`, like
every migration.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "leases",
        sa.Column(
            "investigation_id",
            sa.String(64),
            sa.ForeignKey("investigations.id", ondelete="CASCADE",
                          name="fk_leases_investigation"),
            primary_key=True,
        ),
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("generation", sa.Integer(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_leases_expires_at", "leases", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_leases_expires_at", table_name="leases")
    op.drop_table("leases")
