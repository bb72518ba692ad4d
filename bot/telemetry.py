"""The bot's own Prometheus metrics, served at `/metrics` on its HTTP port.

Every bot owns a `Telemetry`, whose metrics live in a registry of their own (never the
process-wide default), so that tests and several bots in one process never collide. It is
fed from four places: the event stream of each investigation (`InvestigationMeter` wraps
the sink the bot routes events through), the model (`MeteredModel`: latency and tokens),
the Slack Web API client (errors in the outbox, retries through `metered_retry_handlers`),
and the shared tool cache (`watch_cache`: its lookups, entries and bytes, read when scraped).

The monitor's series (bot/monitor.py) carry only low-cardinality labels: the engine, the
model and how the run ended. Tool names label tool latency (a fixed catalog); nothing is
labelled by investigation, channel or user.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from urllib.parse import urlparse

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import generate_latest
from prometheus_client.registry import Collector
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState

from bot.monitor import Prices
from engines.events import (
    Event,
    EventSink,
    InvestigationStarted,
    InvestigationStopped,
    ObservationReceived,
)
from engines.model import Model, ModelReply, ModelRequest, Usage
from tools.cache import ToolCache

__all__ = ["CONTENT_TYPE_LATEST", "InvestigationMeter", "MeteredModel", "Telemetry",
           "metered_retry_handlers", "slack_method"]

_STEP_BUCKETS = (1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50)
_TOOL_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
_MODEL_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120)
_RUN_BUCKETS = (0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 1800, 3600)
_CALL_BUCKETS = (0, 1, 2, 4, 6, 8, 10, 15, 20, 30, 40, 60, 100)
_RUN_LABELS = ("engine", "model", "outcome")


class Telemetry:
    """The metrics of one bot, in their own registry. `prices` (bot.monitor) make the
    estimated cost a series too."""

    def __init__(self, prices: Prices | None = None) -> None:
        self.registry = CollectorRegistry()
        self.prices = prices
        r = self.registry
        self.investigations_started = Counter(
            "triage_investigations_started", "Investigations started (new, resumed or retried).",
            registry=r)
        self.investigations_finished = Counter(
            "triage_investigations_finished", "Investigations finished, by how they ended.",
            ["outcome"], registry=r)
        self.investigation_steps = Histogram(
            "triage_investigation_steps", "Steps an investigation took.",
            buckets=_STEP_BUCKETS, registry=r)
        self.tool_call_seconds = Histogram(
            "triage_tool_call_seconds", "Latency of tool calls, by tool and status.",
            ["tool", "status"], buckets=_TOOL_BUCKETS, registry=r)
        self.model_request_seconds = Histogram(
            "triage_model_request_seconds", "Latency of model requests, by model.",
            ["model"], buckets=_MODEL_BUCKETS, registry=r)
        self.model_tokens = Counter(
            "triage_model_tokens", "Tokens the model reported, by model and direction.",
            ["model", "direction"], registry=r)
        self.slack_api_errors = Counter(
            "triage_slack_api_errors", "Slack Web API calls that failed, by method and error.",
            ["method", "error"], registry=r)
        self.slack_api_retries = Counter(
            "triage_slack_api_retries", "Slack Web API calls sent again, by method.",
            ["method"], registry=r)
        self.constraints_received = Counter(
            "triage_constraints_received", "Constraints humans gave running investigations.",
            ["kind"], registry=r)
        self.investigation_seconds = Histogram(
            "triage_investigation_seconds", "Time from the start of a run to its end (to the "
            "diagnosis when outcome is done), by engine, model and outcome.",
            _RUN_LABELS, buckets=_RUN_BUCKETS, registry=r)
        self.investigation_tool_calls = Histogram(
            "triage_investigation_tool_calls", "Tool calls one investigation made, by engine, "
            "model and outcome.", _RUN_LABELS, buckets=_CALL_BUCKETS, registry=r)
        self.investigation_steps_by = Histogram(
            "triage_investigation_run_steps", "Steps one investigation took, by engine, model "
            "and outcome.", _RUN_LABELS, buckets=_STEP_BUCKETS, registry=r)
        self.tool_calls = Counter(
            "triage_tool_calls", "Tool calls, by engine, model and whether a cache answered "
            "(cached=true: the investigation's own or the shared one).",
            ["engine", "model", "cached"], registry=r)
        self.investigation_tokens = Counter(
            "triage_investigation_tokens", "Tokens of finished investigations, by engine, "
            "model and direction.", ["engine", "model", "direction"], registry=r)
        self.investigation_cost = Counter(
            "triage_investigation_cost_dollars", "Estimated cost of finished investigations "
            "at the configured prices, by engine and model.", ["engine", "model"], registry=r)

    def watch_cache(self, cache: ToolCache) -> None:
        """Expose the shared tool cache's figures, read at each scrape."""
        self.registry.register(_CacheCollector(cache))

    def exposition(self) -> bytes:
        """The text exposition format (`CONTENT_TYPE_LATEST`)."""
        return generate_latest(self.registry)

    def meter(self) -> InvestigationMeter:
        return InvestigationMeter(self)

    def slack_error(self, method: str, error: str) -> None:
        self.slack_api_errors.labels(method=method, error=error or "unknown_error").inc()

    def slack_retry(self, method: str) -> None:
        self.slack_api_retries.labels(method=method).inc()

    def constraint(self, kind: str) -> None:
        self.constraints_received.labels(kind=kind).inc()


