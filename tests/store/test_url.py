"""Which database: the URL spellings operators use all reach the one tested driver."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.store import ENV_VAR, Store, StoreError, default_sqlite_path, resolve_url
from bot.store.url import describe


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("postgresql://u:p@db:5432/triage", "postgresql+asyncpg://u:***@db:5432/triage"),
        ("postgres://u@db/triage", "postgresql+asyncpg://u@db/triage"),
        ("postgresql+asyncpg://u@db/triage", "postgresql+asyncpg://u@db/triage"),
        ("postgresql://u@db/triage?sslmode=require", "postgresql+asyncpg://u@db/triage?ssl=require"),
        ("sqlite:////var/lib/triage.db", "sqlite+aiosqlite:////var/lib/triage.db"),
        ("/var/lib/triage.db", "sqlite+aiosqlite:////var/lib/triage.db"),
    ],
)
def test_urls_are_normalised_to_the_async_drivers(given: str, expected: str) -> None:
    assert describe(resolve_url(given)) == expected


@pytest.mark.parametrize("given", ["mysql://u@db/triage", "postgresql+psycopg2://u@db/x"])
def test_other_databases_are_refused_in_one_line(given: str) -> None:
    with pytest.raises(StoreError, match="unsupported database URL scheme"):
        resolve_url(given)


def test_the_environment_names_the_database(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, "postgresql://u@db/triage")
    assert describe(resolve_url(None)) == "postgresql+asyncpg://u@db/triage"
    assert describe(resolve_url("/tmp/x.db")) == "sqlite+aiosqlite:////tmp/x.db"  # argument wins


async def test_by_default_a_sqlite_file_in_the_users_data_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_sqlite_path() == tmp_path / "data" / "triage" / "triage.db"
    store = await Store.open()
    try:
        await store.migrate()
        assert store.dialect == "sqlite"
    finally:
        await store.close()
    assert default_sqlite_path().is_file()
