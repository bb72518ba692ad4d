"""A loopback Socket Mode server: the WebSocket end Slack keeps open to a Socket Mode app.

`apps.connections.open` on the fake Web API returns this server's ws:// URL; the bot's
slack_sdk client connects, gets `hello`, and from then on every envelope the test sends
must come back acknowledged with its `envelope_id`, exactly as Slack expects.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
import uuid
from types import TracebackType
from typing import Any

from aiohttp import WSMsgType, web

from tests.fakes.slack_api import BOT_USER, TEAM


class FakeSocketMode:
    def __init__(self) -> None:
        self.port = 0
        self.connected = asyncio.Event()
        self.acks: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.sent_at: dict[str, float] = {}
        self._socket: web.WebSocketResponse | None = None
        self._runner: web.AppRunner | None = None
        self._ids = itertools.count(1)

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/link"

    async def __aenter__(self) -> FakeSocketMode:
        app = web.Application()
        app.router.add_get("/link", self._link)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        if self._socket is not None:
            await self._socket.close()
        if self._runner is not None:
            await self._runner.cleanup()

    async def _link(self, request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse(autoping=True)
        await socket.prepare(request)
        self._socket = socket
        await socket.send_str(json.dumps({
            "type": "hello", "num_connections": 1,
            "connection_info": {"app_id": "ATRIAGE"},
            "debug_info": {"host": "fake", "approximate_connection_time": 3600},
        }))
        self.connected.set()
        async for message in socket:
            if message.type != WSMsgType.TEXT:
                continue
            data = json.loads(message.data)
            envelope = data.get("envelope_id")
            future = self.acks.get(envelope)
            if future is not None and not future.done():
                future.set_result(data)
        self.connected.clear()
        return socket

    async def send_event(self, event: dict[str, Any], *, retry_attempt: int = 0,
                         event_id: str | None = None) -> str:
        """Send an events_api envelope; returns its id (await `ack` for the answer)."""
        payload = {
            "token": "unused", "team_id": TEAM, "api_app_id": "ATRIAGE",
            "type": "event_callback", "event": event,
            "event_id": event_id or f"EvS{next(self._ids):07d}", "event_time": int(time.time()),
            "authorizations": [{"team_id": TEAM, "user_id": BOT_USER, "is_bot": True}],
        }
        return await self._send("events_api", payload, retry_attempt=retry_attempt)

    async def _send(self, kind: str, payload: dict[str, Any], *, retry_attempt: int = 0) -> str:
        assert self._socket is not None, "the bot is not connected"
        envelope = uuid.uuid4().hex
        self.acks[envelope] = asyncio.get_running_loop().create_future()
        self.sent_at[envelope] = time.perf_counter()
        await self._socket.send_str(json.dumps({
            "envelope_id": envelope, "type": kind, "payload": payload,
            "accepts_response_payload": False, "retry_attempt": retry_attempt,
            "retry_reason": "timeout" if retry_attempt else "",
        }))
        return envelope

    async def ack(self, envelope: str, within: float = 5.0) -> float:
        """Wait for the bot's ack; returns the seconds it took."""
        await asyncio.wait_for(self.acks[envelope], within)
        return time.perf_counter() - self.sent_at[envelope]
