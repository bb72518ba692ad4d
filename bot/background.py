"""Fire-and-forget work that is neither lost nor silent.

An `asyncio` task that nothing references can be garbage-collected mid-flight, and the
exception of a task nobody awaits is only reported when it is collected, if ever. The bot
spawns its side work (lesson writes, store updates, status edits) here instead.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger(__name__)


class Background:
    """Fire-and-forget tasks that are still referenced (so never garbage-collected) and whose
    failures are logged rather than lost."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coroutine: Coroutine[Any, Any, Any], name: str = "") -> asyncio.Task[Any]:
        task = asyncio.create_task(coroutine, name=name or None)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task %s failed", task.get_name(), exc_info=task.exception())

    async def join(self) -> None:
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
