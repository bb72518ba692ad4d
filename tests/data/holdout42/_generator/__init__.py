# ruff: noqa: E501 - story data: log lines and messages are kept whole, as the tools print them
"""Generator of the holdout42 set: `python -m tests.data.holdout42._generator` rewrites every
scenario folder from the stories below, so timestamps, volumes and counts stay consistent."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.data.holdout42._generator.kit import Story
from tests.data.holdout42._generator.stories_a import migration_lock_timeout, tmpfs_cache_oom
from tests.data.holdout42._generator.stories_b import pending_node_group_max, server_cert_wrong_eku
from tests.data.holdout42._generator.stories_c import kafka_leader_storm, rocksdb_volume_full
from tests.data.holdout42._generator.stories_d import (
    egress_policy_after_db_move,
    hpa_blocked_by_quota,
)

SET = Path(__file__).resolve().parents[1]
BUILDERS: list[Callable[[], Story]] = [tmpfs_cache_oom, migration_lock_timeout, pending_node_group_max,
                                       server_cert_wrong_eku, kafka_leader_storm, rocksdb_volume_full,
                                       egress_policy_after_db_move, hpa_blocked_by_quota]


def stories() -> dict[str, Callable[[], Story]]:
    """Scenario id -> the function that builds it (ids checked against the folders)."""
    built = {}
    for build in BUILDERS:
        built[build().id] = build
    return built


def main() -> None:
    for build in BUILDERS:
        build().write(SET)


if __name__ == "__main__":
    main()
