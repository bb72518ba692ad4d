"""Block Kit primitives and Slack's limits, shared by the message builders in bot.render.

Slack refuses a message over 50 blocks, a section over 3000 characters, a header over 150,
or a payload much over 12 KB; `fits` checks the whole. Untrusted text is cut first
(`bounded`), then credentials are masked (`tools.redact`), then mrkdwn control characters
are escaped: in that order, because masking is slow on long unbroken runs of characters.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from tools.redact import redact

Block = dict[str, Any]

MAX_BLOCKS = 50
MAX_SECTION = 3000
MAX_HEADER = 150
MAX_MESSAGE_BYTES = 12_000
PREVIEW_LINES = 6
PREVIEW_CHARS = 600

@dataclass(frozen=True, slots=True)
class Message:
    """What one chat.postMessage or chat.update sends: notification text and blocks."""

    text: str
    blocks: list[Block] = field(default_factory=list)

    @property
    def size(self) -> int:
        return len(json.dumps({"text": self.text, "blocks": self.blocks}).encode())


def fits(message: Message) -> bool:
    """Whether Slack will take the message as it is."""
    return len(message.blocks) <= MAX_BLOCKS and message.size <= MAX_MESSAGE_BYTES


def escape(text: str) -> str:
    """Slack mrkdwn treats &, < and > as control characters."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


MAX_LINE = 300
MAX_TEXT = 3500


def bounded(text: str, chars: int = MAX_TEXT, line: int = MAX_LINE) -> str:
    """Cut before masking: the masking rules cost time that grows steeply with the length of
    an unbroken run of characters, and nothing longer than this is ever shown anyway."""
    lines = text[: chars + line].splitlines()
    kept = [part if len(part) <= line else part[: line - 1] + "…" for part in lines]
    return "\n".join(kept)[:chars]


def masked(text: str) -> str:
    return redact(bounded(text))


def clean(text: str) -> str:
    """Untrusted text (tools, models), safe to show: cut, credentials masked, escaped."""
    return escape(masked(text))


_BROADCAST = re.compile(r"<!(channel|here|everyone|subteam\^[^>]*)(\|[^>]*)?>")


def human(text: str) -> str:
    """A human's own Slack text: credentials masked and broadcasts (@channel) defused, but
    their links and mentions kept as they wrote them."""
    return _BROADCAST.sub(lambda m: f"&lt;!{escape(m.group(1))}&gt;", masked(text))


def clip(text: str, limit: int) -> str:
    """Cut to `limit` characters, saying so."""
    if len(text) <= limit:
        return text
    return text[: limit - 1].rstrip() + "…"


def code(text: str, limit: int = PREVIEW_CHARS) -> str:
    """A preformatted block; triple backticks inside would end it early."""
    body = clip(text.replace("```", "ʼʼʼ"), limit)
    return f"```{body}```" if body.strip() else ""


def section(text: str) -> Block:
    return {"type": "section", "text": {"type": "mrkdwn", "text": clip(text, MAX_SECTION)}}


def context(text: str) -> Block:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": clip(text, MAX_SECTION)}]}


def button(text: str, action_id: str, value: str, style: str | None = None) -> Block:
    button: Block = {
        "type": "button",
        "text": {"type": "plain_text", "text": text, "emoji": True},
        "action_id": action_id,
        "value": value,
    }
    if style:
        button["style"] = style
    return button


def preview(text: str, lines: int = PREVIEW_LINES, chars: int = PREVIEW_CHARS) -> str:
    """The first lines of an observation, saying how many were left out."""
    kept = text.strip().splitlines()
    shown = bounded("\n".join(kept[:lines]), chars * 2)
    if len(kept) > lines:
        shown += f"\n… {len(kept) - lines} more lines"
    return clip(shown, chars)


def elapsed(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m {seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"
