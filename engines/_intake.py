"""What the engines do with the humans' constraints between two steps.

New constraints join the set the toolset enforces and are told to the model as a user turn;
withdrawn ones (an Undo, an edited or deleted reply) leave it and the model is told so; a
pause holds the loop until a human says to go on, undoes it, or `limit` seconds pass.
Every change is an event, so a resumed investigation has the same constraints.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from engines import prompts
from engines._history import History
from engines.constraints import ConstraintInbox, ConstraintSet
from engines.events import ConstraintApplied, ConstraintWithdrawn, ErrorOccurred, Event
from engines.model import UserMessage

Emit = Callable[[Event], Awaitable[None]]


async def take(inbox: ConstraintInbox, constraints: ConstraintSet, history: History,
               emit: Emit, investigation_id: str, step: int) -> None:
    """Apply what the inbox holds: withdrawals first, then new constraints."""
    for reply in inbox.drain_withdrawn():
        gone = constraints.withdraw(reply)
        summary = "; ".join(c.summary for c in gone)
        for constraint in gone:
            history.append(UserMessage(prompts.withdrawal_message(constraint.author,
                                                                  constraint.rule)))
        if gone:
            await emit(ConstraintWithdrawn(investigation_id, step, reply, summary,
                                           gone[0].author))
    if inbox.resume_requested:
        inbox.resume_requested = False
        for paused in [c for c in constraints.items if c.kind == "pause"]:
            constraints.items.remove(paused)
            history.append(UserMessage(prompts.withdrawal_message(paused.author, paused.rule)))
            await emit(ConstraintWithdrawn(investigation_id, step, paused.reply,
                                           paused.summary, paused.author))
    for constraint in inbox.drain():
        constraints.add(constraint)
        history.append(UserMessage(prompts.constraint_message(constraint.author,
                                                              constraint.rule)))
        await emit(ConstraintApplied(
            investigation_id, step, constraint.text, constraint.summary, constraint.author,
            constraint=constraint.kind, value=constraint.value, reply=constraint.reply))


async def hold_while_paused(inbox: ConstraintInbox, constraints: ConstraintSet,
                            history: History, emit: Emit, investigation_id: str, step: int,
                            limit: float) -> float:
    """Wait while a pause is in force; the seconds waited (the run's clock stops). A rewind
    asked during the pause ends the wait: the engine rolls back, then holds again if the
    pause still stands."""
    if not constraints.paused:
        return 0.0
    started = time.monotonic()
    while constraints.paused and not inbox.stop_requested and inbox.rewind is None:
        left = limit - (time.monotonic() - started)
        if left <= 0 or not await inbox.changed(left):
            for paused in [c for c in constraints.items if c.kind == "pause"]:
                constraints.items.remove(paused)  # logged, so a replay does not hold again
                await emit(ConstraintWithdrawn(investigation_id, step, paused.reply,
                                               paused.summary, paused.author))
            await emit(ErrorOccurred(investigation_id, step,
                                     f"paused for {limit:g}s with no word: going on"))
            break
        if inbox.rewind is not None:
            break  # what came with the rewind is taken after it, not before
        await take(inbox, constraints, history, emit, investigation_id, step)
    return time.monotonic() - started
