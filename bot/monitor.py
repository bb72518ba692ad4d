"""The reasoning monitor: what investigations took and cost, one by one and together.

Each finished run leaves its figures on its record in the store (`RunFigures`: tool calls,
how many of them a cache answered, the model's tokens; steps and times were there already),
so that `triage stats` summarises every replica's investigations, not one process's. The
same figures feed `/metrics` as they happen (bot/telemetry.py).

Time to diagnosis is the record's `ended_at - created_at`: what the person who asked
waited, a restart or a takeover included. Its percentiles are over the runs that ended with
a diagnosis (status `done`); steps, tool calls and tokens over every run that ended. Cost is
estimated only when the model's prices are configured (`Prices.from_env`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from engines.errors import ConfigurationError

PRICE_INPUT = "TRIAGE_PRICE_INPUT_PER_MTOK"
PRICE_OUTPUT = "TRIAGE_PRICE_OUTPUT_PER_MTOK"


@dataclass(frozen=True, slots=True)
class RunFigures:
    """What one run cost, as it ended."""

    tool_calls: int = 0
    cached_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True, slots=True)
class Prices:
    """Dollars per million tokens, in and out, of the model in use."""

    input_per_mtok: float
    output_per_mtok: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1e6

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> Prices | None:
        """Both prices, or None when neither is set; one of the two alone is a mistake."""
        given = {name: environ.get(name, "").strip() for name in (PRICE_INPUT, PRICE_OUTPUT)}
        if not any(given.values()):
            return None
        if not all(given.values()):
            missing = next(name for name, value in given.items() if not value)
            raise ConfigurationError(f"{missing} is not set: set both prices or neither")
        values: list[float] = []
        for name, text in given.items():
            try:
                value = float(text)
            except ValueError:
                raise ConfigurationError(f"{name} must be a number, not {text!r}") from None
            if not math.isfinite(value) or value < 0:
                raise ConfigurationError(f"{name} must be zero or more, not {text!r}")
            values.append(value)
        return cls(values[0], values[1])


@dataclass(frozen=True, slots=True)
class EndedRun:
    """One ended investigation as `triage stats` reads it from the store."""

    engine: str
    model: str
    status: str
    steps: int
    created_at: datetime
    ended_at: datetime
    figures: RunFigures

    @property
    def seconds(self) -> float:
        return max(0.0, (self.ended_at - self.created_at).total_seconds())


def percentile(values: Sequence[float], fraction: float) -> float | None:
    """The nearest-rank percentile (p95 of 20 values is the 19th smallest); None if empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


@dataclass(frozen=True, slots=True)
class Summary:
    """The runs of one group (an engine and a model, or all of them)."""

    runs: int
    diagnosed: int
    by_status: dict[str, int]
    diagnosis_p50: float | None
    diagnosis_p95: float | None
    steps_p50: float | None
    steps_p95: float | None
    tool_calls: int
    tool_calls_p95: float | None
    cached_calls: int
    input_tokens: int
    output_tokens: int
    cost: float | None

    @property
    def hit_rate(self) -> float | None:
        return self.cached_calls / self.tool_calls if self.tool_calls else None

    def as_json(self) -> dict[str, Any]:
        return {
            "investigations": self.runs,
            "diagnosed": self.diagnosed,
            "by_status": dict(sorted(self.by_status.items())),
            "time_to_diagnosis_seconds": {"p50": _round(self.diagnosis_p50),
                                          "p95": _round(self.diagnosis_p95)},
            "steps": {"p50": self.steps_p50, "p95": self.steps_p95},
            "tool_calls": {"total": self.tool_calls, "p95": self.tool_calls_p95},
            "cached_calls": self.cached_calls,
            "cache_hit_rate": _round(self.hit_rate, 4),
            "tokens": {"input": self.input_tokens, "output": self.output_tokens},
            "estimated_cost_usd": _round(self.cost, 6),
        }


def _round(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


def summarize(runs: Iterable[EndedRun], prices: Prices | None = None) -> Summary:
    chosen = list(runs)
    by_status: dict[str, int] = {}
    for run in chosen:
        by_status[run.status] = by_status.get(run.status, 0) + 1
    diagnosed = [run.seconds for run in chosen if run.status == "done"]
    steps = [float(run.steps) for run in chosen]
    calls = [float(run.figures.tool_calls) for run in chosen]
    tokens_in = sum(run.figures.input_tokens for run in chosen)
    tokens_out = sum(run.figures.output_tokens for run in chosen)
    return Summary(
        runs=len(chosen),
        diagnosed=len(diagnosed),
        by_status=by_status,
        diagnosis_p50=percentile(diagnosed, 0.5),
        diagnosis_p95=percentile(diagnosed, 0.95),
        steps_p50=percentile(steps, 0.5),
        steps_p95=percentile(steps, 0.95),
        tool_calls=int(sum(calls)),
        tool_calls_p95=percentile(calls, 0.95),
        cached_calls=sum(run.figures.cached_calls for run in chosen),
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        cost=prices.cost(tokens_in, tokens_out) if prices is not None else None,
    )


def grouped(runs: Iterable[EndedRun], prices: Prices | None = None) -> dict[
    tuple[str, str], Summary
]:
    """A summary per (engine, model), in name order."""
    groups: dict[tuple[str, str], list[EndedRun]] = {}
    for run in runs:
        groups.setdefault((run.engine or "-", run.model or "-"), []).append(run)
    return {key: summarize(groups[key], prices) for key in sorted(groups)}
