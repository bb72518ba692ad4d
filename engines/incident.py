"""What an investigation is about: the report, its clock and where it came from."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime


def new_investigation_id() -> str:
    """Short, sortable-enough ids that read well in Slack and logs."""
    return uuid.uuid4().hex[:12]


@dataclass(frozen=True, slots=True)
class Incident:
    """A reported symptom to investigate.

    `now` is the investigation's clock: the wall clock in live use, a scenario's `now` in the
    sandbox, or `--at` for post-incident analysis. Every tool reads time from it, so "the last
    30 minutes" means the same window in every world.
    """

    text: str
    now: datetime = field(default_factory=lambda: datetime.now(UTC))
    id: str = field(default_factory=new_investigation_id)
    reporter: str = ""
