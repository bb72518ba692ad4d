"""Shutting down: the running investigations end with a summary in their threads, within the
grace period the pod has, and their last posts go out."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Collection

from bot.investigations.approvals import deny_pending
from bot.investigations.investigation import Investigation
from bot.outbox import Outbox
from engines.constraints import Constraint

log = logging.getLogger(__name__)


async def shut_down(running: Collection[Investigation], outbox: Outbox, grace: float) -> None:
    """Ask every run to stop and summarise; within `grace` seconds in all, let them end and
    their posts go out, then cancel what is left."""
    deadline = time.monotonic() + grace
    for investigation in running:
        if not investigation.inbox.stop_requested:
            investigation.reporter.stop_reason = "Triage is shutting down"
            investigation.inbox.put(Constraint("stop", "the bot is shutting down"))
            deny_pending(investigation, "")
    tasks = [i.task for i in running if i.task is not None]
    if tasks:
        _, pending = await asyncio.wait(tasks, timeout=max(0.0, deadline - time.monotonic()))
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
    try:
        await asyncio.wait_for(outbox.drain(), timeout=max(0.5, deadline - time.monotonic()))
    except TimeoutError:
        log.warning("%d Slack messages were not sent before shutdown", outbox.pending)
