"""The bot's own operability, on the real `triage serve` in HTTP mode: Prometheus metrics at
/metrics, JSON log lines with the investigation id and no secret, graceful SIGTERM.

The bot runs as `python -m tests.bot.test_telemetry serve …`: the harness's test model,
wrapped so that each turn reports a known token usage (the test model itself reports none).
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import sys
import time
from argparse import Namespace
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import Any

import aiohttp
import pytest
import pytest_asyncio
from prometheus_client.parser import text_string_to_metric_families

from bot import render
from bot.cli import serve as serve_command
from bot.logging_setup import JsonFormatter, investigation_id, parse_level
from bot.logging_setup import configure as configure_logging
from bot.server import HttpServer
from bot.telemetry import CONTENT_TYPE_LATEST, MeteredModel, Telemetry
from engines.errors import ConfigurationError
from engines.events import InvestigationStopped, ObservationReceived
from engines.model import ModelReply, ModelRequest, Usage
from tests.bot.harness import (
    BotProcess,
    bot_process,
    button,
    ended,
    posted_with,
    state_of,
)
from tests.fakes.slack_api import TOKEN, FakeSlack, SlackSender

pytestmark = pytest.mark.asyncio(loop_scope="module")

MODULE = "tests.bot.test_telemetry"
REPORT = "checkout in prod keeps restarting, customers get 502s on payment"
INPUT_TOKENS, OUTPUT_TOKENS = 100, 7
PRICE_IN, PRICE_OUT = 2.5, 10.0  # dollars per million tokens
# A bot token's shape, built in pieces so that no scanner takes this file for a leak.
FAKE_TOKEN = "xox" + "b-1234567890-0987654321-" + "AbCdEfGhIjKlMnOpQrStUvWx"

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


class _ReportingModel:
    """The test model, reporting INPUT_TOKENS/OUTPUT_TOKENS on every turn."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    @property
    def name(self) -> str:
        return str(self._inner.name)

    async def complete(self, request: ModelRequest) -> ModelReply:
        reply = await self._inner.complete(request)
        return replace(reply, usage=Usage(INPUT_TOKENS, OUTPUT_TOKENS))


def samples(text: str) -> Samples:
    found: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def value(found: Samples, name: str, **labels: str) -> float:
    return found.get((name, tuple(sorted(labels.items()))), 0.0)


def matching(found: Samples, name: str, **labels: str) -> dict[tuple[tuple[str, str], ...], float]:
    return {key[1]: v for key, v in found.items()
            if key[0] == name and all(dict(key[1]).get(k) == v2 for k, v2 in labels.items())}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def slack() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as fake:
        yield fake


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def bot(slack: FakeSlack) -> AsyncIterator[BotProcess]:
    prices = {"TRIAGE_PRICE_INPUT_PER_MTOK": str(PRICE_IN), "TRIAGE_PRICE_OUTPUT_PER_MTOK":
              str(PRICE_OUT)}
    # The test model tells a ReAct story (pods at step 1, events at step 2): Reflexion's.
    async with bot_process(slack, module=MODULE, env=prices,
                           args=("--engine", "reflexion")) as process:
        yield process


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as client:
        yield client


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def sender(bot: BotProcess, session: aiohttp.ClientSession) -> SlackSender:
    return SlackSender(f"{bot.url}/slack/events", session)


async def scrape(session: aiohttp.ClientSession, url: str) -> Samples:
    async with session.get(f"{url}/metrics") as response:
        assert response.status == 200
        assert response.headers["Content-Type"] == CONTENT_TYPE_LATEST
        return samples(await response.text())


async def eventually(session: aiohttp.ClientSession, url: str,
                     condition: Callable[[Samples], bool], within: float = 5.0) -> Samples:
    """The run's end is counted as its task ends, a moment after its last post."""
    deadline = time.monotonic() + within
    while True:
        found = await scrape(session, url)
        if condition(found) or time.monotonic() > deadline:
            return found
        await asyncio.sleep(0.05)


