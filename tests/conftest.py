"""What every test runs under: no real model requests, no developer's LLM settings, and a
count of what was skipped.

- `engines.openai_model.ALLOW_MODEL_REQUESTS` is False for the whole session: an
  `OpenAIModel` refuses to send a request to any host that is not loopback, so a test can
  never call the real API (the loopback fake of tests/fakes/openai_server.py still works).
- Each test starts without OPENAI_* variables and TRIAGE_MODEL, so the default model is the
  offline analyzer whatever the developer's shell holds; a test that wants them sets them.
- `tests._ci.SkipReport` prints `skipped: N` and the reasons at the end of the run, and
  fails a CI=true run that skipped anything.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from engines import openai_model
from tests._ci import SkipReport

LLM_SETTINGS = ("TRIAGE_MODEL",)  # and every OPENAI_* variable


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(SkipReport(), "triage-skip-report")


@pytest.fixture(scope="session", autouse=True)
def _no_real_model_requests() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(openai_model, "ALLOW_MODEL_REQUESTS", False)
        yield


@pytest.fixture(autouse=True)
def _no_developer_llm_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("OPENAI_") or name in LLM_SETTINGS:
            monkeypatch.delenv(name)
