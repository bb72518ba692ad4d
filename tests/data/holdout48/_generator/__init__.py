"""Deterministic generator of the holdout48 scenarios."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

MODULES = [
    "s1_tickstore_compaction_oom",
    "s2_ledger_key_nonroot",
    "s3_dispatch_tzdata",
    "s4_mesh_sidecar_cpu",
    "s5_token_cert_not_reloaded",
    "s6_webhook_cert_expired",
    "s7_quota_no_limits",
    "s8_keepalive_502",
]


def stories() -> dict[str, Callable[..., Any]]:
    """The scenario ids of the set, each with the function that builds it."""
    loaded = [importlib.import_module(f"{__package__}.{name}") for name in MODULES]
    return {module.SID: module.build for module in loaded}
