"""Admission: how many investigations run at once, and the queue of those that wait.

A mention first claims its Slack message in the store (`claim_event`): of the replicas and
redeliveries that see the same message, one goes on, so a retried event never starts two
investigations. The in-memory `EventDeduper` of bot/app.py stays in front as the cheap check
for redeliveries reaching the same process.

Then the limits: `TRIAGE_MAX_INVESTIGATIONS` running on this replica in all, and
`TRIAGE_MAX_PER_CHANNEL` in one channel. Above them the mention is queued in the store, not
in memory, so it survives a restart and another replica sees it; its thread says how many
wait ahead. A slot frees when an investigation ends (`wake`), and the queue is also polled,
for entries queued by other replicas; the oldest entry that fits starts first. Taking an
entry is atomic in the store, so two replicas never both start it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from bot.feedback import QueuedMention, Store
from bot.investigations.investigation import Investigation
from bot.outbox import Outbox, Post, Thread
from bot.render_admission import queued_message

log = logging.getLogger(__name__)

MAX_INVESTIGATIONS_ENV = "TRIAGE_MAX_INVESTIGATIONS"
MAX_PER_CHANNEL_ENV = "TRIAGE_MAX_PER_CHANNEL"
DEFAULT_MAX_INVESTIGATIONS = 20
DEFAULT_MAX_PER_CHANNEL = 5
POLL_SECONDS = 2.0


@dataclass(frozen=True, slots=True)
class AdmissionLimits:
    """How many investigations may run at once: in all, and in one channel."""

    total: int = DEFAULT_MAX_INVESTIGATIONS
    per_channel: int = DEFAULT_MAX_PER_CHANNEL

    def __post_init__(self) -> None:
        if self.total < 1 or self.per_channel < 1:
            raise ValueError("the limits of concurrent investigations must be at least 1")

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> AdmissionLimits:
        """The limits from the environment; ValueError names the variable that is wrong."""
        values: dict[str, int] = {}
        for name, field, default in (
            (MAX_INVESTIGATIONS_ENV, "total", DEFAULT_MAX_INVESTIGATIONS),
            (MAX_PER_CHANNEL_ENV, "per_channel", DEFAULT_MAX_PER_CHANNEL),
        ):
            raw = env.get(name, "").strip()
            try:
                values[field] = int(raw) if raw else default
            except ValueError:
                raise ValueError(f"{name}={raw!r} is not a whole number") from None
            if values[field] < 1:
                raise ValueError(f"{name} must be at least 1, not {values[field]}")
        return cls(**values)


def message_key(channel: str, ts: str) -> str:
    """What identifies a Slack message in every event about it, whatever its event id."""
    return f"message:{channel}:{ts}"


class Registry(Protocol):
    """What admission needs of `Investigations` (registry.py), which owns it."""

    closing: bool

    @property
    def running(self) -> int: ...

    def running_in(self, channel: str) -> int: ...

    def active(self, channel: str, thread_ts: str | None) -> Investigation | None: ...

    def start(self, *, channel: str, thread_ts: str | None, text: str,
              user: str) -> Investigation: ...


class Admission:
    """Claims, limits and the queue in front of `Investigations.start`."""

    def __init__(self, registry: Registry, store: Store, outbox: Outbox,
                 limits: AdmissionLimits, poll: float = POLL_SECONDS) -> None:
        self.registry = registry
        self.store = store
        self.outbox = outbox
        self.limits = limits
        self.poll = poll
        self.duplicates = 0
        self._lock = asyncio.Lock()  # one decision at a time: limits checked, then started
        self._wake = asyncio.Event()

    def has_room(self, channel: str) -> bool:
        return (self.registry.running < self.limits.total
                and self.registry.running_in(channel) < self.limits.per_channel)

    async def mention(
        self, *, channel: str, thread_ts: str, text: str, user: str, ts: str = ""
    ) -> Investigation | None:
        """Start an investigation of the mention `ts` (in the thread `thread_ts`; the same
        when it opens the thread), queue it, or (a message another delivery or replica
        already claimed) do nothing. None unless it started here and now."""
        if not await self.store.claim_event(message_key(channel, ts or thread_ts)):
            self.duplicates += 1
            log.info("ignored %s/%s: another delivery or replica has it", channel, thread_ts)
            return None
        async with self._lock:
            await self._drain()  # who waited comes first
            if self.has_room(channel) and not self.registry.closing:
                return self.registry.start(channel=channel, thread_ts=thread_ts, text=text,
                                           user=user)
            ahead = await self.store.enqueue(QueuedMention(channel, thread_ts, text, user))
        log.info("queued %s/%s with %d ahead", channel, thread_ts, ahead)
        self.outbox.put(Post(Thread(channel, thread_ts, recipient=user),
                             queued_message(ahead, self.limits.total, self.limits.per_channel)))
        return None

    def wake(self) -> None:
        """A slot may have freed: look at the queue now rather than at the next poll."""
        self._wake.set()

    async def run(self) -> None:
        """Start queued mentions as slots free, until the registry closes."""
        while not self.registry.closing:
            try:
                async with self._lock:
                    await self._drain()
            except Exception as exc:  # the store away for a moment: try again at the next poll
                log.warning("could not read the admission queue: %s", exc)
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=self.poll)

    async def _drain(self) -> None:
        """Start the oldest queued mentions that fit, taking each from the store first."""
        if self.registry.closing or self.registry.running >= self.limits.total:
            return
        for waiting in await self.store.queued():
            if self.registry.closing or self.registry.running >= self.limits.total:
                return
            if not self.has_room(waiting.channel):
                continue
            if not await self.store.take_queued(waiting.id):
                continue  # another replica took it
            if self.registry.active(waiting.channel, waiting.thread_ts) is not None:
                continue
            log.info("starting queued %s/%s", waiting.channel, waiting.thread_ts)
            self.registry.start(channel=waiting.channel, thread_ts=waiting.thread_ts,
                                text=waiting.text, user=waiting.requested_by)
