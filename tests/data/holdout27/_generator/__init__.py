"""Generator of the twenty-seventh held-out set (tests/data/holdout27/<id>/).

Incidents written blind to the analyzer, whose symptom is reported far from its cause (a
mobile app, a partner, a dashboard, a finance report). Regenerate with:

    .venv/bin/python -m tests.data.holdout27._generator [ID ...]
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from tests.scenario_tools.common import Story

MODULES: tuple[str, ...] = ("s_streaks", "s_channels", "s_airquality")


def stories() -> dict[str, Callable[[], Story]]:
    """Scenario id to the function that builds it."""
    mods = [importlib.import_module(f"{__name__}.{m}") for m in MODULES]
    return {m.ID: m.build for m in mods}
