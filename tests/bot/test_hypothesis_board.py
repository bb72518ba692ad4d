"""The hypothesis board through `serve` in-process and the loopback Slack, with the tot
engine and the analyzer (which proposes and scores hypotheses with no LLM): one message,
edited in place; Rule out and Dig into become constraints the engine obeys."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import aiohttp
import pytest
import pytest_asyncio

from bot import render_board, render_steering
from bot.cli.serve import make_runner
from bot.streaming import Mode
from bot.wiring import scenario_setting
from engines.analyzer import AnalyzerModel
from engines.events import ConstraintApplied, Event, HypothesesUpdated
from engines.hypotheses import HUMAN_RULED_OUT
from engines.model import ModelReply, ModelRequest
from tests.bot.harness import InProcessBot, button, ended, posted_with, state_of
from tests.fakes.slack_api import FakeSlack, Posted, SlackSender

REPORT = "checkout in prod keeps restarting, customers get 502s on payment"
CHANNEL = "CBOARD"
RIVAL = "probe_failure:Deployment/shop/checkout"
FAR = "probe_failure:Deployment/monitoring/grafana"


class HeldAnalyzer(AnalyzerModel):
    """The analyzer, held before its second step until the test opens the gate (the board
    of step 2 is already out by then: tot publishes it before it asks)."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()

    async def complete(self, request: ModelRequest) -> ModelReply:
        if request.step == 2:
            await self.gate.wait()
        return await super().complete(request)


@pytest_asyncio.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as client:
        yield client


def _bot(slack: FakeSlack, model: HeldAnalyzer, streaming: Mode = "off") -> InProcessBot:
    runner = make_runner(scenario_setting("checkout-oom"), model, "tot")
    return InProcessBot(slack, runner=runner, streaming=streaming)


def _boards(slack: FakeSlack, ts: str) -> list[Posted]:
    return posted_with(slack, CHANNEL, ts, "Hypotheses (step")


def _row(board: Posted, hypothesis_id: str, action: str) -> tuple[str, str]:
    """(action id, value) of `action`'s button on the row of `hypothesis_id`."""
    for block in board.blocks:
        for element in block.get("elements", []):
            if str(element.get("value", "")).endswith(f"|{hypothesis_id}") and \
                    str(element["action_id"]).startswith(action):
                return str(element["action_id"]), str(element["value"])
    raise AssertionError(f"no {action} button for {hypothesis_id} in {board.all_text[:500]}")


async def _events(bot: InProcessBot, ts: str) -> list[Event]:
    record = await bot.store.find_by_thread(CHANNEL, ts)
    assert record is not None
    return list(await bot.store.events(record.id))


def _after_click(events: list[Event]) -> tuple[list[ConstraintApplied], list[HypothesesUpdated]]:
    applied = [i for i, e in enumerate(events) if isinstance(e, ConstraintApplied)]
    assert applied, "the click never reached the engine"
    later = [e for e in events[applied[0]:] if isinstance(e, HypothesesUpdated)]
    return [e for e in events if isinstance(e, ConstraintApplied)], later


@pytest.mark.parametrize("streaming", ["off", "on"])
async def test_rule_out_refutes_the_hypothesis_and_it_is_never_proposed_again(
        session: aiohttp.ClientSession, streaming: Mode) -> None:
    model = HeldAnalyzer()
    async with FakeSlack() as slack, _bot(slack, model, streaming) as bot:
        sender = SlackSender(f"{bot.url}/slack/events", session)
        _, ts = await sender.mention(CHANNEL, "UALICE", REPORT)
        board = (await slack.wait_for(lambda f: _boards(f, ts)))[0]
        assert "open" in board.text and "checkout" in board.all_text
        action_id, value = _row(board, RIVAL, render_board.RULE_OUT_ACTION)
        assert len(value) <= render_board.MAX_VALUE
        await sender.click(CHANNEL, "UBOB", board, action_id, value)
        noted = (await slack.wait_for(lambda f: posted_with(f, CHANNEL, ts, "Noted")))[0]
        assert "treating probe_failure:checkout as ruled out" in noted.all_text
        assert button(noted, render_steering.UNDO_ACTION).startswith("board-")
        model.gate.set()
        assert state_of(await ended(slack, CHANNEL, ts)) == "done"
        boards = _boards(slack, ts)
        events = await _events(bot, ts)
        streamed = any(c.method == "chat.startStream" for c in slack.calls)
    assert streamed == (streaming == "on")  # the steps went to a stream, the board did not
    # One board, edited in place as the search went on; the ended board has no buttons.
    assert len(boards) == 1 and boards[0].ts == board.ts and boards[0].edits >= 1
    assert "refuted" in boards[0].text
    assert render_board.RULE_OUT_ACTION not in boards[0].all_text
    applied, later = _after_click(events)
    assert [(e.constraint, e.value) for e in applied] == [("rule_out", "probe_failure:checkout")]
    assert later
    for update in later:
        rival = next(h for h in update.hypotheses if h.id == RIVAL)
        assert rival.state == "refuted" and rival.refuted_by == HUMAN_RULED_OUT
        assert RIVAL not in update.expanding


