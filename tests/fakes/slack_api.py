"""A loopback Slack: the Web API the bot calls, and the signed requests Slack sends it.

`FakeSlack` answers the Web API methods Triage uses on 127.0.0.1 and records every call, so
tests exercise the real slack_sdk client (serialisation, retry handlers, the three-call file
upload) against it. It keeps the workspace's messages as Slack would (posts, edits, threads),
answers 429 with Retry-After on demand, and lets a test await a condition on the calls
instead of sleeping. `SlackSender` posts events, slash commands and button clicks to the bot
over real HTTP, signed with the v0 scheme exactly as Slack signs them.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any
from urllib.parse import parse_qsl, urlencode

import aiohttp
from aiohttp import web

from tests.fakes.slack_agent import AgentApi, block_error

BOT_USER = "UTRIAGE"
BOT_ID = "BTRIAGE"
TEAM = "TTEST"
TOKEN = "xoxb-test-token-0000"
SIGNING_SECRET = "test-signing-secret"


@dataclass(frozen=True, slots=True)
class Call:
    """One request the bot made."""

    method: str
    args: dict[str, Any]
    status: int
    at: float


@dataclass(slots=True)
class _Failure:
    method: str
    times: int
    status: int = 429
    error: str = "ratelimited"
    retry_after: int = 1
    channel: str | None = None
    after: int = 0  # let this many matching calls through first


@dataclass(slots=True)
class Posted:
    """A message as it stands now (after edits)."""

    channel: str
    ts: str
    text: str
    blocks: list[dict[str, Any]]
    thread_ts: str | None
    edits: int = 0
    files: list[str] = field(default_factory=list)
    stream: str = ""  # "streaming" or "stopped" for a streamed message
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)  # task cards by id
    plan_title: str = ""
    display_mode: str = ""

    @property
    def all_text(self) -> str:
        """The text and every text inside the blocks (and task cards), for assertions."""
        extra = "\n" + json.dumps(self.tasks, ensure_ascii=False) if self.tasks else ""
        return self.text + "\n" + json.dumps(self.blocks, ensure_ascii=False) + extra


class FakeSlack(AgentApi):
    """The Web API at `url` (give it to the bot as SLACK_API_URL). `legacy` is a workspace
    without the agent surfaces (streams, loading states, tables, feedback buttons)."""

    def __init__(self, *, token: str = TOKEN, usergroups: dict[str, list[str]] | None = None,
                 socket_url: str | None = None, legacy: bool = False) -> None:
        self.token = token
        self.legacy = legacy
        self.statuses: list[dict[str, Any]] = []
        self.usergroups = usergroups or {}
        self.socket_url = socket_url
        self.calls: list[Call] = []
        self.messages: dict[str, Posted] = {}  # "channel/ts" → message
        self._failures: list[_Failure] = []
        self._ts = itertools.count(1)
        self._changed = asyncio.Condition()
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/"

    async def __aenter__(self) -> FakeSlack:
        app = web.Application()
        app.router.add_post("/api/{method}", self._api)
        app.router.add_get("/api/{method}", self._api)
        app.router.add_post("/upload/{file_id}", self._upload)
        app.router.add_post("/respond/{key}", self._respond)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    # --- test controls --------------------------------------------------------------------

    def rate_limit(self, method: str, *, times: int = 1, retry_after: int = 1,
                   channel: str | None = None, after: int = 0) -> None:
        """Answer `times` calls of `method` (in `channel`) with 429, after letting `after`
        calls through."""
        self._failures.append(_Failure(method, times, retry_after=retry_after, channel=channel,
                                       after=after))

    def fail(self, method: str, error: str, *, times: int = 1, channel: str | None = None) -> None:
        """Answer the next `times` calls with `{"ok": false, "error": error}`."""
        self._failures.append(_Failure(method, times, 200, error, channel=channel))

    async def wait_for(self, predicate: Callable[[FakeSlack], Any], within: float = 15.0) -> Any:
        """Wait until `predicate(self)` is truthy and return its value; no polling."""
        async with asyncio.timeout(within):
            async with self._changed:
                while not (value := predicate(self)):
                    await self._changed.wait()
                return value

    def calls_of(self, method: str, channel: str | None = None) -> list[Call]:
        return [
            c for c in self.calls
            if c.method == method and (channel is None or c.args.get("channel") == channel
                                       or c.args.get("channel_id") == channel)
        ]

    def thread(self, channel: str, thread_ts: str) -> list[Posted]:
        """The messages of a thread in order, the root first when the bot posted it."""
        found = [
            m for m in self.messages.values()
            if m.channel == channel and (m.thread_ts == thread_ts or m.ts == thread_ts)
        ]
        return sorted(found, key=lambda m: float(m.ts))

    def in_channel(self, channel: str) -> list[Posted]:
        return sorted((m for m in self.messages.values() if m.channel == channel),
                      key=lambda m: float(m.ts))

    # --- the API --------------------------------------------------------------------------

    async def _arguments(self, request: web.Request) -> dict[str, Any]:
        args: dict[str, Any] = dict(request.query)
        raw = await request.read()
        if raw:
            if request.content_type == "application/json":
                args.update(json.loads(raw))
            elif request.content_type == "application/x-www-form-urlencoded":
                args.update(parse_qsl(raw.decode(), keep_blank_values=True))
            elif request.content_type.startswith("multipart/"):
                args["_multipart"] = True
        for key in ("blocks", "files", "chunks", "loading_messages"):
            if isinstance(args.get(key), str):
                args[key] = json.loads(args[key])
        return args

    async def _record(self, method: str, args: dict[str, Any], status: int) -> None:
        async with self._changed:
            self.calls.append(Call(method, args, status, time.monotonic()))
            self._changed.notify_all()

    def _failure_for(self, method: str, args: dict[str, Any]) -> _Failure | None:
        for failure in self._failures:
            channel = args.get("channel") or args.get("channel_id")
            if failure.method == method and failure.times > 0 and (
                failure.channel is None or failure.channel == channel
            ):
                if failure.after > 0:
                    failure.after -= 1
                    return None
                failure.times -= 1
                return failure
        return None

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        args = await self._arguments(request)
        expected = self.token if method != "apps.connections.open" else None
        auth = request.headers.get("Authorization", "")
        if expected is not None and auth != f"Bearer {expected}":
            await self._record(method, args, 200)
            return web.json_response({"ok": False, "error": "invalid_auth"})
        failure = self._failure_for(method, args)
        if failure is not None:
            await self._record(method, args, failure.status)
            if failure.status == 429:
                return web.json_response({"ok": False, "error": "ratelimited"}, status=429,
                                         headers={"Retry-After": str(failure.retry_after)})
            return web.json_response({"ok": False, "error": failure.error})
        handler = getattr(self, "_" + method.replace(".", "_"), None)
        body = handler(args) if handler else {"ok": False, "error": "unknown_method"}
        await self._record(method, args, 200)
        return web.json_response(body)

    def _next_ts(self) -> str:
        return f"{1_800_000_000 + next(self._ts)}.000100"

    def _auth_test(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "url": "https://test.slack.com/", "team": "Test", "user": "triage",
                "team_id": TEAM, "user_id": BOT_USER, "bot_id": BOT_ID}

    def _new_message(self, channel: str, ts: str, thread_ts: str | None) -> Posted:
        return Posted(channel, ts, "", [], thread_ts)

    def _chat_postMessage(self, args: dict[str, Any]) -> dict[str, Any]:
        if error := block_error(args.get("blocks"), legacy=self.legacy):
            return {"ok": False, "error": error}
        channel, ts = str(args.get("channel", "")), self._next_ts()
        thread = args.get("thread_ts")
        self.messages[f"{channel}/{ts}"] = Posted(
            channel, ts, str(args.get("text", "")), list(args.get("blocks") or []), thread
        )
        return {"ok": True, "channel": channel, "ts": ts, "message": {"text": args.get("text")}}

    def _chat_update(self, args: dict[str, Any]) -> dict[str, Any]:
        channel, ts = str(args.get("channel", "")), str(args.get("ts", ""))
        message = self.messages.get(f"{channel}/{ts}")
        if message is None:
            return {"ok": False, "error": "message_not_found"}
        if error := block_error(args.get("blocks"), legacy=self.legacy):
            return {"ok": False, "error": error}
        message.text = str(args.get("text", message.text))
        message.blocks = list(args.get("blocks") or [])
        message.edits += 1
        return {"ok": True, "channel": channel, "ts": ts}

    def _chat_postEphemeral(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "message_ts": self._next_ts()}

    def _reactions_add(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True}

    def _usergroups_users_list(self, args: dict[str, Any]) -> dict[str, Any]:
        group = str(args.get("usergroup", ""))
        if group not in self.usergroups:
            return {"ok": False, "error": "no_such_subteam"}
        return {"ok": True, "users": self.usergroups[group]}

    def _files_getUploadURLExternal(self, args: dict[str, Any]) -> dict[str, Any]:
        file_id = f"F{next(self._ts):06d}"
        return {"ok": True, "file_id": file_id,
                "upload_url": f"http://127.0.0.1:{self.port}/upload/{file_id}"}

    def _files_completeUploadExternal(self, args: dict[str, Any]) -> dict[str, Any]:
        files = args.get("files") or []
        channel = str(args.get("channel_id", ""))
        thread = args.get("thread_ts")
        ts = self._next_ts()
        ids = [str(f.get("id")) for f in files]
        self.messages[f"{channel}/{ts}"] = Posted(channel, ts, "", [], thread, files=ids)
        return {"ok": True, "files": [{"id": i, "title": f.get("title")}
                                      for i, f in zip(ids, files, strict=True)]}

    def _files_info(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "file": {"id": args.get("file"), "name": "chart.png"}}

    def _apps_connections_open(self, args: dict[str, Any]) -> dict[str, Any]:
        if self.socket_url is None:
            return {"ok": False, "error": "socket_mode_not_enabled"}
        return {"ok": True, "url": self.socket_url}

    async def _upload(self, request: web.Request) -> web.Response:
        data = await request.read()
        await self._record("upload", {"file_id": request.match_info["file_id"],
                                      "bytes": len(data), "png": data[:8] == b"\x89PNG\r\n\x1a\n"},
                           200)
        return web.Response(text=f"OK - {len(data)}")

    async def _respond(self, request: web.Request) -> web.Response:
        args = json.loads(await request.read() or b"{}")
        await self._record("response_url", args, 200)
        return web.Response(text="ok")


# --- requests from Slack to the bot -----------------------------------------------------


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """Slack's v0 request signature."""
    base = b"v0:" + timestamp.encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


