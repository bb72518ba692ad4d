"""`triage show ID [--markdown]`: one past investigation, its timeline and its diagnosis.

Plain text for a terminal by default; `--markdown` prints the postmortem timeline of
`bot.store.postmortem`, ready to paste into a postmortem document. An unknown id is one
line on stderr and exit status 1, like a failed `grep`.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from bot.store import InvestigationDetails, UnknownInvestigationError, opened
from bot.store.postmortem import markdown
from bot.store.timeline import entries, placed_evidence

DATETIME = "%Y-%m-%d %H:%M:%S UTC"
TIME = "%H:%M:%S"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "show",
        help="show one past investigation: timeline and diagnosis",
        description="Print an investigation from the store: its timeline and its diagnosis, "
        "or with --markdown a post-incident timeline to paste into a postmortem.",
    )
    parser.add_argument("id", metavar="ID", help="the investigation id (see `triage history`)")
    parser.add_argument(
        "--markdown", action="store_true", help="print a postmortem timeline in Markdown"
    )
    parser.set_defaults(handler=run)


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def text(details: InvestigationDetails) -> str:
    """The investigation as plain text for a terminal."""
    inv = details.investigation
    status = f"{inv.status} ({inv.outcome})" if inv.outcome else inv.status
    started = inv.created_at.strftime(DATETIME)
    if inv.requested_by:
        started += f" by {inv.requested_by}"
    started += " from the command line" if inv.origin == "cli" else " in Slack"
    if inv.ended_at is not None:
        started += f" · ended {inv.ended_at.strftime(DATETIME)}"
    out = [
        f"Investigation {inv.id} · {status}",
        f"Incident    {inv.incident.strip()}",
        f"Started     {started}",
        f"Engine      {inv.engine or '-'} · model {inv.model or '-'} · "
        f"{plural(inv.step, 'step')} · {plural(inv.events, 'event')}",
    ]
    if inv.finished:
        figures = inv.figures
        out.append(f"Cost        {plural(figures.tool_calls, 'tool call')} "
                   f"({figures.cached_calls} answered by a cache) · {figures.input_tokens:,} "
                   f"tokens in, {figures.output_tokens:,} out")
    out += [
        "",
        "Timeline (UTC)",
    ]
    timeline = entries(details.events)
    for item in timeline:
        step = f"#{item.step}" if item.step is not None else ""
        out.append(f"  {item.at.strftime(TIME)}  {step:<4}  {item.label:<11} {item.text}")
    if not timeline:
        out.append("  (no events recorded)")
    out += ["", "Diagnosis"]
    diagnosis = inv.diagnosis
    if diagnosis is None:
        out.append("  none yet: still running" if not inv.finished else
                   f"  none ({inv.outcome_detail or inv.outcome or inv.status})")
    else:
        out += [
            f"  Category    {diagnosis.category}",
            f"  Culprit     {diagnosis.culprit}",
            f"  Confidence  {diagnosis.confidence:.0%}",
            f"  Summary     {diagnosis.summary.strip()}",
        ]
        # Each quote on lines of its own, exactly as the tool printed it, under its source.
        for index, evidence in enumerate(placed_evidence(diagnosis, details.events).evidence):
            head = "  Evidence    " if index == 0 else "              "
            out.append(f"{head}{evidence.origin}")
            out += [f"                {line}" for line in evidence.quote.splitlines()]
        if diagnosis.fix.strip():
            out.append(f"  Fix         {diagnosis.fix.strip()}")
    if details.constraints:
        out += ["", "Constraints from humans"]
        for constraint in details.constraints:
            who = constraint.author or "a human"
            out.append(
                f"  {constraint.at.strftime(TIME)}  {who}: {constraint.text} ({constraint.kind})"
            )
    if details.feedback:
        out += ["", "Feedback"]
        for given in details.feedback:
            said = given.text if given.kind == "verdict" else f'replied "{given.text}"'
            out.append(f"  {given.at.strftime(TIME)}  {given.user or 'someone'}: {said}")
    return "\n".join(out) + "\n"


async def run(args: argparse.Namespace) -> int:
    async with opened() as store:
        try:
            details = await store.details(args.id)
        except UnknownInvestigationError as exc:
            print(f"triage: error: {exc} (see `triage history`)", file=sys.stderr)
            return 1
    sys.stdout.write(markdown(details) if args.markdown else text(details))
    return 0