async def test_metrics_after_a_mention(slack: FakeSlack, sender: SlackSender, bot: BotProcess,
                                       session: aiohttp.ClientSession) -> None:
    before = await scrape(session, bot.url)
    assert value(before, "triage_investigations_started_total") == 0

    _sent, ts = await sender.mention("CMETRICS", "UALICE", REPORT)
    status = await ended(slack, "CMETRICS", ts)
    assert state_of(status) == "done"

    found = await eventually(session, bot.url, lambda f: value(
        f, "triage_investigations_finished_total", outcome="diagnosed") == 1)
    assert value(found, "triage_investigations_started_total") == 1
    assert value(found, "triage_investigations_finished_total", outcome="diagnosed") == 1
    assert sum(matching(found, "triage_investigations_finished_total").values()) == 1
    assert value(found, "triage_investigation_steps_count") == 1
    assert value(found, "triage_investigation_steps_sum") == 3  # pods, events, the answer

    for tool in ("k8s_list_pods", "k8s_events"):
        assert value(found, "triage_tool_call_seconds_count", tool=tool, status="success") == 1
        assert value(found, "triage_tool_call_seconds_bucket", tool=tool, status="success",
                     le="+Inf") == 1

    requests = value(found, "triage_model_request_seconds_count", model="test-model")
    assert requests >= 3
    assert value(found, "triage_model_tokens_total", model="test-model",
                 direction="input") == INPUT_TOKENS * requests
    assert value(found, "triage_model_tokens_total", model="test-model",
                 direction="output") == OUTPUT_TOKENS * requests
    assert not matching(found, "triage_slack_api_errors_total")

    run = {"engine": "reflexion", "model": "test-model", "outcome": "diagnosed"}
    assert value(found, "triage_investigation_seconds_count", **run) == 1
    assert 0 < value(found, "triage_investigation_seconds_sum", **run) < 30
    assert value(found, "triage_investigation_tool_calls_sum", **run) == 2
    assert value(found, "triage_investigation_run_steps_sum", **run) == 3
    assert value(found, "triage_tool_calls_total", engine="reflexion", model="test-model",
                 cached="false") == 2
    tokens_in = value(found, "triage_investigation_tokens_total", engine="reflexion",
                      model="test-model", direction="input")
    tokens_out = value(found, "triage_investigation_tokens_total", engine="reflexion",
                       model="test-model", direction="output")
    assert (tokens_in, tokens_out) == (INPUT_TOKENS * requests, OUTPUT_TOKENS * requests)
    assert value(found, "triage_investigation_cost_dollars_total", engine="reflexion",
                 model="test-model") == pytest.approx(
        (tokens_in * PRICE_IN + tokens_out * PRICE_OUT) / 1e6)
    assert value(found, "triage_tool_cache_lookups_total", result="miss") == 2
    assert value(found, "triage_tool_cache_entries") == 2


async def test_a_second_report_is_answered_from_the_shared_cache(
    slack: FakeSlack, sender: SlackSender, bot: BotProcess, session: aiohttp.ClientSession
) -> None:
    before = await scrape(session, bot.url)
    _sent, ts = await sender.mention("CCACHE", "UBOB", REPORT)
    assert state_of(await ended(slack, "CCACHE", ts)) == "done"
    found = await eventually(session, bot.url, lambda f: value(
        f, "triage_investigations_finished_total", outcome="diagnosed") == value(
        before, "triage_investigations_finished_total", outcome="diagnosed") + 1)
    hits = value(found, "triage_tool_cache_lookups_total", result="hit") - value(
        before, "triage_tool_cache_lookups_total", result="hit")
    assert hits == 2, "the same pods and events, on the same scenario clock, within the TTL"
    assert value(found, "triage_tool_calls_total", engine="reflexion", model="test-model",
                 cached="true") - value(before, "triage_tool_calls_total", engine="reflexion",
                                        model="test-model", cached="true") == 2
    assert 0 < value(found, "triage_tool_cache_hit_ratio") <= 1
    assert value(found, "triage_tool_cache_bytes") > 0
    for tool in ("k8s_list_pods", "k8s_events"):  # no latency for what called nothing
        assert value(found, "triage_tool_call_seconds_count", tool=tool,
                     status="success") == value(before, "triage_tool_call_seconds_count",
                                                tool=tool, status="success")


async def test_a_steering_reply_counts_a_constraint(
    slack: FakeSlack, sender: SlackSender, bot: BotProcess, session: aiohttp.ClientSession
) -> None:
    _sent, ts = await sender.mention("CSTEER", "UALICE", f"[gate:steer] {REPORT}")
    await slack.wait_for(lambda f: posted_with(f, "CSTEER", ts, "*Step 1*"))
    await sender.message("CSTEER", "UALICE", "stop", thread_ts=ts)
    await slack.wait_for(lambda f: posted_with(f, "CSTEER", ts, "Noted"))
    bot.open_gate("steer")
    await ended(slack, "CSTEER", ts)
    found = await eventually(session, bot.url, lambda f: value(
        f, "triage_investigations_finished_total", outcome="stopped") == 1)
    assert value(found, "triage_constraints_received_total", kind="stop") == 1
    assert value(found, "triage_investigations_finished_total", outcome="stopped") == 1


