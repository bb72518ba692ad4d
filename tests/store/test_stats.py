"""`triage stats`: the figures each run leaves on its record (migration 0006), summarised
from the store on SQLite and PostgreSQL, as one JSON object or an aligned table."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta

import pytest

from bot.cli import main
from bot.monitor import Prices, RunFigures, percentile
from bot.store import InvestigationRecord, Store
from bot.store.errors import UnknownInvestigationError
from bot.store.url import ENV_VAR
from tests.store.samples import DIAGNOSIS

NOW = datetime.now(UTC)
# (id, engine, model, outcome, seconds to the end, steps, figures, days ago)
RUNS = [
    ("r1", "react", "gpt-4o-mini", "done", 20.0, 4, RunFigures(10, 2, 30_000, 1_000), 1),
    ("r2", "react", "gpt-4o-mini", "done", 40.0, 6, RunFigures(12, 6, 50_000, 2_000), 2),
    ("r3", "react", "gpt-4o-mini", "stopped", 90.0, 8, RunFigures(6, 0, 20_000, 500), 1),
    ("r4", "reflexion", "analyzer", "done", 3.0, 3, RunFigures(8, 4, 0, 0), 1),
    ("old", "react", "gpt-4o-mini", "done", 600.0, 30, RunFigures(50, 0, 900_000, 90_000), 30),
]


async def seed(url: str) -> None:
    store = await Store.open(url)
    try:
        for rid, engine, model, outcome, seconds, steps, figures, days in RUNS:
            started = NOW - timedelta(days=days)
            await store.create(InvestigationRecord(rid, "C1", rid, f"incident {rid}", "alice",
                                                   model, started_at=started), engine=engine)
            await store._update(rid, {"step": steps})
            await store.record_figures(rid, figures)
            await store.finish(rid, outcome,  # type: ignore[arg-type]
                               DIAGNOSIS if outcome == "done" else None,
                               at=started + timedelta(seconds=seconds))
        await store.create(InvestigationRecord("running", "C1", "x", "still going", "bob",
                                               "gpt-4o-mini"), engine="react")
        with pytest.raises(UnknownInvestigationError):
            await store.record_figures("nobody", RunFigures())
    finally:
        await store.close()


@pytest.fixture(autouse=True)
def no_prices(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("TRIAGE_PRICE_INPUT_PER_MTOK", "TRIAGE_PRICE_OUTPUT_PER_MTOK"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def seeded(db_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(ENV_VAR, db_url)
    asyncio.run(seed(db_url))
    return db_url


def stats(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["stats", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_is_one_object_with_the_fleet_figures(
    seeded: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRIAGE_PRICE_INPUT_PER_MTOK", "0.15")
    monkeypatch.setenv("TRIAGE_PRICE_OUTPUT_PER_MTOK", "0.60")
    code, out, err = stats(capsys, "--json")
    assert code == 0, err
    assert len(out.strip().splitlines()) == 1
    report = json.loads(out)
    total = report["total"]
    assert total["investigations"] == 4, "the 30-day-old run and the running one are out"
    assert total["diagnosed"] == 3 and total["by_status"] == {"done": 3, "stopped": 1}
    # time to diagnosis over the diagnosed runs (3 s, 20 s, 40 s): nearest rank
    assert total["time_to_diagnosis_seconds"] == {"p50": 20.0, "p95": 40.0}
    assert total["steps"] == {"p50": 4.0, "p95": 8.0}
    assert total["tool_calls"]["total"] == 36 and total["cached_calls"] == 12
    assert total["cache_hit_rate"] == pytest.approx(12 / 36, abs=1e-4)
    assert total["tokens"] == {"input": 100_000, "output": 3_500}
    assert total["estimated_cost_usd"] == pytest.approx((100_000 * 0.15 + 3_500 * 0.6) / 1e6)
    groups = {(g["engine"], g["model"]): g for g in report["by_engine_model"]}
    assert set(groups) == {("react", "gpt-4o-mini"), ("reflexion", "analyzer")}
    assert groups[("reflexion", "analyzer")]["cache_hit_rate"] == 0.5
    assert groups[("react", "gpt-4o-mini")]["investigations"] == 3

    code, out, _ = stats(capsys, "--json", "--since", "all")
    assert code == 0 and json.loads(out)["total"]["investigations"] == 5
    code, out, _ = stats(capsys, "--json", "--since", "36h")
    assert json.loads(out)["total"]["investigations"] == 3


def test_the_table_is_aligned_with_a_total(
    seeded: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = stats(capsys)
    lines = out.splitlines()
    assert code == 0
    assert lines[0].startswith("4 investigations ended since") and "cost not estimated" in lines[0]
    header, *rows = lines[1:]
    assert header.split()[:4] == ["ENGINE", "MODEL", "RUNS", "DONE"]
    assert [r.split()[0] for r in rows] == ["react", "reflexion", "all"]
    react = rows[0].split()
    assert react[:4] == ["react", "gpt-4o-mini", "3", "2"]
    assert react[4:6] == ["20.0s", "40.0s"] and react[-1] == "-"
    # every figure column ends where its header ends
    ends = [header.index(h) + len(h) for h in ("RUNS", "CALLS", "HIT%")]
    for line in rows:
        assert all(line[end - 1] != " " for end in ends), line


def test_an_empty_store_and_an_unreachable_one(
    db_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_VAR, db_url)
    code, out, _ = stats(capsys)
    assert code == 0 and out.startswith("no investigation ended since")
    code, out, _ = stats(capsys, "--json")
    assert json.loads(out)["total"]["investigations"] == 0

    monkeypatch.setenv(ENV_VAR, "postgresql+asyncpg://triage:hunter2@127.0.0.1:9/nowhere")
    code, out, err = stats(capsys, "--json")
    assert code == 2 and "hunter2" not in out + err
    assert "127.0.0.1:9" in json.loads(out)["error"] and err.startswith("triage: error:")
    code, out, err = stats(capsys)
    assert code == 2 and out == "" and "127.0.0.1:9" in err


def test_prices_and_percentiles() -> None:
    assert Prices.from_env({}) is None
    prices = Prices.from_env({"TRIAGE_PRICE_INPUT_PER_MTOK": "3",
                              "TRIAGE_PRICE_OUTPUT_PER_MTOK": "15"})
    assert prices is not None and prices.cost(1_000_000, 100_000) == pytest.approx(4.5)
    with pytest.raises(Exception, match="TRIAGE_PRICE_OUTPUT_PER_MTOK is not set"):
        Prices.from_env({"TRIAGE_PRICE_INPUT_PER_MTOK": "3"})
    with pytest.raises(Exception, match="must be a number"):
        Prices.from_env({"TRIAGE_PRICE_INPUT_PER_MTOK": "x", "TRIAGE_PRICE_OUTPUT_PER_MTOK": "1"})
    values = [float(v) for v in range(1, 21)]
    assert percentile(values, 0.95) == 19 and percentile(values, 0.5) == 10
    assert percentile([], 0.5) is None


def test_show_says_what_one_investigation_cost(
    seeded: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["show", "r2"]) == 0
    out = capsys.readouterr().out
    assert "Cost        12 tool calls (6 answered by a cache) · 50,000 tokens in, 2,000 out" in out
    assert main(["show", "running"]) == 0
    assert "Cost" not in capsys.readouterr().out, "nothing is known before the end"
