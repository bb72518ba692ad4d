"""The pieces every holdout30 scenario is built from: a World that collects Kubernetes
objects, log documents, pod logs and metric samples, and writes them in the scenario
format (scenario-format.md, version 1).

Everything is derived from one `now` and a seeded random generator, so that running the
generator twice writes the same bytes and timestamps agree across sources.
"""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

Obj = dict[str, Any]


def parse(stamp: str) -> datetime:
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_ms(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + \
        f"{moment.microsecond // 1000:03d}Z"


@dataclass
class Family:
    """One OpenMetrics metric family: its type, help and samples by series."""

    kind: str
    help: str
    series: dict[tuple[str, tuple[tuple[str, str], ...]], list[tuple[float, float]]] = field(
        default_factory=dict)


@dataclass
class World:
    """One scenario being built."""

    sid: str
    title: str
    now: datetime
    report: str
    truth: Obj
    seed: int
    objects: list[Obj] = field(default_factory=list)
    logs: list[Obj] = field(default_factory=list)
    pod_logs: dict[tuple[str, str, str, bool], list[str]] = field(default_factory=dict)
    families: dict[str, Family] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    # --- time -------------------------------------------------------------------------
    def ago(self, **delta: float) -> datetime:
        return self.now - timedelta(**delta)

    def steps(self, hours: float = 3.0, step: int = 60,
              start: datetime | None = None, end: datetime | None = None) -> list[datetime]:
        """Sample times from `start` (default now - hours) to `end` (default now)."""
        begin = start or self.now - timedelta(hours=hours)
        stop = end or self.now
        begin = begin.replace(second=0, microsecond=0)
        out = []
        moment = begin
        while moment <= stop:
            out.append(moment)
            moment += timedelta(seconds=step)
        return out

    # --- names ------------------------------------------------------------------------
    def suffix(self, length: int = 5) -> str:
        return "".join(self.rng.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(length))

    def ip(self, prefix: str = "10.42") -> str:
        return f"{prefix}.{self.rng.randint(1, 6)}.{self.rng.randint(2, 250)}"

    def uid(self) -> str:
        hexdigits = "0123456789abcdef"
        parts = (8, 4, 4, 4, 12)
        return "-".join("".join(self.rng.choice(hexdigits) for _ in range(n)) for n in parts)

    # --- objects ----------------------------------------------------------------------
    def add(self, *objs: Obj) -> None:
        self.objects.extend(objs)

    def event(self, namespace: str, kind: str, name: str, reason: str, message: str, *,
              first: datetime, last: datetime | None = None, count: int = 1,
              type_: str = "Normal", component: str = "kubelet", host: str | None = None,
              field_path: str | None = None) -> None:
        """A core/v1 Event; the API server keeps them an hour, so `last` must be recent."""
        last = last or first
        assert self.now - last <= timedelta(hours=1), (reason, name, last)
        involved: Obj = {"kind": kind, "name": name, "apiVersion": "v1"}
        if namespace:
            involved["namespace"] = namespace
        if kind in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet"):
            involved["apiVersion"] = "apps/v1"
        if kind == "HorizontalPodAutoscaler":
            involved["apiVersion"] = "autoscaling/v2"
        if field_path:
            involved["fieldPath"] = field_path
        source: Obj = {"component": component}
        if host:
            source["host"] = host
        meta: Obj = {"name": f"{name}.{self.rng.getrandbits(64):016x}"[:253],
                     "creationTimestamp": iso(first)}
        meta["namespace"] = namespace or "default"
        self.objects.append({
            "apiVersion": "v1", "kind": "Event", "metadata": meta,
            "involvedObject": involved, "reason": reason, "message": message, "type": type_,
            "count": count, "firstTimestamp": iso(first), "lastTimestamp": iso(last),
            "source": source,
        })

    # --- logs -------------------------------------------------------------------------
    def log(self, moment: datetime, namespace: str, pod: str, container: str, service: str,
            level: str, message: str, **extra: Any) -> None:
        if moment > self.now:
            return
        doc: Obj = {"@timestamp": iso_ms(moment), "message": message, "log.level": level,
                    "service.name": service, "kubernetes.namespace": namespace,
                    "kubernetes.pod.name": pod, "kubernetes.container.name": container}
        doc.update({k.replace("__", "."): v for k, v in extra.items()})
        self.logs.append(doc)

    def pod_log(self, namespace: str, pod: str, container: str, lines: Iterable[str], *,
                previous: bool = False) -> None:
        self.pod_logs.setdefault((namespace, pod, container, previous), []).extend(lines)

    # --- metrics ----------------------------------------------------------------------
    def sample(self, family: str, kind: str, name: str, labels: dict[str, str],
               moment: datetime, value: float, help_: str = "") -> None:
        fam = self.families.setdefault(family, Family(kind, help_ or family.replace("_", " ")))
        key = (name, tuple(sorted(labels.items())))
        fam.series.setdefault(key, []).append((moment.timestamp(), value))

    def gauge(self, name: str, labels: dict[str, str], times: Iterable[datetime],
              value: Callable[[datetime], float | None]) -> None:
        for moment in times:
            v = value(moment)
            if v is not None:
                self.sample(name, "gauge", name, labels, moment, v)

    def counter(self, name: str, labels: dict[str, str], times: list[datetime],
                rate: Callable[[datetime], float], start: float = 0.0,
                resets: Iterable[datetime] = ()) -> None:
        """A counter that rises at `rate(t)` per second; `name` ends in _total."""
        family = name[: -len("_total")] if name.endswith("_total") else name
        reset_at = sorted(resets)
        total = start
        previous = None
        for moment in times:
            if previous is not None:
                total += max(0.0, rate(moment)) * (moment - previous).total_seconds()
            while reset_at and reset_at[0] <= moment:
                reset_at.pop(0)
                total = 0.0
            self.sample(family, "counter", name, labels, moment, round(total, 3))
            previous = moment

    def histogram(self, name: str, labels: dict[str, str], times: list[datetime],
                  rate: Callable[[datetime], float],
                  shares: Callable[[datetime], dict[float, float]]) -> None:
        """A histogram: `rate(t)` observations/s, `shares(t)` the cumulative share of them
        at or below each bound (+Inf implied 1.0); the mean goes into _sum."""
        counts: dict[float, float] = {}
        total = summed = 0.0
        previous = None
        for moment in times:
            cumulative = shares(moment)
            bounds = sorted(cumulative)
            if previous is not None:
                n = max(0.0, rate(moment)) * (moment - previous).total_seconds()
                total += n
                lower = 0.0
                share_below = 0.0
                for bound in bounds:
                    counts[bound] = counts.get(bound, 0.0) + n * cumulative[bound]
                    summed += n * (cumulative[bound] - share_below) * (lower + bound) / 2
                    lower, share_below = bound, cumulative[bound]
                summed += n * (1 - share_below) * lower * 1.5
            for bound in bounds:
                self.sample(name, "histogram", name + "_bucket",
                            {**labels, "le": _le(bound)}, moment, round(counts.get(bound, 0), 2))
            self.sample(name, "histogram", name + "_bucket", {**labels, "le": "+Inf"},
                        moment, round(total, 2))
            self.sample(name, "histogram", name + "_count", labels, moment, round(total, 2))
            self.sample(name, "histogram", name + "_sum", labels, moment, round(summed, 3))
            previous = moment

    # --- output -----------------------------------------------------------------------
    def write(self, root: Path) -> Path:
        folder = root / self.sid
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        scenario = {"id": self.sid, "title": self.title, "now": iso(self.now),
                    "report": self.report, "truth": self.truth}
        (folder / "scenario.yaml").write_text(
            yaml.safe_dump(scenario, sort_keys=False, allow_unicode=True, width=100))
        (folder / "cluster.yaml").write_text(
            yaml.safe_dump_all(self.objects, sort_keys=False, explicit_start=True, width=120))
        if self.logs:
            docs = sorted(self.logs, key=lambda d: d["@timestamp"])
            (folder / "logs.ndjson").write_text(
                "".join(json.dumps(d, separators=(",", ":")) + "\n" for d in docs))
        for (namespace, pod, container, previous), lines in self.pod_logs.items():
            path = folder / "pod-logs" / namespace / pod / (
                container + (".previous.log" if previous else ".log"))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(line + "\n" for line in lines))
        if self.families:
            (folder / "metrics.om").write_text(self._openmetrics())
        return folder

    def _openmetrics(self) -> str:
        out = []
        for family, fam in sorted(self.families.items()):
            out.append(f"# TYPE {family} {fam.kind}")
            out.append(f"# HELP {family} {fam.help}")
            if fam.kind == "histogram":
                out.extend(_histogram_lines(family, fam))
                continue
            for (name, labels), samples in sorted(fam.series.items()):
                text = ",".join(f'{k}="{v}"' for k, v in labels)
                for stamp, value in sorted(samples):
                    out.append(f"{name}{{{text}}} {_num(value)} {int(stamp)}")
        out.append("# EOF")
        return "\n".join(out) + "\n"


