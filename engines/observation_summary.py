"""Summarise an observation that is still over budget after compression: the check model's job.

tools/compress.py shrinks a tool's result by halving its longest lists; when that is not
enough it cuts the text at the budget, and whatever came after the cut is lost to the
model, however telling. With a check model (`--check-model`), the toolset asks it instead
which lines matter for this incident, and the observation becomes those lines.

The summary is extractive on purpose: the check model answers with line numbers, never
with prose, so every line the main model reads is one the tool printed, and evidence
quoted from a summarised observation still passes engines/evidence.py's verbatim check. A
small model cannot invent a fact this way, only leave one out, and the note at the end says
how much was left out. Any failure (the model down, no usable answer, nothing that fits)
returns None and the toolset keeps its plain cut, so summarising never loses an observation.

An LLM is asked with one forced tool call (as in engines/hypotheses_asked.py); the analyzer,
which is code, picks lines by what they say (errors, warnings, non-zero counts, names from
the report), so `--check-model analyzer` works with no LLM.
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from engines.errors import ModelError
from engines.hypotheses_asked import arguments_of
from engines.model import Model, ModelRequest, SystemMessage, ToolSpec, Usage, UserMessage
from engines.tokens import count_tokens
from tools.compress import longest_list, to_text

log = logging.getLogger(__name__)

KEEP_SPEC = ToolSpec("keep_lines", "Record which numbered lines of the observation to keep.", {
    "type": "object", "properties": {"keep": {
        "type": "array", "items": {"type": "integer", "minimum": 1},
        "description": "line numbers, most important first"}},
    "required": ["keep"], "additionalProperties": False})

# What makes a line worth keeping when code decides (the analyzer as check model).
_TELLING = re.compile(
    r"error|fail|fatal|panic|exception|refused|denied|timeout|timed out|unavailable|"
    r"oomkilled|killed|backoff|evict|pressure|unhealthy|not ?ready|pending|throttl|"
    r"expired|invalid|exceeded|insufficient|warning|crash|reason:|restarts?: [1-9]|"
    r"exit_?code: [1-9]|status: [45]\d\d|\b5\d\d\b", re.I)
_WORD = re.compile(r"[a-z][a-z0-9-]{2,}")


@dataclass(frozen=True, slots=True)
class SelectionRequest:
    """An observation to cut down: its tool, its lines, the budget, and the report."""

    tool: str
    lines: tuple[str, ...]
    budget: int
    incident: str


class LineSelector(Protocol):
    """Who chooses the lines to keep, most important first (1-based numbers)."""

    async def select_lines(self, request: SelectionRequest) -> Sequence[int]: ...


def salient_lines(request: SelectionRequest) -> list[int]:
    """Code's choice: lines that report a fault first, then lines naming what the report
    names, then the rest in order; ties keep the tool's order."""
    named = set(_WORD.findall(request.incident.lower()))

    def weight(index: int) -> tuple[int, int]:
        line = request.lines[index]
        score = 2 if _TELLING.search(line) else 0
        score += 1 if named & set(_WORD.findall(line.lower())) else 0
        return -score, index

    return [i + 1 for i in sorted(range(len(request.lines)), key=weight)]


