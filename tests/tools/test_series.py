"""The pure statistics behind the metric and log tools."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta

import pytest

from tools._series import (
    change_point,
    histogram_quantile,
    increase,
    increases,
    rate,
    resets,
    sharp_drops,
    slope_per_hour,
    sum_by_time,
    summarize,
)
from tools.sources.base import Sample

T0 = datetime(2026, 11, 30, 9, tzinfo=UTC)


def samples(*values: float, step: int = 60) -> list[Sample]:
    return [Sample(T0 + timedelta(seconds=i * step), v) for i, v in enumerate(values)]


def test_counter_increase_counts_a_reset_as_a_restart_from_zero() -> None:
    counter = samples(10, 15, 20, 3, 8)  # the process restarted between 20 and 3
    assert [d for _, d in increases(counter)] == [5, 5, 3, 5]
    assert increase(counter) == 18
    assert resets(counter) == 1
    assert rate(counter) == pytest.approx(18 / 240)
    assert rate(samples(5)) == 0.0


def test_sum_by_time_adds_rows_point_by_point() -> None:
    a = [(T0, 1.0), (T0 + timedelta(minutes=1), 2.0)]
    b = [(T0 + timedelta(minutes=1), 3.0)]
    assert sum_by_time([a, b]) == [(T0, 1.0), (T0 + timedelta(minutes=1), 5.0)]


BUCKETS = [(0.1, 50.0), (0.25, 80.0), (0.5, 95.0), (1.0, 99.0), (math.inf, 100.0)]


@pytest.mark.parametrize(
    ("q", "expected"),
    [
        (0.5, 0.1),  # rank 50 ends exactly at the first bucket
        (0.8, 0.25),
        (0.9, 0.25 + 0.25 * (10 / 15)),  # interpolated inside (0.25, 0.5]
        (0.25, 0.05),  # the first bucket starts at 0
        (0.995, 1.0),  # in the +Inf bucket: the highest finite bound
    ],
)
def test_histogram_quantile_follows_prometheus(q: float, expected: float) -> None:
    assert histogram_quantile(q, BUCKETS) == pytest.approx(expected)


def test_histogram_quantile_edge_cases() -> None:
    assert histogram_quantile(0.5, [(0.1, 1.0), (0.5, 2.0)]) is None  # no +Inf bucket
    assert histogram_quantile(0.5, [(math.inf, 0.0), (0.1, 0.0)]) is None  # no observation
    assert histogram_quantile(0.5, [(math.inf, 3.0)]) is None  # a single bucket
    assert histogram_quantile(-1, BUCKETS) == -math.inf
    assert histogram_quantile(2, BUCKETS) == math.inf
    unordered = list(reversed(BUCKETS))
    assert histogram_quantile(0.9, unordered) == histogram_quantile(0.9, BUCKETS)
    # counts that dip (scrape races) are repaired to be monotonic, as Prometheus does
    dipping = [(0.1, 6.0), (0.2, 4.0), (0.4, 8.0), (math.inf, 10.0)]
    assert histogram_quantile(0.7, dipping) == pytest.approx(0.3)


def test_summary_statistics() -> None:
    stats = summarize([3.0, 1.0, 2.0, 10.0])
    assert stats is not None
    assert (stats.minimum, stats.maximum, stats.last, stats.count) == (1.0, 10.0, 10.0, 4)
    assert stats.mean == 4.0 and stats.p95 == 10.0
    assert summarize([]) is None


def test_slope_per_hour() -> None:
    rising = [(T0 + timedelta(minutes=10 * i), 100.0 + 5 * i) for i in range(12)]
    assert slope_per_hour(rising) == pytest.approx(30.0)
    assert slope_per_hour(rising[:2]) == 0.0


def test_change_point_finds_a_step() -> None:
    rng = random.Random(3)
    values = [1 + rng.gauss(0, 0.1) for _ in range(40)] + [5 + rng.gauss(0, 0.1) for _ in range(20)]
    found = change_point(values)
    assert found is not None
    assert found.index == 40
    assert found.before == pytest.approx(1, abs=0.1) and found.after == pytest.approx(5, abs=0.1)
    assert found.factor == pytest.approx(5, rel=0.1)


def test_change_point_from_zero_has_no_factor() -> None:
    found = change_point([0.0] * 10 + [3.0] * 10)
    assert found is not None and found.index == 10 and found.factor is None


def test_no_change_point_in_noise_or_for_a_lone_spike() -> None:
    rng = random.Random(5)
    noise = [10 + rng.gauss(0, 1) for _ in range(60)]
    assert change_point(noise) is None
    spike = [10.0] * 57 + [100.0, 10.0, 10.0]
    assert change_point(spike) is None
    assert change_point([1.0, 2.0, 3.0]) is None  # too short to split
    assert change_point([4.0] * 20) is None


def test_sharp_drops_counts_kills_at_the_limit() -> None:
    sawtooth = [100, 150, 200, 250, 90, 150, 200, 252, 100, 120]
    assert sharp_drops(sawtooth, ceiling=256) == 2
    assert sharp_drops([100, 50, 100, 50], ceiling=256) == 0  # drops far from the limit
    assert sharp_drops(sawtooth, ceiling=0) == 0
