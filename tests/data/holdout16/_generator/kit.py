"""Small helpers shared by the sixteenth held-out set's stories."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from tests.data.holdout2._generator.kit import Incident
from tests.scenario_tools.common import Story

__all__ = ["Incident", "ramp", "since"]


def ramp(start: datetime, minutes: float) -> Callable[[int], float]:
    """0 before `start`, rising linearly to 1 over `minutes`."""
    edge = start.timestamp()

    def value(t: int) -> float:
        if t < edge:
            return 0.0
        return min(1.0, (t - edge) / (minutes * 60))
    return value


def since(s: Story, when: datetime) -> list[int]:
    """The scrape times at or after `when`."""
    return [t for t in s.times if t >= when.timestamp()]
