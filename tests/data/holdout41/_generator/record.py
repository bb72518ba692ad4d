"""The record of one holdout41 scenario: its clock, its OpenMetrics samples and the writer
of its folder (scenario.yaml, cluster.yaml, pod logs, logs.ndjson, metrics.om)."""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

Obj = dict[str, Any]


def parse(stamp: str) -> datetime:
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


class Clock:
    """The investigation's clock; `ago(minutes)` gives RFC 3339 stamps before `now`."""

    def __init__(self, now: str) -> None:
        self.now = parse(now)

    def at(self, minutes_ago: float) -> datetime:
        return self.now - timedelta(minutes=minutes_ago)

    def ago(self, minutes_ago: float) -> str:
        return self.at(minutes_ago).strftime("%Y-%m-%dT%H:%M:%SZ")

    def ms(self, minutes_ago: float) -> str:
        return self.at(minutes_ago).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"

    def unix(self, minutes_ago: float) -> int:
        return int(self.at(minutes_ago).timestamp())


def suffix(seed: str, n: int = 5) -> str:
    """A stable pod-like suffix (lowercase letters and digits) for a seed."""
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    digest = hashlib.sha256(seed.encode()).digest()
    return "".join(alphabet[b % len(alphabet)] for b in digest[:n])


def uid(seed: str) -> str:
    h = hashlib.md5(seed.encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


@dataclass
class Metrics:
    """OpenMetrics families: name -> (type, help, samples[(labels, value, unix)])."""

    families: dict[str, tuple[str, str, list[tuple[dict[str, str], float, int]]]] = field(
        default_factory=dict
    )

    def add(
        self,
        family: str,
        kind: str,
        help_: str,
        sample: str,
        labels: dict[str, str],
        value: float,
        ts: int,
    ) -> None:
        self.families.setdefault(family, (kind, help_, []))[2].append(
            (labels | {"__name__": sample}, value, ts)
        )

    def text(self) -> str:
        out: list[str] = []
        for family, (kind, help_, samples) in self.families.items():
            out.append(f"# TYPE {family} {kind}")
            out.append(f"# HELP {family} {help_}")
            for labels, value, ts in sorted(samples, key=_point_order):
                name = labels["__name__"]
                body = ",".join(f'{k}="{v}"' for k, v in labels.items() if k != "__name__")
                v = float(value)
                val = str(round(v)) if abs(v) >= 1000 or v.is_integer() else f"{v:.6g}"
                out.append(f"{name}{{{body}}} {val} {ts}" if body else f"{name} {val} {ts}")
        out.append("# EOF")
        return "\n".join(out) + "\n"


def _point_order(s: tuple[dict[str, str], float, int]) -> tuple[Any, ...]:
    """Keep a histogram's or summary's samples of one point together: buckets by le, then
    count and sum, as OpenMetrics requires."""
    labels, _, ts = s
    base = sorted((k, v) for k, v in labels.items() if k not in ("le", "__name__"))
    name = labels["__name__"]
    rank = (
        0
        if name.endswith("_bucket")
        else 1
        if name.endswith("_count")
        else 2
        if name.endswith("_sum")
        else 0
    )
    le = labels.get("le", "")
    return (base, ts, rank, float("inf") if le == "+Inf" else float(le) if le else 0.0)


@dataclass
class Scenario:
    id: str
    title: str
    now: str
    report: str
    truth: Obj
    objects: list[Obj] = field(default_factory=list)
    pod_logs: dict[tuple[str, str, str, bool], list[str]] = field(default_factory=dict)
    docs: list[Obj] = field(default_factory=list)
    metrics: Metrics = field(default_factory=Metrics)
    interventions: list[Obj] = field(default_factory=list)

    def log(
        self, ns: str, pod_name: str, container_name: str, lines: list[str], previous: bool = False
    ) -> None:
        self.pod_logs.setdefault((ns, pod_name, container_name, previous), []).extend(lines)

    def doc(
        self,
        stamp: str,
        level: str,
        service_name: str,
        ns: str,
        pod_name: str,
        container_name: str,
        message: str,
        **extra: Any,
    ) -> None:
        d: Obj = {
            "@timestamp": stamp,
            "message": message,
            "log.level": level,
            "service.name": service_name,
            "kubernetes.namespace": ns,
            "kubernetes.pod.name": pod_name,
            "kubernetes.container.name": container_name,
        }
        d.update(extra)
        self.docs.append(d)

    def write(self, root: Path) -> None:
        folder = root / self.id
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        meta: Obj = {
            "id": self.id,
            "title": self.title,
            "now": self.now,
            "report": self.report,
            "truth": self.truth,
        }
        if self.interventions:
            meta["interventions"] = self.interventions
        (folder / "scenario.yaml").write_text(yaml.safe_dump(meta, sort_keys=False, width=100))
        (folder / "cluster.yaml").write_text(
            yaml.safe_dump_all(self.objects, sort_keys=False, width=120)
        )
        for (ns, pod_name, cname, previous), lines in self.pod_logs.items():
            d = folder / "pod-logs" / ns / pod_name
            d.mkdir(parents=True, exist_ok=True)
            (d / f"{cname}{'.previous' if previous else ''}.log").write_text(
                "\n".join(lines) + "\n"
            )
        if self.docs:
            docs = sorted(self.docs, key=lambda d: d["@timestamp"])
            (folder / "logs.ndjson").write_text("".join(json.dumps(d) + "\n" for d in docs))
        if self.metrics.families:
            (folder / "metrics.om").write_text(self.metrics.text())
