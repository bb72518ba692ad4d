"""The text ReAct format, for models that cannot call tools natively: reading their replies
(engines/text_transcript.py writes the conversation they read).

Small local models (Ollama, llama.cpp, vLLM without a tool parser) answer in prose, and in
a dozen dialects of it: labels in bold, JSON in code fences, single quotes, trailing commas,
function-call syntax, made-up observations, `<think>` blocks, JSON-only replies. The parser
accepts all of these where the intent is unambiguous, and otherwise says so honestly: input
that cannot be repaired safely becomes `arguments=None` with the raw text (the engine shows
the model its mistake), and a reply with no recognisable action has no tool calls (the
engine asks again). It never guesses `{}` for arguments it could not read.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engines.diagnosis import SUBMIT_TOOL
from engines.model import ToolCall, ToolSpec

_FENCE_LINE = re.compile(r"^[ \t]*```[\w+-]*[ \t]*$", re.M)
_THINK = re.compile(r"<think(?:ing)?>(?P<body>.*?)(?:</think(?:ing)?>|\Z)", re.S | re.I)
_TOOL_CALL_TAG = re.compile(r"<tool_call>(?P<body>.*?)(?:</tool_call>|\Z)", re.S | re.I)
_LABEL = re.compile(
    r"^[ \t>*_#-]*(?P<label>thought|action[ _]?input|action|final[ _]?answer|observation)"
    r"[ \t*_]*:[ \t*_]*",
    re.I | re.M,
)
_NAME = re.compile(r"[A-Za-z_][\w.-]*")
_TAGGED_NAME = re.compile(r"[\"']name[\"']\s*:\s*[\"']([\w.-]+)")
_PAIR = re.compile(r"^\s*[-*]?\s*([A-Za-z_]\w*)\s*[:=]\s*(\S.*?)\s*,?\s*$")
_JSON_START = re.compile(r"^[ \t]*\{", re.M)
_NO_ACTION = frozenset({"none", "null", "n/a", "na", "nothing"})
_ACTION_KEYS = (("action", "action_input"), ("name", "arguments"), ("name", "parameters"),
                ("tool", "tool_input"), ("tool", "arguments"))


@dataclass(frozen=True, slots=True)
class ParsedText:
    """What a text reply meant: the reasoning shown to humans and the calls to run."""

    thought: str
    tool_calls: tuple[ToolCall, ...] = ()


# ---------------------------------------------------------------- lenient JSON


def loads_lenient(text: str) -> Any:
    """Parse JSON, repairing only what has one reading: quotes, trailing commas, constants.

    Single-quoted strings, trailing commas, Python's True/False/None and bare object keys
    are rewritten token by token (never inside strings); anything else that is not JSON
    raises ValueError rather than being guessed at.
    """
    try:
        return json.loads(text, strict=False)
    except ValueError:
        pass
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    try:
        return json.loads(_repair(text), strict=False)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


_TOKEN = re.compile(
    r"""(?P<ws>\s+)|(?P<dq>"(?:[^"\\]|\\.)*")|(?P<sq>'(?:[^'\\]|\\.)*')"""
    r"""|(?P<punct>[{}\[\],:])|(?P<word>[A-Za-z0-9_.+-]+)""",
    re.S,
)
_CONSTANTS = {"True": "true", "False": "false", "None": "null",
              "true": "true", "false": "false", "null": "null"}


def _repair(text: str) -> str:
    tokens: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None or match.lastgroup is None:
            raise ValueError(f"cannot read JSON near {text[pos:pos + 20]!r}")
        pos = match.end()
        if match.lastgroup != "ws":
            tokens.append((match.lastgroup, match.group()))
    out: list[str] = []
    for index, (kind, value) in enumerate(tokens):
        following = tokens[index + 1][1] if index + 1 < len(tokens) else ""
        if kind == "punct" and value == "," and following in {"}", "]"}:
            continue
        if kind == "sq":
            body = value[1:-1].replace("\\'", "'").replace('"', '\\"')
            out.append(f'"{body}"')
        elif kind == "word" and value in _CONSTANTS and following != ":":
            out.append(_CONSTANTS[value])
        elif kind == "word" and following == ":" and not _is_number(value):
            out.append(json.dumps(value))
        else:
            out.append(value)
    return "".join(out)


def _is_number(word: str) -> bool:
    try:
        float(word)
    except ValueError:
        return False
    return True


def _balanced(text: str, start: int) -> int:
    """The end of the bracketed value opening at `start`, or len(text) if it never closes."""
    depth, quote, escaped = 0, "", False
    for index in range(start, len(text)):
        char = text[index]
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return index + 1
    return len(text)


