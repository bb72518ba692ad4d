"""The holdout37 generator: `stories()` names each scenario folder and the builder that
writes it, so that a test can check that every folder has its generator; `python -m
tests.data.holdout37._generator` writes them all."""

from __future__ import annotations

import importlib
from collections.abc import Callable

MODULES = (
    "s1_cron_latest",
    "s2_probe_old_port",
    "s3_containerd_down",
    "s4_init_oom",
    "s5_version_selector",
    "s6_objectstore_slowdown",
    "s7_inodes",
    "s8_mtls_probe",
)


def stories() -> dict[str, Callable[[], None]]:
    """Scenario id -> the function that writes its folder."""
    found: dict[str, Callable[[], None]] = {}
    for name in MODULES:
        scenario = importlib.import_module(f"{__package__}.{name}").build()
        found[scenario.sid] = scenario.write
    return found
