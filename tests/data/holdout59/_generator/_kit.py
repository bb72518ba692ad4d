"""Shared kit for the holdout59 generators: the Cluster that collects Kubernetes objects
(namespaces, nodes, events, workloads) and writes cluster.yaml."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from ._base import Clock, Obj, PodRef, digest, iso, iso_ms, parse, uid
from ._workload import Container, Workload, WorkloadMixin

__all__ = [
    "Clock",
    "Cluster",
    "Container",
    "Obj",
    "PodRef",
    "Workload",
    "digest",
    "iso",
    "iso_ms",
    "parse",
    "uid",
]


class Cluster(WorkloadMixin):
    """Collects Kubernetes objects and writes them as cluster.yaml."""

    def __init__(self, clock: Clock, pod_cidr_base: str = "10.244") -> None:
        self.clock = clock
        self.objects: list[Obj] = []
        self._node_index: dict[str, int] = {}
        self._ip_next: dict[str, int] = {}
        self._cidr = pod_cidr_base

    def add(self, obj: Obj) -> Obj:
        """Add one object as is."""
        self.objects.append(obj)
        return obj

    def namespace(self, name: str, created: datetime, labels: dict[str, str] | None = None) -> None:
        """A Namespace."""
        meta: Obj = {"name": name, "uid": uid("ns", name), "creationTimestamp": iso(created)}
        meta["labels"] = {"kubernetes.io/metadata.name": name, **(labels or {})}
        self.add(
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": meta,
                "spec": {"finalizers": ["kubernetes"]},
                "status": {"phase": "Active"},
            }
        )

    def node(
        self,
        name: str,
        created: datetime,
        *,
        zone: str,
        itype: str = "m6i.2xlarge",
        cpu: str = "8",
        memory: str = "32386052Ki",
        pool: str = "general",
        conditions: dict[str, tuple[str, str, str]] | None = None,
    ) -> None:
        """A Node with its pod CIDR; ``conditions`` overrides type -> (status, reason, message)."""
        idx = len(self._node_index) + 1
        self._node_index[name] = idx
        beat = iso(self.clock.ago(0.4))
        base = {
            "MemoryPressure": (
                "False",
                "KubeletHasSufficientMemory",
                "kubelet has sufficient memory available",
            ),
            "DiskPressure": ("False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            "PIDPressure": (
                "False",
                "KubeletHasSufficientPID",
                "kubelet has sufficient PID available",
            ),
            "Ready": ("True", "KubeletReady", "kubelet is posting ready status"),
        }
        base.update(conditions or {})
        conds = [
            {
                "type": t,
                "status": s,
                "reason": r,
                "message": m,
                "lastHeartbeatTime": beat,
                "lastTransitionTime": iso(created + timedelta(minutes=2)),
            }
            for t, (s, r, m) in base.items()
        ]
        alloc_cpu = f"{int(cpu) * 1000 - 90}m"
        self.add(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": name,
                    "uid": uid("node", name),
                    "creationTimestamp": iso(created),
                    "labels": {
                        "kubernetes.io/hostname": name,
                        "kubernetes.io/os": "linux",
                        "node.kubernetes.io/instance-type": itype,
                        "topology.kubernetes.io/zone": zone,
                        "eks.amazonaws.com/nodegroup": pool,
                    },
                },
                "spec": {
                    "podCIDR": f"{self._cidr}.{idx}.0/24",
                    "providerID": f"aws:///{zone}/i-0{digest('i', name, n=16)}",
                },
                "status": {
                    "capacity": {"cpu": cpu, "memory": memory, "pods": "110"},
                    "allocatable": {"cpu": alloc_cpu, "memory": memory, "pods": "110"},
                    "conditions": conds,
                    "addresses": [
                        {"type": "InternalIP", "address": f"10.40.{idx}.{10 + idx}"},
                        {"type": "Hostname", "address": name},
                    ],
                    "nodeInfo": {
                        "kubeletVersion": "v1.30.6-eks-7f9249a",
                        "containerRuntimeVersion": "containerd://1.7.23",
                        "osImage": "Amazon Linux 2023.6.20241121",
                        "kernelVersion": "6.1.115-126.197.amzn2023.x86_64",
                        "architecture": "amd64",
                        "operatingSystem": "linux",
                    },
                },
            }
        )

    def pod_ip(self, node: str) -> str:
        """The next free pod IP on a node."""
        idx = self._node_index.get(node, 99)
        nxt = self._ip_next.get(node, 7)
        self._ip_next[node] = nxt + 3
        return f"{self._cidr}.{idx}.{nxt}"

    def service_ip(self, ns: str, name: str) -> str:
        """A deterministic ClusterIP."""
        h = int(hashlib.sha1(f"{ns}/{name}".encode()).hexdigest(), 16)
        return f"172.20.{h % 250 + 2}.{(h >> 8) % 250 + 3}"

    def event(
        self,
        ns: str,
        kind: str,
        name: str,
        reason: str,
        message: str,
        *,
        first: datetime,
        last: datetime | None = None,
        count: int = 1,
        type_: str = "Normal",
        component: str = "kubelet",
        host: str = "",
    ) -> None:
        """A core/v1 Event."""
        last = last or first
        src: Obj = {"component": component}
        if host:
            src["host"] = host
        api = {
            "Pod": "v1",
            "Node": "v1",
            "Service": "v1",
            "Endpoints": "v1",
            "Deployment": "apps/v1",
            "ReplicaSet": "apps/v1",
            "StatefulSet": "apps/v1",
            "CronJob": "batch/v1",
            "Job": "batch/v1",
        }.get(kind, "")
        inv: Obj = {"kind": kind, "name": name, "uid": uid(kind, ns, name)}
        if api:
            inv["apiVersion"] = api
        if ns:
            inv["namespace"] = ns
        ev_ns = ns or "default"
        self.add(
            {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {
                    "name": f"{name}.{digest(reason, message, iso(first), n=16)}",
                    "namespace": ev_ns,
                    "creationTimestamp": iso(first),
                },
                "involvedObject": inv,
                "reason": reason,
                "message": message,
                "type": type_,
                "count": count,
                "firstTimestamp": iso(first),
                "lastTimestamp": iso(last),
                "source": src,
                "reportingComponent": component,
            }
        )

    def _finalise(self) -> None:
        """Resolve event uids, add the default namespace, keep status times in the week."""
        uids = {(o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]):
                o["metadata"].get("uid") for o in self.objects if o["kind"] != "Event"}
        events = [o for o in self.objects if o["kind"] == "Event"]
        for ev in events:
            inv = ev["involvedObject"]
            key = (inv["kind"], inv.get("namespace", ""), inv["name"])
            if key not in uids:
                raise KeyError(f"event about a missing object {key}")
            if uids[key]:
                inv["uid"] = uids[key]
            else:
                inv.pop("uid", None)
        have = {o["metadata"]["name"] for o in self.objects if o["kind"] == "Namespace"}
        if any(e["metadata"]["namespace"] == "default" for e in events) and "default" not in have:
            self.namespace("default", self.clock.ago(60 * 24 * 520))
        floor = self.clock.now - timedelta(days=6, hours=20)
        for obj in self.objects:
            if "status" in obj:
                obj["status"] = _clamp(obj["status"], floor)

    def write(self, path: Path) -> None:
        """Write cluster.yaml."""
        self._finalise()
        order = [
            "Namespace",
            "Node",
            "StorageClass",
            "ConfigMap",
            "NetworkPolicy",
            "ResourceQuota",
            "LimitRange",
            "Deployment",
            "StatefulSet",
            "DaemonSet",
            "CronJob",
            "Job",
            "ReplicaSet",
            "Pod",
            "Service",
            "Endpoints",
            "Ingress",
            "PersistentVolumeClaim",
            "HorizontalPodAutoscaler",
            "Event",
        ]
        objs = sorted(self.objects, key=lambda o: order.index(o["kind"]))
        path.write_text(yaml.safe_dump_all(objs, sort_keys=False, width=110))


def _clamp(value: object, floor: datetime) -> Any:
    """Status timestamps older than ``floor`` become ``floor`` (the format's one-week rule)."""
    if isinstance(value, dict):
        return {k: _clamp(v, floor) for k, v in value.items()}
    if isinstance(value, list):
        return [_clamp(v, floor) for v in value]
    if isinstance(value, str) and len(value) == 20 and value[4] == "-" and value.endswith("Z"):
        try:
            t = parse(value)
        except ValueError:
            return value
        return iso(floor) if t < floor else value
    return value