def _read_value(text: str) -> tuple[Any, str, bool]:
    """(value, raw, ok) of the JSON value that `text` starts with; prose after it is dropped."""
    stripped = text.strip().strip("`").strip()
    if stripped.lower().startswith("json") and stripped[4:5] in {"", " ", "\n", "{"}:
        stripped = stripped[4:].lstrip()
    if not stripped:
        return None, "", False
    if stripped[0] in "{[":
        raw = stripped[: _balanced(stripped, 0)]
    elif pairs := _pairs(stripped):
        return pairs
    else:
        raw = stripped.splitlines()[0].strip()
    try:
        return loads_lenient(raw), raw, True
    except ValueError:
        return (raw, raw, True) if stripped[0] not in "{[\"'" else (None, raw, False)


def _pairs(text: str) -> tuple[dict[str, Any], str, bool] | None:
    """`key: value` or `key=value` lines (YAML-ish input), one pair a line, read as an object."""
    found: dict[str, Any] = {}
    lines: list[str] = []
    for line in text.splitlines():
        match = _PAIR.match(line)
        if match is None:
            break
        key, value = match.groups()
        try:
            found[key] = loads_lenient(value)
        except ValueError:
            if value[0] in "{[":
                return None  # broken structure: not a bare word to take as a string
            found[key] = value.strip("'\"")
        lines.append(line.strip())
    return (found, "\n".join(lines), True) if found else None


# ---------------------------------------------------------------- arguments


def fit_arguments(value: Any, spec: ToolSpec | None) -> dict[str, Any] | None:
    """Shape a parsed Action Input into a tool's arguments, where the schema leaves no doubt.

    A bare value for a tool of one parameter becomes that parameter; `{"diagnosis": {...}}`
    is unwrapped when the tool has no such parameter. Anything else that is not an object
    is None: the engine will tell the model the input was not a JSON object.
    """
    properties: dict[str, Any] = (spec.parameters.get("properties") or {}) if spec else {}
    if isinstance(value, dict):
        if len(value) == 1 and properties:
            (key, inner), = value.items()
            if key not in properties and isinstance(inner, dict) and set(inner) <= set(properties):
                return inner
        return value
    if len(properties) == 1 and value is not None:
        return {next(iter(properties)): value}
    return None


def _call(name: str, value: Any, raw: str, ok: bool, call_id: str,
          specs: dict[str, ToolSpec]) -> ToolCall:
    arguments = fit_arguments(value, specs.get(name)) if ok else None
    return ToolCall(call_id, name, arguments, raw)


# ---------------------------------------------------------------- parsing


def parse_react(
    text: str, tools: Sequence[ToolSpec] = (), *, id_prefix: str = "call_"
) -> ParsedText:
    """Read a ReAct reply: `Thought: … / Action: name / Action Input: {json}`, repeated.

    `Final Answer:` becomes a `submit_diagnosis` call. A reply in none of the known shapes
    comes back as thought only.
    """
    specs = {spec.name: spec for spec in tools}
    thinking = " ".join(m.group("body").strip() for m in _THINK.finditer(text))
    body = _FENCE_LINE.sub("", _THINK.sub("", text)).strip()

    if _TOOL_CALL_TAG.search(body):
        return _parse_tagged(body, thinking, specs, id_prefix)
    segments = _segments(body)
    if any(label in {"action", "final answer"} for label, _ in segments):
        return _parse_labelled(segments, thinking, specs, id_prefix)
    if (start := _JSON_START.search(body)) and (
        call := _json_call(body[start.start():], specs, f"{id_prefix}0")
    ):
        return ParsedText(body[: start.start()].strip() or thinking, (call,))
    return ParsedText(_strip_label(body) or thinking)


def _parse_tagged(body: str, thinking: str, specs: dict[str, ToolSpec],
                  id_prefix: str) -> ParsedText:
    """Hermes/Qwen style: `<tool_call>{"name": …, "arguments": …}</tool_call>`, repeated."""
    tagged = [m.group("body") for m in _TOOL_CALL_TAG.finditer(body)]
    found = (_tagged_call(t, specs, f"{id_prefix}{n}") for n, t in enumerate(tagged))
    thought = _TOOL_CALL_TAG.sub("", body).strip() or thinking
    return ParsedText(_strip_label(thought), tuple(call for call in found if call))


