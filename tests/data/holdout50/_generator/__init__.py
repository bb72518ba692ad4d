"""Deterministic generator of the holdout50 scenarios."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

MODULES = [
    "s1_tenant_shard_oom",
    "s2_expired_license",
    "s3_lb_local_policy",
    "s4_partner_ip_allowlist",
    "s5_wal_slot_disk",
    "s6_inprocess_batch_throttle",
    "s7_max_pods_pool",
    "s8_brotli_rollout",
]


def stories() -> dict[str, Callable[..., Any]]:
    return {
        m.SID: m.build
        for m in (importlib.import_module(f"{__package__}.{n}") for n in MODULES)
    }
