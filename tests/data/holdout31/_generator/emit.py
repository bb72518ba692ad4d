"""A scenario under construction: objects, pod logs, log documents and metric series,
written out in the scenario format's layout.

Metrics are kept by family so that the OpenMetrics text groups each family's samples
(what `promtool tsdb create-blocks-from openmetrics` wants), every sample timestamped.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from .kube import Obj, ts, uid


def _iso_ms(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"


@dataclass
class Family:
    kind: str  # counter | gauge | histogram
    help: str
    series: dict[tuple[tuple[str, str], ...], list[tuple[float, int]]] = field(default_factory=dict)


@dataclass
class Scenario:
    id: str
    title: str
    now: datetime
    report: str
    truth: dict[str, Any]
    objects: list[Obj] = field(default_factory=list)
    pod_logs: dict[tuple[str, str, str, bool], list[str]] = field(default_factory=dict)
    docs: list[dict[str, Any]] = field(default_factory=list)
    families: dict[str, Family] = field(default_factory=dict)
    interventions: list[dict[str, Any]] = field(default_factory=list)

    def add(self, *objects: Obj) -> None:
        self.objects.extend(objects)

    def log(self, ns: str, pod: str, container: str, at: datetime, line: str, *,
            previous: bool = False) -> None:
        """One line of a container's output, with the runtime's leading timestamp."""
        self.pod_logs.setdefault((ns, pod, container, previous), []).append(
            f"{_iso_ms(at)} {line}")

    def doc(self, at: datetime, *, service: str, ns: str, pod: str, container: str,
            level: str, message: str, **extra: Any) -> None:
        """One document of the log store, ECS field names as flat dotted keys."""
        record: dict[str, Any] = {"@timestamp": _iso_ms(at), "message": message,
                                  "log.level": level, "service.name": service,
                                  "kubernetes.namespace": ns, "kubernetes.pod.name": pod,
                                  "kubernetes.container.name": container}
        record.update({k.replace("__", "."): v for k, v in extra.items()})
        self.docs.append(record)

    def both(self, at: datetime, *, service: str, ns: str, pod: str, container: str,
             level: str, message: str, pod_line: str | None = None, **extra: Any) -> None:
        """A line that the container printed and the log shipper stored."""
        self.doc(at, service=service, ns=ns, pod=pod, container=container, level=level,
                 message=message, **extra)
        self.log(ns, pod, container, at, pod_line or f"{level.upper():5} {message}")

    def family(self, name: str, kind: str, help: str) -> Family:
        if name not in self.families:
            self.families[name] = Family(kind, help)
        return self.families[name]

    def sample(self, name: str, kind: str, labels: dict[str, str], at: datetime,
               value: float, help: str = "") -> None:
        """A sample of `name` (the sample name, e.g. `http_requests_total`)."""
        family = _family_name(name, kind)
        key = tuple(sorted(labels.items()))
        self.family(family, kind, help or family.replace("_", " ")).series.setdefault(
            (("__name__", name), *key), []).append((value, int(at.timestamp())))

    def write(self, root: Path) -> Path:
        folder = root / self.id
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        body: dict[str, Any] = {"id": self.id, "title": self.title, "now": ts(self.now),
                                "report": self.report, "truth": self.truth}
        if self.interventions:
            body["interventions"] = self.interventions
        (folder / "scenario.yaml").write_text(
            yaml.safe_dump(body, sort_keys=False, width=100, allow_unicode=True))
        _unique_uids(self.objects)
        floor = ts(self.now - timedelta(days=6, hours=22))
        for obj in self.objects:
            if "status" in obj:
                _clamp(obj["status"], floor)
        (folder / "cluster.yaml").write_text(
            yaml.safe_dump_all(self.objects, sort_keys=False, width=200))
        cutoff = _iso_ms(self.now)
        self.docs = [d for d in self.docs if d["@timestamp"] <= cutoff]
        for (ns, pod, container, previous), lines in sorted(self.pod_logs.items()):
            lines = [line for line in lines if line[:24] <= cutoff]
            name = f"{container}.previous.log" if previous else f"{container}.log"
            path = folder / "pod-logs" / ns / pod / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("\n".join(sorted(lines, key=lambda line: line[:24])) + "\n")
        if self.docs:
            self.docs.sort(key=lambda d: d["@timestamp"])
            (folder / "logs.ndjson").write_text(
                "".join(json.dumps(d, separators=(",", ":")) + "\n" for d in self.docs))
        if self.families:
            (folder / "metrics.om").write_text(self._openmetrics())
        return folder

    def _openmetrics(self) -> str:
        out: list[str] = []
        for name, family in self.families.items():
            out.append(f"# TYPE {name} {family.kind}")
            out.append(f"# HELP {name} {family.help}")
            for key, samples in family.series.items():
                sample_name = key[0][1]
                labels = ",".join(f'{k}="{v}"' for k, v in key[1:])
                for value, at in sorted(samples, key=lambda s: s[1]):
                    number = repr(round(value, 6)) if isinstance(value, float) else str(value)
                    out.append(f"{sample_name}{{{labels}}} {number} {at}")
        out.append("# EOF")
        return "\n".join(out) + "\n"


def _unique_uids(objects: list[Obj]) -> None:
    """One uid per (kind, namespace, name), references included: a Deployment and its
    Service share a name, never a uid."""
    for obj in objects:
        meta = obj["metadata"]
        namespace = meta.get("namespace", "")
        meta["uid"] = uid(obj["kind"], namespace, meta["name"])
        for ref in meta.get("ownerReferences") or []:
            ref["uid"] = uid(ref["kind"], namespace, ref["name"])
        involved = obj.get("involvedObject")
        if involved:
            involved["uid"] = uid(involved["kind"], involved.get("namespace", ""), involved["name"])
        for subset in obj.get("subsets") or []:
            for address in subset.get("addresses", []) + subset.get("notReadyAddresses", []):
                ref = address.get("targetRef")
                if ref:
                    ref["uid"] = uid("Pod", ref["namespace"], ref["name"])


_STATUS_TIMES = {"lastTransitionTime", "lastUpdateTime", "startTime", "startedAt",
                 "finishedAt", "lastHeartbeatTime", "lastProbeTime", "lastScheduleTime",
                 "lastSuccessfulTime", "completionTime"}


def _clamp(node: Any, floor: str) -> None:
    """Status times older than the format's week become the week's start: objects are
    older than a week, but what their status says happened within it (an apiserver keeps
    conditions, the format keeps a week)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in _STATUS_TIMES and isinstance(value, str) and value < floor:
                node[key] = floor
            else:
                _clamp(value, floor)
    elif isinstance(node, list):
        for item in node:
            _clamp(item, floor)


def _family_name(sample: str, kind: str) -> str:
    if kind == "counter":
        return sample.removesuffix("_total")
    if kind == "histogram":
        for tail in ("_bucket", "_count", "_sum"):
            if sample.endswith(tail):
                return sample.removesuffix(tail)
    return sample


def steps(start: datetime, end: datetime, every: timedelta) -> list[datetime]:
    out = []
    at = start
    while at <= end:
        out.append(at)
        at += every
    return out
