"""Deterministic generator of the holdout54 scenarios."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

MODULES = [
    "s1_search_rollout",
    "s2_pricing_gzip",
    "s3_amqp_channels",
    "s4_cert_not_yet_valid",
    "s5_ingress_throttle",
    "s6_ws_hpa_max",
    "s7_cart_not_ready",
    "s8_node_hung_tasks",
]


def stories() -> dict[str, Callable[[Path], None]]:
    out: dict[str, Callable[[Path], None]] = {}
    for name in MODULES:
        mod = importlib.import_module(f"{__name__}.{name}")
        out[mod.SID] = mod.build
    return out