async def test_dig_into_focuses_the_engine_on_the_culprit(
        session: aiohttp.ClientSession) -> None:
    model = HeldAnalyzer()
    async with FakeSlack() as slack, _bot(slack, model) as bot:
        sender = SlackSender(f"{bot.url}/slack/events", session)
        _, ts = await sender.mention(CHANNEL, "UALICE", REPORT)
        board = (await slack.wait_for(lambda f: _boards(f, ts)))[0]
        action_id, value = _row(board, FAR, render_board.DIG_INTO_ACTION)
        await sender.click(CHANNEL, "UBOB", board, action_id, value)
        noted = (await slack.wait_for(lambda f: posted_with(f, CHANNEL, ts, "Noted")))[0]
        assert "focusing on workload grafana" in noted.all_text
        model.gate.set()
        await ended(slack, CHANNEL, ts)
        events = await _events(bot, ts)
    applied, later = _after_click(events)
    assert [(e.constraint, e.value) for e in applied] == [("focus_workload", "grafana")]
    expanded = [u.expanding for u in later if u.expanding]
    assert expanded and expanded[0][0] == FAR  # dug into first


async def test_a_click_on_a_hypothesis_no_longer_open_is_answered_not_applied(
        session: aiohttp.ClientSession) -> None:
    model = HeldAnalyzer()
    async with FakeSlack() as slack, _bot(slack, model) as bot:
        sender = SlackSender(f"{bot.url}/slack/events", session)
        _, ts = await sender.mention(CHANNEL, "UALICE", REPORT)
        board = (await slack.wait_for(lambda f: _boards(f, ts)))[0]
        action_id, value = _row(board, RIVAL, render_board.RULE_OUT_ACTION)
        investigation_id, _ = render_board.parse_value(value)
        await sender.click(CHANNEL, "UBOB", board, action_id,
                           f"{investigation_id}|oom_killed:Deployment/shop/nothing-such")
        await slack.wait_for(lambda f: [c for c in f.calls
                                        if c.method == "chat.postEphemeral"])
        model.gate.set()
        await ended(slack, CHANNEL, ts)
        events = await _events(bot, ts)
        told = [c for c in slack.calls if c.method == "chat.postEphemeral"]
    assert "no longer on the board" in str(told[0].args.get("text"))
    assert not [e for e in events if isinstance(e, ConstraintApplied)]


async def test_undo_on_a_rule_out_click_withdraws_it_before_the_engine_sees_it(
        session: aiohttp.ClientSession) -> None:
    model = HeldAnalyzer()
    async with FakeSlack() as slack, _bot(slack, model) as bot:
        sender = SlackSender(f"{bot.url}/slack/events", session)
        _, ts = await sender.mention(CHANNEL, "UALICE", REPORT)
        board = (await slack.wait_for(lambda f: _boards(f, ts)))[0]
        action_id, value = _row(board, RIVAL, render_board.RULE_OUT_ACTION)
        await sender.click(CHANNEL, "UBOB", board, action_id, value)
        noted = (await slack.wait_for(lambda f: posted_with(f, CHANNEL, ts, "Noted")))[0]
        reply = button(noted, render_steering.UNDO_ACTION)
        await sender.click(CHANNEL, "UBOB", noted, render_steering.UNDO_ACTION, reply)
        withdrawn = await slack.wait_for(lambda f: posted_with(f, CHANNEL, ts, "Withdrawn"))
        assert "probe_failure:checkout" in withdrawn[0].all_text
        model.gate.set()
        await ended(slack, CHANNEL, ts)
        events = await _events(bot, ts)
    assert not [e for e in events if isinstance(e, ConstraintApplied)]
    boards = [e for e in events if isinstance(e, HypothesesUpdated)]
    assert all(h.refuted_by != HUMAN_RULED_OUT for b in boards for h in b.hypotheses)
