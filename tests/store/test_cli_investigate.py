"""`triage investigate` records what it did, like the bot: `triage history` lists it (origin
"cli") and `triage show` renders it; `--no-record` leaves the store alone; a store that
cannot be opened costs a warning, never the diagnosis. On SQLite and a real PostgreSQL."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from bot.cli import main
from bot.store import Store, StoredInvestigation
from bot.store.url import ENV_VAR
from engines.events import (
    DiagnosisSubmitted,
    Event,
    InvestigationStarted,
    InvestigationStopped,
)
from tests.fakes.openai_server import Completion, FakeOpenAIServer, tool_call

ROOT = Path(__file__).resolve().parents[2]
REPORT = "checkout keeps restarting, customers get 502s on payment"
DIAGNOSIS = {
    "category": "oom_killed",
    "culprit": {"kind": "Deployment", "namespace": "shop", "name": "checkout"},
    "summary": "checkout is OOMKilled at its 256Mi limit", "confidence": 0.9,
    "evidence": [{"tool": "k8s_describe_pod", "quote": "OOMKilled"}], "fix": "raise it",
}
RECORDED = re.compile(r"^Recorded as ([0-9a-f]{12}): triage show \1$", re.M)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def investigate(capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    return run(capsys, "investigate", REPORT, "--scenario", "checkout-oom",
               "--model", "analyzer", *extra)


async def _everything(url: str) -> tuple[list[StoredInvestigation], dict[str, list[Event]]]:
    store = await Store.open(url)
    try:
        rows = await store.history(50)
        return list(rows), {row.id: list(await store.events(row.id)) for row in rows}
    finally:
        await store.close()


def test_an_investigation_is_recorded_listed_and_shown(
    db_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(ENV_VAR, db_url)
    code, out, err = investigate(capsys)
    assert code == 0 and err == ""
    (investigation_id,) = RECORDED.findall(out)
    assert out.splitlines()[-1] == f"Recorded as {investigation_id}: triage show {investigation_id}"

    [row], logs = asyncio.run(_everything(db_url))
    events = logs[investigation_id]
    assert row.id == investigation_id and row.origin == "cli"
    assert row.status == "done" and row.engine == "react"
    assert isinstance(events[0], InvestigationStarted) and events[0].investigation_id == row.id
    assert isinstance(events[-1], InvestigationStopped) and events[-1].reason == "diagnosed"
    (submitted,) = [e for e in events if isinstance(e, DiagnosisSubmitted)]
    assert row.diagnosis == submitted.diagnosis

    code, out, _ = run(capsys, "history")
    assert code == 0
    assert re.fullmatch(rf"{investigation_id}  \d{{4}}-\d\d-\d\d \d\d:\d\d  cli  done  "
                        rf"oom_killed Deployment shop/checkout  {REPORT[:30]}.*\n", out)

    code, out, _ = run(capsys, "show", investigation_id)
    assert code == 0 and out.startswith(f"Investigation {investigation_id} · done (diagnosed)")
    assert "from the command line" in out
    assert re.search(r"^  \d\d:\d\d:\d\d  #1\s+action\s+Listing workloads", out, re.M)
    # each quote whole, under its tool and the step that showed it
    assert re.search(r"^  Evidence    k8s_describe_pod, step \d\n                last_state: "
                     r"\{terminated: OOMKilled, exit_code: 137, ", out, re.M)
    code, out, _ = run(capsys, "show", investigation_id, "--markdown")
    assert "| **Started from** | the command line (`triage investigate`) |" in out
    assert re.search(r"^- Step \d, `k8s_list_workloads`:\n  ```text\n  last_exit_reasons: "
                     r"\{OOMKilled: 3\}\n  ```$", out, re.M)


def test_json_keeps_stdout_for_the_diagnosis(
    db_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(ENV_VAR, db_url)
    code, out, err = investigate(capsys, "--json", "--engine", "reflexion")
    assert code == 0 and json.loads(out)["category"] == "oom_killed"
    (investigation_id,) = RECORDED.findall(err)
    [row], _ = asyncio.run(_everything(db_url))
    assert (row.id, row.engine) == (investigation_id, "reflexion")
    assert row.diagnosis.model_dump(mode="json") == json.loads(out)


def test_no_record_leaves_the_store_empty(
    db_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(ENV_VAR, db_url)
    code, out, err = investigate(capsys, "--no-record")
    assert code == 0 and "Recorded" not in out + err and "Diagnosis" in out
    assert asyncio.run(_everything(db_url)) == ([], {})
    code, out, _ = run(capsys, "history")
    assert out.startswith("no investigations yet")


def test_a_store_that_cannot_be_opened_costs_a_warning_not_the_diagnosis(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv(ENV_VAR, str(blocker / "triage.db"))  # even root cannot mkdir here
    code, out, err = investigate(capsys, "--json")
    assert code == 0 and json.loads(out)["category"] == "oom_killed"
    (warning,) = err.splitlines()
    assert warning.startswith(f"triage: warning: not recorded (cannot create {blocker}: ")
    assert warning.endswith("); --no-record skips the store")
    monkeypatch.setenv(ENV_VAR, "postgresql://triage:hunter2@127.0.0.1:1/triage")
    code, out, err = investigate(capsys)
    assert code == 0 and "Diagnosis" in out and "Recorded" not in out
    (warning,) = err.splitlines()
    assert warning.startswith("triage: warning: not recorded (database postgresql+asyncpg://"
                              "triage:***@127.0.0.1:1/triage") and "hunter2" not in warning


def _cli(*extra: str) -> list[str]:
    """`python -m bot.cli investigate` with a model of the fake OpenAI server."""
    return [sys.executable, "-m", "bot.cli", "investigate", REPORT, "--scenario", "checkout-oom",
            "--model", "gpt-test", *extra]


def _environment(server: FakeOpenAIServer, url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRIAGE_", "OPENAI_"))}
    return env | {ENV_VAR: url, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "x"}


async def _running(url: str) -> str | None:
    store = await Store.open(url)
    try:
        rows = await store.history(1)
        return rows[0].id if rows and rows[0].events else None
    finally:
        await store.close()


def _interruptible() -> None:
    """Ctrl-C as a terminal gives it: a suite started in the background of a shell without
    job control (`cmd &`, nohup) has SIGINT ignored, and its children would inherit that."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