class InvestigationMeter:
    """Watches one investigation's events: tool latencies as they come, and at the end the
    outcome (the stop reason) and the number of steps. `finish` counts it exactly once."""

    def __init__(self, telemetry: Telemetry) -> None:
        self._telemetry = telemetry
        self.reason: str | None = None
        self.steps = 0
        self.engine = "unknown"
        self.model = "unknown"
        self.tool_calls = 0
        self._started = time.monotonic()
        self._finished = False

    def wrap(self, sink: EventSink) -> EventSink:
        async def metered(event: Event) -> None:
            self.observe(event)
            await sink(event)

        return metered

    def observe(self, event: Event) -> None:
        self.steps = max(self.steps, getattr(event, "step", 0) or 0)
        if isinstance(event, ObservationReceived):
            self.tool_calls += 1
            self._telemetry.tool_calls.labels(
                engine=self.engine, model=self.model, cached=str(event.cached).lower()).inc()
            if not event.cached:
                self._telemetry.tool_call_seconds.labels(
                    tool=event.tool, status=event.status
                ).observe(max(0.0, event.seconds))
        elif isinstance(event, InvestigationStarted):
            self.engine, self.model = event.engine or "unknown", event.model or "unknown"
        elif isinstance(event, InvestigationStopped):
            self.reason = event.reason

    def finish(self, fallback: str, usage: Usage | None = None) -> None:
        """The run ended: by its InvestigationStopped's reason, else by `fallback` (a run
        that crashed or was cancelled never says why); `usage` is its model's tokens."""
        if self._finished:
            return
        self._finished = True
        t = self._telemetry
        outcome = self.reason or fallback
        t.investigations_finished.labels(outcome=outcome).inc()
        t.investigation_steps.observe(self.steps)
        labels = {"engine": self.engine, "model": self.model, "outcome": outcome}
        t.investigation_seconds.labels(**labels).observe(time.monotonic() - self._started)
        t.investigation_tool_calls.labels(**labels).observe(self.tool_calls)
        t.investigation_steps_by.labels(**labels).observe(self.steps)
        if usage is None:
            return
        tokens_in, tokens_out = max(0, usage.input_tokens), max(0, usage.output_tokens)
        tokens = t.investigation_tokens
        tokens.labels(engine=self.engine, model=self.model, direction="input").inc(tokens_in)
        tokens.labels(engine=self.engine, model=self.model, direction="output").inc(tokens_out)
        if t.prices is not None:
            t.investigation_cost.labels(engine=self.engine, model=self.model).inc(
                t.prices.cost(tokens_in, tokens_out))


