"""What the fourth held-out set adds: nodes of providers no earlier set used (OVHcloud MKS,
Tencent TKE, Huawei CCE, IONOS, STACKIT SKE, Talos on bare metal, UpCloud UKS, k0s on
Equinix Metal, Charmed Kubernetes on MAAS, Yandex Managed Kubernetes), HPAs and small
helpers shared by the stories."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from tests.data.holdout2._generator.kit import Incident, NodeKind, node
from tests.data.holdout3._generator.kit3 import hexof, uuid_of
from tests.scenario_tools.common import Story
from tests.scenario_tools.kube import Obj, Workload, iso

__all__ = ["Incident", "hexof", "uuid_of"]

Namer = Callable[[int], tuple[str, str]]  # index -> (node name, internal IP)


def pool(s: Story, count: int, *, kind: NodeKind, namer: Namer, days: float,
         region: str, zones: Sequence[str], labels: Callable[[int, str], dict[str, str]],
         provider: Callable[[int, str], str], cidr: Callable[[int], str | None],
         taints: Sequence[Obj] = (), hostname: Callable[[int, str], str] | None = None,
         first: int = 0) -> list[Obj]:
    """`count` nodes of one pool of any provider."""
    out = []
    for j in range(count):
        i = first + j
        name, ip = namer(i)
        zone = zones[i % len(zones)] if zones else ""
        out.append(node(s, name, ip=ip, kind=kind,
                        created=s.ago(days=days - j * 0.07, minutes=6 * j),
                        region=region, zone=zone, labels=labels(i, name),
                        provider_id=provider(i, name), pod_cidr=cidr(i), taints=taints,
                        hostname=hostname(i, name) if hostname else None))
    return out


def hpa(s: Story, work: Workload, *, min_: int, max_: int, metrics: list[Obj],
        current: list[Obj], replicas: int, desired: int, created: datetime,
        conditions: list[tuple[str, str, str, str, datetime]],
        last_scale: datetime | None = None) -> Obj:
    """An autoscaling/v2 HorizontalPodAutoscaler with its status."""
    c = s.cluster
    meta = c.meta("HorizontalPodAutoscaler", work.name, work.namespace, created,
                  dict(work.obj["metadata"].get("labels") or {}))
    status: Obj = {"currentMetrics": current, "currentReplicas": replicas,
                   "desiredReplicas": desired,
                   "conditions": [{"type": t, "status": st, "reason": r, "message": m,
                                   "lastTransitionTime": iso(w)}
                                  for t, st, r, m, w in conditions]}
    if last_scale:
        status["lastScaleTime"] = iso(last_scale)
    return c.add({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                  "metadata": meta,
                  "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": work.kind,
                                              "name": work.name},
                           "minReplicas": min_, "maxReplicas": max_, "metrics": metrics},
                  "status": status})


def between(t: int, start: datetime, end: datetime | None = None) -> bool:
    return t >= start.timestamp() and (end is None or t < end.timestamp())


def ramp(t: int, start: datetime, minutes: float) -> float:
    """0 before `start`, rising linearly to 1 over `minutes`."""
    return min(1.0, max(0.0, (t - start.timestamp()) / (minutes * 60)))


def stamp(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def log_lines(s: Story, pod: Obj, container: str, entries: Sequence[tuple[datetime, str]],
              *, previous: bool = False) -> None:
    s.pod_log(pod, container, [f"{stamp(w)} {text}" for w, text in entries],
              previous=previous)


def every(start: datetime, end: datetime, seconds: float, jitter: Callable[[], float]
          ) -> list[datetime]:
    out, t = [], start
    while t < end:
        out.append(t)
        t += timedelta(seconds=seconds * jitter())
    return out


def configmap_with(s: Story, ns: str, name: str, data: dict[str, str], *, created: datetime,
                   edited: datetime, manager: str = "helm", labels: dict[str, str] | None =
                   None) -> Obj:
    c = s.cluster
    meta = c.meta("ConfigMap", name, ns, created, labels)
    meta["managedFields"] = [{"apiVersion": "v1", "fieldsType": "FieldsV1",
                              "fieldsV1": {"f:data": {".": {}, **{f"f:{k}": {} for k in data}}},
                              "manager": manager, "operation": "Update", "time": iso(edited)}]
    return c.add({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta,
                  "data": dict(data)})


def any_(x: Any) -> Any:
    return x