@dataclass(frozen=True, slots=True)
class Sent:
    status: int
    seconds: float
    body: str


class SlackSender:
    """Posts what Slack would post to the bot's /slack/events, signed."""

    _ids = itertools.count(1)
    _ts = itertools.count(1)

    def __init__(self, url: str, session: aiohttp.ClientSession, *,
                 secret: str = SIGNING_SECRET, response_url: str = "") -> None:
        self.url = url
        self.session = session
        self.secret = secret
        self.response_url = response_url

    @classmethod
    def new_ts(cls) -> str:
        return f"{1_700_000_000 + next(cls._ts)}.000200"

    async def send(self, body: bytes, content_type: str, *, secret: str | None = None,
                   headers: dict[str, str] | None = None, signed: bool = True) -> Sent:
        timestamp = str(int(time.time()))
        sent_headers = {"Content-Type": content_type, **(headers or {})}
        if signed:
            sent_headers["X-Slack-Request-Timestamp"] = timestamp
            sent_headers["X-Slack-Signature"] = sign(secret or self.secret, timestamp, body)
        started = time.perf_counter()
        async with self.session.post(self.url, data=body, headers=sent_headers) as response:
            text = await response.text()
            return Sent(response.status, time.perf_counter() - started, text)

    def event_body(self, event: dict[str, Any], event_id: str | None = None) -> bytes:
        return json.dumps({
            "token": "unused", "team_id": TEAM, "api_app_id": "ATRIAGE", "type": "event_callback",
            "event": event, "event_id": event_id or f"Ev{next(self._ids):08d}",
            "event_time": int(time.time()),
            "authorizations": [{"team_id": TEAM, "user_id": BOT_USER, "is_bot": True}],
        }).encode()

    async def event(self, event: dict[str, Any], *, event_id: str | None = None,
                    retry: int | None = None) -> Sent:
        headers = {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"} \
            if retry is not None else None
        return await self.send(self.event_body(event, event_id), "application/json",
                               headers=headers)

    async def mention(self, channel: str, user: str, text: str, *, ts: str | None = None,
                      thread_ts: str | None = None, event_id: str | None = None,
                      retry: int | None = None) -> tuple[Sent, str]:
        """@Triage TEXT in a channel; returns the ack and the message's ts."""
        ts = ts or self.new_ts()
        event: dict[str, Any] = {"type": "app_mention", "user": user, "channel": channel,
                                 "text": f"<@{BOT_USER}> {text}", "ts": ts, "event_ts": ts}
        if thread_ts:
            event["thread_ts"] = thread_ts
        return await self.event(event, event_id=event_id, retry=retry), ts

    async def message(self, channel: str, user: str, text: str, *, thread_ts: str | None = None,
                      channel_type: str = "channel", bot_id: str | None = None
                      ) -> tuple[Sent, str]:
        """A message (a thread reply with `thread_ts`); returns the ack and its ts."""
        ts = self.new_ts()
        event: dict[str, Any] = {"type": "message", "user": user, "channel": channel,
                                 "text": text, "ts": ts, "event_ts": ts,
                                 "channel_type": channel_type}
        if thread_ts:
            event["thread_ts"] = thread_ts
        if bot_id:
            event["bot_id"] = bot_id
            event["subtype"] = "bot_message"
        return await self.event(event), ts

    async def edit(self, channel: str, user: str, ts: str, thread_ts: str, text: str,
                   before: str) -> Sent:
        """The `message_changed` event Slack sends when `user` edits reply `ts`."""
        now = self.new_ts()
        event: dict[str, Any] = {
            "type": "message", "subtype": "message_changed", "channel": channel,
            "hidden": True, "ts": now, "event_ts": now, "channel_type": "channel",
            "message": {"type": "message", "user": user, "text": text, "ts": ts,
                        "thread_ts": thread_ts, "edited": {"user": user, "ts": now}},
            "previous_message": {"type": "message", "user": user, "text": before, "ts": ts,
                                 "thread_ts": thread_ts},
        }
        return await self.event(event)

    async def delete(self, channel: str, user: str, ts: str, thread_ts: str, text: str) -> Sent:
        """The `message_deleted` event Slack sends when reply `ts` is deleted."""
        now = self.new_ts()
        event: dict[str, Any] = {
            "type": "message", "subtype": "message_deleted", "channel": channel,
            "hidden": True, "deleted_ts": ts, "ts": now, "event_ts": now,
            "channel_type": "channel",
            "previous_message": {"type": "message", "user": user, "text": text, "ts": ts,
                                 "thread_ts": thread_ts},
        }
        return await self.event(event)

    async def command(self, channel: str, user: str, text: str) -> Sent:
        form = {"token": "unused", "team_id": TEAM, "channel_id": channel, "user_id": user,
                "command": "/triage", "text": text, "api_app_id": "ATRIAGE",
                "response_url": self.response_url, "trigger_id": f"trig{next(self._ids)}"}
        return await self.send(urlencode(form).encode(), "application/x-www-form-urlencoded")

    async def click(self, channel: str, user: str, message: Any, action_id: str,
                    value: str) -> Sent:
        """Press a button of `message` (a Posted)."""
        payload = {
            "type": "block_actions", "team": {"id": TEAM}, "user": {"id": user},
            "api_app_id": "ATRIAGE", "channel": {"id": channel},
            "container": {"type": "message", "message_ts": message.ts, "channel_id": channel},
            "message": {"ts": message.ts, "thread_ts": message.thread_ts, "text": message.text,
                        "blocks": message.blocks},
            "response_url": self.response_url, "trigger_id": f"trig{next(self._ids)}",
            "actions": [{"type": "button", "action_id": action_id, "block_id": "b",
                         "value": value, "action_ts": str(time.time())}],
        }
        form = urlencode({"payload": json.dumps(payload)}).encode()
        return await self.send(form, "application/x-www-form-urlencoded")

    async def select(self, channel: str, user: str, message: Any, action_id: str,
                     value: str) -> Sent:
        """Pick option `value` in a static_select menu of `message` (a Posted)."""
        payload = {
            "type": "block_actions", "team": {"id": TEAM}, "user": {"id": user},
            "api_app_id": "ATRIAGE", "channel": {"id": channel},
            "container": {"type": "message", "message_ts": message.ts, "channel_id": channel},
            "message": {"ts": message.ts, "thread_ts": message.thread_ts, "text": message.text,
                        "blocks": message.blocks},
            "response_url": self.response_url, "trigger_id": f"trig{next(self._ids)}",
            "actions": [{"type": "static_select", "action_id": action_id, "block_id": "b",
                         "selected_option": {"text": {"type": "plain_text",
                                                      "text": f"Step {value}"},
                                             "value": value},
                         "action_ts": str(time.time())}],
        }
        form = urlencode({"payload": json.dumps(payload)}).encode()
        return await self.send(form, "application/x-www-form-urlencoded")
