"""The metric toolset: a workload's health signals, and a summary of any metric.

A metric series is hundreds of numbers; what an investigation needs is "peaked at 98% of
the memory limit" or "5xx ratio rose from 0.5% to 19% at 09:10". The tools query raw
series (cAdvisor, kube-state-metrics and common exporter names) and return statistics and
change points, each signal saying whether it looks abnormal and why.
"""

from __future__ import annotations

import asyncio
import difflib
import re
from collections.abc import Mapping
from functools import partial
from itertools import pairwise
from typing import Annotated, Any

from pydantic import Field

from engines.errors import ToolError
from tools import _signals
from tools._k8s_common import Owners, name_of, quantity
from tools._series import change_point, increases, points, summarize
from tools._toolkit import (
    check_namespace,
    cut,
    default_step,
    finish,
    iso,
    round_to,
    time_window,
)
from tools.context import ToolContext
from tools.registry import Tool, tool
from tools.sources.base import Series

_REQUESTS = ("http_requests_total", "http_server_requests_seconds_count",
             "http_server_requests_total", "http_server_request_duration_seconds_count",
             "requests_total")
_LATENCY = ("http_request_duration_seconds_bucket", "http_server_requests_seconds_bucket",
            "http_server_request_duration_seconds_bucket", "request_duration_seconds_bucket",
            "http_request_duration_milliseconds_bucket", "grpc_server_handling_seconds_bucket")
_WORKLOAD_LABELS = ("service", "app", "job", "deployment", "app_kubernetes_io_name")
_COUNTER_SUFFIXES = ("_total", "_count", "_sum", "_bucket")


async def _pods(ctx: ToolContext, namespace: str, workload: str) -> tuple[str, set[str], list[str]]:
    """A pod-name regex for the workload, pods known to belong to it, and name prefixes of
    other workloads to leave out (`checkout-worker-…` is not a pod of `checkout`).

    Generated names are `<workload>-<hash>-<id>` (Deployment), `<workload>-<id>` (DaemonSet,
    Job) or `<workload>-<ordinal>` (StatefulSet); past pods count too, which the cluster no
    longer lists, hence the pattern rather than a list.
    """
    base = re.escape(workload)
    regex = f"{base}-(?:[a-z0-9]{{5,10}}-[a-z0-9]{{5}}|[a-z0-9]{{5}}|[0-9]+)"
    known: set[str] = set()
    siblings: list[str] = []
    if ctx.sources.cluster is not None:
        kinds = ("Pod", "ReplicaSet", "Job", "Deployment", "StatefulSet", "DaemonSet", "CronJob")
        listed = await asyncio.gather(*(ctx.cluster.list_objects(k, namespace) for k in kinds))
        pods, replicasets, jobs = listed[0], listed[1], listed[2]
        owners = Owners(replicasets, jobs)
        known = {name_of(p) for p in pods if owners.workload(p)[1] == workload}
        siblings = sorted({name_of(o) for group in listed[3:] for o in group
                           if name_of(o).startswith(workload + "-")})
        if known:
            regex = f"(?:{regex}|{'|'.join(re.escape(n) for n in sorted(known))})"
    return regex, known, siblings


def _ours(series: list[Series], siblings: list[str], known: set[str]) -> list[Series]:
    """Drop series of pods that belong to a sibling workload with a longer name."""
    def keep(s: Series) -> bool:
        pod = s.labels.get("pod", "")
        return pod in known or not any(pod.startswith(sib + "-") for sib in siblings)
    return [s for s in series if keep(s)]


