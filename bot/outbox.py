"""Per-channel send queues: the engine never waits on Slack, and Slack is never flooded.

Slack limits how fast a bot may post in one channel. Each channel gets one worker that sends
its messages in order, one at a time; while it waits (on a slow call or a 429's
Retry-After) the steps that pile up are coalesced into one message, so a fast engine costs
a handful of messages, not one per step, and no step is lost. slack_sdk's retry handler
honours Retry-After first; when it gives up, the worker waits and sends the same item again.
Status edits are coalesced too: only the latest status matters, rendered when it is sent.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.logging_setup import investigation_id
from bot.render import Message, StepView, fits, step_message
from bot.telemetry import Telemetry, slack_method

log = logging.getLogger(__name__)

# Errors after which nothing more can be posted in the thread: the investigation must end.
FATAL_ERRORS = frozenset({
    "not_in_channel", "channel_not_found", "is_archived", "account_inactive", "invalid_auth",
    "token_revoked", "not_authed", "missing_scope", "restricted_action", "team_access_not_granted",
})
# An edited message that is no longer there (deleted by a human, say).
GONE_ERRORS = frozenset({"message_not_found", "cant_update_message"})
# Errors of a message's content: send the plain-text fallback instead.
CONTENT_ERRORS = frozenset({"msg_too_long", "invalid_blocks", "invalid_blocks_format",
                            "too_many_attachments"})
NETWORK_ATTEMPTS = 4


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


@dataclass(eq=False)
class Post:
    """A new message in the thread; `on_posted` learns its ts."""

    thread: Thread
    message: Message
    on_posted: Callable[[str], None] | None = None


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


Item = Post | Steps | Status | Upload | Update


class RateLimitedError(Exception):
    def __init__(self, retry_after: float) -> None:
        super().__init__(f"rate limited for {retry_after:g}s")
        self.retry_after = retry_after


@dataclass(eq=False)
class ChannelQueue:
    """The messages of one channel, sent in order by a worker that lives while there is work."""

    client: AsyncWebClient
    channel: str
    items: deque[Item] = field(default_factory=deque)
    worker: asyncio.Task[None] | None = None
    idle: asyncio.Event = field(default_factory=asyncio.Event)
    sent: int = 0
    telemetry: Telemetry | None = None

    def __post_init__(self) -> None:
        self.idle.set()

    def put(self, item: Item) -> None:
        if isinstance(item, Status):
            if item.thread.status_pending and not item.final:
                return  # the pending one renders the latest state when it is sent
            item.thread.status_pending = True
        self.items.append(item)
        self.idle.clear()
        if self.worker is None or self.worker.done():
            self.worker = asyncio.create_task(self._work(), name=f"slack-out-{self.channel}")

    async def _work(self) -> None:
        investigation_id.set(None)  # the channel's worker serves every thread in it
        try:
            while self.items:
                item = self.items.popleft()
                if item.thread.dead:
                    continue
                if isinstance(item, Upload) and not item.content.done():
                    item.content.add_done_callback(functools.partial(self._drawn, item))
                    continue
                if isinstance(item, Steps):
                    item = self._coalesce(item)
                try:
                    await self._deliver(item)
                except RateLimitedError as limited:
                    log.info("channel %s rate limited, waiting %.1fs", self.channel,
                             limited.retry_after)
                    if self.telemetry is not None:
                        self.telemetry.slack_retry(_method_of(item))
                    self.items.appendleft(item)
                    if isinstance(item, Status):
                        item.thread.status_pending = True
                    await asyncio.sleep(limited.retry_after)
                except Exception:  # a bug in one message must not silence the channel
                    log.exception("could not send a %s to %s", type(item).__name__,
                                  self.channel)
        finally:
            if not self.items:
                self.idle.set()

    def _drawn(self, upload: Upload, _: object) -> None:
        self.put(upload)

    def _coalesce(self, first: Steps) -> Steps:
        """Merge the thread's later pending steps into `first` while the message fits.

        Items of other threads may be passed over; an item of another kind in the same
        thread may not, so that the thread keeps its order.
        """
        views = list(first.views)
        kept: deque[Item] = deque()
        blocked = False
        while self.items:
            item = self.items.popleft()
            if blocked or item.thread is not first.thread:
                kept.append(item)
                continue
            if isinstance(item, Steps) and fits(step_message([*views, *item.views])):
                views.extend(item.views)
                continue
            blocked = True
            kept.append(item)
        self.items = kept
        return Steps(first.thread, views)

    async def _deliver(self, item: Item) -> None:
        """Send one item, retrying network failures; Slack errors end it (except 429)."""
        for attempt in range(1, NETWORK_ATTEMPTS + 1):
            try:
                await self._send(item)
                self.sent += 1
                return
            except SlackApiError as exc:
                self._slack_error(item, exc)
                return
            except (aiohttp.ClientError, TimeoutError, OSError) as exc:
                if self.telemetry is not None:
                    self.telemetry.slack_error(_method_of(item), type(exc).__name__)
                if attempt == NETWORK_ATTEMPTS:
                    log.error("giving up on a message to %s after %d attempts: %s",
                              self.channel, attempt, exc)
                    if isinstance(item, Status) and item.thread.status_ts is None:
                        self._dead(item.thread, "unreachable")  # no thread to post into
                    return
                if self.telemetry is not None:
                    self.telemetry.slack_retry(_method_of(item))
                await asyncio.sleep(0.5 * 2 ** (attempt - 1))

    def _slack_error(self, item: Item, exc: SlackApiError) -> None:
        response = exc.response
        error = str(response.get("error", "unknown_error"))
        if self.telemetry is not None:
            method = slack_method(response.api_url) if response.api_url else _method_of(item)
            self.telemetry.slack_error(method, "ratelimited" if response.status_code == 429
                                       else error)
        if response.status_code == 429:
            raise RateLimitedError(_retry_after(response.headers)) from None
        log.warning("Slack refused a %s in %s: %s", type(item).__name__, self.channel, error)
        first_message = isinstance(item, Status) and item.thread.status_ts is None
        if isinstance(item, Status) and not first_message and error in GONE_ERRORS:
            # The status message was deleted (or is one a resumed run no longer may edit):
            # post a new one, so the thread keeps a live status.
            item.thread.status_ts = None
            item.thread.status_pending = True
            self.items.appendleft(item)
            return
        if error in FATAL_ERRORS or first_message:
            self._dead(item.thread, error)
        elif error in CONTENT_ERRORS and isinstance(item, Post | Steps):
            text = item.message.text if isinstance(item, Post) else step_message(item.views).text
            self.items.appendleft(Post(item.thread, Message(text), getattr(item, "on_posted",
                                                                            None)))

    @staticmethod
    def _dead(thread: Thread, error: str) -> None:
        """Nothing more can be posted in the thread: its investigation must end."""
        if not thread.dead:
            thread.dead = True
            if thread.on_dead is not None:
                thread.on_dead(error)

    async def _send(self, item: Item) -> None:
        thread = item.thread
        match item:
            case Status():
                thread.status_pending = False
                message = item.render()
                if message is None:
                    return
                if thread.status_ts is None:
                    ts = await self._post(thread, message)
                    thread.status_ts = ts
                    if thread.thread_ts is None:
                        thread.thread_ts = ts
                    if thread.on_status is not None:
                        thread.on_status(ts)
                else:
                    await self.client.chat_update(
                        channel=thread.channel, ts=thread.status_ts, text=message.text,
                        blocks=message.blocks,
                    )
            case Post():
                ts = await self._post(thread, item.message)
                if item.on_posted is not None:
                    item.on_posted(ts)
            case Steps():
                await self._post(thread, step_message(item.views))
            case Upload():
                content = await item.content
                if content is not None:
                    await self.client.files_upload_v2(
                        channel=thread.channel, thread_ts=thread.thread_ts, file=content,
                        filename=item.filename, title=item.title,
                    )
            case Update():
                target = item.ts()
                if target is not None:
                    await self.client.chat_update(
                        channel=thread.channel, ts=target, text=item.message.text,
                        blocks=item.message.blocks,
                    )

    async def _post(self, thread: Thread, message: Message) -> str:
        arguments: dict[str, Any] = {"channel": thread.channel, "text": message.text}
        if message.blocks:
            arguments["blocks"] = message.blocks
        if thread.thread_ts is not None:
            arguments["thread_ts"] = thread.thread_ts
        response = await self.client.chat_postMessage(**arguments, unfurl_links=False,
                                                       unfurl_media=False)
        return str(response["ts"])


def _method_of(item: Item) -> str:
    """The Web API method an item is sent with (its first call, for an upload)."""
    match item:
        case Status():
            return "chat.postMessage" if item.thread.status_ts is None else "chat.update"
        case Update():
            return "chat.update"
        case Upload():
            return "files.getUploadURLExternal"
        case _:
            return "chat.postMessage"


def _retry_after(headers: Any) -> float:
    for key, value in dict(headers or {}).items():
        if key.lower() == "retry-after":
            raw = value[0] if isinstance(value, list) else value
            try:
                return max(1.0, float(raw))
            except ValueError:
                break
    return 1.0


class Outbox:
    """All channel queues of the bot."""

    def __init__(self, client: AsyncWebClient, telemetry: Telemetry | None = None) -> None:
        self.client = client
        self.telemetry = telemetry
        self._queues: dict[str, ChannelQueue] = {}

    def put(self, item: Item) -> None:
        channel = item.thread.channel
        queue = self._queues.get(channel)
        if queue is None:
            queue = self._queues[channel] = ChannelQueue(self.client, channel,
                                                         telemetry=self.telemetry)
        queue.put(item)

    @property
    def pending(self) -> int:
        return sum(len(q.items) for q in self._queues.values())

    async def drain(self) -> None:
        """Wait until every queued message was sent (or given up on)."""
        while not all(q.idle.is_set() for q in self._queues.values()):
            await asyncio.gather(*(q.idle.wait() for q in self._queues.values()))
