"""What the bot remembers: investigations, their event logs, and what humans said of them.

The bot writes through the narrow `Store` protocol only, so a later SQL store (SQLite by
default, PostgreSQL for several replicas) can replace `MemoryStore` without touching the
listeners. Every method is async for that reason, even though the memory store never waits.
Feedback is kept with the investigation it judges: the Correct/Wrong verdicts and the
replies written in the thread after the end ("wrong, it was the database").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Literal, Protocol, runtime_checkable

from bot.monitor import RunFigures
from engines.diagnosis import Diagnosis
from engines.events import Event

Outcome = Literal["running", "done", "stopped", "failed"]
Verdict = Literal["correct", "wrong"]
# Slack redelivers within minutes; an event claimed longer ago than this may be claimed again.
CLAIM_TTL = timedelta(hours=1)


def final_state(reason: str, diagnosis: Diagnosis | None) -> Literal["done", "stopped", "failed"]:
    """How a stop reason reads in the status and the store: the engine stopping itself is
    not a failure. (The bot and `triage investigate` record the same outcomes.)"""
    if reason == "failed":
        return "failed"
    if reason == "stopped":
        return "stopped"
    return "done" if diagnosis is not None else "stopped"


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class InvestigationRecord:
    """One investigation as the store keeps it. `thread_ts` is empty until the thread exists
    (a slash command's thread starts with the bot's own status message)."""

    id: str
    channel: str
    thread_ts: str
    text: str
    requested_by: str
    model: str
    started_at: datetime = field(default_factory=_now)
    outcome: Outcome = "running"
    diagnosis: Diagnosis | None = None
    ended_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Feedback:
    """A verdict from a button, or a reply written after the end."""

    investigation_id: str
    user: str
    kind: Literal["verdict", "reply"]
    text: str
    at: datetime = field(default_factory=_now)


@dataclass(frozen=True, slots=True)
class QueuedMention:
    """A mention that arrived while the limits of concurrent investigations were reached,
    waiting in the store for a free slot. `id` is the store's, in arrival order."""

    channel: str
    thread_ts: str
    text: str
    requested_by: str
    queued_at: datetime = field(default_factory=_now)
    id: int = 0


class Store(Protocol):
    """The bot's persistence. Implementations must be safe to call from one event loop."""

    async def create(self, record: InvestigationRecord) -> None: ...

    # A run's writes carry its lease generation when it holds one (bot/store/leases.py);
    # a store refuses a stale one (LeaseLostError). The memory store has no leases.

    async def set_thread(
        self, investigation_id: str, thread_ts: str, *, generation: int | None = None
    ) -> None: ...

    async def set_status_message(
        self, investigation_id: str, ts: str, *, generation: int | None = None
    ) -> None: ...

    async def append_event(
        self, investigation_id: str, event: Event, *, generation: int | None = None
    ) -> None: ...

    async def finish(
        self, investigation_id: str, outcome: Outcome, diagnosis: Diagnosis | None, *,
        generation: int | None = None,
    ) -> None: ...

    async def add_feedback(self, feedback: Feedback) -> None: ...

    async def record_figures(self, investigation_id: str, figures: RunFigures) -> None:
        """What the run cost (tool calls, cached ones, tokens), for `triage stats`."""
        ...

    async def get(self, investigation_id: str) -> InvestigationRecord | None: ...

    async def find_by_thread(self, channel: str, thread_ts: str) -> InvestigationRecord | None:
        ...

    async def events(self, investigation_id: str) -> Sequence[Event]: ...

    async def feedback(self, investigation_id: str) -> Sequence[Feedback]: ...

    # What replicas sharing the store agree on (bot/investigations/admission.py).

    async def claim_event(self, key: str) -> bool:
        """True for the first claim of `key` in the last hour, False for every later one."""
        ...

    async def enqueue(self, mention: QueuedMention) -> int:
        """Queue a mention (a thread is queued once); how many are queued ahead of it."""
        ...

    async def queued(self) -> Sequence[QueuedMention]:
        """The queue, oldest first."""
        ...

    async def surface_refusals(self) -> dict[str, str]:
        """The workspaces that refused Slack's agent surfaces, with the error (streaming)."""
        ...

    async def remember_surface_refusal(self, team: str, error: str) -> None:
        """Keep a workspace's refusal; the first one stands."""
        ...

    async def take_queued(self, queue_id: int) -> bool:
        """Remove one from the queue: True for the one caller that removed it."""
        ...


class LessonLike(Protocol):
    @property
    def id(self) -> int: ...

    @property
    def text(self) -> str: ...