async def _spec_limits(
    ctx: ToolContext, namespace: str, workload: str
) -> dict[str, dict[str, float]]:
    """Limits from the workload's pod template, by resource then container: the fallback
    when no limit metric is exported."""
    limits: dict[str, dict[str, float]] = {"memory": {}, "cpu": {}}
    if ctx.sources.cluster is None:
        return limits
    for kind in ("Deployment", "StatefulSet", "DaemonSet"):
        obj = await ctx.cluster.get_object(kind, namespace, workload)
        if obj is None:
            continue
        template = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
        for container in template.get("containers") or []:
            for resource in limits:
                value = quantity(((container.get("resources") or {}).get("limits") or {}).get(
                    resource))
                if value:
                    limits[resource][str(container.get("name"))] = value
        break
    return limits


@tool(describe="Reading the metrics of {namespace}/{workload}")
async def metrics_workload_signals(
    ctx: ToolContext,
    namespace: str,
    workload: str,
    since: str = "3h",
    start: str | None = None,
    end: str | None = None,
) -> dict[str, Any]:
    """A workload's health signals computed from its metrics over a window: memory working
    set against the limit (peak, ratio, trend, drops at the limit), CPU throttling and use
    against the limit, container restarts, request rate and 5xx ratio before/after a change
    point, latency p50/p95/p99 before/after, and for a consumer the lag of the consumer
    group named after it (growing: it falls behind). Each signal says whether it is abnormal
    and why. A window that starts well before the trouble shows the change best.

    Args:
        namespace: The workload's namespace.
        workload: Deployment, StatefulSet or DaemonSet name; its pods are found by name.
        since: How far back from now, e.g. 1h, 3h, 1d. Ignored when start is given.
        start: Window start as RFC 3339, e.g. 2026-11-30T08:00:00Z.
        end: Window end as RFC 3339; defaults to now.
    """
    check_namespace(ctx, namespace)
    begin, stop = time_window(ctx.now, since, start, end)
    step = default_step(begin, stop)
    regex, known, siblings = await _pods(ctx, namespace, workload)
    pod_match = {"namespace": namespace, "pod": "~" + regex}
    containers = {**pod_match, "container": "~.+"}

    async def fetch(metric: str, matchers: Mapping[str, str]) -> list[Series]:
        found = await ctx.metrics.series(metric, matchers, begin, stop, step_seconds=step)
        return [s for s in _ours(found, siblings, known)
                if s.labels.get("container") != "POD"]

    names = ("container_memory_working_set_bytes", "kube_pod_container_resource_limits",
             "container_spec_memory_limit_bytes", "container_cpu_cfs_throttled_periods_total",
             "container_cpu_cfs_periods_total", "container_cpu_usage_seconds_total",
             "kube_pod_container_resource_limits", "kube_pod_container_status_restarts_total",
             "kube_pod_container_status_last_terminated_reason")
    matchers = (containers, {**containers, "resource": "memory"}, containers, containers,
                containers, containers, {**containers, "resource": "cpu"}, containers,
                containers)
    fetched, spec_limits, (lag_metric, lag_series) = await asyncio.gather(
        asyncio.gather(*(fetch(n, m) for n, m in zip(names, matchers, strict=True))),
        _spec_limits(ctx, namespace, workload),
        _consumer_lag(ctx, workload, begin, stop, step),
    )
    (memory, memory_limits, cadvisor_limits, throttled, periods, usage, cpu_limits, restarts,
     reasons) = fetched
    request_metric, request_series = await _first(fetch, _REQUESTS, pod_match, namespace,
                                                  workload)
    latency_metric, latency_series = await _first(fetch, _LATENCY, pod_match, namespace,
                                                  workload)
    signals: dict[str, Any] = {}
    missing = []
    if memory:
        limits = {k: v for k, v in _signals.last_values(cadvisor_limits).items()
                  if 0 < v < 2**60} | _signals.last_values(memory_limits)
        signals["memory"] = _signals.memory(memory, limits, spec_limits["memory"])
    else:
        missing.append("memory (container_memory_working_set_bytes)")
    if periods or usage:
        signals["cpu"] = _signals.cpu(throttled, periods, usage,
                                      _signals.last_values(cpu_limits), step,
                                      spec_limits["cpu"])
    else:
        missing.append("cpu (container_cpu_cfs_periods_total, container_cpu_usage_seconds_total)")
    if restarts:
        signals["restarts"] = _signals.restarts(restarts, reasons)
    else:
        missing.append("restarts (kube_pod_container_status_restarts_total)")
    if request_series:
        signals["requests"] = _signals.requests(request_series, request_metric, step)
    else:
        missing.append("requests (" + ", ".join(_REQUESTS[:2]) + ", …)")
    if latency_series:
        signals["latency"] = _signals.latency(latency_series, latency_metric)
    else:
        missing.append("latency (" + ", ".join(_LATENCY[:2]) + ", …)")
    if lag_series:  # only a consumer has one: its absence is no missing data
        signals["backlog"] = _signals.backlog(lag_series, lag_metric)
    pods = sorted({s.labels.get("pod", "") for group in (memory, restarts, request_series)
                   for s in group} - {""})
    result: dict[str, Any] = {
        "workload": f"{namespace}/{workload}",
        "window": f"{iso(begin)} to {iso(stop)}, step {step}s",
        "pods_seen": cut(pods, 6),
        "abnormal": [name for name, signal in signals.items() if signal.get("abnormal")],
        "signals": signals,
    }
    if missing:
        result["no_data"] = missing
    raw = [*memory, *throttled, *periods, *usage, *restarts, *request_series, *latency_series]
    return finish(result, partial(_matrix, raw))


