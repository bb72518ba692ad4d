"""The loopback Slack's agent surfaces and its Block Kit checks.

`AgentApi` is mixed into FakeSlack: chat.startStream / appendStream / stopStream keep a
streamed message (its markdown, task cards by id, plan title) with Slack's stream states
(appending to an unknown ts is `message_not_found`, to a stopped stream
`message_not_in_streaming_state`), assistant.threads.setStatus records the loading state,
and every payload is checked the way Slack checks it: known chunk types with their required
fields and statuses, 12,000 characters of markdown a call, at most 50 blocks a message, one
table a message (100 rows of 20 cells), feedback buttons and icon buttons only inside
context_actions (at most 5). A `legacy` workspace answers the stream methods with
`unknown_method` and the agent-era blocks with `invalid_blocks`, as one without them does.
"""

from __future__ import annotations

from typing import Any, Protocol

CHUNK_TYPES = frozenset({"markdown_text", "task_update", "plan_update", "blocks"})
TASK_STATUSES = frozenset({"pending", "in_progress", "complete", "error"})
BLOCK_TYPES = frozenset({"section", "context", "actions", "header", "divider", "image",
                         "rich_text", "markdown", "table", "context_actions", "task_card"})
AGENT_BLOCKS = frozenset({"table", "context_actions", "task_card"})
MAX_MARKDOWN = 12_000
MAX_BLOCKS = 50
MAX_CHUNKS = 100


class _Message(Protocol):
    channel: str
    ts: str
    text: str
    blocks: list[dict[str, Any]]
    thread_ts: str | None
    edits: int
    stream: str
    tasks: dict[str, dict[str, Any]]
    plan_title: str
    display_mode: str


def block_error(blocks: Any, *, legacy: bool) -> str | None:
    """Why Slack would refuse these blocks (`invalid_blocks`), or None."""
    if blocks is None:
        return None
    if not isinstance(blocks, list) or len(blocks) > MAX_BLOCKS:
        return "invalid_blocks"
    tables = 0
    for block in blocks:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind not in BLOCK_TYPES or (legacy and kind in AGENT_BLOCKS):
            return "invalid_blocks"
        assert isinstance(block, dict)
        if kind == "section":
            text = (block.get("text") or {}).get("text", "")
            fields = block.get("fields") or []
            if len(str(text)) > 3000 or len(fields) > 10 or not (text or fields):
                return "invalid_blocks"
        elif kind == "table":
            tables += 1
            rows = block.get("rows")
            if tables > 1 or not isinstance(rows, list) or not rows or len(rows) > 100:
                return "invalid_blocks"
            for row in rows:
                if not isinstance(row, list) or not row or len(row) > 20 or any(
                    not isinstance(c, dict) or c.get("type") not in
                    ("raw_text", "raw_number", "rich_text") for c in row
                ):
                    return "invalid_blocks"
        elif kind == "context_actions":
            elements = block.get("elements")
            if not isinstance(elements, list) or not 1 <= len(elements) <= 5:
                return "invalid_blocks"
            for element in elements:
                if element.get("type") == "feedback_buttons":
                    for side in ("positive_button", "negative_button"):
                        button = element.get(side) or {}
                        label = (button.get("text") or {}).get("text", "")
                        if not label or len(label) > 75 or not button.get("value") or \
                                len(str(button["value"])) > 2000:
                            return "invalid_blocks"
                elif element.get("type") != "icon_button":
                    return "invalid_blocks"
        elif kind == "actions":
            elements = block.get("elements") or []
            if not 1 <= len(elements) <= 25 or any(
                e.get("type") in ("feedback_buttons", "icon_button") for e in elements
            ):
                return "invalid_blocks"
    return None


def chunk_error(chunks: Any, markdown: Any, *, legacy: bool) -> str | None:
    """Why Slack would refuse a stream call's chunks, or None."""
    size = len(markdown) if isinstance(markdown, str) else 0
    if chunks is None:
        return "msg_too_long" if size > MAX_MARKDOWN else None
    if not isinstance(chunks, list) or len(chunks) > MAX_CHUNKS:
        return "invalid_chunks"
    for chunk in chunks:
        kind = chunk.get("type") if isinstance(chunk, dict) else None
        if kind not in CHUNK_TYPES:
            return "invalid_chunks"
        assert isinstance(chunk, dict)
        if kind == "markdown_text":
            if not isinstance(chunk.get("text"), str) or not chunk["text"]:
                return "invalid_chunks"
            size += len(chunk["text"])
        elif kind == "task_update":
            if not chunk.get("id") or not chunk.get("title") or \
                    chunk.get("status") not in TASK_STATUSES or len(chunk["title"]) > 256:
                return "invalid_chunks"
            for optional in ("details", "output"):
                if optional in chunk and not isinstance(chunk[optional], str):
                    return "invalid_chunks"
        elif kind == "plan_update":
            if not isinstance(chunk.get("title"), str) or not chunk["title"]:
                return "invalid_chunks"
        elif kind == "blocks" and block_error(chunk.get("blocks"), legacy=legacy):
            return "invalid_blocks"
    return "msg_too_long" if size > MAX_MARKDOWN else None


