"""A loopback HTTP proxy in front of a real backend that fails the requests it is told to.

The sources' retries are tested against the real wire: the Elasticsearch client and httpx
talk HTTP to 127.0.0.1, where this proxy answers a scripted failure (a status with the
backend's own error body, or a connection reset with no answer at all) for the requests
whose path matches, and forwards every other request, byte for byte, to the real server
behind it. Every request is recorded, so a test asserts how many attempts reached the
backend and that each one asked the same thing.
"""

from __future__ import annotations

import json
import socket
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import aiohttp
from aiohttp import web

_HOP_BY_HOP = {"host", "content-length", "transfer-encoding", "connection", "keep-alive"}


@dataclass(frozen=True, slots=True)
class Answer:
    """A failure answered as the backend would: a status and a JSON body (and the header by
    which the Elasticsearch client recognises its server)."""

    status: int
    body: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Reset:
    """The connection is cut with a TCP reset before any answer."""


Failure = Answer | Reset


@dataclass(frozen=True, slots=True)
class Seen:
    """One request that reached the proxy, and what became of it."""

    method: str
    path: str
    body: bytes
    failed: bool


def es_error(status: int, kind: str, reason: str) -> Answer:
    """An Elasticsearch error answer, with its `root_cause` as the server writes it."""
    cause = {"type": kind, "reason": reason}
    return Answer(status, {"error": {"root_cause": [cause], **cause}, "status": status})


class FlakyProxy:
    """`async with FlakyProxy(upstream, failures, match=...) as proxy:` then use `proxy.url`.

    Requests whose path contains `match` take the next of `failures` until they run out,
    then are forwarded; with `always`, every matching request fails that way.
    """

    def __init__(self, upstream: str, failures: Sequence[Failure] = (), *, match: str = "",
                 always: Failure | None = None) -> None:
        self.upstream = upstream.rstrip("/")
        self.match = match
        self._failures = list(failures)
        self._always = always
        self.seen: list[Seen] = []
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def matching(self) -> list[Seen]:
        return [s for s in self.seen if self.match in s.path]

    async def __aenter__(self) -> FlakyProxy:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._session = aiohttp.ClientSession()
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        if self._session is not None:
            await self._session.close()
        if self._runner is not None:
            await self._runner.cleanup()

    def _failure(self, path: str) -> Failure | None:
        if self.match not in path:
            return None
        if self._failures:
            return self._failures.pop(0)
        return self._always

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        failure = self._failure(request.path_qs)
        self.seen.append(Seen(request.method, request.path_qs, body, failure is not None))
        if isinstance(failure, Reset):
            return _reset(request)
        if isinstance(failure, Answer):
            return web.Response(status=failure.status, text=json.dumps(failure.body),
                                content_type="application/json",
                                headers={"X-Elastic-Product": "Elasticsearch"})
        assert self._session is not None
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP_BY_HOP}
        async with self._session.request(request.method, self.upstream + request.path_qs,
                                         headers=headers, data=body) as answer:
            content = await answer.read()
            kept = {k: v for k, v in answer.headers.items() if k.lower() not in _HOP_BY_HOP
                    and k.lower() != "content-encoding"}
            return web.Response(status=answer.status, body=content, headers=kept)


def _reset(request: web.Request) -> web.StreamResponse:
    """Cut the connection with a TCP RST (linger 0), the way a crashing backend or a load
    balancer dropping it does; the client gets no answer."""
    transport = request.transport
    assert transport is not None
    sock = transport.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()
    return web.Response(status=499)  # never sent: the connection is gone
