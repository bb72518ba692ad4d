"""`triage history`, `triage show [--markdown]` and `triage lessons` read the store."""

from __future__ import annotations

import asyncio
import re
from datetime import timedelta

import pytest

from bot.cli import main
from bot.store import Feedback, InvestigationRecord, Store
from bot.store.url import ENV_VAR
from engines.constraints import Constraint
from tests.store.samples import DIAGNOSIS, T0, at, one_of_each

LONG = "orders API returns 502 for a third of requests since the 10:00 deploy " * 3


async def seed(url: str) -> int:
    store = await Store.open(url)
    try:
        await store.create(
            InvestigationRecord("inv1", "C042", "1.2", "checkout pods keep restarting", "alice",
                                "analyzer", started_at=T0),
            engine="react",
        )
        for event in one_of_each("inv1"):
            await store.append_event("inv1", event)
        await store.add_constraint(
            "inv1", Constraint("exclude_namespace", "stay out of kube-system",
                              "kube-system", "alice"), at=at(2)
        )
        await store.finish("inv1", "done", DIAGNOSIS, at=at(5))
        await store.add_feedback(Feedback("inv1", "bob", "verdict", "wrong", at(60)))
        await store.add_feedback(Feedback("inv1", "bob", "reply", "it was the | pool", at(61)))
        later = T0 + timedelta(hours=1)
        await store.create(InvestigationRecord("inv2", "", "", LONG, "", "gpt", started_at=later))
        await store.create(
            InvestigationRecord("inv3", "", "", "ledger slow", "", "gpt", started_at=at(30))
        )
        await store.finish("inv3", "stopped", None)
        lesson = await store.add_lesson(
            "orders-db pool exhausted: raise the pool size", services=["orders-db"],
            symptoms=["timeouts"], source_investigation="inv1",
        )
        return lesson.id
    finally:
        await store.close()


