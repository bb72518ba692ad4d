"""Checks of a diagnosis that need no model: what got's verifier can prove by itself.

Every evidence quote must occur in an observation (a quote that no tool returned is made
up, whoever wrote it), and the culprit's evidence must not all come after the symptom's
onset as the report states it (a cause cannot start after its effect). Whether a stronger
signal is left unexplained needs judgement, so it is the model's `verify` operation.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timedelta

from engines.diagnosis import Diagnosis

_SPACES = re.compile(r"\s+")
_CLOCK = re.compile(r"\b(\d{4}-\d{2}-\d{2})?[T ]?([01]\d|2[0-3]):([0-5]\d)(?::[0-5]\d)?\b")
_ONSET = re.compile(r"\b(?:since|from|started(?: at)?|began(?: at)?|at)\s+(?:about\s+)?"
                    r"([01]?\d|2[0-3]):([0-5]\d)\b", re.I)
SLACK = timedelta(minutes=15)  # how late a cause's first sign may be seen after the onset


def _normal(text: str) -> str:
    return _SPACES.sub(" ", text).strip().lower()


def unquoted(diagnosis: Diagnosis, observations: Sequence[tuple[str, str]]) -> list[str]:
    """Problems for evidence quotes that occur in no observation."""
    seen = [_normal(text) for _, text in observations]
    return [f"the evidence {item.quote!r} occurs in no observation"
            for item in diagnosis.evidence if not any(_normal(item.quote) in t for t in seen)]


def onset(report: str, now: datetime) -> datetime | None:
    """The symptom's onset when the report gives a clock time ("since 14:02")."""
    match = _ONSET.search(report)
    if match is None:
        return None
    hour, minute = int(match.group(1)), int(match.group(2))
    when = now.replace(hour=hour, minute=minute, second=0, microsecond=0)
    return when - timedelta(days=1) if when > now else when


def _times(quote: str, now: datetime) -> list[datetime]:
    found = []
    for match in _CLOCK.finditer(quote):
        day, hour, minute = match.group(1), int(match.group(2)), int(match.group(3))
        when = now.replace(hour=hour, minute=minute, second=0, microsecond=0)
        if day:
            year, month, date = (int(part) for part in day.split("-"))
            try:
                when = when.replace(year=year, month=month, day=date)
            except ValueError:
                continue
        found.append(when)
    return found


def untimely(diagnosis: Diagnosis, report: str, now: datetime) -> list[str]:
    """A problem when every timestamped quote of the culprit comes well after the onset."""
    start = onset(report, now)
    if start is None:
        return []
    times = [t for item in diagnosis.evidence for t in _times(item.quote, now)]
    if times and min(times) > start + SLACK:
        return [f"the culprit's first quoted sign ({min(times):%H:%M}) comes after the "
                f"symptom's onset ({start:%H:%M}): it cannot be the cause as quoted"]
    return []


def mechanical_problems(diagnosis: Diagnosis, observations: Sequence[tuple[str, str]],
                        report: str, now: datetime) -> list[str]:
    return [*unquoted(diagnosis, observations), *untimely(diagnosis, report, now)]
