"""Log lines that say what kind of trouble a workload is in, weighed like an SRE would.

A phrase ("connection refused", "x509", "too many open files") is only as convincing as
the lines that carry it: errors count more than warnings, a steady stream more than a
stray line, something that started with the incident more than noise that was there all
along, and something still happening more than something that stopped long ago.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta

from engines.analyzer.detectors import _common as t
from engines.analyzer.facts import Facts, LogPattern, Ref
from engines.analyzer.scope import Scope

_LEVELS = {"fatal": 1.0, "critical": 1.0, "error": 1.0, "err": 1.0, "severe": 1.0,
           "warn": 0.6, "warning": 0.6, "info": 0.35, "debug": 0.2, "": 0.8}
STALE = timedelta(minutes=30)


@dataclass(frozen=True, slots=True)
class Sighting:
    """A log pattern of one workload that carries a phrase, with how much it counts."""

    pattern: LogPattern
    workload: Ref
    phrase: str
    factor: float
    quote: str
    why: str = ""


def sightings(facts: Facts, scope: Scope, phrases: Sequence[str],
              exclude: Sequence[str] = (), *,
              find: Callable[[str], str | None] | None = None) -> list[Sighting]:
    """Every attributable pattern carrying one of `phrases` (and none of `exclude`); `find`
    may spot further ones by shape, returning the piece of text that it matched."""
    found: list[Sighting] = []
    for pattern in facts.patterns:
        phrase = t.phrase_in(pattern.text, phrases)
        if phrase is None and find is not None:
            phrase = find(pattern.text)
        if phrase is None or (exclude and t.phrase_in(pattern.text, exclude)):
            continue
        if not (owners := t.pattern_workloads(pattern, facts)):
            continue
        factor, why = _factor(facts, scope, pattern, owners[0])
        quote = t.snippet(pattern.example or pattern.template, phrase)
        found.append(Sighting(pattern, owners[0], phrase, factor, quote, why))
    found.sort(key=lambda s: (-s.factor * s.pattern.count, s.pattern.template))
    return found


def _factor(facts: Facts, scope: Scope, pattern: LogPattern, owner: Ref) -> tuple[float, str]:
    factor = _LEVELS.get(t.level_of(pattern), 0.5)
    if pattern.previous:
        factor = max(factor, 0.9)
    count = pattern.count
    factor *= 1.0 if count >= 10 or pattern.previous else 0.8 if count >= 3 else 0.5
    why = ""
    onset = scope.onset or t.signal_change(facts, owner)
    if t.predates(pattern.first, onset):
        factor *= 0.35
        why = "it was already there before the incident began"
    if pattern.last is not None and facts.now - pattern.last > STALE:
        factor *= 0.5
        why = why or "it stopped a while ago"
    return factor, why


def by_workload(found: Sequence[Sighting]) -> dict[Ref, list[Sighting]]:
    grouped: dict[Ref, list[Sighting]] = {}
    for sighting in found:
        grouped.setdefault(sighting.workload, []).append(sighting)
    return grouped
