"""What the store keeps of a run, as it happens: nothing is held only in memory that a
restart would lose.

The record when the run starts, every event in its log, its thread and status message as soon
as Slack gives them (a slash command's thread only exists once the bot's first message is
out), and at the end its outcome, diagnosis and Reflexion's reflections (lessons pending a
human's confirmation).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.feedback import Feedback, InvestigationRecord, Outcome, Store
from bot.inbox_items import InboxStore
from bot.investigations.investigation import Investigation
from bot.investigations.lessons import Lessons
from bot.outbox import Outbox
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
            await self.store.append_event(investigation.id, event)
            if not thread_known and thread.thread_ts:
                thread_known = True
                await self.store.set_thread(investigation.id, thread.thread_ts)

        return append

    async def status_message(self, investigation: Investigation, ts: str) -> None:
        """Remember the thread's status message as soon as it is out, so that a restart
        resumes the run under it instead of posting a second one."""
        await investigation.recorded.wait()
        if investigation.known:
            await self.store.set_status_message(investigation.id, ts)

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
            for reflection in result.reflections:  # pending until a human confirms
                await self.lessons.reflected(
                    investigation.id, investigation.text, reflection, diagnosis
                )
        await self.late_events(investigation.id)
