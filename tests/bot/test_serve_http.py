"""The real `triage serve` process in HTTP mode against the loopback Slack.

One server process serves the whole module (starting Python costs a second or two); each
test uses its own channel, so threads never mix. Requests are signed and sent over real
HTTP; the bot's Web API calls go to the fake, which records them.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import AsyncIterator

import aiohttp
import pytest
import pytest_asyncio

from bot import render
from tests.bot.harness import (
    BotProcess,
    bot_process,
    button,
    ended,
    posted_with,
    state_of,
    status_message,
)
from tests.bot.models import LEAKED_KEY
from tests.fakes.slack_api import BOT_USER, FakeSlack, SlackSender, sign

pytestmark = pytest.mark.asyncio(loop_scope="module")

ALICE, BOB, CAROL, MALLORY = "UALICE", "UBOB", "UCAROL", "UMALLORY"
ONCALL = "S0ONCALL"
CHANNELS = ["CMAIN", "CDUP", "CSIG", "CBAD", "CACCESS", "CSTOP1", "CSTOP2", "CRATE", "CFAIL",
            "CCMD"]
REPORT = "checkout in prod keeps restarting, customers get 502s on payment"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def slack() -> AsyncIterator[FakeSlack]:
    async with FakeSlack(usergroups={ONCALL: [CAROL]}) as fake:
        yield fake


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def bot(slack: FakeSlack) -> AsyncIterator[BotProcess]:
    env = {
        "TRIAGE_ALLOWED_CHANNELS": ",".join(CHANNELS),
        "TRIAGE_ALLOWED_USERS": f"{ALICE}, <@{BOB}|bob> <!subteam^{ONCALL}|@oncall>",
    }
    # The test model tells a ReAct story (pods at step 1, events at step 2).
    async with bot_process(slack, env=env, args=("--engine", "react")) as process:
        yield process


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def sender(bot: BotProcess, slack: FakeSlack) -> AsyncIterator[SlackSender]:
    async with aiohttp.ClientSession() as session:
        yield SlackSender(f"{bot.url}/slack/events", session,
                          response_url=f"http://127.0.0.1:{slack.port}/respond/1")


def statuses(slack: FakeSlack, channel: str) -> list[str]:
    return [m.ts for m in slack.in_channel(channel) if m.text.startswith("Investigating:")]


async def probe(slack: FakeSlack, sender: SlackSender, channel: str) -> str:
    """A valid mention after bad requests: once its thread ends, anything the bad requests
    had started would have posted before it (a channel's posts leave in order)."""
    sent, ts = await sender.mention(channel, ALICE, REPORT)
    assert sent.status == 200
    await ended(slack, channel, ts)
    return ts


async def test_health_endpoints(bot: BotProcess) -> None:
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{bot.url}/healthz") as response:
            assert response.status == 200
        async with session.get(f"{bot.url}/readyz") as response:
            assert response.status == 200
            assert (await response.json())["mode"] == "http"


async def test_mention_opens_a_thread_with_status_steps_chart_and_diagnosis(
    slack: FakeSlack, sender: SlackSender
) -> None:
    sent, ts = await sender.mention("CMAIN", ALICE, f"[chart] {REPORT}")
    assert sent.status == 200
    assert sent.seconds < 1.0

    status = await ended(slack, "CMAIN", ts)
    thread = slack.thread("CMAIN", ts)
    assert thread[0] is status, "the status message comes first in the thread"
    assert status.thread_ts == ts, "the thread hangs under the mention"
    assert state_of(status) == "done"
    assert "step 4 of" in status.all_text and "test-model" in status.all_text
    assert f"<@{ALICE}>" in status.all_text
    assert render.STOP_ACTION not in status.all_text, "no Stop button once done"
    assert status.edits >= 1, "the status is edited in place"

    steps = "\n".join(m.all_text for m in thread if m.text.startswith("Step"))
    for number in (1, 2, 3):
        assert f"*Step {number}*" in steps
    assert "Listing pods in shop" in steps and "OOMKilled" in steps
    assert "Reading the metrics of shop/checkout" in steps

    completed = await slack.wait_for(lambda f: f.calls_of("files.completeUploadExternal",
                                                          "CMAIN"))
    assert all(c.args["thread_ts"] == ts for c in completed)
    assert [c.args["png"] for c in slack.calls if c.method == "upload"] == [True]

    diagnosis = thread[-1]
    assert "oom_killed" in diagnosis.all_text
    assert "Deployment shop/checkout" in diagnosis.all_text
    investigation_id = button(diagnosis, render.CORRECT_ACTION)
    assert button(diagnosis, render.WRONG_ACTION) == investigation_id

    clicked = await sender.click("CMAIN", BOB, diagnosis, render.CORRECT_ACTION,
                                 investigation_id)
    assert clicked.status == 200
    await slack.wait_for(lambda f: "marked this diagnosis correct" in diagnosis.all_text)
    assert render.CORRECT_ACTION not in diagnosis.all_text

    _, reply_ts = await sender.message("CMAIN", ALICE, "right, we bumped the limit", thread_ts=ts)
    await slack.wait_for(lambda f: [c for c in f.calls_of("reactions.add")
                                    if c.args["timestamp"] == reply_ts])
    assert not posted_with(slack, "CMAIN", ts, "Noted"), "a reply after the end is feedback"


async def test_a_redelivered_event_starts_one_investigation(
    slack: FakeSlack, sender: SlackSender
) -> None:
    first, ts = await sender.mention("CDUP", ALICE, REPORT, event_id="EvDUPLICATE1")
    again, _ = await sender.mention("CDUP", ALICE, REPORT, ts=ts, event_id="EvDUPLICATE1",
                                    retry=1)
    assert (first.status, again.status) == (200, 200)
    # Slack also sends the message itself (message.channels) next to app_mention.
    echo, _ = await sender.message("CDUP", ALICE, f"<@{BOT_USER}> {REPORT}")
    assert echo.status == 200
    await ended(slack, "CDUP", ts)
    await probe(slack, sender, "CDUP")
    assert len(statuses(slack, "CDUP")) == 2  # the mention's and the probe's
    assert not posted_with(slack, "CDUP", ts, "Noted"), "the copy was not taken as a reply"
    assert not slack.calls_of("reactions.add", "CDUP"), "nor kept as feedback"


async def test_bad_signatures_get_401_and_change_nothing(
    slack: FakeSlack, sender: SlackSender
) -> None:
    body = sender.event_body({"type": "app_mention", "user": ALICE, "channel": "CSIG",
                              "text": f"<@{BOT_USER}> {REPORT}", "ts": sender.new_ts()})
    wrong = await sender.send(body, "application/json", secret="not-the-secret")
    unsigned = await sender.send(body, "application/json", signed=False)
    stale_at = str(int(time.time()) - 600)
    stale = await sender.send(body, "application/json", signed=False, headers={
        "X-Slack-Request-Timestamp": stale_at,
        "X-Slack-Signature": sign("test-signing-secret", stale_at, body),
    })
    undecodable = await sender.send(b"\xff\xfe\x00", "application/json")  # signed, not UTF-8
    assert (wrong.status, unsigned.status, stale.status, undecodable.status) == (401,) * 4
    calls = len(slack.calls)
    await probe(slack, sender, "CSIG")
    assert len(statuses(slack, "CSIG")) == 1
    assert not [c for c in slack.calls[:calls] if c.args.get("channel") == "CSIG"]


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"{not json", "application/json"),
        (b"[1, 2, 3]", "application/json"),
        (json.dumps({"type": "event_callback", "event_id": "Ev1"}).encode(), "application/json"),
        (json.dumps({"type": "event_callback", "event": {"type": "app_mention"}}).encode(),
         "application/json"),
        (b"payload=%7Bbroken", "application/x-www-form-urlencoded"),
        (b"text=hello", "application/x-www-form-urlencoded"),
    ],
)
async def test_malformed_payloads_get_400(sender: SlackSender, body: bytes,
                                          content_type: str) -> None:
    sent = await sender.send(body, content_type)
    assert sent.status == 400, sent.body


