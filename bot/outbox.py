"""Per-channel send queues: the engine never waits on Slack, and Slack is never flooded.

Slack limits how fast a bot may post in one channel. Each channel gets one worker that sends
its messages in order, one at a time; while it waits (on a slow call or a 429's
Retry-After) the steps that pile up are coalesced into one message (bot.outbox_coalesce),
so a fast engine costs a handful of messages, not one per step, and no step is lost.
A 429 is the worker's own to wait out (its client has no rate-limit retry handler): it
waits Retry-After and sends the same item again, checked against the investigation's lease
first, with the steps that piled up meanwhile coalesced into it. Status edits are
coalesced too: only the latest status matters, rendered when it is sent.
Where Slack's agent surfaces are used (bot.streaming), steps go into the thread's stream as
task cards instead, appended at most once per STREAM_INTERVAL per thread (other threads'
items go first meanwhile) with everything that piled up coalesced into one append; when the
workspace refuses, the same items are posted as today's messages.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import streaming
from bot.logging_setup import investigation_id
from bot.outbox_coalesce import coalesce_steps, coalesce_stream
from bot.outbox_items import (
    Item,
    Live,
    Loading,
    PlanUpdate,
    Post,
    Status,
    Steps,
    StreamEnd,
    Thread,
    Update,
    Upload,
    method_of,
    retry_after,
)
from bot.render import Message, step_message
from bot.streaming import StreamingPolicy, StreamSender
from bot.telemetry import Telemetry, slack_method

__all__ = ["Item", "Live", "Loading", "Outbox", "PlanUpdate", "Post", "Status", "Steps",
           "StreamEnd", "Thread", "Update", "Upload"]

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
STREAM_INTERVAL = 1.0  # seconds between two appends to one thread's stream




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
    streams: StreamSender | None = None

    def __post_init__(self) -> None:
        self.idle.set()

    def put(self, item: Item) -> None:
        if isinstance(item, Status):
            if item.thread.status_pending and not item.final:
                return  # the pending one renders the latest state when it is sent
            item.thread.status_pending = True
        if isinstance(item, PlanUpdate):
            if item.thread.plan_pending:
                return
            item.thread.plan_pending = True
        self.items.append(item)
        self.idle.clear()
        if self.worker is None or self.worker.done():
            self.worker = asyncio.create_task(self._work(), name=f"slack-out-{self.channel}")

    async def _work(self) -> None:
        investigation_id.set(None)  # the channel's worker serves every thread in it
        try:
            while self.items:
                item = await self._next()
                if item.thread.dead or (item.thread.guard is not None
                                        and not await item.thread.guard()):
                    continue
                if isinstance(item, Upload) and not item.content.done():
                    item.content.add_done_callback(functools.partial(self._drawn, item))
                    continue
                if isinstance(item, Live | Steps) and self._streamed(item.thread):
                    item, self.items = coalesce_stream(item, self.items)
                elif isinstance(item, Steps):
                    item, self.items = coalesce_steps(item, self.items)
                elif isinstance(item, Loading) and any(i.thread is item.thread
                                                       for i in self.items):
                    continue
                try:
                    await self._deliver(item)
                except RateLimitedError as limited:
                    log.info("channel %s rate limited, waiting %.1fs", self.channel,
                             limited.retry_after)
                    if self.telemetry is not None:
                        self.telemetry.slack_retry(method_of(item))
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

    def _streamed(self, thread: Thread) -> bool:
        return (self.streams is not None and thread.thread_ts is not None
                and self.streams.wanted(thread.streams))

    def _cooling(self, item: Item, now: float) -> float:
        """Seconds until `item` may be sent: a stream append waits out STREAM_INTERVAL."""
        if not isinstance(item, Live | Steps) or not self._streamed(item.thread):
            return 0.0
        return max(0.0, item.thread.streams.last_append + STREAM_INTERVAL - now)

    async def _next(self) -> Item:
        """The next item to send: the first one that is its thread's next and not waiting
        out its stream's interval (threads are independent; each keeps its order)."""
        while True:
            now = asyncio.get_running_loop().time()
            seen: set[int] = set()
            soonest = STREAM_INTERVAL
            for index, item in enumerate(self.items):
                if id(item.thread) in seen:
                    continue
                seen.add(id(item.thread))
                wait = self._cooling(item, now)
                if wait == 0.0:
                    del self.items[index]
                    return item
                soonest = min(soonest, wait)
            await asyncio.sleep(soonest)

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
                    self.telemetry.slack_error(method_of(item), type(exc).__name__)
                if attempt == NETWORK_ATTEMPTS:
                    log.error("giving up on a message to %s after %d attempts: %s",
                              self.channel, attempt, exc)
                    if isinstance(item, Status) and item.thread.status_ts is None:
                        self._dead(item.thread, "unreachable")  # no thread to post into
                    return
                if self.telemetry is not None:
                    self.telemetry.slack_retry(method_of(item))
                await asyncio.sleep(0.5 * 2 ** (attempt - 1))

    def _slack_error(self, item: Item, exc: SlackApiError) -> None:
        response = exc.response
        error = str(response.get("error", "unknown_error"))
        if self.telemetry is not None:
            method = slack_method(response.api_url) if response.api_url else method_of(item)
            self.telemetry.slack_error(method, "ratelimited" if response.status_code == 429
                                       else error)
        if response.status_code == 429:
            raise RateLimitedError(retry_after(response.headers)) from None
        if self._agent_error(item, error):
            return
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

    def _agent_error(self, item: Item, error: str) -> bool:
        """Slack refused one of its agent surfaces: fall back to today's messages (for the
        workspace, remembered), posting what the refused item carried. True when handled."""
        sender, thread = self.streams, item.thread
        if sender is None:
            return False
        if isinstance(item, Loading):
            sender.policy.no_loading.add(sender.team)  # a nicety: never worth an error
            return True
        if isinstance(item, StreamEnd):
            log.info("could not stop a stream in %s: %s", self.channel, error)
            return True
        if isinstance(item, Post) and (item.classic is not None or item.rich_only):
            if error not in streaming.REFUSALS | CONTENT_ERRORS:
                return False
            sender.policy.refuse(sender.team, error)
            if item.classic is not None:
                self.items.appendleft(Post(thread, item.classic, item.on_posted))
            return True
        if not isinstance(item, Live | Steps | PlanUpdate) or not self._streamed(thread):
            return False  # a step posted as a message: today's content fallback applies
        if error in streaming.STREAM_GONE and sender.rotate(thread.streams):
            self.items.appendleft(item)  # into a new stream
            return True
        if error not in streaming.REFUSALS | CONTENT_ERRORS | streaming.STREAM_GONE:
            return False
        if error in streaming.REFUSALS:  # the workspace's answer; a too-long one is ours
            sender.policy.refuse(sender.team, error)
        thread.streams.fallen_back = True
        done = item.views if isinstance(item, Steps) else \
            item.done if isinstance(item, Live) else []
        if done:
            self.items.appendleft(Steps(thread, done))
        self.items.appendleft(StreamEnd(thread))  # the half-streamed message reads finished
        return True

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
                message = item.message
                rich = self.streams is not None and self.streams.policy.rich_blocks(
                    self.streams.team)
                if item.rich_only and not rich:
                    return
                if item.classic is not None and not rich:
                    message = item.classic
                ts = await self._post(thread, message)
                if item.on_posted is not None:
                    item.on_posted(ts)
            case Live() | Steps() if self._streamed(thread):
                await self._stream_steps(item)
            case Live():
                if item.done:  # merged while streaming, then the stream fell back
                    await self._post(thread, step_message(item.done))
            case Steps():
                await self._post(thread, step_message(item.views))
            case PlanUpdate():
                thread.plan_pending = False
                if self._streamed(thread):
                    assert self.streams is not None and thread.thread_ts is not None
                    await self.streams.plan(thread.channel, thread.thread_ts, thread.recipient,
                                            thread.streams, item.plan)
            case StreamEnd():
                if self.streams is not None:
                    await self.streams.stop(thread.streams)
            case Loading():
                sender = self.streams
                if sender is not None and sender.policy.loading(sender.team) and \
                        thread.thread_ts is not None and not thread.streams.ended:
                    await sender.loading(thread.channel, thread.thread_ts)
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

    async def _stream_steps(self, item: Live | Steps) -> None:
        assert self.streams is not None and item.thread.thread_ts is not None
        thread = item.thread
        await self.streams.steps(thread.channel, item.thread.thread_ts, thread.recipient,
                                 thread.streams, item.views)
        thread.streams.last_append = asyncio.get_running_loop().time()

    async def _post(self, thread: Thread, message: Message) -> str:
        arguments: dict[str, Any] = {"channel": thread.channel, "text": message.text}
        if message.blocks:
            arguments["blocks"] = message.blocks
        if thread.thread_ts is not None:
            arguments["thread_ts"] = thread.thread_ts
        response = await self.client.chat_postMessage(**arguments, unfurl_links=False,
                                                       unfurl_media=False)
        return str(response["ts"])


class Outbox:
    """All channel queues of the bot."""

    def __init__(self, client: AsyncWebClient, telemetry: Telemetry | None = None,
                 policy: StreamingPolicy | None = None) -> None:
        self.client = client
        self.telemetry = telemetry
        self.policy = policy or StreamingPolicy("off")
        self.streams = StreamSender(client, self.policy)
        self._queues: dict[str, ChannelQueue] = {}

    def put(self, item: Item) -> None:
        channel = item.thread.channel
        queue = self._queues.get(channel)
        if queue is None:
            queue = self._queues[channel] = ChannelQueue(self.client, channel,
                                                         telemetry=self.telemetry,
                                                         streams=self.streams)
        queue.put(item)

    @property
    def pending(self) -> int:
        return sum(len(q.items) for q in self._queues.values())

    async def drain(self) -> None:
        """Wait until every queued message was sent (or given up on)."""
        while not all(q.idle.is_set() for q in self._queues.values()):
            await asyncio.gather(*(q.idle.wait() for q in self._queues.values()))
