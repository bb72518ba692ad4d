"""Small helpers shared by the twenty-sixth held-out set."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from tests.scenario_tools.common import Story
from tests.scenario_tools.kube import Obj


def line(when: datetime, level: str, logger: str, message: str) -> str:
    """One line of a container's plain-text output (logback / log4j style)."""
    stamp = when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"
    return f"{stamp} {level.upper():<5} [{logger}] {message}"


def ship(s: Story, pod: Obj, container: str, when: datetime, level: str, message: str,
         service: str = "", **fields: object) -> None:
    """One ECS document of a pod's container."""
    s.logs.add(when, level, message, namespace=pod["metadata"]["namespace"],
               pod=pod["metadata"]["name"], container=container, service=service or container,
               node=pod["spec"].get("nodeName", ""), **fields)


def between(s: Story, start: datetime, end: datetime, n: int) -> list[datetime]:
    span = (end - start).total_seconds()
    return sorted(start + timedelta(milliseconds=int(s.rng.uniform(0, span) * 1000))
                  for _ in range(n))


def names(pods: Sequence[Obj]) -> list[str]:
    return [p["metadata"]["name"] for p in pods]
