"""JSON schema helpers shared by tool specs and the diagnosis tool."""

from __future__ import annotations

from typing import Any


def clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A pydantic JSON schema as models like it: `$ref`s inlined, titles dropped.

    Titles only cost tokens, and some OpenAI-compatible servers (llama.cpp, older vLLM)
    do not resolve `$ref` in tool parameters.
    """
    definitions = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                target = definitions[node["$ref"].rsplit("/", 1)[-1]]
                merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
                return walk(merged)
            return {k: walk(v) for k, v in node.items() if k not in ("title", "$defs")}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    cleaned: dict[str, Any] = walk(schema)
    return cleaned
