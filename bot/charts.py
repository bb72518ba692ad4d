"""Metric signals worth seeing, as chart images for the thread.

Metric tools hand the model statistics ("peaked at 98% of its 256Mi limit"), not the
hundreds of samples behind them, and that is right for the model. A human sees a shape
faster than they read a number, so when a metric observation is abnormal (a workload signal
flagged, or a level shift in a queried metric) the bot asks the same metric source for the
series over the same window and draws them. Drawing uses matplotlib's object API (no
pyplot state) in a worker process of its own: a chart is tens of milliseconds of pure
Python that, in a thread of the bot's process, holds the GIL and leaves reference cycles
for the collector, and so stalled the event loop (and Slack's acks) by as much. In its own
process it costs the loop nothing and runs on the other core.
"""

from __future__ import annotations

import asyncio
import io
import itertools
import logging
import multiprocessing
import os
import re
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from engines.events import ObservationReceived, ToolCalled
from tools.scenarios import parse_time
from tools.sources.base import MetricSource, Series

log = logging.getLogger(__name__)

MAX_LINES = 6
_WINDOW = re.compile(r"^(?P<start>\S+) to (?P<end>[^,\s]+)(?:, step (?P<step>\d+)s)?")
_COUNTER = ("_total", "_count", "_sum")
# What to draw for each abnormal workload signal: metric, extra matchers, per-second rate?
_SIGNALS: dict[str, tuple[str, dict[str, str], bool, str]] = {
    "memory": ("container_memory_working_set_bytes", {"container": "~.+"}, False, "bytes"),
    "restarts": ("kube_pod_container_status_restarts_total", {}, False, ""),
    "cpu": ("container_cpu_cfs_throttled_periods_total", {"container": "~.+"}, True, "/s"),
    "requests": ("http_requests_total", {}, True, "/s"),
}



class _Painter:
    """The one drawing process, started on first use (or by `warm_up`) and started again if
    it dies; charts are small, so one process keeps up with many investigations."""

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None

    def submit(self, plan: ChartPlan, lines: Sequence[Line]) -> Future[bytes]:
        if self._pool is None:
            # spawn, not fork: the bot's process has threads and an event loop to not copy.
            context = multiprocessing.get_context("spawn")
            self._pool = ProcessPoolExecutor(max_workers=1, mp_context=context,
                                             initializer=_follow_parent,
                                             initargs=(os.getpid(),))
        return self._pool.submit(draw, plan, list(lines))

    def broken(self) -> None:
        """Forget a pool whose process died; the next chart starts a new one."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def shutdown(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


_PAINTER = _Painter()


def _follow_parent(parent: int) -> None:
    """In the drawing process: exit as soon as the bot's process is gone (killed, say)
    rather than live on as an orphan holding the bot's stderr open."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, name="follow-parent", daemon=True).start()


@dataclass(frozen=True, slots=True)
class ChartPlan:
    """Which series to fetch and how to draw them."""

    title: str
    metric: str
    matchers: Mapping[str, str]
    start: datetime
    end: datetime
    step: int = 60
    rate: bool = False
    unit: str = ""
    pod_pattern: str | None = None
    limit: float | None = None  # drawn as a dashed line: "how close to the limit" at a glance

    @property
    def filename(self) -> str:
        safe = re.sub(r"[^a-z0-9]+", "-", self.title.lower()).strip("-")
        return f"{safe[:60] or 'chart'}.png"


@dataclass(frozen=True, slots=True)
class Line:
    label: str
    points: tuple[tuple[datetime, float], ...] = field(default_factory=tuple)


def _window(data: Mapping[str, Any]) -> tuple[datetime, datetime, int] | None:
    match = _WINDOW.match(str(data.get("window", "")))
    if match is None:
        return None
    try:
        start, end = parse_time(match.group("start")), parse_time(match.group("end"))
    except ValueError:
        return None
    step = int(match.group("step") or 0) or max(60, int((end - start).total_seconds() / 180))
    return start, end, step


