"""The investigations the bot is running: one per thread, many at once, each in a task.

Listeners only ever call the synchronous methods here (`start`, `retry`, `active`, `steer`,
`stop`, `decide`), so an event is applied in the same tick it arrives, in the order Slack
sent it, and the ack never waits. The slow parts (the engine, Slack posts, the store) run in
the investigation's own task (run.py) and in the outbox.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from bot import render
from bot.background import Background
from bot.feedback import InvestigationRecord, Store
from bot.investigations.admission import Admission, AdmissionLimits
from bot.investigations.approvals import APPROVAL_TIMEOUT_SECONDS, Approvals
from bot.investigations.investigation import Investigation
from bot.investigations.leases import DEFAULT_LEASE_SECONDS, Leases
from bot.investigations.lessons import Lessons
from bot.investigations.records import Records
from bot.investigations.run import Runner, Runs
from bot.investigations.shutdown import shut_down
from bot.investigations.steering import ReplyReader, Steering
from bot.outbox import Outbox, Post, Thread
from bot.render import Message
from bot.reporter import ThreadReporter
from bot.store import Store as SqlStore
from bot.telemetry import Telemetry
from engines.constraints import Constraint, ConstraintInbox
from engines.diagnosis import Diagnosis
from engines.incident import new_investigation_id
from tools.sources.base import MetricSource

log = logging.getLogger(__name__)

SHUTTING_DOWN = ("Triage is restarting and cannot take this investigation right now; "
                 "please mention me again in a minute.")


def _clip(text: str, limit: int = 200) -> str:
    """An incident's text for a log line: one line, bounded (the formatter masks secrets)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class Investigations:
    """The registry: thread → running investigation, and how one enters it and leaves."""

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
        reader: ReplyReader | None = None,
        limits: AdmissionLimits | None = None,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
    ) -> None:
        self.outbox = outbox
        self.background = background
        self.model_name = model_name
        self.metrics = metrics
        self.telemetry = telemetry
        self._active: dict[str, Investigation] = {}
        self.started = 0
        self.closing = False  # shutting down: no new work
        self.lessons = Lessons(store)
        # A SQL store may be shared by replicas: every run is owned through a lease.
        self.leases = Leases(store, lease_seconds) if isinstance(store, SqlStore) else None
        self.records = Records(store, outbox, self.lessons, model_name, self.leases)
        self.approvals = Approvals(approval_timeout)
        self.steering = Steering(self.lessons, background, telemetry, reader or ReplyReader())
        self.runs = Runs(runner, self.records, self.lessons, self.approvals, background,
                         telemetry, ended=self._ended)
        self.admission = Admission(self, store, outbox, limits or AdmissionLimits())

    def _ended(self, investigation: Investigation) -> None:
        self._active.pop(investigation.id, None)
        self.admission.wake()

    @property
    def running(self) -> int:
        return len(self._active)

    def running_ids(self) -> list[str]:
        """The ids of what runs here (a takeover leaves them alone; the inbox claims
        their events)."""
        return list(self._active)

    def running_in(self, channel: str) -> int:
        """How many run in `channel` (admission's per-channel limit)."""
        return sum(1 for i in self._active.values() if i.thread.channel == channel)

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
        investigation = self.new(new_investigation_id(), channel, thread_ts, text, user)
        return self.launch(investigation, on_dead)

    def retry(
        self, record: InvestigationRecord, correction: str, user: str, note: str
    ) -> Investigation:
        """A human said the answer of an ended investigation is wrong: investigate it again
        in the same thread, under the same id, with the correction as a constraint and
        `note` (how the rejected diagnosis is told to the engine) opening every attempt."""
        if self.active(record.channel, record.thread_ts) is not None:
            raise ValueError(f"thread {record.channel}/{record.thread_ts} is busy")
        investigation = self.new(
            record.id, record.channel, record.thread_ts, record.text, record.requested_by
        )
        investigation.known = investigation.correcting = True
        investigation.notes = (note,)
        investigation.reporter.post(render.retry_message(correction, user))
        if correction:
            self.steering.constrain(investigation, Constraint("fact", correction, correction, user))
        return self.launch(investigation, None)

    def new(
        self, investigation_id: str, channel: str, thread_ts: str | None, text: str, user: str
    ) -> Investigation:
        """An investigation of the thread, not yet running: `launch` runs it."""
        thread = Thread(channel, thread_ts, recipient=user)
        reporter = ThreadReporter(
            self.outbox, thread, investigation_id=investigation_id, incident=text,
            model=self.model_name, requested_by=user, metrics=self.metrics,
        )
        investigation = Investigation(
            investigation_id, text, user, thread, ConstraintInbox(), reporter
        )

        def status_posted(ts: str) -> None:
            self.background.spawn(self.records.status_message(investigation, ts),
                                  name="keep-status")

        thread.on_status = status_posted
        return investigation

    def launch(
        self, investigation: Investigation, on_dead: Callable[[str], None] | None
    ) -> Investigation:
        """Register the investigation and run it in its own task; refused (and said so in
        the thread) while shutting down."""
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
            self.runs.run(investigation), name=f"investigation-{investigation_id}"
        )
        # However the run ends (even cancelled before it began), nobody waits on the store.
        investigation.task.add_done_callback(lambda _: investigation.recorded.set())
        log.info("investigation %s started in %s for %s: %s", investigation_id, channel, user,
                 _clip(investigation.text), extra={"investigation_id": investigation_id})
        return investigation

    def steer(self, investigation: Investigation, text: str, user: str, reply: str = "") -> None:
        """A human's reply in the thread (steering.py)."""
        self.steering.steer(investigation, text, user, reply)

    def edited(self, investigation: Investigation, text: str, user: str, reply: str) -> None:
        """A reply in the thread was edited: read again (steering.py)."""
        self.steering.edited(investigation, text, user, reply)

    def withdraw(self, investigation: Investigation, reply: str, user: str, why: str) -> bool:
        """Undo, or a deleted reply: its constraints no longer hold (steering.py)."""
        return self.steering.withdraw(investigation, reply, user, why)

    def stop(self, investigation: Investigation, user: str) -> None:
        """The Stop button: the same as replying "stop"."""
        self.steering.stop(investigation, user)

    def decide(self, approval_id: str, approved: bool, user: str) -> bool:
        """An Approve/Deny click. False when the approval is no longer pending."""
        return self.approvals.decide(self._active.values(), approval_id, approved, user)

    async def learn_correction(
        self, investigation_id: str, incident: str, correction: str,
        diagnosis: Diagnosis | None,
    ) -> None:
        """A human's correction of an ended investigation is a lesson (lessons.py)."""
        await self.lessons.learn_correction(investigation_id, incident, correction, diagnosis)

    async def shutdown(self, grace: float = 10.0) -> None:
        """Take no new work; stop the running investigations within `grace` (shutdown.py)."""
        self.closing = True
        self.admission.wake()  # its loop ends; what is queued stays queued in the store
        if self.leases is not None:
            self.leases.stop()  # renewals go on until the last run's end is recorded
        await shut_down(list(self._active.values()), self.outbox, grace)
