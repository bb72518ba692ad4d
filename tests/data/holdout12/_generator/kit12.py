"""What the twelfth held-out set adds: nodes of providers and installers no earlier set used
(Infomaniak managed Kubernetes, Red Hat OpenShift Service on AWS, EKS Hybrid Nodes,
Nebius mk8s, Canonical Kubernetes on bare metal) and small shared helpers."""

from __future__ import annotations

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
    if flavour == "infomaniak":
        cluster = hexof(s, "ik", n=6)
        return pool(s, count, kind=kind, days=days, region="dc4-a", zones=["dc4-a"],
                    namer=lambda i: (f"ik8s-{cluster}-{group}-{hexof(s, 'ikn', str(i), n=5)}",
                                     f"10.8.12.{31 + 4 * i}"),
                    labels=lambda i, n: {"infomaniak.com/nodepool": group,
                                         "node.kubernetes.io/instance-type": kind.instance},
                    provider=lambda i, n: f"openstack:///{uuid_of(s, 'ik', n)}",
                    cidr=lambda i: f"10.233.{64 + i}.0/24", first=first)
    if flavour == "rosa":
        return pool(s, count, kind=kind, days=days, region="eu-central-1",
                    zones=["eu-central-1a", "eu-central-1b", "eu-central-1c"],
                    namer=lambda i: (f"ip-10-0-{(i % 3) * 64 + 17 + i}-{120 + 9 * i}."
                                     "eu-central-1.compute.internal",
                                     f"10.0.{(i % 3) * 64 + 17 + i}.{120 + 9 * i}"),
                    labels=lambda i, n: {"node-role.kubernetes.io/worker": "",
                                         "node.openshift.io/os_id": "rhcos",
                                         "hypershift.openshift.io/nodePool": group,
                                         "node.kubernetes.io/instance-type": kind.instance},
                    provider=lambda i, n: (f"aws:///eu-central-1{'abc'[i % 3]}/i-0"
                                           f"{hexof(s, 'ec2', n, n=16)}"),
                    cidr=lambda i: None, first=first)
    if flavour == "hybrid":
        return pool(s, count, kind=kind, days=days, region="us-east-2", zones=[],
                    namer=lambda i: (f"mi-0{hexof(s, 'ssm', str(i), n=16)}",
                                     f"172.29.14.{51 + i}"),
                    labels=lambda i, n: {"eks.amazonaws.com/compute-type": "hybrid",
                                         "eks.amazonaws.com/hybrid-credential-provider": "ssm",
                                         "site.example/rack": f"r{2 + i // 2}",
                                         "node.kubernetes.io/instance-type": kind.instance},
                    provider=lambda i, n: f"eks-hybrid:///us-east-2/hq-dc/{n}",
                    cidr=lambda i: f"10.86.{i}.0/24", first=first)
    if flavour == "nebius":
        return pool(s, count, kind=kind, days=days, region="eu-north1",
                    zones=["eu-north1-a"],
                    namer=lambda i: (f"computeinstance-e00{hexof(s, 'nb', str(i), n=17)}",
                                     f"10.0.0.{23 + 6 * i}"),
                    labels=lambda i, n: {"nebius.com/node-group-id":
                                         f"mk8snodegroup-e00{hexof(s, 'ng', group, n=17)}",
                                         "nebius.com/node-group-name": group,
                                         "node.kubernetes.io/instance-type": kind.instance},
                    provider=lambda i, n: f"nebius://{n}", cidr=lambda i: None, first=first)
    # Canonical Kubernetes (the k8s snap) on bare metal
    return pool(s, count, kind=kind, days=days, region="", zones=["hall-b"],
                namer=lambda i: (f"ck-{group}-{i + 1:02d}", f"10.120.4.{11 + i}"),
                labels=lambda i, n: {"node-role.kubernetes.io/worker": "",
                                     "k8sd.io/role": "worker",
                                     "node.kubernetes.io/instance-type": kind.instance},
                provider=lambda i, n: f"k8s-snap://{n}", cidr=lambda i: f"10.1.{i}.0/24",
                first=first)


def mins(t: datetime, m: float) -> datetime:
    return t + timedelta(minutes=m)


def secs(t: datetime, x: float) -> datetime:
    return t + timedelta(seconds=x)
