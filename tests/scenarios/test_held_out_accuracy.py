"""Held-out accuracy as a regression: every held-out scenario the analyzer gets right stays
right, and the known misses (tests/data/held_out_misses.yaml) are exactly the ones still
wrong. Each set was scored once, blind, before anything was changed because of it
(README); this test measures nothing new, it only keeps what was reached."""

from __future__ import annotations

import asyncio
from pathlib import Path

import yaml

from bot.evaluation import EvalResult, evaluate

DATA = Path(__file__).resolve().parents[1] / "data"
SCENARIOS = sorted(d for s in DATA.glob("holdout*") if s.is_dir() for d in s.iterdir()
                   if (d / "scenario.yaml").is_file())
KNOWN_MISSES: dict[str, str] = yaml.safe_load((DATA / "held_out_misses.yaml").read_text())


def _key(folder: Path) -> str:
    return f"{folder.parent.name}/{folder.name}"


def _answer(row: EvalResult) -> str:
    diagnosis = row.diagnosis or {}
    culprit = diagnosis.get("culprit") or {}
    where = f"{culprit.get('namespace')}/{culprit.get('name')}" if culprit.get("namespace") \
        else str(culprit.get("name"))
    return f"{diagnosis.get('category')} {culprit.get('kind')} {where}"


def test_held_out_scenarios_stay_as_right_as_they_were() -> None:
    assert set(KNOWN_MISSES) <= {_key(f) for f in SCENARIOS}, "a listed miss does not exist"
    report = asyncio.run(evaluate(list(SCENARIOS), model="analyzer", engine="react", jobs=2))
    rows = {_key(f): row for f, row in zip(SCENARIOS, report.results, strict=True)}
    regressed = [f"{k}: {_answer(r)} ({r.error or r.reason})" for k, r in rows.items()
                 if not r.correct and k not in KNOWN_MISSES]
    fixed = [k for k, r in rows.items() if r.correct and k in KNOWN_MISSES]
    assert regressed == [], "held-out scenarios that were right are now wrong"
    assert fixed == [], "now right: remove them from tests/data/held_out_misses.yaml"
