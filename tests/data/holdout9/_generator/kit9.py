"""What the ninth held-out set adds: nodes of providers and installers no earlier set used
(Harvester HCI with RKE2 guest clusters, EKS Anywhere on vSphere, OpenStack Magnum, MicroK8s
on bare metal) and small shared helpers: a ResourceQuota with its usage, the
kube-state-metrics series of an autoscaler, kubelet volume statistics."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from tests.data.holdout._generator.base import gauge
from tests.data.holdout2._generator.kit import NodeKind
from tests.data.holdout3._generator.kit3 import hexof, uuid_of
from tests.data.holdout4._generator.kit4 import Incident, pool
from tests.scenario_tools.common import Story
from tests.scenario_tools.kube import Obj

__all__ = ["Incident", "NodeKind", "hexof", "uuid_of"]


def provider_nodes(s: Story, flavour: str, count: int, kind: NodeKind, *, days: float,
                   group: str, first: int = 0) -> list[Obj]:
    """`count` nodes of one of the set's providers (`group`: the pool's name)."""
    if flavour == "harvester":
        return pool(s, count, kind=kind, days=days, region="", zones=["rack-a", "rack-b"],
                    namer=lambda i: (f"{group}-pool1-{hexof(s, 'hv', group, str(i), n=5)}-"
                                     f"{hexof(s, 'hw', group, str(i), n=5)}",
                                     f"10.52.8.{40 + i}"),
                    labels=lambda i, n: {"node-role.kubernetes.io/worker": "true",
                                         "rke.cattle.io/machine": uuid_of(s, "m", n),
                                         "harvesterhci.io/managed": "true",
                                         "node.kubernetes.io/instance-type": kind.instance},
                    provider=lambda i, n: f"harvester://{uuid_of(s, 'vm', n)}",
                    cidr=lambda i: f"10.42.{i}.0/24", first=first)
    if flavour == "eksa":
        return pool(s, count, kind=kind, days=days, region="", zones=["dc1-cl02"],
                    namer=lambda i: (f"{group}-md-0-{hexof(s, 'ms', group, n=10)}-"
                                     f"{hexof(s, 'mn', group, str(i), n=5)}",
                                     f"172.30.12.{61 + i}"),
                    labels=lambda i, n: {"cluster.x-k8s.io/cluster-name": group,
                                         "cluster.x-k8s.io/deployment-name": f"{group}-md-0",
                                         "node.kubernetes.io/instance-type": kind.instance},
                    provider=lambda i, n: "vsphere://4223" + uuid_of(s, "vs", n)[4:],
                    cidr=lambda i: f"192.168.{i}.0/24", first=first)
    if flavour == "magnum":
        return pool(s, count, kind=kind, days=days, region="RegionOne",
                    zones=["nova"], namer=lambda i: (
                        f"{group}-{hexof(s, 'mg', group, n=12)}-node-{i}", f"10.0.0.{111 + i}"),
                    labels=lambda i, n: {"magnum.openstack.org/role": "worker",
                                         "magnum.openstack.org/nodegroup": "default-worker",
                                         "node.kubernetes.io/instance-type": kind.instance},
                    provider=lambda i, n: f"openstack:///{uuid_of(s, 'nova', n)}",
                    cidr=lambda i: f"10.100.{i}.0/24", first=first)
    # MicroK8s on bare metal
    return pool(s, count, kind=kind, days=days, region="", zones=[],
                namer=lambda i: (f"{group}{i + 1:02d}", f"192.168.40.{21 + i}"),
                labels=lambda i, n: {"microk8s.io/cluster": "true",
                                     "node.kubernetes.io/microk8s-worker": "microk8s-worker",
                                     "node.kubernetes.io/instance-type": kind.instance},
                provider=lambda i, n: "", cidr=lambda i: f"10.1.{40 + i}.0/24", first=first)


def quota(s: Story, ns: str, name: str, hard: dict[str, str], used: dict[str, str], *,
          created: datetime) -> Obj:
    c = s.cluster
    return c.add({"apiVersion": "v1", "kind": "ResourceQuota",
                  "metadata": c.meta("ResourceQuota", name, ns, created,
                                     {"app.kubernetes.io/managed-by": "platform-tenancy"}),
                  "spec": {"hard": dict(hard)},
                  "status": {"hard": dict(hard), "used": dict(used)}})


def hpa_series(s: Story, ns: str, name: str, *, maximum: float, minimum: float,
               current: Callable[[int], float], desired: Callable[[int], float],
               limited: Callable[[int], bool]) -> None:
    """kube-state-metrics' view of an autoscaler."""
    hl = {"namespace": ns, "horizontalpodautoscaler": name}
    gauge(s, "kube_horizontalpodautoscaler_spec_max_replicas", hl, lambda t: maximum,
          "Upper limit for the number of pods that can be set by the autoscaler; cannot be "
          "smaller than MinReplicas.")
    gauge(s, "kube_horizontalpodautoscaler_spec_min_replicas", hl, lambda t: minimum,
          "Lower limit for the number of pods that can be set by the autoscaler, default 1.")
    gauge(s, "kube_horizontalpodautoscaler_status_current_replicas", hl, current,
          "Current number of replicas of pods managed by this autoscaler.")
    gauge(s, "kube_horizontalpodautoscaler_status_desired_replicas", hl, desired,
          "Desired number of replicas of pods managed by this autoscaler.")
    for status in ("true", "false"):
        gauge(s, "kube_horizontalpodautoscaler_status_condition",
              {**hl, "condition": "ScalingLimited", "status": status},
              lambda t, st=status: 1.0 if limited(t) == (st == "true") else 0.0,
              "The condition of this autoscaler.")


def volume_stats(s: Story, ns: str, claim: str, capacity: float,
                 used: Callable[[int], float], *, inodes: float = 13_107_200,
                 inodes_used: Callable[[int], float] | None = None) -> None:
    """The kubelet's volume statistics of one claim (bytes)."""
    labels = {"namespace": ns, "persistentvolumeclaim": claim}
    gauge(s, "kubelet_volume_stats_capacity_bytes", labels, lambda t: capacity,
          "Capacity in bytes of the volume")
    gauge(s, "kubelet_volume_stats_used_bytes", labels, lambda t: min(capacity, used(t)),
          "Number of used bytes in the volume")
    gauge(s, "kubelet_volume_stats_available_bytes", labels,
          lambda t: max(0.0, capacity - used(t)), "Number of available bytes in the volume")
    gauge(s, "kubelet_volume_stats_inodes", labels, lambda t: inodes,
          "Maximum number of inodes in the volume")
    iu = inodes_used or (lambda t: inodes * 0.04)
    gauge(s, "kubelet_volume_stats_inodes_used", labels, iu,
          "Number of used inodes in the volume")


def mins(t: datetime, m: float) -> datetime:
    return t + timedelta(minutes=m)
