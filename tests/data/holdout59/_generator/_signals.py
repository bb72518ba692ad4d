"""Shared kit for the holdout59 generators, part two: logs, pod logs, metrics, writing."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from ._base import Obj, PodRef, iso, iso_ms
from ._kit import Cluster


class Logs:
    """Collects ECS log documents and writes logs.ndjson sorted by time."""

    def __init__(self) -> None:
        self.docs: list[tuple[datetime, int, Obj]] = []

    def add(self, t: datetime, ref: PodRef, level: str, message: str, **extra: Any) -> None:
        """One log document from a container."""
        doc: Obj = {
            "@timestamp": iso_ms(t),
            "message": message,
            "log.level": level,
            "service.name": ref.service,
            "kubernetes.namespace": ref.ns,
            "kubernetes.pod.name": ref.pod,
            "kubernetes.container.name": ref.container,
            "kubernetes.node.name": ref.node,
        }
        for k, v in extra.items():
            doc[k.replace("__", ".")] = v
        self.docs.append((t, len(self.docs), doc))

    def write(self, path: Path) -> None:
        """Write logs.ndjson."""
        lines = [
            json.dumps(d, sort_keys=False) for _, _, d in sorted(self.docs, key=lambda x: x[:2])
        ]
        path.write_text("\n".join(lines) + "\n")


class PodLogs:
    """Plain-text container output for pod-logs/."""

    def __init__(self) -> None:
        self.files: dict[tuple[str, str, str, bool], list[str]] = {}

    def add(self, ref: PodRef, line: str, previous: bool = False) -> None:
        """Append one line to a container's current (or previous) log."""
        self.files.setdefault((ref.ns, ref.pod, ref.container, previous), []).append(line)

    def write(self, root: Path) -> None:
        """Write pod-logs/<ns>/<pod>/<container>[.previous].log."""
        for (ns, pod, container, prev), lines in sorted(self.files.items()):
            d = root / "pod-logs" / ns / pod
            d.mkdir(parents=True, exist_ok=True)
            name = f"{container}.previous.log" if prev else f"{container}.log"
            (d / name).write_text("\n".join(lines) + "\n")


def _fmt(v: float) -> str:
    if float(v).is_integer():
        return str(int(v))
    return f"{v:.6g}" if abs(v) < 1e6 else f"{v:.1f}"


