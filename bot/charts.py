"""Metric signals worth seeing, as chart images for the thread.

Metric tools hand the model statistics ("peaked at 98% of its 256Mi limit"), not the
hundreds of samples behind them, and that is right for the model. A human sees a shape
faster than they read a number, so when a metric observation is abnormal (a workload signal
flagged, or a level shift in a queried metric) the bot asks the same metric source for the
series over the same window and draws them, in a process of its own (`bot.chart_worker`:
see there why), so the event loop never waits on matplotlib.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import pickle
import re
import sys
import weakref
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from bot.chart_drawing import ChartPlan, Line
from bot.chart_worker import HEADER
from engines.events import ObservationReceived, ToolCalled
from tools.scenarios import parse_time
from tools.sources.base import MetricSource, Series

__all__ = ["ChartPlan", "Line", "plan_for", "render", "shutdown", "warm_up"]

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


DRAW_TIMEOUT_SECONDS = 30.0


class ChartProcessError(RuntimeError):
    """The drawing process died, hung, or could not draw."""


class _Painter:
    """The drawing process of one event loop: started on first use (or by `warm_up`),
    asked one chart at a time, and started again if it dies or hangs."""

    def __init__(self) -> None:
        self._process: asyncio.subprocess.Process | None = None
        self._turn = asyncio.Lock()
        self.warming: asyncio.Task[None] | None = None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    async def draw(self, plan: ChartPlan, lines: Sequence[Line]) -> bytes:
        request = pickle.dumps((plan, list(lines)))
        async with self._turn:
            process = await self._started()
            assert process.stdin is not None and process.stdout is not None
            try:
                async with asyncio.timeout(DRAW_TIMEOUT_SECONDS):
                    process.stdin.write(HEADER.pack(len(request)) + request)
                    await process.stdin.drain()
                    (size,) = HEADER.unpack(await process.stdout.readexactly(HEADER.size))
                    answer = await process.stdout.readexactly(size)
            except (asyncio.IncompleteReadError, ConnectionError, TimeoutError) as exc:
                await self.stop(at_once=True)
                raise ChartProcessError(
                    f"the drawing process {'hung' if isinstance(exc, TimeoutError) else 'died'}"
                ) from None
        if answer[:1] != b"+":
            raise ChartProcessError(answer[1:].decode(errors="replace"))
        return answer[1:]

    async def _started(self) -> asyncio.subprocess.Process:
        if self._process is None or self._process.returncode is not None:
            self._process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bot.chart_worker",
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            )
        return self._process

    async def stop(self, *, at_once: bool = False) -> None:
        """End the process: close its input and let it finish, or kill it."""
        process, self._process = self._process, None
        if process is None or process.returncode is not None:
            return
        if not at_once and process.stdin is not None:
            process.stdin.close()
            try:
                await asyncio.wait_for(process.wait(), timeout=5)
                return
            except TimeoutError:
                pass
        process.kill()
        await process.wait()


_PAINTERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Painter] = (
    weakref.WeakKeyDictionary()
)


def _painter() -> _Painter:
    """The running loop's painter (a process's pipes belong to the loop that opened them)."""
    loop = asyncio.get_running_loop()
    painter = _PAINTERS.get(loop)
    if painter is None:
        painter = _PAINTERS[loop] = _Painter()
    return painter


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


def warm_up() -> None:
    """Start the drawing process and have it import matplotlib and build its font cache
    now, in the background, so the first chart of the day does not take seconds."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    plan = ChartPlan("warm-up", "", {}, start, start)
    painter = _painter()

    async def first() -> None:
        try:
            await painter.draw(plan, [Line("x", ((start, 0.0),
                                                 (start + timedelta(minutes=1), 1.0)))])
        except ChartProcessError as exc:
            log.warning("the chart process did not start: %s", exc)

    painter.warming = asyncio.get_running_loop().create_task(first(), name="charts-warm-up")


async def shutdown() -> None:
    """Stop the drawing process (at the bot's exit)."""
    painter = _PAINTERS.get(asyncio.get_running_loop())
    if painter is not None:
        await painter.stop()


async def render(plan: ChartPlan, source: MetricSource) -> bytes | None:
    """Fetch and draw; None when there is nothing to draw. Never raises: a chart is a
    courtesy, and must not cost the thread its other messages."""
    try:
        found = await source.series(plan.metric, plan.matchers, plan.start, plan.end,
                                    step_seconds=plan.step)
        lines = _lines(plan, found)
        if not lines:
            return None
        return await _painter().draw(plan, lines)
    except ChartProcessError as exc:
        log.warning("could not draw the chart %r: %s; the next chart starts afresh",
                    plan.title, exc)
        return None
    except Exception:  # a chart is never worth an investigation
        log.exception("could not draw the chart %r", plan.title)
        return None
