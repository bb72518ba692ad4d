"""This replica's leases: the investigations it owns in the store, kept while they run.

A run takes its lease when it starts (a new generation), every write it makes carries that
generation (records.py), and one loop here renews all of them in a single statement every
third of the TTL. A lease that comes back unrenewed was taken over by another replica,
which means this one was presumed dead (frozen, cut off from the database): its run is cut
off at once, without a word in the thread (the new owner speaks there now) and without
another write. When a run ends its lease is released, so nobody takes it over.

The TTL is `TRIAGE_LEASE_SECONDS` (default 30 s): how long a dead replica's investigations
wait before another replica carries them on, and how long a replica may stall before it is
presumed dead.

Between renewals a replica trusts its leases by its own clock, for two thirds of the TTL
after the last renewal that kept them. A message for Slack waits for a renewal when that
time has passed (a process frozen, then woken), and is dropped when the renewal finds the
lease taken: the messages queued before the freeze never reach the thread the new owner
speaks in.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
from collections.abc import Mapping
from datetime import timedelta

from bot.investigations.investigation import Investigation
from bot.store import Store as SqlStore

log = logging.getLogger(__name__)

LEASE_SECONDS_ENV = "TRIAGE_LEASE_SECONDS"
DEFAULT_LEASE_SECONDS = 30.0
MIN_LEASE_SECONDS = 0.5


def lease_seconds_from_env(env: Mapping[str, str]) -> float:
    """TRIAGE_LEASE_SECONDS, or the default; ValueError says what is wrong with it."""
    raw = env.get(LEASE_SECONDS_ENV, "").strip()
    if not raw:
        return DEFAULT_LEASE_SECONDS
    try:
        seconds = float(raw)
    except ValueError:
        raise ValueError(f"{LEASE_SECONDS_ENV}={raw!r} is not a number of seconds") from None
    if not MIN_LEASE_SECONDS <= seconds <= 3600:
        raise ValueError(f"{LEASE_SECONDS_ENV} must be between {MIN_LEASE_SECONDS:g} and "
                         f"3600 seconds, not {seconds:g}")
    return seconds


def replica_id() -> str:
    """Unique per process, readable in the store: host, pid and a random suffix (a pid
    is reused by the next container of the same pod)."""
    return f"{socket.gethostname()[:80]}-{os.getpid()}-{secrets.token_hex(4)}"


class Leases:
    """The leases this replica holds, by investigation id."""

    def __init__(self, store: SqlStore, seconds: float = DEFAULT_LEASE_SECONDS,
                 owner: str | None = None) -> None:
        self.store = store
        self.ttl = timedelta(seconds=seconds)
        self.owner = owner or replica_id()
        self.lost = 0  # runs cut off because another replica took them over
        self._held: dict[str, Investigation] = {}
        self._stopping = False
        self._changed = asyncio.Event()
        self._stopped = asyncio.Event()
        self._trusted_until: dict[str, float] = {}  # loop time, by investigation id
        self._renewing = asyncio.Lock()

    @property
    def every(self) -> float:
        """How often leases are renewed and expired ones looked for: a third of the TTL, so
        two renewals can fail before a lease expires."""
        return self.ttl.total_seconds() / 3

    def held(self) -> dict[str, int]:
        """{investigation id: generation} of what this replica owns."""
        return {i: inv.generation for i, inv in self._held.items() if inv.generation is not None}

    async def acquire(self, investigation: Investigation) -> None:
        """Own a run that starts here (new, a new attempt, resumed at start)."""
        generation = await self.store.acquire_lease(investigation.id, self.owner, self.ttl)
        self.hold(investigation, generation)

    def hold(self, investigation: Investigation, generation: int) -> None:
        """Keep renewing a lease taken (by `acquire` or a takeover) for `investigation`;
        its thread's messages go out only while the lease is ours."""
        investigation.generation = generation
        self._held[investigation.id] = investigation
        self._trust(investigation.id)
        investigation.thread.guard = lambda: self.still_ours(investigation)

    def _trust(self, investigation_id: str) -> None:
        loop = asyncio.get_running_loop()
        self._trusted_until[investigation_id] = loop.time() + self.every * 2

    async def still_ours(self, investigation: Investigation) -> bool:
        """Whether this replica may still speak for `investigation`: at once while the last
        renewal is recent, else after a renewal (which cuts the run off if it was taken)."""
        if investigation.lost:
            return False
        if investigation.generation is None or investigation.id not in self._held:
            return True  # no lease (SQLite), or released at the end: nobody else owns it
        loop = asyncio.get_running_loop()
        trusted = self._trusted_until.get(investigation.id, 0.0)
        if loop.time() < trusted:
            return True
        # The store away: hold the message back and ask again, until the lease would have
        # expired in the store (a third of the TTL after the trust ends): past that another
        # replica may own the run, and the message is not this one's to send.
        while True:
            try:
                await self.renew()
                return not investigation.lost
            except Exception as exc:
                if loop.time() >= trusted + self.every:
                    log.warning("could not confirm the lease of %s before it expired: %s",
                                investigation.id, exc)
                    return False
                log.info("could not confirm the lease of %s yet: %s", investigation.id, exc)
                await asyncio.sleep(min(self.every / 4, 1.0))

    def drop(self, investigation: Investigation) -> None:
        if self._held.get(investigation.id) is investigation:
            del self._held[investigation.id]
            self._trusted_until.pop(investigation.id, None)
            if self._stopping:
                self._changed.set()

    async def release(self, investigation: Investigation) -> None:
        """The run ended and its end is recorded: the lease goes."""
        self.drop(investigation)
        if investigation.generation is not None and not investigation.lost:
            await self.store.release_lease(investigation.id, investigation.generation)

    def lose(self, investigation: Investigation, why: str) -> None:
        """Another replica owns the investigation now: stop this run, silently, at once."""
        if investigation.lost:
            return
        investigation.lost = True
        investigation.thread.dead = True  # nothing more of this run reaches the thread
        self.drop(investigation)
        self.lost += 1
        log.warning("investigation %s: lease lost (%s); stopping this run", investigation.id,
                    why, extra={"investigation_id": investigation.id})
        if investigation.task is not None and not investigation.task.done():
            investigation.task.cancel()

    async def renew(self) -> None:
        """Renew every held lease; cut off the runs whose lease was taken over."""
        async with self._renewing:  # the loop and a message's check ask at once
            held = self.held()
            if not held:
                return
            kept = await self.store.renew_leases(self.owner, held, self.ttl)
            for investigation_id, generation in held.items():
                investigation = self._held.get(investigation_id)
                if investigation is None:
                    continue
                if investigation_id in kept:
                    self._trust(investigation_id)
                elif investigation.generation == generation:
                    self.lose(investigation, "not renewed: another replica took it over")

    def stop(self) -> None:
        """Shutting down: the loop ends once the last held lease is released."""
        self._stopping = True
        self._changed.set()
        self._stopped.set()

    async def pause(self, seconds: float) -> None:
        """Sleep, unless shutdown begins first."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopped.wait(), timeout=seconds)

    async def run(self) -> None:
        """Renew every third of the TTL until shutdown has released everything."""
        loop = asyncio.get_running_loop()
        while not (self._stopping and not self._held):
            self._changed.clear()
            due = loop.time() + self.every
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), timeout=self.every)
            late = loop.time() - due
            if late > self.every and self._held:
                # A stalled loop or a starved process: the leases may have lapsed meanwhile.
                log.warning("lease renewal ran %.1f s late (TTL %g s)", late,
                            self.ttl.total_seconds())
            try:
                await self.renew()
            except Exception as exc:  # the store away for a moment: try at the next beat
                log.warning("could not renew %d leases: %s", len(self._held), exc)