async def test_malformed_payloads_change_nothing(slack: FakeSlack, sender: SlackSender) -> None:
    sent = await sender.send(json.dumps({"type": "event_callback", "event_id": "EvBAD",
                                         "event": "CBAD"}).encode(), "application/json")
    assert sent.status == 400
    await probe(slack, sender, "CBAD")
    assert len(statuses(slack, "CBAD")) == 1


async def test_access_is_refused_politely_and_privately(
    slack: FakeSlack, sender: SlackSender
) -> None:
    sent, ts = await sender.mention("CACCESS", MALLORY, REPORT)
    assert sent.status == 200
    refusals = await slack.wait_for(lambda f: [c for c in f.calls_of("chat.postEphemeral")
                                               if c.args["user"] == MALLORY])
    assert "Sorry" in refusals[0].args["text"] and "thread_ts" not in refusals[0].args
    assert "TRIAGE_ALLOWED_USERS" in refusals[0].args["text"]

    sent, _ = await sender.mention("CELSEWHERE", ALICE, REPORT)
    elsewhere = await slack.wait_for(lambda f: f.calls_of("chat.postEphemeral", "CELSEWHERE"))
    assert "only investigate in" in elsewhere[0].args["text"]
    assert "<#CMAIN>" in elsewhere[0].args["text"]

    command = await sender.command("CACCESS", MALLORY, REPORT)
    assert command.status == 200 and "Sorry" in json.loads(command.body)["text"]

    # CAROL is allowed through the on-call user group.
    sent, ts = await sender.mention("CACCESS", CAROL, REPORT)
    await ended(slack, "CACCESS", ts)
    assert statuses(slack, "CACCESS") == [status_message(slack, "CACCESS", ts).ts]  # type: ignore[union-attr]


