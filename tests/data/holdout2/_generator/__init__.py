"""Generator of the second held-out set (tests/data/holdout2/<id>/).

Ten incidents written blind to the analyzer, one a category, on top of the deterministic
building blocks of tests/scenario_tools and the first held-out set. Regenerate with:

    .venv/bin/python -m tests.data.holdout2._generator [ID ...]
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from tests.scenario_tools.common import Story

MODULES = ("s_routes", "s_positions", "s_payouts", "s_activity", "s_timesheets",
           "s_kitchen", "s_bids", "s_prescriptions",
           "s_transcode", "s_enrolment")


def stories() -> dict[str, Callable[[], Story]]:
    """Scenario id to the function that builds it."""
    mods = [importlib.import_module(f"{__name__}.{m}") for m in MODULES]
    return {m.ID: m.build for m in mods}
