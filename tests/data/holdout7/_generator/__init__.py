"""Generator of the seventh held-out set (tests/data/holdout7/<id>/).

Incidents written blind to the analyzer, on top of the deterministic building blocks of
tests/scenario_tools and the six earlier held-out sets. Regenerate with:

    .venv/bin/python -m tests.data.holdout7._generator [ID ...]
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from tests.scenario_tools.common import Story

MODULES: tuple[str, ...] = ("s_gates", "s_allocations", "s_lockers",
           "s_greenhouse", "s_desks",
           "s_exhibits")


def stories() -> dict[str, Callable[[], Story]]:
    """Scenario id to the function that builds it."""
    mods = [importlib.import_module(f"{__name__}.{m}") for m in MODULES]
    return {m.ID: m.build for m in mods}
