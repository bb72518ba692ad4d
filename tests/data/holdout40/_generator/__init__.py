"""Generator of the holdout40 set: eight incidents written blind, one per shape in the brief.
`python -m tests.data.holdout40._generator` rewrites the scenario folders."""

from __future__ import annotations

from collections.abc import Callable

from .stories_a import pull_secret_deleted, rbac_forbidden
from .stories_b import host_header_probes, hostport_taken
from .stories_c import failing_disk_node, redis_maxmemory
from .stories_d import limit_ratio_refused, postgres_shm
from .story import Story

BUILDERS: tuple[Callable[[], Story], ...] = (rbac_forbidden, pull_secret_deleted, hostport_taken,
                                              host_header_probes, failing_disk_node,
                                              redis_maxmemory, postgres_shm,
                                              limit_ratio_refused)


def stories() -> dict[str, Callable[[], Story]]:
    """Scenario id -> the function that builds it."""
    return {builder().id: builder for builder in BUILDERS}
