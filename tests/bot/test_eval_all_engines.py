"""`triage eval --engine all`: every engine on the same scenarios, one report each."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
