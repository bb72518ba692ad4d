"""Deterministic generator of the holdout47 scenarios:
`python -m tests.data.holdout47._generator`."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

MODULES = [
    "s1_intl_quotes_tariff_slow",
    "s2_legacy_ledger_externalname",
    "s3_enrich_queue_hpa_max",
    "s4_pdf_renderer_entrypoint_moved",
    "s5_session_cache_oom",
    "s6_search_api_cpu_limit_cut",
    "s7_node_pleg_unhealthy",
    "s8_report_api_quota_full",
]


def stories() -> dict[str, Callable[..., Any]]:
    """The scenario ids of the set, each with the function that builds it."""
    loaded = [importlib.import_module(f"{__package__}.{name}") for name in MODULES]
    return {module.SID: module.build for module in loaded}
