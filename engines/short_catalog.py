"""The short catalog: a small model is shown the tools most often useful, and asks for more.

Eighteen tools with their JSON schemas cost about 5,000 tokens in every request: two thirds
of an 8k window before the incident is even stated, and a model reading tools as prose
(text ReAct) follows a long list worse than a short one. So a model in text mode, and any
model whose window the full schemas would crowd (more than 1/SCHEMA_SHARE of it), is
offered the core tools only (ranked from measured use in tools/catalog.py) and
`list_tools`. Its answer lists every other tool in one line (name, arguments, what it
does); `list_tools(name=...)` gives one tool's whole description and schema and adds the
tool to those offered from the next turn, because a model with native tool calling can
only call tools it was sent. Any tool of the toolset may be called by name whatever was
offered; the toolset answers `list_tools` itself (tools/toolset.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from engines.model import ToolSpec
from engines.tokens import count_tokens

LIST_TOOLS = "list_tools"
SCHEMA_SHARE = 4  # full schemas over a quarter of the window: offer the short catalog
LINE_CHARACTERS = 80  # a description in the listing is cut to about this, at a word

LIST_TOOLS_SPEC = ToolSpec(
    LIST_TOOLS,
    "List the tools not shown here, one line each: name, arguments (? marks an optional "
    "one; a type is given unless it is a string) and what it does. Call any of them by "
    "name like the others. With name, the full description and argument schema of that "
    "tool, which is then added to your tools.",
    {"type": "object", "additionalProperties": False, "required": [],
     "properties": {"name": {"anyOf": [{"type": "string"}, {"type": "null"}],
                             "default": None,
                             "description": "One tool's name, for its full description."}}},
)

_LISTING_HEAD = "More tools (call one by name with its arguments; list_tools with name for " \
    "its full description):"
_ALL_OFFERED = "Every tool is already offered."
_LINE = re.compile(r"^- (?P<name>[A-Za-z0-9_-]+)\((?P<args>[^)]*)\): (?P<text>.*)$", re.M)
_ARGUMENT = re.compile(r"^(?P<name>\w+)(?P<optional>\??)(?:: (?P<type>\S+))?$")
_WORDS = {"string": "", "integer": "int", "boolean": "bool"}  # types as the listing says them


@lru_cache(maxsize=256)
def _tokens(text: str) -> int:
    return count_tokens(text)


def schema_tokens(tools: Sequence[ToolSpec]) -> int:
    """What the tool schemas cost in every request: they are sent each turn like the
    prompt, and a catalog of twenty tools is thousands of tokens a budget must count."""
    return sum(_tokens(json.dumps([spec.name, spec.description, spec.parameters],
                                  sort_keys=True)) for spec in tools)


def wants_short_catalog(full: Sequence[ToolSpec], context_tokens: int, *,
                        text_mode: bool) -> bool:
    """Always in text mode; natively, when the full schemas take over 1/SCHEMA_SHARE of the
    window (an 8k or 16k model: the history would have no room left)."""
    return text_mode or schema_tokens(full) * SCHEMA_SHARE > context_tokens


def offered(full: Sequence[ToolSpec], core: Sequence[ToolSpec],
            added: Collection[str]) -> tuple[ToolSpec, ...]:
    """The short catalog: the core tools in rank order, the tools a model asked for by
    name, and `list_tools` while any tool is left out."""
    names = {spec.name for spec in full}
    shown = [spec for spec in core if spec.name in names]
    taken = {spec.name for spec in shown}
    shown += [spec for spec in full if spec.name in added and spec.name not in taken]
    if len(shown) < len(full):
        shown.append(LIST_TOOLS_SPEC)
    return tuple(shown)


def asked_for(calls: Iterable[tuple[str, Mapping[str, Any] | None]]) -> set[str]:
    """The tools that `list_tools(name=...)` calls asked about: offered from then on."""
    return {arguments["name"] for name, arguments in calls if name == LIST_TOOLS
            and arguments and isinstance(arguments.get("name"), str)}


# ---------------------------------------------------------------- the listing


def _type(schema: dict[str, Any]) -> str:
    """A schema's type in a word: `string`, `integer`, `Warning|Normal`; null left out."""
    if "enum" in schema:
        return "|".join(str(value) for value in schema["enum"])
    options = [s for s in schema.get("anyOf", ()) if s.get("type") != "null"]
    if options:
        return "|".join(_type(option) for option in options)
    kind = schema.get("type")
    return "|".join(kind) if isinstance(kind, list) else str(kind or "any")


def arguments_of(spec: ToolSpec) -> str:
    """`namespace, since?, limit?: int`: each argument, `?` when optional, its type unless
    it is a string (most are: the listing stays short)."""
    properties: dict[str, Any] = spec.parameters.get("properties") or {}
    required = set(spec.parameters.get("required") or ())
    parts = []
    for name, schema in properties.items():
        kind = _type(schema)
        kind = _WORDS.get(kind, kind)
        parts.append(f"{name}{'' if name in required else '?'}{f': {kind}' if kind else ''}")
    return ", ".join(parts)


def _short(description: str) -> str:
    text = " ".join(description.split())
    if len(text) <= LINE_CHARACTERS:
        return text
    return text[:LINE_CHARACTERS].rsplit(" ", 1)[0].rstrip(",;:(") + "…"


def render_listing(specs: Sequence[ToolSpec]) -> str:
    """`list_tools`' answer: one line a tool, short enough for an 8k window."""
    if not specs:
        return _ALL_OFFERED
    lines = [f"- {spec.name}({arguments_of(spec)}): {_short(spec.description)}"
             for spec in specs]
    return "\n".join([_LISTING_HEAD, *lines])


def render_page(spec: ToolSpec) -> str:
    """`list_tools(name=...)`'s answer: the whole description and the argument schema."""
    schema = json.dumps(spec.parameters, sort_keys=True)
    return f"{spec.name}: {' '.join(spec.description.split())}\narguments (JSON schema): {schema}"


def read_listing(text: str) -> tuple[ToolSpec, ...]:
    """The tools a listing names, as specs a model that is code can plan with: argument
    names, types as words, which are required (what `render_listing` wrote)."""
    if not text.startswith(_LISTING_HEAD):
        return ()
    specs = []
    for line in _LINE.finditer(text):
        properties: dict[str, Any] = {}
        required: list[str] = []
        for part in filter(None, (p.strip() for p in line["args"].split(","))):
            argument = _ARGUMENT.match(part)
            if argument is None:
                continue
            kind = argument["type"] or "string"
            properties[argument["name"]] = {"type": {v: k for k, v in _WORDS.items()}.get(
                kind, kind)}
            if not argument["optional"]:
                required.append(argument["name"])
        specs.append(ToolSpec(line["name"], line["text"], {
            "type": "object", "properties": properties, "required": required}))
    return tuple(specs)
