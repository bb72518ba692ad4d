"""Level three of a tool's fallbacks: when a source stays down, say how else to read it.

Elasticsearch down does not make the logs unreadable: the Kubernetes API serves each
container's own log. Prometheus down still leaves the API's view of restarts, last states
(OOMKilled), limits and events. The toolset appends an *outage note* to the error
observation of a call whose source stayed unavailable after its retries: which tools fail
alike until the source is back, and the tools that read the same thing another way, with
the arguments of the failed call carried over where they fit. The table of what replaces
what is declared once, in tools.catalog (`FALLBACKS`); this module holds its types and the
note's wording.

The note is plain text in the observation, the one view every model gets, LLM or offline
analyzer. Its lines have a fixed shape so that it can be read back (`read_outage`):

    The log store (Elasticsearch) is down; these tools fail alike until it is back: a, b.
    Read the same thing another way:
    - k8s_pod_logs {"namespace": "shop", "pod": "checkout"}: a container's own log, ...
    - k8s_pod_logs {"namespace": "shop"}, also needs pod: ...
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engines.model import ToolSpec
from tools.registry import Tool

Arguments = Callable[[Mapping[str, Any]], dict[str, Any]]

FAIL_ALIKE = " is down; these tools fail alike until it is back: "
INSTEAD = "Read the same thing another way:"
STILL_WORK = "these read other sources and still work: "
_DOWN = re.compile(re.escape(FAIL_ALIKE) + r"(?P<tools>[a-z0-9_, ]+)\.")
_ALTERNATIVE = re.compile(r"^- (?P<tool>[a-z0-9_]+) (?=\{)")
_NEEDS = re.compile(r"^, also needs (?P<names>[a-z0-9_, ]+):")


def _no_arguments(_: Mapping[str, Any]) -> dict[str, Any]:
    return {}


@dataclass(frozen=True, slots=True)
class Alternative:
    """A tool that reads what a down source holds another way. `arguments` maps the failed
    call's arguments to this tool's (what carries over: the namespace, the workload)."""

    tool: Tool
    gives: str
    arguments: Arguments = _no_arguments


@dataclass(frozen=True, slots=True)
class Fallback:
    """How an investigation goes on while one source is down. `source` is the `Sources`
    field ("cluster", "logs", "metrics") the source's errors name; `advice` is said when no
    tool reads the same thing another way."""

    source: str
    what: str
    alternatives: tuple[Alternative, ...] = ()
    advice: str = ""


@dataclass(frozen=True, slots=True)
class Suggestion:
    """One alternative call read back from a note; `missing` are the required arguments the
    failed call could not supply (the reader fills them or leaves the call)."""

    tool: str
    arguments: dict[str, Any]
    missing: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Outage:
    """A note read back: the tools that fail until the source is back, and what to call."""

    down: frozenset[str]
    suggestions: tuple[Suggestion, ...] = ()


def outage_note(
    fallback: Fallback,
    failed: Mapping[str, Any],
    reads: Mapping[str, frozenset[str]],
    offered: Sequence[ToolSpec],
) -> str:
    """The note for a call whose source stayed down (module docstring). `reads` says which
    sources each tool reads; only `offered` tools are named (a banned one is not)."""
    names = [spec.name for spec in offered]
    alike = [n for n in names if fallback.source in reads.get(n, frozenset())]
    lines = [f"{_capital(fallback.what)}{FAIL_ALIKE}{', '.join(alike) or 'none'}."]
    specs = {spec.name: spec for spec in offered}
    suggested = []
    for alternative in fallback.alternatives:
        spec = specs.get(alternative.tool.name)
        if spec is None or alternative.tool.name in alike:
            continue
        arguments = {k: v for k, v in alternative.arguments(failed).items()
                     if v not in (None, "")}
        required = (spec.parameters or {}).get("required") or []
        missing = [name for name in required if name not in arguments]
        needs = f", also needs {', '.join(missing)}" if missing else ""
        suggested.append(f"- {spec.name} {json.dumps(arguments, sort_keys=True)}{needs}: "
                         f"{alternative.gives}")
    if suggested:
        lines += [INSTEAD, *suggested]
    else:
        working = [n for n in names if n not in alike and n in reads]
        advice = fallback.advice or "Try them again in a minute"
        lines.append(f"{advice}; {STILL_WORK}{', '.join(working) or 'none'}.")
    return "\n".join(lines)


def read_outage(text: str) -> Outage | None:
    """The outage note in an observation's text, or None when it has none."""
    down = _DOWN.search(text)
    if down is None:
        return None
    tools = frozenset(n.strip() for n in down.group("tools").split(",") if n.strip())
    suggestions = []
    decoder = json.JSONDecoder()
    for line in text[down.end():].splitlines():
        head = _ALTERNATIVE.match(line)
        if head is None:
            continue
        try:
            arguments, end = decoder.raw_decode(line, head.end())
        except ValueError:
            continue
        if not isinstance(arguments, dict):
            continue
        needs = _NEEDS.match(line[end:])
        missing = tuple(n.strip() for n in needs.group("names").split(",")) if needs else ()
        suggestions.append(Suggestion(head.group("tool"), arguments, missing))
    return Outage(tools - {"none"}, tuple(suggestions))


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


__all__ = ["Alternative", "Fallback", "Outage", "Suggestion", "outage_note", "read_outage"]

