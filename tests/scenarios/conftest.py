"""Broken copies of a bundled scenario, to show that the validator catches each rule."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.scenario_tools.generate import dump
from tools.scenarios import bundled_root
from tools.scenarios.validate import validate_scenario

BASE = "stock-sync-missing-env"  # small, and uses every file: pod logs, ECS logs, metrics


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    """A fresh copy of a valid bundled scenario, named as its id requires."""
    folder = tmp_path / BASE
    shutil.copytree(bundled_root() / BASE, folder)
    return folder


def problems(folder: Path) -> list[str]:
    return [str(p) for p in validate_scenario(folder)]


def line_of(file: Path, needle: str, start: int = 1) -> int:
    """The number of the first line at or after `start` that contains `needle`."""
    for number, line in enumerate(file.read_text().splitlines(), 1):
        if number >= start and needle in line:
            return number
    raise AssertionError(f"{needle!r} not in {file}")


def replace(file: Path, old: str, new: str) -> None:
    text = file.read_text()
    assert old in text, f"{old!r} not in {file}"
    file.write_text(text.replace(old, new, 1))


def edit_first(file: Path, match: Callable[[dict[str, Any]], bool],
               change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Apply `change` to the first document of a YAML file that `match`es; rewrite it."""
    docs = list(yaml.safe_load_all(file.read_text()))
    target = next(d for d in docs if match(d))
    change(target)
    file.write_text("---\n".join(dump(d) for d in docs))
    return target


def assert_reported(found: list[str], file: Path, line: int | None, message: str) -> None:
    where = f"{file}:{line}: " if line else f"{file}: "
    hits = [p for p in found if p.startswith(where) and message in p]
    assert hits, f"expected {where}...{message}... in:\n" + "\n".join(found)
