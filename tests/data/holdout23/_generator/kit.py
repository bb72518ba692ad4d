"""What the twenty-third held-out set adds: small clusters of four kinds (k3s on edge boxes at
a ski resort, OpenShift on premises, GKE Autopilot, AKS on Ubuntu) and the log formats
their workloads print (logfmt, plain Java, JSON)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from tests.data.holdout2._generator.kit import Incident, NodeKind
from tests.data.holdout3._generator.kit3 import hexof, uuid_of
from tests.data.holdout4._generator.kit4 import pool
from tests.scenario_tools.common import Story
from tests.scenario_tools.kube import Obj

__all__ = ["Incident", "NodeKind", "hexof", "uuid_of"]


def k3s_nodes(s: Story, names: Sequence[str], *, kind: NodeKind, days: float, site: str,
              first: int = 0, server: int = 0) -> list[Obj]:
    """k3s on small boxes: flannel 10.42.<n>.0/24, providerID k3s://<name>."""
    return pool(s, len(names), kind=kind, days=days, region="", zones=[],
                namer=lambda i: (names[i - first], f"192.168.77.{11 + i}"),
                labels=lambda i, n: {
                    **({"node-role.kubernetes.io/control-plane": "true",
                        "node-role.kubernetes.io/etcd": "true",
                        "node-role.kubernetes.io/master": "true"}
                       if i == server else {}),
                    "node.kubernetes.io/instance-type": "k3s",
                    "hochalm.at/site": site,
                    "beta.kubernetes.io/instance-type": "k3s"},
                provider=lambda i, n: f"k3s://{n}", cidr=lambda i: f"10.42.{i}.0/24",
                first=first)


def openshift_nodes(s: Story, count: int, *, kind: NodeKind, days: float, rack: str,
                    first: int = 0) -> list[Obj]:
    """OpenShift 4.18 on premises (VMware UPI): no provider id, OVN subnets of /23."""
    return pool(s, count, kind=kind, days=days, region="", zones=[],
                namer=lambda i: (f"ocp-wrk-{rack}{i + 1:02d}.ocp4.blutspende.lan",
                                 f"10.61.20.{31 + i}"),
                labels=lambda i, n: {"node-role.kubernetes.io/worker": "",
                                     "node.openshift.io/os_id": "rhcos",
                                     "beta.kubernetes.io/arch": "amd64",
                                     "beta.kubernetes.io/os": "linux",
                                     "topology.blutspende.lan/rack": rack},
                provider=lambda i, n: "", cidr=lambda i: f"10.{128 + i // 128}."
                f"{(i % 128) * 2}.0/23", first=first)


def autopilot_nodes(s: Story, count: int, *, kind: NodeKind, days: float, project: str,
                    cluster: str, region: str, klass: str = "general-purpose") -> list[Obj]:
    """GKE Autopilot nodes of one auto-provisioned pool."""
    group = hexof(s, "nap", klass, n=8)
    return pool(s, count, kind=kind, days=days, region=region,
                zones=[f"{region}-a", f"{region}-b", f"{region}-c"],
                namer=lambda i: (f"gk3-{cluster}-nap-{hexof(s, 'p', n=7)}-{group}-"
                                 f"{hexof(s, 'n', str(i), n=4)}", f"10.20.0.{40 + 3 * i}"),
                labels=lambda i, n: {"cloud.google.com/gke-nodepool":
                                     f"nap-{hexof(s, 'p', n=7)}",
                                     "cloud.google.com/compute-class": klass,
                                     "cloud.google.com/gke-provisioning": "standard",
                                     "cloud.google.com/gke-os-distribution": "cos",
                                     "cloud.google.com/machine-family":
                                         kind.instance.split("-")[0],
                                     "node.kubernetes.io/instance-type": kind.instance},
                provider=lambda i, n: f"gce://{project}/{region}-{'abc'[i % 3]}/{n}",
                cidr=lambda i: f"10.24.{4 * i}.0/24")


def aks_nodes(s: Story, count: int, *, kind: NodeKind, days: float, group: str,
              resource_group: str, region: str, first: int = 0) -> list[Obj]:
    """AKS on Ubuntu 22.04 with Azure CNI overlay (pods from 10.244.<n>.0/24)."""
    vmss = f"{int(hexof(s, 'vmss', group, n=7), 16) % 90_000_000 + 10_000_000}"
    return pool(s, count, kind=kind, days=days, region=region,
                zones=[f"{region}-1", f"{region}-2", f"{region}-3"],
                namer=lambda i: (f"aks-{group}-{vmss}-vmss{i:06x}", f"10.224.0.{5 + i}"),
                labels=lambda i, n: {"agentpool": group,
                                     "kubernetes.azure.com/agentpool": group,
                                     "kubernetes.azure.com/os-sku": "Ubuntu",
                                     "kubernetes.azure.com/mode": "user",
                                     "kubernetes.azure.com/cluster": resource_group,
                                     "node.kubernetes.io/instance-type": kind.instance},
                provider=lambda i, n: (f"azure:///subscriptions/{uuid_of(s, 'sub')}/"
                                       f"resourceGroups/{resource_group.lower()}/providers/"
                                       "Microsoft.Compute/virtualMachineScaleSets/"
                                       f"aks-{group}-{vmss}-vmss/virtualMachines/{i}"),
                cidr=lambda i: f"10.244.{i}.0/24", first=first)


def logfmt(level: str, msg: str, **kv: Any) -> str:
    """One logfmt line as Go services print it (the `message` of the shipped document)."""
    parts = [f"level={level}", f"msg={json.dumps(msg)}"]
    for key, value in kv.items():
        text = str(value)
        parts.append(f"{key}={json.dumps(text) if ' ' in text or not text else text}")
    return " ".join(parts)


def mins(t: datetime, m: float) -> datetime:
    return t + timedelta(minutes=m)
