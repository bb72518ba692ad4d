"""Generator of the holdout32 scenarios: `python -m tests.data.holdout32._generator`.

One module per scenario; each has SID (the folder it writes) and build().
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

MODULES = (
    "s1_eta",
    "s2_cert",
    "s3_bind",
    "s4_liveness",
    "s5_netpol",
    "s6_coredns",
    "s7_spread",
    "s8_pids",
)


def stories() -> dict[str, Callable[[], None]]:
    """Scenario id -> the function that writes its folder."""
    out: dict[str, Callable[[], None]] = {}
    for name in MODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        out[module.SID] = module.build
    return out
