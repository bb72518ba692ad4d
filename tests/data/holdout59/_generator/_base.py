"""Shared kit for the holdout59 generators: time, names and the PodRef handle.

Everything is deterministic: names and addresses come from hashes of their inputs and
randomness from a seeded ``random.Random`` that each scenario owns.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

Obj = dict[str, Any]


def parse(ts: str) -> datetime:
    """An RFC 3339 UTC string as an aware datetime."""
    return datetime.fromisoformat(ts.replace("Z", "+00:00"))


def iso(t: datetime) -> str:
    """RFC 3339 with second precision, as the API server prints it."""
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_ms(t: datetime) -> str:
    """RFC 3339 with millisecond precision, as log shippers print it."""
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def digest(*parts: object, n: int = 10) -> str:
    """A short deterministic lowercase hex/alnum token."""
    raw = hashlib.sha256("/".join(str(p) for p in parts).encode()).hexdigest()
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    num = int(raw, 16)
    out = ""
    while len(out) < n:
        num, r = divmod(num, len(alphabet))
        out += alphabet[r]
    return out


def uid(*parts: object) -> str:
    """A deterministic UUID-shaped string."""
    h = hashlib.md5("/".join(str(p) for p in parts).encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


class Clock:
    """The investigation's clock: ``now`` and offsets back from it."""

    def __init__(self, now: str) -> None:
        self.now = parse(now)

    def ago(self, minutes: float) -> datetime:
        """The time ``minutes`` before now."""
        return self.now - timedelta(minutes=minutes)

    def grid(self, minutes: float, step_s: int = 60) -> list[datetime]:
        """Sample times every ``step_s`` seconds over the last ``minutes``, ending at now."""
        count = int(minutes * 60 // step_s)
        return [self.now - timedelta(seconds=step_s * i) for i in range(count, -1, -1)]


@dataclass(frozen=True)
class PodRef:
    """Where a container's logs and metrics come from."""

    ns: str
    pod: str
    container: str
    service: str
    node: str
    ip: str
