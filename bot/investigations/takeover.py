"""Taking over the investigations of a replica that died.

Every replica looks, every third of the lease TTL, for unfinished Slack investigations whose
lease expired (their owner stopped renewing: killed, frozen, cut off), and claims as many
as it has room for (`Store.claim_expired`: `FOR UPDATE SKIP LOCKED`, so two replicas never
claim the same one, and the claim bumps the lease's generation, which fences the old owner
off). Each is rebuilt from its event log exactly as a restart resumes it (resume.py): the
complete steps are replayed rather than run again, it continues under the thread's stored
status message, and the thread is told "Resumed by another replica".

PostgreSQL only: a SQLite store has one process, which resumes its own runs at start.
"""

from __future__ import annotations

import logging

from bot.background import Background
from bot.feedback import Store
from bot.investigations.leases import Leases
from bot.investigations.registry import Investigations
from bot.investigations.resume import last_run, resume
from bot.store import Store as SqlStore

log = logging.getLogger(__name__)


async def take_over_once(store: SqlStore, investigations: Investigations, leases: Leases) -> int:
    """Claim and resume what expired, within the admission limit: how many were taken."""
    if investigations.closing:
        return 0
    room = investigations.admission.limits.total - investigations.running
    claimed = await store.claim_expired(leases.owner, leases.ttl, limit=room,
                                        exclude=investigations.running_ids())
    for stored, generation in claimed:
        if not stored.channel or not stored.thread_ts:
            log.warning("investigation %s has no thread to resume in: marked failed", stored.id)
            await store.finish(stored.id, "failed", None, generation=generation)
            await store.release_lease(stored.id, generation)
            continue
        events = last_run(await store.events(stored.id))
        resume(
            investigations, investigation_id=stored.id, channel=stored.channel,
            thread_ts=stored.thread_ts, text=stored.incident, user=stored.requested_by,
            events=events, status_ts=stored.status_ts, generation=generation,
            by_another_replica=True,
        )
        log.info("took over investigation %s (lease generation %d)", stored.id, generation,
                 extra={"investigation_id": stored.id})
    return len(claimed)


async def take_over(store: SqlStore, investigations: Investigations, leases: Leases) -> None:
    """Look for expired leases every third of the TTL, from the start, until shutdown."""
    while not investigations.closing:
        try:
            await take_over_once(store, investigations, leases)
        except Exception as exc:  # the store away for a moment: look again at the next beat
            log.warning("could not look for investigations to take over: %s", exc)
        await leases.pause(leases.every)  # over at once when shutdown begins


def start_ownership(store: Store, investigations: Investigations, background: Background) -> None:
    """The lease renewal, and on PostgreSQL the takeover, as background loops."""
    leases = investigations.leases
    if leases is None or not isinstance(store, SqlStore):
        return
    background.spawn(leases.run(), name="lease-renewal")
    if store.dialect == "postgresql":
        background.spawn(take_over(store, investigations, leases), name="takeover")
