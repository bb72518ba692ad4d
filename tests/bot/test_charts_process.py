"""Charts are drawn in a process of their own; a drawing process that dies costs one chart,
not the next ones, and the bot never waits on it."""

from __future__ import annotations

import os
import signal
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

from bot import charts
from tools.sources.base import Sample, Series

START = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)
PNG = b"\x89PNG\r\n\x1a\n"


class _Memory:
    """A metric source with one workload's working set rising to its limit."""

    async def series(self, metric: str, matchers: Mapping[str, str], start: datetime,
                     end: datetime, *, step_seconds: int = 60) -> list[Series]:
        samples = [Sample(START + timedelta(minutes=i), float(100 + i) * 2**20)
                   for i in range(30)]
        return [Series(metric, {"namespace": "shop", "pod": "checkout-7d9f8-abcde"}, samples)]


def _plan() -> charts.ChartPlan:
    return charts.ChartPlan("memory of shop/checkout", "container_memory_working_set_bytes",
                            {"namespace": "shop"}, START, START + timedelta(minutes=30),
                            unit="bytes", limit=128 * 2**20)


def _drawing_pids() -> set[int]:
    pool = charts._PAINTER._pool
    return set(pool._processes) if pool is not None and pool._processes else set()


async def test_a_chart_is_drawn_in_another_process_which_is_replaced_when_it_dies() -> None:
    png = await charts.render(_plan(), _Memory())
    assert png is not None and png.startswith(PNG)
    [pid] = _drawing_pids()
    assert pid != os.getpid()

    os.kill(pid, signal.SIGKILL)  # the kernel's OOM killer, say
    lost = await charts.render(_plan(), _Memory())
    assert lost is None, "the chart being drawn is lost, quietly"

    again = await charts.render(_plan(), _Memory())
    assert again is not None and again.startswith(PNG), "the next chart gets a new process"
    assert _drawing_pids() and pid not in _drawing_pids()
    charts.shutdown()
    assert _drawing_pids() == set()
