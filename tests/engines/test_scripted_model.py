"""The in-process test doubles must fail loudly, or engine tests could pass by accident."""

from __future__ import annotations

from pathlib import Path

import pytest

from engines.errors import ModelUnavailableError
from engines.model import Model, ModelReply, ModelRequest, UserMessage
from engines.scripted_model import (
    FunctionModel,
    ScriptedModel,
    ScriptExhaustedError,
    call,
    recording,
    reply,
)

pytest_plugins = ("pytester",)

REQUEST = ModelRequest(messages=(UserMessage("checkout is down"),), tools=(), step=1)


async def test_turns_are_played_in_order_and_requests_recorded() -> None:
    async def from_request(request: ModelRequest) -> ModelReply:
        return reply(f"step {request.step}")

    model = ScriptedModel([
        reply("pods first", call("k8s_list_pods", {"namespace": "shop"}, id="c1")),
        lambda request: reply(f"seen {len(request.messages)} messages"),
        from_request,
    ])
    assert isinstance(model, Model)
    first = await model.complete(REQUEST)
    assert first.tool_calls[0].arguments == {"namespace": "shop"}
    assert first.tool_calls[0].raw_arguments == '{"namespace": "shop"}'
    assert (await model.complete(REQUEST)).thought == "seen 1 messages"
    assert (await model.complete(REQUEST)).thought == "step 1"
    assert model.requests == [REQUEST] * 3
    model.assert_all_used()


@pytest.mark.leftover_turns
async def test_one_call_too_many_fails_and_stays_failed() -> None:
    model = ScriptedModel([reply("only one")])
    await model.complete(REQUEST)
    with pytest.raises(ScriptExhaustedError, match="called 2 times but only 1 turns"):
        await model.complete(REQUEST)
    with pytest.raises(ScriptExhaustedError):  # even if the engine swallowed the first
        model.assert_all_used()


@pytest.mark.leftover_turns
async def test_unused_turns_fail() -> None:
    model = ScriptedModel([reply("a"), reply("b")])
    await model.complete(REQUEST)
    with pytest.raises(AssertionError, match="1 of 2 scripted turns were never used"):
        model.assert_all_used()


async def test_an_error_turn_is_raised() -> None:
    model = ScriptedModel([ModelUnavailableError("endpoint down")])
    with pytest.raises(ModelUnavailableError, match="endpoint down"):
        await model.complete(REQUEST)
    model.assert_all_used()


def test_a_malformed_call_can_be_scripted() -> None:
    broken = call("k8s_list_pods", None, raw='{"namespace": ')
    assert broken.arguments is None and broken.raw_arguments == '{"namespace": '
    assert call("a").id != call("a").id


async def test_function_model_branches_on_the_request() -> None:
    def answer(request: ModelRequest) -> ModelReply:
        return reply("again" if request.step < 2 else "done")

    model = FunctionModel(answer, name="brancher")
    assert model.name == "brancher"
    assert (await model.complete(REQUEST)).thought == "again"
    later = ModelRequest(REQUEST.messages, (), step=2)
    assert (await model.complete(later)).thought == "done"
    assert model.requests == [REQUEST, later]


def test_recording_collects_the_models_made_inside_it_even_nested() -> None:
    before = ScriptedModel([])
    with recording() as outer:
        first = ScriptedModel([])
        with recording() as inner:
            second = ScriptedModel([])
        third = ScriptedModel([])
    after = ScriptedModel([])
    assert outer == [first, second, third] and inner == [second]
    assert before not in outer and after not in outer


SUITE_CONFTEST = Path(__file__).parents[1] / "conftest.py"
LEFTOVERS = """
import pytest
from engines.scripted_model import ScriptedModel, reply
from engines.model import ModelRequest, UserMessage

REQUEST = ModelRequest(messages=(UserMessage("x"),), tools=(), step=1)


async def test_a_turn_left_unused() -> None:
    await ScriptedModel([reply("a"), reply("b")]).complete(REQUEST)


async def test_an_exhausted_script_whose_error_was_swallowed() -> None:
    model = ScriptedModel([reply("a")])
    await model.complete(REQUEST)
    try:
        await model.complete(REQUEST)
    except BaseException:  # what a catch-all handler in the code under test would do
        pass


async def test_a_failure_that_a_swallowed_exhaustion_explains() -> None:
    model = ScriptedModel([])
    try:
        await model.complete(REQUEST)
    except BaseException:
        pass
    assert model.remaining == 0


async def test_every_turn_played() -> None:
    await ScriptedModel([reply("a")]).complete(REQUEST)


@pytest.mark.leftover_turns
async def test_leftovers_on_purpose() -> None:
    ScriptedModel([reply("a")])
"""


@pytest.mark.leftover_turns  # the inner run checks its own models; this one sees them too
def test_the_suite_fails_a_test_whose_script_was_not_played_to_the_end(
    pytester: pytest.Pytester,
) -> None:
    """tests/conftest.py checks every scripted model, so no test has to remember to."""
    pytester.makeconftest(SUITE_CONFTEST.read_text())
    pytester.makepyfile(test_leftovers=LEFTOVERS)
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "-o", "asyncio_mode=auto",
        "-o", "asyncio_default_fixture_loop_scope=function")
    result.assert_outcomes(passed=2, failed=3)
    result.stdout.fnmatch_lines([
        "*1 of 2 scripted turns were never used*",
        "*called 2 times but only 1 turns were scripted*",
        "*and a scripted model ran out: scripted: called 1 times but only 0 turns*",
    ])
