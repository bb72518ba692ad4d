"""Small helpers shared by the twentieth held-out set."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from tests.scenario_tools.common import Story
from tests.scenario_tools.kube import Obj


def lines(story: Story, pod: Obj, container: str, service: str, start: datetime,
          end: datetime, n: int, entries: Sequence[tuple[str, str, dict[str, Any]]]) -> None:
    """`n` log documents for a pod (also a deleted one) drawn from `entries` in [start, end]."""
    span = (end - start).total_seconds()
    node = pod["spec"].get("nodeName", "")
    for _ in range(n):
        level, message, fields = story.rng.choice(entries)
        when = start + timedelta(milliseconds=int(story.rng.uniform(0, span) * 1000))
        story.logs.add(when, level, message, namespace=pod["metadata"]["namespace"],
                       pod=pod["metadata"]["name"], container=container, service=service,
                       node=node, **fields)


def ramp(start: datetime, minutes: float) -> Callable[[int], float]:
    """0 before `start`, rising linearly to 1 over `minutes`."""
    edge = start.timestamp()

    def value(t: int) -> float:
        if t < edge:
            return 0.0
        return min(1.0, (t - edge) / (minutes * 60))
    return value
