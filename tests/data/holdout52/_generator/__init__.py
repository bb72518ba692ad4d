"""Deterministic generator of the holdout52 scenarios."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

MODULES: list[str] = [
    "s1_mesh_header_400",
    "s2_registry_pull",
    "s3_ratelimit_throttle",
    "s4_csi_node_oom",
    "s5_init_quota",
    "s6_selector_overlap",
    "s7_hpa_two_hops",
    "s8_cronjob_sftp_hang",
]


def stories() -> dict[str, Callable[[Path], None]]:
    out: dict[str, Callable[[Path], None]] = {}
    for name in MODULES:
        mod = importlib.import_module(f"{__name__}.{name}")
        out[mod.SID] = mod.build
    return out
