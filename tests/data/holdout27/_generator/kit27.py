"""Small helpers the twenty-seventh held-out set shares: quota and LimitRange objects, a
ReplicaSet condition set after the controllers' derivation, app counters of deleted pods."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout2._generator.kit import Incident, drift, working_set
from tests.scenario_tools.common import MIB
from tests.scenario_tools.kube import Obj, iso

__all__ = ["Incident", "ghost_memory", "limit_range", "mins", "quota", "rs_failure"]


def quota(s: Incident, ns: str, name: str, hard: dict[str, str], used: dict[str, str], *,
          created: datetime, manager: str = "argocd") -> Obj:
    c = s.cluster
    return c.add({"apiVersion": "v1", "kind": "ResourceQuota",
                  "metadata": c.meta("ResourceQuota", name, ns, created,
                                     {"app.kubernetes.io/managed-by": manager}),
                  "spec": {"hard": dict(hard)},
                  "status": {"hard": dict(hard), "used": dict(used)}})


def limit_range(s: Incident, ns: str, name: str, limits: list[Obj], *,
                created: datetime) -> Obj:
    c = s.cluster
    return c.add({"apiVersion": "v1", "kind": "LimitRange",
                  "metadata": c.meta("LimitRange", name, ns, created,
                                     {"app.kubernetes.io/managed-by": "argocd"}),
                  "spec": {"limits": limits}})


def rs_failure(s: Incident, rs: Obj, message: str, since: datetime) -> None:
    """The ReplicaFailure condition a ReplicaSet shows when it cannot create pods."""
    def fix(objects: list[Obj]) -> None:
        for obj in objects:
            if obj is rs:
                obj["status"]["conditions"] = [{
                    "type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
                    "message": message, "lastTransitionTime": iso(since)}]
    s.fixes.append(fix)


def mins(t: datetime, m: float) -> datetime:
    return t + timedelta(minutes=m)


def ghost_memory(s: Incident, pod: Obj, container: str, mib: float) -> None:
    """The working set of a pod deleted before `now` (metrics only)."""
    working_set(s, pod, container, drift(s, mib * MIB * s.rng.uniform(0.9, 1.1)))
