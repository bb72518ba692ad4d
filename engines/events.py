"""Everything an engine tells the world, as one union of small frozen dataclasses.

The bot renders these in Slack, the command line prints them, the store persists them: the
engine emits them in the order things happen and never waits on how they are shown.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from engines.diagnosis import Diagnosis
from engines.hypotheses import Hypothesis


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class InvestigationStarted:
    investigation_id: str
    incident_text: str
    model: str
    engine: str
    max_steps: int
    incident_now: datetime | None = None
    at: datetime = field(default_factory=_now)
    kind: Literal["started"] = "started"


@dataclass(frozen=True, slots=True)
class ThoughtRecorded:
    investigation_id: str
    step: int
    text: str
    at: datetime = field(default_factory=_now)
    kind: Literal["thought"] = "thought"


@dataclass(frozen=True, slots=True)
class ToolCalled:
    investigation_id: str
    step: int
    call_id: str
    tool: str
    arguments: dict[str, Any]
    description: str
    at: datetime = field(default_factory=_now)
    kind: Literal["action"] = "action"


@dataclass(frozen=True, slots=True)
class ObservationReceived:
    investigation_id: str
    step: int
    call_id: str
    tool: str
    status: Literal["success", "error"]
    text: str
    data: Any = None
    cached: bool = False
    seconds: float = 0.0
    tokens: int = 0
    raw_tokens: int = 0
    at: datetime = field(default_factory=_now)
    kind: Literal["observation"] = "observation"


@dataclass(frozen=True, slots=True)
class ConstraintApplied:
    """A typed constraint in force from `step` on. `text` is the reply it was read from and
    `reply` that reply's id, so an edit or a delete can withdraw it; events stored before
    constraints were typed have no `constraint` and are read again from `text`."""

    investigation_id: str
    step: int
    text: str
    summary: str
    author: str = ""
    at: datetime = field(default_factory=_now)
    constraint: str = ""
    value: str = ""
    reply: str = ""
    kind: Literal["constraint"] = "constraint"


@dataclass(frozen=True, slots=True)
class ConstraintWithdrawn:
    """The constraints read from reply `reply` no longer hold (Undo, an edit, a delete)."""

    investigation_id: str
    step: int
    reply: str
    summary: str
    author: str = ""
    at: datetime = field(default_factory=_now)
    kind: Literal["withdrawn"] = "withdrawn"


@dataclass(frozen=True, slots=True)
class DiagnosisSubmitted:
    investigation_id: str
    step: int
    diagnosis: Diagnosis
    at: datetime = field(default_factory=_now)
    kind: Literal["answer"] = "answer"


@dataclass(frozen=True, slots=True)
class ErrorOccurred:
    investigation_id: str
    step: int
    message: str
    fatal: bool = False
    at: datetime = field(default_factory=_now)
    kind: Literal["error"] = "error"


@dataclass(frozen=True, slots=True)
class LessonsRetrieved:
    """Lessons of past incidents given to the model for this investigation."""

    investigation_id: str
    step: int
    lessons: tuple[str, ...]
    at: datetime = field(default_factory=_now)
    kind: Literal["lessons"] = "lessons"


@dataclass(frozen=True, slots=True)
class ReflectionRecorded:
    """Reflexion rejected an attempt: why, what was missed, and that it tries again."""

    investigation_id: str
    step: int
    attempt: int
    problems: tuple[str, ...]
    text: str
    retrying: bool
    at: datetime = field(default_factory=_now)
    kind: Literal["reflection"] = "reflection"


@dataclass(frozen=True, slots=True)
class HypothesesUpdated:
    """The search engines' board: every hypothesis with its state and score, and the ones
    this step expands (`search` bfs or dfs; got's sub-problems say `decompose`). The Slack
    hypothesis board is this event, edited in place."""

    investigation_id: str
    step: int
    hypotheses: tuple[Hypothesis, ...]
    expanding: tuple[str, ...] = ()
    search: str = ""
    at: datetime = field(default_factory=_now)
    kind: Literal["hypotheses"] = "hypotheses"


@dataclass(frozen=True, slots=True)
class EngineChosen:
    """The router picked an engine and the loop's limits for this incident, and why."""

    investigation_id: str
    engine: str
    reason: str
    limits: dict[str, float]
    step: int = 0
    at: datetime = field(default_factory=_now)
    kind: Literal["engine"] = "engine"


@dataclass(frozen=True, slots=True)
class RewoundTo:
    """A human rolled the investigation back to the end of `step`: the events of later
    steps logged before this one are superseded (kept in the store, not replayed), and the
    run goes on from `step` with what was asked after it. `dropped` are the steps undone."""

    investigation_id: str
    step: int
    dropped: tuple[int, ...] = ()
    author: str = ""
    reply: str = ""
    at: datetime = field(default_factory=_now)
    kind: Literal["rewound"] = "rewound"

    @property
    def said(self) -> str:
        """What the thread is told: "Rewound to step 2: dropped steps 3-5"."""
        if not self.dropped:
            return f"Rewound to step {self.step}: nothing after it to drop"
        first, last = self.dropped[0], self.dropped[-1]
        steps = f"steps {first}-{last}" if last > first else f"step {first}"
        return f"Rewound to step {self.step}: dropped {steps}"


StopReason = Literal[
    "diagnosed", "stopped", "max_steps", "timeout", "token_budget", "loop", "failed",
    "concluded",
]
"""`concluded`: a search engine ended the loop (one hypothesis confirmed, its rivals
refuted) and the final turn then failed to submit; with a submission it reads `diagnosed`."""


@dataclass(frozen=True, slots=True)
class InvestigationStopped:
    investigation_id: str
    step: int
    reason: StopReason
    detail: str = ""
    at: datetime = field(default_factory=_now)
    kind: Literal["stopped"] = "stopped"


Event = (
    InvestigationStarted
    | ThoughtRecorded
    | ToolCalled
    | ObservationReceived
    | ConstraintApplied
    | ConstraintWithdrawn
    | DiagnosisSubmitted
    | ErrorOccurred
    | LessonsRetrieved
    | ReflectionRecorded
    | HypothesesUpdated
    | EngineChosen
    | RewoundTo
    | InvestigationStopped
)

EventSink = Callable[[Event], Awaitable[None]]


async def discard(event: Event) -> None:
    """A sink for runs nobody watches (benchmarks, evaluation)."""
