"""Facts, scope and ranked candidates from a request: what every analyzer turn and every
search operation (hypotheses.py) reads first."""

from __future__ import annotations

from datetime import UTC, datetime

from engines.analyzer.candidates import Candidate
from engines.analyzer.detectors import run_detectors
from engines.analyzer.facts import Facts
from engines.analyzer.ranking import is_rejected, rank
from engines.analyzer.readers import build_facts
from engines.analyzer.rejections import parse_rejections
from engines.analyzer.scope import Scope, build_scope
from engines.analyzer.transcript import Transcript, read_transcript
from engines.model import ModelRequest, UserMessage


def report_of(request: ModelRequest) -> str:
    text = request.context.get("incident")
    if isinstance(text, str) and text.strip():
        return text
    return next((m.content for m in request.messages if isinstance(m, UserMessage)), "")


def _now(request: ModelRequest) -> datetime:
    now = request.context.get("now")
    return now if isinstance(now, datetime) else datetime.now(UTC)


def analyse(request: ModelRequest) -> tuple[Transcript, Facts, Scope, list[Candidate],
                                           list[Candidate]]:
    """Facts, scope and ranked candidates from everything in the request, and apart the
    candidates an evaluator doubted: never submitted again, they remain rivals."""
    transcript = read_transcript(request.messages)
    constraints = request.constraint_set
    excluded = constraints.excluded_namespaces
    facts = build_facts(transcript.observations, _now(request), excluded)
    scope = build_scope(report_of(request), facts, facts.now, focus=constraints.focus,
                        ignored=constraints.ignored)
    rejected = parse_rejections((*transcript.user_texts, *request.lessons))
    ranked = rank(run_detectors(facts, scope), scope, facts,
                  excluded=excluded, rejected=[r for r in rejected if not r.doubted])
    ranked = [c for c in ranked if not constraints.rules_out(c.category, c.culprit.name)]
    doubts = [r for r in rejected if r.doubted]
    doubted = [c for c in ranked if is_rejected(c, doubts)]
    return transcript, facts, scope, [c for c in ranked if c not in doubted], doubted
