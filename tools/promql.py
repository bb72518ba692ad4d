"""Raw PromQL, offered only when the metric source evaluates it (a live Prometheus).

The workload signals answer the usual questions from raw series, identically in the
sandbox and live; this tool is for the rest (a ratio across services, a recording rule, a
metric the signals do not know). It exists only live because a scenario is raw samples,
not a PromQL engine. Results are summarised like `metrics_query`: series count, per-series
min/mean/max/last and the change point, the highest series first, common labels said once.
Series of namespaces a human excluded are dropped from the answer, and a query that names
one is refused.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import Field

from engines.errors import ConstraintViolationError, ToolError
from tools._series import change_point, summarize
from tools._toolkit import (
    cut,
    default_step,
    finish,
    iso,
    parse_duration,
    parse_instant,
    round_to,
    shorten,
    time_window,
)
from tools.context import ToolContext
from tools.registry import Tool, tool
from tools.sources.base import MetricSource, QueryResult, Series

_NAMESPACE_MATCHER = re.compile(r"""\bnamespace\s*=~?\s*["'`]([^"'`]*)["'`]""")


def _refuse_excluded(ctx: ToolContext, query: str) -> None:
    """A query that selects an excluded namespace by name is refused, not just filtered."""
    excluded = ctx.constraints.excluded_namespaces
    for value in _NAMESPACE_MATCHER.findall(query):
        named = {value} | set(value.split("|"))
        if hit := sorted(named & set(excluded)):
            raise ConstraintViolationError(
                f"namespace {hit[0]} is excluded by a constraint from the thread; do not query it"
            )


def _describe(arguments: dict[str, Any]) -> str:
    return f"Running PromQL {shorten(str(arguments.get('query', '')), 80)}"


@tool(describe=_describe)
async def metrics_promql(
    ctx: ToolContext,
    query: str,
    instant: bool = False,
    since: str = "1h",
    start: str | None = None,
    end: str | None = None,
    step: str | None = None,
    limit: Annotated[int, Field(ge=1, le=30)] = 10,
) -> dict[str, Any]:
    """Run a PromQL expression on the live Prometheus and summarise the answer: how many
    series, and per series min/mean/max/last and the change point where its level shifted
    (range), or its value (instant). For what the workload signals do not cover, e.g.
    sum by (service) (rate(http_requests_total{code=~"5.."}[5m])).

    Args:
        query: A PromQL expression.
        instant: Evaluate once at `end` (default now) instead of over a window.
        since: How far back from now, e.g. 30m, 3h, 1d. Ignored when start is given.
        start: Window start as RFC 3339.
        end: Window end (or the instant) as RFC 3339; defaults to now.
        step: Resolution of a range query, e.g. 30s, 1m, 5m; default about 180 points.
        limit: Most series to show, the highest first.
    """
    engine = ctx.metrics.promql
    if engine is None:
        raise ToolError("metrics_promql needs a live Prometheus; use metrics_query instead")
    _refuse_excluded(ctx, query)
    if instant:
        at = parse_instant(end) if end else ctx.now
        answer = await engine.query(query, at)
        window = f"at {iso(at)}"
    else:
        begin, stop = time_window(ctx.now, since, start, end)
        seconds = (int(parse_duration(step).total_seconds()) if step
                   else default_step(begin, stop))
        answer = await engine.query_range(query, begin, stop, max(1, seconds))
        window = f"{iso(begin)} to {iso(stop)}, step {answer.step_seconds}s"
    return _summary(ctx, query, answer, window, limit)


def _summary(ctx: ToolContext, query: str, answer: QueryResult, window: str,
             limit: int) -> dict[str, Any]:
    result: dict[str, Any] = {"query": query, "window": window, "type": answer.result_type}
    if answer.result_type in ("scalar", "string"):
        value = answer.value
        result["value"] = round_to(value) if isinstance(value, float) else value
        return finish(result, str(value))
    kept = [s for s in answer.series if ctx.allows_namespace(s.labels.get("namespace"))]
    if dropped := len(answer.series) - len(kept):
        result["excluded_series"] = f"{dropped} series of excluded namespaces dropped"
    result["series"] = len(kept)
    if not kept:
        result["result"] = "no series: the expression matched nothing in the window"
        return finish(result, [])
    common = dict(set.intersection(*(set(_labels(s).items()) for s in kept)))
    if common:
        result["common_labels"] = common
    rows = [row for s in kept
            if (row := _row(s, common, ranged=answer.result_type == "matrix")) is not None]
    rows.sort(key=lambda item: item[0])
    result["by_series"] = cut([row for _, row in rows], limit)
    return finish(result, [{"metric": _labels(s), "values": [
        [round(p.timestamp.timestamp()), str(p.value)] for p in s.samples]} for s in kept])


def _labels(series: Series) -> dict[str, str]:
    return {"__name__": series.metric, **series.labels} if series.metric else dict(
        series.labels)


Row = tuple[float, dict[str, Any]]  # (sort key, row)


def _row(series: Series, common: dict[str, str], *, ranged: bool) -> Row | None:
    values = [p.value for p in series.samples if p.value == p.value]  # NaN is no data
    stats = summarize(values)
    if stats is None:
        return None
    labels = {k: v for k, v in _labels(series).items() if k not in common}
    row: dict[str, Any] = {"labels": labels or "(common labels only)"}
    if not ranged:
        row["value"] = round_to(stats.last)
        return -stats.last, row
    row |= {"min": round_to(stats.minimum), "mean": round_to(stats.mean),
            "max": round_to(stats.maximum), "last": round_to(stats.last),
            "points": stats.count}
    if (change := change_point(values)) is not None:
        at = [p for p in series.samples if p.value == p.value][change.index].timestamp
        row["change"] = {"at": iso(at), "before": round_to(change.before),
                         "after": round_to(change.after)}
    return -stats.maximum, row


PROMQL_TOOLS: tuple[Tool, ...] = (metrics_promql,)


def live_metric_tools(metrics: MetricSource) -> tuple[Tool, ...]:
    """The PromQL tool when the metric source evaluates PromQL (a live Prometheus), else
    nothing."""
    return PROMQL_TOOLS if metrics.promql is not None else ()


__all__ = ["PROMQL_TOOLS", "live_metric_tools", "metrics_promql"]
