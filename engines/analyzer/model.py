"""The offline analyzer: a deterministic `Model` that investigates like an SRE, no LLM.

Each turn re-reads the whole conversation (it keeps no state, so a run can resume from its
log and a retry can start from a transcript), turns observations into facts, scopes the
report, lets the detectors propose causes, ranks them, and then either asks for the next
tool calls or submits the best candidate. Constraints are obeyed from the typed set:
excluded namespaces are never passed to a tool nor blamed, a focus on a namespace or a
workload narrows the scope, excluded workloads and ignored evidence are demoted, a cause the
humans ruled out (a category, a component, or both) is never submitted, and "stop" (and the
final turn) submits at once; excluded tools and sources are simply not offered. A
diagnosis rejected earlier (see rejections.py) is never submitted again.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from engines.analyzer import narrate, planner
from engines.analyzer.analysis import analyse, report_of
from engines.analyzer.candidates import Candidate
from engines.analyzer.detectors._common import DESCRIBE, SIGNALS, WORKLOADS
from engines.analyzer.diagnose import UNSURE, diagnosis_arguments, gather_evidence
from engines.analyzer.facts import Facts
from engines.analyzer.hypotheses import AnalyzerHypotheses
from engines.analyzer.reflect import reflect
from engines.analyzer.scope import Scope
from engines.analyzer.transcript import Transcript
from engines.diagnosis import SUBMIT_TOOL
from engines.model import ModelReply, ModelRequest, ToolCall, ToolSpec
from engines.short_catalog import LIST_TOOLS, read_listing

LAST_TURN = 8  # submit by this turn of an attempt whatever happens: the step budget


class AnalyzerModel(AnalyzerHypotheses):
    """`--model analyzer`: the offline model behind `triage demo` and the evaluation."""

    @property
    def name(self) -> str:
        return "analyzer"

    async def complete(self, request: ModelRequest) -> ModelReply:
        return decide(request)

    async def reflect(self, result: Any, problems: Sequence[str]) -> str:
        """Reflexion's hook (engines.reflexion.Reflective): what a failed attempt missed.

        `result` is an `InvestigationResult`; only its transcript and diagnosis are read.
        """
        return reflect(tuple(getattr(result, "transcript", ())),
                       getattr(result, "diagnosis", None), "; ".join(problems))


def decide(request: ModelRequest) -> ModelReply:
    """One turn: the next calls, or the diagnosis."""
    transcript, facts, scope, ranked, doubted = analyse(request)
    specs = _known_tools(request.tools, transcript)
    stopped = request.constraint_set.stop_requested
    turn = transcript.turns + 1  # steps of this attempt (a Reflexion retry starts afresh)
    must_submit = request.final or stopped or not (set(specs) - {SUBMIT_TOOL}) or \
        turn >= LAST_TURN or request.step >= request.max_steps
    if not must_submit:
        box = planner.Toolbox({k: v for k, v in specs.items() if k != SUBMIT_TOOL}, transcript,
                              request.constraint_set.excluded_namespaces)
        thought = _plan(box, transcript, facts, scope, ranked, report_of(request))
        if not box.calls and diagnosis_arguments(ranked, transcript.observations, facts,
                                                 scope, doubted)[1] < UNSURE:
            planner.widen(box, facts, scope, ranked)
            thought = narrate.widen_thought(sorted({str(a["namespace"]) for _, a, _ in
                                                    box.calls if a.get("namespace")}), ranked)
        if box.calls:
            calls = tuple(ToolCall(f"analyzer_{request.step}_{i}", tool, args,
                                   json.dumps(args, sort_keys=True))
                          for i, (tool, args, _) in enumerate(box.calls))
            return ModelReply(thought, calls)
    arguments, sure = diagnosis_arguments(ranked, transcript.observations, facts, scope,
                                          doubted)
    lead = ranked[0] if ranked and arguments["category"] != "unknown" else None
    thought = narrate.conclusion_thought(lead, sure, stopped)
    call = ToolCall(f"analyzer_{request.step}_submit", SUBMIT_TOOL, arguments,
                    json.dumps(arguments, sort_keys=True))
    return ModelReply(thought, (call,))


def _known_tools(offered: Sequence[ToolSpec], transcript: Transcript) -> dict[str, ToolSpec]:
    """The tools offered, and those a `list_tools` answer named (a short catalog): any of
    them may be called by name."""
    specs = {spec.name: spec for spec in offered}
    for observation in transcript.observations:
        if observation.tool == LIST_TOOLS and observation.status == "success":
            for spec in read_listing(observation.content):
                specs.setdefault(spec.name, spec)
    return specs


def _plan(box: planner.Toolbox, transcript: Transcript, facts: Facts, scope: Scope,
          ranked: list[Candidate], report: str) -> str:
    """Queue this step's calls on `box` and say why; no calls queued means submit."""
    if not transcript.observations and not transcript.called_tool(WORKLOADS):
        planner.survey(box)
        if box.calls:
            return narrate.survey_thought(report, scope.symptoms)
    planner.suggested(box)
    if looked_up := planner.unlisted(box, facts, report):
        return narrate.lookup_thought(looked_up)
    if not transcript.called_tool(SIGNALS) and planner.sweep(box, facts, scope, ranked):
        return narrate.sweep_thought(len(box.calls))
    targets = planner.focus_targets(facts, scope, ranked)
    planner.focus(box, facts, targets)
    if box.calls:
        fresh = [r for r in targets if any(r.name in (a.get("pod"), a.get("workload"))
                                           for _, a, _ in box.calls)]
        again = transcript.called_tool(DESCRIBE) or transcript.called_tool(SIGNALS)
        if not fresh:
            places = sorted({str(a["namespace"]) for _, a, _ in box.calls if a.get("namespace")})
            return narrate.widen_thought(places, ranked)
        return narrate.focus_thought(facts, scope, fresh, ranked, again=again)
    quoted = len(gather_evidence(ranked[0], transcript.observations)) if ranked else 0
    if planner.settled(ranked) and not box.open_followups(ranked[0]):
        planner.evidence_calls(box, ranked[0], quoted)
        return narrate.follow_thought(ranked, [w for _, _, w in box.calls]) if box.calls else ""
    planner.hints(box, facts, scope, targets, ranked)
    queued = planner.follow(box, ranked)
    if not box.calls and ranked:
        planner.evidence_calls(box, ranked[0], quoted)
    whys = [followup.why for followup in queued] + [why for _, _, why in box.calls]
    return narrate.follow_thought(ranked, whys)

