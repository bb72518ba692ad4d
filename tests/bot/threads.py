"""Reading threads that hold several runs (a correction's new attempt, a resumed run): each
run opens with its own status message."""

from __future__ import annotations

from tests.bot.harness import state_of
from tests.fakes.slack_api import FakeSlack, Posted

END_STATES = ("done", "stopped", "failed")


def statuses(slack: FakeSlack, channel: str, thread_ts: str) -> list[Posted]:
    return [m for m in slack.thread(channel, thread_ts) if m.text.startswith("Investigating:")]


async def runs_ended(slack: FakeSlack, channel: str, thread_ts: str, runs: int,
                     within: float = 20) -> list[Posted]:
    """Wait until the thread has `runs` status messages and every one shows an end (each
    run's final status edit is queued after all its other messages)."""

    def done(fake: FakeSlack) -> list[Posted] | None:
        found = statuses(fake, channel, thread_ts)
        if len(found) < runs or any(state_of(s) not in END_STATES for s in found):
            return None
        return found

    result: list[Posted] = await slack.wait_for(done, within)
    return result
