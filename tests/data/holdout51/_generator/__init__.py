"""Generator of the holdout51 scenarios."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

MODULES = [
    "s1_webhook_netpol",
    "s2_mesh_ca_expired",
    "s3_redis_service_links",
    "s4_node_clock_drift",
    "s5_sts_outage",
    "s6_volume_attach_limit",
    "s7_inotify_leak",
    "s8_exec_probe_timeout",
]


def stories() -> dict[str, Callable[[Path], None]]:
    out: dict[str, Callable[[Path], None]] = {}
    for name in MODULES:
        mod = importlib.import_module(f"{__name__}.{name}")
        out[mod.SID] = mod.build
    return out
