"""Generator of the twenty-fifth held-out set (tests/data/holdout25/<id>/).

Incidents written blind to the analyzer, on the deterministic building blocks of
tests/scenario_tools. Regenerate with:

    .venv/bin/python -m tests.data.holdout25._generator [ID ...]
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from tests.scenario_tools.common import Story

MODULES: tuple[str, ...] = ("s_placement", "s_heatpumps", "s_surveys")


def stories() -> dict[str, Callable[[], Story]]:
    """Scenario id to the function that builds it."""
    mods = [importlib.import_module(f"{__name__}.{m}") for m in MODULES]
    return {m.ID: m.build for m in mods}
