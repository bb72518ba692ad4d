"""Kubernetes objects as `kubectl get -o yaml` prints them, built from one clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

SET_DIR = Path(__file__).resolve().parent.parent
Obj = dict[str, Any]


def parse(ts: str) -> datetime:
    return datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def iso(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_ms(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def ago(now: datetime, **kw: float) -> datetime:
    return now - timedelta(**kw)


def meta(
    name: str, ns: str | None, created: datetime, labels: dict[str, str] | None = None, **extra: Any
) -> Obj:
    m: Obj = {"name": name, "creationTimestamp": iso(created)}
    if ns is not None:
        m["namespace"] = ns
    if labels:
        m["labels"] = dict(labels)
    m.update(extra)
    return m


def namespace(name: str, created: datetime) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": meta(name, None, created),
        "status": {"phase": "Active"},
    }


def node(
    name: str,
    created: datetime,
    now: datetime,
    cpu: str = "8",
    mem: str = "32Gi",
    alloc_mem: str = "30Gi",
    pool: str = "general",
) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": meta(
            name,
            None,
            created,
            {
                "kubernetes.io/hostname": name,
                "node.kubernetes.io/instance-type": "m6i.2xlarge",
                "pool": pool,
            },
        ),
        "spec": {},
        "status": {
            "capacity": {"cpu": cpu, "memory": mem, "pods": "110"},
            "allocatable": {"cpu": str(int(cpu) - 0) + "", "memory": alloc_mem, "pods": "110"},
            "conditions": [
                {
                    "type": t,
                    "status": "False",
                    "reason": r,
                    "lastHeartbeatTime": iso(ago(now, seconds=40)),
                    "lastTransitionTime": iso(created),
                }
                for t, r in (
                    ("MemoryPressure", "KubeletHasSufficientMemory"),
                    ("DiskPressure", "KubeletHasNoDiskPressure"),
                    ("PIDPressure", "KubeletHasSufficientPID"),
                )
            ]
            + [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "KubeletReady",
                    "lastHeartbeatTime": iso(ago(now, seconds=40)),
                    "lastTransitionTime": iso(created),
                }
            ],
            "nodeInfo": {
                "kubeletVersion": "v1.29.6",
                "containerRuntimeVersion": "containerd://1.7.13",
            },
        },
    }


def container(
    name: str,
    image: str,
    *,
    mem_req: str = "256Mi",
    mem_lim: str = "512Mi",
    cpu_req: str = "100m",
    cpu_lim: str | None = "1",
    port: int | None = 8080,
    env: list[Obj] | None = None,
    command: list[str] | None = None,
    args: list[str] | None = None,
    probe_path: str | None = "/healthz",
    security: Obj | None = None,
) -> Obj:
    c: Obj = {"name": name, "image": image}
    if command:
        c["command"] = command
    if args:
        c["args"] = args
    if port:
        c["ports"] = [{"containerPort": port, "name": "http", "protocol": "TCP"}]
    if env:
        c["env"] = env
    limits: Obj = {"memory": mem_lim}
    if cpu_lim:
        limits["cpu"] = cpu_lim
    c["resources"] = {"requests": {"cpu": cpu_req, "memory": mem_req}, "limits": limits}
    if probe_path and port:
        c["readinessProbe"] = {
            "httpGet": {"path": probe_path, "port": port},
            "periodSeconds": 10,
            "failureThreshold": 3,
        }
    if security:
        c["securityContext"] = security
    return c


def deployment(
    name: str,
    ns: str,
    created: datetime,
    containers: list[Obj],
    *,
    replicas: int,
    revision: int,
    ready: int,
    updated: int,
    available: int,
    unavailable: int = 0,
    progressing: Obj | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
) -> Obj:
    lab = {"app": name, **(labels or {})}
    ann = {"deployment.kubernetes.io/revision": str(revision), **(annotations or {})}
    conds = [
        {
            "type": "Available",
            "status": "True" if available >= max(1, replicas - 1) else "False",
            "reason": "MinimumReplicasAvailable",
            "lastUpdateTime": iso(created),
            "lastTransitionTime": iso(created),
            "message": "Deployment has minimum availability.",
        }
    ]
    if progressing:
        conds.append(progressing)
    status: Obj = {
        "observedGeneration": revision + 1,
        "replicas": max(replicas, updated + ready),
        "updatedReplicas": updated,
        "readyReplicas": ready,
        "availableReplicas": available,
        "conditions": conds,
    }
    if unavailable:
        status["unavailableReplicas"] = unavailable
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta(name, ns, created, lab, annotations=ann, generation=revision + 1),
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
            },
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": containers}},
        },
        "status": status,
    }


def replicaset(
    dep: str,
    ns: str,
    hash_: str,
    created: datetime,
    containers: list[Obj],
    revision: int,
    replicas: int,
    ready: int,
) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": meta(
            f"{dep}-{hash_}",
            ns,
            created,
            {"app": dep, "pod-template-hash": hash_},
            annotations={"deployment.kubernetes.io/revision": str(revision)},
            ownerReferences=[
                {"apiVersion": "apps/v1", "kind": "Deployment", "name": dep, "controller": True}
            ],
        ),
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": dep, "pod-template-hash": hash_}},
            "template": {
                "metadata": {"labels": {"app": dep, "pod-template-hash": hash_}},
                "spec": {"containers": containers},
            },
        },
        "status": {
            "replicas": replicas,
            "readyReplicas": ready,
            "availableReplicas": ready,
            "fullyLabeledReplicas": replicas,
        },
    }


def running_state(started: datetime) -> Obj:
    return {"running": {"startedAt": iso(started)}}


def pod(
    name: str,
    ns: str,
    created: datetime,
    containers: list[Obj],
    *,
    owner: tuple[str, str] | None,
    node_name: str | None,
    phase: str = "Running",
    ready: bool = True,
    restarts: int = 0,
    state: Obj | None = None,
    last_state: Obj | None = None,
    labels: dict[str, str] | None = None,
    conditions: list[Obj] | None = None,
    ip: str | None = None,
) -> Obj:
    lab = dict(labels or {})
    m = meta(name, ns, created, lab)
    if owner:
        m["ownerReferences"] = [
            {
                "apiVersion": "apps/v1" if owner[0] != "Job" else "batch/v1",
                "kind": owner[0],
                "name": owner[1],
                "controller": True,
            }
        ]
    spec: Obj = {
        "containers": containers,
        "restartPolicy": "Always" if not owner or owner[0] != "Job" else "Never",
    }
    if node_name:
        spec["nodeName"] = node_name
    status: Obj = {"phase": phase}
    if conditions is not None:
        status["conditions"] = conditions
    else:
        status["conditions"] = [
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": iso(created)},
            {
                "type": "Ready",
                "status": "True" if ready else "False",
                "lastTransitionTime": iso(created + timedelta(seconds=20)),
            },
        ]
    if node_name:
        status["hostIP"] = f"10.20.0.{sum(map(ord, node_name)) % 200 + 10}"
        status["podIP"] = (
            ip or f"10.244.{sum(map(ord, name)) % 30}.{sum(map(ord, name[::-1])) % 250 + 2}"
        )
        status["startTime"] = iso(created)
        cs = []
        for c in containers:
            entry: Obj = {
                "name": c["name"],
                "image": c["image"],
                "ready": ready,
                "restartCount": restarts,
                "state": state or running_state(created + timedelta(seconds=5)),
            }
            if last_state:
                entry["lastState"] = last_state
            cs.append(entry)
        status["containerStatuses"] = cs
    return {"apiVersion": "v1", "kind": "Pod", "metadata": m, "spec": spec, "status": status}


def service(
    name: str,
    ns: str,
    created: datetime,
    port: int = 80,
    target: int = 8080,
    selector: dict[str, str] | None = None,
    cluster_ip: str = "10.96.0.10",
) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta(name, ns, created, {"app": name}),
        "spec": {
            "type": "ClusterIP",
            "clusterIP": cluster_ip,
            "selector": selector or {"app": name},
            "ports": [{"name": "http", "port": port, "targetPort": target, "protocol": "TCP"}],
        },
    }


def endpoints(
    name: str,
    ns: str,
    created: datetime,
    ips: list[str],
    port: int = 8080,
    not_ready: list[str] | None = None,
) -> Obj:
    subset: Obj = {"ports": [{"name": "http", "port": port, "protocol": "TCP"}]}
    if ips:
        subset["addresses"] = [{"ip": i} for i in ips]
    if not_ready:
        subset["notReadyAddresses"] = [{"ip": i} for i in not_ready]
    return {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": meta(name, ns, created, {"app": name}),
        "subsets": [subset],
    }


def configmap(name: str, ns: str, created: datetime, data: dict[str, str]) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": meta(name, ns, created),
        "data": data,
    }
