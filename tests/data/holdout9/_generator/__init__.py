"""Generator of the ninth held-out set (tests/data/holdout9/<id>/).

Incidents written blind to the analyzer, on top of the deterministic building blocks of
tests/scenario_tools and the eight earlier held-out sets. Regenerate with:

    .venv/bin/python -m tests.data.holdout9._generator [ID ...]
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from tests.scenario_tools.common import Story

MODULES: tuple[str, ...] = ("s_genealogy", "s_vetlab", "s_irrigation", "s_dental",
           "s_election")


def stories() -> dict[str, Callable[[], Story]]:
    """Scenario id to the function that builds it."""
    mods = [importlib.import_module(f"{__name__}.{m}") for m in MODULES]
    return {m.ID: m.build for m in mods}
