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

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from engines.errors import ModelError
from engines.hypotheses_asked import arguments_of
from engines.model import Model, ModelRequest, SystemMessage, ToolSpec, Usage, UserMessage
from engines.tokens import count_tokens

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


@runtime_checkable
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
    """The model's own selection when it has one; `is_code` (the analyzer) selects by
    `salient_lines`; any other model is asked through `complete`."""
    if isinstance(model, LineSelector):
        return model
    return CodeSelection() if is_code else AskedSelection(model)


def assemble(request: SelectionRequest, chosen: Sequence[int]) -> str | None:
    """The chosen lines in the tool's order, gaps marked, within the budget; the first
    line (what the tool is answering) always stays. None when nothing useful fits.

    Lines are added in the selector's order while their estimated cost (each line's own
    tokens, a few for a gap's marker) fits; the result is then counted whole, and the least
    important lines go until it fits, so a long observation costs one pass, not one count
    per line."""
    total = len(request.lines)
    wanted = [n - 1 for n in dict.fromkeys(chosen) if 1 <= n <= total and n != 1]
    if not wanted:
        return None
    room = request.budget - _NOTE_TOKENS - count_tokens(request.lines[0])
    order: list[int] = []
    for index in wanted:
        cost = count_tokens(request.lines[index]) + 1 + _GAP_TOKENS
        if cost <= room:
            order.append(index)
            room -= cost
    while order:
        text = _render(request.lines, {0, *order})
        if count_tokens(text) <= request.budget:
            return text
        order.pop()
    return None


_NOTE_TOKENS = 32
_GAP_TOKENS = 6


def _render(lines: Sequence[str], kept: set[int]) -> str:
    out: list[str] = []
    previous = -1
    for index in sorted(kept):
        if index > previous + 1:
            out.append(f"… {index - previous - 1} lines omitted")
        out.append(lines[index])
        previous = index
    if previous < len(lines) - 1:
        out.append(f"… {len(lines) - previous - 1} lines omitted")
    out.append(f"[the check model kept {len(kept)} of {len(lines)} lines to fit the "
               "observation budget]")
    return "\n".join(out)


class ObservationSummariser:
    """The toolset's summariser (tools.toolset.Summariser), bound to one investigation."""

    def __init__(self, selector: LineSelector, incident: str) -> None:
        self.selector = selector
        self.incident = incident

    async def __call__(self, tool: str, text: str, budget: int) -> str | None:
        request = SelectionRequest(tool, tuple(text.splitlines()), budget, self.incident)
        if len(request.lines) < 3:
            return None  # one long line: nothing to choose between
        return assemble(request, await self.selector.select_lines(request))
