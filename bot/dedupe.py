"""Slack's redeliveries, recognised: the same event must never start two investigations.

Slack delivers an event again when it thinks the first delivery was lost (with
`X-Slack-Retry-Num`, or `retry_attempt` in Socket Mode); the app's middleware asks the deduper
before any listener runs.
"""

from __future__ import annotations

import time
from collections import OrderedDict

DEDUPE_SECONDS = 3600.0
DEDUPE_MAX = 20_000


class EventDeduper:
    """Event ids seen in the last hour (Slack retries within minutes), bounded in memory."""

    def __init__(self, ttl: float = DEDUPE_SECONDS, limit: int = DEDUPE_MAX) -> None:
        self._seen: OrderedDict[str, float] = OrderedDict()
        self._ttl = ttl
        self._limit = limit
        self.duplicates = 0

    def first_time(self, event_id: str) -> bool:
        now = time.monotonic()
        while self._seen and (
            len(self._seen) >= self._limit or next(iter(self._seen.values())) < now - self._ttl
        ):
            self._seen.popitem(last=False)
        if event_id in self._seen:
            self.duplicates += 1
            return False
        self._seen[event_id] = now
        return True
