"""The bot's HTTP port: Slack's requests in HTTP mode, and health checks in both modes.

Requests are checked here before slack-bolt sees them, in the order that keeps an attacker
from learning anything: first the signature (401 when missing or wrong, whatever the body),
then the shape (400 for a body that is not a Slack payload). Only a signed, well-formed
request reaches the app, so a malformed or unsigned one changes nothing. Events are
acknowledged as soon as they are checked and handed to the app once the requests arriving
with them are answered too (`bot.handoff`: Slack reads nothing of the answer but its
status, and under a burst no ack waits behind an investigation's first steps); slash
commands and button clicks go through the app first, because
their answer can carry a message. `/healthz` says the process serves; `/readyz` says it is
connected to Slack and can take work; `/metrics` is the bot's Prometheus metrics. Once the
bot is shutting down (`draining`), events get a 503, so Slack delivers them again later (to
another replica, or to this one once restarted) instead of this bot taking them as work;
slash commands get a polite refusal; button clicks still reach the running investigations.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import parse_qsl

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.app.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.signature import SignatureVerifier

from bot.handoff import LONGEST_SECONDS, QUIET_SECONDS, Handoff
from bot.telemetry import CONTENT_TYPE_LATEST, Telemetry

log = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
MAX_BODY_BYTES = 1024 * 1024
Readiness = Callable[[], Awaitable[dict[str, Any]]]
SHUTTING_DOWN = ("Triage is restarting and cannot start an investigation right now; "
                 "please try again in a minute.")


def signed(verifier: SignatureVerifier, body: bytes, headers: Mapping[str, str]) -> bool:
    """Whether a request carries Slack's v0 signature of its raw bytes, made less than five
    minutes ago (so a captured request cannot be replayed). A missing header, a timestamp
    that is no number or a body that is not UTF-8 (slack_sdk verifies text, and Slack sends
    nothing else) is an unsigned request, never a crash."""
    try:
        return verifier.is_valid(body, headers.get("X-Slack-Request-Timestamp"),
                                 headers.get("X-Slack-Signature"))
    except ValueError:  # UnicodeDecodeError is one
        return False


class MalformedRequestError(ValueError):
    """The body is not a payload Slack sends."""


def check_payload(body: str, content_type: str) -> dict[str, Any]:
    """Parse a Slack request body the way Slack sends it, or raise MalformedRequestError.

    Events API callbacks are JSON; slash commands are a form; interactivity is a form with a
    JSON `payload` field.
    """
    try:
        if content_type == "application/json" or body.lstrip().startswith("{"):
            payload = json.loads(body)
        else:
            form = dict(parse_qsl(body, keep_blank_values=True, strict_parsing=True))
            payload = json.loads(form["payload"]) if "payload" in form else form
    except (ValueError, KeyError) as exc:
        raise MalformedRequestError(f"body does not parse: {exc}") from None
    if not isinstance(payload, dict):
        raise MalformedRequestError("body is not an object")
    kind = payload.get("type")
    if kind == "event_callback":
        event = payload.get("event")
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            raise MalformedRequestError("event_callback without an event")
        if not isinstance(payload.get("event_id"), str):
            raise MalformedRequestError("event_callback without an event_id")
    elif kind == "url_verification":
        if not isinstance(payload.get("challenge"), str):
            raise MalformedRequestError("url_verification without a challenge")
    elif isinstance(kind, str):
        if kind in ("block_actions", "view_submission", "shortcut", "message_action"):
            user = payload.get("user")
            if not isinstance(user, dict) or not isinstance(user.get("id"), str):
                raise MalformedRequestError(f"{kind} without a user")
    elif "command" in payload:
        for key in ("command", "user_id", "channel_id"):
            if not isinstance(payload.get(key), str) or not payload[key]:
                raise MalformedRequestError(f"slash command without {key}")
    elif payload.get("ssl_check") != "1":
        raise MalformedRequestError("not a Slack payload")
    return payload


class HttpServer:
    """aiohttp server for `/slack/events` (HTTP mode only), `/healthz`, `/readyz` and
    `/metrics` (when given the bot's telemetry)."""

    def __init__(
        self,
        readiness: Readiness,
        *,
        app: AsyncApp | None = None,
        signing_secret: str | None = None,
        telemetry: Telemetry | None = None,
        event_quiet: float = QUIET_SECONDS,
    ) -> None:
        if app is not None and not signing_secret:
            raise ValueError("HTTP mode needs the signing secret to verify requests")
        self._app = app
        self._verifier = SignatureVerifier(signing_secret) if signing_secret else None
        self._readiness = readiness
        self._telemetry = telemetry
        self.draining = False
        self._runner: web.AppRunner | None = None
        self._dispatching: set[asyncio.Task[None]] = set()
        self._handoff: Handoff[AsyncBoltRequest] = Handoff(
            self._start_dispatch, quiet=event_quiet, longest=max(event_quiet, LONGEST_SECONDS)
        )
        self.port = 0
        self.web = web.Application(client_max_size=MAX_BODY_BYTES)
        self.web.router.add_get("/healthz", self._healthz)
        self.web.router.add_get("/readyz", self._readyz)
        if telemetry is not None:
            self.web.router.add_get("/metrics", self._metrics)
        if app is not None:
            self.web.router.add_post(EVENTS_PATH, self._events)

    async def start(self, host: str, port: int) -> int:
        """Listen; returns the port (useful with port 0)."""
        self._runner = web.AppRunner(self.web, access_log=None, handle_signals=False)
        await self._runner.setup()
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            sock.close()
            await self.stop()
            raise
        sock.setblocking(False)
        await web.SockSite(self._runner, sock).start()
        self.port = int(sock.getsockname()[1])
        return self.port

    async def stop(self, within: float = 5.0) -> None:
        """Stop listening, then let the events already acknowledged reach their listeners."""
        self.draining = True
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        self._handoff.flush()
        if self._dispatching:
            await asyncio.wait(self._dispatching, timeout=max(0.1, within))

    async def settle(self, within: float) -> None:
        """Wait (at most `within` seconds) for the events acknowledged before draining to be
        handed to their listeners."""
        self._handoff.flush()
        if self._dispatching and within > 0:
            await asyncio.wait(self._dispatching, timeout=within)

    async def _healthz(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def _readyz(self, request: web.Request) -> web.Response:
        state = await self._readiness()
        if self.draining:
            state["ready"] = False
        return web.json_response(state, status=200 if state.get("ready") else 503)

    async def _metrics(self, request: web.Request) -> web.Response:
        assert self._telemetry is not None
        response = web.Response(body=self._telemetry.exposition())
        response.headers["Content-Type"] = CONTENT_TYPE_LATEST
        return response

    async def _events(self, request: web.Request) -> web.Response:
        assert self._app is not None and self._verifier is not None
        raw = await request.read()
        if not signed(self._verifier, raw, request.headers):
            log.warning("refused a request with a missing or invalid signature from %s",
                        request.remote)
            return web.json_response({"error": "invalid signature"}, status=401)
        try:
            body = raw.decode("utf-8")
            payload = check_payload(body, request.content_type)
            bolt_request = AsyncBoltRequest(
                body=body, query=request.query_string, headers=dict(request.headers)
            )
        except (UnicodeDecodeError, MalformedRequestError, ValueError) as exc:
            log.warning("refused a malformed request: %s", exc)
            return web.json_response({"error": "malformed request"}, status=400)
        if self.draining and payload.get("type") == "event_callback":
            # Not acknowledged: Slack delivers it again later, to a bot that takes work.
            log.info("refused an event while shutting down: %s", payload.get("event_id"))
            return web.json_response({"error": "shutting down"}, status=503,
                                     headers={"Retry-After": "60"})
        if self.draining and "command" in payload:
            return web.json_response({"response_type": "ephemeral", "text": SHUTTING_DOWN})
        if payload.get("type") == "event_callback":
            # Slack reads nothing of an event's response but its 200: answer now, handle
            # after, so the ack never queues behind other work on this loop.
            self._handoff.add(bolt_request)
            return web.Response(status=200)
        response = await self._app.async_dispatch(bolt_request)  # commands: the body matters
        return await to_aiohttp_response(response)

    def _start_dispatch(self, request: AsyncBoltRequest) -> None:
        task = asyncio.create_task(self._dispatch(request))
        self._dispatching.add(task)
        task.add_done_callback(self._dispatching.discard)

    async def _dispatch(self, request: AsyncBoltRequest) -> None:
        assert self._app is not None
        try:
            response = await self._app.async_dispatch(request)
        except Exception:  # bolt handles listener errors; this is a last resort
            log.exception("dispatching an event failed")
            return
        if response.status >= 400:
            log.warning("an acknowledged event was not handled (%d)", response.status)
