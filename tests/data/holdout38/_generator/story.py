"""One scenario being written: its objects, logs and metrics, and the folder they become.

A story collects what a builder function adds (objects for cluster.yaml, pod log lines,
log-store documents, metric samples) and writes the scenario folder in one go, so the
format's rules (sorted samples, one family per TYPE line, `# EOF`) live here only.
"""

from __future__ import annotations

import json
import random
import re
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from tests.data.holdout38._generator.kube import Obj, ts


def _block(text: str) -> Any:
    return _Literal(text)


class _Literal(str):
    """A string yaml writes as a `|` block."""


def _literal(dumper: yaml.SafeDumper, value: _Literal) -> Any:
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(value), style="|")


yaml.SafeDumper.add_representer(_Literal, _literal)


_TIME = re.compile(r'^\W{0,12}(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})')
_LEVELS = (("ERROR", "error"), ("FATAL", "error"), ("WARN", "warn"), ("DEBUG", "debug"))


@dataclass
class Story:
    id: str
    title: str
    now: datetime
    report: str
    truth: Obj
    seed: int = 38
    objects: list[Obj] = field(default_factory=list)
    pod_logs: dict[tuple[str, str, str, bool], list[str]] = field(default_factory=dict)
    docs: list[Obj] = field(default_factory=list)
    series: dict[tuple[str, str, tuple[tuple[str, str], ...]], list[tuple[float, float]]] = \
        field(default_factory=dict)
    interventions: list[Obj] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rng = random.Random(f"{self.id}/{self.seed}")

    def add(self, *objects: Obj) -> None:
        self.objects.extend(objects)

    def log(self, ns: str, pod: str, container: str, lines: Iterable[str], *,
            previous: bool = False) -> None:
        self.pod_logs.setdefault((ns, pod, container, previous), []).extend(lines)

    def doc(self, at: datetime, message: str, *, level: str, service: str, ns: str, pod: str,
            container: str, **fields: Any) -> None:
        stamp = at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"
        document = {"@timestamp": stamp,
                    "message": message, "log.level": level, "service.name": service,
                    "kubernetes.namespace": ns, "kubernetes.pod.name": pod,
                    "kubernetes.container.name": container}
        document.update({k.replace("__", "."): v for k, v in fields.items()})
        self.docs.append(document)

    def mirror(self, ns: str, pod: str, container: str, service: str, *,
               every: int = 1, previous: bool = False) -> None:
        """Ship a pod log to the log store, as the node's log agent would: each line that
        starts with a time becomes a document, its level read from the words in it."""
        for index, line in enumerate(self.pod_logs.get((ns, pod, container, previous), [])):
            match = _TIME.match(line)
            if not match or index % every:
                continue
            at = datetime.strptime(match.group(1)[:19], "%Y-%m-%dT%H:%M:%S")
            upper = line[:160].upper()
            level = next((name for word, name in _LEVELS if word in upper), "info")
            self.doc(at, line, level=level, service=service, ns=ns, pod=pod,
                     container=container)

    def sample(self, metric: str, kind: str, labels: dict[str, str], at: datetime,
               value: float) -> None:
        key = (metric, kind, tuple(sorted(labels.items())))
        self.series.setdefault(key, []).append((at.timestamp(), value))

    def steps(self, start: datetime, end: datetime, every: timedelta) -> list[datetime]:
        found, moment = [], start
        while moment <= end:
            found.append(moment)
            moment += every
        return found

    # ---- writing -------------------------------------------------------------------

    def write(self, root: Path) -> Path:
        folder = root / self.id
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        scenario: Obj = {"id": self.id, "title": self.title, "now": ts(self.now),
                         "report": _block(self.report.strip() + "\n"), "truth": self.truth}
        if self.interventions:
            scenario["interventions"] = self.interventions
        (folder / "scenario.yaml").write_text(
            yaml.safe_dump(scenario, sort_keys=False, width=100, allow_unicode=True))
        (folder / "cluster.yaml").write_text(yaml.safe_dump_all(
            [_clean(o) for o in self.objects], sort_keys=False, width=120))
        for (ns, pod, container, previous), lines in sorted(self.pod_logs.items()):
            path = folder / "pod-logs" / ns / pod / (
                container + (".previous.log" if previous else ".log"))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(line + "\n" for line in lines))
        if self.docs:
            docs = sorted(self.docs, key=lambda d: d["@timestamp"])
            (folder / "logs.ndjson").write_text(
                "".join(json.dumps(d, separators=(",", ":")) + "\n" for d in docs))
        if self.series:
            (folder / "metrics.om").write_text(self._openmetrics())
        return folder

    def _openmetrics(self) -> str:
        families: dict[str, tuple[str, list[str]]] = {}
        for (metric, kind, labels), samples in sorted(self.series.items()):
            family = metric[:-6] if kind == "counter" and metric.endswith("_total") else metric
            if kind in ("histogram", "summary"):
                family = metric.rsplit("_", 1)[0]
            _, lines = families.setdefault(family, (kind, []))
            text = ",".join(f'{k}="{v}"' for k, v in labels)
            for at, value in sorted(samples):
                shown = f"{value:.6g}" if abs(value) < 1e6 else f"{value:.0f}"
                lines.append(f"{metric}{{{text}}} {shown} {at:.0f}")
        out = []
        for family, (kind, lines) in families.items():
            out.append(f"# HELP {family} {HELP.get(family, family.replace('_', ' '))}")
            out.append(f"# TYPE {family} {kind}")
            out.extend(lines)
        return "\n".join(out) + "\n# EOF\n"


HELP = {
    "container_memory_working_set_bytes": "Current working set of the container in bytes",
    "container_cpu_usage_seconds": "Cumulative cpu time consumed in seconds",
    "kube_pod_container_resource_limits": "The number of requested limit resource by a container",
    "kube_pod_container_status_restarts": "The number of container restarts per container",
    "kube_pod_container_status_last_terminated_reason": "Describes the last reason the "
    "container was in terminated state",
}


def _clean(node: Any) -> Any:
    """Drop None values and empty annotation maps, as the API server prints objects."""
    if isinstance(node, dict):
        return {k: _clean(v) for k, v in node.items()
                if v is not None and not (k == "annotations" and v == {})}
    if isinstance(node, list):
        return [_clean(v) for v in node]
    return node
