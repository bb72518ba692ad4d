"""The conversation so far, read back into what the analyzer needs.

The analyzer keeps no state between turns: everything it knows is in the request (every
call it made, every observation, every human reply). That makes it deterministic, lets a
replica resume an investigation from its event log, and lets a Reflexion retry start from
a transcript. An observation's data is its text read back (observation_text.py): the
analyzer knows exactly what an LLM was sent, and nothing the budget cut.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engines._history import ELIDED_PREFIX
from engines.analyzer.observation_text import parse_observation, parse_outage
from engines.model import AssistantMessage, Message, ToolMessage, UserMessage
from tools.fallback import Outage


@dataclass(frozen=True, slots=True)
class Observation:
    """One tool result, with the call that produced it."""

    call_id: str
    tool: str
    arguments: Mapping[str, Any]
    content: str
    status: str
    data: Any
    index: int

    @property
    def ok(self) -> bool:
        return self.status == "success" and self.data is not None

    @property
    def quotable(self) -> bool:
        """Whether `content` is still the text the tool returned (not elided by compaction)."""
        return not self.content.startswith(ELIDED_PREFIX)


@dataclass(frozen=True, slots=True)
class Transcript:
    """What happened so far in one investigation."""

    observations: tuple[Observation, ...] = ()
    user_texts: tuple[str, ...] = ()
    turns: int = 0
    calls_made: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    outages: tuple[Outage, ...] = ()
    """What the outage notes of error observations said: sources down, other ways to read."""

    def called(self, name: str, arguments: Mapping[str, Any]) -> bool:
        """Whether this exact call was already made (the engine counts a repeat as a loop)."""
        return (name, dict(arguments)) in self.calls_made

    def called_tool(self, name: str) -> bool:
        return any(made == name for made, _ in self.calls_made)


def read_transcript(messages: Sequence[Message]) -> Transcript:
    """Pair every tool result with its call; collect what humans said."""
    arguments: dict[str, Mapping[str, Any]] = {}
    observations: list[Observation] = []
    users: list[str] = []
    made: list[tuple[str, Mapping[str, Any]]] = []
    outages: list[Outage] = []
    turns = 0
    for message in messages:
        if isinstance(message, AssistantMessage):
            turns += 1
            for call in message.tool_calls:
                arguments[call.id] = dict(call.arguments or {})
                made.append((call.name, arguments[call.id]))
        elif isinstance(message, ToolMessage):
            ok = message.status == "success"
            observations.append(Observation(
                call_id=message.call_id, tool=message.name,
                arguments=arguments.get(message.call_id, {}), content=message.content,
                status=message.status, data=parse_observation(message.content) if ok else None,
                index=len(observations),
            ))
            if not ok and (outage := parse_outage(message.content)) is not None:
                outages.append(outage)
        elif isinstance(message, UserMessage):
            users.append(message.content)
    return Transcript(tuple(observations), tuple(users), turns, tuple(made), tuple(outages))

