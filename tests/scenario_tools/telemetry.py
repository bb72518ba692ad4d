"""Logs (ECS documents) and metrics (OpenMetrics) for a scenario, built deterministically.

Metric families are rendered whole, one after another, each series' samples in time order,
which is what `promtool tsdb create-blocks-from openmetrics` accepts.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

Labels = dict[str, str]
Point = tuple[int, float]


def ts(when: datetime) -> int:
    return int(when.timestamp())


def minutes(now: datetime, hours: float) -> list[int]:
    """Unix seconds every minute over the last `hours` up to `now` (aligned to minutes)."""
    end = ts(now) - ts(now) % 60
    return list(range(end - int(hours * 3600), end + 1, 60))


def at(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


# ------------------------------------------------------------------ metrics


@dataclass
class Family:
    name: str
    type: str
    help: str
    unit: str = ""
    buckets: tuple[float, ...] = ()
    series: list[tuple[Labels, list[Any]]] = field(default_factory=list)

    def add(self, labels: Labels, points: Iterable[Any]) -> None:
        self.series.append((labels, list(points)))

    def render(self) -> list[str]:
        lines = [f"# TYPE {self.name} {self.type}"]
        if self.unit:
            lines.append(f"# UNIT {self.name} {self.unit}")
        lines.append(f"# HELP {self.name} {self.help}")
        for labels, points in self.series:
            if self.type == "histogram":
                lines.extend(self._histogram(labels, points))
                continue
            sample = self.name + ("_total" if self.type == "counter" else "")
            text = _labels(labels)
            lines.extend(f"{sample}{text} {_num(v)} {t}" for t, v in points)
        return lines

    def _histogram(self, labels: Labels, points: list[Any]) -> list[str]:
        out = []
        for t, counts, total in points:
            for le, count in zip((*self.buckets, math.inf), counts, strict=True):
                bound = "+Inf" if le == math.inf else repr(float(le))
                out.append(f"{self.name}_bucket{_labels({**labels, 'le': bound})} "
                           f"{_num(count)} {t}")
            out.append(f"{self.name}_count{_labels(labels)} {_num(counts[-1])} {t}")
            out.append(f"{self.name}_sum{_labels(labels)} {_num(total)} {t}")
        return out


def _labels(labels: Labels) -> str:
    if not labels:
        return ""
    body = ",".join(f'{k}="{_escape(v)}"' for k, v in labels.items())
    return "{" + body + "}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _num(value: float) -> str:
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.4f}".rstrip("0")


class Metrics:
    """Metric families in insertion order."""

    def __init__(self) -> None:
        self.families: dict[str, Family] = {}

    def family(self, name: str, type_: str, help_: str, unit: str = "",
               buckets: Sequence[float] = ()) -> Family:
        if name not in self.families:
            self.families[name] = Family(name, type_, help_, unit, tuple(buckets))
        return self.families[name]

    def gauge(self, name: str, labels: Labels, points: Iterable[Point], help_: str) -> None:
        self.family(name, "gauge", help_).add(labels, points)

    def counter(self, name: str, labels: Labels, points: Iterable[Point], help_: str) -> None:
        """`name` without `_total`: the family; samples get the suffix."""
        self.family(name.removesuffix("_total"), "counter", help_).add(labels, points)

    def render(self) -> str:
        lines: list[str] = []
        for family in self.families.values():
            if family.series:
                lines.extend(family.render())
        lines.append("# EOF")
        return "\n".join(lines) + "\n"


def integrate(times: Sequence[int], rate: Callable[[int], float], *, start: float = 0.0,
              resets: Sequence[int] = (), rng: random.Random | None = None,
              whole: bool = True) -> list[Point]:
    """A counter from a per-second rate; drops to zero at each reset time (a restart)."""
    value, out, pending = start, [], sorted(resets)
    for i, t in enumerate(times):
        while pending and pending[0] <= t:
            pending.pop(0)
            value = 0.0
        if i:
            step = max(0.0, rate(t)) * (t - times[i - 1])
            if rng is not None:
                step *= rng.uniform(0.9, 1.1)
            value += round(step) if whole else step
        out.append((t, round(value, 4)))
    return out


def gauge_points(times: Sequence[int], value: Callable[[int], float | None],
                 rng: random.Random | None = None, jitter: float = 0.0) -> list[Point]:
    """Samples of `value`; None means no sample (a container that was not running)."""
    out = []
    for t in times:
        v = value(t)
        if v is None:
            continue
        if rng is not None and jitter:
            v *= 1 + rng.uniform(-jitter, jitter)
        out.append((t, round(v, 4)))
    return out


def histogram_points(times: Sequence[int], buckets: Sequence[float],
                     rps: Callable[[int], float], median: Callable[[int], float],
                     rng: random.Random, resets: Sequence[int] = ()
                     ) -> list[tuple[int, list[float], float]]:
    """Cumulative bucket counters for log-normal latencies around `median` seconds."""
    counts = [0.0] * (len(buckets) + 1)
    total, out, pending = 0.0, [], sorted(resets)
    for i, t in enumerate(times):
        while pending and pending[0] <= t:
            pending.pop(0)
            counts, total = [0.0] * (len(buckets) + 1), 0.0
        if i:
            n = round(max(0.0, rps(t)) * (t - times[i - 1]) * rng.uniform(0.9, 1.1))
            mu, sigma = math.log(max(median(t), 1e-4)), 0.55
            for k, le in enumerate(buckets):
                share = 0.5 * (1 + math.erf((math.log(le) - mu) / (sigma * math.sqrt(2))))
                counts[k] += round(n * share)
            counts[-1] += n
            for k in range(len(buckets) - 1, 0, -1):  # keep buckets cumulative
                counts[k - 1] = min(counts[k - 1], counts[k])
            counts[len(buckets) - 1] = min(counts[len(buckets) - 1], counts[-1])
            total += n * median(t) * math.exp(sigma * sigma / 2)
        out.append((t, list(counts), round(total, 3)))
    return out


# ------------------------------------------------------------------ logs


@dataclass
class Logs:
    """ECS log documents; `nested` writes the nested shape that Filebeat ships."""

    nested: bool = False
    docs: list[tuple[datetime, dict[str, Any]]] = field(default_factory=list)

    def add(self, when: datetime, level: str, message: str, *, namespace: str, pod: str,
            container: str, service: str = "", node: str = "", **extra: Any) -> None:
        flat: dict[str, Any] = {
            "@timestamp": when.astimezone(UTC).isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            "log.level": level, "message": message, "service.name": service or container,
            "kubernetes.namespace": namespace, "kubernetes.pod.name": pod,
            "kubernetes.container.name": container, "ecs.version": "8.11.0"}
        if node:
            flat["kubernetes.node.name"] = node
        flat.update({k.replace("__", "."): v for k, v in extra.items()})
        self.docs.append((when, _nest(flat) if self.nested else flat))

    def render(self) -> str:
        ordered = sorted(self.docs, key=lambda d: d[0])
        return "".join(json.dumps(doc, separators=(",", ":")) + "\n" for _, doc in ordered)


def _nest(flat: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in flat.items():
        if key in {"@timestamp", "log.level", "ecs.version"}:
            out[key] = value  # ecs-logging keeps these dotted even in nested documents
            continue
        parts = key.split(".")
        node = out
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
    return out


def spread(rng: random.Random, start: datetime, end: datetime, n: int) -> list[datetime]:
    """`n` sorted random instants in [start, end], with millisecond precision."""
    span = (end - start).total_seconds()
    return sorted(start + timedelta(milliseconds=int(rng.uniform(0, span) * 1000))
                  for _ in range(n))
