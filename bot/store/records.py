"""What the store hands back: small frozen records, never ORM objects or rows.

`InvestigationRecord` and `Feedback` are the bot's own types from `bot.feedback` (the
narrow protocol the listeners write through); the store keeps more about an investigation
than that protocol needs (engine, step, stop reason), which `StoredInvestigation` carries
for the command line and for resuming.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, get_args

from bot.feedback import Feedback, InvestigationRecord, Outcome
from bot.monitor import RunFigures
from engines.constraints import Constraint, ConstraintKind
from engines.diagnosis import Diagnosis
from engines.events import Event

Status = Literal["running", "waiting", "done", "stopped", "failed"]
STATUSES: tuple[str, ...] = get_args(Status)

__all__ = [
    "STATUSES",
    "Feedback",
    "InvestigationDetails",
    "InvestigationRecord",
    "Lesson",
    "Status",
    "StoredConstraint",
    "StoredInvestigation",
]


@dataclass(frozen=True, slots=True)
class StoredInvestigation:
    """An investigation's row: who asked what, where it is, how it ended."""

    id: str
    incident: str
    channel: str | None
    thread_ts: str | None
    requested_by: str
    model: str
    engine: str
    status: Status
    step: int
    events: int
    created_at: datetime
    updated_at: datetime
    ended_at: datetime | None
    diagnosis: Diagnosis | None
    outcome: str | None
    outcome_detail: str
    status_ts: str | None = None  # the status message, edited in place; kept for a resume
    origin: str = "slack"  # who started it: "slack" (the bot) or "cli" (`triage investigate`)
    figures: RunFigures = field(default_factory=RunFigures)  # what it cost (migration 0007)

    @property
    def finished(self) -> bool:
        return self.status not in ("running", "waiting")

    def record(self) -> InvestigationRecord:
        """The bot's view of it; "waiting" (for an approval) is still "running" there."""
        outcome: Outcome = "running" if self.status == "waiting" else self.status
        return InvestigationRecord(
            id=self.id,
            channel=self.channel or "",
            thread_ts=self.thread_ts or "",
            text=self.incident,
            requested_by=self.requested_by,
            model=self.model,
            started_at=self.created_at,
            outcome=outcome,
            diagnosis=self.diagnosis,
            ended_at=self.ended_at,
        )


@dataclass(frozen=True, slots=True)
class StoredConstraint:
    """What a human asked of an investigation, and when they asked it."""

    investigation_id: str
    kind: ConstraintKind
    text: str
    value: str
    author: str
    at: datetime

    @property
    def constraint(self) -> Constraint:
        return Constraint(self.kind, self.text, self.value, self.author)


LessonState = Literal["pending", "confirmed"]


@dataclass(frozen=True, slots=True)
class Lesson:
    """Something learnt on one incident that may help on the next, with what it is about."""

    id: int
    text: str
    services: tuple[str, ...]
    namespaces: tuple[str, ...]
    symptoms: tuple[str, ...]
    source_investigation: str | None
    created_at: datetime
    # "pending": Reflexion's own reflection, waiting for a human to confirm its incident's
    # diagnosis before other incidents retrieve it; "confirmed": retrieved by similar ones.
    state: LessonState = "confirmed"

    @property
    def tags(self) -> tuple[str, ...]:
        return (*self.services, *self.namespaces, *self.symptoms)


@dataclass(frozen=True, slots=True)
class InvestigationDetails:
    """Everything known about one investigation, for `triage show` and postmortems."""

    investigation: StoredInvestigation
    events: Sequence[Event]
    constraints: Sequence[StoredConstraint]
    feedback: Sequence[Feedback]
