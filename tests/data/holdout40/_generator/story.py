"""A story: everything one scenario folder holds, and the code that writes it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml


def _str_presenter(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


yaml.SafeDumper.add_representer(str, _str_presenter)


class Metrics:
    """OpenMetrics families with explicit timestamps, each family's series contiguous."""

    def __init__(self) -> None:
        self.families: dict[str, tuple[str, str, dict[str, list[tuple[float, float]]]]] = {}

    def add(self, family: str, kind: str, help_: str, labels: dict[str, str],
            samples: list[tuple[float, float]], sample: str = "") -> None:
        """sample: the sample's suffix for a summary or histogram family (`_count`)."""
        entry = self.families.setdefault(family, (kind, help_, {}))
        sample_name = family + ("_total" if kind == "counter" else sample)
        text = ",".join(f'{k}="{v}"' for k, v in labels.items())
        entry[2].setdefault(f"{sample_name}{{{text}}}", []).extend(samples)

    def render(self) -> str:
        lines: list[str] = []
        for family, (kind, help_, series) in self.families.items():
            lines.append(f"# TYPE {family} {kind}")
            lines.append(f"# HELP {family} {help_}")
            for key, samples in series.items():
                for moment, value in sorted(samples):
                    shown = f"{value:.0f}" if kind in ("counter", "summary") else f"{value:.6g}"
                    lines.append(f"{key} {shown} {int(moment)}")
        lines.append("# EOF")
        return "\n".join(lines) + "\n"


@dataclass
class Story:
    id: str
    title: str
    now: datetime
    report: str
    truth: dict[str, Any]
    objects: list[dict[str, Any]] = field(default_factory=list)
    pod_logs: dict[tuple[str, str, str, bool], list[str]] = field(default_factory=dict)
    logs: list[dict[str, Any]] = field(default_factory=list)
    metrics: Metrics = field(default_factory=Metrics)

    def at(self, minutes_ago: float) -> datetime:
        return self.now - timedelta(minutes=minutes_ago)

    def unix(self, minutes_ago: float) -> float:
        return self.at(minutes_ago).timestamp()

    def add(self, *objects: dict[str, Any]) -> None:
        self.objects.extend(objects)

    def pod_log(self, ns: str, pod: str, container: str, lines: list[str], *,
                previous: bool = False) -> None:
        self.pod_logs.setdefault((ns, pod, container, previous), []).extend(lines)

    def log(self, minutes_ago: float, message: str, level: str, service: str, ns: str,
            pod: str, container: str | None = None, /, **extra: Any) -> None:
        moment = self.at(minutes_ago).astimezone(UTC)
        doc: dict[str, Any] = {
            "@timestamp": moment.strftime("%Y-%m-%dT%H:%M:%S.")
            + f"{moment.microsecond // 1000:03d}Z",
            "message": message, "log.level": level, "service.name": service,
            "kubernetes.namespace": ns, "kubernetes.pod.name": pod,
            "kubernetes.container.name": container or service}
        doc.update(extra)
        self.logs.append(doc)

    def write(self, root: Path) -> Path:
        folder = root / self.id
        if folder.exists():
            for path in sorted(folder.rglob("*"), reverse=True):
                path.unlink() if path.is_file() else path.rmdir()
        folder.mkdir(parents=True, exist_ok=True)
        head = {"id": self.id, "title": self.title,
                "now": self.now.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "report": self.report.strip() + "\n", "truth": self.truth}
        (folder / "scenario.yaml").write_text(
            yaml.safe_dump(head, sort_keys=False, allow_unicode=True, width=100))
        (folder / "cluster.yaml").write_text(
            yaml.safe_dump_all(self.objects, sort_keys=False, width=100))
        for (ns, pod, container, previous), lines in self.pod_logs.items():
            path = folder / "pod-logs" / ns / pod / (
                f"{container}.previous.log" if previous else f"{container}.log")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("\n".join(lines) + "\n")
        if self.logs:
            ordered = sorted(self.logs, key=lambda d: d["@timestamp"])
            (folder / "logs.ndjson").write_text(
                "".join(json.dumps(d, sort_keys=False) + "\n" for d in ordered))
        if self.metrics.families:
            (folder / "metrics.om").write_text(self.metrics.render())
        return folder
