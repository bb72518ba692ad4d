"""The status message of a thread is edited in place; one that is gone is posted anew."""

from __future__ import annotations

from slack_sdk.web.async_client import AsyncWebClient

from bot.outbox import Outbox, Status, Thread
from bot.render import Message
from tests.fakes.slack_api import TOKEN, FakeSlack


async def test_a_deleted_status_message_is_posted_again_and_reported() -> None:
    async with FakeSlack() as slack:
        client = AsyncWebClient(token=TOKEN, base_url=f"{slack.url}/")
        outbox = Outbox(client)
        seen: list[str] = []
        thread = Thread("CGONE", "1700000000.000100", status_ts="1700000000.000200",
                        on_status=seen.append)
        slack.fail("chat.update", "message_not_found", channel="CGONE")
        outbox.put(Status(thread, lambda: Message("Investigating: checkout (running, step 2)")))
        await outbox.drain()
        assert [c.method for c in slack.calls if c.args.get("channel") == "CGONE"] == [
            "chat.update", "chat.postMessage"]
        assert not thread.dead, "a missing status message does not end the run"
        assert thread.status_ts not in (None, "1700000000.000200")
        assert seen == [thread.status_ts], "the new status message is kept for a resume"
