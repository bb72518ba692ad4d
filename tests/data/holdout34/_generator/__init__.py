"""The holdout34 scenarios, written blind: `python -m tests.data.holdout34._generator`
rewrites every folder of the set from the stories below."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.data.holdout34._generator import (
    story_edge,
    story_fraud,
    story_geo,
    story_ledger,
    story_notify,
    story_price,
    story_quote,
    story_search,
)
from tests.data.holdout34._generator.kit import Scenario

ROOT = Path(__file__).resolve().parents[1]
MODULES = (
    story_edge,
    story_ledger,
    story_geo,
    story_fraud,
    story_search,
    story_quote,
    story_price,
    story_notify,
)


def stories() -> dict[str, Callable[[], Scenario]]:
    out: dict[str, Callable[[], Scenario]] = {}
    for module in MODULES:
        out.update(module.STORIES)
    return out


def main() -> None:
    for sid, build in stories().items():
        scenario = build()
        assert scenario.sid == sid, (scenario.sid, sid)
        scenario.write(ROOT)
        print("wrote", ROOT / sid)
