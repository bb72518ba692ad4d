"""`triage serve`: run the Slack bot.

Socket Mode when `SLACK_APP_TOKEN` is set, HTTP mode (events at /slack/events, signatures
checked with `SLACK_SIGNING_SECRET`) otherwise; `/healthz`, `/readyz` and `/metrics` on
`--port` in both. `serve` is the whole lifecycle and takes its runner as an argument, so
tests and benchmarks run exactly this code with a model of their choosing. SIGTERM and
SIGINT stop it gracefully: `/readyz` answers 503 at once and new work is refused (events get
a 503 so that Slack delivers them again elsewhere), running investigations stop with a
summary, queued posts go out, and the process exits within `--grace` seconds. Logs are JSON
lines on stderr at `TRIAGE_LOG_LEVEL` (see bot/logging_setup.py).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import aiohttp
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import charts
from bot.access import AccessControl, AccessPolicy
from bot.app import SlackSettings, build_app, build_client
from bot.background import Background
from bot.cli.investigate import add_check_option, add_live_options, live_setting
from bot.dedupe import EventDeduper
from bot.feedback import MemoryStore, Store
from bot.investigations.admission import AdmissionLimits
from bot.investigations.inbox import Delivery, poll_from_env
from bot.investigations.leases import lease_seconds_from_env
from bot.investigations.registry import Investigations
from bot.investigations.resume import resume_unfinished
from bot.investigations.run import Runner, RunRequest
from bot.investigations.steering import ReplyReader, reader_for
from bot.investigations.takeover import start_ownership
from bot.listeners._common import tell
from bot.logging_setup import configure as configure_logging
from bot.monitor import Prices
from bot.outbox import Outbox
from bot.server import EVENTS_PATH, HttpServer
from bot.services import Services
from bot.store import Store as SqlStore
from bot.store import StoreError
from bot.store.url import describe, resolve_url
from bot.streaming import Mode, mode_from_env, streaming_policy
from bot.telemetry import MeteredModel, Telemetry, metered_retry_handlers
from bot.wiring import (
    DEFAULT_ENGINE,
    ENGINES,
    SEARCH_CHOICES,
    TAKES_CORRECTIONS,
    Setting,
    build_check_model,
    build_model,
    investigate,
    reply_model,
    scenario_setting,
)
from engines.errors import ConfigurationError
from engines.model import Model
from engines.react import InvestigationResult
from engines.tokens import warm_up
from tools.cache import ToolCache, tool_cache_from_env
from tools.sources.base import MetricSource

log = logging.getLogger("triage.serve")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="run the Slack bot",
        description="Run the Slack bot: Socket Mode when SLACK_APP_TOKEN is set, else HTTP "
        "mode on --port with events at /slack/events. SLACK_BOT_TOKEN is always needed.",
    )
    parser.add_argument(
        "--port",
        type=int,
        default=3000,
        help="HTTP port: Slack events (HTTP mode) and /healthz, /readyz, /metrics",
    )
    parser.add_argument("--host", default="0.0.0.0", help="address to listen on")
    parser.add_argument(
        "--scenario",
        metavar="ID|DIR",
        help="serve the tools from a scenario instead of live backends",
    )
    parser.add_argument(
        "--model",
        metavar="NAME",
        help="'analyzer' (offline, the default without OPENAI_API_KEY) or an OpenAI model name",
    )
    parser.add_argument(
        "--engine", default=DEFAULT_ENGINE, choices=ENGINES,
        help=f"reasoning engine (default: {DEFAULT_ENGINE}: the router, inside Reflexion's "
        "evaluator)",
    )
    parser.add_argument("--search", default="bfs", choices=SEARCH_CHOICES,
                        help="how tot explores its hypotheses: beam (bfs) or depth-first (dfs)")
    add_check_option(parser)
    parser.add_argument(
        "--grace", type=_grace, default=DEFAULT_GRACE, metavar="SECONDS",
        help="on SIGTERM, how long running investigations get to finish before the bot exits "
        f"(default: {DEFAULT_GRACE:g}; keep it under the pod's termination grace period)",
    )
    add_live_options(parser)
    parser.set_defaults(handler=run)


DEFAULT_GRACE = 10.0


def _grace(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {value!r}") from None
    if not 0 < seconds <= 3600:
        raise argparse.ArgumentTypeError("must be more than 0 and at most 3600 seconds")
    return seconds


def make_runner(setting: Setting, model: Model, engine: str = "react",
                search: str = "bfs", check: Model | None = None,
                cache: ToolCache | None = None) -> Runner:
    """Investigations run through the same wiring as `triage investigate`. A resumed run
    keeps its incident's clock; notes (a human's correction) need Reflexion or the router,
    and the other engines get the correction as a constraint only. `cache` is shared by
    every run."""

    async def run_one(request: RunRequest) -> InvestigationResult:
        where = replace(setting, now=request.now) if request.now is not None else setting
        return await investigate(
            request.text,
            where,
            model,
            engine=engine,
            sink=request.sink,
            inbox=request.inbox,
            approver=request.approver,
            incident_id=request.investigation_id,
            lessons=request.lessons,
            resume=request.resume,
            notes=request.notes if engine in TAKES_CORRECTIONS else (),
            search=search,
            check=check,
            cache=cache,
        )

    return run_one


async def run(args: argparse.Namespace) -> int:
    _configure_logging()
    settings = SlackSettings.from_env(os.environ)
    try:
        policy = AccessPolicy.from_env(os.environ)
    except ValueError as exc:
        raise ConfigurationError(f"TRIAGE_ALLOWED_CHANNELS / TRIAGE_ALLOWED_USERS: {exc}") from None
    telemetry = Telemetry(Prices.from_env(os.environ))
    cache = tool_cache_from_env(os.environ)
    if cache is not None:
        telemetry.watch_cache(cache)
    model = MeteredModel(build_model(args.model), telemetry)
    built = build_check_model(getattr(args, "check_model", None))
    check = MeteredModel(built, telemetry) if built is not None else None
    warm_up()  # the tokenizer's tables, built now rather than inside the first step
    if args.scenario:
        setting = scenario_setting(args.scenario)
    else:
        setting = await live_setting(args.config, context=args.context)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    try:
        store = await open_store()
        try:
            await serve(
                settings,
                make_runner(setting, model, args.engine, args.search, check, cache),
                model_name=model.name,
                policy=policy,
                host=args.host,
                port=args.port,
                stop=stop,
                store=store,
                metrics=setting.sources.metrics,
                grace=getattr(args, "grace", DEFAULT_GRACE),
                telemetry=telemetry,
                reader=reader_for(setting.sources, reply_model(model, check)),
            )
        finally:
            await store.close()
    finally:
        if not args.scenario:
            from bot.config import close_sources

            await close_sources(setting.sources)
    return 0


async def open_store() -> SqlStore:
    """The SQL store: PostgreSQL when TRIAGE_DATABASE_URL names one, else the SQLite file
    in the user's data directory; migrated to the newest schema before anything is served."""
    url = resolve_url()
    try:
        store = await SqlStore.open(url)
    except StoreError as exc:
        raise ConfigurationError(f"cannot open the store {describe(url)}: {exc}") from None
    try:
        await store.migrate()
    except StoreError as exc:
        await store.close()
        raise ConfigurationError(f"cannot migrate the store {describe(url)}: {exc}") from None
    log.info("store: %s", describe(url))
    return store


