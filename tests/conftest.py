"""What every test runs under: no real model requests, no developer's LLM settings, scripted
models played to their end, and a count of what was skipped.

- `engines.openai_model.ALLOW_MODEL_REQUESTS` is False for the whole session: an
  `OpenAIModel` refuses to send a request to any host that is not loopback, so a test can
  never call the real API (the loopback fake of tests/fakes/openai_server.py still works).
- Each test starts without OPENAI_* variables and TRIAGE_MODEL, so the default model is the
  offline analyzer whatever the developer's shell holds; a test that wants them sets them.
- Every `ScriptedModel` made while a test runs (in its fixtures or its body) is checked once
  the test body is done: the test fails if any was called once too often or left a turn
  unused. No test is trusted to call `assert_all_used`, since an exhausted script can be
  swallowed by a handler that catches everything on the way (the bot's). A test of the
  double's own failures opts out with the `leftover_turns` marker and checks them itself.
- `tests._ci.SkipReport` prints `skipped: N` and the reasons at the end of the run, and
  fails a CI=true run that skipped anything.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator

import pytest

from engines import openai_model
from engines.scripted_model import ScriptedModel, recording
from tests._ci import SkipReport

LLM_SETTINGS = ("TRIAGE_MODEL",)  # and every OPENAI_* variable
_MADE = pytest.StashKey[list[ScriptedModel]]()
LEFTOVER_MARKER = "leftover_turns"


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(SkipReport(), "triage-skip-report")
    config.addinivalue_line(
        "markers",
        f"{LEFTOVER_MARKER}: the test leaves scripted turns unused (or exhausts a script) on "
        "purpose and checks that itself",
    )


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


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[
        None, object, object]:
    """Record the models made from the test's setup to its teardown."""
    with recording() as made:
        item.stash[_MADE] = made
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    """Fail a test that passed with a script called too often or not played to its end."""
    made = item.stash.get(_MADE, [])
    checked = item.get_closest_marker(LEFTOVER_MARKER) is None
    try:
        outcome = yield
    except BaseException as error:  # the test failed: say if a script ran out on the way
        if checked:
            for model in made:
                if model.failure is not None:
                    error.add_note(f"and a scripted model ran out: {model.failure}")
        raise
    if checked:
        for model in made:
            model.assert_all_used()
    return outcome
