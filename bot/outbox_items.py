"""What the outbox sends: one dataclass per kind of item, and the thread they go to.

Kept apart from the queues (bot.outbox) so that each module stays small; bot.outbox
re-exports them, and callers import them from there.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from bot.render import Message, StepView
from bot.render_stream import Plan
from bot.streaming import ThreadStreams


@dataclass(eq=False)
class Thread:
    """Where one investigation's messages go. `thread_ts` is None until the first message
    (a slash command's thread starts with the bot's own status message)."""

    channel: str
    thread_ts: str | None = None
    status_ts: str | None = None
    dead: bool = False
    status_pending: bool = False
    on_dead: Callable[[str], None] | None = None
    on_status: Callable[[str], None] | None = None  # learns the status message's ts
    recipient: str = ""  # who asked: Slack streams to a user outside DMs
    streams: ThreadStreams = field(default_factory=ThreadStreams)
    plan_pending: bool = False
    # Asked before each message goes out: False drops the thread's messages (a run whose
    # lease another replica took over while this one was frozen: leases.Leases.still_ours).
    guard: Callable[[], Awaitable[bool]] | None = None


@dataclass(eq=False)
class Post:
    """A new message in the thread; `on_posted` learns its ts."""

    thread: Thread
    message: Message
    on_posted: Callable[[str], None] | None = None
    classic: Message | None = None  # without the agent-era blocks, for where they are refused
    rich_only: bool = False  # an agent-era extra: nothing to post where it is refused


@dataclass(eq=False)
class Steps:
    """One or more steps, coalesced with later ones when the channel is behind."""

    thread: Thread
    views: list[StepView]


@dataclass(eq=False)
class Status:
    """Post the status message, or edit it in place once it exists. Pending edits are
    coalesced, except the `final` one: it is always the thread's last message, so the end
    is visible only once everything before it was delivered. `render` returns None for an
    edit that has become pointless (the run ended; the final edit follows)."""

    thread: Thread
    render: Callable[[], Message | None]
    final: bool = False


@dataclass(eq=False)
class Upload:
    """A file (a chart) in the thread. The bytes may still be drawing: then the upload waits
    aside and joins the queue again once drawn, so a picture never holds up the diagnosis."""

    thread: Thread
    content: asyncio.Future[bytes | None]
    filename: str
    title: str


@dataclass(eq=False)
class Update:
    """An edit of a message the bot posted earlier (an approval answered)."""

    thread: Thread
    ts: Callable[[], str | None]
    message: Message


@dataclass(eq=False)
class Live:
    """A step still running: its task cards in the stream (in progress, then answered). Only
    streamed: where messages are posted the step follows as `Steps` once complete."""

    thread: Thread
    views: list[StepView]
    done: list[StepView] = field(default_factory=list)  # complete steps merged in


@dataclass(eq=False)
class PlanUpdate:
    """The hypotheses, streamed as a plan; coalesced, rendered when sent."""

    thread: Thread
    plan: Plan


@dataclass(eq=False)
class StreamEnd:
    """Stop the thread's streams: queued before the diagnosis, which is its own message."""

    thread: Thread


@dataclass(eq=False)
class Loading:
    """The loading state while the model thinks; skipped when anything of the thread
    follows it in the queue (any message of the app clears it anyway)."""

    thread: Thread


Item = Post | Steps | Status | Upload | Update | Live | PlanUpdate | StreamEnd | Loading
StreamItem = Live | Steps


def method_of(item: Item) -> str:
    """The Web API method an item is sent with (its first call, for an upload)."""
    match item:
        case Status():
            return "chat.postMessage" if item.thread.status_ts is None else "chat.update"
        case Update():
            return "chat.update"
        case Upload():
            return "files.getUploadURLExternal"
        case Live() | Steps() | PlanUpdate() if item.thread.streams.steps is not None:
            return "chat.appendStream"
        case StreamEnd():
            return "chat.stopStream"
        case Loading():
            return "assistant.threads.setStatus"
        case _:
            return "chat.postMessage"


def retry_after(headers: Any) -> float:
    for key, value in dict(headers or {}).items():
        if key.lower() == "retry-after":
            raw = value[0] if isinstance(value, list) else value
            try:
                return max(1.0, float(raw))
            except ValueError:
                break
    return 1.0
