"""Generator of the holdout28 held-out set: `python -m tests.data.holdout28._generator`.

Each `sN_*` module builds one scenario (`build() -> Scenario`); `_k8s`, `_workloads`,
`_common` and `_out` are the shared builders and the writer. The RNG is seeded per
scenario, so a run writes the same bytes every time.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

# scenario id -> the module that builds it
_MODULES = {
    "payments-card-errors-morning": "s1_card_gateway",
    "catalog-deploy-hanging": "s2_product_migration",
    "orders-stock-reservation-failing": "s3_stale_ca",
    "crm-saving-contacts-fails": "s4_volume_full",
    "analytics-reports-timing-out": "s5_netpol",
    "shop-site-503": "s6_selector",
    "media-thumbnails-delayed": "s7_limitrange",
    "product-pages-sluggish": "s8_latency",
}


def stories() -> dict[str, Callable[[], object]]:
    """The scenarios this generator writes, by id, each with its builder."""
    return {sid: importlib.import_module(f"{__name__}.{mod}").build
            for sid, mod in _MODULES.items()}
