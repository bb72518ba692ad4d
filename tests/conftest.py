"""Every test's scripted models are checked when it ends: no turn left unplayed, none missing.

A test that scripts a turn the engine never asks for is wrong or asserts too little, and an
exhausted script can be swallowed by a handler that catches everything on the way (the
bot's). So no test is trusted to call `assert_all_used`: every `ScriptedModel` made while a
test runs (in its fixtures or its body) is checked once the test body is done, and the test
fails if any was called once too often or left a turn unused. A test of the double's own
failures opts out with the `leftover_turns` marker and checks them itself.
"""

from __future__ import annotations

from collections.abc import Generator

import pytest

from engines.scripted_model import ScriptedModel, recording

_MADE = pytest.StashKey[list[ScriptedModel]]()
LEFTOVER_MARKER = "leftover_turns"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{LEFTOVER_MARKER}: the test leaves scripted turns unused (or exhausts a script) on "
        "purpose and checks that itself",
    )


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
