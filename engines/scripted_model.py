"""In-process test doubles for `Model`: zero latency, no network, loud when misused.

`ScriptedModel` plays a fixed list of turns and fails when asked for one more, or when a
turn is left unplayed (`assert_all_used`), so a test cannot pass by accident with the
engine taking fewer or more steps than the author meant. Every model made inside
`recording()` is collected, so a test harness can check them all when a test ends (the
suite's tests/conftest.py does, for every test) instead of trusting each test to ask.
`FunctionModel` hands each request to a function, for tests whose next turn depends on
what the engine sent.
"""

from __future__ import annotations

import inspect
import itertools
import json
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from engines.model import ModelReply, ModelRequest, ToolCall

TurnFunction = Callable[[ModelRequest], ModelReply | Awaitable[ModelReply]]
Turn = ModelReply | TurnFunction | BaseException

_ids = itertools.count(1)
_recordings: list[list[ScriptedModel]] = []


class ScriptExhaustedError(AssertionError):
    """The model was called more often than the test scripted.

    An AssertionError, not a TriageError, so an engine that catches run failures does not
    turn a broken test into a politely stopped investigation.
    """


def call(name: str, arguments: dict[str, Any] | None = None, *, raw: str | None = None,
         id: str | None = None) -> ToolCall:
    """A tool call for a script: `call("k8s_get_pods", {"namespace": "shop"})`.

    `arguments=None` with `raw` scripts a call whose JSON did not parse.
    """
    if raw is None and arguments is None:
        arguments = {}
    text = raw if raw is not None else json.dumps(arguments)
    return ToolCall(id or f"scripted_{next(_ids)}", name, arguments, text)


def reply(thought: str = "", *calls: ToolCall) -> ModelReply:
    """A turn for a script: `reply("look at the pods", call("k8s_get_pods", {...}))`."""
    return ModelReply(thought, tuple(calls))


async def _play(turn: Turn, request: ModelRequest) -> ModelReply:
    if isinstance(turn, BaseException):
        raise turn
    if isinstance(turn, ModelReply):
        return turn
    result = turn(request)
    return await result if inspect.isawaitable(result) else result


class ScriptedModel:
    """Plays `turns` in order: a reply, a function of the request, or an error to raise."""

    def __init__(self, turns: Iterable[Turn], *, name: str = "scripted") -> None:
        self._turns = list(turns)
        self._name = name
        self.requests: list[ModelRequest] = []
        self.failure: ScriptExhaustedError | None = None
        for made in _recordings:
            made.append(self)

    @property
    def name(self) -> str:
        return self._name

    @property
    def remaining(self) -> int:
        return len(self._turns) - len(self.requests)

    async def complete(self, request: ModelRequest) -> ModelReply:
        index = len(self.requests)
        self.requests.append(request)
        if index >= len(self._turns):
            last = request.messages[-1].content[:200] if request.messages else ""
            self.failure = ScriptExhaustedError(
                f"{self._name}: called {index + 1} times but only {len(self._turns)} turns "
                f"were scripted (step {request.step}; last message: {last!r})"
            )
            raise self.failure
        return await _play(self._turns[index], request)

    def assert_all_used(self) -> None:
        """Fail when a call came that was not scripted, or a scripted turn was never played."""
        if self.failure is not None:
            raise self.failure
        if self.remaining:
            raise AssertionError(
                f"{self._name}: {self.remaining} of {len(self._turns)} scripted turns were "
                "never used"
            )


@contextmanager
def recording() -> Iterator[list[ScriptedModel]]:
    """Collect every `ScriptedModel` made inside the block (blocks may nest).

    A model can be exhausted inside code that catches everything (a bot's last-resort
    handler), and a test can forget `assert_all_used`: the harness that wraps each test in
    `recording()` checks every model afterwards, so neither lets a test pass by accident.
    """
    made: list[ScriptedModel] = []
    _recordings.append(made)
    try:
        yield made
    finally:
        _recordings[:] = [other for other in _recordings if other is not made]


class FunctionModel:
    """Each turn is `function(request)`: branch on the request in tests."""

    def __init__(self, function: TurnFunction, *, name: str = "function") -> None:
        self._function = function
        self._name = name
        self.requests: list[ModelRequest] = []

    @property
    def name(self) -> str:
        return self._name

    async def complete(self, request: ModelRequest) -> ModelReply:
        self.requests.append(request)
        return await _play(self._function, request)
