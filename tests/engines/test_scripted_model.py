"""The in-process test doubles must fail loudly, or engine tests could pass by accident."""

from __future__ import annotations

import pytest

from engines.errors import ModelUnavailableError
from engines.model import Model, ModelReply, ModelRequest, UserMessage
from engines.scripted_model import (
    FunctionModel,
    ScriptedModel,
    ScriptExhaustedError,
    call,
    reply,
)

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


async def test_one_call_too_many_fails_and_stays_failed() -> None:
    model = ScriptedModel([reply("only one")])
    await model.complete(REQUEST)
    with pytest.raises(ScriptExhaustedError, match="called 2 times but only 1 turns"):
        await model.complete(REQUEST)
    with pytest.raises(ScriptExhaustedError):  # even if the engine swallowed the first
        model.assert_all_used()


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
