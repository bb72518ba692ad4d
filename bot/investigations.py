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
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from bot import render
from bot.feedback import InvestigationRecord, Outcome, Store
from bot.outbox import Outbox, Thread
from bot.reporter import ThreadReporter, final_state
from engines.constraints import Constraint, ConstraintInbox
from engines.errors import TriageError
from engines.events import Event
from engines.incident import new_investigation_id
from engines.react import InvestigationResult
from tools.registry import Tool
from tools.sources.base import MetricSource

log = logging.getLogger(__name__)

APPROVAL_TIMEOUT_SECONDS = 15 * 60.0


@dataclass(frozen=True, slots=True)
class RunRequest:
    """What the runner needs to investigate on the bot's behalf."""

    investigation_id: str
    text: str
    sink: Callable[[Event], Awaitable[None]]
    inbox: ConstraintInbox
    approver: Callable[[Tool, dict[str, Any], str], Awaitable[bool]]


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
        starts with the bot's own status message. The caller checks `active` first.
        """
        investigation_id = new_investigation_id()
        thread = Thread(channel, thread_ts)
        reporter = ThreadReporter(
            self.outbox, thread, investigation_id=investigation_id, incident=text,
            model=self.model_name, requested_by=user, metrics=self.metrics,
        )
        investigation = Investigation(
            investigation_id, text, user, thread, ConstraintInbox(), reporter
        )

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
        reporter.open()
        investigation.task = self.background.spawn(
            self._run(investigation), name=f"investigation-{investigation_id}"
        )
        log.info("investigation %s started in %s by %s", investigation_id, channel, user)
        return investigation

    def steer(self, investigation: Investigation, text: str, user: str) -> Constraint:
        """A human's reply becomes a constraint, confirmed in the thread at once."""
        constraint = investigation.inbox.add(text, user)
        investigation.reporter.noted(constraint.summary, user, stop=constraint.kind == "stop")
        if constraint.kind == "stop":
            self._deny_pending(investigation, user)
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
        """Ask every run to stop and summarise, give them `grace` seconds, then cancel."""
        for investigation in list(self._active.values()):
            if not investigation.inbox.stop_requested:
                investigation.inbox.put(Constraint("stop", "the bot is shutting down"))
                self._deny_pending(investigation, "")
        tasks = [i.task for i in self._active.values() if i.task is not None]
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=grace)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        try:
            await asyncio.wait_for(self.outbox.drain(), timeout=grace)
        except TimeoutError:
            log.warning("%d Slack messages were not sent before shutdown", self.outbox.pending)

    # --- the run --------------------------------------------------------------------------

    async def _run(self, investigation: Investigation) -> None:
        thread, reporter = investigation.thread, investigation.reporter
        await self.store.create(
            InvestigationRecord(
                investigation.id, thread.channel, thread.thread_ts or "", investigation.text,
                investigation.requested_by, self.model_name,
            )
        )

        async def sink(event: Event) -> None:
            reporter.handle(event)
            await self.store.append_event(investigation.id, event)

        async def approver(tool: Tool, arguments: dict[str, Any], description: str) -> bool:
            return await self._approve(investigation, tool, description)

        outcome: Outcome = "failed"
        result: InvestigationResult | None = None
        try:
            result = await self.runner(
                RunRequest(investigation.id, investigation.text, sink, investigation.inbox,
                           approver)
            )
            outcome = final_state(result.reason, result.diagnosis)
            if not reporter.ended:  # the engine always ends with InvestigationStopped
                reporter.fail(result.detail or "the investigation ended without a word")
        except asyncio.CancelledError:
            outcome = "stopped"
            reporter.fail("the investigation was interrupted (the bot is shutting down or "
                          "cannot post here)")
            raise
        except TriageError as exc:
            reporter.fail(str(exc))
        except Exception as exc:  # one broken run must not take the bot down
            log.exception("investigation %s crashed", investigation.id)
            reporter.fail(f"internal error: {type(exc).__name__}")
        finally:
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
        if thread.thread_ts is None and not thread.dead:
            await self.outbox.drain()
        if thread.thread_ts is not None:
            await self.store.set_thread(investigation.id, thread.thread_ts)
        diagnosis = result.diagnosis if result is not None else None
        await self.store.finish(investigation.id, outcome, diagnosis)

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
