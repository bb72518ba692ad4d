"""Generator of the twenty-fourth held-out set (tests/data/holdout24/<id>/).

Incidents written blind to the analyzer, each with its cause visible mainly in one source
(metrics, logs, or object spec and status) while the others show only symptoms.
Regenerate with:

    .venv/bin/python -m tests.data.holdout24._generator [ID ...]
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from tests.scenario_tools.common import Story

MODULES: tuple[str, ...] = ("s_removals", "s_cards", "s_mealtopups")


def stories() -> dict[str, Callable[[], Story]]:
    """Scenario id to the function that builds it."""
    mods = [importlib.import_module(f"{__name__}.{m}") for m in MODULES]
    return {m.ID: m.build for m in mods}