def _configure_logging() -> None:
    """JSON lines on stderr at TRIAGE_LOG_LEVEL (a bad value is a ConfigurationError);
    Slack's and aiohttp's own loggers stay at WARNING or above."""
    configure_logging(os.environ, sys.stderr)


def _announce(line: str) -> None:
    print(f"triage: {line}", file=sys.stderr, flush=True)


async def authenticate(client: AsyncWebClient) -> dict[str, Any]:
    """auth.test: proves the token works and tells the bot who it is."""
    try:
        response = await client.auth_test()
    except SlackApiError as exc:
        raise ConfigurationError(
            f"Slack refused SLACK_BOT_TOKEN ({exc.response.get('error')})"
        ) from None
    except (aiohttp.ClientError, TimeoutError, OSError) as exc:
        raise ConfigurationError(f"cannot reach Slack at {client.base_url}: {exc}") from None
    return dict(response.data) if isinstance(response.data, dict) else {}


async def check_app_token(client: AsyncWebClient, app_token: str) -> None:
    """Socket Mode's client retries a refused token forever; say what is wrong instead."""
    try:
        await client.apps_connections_open(app_token=app_token)
    except SlackApiError as exc:
        raise ConfigurationError(
            f"Slack refused SLACK_APP_TOKEN ({exc.response.get('error')}); it needs the "
            "connections:write scope and Socket Mode enabled on the app"
        ) from None
    except (aiohttp.ClientError, TimeoutError, OSError) as exc:
        raise ConfigurationError(f"cannot reach Slack at {client.base_url}: {exc}") from None


def settle_heap() -> None:
    """Move what start-up built (modules, a scenario's data, the tokenizer's and the charts'
    tables) out of the garbage collector's sight. It lives as long as the process, and a
    full collection that walks it stalls the loop for as long as ~90 ms: an ack Slack waits
    for. Frozen, a full pass walks only the work in flight."""
    gc.collect()
    gc.freeze()


