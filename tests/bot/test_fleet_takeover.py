"""Two real `triage serve` replicas on one real PostgreSQL and the loopback Slack: one is
SIGKILLed mid-run and the other takes its investigations over from the event log.

Replica A gets ten mentions that the test model holds at step 2 (its gate stays shut);
replica B gets ten it runs to the end. Once A's are held after step 1, A is SIGKILLed. Its
leases are no longer renewed, B claims them when they expire (TRIAGE_LEASE_SECONDS=3),
rebuilds each from its log, says so in the thread, and owns them: a reply sent to B in one
of them is obeyed. Then B's gate opens and everything ends.
"""

from __future__ import annotations

import asyncio
import json
import signal
from collections import Counter
from collections.abc import AsyncIterator

import aiohttp
import pytest
import pytest_asyncio

from bot.store import Store
from engines.events import (
    ConstraintApplied,
    Event,
    ObservationReceived,
    ThoughtRecorded,
    ToolCalled,
)
from tests._ci import skip_or_fail
from tests.bot.fleet import (
    event_counts,
    eventually,
    held_after_step_one,
    investigation_ids,
    lease_rows,
    replica,
)
from tests.bot.harness import ended, posted_with, state_of
from tests.bot.threads import statuses
from tests.fakes.slack_api import FakeSlack, SlackSender
from tests.live.conftest import postgres_server
from tests.services._process import NotProvisionedError
from tests.services.postgres import PostgresServer
from tests.store.conftest import new_postgres_database

__all__ = ["postgres_server"]  # a fixture: pytest finds it by name in this module

LEASE_SECONDS = 3.0  # a replica stalled longer than this under load is taken over: keep room
REPORT = "checkout in prod keeps restarting, customers get 502s"
CHANNELS = ("CFLEET1", "CFLEET2", "CFLEET3", "CFLEET4")
TAKEN_OVER = "Resumed by another replica"


@pytest_asyncio.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as client:
        yield client


@pytest.fixture
def postgres_url(request: pytest.FixtureRequest) -> str:
    try:
        PostgresServer.check_installed()
    except NotProvisionedError as exc:
        skip_or_fail(f"PostgreSQL: {exc}")
    url = new_postgres_database(request.getfixturevalue("postgres_server"))
    return url


def _steps_run_once(events: list[Event]) -> list[tuple[int, str]]:
    """The (step, tool) of every call, after checking that no step was run twice: one
    thought and one set of calls per step, each call answered once."""
    thoughts = Counter(e.step for e in events if isinstance(e, ThoughtRecorded))
    assert all(n == 1 for n in thoughts.values()), f"a step thought twice: {thoughts}"
    calls = [e for e in events if isinstance(e, ToolCalled)]
    # Call ids are the model's; a replica's test model counts from 1 again.
    assert len({(c.step, c.call_id) for c in calls}) == len(calls), "a call was made twice"
    answered = Counter((e.step, e.call_id) for e in events
                       if isinstance(e, ObservationReceived))
    assert all(n == 1 for n in answered.values()), f"a call answered twice: {answered}"
    assert [e.kind for e in events].count("started") == 1
    assert events[-1].kind == "stopped"
    return [(c.step, c.tool) for c in calls]


