"""Log tools over 100,000 ECS documents in a real Elasticsearch: is each call under 1 s?

`python -m tests.bench logs` starts a single-node Elasticsearch (tests/services), indexes
generated documents shaped like a busy namespace's logs (a dozen services, thirty pods,
forty message templates with variable ids, durations and addresses, mostly info with
bursts of warnings and errors) over six hours, then times every log tool call through a
Toolset, as an investigation makes it, plus the source calls underneath (the work
Elasticsearch does). Each call runs five times; the first is cold.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from engines.model import ToolCall
from tests.services._process import NotProvisionedError
from tests.services.elasticsearch import LOGS_TEMPLATE, ElasticsearchServer
from tools.context import ToolContext
from tools.logs import LOG_TOOLS, levels_from
from tools.sources.base import LogQuery, Sources
from tools.sources.live_elasticsearch import MAX_SAMPLE, ElasticsearchLogs
from tools.toolset import Toolset

DOCUMENTS = int(os.environ.get("TRIAGE_BENCH_DOCS", "100000"))
INDEX = "logs-bench"
NOW = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)
SPAN = timedelta(hours=6)
TARGET_SECONDS = 1.0
RUNS = 5

_SERVICES = ["checkout", "cart", "payments", "catalog", "frontend", "search", "orders",
             "inventory", "shipping", "recommender", "auth", "notifications"]
_TEMPLATES = [
    ("info", "GET /api/{path}/{id} 200 in {ms}ms"),
    ("info", "POST /api/{path} 201 in {ms}ms"),
    ("info", "cache hit for key {path}:{id}"),
    ("info", "processed batch {id} with {n} items in {ms}ms"),
    ("info", "connected to {ip}:5432 pool size {n}"),
    ("debug", "span {hex} finished in {ms}ms"),
    ("warn", "slow query on {path} took {ms}ms"),
    ("warn", "retrying request to {ip}:8080 attempt {n}"),
    ("warn", "GET /api/{path}/{id} 404"),
    ("error", "timeout after {ms}ms calling {path} at {ip}:8080"),
    ("error", "connection refused to {ip}:6379"),
    ("error", "payment {id} failed: card_declined"),
    ("error", "java.lang.OutOfMemoryError: Java heap space in worker {n}"),
    ("error", "upstream {path} returned 503 for order {id}"),
]


def _document(rng: random.Random, moment: datetime) -> dict[str, Any]:
    service = rng.choice(_SERVICES)
    pod = f"{service}-7c9d5f8b4-{rng.randrange(3):05d}"
    burst = NOW - timedelta(minutes=50) <= moment <= NOW - timedelta(minutes=20)
    weights = [30, 10, 8, 6, 4, 8, 4, 3, 3, 6 if burst else 1, 4 if burst else 1, 1, 1,
               5 if burst else 1]
    level, template = rng.choices(_TEMPLATES, weights=weights)[0]
    message = template.format(
        path=rng.choice(["products", "cart", "orders", "users", "payments"]),
        id=rng.randrange(10**6), ms=rng.randrange(2, 9000), n=rng.randrange(1, 64),
        ip=f"10.0.{rng.randrange(4)}.{rng.randrange(255)}", hex=f"{rng.getrandbits(64):016x}")
    return {"@timestamp": moment.isoformat().replace("+00:00", "Z"), "message": message,
            "log": {"level": level}, "service": {"name": service},
            "kubernetes": {"namespace": "shop", "pod": {"name": pod},
                           "container": {"name": service}},
            "http": {"response": {"status_code": 503 if "503" in message else 200}}}


def _index(server: ElasticsearchServer) -> float:
    """Generate and bulk-index DOCUMENTS documents; return the seconds it took."""
    began = time.perf_counter()
    server.request("PUT", "/_index_template/triage-logs", LOGS_TEMPLATE)
    rng = random.Random(7)
    action = json.dumps({"index": {"_index": INDEX}})
    step = SPAN / DOCUMENTS
    batch: list[str] = []
    for number in range(DOCUMENTS):
        batch.append(f"{action}\n{json.dumps(_document(rng, NOW - SPAN + step * number))}\n")
        if len(batch) == 5000 or number == DOCUMENTS - 1:
            answer = server.request("POST", "/_bulk", ndjson="".join(batch).encode())
            if answer.get("errors"):
                raise RuntimeError("bulk indexing rejected documents")
            batch = []
    server.request("POST", f"/{INDEX}/_refresh")
    count = server.request("GET", f"/{INDEX}/_count")["count"]
    if count != DOCUMENTS:
        raise RuntimeError(f"{INDEX} holds {count} documents, expected {DOCUMENTS}")
    return time.perf_counter() - began


async def _timed(call: Callable[[], Awaitable[Any]]) -> tuple[list[float], Any]:
    times, result = [], None
    for _ in range(RUNS):
        began = time.perf_counter()
        result = await call()
        times.append(time.perf_counter() - began)
    return times, result


def _row(name: str, times: list[float], note: str) -> tuple[str, bool]:
    warm = times[1:] or times
    median, worst = statistics.median(warm), max(times)
    ok = median < TARGET_SECONDS
    return (f"{name:<44} cold {times[0]:6.3f}s  median {median:6.3f}s  max {worst:6.3f}s  "
            f"{'ok ' if ok else 'SLOW'}  {note}"), ok


async def main() -> None:
    try:
        server = ElasticsearchServer(heap=os.environ.get("TRIAGE_BENCH_HEAP", "1g"))
    except NotProvisionedError as exc:
        print(f"skipped: {exc}")
        return
    server.start()
    try:
        indexed = _index(server)
        print(f"indexed {DOCUMENTS:,} ECS documents into {INDEX} in {indexed:.1f}s "
              f"(Elasticsearch started in {server.startup_seconds:.1f}s, "
              f"RSS {server.rss_bytes() / 2**20:.0f} MiB)")
        source = ElasticsearchLogs.connect(server.url, index=INDEX, timeout=30)
        try:
            await _bench(source)
        finally:
            await source.close()
    finally:
        server.stop()


async def _bench(source: ElasticsearchLogs) -> None:
    sources = Sources(logs=source)
    context = ToolContext(now=NOW, sources=sources)
    week = LogQuery(NOW - SPAN, NOW)
    warnings = LogQuery(NOW - SPAN, NOW, levels=levels_from("warn"))
    rows: list[tuple[str, bool]] = []
    for name, call, note in [
        ("source.search (sample of 5000, warn+)", lambda: source.search(warnings,
                                                                        limit=MAX_SAMPLE), ""),
        ("source.count_over_time (6h / 15m buckets)",
         lambda: source.count_over_time(week, interval_seconds=900), ""),
        ("source.top_values (service)", lambda: source.top_values(week, "service"), ""),
        ("source.top_values (pod, errors)", lambda: source.top_values(
            LogQuery(NOW - SPAN, NOW, levels=levels_from("error")), "pod"), ""),
    ]:
        times, result = await _timed(call)
        detail = note or _shape(result)
        rows.append(_row(name, times, detail))
    calls: list[tuple[str, dict[str, Any]]] = [
        ("logs_error_patterns", {"since": "6h"}),
        ("logs_error_patterns", {"since": "1h", "level": "error"}),
        ("logs_count_over_time", {"since": "6h", "level": "error"}),
        ("logs_count_over_time", {"since": "6h", "text": "timeout"}),
        ("logs_search", {"text": "connection refused", "since": "6h"}),
        ("logs_search", {"service": "payments", "level": "error", "since": "1h"}),
    ]
    for tool_name, args in calls:

        async def call(tool_name: str = tool_name, args: dict[str, Any] = args) -> Any:
            fresh = Toolset(LOG_TOOLS, context)  # a new one each time: no result cache
            return await fresh.call(ToolCall("bench", tool_name, args))

        times, result = await _timed(call)
        if result.status != "success":
            raise RuntimeError(f"{tool_name} failed: {result.text}")
        rows.append(_row(f"{tool_name}({', '.join(f'{k}={v}' for k, v in args.items())})",
                         times, _tool_note(result.data)))
    rows.append(await _smaller_sample(context, 2000))
    print(f"target: under {TARGET_SECONDS:g}s per call (warm median); {RUNS} runs each")
    for line, _ in rows:
        print(line)
    slow = [line for line, ok in rows if not ok]
    print(f"{len(rows) - len(slow)}/{len(rows)} calls within target")


async def _smaller_sample(context: ToolContext, lines: int) -> tuple[str, bool]:
    """The patterns tool if it mined a smaller sample (tools.logs.MAX_LINES): a figure
    for choosing that constant, since fetching and mining grow with it."""
    import tools.logs

    saved = tools.logs.MAX_LINES
    tools.logs.MAX_LINES = lines
    try:
        times, result = await _timed(lambda: Toolset(LOG_TOOLS, context).call(
            ToolCall("bench", "logs_error_patterns", {"since": "6h"})))
    finally:
        tools.logs.MAX_LINES = saved
    return _row(f"logs_error_patterns(since=6h) on {lines} lines", times,
                _tool_note(result.data) + " (what-if: MAX_LINES)")


def _shape(result: Any) -> str:
    if hasattr(result, "total"):
        return f"{result.total:,} matching, {len(result.records)} returned"
    if isinstance(result, list):
        return f"{len(result)} rows"
    return ""


def _tool_note(data: dict[str, Any]) -> str:
    if "matching_lines" in data:
        return f"{data['matching_lines']:,} lines → {data.get('distinct_patterns')} patterns"
    if "counts" in data:
        return f"{data['total']:,} lines in {len(data['counts'])} buckets"
    return f"{data.get('total', 0):,} matching"
