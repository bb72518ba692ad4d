"""Which database: `TRIAGE_DATABASE_URL` when set, else a SQLite file in the data directory.

Operators write URLs the way libpq and their platform do (`postgresql://`, `postgres://`,
`?sslmode=require`) and should not need to know which async driver Triage uses, so every
spelling is normalised to the one driver per backend that the store is tested with:
asyncpg for PostgreSQL, aiosqlite for SQLite. A bare path means a SQLite file.
"""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_data_path
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from bot.store.errors import StoreError

ENV_VAR = "TRIAGE_DATABASE_URL"
APP_NAME = "triage"
DEFAULT_FILE = "triage.db"

_POSTGRES = {"postgres", "postgresql", "postgresql+asyncpg"}
_SQLITE = {"sqlite", "sqlite+aiosqlite"}


def default_sqlite_path() -> Path:
    """`~/.local/share/triage/triage.db` on Linux; the platform's equivalent elsewhere."""
    return user_data_path(APP_NAME, appauthor=False) / DEFAULT_FILE


def resolve_url(url: str | URL | None = None) -> URL:
    """The URL to open: the argument, else the environment, else the default SQLite file."""
    if url is None:
        url = os.environ.get(ENV_VAR, "").strip() or None
    if url is None:
        return make_url(f"sqlite+aiosqlite:///{default_sqlite_path()}")
    return normalise_url(url)


def normalise_url(url: str | URL) -> URL:
    """Map any accepted spelling onto `postgresql+asyncpg://` or `sqlite+aiosqlite://`."""
    if isinstance(url, str) and "://" not in url:
        return make_url(f"sqlite+aiosqlite:///{Path(url).expanduser().absolute()}")
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise StoreError(f"{ENV_VAR} is not a database URL: {exc}") from None
    scheme = parsed.drivername
    if scheme in _POSTGRES:
        query = dict(parsed.query)
        if "sslmode" in query:  # libpq's name; asyncpg calls it `ssl` and takes the same modes
            query["ssl"] = query.pop("sslmode")
        return parsed.set(drivername="postgresql+asyncpg", query=query)
    if scheme in _SQLITE:
        return parsed.set(drivername="sqlite+aiosqlite")
    raise StoreError(
        f"unsupported database URL scheme {scheme!r}: use postgresql://… or sqlite:///PATH"
    )


def describe(url: URL) -> str:
    """The URL for messages and logs, never with its password."""
    return url.render_as_string(hide_password=True)


def sqlite_file(url: URL) -> Path | None:
    """The file a SQLite URL names; None for PostgreSQL and for in-memory databases."""
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    return Path(url.database)
