"""The `@tool` decorator: a typed, documented async function becomes a tool.

The JSON schema comes from the type hints and the Google-style docstring, so a tool is
described once, where it is written. Arguments from the model are validated by a pydantic
model built from the same signature: a wrong argument becomes a precise hint back to the
model (retry), never a crash and never a silent `{}`.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from engines._schema import clean_schema
from engines.errors import ToolRetryError
from engines.model import ToolSpec

ToolFunction = Callable[..., Awaitable[Any]]
Describer = Callable[[dict[str, Any]], str]

_ARGS_HEADER = re.compile(r"^\s*(Args|Arguments|Parameters):\s*$")
_ARG_LINE = re.compile(r"^\s{2,}(?P<name>\w+)(\s*\([^)]*\))?:\s*(?P<text>.*)$")


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The one envelope every tool call returns.

    `text` is what the model reads (compressed and redacted), `data` the structured result
    behind it, `raw_tokens` what the uncompressed output would have cost (for the figures).
    """

    status: Literal["success", "error"]
    text: str
    data: Any = None
    error: str | None = None
    raw_tokens: int = 0
    cached: bool = False
    seconds: float = 0.0


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into the summary and the per-argument texts."""
    summary: list[str] = []
    args: dict[str, str] = {}
    in_args = False
    current: str | None = None
    for line in inspect.cleandoc(doc).splitlines():
        if _ARGS_HEADER.match(line):
            in_args = True
            continue
        if in_args:
            if match := _ARG_LINE.match("  " + line if not line.startswith(" ") else line):
                indent = len(line) - len(line.lstrip())
                if indent <= 4 and match.group("name"):
                    current = match.group("name")
                    args[current] = match.group("text").strip()
                    continue
            if not line.strip():
                in_args = False
                current = None
                continue
            if current:
                args[current] += " " + line.strip()
            continue
        summary.append(line)
    text = "\n".join(summary).strip()
    return text, args


@dataclass(frozen=True)
class Tool:
    """A registered tool: its function, its schema and how it may run."""

    name: str
    description: str
    function: ToolFunction
    arguments_model: type[BaseModel]
    read_only: bool = True
    timeout: float = 20.0
    describe: Describer | None = None
    parameters: dict[str, Any] = field(default_factory=dict)

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.parameters)

    def validate(self, arguments: dict[str, Any] | None, raw: str = "") -> dict[str, Any]:
        """Check the model's arguments; a `ToolRetryError` tells the model how to fix them."""
        if arguments is None:
            shown = raw if len(raw) <= 200 else raw[:200] + "…"
            raise ToolRetryError(
                f"the arguments of {self.name} are not valid JSON ({shown!r}); send a JSON "
                f"object matching the schema {self.parameters}"
            )
        try:
            parsed = self.arguments_model.model_validate(arguments)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}"
                for err in exc.errors()
            )
            raise ToolRetryError(f"bad arguments for {self.name}: {problems}") from None
        return parsed.model_dump(exclude_unset=False)

    def one_line(self, arguments: dict[str, Any]) -> str:
        """A human description of a call, for the thread ("Reading logs of shop/checkout")."""
        if self.describe is not None:
            try:
                return self.describe(arguments)
            except (KeyError, TypeError, ValueError):
                pass
        shown = ", ".join(f"{k}={v!r}" for k, v in arguments.items() if v not in (None, "", []))
        return f"{self.name}({shown})"


def tool(
    *,
    read_only: bool = True,
    timeout: float = 20.0,
    describe: Describer | str | None = None,
    name: str | None = None,
) -> Callable[[ToolFunction], Tool]:
    """Turn `async def f(ctx, arg: T = default, ...)` into a `Tool`.

    The first parameter is the tool context and is not shown to the model. `describe` is a
    format string over the arguments (missing ones render empty) or a function of them.
    """

    def decorate(function: ToolFunction) -> Tool:
        if not inspect.iscoroutinefunction(function):
            raise TypeError(f"tool {function.__name__} must be async")
        summary, arg_docs = _parse_docstring(function.__doc__ or "")
        if not summary:
            raise TypeError(f"tool {function.__name__} needs a docstring: it is its description")
        hints = get_type_hints(function)
        fields: dict[str, Any] = {}
        parameters = list(inspect.signature(function).parameters.values())[1:]
        for parameter in parameters:
            if parameter.name not in hints:
                raise TypeError(f"tool {function.__name__}: {parameter.name} needs a type hint")
            default = ... if parameter.default is inspect.Parameter.empty else parameter.default
            fields[parameter.name] = (
                hints[parameter.name],
                Field(default, description=arg_docs.get(parameter.name)),
            )
        arguments_model: type[BaseModel] = create_model(
            f"{function.__name__}_arguments",
            __config__=ConfigDict(extra="forbid"),
            **fields,
        )
        schema = clean_schema(arguments_model.model_json_schema())
        schema.setdefault("properties", {})
        schema.setdefault("required", [])
        describer: Describer | None
        if isinstance(describe, str):
            template = describe

            def describer(arguments: dict[str, Any]) -> str:
                shown = {k: ("" if v is None else v) for k, v in arguments.items()}
                return " ".join(template.format_map(_Blank(shown)).split())

        else:
            describer = describe
        return Tool(
            name=name or function.__name__,
            description=summary,
            function=function,
            arguments_model=arguments_model,
            read_only=read_only,
            timeout=timeout,
            describe=describer,
            parameters=schema,
        )

    return decorate


class _Blank(dict[str, Any]):
    """Format mapping that renders a missing key as nothing."""

    def __missing__(self, key: str) -> str:
        return ""
