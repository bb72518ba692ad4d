"""What an investigation cost: its tool calls (and how many the caches answered) and the
model's tokens, on its record, for `triage stats` and every replica's view of the fleet.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01

Columns rather than a scan of the event log: the summary of thousands of investigations is
one narrow SELECT. Rows recorded before have zeros, which `triage stats` counts as such.
Spelled out rather than imported from `bot.store.schema`, like every migration.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

COLUMNS = ("tool_calls", "cached_calls", "input_tokens", "output_tokens")


def upgrade() -> None:
    for name in COLUMNS:
        op.add_column(
            "investigations",
            sa.Column(name, sa.Integer(), nullable=False, server_default="0"),
        )
    op.create_index("ix_investigations_ended_at", "investigations", ["ended_at"])


def downgrade() -> None:
    op.drop_index("ix_investigations_ended_at", table_name="investigations")
    for name in COLUMNS:
        op.drop_column("investigations", name)
