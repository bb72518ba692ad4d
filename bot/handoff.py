"""Hand acknowledged events to the app once a burst of requests has been answered.

Slack wants every event acknowledged within 3 seconds and delivers it again otherwise, so
on the bot's one event loop the acks come first. An event handed to slack-bolt at once
starts an investigation at once, and its first steps (tools, rendering, store writes)
would then queue between the requests still arriving: under a burst of mentions the last
ones would wait for the first ones' work. So events wait here until the port has been
quiet for a moment (`quiet`, 20 ms), or at most `longest` after the oldest
one arrived, then go to the app in the order Slack sent them. Nobody in a thread can tell
a few milliseconds; an ack late past Slack's patience is a redelivery.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")

QUIET_SECONDS = 0.02
LONGEST_SECONDS = 0.25


class Handoff(Generic[T]):
    """A debounce in front of `deliver`: items are delivered in arrival order, in one go,
    after `quiet` seconds without a new one, and never later than `longest` seconds after
    the oldest of them arrived."""

    def __init__(
        self,
        deliver: Callable[[T], None],
        *,
        quiet: float = QUIET_SECONDS,
        longest: float = LONGEST_SECONDS,
    ) -> None:
        if quiet < 0 or longest < quiet:
            raise ValueError("need 0 <= quiet <= longest")
        self._deliver = deliver
        self._quiet = quiet
        self._longest = longest
        self._pending: list[T] = []
        self._oldest = 0.0
        self._timer: asyncio.TimerHandle | None = None

    def __len__(self) -> int:
        return len(self._pending)

    def add(self, item: T) -> None:
        """Queue an item; call from the event loop."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        if not self._pending:
            self._oldest = now
        self._pending.append(item)
        if self._timer is not None:
            self._timer.cancel()
        self._timer = loop.call_at(min(now + self._quiet, self._oldest + self._longest),
                                   self.flush)

    def flush(self) -> None:
        """Deliver everything queued now (also what a shutdown calls, so nothing acked is
        left behind)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        batch, self._pending = self._pending, []
        for item in batch:
            self._deliver(item)
