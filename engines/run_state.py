"""The state of one ReAct run and the types around it: limits, result, the toolset and the
guide the loop is given, and how events leave it.

Kept apart from engines/react.py (the loop itself) so that the search engines (tot, got)
and the harnesses can name these types without the loop, and the loop stays readable.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Protocol

from engines._history import History
from engines._loop import LoopDetector
from engines.budgets import DEFAULT_CONTEXT_TOKENS
from engines.constraints import Constraint, ConstraintInbox, ConstraintSet
from engines.diagnosis import SUBMIT_TOOL, Diagnosis, submit_schema
from engines.errors import TriageError
from engines.events import (
    Event,
    EventSink,
    InvestigationStarted,
    LessonsRetrieved,
    StopReason,
)
from engines.incident import Incident
from engines.model import (
    Message,
    Model,
    ModelRequest,
    ToolCall,
    ToolSpec,
    Usage,
)
from engines.tokens import count_tokens

log = logging.getLogger(__name__)

SUBMIT_SPEC = ToolSpec(
    SUBMIT_TOOL,
    "Submit the final diagnosis and end the investigation. Evidence quotes must be copied "
    "verbatim from tool observations.",
    submit_schema(),
)
AfterStep = Callable[[int], Awaitable[None]]


class StepGuide(Protocol):
    """How a search engine (tot, got) steers the one ReAct loop without a loop of its own.

    `before_ask` runs after the step's constraints were taken and returns notes (user
    messages) for this step's turn, such as the hypotheses to discriminate; `after_step`
    runs once the step's observations are in and returns why to conclude now (a confirmed
    hypothesis), or None to go on; `amend` sees a submitted diagnosis before its event.
    """

    async def before_ask(self, run: RunState, request: ModelRequest) -> Sequence[str]: ...

    async def after_step(self, run: RunState, request: ModelRequest) -> str | None: ...

    def amend(self, diagnosis: Diagnosis) -> Diagnosis: ...

    def rewound(self, events: Sequence[Event]) -> None:
        """A human rolled the run back: the guide's state is what `events` (the log after
        the rewind) say it was."""
        ...


@lru_cache(maxsize=64)
def _prompt_tokens(text: str) -> int:
    """The system prompt changes only when a constraint arrives: count it once."""
    return count_tokens(text)


def _reads_tools_as_text(model: Model) -> bool:
    """Whether the model is sent its tools as prose (OpenAIModel in text mode says so)."""
    return bool(getattr(model, "text_mode", False))


class ToolRunner(Protocol):
    """What the engine needs of a toolset (tools.toolset.Toolset is the real one)."""

    @property
    def names(self) -> tuple[str, ...]: ...

    def specs(self) -> tuple[ToolSpec, ...]: ...

    def core_specs(self) -> tuple[ToolSpec, ...]: ...

    def describe(self, call: ToolCall) -> str: ...

    async def call(self, call: ToolCall) -> Any: ...


@dataclass(frozen=True, slots=True)
class EngineConfig:
    """Limits of one investigation. Defaults suit an LLM; the analyzer needs far fewer.

    `context_tokens` is the model's window (engines.budgets): the history is compacted so
    that system prompt, tool schemas, messages and the reply's room fit in it.
    """

    max_steps: int = 15
    timeout_seconds: float = 300.0
    token_budget: int = 400_000
    context_tokens: int = DEFAULT_CONTEXT_TOKENS
    max_empty_replies: int = 3
    min_steps: int = 0  # a guide may not conclude before this step (the router's presets)
    final_turn_seconds: float = 30.0
    pause_seconds: float = 1800.0  # how long a human's "hold on" holds before it goes on


@dataclass(frozen=True, slots=True)
class InvestigationResult:
    """How a run ended, with the figures the harness and the bot report."""

    investigation_id: str
    diagnosis: Diagnosis | None
    reason: StopReason
    detail: str
    steps: int
    tool_calls: int
    usage: Usage
    seconds: float
    observation_tokens: int = 0
    raw_observation_tokens: int = 0
    transcript: tuple[Message, ...] = ()
    error: TriageError | None = None
    observations: tuple[tuple[str, str], ...] = ()
    reflections: tuple[str, ...] = ()
    attempts: int = 1


async def emit(sink: EventSink, event: Event) -> None:
    """Deliver an event; a failing sink (Slack down) must not end the investigation."""
    try:
        await sink(event)
    except Exception:
        log.exception("event sink failed on %s", event.kind)


async def announce(
    sink: EventSink,
    incident: Incident,
    model: Model,
    engine: str,
    max_steps: int,
    lessons: Sequence[str],
) -> None:
    """The events that open a run: it started, and which lessons it was given."""
    await emit(
        sink,
        InvestigationStarted(
            incident.id, incident.text, model.name, engine, max_steps, incident.now
        ),
    )
    if lessons:
        await emit(sink, LessonsRetrieved(incident.id, 0, tuple(lessons)))


@dataclass(slots=True)
class _Run:
    """Mutable state of one run, kept out of the engine so the engine is reusable."""

    incident: Incident
    model: Model
    toolset: ToolRunner
    inbox: ConstraintInbox
    sink: EventSink
    constraints: ConstraintSet
    history: History
    lessons: tuple[str, ...]
    step: int = 0
    first_step: int = 0
    tool_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    observation_tokens: int = 0
    raw_observation_tokens: int = 0
    empty_replies: int = 0
    observations: list[tuple[int, str, str]] = field(default_factory=list)  # step, tool, text
    diagnosis: Diagnosis | None = None
    loop: LoopDetector = field(default_factory=LoopDetector)
    deadline: asyncio.Timeout | None = None
    asked_tools: set[str] = field(default_factory=set)  # added to a short catalog on request
    guide: StepGuide | None = None
    log: list[Event] = field(default_factory=list)  # this run's events: what a rewind replays
    opening: tuple[Message, ...] = ()  # the incident, seed and notes: before any step
    given: tuple[Constraint, ...] = ()  # constraints in force before the run's log

    async def emit(self, event: Event) -> None:
        self.log.append(event)
        await emit(self.sink, event)


RunState = _Run  # what a StepGuide is shown of a run
