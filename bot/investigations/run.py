"""Running one investigation: the task that calls the runner (the engine, as `triage serve`
wires it) and turns however it ends into the thread's last word and the store's record.

A failing investigation is reported in its thread and ends alone: nothing here lets one
run's exception reach the bot.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.background import Background
from bot.feedback import Outcome, final_state
from bot.investigations.approvals import Approvals, deny_pending
from bot.investigations.investigation import Investigation
from bot.investigations.lessons import Lessons
from bot.investigations.records import Records
from bot.logging_setup import investigation_id as current_investigation
from bot.monitor import RunFigures
from bot.telemetry import Telemetry
from engines.constraints import ConstraintInbox
from engines.errors import TriageError
from engines.events import Event, EventSink, ObservationReceived
from engines.react import InvestigationResult
from tools.registry import Tool

log = logging.getLogger(__name__)


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


@dataclass(frozen=True, slots=True)
class Runs:
    """The body of every investigation's task; `ended` takes a finished one off the registry."""

    runner: Runner
    records: Records
    lessons: Lessons
    approvals: Approvals
    background: Background
    telemetry: Telemetry | None
    ended: Callable[[Investigation], None]

    async def run(self, investigation: Investigation) -> None:
        current_investigation.set(investigation.id)  # this task's log lines carry the id
        reporter = investigation.reporter
        meter = self.telemetry.meter() if self.telemetry is not None else None
        if investigation.known:
            investigation.recorded.set()
        append = self.records.event_log(investigation)
        calls = CallCount()

        async def sink(event: Event) -> None:
            calls.observe(event)
            # The log first: a write refused as stale (another replica took the run over)
            # must not reach the thread either.
            await append(event)
            reporter.handle(event)
            # A fast engine never waits on anything; yield here so that Slack's requests
            # (acks are due within 3 s) are served between its events.
            await asyncio.sleep(0)

        events: EventSink = meter.wrap(sink) if meter is not None else sink

        async def approver(tool: Tool, arguments: dict[str, Any], description: str) -> bool:
            return await self.approvals.ask(investigation, tool, description)

        outcome: Outcome = "failed"
        result: InvestigationResult | None = None
        try:
            if not investigation.known:  # a store that fails here fails the run, in its thread
                await self.records.created(investigation)
            await self.records.own(investigation)
            lessons = investigation.lessons
            if not investigation.resume:
                found = await self.lessons.relevant(investigation.text)
                reporter.lesson_ids = {lesson.text: lesson.id for lesson in found}
                lessons = tuple(lesson.text for lesson in found)
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
                meter.finish(result.reason if result is not None else "failed",
                             result.usage if result is not None else None)
            log.info("investigation %s ended: %s", investigation.id, outcome)
            deny_pending(investigation, "")
            self.ended(investigation)
            self.background.spawn(
                self.records.ended(investigation, outcome, result, calls.figures(result)),
                name="record-end",
            )


@dataclass(slots=True)
class CallCount:
    """The run's tool calls as its events show them, and how many a cache answered."""

    calls: int = 0
    cached: int = 0

    def observe(self, event: Event) -> None:
        if isinstance(event, ObservationReceived):
            self.calls += 1
            self.cached += event.cached

    def figures(self, result: InvestigationResult | None) -> RunFigures:
        usage = result.usage if result is not None else None
        return RunFigures(self.calls, self.cached, usage.input_tokens if usage else 0,
                          usage.output_tokens if usage else 0)
