"""The `@tool` decorator: a typed, documented async function becomes a tool.

The JSON schema comes from the type hints (bounds included, as `Annotated[int, Field(...)]`)
and the Google-style docstring (read by `docstring_parser`), so a tool is described once,
where it is written. Arguments from the model are validated by a pydantic model built from
the same signature: a wrong argument (one out of its bounds too) becomes a precise hint
back to the model (retry), never a crash and never a silent `{}`.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_type_hints

import docstring_parser
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from engines._schema import clean_schema
from engines.errors import ToolRetryError
from engines.model import ToolSpec
from tools.context import ToolContext

ToolFunction = Callable[..., Awaitable[Any]]
Describer = Callable[[dict[str, Any]], str]


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The one envelope every tool call returns.

    `text` is what the model reads (compressed and redacted), `data` the structured result
    behind it, `raw_tokens` what the uncompressed output would have cost (for the figures),
    `attempts` how many times the call ran (more than one: a transient backend failure was
    retried; an error's text says so too).
    """

    status: Literal["success", "error"]
    text: str
    data: Any = None
    error: str | None = None
    raw_tokens: int = 0
    cached: bool = False
    seconds: float = 0.0
    attempts: int = 1


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into the description and the per-argument texts
    (each on one line: the model reads no layout)."""
    parsed = docstring_parser.parse(doc, docstring_parser.DocstringStyle.GOOGLE)
    arguments = {p.arg_name: " ".join((p.description or "").split()) for p in parsed.params}
    return (parsed.description or "").strip(), arguments


def _context_parameter(function: ToolFunction, hints: dict[str, Any]) -> str | None:
    """The name of the parameter annotated `ToolContext`, wherever it stands (None: the
    tool needs no context). Every other parameter is an argument the model gives."""
    found = [name for name, hint in hints.items() if name != "return"
             and isinstance(hint, type) and issubclass(hint, ToolContext)]
    if len(found) > 1:
        raise TypeError(f"tool {function.__name__} takes {len(found)} ToolContext parameters")
    return found[0] if found else None


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
    context_parameter: str | None = None

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.parameters)

    def run(self, context: ToolContext, arguments: Mapping[str, Any]) -> Awaitable[Any]:
        """Call the function with validated arguments, the context under its own name."""
        if self.context_parameter is None:
            return self.function(**arguments)
        return self.function(**{self.context_parameter: context}, **arguments)

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
    """Turn `async def f(ctx: ToolContext, arg: T = default, ...)` into a `Tool`.

    The parameter annotated `ToolContext` (anywhere in the signature, or none) is not shown
    to the model; every other one is an argument, described by its docstring line. Bounds
    and other constraints are declared in the hint (`Annotated[int, Field(ge=1, le=100)]`):
    the schema shows them and validation enforces them. `describe` is a format string over
    the arguments (missing ones render empty) or a function of them.
    """

    def decorate(function: ToolFunction) -> Tool:
        if not inspect.iscoroutinefunction(function):
            raise TypeError(f"tool {function.__name__} must be async")
        summary, arg_docs = _parse_docstring(function.__doc__ or "")
        if not summary:
            raise TypeError(f"tool {function.__name__} needs a docstring: it is its description")
        hints = get_type_hints(function, include_extras=True)
        context = _context_parameter(function, hints)
        fields: dict[str, Any] = {}
        for parameter in inspect.signature(function).parameters.values():
            if parameter.kind not in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY):
                raise TypeError(f"tool {function.__name__}: {parameter.name} must be a named "
                                "parameter (the toolset passes everything by name)")
            if parameter.name == context:
                continue
            if parameter.name not in hints:
                raise TypeError(f"tool {function.__name__}: {parameter.name} needs a type hint")
            default = ... if parameter.default is inspect.Parameter.empty else parameter.default
            doc = arg_docs.get(parameter.name)  # None would hide a description in the hint
            info = Field(default) if doc is None else Field(default, description=doc)
            fields[parameter.name] = (hints[parameter.name], info)
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
            context_parameter=context,
        )

    return decorate


class _Blank(dict[str, Any]):
    """Format mapping that renders a missing key as nothing."""

    def __missing__(self, key: str) -> str:
        return ""
