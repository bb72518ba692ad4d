"""holdout39: eight blind scenarios, one per shape (see ../README.md).

`python -m tests.data.holdout39._generator` rewrites every scenario folder of the set.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from pathlib import Path

from .common import Scenario

MODULES = (
    "s1_trust_bundle",
    "s2_tmp_eviction",
    "s3_dns_upstream",
    "s4_glibc",
    "s5_cache_key",
    "s6_hpa_max",
    "s7_node_unknown",
    "s8_sidecar_oom",
)
ROOT = Path(__file__).resolve().parents[1]


def _builders() -> dict[str, Callable[[], Scenario]]:
    builders = {}
    for module in MODULES:
        try:
            build = import_module(f"{__name__}.{module}").build
        except ModuleNotFoundError as missing:
            if missing.name and missing.name.endswith(module):
                continue
            raise
        builders[build().id] = build
    return builders


def stories() -> dict[str, Callable[[], Scenario]]:
    """Scenario id -> the function that builds it."""
    return _builders()


def main() -> None:
    for build in stories().values():
        build().write(ROOT)
