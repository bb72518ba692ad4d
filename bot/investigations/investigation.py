"""One running investigation as the bot holds it in memory, and its pending approvals.

Everything here is also in the store or can be rebuilt from it (the event log, the thread,
the status message): after a restart `resume` makes the same object again from the log.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from bot.outbox import Thread
from bot.reporter import ThreadReporter
from engines.constraints import Constraint, ConstraintInbox
from engines.events import Event
from engines.steering import Vocabulary


@dataclass(eq=False)
class Approval:
    """A tool that changes something, waiting for an Approve or Deny click in its thread."""

    id: str
    description: str
    future: asyncio.Future[tuple[bool, str]]
    ts: str | None = None


@dataclass(eq=False)
class Investigation:
    id: str
    text: str
    requested_by: str
    thread: Thread
    inbox: ConstraintInbox
    reporter: ThreadReporter
    task: asyncio.Task[None] | None = None
    approvals: dict[str, Approval] = field(default_factory=dict)
    resume: Sequence[Event] = ()
    lessons: Sequence[str] = ()
    notes: Sequence[str] = ()
    now: datetime | None = None
    correcting: bool = False  # a new attempt after a human said the answer was wrong
    recorded: asyncio.Event = field(default_factory=asyncio.Event)  # the store tried `create`
    known: bool = False  # the store already has it (a resumed run, a new attempt)
    vocabulary: Vocabulary | None = None  # the cluster's names, listed at the first reply
    replies: dict[str, tuple[Constraint, ...]] = field(default_factory=dict)  # by reply ts
    steering_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    generation: int | None = None  # the lease this replica holds on it (leases.py)
    lost: bool = False  # another replica took it over: this run stops and writes nothing
