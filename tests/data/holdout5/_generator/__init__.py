"""Generator of the fifth held-out set (tests/data/holdout5/<id>/).

Ten incidents written blind to the analyzer, one a category, on top of the deterministic
building blocks of tests/scenario_tools and the four earlier held-out sets. Regenerate with:

    .venv/bin/python -m tests.data.holdout5._generator [ID ...]
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from tests.scenario_tools.common import Story

MODULES = ("s_royalties", "s_reminders", "s_berths", "s_lending", "s_customs",
           "s_allotments")


def stories() -> dict[str, Callable[[], Story]]:
    """Scenario id to the function that builds it."""
    mods = [importlib.import_module(f"{__name__}.{m}") for m in MODULES]
    return {m.ID: m.build for m in mods}
