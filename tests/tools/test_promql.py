"""`metrics_promql` is offered, and runs, on whatever metric source has a PromQL engine,
not on one concrete class; a source without an engine is never offered it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from engines.errors import ToolError
from tests.tools._tooling import RawSeriesStore, call, context
from tools.catalog import available_tools
from tools.context import ToolContext
from tools.promql import PROMQL_TOOLS, metrics_promql
from tools.sources.base import QueryResult, Sample, Series, Sources

NOW = datetime(2026, 1, 1, 2, 0, tzinfo=UTC)


class Engine:
    """A PromQL engine that answers every range query with two pods' error rates (one
    jumping at 01:30) and every instant query with a scalar; it records the queries."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, int | None]] = []

    async def query(self, promql: str, at: datetime) -> QueryResult:
        self.asked.append((promql, None))
        return QueryResult("scalar", [], 42.0)

    async def query_range(self, promql: str, start: datetime, end: datetime,
                          step_seconds: int) -> QueryResult:
        self.asked.append((promql, step_seconds))
        points = range(int((end - start).total_seconds() // step_seconds) + 1)
        calm = [Sample(start + timedelta(seconds=i * step_seconds), 0.1) for i in points]
        jump = [Sample(s.timestamp, 0.1 if s.timestamp < NOW - timedelta(minutes=30) else 5.0)
                for s in calm]
        labels = {"namespace": "shop", "job": "api"}
        return QueryResult("matrix", [Series("", {**labels, "pod": "a"}, calm),
                                      Series("", {**labels, "pod": "b"}, jump)],
                           step_seconds=step_seconds)


class Thanos(RawSeriesStore):
    """Not a Prometheus, but a store that evaluates PromQL (Thanos, Mimir, VictoriaMetrics)."""

    def __init__(self) -> None:
        self.promql = Engine()

    async def series(self, metric: str, matchers: object, start: datetime, end: datetime, *,
                     step_seconds: int = 60) -> list[Series]:
        return []


def test_offered_when_the_metric_source_evaluates_promql() -> None:
    assert available_tools(Sources(metrics=Thanos()))[-len(PROMQL_TOOLS):] == PROMQL_TOOLS
    assert metrics_promql not in available_tools(context().sources)


async def test_runs_on_any_engine_and_summarises_the_highest_series_first() -> None:
    store = Thanos()
    ctx = ToolContext(now=NOW, sources=Sources(metrics=store))
    ranged = await call(ctx, "metrics_promql", query="rate(errors_total[5m])", since="1h")
    assert ranged["series"] == 2 and ranged["common_labels"] == {"namespace": "shop",
                                                                 "job": "api"}
    top = ranged["by_series"][0]
    assert top["labels"] == {"pod": "b"} and top["change"]["at"] == "2026-01-01T01:30:00Z"
    instant = await call(ctx, "metrics_promql", query="vector(42)", instant=True)
    assert instant["type"] == "scalar" and instant["value"] == 42.0
    assert store.promql.asked == [("rate(errors_total[5m])", 60), ("vector(42)", None)]


async def test_a_source_without_an_engine_is_told_to_use_metrics_query() -> None:
    with pytest.raises(ToolError, match="needs a live Prometheus; use metrics_query"):
        await call(context(), "metrics_promql", query="up")
