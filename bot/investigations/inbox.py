"""Events for the investigations this replica runs that Slack delivered to another one.

Slack hands a reply, a click or an approval to any replica. The one that gets it but does
not run the investigation leaves it in the store's inbox (bot/listeners/forward.py); this
replica, which runs it, claims its investigations' events and applies them with the same
synchronous registry calls the listeners make (`steer`, `stop`, `decide`, ...), in the order
they were sent (by id) and once (the claim marks them delivered). PostgreSQL's NOTIFY wakes
the claim at once; a poll every `POLL_SECONDS` is the fallback for a missed notification
and the only way on SQLite.

Which replica runs an investigation is asked in one place, `runs_elsewhere`: today the
store saying it is unfinished; with leases, the live lease's owner.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from typing import Any

from bot.feedback import InvestigationRecord, Store
from bot.inbox_items import InboxItem, InboxStore, Listening, Tell
from bot.investigations.board_clicks import board_constraint
from bot.investigations.registry import Investigations
from engines.steering import Reading

log = logging.getLogger(__name__)

POLL_SECONDS = 1.5
POLL_ENV = "TRIAGE_INBOX_POLL_SECONDS"


def poll_from_env(env: Mapping[str, str]) -> float:
    """TRIAGE_INBOX_POLL_SECONDS (default 1.5): how often the inbox is read without a
    notification. ValueError names the variable when it is not a positive number."""
    raw = env.get(POLL_ENV, "").strip()
    if not raw:
        return POLL_SECONDS
    try:
        seconds = float(raw)
    except ValueError:
        raise ValueError(f"{POLL_ENV}={raw!r} is not a number of seconds") from None
    if not 0.05 <= seconds <= 300:
        raise ValueError(f"{POLL_ENV} must be between 0.05 and 300 seconds, not {raw}")
    return seconds


async def runs_elsewhere(store: Store, record: InvestigationRecord) -> bool:
    """Whether another replica runs `record` (the caller knows this one does not): the
    one question the inbox asks about ownership. Without leases, an unfinished record is
    run by some replica (or will be, once one resumes it); point this at the lease table
    to ask who holds it."""
    return record.outcome == "running"


class Delivery:
    """The owner's side of the inbox: claim what waits for the runs here, apply it."""

    def __init__(self, investigations: Investigations, store: Store,
                 poll: float = POLL_SECONDS) -> None:
        self.investigations = investigations
        self.store = store
        self.poll = poll
        self.tell: Tell | None = None  # an ephemeral answer (serve sets it)
        self.delivered = 0
        self._wake = asyncio.Event()

    def wake(self) -> None:
        """Claim now: a notification came, a run started here, or shutdown began."""
        self._wake.set()

    async def run(self) -> None:
        """Until shutdown: wait for a notification or the poll, then deliver."""
        store = self.store
        if not isinstance(store, InboxStore):
            return  # one process (the memory store): nothing ever arrives by the store
        listening: Listening | None = None
        try:
            while not self.investigations.closing:
                if listening is None or not listening.alive:
                    listening = await self._listen(store, listening)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), self.poll)
                self._wake.clear()
                if self.investigations.closing:
                    break
                try:
                    await self.deliver()
                except Exception:  # the store may be away for a while: the poll retries
                    log.exception("could not claim the inbox")
        finally:
            if listening is not None:
                await listening.close()

    async def _listen(self, store: InboxStore, old: Listening | None) -> Listening | None:
        if old is not None:
            log.warning("the inbox's LISTEN connection dropped: listening again")
            await old.close()
        try:
            return await store.listen_inbox(self.wake)
        except Exception:
            log.exception("cannot LISTEN for the inbox: polling every %.1f s", self.poll)
            return None

    async def deliver(self) -> int:
        """Claim and apply what waits for the investigations running here; how many."""
        if not isinstance(self.store, InboxStore):
            return 0
        items = await self.store.claim_inbox(self.investigations.running_ids())
        for item in items:
            self.apply(item)
        self.delivered += len(items)
        return len(items)

    def apply(self, item: InboxItem) -> None:
        """One event, as its listener would have applied it here. Synchronous: the events
        of one claim go in in order, each before the next."""
        registry, payload = self.investigations, item.payload
        investigation = registry.get(item.investigation_id)
        user = str(payload.get("user", ""))
        if investigation is None:  # it ended between the claim and now
            log.info("inbox event %s for %s came after its end", item.id, item.investigation_id)
            self._tell(payload, "That investigation has already ended.")
            return
        if item.kind in ("reply", "board", "rewind") and str(payload.get("reply", "")) in \
                investigation.replies:
            # The same Slack message or click reached this replica too (a retry, two
            # Socket Mode connections) and is in force already.
            log.info("inbox event %s repeats reply %s: already applied", item.id,
                     payload.get("reply"), extra={"investigation_id": item.investigation_id})
            return
        log.info("inbox event %s (%s) for %s from another replica", item.id, item.kind,
                 item.investigation_id, extra={"investigation_id": item.investigation_id})
        match item.kind:
            case "reply":
                registry.steer(investigation, str(payload["text"]), user,
                               str(payload.get("reply", "")))
            case "edit":
                registry.edited(investigation, str(payload["text"]), user,
                                str(payload["reply"]))
            case "withdraw":
                if not registry.withdraw(investigation, str(payload["reply"]), user,
                                         str(payload.get("why", "undone"))):
                    self._tell(payload, "That instruction was already withdrawn.")
            case "stop":
                registry.stop(investigation, user)
            case "pause":
                registry.steering.pause(investigation, user, str(payload.get("reply", "")))
            case "resume":
                registry.steering.resume(investigation, user)
            case "rewind":
                registry.steering.rewind_to(investigation, user, int(payload["step"]),
                                            str(payload.get("reply", "")))
            case "decide":
                if not registry.decide(str(payload["approval_id"]), bool(payload["approved"]),
                                       user):
                    self._tell(payload, "That request was already answered.")
            case "board":
                reply = str(payload["reply"])
                constraint = board_constraint(investigation, str(payload["key"]),
                                              bool(payload["ruling_out"]), user, reply)
                if isinstance(constraint, str):
                    self._tell(payload, constraint)
                else:
                    registry.steering.apply(investigation, Reading((constraint,)),
                                            constraint.text, user, reply)

    def _tell(self, payload: Mapping[str, Any], text: str) -> None:
        channel, user = payload.get("channel"), payload.get("user")
        if self.tell is not None and isinstance(channel, str) and isinstance(user, str):
            thread = payload.get("thread_ts")
            self.tell(channel, user, text, thread if isinstance(thread, str) else None)
