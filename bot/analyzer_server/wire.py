"""Chat-completions JSON to the engine's messages and back, for the analyzer server.

The server is stateless: everything the analyzer knows comes from the request, as for an
LLM. The report and clock come from the incident message, the constraints in force and the
lessons from the system prompt, the observations from the tool messages' text. Nothing
travels beside the conversation, so a conversation replayed gives the same answer.

A conversation in the text ReAct format (a client driving a model without tool calling)
is read back with engines.text_transcript: the tools from the system prompt's tool
section, the calls from the `Action:` lines, the observations from the user turns; and
answered in the same format, as text.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from engines import prompts
from engines.analyzer.reflect import incident_of
from engines.constraints import ConstraintSet, from_rule
from engines.diagnosis import SUBMIT_TOOL
from engines.model import (
    AssistantMessage,
    Message,
    ModelReply,
    ModelRequest,
    SystemMessage,
    ToolCall,
    ToolMessage,
    ToolSpec,
    UserMessage,
)
from engines.text_transcript import is_text_conversation, read_text_messages, render_reply
from engines.tokens import count_tokens

ERROR_PREFIX = "ERROR:"  # how the toolset starts a failed call's observation


def _text(content: Any) -> str:
    """Message content as text: a string, or the text parts of a content array."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content
                       if isinstance(part, Mapping) and part.get("type") == "text")
    return ""


def conversation(body: Mapping[str, Any]) -> tuple[tuple[Message, ...], tuple[ToolSpec, ...]]:
    """The messages and the offered tools of a chat request, native or text ReAct."""
    raw = body["messages"]
    if not body.get("tools") and is_text_conversation(raw):
        return read_text_messages(raw)
    return messages_from_chat(raw), _tools(body.get("tools") or [])


def _call(raw: Mapping[str, Any]) -> ToolCall:
    function = raw.get("function") or {}
    text = str(function.get("arguments") or "")
    try:
        arguments = json.loads(text) if text else {}
    except ValueError:
        arguments = None
    if not isinstance(arguments, dict):
        arguments = None
    return ToolCall(str(raw.get("id")), str(function.get("name")), arguments, text)


def messages_from_chat(raw: Sequence[Mapping[str, Any]]) -> tuple[Message, ...]:
    """The engine's messages for a chat request's (already validated) messages."""
    names: dict[str, str] = {}
    out: list[Message] = []
    for message in raw:
        role, content = message.get("role"), _text(message.get("content"))
        if role in ("system", "developer"):
            out.append(SystemMessage(content))
        elif role == "user":
            out.append(UserMessage(content))
        elif role == "assistant":
            calls = tuple(_call(c) for c in message.get("tool_calls") or [])
            names.update((c.id, c.name) for c in calls)
            out.append(AssistantMessage(content, calls))
        elif role == "tool":
            call_id = str(message.get("tool_call_id"))
            failed = content.startswith(ERROR_PREFIX)
            out.append(ToolMessage(call_id, names.get(call_id, ""), content,
                                   "error" if failed else "success"))
    return tuple(out)


def _tools(raw: Sequence[Mapping[str, Any]]) -> tuple[ToolSpec, ...]:
    specs = []
    for tool in raw:
        function = tool.get("function") or {}
        specs.append(ToolSpec(str(function.get("name")), str(function.get("description") or ""),
                              dict(function.get("parameters") or {})))
    return tuple(specs)


def request_from_chat(body: Mapping[str, Any]) -> ModelRequest:
    """The ModelRequest an in-process engine would have built for this conversation."""
    messages, tools = conversation(body)
    if body.get("tool_choice") == "none":
        tools = ()
    system = "\n\n".join(m.content for m in messages if isinstance(m, SystemMessage))
    constraints = ConstraintSet()
    for rule in prompts.read_constraints(system):
        constraints.add(from_rule(rule))
    report, now = incident_of(messages)
    choice = body.get("tool_choice")
    forced = choice.get("function", {}).get("name") if isinstance(choice, Mapping) else None
    turns = sum(isinstance(m, AssistantMessage) for m in messages)
    return ModelRequest(
        messages=tuple(m for m in messages if not isinstance(m, SystemMessage)),
        tools=tools,
        constraints=constraints.rules,
        constraint_set=constraints,
        lessons=tuple(prompts.read_lessons(system)),
        step=turns + 1,
        max_steps=1_000,  # the engine counts steps and forces the last turn itself
        final=forced == SUBMIT_TOOL,
        context={"incident": report, "now": now},
    )


def completion_body(reply: ModelReply, model: str, prompt_tokens: int, *,
                    text: bool = False) -> dict[str, Any]:
    """A chat completion as the API returns it, with usage counted as a server would;
    `text`: the turn written in the text ReAct format, as a model without tool calling."""
    calls: list[dict[str, Any]] = [{"id": call.id, "type": "function",
              "function": {"name": call.name, "arguments": call.raw_arguments
                           or json.dumps(call.arguments or {}, sort_keys=True)}}
             for call in reply.tool_calls]
    message: dict[str, Any] = {"role": "assistant", "content": reply.thought or None}
    if text:  # a turn without calls (a reflection) is its prose alone
        message["content"] = render_reply(reply.thought, reply.tool_calls) \
            if reply.tool_calls else reply.thought
        calls = []
    if calls:
        message["tool_calls"] = calls
    completion_tokens = count_tokens((message["content"] or "") + "".join(
        c["function"]["name"] + c["function"]["arguments"] for c in calls))
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }
