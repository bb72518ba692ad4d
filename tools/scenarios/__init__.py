"""Incident scenarios (scenario-format.md v1): find them, load them, read their data.

Bundled scenarios live beside this module as package data, so the demo works after a plain
`pip install`. A scenario is loaded lazily: `scenario.yaml` at once (it is small and names
the incident), the cluster, logs and metrics on first use.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from engines.diagnosis import Truth
from engines.errors import ScenarioError
from tools.sources.base import KubeObject, LogRecord, Sample, Series

DEFAULT_SCENARIO = "checkout-oom"
_YAML_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml is 4x faster
SCENARIO_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")


class Intervention(BaseModel):
    """A reply a human posts during the run, after the given step."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    after_step: int = Field(ge=0)
    text: str = Field(min_length=1)


class ScenarioHeader(BaseModel):
    """The contents of scenario.yaml (unknown keys are left to the validator to report)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str = Field(pattern=SCENARIO_ID.pattern)
    title: str = Field(min_length=1)
    now: datetime
    report: str = Field(min_length=1)
    truth: Truth
    interventions: list[Intervention] = Field(default_factory=list)


def bundled_root() -> Path:
    """The folder that holds the bundled scenarios."""
    return Path(str(resources.files("tools.scenarios")))


def bundled_ids() -> list[str]:
    """Ids of the bundled scenarios, sorted."""
    root = bundled_root()
    return sorted(p.name for p in root.iterdir() if (p / "scenario.yaml").is_file())


def parse_time(value: Any) -> datetime:
    """RFC 3339 (or a YAML datetime) to an aware UTC datetime."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    text = str(value).strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    parsed = datetime.fromisoformat(text)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def flatten(document: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested ECS objects to flat dotted keys (readers accept both shapes)."""
    flat: dict[str, Any] = {}
    for key, value in document.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flatten(value, name + "."))
        else:
            flat[name] = value
    return flat


def log_record(document: dict[str, Any]) -> LogRecord:
    """An ECS document (flat or nested) as a LogRecord."""
    flat = flatten(document)
    return LogRecord(
        timestamp=parse_time(flat["@timestamp"]),
        message=str(flat.get("message", "")),
        level=str(flat.get("log.level", "")).lower(),
        service=str(flat.get("service.name", "")),
        namespace=str(flat.get("kubernetes.namespace", "")),
        pod=str(flat.get("kubernetes.pod.name", "")),
        container=str(flat.get("kubernetes.container.name", "")),
        fields=flat,
    )


_METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL_PAIR = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?')
_UNESCAPE = {"\\\\": "\\", '\\"': '"', "\\n": "\n"}


def _sample_line(line: str) -> tuple[str, dict[str, str], float, float | None]:
    """`name{labels} value [timestamp] [# exemplar]` to its parts; ValueError if malformed."""
    name = _METRIC_NAME.match(line)
    if name is None:
        raise ValueError(f"invalid line: {line}")
    rest, labels = line[name.end():], {}
    if rest.startswith("{"):
        position = 1
        while not rest.startswith("}", position):
            pair = _LABEL_PAIR.match(rest, position)
            if pair is None:
                raise ValueError(f"invalid labels: {line}")
            labels[pair.group(1)] = re.sub(
                r'\\[\\"n]', lambda m: _UNESCAPE[m.group()], pair.group(2)
            )
            position = pair.end()
        rest = rest[position + 1 :]
    parts = rest.split(" # ", 1)[0].split()
    if not parts or len(parts) > 2:
        raise ValueError(f"invalid line: {line}")
    return name.group(), labels, float(parts[0]), float(parts[1]) if len(parts) == 2 else None


def parse_openmetrics(text: str) -> list[Series]:
    """OpenMetrics text to one Series per sample name and label set, in time order.

    A small line parser rather than prometheus_client's: its OpenMetrics parser drops the
    second and later points of a timestamped histogram (it reports "+Inf bucket missing"),
    and scenarios are exactly timestamped histograms. Conformance to the format is checked
    by promtool in the live tests. A series' `name{labels}` text is parsed once, then
    reused for its every sample.
    """
    grouped: dict[tuple[str, tuple[tuple[str, str], ...]], list[Sample]] = {}
    keys: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        body = line.split(" # ", 1)[0] if " # " in line else line
        parts = body.rsplit(None, 2)
        if len(parts) == 3 and parts[0] not in keys and not parts[0].endswith(("}", "\"")) \
                and "{" in parts[0]:
            parts = []  # a label value with spaces: let the full parser read the line
        if len(parts) != 3:
            name, labels, value, timestamp = _sample_line(line)
            if timestamp is None:
                raise ScenarioError(f"sample {name} has no timestamp")
            key = (name, tuple(sorted(labels.items())))
        else:
            series, value_text, stamp = parts
            key = keys.get(series) or keys.setdefault(series, _series_key(series))
            value, timestamp = float(value_text), float(stamp)
        grouped.setdefault(key, []).append(Sample(datetime.fromtimestamp(timestamp, UTC), value))
    return [
        Series(name, dict(labels), sorted(samples, key=lambda s: s.timestamp))
        for (name, labels), samples in grouped.items()
    ]