def _histogram_lines(family: str, fam: Family) -> list[str]:
    """A histogram's points: per series and timestamp, its buckets by bound, +Inf last,
    then _count and _sum, which is how OpenMetrics groups a MetricPoint."""
    points: dict[tuple[tuple[str, str], ...], dict[float, list[tuple[str, str, float]]]] = {}
    for (name, labels), samples in fam.series.items():
        base = tuple((k, v) for k, v in labels if k != "le")
        le = dict(labels).get("le")
        for stamp, value in samples:
            points.setdefault(base, {}).setdefault(stamp, []).append((name, le or "", value))
    order = {family + "_bucket": 0, family + "_count": 1, family + "_sum": 2}
    out = []
    for base, by_time in sorted(points.items()):
        for stamp, rows in sorted(by_time.items()):
            rows.sort(key=lambda r: (order[r[0]], float(r[1]) if r[1] else 0.0))
            for name, le, value in rows:
                labels = base + ((("le", le),) if le else ())
                text = ",".join(f'{k}="{v}"' for k, v in labels)
                out.append(f"{name}{{{text}}} {_num(value)} {int(stamp)}")
    return out


def _le(bound: float) -> str:
    return f"{bound:g}" if bound < 1e6 else f"{bound:.1f}"


def _num(value: float) -> str:
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.6g}" if abs(value) < 1e5 else f"{value:.1f}"
