"""The conversation in the text ReAct format, written for a model without tool calling and
read back by a server that plays one.

`to_text_messages` writes it: the tools become a section of the system prompt, past calls
become `Action:` lines, tool results become user turns labelled `Observation from NAME:`,
and consecutive user turns are merged (many chat templates reject two in a row), a part
that is not an observation set off by a `---` line so that its end is never mistaken for
an observation's. `read_text_messages` is its inverse, for the analyzer server in text
mode: what it reads is exactly what an LLM was sent, and a test keeps the two in step.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from engines._react_text import parse_react
from engines.diagnosis import SUBMIT_TOOL
from engines.model import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    ToolSpec,
    UserMessage,
)
from engines.short_catalog import LIST_TOOLS, schema_tokens
from engines.tokens import count_tokens

STOP_SEQUENCES = ("\nObservation:",)
INSTRUCTIONS_HEADING = "## How to call tools"
PART_SEPARATOR = "\n\n---\n\n"  # between merged user parts that are not observations

_ERROR_TAG = " (error)"
_SCHEMA_LABEL = "  arguments (JSON schema): "
_TOOL_ENTRY = re.compile(r"^- (?P<name>[A-Za-z0-9_.-]+): (?P<description>.*?)\n"
                         + re.escape(_SCHEMA_LABEL) + r"(?P<schema>[^\n]*)$", re.M | re.S)
_OBSERVATION = re.compile(r"^Observation from (?P<name>[A-Za-z0-9_.-]*)(?P<error>"
                          + re.escape(_ERROR_TAG) + r")?:\n", re.S)
_PARTS = re.compile(re.escape(PART_SEPARATOR) + r"|\n\n(?=Observation from [A-Za-z0-9_.-]*(?:"
                    + re.escape(_ERROR_TAG) + r")?:\n)")


# ---------------------------------------------------------------- writing


def render_tool_instructions(tools: Iterable[ToolSpec]) -> str:
    """The system prompt section that replaces native tool calling."""
    specs = list(tools)
    lines = [
        INSTRUCTIONS_HEADING,
        "You have no native tool calling. Answer in exactly this format:",
        "",
        "Thought: what you think now and why",
        "Action: <one tool name from the list below>",
        "Action Input: <the arguments as one JSON object, double-quoted>",
        "",
        "You may write several Action / Action Input pairs to run tools together. Then stop:",
        "the observations come back in the next message. Never write an Observation yourself.",
        f"When you are done, call {SUBMIT_TOOL} the same way, with the diagnosis as its "
        "Action Input.",
    ]
    if any(spec.name == LIST_TOOLS for spec in specs):
        lines.append(f"The list is short: {LIST_TOOLS} names more tools, called the same way.")
    lines += ["", "## Tools"]
    for spec in specs:
        lines.append(f"- {spec.name}: {spec.description.strip()}")
        lines.append(f"{_SCHEMA_LABEL}{json.dumps(spec.parameters, sort_keys=True)}")
    return "\n".join(lines)


def catalog_tokens(tools: Sequence[ToolSpec], *, text_mode: bool) -> int:
    """What offering `tools` costs in every request: their JSON schemas natively, their
    section of the system prompt (instructions included) in text mode."""
    if not text_mode:
        return schema_tokens(tools)
    return _count(render_tool_instructions(tools)) + 1  # and the blank line before it


@lru_cache(maxsize=64)
def _count(text: str) -> int:
    """The catalog changes only when a tool is added or banned: count each one once."""
    return count_tokens(text)


def render_action(call: ToolCall) -> str:
    """A call as the model would have written it, to replay the history in text mode."""
    shown = call.raw_arguments if call.arguments is None else json.dumps(call.arguments)
    return f"Action: {call.name}\nAction Input: {shown}"


def render_reply(thought: str, calls: Sequence[ToolCall]) -> str:
    """A whole turn as a text model writes it: its thought, then its actions."""
    parts = [f"Thought: {thought.strip()}"] if thought.strip() else []
    return "\n".join([*parts, *(render_action(call) for call in calls)])


def render_observation(name: str, content: str, status: str = "success") -> str:
    tag = "" if status == "success" else _ERROR_TAG
    return f"Observation from {name}{tag}:\n{content}"


def to_text_messages(
    messages: Sequence[Message], tools: Sequence[ToolSpec]
) -> list[dict[str, str]]:
    """The transcript for a model without tool calling."""
    instructions = render_tool_instructions(tools)
    out: list[dict[str, str]] = []
    if not any(isinstance(m, SystemMessage) for m in messages):
        out.append({"role": "system", "content": instructions})
    for message in messages:
        match message:
            case SystemMessage(content=content):
                first = not any(m["role"] == "system" for m in out)
                text = f"{content}\n\n{instructions}" if first else content
                out.append({"role": "system", "content": text})
            case UserMessage(content=content):
                _append_user(out, content, PART_SEPARATOR)
            case AssistantMessage(content=content, tool_calls=calls):
                out.append({"role": "assistant", "content": render_reply(content, calls)})
            case ToolMessage(name=name, content=content, status=status):
                _append_user(out, render_observation(name, content, status), "\n\n")
    return out


def _append_user(out: list[dict[str, str]], content: str, joint: str) -> None:
    if out and out[-1]["role"] == "user":
        out[-1]["content"] += joint + content
    else:
        out.append({"role": "user", "content": content})


# ---------------------------------------------------------------- reading


def is_text_conversation(raw: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a chat request is written in this format (its system prompt says how)."""
    return any(m.get("role") in ("system", "developer") and INSTRUCTIONS_HEADING in
               _text(m.get("content")) for m in raw)