def _series_key(series: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """`name{labels}` to (name, sorted label pairs)."""
    name, labels, _, _ = _sample_line(series + " 0")
    return name, tuple(sorted(labels.items()))


@dataclass
class Scenario:
    """A recorded incident, read from its folder."""

    path: Path
    header: ScenarioHeader
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return self.header.id

    @property
    def title(self) -> str:
        return self.header.title

    @property
    def now(self) -> datetime:
        return self.header.now if self.header.now.tzinfo else self.header.now.replace(tzinfo=UTC)

    @property
    def report(self) -> str:
        return self.header.report.strip()

    @property
    def truth(self) -> Truth:
        return self.header.truth

    @property
    def interventions(self) -> list[Intervention]:
        return list(self.header.interventions)

    @cached_property
    def cluster_objects(self) -> list[KubeObject]:
        file = self.path / "cluster.yaml"
        if not file.is_file():
            return []
        try:
            documents = list(yaml.load_all(file.read_text(), Loader=_YAML_LOADER))
        except yaml.YAMLError as exc:
            raise ScenarioError(f"{file}: not valid YAML: {exc}") from None
        objects = [d for d in documents if isinstance(d, dict)]
        if any(o.get("kind") == "Secret" for o in objects):
            raise ScenarioError(f"{file}: Secret objects are not allowed in a scenario")
        return objects

    @cached_property
    def log_records(self) -> list[LogRecord]:
        file = self.path / "logs.ndjson"
        if not file.is_file():
            return []
        records = []
        for number, line in enumerate(file.read_text().splitlines(), 1):
            if not line.strip():
                continue
            try:
                records.append(log_record(json.loads(line)))
            except (ValueError, KeyError) as exc:
                raise ScenarioError(f"{file}:{number}: bad log document: {exc}") from None
        return sorted(records, key=lambda r: r.timestamp)

    @cached_property
    def _metrics_text(self) -> str:
        """metrics.om, read once for its series and its types ("" when absent)."""
        file = self.path / "metrics.om"
        return file.read_text() if file.is_file() else ""

    @cached_property
    def metric_series(self) -> list[Series]:
        try:
            return parse_openmetrics(self._metrics_text)
        except ValueError as exc:
            raise ScenarioError(f"{self.path / 'metrics.om'}: not valid OpenMetrics: {exc}") \
                from None

    @cached_property
    def metric_types(self) -> dict[str, str]:
        """Metric family to its declared type (`# TYPE http_requests counter`)."""
        types = {}
        for line in self._metrics_text.splitlines():
            if line.startswith("# TYPE "):
                parts = line.split()
                if len(parts) >= 4:
                    types[parts[2]] = parts[3]
        return types

    def pod_log_file(
        self, namespace: str, pod: str, container: str, *, previous: bool = False
    ) -> Path:
        suffix = ".previous.log" if previous else ".log"
        return self.path / "pod-logs" / namespace / pod / f"{container}{suffix}"


def load_scenario(ref: str | Path) -> Scenario:
    """A scenario by bundled id or by folder path. Raises ScenarioError with the reason."""
    text = str(ref)
    candidate = Path(text).expanduser()
    if candidate.is_dir():
        folder = candidate
    elif SCENARIO_ID.match(text) and (bundled_root() / text / "scenario.yaml").is_file():
        folder = bundled_root() / text
    else:
        known = ", ".join(bundled_ids()) or "none"
        raise ScenarioError(f"unknown scenario {text!r}: not a folder nor a bundled id ({known})")
    file = folder / "scenario.yaml"
    if not file.is_file():
        raise ScenarioError(f"{folder} has no scenario.yaml")
    try:
        raw = yaml.safe_load(file.read_text())
        header = ScenarioHeader.model_validate(raw)
    except yaml.YAMLError as exc:
        raise ScenarioError(f"{file}: not valid YAML: {exc}") from None
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        raise ScenarioError(f"{file}: {problems}") from None
    return Scenario(path=folder, header=header)
