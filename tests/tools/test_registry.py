"""The @tool decorator: schema from hints and docstring, argument validation."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Literal

import pytest
from pydantic import Field

from engines._schema import clean_schema
from engines.errors import ToolRetryError
from tools.context import ToolContext
from tools.registry import tool
from tools.sources.base import Sources


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


@tool()
async def titled(
    title: str,
    ctx: ToolContext,
    notes: Annotated[list[dict[str, str]] | None, Field(max_length=3)] = None,
    count: Annotated[int, Field(ge=1, le=100)] = 10,
    urgency: Annotated[int, Field(ge=1, le=3, description="1 is the most urgent.")] = 3,
) -> dict[str, object]:
    """Open a ticket.

    Arguments:
        title: The ticket's title, e.g. "checkout OOMKilled".
        notes: Notes to attach.
        count: How many to open.
    """
    return {"title": title, "count": count, "ctx": ctx}


def test_a_parameter_named_title_keeps_its_schema() -> None:
    props = titled.parameters["properties"]
    assert props["title"] == {"type": "string",
                              "description": 'The ticket\'s title, e.g. "checkout OOMKilled".'}
    assert titled.parameters["required"] == ["title"]
    assert "title" not in props["count"] and "title" not in props["notes"]


def test_keyword_title_goes_but_data_keeps_it() -> None:
    schema = {"title": "M", "type": "object", "properties": {"title": {
        "title": "Title", "type": "object", "default": {"title": "kept"},
        "examples": [{"title": "kept too"}]}}}
    assert clean_schema(schema) == {"type": "object", "properties": {"title": {
        "type": "object", "default": {"title": "kept"}, "examples": [{"title": "kept too"}]}}}


async def test_the_context_is_found_by_its_type_wherever_it_stands() -> None:
    assert set(titled.parameters["properties"]) == {"title", "notes", "count", "urgency"}
    assert titled.context_parameter == "ctx"
    ctx = ToolContext(datetime(2026, 1, 1, tzinfo=UTC), Sources())
    answer = await titled.run(ctx, titled.validate({"title": "oom"}))
    assert answer == {"title": "oom", "count": 10, "ctx": ctx}


async def test_a_tool_may_take_no_context_but_not_two() -> None:
    @tool()
    async def ping(host: str) -> str:
        """Ping a host."""
        return host

    assert ping.context_parameter is None
    assert await ping.run(ToolContext(datetime(2026, 1, 1, tzinfo=UTC), Sources()),
                          {"host": "db"}) == "db"
    with pytest.raises(TypeError, match="takes 2 ToolContext parameters"):

        @tool()
        async def twice(a: ToolContext, b: ToolContext) -> None:
            """Twice."""

    with pytest.raises(TypeError, match="must be a named parameter"):

        @tool()
        async def starred(ctx: ToolContext, *hosts: str) -> None:
            """Starred."""


def test_bounds_declared_in_the_hint_are_in_the_schema_and_enforced() -> None:
    count = titled.parameters["properties"]["count"]
    assert (count["minimum"], count["maximum"], count["default"]) == (1, 100, 10)
    assert titled.parameters["properties"]["notes"]["anyOf"][0]["maxItems"] == 3
    assert count["description"] == "How many to open."
    assert titled.parameters["properties"]["urgency"]["description"] == "1 is the most urgent."
    with pytest.raises(ToolRetryError, match=r"count: Input should be less than or equal to 100"):
        titled.validate({"title": "oom", "count": 500})
    with pytest.raises(ToolRetryError, match=r"count: Input should be greater than or equal to 1"):
        titled.validate({"title": "oom", "count": 0})
