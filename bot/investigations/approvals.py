"""Approvals: a tool that changes something runs only once a human in the thread approves it.

The engine's call waits on a future that an Approve/Deny click, a stop, the end of the run or
the timeout settles; whatever settles it first wins, and anything but an approval is a denial.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Iterable

from bot.investigations.investigation import Approval, Investigation
from bot.render_approvals import approval_decided, approval_request
from tools.registry import Tool

log = logging.getLogger(__name__)

APPROVAL_TIMEOUT_SECONDS = 15 * 60.0


class Approvals:
    """Approval requests, numbered across investigations so that a click names one."""

    def __init__(self, timeout: float = APPROVAL_TIMEOUT_SECONDS) -> None:
        self.timeout = timeout
        self._ids = itertools.count(1)

    async def ask(self, investigation: Investigation, tool: Tool, description: str) -> bool:
        """Ask the thread to approve a tool that changes something; deny on timeout or stop."""
        if investigation.inbox.stop_requested:
            return False
        approval_id = f"{investigation.id}:{next(self._ids)}"
        future: asyncio.Future[tuple[bool, str]] = asyncio.get_running_loop().create_future()
        approval = Approval(approval_id, description, future)
        investigation.approvals[approval_id] = approval
        reporter = investigation.reporter
        reporter.waiting(True)

        def posted(ts: str) -> None:
            approval.ts = ts

        reporter.post(approval_request(approval_id, description, tool.name), posted)
        try:
            approved, user = await asyncio.wait_for(future, self.timeout)
        except TimeoutError:
            approved, user = False, ""
        finally:
            investigation.approvals.pop(approval_id, None)
        reporter.edit(lambda: approval.ts, approval_decided(description, approved, user))
        reporter.waiting(False)
        log.info("approval %s %s by %s", approval_id, "granted" if approved else "denied",
                 user or "timeout")
        return approved

    def decide(
        self, investigations: Iterable[Investigation], approval_id: str, approved: bool,
        user: str,
    ) -> bool:
        """An Approve/Deny click on one of the `investigations`' requests. False when the
        approval is no longer pending."""
        for investigation in investigations:
            approval = investigation.approvals.get(approval_id)
            if approval is not None and not approval.future.done():
                approval.future.set_result((approved, user))
                return True
        return False


def deny_pending(investigation: Investigation, user: str) -> None:
    """Settle every approval the investigation still waits for as denied (by `user`, or by
    nobody when the run stops or ends)."""
    for approval in investigation.approvals.values():
        if not approval.future.done():
            approval.future.set_result((False, user))
