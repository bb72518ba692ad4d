"""Generator of the holdout45 scenarios:
`PYTHONPATH=. python -m tests.data.holdout45._generator`."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

MODULES = [
    "s1_mtls_client_cert",
    "s2_disk_pressure",
    "s3_pid_pressure",
    "s4_pvc_quota",
    "s5_gomaxprocs",
    "s6_producer_rename",
    "s7_s3_slowdown",
    "s8_egress_cidr",
]


def stories() -> dict[str, Callable[..., Any]]:
    """The scenario ids of the set, each with the function that builds it."""
    loaded = [importlib.import_module(f"{__package__}.{name}") for name in MODULES]
    return {module.SID: module.build for module in loaded}
