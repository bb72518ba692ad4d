"""Notice when an investigation goes round in circles.

Two signals: the model asks for a call it already made (same tool, same arguments), or a
step's observations are exactly those of the step before. The first strike earns a warning
to change strategy; the next one stops the run.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

LoopVerdict = Literal["ok", "warn", "stop"]


def call_key(name: str, arguments: dict[str, Any] | None) -> str:
    return f"{name}:{json.dumps(arguments, sort_keys=True, default=str)}"


@dataclass(slots=True)
class LoopDetector:
    strikes_to_stop: int = 2
    seen_calls: set[str] = field(default_factory=set)
    last_observations: tuple[str, ...] | None = None
    strikes: int = 0
    reason: str = ""

    def check(
        self, calls: Sequence[tuple[str, dict[str, Any] | None]], observations: Sequence[str]
    ) -> LoopVerdict:
        """Judge one step by its calls and the observations they returned."""
        keys = [call_key(name, args) for name, args in calls]
        repeated = [k.split(":", 1)[0] for k in keys if k in self.seen_calls]
        self.seen_calls.update(keys)
        same_as_before = bool(observations) and tuple(observations) == self.last_observations
        self.last_observations = tuple(observations)
        if not repeated and not same_as_before:
            return "ok"
        self.strikes += 1
        if repeated:
            self.reason = f"repeated the same call to {', '.join(sorted(set(repeated)))}"
        else:
            self.reason = "the observations stopped changing"
        return "stop" if self.strikes >= self.strikes_to_stop else "warn"
