"""Steering: what humans say in a running investigation's thread.

A reply becomes a constraint the engine obeys from its next step on, confirmed in the thread
at once; "stop" (or the Stop button) also denies what waits for approval; while a new attempt
after a Wrong runs, what they say is the correction too, kept as a lesson.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.background import Background
from bot.investigations.approvals import deny_pending
from bot.investigations.investigation import Investigation
from bot.investigations.lessons import Lessons
from bot.telemetry import Telemetry
from engines.constraints import Constraint


@dataclass(frozen=True, slots=True)
class Steering:
    """Replies and Stop clicks, applied to a running investigation in the tick they arrive."""

    lessons: Lessons
    background: Background
    telemetry: Telemetry | None

    def constrain(self, investigation: Investigation, text: str, user: str) -> Constraint:
        """`text` read into a constraint in the investigation's inbox, and counted."""
        constraint = investigation.inbox.add(text, user)
        if self.telemetry is not None:
            self.telemetry.constraint(constraint.kind)
        return constraint

    def steer(self, investigation: Investigation, text: str, user: str) -> Constraint:
        """A human's reply becomes a constraint, confirmed in the thread at once. While a
        new attempt after a Wrong runs, what they say is also the correction: a lesson."""
        constraint = self.constrain(investigation, text, user)
        investigation.reporter.noted(constraint.summary, user, stop=constraint.kind == "stop")
        if constraint.kind == "stop":
            deny_pending(investigation, user)
        elif investigation.correcting:
            self.background.spawn(
                self.lessons.learn_correction(investigation.id, investigation.text, text, None),
                name="lesson",
            )
        return constraint

    def stop(self, investigation: Investigation, user: str) -> None:
        """The Stop button: the same as replying "stop"."""
        if not investigation.inbox.stop_requested:
            self.steer(investigation, "stop", user)
