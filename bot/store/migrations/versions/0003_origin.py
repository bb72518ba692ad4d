"""Where an investigation was started: in Slack by the bot, or by `triage investigate`.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-20

Every investigation recorded before this one was the bot's, so the column's default says
"slack" and existing rows need no update.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "investigations",
        sa.Column("origin", sa.String(16), nullable=False, server_default="slack"),
    )


def downgrade() -> None:
    op.drop_column("investigations", "origin")
