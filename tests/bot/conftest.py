"""Bot tests never touch the real data directory: `triage serve` keeps its SQLite store
there, so each test gets its own (and bots that a module or the session shares get one for
the session), and no bot sees or resumes another test's investigations."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(scope="session", autouse=True)
def _session_data_directory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("data")))
        patch.delenv("TRIAGE_DATABASE_URL", raising=False)
        yield


@pytest.fixture(autouse=True)
def _own_data_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("TRIAGE_DATABASE_URL", raising=False)
