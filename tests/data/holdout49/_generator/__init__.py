"""Deterministic generator of the holdout49 scenarios."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

MODULES = [
    "s1_metaspace",
    "s2_burst_throttle",
    "s3_retry_storm",
    "s4_service_port",
    "s5_inodes",
    "s6_quota_200",
    "s7_https_probe",
    "s8_toleration_typo",
]


def stories() -> dict[str, Callable[..., Any]]:
    """The scenario ids of the set, each with the function that builds it."""
    loaded = [importlib.import_module(f"{__package__}.{name}") for name in MODULES]
    return {module.SID: module.build for module in loaded}
