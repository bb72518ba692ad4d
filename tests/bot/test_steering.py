"""Steering, feedback and approvals through `serve` in-process, where the test can read the
bot's store: what the engine did after a human spoke, and what was kept of their verdicts.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from bot import render
from bot.feedback import InvestigationRecord, MemoryStore
from bot.investigations.run import RunRequest
from bot.store.errors import StoreError
from bot.wiring import scenario_setting
from engines.events import ConstraintApplied, Event, ObservationReceived, ToolCalled
from engines.incident import Incident
from engines.react import SUBMIT_TOOL, EngineConfig, InvestigationResult, ReactEngine
from engines.scripted_model import ScriptedModel, call, reply
from tests.bot.harness import InProcessBot, button, ended, posted_with, state_of
from tests.bot.models import DIAGNOSIS
from tests.bot.threads import runs_ended
from tests.fakes.slack_api import FakeSlack, SlackSender
from tools.catalog import available_tools
from tools.context import ToolContext
from tools.registry import tool
from tools.sources.base import Sources
from tools.toolset import Toolset

REPORT = "checkout in prod keeps restarting, customers get 502s on payment"


@pytest_asyncio.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as client:
        yield client


async def test_an_excluded_namespace_is_never_touched_again(session: aiohttp.ClientSession) -> None:
    async with FakeSlack() as slack, InProcessBot(slack) as bot:
        sender = SlackSender(f"{bot.url}/slack/events", session)
        _, ts = await sender.mention("CSTEER", "UALICE", f"[gate:steer] [kube-system] {REPORT}")
        await slack.wait_for(lambda f: posted_with(f, "CSTEER", ts, "*Step 1*"))
        await sender.message("CSTEER", "UBOB", "please stay out of kube-system", thread_ts=ts)
        noted = await slack.wait_for(lambda f: posted_with(f, "CSTEER", ts, "Noted"))
        assert "staying out of namespace kube-system" in noted[0].all_text
        bot.gates.open("steer")
        assert state_of(await ended(slack, "CSTEER", ts)) == "done"

        record = await bot.store.find_by_thread("CSTEER", ts)
        assert record is not None
        events = list(await bot.store.events(record.id))
    applied = next(i for i, e in enumerate(events) if isinstance(e, ConstraintApplied))
    constraint = events[applied]
    assert isinstance(constraint, ConstraintApplied) and constraint.author == "UBOB"
    before, after = events[:applied], events[applied:]
    assert any(isinstance(e, ToolCalled) for e in before)
    calls = {e.call_id: e for e in after if isinstance(e, ToolCalled)}
    observations = [e for e in after if isinstance(e, ObservationReceived)]
    assert len(calls) == 4 and len(observations) == 4, "the model did try kube-system"
    assert await _mentions_kube_system("k8s_list_pods", {"limit": 100}), \
        "without the constraint the cross-namespace call does return kube-system"
    for observation in observations:
        asked = calls[observation.call_id].arguments.get("namespace")
        if asked == "kube-system":
            assert observation.status == "error" and "excluded" in observation.text
        else:  # cross-namespace answers leave the namespace out
            assert observation.status == "success"
            body = observation.text + json.dumps(observation.data, default=str)
            assert "kube-system" not in body, observation.text


async def _mentions_kube_system(name: str, arguments: dict[str, Any]) -> bool:
    setting = scenario_setting("checkout-oom")
    found = next(t for t in available_tools(setting.sources) if t.name == name)
    assert setting.now is not None
    data = await found.function(ToolContext(setting.now, setting.sources),
                                **found.validate(arguments))
    return "kube-system" in json.dumps(data, default=str)


async def test_verdicts_and_late_replies_are_stored_with_the_investigation(
    session: aiohttp.ClientSession,
) -> None:
    async with FakeSlack() as slack, InProcessBot(slack) as bot:
        sender = SlackSender(f"{bot.url}/slack/events", session)
        _, ts = await sender.mention("CFEED", "UALICE", REPORT)
        await ended(slack, "CFEED", ts)
        diagnosis = posted_with(slack, "CFEED", ts, "Diagnosis")[-1]
        investigation = button(diagnosis, render.WRONG_ACTION)
        await sender.click("CFEED", "UBOB", diagnosis, render.WRONG_ACTION, investigation)
        await slack.wait_for(lambda f: "marked this diagnosis wrong" in diagnosis.all_text)
        # Wrong starts a new attempt in the thread; a correction after it ends, another.
        await runs_ended(slack, "CFEED", ts, 2)
        _, reply_ts = await sender.message("CFEED", "UBOB", "wrong, it was the database",
                                           thread_ts=ts)
        await slack.wait_for(lambda f: [c for c in f.calls_of("reactions.add")
                                        if c.args["timestamp"] == reply_ts])
        await runs_ended(slack, "CFEED", ts, 3)
        assert len(posted_with(slack, "CFEED", ts, "Trying again")) == 2
        await bot.services_idle()

        record = await bot.store.get(investigation)
        feedback = await bot.store.feedback(investigation)
        events = await bot.store.events(investigation)
    assert record is not None and record.outcome == "done"
    assert record.diagnosis is not None and record.diagnosis.category == "oom_killed"
    assert record.thread_ts == ts
    assert [(f.kind, f.user, f.text) for f in feedback] == [
        ("verdict", "UBOB", "wrong"), ("reply", "UBOB", "wrong, it was the database")]
    assert events[0].kind == "started" and events[-1].kind == "stopped"


@tool(read_only=False, describe="Restarting {namespace}/{name}")
async def restart_workload(ctx: ToolContext, namespace: str, name: str) -> dict[str, Any]:
    """Restart a workload (changes the cluster: needs a human's approval).

    Args:
        namespace: The workload's namespace.
        name: The workload.
    """
    return {"restarted": f"{namespace}/{name}"}


@pytest.mark.parametrize(("action", "outcome"), [(render.APPROVE_ACTION, "restarted"),
                                                  (render.DENY_ACTION, "declined")])
async def test_a_changing_tool_waits_for_approval(
    session: aiohttp.ClientSession, action: str, outcome: str
) -> None:
    seen: list[Event] = []

    async def runner(request: RunRequest) -> InvestigationResult:
        model = ScriptedModel([
            reply("A restart should clear it.",
                  call("restart_workload", {"namespace": "shop", "name": "checkout"})),
            reply("Done.", call(SUBMIT_TOOL, DIAGNOSIS)),
        ])
        now = datetime(2026, 11, 30, 10, tzinfo=UTC)
        toolset = Toolset([restart_workload], ToolContext(now, Sources()),
                          approver=request.approver)

        async def sink(event: Event) -> None:
            seen.append(event)
            await request.sink(event)

        return await ReactEngine(EngineConfig(max_steps=4)).run(
            Incident(request.text, now, request.investigation_id), model, toolset,
            request.inbox, sink,
        )

    async with FakeSlack() as slack, InProcessBot(slack, runner=runner) as bot:
        sender = SlackSender(f"{bot.url}/slack/events", session)
        _, ts = await sender.mention("CAPPROVE", "UALICE", REPORT)
        asked = await slack.wait_for(lambda f: posted_with(f, "CAPPROVE", ts, "Approval needed"))
        status = await slack.wait_for(
            lambda f: next((m for m in f.thread("CAPPROVE", ts)
                            if state_of(m) == "waiting for approval"), None))
        assert "Restarting shop/checkout" in asked[0].all_text
        assert render.STOP_ACTION in status.all_text
        await sender.click("CAPPROVE", "UBOB", asked[0], action, button(asked[0], action))
        await ended(slack, "CAPPROVE", ts)
        decided = "Approved" if action == render.APPROVE_ACTION else "Denied"
        assert f"{decided}* by <@UBOB>" in asked[0].all_text
        assert "*Step 1*" in posted_with(slack, "CAPPROVE", ts, "Restarting")[0].all_text
    observed = [e for e in seen if isinstance(e, ObservationReceived)]
    assert outcome in observed[0].text


async def test_a_channel_the_bot_cannot_post_in_ends_the_run_and_says_so(
    session: aiohttp.ClientSession,
) -> None:
    async with FakeSlack() as slack, InProcessBot(slack) as bot:
        slack.fail("chat.postMessage", "not_in_channel", channel="CNOTIN")
        sender = SlackSender(f"{bot.url}/slack/events", session,
                             response_url=f"http://127.0.0.1:{slack.port}/respond/1")
        sent = await sender.command("CNOTIN", "UALICE", f"[gate:never] {REPORT}")
        assert sent.status == 200
        told = await slack.wait_for(lambda f: f.calls_of("response_url"))
        assert told[0].args["response_type"] == "ephemeral"
        assert "/invite @Triage" in told[0].args["text"]
        await bot.services_idle()
        records = [r for r in bot.store.records() if r.channel == "CNOTIN"]
    assert [r.outcome for r in records] == ["stopped"], "the blocked run was ended"
    assert len(slack.calls_of("chat.postMessage", "CNOTIN")) == 1, "nothing retried blindly"


async def test_blocks_slack_refuses_are_sent_as_plain_text(
    session: aiohttp.ClientSession,
) -> None:
    async with FakeSlack() as slack, InProcessBot(slack) as bot:
        sender = SlackSender(f"{bot.url}/slack/events", session)
        _, ts = await sender.mention("CBLOCKS", "UALICE", REPORT)
        await slack.wait_for(lambda f: f.calls_of("chat.postMessage", "CBLOCKS"))
        slack.fail("chat.postMessage", "invalid_blocks", channel="CBLOCKS")
        await ended(slack, "CBLOCKS", ts)
        texts = [m.text for m in slack.thread("CBLOCKS", ts)]
    plain = [c for c in slack.calls_of("chat.postMessage", "CBLOCKS") if "blocks" not in c.args]
    assert plain and str(plain[0].args["text"]).startswith("Step"), "the refused post, as text"
    assert any(t.startswith("Step") for t in texts), texts
    assert any(t.startswith("Diagnosis") for t in texts), texts


class _LockedStore(MemoryStore):
    """A store whose database refuses to record runs about "[locked]" (a locked SQLite
    file, a PostgreSQL that went away): the bot must say so in the thread."""

    async def create(self, record: InvestigationRecord) -> None:
        if "[locked]" in record.text:
            raise StoreError("database sqlite:///triage.db: database is locked")
        await super().create(record)


async def test_a_store_that_cannot_record_the_run_fails_it_in_the_thread(
    session: aiohttp.ClientSession,
) -> None:
    async with FakeSlack() as slack:
        bot = InProcessBot(slack)
        bot.store = _LockedStore()
        await bot.__aenter__()
        sender = SlackSender(f"{bot.url}/slack/events", session)
        _, ts = await sender.mention("CLOCKED", "UALICE", f"[locked] {REPORT}")
        assert state_of(await ended(slack, "CLOCKED", ts)) == "failed"
        said = posted_with(slack, "CLOCKED", ts, "database is locked")
        assert said, "the reason is in the thread, not only in the bot's log"
        _, other = await sender.mention("CLOCKED2", "UALICE", REPORT)
        assert state_of(await ended(slack, "CLOCKED2", other)) == "done", "others still served"
        await bot.__aexit__(None, None, None)
