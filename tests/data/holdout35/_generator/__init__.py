"""The generator of the holdout35 set: one module per scenario, each with its ID and build()."""

from __future__ import annotations

import importlib
from types import ModuleType

MODULES = (
    "s1_tag_purged",
    "s2_idp_slow",
    "s3_agent_taint",
    "s4_config_yaml",
    "s5_es_flood",
    "s6_missing_intermediate",
    "s7_gpu_pending",
    "s8_vault_role",
)


def modules() -> list[ModuleType]:
    return [importlib.import_module(f"{__name__}.{name}") for name in MODULES]


def stories() -> list[str]:
    """The ids of the scenarios this generator writes."""
    return [module.ID for module in modules()]
