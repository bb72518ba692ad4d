"""Memory through the bot: reflections in the thread, corrections that become lessons and
new attempts, lessons that change the next investigation, and a run that survives a real
SIGKILL of `triage serve`."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from bot import render
from bot.cli.serve import make_runner, open_store
from bot.investigations.lessons import symptom_words
from bot.store import InvestigationRecord, Store
from bot.wiring import DEFAULT_ENGINE, scenario_setting
from engines.events import InvestigationStarted, LessonsRetrieved, ObservationReceived, ToolCalled
from engines.model import ModelReply, ModelRequest, ToolMessage, UserMessage
from engines.react import SUBMIT_TOOL
from engines.scripted_model import FunctionModel, call, reply
from engines.survey import SURVEY
from tests._ci import skip_or_fail
from tests.bot.harness import InProcessBot, bot_process, button, ended, posted_with
from tests.bot.models import DIAGNOSIS
from tests.bot.threads import runs_ended, statuses
from tests.fakes.slack_api import FakeSlack, SlackSender
from tests.live.conftest import postgres_server
from tests.services._process import NotProvisionedError
from tests.services.postgres import PostgresServer
from tests.store.conftest import new_postgres_database

__all__ = ["postgres_server"]  # a fixture: pytest finds it by name in this module

INCIDENT = "orders pods in shop fail to reach the database, checkout returns 502s"
SIMILAR = "orders pods fail to reach the database again"
CORRECTION = "wrong, it was the connection pool of orders-db"


@pytest_asyncio.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as client:
        yield client


@pytest_asyncio.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    opened = await Store.open(f"sqlite:///{tmp_path / 'triage.db'}")
    await opened.migrate()
    yield opened
    await opened.close()


@pytest.fixture(params=("sqlite", "postgresql"))
def any_db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """SQLite, and a real PostgreSQL when Debian's package is installed (skipped if not,
    failed under CI=true)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'triage.db'}"
    try:
        PostgresServer.check_installed()
    except NotProvisionedError as exc:
        skip_or_fail(f"PostgreSQL: {exc}")
    return new_postgres_database(request.getfixturevalue("postgres_server"))


@pytest_asyncio.fixture
async def any_store(any_db_url: str) -> AsyncIterator[Store]:
    opened = await Store.open(any_db_url)
    await opened.migrate()
    yield opened
    await opened.close()


class SqlBot(InProcessBot):
    """`serve` in-process with the SQL store and a model of the test's choosing."""

    def __init__(self, slack: FakeSlack, store: Store, model: FunctionModel) -> None:
        setting = scenario_setting("checkout-oom")
        super().__init__(slack, runner=make_runner(setting, model, "reflexion"))
        self.store = store  # type: ignore[assignment]


def _said(request: ModelRequest, needle: str) -> bool:
    return any(isinstance(m, UserMessage) and needle in m.content for m in request.messages)


def _submit(request: ModelRequest, **changes: Any) -> ModelReply:
    """The diagnosis, its evidence quoted from the last observation actually returned."""
    seen = [m for m in request.messages if isinstance(m, ToolMessage)]
    quote = seen[-1].content.strip().splitlines()[0][:40] if seen else "nothing"
    tool = seen[-1].name if seen else "k8s_list_pods"
    return reply("Enough.", call(SUBMIT_TOOL, {
        **DIAGNOSIS, "evidence": [{"tool": tool, "quote": quote}], **changes}))


def memory_model() -> FunctionModel:
    return FunctionModel(memory_turn, name="memory-model")


async def memory_turn(request: ModelRequest) -> ModelReply:
    """Looks at the pods first, unless a lesson says the database was the cause before:
    then it reads the events first. A correction (a rejection note) changes its answer."""
    if not request.tools:
        return reply("I concluded before checking the database side.")
    if not any(isinstance(m, ToolMessage) for m in request.messages):
        if any("connection pool" in lesson for lesson in request.lessons):
            return reply("A past lesson: check the database side first.",
                         call("k8s_events", {"namespace": "shop"}))
        return reply("Pods first.", call("k8s_list_pods", {"namespace": "shop"}))
    if _said(request, "was rejected"):
        return _submit(request, culprit={"kind": "StatefulSet", "namespace": "shop",
                                         "name": "orders-db"},
                       category="dependency_failure", summary="The pool is too small.")
    return _submit(request)


async def _eventually(check: Callable[[], Awaitable[bool]], within: float = 10) -> None:
    """Poll the store (another process, or background writes) until `check` holds."""
    for _ in range(int(within / 0.02)):
        if await check():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the store never got there")


async def _idle(store: Store, investigation_id: str) -> None:
    """The end is recorded in the background after the thread shows it."""

    async def recorded() -> bool:
        record = await store.get(investigation_id)
        return record is not None and record.outcome != "running"

    await _eventually(recorded)