# (metric, group label) of the consumer-lag exporters: kafka_exporter, its summed form, and
# the group-labelled form of other exporters.
_LAG = (("kafka_consumergroup_lag", "consumergroup"),
        ("kafka_consumergroup_lag_sum", "consumergroup"),
        ("kafka_consumer_group_lag", "group"))


async def _consumer_lag(ctx: ToolContext, workload: str, begin: Any, stop: Any,
                        step: int) -> tuple[str, list[Series]]:
    """The lag of the consumer group named after the workload (`notifier`, `notifier-v2`):
    exporters label it by group, not by the consumer's pods. The forms are asked at once."""
    group = "~" + re.escape(workload) + r"([-_.].*)?"
    found = await asyncio.gather(*(ctx.metrics.series(metric, {label: group}, begin, stop,
                                                      step_seconds=step)
                                   for metric, label in _LAG))
    return next(((m, f) for (m, _), f in zip(_LAG, found, strict=True) if f), ("", []))


async def _first(fetch: Any, metrics: tuple[str, ...], pod_match: dict[str, str],
                 namespace: str, workload: str) -> tuple[str, list[Series]]:
    """The first metric name that has series for the workload: by pod name, then by a
    workload-level label (service, app, job...) for exporters that do not label pods."""
    for metric in metrics:
        if found := await fetch(metric, pod_match):
            return metric, found
    for metric in metrics:
        for label in _WORKLOAD_LABELS:
            if found := await fetch(metric, {"namespace": namespace, label: workload}):
                return metric, found
    return "", []


def _matrix(series: list[Series]) -> list[dict[str, Any]]:
    """Series as a Prometheus range-query result: the raw output the signals replace."""
    return [{"metric": {"__name__": s.metric, **s.labels},
             "values": [[round(p.timestamp.timestamp()), str(p.value)] for p in s.samples]}
            for s in series]


