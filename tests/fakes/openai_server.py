"""A loopback OpenAI-compatible server, scripted per test.

It speaks the real chat-completions protocol on 127.0.0.1, so tests exercise the real
`openai` client: its serialisation, its error classes, its timeouts. Each test scripts a
queue of turns (a completion, an HTTP error, or a delay); every request body is recorded.
Like openai-agents' scripted model, it fails the test when a request comes that was not
scripted or a scripted turn is left unused, so a test cannot pass while the code under test
made more or fewer calls than its author meant.

It is strict as the real API is: a request that breaks the API's rules (an unanswered tool
call, a tool message that answers nothing, a repeated call id, a bad tool name, a
`tool_choice` naming an absent tool, a prompt over `context_tokens`) is refused with the
API's 400 before any turn is played (bot/analyzer_server/rules.py holds the rules), and
noted in `refusals`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import socket
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import openai
import pytest
from aiohttp import web

from bot.analyzer_server.rules import check_chat_request


@dataclass(frozen=True, slots=True)
class FakeToolCall:
    """A tool call the fake model makes; `arguments` is sent verbatim (malformed allowed)."""

    name: str
    arguments: str = "{}"
    id: str | None = None


@dataclass(frozen=True, slots=True)
class Completion:
    """A 200 answer. `delay` holds it back first (longer than the client's timeout → the
    client gives up, and the turn still counts as used)."""

    content: str | None = None
    tool_calls: tuple[FakeToolCall, ...] = ()
    prompt_tokens: int = 11
    completion_tokens: int = 7
    finish_reason: str | None = None
    delay: float = 0.0


@dataclass(frozen=True, slots=True)
class HttpError:
    """An error answer with the body and headers a real endpoint would send."""

    status: int
    message: str = "error"
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None  # overrides the OpenAI-style {"error": {...}} body when given


Turn = Completion | HttpError


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    at: float


def tool_call(name: str, arguments: dict[str, Any] | str | None = None,
              id: str | None = None) -> FakeToolCall:
    """`tool_call("k8s_get_pods", {"namespace": "shop"})`; a str is sent as is."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
    return FakeToolCall(name, text, id)


class FakeOpenAIServer:
    """`async with FakeOpenAIServer() as server:` then `server.script(...)`, `server.base_url`."""

    def __init__(self, *, models: tuple[str, ...] = ("gpt-test",),
                 context_tokens: int | None = None) -> None:
        self.models = models
        self.context_tokens = context_tokens
        self.refusals: list[str] = []
        self.turns: list[Turn] = []
        self.requests: list[RecordedRequest] = []
        self.errors: list[str] = []
        self.models_error: HttpError | None = None  # what GET /v1/models answers instead
        self._played = 0
        self._closing = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self._ids = itertools.count(1)
        self.port = 0

    # ------------------------------------------------------------ scripting and checks

    def script(self, *turns: Turn) -> FakeOpenAIServer:
        """Queue turns, played one per chat-completions request, in order."""
        self.turns.extend(turns)
        return self

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        """The bodies of the chat-completions requests, in order."""
        return [r.body for r in self.requests if r.path.endswith("/chat/completions")]

    @property
    def unused(self) -> int:
        return len(self.turns) - self._played

    def check(self) -> None:
        """Raise when something unscripted happened or a scripted turn was never played."""
        problems = list(self.errors)
        if self.unused:
            problems.append(f"{self.unused} of {len(self.turns)} scripted turns never used")
        if problems:
            raise AssertionError("fake OpenAI server: " + "; ".join(problems))

    # ------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        app.router.add_route("*", "/{tail:.*}", self._unknown)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        await web.SockSite(self._runner, sock).start()

    async def stop(self) -> None:
        self._closing.set()  # cut delays short so shutdown never waits on them
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeOpenAIServer:
        await self.start()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.stop()
        if exc is None:  # never mask the test's own failure
            self.check()

    # ------------------------------------------------------------ handlers

    async def _record(self, request: web.Request) -> RecordedRequest:
        raw = await request.read()
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors="replace")
        recorded = RecordedRequest(request.method, request.path, dict(request.headers), body,
                                   time.monotonic())
        self.requests.append(recorded)
        return recorded

    async def _chat(self, request: web.Request) -> web.Response:
        recorded = await self._record(request)
        body = recorded.body
        if not isinstance(body, dict) or "model" not in body or not body.get("messages"):
            return self._fail(f"malformed chat request: {str(body)[:200]}")
        if body.get("stream"):
            return self._fail("streaming was requested but the fake does not script it")
        if (refusal := check_chat_request(body, context_tokens=self.context_tokens)) is not None:
            self.refusals.append(refusal.message)
            return web.json_response(refusal.body(), status=400)
        if self._played >= len(self.turns):
            last = body["messages"][-1]
            return self._fail(f"unscripted request #{len(self.chat_requests)}; last message: "
                              f"{str(last)[:200]}")
        turn = self.turns[self._played]
        self._played += 1
        if isinstance(turn, HttpError):
            return self._error(turn)
        if turn.delay:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), turn.delay)
        return web.json_response(self._completion(body["model"], turn))

    async def _models(self, request: web.Request) -> web.Response:
        await self._record(request)
        if self.models_error is not None:
            return self._error(self.models_error)
        data = [{"id": m, "object": "model", "created": 0, "owned_by": "fake"}
                for m in self.models]
        return web.json_response({"object": "list", "data": data})

    async def _unknown(self, request: web.Request) -> web.Response:
        await self._record(request)
        return self._fail(f"unexpected {request.method} {request.path}")

    @staticmethod
    def _error(error: HttpError) -> web.Response:
        payload = error.body if error.body is not None else {
            "error": {"message": error.message, "type": "fake_error", "code": None}}
        return web.json_response(payload, status=error.status, headers=error.headers)

    def _fail(self, problem: str) -> web.Response:
        """Record the problem for `check()`, and answer 418 so the client cannot retry it
        into silence (418 is not a status anyone retries)."""
        self.errors.append(problem)
        return web.json_response({"error": {"message": f"fake server: {problem}",
                                            "type": "unscripted"}}, status=418)

    def _completion(self, model: str, turn: Completion) -> dict[str, Any]:
        calls = [
            {"id": c.id or f"call_fake_{next(self._ids)}", "type": "function",
             "function": {"name": c.name, "arguments": c.arguments}}
            for c in turn.tool_calls
        ]
        message: dict[str, Any] = {"role": "assistant", "content": turn.content}
        if calls:
            message["tool_calls"] = calls
        finish = turn.finish_reason or ("tool_calls" if calls else "stop")
        return {
            "id": f"chatcmpl-fake-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish,
                         "logprobs": None}],
            "usage": {"prompt_tokens": turn.prompt_tokens,
                      "completion_tokens": turn.completion_tokens,
                      "total_tokens": turn.prompt_tokens + turn.completion_tokens},
        }


def plain_http() -> openai.DefaultAsyncHttpxClient:
    """An HTTP client for `OpenAIModel(http_client=...)` that skips loading the CA bundle:
    the fake is plain HTTP, and the bundle costs 50 ms a client, a second or more a suite."""
    return openai.DefaultAsyncHttpxClient(verify=False)


@pytest.fixture
async def openai_server() -> AsyncIterator[FakeOpenAIServer]:
    """A started server; the test fails at teardown if the script was not followed."""
    async with FakeOpenAIServer() as server:
        yield server
