"""`triage eval --engine all`: every engine on the same scenarios, one report each."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from rich.console import Console

from bot.cli.eval import comparison
from bot.evaluation import EvalReport, EvalResult
from bot.wiring import ENGINES

ROOT = Path(__file__).resolve().parents[2]


def test_eval_all_runs_every_engine_on_the_same_scenarios() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", "eval", "--scenarios", "tests/data/holdout27",
         "--engine", "all", "--search", "dfs", "--jobs", "2", "--json"],
        capture_output=True, text=True, check=True, cwd=ROOT, timeout=300)
    reports = json.loads(done.stdout)
    assert list(reports) == list(ENGINES) == ["react", "reflexion", "tot", "got", "auto"]
    scenarios = {e: sorted(r["scenario"] for r in report["results"])
                 for e, report in reports.items()}
    assert len({tuple(s) for s in scenarios.values()}) == 1  # the same scenarios for each
    for report in reports.values():
        assert report["summary"]["accuracy"] == 1.0


def test_the_summary_counts_wrong_answers_given_with_confidence() -> None:
    """The misleading answers: wrong at a confidence of 0.6 or more; a wrong answer given
    unsure, a right one given sure, and a failed run are not."""
    def row(name: str, correct: bool, confidence: float | None) -> EvalResult:
        diagnosis = None if confidence is None else {"category": "network",
                                                     "confidence": confidence}
        return EvalResult(name, correct=correct, diagnosis=diagnosis)

    report = EvalReport([row("a", False, 0.83), row("b", False, 0.6), row("c", False, 0.59),
                         row("d", True, 0.95), row("e", False, None)])
    assert report.summary.confident_wrong == 2
    assert report.as_json()["summary"]["confident_wrong"] == 2
    console = Console(record=True, width=200)
    console.print(comparison({"react": report}))
    row = next(line for line in console.export_text().splitlines() if "react" in line)
    assert "2/4" in row.split("│")[4]  # the "wrong ≥0.6" column
