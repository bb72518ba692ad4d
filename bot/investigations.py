"""The investigations the bot is running: one per thread, many at once, each in a task.

Listeners only ever call the synchronous methods here (`start`, `active`, `steer`, `stop`,
`decide`), so an event is applied in the same tick it arrives, in the order Slack sent it,
and the ack never waits. The slow parts (the engine, Slack posts, the store) run in the
investigation's own task and in the outbox. A failing investigation is reported in its
thread and ends alone: nothing here lets one run's exception reach the bot.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import re
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from bot import render
from bot.feedback import InvestigationRecord, LessonStore, Outcome, Store
from bot.logging_setup import investigation_id as current_investigation
from bot.outbox import Outbox, Post, Thread
from bot.render import Message
from bot.reporter import ThreadReporter, final_state
from bot.telemetry import Telemetry
from engines.constraints import Constraint, ConstraintInbox
from engines.diagnosis import Diagnosis
from engines.errors import TriageError
from engines.events import Event, EventSink, InvestigationStarted, LessonsRetrieved
from engines.incident import new_investigation_id
from engines.react import InvestigationResult
from tools.registry import Tool
from tools.sources.base import MetricSource

log = logging.getLogger(__name__)

APPROVAL_TIMEOUT_SECONDS = 15 * 60.0
SHUTTING_DOWN = ("Triage is restarting and cannot take this investigation right now; "
                 "please mention me again in a minute.")
LESSONS_PER_INVESTIGATION = 3

_WORD = re.compile(r"[a-z][a-z0-9-]{2,}")
_TAG = re.compile(r"\[[^\]]*\]")
_COMMON_WORDS = (
    "the and for with from that this there their they them are was were been being has have "
    "had not but our its it's into onto out over under again still keeps keep get gets got "
    "some any all every when what which who why how can cannot could should would will just "
    "also very more most less please now today since after before about then than"
)
_NOT_SYMPTOMS = frozenset(_COMMON_WORDS.split())


def symptom_words(text: str, limit: int = 8) -> list[str]:
    """The words of an incident that describe it, as tags for a lesson."""
    words = _WORD.findall(_TAG.sub(" ", text.lower()))
    return list(dict.fromkeys(w for w in words if w not in _NOT_SYMPTOMS))[:limit]


def _clip(text: str, limit: int = 200) -> str:
    """An incident's text for a log line: one line, bounded (the formatter masks secrets)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class RunRequest:
    """What the runner needs to investigate on the bot's behalf."""

    investigation_id: str
    text: str
    sink: Callable[[Event], Awaitable[None]]
    inbox: ConstraintInbox
    approver: Callable[[Tool, dict[str, Any], str], Awaitable[bool]]
    lessons: Sequence[str] = ()
    resume: Sequence[Event] = ()
    notes: Sequence[str] = ()
    now: datetime | None = None  # the incident's clock when resuming


Runner = Callable[[RunRequest], Awaitable[InvestigationResult]]