async def test_a_slack_429_counts_errors_and_retries(
    slack: FakeSlack, sender: SlackSender, bot: BotProcess, session: aiohttp.ClientSession
) -> None:
    # The outbox waits out each 429 itself and sends the message again (its client has no
    # rate-limit retry handler, so each wait is checked against the lease).
    slack.rate_limit("chat.postMessage", times=3, retry_after=1, channel="CLIMIT", after=1)
    _sent, ts = await sender.mention("CLIMIT", "UALICE", REPORT)
    await ended(slack, "CLIMIT", ts, within=20)
    found = await scrape(session, bot.url)
    assert value(found, "triage_slack_api_retries_total", method="chat.postMessage") == 3
    assert value(found, "triage_slack_api_errors_total", method="chat.postMessage",
                 error="ratelimited") == 3


async def test_json_logs_carry_the_investigation_id_and_no_secret(
    slack: FakeSlack, sender: SlackSender, bot: BotProcess
) -> None:
    _sent, ts = await sender.mention("CLOGS", "UALICE", f"{REPORT}; the bot uses {FAKE_TOKEN}")
    await ended(slack, "CLOGS", ts)
    diagnosis = posted_with(slack, "CLOGS", ts, "oom_killed")[-1]
    investigation = button(diagnosis, render.CORRECT_ACTION)

    async def logged(needle: str) -> list[dict[str, Any]]:
        deadline = time.monotonic() + 5
        while True:
            entries = [json.loads(line) for line in bot.lines if line.startswith("{")]
            hits = [e for e in entries if needle in e["message"]]
            if hits or time.monotonic() > deadline:
                return hits
            await asyncio.sleep(0.05)

    ended_lines = await logged(f"investigation {investigation} ended")
    assert ended_lines and ended_lines[0]["investigation_id"] == investigation, \
        "a line logged by the investigation's task carries its id"
    started = await logged(f"investigation {investigation} started")
    assert started and started[0]["investigation_id"] == investigation
    assert "[REDACTED]" in started[0]["message"] and "the bot uses" in started[0]["message"]

    for line in bot.lines:
        assert FAKE_TOKEN not in line and TOKEN not in line, line
        if line.startswith("{"):
            entry = json.loads(line)
            assert {"time", "level", "logger", "message"} <= entry.keys(), line
            assert entry["level"] in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
        else:
            assert line.startswith("triage: "), f"not a JSON log line: {line}"


async def test_sigterm_refuses_new_work_and_exits_within_the_grace(
    slack: FakeSlack, session: aiohttp.ClientSession
) -> None:
    grace = 2.0
    async with bot_process(slack, module=MODULE, args=("--grace", str(grace))) as held:
        sender = SlackSender(f"{held.url}/slack/events", session)
        _sent, ts = await sender.mention("CTERM", "UALICE", f"[gate:never] {REPORT}")
        await slack.wait_for(lambda f: posted_with(f, "CTERM", ts, "*Step 1*"))
        async with session.get(f"{held.url}/readyz") as response:
            assert response.status == 200

        signalled = time.monotonic()
        held.process.terminate()
        for _ in range(100):  # /readyz turns 503 at once, while the run is still stopping
            try:
                async with session.get(f"{held.url}/readyz") as response:
                    if response.status == 503:
                        break
            except aiohttp.ClientError:
                pytest.fail("the port closed before the running investigation stopped")
            await asyncio.sleep(0.02)
        else:
            pytest.fail("/readyz never turned 503")
        assert time.monotonic() - signalled < 1.0

        refused, _ = await sender.mention("CTERM2", "UALICE", REPORT)
        assert refused.status == 503, "an event after SIGTERM is not acknowledged as work"
        command = await sender.command("CTERM2", "UALICE", REPORT)
        assert command.status == 200 and "restarting" in json.loads(command.body)["text"]

        code = await asyncio.wait_for(held.process.wait(), grace + 5)
        elapsed = time.monotonic() - signalled
        assert code == 0, held.log()
        assert elapsed < grace + 2.5, f"took {elapsed:.1f}s to exit with --grace {grace}"

    status = await ended(slack, "CTERM", ts, within=1)
    assert state_of(status) in ("stopped", "failed")
    assert not [m for m in slack.in_channel("CTERM2") if m.text.startswith("Investigating")]


# --- the pieces, in process ------------------------------------------------------------


