"""Deterministic generator for the holdout44 scenarios."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

MODULES = [
    "s1_ledger_oom",
    "s2_notify_config",
    "s3_search_targetport",
    "s4_cart_readonly",
    "s5_resizer_fds",
    "s6_ingest_antiaffinity",
    "s7_quote_probe",
    "s8_storefront_hpa",
]


def stories() -> dict[str, Callable[..., Any]]:
    """The scenario ids of the set, each with the function that builds it."""
    loaded = [importlib.import_module(f"{__package__}.{name}") for name in MODULES]
    return {module.SID: module.build for module in loaded}
