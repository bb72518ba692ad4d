"""Writes one scenario folder: scenario.yaml, cluster.yaml, pod-logs/, logs.ndjson,
metrics.om. Metric families are kept apart and written contiguously, series by series in
time order, which is what `promtool tsdb create-blocks-from openmetrics` requires.
"""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from ._k8s import Obj


class _Literal(str):
    pass


def _literal(dumper: yaml.Dumper, value: _Literal) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")


yaml.add_representer(_Literal, _literal)


def iso_ms(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


@dataclass
class Family:
    name: str
    type: str  # counter, gauge, histogram
    help: str
    series: list[tuple[str, dict[str, str], list[tuple[float, float]]]] = field(
        default_factory=list
    )


@dataclass
class Scenario:
    id: str
    title: str
    now: datetime
    report: str
    truth: dict[str, Any]
    seed: int = 1
    objects: list[Obj] = field(default_factory=list)
    pod_logs: dict[tuple[str, str, str, bool], list[str]] = field(default_factory=dict)
    docs: list[dict[str, Any]] = field(default_factory=list)
    families: dict[str, Family] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    # cluster ---------------------------------------------------------------------------
    def add(self, *objs: Obj | Iterable[Obj]) -> None:
        for obj in objs:
            if isinstance(obj, dict):
                self.objects.append(obj)
            else:
                self.objects.extend(obj)

    def log_file(
        self, ns: str, pod: str, container: str, lines: list[str], *, previous: bool = False
    ) -> None:
        self.pod_logs[(ns, pod, container, previous)] = lines

    # log store -------------------------------------------------------------------------
    def doc(
        self,
        when: datetime,
        service: str,
        ns: str,
        pod: str,
        level: str,
        message: str,
        container: str | None = None,
        **extra: Any,
    ) -> None:
        record = {
            "@timestamp": iso_ms(when),
            "message": message,
            "log.level": level,
            "service.name": service,
            "kubernetes.namespace": ns,
            "kubernetes.pod.name": pod,
            "kubernetes.container.name": container or service,
        }
        record.update({k.replace("__", "."): v for k, v in extra.items()})
        self.docs.append(record)

    def every(self, start: datetime, end: datetime, mean_gap: float) -> list[datetime]:
        """Moments from start to end with random gaps averaging mean_gap seconds; busy
        streams are thinned fourfold to keep a scenario small (its shape is what matters)."""
        if mean_gap < 60:
            mean_gap *= 4
        out, moment = [], start
        while True:
            moment += timedelta(seconds=self.rng.expovariate(1 / mean_gap))
            if moment >= end:
                return out
            out.append(moment)

    # metrics ---------------------------------------------------------------------------
    def family(self, name: str, type: str, help: str) -> Family:
        if name not in self.families:
            self.families[name] = Family(name, type, help)
        return self.families[name]

    def gauge(
        self, name: str, help: str, labels: dict[str, str], points: list[tuple[float, float]]
    ) -> None:
        self.family(name, "gauge", help).series.append((name, labels, points))

    def counter(
        self, name: str, help: str, labels: dict[str, str], points: list[tuple[float, float]]
    ) -> None:
        base = name[:-6] if name.endswith("_total") else name
        self.family(base, "counter", help).series.append((name, labels, points))

    def histogram(
        self,
        name: str,
        help: str,
        labels: dict[str, str],
        times: list[float],
        rate: Callable[[float], float],
        latency: Callable[[float], float],
        buckets: tuple[float, ...],
    ) -> None:
        """Cumulative buckets for requests whose durations are exponential around
        latency(t) (mean seconds), rate(t) requests a second, sampled at `times`."""
        fam = self.family(name, "histogram", help)
        counts = [0.0] * (len(buckets) + 1)
        total_sum = 0.0
        rows: list[list[tuple[float, float]]] = [[] for _ in range(len(buckets) + 1)]
        sums: list[tuple[float, float]] = []
        step = times[1] - times[0]
        for t in times:
            n = rate(t) * step
            mean = latency(t)
            for i, bound in enumerate(buckets):
                share = 1 - 2.718281828 ** (-bound / mean)
                counts[i] += round(n * share)
            counts[-1] += round(n)
            counts[:-1] = [min(c, counts[-1]) for c in counts[:-1]]
            total_sum += n * mean
            for i in range(len(buckets) + 1):
                rows[i].append((t, counts[i]))
            sums.append((t, round(total_sum, 3)))
        for bound, row in zip([*map(_le, buckets), "+Inf"], rows, strict=True):
            fam.series.append((f"{name}_bucket", {**labels, "le": bound}, row))
        fam.series.append((f"{name}_count", labels, rows[-1]))
        fam.series.append((f"{name}_sum", labels, sums))

    # writing ---------------------------------------------------------------------------
    def write(self, root: Path) -> Path:
        folder = root / self.id
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        meta = {
            "id": self.id,
            "title": self.title,
            "now": self.now.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "report": _Literal(self.report.strip() + "\n"),
            "truth": self.truth,
        }
        (folder / "scenario.yaml").write_text(yaml.dump(meta, sort_keys=False, width=100))
        (folder / "cluster.yaml").write_text(
            yaml.dump_all(self.objects, sort_keys=False, width=120, explicit_start=False)
        )
        for (ns, pod, container, previous), lines in sorted(self.pod_logs.items()):
            path = (
                folder / "pod-logs" / ns / pod / f"{container}{'.previous' if previous else ''}.log"
            )
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(line + "\n" for line in lines))
        if self.docs:
            self.docs.sort(key=lambda d: d["@timestamp"])
            (folder / "logs.ndjson").write_text("".join(json.dumps(d) + "\n" for d in self.docs))
        if self.families:
            (folder / "metrics.om").write_text(self._openmetrics())
        return folder

    def _openmetrics(self) -> str:
        out = []
        for fam in self.families.values():
            out.append(f"# TYPE {fam.name} {fam.type}")
            out.append(f"# HELP {fam.name} {fam.help}")
            for sample, labels, points in fam.series:
                text = ",".join(f'{k}="{v}"' for k, v in labels.items())
                for t, v in points:
                    out.append(f"{sample}{{{text}}} {_num(v)} {int(t)}")
        out.append("# EOF")
        return "\n".join(out) + "\n"


def _le(bound: float) -> str:
    return repr(float(bound))


def _num(value: float) -> str:
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.6g}"


def grid(start: datetime, end: datetime, step: int = 60) -> list[float]:
    first = int(start.timestamp()) // step * step
    return [float(t) for t in range(first, int(end.timestamp()) + 1, step)]


def accumulate(
    times: list[float], per_second: Callable[[float], float], start_value: float = 0.0
) -> list[tuple[float, float]]:
    """A counter from a rate: integer increments, never falling."""
    value, out, step = start_value, [], times[1] - times[0]
    for t in times:
        value += round(max(per_second(t), 0.0) * step)
        out.append((t, value))
    return out
