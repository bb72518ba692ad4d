"""The search operations for a model that only knows `complete` (an LLM).

Each operation is one turn with one tool whose JSON schema is the answer's shape; the call
is forced (`final=True` makes the OpenAI client set `tool_choice`), as the reply reader does.
What comes back is checked like any input: unknown categories, culprits named nowhere in
the conversation, ids of no hypothesis and states outside the three are dropped. When the
tool call is missing or its JSON invalid, a JSON object in the reply's text is tried (the
text ReAct format); when that fails too, each operation falls back to what needs no model
(no new hypotheses, the scores unchanged, the split by source, the most confident partial
answer, no extra problems), so a confused model never stops an investigation.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from engines.diagnosis import CATEGORIES, SUBMIT_TOOL, Culprit, Diagnosis
from engines.errors import ModelError
from engines.hypotheses import (
    SOURCE_TOOLS,
    Hypothesis,
    HypothesisModel,
    SubProblem,
    hypothesis_id,
    split_by_source,
)
from engines.model import Model, ModelRequest, SystemMessage, ToolSpec, Usage, UserMessage

log = logging.getLogger(__name__)
_CULPRIT = {"type": "object", "properties": {
    "kind": {"type": "string"}, "namespace": {"type": "string"}, "name": {"type": "string"}},
    "required": ["kind", "namespace", "name"], "additionalProperties": False}
_CAUSES = [c for c in CATEGORIES if c != "unknown"]
PROPOSE_SPEC = ToolSpec("record_hypotheses", "Record rival root-cause hypotheses.", {
    "type": "object", "properties": {"hypotheses": {"type": "array", "items": {
        "type": "object", "properties": {
            "category": {"type": "string", "enum": _CAUSES}, "culprit": _CULPRIT,
            "confirm_by": {"type": "string"}, "refute_by": {"type": "string"},
            "score": {"type": "number", "minimum": 0, "maximum": 1}},
        "required": ["category", "culprit", "confirm_by", "refute_by", "score"],
        "additionalProperties": False}}},
    "required": ["hypotheses"], "additionalProperties": False})
SCORE_SPEC = ToolSpec("record_scores", "Record each hypothesis's score and state.", {
    "type": "object", "properties": {"scores": {"type": "array", "items": {
        "type": "object", "properties": {
            "id": {"type": "string"}, "score": {"type": "number", "minimum": 0, "maximum": 1},
            "state": {"type": "string", "enum": ["open", "confirmed", "refuted"]},
            "evidence": {"type": "array", "items": {"type": "string"}},
            "refuted_by": {"type": "string"}},
        "required": ["id", "score", "state", "evidence", "refuted_by"],
        "additionalProperties": False}}},
    "required": ["scores"], "additionalProperties": False})
DECOMPOSE_SPEC = ToolSpec("record_subproblems", "Record the sub-problems to solve apart.", {
    "type": "object", "properties": {"subproblems": {"type": "array", "items": {
        "type": "object", "properties": {
            "source": {"type": "string", "enum": list(SOURCE_TOOLS)},
            "focus": {"type": "string"}},
        "required": ["source", "focus"], "additionalProperties": False}}},
    "required": ["subproblems"], "additionalProperties": False})
VERIFY_SPEC = ToolSpec("record_verdict", "Record what is wrong with the diagnosis, if anything.", {
    "type": "object", "properties": {"problems": {"type": "array", "items": {"type": "string"}}},
    "required": ["problems"], "additionalProperties": False})
_JSON = re.compile(r"\{.*\}", re.S)


def _said(request: ModelRequest) -> str:
    """Everything the conversation holds, to ground the names a model answers with."""
    return "\n".join(str(getattr(m, "content", "")) for m in request.messages).lower()


def arguments_of(reply_calls: Sequence[Any], thought: str, tool: str) -> dict[str, Any] | None:
    call = next((c for c in reply_calls if c.name == tool), None)
    if call is not None and isinstance(call.arguments, dict):
        return call.arguments
    match = _JSON.search(thought or "")
    if match:
        try:
            found = json.loads(match.group(0))
        except json.JSONDecodeError:
            return None
        return found if isinstance(found, dict) else None
    return None


class AskedHypotheses:
    """`HypothesisModel` through `complete`: one forced tool call per operation."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self._usage = Usage()

    @property
    def usage(self) -> Usage:
        return self._usage

    async def _ask(self, request: ModelRequest, spec: ToolSpec, task: str) -> dict[str, Any] | None:
        messages = [m for m in request.messages if not isinstance(m, SystemMessage)]
        system = SystemMessage("You investigate a production incident. " + task)
        asked = ModelRequest(
            messages=(system, *messages, UserMessage(task)), tools=(spec,), final=True,
            constraints=request.constraints, constraint_set=request.constraint_set,
            step=request.step, max_steps=request.max_steps,
            context={**request.context, "purpose": spec.name})
        try:
            reply = await self.model.complete(asked)
        except ModelError as exc:
            log.warning("%s failed (%s); falling back", spec.name, exc)
            return None
        self._usage = self._usage + reply.usage
        found = arguments_of(reply.tool_calls, reply.thought, spec.name)
        if found is None:
            log.warning("%s: no usable answer; falling back", spec.name)
        return found

    async def propose(self, request: ModelRequest, k: int) -> list[Hypothesis]:
        task = (f"Propose up to {k} rival root-cause hypotheses that explain the report and "
                "the observations so far: for each a category, the culprit object, what "
                "observation would confirm it and what would refute it, and a score 0..1. "
                "Name only objects that appear in the conversation. Call record_hypotheses.")
        found = await self._ask(request, PROPOSE_SPEC, task)
        items = found.get("hypotheses") if found else None
        said = _said(request)
        out: dict[str, Hypothesis] = {}
        for item in items if isinstance(items, list) else []:
            try:
                category = str(item["category"])
                culprit = Culprit.model_validate(item["culprit"])
                score = min(1.0, max(0.0, float(item.get("score", 0.0))))
            except (KeyError, TypeError, ValueError, ValidationError):
                continue
            if category not in _CAUSES or culprit.name.lower() not in said:
                continue  # an unknown category, or a name the model invented
            h = Hypothesis(hypothesis_id(category, culprit), category, culprit,
                           str(item.get("confirm_by", "")), str(item.get("refute_by", "")),
                           round(score, 3))
            out.setdefault(h.id, h)
        return list(out.values())[:k]

    async def score(self, request: ModelRequest,
                    hypotheses: Sequence[Hypothesis]) -> list[Hypothesis]:
        listed = "\n".join(f"- {h.id}: {h.label} (confirm: {h.confirm_by}; refute: "
                           f"{h.refute_by})" for h in hypotheses)
        task = ("Score each hypothesis 0..1 on the observations so far and give its state: "
                "confirmed (quote the evidence verbatim), refuted (say which observation "
                f"refutes it) or open. Call record_scores.\n{listed}")
        found = await self._ask(request, SCORE_SPEC, task)
        items = found.get("scores") if found else None
        by_id: dict[str, dict[str, Any]] = {}
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                by_id.setdefault(item["id"], item)
        out = []
        for h in hypotheses:
            item = by_id.get(h.id)
            state = item.get("state") if item else None
            if h.state == "refuted" or item is None or state not in ("open", "confirmed",
                                                                      "refuted"):
                out.append(h)
                continue
            try:
                score = min(1.0, max(0.0, float(item.get("score", h.score))))
            except (TypeError, ValueError):
                score = h.score
            evidence = tuple(str(e) for e in item.get("evidence") or () if str(e).strip())
            why = str(item.get("refuted_by") or "").strip() or "refuted by the observations"
            out.append(Hypothesis(h.id, h.category, h.culprit, h.confirm_by, h.refute_by,
                                  round(score, 3), state, evidence or h.evidence,
                                  why if state == "refuted" else ""))
        return out

    async def decompose(self, request: ModelRequest) -> list[SubProblem]:
        default = split_by_source([s.name for s in request.tools if s.name != SUBMIT_TOOL])
        task = ("Split this incident into sub-problems to investigate apart, one per signal "
                f"source ({', '.join(p.name for p in default)}), each with its focus for "
                "this incident. Call record_subproblems.")
        found = await self._ask(request, DECOMPOSE_SPEC, task)
        items = found.get("subproblems") if found else None
        by_source = {p.name: p for p in default}
        chosen: dict[str, SubProblem] = {}
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and (p := by_source.get(str(item.get("source")))):
                focus = str(item.get("focus") or "").strip() or p.focus
                chosen.setdefault(p.name, SubProblem(p.name, focus, p.tools))
        return list(chosen.values()) or default

    async def merge(self, request: ModelRequest,
                    partials: Sequence[Diagnosis]) -> Diagnosis | None:
        fallback = max((d for d in partials if d.category != "unknown"),
                       key=lambda d: d.confidence, default=partials[0] if partials else None)
        listed = "\n".join(f"- {d.category} of {d.culprit}: {d.summary}" for d in partials)
        spec = next((s for s in request.tools if s.name == SUBMIT_TOOL), None)
        if spec is None:
            return fallback
        task = ("Sub-investigations of this incident concluded:\n" + listed + "\nMerge them "
                "into one diagnosis: the root cause that explains every symptom, evidence "
                f"quoted verbatim from the observations. Call {SUBMIT_TOOL}.")
        found = await self._ask(request, spec, task)
        try:
            return Diagnosis.model_validate(found) if found else fallback
        except ValidationError:
            return fallback

    async def verify(self, request: ModelRequest, diagnosis: Diagnosis) -> list[str]:
        task = (f"Check this diagnosis against the observations: {diagnosis.category} of "
                f"{diagnosis.culprit}: {diagnosis.summary}. Is a stronger signal left "
                "unexplained? Does the culprit's timeline fit the symptom's onset? List the "
                "problems (none if it holds). Call record_verdict.")
        found = await self._ask(request, VERIFY_SPEC, task)
        items = found.get("problems") if found else None
        return [str(p).strip() for p in items if str(p).strip()] if isinstance(
            items, list) else []


