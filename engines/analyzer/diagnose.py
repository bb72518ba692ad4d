"""Turn the winning candidate into a diagnosis: culprit, summary, fix, quotes, confidence.

Every evidence quote is cut from the text of an observation of the tool it names (see
quotes.py); a clue whose words no observation shows is left out rather than paraphrased.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engines.analyzer.candidates import Candidate, confidence
from engines.analyzer.facts import Facts, Ref
from engines.analyzer.narrate import CATEGORY_WORDS, name
from engines.analyzer.quotes import find_evidence, quote_in
from engines.analyzer.ranking import FLOOR
from engines.analyzer.scope import Scope
from engines.analyzer.transcript import Observation
from engines.diagnosis import Evidence

MAX_EVIDENCE = 5
UNSURE = 0.4  # under this confidence an answer must rest on a clear own anomaly on the path
WEAK = 0.35  # a cause this weak (a rollout that only happened, probes that stopped) is none
CLEAR = 0.5  # a report names a workload or namespace this well: its path is known


def gather_evidence(candidate: Candidate, observations: Sequence[Observation]) -> list[Evidence]:
    """Verbatim quotes for the candidate's clues, strongest clue first, no repeats."""
    found: list[Evidence] = []
    seen: set[str] = set()
    for clue in sorted(candidate.clues, key=lambda c: -c.weight):
        if not (needles := [n for n in clue.needles if n and n.strip()]):
            continue
        evidence = quote_in(clue.observation, needles) if clue.observation else None
        if evidence is None:
            tools = clue.tools or tuple({o.tool for o in observations})
            evidence = find_evidence(observations, tools, needles)
        if evidence is not None and evidence.quote not in seen:
            seen.add(evidence.quote)
            found.append(evidence)
        if len(found) >= MAX_EVIDENCE:
            break
    return found


def fallback_culprit(facts: Facts, scope: Scope) -> Ref:
    """Who to name when nothing explains the report: what it names, else the sickest."""
    if scope.primary:
        return scope.primary[0]
    sick = sorted(facts.workloads.values(), key=lambda w: (-w.unhealthy_pods, -w.restarts,
                                                           str(w.ref)))
    if sick and (sick[0].unhealthy_pods or sick[0].restarts):
        return sick[0].ref
    return Ref("Namespace", "", next(iter(sorted(scope.namespaces)), "unknown") or "unknown")


def _bystander(candidate: Candidate, scope: Scope) -> bool:
    """Off the path from what the report clearly names: not named, not called by it, not
    hurting it (ranking.relevance kept only its FLOOR). A report that names things only by
    a word they share (a weak match) has no known path to be off."""
    named = max((*scope.workloads.values(), *scope.namespaces.values()), default=0.0)
    return named >= CLEAR and candidate.relevance <= FLOOR + 1e-9


def _unknown(leads: Sequence[Candidate], observations: Sequence[Observation], facts: Facts,
             scope: Scope, sure: float) -> tuple[dict[str, Any], float]:
    """`unknown`, with the best leads and their quotes: when nothing gathered explains the
    report, naming a bystander with low confidence is worse than saying so."""
    culprit = fallback_culprit(facts, scope)
    summary = ("The data gathered does not show a cause that explains the report; "
               f"{name(culprit)} is where the symptom was reported.")
    if leads:
        summary += " Best leads, none convincing: " + "; ".join(
            f"{CATEGORY_WORDS[c.category]} in {name(c.culprit)} ({c.headline[:90]})"
            for c in leads) + "."
    evidence = [e for c in leads for e in gather_evidence(c, observations)[:1]]
    fix = "Investigate further by hand" + (f", starting with {name(leads[0].culprit)}"
                                           if leads else "") + "."
    sure = round(min(sure, 0.3), 2)
    return _arguments("unknown", culprit, summary, evidence, fix, sure), sure


def _arguments(category: str, culprit: Ref, summary: str, evidence: Sequence[Evidence],
               fix: str, sure: float) -> dict[str, Any]:
    return {"category": category,
            "culprit": {"kind": culprit.kind, "namespace": culprit.namespace, "name": culprit.name},
            "summary": summary, "evidence": [e.model_dump(exclude_none=True) for e in evidence],
            "fix": fix, "confidence": sure}


def diagnosis_arguments(ranked: Sequence[Candidate], observations: Sequence[Observation],
                        facts: Facts, scope: Scope,
                        doubted: Sequence[Candidate] = ()) -> tuple[dict[str, Any], float]:
    """The `submit_diagnosis` arguments, and the confidence they carry. `doubted` answers
    (turned down for doubt, not refuted) still weigh as rivals on that confidence."""
    if not ranked:
        return _unknown([], observations, facts, scope, 0.1)
    best = ranked[0]
    rivals = [c for c in (ranked[1] if len(ranked) > 1 else None, *doubted) if c is not None]
    runner = max(rivals, key=lambda c: c.score) if rivals else None
    evidence = gather_evidence(best, observations)
    sure = confidence(best, runner)
    if not evidence:
        sure = round(min(sure, 0.35), 2)
    if sure < UNSURE and (best.strength < WEAK or _bystander(best, scope)):
        return _unknown(ranked[:3], observations, facts, scope, sure)
    culprit = best.culprit
    summary = (f"{name(culprit)}: {CATEGORY_WORDS[best.category]}. {best.headline}.")
    if others := [c for c in ranked[1:3] if c.score >= 0.25]:
        summary += " Weaker explanations considered: " + "; ".join(
            f"{CATEGORY_WORDS[c.category]} in {name(c.culprit)}"
            + (f" ({c.demoted_because[0]})" if c.demoted_because else "") for c in others) + "."
    fix = best.fix or "Address the cause named in the summary."
    return _arguments(best.category, culprit, summary, evidence, fix, sure), sure
