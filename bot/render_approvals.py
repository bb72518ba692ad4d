"""The messages of a write waiting for a human: the request with its buttons, and the verdict
that replaces it. Apart from bot/render.py because approvals have their own life cycle
(bot/investigations/approvals.py posts one and edits it once)."""

from __future__ import annotations

from bot._blocks import Message, button, clean, escape, section
from bot.render import APPROVE_ACTION, DENY_ACTION, clean_line


def approval_request(approval_id: str, description: str, tool: str) -> Message:
    return Message(
        f"Approval needed: {clean_line(description)}",
        [
            section(
                f":raised_hand: *Approval needed.* I want to run `{escape(tool)}`, which changes "
                f"something:\n>{clean(description)}"
            ),
            {
                "type": "actions",
                "block_id": "triage_approval",
                "elements": [
                    button("Approve", APPROVE_ACTION, approval_id, "primary"),
                    button("Deny", DENY_ACTION, approval_id, "danger"),
                ],
            },
        ],
    )


def approval_decided(description: str, approved: bool, user: str) -> Message:
    verdict = "approved" if approved else "denied"
    icon = ":white_check_mark:" if approved else ":no_entry_sign:"
    by = f"<@{user}>" if user else "nobody in time"
    return Message(
        f"{verdict}: {clean_line(description)}",
        [section(f"{icon} *{verdict.capitalize()}* by {by}:\n>{clean(description)}")],
    )