class Metrics:
    """Collects samples and writes OpenMetrics text with explicit timestamps."""

    def __init__(self) -> None:
        self.families: dict[str, tuple[str, str]] = {}
        self.series: dict[
            str, dict[tuple[str, tuple[tuple[str, str], ...]], list[tuple[int, float]]]
        ] = {}

    def _family(self, name: str, kind: str, help_: str) -> None:
        self.families.setdefault(name, (kind, help_))
        self.series.setdefault(name, {})

    def put(
        self,
        family: str,
        kind: str,
        help_: str,
        sample: str,
        labels: dict[str, str],
        t: datetime,
        value: float,
    ) -> None:
        """One sample of a family (``sample`` is the full sample name)."""
        self._family(family, kind, help_)
        key = (sample, tuple(sorted(labels.items())))
        self.series[family].setdefault(key, []).append((int(t.timestamp()), value))

    def gauge(
        self,
        name: str,
        help_: str,
        labels: dict[str, str],
        times: Iterable[datetime],
        fn: Callable[[datetime], float | None],
    ) -> None:
        """A gauge series; ``fn`` returning None leaves a gap."""
        for t in times:
            v = fn(t)
            if v is not None:
                self.put(name, "gauge", help_, name, labels, t, v)

    def counter(
        self,
        name: str,
        help_: str,
        labels: dict[str, str],
        times: list[datetime],
        rate: Callable[[datetime], float | None],
        start: float = 0.0,
    ) -> None:
        """A counter (family ``name``, samples ``name_total``) integrating a per-second rate.

        ``rate`` returning None means the series does not exist at that time (no sample).
        """
        total = start
        prev: datetime | None = None
        for t in times:
            r = rate(t)
            if r is None:
                prev = None
                continue
            if prev is not None:
                total += max(r, 0.0) * (t - prev).total_seconds()
            prev = t
            self.put(name, "counter", help_, f"{name}_total", labels, t, round(total, 3))

    def histogram(
        self,
        name: str,
        help_: str,
        labels: dict[str, str],
        times: list[datetime],
        rate: Callable[[datetime], float],
        median: Callable[[datetime], float],
        sigma: float = 0.6,
        buckets: tuple[float, ...] = (0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
    ) -> None:
        """A latency histogram with a log-normal distribution around ``median(t)`` seconds."""
        counts = [0.0] * (len(buckets) + 1)
        total_sum = 0.0
        prev: datetime | None = None
        for t in times:
            if prev is not None:
                n = rate(t) * (t - prev).total_seconds()
                m = median(t)
                for i, le in enumerate(buckets):
                    z = (math.log(le) - math.log(m)) / sigma
                    counts[i] += n * 0.5 * (1 + math.erf(z / math.sqrt(2)))
                counts[-1] += n
                total_sum += n * m * math.exp(sigma * sigma / 2)
            prev = t
            for i, le in enumerate(buckets):
                self.put(
                    name,
                    "histogram",
                    help_,
                    f"{name}_bucket",
                    {**labels, "le": _fmt(le)},
                    t,
                    round(counts[i]),
                )
            self.put(
                name,
                "histogram",
                help_,
                f"{name}_bucket",
                {**labels, "le": "+Inf"},
                t,
                round(counts[-1]),
            )
            self.put(name, "histogram", help_, f"{name}_count", labels, t, round(counts[-1]))
            self.put(name, "histogram", help_, f"{name}_sum", labels, t, round(total_sum, 3))

    def container(
        self,
        ref: PodRef,
        times: list[datetime],
        *,
        cpu: Callable[[datetime], float | None],
        mem: Callable[[datetime], float | None],
        cpu_limit: float | None = None,
        throttle: Callable[[datetime], float] | None = None,
    ) -> None:
        """cAdvisor series for one container: CPU seconds, working set, CFS periods."""
        lab = {"namespace": ref.ns, "pod": ref.pod, "container": ref.container}
        self.counter(
            "container_cpu_usage_seconds",
            "Cumulative cpu time consumed in seconds.",
            lab,
            times,
            cpu,
        )
        self.gauge(
            "container_memory_working_set_bytes", "Current working set in bytes.", lab, times, mem
        )
        if cpu_limit is not None:

            def periods(t: datetime) -> float | None:
                return None if cpu(t) is None else 10.0

            self.counter(
                "container_cpu_cfs_periods",
                "Number of elapsed enforcement period intervals.",
                lab,
                times,
                periods,
            )

            def throttled(t: datetime) -> float | None:
                if cpu(t) is None:
                    return None
                return 10.0 * (throttle(t) if throttle else 0.01)

            self.counter(
                "container_cpu_cfs_throttled_periods",
                "Number of throttled period intervals.",
                lab,
                times,
                throttled,
            )

    def write(self, path: Path) -> None:
        """Write metrics.om ending in # EOF."""
        out: list[str] = []
        for fam in sorted(self.families):
            kind, help_ = self.families[fam]
            out.append(f"# TYPE {fam} {kind}")
            out.append(f"# HELP {fam} {help_}")
            for (sample, labels), points in self.series[fam].items():
                lab = ",".join(f'{k}="{v}"' for k, v in labels)
                head = f"{sample}{{{lab}}}" if lab else sample
                out.extend(f"{head} {_fmt(v)} {ts}" for ts, v in sorted(points))
        out.append("# EOF")
        path.write_text("\n".join(out) + "\n")


def step(t: datetime, at: datetime, before: float, after: float, ramp_s: float = 0.0) -> float:
    """A value that changes from ``before`` to ``after`` at ``at`` (optionally ramped)."""
    dt = (t - at).total_seconds()
    if dt <= 0:
        return before
    if ramp_s <= 0 or dt >= ramp_s:
        return after
    return before + (after - before) * dt / ramp_s


def diurnal(t: datetime, base: float, amp: float = 0.25) -> float:
    """A smooth daily traffic curve peaking in the early evening UTC."""
    hour = t.hour + t.minute / 60
    return base * (1 + amp * math.sin((hour - 12) / 24 * 2 * math.pi))


def write_scenario(
    root: Path,
    sid: str,
    scenario: Obj,
    cluster: Cluster,
    logs: Logs,
    metrics: Metrics,
    pod_logs: PodLogs | None = None,
) -> None:
    """Write one scenario folder."""
    d = root / sid
    d.mkdir(parents=True, exist_ok=True)
    (d / "scenario.yaml").write_text(yaml.safe_dump(scenario, sort_keys=False, width=100))
    cluster.write(d / "cluster.yaml")
    logs.write(d / "logs.ndjson")
    metrics.write(d / "metrics.om")
    if pod_logs is not None:
        pod_logs.write(d)


def restarted(
    pod: Obj, *, count: int, finished: datetime, reason: str = "Error", exit_code: int = 1
) -> None:
    """Give a pod's first container an old restart (lastState terminated)."""
    st = pod["status"]["containerStatuses"][0]
    st["restartCount"] = count
    started = st["state"]["running"]["startedAt"]
    st["lastState"] = {
        "terminated": {
            "exitCode": exit_code,
            "reason": reason,
            "startedAt": started,
            "finishedAt": iso(finished),
        }
    }
    st["state"] = {"running": {"startedAt": iso(finished + timedelta(seconds=2))}}
