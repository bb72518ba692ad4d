"""Generator of the twenty-sixth held-out set (tests/data/holdout26/<id>/).

Incidents written blind to the analyzer, on top of the deterministic building blocks of
tests/scenario_tools. Regenerate with:

    .venv/bin/python -m tests.data.holdout26._generator [ID ...]
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from tests.scenario_tools.common import Story

MODULES: tuple[str, ...] = ("s_payee", "s_ranked", "s_chutes")


def stories() -> dict[str, Callable[[], Story]]:
    """Scenario id to the function that builds it."""
    mods = [importlib.import_module(f"{__name__}.{m}") for m in MODULES]
    return {m.ID: m.build for m in mods}
