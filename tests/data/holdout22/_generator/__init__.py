"""Generator of the twenty-second held-out set (tests/data/holdout22/<id>/).

Incidents written blind to the analyzer: a memory limit outgrown by big photos at a
peak, a registry robot account that expired under an autoscaler's scale-out, and a database
ingress policy that forgot one client namespace.
Regenerate with:

    .venv/bin/python -m tests.data.holdout22._generator [ID ...]
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from tests.scenario_tools.common import Story

MODULES: tuple[str, ...] = ("s_inspect", "s_snacks", "s_renewals")


def stories() -> dict[str, Callable[[], Story]]:
    """Scenario id to the function that builds it."""
    mods = [importlib.import_module(f"{__name__}.{m}") for m in MODULES]
    return {m.ID: m.build for m in mods}
