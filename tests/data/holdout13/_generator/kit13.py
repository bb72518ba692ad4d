"""Small helpers shared by the thirteenth held-out set's stories: log chatter spread over
pods, NetworkPolicy and LimitRange objects, plain gauge and counter series, ramps."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from tests.scenario_tools.common import Story, container_metrics
from tests.scenario_tools.kube import Obj
from tests.scenario_tools.telemetry import integrate

Entry = tuple[str, str, dict[str, Any]]


def chatter(s: Story, pods: Sequence[Obj], container: str, entries: Sequence[Entry],
            count: int, *, start: datetime | None = None, end: datetime | None = None,
            service: str = "") -> None:
    """`count` log documents drawn from `entries`, spread over `pods` in [start, end]."""
    start = start or s.ago(hours=s.hours)
    end = end or s.now
    span = (end - start).total_seconds()
    for i in range(count):
        pod = pods[i % len(pods)]
        born = datetime.fromisoformat(pod["metadata"]["creationTimestamp"]
                                      .replace("Z", "+00:00")) + timedelta(seconds=15)
        when = start + timedelta(milliseconds=int(s.rng.uniform(0, span) * 1000))
        gone = pod["metadata"].get("_deleted")
        if when < born or (gone is not None and when.timestamp() > gone):
            continue
        level, message, fields = s.rng.choice(entries)
        s.logs.add(when, level, message, namespace=pod["metadata"]["namespace"],
                   pod=pod["metadata"]["name"], container=container,
                   service=service or container, node=pod["spec"].get("nodeName", ""),
                   **fields)


def line(s: Story, pod: Obj, container: str, when: datetime, level: str, message: str,
         service: str = "", **fields: Any) -> None:
    s.logs.add(when, level, message, namespace=pod["metadata"]["namespace"],
               pod=pod["metadata"]["name"], container=container, service=service or container,
               node=pod["spec"].get("nodeName", ""), **fields)


def network_policy(s: Story, namespace: str, name: str, created: datetime, spec: Obj,
                   labels: dict[str, str] | None = None,
                   annotations: dict[str, str] | None = None) -> Obj:
    meta = s.cluster.meta("NetworkPolicy", name, namespace, created, labels or {
        "app.kubernetes.io/managed-by": "Helm"}, generation=1)
    if annotations:
        meta["annotations"] = dict(annotations)
    return s.cluster.add({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                          "metadata": meta, "spec": spec})


def gauge(s: Story, name: str, labels: dict[str, str], value: Callable[[int], float],
          help_: str, *, jitter: float = 0.0, times: Sequence[int] | None = None) -> None:
    pts = []
    for t in times if times is not None else s.times:
        v = value(t)
        if jitter:
            v *= 1 + s.rng.uniform(-jitter, jitter)
        pts.append((t, round(v, 4)))
    s.metrics.gauge(name, labels, pts, help_)


def counter(s: Story, name: str, labels: dict[str, str], rate: Callable[[int], float],
            help_: str, *, start: float = 0.0, times: Sequence[int] | None = None,
            whole: bool = True) -> None:
    s.metrics.counter(name, labels, integrate(list(times if times is not None else s.times),
                                              rate, start=start, rng=s.rng, whole=whole), help_)


def ramp(t: int, begin: datetime, end: datetime) -> float:
    """0 before `begin`, 1 after `end`, linear in between."""
    a, b = begin.timestamp(), end.timestamp()
    if t <= a:
        return 0.0
    if t >= b:
        return 1.0
    return (t - a) / (b - a)


def plain_metrics(s: Story, pods: Sequence[Obj], container: str, memory_mib: float,
                  cpu: float) -> None:
    """Memory, CPU and restart series of steady containers."""
    for pod in pods:
        base = memory_mib * s.rng.uniform(0.9, 1.1)
        restarts = 0
        statuses = pod.get("status", {}).get("containerStatuses", [])
        if statuses:
            restarts = statuses[0]["restartCount"]
        container_metrics(s, pod, container, memory=lambda t, b=base: b * 1024 * 1024,
                          cpu=lambda t: cpu * s.rng.uniform(0.9, 1.1), restart_base=restarts)
