"""Alembic's entry point: migrate the connection `bot.store._migrate` put in the config.

Only the online mode exists: migrations always run inside the store's own connection and
transaction, never from a URL in a file.
"""

from __future__ import annotations

from alembic import context

from bot.store._migrate import VERSION_TABLE

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    version_table=VERSION_TABLE,
    # SQLite cannot ALTER most things: batch mode rebuilds the table when a revision must.
    render_as_batch=connection.dialect.name == "sqlite",
    transaction_per_migration=False,
)
with context.begin_transaction():
    context.run_migrations()
