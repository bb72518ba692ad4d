"""Pause and Resume buttons on the status message, through `serve` in-process, the loopback
Slack and the strict loopback OpenAI server: a pause holds the engine with no model request
until Resume, shows in the thread, and is state in the event log (a resumed run waits too).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import aiohttp
import pytest_asyncio

from bot import render
from bot.cli.serve import make_runner
from bot.investigations.resume import pauses_in_force
from bot.wiring import scenario_setting
from engines.constraints import Constraint, ConstraintInbox
from engines.events import ConstraintApplied, ConstraintWithdrawn, Event
from engines.incident import Incident
from engines.model import ModelReply, ModelRequest
from engines.openai_model import OpenAIModel, RetryPolicy
from engines.react import EngineConfig, ReactEngine
from engines.scripted_model import FunctionModel, call, reply
from tests.bot.harness import InProcessBot, button, ended, posted_with, state_of, status_message
from tests.engines.test_react import DIAGNOSIS as REACT_DIAGNOSIS
from tests.engines.test_react import NOW, make
from tests.fakes.openai_server import (
    Completion,
    FakeOpenAIServer,
    openai_server,
    plain_http,
    tool_call,
)
from tests.fakes.slack_api import FakeSlack, SlackSender

CHANNEL = "CPAUSE"
REPORT = "checkout in shop keeps restarting"
DIAGNOSIS = {
    "category": "oom_killed",
    "culprit": {"kind": "Deployment", "namespace": "shop", "name": "checkout"},
    "summary": "checkout's containers are OOMKilled and restart.",
    "evidence": [{"tool": "k8s_list_pods", "quote": "OOMKilled"}],
    "fix": "Raise checkout's memory limit.",
    "confidence": 0.9,
}
server = openai_server


@pytest_asyncio.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as client:
        yield client


def _status(slack: FakeSlack, ts: str, state: str) -> object:
    message = status_message(slack, CHANNEL, ts)
    return message if state_of(message) == state else None


async def test_pause_holds_the_engine_with_no_model_request_until_resume(
        server: FakeOpenAIServer, session: aiohttp.ClientSession) -> None:
    server.script(
        # Slow enough for the click to land while step 1's request is out.
        Completion("Look at the pods.", (tool_call("k8s_list_pods", {"namespace": "shop"}),),
                   delay=0.6),
        Completion("OOMKilled.", (tool_call("submit_diagnosis", DIAGNOSIS),)),
    )
    async with OpenAIModel("gpt-test", base_url=server.base_url, api_key="sk-test",
                           retry=RetryPolicy(attempts=1), http_client=plain_http()) as model, \
            FakeSlack() as slack, \
            InProcessBot(slack, runner=make_runner(scenario_setting("checkout-oom"),
                                                   model)) as bot:
        sender = SlackSender(f"{bot.url}/slack/events", session)
        _, ts = await sender.mention(CHANNEL, "UALICE", REPORT)
        status = await slack.wait_for(lambda f: _status(f, ts, "running"))
        await sender.click(CHANNEL, "UBOB", status, render.PAUSE_ACTION,
                           button(status, render.PAUSE_ACTION))
        paused = await slack.wait_for(lambda f: _status(f, ts, "paused"))
        assert button(paused, render.RESUME_ACTION)  # Resume in place of Pause
        assert posted_with(slack, CHANNEL, ts, "pausing")  # the click is confirmed
        await asyncio.sleep(0.8)
        assert len(server.chat_requests) == 1  # held: no request while paused
        await sender.click(CHANNEL, "UBOB", paused, render.RESUME_ACTION,
                           button(paused, render.RESUME_ACTION))
        assert state_of(await ended(slack, CHANNEL, ts)) == "done"
        assert posted_with(slack, CHANNEL, ts, "Going on")
        record = await bot.store.find_by_thread(CHANNEL, ts)
        assert record is not None
        events = list(await bot.store.events(record.id))
    assert len(server.chat_requests) == 2
    applied = [e for e in events if isinstance(e, ConstraintApplied)]
    lifted = [e for e in events if isinstance(e, ConstraintWithdrawn)]
    assert [e.constraint for e in applied] == ["pause"]
    assert [e.reply for e in lifted] == [applied[0].reply]
    assert pauses_in_force(events) == set()
    assert pauses_in_force(events[:events.index(lifted[0])]) == {applied[0].reply}


async def test_a_pause_in_the_log_holds_the_resumed_run_until_resume() -> None:
    asked: list[int] = []
    inbox = ConstraintInbox()

    def model(request: ModelRequest) -> ModelReply:
        asked.append(request.step)
        if request.step == 1:
            inbox.put(Constraint("pause", "hold on", author="bob", reply="p1"))
            return reply("", call("k8s_pods", {"namespace": "shop"}))
        return reply("", call("submit_diagnosis", REACT_DIAGNOSIS))

    log: list[Event] = []
    held = asyncio.Event()

    async def keep(event: Event) -> None:
        log.append(event)
        if isinstance(event, ConstraintApplied):
            held.set()

    toolset, constraints = make()
    first = asyncio.create_task(ReactEngine(EngineConfig(max_steps=4)).run(
        Incident("checkout restarts", now=NOW), FunctionModel(model), toolset, inbox, keep,
        constraints=constraints))
    await asyncio.wait_for(held.wait(), 5)
    first.cancel()  # the replica dies while paused
    await asyncio.gather(first, return_exceptions=True)
    assert asked == [1]

    toolset2, constraints2 = make()
    inbox2 = ConstraintInbox()
    second = asyncio.create_task(ReactEngine(EngineConfig(max_steps=4)).run(
        Incident("checkout restarts", now=NOW), FunctionModel(model), toolset2, inbox2,
        constraints=constraints2, resume=list(log)))
    await asyncio.sleep(0.3)
    assert asked == [1] and not second.done()  # the replayed pause holds: no model call
    inbox2.resume()
    result = await asyncio.wait_for(second, 5)
    assert result.reason == "diagnosed" and asked == [1, 2]
