"""Shared kit for the holdout58 generator: the story container, log and metric writers.

Everything is deterministic: each story owns a seeded ``random.Random`` and every time
is derived from the story's fixed ``now``. Nothing reads the wall clock.
"""

from __future__ import annotations

import json
import random
import shutil
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

Obj = dict[str, Any]
Series = dict[tuple[tuple[str, str], ...], list[tuple[int, float]]]
ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def iso(t: datetime) -> str:
    """RFC 3339 with a Z suffix, second precision."""
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_ms(t: datetime) -> str:
    """RFC 3339 with milliseconds, as log shippers write ``@timestamp``."""
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def at(text: str) -> datetime:
    """Parse ``2026-03-14T07:40:00Z``."""
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def mins(n: float) -> timedelta:
    """A timedelta of n minutes."""
    return timedelta(minutes=n)


class _Literal(str):
    """A string dumped in YAML block style."""


def _literal(dumper: yaml.SafeDumper, data: _Literal) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(data), style="|")


yaml.SafeDumper.add_representer(_Literal, _literal)


@dataclass
class Metrics:
    """OpenMetrics families; each series is written contiguously, in time order."""

    families: dict[str, tuple[str, str, Series]] = field(default_factory=dict)

    def _series(self, name: str, kind: str, help_text: str,
                labels: dict[str, str]) -> list[tuple[int, float]]:
        fam = self.families.setdefault(name, (kind, help_text, {}))
        key = tuple(sorted(labels.items()))
        return fam[2].setdefault(key, [])

    def gauge(self, name: str, help_text: str, labels: dict[str, str],
              points: Iterable[tuple[datetime, float]]) -> None:
        """Add gauge samples."""
        s = self._series(name, "gauge", help_text, labels)
        s.extend((int(t.timestamp()), float(v)) for t, v in points)

    def counter(self, name: str, help_text: str, labels: dict[str, str],
                points: Iterable[tuple[datetime, float]]) -> None:
        """Add counter samples (``name`` with or without ``_total``)."""
        name = name.removesuffix("_total")
        s = self._series(name, "counter", help_text, labels)
        s.extend((int(t.timestamp()), float(v)) for t, v in points)

    def render(self) -> str:
        """The OpenMetrics text, ending in ``# EOF``."""
        out: list[str] = []
        for name, (kind, help_text, series) in self.families.items():
            out.append(f"# TYPE {name} {kind}")
            out.append(f"# HELP {name} {help_text}")
            sample = f"{name}_total" if kind == "counter" else name
            for key, pts in series.items():
                lab = ",".join(f'{k}="{v}"' for k, v in key)
                for ts, v in sorted(pts):
                    val = str(int(v)) if float(v).is_integer() else f"{v:.6g}"
                    out.append(f"{sample}{{{lab}}} {val} {ts}")
        out.append("# EOF")
        return "\n".join(out) + "\n"