async def test_a_replica_killed_mid_run_has_its_investigations_taken_over(
    session: aiohttp.ClientSession, postgres_url: str,
) -> None:
    async with FakeSlack() as slack, await Store.open(postgres_url) as store:
        async with replica(slack, postgres_url, LEASE_SECONDS) as a, \
                replica(slack, postgres_url, LEASE_SECONDS) as b:
            to_a = SlackSender(f"{a.url}/slack/events", session)
            to_b = SlackSender(f"{b.url}/slack/events", session)
            held_texts = [f"[gate:held] {REPORT} ({n})" for n in range(9)]
            held_texts.append(f"[gate:held] [kube-system] {REPORT} (steered)")
            sent = await asyncio.gather(
                *(to_a.mention(CHANNELS[n % 4], "UALICE", text)
                  for n, text in enumerate(held_texts)),
                *(to_b.mention(CHANNELS[n % 4], "UCAROL", f"{REPORT} (b{n})")
                  for n in range(10)),
            )
            on_a = [(CHANNELS[n % 4], ts) for n, (_, ts) in enumerate(sent[:10])]
            on_b = [(CHANNELS[n % 4], ts) for n, (_, ts) in enumerate(sent[10:])]
            a_ids = await investigation_ids(store, on_a)
            await held_after_step_one(store, a_ids)
            [(a_owner, _, _)] = set((await lease_rows(store, a_ids)).values())
            for channel, ts in on_b:
                assert state_of(await ended(slack, channel, ts)) == "done"

            a.process.kill()  # SIGKILL: no shutdown, no summary, nothing flushed
            assert await a.process.wait() == -9
            for channel, ts in on_a:  # A said nothing of an end
                [status] = statuses(slack, channel, ts)
                assert "(running," in status.text

            for channel, ts in on_a:
                await slack.wait_for(lambda f, c=channel, t=ts: posted_with(f, c, t, TAKEN_OVER),
                                     within=15)
            taken = await lease_rows(store, a_ids)
            owners = {owner for owner, _, _ in taken.values()}
            assert len(owners) == 1 and a_owner not in owners, taken
            assert all(generation == 2 for _, generation, _ in taken.values())

            # B owns the steered one now: a reply sent to B is obeyed by it.
            steered_channel, steered_ts = on_a[-1]
            await to_b.message(steered_channel, "UBOB", "please stay out of kube-system",
                               thread_ts=steered_ts)
            noted = await slack.wait_for(
                lambda f: posted_with(f, steered_channel, steered_ts, "Noted"))
            assert "staying out of namespace kube-system" in noted[0].all_text
            b.open_gate("held")
            for channel, ts in on_a:
                assert state_of(await ended(slack, channel, ts)) == "done"

            async def released() -> bool:
                rows = await lease_rows(store, a_ids)
                return all(gone for _, _, gone in rows.values())

            await eventually(released, what="B never released the leases it took over")

        # Every thread: one status message, one diagnosis; A's: one takeover note each.
        for channel, ts in on_a + on_b:
            assert len(statuses(slack, channel, ts)) == 1, (channel, ts)
            diagnosis = posted_with(slack, channel, ts, "Diagnosis")
            assert len(diagnosis) == 1 and "oom_killed" in diagnosis[0].all_text
        for channel, ts in on_a:
            assert len(posted_with(slack, channel, ts, TAKEN_OVER)) == 1
            assert not posted_with(slack, channel, ts, "Resumed after a restart")
        assert len({ts for _, ts in on_a + on_b}) == 20

        b_ids = await investigation_ids(store, on_b)
        assert len(set(a_ids + b_ids)) == 20
        for investigation_id in a_ids + b_ids:
            stored = await store.investigation(investigation_id)
            assert stored.status == "done" and stored.diagnosis is not None
            assert stored.diagnosis.category == "oom_killed"
            events = list(await store.events(investigation_id))
            try:
                calls = _steps_run_once(events)
            except AssertionError:
                print(investigation_id, investigation_id in a_ids,
                      [(e.kind, getattr(e, "step", None)) for e in events])
                print("\n".join(line for line in a.lines + b.lines if "lease" in line
                                 or "took over" in line))
                raise
            if investigation_id != a_ids[-1]:
                assert calls == [(1, "k8s_list_pods"), (2, "k8s_events")], calls

        steered = list(await store.events(a_ids[-1]))
        assert _steps_run_once(steered)[:2] == [(1, "k8s_list_pods"), (2, "k8s_events")]
        applied = next(i for i, e in enumerate(steered) if isinstance(e, ConstraintApplied))
        constraint = steered[applied]
        assert isinstance(constraint, ConstraintApplied) and constraint.author == "UBOB"
        after = steered[applied:]
        calls = {e.call_id: e for e in after if isinstance(e, ToolCalled)}
        observations = [e for e in after if isinstance(e, ObservationReceived)]
        assert len(observations) == 4, "the model did try kube-system after the takeover"
        for observation in observations:
            if calls[observation.call_id].arguments.get("namespace") == "kube-system":
                assert observation.status == "error" and "excluded" in observation.text
            else:
                body = observation.text + json.dumps(observation.data, default=str)
                assert "kube-system" not in body, observation.text


