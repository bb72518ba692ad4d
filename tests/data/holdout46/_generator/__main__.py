"""Write every holdout46 scenario: PYTHONPATH=. python -m tests.data.holdout46._generator"""

from __future__ import annotations

import importlib
from pathlib import Path

MODULES = [
    "s1_pull_rate_limit",
    "s2_digest_gc",
    "s3_migration_init",
    "s4_monthly_oom",
    "s5_broker_disk_full",
    "s6_zone_selector",
    "s7_probe_401",
    "s8_san_mismatch",
]


def main() -> None:
    root = Path(__file__).resolve().parent.parent
    for name in MODULES:
        importlib.import_module(f"{__package__}.{name}").build(root)
        print("wrote", name)


if __name__ == "__main__":
    main()
