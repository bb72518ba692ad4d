"""The loopback Slack refuses what Slack refuses on its agent surfaces, so the bot's tests
mean something: stream state, chunk types and fields, block limits, legacy workspaces.
Driven through slack_sdk's real client and its `chat_stream` helper."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from slack_sdk.errors import SlackApiError
from slack_sdk.models.messages.chunk import MarkdownTextChunk, TaskUpdateChunk
from slack_sdk.web.async_client import AsyncWebClient

from bot.render_stream import feedback_buttons, table
from tests.fakes.slack_api import TEAM, TOKEN, FakeSlack


@pytest_asyncio.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as fake:
        yield fake


def client_of(slack: FakeSlack) -> AsyncWebClient:
    return AsyncWebClient(token=TOKEN, base_url=slack.url)


async def _error(call: object) -> str:
    with pytest.raises(SlackApiError) as refused:
        await call  # type: ignore[misc]
    return str(refused.value.response["error"])


async def test_a_stream_through_the_helper(slack: FakeSlack) -> None:
    client = client_of(slack)
    stream = await client.chat_stream(channel="CA", thread_ts="1.1", recipient_team_id=TEAM,
                                      recipient_user_id="UALICE", task_display_mode="timeline")
    await stream.append(chunks=[MarkdownTextChunk(text="**Step 1** look"),
                                TaskUpdateChunk(id="c1", title="Listing pods",
                                                status="in_progress")])
    await stream.append(chunks=[TaskUpdateChunk(id="c1", title="Listing pods",
                                                status="complete", output="10 pods")])
    await stream.stop(blocks=[feedback_buttons("abc")])
    assert stream.ts is not None
    message = slack.messages[f"CA/{stream.ts}"]
    assert message.stream == "stopped" and message.text == "**Step 1** look"
    assert message.tasks == {"c1": {"id": "c1", "title": "Listing pods", "status": "complete",
                                    "output": "10 pods"}}
    assert message.blocks[0]["type"] == "context_actions"
    # Append after stop, and to a ts that is no stream.
    assert await _error(client.chat_appendStream(channel="CA", ts=stream.ts,
                                                 markdown_text="more")) == \
        "message_not_in_streaming_state"
    assert await _error(client.chat_stopStream(channel="CA", ts=stream.ts)) == \
        "message_not_in_streaming_state"
    assert await _error(client.chat_appendStream(channel="CA", ts="9.9",
                                                 markdown_text="x")) == "message_not_found"


async def test_chunks_and_arguments_are_checked(slack: FakeSlack) -> None:
    client = client_of(slack)
    recipient = {"recipient_team_id": TEAM, "recipient_user_id": "UALICE"}
    assert await _error(client.chat_startStream(channel="CA", thread_ts="1.1")) == \
        "invalid_arguments", "a channel stream needs its recipient"
    assert await _error(client.chat_startStream(
        channel="CA", thread_ts="1.1", task_display_mode="grid", **recipient)) == \
        "invalid_arguments"
    for bad in ({"type": "sparkles"}, {"type": "task_update", "id": "x", "title": "t",
                                       "status": "done"},
                {"type": "task_update", "title": "no id", "status": "complete"},
                {"type": "plan_update"}, {"type": "markdown_text", "text": ""}):
        assert await _error(client.chat_startStream(channel="CA", thread_ts="1.1",
                                                    chunks=[bad], **recipient)) == \
            "invalid_chunks", bad
    assert await _error(client.chat_startStream(
        channel="CA", thread_ts="1.1", markdown_text="x" * 12_001, **recipient)) == \
        "msg_too_long"
    started = await client.chat_startStream(channel="DALICE", thread_ts="1.1",
                                            markdown_text="a DM needs no recipient")
    assert started["ts"]
    assert await _error(client.chat_appendStream(channel="DALICE", ts=started["ts"])) == \
        "invalid_arguments", "an append with nothing in it"


async def test_blocks_are_checked(slack: FakeSlack) -> None:
    client = client_of(slack)
    one = table(("a", "b"), [("1", "2")], "t1")
    await client.chat_postMessage(channel="CA", text="ok", blocks=[one, feedback_buttons("x")])
    assert await _error(client.chat_postMessage(channel="CA", text="two tables",
                                                blocks=[one, {**one, "block_id": "t2"}])) == \
        "invalid_blocks"
    wide = table([str(i) for i in range(21)], [], "wide")
    assert await _error(client.chat_postMessage(channel="CA", text="21 columns",
                                                blocks=[wide])) == "invalid_blocks"
    loose = {"type": "actions", "elements": feedback_buttons("x")["elements"]}
    assert await _error(client.chat_postMessage(channel="CA", text="thumbs outside",
                                                blocks=[loose])) == "invalid_blocks"
    too_many = [{"type": "divider"}] * 51
    assert await _error(client.chat_postMessage(channel="CA", text="51",
                                                blocks=too_many)) == "invalid_blocks"


async def test_a_legacy_workspace_refuses_the_agent_surfaces() -> None:
    async with FakeSlack(legacy=True) as slack:
        client = client_of(slack)
        assert await _error(client.chat_startStream(
            channel="CA", thread_ts="1.1", recipient_team_id=TEAM,
            recipient_user_id="U1")) == "unknown_method"
        assert await _error(client.assistant_threads_setStatus(
            channel_id="CA", thread_ts="1.1", status="thinking")) == "unknown_method"
        assert await _error(client.chat_postMessage(
            channel="CA", text="x", blocks=[feedback_buttons("x")])) == "invalid_blocks"
        await client.chat_postMessage(channel="CA", text="x",
                                      blocks=[{"type": "section",
                                               "text": {"type": "mrkdwn", "text": "fine"}}])