async def test_a_replica_presumed_dead_that_wakes_up_is_fenced_off(
    session: aiohttp.ClientSession, postgres_url: str,
) -> None:
    """A is frozen (SIGSTOP) rather than killed: B takes its runs over, then A wakes up
    with its gate open. Its runs are cut off: not one more event, post or edit of A's."""
    async with FakeSlack() as slack, await Store.open(postgres_url) as store:
        async with replica(slack, postgres_url, LEASE_SECONDS) as a, \
                replica(slack, postgres_url, LEASE_SECONDS) as b:
            to_a = SlackSender(f"{a.url}/slack/events", session)
            sent = [await to_a.mention("CFROZEN", "UALICE", f"[gate:held] {REPORT} ({n})")
                    for n in range(3)]
            threads = [("CFROZEN", ts) for _, ts in sent]
            ids = await investigation_ids(store, threads)
            await held_after_step_one(store, ids)
            for channel, ts in threads:  # what A had queued for Slack before it froze is out
                await slack.wait_for(lambda f, c=channel, t=ts: posted_with(f, c, t, "*Step 1*"))

            a.process.send_signal(signal.SIGSTOP)
            for channel, ts in threads:
                await slack.wait_for(lambda f, c=channel, t=ts: posted_with(f, c, t, TAKEN_OVER),
                                     within=15)
            counts = await event_counts(store, ids)
            calls = len(slack.calls)
            await asyncio.sleep(0.5)  # B settles: its runs wait at its own gate
            assert len(slack.calls) == calls or all(
                c.method == "chat.update" for c in slack.calls[calls:])
            calls = len(slack.calls)

            a.process.send_signal(signal.SIGCONT)
            a.open_gate("held")  # unfenced, A would now run step 2 and post it

            def cut_off() -> bool:
                return sum("lease lost" in line for line in a.lines) >= 3

            await eventually(lambda: asyncio.sleep(0, cut_off()), within=10,
                             what=f"A was never cut off:\n{a.log()}")
            await asyncio.sleep(0.5)  # anything A still had to say would be out by now
            assert await event_counts(store, ids) == counts, "a write of A's landed"
            assert slack.calls[calls:] == [], "A posted after it was taken over"
            for channel, ts in threads:
                assert not posted_with(slack, channel, ts, "*Step 2*")

            b.open_gate("held")
            for channel, ts in threads:
                assert state_of(await ended(slack, channel, ts)) == "done"
            assert await a.stop() == 0  # A itself is fine, and leaves the threads alone
        for channel, ts in threads:
            assert len(statuses(slack, channel, ts)) == 1
            assert len(posted_with(slack, channel, ts, "Diagnosis")) == 1
            assert not posted_with(slack, channel, ts, "interrupted")
        for investigation_id in ids:
            events = list(await store.events(investigation_id))
            assert _steps_run_once(events) == [(1, "k8s_list_pods"), (2, "k8s_events")]
            assert (await store.investigation(investigation_id)).status == "done"


async def test_what_a_frozen_replica_had_queued_for_slack_never_reaches_the_thread(
    session: aiohttp.ClientSession, postgres_url: str,
) -> None:
    """A's step 2 is logged and its message queued when Slack answers 429 (Retry-After 1 s);
    A is frozen during the wait and taken over by B. When A wakes up its retry is due at
    once, but the message is checked against the lease first (A's own clock says the last
    renewal is too old) and dropped, instead of landing in the thread B speaks in. Step 3
    is held too, so that A cannot run on to the end while its post waits."""
    channel = "CQUEUED"
    async with FakeSlack() as slack, await Store.open(postgres_url) as store:
        async with replica(slack, postgres_url, LEASE_SECONDS) as a, \
                replica(slack, postgres_url, LEASE_SECONDS) as b:
            _, ts = await SlackSender(f"{a.url}/slack/events", session).mention(
                channel, "UALICE", f"[gate:held] [gate3:later] {REPORT}")
            ids = await investigation_ids(store, [(channel, ts)])
            await held_after_step_one(store, ids)
            await slack.wait_for(lambda f: posted_with(f, channel, ts, "*Step 1*"))
            slack.rate_limit("chat.postMessage", retry_after=1, channel=channel)
            a.open_gate("held")  # step 2 runs, is logged, and its post meets the 429

            def refused() -> bool:
                return any(c.method == "chat.postMessage" and c.status == 429
                           for c in slack.calls)

            await slack.wait_for(lambda f: refused())
            a.process.send_signal(signal.SIGSTOP)
            await slack.wait_for(lambda f: posted_with(f, channel, ts, TAKEN_OVER), within=15)
            woke = len(slack.calls)
            a.process.send_signal(signal.SIGCONT)
            await eventually(lambda: asyncio.sleep(0, any("lease lost" in line
                                                          for line in a.lines)),
                             within=10, what=f"A was never cut off:\n{a.log()}")
            await asyncio.sleep(0.5)  # a retry A still made would be out by now
            from_a = [c for c in slack.calls[woke:] if c.method == "chat.postMessage"
                      and "Step 2" in str(c.args.get("text", ""))]
            assert from_a == [], "A's queued step 2 reached the thread after the takeover"
            b.open_gate("held")
            b.open_gate("later")
            assert state_of(await ended(slack, channel, ts)) == "done"
            assert await a.stop() == 0
        assert len(statuses(slack, channel, ts)) == 1
        assert len(posted_with(slack, channel, ts, "Diagnosis")) == 1
