"""What the tenth held-out set shares: nodes of pools no earlier set used (GKE on Arm-less
n4 pools, Linode LKE, Proxmox with kubeadm, EKS Auto Mode) and small helpers."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from tests.data.holdout2._generator.kit import Incident, NodeKind
from tests.data.holdout3._generator.kit3 import hexof, uuid_of
from tests.data.holdout4._generator.kit4 import pool
from tests.scenario_tools.common import Story
from tests.scenario_tools.kube import Obj

__all__ = ["Incident", "NodeKind", "hexof", "uuid_of"]


def provider_nodes(s: Story, flavour: str, count: int, kind: NodeKind, *, days: float,
                   group: str = "", first: int = 0) -> list[Obj]:
    """`count` nodes of one of the set's providers (`group`: the pool's name)."""
    if flavour == "gke":
        mig = hexof(s, "mig", group, n=4)
        return pool(s, count, kind=kind, days=days, region="europe-west3",
                    zones=["europe-west3-a", "europe-west3-b", "europe-west3-c"],
                    namer=lambda i: (f"gke-prints-prod-{group}-{mig}{hexof(s, 'g', str(i), n=4)}"
                                     f"-{hexof(s, 'gn', group, str(i), n=4)}",
                                     f"10.156.0.{11 + 3 * i}"),
                    labels=lambda i, n: {"cloud.google.com/gke-nodepool": group,
                                         "cloud.google.com/gke-os-distribution": "cos",
                                         "cloud.google.com/machine-family": "n4",
                                         "node.kubernetes.io/instance-type": kind.instance},
                    provider=lambda i, n: (f"gce://prints-prod-3191/europe-west3-"
                                           f"{'abc'[i % 3]}/{n}"),
                    cidr=lambda i: f"10.40.{i}.0/24", first=first)
    if flavour == "lke":
        return pool(s, count, kind=kind, days=days, region="de-fra-2", zones=[],
                    namer=lambda i: (f"lke{int(hexof(s, 'lke', n=6), 16) % 900000 + 100000}-"
                                     f"{int(hexof(s, 'lkp', group, n=6), 16) % 900000 + 100000}-"
                                     f"{hexof(s, 'lkn', str(i), n=8)}",
                                     f"192.168.139.{40 + 7 * i}"),
                    labels=lambda i, n: {"lke.linode.com/pool-id": str(
                        int(hexof(s, 'lkp', group, n=6), 16) % 900000 + 100000),
                        "node.kubernetes.io/instance-type": kind.instance},
                    provider=lambda i, n: f"linode://{61000000 + 4417 * i}",
                    cidr=lambda i: f"10.2.{i}.0/24", first=first)
    if flavour == "proxmox":
        return pool(s, count, kind=kind, days=days, region="", zones=["pve-a", "pve-b"],
                    namer=lambda i: (f"kw{i + 1:02d}.{group}.lan", f"10.77.3.{21 + i}"),
                    labels=lambda i, n: {"node-role.kubernetes.io/worker": "",
                                         "node.kubernetes.io/instance-type": kind.instance},
                    provider=lambda i, n: "", cidr=lambda i: f"10.244.{i}.0/24", first=first)
    # EKS Auto Mode (Bottlerocket under the hood, Karpenter node pools)
    return pool(s, count, kind=kind, days=days, region="eu-north-1",
                zones=["eu-north-1a", "eu-north-1b", "eu-north-1c"],
                namer=lambda i: (f"i-0{hexof(s, 'ec2', group, str(i), n=16)}",
                                 f"10.31.{(i % 3) * 32 + 5}.{100 + 11 * i}"),
                labels=lambda i, n: {"eks.amazonaws.com/compute-type": "auto",
                                     "karpenter.sh/nodepool": group,
                                     "karpenter.sh/capacity-type": "on-demand",
                                     "node.kubernetes.io/instance-type": kind.instance},
                provider=lambda i, n: f"aws:///eu-north-1{'abc'[i % 3]}/{n}",
                cidr=lambda i: None, first=first)


def mins(t: datetime, m: float) -> datetime:
    return t + timedelta(minutes=m)


def secs(t: datetime, x: float) -> datetime:
    return t + timedelta(seconds=x)


def names(objs: Sequence[Obj]) -> list[str]:
    return [o["metadata"]["name"] for o in objs]
