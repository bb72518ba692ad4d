"""Checks of metrics.om: the OpenMetrics text that promtool backfills into Prometheus.

promtool needs each family's samples together, a timestamp on every sample and a final
`# EOF`; a scenario also needs counters that only fall when their container restarted, or a
rate() over them would show a spike that never happened.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from tools.scenarios._problems import Problem, window_problem

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
TYPES = {"counter", "gauge", "histogram", "gaugehistogram", "summary", "info", "stateset",
         "unknown"}
SUFFIXES = {"counter": ("_total", "_created"),
            "histogram": ("_bucket", "_count", "_sum", "_created"),
            "gaugehistogram": ("_bucket", "_gcount", "_gsum"),
            "summary": ("_count", "_sum", "_created"), "info": ("_info",)}
MONOTONIC = {"counter": ("_total",), "histogram": ("_bucket", "_count", "_sum"),
             "summary": ("_count", "_sum")}
RESTARTS = "kube_pod_container_status_restarts_total"

Labels = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class SampleLine:
    line: int
    family: str
    name: str
    labels: Labels
    value: float
    timestamp: float


LINE = re.compile(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[^"}]|"(?:[^"\\]|\\.)*")*\})?( .*)?$')
PAIR = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)')
ESCAPES = re.compile(r"\\(.)")


@functools.lru_cache(maxsize=4096)
def parse_labels(text: str) -> Labels:
    """`{a="x",b="y"}` to pairs; raises ValueError on bad syntax. Cached: a series repeats
    the same label text on every sample."""
    body, out, at = text[1:-1], [], 0
    while at < len(body):
        match = PAIR.match(body, at)
        if not match:
            raise ValueError(f"bad label at {body[at:at + 20]!r}")
        value = ESCAPES.sub(lambda m: "\n" if m.group(1) == "n" else m.group(1), match.group(2))
        out.append((match.group(1), value))
        at = match.end()
    return tuple(out)


def split_sample(line: str) -> tuple[str, Labels, list[str]]:
    """A sample line to name, labels and the remaining fields (value, timestamp, ...)."""
    match = LINE.match(line)
    if not match:
        raise ValueError("not a metric name followed by labels")
    name, labels, rest = match.group(1), match.group(2), match.group(3)
    if not rest:
        raise ValueError("expected a space before the value")
    return name, parse_labels(labels) if labels else (), rest.split("#", 1)[0].split()


class _Reader:
    """One pass over the text: metadata, grouping, timestamps; samples kept for later checks."""

    def __init__(self, file: Path, now: datetime) -> None:
        self.file, self.now = file, now
        self.problems: list[Problem] = []
        self.types: dict[str, str] = {}
        self.helps: set[str] = set()
        self.closed: set[str] = set()
        self.current: str | None = None
        self.samples: list[SampleLine] = []
        self._families: dict[str, str | None] = {}

    def add(self, line: int | None, message: str) -> None:
        self.problems.append(Problem(self.file, line, message))

    def read(self, text: str) -> None:
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        eof = None
        for number, line in enumerate(lines, 1):
            if eof is not None:
                self.add(number, "text after # EOF")
                break
            if line == "# EOF":
                eof = number
            elif line.startswith("#"):
                self._metadata(number, line)
            elif not line.strip():
                self.add(number, "blank line (OpenMetrics allows none)")
            else:
                self._sample(number, line)
        if eof is None:
            self.add(len(lines) or None, "no final '# EOF' line")
        for family, type_ in self.types.items():
            if family not in self.helps:
                self.add(None, f"metric family {family} ({type_}) has no # HELP line")

    def _open(self, number: int, family: str) -> None:
        if family == self.current:
            return
        if self.current is not None:
            self.closed.add(self.current)
        if family in self.closed:
            self.add(number, f"samples of {family} are interleaved with another family: "
                     "keep each family's lines together")
        self.current = family

    def _metadata(self, number: int, line: str) -> None:
        parts = line.split(" ", 3)
        if len(parts) < 3 or parts[1] not in {"TYPE", "HELP", "UNIT"}:
            self.add(number, f"unexpected comment {line[:60]!r} (only # TYPE, # HELP, # UNIT "
                     "and # EOF)")
            return
        family = parts[2]
        if parts[1] == "TYPE":
            type_ = parts[3] if len(parts) > 3 else ""
            if type_ not in TYPES:
                self.add(number, f"unknown metric type {type_!r} for {family}")
            if family in self.types:
                self.add(number, f"second # TYPE line for {family}")
            if type_ == "counter" and family.endswith("_total"):
                self.add(number, f"counter family {family} must be declared without _total "
                         "(its samples carry the suffix)")
            self.types[family] = type_
            self._families.clear()
        elif parts[1] == "HELP":
            self.helps.add(family)
        self._open(number, family)

    def _family_of(self, name: str) -> str | None:
        if name not in self._families:
            self._families[name] = self._find_family(name)
        return self._families[name]

    def _find_family(self, name: str) -> str | None:
        if name in self.types and self.types[name] in {"gauge", "unknown", "stateset"}:
            return name
        for family, type_ in self.types.items():
            for suffix in SUFFIXES.get(type_, ()):
                if name == family + suffix:
                    return family
        return name if name in self.types else None

    def _sample(self, number: int, line: str) -> None:
        try:
            name, labels, fields = split_sample(line)
            value = float(fields[0]) if fields else None
        except ValueError as exc:
            self.add(number, f"malformed sample: {exc}")
            return
        family = self._family_of(name)
        if family is None:
            self.add(number, f"sample {name} has no # TYPE line for its family")
            family = name
        self._open(number, family)
        if value is None:
            self.add(number, f"sample {name} has no value")
            return
        if len(fields) < 2:
            self.add(number, f"sample {name} has no timestamp (every sample needs one)")
            return
        try:
            stamp = float(fields[1])
        except ValueError:
            self.add(number, f"sample {name} has a bad timestamp {fields[1]!r}")
            return
        problem = window_problem(datetime.fromtimestamp(stamp, UTC), self.now, "sample time")
        if problem:
            self.add(number, f"{name}: {problem}")
        if self.types.get(family) == "counter" and not name.endswith(("_total", "_created")):
            self.add(number, f"counter sample {name} must end in _total")
        self.samples.append(SampleLine(number, family, name, labels, value, stamp))


def check_metrics(file: Path, text: str, now: datetime,
                  restarted: Callable[[dict[str, str]], bool]) -> list[Problem]:
    """Every rule of the format for metrics.om. `restarted(labels)` says whether the
    container (or pod) a series belongs to restarted, which allows a counter reset."""
    reader = _Reader(file, now)
    reader.read(text)
    rising = _restarted_by_metrics(reader.samples)
    last: dict[tuple[str, Labels], SampleLine] = {}
    for sample in reader.samples:
        key = (sample.name, sample.labels)
        previous = last.get(key)
        last[key] = sample
        if previous is None:
            continue
        if sample.timestamp <= previous.timestamp:
            reader.add(sample.line, f"{_series(sample)}: timestamp {sample.timestamp:g} is not "
                       f"after the previous sample's ({previous.timestamp:g}, line "
                       f"{previous.line})")
            continue
        monotonic = MONOTONIC.get(reader.types.get(sample.family, ""), ())
        if sample.value < previous.value and sample.name.endswith(monotonic):
            labels = dict(sample.labels)
            if not (restarted(labels) or _in(rising, labels)):
                reader.add(sample.line, f"counter {_series(sample)} falls from "
                           f"{previous.value:g} to {sample.value:g} but its container did not "
                           "restart")
    _check_histograms(reader)
    return reader.problems


def _series(sample: SampleLine) -> str:
    body = ",".join(f'{k}="{v}"' for k, v in sample.labels)
    return f"{sample.name}{{{body}}}"


def _restarted_by_metrics(samples: list[SampleLine]) -> set[tuple[str, str, str]]:
    """(namespace, pod, container) whose restart counter rose within the metrics."""
    out: set[tuple[str, str, str]] = set()
    seen: dict[tuple[str, str, str], float] = {}
    for sample in samples:
        if sample.name != RESTARTS:
            continue
        labels = dict(sample.labels)
        key = (labels.get("namespace", ""), labels.get("pod", ""), labels.get("container", ""))
        if key in seen and sample.value > seen[key]:
            out.add(key)
        seen[key] = sample.value
    return out


def _in(rising: set[tuple[str, str, str]], labels: dict[str, str]) -> bool:
    namespace, pod = labels.get("namespace", ""), labels.get("pod", "")
    container = labels.get("container")
    return any(n == namespace and p == pod and (container is None or c == container)
               for n, p, c in rising)


def _check_histograms(reader: _Reader) -> None:
    """Each histogram point (one label set at one time): buckets rising to +Inf, a count
    equal to the +Inf bucket and a sum. prometheus_client's parser cannot check this: it
    drops the later points of a timestamped histogram."""
    points: dict[tuple[str, Labels, float], list[SampleLine]] = {}
    for sample in reader.samples:
        if reader.types.get(sample.family) == "histogram":
            labels = tuple(p for p in sample.labels if p[0] != "le")
            points.setdefault((sample.family, labels, sample.timestamp), []).append(sample)
    for point in points.values():
        _histogram_point(reader, point)


def _histogram_point(reader: _Reader, points: list[SampleLine]) -> None:
    family, first = points[0].family, points[0].line
    buckets = [p for p in points if p.name == family + "_bucket"]
    bounds = []
    for bucket in buckets:
        le = dict(bucket.labels).get("le", "")
        try:
            bounds.append(float(le))
        except ValueError:
            reader.add(bucket.line, f"{family}_bucket has a bad le label {le!r}")
            return
    if not bounds or bounds[-1] != float("inf"):
        reader.add(first, f"histogram {family}: point without a +Inf bucket")
        return
    if bounds != sorted(set(bounds)):
        reader.add(first, f"histogram {family}: buckets not in increasing le order")
    values = [b.value for b in buckets]
    if values != sorted(values):
        reader.add(first, f"histogram {family}: bucket counts fall as le rises")
    counts = [p.value for p in points if p.name == family + "_count"]
    if counts and counts[0] != values[-1]:
        reader.add(first, f"histogram {family}: _count {counts[0]:g} differs from the +Inf "
                   f"bucket {values[-1]:g}")
    if not any(p.name == family + "_sum" for p in points):
        reader.add(first, f"histogram {family}: point without _sum")
