"""A click on the hypothesis board (*Rule out*, *Dig into*) as the constraint it asks for.

The hypothesis is looked up in the reporter's latest board, which only the replica running
the investigation has: the listener calls this when the run is here, and the inbox's
delivery calls it on the owner when the click reached another replica.
"""

from __future__ import annotations

from bot import render_board
from bot.investigations.investigation import Investigation
from engines.constraints import Constraint, ConstraintKind
from engines.hypotheses import Hypothesis


def rule_out(h: Hypothesis, user: str, reply: str) -> Constraint:
    """Rule out this cause: its category of fault in its culprit, not every fault there."""
    return Constraint("rule_out", f"Rule out: {h.label}", f"{h.category}:{h.culprit.name}",
                      author=user, reply=reply)


def dig_into(h: Hypothesis, user: str, reply: str) -> Constraint:
    """Narrow the focus to the culprit: its namespace when the culprit is one."""
    kind: ConstraintKind = "focus_namespace" if h.culprit.kind.lower() == "namespace" \
        else "focus_workload"
    return Constraint(kind, f"Dig into: {h.label}", h.culprit.name, author=user, reply=reply)


def board_constraint(investigation: Investigation, key: str, ruling_out: bool, user: str,
                     reply: str) -> Constraint | str:
    """The constraint a click on hypothesis `key` asks for, or why there is none (a stale
    board: the hypothesis meanwhile gone, refuted or confirmed)."""
    hypothesis = render_board.find(investigation.reporter.hypotheses, key)
    if hypothesis is None:
        return "That hypothesis is no longer on the board."
    if hypothesis.state != "open":
        return f"That hypothesis is already {hypothesis.state}."
    return (rule_out if ruling_out else dig_into)(hypothesis, user, reply)
