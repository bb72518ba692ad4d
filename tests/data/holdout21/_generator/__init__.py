"""Generator of the twenty-first held-out set (tests/data/holdout21/<id>/).

Incidents written blind to the analyzer, in shapes the earlier sets rarely used: an init
container of a StatefulSet mid-update, a call chain across three namespaces to an external
API, a throttled service-mesh sidecar. Regenerate with:

    .venv/bin/python -m tests.data.holdout21._generator [ID ...]
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from tests.scenario_tools.common import Story

MODULES: tuple[str, ...] = ("s_freezer", "s_parcels", "s_sidecar")


def stories() -> dict[str, Callable[[], Story]]:
    """Scenario id to the function that builds it."""
    mods = [importlib.import_module(f"{__name__}.{m}") for m in MODULES]
    return {m.ID: m.build for m in mods}
