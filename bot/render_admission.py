"""What the bot says when a mention waits for a free slot (bot/investigations/admission.py)."""

from __future__ import annotations

from bot._blocks import Message, context, section


def queued_message(ahead: int, total: int, per_channel: int) -> Message:
    """The mention is queued in the store; it starts by itself when a slot frees."""
    who = "nobody" if ahead == 0 else f"{ahead} ahead"
    return Message(
        f"Queued, {ahead} ahead",
        [section(f":hourglass_flowing_sand: *Queued*, {who}: Triage is running as many "
                 "investigations as it may. This one starts here by itself when a slot is free."),
         context(f"Limits: {total} at once, {per_channel} per channel.")],
    )
