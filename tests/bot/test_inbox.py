"""Events reach the owner: two bots share one store (SQLite, and a real PostgreSQL), Slack
delivers to the one that does not run the investigation, and the one that does obeys, in
order and once. On PostgreSQL a NOTIFY wakes the owner; when it is missed (its LISTEN
connection killed), the poll still delivers."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import aiohttp
import pytest
import pytest_asyncio
import sqlalchemy as sa

from bot import render, render_board
from bot.cli.serve import make_runner
from bot.investigations.run import RunRequest
from bot.render_steering import UNDO_ACTION
from bot.store import Store
from bot.wiring import scenario_setting
from engines.events import (
    ConstraintApplied,
    ConstraintWithdrawn,
    Event,
    ObservationReceived,
    RewoundTo,
    ToolCalled,
)
from engines.incident import Incident
from engines.react import SUBMIT_TOOL, EngineConfig, InvestigationResult, ReactEngine
from engines.scripted_model import ScriptedModel, call, reply
from tests.bot.harness import (
    InProcessBot,
    button,
    ended,
    posted_with,
    state_of,
    status_message,
)
from tests.bot.models import DIAGNOSIS
from tests.bot.test_admission import StoreBot
from tests.bot.test_hypothesis_board import CHANNEL as BOARD_CHANNEL
from tests.bot.test_hypothesis_board import RIVAL, HeldAnalyzer, _row
from tests.bot.test_memory import any_db_url, postgres_server
from tests.bot.test_steering import restart_workload
from tests.fakes.slack_api import FakeSlack, Posted, SlackSender
from tests.services.postgres import PostgresServer
from tests.store.conftest import new_postgres_database
from tools.context import ToolContext
from tools.sources.base import Sources
from tools.toolset import Toolset

__all__ = ["any_db_url", "postgres_server"]  # fixtures: pytest finds them by name here

REPORT = "checkout in prod keeps restarting, customers get 502s on payment"


@pytest_asyncio.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as client:
        yield client


@contextlib.asynccontextmanager
async def _two_replicas(url: str) -> AsyncIterator[tuple[Store, Store]]:
    first = await Store.open(url)
    await first.migrate()
    second = await Store.open(url)
    try:
        yield first, second
    finally:
        await first.close()
        await second.close()


@pytest_asyncio.fixture
async def replicas(any_db_url: str) -> AsyncIterator[tuple[Store, Store]]:
    """Two connections to one migrated store: one per replica."""
    async with _two_replicas(any_db_url) as both:
        yield both


@pytest_asyncio.fixture
async def pg_replicas(postgres_server: PostgresServer) -> AsyncIterator[tuple[Store, Store]]:
    """Two replicas on PostgreSQL, for what only it has: notifications."""
    async with _two_replicas(new_postgres_database(postgres_server)) as both:
        yield both


@pytest_asyncio.fixture
async def sqlite_replicas(tmp_path: Path) -> AsyncIterator[tuple[Store, Store]]:
    """Two replicas on one SQLite file, where the poll alone delivers."""
    async with _two_replicas(f"sqlite:///{tmp_path / 'triage.db'}") as both:
        yield both


@contextlib.asynccontextmanager
async def _pair(stores: tuple[Store, Store], session: aiohttp.ClientSession) -> AsyncIterator[
        tuple[FakeSlack, StoreBot, StoreBot, SlackSender, SlackSender]]:
    """One Slack, the owner's bot on the first store and another replica's on the second,
    and a sender to each."""
    async with FakeSlack() as slack, StoreBot(slack, stores[0]) as owner, \
            StoreBot(slack, stores[1]) as other:
        yield (slack, owner, other, SlackSender(f"{owner.url}/slack/events", session),
               SlackSender(f"{other.url}/slack/events", session))


async def _events(store: Store, channel: str, ts: str) -> list[Event]:
    record = await store.find_by_thread(channel, ts)
    assert record is not None
    return list(await store.events(record.id))


async def _undelivered(store: Store, channel: str, ts: str) -> int:
    record = await store.find_by_thread(channel, ts)
    assert record is not None
    return await store.undelivered(record.id)


async def test_replies_to_the_other_replica_are_obeyed_in_order_and_once(
    replicas: tuple[Store, Store], session: aiohttp.ClientSession,
) -> None:
    async with _pair(replicas, session) as (slack, owner, other, to_owner, to_other):
        _, ts = await to_owner.mention("CINBOX", "UALICE", f"[gate:inbox] [kube-system] {REPORT}")
        await slack.wait_for(lambda f: posted_with(f, "CINBOX", ts, "*Step 1*"))
        await to_other.message("CINBOX", "UBOB", "please stay out of kube-system", thread_ts=ts)
        await to_other.message("CINBOX", "UCAROL", "ignore the redis warnings", thread_ts=ts)
        noted = await slack.wait_for(
            lambda f: (found := posted_with(f, "CINBOX", ts, "Noted")) and len(found) == 2
            and found)
        assert "staying out of namespace kube-system" in noted[0].all_text
        assert "redis" in noted[1].all_text, "applied in the order they were sent"
        owner.gates.open("inbox")
        assert state_of(await ended(slack, "CINBOX", ts)) == "done"
        await asyncio.sleep(0.3)  # a second delivery would have posted a third "Noted"
        assert len(posted_with(slack, "CINBOX", ts, "Noted")) == 2
        assert other.gates.get("inbox").is_set() is False, "the other replica ran nothing"
        events = await _events(replicas[0], "CINBOX", ts)
        assert await _undelivered(replicas[0], "CINBOX", ts) == 0
    applied = [e for e in events if isinstance(e, ConstraintApplied)]
    assert [(c.author, c.constraint) for c in applied] == [("UBOB", "exclude_namespace"),
                                                      ("UCAROL", "rule")]
    after = events[events.index(applied[0]):]
    calls = {e.call_id: e for e in after if isinstance(e, ToolCalled)}
    kube = [o for o in after if isinstance(o, ObservationReceived)
            and calls[o.call_id].arguments.get("namespace") == "kube-system"]
    assert kube and all(o.status == "error" and "excluded" in o.text for o in kube), \
        "the owner's engine obeyed the constraint the other replica received"


async def test_a_reply_delivered_to_both_replicas_is_applied_once(
    replicas: tuple[Store, Store], session: aiohttp.ClientSession,
) -> None:
    """Slack's retry (or a second Socket Mode connection) brings the same reply to the owner
    and to the other replica: the copy that comes through the inbox is not applied again."""
    async with _pair(replicas, session) as (slack, owner, _other, to_owner, to_other):
        _, ts = await to_owner.mention("CTWICE", "UALICE", f"[gate:twice] {REPORT}")
        await slack.wait_for(lambda f: posted_with(f, "CTWICE", ts, "*Step 1*"))
        reply_ts = SlackSender.new_ts()
        event = {"type": "message", "user": "UBOB", "channel": "CTWICE", "ts": reply_ts,
                 "text": "please stay out of kube-system", "event_ts": reply_ts,
                 "channel_type": "channel", "thread_ts": ts}
        await to_owner.event(event, event_id="EvTWICE1")
        await slack.wait_for(lambda f: posted_with(f, "CTWICE", ts, "Noted"))
        await to_other.event(event, event_id="EvTWICE2")
        record = await replicas[0].find_by_thread("CTWICE", ts)
        assert record is not None
        for _ in range(250):  # left in the inbox, then claimed by the owner
            async with replicas[0]._db.connect() as conn:
                rows = (await conn.execute(sa.text(
                    "SELECT delivered_at FROM inbox WHERE investigation_id = :i"),
                    {"i": record.id})).scalars().all()
            if rows and all(rows):
                break
            await asyncio.sleep(0.02)
        assert len(rows) == 1 and rows[0] is not None, "forwarded and claimed"
        owner.gates.open("twice")
        await ended(slack, "CTWICE", ts)
        events = await _events(replicas[0], "CTWICE", ts)
    assert len(posted_with(slack, "CTWICE", ts, "Noted")) == 1
    assert len([e for e in events if isinstance(e, ConstraintApplied)]) == 1


async def test_a_stop_click_on_the_other_replica_stops_the_run(
    replicas: tuple[Store, Store], session: aiohttp.ClientSession,
) -> None:
    async with _pair(replicas, session) as (slack, owner, _other, to_owner, to_other):
        _, ts = await to_owner.mention("CSTOPX", "UALICE", f"[gate:stopx] {REPORT}")
        status = await slack.wait_for(
            lambda f: next((m for m in f.thread("CSTOPX", ts)
                            if render.STOP_ACTION in m.all_text), None))
        await slack.wait_for(lambda f: posted_with(f, "CSTOPX", ts, "*Step 1*"))
        await to_other.click("CSTOPX", "UBOB", status, render.STOP_ACTION,
                             button(status, render.STOP_ACTION))
        # The owner confirms the stop in the thread; its model call in flight then ends.
        await slack.wait_for(lambda f: posted_with(f, "CSTOPX", ts, "Noted: stop"))
        owner.gates.open("stopx")
        assert state_of(await ended(slack, "CSTOPX", ts)) == "stopped"
        assert not slack.calls_of("chat.postEphemeral"), "nobody was told it had ended"


async def test_an_edit_and_an_undo_on_the_other_replica_change_the_owners_constraints(
    replicas: tuple[Store, Store], session: aiohttp.ClientSession,
) -> None:
    async with _pair(replicas, session) as (slack, owner, _other, to_owner, to_other):
        _, ts = await to_owner.mention("CEDIT", "UALICE", f"[gate:edit] {REPORT}")
        await slack.wait_for(lambda f: posted_with(f, "CEDIT", ts, "*Step 1*"))
        _, reply_ts = await to_other.message("CEDIT", "UBOB", "please stay out of kube-system",
                                             thread_ts=ts)
        await slack.wait_for(lambda f: posted_with(f, "CEDIT", ts, "Noted"))
        await to_other.edit("CEDIT", "UBOB", reply_ts, ts, "please stay out of monitoring",
                            "please stay out of kube-system")
        updated = await slack.wait_for(lambda f: posted_with(f, "CEDIT", ts, "Updated"))
        assert "monitoring" in updated[0].all_text
        await to_other.click("CEDIT", "UBOB", updated[0], UNDO_ACTION,
                             button(updated[0], UNDO_ACTION))
        withdrawn = await slack.wait_for(lambda f: posted_with(f, "CEDIT", ts, "Withdrawn"))
        assert "monitoring" in withdrawn[0].all_text
        owner.gates.open("edit")
        await ended(slack, "CEDIT", ts)
        events = await _events(replicas[0], "CEDIT", ts)
    # Both changes reached the owner's inbox before its next step: nothing is in force.
    assert not [e for e in events if isinstance(e, ConstraintApplied | ConstraintWithdrawn)]


class _BoardBot(InProcessBot):
    """A replica running the tot engine with the analyzer, held before its second step."""

    def __init__(self, slack: FakeSlack, store: Store) -> None:
        self.model = HeldAnalyzer()
        super().__init__(slack, runner=make_runner(scenario_setting("checkout-oom"),
                                                   self.model, "tot"))
        self.store = store  # type: ignore[assignment]


async def test_a_rule_out_click_on_the_other_replica_is_looked_up_on_the_owners_board(
    replicas: tuple[Store, Store], session: aiohttp.ClientSession,
) -> None:
    async with FakeSlack() as slack, _BoardBot(slack, replicas[0]) as owner, \
            _BoardBot(slack, replicas[1]) as other:
        to_owner = SlackSender(f"{owner.url}/slack/events", session)
        to_other = SlackSender(f"{other.url}/slack/events", session)
        _, ts = await to_owner.mention(BOARD_CHANNEL, "UALICE", REPORT)
        board = (await slack.wait_for(
            lambda f: posted_with(f, BOARD_CHANNEL, ts, "Hypotheses (step")))[0]
        action_id, value = _row(board, RIVAL, render_board.RULE_OUT_ACTION)
        await to_other.click(BOARD_CHANNEL, "UBOB", board, action_id, value)
        noted = (await slack.wait_for(lambda f: posted_with(f, BOARD_CHANNEL, ts, "Noted")))[0]
        assert "treating probe_failure:checkout as ruled out" in noted.all_text
        owner.model.gate.set()
        await ended(slack, BOARD_CHANNEL, ts)
        events = await _events(replicas[0], BOARD_CHANNEL, ts)
    applied = [(e.constraint, e.value, e.author) for e in events
               if isinstance(e, ConstraintApplied)]
    assert applied == [("rule_out", "probe_failure:checkout", "UBOB")]


class _ApprovalBot(InProcessBot):
    """A replica whose engine asks to restart checkout before it answers."""

    def __init__(self, slack: FakeSlack, store: Store) -> None:
        super().__init__(slack, runner=self.run)
        self.store = store  # type: ignore[assignment]
        self.seen: list[Event] = []

    async def run(self, request: RunRequest) -> InvestigationResult:
        model = ScriptedModel([
            reply("A restart should clear it.",
                  call("restart_workload", {"namespace": "shop", "name": "checkout"})),
            reply("Done.", call(SUBMIT_TOOL, DIAGNOSIS)),
        ])
        now = datetime(2026, 11, 30, 10, tzinfo=UTC)
        toolset = Toolset([restart_workload], ToolContext(now, Sources()),
                          approver=request.approver)

        async def sink(event: Event) -> None:
            self.seen.append(event)
            await request.sink(event)

        return await ReactEngine(EngineConfig(max_steps=4)).run(
            Incident(request.text, now, request.investigation_id), model, toolset,
            request.inbox, sink)


async def test_an_approval_clicked_on_the_other_replica_lets_the_owners_tool_run(
    replicas: tuple[Store, Store], session: aiohttp.ClientSession,
) -> None:
    async with FakeSlack() as slack, _ApprovalBot(slack, replicas[0]) as owner, \
            _ApprovalBot(slack, replicas[1]) as other:
        to_owner = SlackSender(f"{owner.url}/slack/events", session)
        to_other = SlackSender(f"{other.url}/slack/events", session)
        _, ts = await to_owner.mention("CAPPX", "UALICE", REPORT)
        asked = await slack.wait_for(lambda f: posted_with(f, "CAPPX", ts, "Approval needed"))
        await to_other.click("CAPPX", "UBOB", asked[0], render.APPROVE_ACTION,
                             button(asked[0], render.APPROVE_ACTION))
        await ended(slack, "CAPPX", ts)
        assert "Approved* by <@UBOB>" in asked[0].all_text
    observed = [e for e in owner.seen if isinstance(e, ObservationReceived)]
    assert "restarted" in observed[0].text and not other.seen


async def _listening(store: Store, count: int, besides: Sequence[int] = ()) -> list[int]:
    """The backends LISTENing on this database (other than `besides`), once there are
    `count` of them: a replica starts listening just after it starts serving."""
    query = sa.text("SELECT pid FROM pg_stat_activity WHERE query ILIKE 'LISTEN%' "
                    "AND datname = current_database()")
    pids: list[int] = []
    for _ in range(250):
        async with store._db.connect() as conn:
            pids = [p for p in (await conn.execute(query)).scalars().all() if p not in besides]
        if len(pids) >= count:
            return pids
        await asyncio.sleep(0.02)
    raise AssertionError(f"{len(pids)} replicas listen, not {count}")


async def test_a_missed_notification_is_made_up_for_by_the_poll(
    pg_replicas: tuple[Store, Store], session: aiohttp.ClientSession,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """PostgreSQL only: every LISTEN connection is killed (as a network cut or a restarted
    database would), so the reply's NOTIFY reaches nobody; the owner's poll delivers it,
    and the owner listens again."""
    monkeypatch.setenv("TRIAGE_INBOX_POLL_SECONDS", "0.5")
    async with FakeSlack() as slack, StoreBot(slack, pg_replicas[0]) as owner, \
            StoreBot(slack, pg_replicas[1]) as other:
        pids = await _listening(pg_replicas[0], 2)
        async with pg_replicas[0]._db.connect() as conn:
            for pid in pids:
                await conn.execute(sa.text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
        to_owner = SlackSender(f"{owner.url}/slack/events", session)
        to_other = SlackSender(f"{other.url}/slack/events", session)
        _, ts = await to_owner.mention("CPOLL", "UALICE", f"[gate:poll] [kube-system] {REPORT}")
        await slack.wait_for(lambda f: posted_with(f, "CPOLL", ts, "*Step 1*"))
        await to_other.message("CPOLL", "UBOB", "please stay out of kube-system", thread_ts=ts)
        await slack.wait_for(lambda f: posted_with(f, "CPOLL", ts, "Noted"), 10)
        owner.gates.open("poll")
        await ended(slack, "CPOLL", ts)
        again = await _listening(pg_replicas[0], 2, besides=pids)
        assert len(again) == 2, "both listen again"
        events = await _events(pg_replicas[0], "CPOLL", ts)
    assert [e.author for e in events if isinstance(e, ConstraintApplied)] == ["UBOB"]


async def test_a_notification_delivers_at_once_without_waiting_for_the_poll(
    pg_replicas: tuple[Store, Store], session: aiohttp.ClientSession,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """PostgreSQL only: with a poll of a minute, the reply still arrives within seconds."""
    monkeypatch.setenv("TRIAGE_INBOX_POLL_SECONDS", "60")
    async with _pair(pg_replicas, session) as (slack, owner, _other, to_owner, to_other):
        await _listening(pg_replicas[0], 2)
        _, ts = await to_owner.mention("CNOTE", "UALICE", f"[gate:note] {REPORT}")
        await slack.wait_for(lambda f: posted_with(f, "CNOTE", ts, "*Step 1*"))
        sent = time.monotonic()
        await to_other.message("CNOTE", "UBOB", "please stay out of kube-system", thread_ts=ts)
        await slack.wait_for(lambda f: posted_with(f, "CNOTE", ts, "Noted"), 10)
        took = time.monotonic() - sent
        owner.gates.open("note")
        await ended(slack, "CNOTE", ts)
    assert took < 5, f"delivered in {took:.2f} s"
    print(f"reply to the other replica noted by the owner in {took * 1000:.0f} ms")


async def test_a_reply_the_owner_had_not_claimed_by_the_end_is_kept_as_feedback(
    sqlite_replicas: tuple[Store, Store], session: aiohttp.ClientSession,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SQLite only (no notifications): with a poll of a minute the owner has not claimed
    the reply when its run ends; the end sweeps it into the feedback, and a reply after the
    recorded end is feedback at once, with nothing left in the inbox."""
    monkeypatch.setenv("TRIAGE_INBOX_POLL_SECONDS", "60")
    async with _pair(sqlite_replicas, session) as (slack, owner, _other, to_owner, to_other):
        _, ts = await to_owner.mention("CLATE", "UALICE", f"[gate:late] {REPORT}")
        await slack.wait_for(lambda f: posted_with(f, "CLATE", ts, "*Step 1*"))
        await to_other.message("CLATE", "UBOB", "please stay out of kube-system", thread_ts=ts)
        record = await sqlite_replicas[0].find_by_thread("CLATE", ts)
        assert record is not None

        async def waiting() -> int:
            return await sqlite_replicas[0].undelivered(record.id)

        for _ in range(200):
            if await waiting():
                break
            await asyncio.sleep(0.02)
        assert await waiting() == 1, "left in the inbox, not yet claimed"
        owner.gates.open("late")
        await ended(slack, "CLATE", ts)
        for _ in range(200):
            if len(await sqlite_replicas[0].feedback(record.id)) == 1:
                break
            await asyncio.sleep(0.02)
        await to_other.message("CLATE", "UCAROL", "thanks, all good now", thread_ts=ts)
        await slack.wait_for(lambda f: len(f.calls_of("reactions.add", "CLATE")) == 1)
        feedback = await sqlite_replicas[0].feedback(record.id)
        assert not posted_with(slack, "CLATE", ts, "Noted"), "the run never saw the reply"
        assert await waiting() == 0
    assert [(f.kind, f.user, f.text) for f in feedback] == [
        ("reply", "UBOB", "please stay out of kube-system"),
        ("reply", "UCAROL", "thanks, all good now")]


