"""The conversation sent to the model, compacted when it nears the context budget.

Compaction replaces the oldest successful observations with a one-line stub; it never
touches the incident, constraints, error observations or the last few steps, because those
are what keep the model honest and on course.
"""

from __future__ import annotations

from dataclasses import replace

from engines.model import AssistantMessage, Message, ToolMessage
from engines.tokens import count_tokens

KEEP_RECENT_MESSAGES = 8
ELIDED_PREFIX = "[older observation elided to save context"
"""How a compacted observation starts: the analyzer knows by it that the text is no longer
the tool's, so it quotes nothing from it."""


def _size(message: Message) -> int:
    text = message.content
    if isinstance(message, AssistantMessage):
        text += "".join(f"{c.name}{c.raw_arguments or c.arguments}" for c in message.tool_calls)
    return count_tokens(text) + 4


class History:
    """Messages of one investigation, with a running token count."""

    def __init__(self, budget_tokens: int) -> None:
        self.budget_tokens = budget_tokens
        self._messages: list[Message] = []
        self._sizes: list[int] = []
        self._total = 0
        self.compactions = 0

    def append(self, message: Message) -> None:
        size = _size(message)
        self._messages.append(message)
        self._sizes.append(size)
        self._total += size

    @property
    def messages(self) -> tuple[Message, ...]:
        return tuple(self._messages)

    @property
    def tokens(self) -> int:
        return self._total

    def compact(self, reserved_tokens: int = 0) -> int:
        """Elide old observations until the history fits; returns how many were elided."""
        elided = 0
        limit = self.budget_tokens - reserved_tokens
        protected_from = max(0, len(self._messages) - KEEP_RECENT_MESSAGES)
        for index in range(protected_from):
            if self.tokens <= limit:
                break
            message = self._messages[index]
            if not isinstance(message, ToolMessage) or message.status == "error":
                continue
            if message.content.startswith(ELIDED_PREFIX):
                continue
            first_line = message.content.splitlines()[0][:120] if message.content else ""
            stub = f"{ELIDED_PREFIX}; call {message.name} again if needed] {first_line}"
            self._messages[index] = replace(message, content=stub)
            size = _size(self._messages[index])
            self._total += size - self._sizes[index]
            self._sizes[index] = size
            elided += 1
        if elided:
            self.compactions += 1
        return elided