async def test_metrics_are_served_without_the_events_endpoint(
    session: aiohttp.ClientSession,
) -> None:
    """Socket Mode's server: health and metrics, no /slack/events."""
    telemetry = Telemetry()
    telemetry.investigations_started.inc()

    async def ready() -> dict[str, Any]:
        return {"ready": True}

    server = HttpServer(ready, telemetry=telemetry)
    port = await server.start("127.0.0.1", 0)
    try:
        found = await scrape(session, f"http://127.0.0.1:{port}")
        assert value(found, "triage_investigations_started_total") == 1
        server.draining = True
        async with session.get(f"http://127.0.0.1:{port}/readyz") as response:
            assert response.status == 503
    finally:
        await server.stop()
    other = samples(Telemetry().exposition().decode())
    assert value(other, "triage_investigations_started_total") == 0, "registries are separate"


async def test_the_meter_and_the_metered_model() -> None:
    telemetry = Telemetry()
    meter = telemetry.meter()
    seen: list[object] = []

    async def sink(event: object) -> None:
        seen.append(event)

    wrapped = meter.wrap(sink)
    await wrapped(ObservationReceived("I1", 1, "c1", "logs_search", "error", "boom",
                                      seconds=0.2))
    await wrapped(ObservationReceived("I1", 2, "c2", "logs_search", "success", "ok",
                                      cached=True))
    await wrapped(InvestigationStopped("I1", 2, "max_steps"))
    meter.finish("failed")
    meter.finish("failed")
    assert len(seen) == 3
    model = MeteredModel(_ReportingModel(_Fixed()), telemetry)
    await model.complete(ModelRequest(messages=(), tools=()))
    found = samples(telemetry.exposition().decode())
    assert value(found, "triage_tool_call_seconds_count", tool="logs_search",
                 status="error") == 1
    assert value(found, "triage_tool_call_seconds_count", tool="logs_search",
                 status="success") == 0, "a cached result called nothing"
    assert value(found, "triage_investigations_finished_total", outcome="max_steps") == 1
    assert value(found, "triage_investigation_steps_sum") == 2
    assert value(found, "triage_model_tokens_total", model="fixed", direction="input") == 100
    assert value(found, "triage_model_request_seconds_count", model="fixed") == 1


class _Fixed:
    name = "fixed"

    async def complete(self, request: ModelRequest) -> ModelReply:
        return ModelReply("done")


async def test_log_level_and_format() -> None:
    assert parse_level(None) == logging.INFO
    assert parse_level(" debug ") == logging.DEBUG
    with pytest.raises(ConfigurationError, match="TRIAGE_LOG_LEVEL must be"):
        parse_level("loud")

    record = logging.LogRecord("triage.x", logging.WARNING, __file__, 1,
                               "token %s leaked", (FAKE_TOKEN,), None)
    token = investigation_id.set("INV-42")
    try:
        line = JsonFormatter().format(record)
    finally:
        investigation_id.reset(token)
    entry = json.loads(line)
    assert entry["investigation_id"] == "INV-42" and entry["level"] == "WARNING"
    assert entry["logger"] == "triage.x" and FAKE_TOKEN not in line
    assert "\n" not in line


async def test_configure_sets_the_level_and_writes_json_lines() -> None:
    root = logging.getLogger()
    saved, level = list(root.handlers), root.level
    for handler in saved:
        root.removeHandler(handler)
    stream = io.StringIO()
    try:
        assert configure_logging({"TRIAGE_LOG_LEVEL": "warning"}, stream) == logging.WARNING
        logging.getLogger("triage.test").info("hidden")
        logging.getLogger("triage.test").warning("shown with %s", FAKE_TOKEN)
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in saved:
            root.addHandler(handler)
        root.setLevel(level)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1
    entry = json.loads(lines[0])
    assert entry["message"] == "shown with [REDACTED]" and entry["level"] == "WARNING"
    with pytest.raises(ConfigurationError, match="TRIAGE_LOG_FORMAT"):
        configure_logging({"TRIAGE_LOG_FORMAT": "xml"})


async def test_a_bad_log_level_stops_serve_with_a_clear_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TRIAGE_LOG_LEVEL", "loud")
    root = logging.getLogger()
    handlers = list(root.handlers)
    with pytest.raises(ConfigurationError, match=r"TRIAGE_LOG_LEVEL must be .* not 'loud'"):
        await serve_command.run(Namespace(model=None, scenario="checkout-oom"))
    assert root.handlers == handlers


def _main() -> int:
    """`python -m tests.bot.test_telemetry ARGS…`: tests.bot.serve_process, with usage."""
    import bot.cli.serve
    import tests.bot.serve_process as serve_process
    from bot.cli import main

    build = serve_process._build_model

    def build_reporting(name: str | None = None) -> Any:
        return _ReportingModel(build(name))

    bot.cli.serve.build_model = build_reporting
    return main(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(_main())
