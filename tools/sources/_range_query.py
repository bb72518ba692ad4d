"""Prometheus' range-query semantics over recorded samples: which series a matcher selects,
and which point each step of a range shows.

The sandbox's metric store holds raw samples; these rules are what make its answers read
like a live Prometheus's (a regex matcher is anchored, a step shows the newest sample within
the five-minute lookback, or nothing). Apart from tools.sources.sandbox because they are
Prometheus's rules, pure functions of samples and times, not the storing of a scenario.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta

from engines.errors import BackendError
from tools.sources.base import Sample

LOOKBACK = timedelta(minutes=5)


def label_matcher(value: str) -> Callable[[str], bool]:
    """A label value's test: equal to `value`, or, after a leading `~`, matched whole by
    the regular expression that follows (a bad one is a BackendError)."""
    if value.startswith("~"):
        try:
            pattern = re.compile(value[1:])
        except re.error as exc:
            raise BackendError(f"bad regular expression {value[1:]!r}: {exc}") from None
        return lambda label: pattern.fullmatch(label) is not None  # PromQL anchors regexes
    return lambda label: label == value


def evaluate_range(
    samples: Iterable[Sample], start: datetime, end: datetime, step: timedelta
) -> list[Sample]:
    """One point per step from `start`: the newest sample no older than the lookback."""
    ordered = [s for s in samples if start - LOOKBACK < s.timestamp <= end]
    points: list[Sample] = []
    index = 0
    at = start
    latest: Sample | None = None
    while at <= end:
        while index < len(ordered) and ordered[index].timestamp <= at:
            latest = ordered[index]
            index += 1
        if latest is not None and at - latest.timestamp <= LOOKBACK:
            points.append(Sample(at, latest.value))
        at += step
    return points
