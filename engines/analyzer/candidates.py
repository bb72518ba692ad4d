"""Candidate causes, the clues behind them, and how strongly they are believed.

A detector proposes `Candidate`s: a category, a culprit, clues and a fix. Each clue carries
a weight (how much that one signal alone would convince an SRE) and where to quote it from.
Clues combine by noisy-or, so independent signals add up but never reach certainty. The
ranking (ranking.py) then multiplies in relevance to the report and precedence rules.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from engines.analyzer.facts import Ref
from engines.analyzer.transcript import Observation


@dataclass(frozen=True, slots=True)
class Clue:
    """One signal for a cause: how convincing, in words, and where to quote it from.

    `observation` is the observation to quote first; `tools` are other tools whose text
    may hold one of the `needles` (verbatim fragments such as "OOMKilled" or an event
    message) when that observation was elided or cut.
    """

    weight: float
    note: str
    needles: tuple[str, ...] = ()
    observation: Observation | None = None
    tools: tuple[str, ...] = ()
    topic: str = ""


@dataclass(frozen=True, slots=True)
class Followup:
    """A call that would confirm or refute a candidate, with the reason in words."""

    tool: str
    arguments: Mapping[str, Any]
    why: str


@dataclass(slots=True)
class Candidate:
    """A possible root cause and everything that speaks for it."""

    category: str
    culprit: Ref
    clues: list[Clue] = field(default_factory=list)
    fix: str = ""
    affects: tuple[Ref, ...] = ()
    blames: tuple[Ref, ...] = ()  # what a caller's failure names as failing (its callees)
    followups: list[Followup] = field(default_factory=list)
    relevance: float = 1.0
    penalty: float = 1.0
    demoted_because: list[str] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, str, str]:
        return self.category, self.culprit.namespace, self.culprit.name

    @property
    def strength(self) -> float:
        """Noisy-or of the clue weights: 1 - Π(1 - w)."""
        return 1.0 - math.prod(1.0 - min(max(c.weight, 0.0), 0.95) for c in self.clues)

    @property
    def score(self) -> float:
        return self.strength * self.relevance * self.penalty

    def add(self, weight: float, note: str, needles: tuple[str, ...] = (),
            observation: Observation | None = None, tools: tuple[str, ...] = (),
            topic: str = "") -> None:
        """Add a clue (see Clue for what each part is)."""
        self.clues.append(Clue(weight, note, needles, observation, tools, topic))

    def follow(self, tool: str, arguments: Mapping[str, Any], why: str) -> None:
        """Ask for a call that would confirm or refute this candidate."""
        self.followups.append(Followup(tool, arguments, why))

    def demote(self, factor: float, why: str) -> None:
        self.penalty *= factor
        self.demoted_because.append(why)

    @property
    def headline(self) -> str:
        """The strongest clue of each source (pod state, logs, metrics...) in a few words:
        three views of one cause say more than three readings of one view."""
        best: dict[str, Clue] = {}
        for clue in sorted(self.clues, key=lambda c: -c.weight):
            source = clue.observation.tool if clue.observation else ",".join(clue.tools)
            if clue.note and source not in best:
                best[source] = clue
        notes = [c.note for c in sorted(best.values(), key=lambda c: -c.weight)]
        return "; ".join(dict.fromkeys(notes[:3]))


def merge(candidates: Iterable[Candidate]) -> list[Candidate]:
    """One candidate per (category, culprit): clues of duplicates are pooled, keeping the
    strongest clue of each note, so two readings of one fact do not count twice."""
    merged: dict[tuple[str, str, str], Candidate] = {}
    for candidate in candidates:
        existing = merged.setdefault(candidate.key, candidate)
        if existing is candidate:
            continue
        existing.clues.extend(candidate.clues)
        existing.affects = tuple(dict.fromkeys(existing.affects + candidate.affects))
        existing.blames = tuple(dict.fromkeys(existing.blames + candidate.blames))
        existing.followups.extend(f for f in candidate.followups if f not in existing.followups)
        existing.fix = existing.fix or candidate.fix
    for candidate in merged.values():
        best: dict[str, Clue] = {}
        for clue in candidate.clues:
            key = clue.topic or clue.note
            if key not in best or clue.weight > best[key].weight:
                best[key] = clue
        candidate.clues = sorted(best.values(), key=lambda c: -c.weight)
    return list(merged.values())


def confidence(best: Candidate, runner_up: Candidate | None) -> float:
    """How sure to say we are: the best score, less when a rival is nearly as good."""
    value = 0.2 + 0.75 * best.score
    if runner_up is not None and best.score > 0:
        ratio = runner_up.score / best.score
        if ratio > 0.7:
            value -= 0.25 * (ratio - 0.7) / 0.3
    quotes = sum(1 for c in best.clues if c.needles)
    if quotes < 2:
        value -= 0.05
    return round(min(0.95, max(0.05, value)), 2)
