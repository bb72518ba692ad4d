"""Generator of the holdout43 blind set: `python -m tests.data.holdout43._generator` writes
each story's scenario folder next to this package."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from . import (
    _kit,
    s1_log_agent,
    s2_short_timeout,
    s3_liveness_db,
    s4_staging_image,
    s5_jvm_throttle,
    s6_dns_netpol,
    s7_scoped_quota,
    s8_smtp_421,
)
from ._kit import Story

BUILDERS: list[Callable[[], Story]] = [
    s1_log_agent.build,
    s2_short_timeout.build,
    s3_liveness_db.build,
    s4_staging_image.build,
    s5_jvm_throttle.build,
    s6_dns_netpol.build,
    s7_scoped_quota.build,
    s8_smtp_421.build,
]

SET_DIR = Path(__file__).resolve().parents[1]


def stories() -> dict[str, Callable[[], Story]]:
    """The scenario ids of the set, each with the function that builds it."""
    out: dict[str, Callable[[], Story]] = {}
    for build in BUILDERS:
        out[build().id] = build
    return out


def main() -> None:
    for build in BUILDERS:
        _kit._event_seq[0] = 0
        story = build()
        story.write(SET_DIR)
        print(story.id)