def _parse_labelled(segments: list[tuple[str, str]], thinking: str,
                    specs: dict[str, ToolSpec], id_prefix: str) -> ParsedText:
    """The classic format: Thought / Action / Action Input, repeated, or Final Answer."""
    thoughts: list[str] = []
    calls: list[ToolCall] = []
    for index, (label, content) in enumerate(segments):
        if label == "observation" and calls:
            break  # the model made up an observation: what follows is fiction
        if label in {"", "thought"} and not calls:
            thoughts.append(content.strip())
        elif label == "action":
            following = segments[index + 1] if index + 1 < len(segments) else ("", "")
            given = following[1] if following[0] == "action input" else None
            if call := _action(content, given, specs, f"{id_prefix}{len(calls)}"):
                calls.append(call)
        elif label == "final answer":
            value, raw, ok = _read_value(content)
            if not (ok and isinstance(value, dict)):
                value, raw, ok = None, content.strip(), False
            calls.append(_call(SUBMIT_TOOL, value, raw, ok, f"{id_prefix}{len(calls)}", specs))
            break
    thought = "\n".join(t for t in thoughts if t) or thinking
    return ParsedText(thought, tuple(calls))


def _segments(body: str) -> list[tuple[str, str]]:
    """Split a reply at its labels into (label, text) pairs; text before any label is ''."""
    matches = list(_LABEL.finditer(body))
    segments = [("", body[: matches[0].start()] if matches else body)]
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(body)
        label = re.sub(r"[ _]", " ", match.group("label").lower())
        label = {"actioninput": "action input", "finalanswer": "final answer"}.get(label, label)
        segments.append((label, body[match.end():end]))
    return segments


def _action(content: str, given: str | None, specs: dict[str, ToolSpec],
            call_id: str) -> ToolCall | None:
    """One `Action:` segment, with its `Action Input:` text if the model wrote one."""
    first, _, rest = content.strip().partition("\n")
    first = first.strip().strip("`*'\"[]")
    match = _NAME.match(first)
    name = match.group().rstrip(".-") if match else ""
    if not name or name.lower() in _NO_ACTION:
        return None
    inline = first[len(name):].strip().strip("`*")
    if given is None and inline.startswith("(") and inline.endswith(")"):
        return _function_style(name, inline[1:-1], call_id, specs)
    source = given if given is not None else (inline if inline[:1] in "{[" else rest)
    if not source.strip():
        return ToolCall(call_id, name, {}, "")  # no input written: a call without arguments
    value, raw, ok = _read_value(source)
    return _call(name, value, raw, ok, call_id, specs)


def _function_style(name: str, inside: str, call_id: str,
                    specs: dict[str, ToolSpec]) -> ToolCall:
    """`name({"a": 1})` or `name(a="x", b=2)`: keyword values must be literals."""
    if inside.strip().startswith("{"):
        value, raw, ok = _read_value(inside)
        return _call(name, value, raw, ok, call_id, specs)
    try:
        node = ast.parse(f"f({inside})", mode="eval").body
        if not isinstance(node, ast.Call):
            raise ValueError(inside)
        arguments: Any = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg}
        if node.args:  # one positional literal is a bare value; more, or mixed, is ambiguous
            single = len(node.args) == 1 and not arguments
            arguments = ast.literal_eval(node.args[0]) if single else None
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
        # `name(namespace=shop)`: bare words, readable as pairs when no quote can hide a comma
        pairs = None if any(q in inside for q in "\"'") else _pairs(inside.replace(",", "\n"))
        if pairs is None:
            return ToolCall(call_id, name, None, inside)
        return _call(name, pairs[0], inside, True, call_id, specs)
    return _call(name, arguments, inside, arguments is not None, call_id, specs)


def _json_call(text: str, specs: dict[str, ToolSpec], call_id: str) -> ToolCall | None:
    """A JSON-only reply: `{"action": …, "action_input": …}`, `{"name": …, "arguments": …}`."""
    value, raw, ok = _read_value(text)
    if not ok or not isinstance(value, dict):
        return None
    for name_key, input_key in _ACTION_KEYS:
        name = value.get(name_key)
        if isinstance(name, str) and input_key in value:
            arguments = value[input_key]
            if isinstance(arguments, str) and arguments.strip().startswith("{"):
                inner, raw, ok = _read_value(arguments)
                return _call(_final(name), inner, raw, ok, call_id, specs)
            return _call(_final(name), arguments, json.dumps(arguments), True, call_id, specs)
    if {"category", "culprit"} <= set(value):
        return _call(SUBMIT_TOOL, value, raw, True, call_id, specs)
    return None


def _tagged_call(text: str, specs: dict[str, ToolSpec], call_id: str) -> ToolCall | None:
    """A `<tool_call>` body; a broken one still names its tool, so the model hears why."""
    if call := _json_call(text, specs, call_id):
        return call
    named = _TAGGED_NAME.search(text)
    return ToolCall(call_id, named.group(1), None, text.strip()) if named else None


def _final(name: str) -> str:
    return SUBMIT_TOOL if name.strip().lower() in {"final answer", "final_answer"} else name


def _strip_label(text: str) -> str:
    return _LABEL.sub("", text, count=1).strip() if _LABEL.match(text) else text.strip()
