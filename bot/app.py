"""The async Bolt app and its Web API client.

The Web API client is built once, here, and injected everywhere (the app, the outbox, the
access checks), so `SLACK_API_URL` and the retry policy apply to every call: 429s wait for
Retry-After, connection resets and 5xx are retried. Events are deduplicated (bot/dedupe.py)
before any listener runs, so that a redelivery never starts a second investigation.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp
from slack_bolt.app.async_app import AsyncApp
from slack_bolt.response import BoltResponse
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

from bot.listeners import register_all
from bot.services import Services
from engines.errors import ConfigurationError

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SlackSettings:
    """The Slack side of the configuration, from the environment."""

    bot_token: str
    app_token: str | None = None
    signing_secret: str | None = None
    api_url: str | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> SlackSettings:
        bot_token = environ.get("SLACK_BOT_TOKEN", "").strip()
        if not bot_token:
            raise ConfigurationError("SLACK_BOT_TOKEN is not set (the bot token, xoxb-…)")
        app_token = environ.get("SLACK_APP_TOKEN", "").strip() or None
        secret = environ.get("SLACK_SIGNING_SECRET", "").strip() or None
        if app_token is None and secret is None:
            raise ConfigurationError(
                "HTTP mode needs SLACK_SIGNING_SECRET to verify Slack's requests; or set "
                "SLACK_APP_TOKEN (xapp-…) to use Socket Mode"
            )
        api_url = environ.get("SLACK_API_URL", "").strip() or None
        if api_url is not None and not api_url.startswith(("http://", "https://")):
            raise ConfigurationError(f"SLACK_API_URL must be an http(s) URL, not {api_url!r}")
        return cls(bot_token, app_token, secret, api_url)

    @property
    def socket_mode(self) -> bool:
        return self.app_token is not None


def build_client(
    settings: SlackSettings, session: aiohttp.ClientSession | None = None, *,
    rate_limit_retries: bool = True,
) -> AsyncWebClient:
    """A Web API client of the bot. Give it a session: without one slack_sdk opens a new
    connection (and TLS handshake) for every call.

    The outbox's client is built with `rate_limit_retries=False`: a 429 is then the
    outbox's to wait out, so that the message is checked against the investigation's lease
    again before it is resent (slack_sdk's own retry would send it unchecked, even after
    another replica took the run over during the wait)."""
    handlers: list[AsyncRetryHandler] = [
        AsyncConnectionErrorRetryHandler(max_retry_count=2),
        AsyncServerErrorRetryHandler(max_retry_count=2),
    ]
    if rate_limit_retries:
        handlers.insert(0, AsyncRateLimitErrorRetryHandler(max_retry_count=2))
    arguments: dict[str, Any] = {
        "token": settings.bot_token,
        "timeout": 15,
        "session": session,
        "retry_handlers": handlers,
    }
    if settings.api_url:
        arguments["base_url"] = settings.api_url.rstrip("/") + "/"
    return AsyncWebClient(**arguments)


def _retry_number(headers: Mapping[str, Any]) -> str:
    """Slack's redelivery counter: a header in HTTP mode, and in Socket Mode the envelope's
    `retry_attempt`, which the adapter turns into the same header."""
    values = headers.get("x-slack-retry-num") or []
    return str(values[0]) if values else ""


class _InjectedClientNote(logging.Filter):
    """Bolt reads SLACK_BOT_TOKEN itself and warns that the injected client wins; that is
    the intent here, not a misconfiguration worth a warning at every start."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "`token` will be unused" not in record.getMessage()


def build_app(services: Services, settings: SlackSettings) -> AsyncApp:
    """The Bolt app with the dedupe middleware and every listener registered."""
    bolt_log = logging.getLogger("triage.bolt")
    if not any(isinstance(f, _InjectedClientNote) for f in bolt_log.filters):
        bolt_log.addFilter(_InjectedClientNote())
    app = AsyncApp(
        name="triage",
        client=services.client,
        signing_secret=settings.signing_secret or "",
        request_verification_enabled=settings.signing_secret is not None,
        process_before_response=False,
        logger=bolt_log,
    )

    @app.middleware
    async def deduplicate(
        body: dict[str, Any], req: Any, next_: Callable[[], Awaitable[BoltResponse]]
    ) -> BoltResponse:
        event_id = body.get("event_id")
        if isinstance(event_id, str) and not services.deduper.first_time(event_id):
            log.info("ignored a redelivery of %s (retry %s)", event_id,
                     _retry_number(req.headers) or "?")
            return BoltResponse(status=200, body="")
        return await next_()

    @app.error
    async def on_error(error: Exception, body: dict[str, Any]) -> None:
        log.error("listener failed on a %s request: %s", body.get("type") or "command",
                  error, exc_info=error)

    register_all(app, services)
    return app
