"""Deterministic generator of the holdout55 scenarios."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

MODULES = [
    "s1_ledger",
    "s2_thumbs",
    "s3_ingress",
    "s4_zookeeper",
    "s5_spread",
    "s6_warmup",
    "s7_jobquota",
    "s8_regcred",
]


def stories() -> dict[str, Callable[[Path], None]]:
    out: dict[str, Callable[[Path], None]] = {}
    for name in MODULES:
        mod = importlib.import_module(f"{__name__}.{name}")
        out[mod.SID] = mod.build
    return out