async def test_a_correction_becomes_a_lesson_that_changes_the_next_investigation(
    session: aiohttp.ClientSession, any_store: Store,
) -> None:
    store = any_store
    async with FakeSlack() as slack, SqlBot(slack, store, memory_model()) as bot:
        sender = SlackSender(f"{bot.url}/slack/events", session)
        _, first = await sender.mention("CMEM", "UALICE", INCIDENT)
        await ended(slack, "CMEM", first)
        diagnosis = posted_with(slack, "CMEM", first, "Diagnosis")[-1]
        investigation = button(diagnosis, render.WRONG_ACTION)
        await _idle(store, investigation)
        assert not posted_with(slack, "CMEM", first, "Lessons from past incidents")

        await sender.message("CMEM", "UBOB", CORRECTION, thread_ts=first)
        await runs_ended(slack, "CMEM", first, 2)
        await _idle(store, investigation)
        retry = posted_with(slack, "CMEM", first, "Trying again:")
        assert len(retry) == 1 and "connection pool of orders-db" in retry[0].all_text
        # The new attempt was told that a human rejected the first answer, and obeyed.
        assert "orders-db" in posted_with(slack, "CMEM", first, "Diagnosis")[-1].all_text
        record = await store.get(investigation)
        assert record is not None and record.diagnosis is not None
        assert record.diagnosis.culprit.name == "orders-db"

        lessons = await store.search_lessons(SIMILAR, limit=3)
        assert lessons and "connection pool of orders-db" in lessons[0].text
        assert lessons[0].source_investigation == investigation
        assert "checkout" in lessons[0].services and "shop" in lessons[0].namespaces
        assert {"orders", "database"} <= set(lessons[0].symptoms)

        _, second = await sender.mention("CMEM", "UALICE", SIMILAR)
        await ended(slack, "CMEM", second)
        used = posted_with(slack, "CMEM", second, "Lessons from past incidents")
        assert used and "connection pool of orders-db" in used[0].all_text
        later = await store.find_by_thread("CMEM", second)
        assert later is not None
        events = await store.events(later.id)
    retrieved = [e for e in events if isinstance(e, LessonsRetrieved)]
    assert retrieved and "connection pool" in retrieved[0].lessons[0]
    first_call = next(e for e in events if isinstance(e, ToolCalled))
    assert first_call.tool == "k8s_events", "the lesson changed the first step"


async def test_the_wrong_button_starts_a_new_attempt_and_a_reply_during_it_is_a_lesson(
    session: aiohttp.ClientSession, store: Store,
) -> None:
    gate = asyncio.Event()

    async def turn(request: ModelRequest) -> ModelReply:
        if _said(request, "a human said: wrong") and request.tools:
            await gate.wait()  # hold the new attempt until the human has replied
        return await memory_turn(request)

    async with FakeSlack() as slack, SqlBot(slack, store, FunctionModel(turn)) as bot:
        sender = SlackSender(f"{bot.url}/slack/events", session)
        _, ts = await sender.mention("CWRONG", "UALICE", INCIDENT)
        await ended(slack, "CWRONG", ts)
        diagnosis = posted_with(slack, "CWRONG", ts, "Diagnosis")[-1]
        investigation = button(diagnosis, render.WRONG_ACTION)
        await _idle(store, investigation)
        await sender.click("CWRONG", "UBOB", diagnosis, render.WRONG_ACTION, investigation)
        await slack.wait_for(lambda f: posted_with(f, "CWRONG", ts, "Trying again"))
        await sender.message("CWRONG", "UBOB", "it was the connection pool of orders-db",
                             thread_ts=ts)
        await slack.wait_for(lambda f: posted_with(f, "CWRONG", ts, "Noted"))
        gate.set()
        await runs_ended(slack, "CWRONG", ts, 2)
        await _idle(store, investigation)
        lessons = await store.search_lessons("orders database connection pool", limit=3)
    assert lessons and "connection pool of orders-db" in lessons[0].text


def reflecting_model() -> FunctionModel:
    """The first answer quotes text no tool returned; after the reflection, a true one."""

    async def turn(request: ModelRequest) -> ModelReply:
        if not request.tools:
            return reply("I quoted a database error that no tool returned; read the pods.")
        if not any(isinstance(m, ToolMessage) for m in request.messages):
            return reply("Pods first.", call("k8s_list_pods", {"namespace": "shop"}))
        if _said(request, "REFLECTION on attempt 1"):
            return _submit(request)
        return reply("Surely the database.", call(SUBMIT_TOOL, {
            **DIAGNOSIS,
            "evidence": [{"tool": "k8s_list_pods", "quote": "FATAL: too many connections"}]}))

    return FunctionModel(turn, name="reflecting-model")