class CheckedHypotheses:
    """`HypothesisModel` of two models: the main one proposes, scores, decomposes and
    merges (it decides); the check model only verifies, the cheap and frequent judgement a
    small model (or the analyzer, with no LLM) is good enough for. `usage` counts both."""

    def __init__(self, main: HypothesisModel, check: HypothesisModel) -> None:
        self.main = main
        self.check = check

    @property
    def usage(self) -> Usage:
        return self.main.usage + self.check.usage

    async def propose(self, request: ModelRequest, k: int) -> list[Hypothesis]:
        return await self.main.propose(request, k)

    async def score(self, request: ModelRequest,
                    hypotheses: Sequence[Hypothesis]) -> list[Hypothesis]:
        return await self.main.score(request, hypotheses)

    async def decompose(self, request: ModelRequest) -> list[SubProblem]:
        return await self.main.decompose(request)

    async def merge(self, request: ModelRequest,
                    partials: Sequence[Diagnosis]) -> Diagnosis | None:
        return await self.main.merge(request, partials)

    async def verify(self, request: ModelRequest, diagnosis: Diagnosis) -> list[str]:
        return await self.check.verify(request, diagnosis)


def operations_for(model: Model, check: Model | None = None) -> HypothesisModel:
    """The model's own operations when it has them (the analyzer), else asked through
    `complete`; with a `check` model, verifying is the check model's."""
    own = model if isinstance(model, HypothesisModel) else AskedHypotheses(model)
    if check is None:
        return own
    return CheckedHypotheses(own, operations_for(check))