def read_tool_instructions(text: str) -> tuple[str, tuple[ToolSpec, ...]]:
    """A system prompt split back into the prompt proper and the tools it describes."""
    prompt, found, section = text.rpartition(INSTRUCTIONS_HEADING)
    if not found:
        return text, ()
    tools = section.split("\n## Tools\n", 1)[1] if "\n## Tools\n" in section else ""
    specs = []
    for entry in _TOOL_ENTRY.finditer(tools):
        try:
            parameters = json.loads(entry["schema"])
        except ValueError:
            parameters = {}
        specs.append(ToolSpec(entry["name"], entry["description"],
                              parameters if isinstance(parameters, dict) else {}))
    return prompt.removesuffix("\n\n"), tuple(specs)


def read_text_messages(
    raw: Sequence[Mapping[str, Any]],
) -> tuple[tuple[Message, ...], tuple[ToolSpec, ...]]:
    """The engine's messages and the offered tools of a text-mode chat request.

    Actions are read with the same parser the client uses, and each observation answers
    the oldest unanswered call of its tool (a text model's calls have no ids): the pairing
    is the one the engine made, because it answers every call, in order.
    """
    out: list[Message] = []
    specs: tuple[ToolSpec, ...] = ()
    pending: list[ToolCall] = []
    for index, message in enumerate(raw):
        role, content = message.get("role"), _text(message.get("content"))
        if role in ("system", "developer"):
            prompt, listed = read_tool_instructions(content)
            specs = specs or listed
            out.append(SystemMessage(prompt))
        elif role == "assistant":
            parsed = parse_react(content, specs, id_prefix=f"text_{index}_")
            pending = list(parsed.tool_calls)
            out.append(AssistantMessage(parsed.thought, parsed.tool_calls))
        elif role == "user":
            for part in _PARTS.split(content):
                if (label := _OBSERVATION.match(part)) is None:
                    out.append(UserMessage(part))
                    continue
                name = label["name"]
                call = next((c for c in pending if c.name == name), None)
                if call is not None:
                    pending.remove(call)
                out.append(ToolMessage(call.id if call else f"text_{index}_orphan", name,
                                       part[label.end():],
                                       "error" if label["error"] else "success"))
    return tuple(out), specs


def _text(content: Any) -> str:
    """Message content as text: a string, or the text parts of a content array."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content
                       if isinstance(part, Mapping) and part.get("type") == "text")
    return ""