def _rewind_to(slack: FakeSlack, channel: str, ts: str, step: int) -> Posted | None:
    return next((m for m in slack.thread(channel, ts) if any(
        e.get("action_id") == render.REWIND_ACTION and e.get("value") == str(step)
        for block in m.blocks for e in block.get("elements", []))), None)


def _paused(slack: FakeSlack, channel: str, ts: str) -> Posted | None:
    status = status_message(slack, channel, ts)
    return status if state_of(status) == "paused" else None


async def test_pause_resume_and_rewind_clicks_on_the_other_replica_reach_the_owner(
    replicas: tuple[Store, Store], session: aiohttp.ClientSession,
) -> None:
    async with _pair(replicas, session) as (slack, owner, _other, to_owner, to_other):
        _, ts = await to_owner.mention("CPAUSEX", "UALICE", f"[gate:pausex] {REPORT}")
        status = await slack.wait_for(
            lambda f: next((m for m in f.thread("CPAUSEX", ts)
                            if render.PAUSE_ACTION in m.all_text), None))
        step_one = await slack.wait_for(lambda f: _rewind_to(f, "CPAUSEX", ts, 1))
        # Step 2 is held; both clicks reach the replica that does not run it.
        await to_other.click("CPAUSEX", "UBOB", status, render.PAUSE_ACTION,
                             button(status, render.PAUSE_ACTION))
        await slack.wait_for(lambda f: posted_with(f, "CPAUSEX", ts, "pausing"))
        await to_other.click("CPAUSEX", "UCAROL", step_one, render.REWIND_ACTION, "1")
        await slack.wait_for(lambda f: posted_with(f, "CPAUSEX", ts, "rolling back to step 1"))
        owner.gates.open("pausex")
        await slack.wait_for(lambda f: posted_with(f, "CPAUSEX", ts, "Rewound to step 1"))
        paused = await slack.wait_for(lambda f: _paused(f, "CPAUSEX", ts))
        await to_other.click("CPAUSEX", "UCAROL", paused, render.RESUME_ACTION,
                             button(paused, render.RESUME_ACTION))
        await slack.wait_for(lambda f: posted_with(f, "CPAUSEX", ts, "Going on"))
        assert state_of(await ended(slack, "CPAUSEX", ts)) == "done"
        assert not slack.calls_of("chat.postEphemeral"), "nobody was told it had ended"
    events = await _events(replicas[0], "CPAUSEX", ts)
    rewind = next(e for e in events if isinstance(e, RewoundTo))
    assert (rewind.step, rewind.dropped, rewind.author) == (1, (2,), "UCAROL")
    assert [(e.constraint, e.author) for e in events[events.index(rewind):]
            if isinstance(e, ConstraintApplied)] == [("pause", "UBOB"), ("pause", "UCAROL")]
