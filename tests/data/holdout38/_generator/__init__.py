"""Generator of the holdout38 held-out set: eight incidents written blind to the analyzer.

`python -m tests.data.holdout38._generator` rewrites every scenario folder of the set from
the story modules; `stories()` maps each scenario id to the function that builds it.
"""

from __future__ import annotations

from collections.abc import Callable

from tests.data.holdout38._generator import (
    arm64_pool,
    canary_500,
    grpc_health,
    jvm_offheap,
    limitrange_min,
    partner_egress,
    secret_key,
    zonal_volume,
)
from tests.data.holdout38._generator.story import Story

_BUILDERS: tuple[Callable[[], Story], ...] = (
    jvm_offheap.build,
    secret_key.build,
    arm64_pool.build,
    partner_egress.build,
    grpc_health.build,
    limitrange_min.build,
    canary_500.build,
    zonal_volume.build,
)


def stories() -> dict[str, Callable[[], Story]]:
    """Scenario id → builder, built once to read the ids (each builder is pure)."""
    return {builder().id: builder for builder in _BUILDERS}