_BYTES = re.compile(r"^(?P<n>[\d.]+)\s*(?P<unit>[KMGT]i?)?B?$")
_POWERS = {"K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12,
           "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}


def _memory_limit(data: Mapping[str, Any]) -> float | None:
    """The limit the memory signal reported ("256Mi"), in bytes."""
    try:
        containers = data["signals"]["memory"]["containers"]
        match = _BYTES.match(str(containers[0]["limit"]))
    except (KeyError, IndexError, TypeError):
        return None
    if match is None:
        return None
    return float(match.group("n")) * _POWERS.get(match.group("unit") or "", 1)


def plan_for(call: ToolCalled, observation: ObservationReceived) -> list[ChartPlan]:
    """The charts an observation deserves: none unless something looked abnormal."""
    data = observation.data
    if observation.status != "success" or not isinstance(data, Mapping):
        return []
    window = _window(data)
    if window is None:
        return []
    start, end, step = window
    args = call.arguments
    if call.tool == "metrics_workload_signals":
        namespace, workload = str(args.get("namespace", "")), str(args.get("workload", ""))
        pods = rf"{re.escape(workload)}-(?:[a-z0-9]{{5,10}}-[a-z0-9]{{5}}|[a-z0-9]{{5}}|[0-9]+)"
        plans = []
        for signal in data.get("abnormal") or ():
            if signal not in _SIGNALS:
                continue
            metric, extra, rate, unit = _SIGNALS[signal]
            plans.append(ChartPlan(
                f"{signal} of {namespace}/{workload}", metric,
                {"namespace": namespace, "pod": "~" + pods, **extra}, start, end, step, rate,
                unit, pods, _memory_limit(data) if signal == "memory" else None,
            ))
        return plans[:1]  # the most telling signal; one image per observation is plenty
    if call.tool == "metrics_query":
        rows = data.get("by_series") or []
        shifted = any(isinstance(r, Mapping) and r.get("change") for r in rows)
        metric = str(args.get("metric", ""))
        if not shifted or not metric or metric.endswith("_bucket"):
            return []
        labels = {str(k): str(v) for k, v in (args.get("labels") or {}).items()}
        unit = "bytes" if metric.endswith("_bytes") else ""
        return [ChartPlan(metric, metric, labels, start, end, step, metric.endswith(_COUNTER),
                          "/s" if metric.endswith(_COUNTER) else unit)]
    return []


def _lines(plan: ChartPlan, found: Sequence[Series]) -> list[Line]:
    lines: list[Line] = []
    for series in found:
        pod = series.labels.get("pod", "")
        if plan.pod_pattern and pod and not re.fullmatch(plan.pod_pattern, pod):
            continue
        samples = list(series.samples)
        if plan.rate:
            points = [
                (b.timestamp, max(0.0, b.value - a.value if b.value >= a.value else b.value)
                 / plan.step)
                for a, b in itertools.pairwise(samples)
            ]
        else:
            points = [(s.timestamp, s.value) for s in samples]
        if len(points) >= 2:
            label = " ".join(series.labels[k] for k in ("pod", "code", "status", "node")
                             if series.labels.get(k))
            lines.append(Line(label or series.metric, tuple(points)))
    lines.sort(key=lambda line: -max(v for _, v in line.points))
    return lines[:MAX_LINES]


def draw(plan: ChartPlan, lines: Sequence[Line]) -> bytes:
    """PNG bytes of the chart. Blocking: runs in the drawing process."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter, date2num
    from matplotlib.figure import Figure

    scale = 2**20 if plan.unit == "bytes" else 1.0  # bytes are drawn in MiB: round ticks
    figure = Figure(figsize=(8, 3.2), dpi=100)
    FigureCanvasAgg(figure)
    figure.subplots_adjust(left=0.09, right=0.98, top=0.9, bottom=0.12)  # tight_layout is slow
    axes = figure.subplots()
    for line in lines:
        times = date2num([t for t, _ in line.points])
        axes.plot(times, [v / scale for _, v in line.points], label=line.label[:60],
                  linewidth=1.5)
    axes.xaxis_date()
    if plan.limit:
        limit = plan.limit / scale
        axes.axhline(limit, color="#d62728", linestyle="--", linewidth=1, label="limit")
        top = max(limit, *(v / scale for line in lines for _, v in line.points))
        axes.set_ylim(bottom=0, top=top * 1.08)
    locator = AutoDateLocator()
    axes.xaxis.set_major_locator(locator)
    axes.xaxis.set_major_formatter(ConciseDateFormatter(locator))
    unit = "MiB" if plan.unit == "bytes" else plan.unit
    if unit:
        axes.set_ylabel(unit)
    axes.set_title(plan.title, fontsize=11, loc="left")
    axes.grid(True, alpha=0.3)
    if len(lines) > 1 or plan.limit:
        axes.legend(fontsize=7, loc="lower left", framealpha=0.85)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def warm_up() -> None:
    """Start the drawing process and have it import matplotlib and build its font cache
    now, so the first chart of the day does not take seconds."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    plan = ChartPlan("warm-up", "", {}, start, start)
    _PAINTER.submit(plan, [Line("x", ((start, 0.0), (start + timedelta(minutes=1), 1.0)))])


def shutdown() -> None:
    """Stop the drawing process (at the bot's exit)."""
    _PAINTER.shutdown()


async def render(plan: ChartPlan, source: MetricSource) -> bytes | None:
    """Fetch and draw; None when there is nothing to draw. Never raises: a chart is a
    courtesy, and must not cost the thread its other messages."""
    try:
        found = await source.series(plan.metric, plan.matchers, plan.start, plan.end,
                                    step_seconds=plan.step)
        lines = _lines(plan, found)
        if not lines:
            return None
        return await asyncio.wrap_future(_PAINTER.submit(plan, lines))
    except BrokenProcessPool:
        log.warning("the chart process died drawing %r; the next chart starts a new one",
                    plan.title)
        _PAINTER.broken()
        return None
    except Exception:  # a chart is never worth an investigation
        log.exception("could not draw the chart %r", plan.title)
        return None
