"""holdout41: eight incidents written blind to the analyzer, one per shape of the brief.
`python -m tests.data.holdout41._generator` rewrites every scenario folder beside this one."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from . import (
    s1_vpa,
    s2_gc,
    s3_kubeproxy,
    s4_limitrange,
    s5_wraparound,
    s6_cert,
    s7_sms,
    s8_multiattach,
)
from .kit import Scenario

_BUILDERS: list[Callable[[], Scenario]] = [
    s1_vpa.build,
    s2_gc.build,
    s3_kubeproxy.build,
    s4_limitrange.build,
    s5_wraparound.build,
    s6_cert.build,
    s7_sms.build,
    s8_multiattach.build,
]


def stories() -> dict[str, Callable[[], Scenario]]:
    """Each scenario id and the function that builds it."""
    return {b().id: b for b in _BUILDERS}


def write_all(root: Path | None = None) -> list[str]:
    root = root or Path(__file__).resolve().parents[1]
    written = []
    for build in _BUILDERS:
        sc = build()
        sc.write(root)
        written.append(sc.id)
    return written