@tool(describe=lambda a: f"Summarising metric {a.get('metric')}")
async def metrics_query(
    ctx: ToolContext,
    metric: str,
    labels: dict[str, str] | None = None,
    since: str = "1h",
    start: str | None = None,
    end: str | None = None,
    limit: Annotated[int, Field(ge=1, le=30)] = 10,
) -> dict[str, Any]:
    """Summarise every series of one metric over a window: min/mean/max/last per series
    (counters ending in _total/_count/_sum as per-second rates; *_bucket histograms as
    p50/p95/p99 over all series) and the change point where a series' level shifted.

    Args:
        metric: Exact metric name, e.g. container_memory_working_set_bytes or up.
        labels: Label matchers; a value starting with ~ is a regular expression,
            e.g. {"namespace": "shop", "pod": "~checkout-.*"}.
        since: How far back from now, e.g. 30m, 3h, 1d. Ignored when start is given.
        start: Window start as RFC 3339.
        end: Window end as RFC 3339; defaults to now.
        limit: Most series to return, the highest first.
    """
    matchers = dict(labels or {})
    check_namespace(ctx, matchers.get("namespace"))
    begin, stop = time_window(ctx.now, since, start, end)
    step = default_step(begin, stop)
    found = [s for s in await ctx.metrics.series(metric, matchers, begin, stop, step_seconds=step)
             if ctx.allows_namespace(s.labels.get("namespace"))]
    if not found:
        raise ToolError(_not_found(ctx, metric, matchers))
    result: dict[str, Any] = {"metric": metric, "window": f"{iso(begin)} to {iso(stop)}",
                              "series": len(found)}
    if metric.endswith("_bucket"):
        result["histogram"] = {k: v for k, v in _signals.latency(found, metric).items()
                               if k not in ("metric",)}
        return finish(result, partial(_matrix, found))
    counter = await _is_counter(ctx, metric, found)
    common = dict(set.intersection(*(set(s.labels.items()) for s in found)))
    result["common_labels"] = common
    result["values"] = "per-second rate" if counter else "raw values"
    rows = []
    for series in found:
        shown = ([(at, d / step) for at, d in increases(series.samples)] if counter
                 else points(series.samples))
        stats = summarize([v for _, v in shown])
        if stats is None:
            continue
        row: dict[str, Any] = {"labels": {k: v for k, v in series.labels.items()
                                          if k not in common} or "(common labels only)",
                               "min": round_to(stats.minimum), "mean": round_to(stats.mean),
                               "max": round_to(stats.maximum), "last": round_to(stats.last)}
        if (change := change_point([v for _, v in shown])) is not None:
            row["change"] = {"at": iso(shown[change.index][0]),
                             "before": round_to(change.before), "after": round_to(change.after)}
        rows.append((-stats.maximum, row))
    rows.sort(key=lambda item: item[0])
    result["by_series"] = cut([row for _, row in rows], limit)
    return finish(result, partial(_matrix, found))


async def _is_counter(ctx: ToolContext, metric: str, found: list[Series]) -> bool:
    """Read as per-second rates: counters, and the `_count`/`_sum` of histograms and
    summaries. The declared type decides when the source knows it; otherwise the name's
    suffix does, if every series only rises."""
    declared = await ctx.metrics.metric_type(metric)
    if declared:
        return declared == "counter" or (declared in ("histogram", "summary") and
                                         metric.endswith(("_count", "_sum")))
    return metric.endswith(_COUNTER_SUFFIXES) and all(_only_rises(s) for s in found)


def _only_rises(series: Series) -> bool:
    """Whether a series behaves like a counter: it never goes down, except for a reset to
    (near) zero when its process restarts. `pg_stat_activity_count` ends in `_count` and is
    a gauge: read as a counter, its ups and downs would turn into nonsense rates."""
    return all(after.value >= before.value or after.value < 0.5 * before.value
               for before, after in pairwise(series.samples))


def _not_found(ctx: ToolContext, metric: str, matchers: dict[str, str]) -> str:
    """Say what is missing, with close metric names when the source can list them."""
    text = f"no series of {metric} matching {matchers or 'any labels'} in the window"
    close = difflib.get_close_matches(metric, ctx.metrics.metric_names(), n=5, cutoff=0.5)
    if close:
        text += f"; similar metric names: {', '.join(close)}"
    return text


METRIC_TOOLS: tuple[Tool, ...] = (metrics_workload_signals, metrics_query)

__all__ = ["METRIC_TOOLS"]
