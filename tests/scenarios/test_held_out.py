"""The held-out sets (tests/data/holdout*/): incidents written blind to the analyzer, to
measure how it generalises (`triage eval --scenarios tests/data/holdout2`). Asserted here:
they are valid scenarios, each with the generator that writes it. Their accuracy, once a
set has had its one blind score, is a regression (test_held_out_accuracy.py)."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from tools.scenarios.validate import validate_scenario

DATA = Path(__file__).resolve().parents[1] / "data"
SETS = sorted(p for p in DATA.glob("holdout*") if p.is_dir())
SCENARIOS = sorted(d for s in SETS for d in s.iterdir() if (d / "scenario.yaml").is_file())


def test_there_are_held_out_sets() -> None:
    assert len(SETS) >= 2 and len(SCENARIOS) >= 18


@pytest.mark.parametrize("folder", SCENARIOS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_held_out_scenario_is_valid(folder: Path) -> None:
    assert [str(p) for p in validate_scenario(folder)] == []


@pytest.mark.parametrize("folder", SETS, ids=lambda p: p.name)
def test_every_held_out_scenario_has_a_generator(folder: Path) -> None:
    generator = importlib.import_module(f"tests.data.{folder.name}._generator")
    stories = getattr(generator, "stories", None) or generator.STORIES
    written = {d.name for d in folder.iterdir() if (d / "scenario.yaml").is_file()}
    assert set(stories()) == written