async def test_stop_reply_stops_with_a_summary_and_bots_are_ignored(
    slack: FakeSlack, sender: SlackSender, bot: BotProcess
) -> None:
    _sent, ts = await sender.mention("CSTOP1", ALICE, f"[gate:stop-reply] {REPORT}")
    await slack.wait_for(lambda f: posted_with(f, "CSTOP1", ts, "*Step 1*"))
    ignored, _ = await sender.message("CSTOP1", "UOTHERBOT", "stop", thread_ts=ts,
                                      bot_id="BOTHER")
    assert ignored.status == 200
    await sender.message("CSTOP1", BOB, "stop", thread_ts=ts)
    await slack.wait_for(lambda f: posted_with(f, "CSTOP1", ts, "Noted"))
    bot.open_gate("stop-reply")

    status = await ended(slack, "CSTOP1", ts)
    assert state_of(status) == "stopped"
    noted = posted_with(slack, "CSTOP1", ts, "Noted")
    assert len(noted) == 1 and f"<@{BOB}>" in noted[0].all_text, "the bot's 'stop' is ignored"
    summary = posted_with(slack, "CSTOP1", ts, "What I found so far")
    assert summary and f"<@{BOB}>'s request after 1 step" in summary[0].all_text
    assert "Listing pods in shop" in summary[0].all_text
    assert posted_with(slack, "CSTOP1", ts, "Best diagnosis so far")
    after = [m for m in slack.thread("CSTOP1", ts) if float(m.ts) > float(noted[0].ts)]
    assert not [m for m in after if ":wrench:" in m.all_text], "no tool runs after a stop"


