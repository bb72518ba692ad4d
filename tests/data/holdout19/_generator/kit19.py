"""Small helpers of the nineteenth held-out set: a NetworkPolicy object, log lines spread
over a window, and a plain request-counter series."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from tests.scenario_tools.common import Story
from tests.scenario_tools.kube import Obj
from tests.scenario_tools.telemetry import integrate

Entry = tuple[str, str, dict[str, Any]]


def network_policy(s: Story, namespace: str, name: str, spec: Obj, *, created: datetime,
                   labels: dict[str, str] | None = None,
                   annotations: dict[str, str] | None = None) -> Obj:
    meta = s.cluster.meta("NetworkPolicy", name, namespace, created, labels, generation=1)
    if annotations:
        meta["annotations"] = dict(annotations)
    return s.cluster.add({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                          "metadata": meta, "spec": spec})


def lines(s: Story, pods: Sequence[Obj], container: str, service: str,
          entries: Sequence[Entry], count: int, *, start: datetime | None = None,
          end: datetime | None = None) -> None:
    """`count` log lines drawn from `entries`, spread over [start, end] and the pods."""
    start = start or s.ago(hours=s.hours)
    end = end or s.now
    span = (end - start).total_seconds()
    for _ in range(count):
        pod = s.rng.choice(list(pods))
        level, message, fields = s.rng.choice(list(entries))
        when = start + timedelta(milliseconds=int(s.rng.uniform(0, span) * 1000))
        s.logs.add(when, level, message, namespace=pod["metadata"]["namespace"],
                   pod=pod["metadata"]["name"], container=container, service=service,
                   node=pod["spec"].get("nodeName", ""), **fields)


def counter(s: Story, name: str, labels: dict[str, str], rate: Callable[[int], float],
            help_: str, *, start: float = 0.0) -> None:
    s.metrics.counter(name, labels, integrate(s.times, rate, start=start, rng=s.rng), help_)
