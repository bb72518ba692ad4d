"""Small helpers the stories of the twenty-fourth held-out set share: a neighbour rolled out
within the hour (old pods deleted, controller events), ordinary request metrics."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from tests.data.holdout2._generator.kit import (
    Incident,
    cpu_seconds,
    deploy,
    drift,
    requests,
    working_set,
)
from tests.data.holdout3._generator.kit3 import ghosts, log_pod, quiet, rolling_events
from tests.scenario_tools.common import MIB, Story
from tests.scenario_tools.kube import Ctr, Obj, Workload

__all__ = ["Incident", "rolled_neighbour"]


def rolled_neighbour(s: Story, ns: str, name: str, ctr: Callable[[str], Ctr], *,
                     old: str, new: str, revision: int, at: datetime, replicas: int,
                     nodes: Sequence[Obj], mib: float, cpu: float, rps: Callable[[int], float],
                     entries: Sequence[tuple[str, str, dict[str, Any]]], n_logs: int,
                     size: int, service: int | None = 80,
                     codes: dict[str, float] | None = None,
                     ) -> tuple[Workload, list[Obj], list[dict[str, Any]]]:
    """A healthy Deployment rolled from tag `old` to `new` at `at` (within the window): the
    new pods run since then, the old ones survive in metrics and logs only. `rps` is the
    whole Deployment's request rate at a time."""
    old_born = at - timedelta(days=s.rng.uniform(4, 9))
    work, pods = deploy(s, ns, name, [ctr(new)], replicas=replicas, nodes=nodes,
                        revision=revision, rollout=at, service=service,
                        born=lambda i: at + timedelta(seconds=3 + 41 * i),
                        template_labels={"app.kubernetes.io/version": new},
                        old_template_labels={"app.kubernetes.io/version": old},
                        old=(revision - 1, old_born, [ctr(old)]))
    old_rs, new_rs = work.revisions[0], work.revisions[1]
    gone = [at + timedelta(seconds=3 + 41 * i + 36) for i in range(replicas)]
    dead = ghosts(s, old_rs, nodes, [old_born + timedelta(seconds=14 * i)
                                     for i in range(replicas)], gone)
    if at >= s.now - timedelta(minutes=58):  # older events the API server has dropped
        rolling_events(s, work, old_rs, new_rs, pods, dead, image=ctr(new).image, size=size,
                       pull=lambda i: 2.1 + 0.4 * i)
    share = {k: (lambda t, v=v: v) for k, v in (codes or {"200": 0.998, "500": 0.002}).items()}
    for pod in [*pods, *dead]:
        requests(s, pod, name, rps=lambda t: rps(t) / replicas, codes=share)
        cpu_seconds(s, pod, name, lambda t: cpu * s.rng.uniform(0.85, 1.15))
        log_pod(s, pod, name, name, entries, n_logs // replicas)
    quiet(s, pods, name, mib)
    for pod in dead:
        working_set(s, pod, name, drift(s, mib * MIB))
    return work, pods, dead
