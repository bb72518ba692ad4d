"""Pure statistics over metric samples: counter increases with resets, Prometheus'
`histogram_quantile`, summary statistics, trend and change-point detection.

Everything here works on plain sequences and returns plain values, so it is tested without
any source. Change points use the single split that best separates two means (the first step
of binary segmentation), accepted only when the shift is large against the noise and the
medians agree: one spike must not pass for a change of regime.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import pairwise

from tools.sources.base import Sample


def points(samples: Sequence[Sample]) -> list[tuple[datetime, float]]:
    """A series' samples as (time, value) pairs, the shape the helpers below take."""
    return [(s.timestamp, s.value) for s in samples]


def increases(samples: Sequence[Sample]) -> list[tuple[datetime, float]]:
    """Per-interval increase of a counter, as (end of interval, increase).

    A drop means the counter was reset (its process restarted): the increase over that
    interval is the new value, as Prometheus' `increase()` counts it.
    """
    out: list[tuple[datetime, float]] = []
    for before, after in pairwise(samples):
        delta = after.value - before.value
        out.append((after.timestamp, after.value if delta < 0 else delta))
    return out


def increase(samples: Sequence[Sample]) -> float:
    """Total increase of a counter over its samples, resets included."""
    return sum(delta for _, delta in increases(samples))


def resets(samples: Sequence[Sample]) -> int:
    """How many times a counter went down (restarts of the process that exports it)."""
    return sum(1 for a, b in pairwise(samples) if b.value < a.value)


def rate(samples: Sequence[Sample]) -> float:
    """Average per-second increase of a counter over its samples (0 with fewer than two)."""
    if len(samples) < 2:
        return 0.0
    seconds = (samples[-1].timestamp - samples[0].timestamp).total_seconds()
    return increase(samples) / seconds if seconds > 0 else 0.0


def sum_by_time(rows: Iterable[Iterable[tuple[datetime, float]]]) -> list[tuple[datetime, float]]:
    """Add several (time, value) rows point by point; range queries share their timestamps."""
    total: dict[datetime, float] = {}
    for row in rows:
        for at, value in row:
            total[at] = total.get(at, 0.0) + value
    return sorted(total.items())


def histogram_quantile(q: float, buckets: Sequence[tuple[float, float]]) -> float | None:
    """Prometheus' `histogram_quantile` over (upper bound, cumulative count) pairs.

    Linear interpolation inside the bucket holding the rank; the lowest bucket starts at 0;
    a rank in the +Inf bucket answers the highest finite bound. None where PromQL gives NaN
    (no +Inf bucket, fewer than two buckets, no observations).
    """
    if q < 0:
        return -math.inf
    if q > 1:
        return math.inf
    ordered = sorted(buckets)
    if len(ordered) < 2 or not math.isinf(ordered[-1][0]):
        return None
    bounds = [b for b, _ in ordered]
    counts: list[float] = []
    for _, count in ordered:  # non-monotonic counts happen with scrape races: repair them
        counts.append(max(count, counts[-1]) if counts else count)
    observations = counts[-1]
    if observations <= 0:
        return None
    rank = q * observations
    index = next(i for i, c in enumerate(counts) if c >= rank)
    if index == len(counts) - 1:
        return bounds[-2]
    if index == 0 and bounds[0] <= 0:
        return bounds[0]
    start = 0.0 if index == 0 else bounds[index - 1]
    below = 0.0 if index == 0 else counts[index - 1]
    inside = counts[index] - below
    if inside <= 0:
        return bounds[index]
    return start + (bounds[index] - start) * ((rank - below) / inside)


@dataclass(frozen=True, slots=True)
class Summary:
    """Min, mean, max, last and the 95th percentile of a series' values."""

    minimum: float
    mean: float
    maximum: float
    last: float
    p95: float
    count: int


def summarize(values: Sequence[float]) -> Summary | None:
    """Summary statistics, or None for an empty series."""
    if not values:
        return None
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]
    return Summary(ordered[0], statistics.fmean(values), ordered[-1], values[-1], p95,
                   len(values))


def slope_per_hour(points: Sequence[tuple[datetime, float]]) -> float:
    """Least-squares slope of the values, in units per hour (0 when undefined)."""
    if len(points) < 3:
        return 0.0
    origin = points[0][0]
    xs = [(at - origin).total_seconds() / 3600 for at, _ in points]
    ys = [value for _, value in points]
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
    spread = sum((x - mean_x) ** 2 for x in xs)
    if spread == 0:
        return 0.0
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / spread


@dataclass(frozen=True, slots=True)
class ChangePoint:
    """Where a series shifted: the first index of the new regime, and both regimes."""

    index: int
    before: float  # mean before the change
    after: float  # mean after
    before_median: float
    after_median: float
    score: float  # Welch-like t statistic of the shift

    @property
    def factor(self) -> float | None:
        """after / before, None when the level before was zero."""
        return self.after / self.before if self.before else None


def change_point(
    values: Sequence[float],
    *,
    min_size: int = 3,
    min_score: float = 4.0,
    min_relative: float = 0.2,
) -> ChangePoint | None:
    """The most significant single shift of the mean, or None if the series is steady.

    The split maximises the between-segment variance (the CUSUM-equivalent statistic for
    one mean shift). It is kept only when the t statistic reaches `min_score`, the shift is
    at least `min_relative` of the larger level, and the medians moved the same way by at
    least half as much, which rejects splits produced by a lone spike.
    """
    n = len(values)
    if n < 2 * min_size:
        return None
    prefix = [0.0]
    for value in values:
        prefix.append(prefix[-1] + value)
    best, best_k = -1.0, -1
    for k in range(min_size, n - min_size + 1):
        m1 = prefix[k] / k
        m2 = (prefix[n] - prefix[k]) / (n - k)
        gain = k * (n - k) / n * (m1 - m2) ** 2
        if gain > best:
            best, best_k = gain, k
    left, right = values[:best_k], values[best_k:]
    m1, m2 = statistics.fmean(left), statistics.fmean(right)
    shift = m2 - m1
    if shift == 0:
        return None
    residual = sum((v - m1) ** 2 for v in left) + sum((v - m2) ** 2 for v in right)
    deviation = math.sqrt(residual / max(n - 2, 1))
    error = deviation * math.sqrt(1 / len(left) + 1 / len(right))
    score = math.inf if error == 0 else abs(shift) / error
    med1, med2 = statistics.median(left), statistics.median(right)
    level = max(abs(m1), abs(m2))
    if score < min_score or abs(shift) < min_relative * level:
        return None
    if (med2 - med1) * shift <= 0 or abs(med2 - med1) < 0.5 * abs(shift):
        return None
    return ChangePoint(best_k, m1, m2, med1, med2, score)


def sharp_drops(values: Sequence[float], ceiling: float, *, near: float = 0.85,
                fall: float = 0.3) -> int:
    """How often a series fell by `fall` (fraction) right after being within `near` of
    `ceiling`: the saw-tooth a container leaves when it is killed at its memory limit."""
    if ceiling <= 0:
        return 0
    return sum(
        1 for a, b in pairwise(values)
        if a >= near * ceiling and b <= a * (1 - fall)
    )
