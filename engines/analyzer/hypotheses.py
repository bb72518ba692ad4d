"""The search engines' operations, done by the analyzer from its ranked candidates.

A hypothesis is a candidate: proposing is taking the best k, scoring is ranking again on
everything observed since. A hypothesis is confirmed when the analyzer would submit it
(clearly ahead, its quotes found, its follow-up calls made) and refuted when the evidence
sets it well below the leader (with the precedence rule or the weaker clues that say why),
when a human rules it out, or when nothing supports it any more. Merging is ranking the
union of the sub-problems' observations; verifying asks whether that ranking still puts
the merged answer first and settled. All deterministic: no LLM.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from engines.analyzer.analysis import analyse
from engines.analyzer.candidates import Candidate
from engines.analyzer.diagnose import diagnosis_arguments, gather_evidence
from engines.analyzer.facts import Ref
from engines.analyzer.narrate import CATEGORY_WORDS
from engines.analyzer.planner import Toolbox, settled
from engines.analyzer.transcript import Transcript
from engines.diagnosis import SUBMIT_TOOL, Culprit, Diagnosis
from engines.hypotheses import (
    HUMAN_RULED_OUT,
    Hypothesis,
    SubProblem,
    hypothesis_id,
    split_by_source,
)
from engines.model import ModelRequest, Usage

RIVAL = 0.7  # a rival at or under this share of the leader's score is refuted by it


def culprit_of(ref: Ref) -> Culprit:
    return Culprit(kind=ref.kind, namespace=ref.namespace, name=ref.name)


def _id(candidate: Candidate) -> str:
    return hypothesis_id(candidate.category, culprit_of(candidate.culprit))


def _confirm_by(candidate: Candidate) -> str:
    return candidate.followups[0].why if candidate.followups else \
        f"more signals of {CATEGORY_WORDS[candidate.category]}: {candidate.headline}"


def _refute_by(candidate: Candidate) -> str:
    return (f"{candidate.culprit.name} shows no {CATEGORY_WORDS[candidate.category]} in its "
            "pods, events, logs or metrics, or a stronger cause explains what it shows")


def _hypothesis(candidate: Candidate, transcript: Transcript) -> Hypothesis:
    quotes = tuple(e.quote for e in gather_evidence(candidate, transcript.observations))
    return Hypothesis(_id(candidate), candidate.category, culprit_of(candidate.culprit),
                      _confirm_by(candidate), _refute_by(candidate),
                      round(candidate.score, 3), "open", quotes)


def _followups_done(request: ModelRequest, transcript: Transcript, candidate: Candidate) -> bool:
    """Whether every follow-up call the leader asks for, among the tools offered, was made:
    the analyzer submits only then, and so may a search that relies on it."""
    specs = {s.name: s for s in request.tools if s.name != SUBMIT_TOOL}
    box = Toolbox(specs, transcript, request.constraint_set.excluded_namespaces)
    return not box.open_followups(candidate)


def _why_weaker(candidate: Candidate, best: Candidate) -> str:
    if candidate.demoted_because:
        return f"{candidate.demoted_because[0]} (so {best.culprit.name} explains it)"
    return (f"its evidence ({candidate.headline or 'little'}) scores {candidate.score:.2f}, "
            f"against {best.score:.2f} for {CATEGORY_WORDS[best.category]} in "
            f"{best.culprit.name}")


class AnalyzerHypotheses:
    """`HypothesisModel` for the analyzer (mixed into AnalyzerModel)."""

    @property
    def usage(self) -> Usage:
        return Usage()  # code: nothing to count

    async def propose(self, request: ModelRequest, k: int) -> list[Hypothesis]:
        transcript, _, _, ranked, _ = analyse(request)
        return [_hypothesis(c, transcript) for c in ranked[:k]]

    async def score(self, request: ModelRequest,
                    hypotheses: Sequence[Hypothesis]) -> list[Hypothesis]:
        transcript, _, _, ranked, doubted = analyse(request)
        by_id = {_id(c): c for c in ranked}
        doubted_ids = {_id(c) for c in doubted}
        best = ranked[0] if ranked else None
        clear = best is not None and settled(ranked) and bool(
            gather_evidence(best, transcript.observations)) and _followups_done(
            request, transcript, best)
        scored = []
        for h in hypotheses:
            if h.state == "refuted":
                scored.append(h)
                continue
            if (candidate := by_id.get(h.id)) is None:
                if request.constraint_set.rules_out(h.category, h.culprit.name):
                    why = HUMAN_RULED_OUT
                elif h.id in doubted_ids:
                    why = "an evaluator rejected it earlier"
                else:
                    why = "no observation supports it any more"
                scored.append(h.refute(why))
                continue
            fresh = _hypothesis(candidate, transcript)
            if clear and candidate is best:
                fresh = replace(fresh, state="confirmed")
            elif clear and best is not None and candidate.score <= RIVAL * best.score:
                fresh = fresh.refute(_why_weaker(candidate, best))
            scored.append(fresh)
        return scored

    async def decompose(self, request: ModelRequest) -> list[SubProblem]:
        return split_by_source([s.name for s in request.tools if s.name != SUBMIT_TOOL])

    async def merge(self, request: ModelRequest,
                    partials: Sequence[Diagnosis]) -> Diagnosis | None:
        transcript, facts, scope, ranked, doubted = analyse(request)
        known = [d for d in partials if d.category != "unknown"]
        if not ranked and known:
            return max(known, key=lambda d: d.confidence)
        arguments, _ = diagnosis_arguments(ranked, transcript.observations, facts, scope,
                                           doubted)
        return Diagnosis.model_validate(arguments)

    async def verify(self, request: ModelRequest, diagnosis: Diagnosis) -> list[str]:
        transcript, _, _, ranked, _ = analyse(request)
        if not ranked:
            return [] if diagnosis.category == "unknown" else [
                "no observation supports any cause"]
        best = ranked[0]
        wanted = hypothesis_id(diagnosis.category, diagnosis.culprit)
        if _id(best) != wanted:
            return [f"a stronger signal is unexplained: {CATEGORY_WORDS[best.category]} in "
                    f"{best.culprit} ({best.headline})"]
        problems = []
        if not settled(ranked) and len(ranked) > 1:
            runner = ranked[1]
            problems.append(f"{CATEGORY_WORDS[runner.category]} in {runner.culprit} is nearly "
                            "as strong: tell them apart")
        elif not settled(ranked):
            problems.append(f"its evidence is weak (score {best.score:.2f}): look for more")
        if not _followups_done(request, transcript, best):
            problems.append(f"the checks that would confirm it were not made: "
                            f"{_confirm_by(best)}")
        return problems
