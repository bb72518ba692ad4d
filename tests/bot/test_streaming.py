"""Slack's agent surfaces, end to end against the loopback Slack: a bundled investigation's
thread rendered streamed (task cards, plan, tables, feedback buttons) and as today's
messages (a workspace without them), every event kind in both, nothing lost when the
stream is refused half way, appends bounded and coalesced under a 429.

The events are a real run of the analyzer on the bundled checkout-oom scenario (Reflexion),
with the kinds that run does not emit spliced in (lessons, a steering constraint and its
withdrawal, a tool error note, a reflection), replayed into the real reporter and outbox,
which talk to the fake through the real slack_sdk client.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator, Sequence

import aiohttp
import pytest
import pytest_asyncio

from bot import outbox as outbox_module
from bot._blocks import clean, escape
from bot.app import SlackSettings, build_client
from bot.background import Background
from bot.feedback import MemoryStore
from bot.outbox import Outbox, Thread
from bot.reporter import ThreadReporter
from bot.streaming import StreamingPolicy, mode_from_env, streaming_policy
from bot.wiring import build_model, investigate, scenario_setting
from engines.errors import ConfigurationError
from engines.events import (
    ConstraintApplied,
    ConstraintWithdrawn,
    DiagnosisSubmitted,
    ErrorOccurred,
    Event,
    InvestigationStarted,
    InvestigationStopped,
    LessonsRetrieved,
    ObservationReceived,
    ReflectionRecorded,
    RewoundTo,
    ThoughtRecorded,
    ToolCalled,
)
from tests.fakes.slack_api import SIGNING_SECRET, TEAM, TOKEN, FakeSlack, Posted, SlackSender

pytestmark = pytest.mark.asyncio(loop_scope="module")

REPORT = "checkout in prod keeps restarting, customers get 502s on payment"
LESSON = "Last time checkout restarted it was the memory limit after a release."
NOTE = "logs_search timed out after 10s; using what the other tools returned"
REFLECTION = "The first answer did not explain the 502s on payment."
CONSTRAINT = "staying out of namespace kube-system"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def events() -> list[Event]:
    """A bundled investigation, with every other event kind spliced in."""
    recorded: list[Event] = []

    async def sink(event: Event) -> None:
        recorded.append(event)

    result = await investigate(REPORT, scenario_setting("checkout-oom"), build_model("analyzer"),
                               engine="reflexion", sink=sink)
    assert result.diagnosis is not None and result.diagnosis.category == "oom_killed"
    iid = recorded[0].investigation_id
    first_obs = next(i for i, e in enumerate(recorded) if isinstance(e, ObservationReceived))
    answer = next(i for i, e in enumerate(recorded) if isinstance(e, DiagnosisSubmitted))
    spliced = [*recorded[:1], LessonsRetrieved(iid, 0, (LESSON,)),
               *recorded[1:first_obs + 1],
               ErrorOccurred(iid, recorded[first_obs].step, NOTE),
               *recorded[first_obs + 1:answer]]
    step = recorded[answer].step
    spliced += [ConstraintApplied(iid, step, "stay out of kube-system", CONSTRAINT, "UBOB"),
                ConstraintWithdrawn(iid, step, "r1", CONSTRAINT, "UBOB"),
                RewoundTo(iid, step, (step + 1,), "UBOB", "r2"),
                ReflectionRecorded(iid, step, 1, ("the 502s are not explained",), REFLECTION,
                                   retrying=False),
                *recorded[answer:]]
    kinds = {type(e) for e in spliced}
    assert kinds == {InvestigationStarted, ThoughtRecorded, ToolCalled, ObservationReceived,
                     ConstraintApplied, ConstraintWithdrawn, RewoundTo, DiagnosisSubmitted,
                     ErrorOccurred,
                     LessonsRetrieved, ReflectionRecorded, InvestigationStopped}
    return spliced


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as client_session:
        yield client_session


async def replay(slack: FakeSlack, session: aiohttp.ClientSession, events: Sequence[Event],
                 channel: str, *, mode: str = "auto",
                 policy: StreamingPolicy | None = None) -> tuple[Thread, list[Posted]]:
    """The events through the real reporter and outbox; the thread as Slack keeps it."""
    client = build_client(SlackSettings(TOKEN, None, SIGNING_SECRET, slack.url), session)
    outbox = Outbox(client, None, policy or StreamingPolicy(mode))  # type: ignore[arg-type]
    outbox.streams.team = TEAM
    thread = Thread(channel, SlackSender.new_ts(), recipient="UALICE")
    reporter = ThreadReporter(outbox, thread, investigation_id=events[0].investigation_id,
                              incident=REPORT, model="analyzer", requested_by="UALICE")
    reporter.open()
    for event in events:
        if isinstance(event, ConstraintApplied):
            reporter.noted([event.summary], event.author)  # as the registry confirms it
        reporter.handle(event)
        await asyncio.sleep(0)
    await outbox.drain()
    assert thread.thread_ts is not None
    return thread, slack.thread(channel, thread.thread_ts)


def transcript(messages: Sequence[Posted]) -> str:
    return "\n".join(m.all_text for m in messages)


def check_every_kind(events: Sequence[Event], messages: Sequence[Posted]) -> None:
    """Every event of every kind shows in the thread."""
    text = transcript(messages)
    json_text = json.dumps(text)  # task cards are JSON in all_text: compare escaped too
    for event in events:
        match event:
            case ThoughtRecorded():
                wanted = clean(event.text.strip())[:60]
            case ToolCalled():
                wanted = clean(event.description)
            case ObservationReceived():
                wanted = escape(event.text.strip().splitlines()[0])[:40]
            case ConstraintApplied() | ConstraintWithdrawn():
                wanted = "Noted"
            case DiagnosisSubmitted():
                wanted = f"Diagnosis: {event.diagnosis.category}"
            case ErrorOccurred():
                wanted = clean(event.message)
            case LessonsRetrieved():
                wanted = clean(event.lessons[0])
            case ReflectionRecorded():
                wanted = clean(event.text)
            case RewoundTo():
                wanted = event.said
            case InvestigationStopped() | InvestigationStarted():
                wanted = "(done, step"
        assert wanted in text or json.dumps(wanted)[1:-1] in json_text, (type(event), wanted)


async def test_streamed_thread_shows_every_event_kind(events: list[Event],
                                                      session: aiohttp.ClientSession) -> None:
    async with FakeSlack() as slack:
        _, messages = await replay(slack, session, events, "CSTREAM")
        check_every_kind(events, messages)
        streams = [m for m in messages if m.stream]
        steps = next(m for m in streams if m.display_mode == "timeline")
        plan = next(m for m in streams if m.display_mode == "plan")
        assert all(m.stream == "stopped" for m in streams), "streams end before the diagnosis"
        calls = [e for e in events if isinstance(e, ToolCalled)]
        assert set(steps.tasks) == {c.call_id for c in calls}, "one task card per tool call"
        assert {t["status"] for t in steps.tasks.values()} <= {"complete", "error"}
        assert not [m for m in messages if m.text.startswith("Step ")], "no step messages"
        assert plan.plan_title.startswith("Leading hypothesis: ")
        assert any(t["status"] == "complete" and "diagnosis" in t.get("output", "")
                   for t in plan.tasks.values())
        diagnosis = next(m for m in messages if m.text.startswith("Diagnosis"))
        kinds = [b["type"] for b in diagnosis.blocks]
        assert "table" in kinds and "context_actions" in kinds and "actions" in kinds
        status = messages[0]
        assert status.text.startswith("Investigating:") and "model `analyzer`" in \
            status.all_text, "state, model and elapsed stay in the status message"
        assert [m.ts for m in messages].index(diagnosis.ts) > [m.ts for m in messages].index(
            steps.ts), "the diagnosis is its own message, after the steps"
        revisions = [m for m in messages if m.text.startswith("Recent revisions of")]
        assert revisions and revisions[0].blocks[1]["type"] == "table"


async def test_fallback_thread_shows_every_event_kind(events: list[Event],
                                                      session: aiohttp.ClientSession) -> None:
    async with FakeSlack(legacy=True) as slack:
        policy = StreamingPolicy("auto")
        _, messages = await replay(slack, session, events, "CLEGACY", policy=policy)
        check_every_kind(events, messages)
        assert not [m for m in messages if m.stream]
        assert [m for m in messages if m.text.startswith("Step")]
        diagnosis = next(m for m in messages if m.text.startswith("Diagnosis"))
        assert "context_actions" not in [b["type"] for b in diagnosis.blocks]
        assert "Correct" in diagnosis.all_text
        assert policy.refused == {TEAM: "unknown_method"}
        # Decided once for the workspace: the next investigation tries no stream at all.
        before = len(slack.calls_of("chat.startStream"))
        _, again = await replay(slack, session, events, "CLEGACY2", policy=policy)
        check_every_kind(events, again)
        assert len(slack.calls_of("chat.startStream")) == before


async def test_off_posts_todays_messages_only(events: list[Event],
                                              session: aiohttp.ClientSession) -> None:
    async with FakeSlack() as slack:
        _, messages = await replay(slack, session, events, "COFF", mode="off")
        check_every_kind(events, messages)
        agent = {"chat.startStream", "chat.appendStream", "chat.stopStream",
                 "assistant.threads.setStatus"}
        assert not [c for c in slack.calls if c.method in agent]


async def test_refused_half_way_loses_nothing(events: list[Event],
                                              session: aiohttp.ClientSession) -> None:
    async with FakeSlack() as slack:
        # The stream starts, then the workspace stops taking appends.
        slack.fail("chat.appendStream", "not_allowed", times=1000)
        policy = StreamingPolicy("auto")
        _, messages = await replay(slack, session, events, "CHALF", policy=policy)
        check_every_kind(events, messages)
        assert slack.calls_of("chat.startStream"), "the stream had started"
        stream = next(m for m in messages if m.stream)
        assert stream.stream == "stopped", "the half-streamed message is finished"
        steps = [m for m in messages if m.text.startswith("Step")]
        assert steps, "the rest went out as step messages"
        assert policy.refused == {TEAM: "not_allowed"}


async def test_a_stream_slack_closed_goes_on_in_a_new_one(
        events: list[Event], session: aiohttp.ClientSession) -> None:
    async with FakeSlack() as slack:
        slack.fail("chat.appendStream", "message_not_in_streaming_state", times=1)
        _, messages = await replay(slack, session, events, "CROTATE")
        check_every_kind(events, messages)
        timelines = [m for m in messages if m.display_mode == "timeline"]
        assert len(timelines) == 2 and not [m for m in messages if m.text.startswith("Step")]


async def test_appends_are_bounded_coalesced_and_wait_out_429(
        events: list[Event], session: aiohttp.ClientSession) -> None:
    async with FakeSlack() as slack:
        slack.rate_limit("chat.appendStream", times=3, retry_after=1)
        _, messages = await replay(slack, session, events, "CRATE")
        check_every_kind(events, messages)
        appends = [c for c in slack.calls_of("chat.appendStream", "CRATE") if c.status == 200]
        calls = [e for e in events if isinstance(e, ToolCalled)]
        updates = len(calls) * 2  # each call: running, then answered
        steps = next(m for m in messages if m.display_mode == "timeline")
        mine = [c for c in appends if c.args["ts"] == steps.ts]
        assert len(mine) < updates / 2, (len(mine), updates)
        limited = [c for c in slack.calls_of("chat.appendStream") if c.status == 429]
        assert limited
        after = [c for c in mine if c.at > limited[-1].at]
        assert after and after[0].at - limited[-1].at >= 0.9, "Retry-After honoured"
        gaps = [b.at - a.at for a, b in itertools.pairwise(mine)]
        assert outbox_module.STREAM_INTERVAL == 1.0
        assert all(g >= 0.9 for g in gaps), gaps


async def test_the_setting() -> None:
    assert mode_from_env({}) == "auto"
    assert mode_from_env({"TRIAGE_SLACK_STREAMING": " OFF "}) == "off"
    with pytest.raises(ConfigurationError, match="auto, on, off"):
        mode_from_env({"TRIAGE_SLACK_STREAMING": "sometimes"})
    on = StreamingPolicy("on")
    on.refuse(TEAM, "unknown_method")
    assert on.streams(TEAM), "`on` tries again with the next investigation"
    auto = StreamingPolicy("auto")
    auto.refuse(TEAM, "unknown_method")
    assert not auto.streams(TEAM) and auto.streams("TOTHER")


async def test_loading_state_while_the_model_thinks(events: list[Event],
                                                    session: aiohttp.ClientSession) -> None:
    async with FakeSlack() as slack:
        # The run opens and waits on the model: the loading state shows in the thread.
        thread, _ = await replay(slack, session, events[:1], "CLOAD")
        assert [(s["channel_id"], s["thread_ts"]) for s in slack.statuses] == \
            [("CLOAD", thread.thread_ts)]
        assert slack.statuses[0]["loading_messages"]
    async with FakeSlack(legacy=True) as slack:
        policy = StreamingPolicy("auto")
        await replay(slack, session, events[:1], "CLOAD1", policy=policy)
        await replay(slack, session, events[:1], "CLOAD2", policy=policy)
        assert len(slack.calls_of("assistant.threads.setStatus")) == 1, "refused once, kept"
        assert policy.no_loading == {TEAM}


async def test_a_refusal_is_kept_in_the_store_and_known_after_a_restart() -> None:
    store = MemoryStore()
    background = Background()
    policy = await streaming_policy("auto", store, background)
    policy.refuse("T1", "unknown_method")
    policy.refuse("T1", "unknown_method")  # known already: kept once
    await background.join()
    restarted = await streaming_policy("auto", store, Background())
    assert not restarted.streams("T1") and restarted.streams("T2")
    assert restarted.refused == {"T1": "unknown_method"}
