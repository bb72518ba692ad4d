"""bad_rollout: a new revision that runs and serves, but errs or is slow, where the previous
revision was healthy.

Signals: the current revision was created shortly before things broke (a metric change
point in 5xx ratio or latency, new error templates first seen after it, the report's
"since"), it changed the image or configuration, and its pods run and are Ready (a revision
that cannot pull, schedule, start or become Ready takes that more specific category, see
ranking.py).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from engines.analyzer.candidates import Candidate, Clue, Followup
from engines.analyzer.detectors._common import (
    LOG_PATTERNS,
    LOG_TOOLS,
    ROLLOUT,
    SIGNALS,
    level_of,
    pattern_workloads,
    signal_change,
    snippet,
    stamp,
)
from engines.analyzer.facts import Facts, LogPattern, Ref, Rollout
from engines.analyzer.scope import Scope

FRESH = timedelta(hours=24)
BEFORE = timedelta(minutes=15)  # clocks and scrape intervals blur the order a little
AFTER = timedelta(minutes=90)


def _aligned(created: datetime, moment: datetime | None) -> bool:
    return moment is not None and created - BEFORE <= moment <= created + AFTER


def _new_errors(facts: Facts, ref: Ref, created: datetime) -> list[LogPattern]:
    """Error templates of this workload that first appeared after the rollout."""
    found = []
    for pattern in facts.patterns:
        if pattern.first is None or pattern.count < 3 or level_of(pattern) not in (
                "error", "fatal", "critical", "severe", "err", ""):
            continue
        if ref in pattern_workloads(pattern, facts)[:1] and _aligned(created, pattern.first):
            found.append(pattern)
    return sorted(found, key=lambda p: -p.count)


def _candidate(facts: Facts, scope: Scope, rollout: Rollout) -> Candidate | None:
    current, previous = rollout.current, rollout.previous
    if current is None or previous is None or current.created is None:
        return None
    if facts.now - current.created > FRESH:
        return None
    ref = rollout.ref
    entry = Candidate("bad_rollout", ref)
    change = rollout.changes[0] if rollout.changes else ""
    entry.clues.append(Clue(
        0.15, f"revision {current.number} rolled out {_ago(facts.now, current.created)} ago"
        + (f" ({change[:80]})" if change else ""),
        (change[:60], f"created: {stamp(current.created)}", f"revision: {current.number}"),
        rollout.source, (ROLLOUT,), "fresh"))
    moment = signal_change(facts, ref)
    signals = facts.signals_of(ref)
    if _aligned(current.created, moment) and signals is not None:
        why = [str(signals.get(n).get("why")) for n in ("requests", "latency")
               if signals.get(n).get("abnormal")]
        entry.clues.append(Clue(0.45, f"right after it, {why[0]}" if why else
                                "errors rose right after it",
                                ("5xx ratio rose", "p99 rose"), signals.source, (SIGNALS,),
                                "aligned-metrics"))
    errors = _new_errors(facts, ref, current.created)
    if errors:
        top = errors[0]
        quote = snippet(top.example or top.template, top.example[:40] or top.template[:40], 60)
        entry.clues.append(Clue(0.4, f"new errors since the rollout: {top.template[:90]} "
                                f"(×{top.count})", (quote[:70], top.template[:50]), top.source,
                                (LOG_PATTERNS, *LOG_TOOLS), "new-errors"))
    if scope.onset is not None and _aligned(current.created, scope.onset):
        entry.clues.append(Clue(0.15, "the report's start time matches the rollout",
                                (f"revision: {current.number}",), rollout.source, (ROLLOUT,),
                                "report-onset"))
    if len(entry.clues) == 1:
        entry.clues[0] = Clue(0.08, entry.clues[0].note, entry.clues[0].needles,
                              rollout.source, (ROLLOUT,), "fresh")
    if current.desired and current.ready is not None and current.ready < current.desired:
        entry.demote(0.5, "the new revision is not fully Ready: a more specific cause is likely")
    old = previous.images[0] if previous.images else f"revision {previous.number}"
    entry.fix = (f"Roll {ref.kind} {ref.namespace}/{ref.name} back to revision {previous.number} "
                 f"({old}) with `kubectl rollout undo`, then fix the regression before "
                 "releasing again.")
    return entry


def _ago(now: datetime, then: datetime) -> str:
    minutes = int((now - then).total_seconds() // 60)
    return f"{minutes}m" if minutes < 120 else f"{minutes // 60}h"


def detect(facts: Facts, scope: Scope) -> list[Candidate]:
    found = []
    for rollout in facts.rollouts.values():
        if (entry := _candidate(facts, scope, rollout)) is not None:
            found.append(entry)
    for entry in found:
        ref = entry.culprit
        entry.followups.append(Followup(SIGNALS, {"namespace": ref.namespace,
                                                  "workload": ref.name},
                                        f"line {ref.name}'s error rate up with the rollout"))
        entry.followups.append(Followup(LOG_PATTERNS, {"namespace": ref.namespace},
                                        f"see which errors {ref.name} started to log"))
    return found
