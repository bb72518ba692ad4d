"""Resuming after a restart: the investigations a crash or a restart interrupted carry on in
their threads, from their event logs in the store, under their status messages.

The event log is the state: the engine replays its complete steps and constraints instead of
repeating them and goes on from there, on the incident's clock of the first start.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from bot import render
from bot.feedback import Store
from bot.investigations.investigation import Investigation
from bot.investigations.registry import Investigations
from bot.store import Store as SqlStore
from engines._replay import superseded
from engines.events import (
    ConstraintApplied,
    ConstraintWithdrawn,
    Event,
    InvestigationStarted,
    LessonsRetrieved,
)

log = logging.getLogger(__name__)


def last_run(events: Sequence[Event]) -> Sequence[Event]:
    """The events of the newest run in a log (a correction's new attempt appends a run)."""
    starts = [i for i, e in enumerate(events) if isinstance(e, InvestigationStarted)]
    return events[starts[-1]:] if starts else events


def pauses_in_force(events: Sequence[Event]) -> set[str]:
    """The replies whose pause the log still holds: the resumed run waits for a Resume, and
    the status message offers one."""
    held: set[str] = set()
    for event in superseded(events):
        if isinstance(event, ConstraintApplied) and event.constraint == "pause":
            held.add(event.reply)
        elif isinstance(event, ConstraintWithdrawn):
            held.discard(event.reply)
    return held


def resume(
    investigations: Investigations, *, investigation_id: str, channel: str, thread_ts: str,
    text: str, user: str, events: Sequence[Event], status_ts: str | None = None,
    generation: int | None = None, by_another_replica: bool = False,
) -> Investigation:
    """Carry on with an investigation a crash or a restart interrupted, from its log,
    under its status message when the store kept it. `generation`: the lease taken for it
    (at start, or by a takeover from a replica that died)."""
    investigation = investigations.new(investigation_id, channel, thread_ts, text, user)
    if generation is not None and investigations.leases is not None:
        investigations.leases.hold(investigation, generation)
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
    reporter.pauses = pauses_in_force(events)
    launched = investigations.launch(investigation, None)
    if launched.task is None and investigations.leases is not None:
        investigations.leases.drop(investigation)  # refused (shutting down): left to expire
    reporter.post(render.resumed_message(by_another_replica=by_another_replica))
    return launched


async def resume_unfinished(store: Store, investigations: Investigations) -> int:
    """Resume, in their threads, the investigations a crash or a restart interrupted.

    SQLite only: it has one process, so whatever is unfinished at start was this process's
    own. On PostgreSQL other replicas may be running them; the takeover (takeover.py) picks
    up only those whose lease expired, this replica's previous life's included."""
    if not isinstance(store, SqlStore) or store.dialect != "sqlite":
        return 0
    leases = investigations.leases
    resumed = 0
    for stored in await store.unfinished():
        if stored.origin != "slack":
            continue  # `triage investigate` runs in its own process, which ends its record
        if not stored.channel or not stored.thread_ts:
            log.warning("investigation %s has no thread to resume in: marked failed", stored.id)
            await store.finish(stored.id, "failed", None)
            continue
        if investigations.active(stored.channel, stored.thread_ts) is not None:
            continue
        events = last_run(await store.events(stored.id))
        generation = (await store.acquire_lease(stored.id, leases.owner, leases.ttl)
                      if leases is not None else None)
        resume(
            investigations, investigation_id=stored.id, channel=stored.channel,
            thread_ts=stored.thread_ts, text=stored.incident, user=stored.requested_by,
            events=events, status_ts=stored.status_ts, generation=generation,
        )
        log.info("resumed investigation %s after a restart", stored.id)
        resumed += 1
    return resumed