def grid(start: datetime, end: datetime, step_s: int) -> list[datetime]:
    """Sample times from start to end inclusive."""
    n = int((end - start).total_seconds() // step_s)
    return [start + timedelta(seconds=i * step_s) for i in range(n + 1)]


def accumulate(times: Sequence[datetime], rate: Callable[[datetime], float],
               start_value: float = 0.0) -> list[tuple[datetime, float]]:
    """A counter from a per-second rate function (rounded to whole events)."""
    out: list[tuple[datetime, float]] = []
    total = start_value
    prev: datetime | None = None
    for t in times:
        if prev is not None:
            total += max(0.0, rate(t)) * (t - prev).total_seconds()
        out.append((t, float(round(total))))
        prev = t
    return out


@dataclass
class Story:
    """One scenario under construction."""

    sid: str
    title: str
    now: datetime
    report: str
    category: str
    culprit: dict[str, str]
    evidence: list[str]
    fix: str
    seed: int
    objects: list[Obj] = field(default_factory=list)
    logs: list[Obj] = field(default_factory=list)
    pod_logs: dict[tuple[str, str, str, bool], list[str]] = field(default_factory=dict)
    metrics: Metrics = field(default_factory=Metrics)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    # identifiers -------------------------------------------------------------
    def suffix(self, n: int = 5) -> str:
        """A kube-style random suffix."""
        return "".join(self.rng.choice(ALPHABET) for _ in range(n))

    def uid(self) -> str:
        """A deterministic UUID4."""
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def ago(self, minutes: float) -> datetime:
        """now minus minutes."""
        return self.now - timedelta(minutes=minutes)

    # content -----------------------------------------------------------------
    def add(self, *objs: Obj) -> None:
        """Add Kubernetes objects."""
        self.objects.extend(objs)

    def event(self, ns: str, kind: str, name: str, reason: str, message: str, *,
              type_: str = "Normal", count: int = 1, first: datetime | None = None,
              last: datetime | None = None, component: str = "kubelet",
              host: str | None = None, api: str = "v1") -> None:
        """A core/v1 Event; times default to a few minutes before now."""
        last = last or self.ago(2)
        first = first or last
        src: Obj = {"component": component}
        if host:
            src["host"] = host
        self.add({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{name}.{self.rng.getrandbits(64):016x}"[:253],
                         "namespace": ns or "default", "creationTimestamp": iso(first)},
            "involvedObject": {"apiVersion": api, "kind": kind, "name": name,
                               "namespace": "" if kind == "Node" else ns},
            "reason": reason, "message": message, "type": type_, "count": count,
            "firstTimestamp": iso(first), "lastTimestamp": iso(last), "source": src,
        })

    def log(self, t: datetime, ns: str, pod: str, container: str, service: str, level: str,
            message: str, **extra: Any) -> None:
        """One ECS log document; ``a__b`` keyword names become ``a.b`` fields."""
        doc: Obj = {"@timestamp": iso_ms(t), "message": message, "log.level": level,
                    "service.name": service, "kubernetes.namespace": ns,
                    "kubernetes.pod.name": pod, "kubernetes.container.name": container}
        doc.update({k.replace("__", "."): v for k, v in extra.items()})
        self.logs.append(doc)

    def pod_log(self, ns: str, pod: str, container: str, lines: list[str],
                previous: bool = False) -> None:
        """Container output for pod-logs/."""
        self.pod_logs.setdefault((ns, pod, container, previous), []).extend(lines)

    def chatter(self, ns: str, pods: Sequence[str], service: str, container: str,
                start: datetime, end: datetime, every_s: float,
                templates: Sequence[tuple[float, str, str]], **extra: Any) -> None:
        """Background logs: (weight, level, template) picked at random intervals."""
        weights = [w for w, _, _ in templates]
        t = start + timedelta(seconds=self.rng.uniform(0, every_s))
        while t < end:
            _, level, tpl = self.rng.choices(templates, weights=weights)[0]
            pod = self.rng.choice(list(pods))
            self.log(t, ns, pod, container, service, level, self.fill(tpl), **extra)
            t += timedelta(seconds=self.rng.expovariate(1.0 / every_s))

    def fill(self, tpl: str) -> str:
        """Replace {ms} {id} {n} {hex} {ip} {user} placeholders with random values."""
        r = self.rng
        subs: dict[str, Callable[[], str]] = {
            "{ms}": lambda: str(int(r.lognormvariate(3.4, 0.6))),
            "{id}": lambda: str(r.randint(100000, 999999)),
            "{n}": lambda: str(r.randint(1, 60)),
            "{hex}": lambda: f"{r.getrandbits(64):016x}",
            "{ip}": lambda: f"10.{r.randint(40, 47)}.{r.randint(0, 15)}.{r.randint(2, 250)}",
            "{user}": lambda: f"u{r.randint(10000, 99999)}"}
        out = tpl
        for k, f in subs.items():
            while k in out:
                out = out.replace(k, f(), 1)
        return out

    # output ------------------------------------------------------------------
    def write(self, root: Path) -> None:
        """Write the scenario folder, replacing any earlier one."""
        d = root / self.sid
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
        scen: Obj = {"id": self.sid, "title": self.title, "now": iso(self.now),
                     "report": _Literal(self.report.strip() + "\n"),
                     "truth": {"category": self.category, "culprit": self.culprit,
                               "evidence": self.evidence, "fix": self.fix}}
        (d / "scenario.yaml").write_text(yaml.safe_dump(scen, sort_keys=False, width=100))
        (d / "cluster.yaml").write_text(
            yaml.safe_dump_all(self.objects, sort_keys=False, width=120))
        self.logs.sort(key=lambda x: x["@timestamp"])
        (d / "logs.ndjson").write_text(
            "".join(json.dumps(x, sort_keys=False) + "\n" for x in self.logs))
        (d / "metrics.om").write_text(self.metrics.render())
        for (ns, pod, c, prev), lines in sorted(self.pod_logs.items()):
            p = d / "pod-logs" / ns / pod / (f"{c}.previous.log" if prev else f"{c}.log")
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text("\n".join(lines) + "\n")
