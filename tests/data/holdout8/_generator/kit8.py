"""What the eighth held-out set adds: nodes of providers and pools no earlier set used (AKS
on Azure Linux with an arm64 Cobalt 100 pool, SysEleven MetaKube, AKS Arc on Azure Local,
Kubespray on OpenNebula) and small shared helpers."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout2._generator.kit import NodeKind
from tests.data.holdout3._generator.kit3 import hexof, uuid_of
from tests.data.holdout4._generator.kit4 import Incident, pool
from tests.scenario_tools.common import Story
from tests.scenario_tools.kube import Obj

__all__ = ["Incident", "NodeKind", "hexof", "uuid_of"]


def provider_nodes(s: Story, flavour: str, count: int, kind: NodeKind, *, days: float,
                   first: int = 0, group: str = "") -> list[Obj]:
    """`count` nodes of one of the set's providers (`group`: the pool's name)."""
    if flavour == "aks":
        vmss = f"{int(hexof(s, 'vmss', group, n=7), 16) % 90_000_000 + 10_000_000}"
        return pool(s, count, kind=kind, days=days, region="swedencentral",
                    zones=["swedencentral-1", "swedencentral-2", "swedencentral-3"],
                    namer=lambda i: (f"aks-{group}-{vmss}-vmss{i:06d}",
                                     f"10.224.{first // 8}.{4 + i}"),
                    labels=lambda i, n: {"agentpool": group, "kubernetes.azure.com/agentpool":
                                         group, "kubernetes.azure.com/os-sku": "AzureLinux",
                                         "kubernetes.azure.com/mode": "user",
                                         "kubernetes.azure.com/cluster":
                                             "MC_rg-mobility-prod_aks-mobility-prod_swedencentral",
                                         "node.kubernetes.io/instance-type": kind.instance},
                    provider=lambda i, n: (
                        "azure:///subscriptions/" + uuid_of(s, "sub") + "/resourceGroups/"
                        "mc_rg-mobility-prod_aks-mobility-prod_swedencentral/providers/"
                        f"Microsoft.Compute/virtualMachineScaleSets/aks-{group}-{vmss}-vmss/"
                        f"virtualMachines/{i}"),
                    cidr=lambda i: None, first=first)
    if flavour == "metakube":
        return pool(s, count, kind=kind, days=days, region="dus2", zones=["dus2"],
                    namer=lambda i: (f"metakube-{group}-{hexof(s, 'md', group, n=5)}-"
                                     f"{hexof(s, 'mk', group, str(i), n=5)}",
                                     f"192.168.1.{30 + 7 * i}"),
                    labels=lambda i, n: {"machine-controller/owned-by": uuid_of(s, "mk"),
                                         "metakube.syseleven.de/node-pool": group,
                                         "node.kubernetes.io/instance-type": kind.instance},
                    provider=lambda i, n: f"openstack:///{uuid_of(s, 'mk', n)}",
                    cidr=lambda i: f"172.25.{i}.0/24", first=first)
    if flavour == "aksarc":
        return pool(s, count, kind=kind, days=days, region="", zones=[],
                    namer=lambda i: (f"moc-l{hexof(s, 'moc', group, str(i), n=10)}",
                                     f"172.19.40.{61 + i}"),
                    labels=lambda i, n: {"msft.microsoft/nodepool-name": group,
                                         "kubernetes.azure.com/managed": "false",
                                         "node.kubernetes.io/instance-type": kind.instance},
                    provider=lambda i, n: f"moc://{n}", cidr=lambda i: f"10.244.{i}.0/24",
                    first=first)
    # kubespray on OpenNebula
    return pool(s, count, kind=kind, days=days, region="", zones=["one-dc2"],
                namer=lambda i: (f"k8s-{group}-{i + 1:02d}.one.lan", f"10.40.7.{71 + i}"),
                labels=lambda i, n: {"node-role.kubernetes.io/worker": "",
                                     "opennebula.org/vm-template": group,
                                     "node.kubernetes.io/instance-type": kind.instance},
                provider=lambda i, n: f"one://{4100 + i}", cidr=lambda i: f"10.233.{i}.0/24",
                first=first)


def mins(t: datetime, m: float) -> datetime:
    return t + timedelta(minutes=m)


def stamp(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")
