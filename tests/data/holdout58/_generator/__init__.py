"""Generator of the holdout58 blind held-out scenarios.

Run from the repository root: ``PYTHONPATH=. python -m tests.data.holdout58._generator``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from . import (
    s1_invoice,
    s2_indexer,
    s3_mtu,
    s4_shards,
    s5_preempt,
    s6_imagefs,
    s7_keda,
    s8_sni,
)
from ._kit import Story

ROOT = Path(__file__).resolve().parents[1]
_BUILDERS: dict[str, Callable[[], Story]] = {
    "billing-invoice-downloads-503": s1_invoice.build,
    "search-results-hours-stale": s2_indexer.build,
    "report-exports-spin-forever": s3_mtu.build,
    "kibana-empty-since-midnight": s4_shards.build,
    "storefront-2am-latency": s5_preempt.build,
    "recsys-new-pods-stuck": s6_imagefs.build,
    "order-emails-late": s7_keda.build,
    "partner-stock-feed-stale": s8_sni.build,
}


def stories() -> dict[str, Callable[[], Story]]:
    """Scenario id to the function that builds it."""
    return dict(_BUILDERS)


def main(root: Path = ROOT) -> None:
    """Write every scenario folder under root."""
    for sid, build in stories().items():
        story = build()
        if story.sid != sid:
            raise ValueError(f"{build.__module__} builds {story.sid}, expected {sid}")
        story.write(root)