async def test_stop_button_stops(slack: FakeSlack, sender: SlackSender, bot: BotProcess) -> None:
    _sent, ts = await sender.mention("CSTOP2", ALICE, f"[gate:stop-button] {REPORT}")
    await slack.wait_for(lambda f: posted_with(f, "CSTOP2", ts, "*Step 1*"))
    status = status_message(slack, "CSTOP2", ts)
    assert status is not None
    clicked = await sender.click("CSTOP2", ALICE, status, render.STOP_ACTION,
                                 button(status, render.STOP_ACTION))
    assert clicked.status == 200
    await slack.wait_for(lambda f: posted_with(f, "CSTOP2", ts, "Noted"))
    bot.open_gate("stop-button")
    status = await ended(slack, "CSTOP2", ts)
    assert state_of(status) == "stopped"
    assert posted_with(slack, "CSTOP2", ts, f"<@{ALICE}>'s request")


async def test_rate_limits_delay_but_lose_no_step(slack: FakeSlack, sender: SlackSender) -> None:
    # The status goes out; then the first step post is refused three times: the bot's queue
    # waits out each Retry-After and sends it again.
    slack.rate_limit("chat.postMessage", times=3, retry_after=1, channel="CRATE", after=1)
    sent, ts = await sender.mention("CRATE", ALICE, REPORT)
    assert sent.status == 200
    status = await ended(slack, "CRATE", ts, within=30)
    assert slack.thread("CRATE", ts)[0] is status, "the status still comes first"
    assert len(statuses(slack, "CRATE")) == 1

    posts = slack.calls_of("chat.postMessage", "CRATE")
    assert [c.status for c in posts[:5]] == [200, 429, 429, 429, 200]
    gaps = [b.at - a.at for a, b in itertools.pairwise(posts[1:5])]
    assert all(gap >= 0.95 for gap in gaps), f"Retry-After not honoured: {gaps}"
    steps = [m for m in slack.thread("CRATE", ts) if m.text.startswith("Step")]
    text = "\n".join(m.all_text for m in steps)
    assert all(f"*Step {n}*" in text for n in (1, 2, 3)), text
    assert len(steps) < 3, "steps that piled up behind the 429s were coalesced"
    assert posted_with(slack, "CRATE", ts, "oom_killed")


async def test_a_model_failure_fails_the_thread_and_leaks_nothing(
    slack: FakeSlack, sender: SlackSender
) -> None:
    _sent, ts = await sender.mention("CFAIL", ALICE, f"[fail] {REPORT}")
    status = await ended(slack, "CFAIL", ts)
    assert state_of(status) == "failed"
    failure = posted_with(slack, "CFAIL", ts, "could not finish")
    assert failure and "refused the key" in failure[0].all_text
    assert "[REDACTED]" in failure[0].all_text
    everything = json.dumps([c.args for c in slack.calls])
    assert LEAKED_KEY not in everything and "xoxb-" not in everything
    await probe(slack, sender, "CFAIL")  # the bot keeps serving


async def test_slash_command_thread_starts_with_the_status(
    slack: FakeSlack, sender: SlackSender
) -> None:
    sent = await sender.command("CCMD", ALICE, REPORT)
    assert sent.status == 200 and sent.body == ""
    root = await slack.wait_for(lambda f: [m for m in f.in_channel("CCMD")
                                           if m.text.startswith("Investigating:")])
    assert root[0].thread_ts is None, "the status is the thread's root"
    await ended(slack, "CCMD", root[0].ts)
    assert posted_with(slack, "CCMD", root[0].ts, "oom_killed")
    help_text = await sender.command("CCMD", ALICE, "  ")
    assert "Tell me what is wrong" in json.loads(help_text.body)["text"]


async def test_direct_message_starts_an_investigation(
    slack: FakeSlack, sender: SlackSender
) -> None:
    sent, ts = await sender.message("D0ALICE", ALICE, REPORT, channel_type="im")
    assert sent.status == 200
    status = await ended(slack, "D0ALICE", ts)
    assert status.thread_ts == ts and state_of(status) == "done"


async def test_sigterm_stops_the_server_cleanly(bot: BotProcess) -> None:
    assert await bot.stop() == 0, bot.log()
    assert any("shutting down" in line for line in bot.lines)
