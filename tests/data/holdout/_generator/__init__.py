"""Generator of the held-out scenarios (tests/data/holdout/<id>/).

Written blind to the analyzer, on top of the deterministic building blocks of
tests/scenario_tools. Regenerate with:

    .venv/bin/python -m tests.data.holdout._generator [ID ...]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

MODULES = ("s_ticketing", "s_vectordb", "s_feeds", "s_logship", "s_loyalty", "s_claims",
           "s_fxrates", "s_evictions")


def STORIES() -> dict[str, Callable[[], Any]]:
    import importlib

    mods = [importlib.import_module(f"{__name__}.{m}") for m in MODULES]
    return {m.ID: m.build for m in mods}
