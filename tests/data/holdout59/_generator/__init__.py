"""Deterministic generator of the holdout59 blind held-out scenarios.

Run ``PYTHONPATH=. python -m tests.data.holdout59._generator`` from the repository root;
each scenario module has one ``build(root)`` that writes its folder.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

MODULES = {
    "minio-uploads-quorum": "s1_minio",
    "catalog-big-listings": "s2_grpc",
    "storefront-slow-after-evictions": "s3_vpa",
    "billing-db-timeouts": "s4_netpol",
    "thumbnail-fork-failures": "s5_pids",
    "session-signer-restarts": "s6_secret",
    "sessions-cache-writes": "s7_redis",
    "partner-tls-handshakes": "s8_ocsp",
}


def stories() -> dict[str, Callable[[Path], None]]:
    """Scenario id -> the function that writes it under a root folder."""
    out: dict[str, Callable[[Path], None]] = {}
    for sid, mod in MODULES.items():
        module = importlib.import_module(f"{__name__}.{mod}")
        out[sid] = module.build
    return out
