"""Generator of the holdout29 scenario set: `python -m tests.data.holdout29._generator`."""

from __future__ import annotations

import importlib
from collections.abc import Callable

# Each scenario's id, and the module whose `build()` writes it.
_MODULES = {
    "invoice-export-runs-nothing": "s1_cronjob_limitrange",
    "clickhouse-scale-out-stuck": "s2_statefulset_storageclass",
    "random-timeouts-everywhere": "s3_coredns_throttled",
    "shop-pods-keep-restarting": "s4_node_disk_pressure",
    "search-latency-evening-peak": "s5_hpa_metrics_api",
    "ledger-rollout-hanging": "s6_registry_rate_limit",
    "storefront-503-bursts": "s7_readiness_dependency",
    "quote-engine-slow-and-restarting": "s8_jvm_cpu_limit",
}


def stories() -> dict[str, Callable[[], object]]:
    """The scenarios this generator writes, by id, each with its builder."""
    return {sid: importlib.import_module(f"{__name__}.{mod}").build
            for sid, mod in _MODULES.items()}