class AgentApi:
    """The agent surfaces of the Web API, on FakeSlack's messages."""

    legacy: bool
    messages: dict[str, Any]
    statuses: list[dict[str, Any]]

    def _next_ts(self) -> str:
        raise NotImplementedError

    def _new_message(self, channel: str, ts: str, thread_ts: str | None) -> Any:
        raise NotImplementedError

    def _apply(self, message: _Message, args: dict[str, Any]) -> None:
        if isinstance(args.get("markdown_text"), str):
            message.text += args["markdown_text"]
        for chunk in args.get("chunks") or []:
            if chunk["type"] == "markdown_text":
                message.text += chunk["text"]
            elif chunk["type"] == "task_update":
                known = message.tasks.setdefault(chunk["id"], {})
                known.update({k: v for k, v in chunk.items() if k != "type"})
            elif chunk["type"] == "plan_update":
                message.plan_title = chunk["title"]
            elif chunk["type"] == "blocks":
                message.blocks.extend(chunk["blocks"])

    def _stream(self, args: dict[str, Any]) -> tuple[_Message | None, dict[str, Any] | None]:
        if self.legacy:
            return None, {"ok": False, "error": "unknown_method"}
        message = self.messages.get(f"{args.get('channel', '')}/{args.get('ts', '')}")
        if message is None or not message.stream:
            return None, {"ok": False, "error": "message_not_found"}
        if message.stream != "streaming":
            return None, {"ok": False, "error": "message_not_in_streaming_state"}
        error = chunk_error(args.get("chunks"), args.get("markdown_text"), legacy=self.legacy)
        if error:
            return None, {"ok": False, "error": error}
        return message, None

    def _chat_startStream(self, args: dict[str, Any]) -> dict[str, Any]:
        if self.legacy:
            return {"ok": False, "error": "unknown_method"}
        channel = str(args.get("channel", ""))
        if not channel:
            return {"ok": False, "error": "channel_not_found"}
        if args.get("task_display_mode", "timeline") not in ("timeline", "plan"):
            return {"ok": False, "error": "invalid_arguments"}
        if not channel.startswith("D") and not (args.get("recipient_user_id")
                                                and args.get("recipient_team_id")):
            return {"ok": False, "error": "invalid_arguments"}  # needed outside DMs
        error = chunk_error(args.get("chunks"), args.get("markdown_text"), legacy=self.legacy)
        if error:
            return {"ok": False, "error": error}
        ts = self._next_ts()
        message = self._new_message(channel, ts, args.get("thread_ts"))
        message.stream = "streaming"
        message.display_mode = str(args.get("task_display_mode", "timeline"))
        self._apply(message, args)
        self.messages[f"{channel}/{ts}"] = message
        return {"ok": True, "channel": channel, "ts": ts}

    def _chat_appendStream(self, args: dict[str, Any]) -> dict[str, Any]:
        message, refused = self._stream(args)
        if refused is not None or message is None:
            return refused or {"ok": False}
        if not args.get("chunks") and not args.get("markdown_text"):
            return {"ok": False, "error": "invalid_arguments"}
        self._apply(message, args)
        message.edits += 1
        return {"ok": True, "channel": message.channel, "ts": message.ts}

    def _chat_stopStream(self, args: dict[str, Any]) -> dict[str, Any]:
        message, refused = self._stream(args)
        if refused is not None or message is None:
            return refused or {"ok": False}
        if block_error(args.get("blocks"), legacy=self.legacy):
            return {"ok": False, "error": "invalid_blocks"}
        self._apply(message, args)
        message.blocks.extend(args.get("blocks") or [])
        message.stream = "stopped"
        return {"ok": True, "channel": message.channel, "ts": message.ts}

    def _assistant_threads_setStatus(self, args: dict[str, Any]) -> dict[str, Any]:
        if self.legacy:
            return {"ok": False, "error": "unknown_method"}
        if not args.get("channel_id") or not args.get("thread_ts") or "status" not in args:
            return {"ok": False, "error": "invalid_arguments"}
        if len(args.get("loading_messages") or []) > 10:
            return {"ok": False, "error": "invalid_arguments"}
        self.statuses.append(dict(args))
        return {"ok": True}
