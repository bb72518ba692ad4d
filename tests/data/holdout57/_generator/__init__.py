"""Deterministic generator of the holdout57 scenarios."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

MODULES = [
    "s1_chunk_store",
    "s2_report_worker",
    "s3_pricing",
    "s4_ledger_kms",
    "s5_feed_handler",
    "s6_indexer",
    "s7_push_dispatcher",
    "s8_gpu_node",
]


def stories() -> dict[str, Callable[[Path], None]]:
    out: dict[str, Callable[[Path], None]] = {}
    for name in MODULES:
        mod = importlib.import_module(f"{__name__}.{name}")
        out[mod.SID] = mod.build
    return out
