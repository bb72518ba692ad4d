"""Charts are drawn in a process of its own (`bot.chart_worker`): the bot never waits on
matplotlib, a drawing process that dies costs one chart, not the next ones, and a chart
that cannot be drawn is an answer, not a dead process."""

from __future__ import annotations

import io
import os
import pickle
import signal
import subprocess
import sys
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

from bot import charts
from bot.chart_drawing import ChartPlan, Line
from bot.chart_worker import read_frame, serve, write_frame
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


def _plan() -> ChartPlan:
    return ChartPlan("memory of shop/checkout", "container_memory_working_set_bytes",
                     {"namespace": "shop"}, START, START + timedelta(minutes=30),
                     unit="bytes", limit=128 * 2**20)


async def test_a_chart_is_drawn_in_another_process_which_is_replaced_when_it_dies() -> None:
    png = await charts.render(_plan(), _Memory())
    assert png is not None and png.startswith(PNG)
    pid = charts._painter().pid
    assert pid is not None and pid != os.getpid()

    os.kill(pid, signal.SIGKILL)  # the kernel's OOM killer, say
    lost = await charts.render(_plan(), _Memory())
    assert lost is None, "the chart being drawn is lost, quietly"

    again = await charts.render(_plan(), _Memory())
    assert again is not None and again.startswith(PNG), "the next chart gets a new process"
    assert charts._painter().pid not in (None, pid)
    await charts.shutdown()
    assert charts._painter().pid is None


def test_the_worker_answers_a_chart_it_cannot_draw_with_an_error_and_goes_on() -> None:
    requests = io.BytesIO()
    write_frame(requests, b"not a pickle")
    write_frame(requests, pickle.dumps((_plan(), [Line("checkout", ((START, 1.0),
                                                                  (START, 2.0)))])))
    requests.seek(0)
    answers = io.BytesIO()
    serve(requests, answers)
    answers.seek(0)
    first, second = read_frame(answers), read_frame(answers)
    assert first is not None and first.startswith(b"-")
    assert second is not None and second.startswith(b"+" + PNG)
    assert read_frame(answers) is None


def test_the_worker_imports_nothing_of_the_bot_but_the_drawing() -> None:
    """Its memory is matplotlib's, not a second copy of the bot."""
    probe = ("import sys, bot.chart_worker; "
             "print(sorted(m for m in sys.modules if m.split('.')[0] in "
             "('bot', 'engines', 'tools', 'slack_bolt', 'openai', 'kubernetes')))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            check=True).stdout.strip()
    assert loaded == "['bot', 'bot.chart_drawing', 'bot.chart_worker']"
