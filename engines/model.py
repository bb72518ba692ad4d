"""The one model interface every engine talks to, and the messages it exchanges.

Three implementations share it: the OpenAI client (any OpenAI-compatible endpoint), the
offline analyzer, and the scripted double of the tests. Tool results carry both the
text an LLM reads and nothing else: a model that is code (the analyzer) reads the same text
back, so what it can conclude is what an LLM could.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from engines.constraints import ConstraintSet


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as a model sees it: name, description and JSON schema of its arguments."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A call the model asked for.

    `arguments` is None when the model's argument text was not valid JSON; `raw_arguments`
    keeps the text so the error shown back to the model can quote it.
    """

    id: str
    name: str
    arguments: dict[str, Any] | None
    raw_arguments: str = ""


@dataclass(frozen=True, slots=True)
class SystemMessage:
    content: str
    role: Literal["system"] = "system"


@dataclass(frozen=True, slots=True)
class UserMessage:
    content: str
    role: Literal["user"] = "user"


@dataclass(frozen=True, slots=True)
class AssistantMessage:
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    role: Literal["assistant"] = "assistant"


@dataclass(frozen=True, slots=True)
class ToolMessage:
    call_id: str
    name: str
    content: str
    status: Literal["success", "error"] = "success"
    role: Literal["tool"] = "tool"


Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage


@dataclass(frozen=True, slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens
        )


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """Everything a model needs for one turn.

    `constraints` (rules as text) and `lessons` are also rendered into the messages for
    LLMs; `constraint_set` gives the same constraints typed, so that a model that is code
    can obey them without parsing prose. `final` is set on the last turn a run allows: the
    model must submit its best diagnosis now.
    """

    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...]
    constraints: tuple[str, ...] = ()
    constraint_set: ConstraintSet = field(default_factory=ConstraintSet)
    lessons: tuple[str, ...] = ()
    step: int = 1
    max_steps: int = 1
    final: bool = False
    context: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ModelReply:
    """One turn of the model: a thought and the tool calls it wants next."""

    thought: str
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = Usage()


@runtime_checkable
class Model(Protocol):
    """Anything that can take a turn in an investigation."""

    @property
    def name(self) -> str: ...

    async def complete(self, request: ModelRequest) -> ModelReply: ...
