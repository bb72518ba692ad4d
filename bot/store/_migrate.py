"""Run the packaged Alembic migrations on an open async engine, with no alembic.ini.

The configuration is built in code and the store's own connection is handed to env.py, so
migrating needs nothing on disk but the package. `upgrade head` is idempotent: a database
already at the newest revision is left alone. On PostgreSQL, several replicas may start at
once; a transaction-scoped advisory lock makes them migrate one after another instead of
racing to create the same tables.

Alembic is synchronous; it runs through `AsyncConnection.run_sync`, whose database calls
still go through the async driver, so the event loop is not blocked waiting on the server.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, text
from sqlalchemy.ext.asyncio import AsyncEngine

VERSION_TABLE = "triage_schema_version"
MIGRATIONS = Path(__file__).with_name("migrations")
# Any constant works; this one spells "triage" in ASCII so it is recognisable in pg_locks.
_ADVISORY_LOCK = 0x747269616765


def alembic_config() -> Config:
    """An Alembic configuration that points at the packaged migrations."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("version_table", VERSION_TABLE)
    return config


def head_revision() -> str:
    """The newest revision the package ships."""
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None, "the package ships no migration"
    return head


def _upgrade(connection: Connection, revision: str) -> None:
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _ADVISORY_LOCK})
    config = alembic_config()
    config.attributes["connection"] = connection
    command.upgrade(config, revision)


def _current(connection: Connection) -> str | None:
    context = MigrationContext.configure(connection, opts={"version_table": VERSION_TABLE})
    return context.get_current_revision()


async def upgrade(engine: AsyncEngine, revision: str = "head") -> None:
    """Bring the schema to `revision` in one transaction (where the backend allows it)."""
    async with engine.begin() as connection:
        await connection.run_sync(_upgrade, revision)


async def current_revision(engine: AsyncEngine) -> str | None:
    """The revision the database is at; None before the first migration."""
    async with engine.connect() as connection:
        return await connection.run_sync(_current)
