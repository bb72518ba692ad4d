"""JSON schema helpers shared by tool specs and the diagnosis tool."""

from __future__ import annotations

from typing import Any

# Keywords whose value maps names to schemas: their keys are names, never keywords.
_NAMED_SCHEMAS = frozenset({"properties", "patternProperties", "definitions"})
# Keywords whose value is data (an instance), not a schema: left exactly as written.
_DATA = frozenset({"default", "const", "enum", "examples"})


def clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A pydantic JSON schema as models like it: `$ref`s inlined, titles dropped.

    Titles only cost tokens, and some OpenAI-compatible servers (llama.cpp, older vLLM)
    do not resolve `$ref` in tool parameters. Only the `title` keyword goes: a property
    named `title`, or a default value with a `title` key, is kept.
    """
    definitions = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                target = definitions[node["$ref"].rsplit("/", 1)[-1]]
                merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
                return walk(merged)
            return {k: _value(k, v) for k, v in node.items() if k not in ("title", "$defs")}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    def _value(keyword: str, value: Any) -> Any:
        if keyword in _DATA:
            return value
        if keyword in _NAMED_SCHEMAS and isinstance(value, dict):
            return {name: walk(subschema) for name, subschema in value.items()}
        return walk(value)

    cleaned: dict[str, Any] = walk(schema)
    return cleaned