class Background:
    """Fire-and-forget tasks that are still referenced (so never garbage-collected) and whose
    failures are logged rather than lost."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coroutine: Coroutine[Any, Any, Any], name: str = "") -> asyncio.Task[Any]:
        task = asyncio.create_task(coroutine, name=name or None)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task %s failed", task.get_name(), exc_info=task.exception())

    async def join(self) -> None:
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)


@dataclass(eq=False)
class _Approval:
    id: str
    description: str
    future: asyncio.Future[tuple[bool, str]]
    ts: str | None = None


@dataclass(eq=False)
class Investigation:
    id: str
    text: str
    requested_by: str
    thread: Thread
    inbox: ConstraintInbox
    reporter: ThreadReporter
    task: asyncio.Task[None] | None = None
    approvals: dict[str, _Approval] = field(default_factory=dict)
    resume: Sequence[Event] = ()
    lessons: Sequence[str] = ()
    notes: Sequence[str] = ()
    now: datetime | None = None
    correcting: bool = False  # a new attempt after a human said the answer was wrong
    recorded: asyncio.Event = field(default_factory=asyncio.Event)  # the store tried `create`
    known: bool = False  # the store already has it (a resumed run, a new attempt)


class Investigations:
    """The registry: thread → running investigation, with their lifecycles."""

    def __init__(
        self,
        runner: Runner,
        outbox: Outbox,
        store: Store,
        background: Background,
        *,
        model_name: str,
        approval_timeout: float = APPROVAL_TIMEOUT_SECONDS,
        metrics: MetricSource | None = None,
        telemetry: Telemetry | None = None,
    ) -> None:
        self.runner = runner
        self.outbox = outbox
        self.store = store
        self.background = background
        self.model_name = model_name
        self.approval_timeout = approval_timeout
        self.metrics = metrics
        self._active: dict[str, Investigation] = {}
        self._approval_ids = itertools.count(1)
        self.started = 0
        self.telemetry = telemetry
        self.closing = False  # shutting down: no new work

    @property
    def running(self) -> int:
        return len(self._active)

    def active(self, channel: str, thread_ts: str | None) -> Investigation | None:
        """The running investigation of a thread, if any."""
        if not thread_ts:
            return None
        for investigation in self._active.values():
            thread = investigation.thread
            if thread.channel == channel and thread.thread_ts == thread_ts:
                return investigation
        return None

    def get(self, investigation_id: str) -> Investigation | None:
        return self._active.get(investigation_id)

    def start(
        self,
        *,
        channel: str,
        thread_ts: str | None,
        text: str,
        user: str,
        on_dead: Callable[[str], None] | None = None,
    ) -> Investigation:
        """Open the thread and run the investigation in the background.

        `thread_ts` is the triggering message; None for a slash command, whose thread then
        starts with the bot's own status message. The caller checks `active` first: a
        thread holds one investigation at a time.
        """
        if self.active(channel, thread_ts) is not None:
            raise ValueError(f"thread {channel}/{thread_ts} already has an investigation")
        investigation = self._new(new_investigation_id(), channel, thread_ts, text, user)
        return self._launch(investigation, on_dead)

    def retry(
        self, record: InvestigationRecord, correction: str, user: str, note: str
    ) -> Investigation:
        """A human said the answer of an ended investigation is wrong: investigate it again
        in the same thread, under the same id, with the correction as a constraint and
        `note` (how the rejected diagnosis is told to the engine) opening every attempt."""
        if self.active(record.channel, record.thread_ts) is not None:
            raise ValueError(f"thread {record.channel}/{record.thread_ts} is busy")
        investigation = self._new(
            record.id, record.channel, record.thread_ts, record.text, record.requested_by
        )
        investigation.known = investigation.correcting = True
        investigation.notes = (note,)
        investigation.reporter.post(render.retry_message(correction, user))
        if correction:
            constraint = investigation.inbox.add(correction, user)
            if self.telemetry is not None:
                self.telemetry.constraint(constraint.kind)
        return self._launch(investigation, None)

    def resume(
        self, *, investigation_id: str, channel: str, thread_ts: str, text: str, user: str,
        events: Sequence[Event], status_ts: str | None = None,
    ) -> Investigation:
        """Carry on with an investigation a crash or a restart interrupted, from its log,
        under its status message when the store kept it."""
        investigation = self._new(investigation_id, channel, thread_ts, text, user)
        investigation.thread.status_ts = status_ts
        investigation.known = True
        investigation.resume = tuple(events)
        investigation.lessons = next(
            (e.lessons for e in events if isinstance(e, LessonsRetrieved)), ()
        )
        started = next((e for e in events if isinstance(e, InvestigationStarted)), None)
        reporter = investigation.reporter
        if started is not None:
            investigation.now = started.incident_now
            reporter.model, reporter.max_steps = started.model, started.max_steps
        reporter.step = max((getattr(e, "step", 0) for e in events), default=0)
        launched = self._launch(investigation, None)
        reporter.post(render.resumed_message())
        return launched

    def _new(
        self, investigation_id: str, channel: str, thread_ts: str | None, text: str, user: str
    ) -> Investigation:
        thread = Thread(channel, thread_ts)
        reporter = ThreadReporter(
            self.outbox, thread, investigation_id=investigation_id, incident=text,
            model=self.model_name, requested_by=user, metrics=self.metrics,
        )
        investigation = Investigation(
            investigation_id, text, user, thread, ConstraintInbox(), reporter
        )

        def status_posted(ts: str) -> None:
            self.background.spawn(self._keep_status_message(investigation, ts),
                                  name="keep-status")

        thread.on_status = status_posted
        return investigation

    async def _keep_status_message(self, investigation: Investigation, ts: str) -> None:
        """Remember the thread's status message as soon as it is out, so that a restart
        resumes the run under it instead of posting a second one."""
        await investigation.recorded.wait()
        if investigation.known:
            await self.store.set_status_message(investigation.id, ts)

    def _launch(
        self, investigation: Investigation, on_dead: Callable[[str], None] | None
    ) -> Investigation:
        investigation_id, channel, thread = (
            investigation.id, investigation.thread.channel, investigation.thread
        )
        reporter, user = investigation.reporter, investigation.requested_by
        if self.closing:
            # An event acknowledged just before shutdown: say so instead of starting work
            # that would be cut off at once.
            log.info("refused investigation %s in %s: shutting down", investigation_id, channel,
                     extra={"investigation_id": investigation_id})
            self.outbox.put(Post(thread, Message(SHUTTING_DOWN)))
            return investigation

        def dead(error: str) -> None:
            log.warning("investigation %s cannot post in %s (%s): stopping it",
                        investigation_id, channel, error)
            if investigation.task is not None:
                investigation.task.cancel()
            if on_dead is not None:
                on_dead(error)

        thread.on_dead = dead
        self._active[investigation_id] = investigation
        self.started += 1
        if self.telemetry is not None:
            self.telemetry.investigations_started.inc()
        reporter.open()
        investigation.task = self.background.spawn(
            self._run(investigation), name=f"investigation-{investigation_id}"
        )
        # However the run ends (even cancelled before it began), nobody waits on the store.
        investigation.task.add_done_callback(lambda _: investigation.recorded.set())
        log.info("investigation %s started in %s for %s: %s", investigation_id, channel, user,
                 _clip(investigation.text), extra={"investigation_id": investigation_id})
        return investigation

    def steer(self, investigation: Investigation, text: str, user: str) -> Constraint:
        """A human's reply becomes a constraint, confirmed in the thread at once. While a
        new attempt after a Wrong runs, what they say is also the correction: a lesson."""
        constraint = investigation.inbox.add(text, user)
        if self.telemetry is not None:
            self.telemetry.constraint(constraint.kind)
        investigation.reporter.noted(constraint.summary, user, stop=constraint.kind == "stop")
        if constraint.kind == "stop":
            self._deny_pending(investigation, user)
        elif investigation.correcting:
            self.background.spawn(
                self.learn_correction(investigation.id, investigation.text, text, None),
                name="lesson",
            )
        return constraint

    def stop(self, investigation: Investigation, user: str) -> None:
        """The Stop button: the same as replying "stop"."""
        if not investigation.inbox.stop_requested:
            self.steer(investigation, "stop", user)

    def decide(self, approval_id: str, approved: bool, user: str) -> bool:
        """An Approve/Deny click. False when the approval is no longer pending."""
        for investigation in self._active.values():
            approval = investigation.approvals.get(approval_id)
            if approval is not None and not approval.future.done():
                approval.future.set_result((approved, user))
                return True
        return False

    async def shutdown(self, grace: float = 10.0) -> None:
        """Take no new work; ask every run to stop and summarise; within `grace` seconds in
        all, let them end and their posts go out, then cancel what is left."""
        deadline = time.monotonic() + grace
        self.closing = True
        for investigation in list(self._active.values()):
            if not investigation.inbox.stop_requested:
                investigation.reporter.stop_reason = "Triage is shutting down"
                investigation.inbox.put(Constraint("stop", "the bot is shutting down"))
                self._deny_pending(investigation, "")
        tasks = [i.task for i in self._active.values() if i.task is not None]
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=max(0.0, deadline - time.monotonic()))
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        try:
            await asyncio.wait_for(self.outbox.drain(),
                                   timeout=max(0.5, deadline - time.monotonic()))
        except TimeoutError:
            log.warning("%d Slack messages were not sent before shutdown", self.outbox.pending)

    # --- the run --------------------------------------------------------------------------

    async def _run(self, investigation: Investigation) -> None:
        current_investigation.set(investigation.id)  # this task's log lines carry the id
        thread, reporter = investigation.thread, investigation.reporter
        meter = self.telemetry.meter() if self.telemetry is not None else None
        if investigation.known:
            investigation.recorded.set()
        thread_known = bool(thread.thread_ts)

        async def sink(event: Event) -> None:
            nonlocal thread_known
            reporter.handle(event)
            await self.store.append_event(investigation.id, event)
            if not thread_known and thread.thread_ts:
                # A slash command's thread is known once its status is out: keep it now,
                # so that a restart can resume the run in its thread.
                thread_known = True
                await self.store.set_thread(investigation.id, thread.thread_ts)
            # A fast engine never waits on anything; yield here so that Slack's requests
            # (acks are due within 3 s) are served between its events.
            await asyncio.sleep(0)

        events: EventSink = meter.wrap(sink) if meter is not None else sink

        async def approver(tool: Tool, arguments: dict[str, Any], description: str) -> bool:
            return await self._approve(investigation, tool, description)

        outcome: Outcome = "failed"
        result: InvestigationResult | None = None
        try:
            if not investigation.known:  # a store that fails here fails the run, in its thread
                try:
                    await self.store.create(
                        InvestigationRecord(
                            investigation.id, thread.channel, thread.thread_ts or "",
                            investigation.text, investigation.requested_by, self.model_name,
                        )
                    )
                    investigation.known = True
                finally:
                    investigation.recorded.set()
            lessons = (
                investigation.lessons if investigation.resume
                else await self._lessons_for(investigation.text)
            )
            result = await self.runner(
                RunRequest(investigation.id, investigation.text, events, investigation.inbox,
                           approver, lessons=lessons, resume=investigation.resume,
                           notes=investigation.notes, now=investigation.now)
            )
            outcome = final_state(result.reason, result.diagnosis)
            if not reporter.ended:  # the engine always ends with InvestigationStopped
                reporter.fail(result.detail or "the investigation ended without a word")
        except asyncio.CancelledError:
            outcome = "stopped"
            if meter is not None:
                meter.finish("stopped")
            reporter.fail("the investigation was interrupted (the bot is shutting down or "
                          "cannot post here)")
            raise
        except TriageError as exc:
            reporter.fail(str(exc))
        except Exception as exc:  # one broken run must not take the bot down
            log.exception("investigation %s crashed", investigation.id)
            reporter.fail(f"internal error: {type(exc).__name__}")
        finally:
            if meter is not None:
                meter.finish(result.reason if result is not None else "failed")
            log.info("investigation %s ended: %s", investigation.id, outcome)
            self._deny_pending(investigation, "")
            self._active.pop(investigation.id, None)
            self.background.spawn(
                self._record_end(investigation, outcome, result), name="record-end"
            )

    async def _record_end(
        self, investigation: Investigation, outcome: Outcome, result: InvestigationResult | None
    ) -> None:
        """Remember the end, with the thread once it exists (a slash command's thread is only
        known when its first message is out), so replies after the end become feedback."""
        thread = investigation.thread
        if not investigation.known:
            return  # the store never took the run: its thread says why
        if thread.thread_ts is None and not thread.dead:
            await self.outbox.drain()
        if thread.thread_ts is not None:
            await self.store.set_thread(investigation.id, thread.thread_ts)
        diagnosis = result.diagnosis if result is not None else None
        await self.store.finish(investigation.id, outcome, diagnosis)
        if result is not None:
            for reflection in result.reflections:
                await self._add_lesson(
                    reflection, investigation.id, investigation.text, diagnosis
                )

    # --- lessons --------------------------------------------------------------------------

    async def _lessons_for(self, text: str) -> tuple[str, ...]:
        """The lessons of past incidents most relevant to this one (none without a store
        that keeps lessons, or when the search fails: lessons help, they never block)."""
        if not isinstance(self.store, LessonStore):
            return ()
        try:
            found = await self.store.search_lessons(
                _TAG.sub(" ", text), limit=LESSONS_PER_INVESTIGATION
            )
        except Exception:
            log.exception("could not search lessons")
            return ()
        return tuple(lesson.text for lesson in found)

    async def learn_correction(
        self, investigation_id: str, incident: str, correction: str,
        diagnosis: Diagnosis | None,
    ) -> None:
        """A human's correction is a lesson for similar incidents."""
        if not correction.strip():
            return
        if diagnosis is None:
            record = await self.store.get(investigation_id)
            diagnosis = record.diagnosis if record is not None else None
        said = f"A human corrected the diagnosis of {incident.strip()!r}: {correction.strip()}"
        if diagnosis is not None:
            said += f" (the rejected answer was {diagnosis.category} of {diagnosis.culprit})"
        await self._add_lesson(said, investigation_id, incident, diagnosis)

    async def _add_lesson(
        self, text: str, investigation_id: str, incident: str, diagnosis: Diagnosis | None
    ) -> None:
        if not isinstance(self.store, LessonStore):
            return
        culprit = diagnosis.culprit if diagnosis is not None else None
        try:
            await self.store.add_lesson(
                text,
                services=[culprit.name] if culprit else [],
                namespaces=[culprit.namespace] if culprit and culprit.namespace else [],
                symptoms=symptom_words(incident),
                source_investigation=investigation_id,
            )
        except Exception:
            log.exception("could not keep a lesson of %s", investigation_id)

    async def _approve(self, investigation: Investigation, tool: Tool, description: str) -> bool:
        """Ask the thread to approve a tool that changes something; deny on timeout or stop."""
        if investigation.inbox.stop_requested:
            return False
        approval_id = f"{investigation.id}:{next(self._approval_ids)}"
        future: asyncio.Future[tuple[bool, str]] = asyncio.get_running_loop().create_future()
        approval = _Approval(approval_id, description, future)
        investigation.approvals[approval_id] = approval
        reporter = investigation.reporter
        reporter.waiting(True)

        def posted(ts: str) -> None:
            approval.ts = ts

        reporter.post(render.approval_request(approval_id, description, tool.name), posted)
        try:
            approved, user = await asyncio.wait_for(future, self.approval_timeout)
        except TimeoutError:
            approved, user = False, ""
        finally:
            investigation.approvals.pop(approval_id, None)
        reporter.edit(lambda: approval.ts, render.approval_decided(description, approved, user))
        reporter.waiting(False)
        log.info("approval %s %s by %s", approval_id, "granted" if approved else "denied",
                 user or "timeout")
        return approved

    @staticmethod
    def _deny_pending(investigation: Investigation, user: str) -> None:
        for approval in investigation.approvals.values():
            if not approval.future.done():
                approval.future.set_result((False, user))
