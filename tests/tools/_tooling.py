"""Helpers for the toolset tests: the fixture scenario, a context over it, calling a tool
the way the toolset does (validate the arguments, then run)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from engines.constraints import Constraint, ConstraintSet
from tools._toolkit import RawOutput
from tools.catalog import ALL_TOOLS
from tools.context import ToolContext
from tools.promql import PROMQL_TOOLS
from tools.registry import Tool
from tools.scenarios import Scenario, load_scenario
from tools.sources.base import PromQL
from tools.sources.sandbox import sandbox_sources

FIXTURE = Path(__file__).parent / "data" / "fixture-shop"
TOOLS: dict[str, Tool] = {t.name: t for t in ALL_TOOLS + PROMQL_TOOLS}


@cache
def scenario(ref: str | Path = FIXTURE) -> Scenario:
    """Scenarios are read once per test session: their files do not change under a test."""
    return load_scenario(ref)


def context(ref: str | Path = FIXTURE, *, exclude: tuple[str, ...] = ()) -> ToolContext:
    constraints = ConstraintSet()
    for namespace in exclude:
        constraints.add(Constraint("exclude_namespace", f"stay out of {namespace}", namespace))
    loaded = scenario(ref)
    return ToolContext(now=loaded.now, sources=sandbox_sources(loaded), constraints=constraints)


async def call(ctx: ToolContext, tool_name: str, /, **arguments: Any) -> dict[str, Any]:
    """Run a tool as the toolset would; the raw-token figure is checked and removed."""
    tool = TOOLS[tool_name]
    result = await tool.run(ctx, tool.validate(arguments))
    assert isinstance(result, dict)
    raw = result.pop("_raw_tokens", None)
    assert raw is None or (isinstance(raw, RawOutput) and raw.tokens() >= 0)
    json.dumps(result)  # JSON-serialisable, always
    return result


def text(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False)


class RawSeriesStore:
    """The rest of a MetricSource for doubles that only define `series`: a store that
    lists no metric names, declares no types and evaluates no PromQL."""

    promql: PromQL | None = None

    def metric_names(self) -> list[str]:
        return []

    async def metric_type(self, metric: str) -> str | None:
        return None
