"""What one replica leaves in the store for the replica that runs an investigation.

A reply, a click or an approval reaches whichever replica Slack picked. When that replica
does not run the investigation, the event goes into the store's inbox, and the replica that
does run it claims it and applies it with the same calls a listener makes there
(bot/investigations/inbox.py). The kinds below are the registry methods they end in.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol, runtime_checkable

InboxKind = Literal["reply", "edit", "withdraw", "stop", "decide", "board", "pause", "resume",
                    "rewind"]
INBOX_KINDS: tuple[InboxKind, ...] = ("reply", "edit", "withdraw", "stop", "decide", "board",
                                      "pause", "resume", "rewind")


@dataclass(frozen=True, slots=True)
class InboxItem:
    """One event for the owner; `id` is the store's, in arrival order."""

    id: int
    investigation_id: str
    kind: InboxKind
    payload: Mapping[str, Any]
    created_at: datetime


class Listening(Protocol):
    """A live subscription to the store's notifications (PostgreSQL's LISTEN)."""

    @property
    def alive(self) -> bool: ...

    async def close(self) -> None: ...


@runtime_checkable
class InboxStore(Protocol):
    """A store several replicas share (the SQL store; the memory store is one process)."""

    async def send_to_owner(self, investigation_id: str, kind: InboxKind,
                            payload: Mapping[str, Any]) -> int | None:
        """Leave an event for the replica that runs the investigation: its id, or None
        when the store says it has ended."""
        ...

    async def claim_inbox(self, investigation_ids: Collection[str]) -> list[InboxItem]:
        """The undelivered events of these investigations, oldest first, marked delivered in
        the same transaction: of two claimers, one gets each event."""
        ...

    async def listen_inbox(self, wake: Callable[[], None]) -> Listening | None:
        """Call `wake` when an event is left for anyone (None: the backend cannot notify,
        and polling is the only way)."""
        ...


Tell = Callable[[str, str, str, str | None], None]  # channel, user, text, thread
