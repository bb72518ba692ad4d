"""A child process for the crash test: append events forever, acknowledging each commit.

`python -m tests.store._appender URL ID` appends to investigation ID (of a migrated store)
`event(n)` for n = 1, 2, ... and prints `n` once each append has committed. The parent
kills it with SIGKILL at a moment of its choosing and checks that the log is exactly
`event(1) .. event(k)` for some k at least the last acknowledged n.
"""

from __future__ import annotations

import asyncio
import sys
from datetime import UTC, datetime, timedelta

from bot.store import Store
from engines.events import Event, ObservationReceived, ThoughtRecorded, ToolCalled

T0 = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)


def event(n: int, investigation_id: str) -> Event:
    """The n-th event (n from 1) of a deterministic log: thought, action, observation, ..."""
    step, phase = divmod(n - 1, 3)
    step += 1
    at = T0 + timedelta(milliseconds=n)
    if phase == 0:
        return ThoughtRecorded(investigation_id, step, f"thought {n}", at)
    if phase == 1:
        return ToolCalled(
            investigation_id, step, f"c{step}", "k8s_pods", {"n": n}, f"call {n}", at
        )
    return ObservationReceived(
        investigation_id, step, f"c{step}", "k8s_pods", "success", f"observation {n} " * 20,
        {"n": n, "rows": [(n, "x" * 50)] * 10}, at=at,
    )


async def main(url: str, investigation_id: str) -> None:
    store = await Store.open(url)
    n = 0
    while True:
        n += 1
        await store.append_event(investigation_id, event(n, investigation_id))
        sys.stdout.write(f"{n}\n")
        sys.stdout.flush()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
