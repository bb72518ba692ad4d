"""What the seventh held-out set adds: nodes of providers no earlier set used (Kubermatic KKP
on vSphere, Spectro Cloud Palette edge, cloudscale.ch, Kamaji tenant workers, Mirantis MKE,
Elastx), a ResourceQuota helper and small shared helpers."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from tests.data.holdout2._generator.kit import NodeKind
from tests.data.holdout3._generator.kit3 import hexof, uuid_of
from tests.data.holdout4._generator.kit4 import Incident, pool
from tests.scenario_tools.common import Story
from tests.scenario_tools.kube import Obj

__all__ = ["Incident", "NodeKind", "hexof", "uuid_of"]


def provider_nodes(s: Story, flavour: str, count: int, kind: NodeKind, *, days: float,
                   first: int = 0) -> list[Obj]:
    """`count` nodes of one of the set's providers."""
    if flavour == "kkp":
        return pool(s, count, kind=kind, days=days, region="dc-zrh", zones=["zrh-a", "zrh-b"],
                    namer=lambda i: (f"kkp-{hexof(s, 'c', n=10)}-md-{hexof(s, 'md', n=5)}-"
                                     f"{hexof(s, 'k', str(i), n=5)}", f"10.64.8.{31 + i}"),
                    labels=lambda i, n: {"machine-controller/owned-by": uuid_of(s, "mc"),
                                         "machine-controller/physical-host-id":
                                             hexof(s, "ph", str(i), n=12),
                                         "x-kubernetes.io/distribution": "ubuntu",
                                         "node.kubernetes.io/instance-type": kind.instance},
                    provider=lambda i, n: f"vsphere://{uuid_of(s, 'vs', n)}",
                    cidr=lambda i: f"172.25.{i}.0/24", first=first)
    if flavour == "palette":
        return pool(s, count, kind=kind, days=days, region="", zones=["store-rack"],
                    namer=lambda i: (f"edge-{hexof(s, 'e', str(i), n=12)}",
                                     f"192.168.150.{11 + i}"),
                    labels=lambda i, n: {"spectrocloud.com/cluster-name": "stores-edge",
                                         "spectrocloud.com/node-pool": "worker-pool",
                                         "node-role.kubernetes.io/worker": "",
                                         "node.kubernetes.io/instance-type": kind.instance},
                    provider=lambda i, n: f"edge://{uuid_of(s, 'edge', n)}",
                    cidr=lambda i: f"100.64.{i * 2}.0/23", first=first)
    if flavour == "cloudscale":
        return pool(s, count, kind=kind, days=days, region="lpg", zones=["lpg1"],
                    namer=lambda i: (f"prod-workers-{hexof(s, 'cs', str(i), n=6)}",
                                     f"10.101.0.{41 + i}"),
                    labels=lambda i, n: {"cloudscale.ch/flavor": kind.instance,
                                         "node.kubernetes.io/instance-type": kind.instance,
                                         "node-role.kubernetes.io/worker": ""},
                    provider=lambda i, n: f"cloudscale://{uuid_of(s, 'cs', n)}",
                    cidr=lambda i: f"10.244.{i}.0/24", first=first)
    if flavour == "kamaji":
        return pool(s, count, kind=kind, days=days, region="", zones=["hall-2"],
                    namer=lambda i: (f"tenant-prod-worker-{i + 1:02d}", f"10.88.4.{61 + i}"),
                    labels=lambda i, n: {"kamaji.clastix.io/tenant": "tenant-prod",
                                         "node-role.kubernetes.io/worker": "",
                                         "node.kubernetes.io/instance-type": kind.instance},
                    provider=lambda i, n: f"metal3://capm3-system/tenant-prod-worker-{i + 1:02d}"
                    f"/{hexof(s, 'bmh', n, n=8)}",
                    cidr=lambda i: f"10.36.{i}.0/24", first=first)
    if flavour == "mke":
        return pool(s, count, kind=kind, days=days, region="", zones=[],
                    namer=lambda i: (f"mke-lnx-wk{i + 1:02d}.ops.internal",
                                     f"10.31.12.{101 + i}"),
                    labels=lambda i, n: {"com.docker.ucp.orchestrator.kubernetes": "true",
                                         "com.docker.ucp.collection": "shared",
                                         "node.kubernetes.io/instance-type": kind.instance},
                    provider=lambda i, n: "", cidr=lambda i: f"192.168.{i * 4}.0/22",
                    first=first)
    # elastx openstack
    return pool(s, count, kind=kind, days=days, region="se-sto", zones=["sto1", "sto2", "sto3"],
                namer=lambda i: (f"prod-k8s-worker-{hexof(s, 'ex', str(i), n=4)}",
                                 f"10.128.{i % 3}.{14 + i}"),
                labels=lambda i, n: {"node.kubernetes.io/instance-type": kind.instance,
                                     "elastx.se/node-group": "worker",
                                     "node-role.kubernetes.io/worker": ""},
                provider=lambda i, n: f"openstack:///{uuid_of(s, 'ex', n)}",
                cidr=lambda i: f"10.200.{i}.0/24", first=first)


def quota(s: Story, ns: str, name: str, hard: dict[str, str], used: dict[str, str], *,
          created: datetime) -> Obj:
    c = s.cluster
    return c.add({"apiVersion": "v1", "kind": "ResourceQuota",
                  "metadata": c.meta("ResourceQuota", name, ns, created,
                                     {"app.kubernetes.io/managed-by": "argocd"}),
                  "spec": {"hard": dict(hard)},
                  "status": {"hard": dict(hard), "used": dict(used)}})


def mins(t: datetime, m: float) -> datetime:
    return t + timedelta(minutes=m)


def spaced(start: datetime, end: datetime, step: float) -> Sequence[datetime]:
    out, t = [], start
    while t < end:
        out.append(t)
        t += timedelta(seconds=step)
    return out
