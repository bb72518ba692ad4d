"""Deterministic generator of the holdout56 scenarios."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

MODULES: list[str] = [
    "s1_sidecar_throttle",
    "s2_cronjob_connections",
    "s3_kubelet_cert",
    "s4_metrics_server",
    "s5_missing_intermediate",
    "s6_consumer_group",
    "s7_nonroot_port",
    "s8_zonal_volume",
]


def stories() -> dict[str, Callable[[Path], None]]:
    out: dict[str, Callable[[Path], None]] = {}
    for name in MODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        out[module.SID] = module.build
    return out
