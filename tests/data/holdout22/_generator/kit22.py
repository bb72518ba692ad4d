"""Small helpers of the twenty-second held-out set; everything else comes from the earlier
sets' kits."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from tests.data.holdout._generator.base import gauge, parse
from tests.data.holdout2._generator.kit import Incident
from tests.data.holdout3._generator.kit3 import ghosts, rolling_events, steady
from tests.scenario_tools.common import Story
from tests.scenario_tools.kube import Ctr, Obj, Workload

__all__ = ["Incident", "mins", "rolled", "step_at"]


def mins(t: datetime, m: float) -> datetime:
    return t + timedelta(minutes=m)


def step_at(when: datetime, before: float, after: float) -> Callable[[int], float]:
    edge = when.timestamp()
    return lambda t: after if t >= edge else before


def rolled(s: Story, ns: str, name: str, make: Callable[[str], Ctr], *, old: str, new: str,
           at: datetime, revision: int, replicas: int, nodes: Sequence[Obj],
           old_since: datetime, size: int = 61_204_377, **kw: Any
           ) -> tuple[Workload, list[Obj], list[dict[str, Any]]]:
    """A healthy Deployment rolled from tag `old` to `new` at `at`: the new pods, the old
    ReplicaSet's deleted pods (metrics and logs only) and the rolling update's events."""
    work, pods = steady(s, ns, name, [make(new)], nodes=nodes, replicas=replicas,
                        revision=revision, rollout=at,
                        old=(revision - 1, old_since, [make(old)]), **kw)
    old_rs, new_rs = work.revisions[0], work.revisions[-1]
    born = [old_since + timedelta(seconds=15 + 21 * i) for i in range(replicas)]
    gone = [parse(p["metadata"]["creationTimestamp"]) + timedelta(seconds=24) for p in pods]
    dead = ghosts(s, old_rs, nodes, born, gone)
    if at > s.now - timedelta(minutes=58):  # older events the API server has dropped
        rolling_events(s, work, old_rs, new_rs, pods, dead, image=make(new).image, size=size,
                       pull=lambda i: 3.1 + 0.4 * i)
    return work, pods, dead


def last_reason(s: Story, pod: Obj, container: str, reason: str, since: datetime) -> None:
    """kube-state-metrics' last terminated reason of a container, from `since` on."""
    gauge(s, "kube_pod_container_status_last_terminated_reason",
          {"namespace": pod["metadata"]["namespace"], "pod": pod["metadata"]["name"],
           "container": container, "reason": reason}, lambda t: 1.0,
          "Describes the last reason the container was in terminated state.",
          times=[t for t in s.times if t >= since.timestamp()])
