"""The conversation sent to the model, compacted when it nears the context budget.

Compaction replaces the oldest successful observations with a one-line stub; it never
touches the incident, constraints, error observations, the tool listing of a short catalog
or the last few steps, because those are what keep the model honest and on course (and a
model that lost the listing could no longer call the tools it lists).
"""

from __future__ import annotations

from dataclasses import replace

from engines.model import AssistantMessage, Message, ToolCall, ToolMessage
from engines.short_catalog import LIST_TOOLS
from engines.tokens import count_tokens

KEEP_RECENT_MESSAGES = 8
ELIDED_PREFIX = "[older observation elided to save context"
"""How a compacted observation starts: the analyzer knows by it that the text is no longer
the tool's, so it quotes nothing from it."""


MESSAGE_TOKENS = 4  # what a message costs beside its text (its role, its delimiters)
CALL_TOKENS = 8  # what a call costs beside its name and arguments: natively its id and JSON
# wrapper, in text mode the `Action:` labels; and a result beside its text: its call's id,
# or its `Observation from` label (measured on the 8k suite: 6 on average, in text mode)
RESULT_TOKENS = 8


def _size(message: Message) -> int:
    text = message.content
    size = MESSAGE_TOKENS
    if isinstance(message, AssistantMessage):
        text += "".join(f"{c.name}{c.raw_arguments or c.arguments}" for c in message.tool_calls)
        size += CALL_TOKENS * len(message.tool_calls)
    elif isinstance(message, ToolMessage):
        size += RESULT_TOKENS
    return count_tokens(text) + size


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

    def answer_open_calls(self, text: str) -> int:
        """Answer, as errors, the tool calls that got no result (time ran out mid-step).

        An assistant message whose calls are not each followed by a tool message is a
        conversation the API refuses with 400: the forced last turn would fail and the
        run would end with no diagnosis. Returns how many calls were answered.
        """
        answered = {m.call_id for m in self._messages if isinstance(m, ToolMessage)}
        fixed: list[Message] = []
        missing: list[ToolCall] = []
        for message in [*self._messages, None]:
            if not isinstance(message, ToolMessage):  # the end of a call's answers
                fixed += [ToolMessage(c.id, c.name, text, "error") for c in missing]
                missing = []
            if message is None:
                break
            fixed.append(message)
            if isinstance(message, AssistantMessage):
                missing = [c for c in message.tool_calls if c.id not in answered]
        added = len(fixed) - len(self._messages)
        if added:
            self._messages = fixed
            self._sizes = [_size(m) for m in fixed]
            self._total = sum(self._sizes)
        return added

    def compact(self, reserved_tokens: int = 0) -> int:
        """Elide old observations until the history fits; returns how many were elided."""
        elided = 0
        limit = self.budget_tokens - reserved_tokens
        protected_from = max(0, len(self._messages) - KEEP_RECENT_MESSAGES)
        for index in range(protected_from):
            if self.tokens <= limit:
                break
            message = self._messages[index]
            if not isinstance(message, ToolMessage) or message.status == "error" \
                    or message.name == LIST_TOOLS:
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
