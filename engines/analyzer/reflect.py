"""Reflection on a failed attempt: what was missed, and what to check next.

A Reflexion engine calls `reflect` with the transcript of an attempt whose diagnosis was
rejected (or that ended without one). The text starts with the rejection sentence of
rejections.py, which the analyzer recognises on the retry and never submits that
diagnosis again; the rest names the rival causes the evidence also supported and the
sources the attempt never read. Pure: the same transcript gives the same reflection.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from engines.analyzer.detectors import _common as t
from engines.analyzer.detectors import run_detectors
from engines.analyzer.narrate import CATEGORY_WORDS, name
from engines.analyzer.ranking import rank
from engines.analyzer.readers import build_facts
from engines.analyzer.rejections import Rejection, parse_rejections
from engines.analyzer.scope import build_scope
from engines.analyzer.transcript import read_transcript
from engines.diagnosis import Diagnosis, rejection_message
from engines.model import Message, UserMessage
from engines.prompts import read_incident_message

SOURCES = {
    t.EVENTS: "Kubernetes events", t.ROLLOUT: "rollout history", t.SIGNALS: "workload metrics",
    t.LOG_PATTERNS: "error log patterns", t.POD_LOGS: "container logs (previous instance)",
    t.NODES: "node conditions", t.SERVICES: "services and endpoints",
    t.POLICIES: "network policies", t.AUTOSCALERS: "autoscalers", t.QUOTAS: "quotas",
    t.DESCRIBE: "a pod description",
}


def incident_of(messages: Sequence[Message]) -> tuple[str, datetime]:
    """The report and the clock the conversation opened with (prompts.incident_message)."""
    found = (read_incident_message(m.content) for m in messages if isinstance(m, UserMessage))
    return next((incident for incident in found if incident is not None), ("", datetime.now(UTC)))


def reflect(transcript: Sequence[Message], diagnosis: Diagnosis | None = None,
            feedback: str = "") -> str:
    """A short reflection for the next attempt: rejection, what was missed, what to check."""
    report, now = incident_of(transcript)
    read = read_transcript(transcript)
    facts = build_facts(read.observations, now)
    scope = build_scope(report, facts, now)
    rejected = list(parse_rejections(read.user_texts))
    parts: list[str] = []
    if diagnosis is not None:
        reason = feedback.strip() or "it did not match the evidence"
        parts.append(rejection_message(diagnosis, reason).rstrip(".") + ".")
        culprit = diagnosis.culprit
        rejected.append(Rejection(diagnosis.category, culprit.kind, culprit.namespace,
                                  culprit.name))
    else:
        parts.append("The previous attempt ended without a diagnosis"
                     + (f": {feedback.strip()}" if feedback.strip() else "") + ".")
    ranked = rank(run_detectors(facts, scope), scope, facts, rejected=rejected)
    if rivals := [c for c in ranked[:2] if c.score >= 0.15]:
        parts.append("What was missed: the evidence also supports " + "; ".join(
            f"{CATEGORY_WORDS[c.category]} in {name(c.culprit)} ({c.headline[:100]})"
            for c in rivals) + ".")
    unread = [label for tool, label in SOURCES.items() if not read.called_tool(tool)]
    checks = [f.why for c in rivals for f in c.followups
              if not read.called(f.tool, dict(f.arguments))]
    if unread:
        checks.append("read " + ", ".join(unread[:4]))
    if not rivals and not checks:
        checks.append("widen the search beyond the workloads the report names: callers, "
                      "dependencies, nodes and recent changes")
    parts.append("Check next: " + "; ".join(dict.fromkeys(checks[:4])) + ".")
    return " ".join(parts)
