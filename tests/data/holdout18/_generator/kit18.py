"""Small helpers shared by the eighteenth held-out set's stories."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from tests.data.holdout._generator.base import alive, gauge
from tests.data.holdout2._generator.kit import Incident
from tests.scenario_tools.common import Story
from tests.scenario_tools.kube import Obj

__all__ = ["Incident", "clip", "mins", "pod_gauge", "timed_logs"]


def mins(t: datetime, m: float) -> datetime:
    return t + timedelta(minutes=m)


def clip(x: float, lo: float, hi: float) -> float:
    return max(lo, min(hi, x))


def pod_gauge(s: Story, name: str, pod: Obj | dict[str, Any], container: str,
              value: Callable[[int], float | None], help_: str,
              extra: dict[str, str] | None = None) -> None:
    """A per-container gauge over the pod's life."""
    labels = {"namespace": pod["metadata"]["namespace"], "pod": pod["metadata"]["name"],
              "container": container, **(extra or {})}
    gauge(s, name, labels, value, help_, times=alive(s, pod))


def timed_logs(s: Story, pod: Obj | dict[str, Any], container: str, service: str,
               entries: Sequence[tuple[datetime, str, str, dict[str, Any]]]) -> None:
    """Log lines at given instants: (when, level, message, extra fields)."""
    for when, level, message, fields in entries:
        s.logs.add(when + timedelta(milliseconds=s.rng.randrange(0, 1000)), level, message,
                   namespace=pod["metadata"]["namespace"],
                   pod=pod["metadata"]["name"], container=container, service=service,
                   node=pod["spec"].get("nodeName", ""), **fields)
