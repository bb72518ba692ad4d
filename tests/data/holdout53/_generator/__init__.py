"""Deterministic generator of the holdout53 blind held-out scenarios."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

MODULES: list[str] = [
    "s1_ledger_sync",
    "s2_storefront_oom",
    "s3_fraud_score_udp",
    "s4_member_api_jwks",
    "s5_thumbnailer_ephemeral",
    "s6_catalog_probe_401",
    "s7_conntrack_node",
    "s8_order_api_quota",
]


def stories() -> dict[str, Callable[[Path], None]]:
    out: dict[str, Callable[[Path], None]] = {}
    for name in MODULES:
        mod = importlib.import_module(f"{__name__}.{name}")
        out[mod.SID] = mod.build
    return out