async def _until_thinking(
    server: FakeOpenAIServer, url: str, process: asyncio.subprocess.Process,
) -> None:
    """Wait until the other process has asked the model and its record has begun. A CI
    machine shared with other work can take tens of seconds just to import the CLI, so the
    wait is a generous deadline, and a CLI that exits early fails at once with its stderr."""
    deadline = asyncio.get_running_loop().time() + 120
    while asyncio.get_running_loop().time() < deadline:
        if process.returncode is not None:
            _, err = await process.communicate()
            raise AssertionError(f"the CLI exited {process.returncode}: {err.decode()}")
        if server.chat_requests and await _running(url) is not None:
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the investigation never started within 120 s")


async def test_an_interrupted_investigation_is_recorded_as_stopped(db_url: str) -> None:
    """Ctrl-C while the model thinks: the process says so and the record ends stopped, so
    no investigation stays "running" for ever (and the bot never resumes a CLI run)."""
    async with FakeOpenAIServer() as server:
        server.script(Completion("thinking", delay=600))
        process = await asyncio.create_subprocess_exec(
            *_cli(), cwd=ROOT, env=_environment(server, db_url),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            preexec_fn=_interruptible)
        try:
            await _until_thinking(server, db_url, process)
            process.send_signal(signal.SIGINT)
            out, err = await asyncio.wait_for(process.communicate(), 30)
        finally:
            if process.returncode is None:
                process.kill()
    assert process.returncode == 130, err.decode()
    assert err.decode().splitlines()[-1] == "triage: interrupted"
    (investigation_id,) = RECORDED.findall(out.decode())
    [row], _ = await _everything(db_url)
    assert (row.id, row.status, row.origin) == (investigation_id, "stopped", "cli")


async def test_a_store_failing_mid_run_is_a_warning_and_the_diagnosis_is_printed(
    fresh_db_url: str,
) -> None:
    """The events table goes away while the model thinks: the log stops there, the outcome
    is still written, the diagnosis printed, the exit status 0, and stderr says what is
    missing."""
    async with FakeOpenAIServer() as server:
        server.script(Completion(None, (tool_call("submit_diagnosis", DIAGNOSIS),), delay=4))
        process = await asyncio.create_subprocess_exec(
            *_cli("--json"), cwd=ROOT, env=_environment(server, fresh_db_url),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        try:
            # The record exists once the model is asked: it is made before the run. A loaded
            # machine may take many seconds to start the CLI; the model's delay holds the run.
            for _ in range(1500):
                if server.chat_requests or process.returncode is not None:
                    break
                await asyncio.sleep(0.02)
            assert server.chat_requests, "the CLI never asked the model"
            store = await Store.open(fresh_db_url)
            try:
                async with store._db.begin() as conn:
                    await conn.execute(sa.text("DROP TABLE events"))
            finally:
                await store.close()
            out, err = await asyncio.wait_for(process.communicate(), 30)
        finally:
            if process.returncode is None:
                process.kill()
    assert process.returncode == 0, err.decode()
    assert json.loads(out)["category"] == "oom_killed"
    (warning,) = err.decode().splitlines()
    assert re.fullmatch(r"triage: warning: recorded as ([0-9a-f]{12}) \(triage show \1\), but "
                        r"its log stops before the \w+ event: database .*events.*", warning)
    store = await Store.open(fresh_db_url)
    try:
        [row] = await store.history()
    finally:
        await store.close()
    assert (row.status, row.origin) == ("done", "cli")
    assert row.diagnosis is not None and row.diagnosis.category == "oom_killed"
