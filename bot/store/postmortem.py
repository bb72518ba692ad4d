"""An investigation as Markdown to paste into a postmortem document.

A postmortem needs what happened when, in UTC, what was looked at and found, what humans
asked for, what the root cause was and on what evidence, the fix, and whether people agreed
with it. Everything comes from the store (the event log, the constraints, the feedback), so
the document can be written days later. Text from tools and people is escaped so that a
`|` or a backtick in a log line cannot break the tables or the code spans.
"""

from __future__ import annotations

from datetime import datetime

from bot.store.records import InvestigationDetails
from bot.store.timeline import clip, entries, key_observations, placed_evidence
from engines.diagnosis import Evidence

TIME = "%H:%M:%S"
DATETIME = "%Y-%m-%d %H:%M:%S UTC"


def _cell(text: str) -> str:
    """Text that stays inside one Markdown table cell."""
    return " ".join(text.split()).replace("\\", "\\\\").replace("|", "\\|")


def _code(text: str) -> str:
    """An inline code span that survives backticks in the text."""
    ticks = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _evidence(item: Evidence) -> list[str]:
    """One quote as a list item: where it comes from, then the quote verbatim in a code
    block (a fence longer than any run of backticks in it)."""
    if item.found is False:
        head = f"- {_code(item.tool)} (not found in its output):"
    elif item.step is not None:
        head = f"- Step {item.step}, {_code(item.tool)}:"
    else:
        head = f"- {_code(item.tool)}:"
    fence = "````" if "```" in item.quote else "```"
    return [head, f"  {fence}text", *(f"  {line}" for line in item.quote.splitlines()),
            f"  {fence}"]


def _duration(start: datetime, end: datetime | None) -> str:
    if end is None:
        return ""
    seconds = max((end - start).total_seconds(), 0.0)
    if seconds < 120:
        return f" ({seconds:.0f} s)"
    return f" ({seconds / 60:.0f} min)"


def markdown(details: InvestigationDetails) -> str:
    """The postmortem timeline of one investigation."""
    inv = details.investigation
    diagnosis = inv.diagnosis
    status = f"{inv.status} ({inv.outcome})" if inv.outcome else inv.status
    out: list[str] = [f"# Investigation {inv.id}: {clip(inv.incident, 100)}", ""]
    facts = [
        ("Incident", inv.incident),
        ("Status", status),
        ("Started", inv.created_at.strftime(DATETIME)),
        (
            "Ended",
            inv.ended_at.strftime(DATETIME) + _duration(inv.created_at, inv.ended_at)
            if inv.ended_at
            else "not ended",
        ),
        ("Requested by", inv.requested_by or "-"),
        ("Started from", "the command line (`triage investigate`)" if inv.origin == "cli"
         else "Slack"),
        ("Engine / model", f"{inv.engine or '-'} / {inv.model or '-'}"),
        ("Steps", str(inv.step)),
    ]
    if inv.channel:
        facts.append(("Slack", f"channel {inv.channel}, thread {inv.thread_ts or '-'}"))
    out += ["| | |", "|---|---|"]
    out += [f"| **{name}** | {_cell(value)} |" for name, value in facts]

    out += ["", "## Root cause", ""]
    if diagnosis is None and not inv.finished:
        out.append("No diagnosis yet: the investigation is still running.")
    elif diagnosis is None:
        out.append(f"No diagnosis was reached ({inv.outcome_detail or inv.outcome or inv.status}).")
    else:
        out.append(f"**{diagnosis.category}** in {_code(str(diagnosis.culprit))}, "
                   f"confidence {diagnosis.confidence:.0%}.")
        out += ["", diagnosis.summary.strip()]
        if diagnosis.evidence:
            out += ["", "### Evidence", ""]
            for quoted in placed_evidence(diagnosis, details.events).evidence:
                out += _evidence(quoted)
        if diagnosis.fix.strip():
            out += ["", "### Fix", "", diagnosis.fix.strip()]

    out += ["", "## Timeline (UTC)", "", "| Time | Step | What | Details |", "|---|---|---|---|"]
    for item in entries(details.events):
        step = str(item.step) if item.step is not None else ""
        out.append(f"| {item.at.strftime(TIME)} | {step} | {item.label} | {_cell(item.text)} |")
    if not details.events:
        out.append("| | | | no events were recorded |")

    observations = key_observations(details.events, diagnosis)
    if observations:
        out += ["", "## Key observations", ""]
        for observation, lines in observations:
            shown = [clip(line, 300) if len(line) > 300 else line for line in lines[:5]]
            fence = "````" if any("```" in line for line in shown) else "```"
            out += [f"Step {observation.step}, {_code(observation.tool)}:", "", f"{fence}text"]
            out += [*shown, fence, ""]
        out.pop()

    out += ["", "## Constraints from humans", ""]
    if details.constraints:
        for constraint in details.constraints:
            who = constraint.author or "a human"
            out.append(
                f"- {constraint.at.strftime(TIME)} {who}: \"{_cell(constraint.text)}\" "
                f"({constraint.kind})"
            )
    else:
        out.append("None.")

    out += ["", "## Feedback", ""]
    if details.feedback:
        for given in details.feedback:
            if given.kind == "verdict":
                what = f"marked it **{given.text}**"
            else:
                what = f'replied: "{_cell(given.text)}"'
            out.append(f"- {given.at.strftime(TIME)} {given.user or 'someone'} {what}")
    else:
        out.append("None.")
    return "\n".join(out) + "\n"
