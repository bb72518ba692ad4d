"""Deterministic generator of the holdout46 scenarios."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

MODULES = [
    "s1_pull_rate_limit",
    "s2_digest_gc",
    "s3_migration_init",
    "s4_monthly_oom",
    "s5_broker_disk_full",
    "s6_zone_selector",
    "s7_probe_401",
    "s8_san_mismatch",
]


def stories() -> dict[str, Callable[..., Any]]:
    """The scenario ids of the set, each with the function that builds it."""
    loaded = [importlib.import_module(f"{__package__}.{name}") for name in MODULES]
    return {module.SID: module.build for module in loaded}
