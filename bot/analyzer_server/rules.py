"""What an OpenAI-compatible endpoint refuses with 400, checked before anything is answered.

The real API refuses a conversation whose tool calls are not answered one by one, a tool
message that answers nothing, a repeated call id, a tool name outside its pattern, a
`tool_choice` naming a tool it was not given; vLLM refuses a prompt longer than the
model's window. A client that only ever meets a lenient server learns none of this until
production: the analyzer server and the loopback server of the tests refuse the same
things, with the same words, so every OpenAI-path test meets the real rules.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from engines.tokens import count_tokens

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})


@dataclass(frozen=True, slots=True)
class Refusal:
    """A 400 the endpoint answers: the message and, like OpenAI's, the parameter at fault."""

    message: str
    param: str | None = None

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": "invalid_request_error",
                          "param": self.param, "code": None}}


@lru_cache(maxsize=8192)
def _tokens(text: str) -> int:
    """A conversation resends every earlier message each turn: count each text once."""
    return count_tokens(text)


def prompt_tokens(body: Mapping[str, Any]) -> int:
    """The prompt's tokens as a server counts them: every message and every tool schema."""
    messages = body.get("messages") or []
    total = 0
    for message in messages:
        content = message.get("content") if isinstance(message, Mapping) else None
        total += 4 + _tokens(content if isinstance(content, str) else
                             json.dumps(content) if content else "")
        for call in (message.get("tool_calls") or []) if isinstance(message, Mapping) else ():
            total += _tokens(json.dumps(call, sort_keys=True))
    if tools := body.get("tools"):
        total += _tokens(json.dumps(tools, sort_keys=True))
    return total


def check_chat_request(body: Any, *, context_tokens: int | None = None,
                       count: Callable[[Mapping[str, Any]], int] = prompt_tokens
                       ) -> Refusal | None:
    """The first rule `body` breaks, or None when the endpoint would take it."""
    if not isinstance(body, Mapping):
        return Refusal("We could not parse the JSON body of your request.")
    if not isinstance(body.get("model"), str) or not body["model"]:
        return Refusal("you must provide a model parameter", "model")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return Refusal("'messages' must contain at least one message", "messages")
    refusal = _check_tools(body) or _check_messages(messages)
    if refusal is None and context_tokens is not None:
        used = count(body)
        if used > context_tokens:
            refusal = Refusal(
                f"This model's maximum context length is {context_tokens} tokens. However, "
                f"your request has {used} input tokens. Please reduce the length of the "
                "input messages.", "messages")
    return refusal


def _check_tools(body: Mapping[str, Any]) -> Refusal | None:
    tools = body.get("tools")
    names: list[str] = []
    if tools is not None:
        if not isinstance(tools, list):
            return Refusal("Invalid type for 'tools': expected an array.", "tools")
        for index, tool in enumerate(tools):
            function = tool.get("function") if isinstance(tool, Mapping) else None
            name = function.get("name") if isinstance(function, Mapping) else None
            if not isinstance(name, str) or not TOOL_NAME.match(name):
                return Refusal(f"Invalid 'tools[{index}].function.name': string does not "
                               "match pattern. Expected a string that matches the pattern "
                               f"'{TOOL_NAME.pattern}'.", f"tools[{index}].function.name")
            names.append(name)
        if len(set(names)) != len(names):
            return Refusal("Tool names must be unique.", "tools")
    choice = body.get("tool_choice")
    if choice is None:
        return None
    if not names and choice != "none":
        return Refusal("Invalid value for 'tool_choice': 'tool_choice' is only allowed when "
                       "'tools' are specified.", "tool_choice")
    if isinstance(choice, Mapping):
        function = choice.get("function")
        wanted = function.get("name") if isinstance(function, Mapping) else None
        if wanted not in names:
            return Refusal(f"Tool choice '{wanted}' not found in 'tools' list.", "tool_choice")
    elif choice not in ("none", "auto", "required"):
        return Refusal(f"Invalid value: '{choice}'. Supported values are: 'none', 'auto', and "
                       "'required'.", "tool_choice")
    return None


def _check_messages(messages: list[Any]) -> Refusal | None:
    """Every assistant tool call answered by one tool message before the next turn; no tool
    message without its call; no call id twice."""
    pending: dict[str, int] = {}
    seen: set[str] = set()
    for index, message in enumerate(messages):
        role = message.get("role") if isinstance(message, Mapping) else None
        if role not in _ROLES:
            return Refusal(f"Invalid value: '{role}'. Supported values are: 'system', "
                           "'assistant', 'user', 'tool', and 'developer'.",
                           f"messages[{index}].role")
        if role != "tool" and pending:
            return _unanswered(pending)
        if role == "assistant":
            for call in message.get("tool_calls") or []:
                call_id = call.get("id") if isinstance(call, Mapping) else None
                if not isinstance(call_id, str) or not call_id:
                    return Refusal("Missing required parameter: 'id'.",
                                   f"messages[{index}].tool_calls")
                if call_id in seen:
                    return Refusal(f"Duplicate value for 'tool_call_id' of {call_id} in "
                                   f"message[{index}]. Please make sure all tool call IDs "
                                   "are unique.", f"messages[{index}].tool_calls")
                seen.add(call_id)
                pending[call_id] = index
        elif role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in pending:
                return Refusal("Invalid parameter: messages with role 'tool' must be a response "
                               "to a preceeding message with 'tool_calls'.",
                               f"messages.[{index}].role")
            del pending[call_id]
    return _unanswered(pending) if pending else None


def _unanswered(pending: Mapping[str, int]) -> Refusal:
    ids = ", ".join(pending)
    return Refusal("An assistant message with 'tool_calls' must be followed by tool messages "
                   "responding to each 'tool_call_id'. The following tool_call_ids did not "
                   f"have response messages: {ids}", "messages")
