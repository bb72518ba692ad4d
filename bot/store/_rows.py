"""Rows to records and records to rows: the only place that knows both shapes.

Feedback is one table with a `verdict` column (correct / wrong / reply) while the bot's
`Feedback` says `kind` (verdict / reply) and keeps the verdict in `text`; the mapping
below is lossless both ways for everything the bot's protocol allows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, cast

from bot.monitor import RunFigures
from bot.store.errors import CodecError
from bot.store.records import Feedback, Lesson, Status, StoredConstraint, StoredInvestigation
from bot.store.schema import json_list
from engines.constraints import ConstraintKind
from engines.diagnosis import Diagnosis

VERDICTS = ("correct", "wrong")


def investigation(row: Mapping[Any, Any]) -> StoredInvestigation:
    diagnosis = row["diagnosis"]
    return StoredInvestigation(
        id=row["id"],
        incident=row["incident"],
        channel=row["channel"],
        thread_ts=row["thread_ts"],
        requested_by=row["requested_by"],
        model=row["model"],
        engine=row["engine"],
        status=cast(Status, row["status"]),
        step=row["step"],
        events=row["last_seq"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        ended_at=row["ended_at"],
        diagnosis=Diagnosis.model_validate(diagnosis) if diagnosis is not None else None,
        outcome=row["outcome"],
        outcome_detail=row["outcome_detail"],
        status_ts=row["status_ts"],
        origin=row["origin"],
        figures=RunFigures(row["tool_calls"], row["cached_calls"], row["input_tokens"],
                           row["output_tokens"]),
    )


def constraint(row: Mapping[Any, Any]) -> StoredConstraint:
    return StoredConstraint(
        investigation_id=row["investigation_id"],
        kind=cast(ConstraintKind, row["kind"]),
        text=row["text"],
        value=row["value"],
        author=row["author"],
        at=row["at"],
    )


def feedback_values(item: Feedback) -> dict[str, Any]:
    """The row of a Feedback; a verdict must be "correct" or "wrong"."""
    if item.kind == "verdict":
        verdict = item.text.strip().lower()
        if verdict not in VERDICTS:
            raise CodecError(f"a verdict is 'correct' or 'wrong', not {item.text!r}")
        return {"verdict": verdict, "text": "", "author": item.user, "at": item.at}
    return {"verdict": "reply", "text": item.text, "author": item.user, "at": item.at}


def feedback(row: Mapping[Any, Any]) -> Feedback:
    if row["verdict"] == "reply":
        return Feedback(row["investigation_id"], row["author"], "reply", row["text"], row["at"])
    return Feedback(row["investigation_id"], row["author"], "verdict", row["verdict"], row["at"])


def clean_tags(tags: Iterable[str]) -> tuple[str, ...]:
    """Tags as given, trimmed, without blanks or repeats (order kept: the first is the main)."""
    seen: dict[str, None] = {}
    for tag in tags:
        cleaned = " ".join(str(tag).split())
        if cleaned:
            seen.setdefault(cleaned, None)
    return tuple(seen)


def lesson(row: Mapping[Any, Any]) -> Lesson:
    return Lesson(
        id=int(row["id"]),
        text=row["text"],
        services=json_list(row["services"]),
        namespaces=json_list(row["namespaces"]),
        symptoms=json_list(row["symptoms"]),
        source_investigation=row["source_investigation"],
        created_at=row["created_at"],
        state="pending" if row["state"] == "pending" else "confirmed",
    )