async def test_a_reflection_is_posted_in_the_thread(
    session: aiohttp.ClientSession, store: Store,
) -> None:
    async with FakeSlack() as slack, SqlBot(slack, store, reflecting_model()) as bot:
        sender = SlackSender(f"{bot.url}/slack/events", session)
        _, ts = await sender.mention("CREFL", "UALICE", INCIDENT)
        assert "done" in (await ended(slack, "CREFL", ts)).text
        reflection = posted_with(slack, "CREFL", ts, "Reflection on attempt 1")
        assert len(reflection) == 1
        text = reflection[0].all_text
        assert "too many connections" in text and "occurs in no observation" in text
        assert "no tool returned" in text and "Trying again" in text
        diagnosis = posted_with(slack, "CREFL", ts, "Diagnosis")
        assert len(diagnosis) == 1, "the rejected answer is not shown as the diagnosis"
        investigation = button(diagnosis[0], render.WRONG_ACTION)
        await _idle(store, investigation)

        async def kept() -> bool:  # written right after the end, in the same background task
            return bool(await store.lessons())

        await _eventually(kept)
        # The reflection is a lesson for next time, tagged with what it was about.
        lessons = await store.lessons()
    assert [lesson.text for lesson in lessons] == [
        "I quoted a database error that no tool returned; read the pods."]
    assert lessons[0].services == ("checkout",) and lessons[0].namespaces == ("shop",)


async def test_serve_keeps_a_migrated_sqlite_store_in_the_data_directory(
    tmp_path: Path,
) -> None:
    store = await open_store()  # XDG_DATA_HOME is the test's own (conftest)
    try:
        assert await store.revision() is not None
        assert await store.unfinished() == []
    finally:
        await store.close()
    assert (tmp_path / "data" / "triage" / "triage.db").is_file()


async def test_the_bot_leaves_a_command_line_investigation_to_its_own_process(
    store: Store,
) -> None:
    """At start the bot resumes its own interrupted runs (one without a thread cannot be, and
    is marked failed), but not `triage investigate`'s: that process ends its own record."""
    await store.create(InvestigationRecord("cli1", "", "", "checkout slow", "alice", "analyzer"),
                       engine="react", origin="cli")
    await store.create(InvestigationRecord("lost1", "", "", "checkout slow", "bob", "analyzer"),
                       engine="react")
    async with FakeSlack() as slack, SqlBot(slack, store, memory_model()):
        pass
    assert (await store.investigation("cli1")).status == "running"
    assert (await store.investigation("lost1")).status == "failed"


def test_symptom_words_leave_out_test_tags_and_common_words() -> None:
    assert symptom_words("[gate:x] The orders pods keep failing to reach orders-db") == [
        "orders", "pods", "failing", "reach", "orders-db"]


async def _observed(store: Store) -> bool:
    for record in await store.history():
        if any(isinstance(e, ObservationReceived) for e in await store.events(record.id)):
            return True
    return False


async def test_killing_serve_mid_investigation_and_restarting_resumes_it(
    session: aiohttp.ClientSession, tmp_path: Path,
) -> None:
    database = tmp_path / "bot.db"
    env = {"TRIAGE_DATABASE_URL": f"sqlite:///{database}"}
    text = "[gate:crash] checkout in prod keeps restarting, customers get 502s"
    async with FakeSlack() as slack:
        async with bot_process(slack, env=env) as bot:
            sender = SlackSender(f"{bot.url}/slack/events", session)
            _, ts = await sender.mention("CKILL", "UALICE", text)
            await slack.wait_for(lambda f: posted_with(f, "CKILL", ts, "*Step 1*"))
            async with await Store.open(f"sqlite:///{database}") as store:
                await _eventually(lambda: _observed(store))  # step 1 logged; step 2 waits
            bot.process.kill()  # SIGKILL: no shutdown, no summary, nothing flushed
            assert await bot.process.wait() == -9
        first_status = statuses(slack, "CKILL", ts)
        assert len(first_status) == 1 and "(running," in first_status[0].text

        async with bot_process(slack, env=env) as bot:
            await slack.wait_for(lambda f: posted_with(f, "CKILL", ts, "Resumed after a restart"))
            bot.open_gate("crash")
            # The store kept the status message's ts: the resumed run edits that message
            # to the end instead of posting a second one.
            await slack.wait_for(lambda f: "(done," in statuses(f, "CKILL", ts)[0].text)
            assert len(statuses(slack, "CKILL", ts)) == 1
        diagnosis = posted_with(slack, "CKILL", ts, "Diagnosis")
        assert len(diagnosis) == 1 and "oom_killed" in diagnosis[0].all_text
        assert "Deployment shop/checkout" in diagnosis[0].all_text

    async with await Store.open(f"sqlite:///{database}") as store:
        [record] = await store.history()
        events = await store.events(record.id)
    assert record.status == "done" and record.diagnosis is not None
    assert record.diagnosis.category == "oom_killed"
    calls = [(e.step, e.tool) for e in events if isinstance(e, ToolCalled)]
    # The router's survey (step 1) and the model's step 2, each once: no step was repeated.
    assert calls == [*((1, tool) for tool, _ in SURVEY if tool != "list_tools"),
                     (2, "k8s_events")], "no step was repeated"
    assert [e.kind for e in events].count("started") == 1
    assert isinstance(events[0], InvestigationStarted) and events[0].engine == DEFAULT_ENGINE
    assert events[-1].kind == "stopped"
