"""Generator of the third held-out set (tests/data/holdout3/<id>/).

Ten incidents written blind to the analyzer, one a category, on top of the deterministic
building blocks of tests/scenario_tools and the two earlier held-out sets. Regenerate with:

    .venv/bin/python -m tests.data.holdout3._generator [ID ...]
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from tests.scenario_tools.common import Story

MODULES = ("s_quotes", "s_activations", "s_parking", "s_statements", "s_clinics",
           "s_valuations", "s_signing", "s_fares", "s_meters", "s_uploads")


def stories() -> dict[str, Callable[[], Story]]:
    """Scenario id to the function that builds it."""
    mods = [importlib.import_module(f"{__name__}.{m}") for m in MODULES]
    return {m.ID: m.build for m in mods}
