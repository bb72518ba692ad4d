"""What the store keeps of a run, as it happens: nothing is held only in memory that a
restart would lose.

The record when the run starts, every event in its log, its thread and status message as soon
as Slack gives them (a slash command's thread only exists once the bot's first message is
out), and at the end its outcome, diagnosis and Reflexion's reflections (lessons pending a
human's confirmation). With a SQL store every
write carries the run's lease generation (leases.py): a write refused as stale means another
replica took the investigation over, and this run is cut off.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.feedback import Feedback, InvestigationRecord, Outcome, Store
from bot.inbox_items import InboxStore
from bot.investigations.investigation import Investigation
from bot.investigations.leases import Leases
from bot.investigations.lessons import Lessons
from bot.monitor import RunFigures
from bot.outbox import Outbox
from bot.store.errors import LeaseLostError
from engines.events import Event
from engines.react import InvestigationResult

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Records:
    """The store's side of every run; `model_name` is the model a new record names."""

    store: Store
    outbox: Outbox
    lessons: Lessons
    model_name: str
    leases: Leases | None = None  # with a SQL store: who owns which run

    async def own(self, investigation: Investigation) -> None:
        """Take the lease of a run that starts here and holds none yet (a new one, a new
        attempt); a resumed or taken-over run already holds its own."""
        if self.leases is not None and investigation.generation is None:
            await self.leases.acquire(investigation)

    def lost(self, investigation: Investigation, error: LeaseLostError) -> None:
        if self.leases is not None:
            self.leases.lose(investigation, str(error))

    async def created(self, investigation: Investigation) -> None:
        """The store's record of a new run. A store that fails here fails the run (in its
        thread); either way nobody waits for the record any longer."""
        thread = investigation.thread
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

    def event_log(self, investigation: Investigation) -> Callable[[Event], Awaitable[None]]:
        """What appends the run's events to its log, and keeps a slash command's thread as
        soon as its status is out, so that a restart can resume the run in its thread."""
        thread = investigation.thread
        thread_known = bool(thread.thread_ts)

        async def append(event: Event) -> None:
            nonlocal thread_known
            generation = investigation.generation
            try:
                await self.store.append_event(investigation.id, event, generation=generation)
                if not thread_known and thread.thread_ts:
                    thread_known = True
                    await self.store.set_thread(investigation.id, thread.thread_ts,
                                                generation=generation)
            except LeaseLostError as exc:
                self.lost(investigation, exc)
                raise

        return append

    async def status_message(self, investigation: Investigation, ts: str) -> None:
        """Remember the thread's status message as soon as it is out, so that a restart
        resumes the run under it instead of posting a second one."""
        await investigation.recorded.wait()
        if investigation.known and not investigation.lost:
            try:
                await self.store.set_status_message(investigation.id, ts,
                                                    generation=investigation.generation)
            except LeaseLostError as exc:
                self.lost(investigation, exc)

    async def late_events(self, investigation_id: str) -> None:
        """Events left for this run by another replica (or by this one, between the run's
        end and its record) that nobody applied: a reply is feedback now, as it would be
        after the end; a click or an approval has nothing left to act on."""
        if not isinstance(self.store, InboxStore):
            return
        for item in await self.store.claim_inbox([investigation_id]):
            user = str(item.payload.get("user", ""))
            if item.kind == "reply":
                await self.store.add_feedback(Feedback(
                    investigation_id, user, "reply", str(item.payload.get("text", ""))))
            log.info("inbox event %s (%s) for %s arrived after its end", item.id, item.kind,
                     investigation_id, extra={"investigation_id": investigation_id})

    async def ended(
        self, investigation: Investigation, outcome: Outcome, result: InvestigationResult | None,
        figures: RunFigures | None = None,
    ) -> None:
        """Remember the end, with the thread once it exists (a slash command's thread is only
        known when its first message is out), so replies after the end become feedback; and
        what the run cost (`figures`, for `triage stats`)."""
        thread = investigation.thread
        if not investigation.known or investigation.lost:
            return  # the store never took the run (its thread says why), or another replica did
        if thread.thread_ts is None and not thread.dead:
            await self.outbox.drain()
        generation = investigation.generation
        diagnosis = result.diagnosis if result is not None else None
        try:
            if thread.thread_ts is not None:
                await self.store.set_thread(investigation.id, thread.thread_ts,
                                            generation=generation)
            if figures is not None:  # before the end: a reader that sees it ended sees them
                await self.store.record_figures(investigation.id, figures)
            await self.store.finish(investigation.id, outcome, diagnosis, generation=generation)
        except LeaseLostError as exc:
            log.warning("the end of %s is not recorded: %s", investigation.id, exc)
            self.lost(investigation, exc)
            return
        except BaseException:
            if self.leases is not None:  # left to expire: whoever takes it over ends it
                self.leases.drop(investigation)
            raise
        if result is not None:
            for reflection in result.reflections:  # pending until a human confirms
                await self.lessons.reflected(
                    investigation.id, investigation.text, reflection, diagnosis
                )
        await self.late_events(investigation.id)
        if self.leases is not None:
            await self.leases.release(investigation)
