"""Writes every holdout37 scenario folder: `python -m tests.data.holdout37._generator`."""

from __future__ import annotations

import importlib

MODULES = [
    "s1_cron_latest",
    "s2_probe_old_port",
    "s3_containerd_down",
    "s4_init_oom",
    "s5_version_selector",
    "s6_objectstore_slowdown",
    "s7_inodes",
    "s8_mtls_probe",
]

for name in MODULES:
    try:
        mod = importlib.import_module(f"{__package__}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.endswith(name):
            continue
        raise
    mod.build().write()
    print("wrote", name)
