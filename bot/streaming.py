"""Slack's agent surfaces for one thread: the steps streamed into one message as task cards
(chat.startStream / appendStream / stopStream through slack_sdk's `chat_stream` helper), the
hypotheses streamed as a plan, and the loading state (assistant.threads.setStatus).

Whether to use them is `TRIAGE_SLACK_STREAMING`: `off` posts today's messages, `on` always
tries, `auto` (the default) tries and, once a workspace refuses (an unknown method, a block
or chunk it does not know, a surface that does not allow it), remembers that and posts
today's messages there from then on. The switch loses nothing: every step also travels as
an ordinary step item, so the outbox posts it as a message whenever the stream cannot
take it (see bot.outbox).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from slack_sdk.web.async_chat_stream import AsyncChatStream
from slack_sdk.web.async_client import AsyncWebClient

from bot.background import Background
from bot.feedback import Store
from bot.render import StepView
from bot.render_stream import Chunk, Key, Plan, StreamProgress, batches, plan_chunks, step_chunks
from engines.errors import ConfigurationError, TriageError

log = logging.getLogger(__name__)

Mode = Literal["auto", "on", "off"]
MODES: tuple[Mode, ...] = ("auto", "on", "off")
ENV = "TRIAGE_SLACK_STREAMING"

# A workspace or surface that will not take the agent surfaces: fall back to messages.
REFUSALS = frozenset({
    "unknown_method", "not_allowed", "invalid_blocks", "invalid_blocks_format",
    "invalid_chunks", "not_allowed_token_type", "method_not_supported_for_channel_type",
    "feature_not_enabled", "not_supported", "invalid_arguments", "team_not_allowed",
})
# The stream is over on Slack's side (it closes idle or old streams): start a new one.
STREAM_GONE = frozenset({"message_not_in_streaming_state", "message_not_found"})
STREAM_METHODS = frozenset({"chat.startStream", "chat.appendStream", "chat.stopStream"})
MAX_ROTATIONS = 3  # new streams for one thread before it falls back to messages
LOADING = "is looking into it…"
LOADING_MESSAGES = ["Reading what came back…", "Weighing the evidence…",
                    "Choosing the next check…"]


def mode_from_env(environ: Mapping[str, str]) -> Mode:
    value = environ.get(ENV, "auto").strip().lower() or "auto"
    for mode in MODES:
        if value == mode:
            return mode
    raise ConfigurationError(f"{ENV} must be one of auto, on, off; not {value!r}")


@dataclass(slots=True)
class StreamingPolicy:
    """Which surfaces to use, decided once per workspace (team) and remembered."""

    mode: Mode = "auto"
    refused: dict[str, str] = field(default_factory=dict)  # team → the error
    no_loading: set[str] = field(default_factory=set)  # teams whose setStatus refused
    # Told of each new refusal, so the store keeps it across restarts and replicas.
    on_refused: Callable[[str, str], None] | None = None

    def streams(self, team: str) -> bool:
        return self.mode != "off" and team not in self.refused

    def rich_blocks(self, team: str) -> bool:
        """Feedback buttons and tables: as streaming, they are the agent-era blocks."""
        return self.streams(team)

    def loading(self, team: str) -> bool:
        return self.mode != "off" and team not in self.no_loading

    def refuse(self, team: str, error: str) -> None:
        """The workspace refused a stream or a block: messages from now on (`on` tries
        again with the next investigation, so it is not remembered there)."""
        if self.mode == "on":
            log.error("Slack refused the streamed surfaces (%s) though %s=on", error, ENV)
            return
        if team not in self.refused:
            log.warning("workspace %s refused the streamed surfaces (%s): posting messages "
                        "there from now on", team or "?", error)
            self.refused[team] = error
            if self.on_refused is not None:
                self.on_refused(team, error)


@dataclass(slots=True)
class ThreadStreams:
    """The streams of one thread: its steps (timeline) and its hypotheses (plan)."""

    steps: AsyncChatStream | None = None
    plan: AsyncChatStream | None = None
    step_progress: StreamProgress = field(default_factory=StreamProgress)
    plan_progress: StreamProgress = field(default_factory=StreamProgress)
    rotations: int = 0
    fallen_back: bool = False  # this thread posts messages (the stream failed it)
    last_append: float = 0.0
    ended: bool = False


class StreamSender:
    """Sends a thread's stream items; raises SlackApiError as any Web API call does."""

    def __init__(self, client: AsyncWebClient, policy: StreamingPolicy) -> None:
        self.client = client
        self.policy = policy
        self.team = ""  # the workspace, learnt from auth.test

    def wanted(self, streams: ThreadStreams) -> bool:
        return self.policy.streams(self.team) and not streams.fallen_back and not streams.ended

    async def _open(self, channel: str, thread_ts: str, recipient: str,
                    mode: Literal["timeline", "plan"]) -> AsyncChatStream:
        direct = channel.startswith("D")  # outside a DM Slack needs the recipient
        return await self.client.chat_stream(
            channel=channel, thread_ts=thread_ts, task_display_mode=mode,
            recipient_team_id=None if direct else self.team,
            recipient_user_id=None if direct else recipient,
        )

    async def _append(self, stream: AsyncChatStream, progress: StreamProgress,
                      chunks: Sequence[tuple[Chunk, Key]]) -> int:
        """Append in batches Slack takes; each batch is marked sent once it was taken."""
        calls = 0
        for batch in batches(chunks):
            await stream.append(chunks=[chunk for chunk, _ in batch])
            progress.ts = stream.ts
            progress.mark([key for _, key in batch])
            calls += 1
        return calls

    async def steps(self, channel: str, thread_ts: str, recipient: str,
                    streams: ThreadStreams, views: Sequence[StepView]) -> int:
        chunks = step_chunks(views, streams.step_progress)
        if not chunks:
            return 0
        if streams.steps is None:
            streams.steps = await self._open(channel, thread_ts, recipient, "timeline")
        return await self._append(streams.steps, streams.step_progress, chunks)

    async def plan(self, channel: str, thread_ts: str, recipient: str,
                   streams: ThreadStreams, plan: Plan) -> int:
        chunks = plan_chunks(plan, streams.plan_progress)
        if not chunks or not plan.items:
            return 0
        if streams.plan is None:
            streams.plan = await self._open(channel, thread_ts, recipient, "plan")
        return await self._append(streams.plan, streams.plan_progress, chunks)

    async def stop(self, streams: ThreadStreams) -> None:
        """Stop the thread's streams: they read as finished, and nothing is appended after."""
        streams.ended = True
        for stream in (streams.steps, streams.plan):
            if stream is not None and stream.ts is not None:
                if stream is streams.steps:
                    streams.steps = None
                else:
                    streams.plan = None
                await stream.stop()

    def rotate(self, streams: ThreadStreams) -> bool:
        """Slack closed the steps stream: the next append starts a new one (and sends the
        step headings again, so the new message reads on its own). False when the thread
        rotated too often and must fall back to messages."""
        streams.rotations += 1
        if streams.rotations > MAX_ROTATIONS:
            streams.fallen_back = True
            return False
        streams.steps, streams.plan = None, None
        streams.step_progress = StreamProgress()
        streams.plan_progress = StreamProgress()
        return True

    async def loading(self, channel: str, thread_ts: str, text: str = LOADING) -> None:
        await self.client.assistant_threads_setStatus(
            channel_id=channel, thread_ts=thread_ts, status=text,
            loading_messages=LOADING_MESSAGES,
        )


async def streaming_policy(mode: Mode, store: Store, background: Background) -> StreamingPolicy:
    """The surfaces policy with the workspaces' earlier refusals, each new one kept in the
    store (a store that cannot answer leaves the decision to this run)."""
    try:
        refused = await store.surface_refusals()
    except TriageError as exc:
        log.warning("could not read the workspaces' refusals of streaming: %s", exc)
        refused = {}

    def keep(team: str, error: str) -> None:
        background.spawn(store.remember_surface_refusal(team, error), name="keep-refusal")

    return StreamingPolicy(mode, dict(refused), on_refused=keep)
