"""Drawing a chart: the plan, its lines, and the PNG.

Kept apart from `bot.charts` (which decides what deserves a chart and fetches the series)
with imports light enough for `bot.chart_worker`, the process that draws: it loads this
module and matplotlib, nothing of the bot.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime


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


def draw(plan: ChartPlan, lines: Sequence[Line]) -> bytes:
    """PNG bytes of the chart. Blocking: runs in the drawing process (`bot.chart_worker`)."""
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
