"""What each Slack workspace refused of the agent surfaces (streams, feedback buttons, tables).

Revision ID: 0005
Revises: 0004
Create Date: 2027-01-11

A workspace that refuses `chat.startStream` or an agent-era block once gets today's
messages from then on (bot/streaming.py); the row keeps that decision across restarts and
replicas, so no investigation there tries and falls back again. Spelled out rather than
imported from `bot.store.schema`, like every migration.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "workspace_surfaces",
        sa.Column("team", sa.String(64), primary_key=True),
        sa.Column("refused", sa.String(255), nullable=False),
        sa.Column("refused_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("workspace_surfaces")
