"""What the sixth held-out set adds: nodes of providers no earlier set used (RKE2 on SUSE
Harvester, Google Distributed Cloud on bare metal, SAP Gardener shoots, Flant Deckhouse,
Open Telekom Cloud CCE, AKS on Azure Local), canary ReplicaSets, CFS counters in bursts,
ingress controllers, Ingresses and NetworkPolicies."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from tests.data.holdout2._generator.kit import NodeKind
from tests.data.holdout3._generator.kit3 import hexof, uuid_of
from tests.data.holdout4._generator.kit4 import Incident, pool
from tests.scenario_tools.common import Story
from tests.scenario_tools.kube import Obj, iso

__all__ = ["Incident", "NodeKind", "hexof", "uuid_of"]


def provider_nodes(s: Story, flavour: str, count: int, kind: NodeKind, *, days: float,
                   first: int = 0) -> list[Obj]:
    """`count` nodes of one of the set's providers."""
    if flavour == "harvester":
        return pool(s, count, kind=kind, days=days, region="", zones=["rack-a", "rack-b"],
                    namer=lambda i: (f"rke2-prod-workers-{hexof(s, 'h', str(i), n=5)}",
                                     f"10.52.20.{111 + i}"),
                    labels=lambda i, n: {"harvesterhci.io/managed": "true",
                                         "rke.cattle.io/machine": uuid_of(s, "m", n),
                                         "node-role.kubernetes.io/worker": "true"},
                    provider=lambda i, n: f"harvester://{uuid_of(s, 'hv', n)}",
                    cidr=lambda i: f"10.42.{i + 3}.0/24", first=first)
    if flavour == "gdc":
        return pool(s, count, kind=kind, days=days, region="", zones=[],
                    namer=lambda i: (f"bm-store-w{i + 1:02d}", f"10.200.0.{51 + i}"),
                    labels=lambda i, n: {"baremetal.cluster.gke.io/node-pool": "np-store",
                                         "cloud.google.com/gke-nodepool": "np-store",
                                         "baremetal.cluster.gke.io/version": "1.30.200-gke.101"},
                    provider=lambda i, n: f"baremetal://{n}", cidr=lambda i:
                    f"192.168.{i * 2}.0/23", first=first)
    if flavour == "gardener":
        return pool(s, count, kind=kind, days=days, region="eu-de-1",
                    zones=["eu-de-1a", "eu-de-1b", "eu-de-1c"],
                    namer=lambda i: (f"shoot--prj-civic--prod-worker-k4m2p-z{i % 3 + 1}-"
                                     f"{hexof(s, 'gd', n=9)}-{hexof(s, 'gd', str(i), n=5)}",
                                     f"10.250.{i % 3}.{17 + i}"),
                    labels=lambda i, n: {"worker.gardener.cloud/pool": "worker-k4m2p",
                                         "worker.garden.sapcloud.io/group": "worker-k4m2p",
                                         "node.kubernetes.io/role": "node",
                                         "node.kubernetes.io/instance-type": kind.instance},
                    provider=lambda i, n: f"openstack:///{uuid_of(s, 'os', n)}",
                    cidr=lambda i: f"100.64.{i}.0/24", first=first)
    if flavour == "deckhouse":
        return pool(s, count, kind=kind, days=days, region="", zones=["nova"],
                    namer=lambda i: (f"main-worker-{hexof(s, 'd', str(i), n=5)}-"
                                     f"{hexof(s, 'dd', str(i), n=5)}", f"10.12.1.{21 + i}"),
                    labels=lambda i, n: {"node.deckhouse.io/group": "worker",
                                         "node.deckhouse.io/type": "CloudEphemeral",
                                         "node-role.kubernetes.io/worker": ""},
                    provider=lambda i, n: f"openstack:///{uuid_of(s, 'dk', n)}",
                    cidr=lambda i: f"10.111.{i}.0/24", first=first)
    if flavour == "otc":
        return pool(s, count, kind=kind, days=days, region="eu-de",
                    zones=["eu-de-01", "eu-de-02", "eu-de-03"],
                    namer=lambda i: (f"192.168.7.{61 + i}", f"192.168.7.{61 + i}"),
                    labels=lambda i, n: {"node.kubernetes.io/baremetal": "false",
                                         "os.name": "EulerOS_2.0_SP10",
                                         "node.kubernetes.io/instance-type": kind.instance,
                                         "cce.cloud.com/cce-nodepool": "pool-general"},
                    provider=lambda i, n: f"{uuid_of(s, 'otc', n)}",
                    cidr=lambda i: None, first=first)
    # aks on azure local
    return pool(s, count, kind=kind, days=days, region="", zones=[],
                namer=lambda i: (f"moc-l{hexof(s, 'a', str(i), n=10)}", f"172.16.40.{41 + i}"),
                labels=lambda i, n: {"kubernetes.azure.com/agentpool": "nodepool1",
                                     "msft.microsoft/nodepool-name": "nodepool1",
                                     "node.kubernetes.io/instance-type": kind.instance},
                provider=lambda i, n: f"moc://{n}", cidr=lambda i: f"10.244.{i}.0/24",
                first=first)


def ingress(s: Story, ns: str, name: str, host: str, service: str, port: int, *,
            klass: str, created: datetime, tls: str | None = None, address: str = "",
            annotations: dict[str, str] | None = None) -> Obj:
    c = s.cluster
    spec: Obj = {"ingressClassName": klass,
                 "rules": [{"host": host, "http": {"paths": [{
                     "path": "/", "pathType": "Prefix", "backend": {"service": {
                         "name": service, "port": {"number": port}}}}]}}]}
    if tls:
        spec["tls"] = [{"hosts": [host], "secretName": tls}]
    status: Obj = {"loadBalancer": {"ingress": [{"ip": address}]} if address else {}}
    return c.add({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                  "metadata": c.meta("Ingress", name, ns, created,
                                     {"app.kubernetes.io/name": service},
                                     annotations=dict(annotations or {}), generation=1),
                  "spec": spec, "status": status})


def managed(obj: Obj, manager: str, when: datetime, fields: Obj) -> None:
    obj["metadata"]["managedFields"] = [{"apiVersion": obj["apiVersion"], "fieldsType":
                                         "FieldsV1", "fieldsV1": fields, "manager": manager,
                                         "operation": "Update", "time": iso(when)}]


def bursts(period: float, duty: float, phase: float = 0.0) -> Callable[[int], float]:
    """1 during a burst (share `duty` of every `period` seconds), 0 otherwise."""
    return lambda t: 1.0 if ((t + phase) % period) / period < duty else 0.0


def counted(times: Sequence[int], rate: Callable[[int], float], start: float) -> list[
        tuple[int, float]]:
    """A whole-number counter from a rate (per second) on the scrape grid."""
    out, value, prev = [], start, None
    for t in times:
        if prev is not None:
            value += max(0.0, rate(t)) * (t - prev)
        out.append((t, float(int(value))))
        prev = t
    return out


def mins(t: datetime, m: float) -> datetime:
    return t + timedelta(minutes=m)
