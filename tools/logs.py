"""The log toolset: search, error patterns and counts over time, over a LogSource.

Logs are the largest and most repetitive observation, so no tool returns them raw: a
search collapses repeated messages and says how many lines matched in all, patterns turn
thousands of lines into templates with counts, and counts over time point at the moment
the rate changed. Excluded namespaces are filtered in the store's query itself.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from functools import partial
from typing import Annotated, Any

from pydantic import Field

from engines.errors import ToolRetryError
from tools._patterns import MAX_LINES, Line, Pattern, as_dict, condense, headline, mine
from tools._series import change_point
from tools._toolkit import check_namespace, cut, finish, iso, span, time_window
from tools.context import ToolContext
from tools.registry import Tool, tool
from tools.sources.base import LogQuery, LogRecord

# Severity ranks: a level filter keeps that level and every more severe one.
_RANKS = {"trace": 0, "debug": 1, "info": 2, "notice": 2, "warn": 3, "warning": 3,
          "error": 4, "err": 4, "severe": 4, "critical": 5, "crit": 5, "fatal": 5, "alert": 5,
          "emerg": 5, "emergency": 5, "panic": 5}
_DIGITS = re.compile(r"\d+")
_INTERVALS = (10, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)


def levels_from(level: str | None) -> tuple[str, ...]:
    """The level names at or above `level` ("warn" → warn, warning, error, fatal...)."""
    if not level or level.strip().lower() in ("any", "all", "*"):
        return ()
    rank = _RANKS.get(level.strip().lower())
    if rank is None:
        raise ToolRetryError(f"unknown level {level!r}: use debug, info, warn, error or fatal")
    return tuple(name for name, r in _RANKS.items() if r >= rank)


def _errors_first(pattern: Pattern) -> tuple[int, int]:
    """Errors before warnings, then the most frequent: when a budget cuts the list, it cuts
    the noise (a chatty warning) rather than the error that explains the incident."""
    worst = max((_RANKS.get(level.lower(), 2) for level in pattern.levels), default=2)
    return -worst, -pattern.count


def _query(ctx: ToolContext, start: datetime, end: datetime, *, text: str | None,
           level: str | None, service: str | None, namespace: str | None,
           pod: str | None) -> LogQuery:
    check_namespace(ctx, namespace)
    return LogQuery(start=start, end=end, text=text or None, levels=levels_from(level),
                    service=service or None, namespace=namespace or None, pod=pod or None,
                    exclude_namespaces=ctx.constraints.excluded_namespaces)


def _window(start: datetime, end: datetime) -> str:
    return f"{iso(start)} to {iso(end)} ({span((end - start).total_seconds())})"


def _raw_line(record: LogRecord) -> str:
    return f"{iso(record.timestamp)} {record.level} {record.service} {record.pod} {record.message}"


def _raw_text(records: Sequence[LogRecord]) -> str:
    """The lines as a plain log search would print them: the raw output the tools replace."""
    return "\n".join(_raw_line(r) for r in records)


def _level(record: LogRecord) -> str:
    return record.level


def _service(record: LogRecord) -> str:
    return record.service


def _pod(record: LogRecord) -> str:
    return record.pod


def _logs_line(arguments: dict[str, Any]) -> str:
    scope = arguments.get("service") or arguments.get("pod") or arguments.get("namespace")
    words = f" for {arguments['text']!r}" if arguments.get("text") else ""
    return f"Searching logs{' of ' + scope if scope else ''}{words}"


@tool(describe=_logs_line)
async def logs_search(
    ctx: ToolContext,
    text: str | None = None,
    level: str | None = None,
    service: str | None = None,
    namespace: str | None = None,
    pod: str | None = None,
    since: str = "1h",
    start: str | None = None,
    end: str | None = None,
    limit: Annotated[int, Field(ge=1, le=100)] = 15,
) -> dict[str, Any]:
    """Search the log store and return the newest matching lines (lines alike but for their
    numbers collapsed as ×N), the total number of matches, and their split by service and
    level.

    Args:
        text: Words that must all appear in the message (case-insensitive).
        level: Lowest severity to keep: debug, info, warn, error or fatal.
        service: Only this service (service.name).
        namespace: Only this Kubernetes namespace.
        pod: Only this pod.
        since: How far back from now, e.g. 30m, 2h, 1d. Ignored when start is given.
        start: Window start as RFC 3339, e.g. 2026-11-30T09:00:00Z.
        end: Window end as RFC 3339; defaults to now.
        limit: Most lines to return.
    """
    begin, stop = time_window(ctx.now, since, start, end)
    query = _query(ctx, begin, stop, text=text, level=level, service=service,
                   namespace=namespace, pod=pod)
    hits = await ctx.logs.search(query, limit=limit)
    result: dict[str, Any] = {"window": _window(begin, stop), "total": hits.total}
    if hits.total > len(hits.records):
        levels, services = await asyncio.gather(
            ctx.logs.top_values(query, "level", size=5),
            ctx.logs.top_values(query, "service", size=5),
        )
        result["by_level"] = dict(levels)
        if not service:
            result["by_service"] = dict(services)
    records = list(hits.records)
    shared = {}  # fields every shown line has in common are said once
    for key, getter in (("level", _level), ("service", _service), ("pod", _pod)):
        values = {getter(r) for r in records}
        if len(values) == 1 and (value := values.pop()):
            shared[key] = value
    if shared:
        result["shown_lines_share"] = shared
    lines: dict[str, str] = {}
    repeats: Counter[str] = Counter()
    for record in records:  # newest first: the first of a kind is the one shown
        kind = _DIGITS.sub("#", headline(record.message))
        repeats[kind] += 1
        if kind in lines:
            continue
        where = " ".join(getter(record) for key, getter in (
            ("level", _level), ("service", _service), ("pod", _pod)) if key not in shared)
        lines[kind] = (f"{iso(record.timestamp)} {where} | {condense(record.message, 300)}"
                       .replace("  ", " "))
    result["lines"] = [
        line + (f" (×{repeats[kind]} alike)" if repeats[kind] > 1 else "")
        for kind, line in lines.items()
    ] or "no line matches"
    if hits.total > len(records):
        result["lines_not_shown"] = hits.total - len(records)
    return finish(result, partial(_raw_text, hits.records))


@tool(describe=lambda a: f"Mining log patterns{' of ' + a['service'] if a.get('service') else ''}")
async def logs_error_patterns(
    ctx: ToolContext,
    service: str | None = None,
    namespace: str | None = None,
    pod: str | None = None,
    text: str | None = None,
    level: str = "warn",
    since: str = "1h",
    start: str | None = None,
    end: str | None = None,
    limit: Annotated[int, Field(ge=1, le=50)] = 8,
) -> dict[str, Any]:
    """Group matching log lines into message templates (variable parts masked as <NUM>,
    <IP>, <*>), the most severe level first and then the most frequent, each with its
    count, first and last time seen, one real example, and the services and pods it came
    from. The way to read many errors at once.

    Args:
        service: Only this service (service.name).
        namespace: Only this Kubernetes namespace.
        pod: Only this pod.
        text: Words that must all appear in the message (case-insensitive).
        level: Lowest severity to include: debug, info, warn, error, fatal or any.
        since: How far back from now, e.g. 30m, 2h, 1d. Ignored when start is given.
        start: Window start as RFC 3339, e.g. 2026-11-30T09:00:00Z.
        end: Window end as RFC 3339; defaults to now.
        limit: Most patterns to return.
    """
    begin, stop = time_window(ctx.now, since, start, end)
    query = _query(ctx, begin, stop, text=text, level=level, service=service,
                   namespace=namespace, pod=pod)
    hits = await ctx.logs.search(query, limit=MAX_LINES)
    records = list(hits.records)
    patterns = sorted(mine(Line(r.message, r.timestamp, r.service, r.pod, r.level)
                           for r in records), key=_errors_first)
    result: dict[str, Any] = {"window": _window(begin, stop), "matching_lines": hits.total}
    if hits.total > len(records):
        result["note"] = (f"patterns counted on the newest {len(records)} of {hits.total} lines; "
                          "first_seen is within that sample")
    result["distinct_patterns"] = len(patterns)
    result["patterns"] = cut([as_dict(p) for p in patterns], limit) or \
        "no line matches"
    if not service:
        services = Counter(r.service for r in records if r.service)
        if len(services) > 1:
            result["by_service"] = dict(services.most_common(5))
    return finish(result, partial(_raw_text, records))


@tool(describe=lambda a: "Counting log lines over time")
async def logs_count_over_time(
    ctx: ToolContext,
    text: str | None = None,
    level: str | None = None,
    service: str | None = None,
    namespace: str | None = None,
    pod: str | None = None,
    since: str = "6h",
    start: str | None = None,
    end: str | None = None,
    buckets: Annotated[int, Field(ge=4, le=60)] = 24,
) -> dict[str, Any]:
    """Count matching log lines per time bucket, and find the moment the rate changed (a
    change point with the rate before and after), the peak bucket, and the top services.

    Args:
        text: Words that must all appear in the message (case-insensitive).
        level: Lowest severity to count: debug, info, warn, error or fatal.
        service: Only this service (service.name).
        namespace: Only this Kubernetes namespace.
        pod: Only this pod.
        since: How far back from now, e.g. 30m, 6h, 1d. Ignored when start is given.
        start: Window start as RFC 3339, e.g. 2026-11-30T09:00:00Z.
        end: Window end as RFC 3339; defaults to now.
        buckets: About how many buckets to split the window into.
    """
    begin, stop = time_window(ctx.now, since, start, end)
    query = _query(ctx, begin, stop, text=text, level=level, service=service,
                   namespace=namespace, pod=pod)
    wanted = (stop - begin).total_seconds() / buckets
    interval = next((i for i in _INTERVALS if i >= wanted), _INTERVALS[-1])
    counts, services = await asyncio.gather(
        ctx.logs.count_over_time(query, interval_seconds=interval),
        ctx.logs.top_values(query, "service", size=5),
    )
    counts = [(at, n) for at, n in counts if at < stop]  # a bucket starting at `end` is empty
    values = [float(n) for _, n in counts]
    result: dict[str, Any] = {
        "window": _window(begin, stop),
        "interval": span(interval),
        "first_bucket": iso(counts[0][0]) if counts else None,
        "total": int(sum(values)),
        "counts": [int(v) for v in values],
    }
    if values and max(values) > 0:
        peak = max(range(len(values)), key=values.__getitem__)
        result["peak"] = {"at": iso(counts[peak][0]), "count": int(values[peak])}
    per_minute = 60 / interval
    if (change := change_point(values)) is not None:
        result["change"] = {
            "at": iso(counts[change.index][0]),
            "rate_before_per_min": round(change.before * per_minute, 2),
            "rate_after_per_min": round(change.after * per_minute, 2),
            "direction": "up" if change.after > change.before else "down",
        }
        if change.factor is not None:
            result["change"]["factor"] = round(change.factor, 1)
    else:
        result["change"] = "no significant change in rate"
    if not service and services:
        result["by_service"] = dict(services)
    return finish(result, [[iso(at), n] for at, n in counts])


LOG_TOOLS: tuple[Tool, ...] = (logs_error_patterns, logs_search, logs_count_over_time)

__all__ = ["LOG_TOOLS", "levels_from"]