@runtime_checkable
class LessonStore(Protocol):
    """A store that also keeps lessons across incidents (the SQL store does; the memory
    store does not, and the bot then simply runs without lessons). Reflexion's reflections
    wait "pending" with their incident until a human confirms its diagnosis."""

    async def add_lesson(
        self,
        text: str,
        *,
        services: Iterable[str] = (),
        namespaces: Iterable[str] = (),
        symptoms: Iterable[str] = (),
        source_investigation: str | None = None,
        state: Literal["pending", "confirmed"] = "confirmed",
    ) -> object:
        """Keep a lesson: "pending" ones (Reflexion's reflections) are not searched."""
        ...

    async def search_lessons(self, query_text: str, limit: int = 5) -> Sequence[LessonLike]:
        """The confirmed lessons most relevant to a text, best first."""
        ...

    async def confirm_lessons(self, investigation_id: str) -> int:
        """A human confirmed the investigation's diagnosis: its pending lessons count now."""
        ...


class MemoryStore:
    """The store of a single process, lost on restart: fine for trying the bot out."""

    def __init__(self) -> None:
        self._records: dict[str, InvestigationRecord] = {}
        self._threads: dict[tuple[str, str], str] = {}
        self._status_messages: dict[str, str] = {}
        self._events: dict[str, list[Event]] = {}
        self._feedback: dict[str, list[Feedback]] = {}
        self._claims: dict[str, datetime] = {}
        self._refusals: dict[str, str] = {}
        self._queue: dict[int, QueuedMention] = {}
        self._queued = 0
        self.figures: dict[str, RunFigures] = {}

    async def create(self, record: InvestigationRecord) -> None:
        self._records[record.id] = record
        self._events.setdefault(record.id, [])
        if record.thread_ts:
            self._threads[(record.channel, record.thread_ts)] = record.id

    async def set_thread(
        self, investigation_id: str, thread_ts: str, *, generation: int | None = None
    ) -> None:
        record = self._records[investigation_id]
        self._records[investigation_id] = replace(record, thread_ts=thread_ts)
        self._threads[(record.channel, thread_ts)] = investigation_id

    async def set_status_message(
        self, investigation_id: str, ts: str, *, generation: int | None = None
    ) -> None:
        self._status_messages[investigation_id] = ts

    async def append_event(
        self, investigation_id: str, event: Event, *, generation: int | None = None
    ) -> None:
        self._events.setdefault(investigation_id, []).append(event)

    async def finish(
        self, investigation_id: str, outcome: Outcome, diagnosis: Diagnosis | None, *,
        generation: int | None = None,
    ) -> None:
        record = self._records[investigation_id]
        self._records[investigation_id] = replace(
            record, outcome=outcome, diagnosis=diagnosis, ended_at=_now()
        )

    async def record_figures(self, investigation_id: str, figures: RunFigures) -> None:
        self.figures[investigation_id] = figures

    async def add_feedback(self, feedback: Feedback) -> None:
        self._feedback.setdefault(feedback.investigation_id, []).append(feedback)

    async def get(self, investigation_id: str) -> InvestigationRecord | None:
        return self._records.get(investigation_id)

    async def find_by_thread(self, channel: str, thread_ts: str) -> InvestigationRecord | None:
        found = self._threads.get((channel, thread_ts))
        return self._records.get(found) if found else None

    async def events(self, investigation_id: str) -> Sequence[Event]:
        return tuple(self._events.get(investigation_id, ()))

    async def feedback(self, investigation_id: str) -> Sequence[Feedback]:
        return tuple(self._feedback.get(investigation_id, ()))

    async def claim_event(self, key: str) -> bool:
        now = _now()
        if key in self._claims and now - self._claims[key] < CLAIM_TTL:
            return False
        self._claims = {k: at for k, at in self._claims.items() if now - at < CLAIM_TTL}
        self._claims[key] = now
        return True

    async def surface_refusals(self) -> dict[str, str]:
        return dict(self._refusals)

    async def remember_surface_refusal(self, team: str, error: str) -> None:
        self._refusals.setdefault(team, error)

    async def enqueue(self, mention: QueuedMention) -> int:
        thread = (mention.channel, mention.thread_ts)
        same = [m for m in self._queue.values() if (m.channel, m.thread_ts) == thread]
        if not same:
            self._queued += 1
            same = [replace(mention, id=self._queued)]
            self._queue[self._queued] = same[0]
        return sum(1 for queue_id in self._queue if queue_id < same[0].id)

    async def queued(self) -> Sequence[QueuedMention]:
        return tuple(self._queue[queue_id] for queue_id in sorted(self._queue))

    async def take_queued(self, queue_id: int) -> bool:
        return self._queue.pop(queue_id, None) is not None

    def records(self) -> list[InvestigationRecord]:
        """Every investigation, oldest first (for tests and debugging; not in `Store`)."""
        return sorted(self._records.values(), key=lambda r: r.started_at)
