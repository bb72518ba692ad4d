"""An investigation's log as a timeline: one short entry per event, for people to read.

`triage show` prints these entries and the postmortem Markdown tabulates them; both read
the same entries so the two never disagree on what happened. The match over the event
union ends in `assert_never`, so a new kind of event fails type checking here until it is
given a line.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import assert_never

from engines.diagnosis import Diagnosis
from engines.events import (
    ConstraintApplied,
    ConstraintWithdrawn,
    DiagnosisSubmitted,
    EngineChosen,
    ErrorOccurred,
    Event,
    HypothesesUpdated,
    InvestigationStarted,
    InvestigationStopped,
    LessonsRetrieved,
    ObservationReceived,
    ReflectionRecorded,
    RewoundTo,
    ThoughtRecorded,
    ToolCalled,
)
from engines.evidence import Located, locate, placed
from engines.hypotheses import board_line, limits_text

TEXT_LIMIT = 160


@dataclass(frozen=True, slots=True)
class Entry:
    """One line of a timeline: when, at which step, what kind of thing, and what."""

    at: datetime
    step: int | None
    label: str
    text: str


def clip(text: str, limit: int = TEXT_LIMIT) -> str:
    """One line of at most `limit` characters, saying when it was cut."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def headline(diagnosis: Diagnosis) -> str:
    """"oom_killed in Deployment shop/checkout (90%)"."""
    return f"{diagnosis.category} in {diagnosis.culprit} ({diagnosis.confidence:.0%})"


def entry(event: Event) -> Entry:
    """The timeline entry of one event."""
    match event:
        case InvestigationStarted():
            return Entry(
                event.at,
                None,
                "started",
                f"{event.engine} engine, model {event.model}, at most {event.max_steps} steps",
            )
        case ThoughtRecorded():
            return Entry(event.at, event.step, "thought", clip(event.text))
        case ToolCalled():
            text = f"{event.description} [{event.tool}]"
            return Entry(event.at, event.step, "action", clip(text))
        case ObservationReceived():
            notes = [f"{event.seconds:.1f}s"]
            if event.status == "error":
                notes.insert(0, "error")
            if event.cached:
                notes.append("cached")
            text = f"{event.tool}: {first_line(event.text)}"
            return Entry(event.at, event.step, "observed", f"{clip(text)} ({', '.join(notes)})")
        case ConstraintApplied():
            who = event.author or "a human"
            return Entry(
                event.at, event.step, "constraint", clip(f'{who}: "{event.text}" → {event.summary}')
            )
        case ConstraintWithdrawn():
            who = event.author or "a human"
            return Entry(event.at, event.step, "withdrawn", clip(f"{who}: {event.summary}"))
        case DiagnosisSubmitted():
            return Entry(event.at, event.step, "diagnosis", headline(event.diagnosis))
        case ErrorOccurred():
            label = "fatal error" if event.fatal else "error"
            return Entry(event.at, event.step, label, clip(event.message))
        case LessonsRetrieved():
            count = len(event.lessons)
            noun = "lesson" if count == 1 else "lessons"
            listed = "; ".join(clip(lesson, 60) for lesson in event.lessons)
            return Entry(event.at, event.step, "lessons", clip(f"{count} {noun}: {listed}"))
        case ReflectionRecorded():
            then = "retrying" if event.retrying else "giving up"
            problems = ", ".join(event.problems) or "no problem named"
            text = f"attempt {event.attempt} rejected ({problems}): {event.text} — {then}"
            return Entry(event.at, event.step, "reflection", clip(text))
        case HypothesesUpdated():
            listed = "; ".join(board_line(h) for h in event.hypotheses[:4]) or "none yet"
            testing = f" testing {', '.join(event.expanding)}:" if event.expanding else ""
            return Entry(event.at, event.step, "hypotheses", clip(f"{event.search}{testing} "
                                                                   f"{listed}"))
        case EngineChosen():
            text = f"{event.engine}: {event.reason} ({limits_text(event.limits)})"
            return Entry(event.at, None, "engine", clip(text))
        case RewoundTo():
            who = event.author or "a human"
            return Entry(event.at, event.step, "rewound",
                         clip(f"{who}: {event.said}"))
        case InvestigationStopped():
            text = f"{event.reason}: {event.detail}" if event.detail else event.reason
            return Entry(event.at, event.step, "stopped", clip(text))
        case _:
            assert_never(event)


def entries(events: Iterable[Event]) -> list[Entry]:
    return [entry(event) for event in events]


def key_observations(
    events: Sequence[Event], diagnosis: Diagnosis | None, fallback: int = 3
) -> list[tuple[ObservationReceived, list[str]]]:
    """The observations the diagnosis rests on, each with its lines that hold a quote.

    An observation is key when an evidence quote occurs in it (as the evaluator finds one:
    across line wraps, `…` marking a cut); with no evidence to go by, the last few
    successful observations stand in, so a postmortem always shows something.
    """
    observations = [e for e in events if isinstance(e, ObservationReceived)]
    quotes = [item.quote for item in diagnosis.evidence] if diagnosis else []
    found: list[tuple[ObservationReceived, list[str]]] = []
    for observation in observations:
        spans = [s for q in quotes if (s := locate(observation.text, q)) is not None]
        if spans:
            found.append((observation, _lines_holding(observation.text, spans)))
    if found or not observations:
        return found
    successes = [o for o in observations if o.status == "success"][-fallback:]
    return [(o, [first_line(o.text)]) for o in successes]


def _lines_holding(text: str, spans: Sequence[Located]) -> list[str]:
    """The lines of `text` that hold part of a span, in order, each once."""
    lines: list[str] = []
    position = 0
    for line in text.split("\n"):
        end = position + len(line)
        if line.strip() and any(s.start <= end and position < s.end for s in spans):
            lines.append(line.strip())
        position = end + 1
    return lines


def placed_evidence(diagnosis: Diagnosis, events: Sequence[Event]) -> Diagnosis:
    """The diagnosis with each quote whole and at its step: as the engine placed them, or,
    for a diagnosis recorded before engines did, placed now from the log's observations
    (so an old record reads as well as a new one). With no observation logged, as it is."""
    if all(item.found is not None for item in diagnosis.evidence):
        return diagnosis
    observed = [(e.step, e.tool, e.text) for e in events if isinstance(e, ObservationReceived)]
    return placed(diagnosis, observed) if observed else diagnosis
