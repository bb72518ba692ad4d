"""`triage history [--limit N]`: past investigations, newest first, one line each.

One line per investigation (no header) so the output greps and counts like `git log
--oneline`: id, start time in UTC, where it was started ("slack" by the bot, "cli" by
`triage investigate`), status, what it found, and the incident as reported.
"""

from __future__ import annotations

import argparse
from typing import Any

from bot.store import StoredInvestigation, opened
from bot.store.timeline import clip

DEFAULT_LIMIT = 20
DIAGNOSIS_WIDTH = 44
INCIDENT_WIDTH = 60


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "history",
        help="list past investigations from the store",
        description="List past investigations, newest first: id, start (UTC), origin (slack "
        "or cli), status, diagnosis and incident. The store is TRIAGE_DATABASE_URL or the "
        "local SQLite file.",
    )
    parser.add_argument(
        "--limit",
        type=positive,
        default=DEFAULT_LIMIT,
        metavar="N",
        help=f"show at most N investigations (default {DEFAULT_LIMIT})",
    )
    parser.set_defaults(handler=run)


def found(investigation: StoredInvestigation) -> str:
    """What the investigation concluded, in a few words."""
    diagnosis = investigation.diagnosis
    if diagnosis is not None:
        return f"{diagnosis.category} {diagnosis.culprit}"
    if investigation.finished and investigation.outcome:
        return f"no diagnosis ({investigation.outcome})"
    return "-"


def lines(investigations: list[StoredInvestigation]) -> list[str]:
    """The history as aligned lines."""
    rows = [
        (
            item.id,
            item.created_at.strftime("%Y-%m-%d %H:%M"),
            item.origin,
            item.status,
            clip(found(item), DIAGNOSIS_WIDTH),
            clip(item.incident, INCIDENT_WIDTH),
        )
        for item in investigations
    ]
    if not rows:
        return []
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    return [
        "  ".join(cell.ljust(width) for cell, width in zip(row[:5], widths, strict=True))
        + "  "
        + row[5]
        for row in rows
    ]


async def run(args: argparse.Namespace) -> int:
    async with opened() as store:
        investigations = await store.history(args.limit)
        where = store.where
    if not investigations:
        print(f"no investigations yet in {where}")
        return 0
    for line in lines(investigations):
        print(line)
    return 0