async def serve(
    settings: SlackSettings,
    runner: Runner,
    *,
    model_name: str,
    stop: asyncio.Event,
    policy: AccessPolicy | None = None,
    host: str = "0.0.0.0",
    port: int = 3000,
    store: Store | None = None,
    grace: float = 10.0,
    announce: Callable[[str], None] = _announce,
    metrics: MetricSource | None = None,
    telemetry: Telemetry | None = None,
    reader: ReplyReader | None = None,
    streaming: Mode | None = None,
) -> Services:
    """Run the bot until `stop` is set; returns its services (tests inspect the store).

    Once `stop` is set the bot exits within `grace` seconds: not ready at once, no new
    work, running investigations asked to stop and then cancelled, queued posts sent.
    `streaming` is TRIAGE_SLACK_STREAMING's auto / on / off (bot.streaming) when not given."""
    telemetry = telemetry if telemetry is not None else Telemetry()
    session = aiohttp.ClientSession()
    client = build_client(settings, session)
    client.retry_handlers = metered_retry_handlers(client.retry_handlers, telemetry)
    posting = build_client(settings, session, rate_limit_retries=False)
    posting.retry_handlers = metered_retry_handlers(posting.retry_handlers, telemetry)
    background = Background()
    store = store if store is not None else MemoryStore()
    surfaces = await streaming_policy(streaming or mode_from_env(os.environ), store, background)
    outbox = Outbox(posting, telemetry, surfaces)
    try:
        limits, poll = AdmissionLimits.from_env(os.environ), poll_from_env(os.environ)
        lease_seconds = lease_seconds_from_env(os.environ)
    except ValueError as exc:
        raise ConfigurationError(str(exc)) from None
    investigations = Investigations(
        runner, outbox, store, background, model_name=model_name, metrics=metrics,
        telemetry=telemetry, reader=reader, limits=limits, lease_seconds=lease_seconds,
    )
    services = Services(
        client,
        investigations,
        AccessControl(policy or AccessPolicy(), client),
        store,
        background,
        EventDeduper(),
    )
    app = build_app(services, settings)
    delivery = Delivery(investigations, store, poll)  # events other replicas received
    delivery.tell = lambda channel, user, text, thread: tell(services, channel, user, text,
                                                             thread)
    identity: dict[str, Any] = {}
    socket: AsyncSocketModeHandler | None = None

    async def readiness() -> dict[str, Any]:
        connected = bool(identity)
        if socket is not None:
            connected = connected and await socket.client.is_connected()
        return {
            "ready": connected and not stop.is_set(),
            "mode": "socket" if settings.socket_mode else "http",
            "investigations": investigations.running,
        }

    server = HttpServer(
        readiness,
        app=None if settings.socket_mode else app,
        signing_secret=settings.signing_secret,
        telemetry=telemetry,
    )
    loop = asyncio.get_running_loop()
    try:
        try:
            bound = await server.start(host, port)
        except OSError as exc:
            raise ConfigurationError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
        if metrics is not None:
            charts.warm_up()
        identity.update(await authenticate(client))
        outbox.streams.team = str(identity.get("team_id", ""))
        await resume_unfinished(store, investigations)
        start_ownership(store, investigations, background)  # leases; takeover on PostgreSQL
        background.spawn(investigations.admission.run(), name="admission")
        background.spawn(delivery.run(), name="inbox")
        settle_heap()
        who = f"@{identity.get('user', 'bot')} in {identity.get('team', 'the workspace')}"
        if settings.socket_mode:
            assert settings.app_token is not None
            await check_app_token(client, settings.app_token)
            socket = AsyncSocketModeHandler(app, settings.app_token, web_client=client)
            await socket.connect_async()
            announce(
                f"serving Slack in Socket Mode as {who}; health on http://{host}:{bound}/healthz"
            )
        else:
            announce(
                f"serving Slack in HTTP mode as {who} on http://{host}:{bound}"
                f"{EVENTS_PATH} (health: /healthz, /readyz; metrics: /metrics)"
            )
        await stop.wait()
    finally:
        # Everything below shares one deadline: the pod's grace period is for all of it.
        deadline = loop.time() + grace

        def left(floor: float = 0.1) -> float:
            return max(floor, deadline - loop.time())

        server.draining = True  # /readyz says 503 and new events are refused from now on
        if identity:
            announce("shutting down: stopping running investigations")
        if socket is not None:
            await socket.close_async()
        await server.settle(min(1.0, left()))  # acked events reach the listeners first
        await investigations.shutdown(left(0.0))
        delivery.wake()  # its loop sees the shutdown and ends
        try:
            await asyncio.wait_for(background.join(), timeout=left())
        except TimeoutError:
            log.warning("background work still running at exit was abandoned")
        await server.stop(min(1.0, left()))
        await session.close()
        await charts.shutdown()
    return services