class _CacheCollector(Collector):
    """The shared tool cache's counters and sizes, as they are when Prometheus scrapes."""

    def __init__(self, cache: ToolCache) -> None:
        self._cache = cache

    def collect(self) -> Iterator[Metric]:
        stats = self._cache.stats
        lookups = CounterMetricFamily(
            "triage_tool_cache_lookups", "Shared tool cache lookups, by result: hit (an "
            "entry), shared (joined an identical call in flight), miss (ran).",
            labels=["result"])
        for result, value in (("hit", stats.hits), ("shared", stats.shared),
                              ("miss", stats.misses)):
            lookups.add_metric([result], value)
        yield lookups
        yield CounterMetricFamily("triage_tool_cache_evictions",
                                  "Entries pushed out by the size bounds.", stats.evictions)
        yield CounterMetricFamily("triage_tool_cache_uncached",
                                  "Calls that ran but were not kept (errors).", stats.uncached)
        yield GaugeMetricFamily("triage_tool_cache_entries", "Entries held now.",
                                self._cache.entries)
        yield GaugeMetricFamily("triage_tool_cache_bytes", "Bytes held now (estimated).",
                                self._cache.bytes)
        yield GaugeMetricFamily("triage_tool_cache_hit_ratio",
                                "Hits and shared calls over lookups, since start.",
                                stats.hit_rate)


class MeteredModel:
    """A model whose requests are timed and whose reported tokens are counted."""

    def __init__(self, model: Model, telemetry: Telemetry) -> None:
        self._model = model
        self._telemetry = telemetry

    @property
    def name(self) -> str:
        return self._model.name

    @property
    def inner(self) -> Model:
        return self._model

    async def complete(self, request: ModelRequest) -> ModelReply:
        started = time.perf_counter()
        try:
            reply = await self._model.complete(request)
        finally:
            self._telemetry.model_request_seconds.labels(model=self.name).observe(
                time.perf_counter() - started)
        usage = reply.usage
        tokens = self._telemetry.model_tokens
        tokens.labels(model=self.name, direction="input").inc(max(0, usage.input_tokens))
        tokens.labels(model=self.name, direction="output").inc(max(0, usage.output_tokens))
        return reply

    def __getattr__(self, attribute: str) -> object:  # anything else the engine may read
        return getattr(self._model, attribute)


def slack_method(url: str) -> str:
    """`chat.postMessage` from `https://slack.com/api/chat.postMessage`."""
    path = urlparse(url).path if "://" in url else url
    return path.rstrip("/").rsplit("/", 1)[-1] or "unknown"


class _CountingRetryHandler(AsyncRetryHandler):
    """Delegates to slack_sdk's own handler and counts each retry it decides on."""

    def __init__(self, inner: AsyncRetryHandler, telemetry: Telemetry) -> None:
        super().__init__(inner.max_retry_count, inner.interval_calculator)
        self._inner = inner
        self._telemetry = telemetry

    async def can_retry_async(
        self, *, state: RetryState, request: HttpRequest,
        response: HttpResponse | None = None, error: Exception | None = None,
    ) -> bool:
        return await self._inner.can_retry_async(
            state=state, request=request, response=response, error=error)

    async def prepare_for_next_attempt_async(
        self, *, state: RetryState, request: HttpRequest,
        response: HttpResponse | None = None, error: Exception | None = None,
    ) -> None:
        self._telemetry.slack_retry(slack_method(request.url))
        await self._inner.prepare_for_next_attempt_async(
            state=state, request=request, response=response, error=error)


def metered_retry_handlers(
    handlers: Sequence[AsyncRetryHandler], telemetry: Telemetry
) -> list[AsyncRetryHandler]:
    """The client's retry handlers, each counting the retries it makes."""
    return [h if isinstance(h, _CountingRetryHandler) else _CountingRetryHandler(h, telemetry)
            for h in handlers]
