"""The status message of an investigation's thread, kept so a resumed run edits it.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30

A nullable column: investigations recorded before it simply get a new status message when
resumed, as they did before.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("investigations", sa.Column("status_ts", sa.String(64), nullable=True))


def downgrade() -> None:
    # SQLite drops a column in place since 3.35; no table rebuild (which, with foreign keys
    # on, could cascade into the event log).
    op.drop_column("investigations", "status_ts")
