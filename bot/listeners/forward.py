"""Events for an investigation another replica runs: left in the store for its owner.

Slack picks the replica an event goes to. When a reply, a click or an approval concerns an
investigation that does not run here but is unfinished in the store, the listener checks
access here (the owner trusts it) and leaves the event in the store's inbox; the owner
claims it and applies it (bot/investigations/inbox.py). Nothing is lost on the way: the
row is written before Slack's event is done with.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any

from bot.feedback import InvestigationRecord
from bot.inbox_items import InboxKind, InboxStore
from bot.investigations.inbox import runs_elsewhere
from bot.services import Services

log = logging.getLogger(__name__)

# Per thread: the lock its forwarded replies take in the order they arrived, and how many
# hold or wait for it (the entry goes when none does).
_arrival: dict[tuple[str, str], tuple[asyncio.Lock, list[int]]] = {}


@contextlib.asynccontextmanager
async def in_arrival_order(channel: str, thread_ts: str) -> AsyncIterator[None]:
    """Hold the thread's turn: entered before the first await of a listener, it keeps the
    order Slack delivered a thread's replies in while their store lookups and writes
    await (a lone replica applies a reply within the tick it arrives; a forwarded one
    awaits the store, and the owner applies them in the order they were written)."""
    key = (channel, thread_ts)
    lock, users = _arrival.setdefault(key, (asyncio.Lock(), [0]))
    users[0] += 1
    try:
        async with lock:  # FIFO; taken at once, without a suspension, when free
            yield
    finally:
        users[0] -= 1
        if not users[0]:
            _arrival.pop(key, None)


async def forward(services: Services, investigation: str | InvestigationRecord | None,
                  kind: InboxKind, payload: Mapping[str, Any]) -> bool:
    """Leave the event for the replica that runs `investigation` (an id or its record).
    False when none does: it ended, is unknown, or the store is this process's alone."""
    store = services.store
    if investigation is None or not isinstance(store, InboxStore):
        return False
    record = (await services.store.get(investigation) if isinstance(investigation, str)
              else investigation)
    if record is None or not await runs_elsewhere(services.store, record):
        return False
    item = await store.send_to_owner(record.id, kind, payload)
    if item is None:  # it ended meanwhile: the caller treats the event as after the end
        return False
    log.info("%s for %s left for the replica running it (inbox %s)", kind, record.id, item,
             extra={"investigation_id": record.id})
    return True


async def running_elsewhere(services: Services, channel: str,
                            thread_ts: str | None) -> InvestigationRecord | None:
    """The thread's investigation when another replica runs it (None: none does)."""
    if not thread_ts or not isinstance(services.store, InboxStore):
        return None
    record = await services.store.find_by_thread(channel, thread_ts)
    if record is None or not await runs_elsewhere(services.store, record):
        return None
    return record
