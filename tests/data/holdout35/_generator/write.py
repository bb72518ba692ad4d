"""Writing one scenario folder: scenario.yaml, cluster.yaml, pod logs, logs.ndjson, metrics.om."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

SET = Path(__file__).resolve().parent.parent


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def _str(dumper: yaml.SafeDumper, value: str) -> Any:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


@dataclass
class Metrics:
    """OpenMetrics families, in the order first declared; samples per series in time order."""

    families: dict[str, tuple[str, str, dict[str, list[tuple[str, float, int]]]]] = field(
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
        when: int,
    ) -> None:
        fam = self.families.setdefault(family, (kind, help_, {}))
        key = sample + "{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}"
        fam[2].setdefault(key, []).append((key, value, when))

    def text(self) -> str:
        out: list[str] = []
        for name, (kind, help_, series) in self.families.items():
            out.append(f"# HELP {name} {help_}")
            out.append(f"# TYPE {name} {kind}")
            for key, points in series.items():
                for _, value, when in sorted(points, key=lambda p: p[2]):
                    shown = repr(round(value, 6)) if isinstance(value, float) else str(value)
                    out.append(f"{key} {shown} {when}")
        out.append("# EOF")
        return "\n".join(out) + "\n"


@dataclass
class Scenario:
    id: str
    title: str
    now: str
    report: str
    truth: dict[str, Any]
    objects: list[dict[str, Any]] = field(default_factory=list)
    pod_logs: dict[tuple[str, str, str, bool], list[str]] = field(default_factory=dict)
    docs: list[dict[str, Any]] = field(default_factory=list)
    metrics: Metrics | None = None

    def log(
        self, ns: str, pod: str, container: str, lines: list[str], previous: bool = False
    ) -> None:
        self.pod_logs.setdefault((ns, pod, container, previous), []).extend(lines)

    def clamp(self) -> None:
        """The format keeps status times within the week before now: a status older than
        that (a pod running for months) shows the oldest moment the format allows."""
        now = datetime.fromisoformat(self.now.replace("Z", "+00:00"))
        floor = now - timedelta(days=6, hours=20)

        def walk(node: Any) -> Any:
            if isinstance(node, dict):
                return {k: fix(k, v) if isinstance(v, str) else walk(v) for k, v in node.items()}
            if isinstance(node, list):
                return [walk(v) for v in node]
            return node

        def fix(key: str, value: str) -> str:
            if not (key.endswith("Time") or key.endswith("At")) or len(value) < 20:
                return value
            try:
                moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                return value
            return floor.strftime("%Y-%m-%dT%H:%M:%SZ") if moment < floor else value

        for obj in self.objects:
            if "status" in obj:
                obj["status"] = walk(obj["status"])

    def write(self) -> Path:
        self.clamp()
        folder = SET / self.id
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        head = {
            "id": self.id,
            "title": self.title,
            "now": self.now,
            "report": self.report,
            "truth": self.truth,
        }
        (folder / "scenario.yaml").write_text(
            yaml.dump(head, Dumper=_Dumper, sort_keys=False, width=100)
        )
        (folder / "cluster.yaml").write_text(
            yaml.dump_all(self.objects, Dumper=_Dumper, sort_keys=False, width=120)
        )
        for (ns, pod, container, previous), lines in self.pod_logs.items():
            path = (
                folder
                / "pod-logs"
                / ns
                / pod
                / (container + (".previous" if previous else "") + ".log")
            )
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("\n".join(lines) + "\n")
        if self.docs:
            docs = sorted(self.docs, key=lambda d: d["@timestamp"])
            (folder / "logs.ndjson").write_text("".join(json.dumps(d) + "\n" for d in docs))
        if self.metrics:
            (folder / "metrics.om").write_text(self.metrics.text())
        return folder


def doc(
    stamp: str,
    message: str,
    level: str,
    service: str,
    ns: str,
    pod: str,
    container: str,
    **extra: Any,
) -> dict[str, Any]:
    d: dict[str, Any] = {
        "@timestamp": stamp,
        "message": message,
        "log.level": level,
        "service.name": service,
        "kubernetes.namespace": ns,
        "kubernetes.pod.name": pod,
        "kubernetes.container.name": container,
    }
    d.update({k.replace("__", "."): v for k, v in extra.items()})
    return d


BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


def histogram(
    m: Metrics,
    family: str,
    help_: str,
    labels: dict[str, str],
    steps: list[tuple[int, list[float]]],
) -> None:
    """Cumulative histogram series from (unix time, latencies observed since the last step)."""
    counts = [0] * (len(BUCKETS) + 1)
    total, total_sum = 0, 0.0
    for when, latencies in steps:
        for value in latencies:
            for i, bound in enumerate(BUCKETS):
                if value <= bound:
                    counts[i] += 1
            counts[-1] += 1
            total += 1
            total_sum += value
        for i, bound in enumerate(BUCKETS):
            m.add(
                family,
                "histogram",
                help_,
                f"{family}_bucket",
                {**labels, "le": str(bound)},
                counts[i],
                when,
            )
        m.add(
            family,
            "histogram",
            help_,
            f"{family}_bucket",
            {**labels, "le": "+Inf"},
            counts[-1],
            when,
        )
        m.add(family, "histogram", help_, f"{family}_count", labels, total, when)
        m.add(family, "histogram", help_, f"{family}_sum", labels, round(total_sum, 3), when)


def counter(
    m: Metrics, family: str, help_: str, labels: dict[str, str], steps: list[tuple[int, float]]
) -> None:
    total = 0.0
    for when, increment in steps:
        total += increment
        m.add(family, "counter", help_, f"{family}_total", labels, round(total, 3), when)


def gauge(
    m: Metrics, family: str, help_: str, labels: dict[str, str], steps: list[tuple[int, float]]
) -> None:
    for when, value in steps:
        m.add(family, "gauge", help_, family, labels, value, when)
