"""Generator of the holdout31 scenario set: `python -m tests.data.holdout31._generator`.

One module per scenario, each with its `ID` and a `build()` that returns the scenario;
`stories()` lists the ids the generator writes (tests/scenarios/test_held_out.py checks
them against the folders).
"""

from __future__ import annotations

from . import (
    s1_refunds,
    s2_search_rollout,
    s3_scoring_pending,
    s4_orders_slow,
    s5_nightly_report,
    s6_cart_500s,
    s7_broker_disk,
    s8_payments_dns,
)

BUILDERS = (s1_refunds, s2_search_rollout, s3_scoring_pending, s4_orders_slow,
            s5_nightly_report, s6_cart_500s, s7_broker_disk, s8_payments_dns)


def stories() -> list[str]:
    """The ids of the scenarios this generator writes."""
    return [module.ID for module in BUILDERS]
