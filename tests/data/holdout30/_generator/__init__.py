"""The generator of the holdout30 scenarios: `python -m tests.data.holdout30._generator`.

`SCENARIOS` maps each story module to the id of the folder it writes, so that the set's
test can check every folder has its story without building them all.
"""

from __future__ import annotations

SCENARIOS: dict[str, str] = {
    "s1_renamed_key": "fulfilment-restarts-after-deploy",
    "s2_provider_outage": "checkout-payments-failing",
    "s3_scratch_full": "monthly-exports-failing",
    "s4_target_port": "profile-page-502",
    "s5_registry_dns": "search-slow-new-pods-stuck",
    "s6_liveness_warmup": "pricing-rollout-stuck",
    "s7_consumer_at_max": "emails-arriving-late",
    "s8_node_memory_pressure": "three-services-flaky",
}


def stories() -> list[str]:
    """The ids of the scenarios this generator writes."""
    return list(SCENARIOS.values())
