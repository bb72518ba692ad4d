"""Native tool calling on the chat-completions wire: our messages and tools as the API's
JSON, and a completion back as a reply (read as ReAct text when a server passes the
model's own tool syntax through as content).

Apart from engines/openai_model.py (the client: retries, errors, modes) so each reads alone.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from openai.types.chat import ChatCompletion

from engines._react_text import parse_react
from engines.model import (
    AssistantMessage,
    Message,
    ModelReply,
    SystemMessage,
    ToolCall,
    ToolMessage,
    ToolSpec,
    Usage,
    UserMessage,
)


def forced_choice(tools: Sequence[ToolSpec]) -> dict[str, Any] | str:
    """`tool_choice` that makes the model call the one tool offered, or one of several."""
    if len(tools) == 1:
        return {"type": "function", "function": {"name": tools[0].name}}
    return "required"


def tool_param(spec: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": spec.name, "description": spec.description,
                     "parameters": spec.parameters},
    }


def native_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Our messages in the chat-completions wire format."""
    out: list[dict[str, Any]] = []
    for message in messages:
        match message:
            case SystemMessage(content=content) | UserMessage(content=content):
                out.append({"role": message.role, "content": content})
            case AssistantMessage(content=content, tool_calls=calls):
                entry: dict[str, Any] = {"role": "assistant", "content": content or None}
                if calls:
                    entry["tool_calls"] = [_call_param(call) for call in calls]
                out.append(entry)
            case ToolMessage(call_id=call_id, content=content):
                out.append({"role": "tool", "tool_call_id": call_id, "content": content})
    return out


def _call_param(call: ToolCall) -> dict[str, Any]:
    """A past call as the wire wants it: always valid JSON.

    Some servers (vLLM) re-parse past arguments to render their chat template and reject
    the whole request on invalid JSON. So arguments are re-serialised (repaired text-mode
    input included), and a call whose arguments did not parse is replayed as `{}`: the
    error observation that follows it already quotes the text the model sent.
    """
    arguments = "{}" if call.arguments is None else json.dumps(call.arguments)
    return {"id": call.id, "type": "function",
            "function": {"name": call.name, "arguments": arguments}}


def parse_arguments(text: str) -> dict[str, Any] | None:
    """Native arguments are parsed strictly: invalid JSON is the model's mistake to see.

    Empty text is a call without arguments (some servers send "" for a no-argument tool).
    """
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def native_reply(completion: ChatCompletion, tools: Sequence[ToolSpec],
                 id_prefix: str) -> ModelReply:
    """Map a completion back; a reply with no tool calls is read as ReAct text too, because
    servers without a tool parser pass the model's own tool syntax through as content."""
    usage = completion_usage(completion)
    message = completion.choices[0].message if completion.choices else None
    if message is None:
        return ModelReply("", (), usage)
    content = (message.content or message.refusal or "").strip()
    calls: list[ToolCall] = []
    for index, item in enumerate(message.tool_calls or ()):
        function = getattr(item, "function", None) or getattr(item, "custom", None)
        name = str(getattr(function, "name", "") or "")
        raw = str(getattr(function, "arguments", None) or getattr(function, "input", "") or "")
        call_id = item.id or f"{id_prefix}{index}"
        calls.append(ToolCall(call_id, name, parse_arguments(raw), raw))
    if calls:
        return ModelReply(content, tuple(calls), usage)
    parsed = parse_react(content, tools, id_prefix=id_prefix)
    return ModelReply(parsed.thought if parsed.tool_calls else content, parsed.tool_calls, usage)


def completion_usage(completion: ChatCompletion) -> Usage:
    usage = completion.usage
    if usage is None:
        return Usage()
    return Usage(usage.prompt_tokens or 0, usage.completion_tokens or 0)
