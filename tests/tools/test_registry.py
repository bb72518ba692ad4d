"""The @tool decorator: schema from hints and docstring, argument validation."""

from __future__ import annotations

from typing import Literal

import pytest

from engines.errors import ToolRetryError
from tools.context import ToolContext
from tools.registry import tool


@tool(describe="Reading {tail} lines of {namespace}/{pod}")
async def sample_logs(
    ctx: ToolContext,
    namespace: str,
    pod: str,
    tail: int = 100,
    previous: bool = False,
    level: Literal["error", "warn", "info"] | None = None,
    grep: list[str] | None = None,
) -> dict[str, object]:
    """Read a pod's log.

    Use it after describing the pod.

    Args:
        namespace: The pod's namespace.
        pod: The pod's name.
        tail: How many of the last lines to read,
            counted from the end.
        previous: Read the previous (crashed) instance.
        level: Only lines of this level.
        grep: Words a line must contain.
    """
    return {}


def test_schema_comes_from_hints_and_docstring() -> None:
    schema = sample_logs.parameters
    assert sample_logs.description == "Read a pod's log.\n\nUse it after describing the pod."
    assert schema["type"] == "object"
    assert schema["required"] == ["namespace", "pod"]
    props = schema["properties"]
    assert props["tail"] == {
        "type": "integer",
        "default": 100,
        "description": "How many of the last lines to read, counted from the end.",
    }
    assert props["previous"]["type"] == "boolean"
    assert {"enum": ["error", "warn", "info"], "type": "string"} in props["level"]["anyOf"]
    assert props["grep"]["anyOf"][0] == {"items": {"type": "string"}, "type": "array"}
    assert schema["additionalProperties"] is False
    assert "title" not in str(schema)


def test_validation_errors_are_hints_for_the_model() -> None:
    with pytest.raises(ToolRetryError, match=r"tail: Input should be a valid integer"):
        sample_logs.validate({"namespace": "shop", "pod": "p", "tail": "many"})
    with pytest.raises(ToolRetryError, match=r"pod: Field required"):
        sample_logs.validate({"namespace": "shop"})
    with pytest.raises(ToolRetryError, match=r"colour: Extra inputs are not permitted"):
        sample_logs.validate({"namespace": "shop", "pod": "p", "colour": "red"})
    with pytest.raises(ToolRetryError, match=r"not valid JSON \('\{namespace: shop'\)"):
        sample_logs.validate(None, "{namespace: shop")


def test_validated_arguments_get_defaults_and_coercion() -> None:
    args = sample_logs.validate({"namespace": "shop", "pod": "p", "tail": "20"})
    assert args == {
        "namespace": "shop",
        "pod": "p",
        "tail": 20,
        "previous": False,
        "level": None,
        "grep": None,
    }


def test_one_line_description() -> None:
    assert sample_logs.one_line({"namespace": "shop", "pod": "p-1", "tail": 50}) == (
        "Reading 50 lines of shop/p-1"
    )


def test_decorator_rejects_untyped_or_undocumented_tools() -> None:
    with pytest.raises(TypeError, match="needs a docstring"):

        @tool()
        async def nodoc(ctx: ToolContext) -> None:
            pass

    with pytest.raises(TypeError, match="must be async"):

        @tool()
        def sync(ctx: ToolContext) -> None:  # type: ignore[type-var]
            """Sync."""