@pytest.fixture
def seeded(db_url: str, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setenv(ENV_VAR, db_url)
    return asyncio.run(seed(db_url))


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_history_is_one_line_per_investigation_newest_first(
    seeded: int, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "history")
    lines = out.splitlines()
    assert code == 0 and len(lines) == 3
    assert [line.split()[0] for line in lines] == ["inv2", "inv3", "inv1"]
    assert re.search(r"inv1\s+2026-11-30 10:00\s+slack\s+done\s+oom_killed Deployment "
                     r"shop/checkout\s+checkout pods keep restarting$", lines[2])
    assert "running" in lines[0] and lines[0].endswith("…") and len(lines[0]) < 160
    assert "stopped" in lines[1]
    code, out, _ = run(capsys, "history", "--limit", "1")
    assert out.split()[0] == "inv2" and len(out.splitlines()) == 1


def test_history_of_an_empty_store_says_so(
    db_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(ENV_VAR, db_url)
    code, out, _ = run(capsys, "history")
    assert code == 0 and out.startswith("no investigations yet")


def test_show_prints_the_timeline_and_the_diagnosis(
    seeded: int, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "show", "inv1")
    assert code == 0
    assert out.startswith("Investigation inv1 · done (diagnosed)")
    for label in ("started", "lessons", "thought", "action", "observed", "constraint",
                  "error", "diagnosis", "reflection", "stopped"):
        assert re.search(rf"^  \d\d:\d\d:\d\d  (#\d+)?\s+{label}\b", out, re.M), label
    assert "Listing pods in shop [k8s_pods]" in out
    assert "Culprit     Deployment shop/checkout" in out
    # quotes recorded before the engine placed them are placed from the log: whole, at a step
    assert ("  Evidence    k8s_pods, step 1\n"
            "                checkout-7d9f-abcde  restarts=7  last=OOMKilled\n"
            "              metrics_workload_signals: not found in its output\n"
            "                memory at 100% of limit\n") in out
    assert "alice: stay out of kube-system (exclude_namespace)" in out
    assert 'bob: replied "it was the | pool"' in out


def test_show_markdown_is_a_postmortem_timeline(
    seeded: int, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "show", "inv1", "--markdown")
    assert code == 0
    assert out.startswith("# Investigation inv1: checkout pods keep restarting\n")
    headings = [line for line in out.splitlines() if line.startswith("#")]
    assert headings == [
        "# Investigation inv1: checkout pods keep restarting",
        "## Root cause", "### Evidence", "### Fix", "## Timeline (UTC)",
        "## Key observations", "## Constraints from humans", "## Feedback",
    ]
    timeline = out.split("## Timeline (UTC)")[1].split("##")[0]
    rows = [line for line in timeline.splitlines() if line.startswith("| ")][1:]
    assert len(rows) == len(one_of_each())
    for row in rows:  # a `|` in a tool's text is escaped: every row keeps its four cells
        assert len(re.findall(r"(?<!\\)\|", row)) == 5, row
    assert rows[0].startswith("| 10:00:00 |  | started |")
    assert "| **Ended** | 2026-11-30 10:00:05 UTC (5 s) |" in out
    assert "| 10:00:01 | 1 | action | Listing pods in shop [k8s_pods] |" in out
    assert "**oom_killed** in `Deployment shop/checkout`, confidence 90%." in out
    assert ("### Evidence\n\n- Step 1, `k8s_pods`:\n  ```text\n"
            "  checkout-7d9f-abcde  restarts=7  last=OOMKilled\n  ```\n"
            "- `metrics_workload_signals` (not found in its output):\n  ```text\n"
            "  memory at 100% of limit\n  ```\n") in out
    assert "raise the memory limit to 512Mi | or roll back `v42`" in out
    assert "```text\ncheckout-7d9f-abcde  restarts=7  last=OOMKilled\n```" in out
    assert '10:00:02 alice: "stay out of kube-system" (exclude_namespace)' in out
    assert "bob marked it **wrong**" in out and 'bob replied: "it was the \\| pool"' in out


def test_show_of_an_unknown_id_is_one_line_and_exit_1(
    seeded: int, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "show", "nope")
    assert (code, out) == (1, "")
    assert err.strip().splitlines() == [
        "triage: error: no investigation with id 'nope' (see `triage history`)"
    ]


def test_show_of_an_undiagnosed_investigation(
    seeded: int, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "show", "inv2")
    assert code == 0 and "none yet: still running" in out and "(no events recorded)" in out
    code, out, _ = run(capsys, "show", "inv2", "--markdown")
    assert "No diagnosis yet" in out and "| | | | no events were recorded |" in out


def test_lessons_list_show_search_and_delete(
    seeded: int, capsys: pytest.CaptureFixture[str]
) -> None:
    lesson = seeded
    code, out, _ = run(capsys, "lessons", "list")
    assert code == 0
    assert re.fullmatch(rf"\s*{lesson}  \d{{4}}-\d\d-\d\d  confirmed  \[orders-db,timeouts\]  "
                        r"orders-db "
                        r"pool exhausted: raise the pool size\n", out)
    code, out, _ = run(capsys, "lessons", "list", "--search", "orders db timing out")
    assert out.split()[0] == str(lesson)
    code, out, _ = run(capsys, "lessons", "list", "--search", "kafka")
    assert out == "no lessons match\n"
    code, out, _ = run(capsys, "lessons", "show", str(lesson))
    assert code == 0 and "From        investigation inv1" in out
    assert out.rstrip().endswith("orders-db pool exhausted: raise the pool size")
    code, out, _ = run(capsys, "lessons", "delete", str(lesson))
    assert (code, out) == (0, f"deleted lesson {lesson}\n")
    for action in ("show", "delete"):
        code, out, err = run(capsys, "lessons", action, str(lesson))
        assert code == 1 and err.startswith(f"triage: error: no lesson with id {lesson}")
    code, out, _ = run(capsys, "lessons", "list")
    assert out == "no lessons yet\n"


async def _reflected(url: str) -> int:
    store = await Store.open(url)
    try:
        pending = await store.add_lesson("I quoted an error no tool returned: read the pods",
                                         services=["orders-db"], source_investigation="inv1",
                                         state="pending")
        return pending.id
    finally:
        await store.close()


def test_lessons_say_whether_they_are_pending_or_confirmed(
    seeded: int, db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    pending = asyncio.run(_reflected(db_url))
    code, out, _ = run(capsys, "lessons", "list")
    assert code == 0
    states = {int(line.split()[0]): line.split()[2] for line in out.splitlines()}
    assert states == {pending: "pending", seeded: "confirmed"}
    code, out, _ = run(capsys, "lessons", "list", "--state", "pending")
    assert [int(line.split()[0]) for line in out.splitlines()] == [pending]
    code, out, _ = run(capsys, "lessons", "show", str(pending))
    assert "State       pending (retrieved once a human confirms the diagnosis)" in out
    # What a new incident would retrieve: the pending reflection is not among it.
    code, out, _ = run(capsys, "lessons", "list", "--search", "orders-db pods error")
    assert [int(line.split()[0]) for line in out.splitlines()] == [seeded]


def test_an_unreachable_database_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(ENV_VAR, "postgresql://triage:hunter2@127.0.0.1:1/triage")
    code, out, err = run(capsys, "history")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "hunter2" not in err
    assert err.startswith("triage: error: database postgresql+asyncpg://triage:***@127.0.0.1:1")