class AskedSelection:
    """`LineSelector` through `complete`: one forced `keep_lines` call; a JSON object in
    the reply's text is accepted too (models without native tool calls)."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.usage = Usage()

    async def select_lines(self, request: SelectionRequest) -> Sequence[int]:
        numbered = "\n".join(f"{n}: {line}" for n, line in enumerate(request.lines, 1))
        task = (f"The output of {request.tool} below is too long for the investigator, "
                f"who can read about {request.budget} tokens of it. Choose the lines that "
                "matter for the incident (faults, their times, the objects they name), most "
                f"important first. Call {KEEP_SPEC.name} with their numbers.")
        asked = ModelRequest(
            messages=(SystemMessage("You help investigate a production incident. " + task),
                      UserMessage(f"Incident: {request.incident}\n\n{numbered}")),
            tools=(KEEP_SPEC,), final=True, context={"purpose": KEEP_SPEC.name})
        try:
            reply = await self.model.complete(asked)
        except ModelError as exc:
            log.warning("summarising %s failed (%s); the observation is cut", request.tool, exc)
            return ()
        self.usage = self.usage + reply.usage
        found = arguments_of(reply.tool_calls, reply.thought, KEEP_SPEC.name) or {}
        keep = found.get("keep")
        if not isinstance(keep, list):
            log.warning("summarising %s: no usable answer; the observation is cut", request.tool)
            return ()
        return [n for n in keep if isinstance(n, int) and not isinstance(n, bool)]


class CodeSelection:
    """The analyzer as check model: `salient_lines`, no model call."""

    async def select_lines(self, request: SelectionRequest) -> Sequence[int]:
        return salient_lines(request)


def selector_for(model: Model, *, is_code: bool = False) -> LineSelector:
    """`is_code` (the analyzer) selects by `salient_lines`; an LLM is asked through
    `complete`."""
    return CodeSelection() if is_code else AskedSelection(model)


def assemble(request: SelectionRequest, chosen: Sequence[int]) -> str | None:
    """The chosen lines in the tool's order, within the budget, each with the lines it
    is nested under (observations are YAML: a kept `reason: OOMKilled` keeps the pod
    and the list it belongs to), gaps marked as YAML comments so the text still parses.
    The first line (what the tool is answering) always stays. None when nothing fits.

    Lines are added in the selector's order while their estimated cost (their own
    tokens, a few for a gap's marker) fits; the result is then counted whole, and the
    least important go until it fits, so a long observation costs one pass, not one
    count per line."""
    lines = request.lines
    wanted = [n - 1 for n in dict.fromkeys(chosen) if 1 < n <= len(lines)]
    room = request.budget - _NOTE_TOKENS - count_tokens(lines[0])
    kept: set[int] = {0}
    added: list[set[int]] = []
    for index in wanted:
        new = {index, *_ancestors(lines, index)} - kept
        cost = sum(count_tokens(lines[i]) + 1 + _GAP_TOKENS for i in new)
        if new and cost <= room:
            kept |= new
            added.append(new)
            room -= cost
    while added:
        text = _render(lines, kept)
        if count_tokens(text) <= request.budget:
            return text
        kept -= added.pop()
    return None


_NOTE_TOKENS = 32
_GAP_TOKENS = 6


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _ancestors(lines: Sequence[str], index: int) -> list[int]:
    """The lines `lines[index]` is nested under, by indentation (a `- ` item counts as
    indented by its dash, its keys by two more)."""
    found: list[int] = []
    depth = _indent(lines[index])
    for above in range(index - 1, 0, -1):
        if depth == 0:
            break
        line = lines[above]
        if line.strip() and _indent(line) < depth:
            found.append(above)
            depth = _indent(line)
    return found


def _render(lines: Sequence[str], kept: set[int]) -> str:
    out: list[str] = []
    previous = -1
    for index in sorted(kept):
        if index > previous + 1:
            out.append(f"{' ' * _indent(lines[index])}# … {index - previous - 1} lines omitted")
        out.append(lines[index])
        previous = index
    if previous < len(lines) - 1:
        out.append(f"# … {len(lines) - previous - 1} lines omitted")
    out.append(f"# [the check model kept {len(kept)} of {len(lines)} lines to fit the "
               "observation budget]")
    return "\n".join(out)


def keep_items(data: Any, chosen: Sequence[int], budget: int) -> str | None:
    """`data` with its longest list cut to the chosen items (in the tool's order, a note
    of how many went), rendered within the budget; None when no chosen item fits."""
    path, length = longest_list(data)
    wanted = [n - 1 for n in dict.fromkeys(chosen) if 1 <= n <= length]
    kept: list[int] = []
    text: str | None = None
    for index in wanted[:_MAX_TRIES]:
        trial = sorted([*kept, index])
        rendered = to_text(_with_items(data, path, trial, length))
        if count_tokens(rendered) <= budget:
            kept, text = trial, rendered
    return text


_MAX_TRIES = 64  # items tried in the selector's order: one rendering each


def _with_items(data: Any, path: tuple[Any, ...], kept: Sequence[int], length: int) -> Any:
    working = copy.deepcopy(data)
    parent: Any = None
    node = working
    for key in path:
        parent, node = node, node[key]
    items = [node[i] for i in kept]
    items.append(f"… the check model kept {len(kept)} of {length}; "
                 f"{length - len(kept)} omitted to fit the observation budget")
    if parent is None:
        return items
    parent[path[-1]] = items
    return working


def one_line(item: Any, limit: int = 240) -> str:
    """A list item as the selector reads it: compact JSON on one line, bounded."""
    text = item if isinstance(item, str) else json.dumps(item, default=str,
                                                         separators=(",", ":"))
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class ObservationSummariser:
    """The toolset's summariser (tools.toolset.Summariser), bound to one investigation:
    a text is cut to its chosen lines, structured data to its longest list's chosen
    items (rendered by tools/compress.py as before, so it stays the YAML every reader
    expects)."""

    def __init__(self, selector: LineSelector, incident: str) -> None:
        self.selector = selector
        self.incident = incident

    async def __call__(self, tool: str, data: Any, budget: int) -> str | None:
        if isinstance(data, str):
            request = SelectionRequest(tool, tuple(data.splitlines()), budget, self.incident)
            if len(request.lines) < 3:
                return None  # one long line: nothing to choose between
            chosen = await self.selector.select_lines(request)
            return await asyncio.to_thread(assemble, request, chosen)  # counting is CPU work
        path, length = longest_list(data)
        if length <= 3:
            return None  # no list to choose from: the plain cut stands
        node = data
        for key in path:
            node = node[key]
        request = SelectionRequest(tool, tuple(one_line(item) for item in node), budget,
                                   self.incident)
        chosen = await self.selector.select_lines(request)
        return await asyncio.to_thread(keep_items, data, chosen, budget)
