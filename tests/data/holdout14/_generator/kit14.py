"""Small helpers shared by the fourteenth held-out set."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from tests.scenario_tools.common import (
    Story,
    kube_system,
    namespaces,
    node_conditions,
    nodes,
    noise_logs,
)
from tests.scenario_tools.kube import Obj
from tests.scenario_tools.telemetry import integrate


def base(s: Story, names: Sequence[str], count: int, *, subnet: int,
         instance: str = "m6i.xlarge", series: bool = True, **kwargs: Any) -> list[Obj]:
    """Namespaces, `count` nodes, CoreDNS and kube-proxy, and the nodes' Ready series."""
    namespaces(s, *names)
    node_list = nodes(s, count, subnet=subnet, instance=instance, **kwargs)
    kube_system(s, node_list)
    if series:
        node_conditions(s, node_list)
    return node_list


def counter(s: Story, name: str, labels: dict[str, str], rate: Callable[[int], float],
            help_: str, *, since: int = 0) -> None:
    """A counter of the window (from `since` on) at `rate` per second."""
    times = [t for t in s.times if t >= since]
    s.metrics.counter(name, labels, integrate(times, rate, start=s.rng.randrange(2_000, 60_000),
                                              rng=s.rng), help_)


def gauge(s: Story, name: str, labels: dict[str, str], value: Callable[[int], float],
          help_: str, *, jitter: float = 0.0) -> None:
    s.metrics.gauge(name, labels, [(t, round(value(t) * (1 + s.rng.uniform(-jitter, jitter)), 4))
                                   for t in s.times], help_)


def chatter(s: Story, pods: Sequence[Obj], container: str, service: str,
            entries: Sequence[tuple[str, str, dict[str, Any]]], count: int, *,
            start: datetime | None = None, end: datetime | None = None) -> None:
    """`count` log lines spread over `pods`."""
    for pod in pods:
        noise_logs(s, pod, container, service, entries, max(1, count // len(pods)),
                   start=start, end=end)


def mins(t: datetime, m: float) -> datetime:
    return t + timedelta(minutes=m)
