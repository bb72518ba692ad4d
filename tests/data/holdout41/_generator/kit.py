"""Kubernetes objects for the holdout41 stories, as `kubectl get -o yaml` prints them.
Times come from the scenario's Clock (record.py), so every story keeps the format's
windows (events within the hour, logs and samples within the week)."""

from __future__ import annotations

import json

from .record import Clock, Metrics, Obj, Scenario, suffix, uid
from .runtime import endpoints, event, pod, running, service, terminated, waiting

__all__ = [
    "Clock",
    "Metrics",
    "Obj",
    "Scenario",
    "endpoints",
    "event",
    "pod",
    "running",
    "service",
    "suffix",
    "terminated",
    "uid",
    "waiting",
]


def namespace(name: str, created: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": name,
            "creationTimestamp": created,
            "labels": {"kubernetes.io/metadata.name": name},
        },
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


def node(
    name: str,
    created: str,
    heartbeat: str,
    *,
    ip: str,
    zone: str,
    cpu: str = "8",
    memory: str = "32Gi",
    kubelet: str = "v1.29.6",
    ready: bool = True,
    extra_labels: dict[str, str] | None = None,
    transition: str | None = None,
) -> Obj:
    transition = transition or heartbeat
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "topology.kubernetes.io/zone": zone,
        "node.kubernetes.io/instance-type": "m6i.2xlarge",
    }
    labels.update(extra_labels or {})
    conds = [
        {
            "type": t,
            "status": "False",
            "reason": r,
            "message": m,
            "lastHeartbeatTime": heartbeat,
            "lastTransitionTime": transition,
        }
        for t, r, m in (
            (
                "MemoryPressure",
                "KubeletHasSufficientMemory",
                "kubelet has sufficient memory available",
            ),
            ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        )
    ]
    conds.append(
        {
            "type": "Ready",
            "status": "True" if ready else "Unknown",
            "reason": "KubeletReady" if ready else "NodeStatusUnknown",
            "message": "kubelet is posting ready status"
            if ready
            else "Kubelet stopped posting node status.",
            "lastHeartbeatTime": heartbeat,
            "lastTransitionTime": transition,
        }
    )
    alloc_mem = f"{int(memory[:-2]) - 2}Gi"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "creationTimestamp": created, "labels": labels},
        "spec": {"providerID": f"aws:///{zone}/i-0{suffix(name, 8)}"},
        "status": {
            "capacity": {"cpu": cpu, "memory": memory, "pods": "58"},
            "allocatable": {"cpu": cpu, "memory": alloc_mem, "pods": "58"},
            "conditions": conds,
            "addresses": [
                {"type": "InternalIP", "address": ip},
                {"type": "Hostname", "address": name},
            ],
            "nodeInfo": {
                "kubeletVersion": kubelet,
                "kubeProxyVersion": kubelet,
                "containerRuntimeVersion": "containerd://1.7.11",
                "osImage": "Amazon Linux 2",
                "architecture": "amd64",
                "operatingSystem": "linux",
            },
        },
    }


def container(
    name: str,
    image: str,
    *,
    requests: dict[str, str] | None = None,
    limits: dict[str, str] | None = None,
    port: int | None = None,
    env: list[Obj] | None = None,
    readiness: Obj | None = None,
    liveness: Obj | None = None,
    mounts: list[Obj] | None = None,
    args: list[str] | None = None,
) -> Obj:
    c: Obj = {"name": name, "image": image, "imagePullPolicy": "IfNotPresent"}
    if args:
        c["args"] = args
    if port:
        c["ports"] = [{"name": "http", "containerPort": port, "protocol": "TCP"}]
    if env:
        c["env"] = env
    res: Obj = {}
    if requests:
        res["requests"] = requests
    if limits:
        res["limits"] = limits
    c["resources"] = res
    if readiness:
        c["readinessProbe"] = readiness
    if liveness:
        c["livenessProbe"] = liveness
    if mounts:
        c["volumeMounts"] = mounts
    c["terminationMessagePath"] = "/dev/termination-log"
    c["terminationMessagePolicy"] = "File"
    return c


def http_probe(path: str, port: int, period: int = 10, delay: int = 5) -> Obj:
    return {
        "httpGet": {"path": path, "port": port, "scheme": "HTTP"},
        "initialDelaySeconds": delay,
        "periodSeconds": period,
        "timeoutSeconds": 1,
        "successThreshold": 1,
        "failureThreshold": 3,
    }


def template(
    labels: dict[str, str],
    containers: list[Obj],
    *,
    annotations: dict[str, str] | None = None,
    volumes: list[Obj] | None = None,
    sa: str = "default",
) -> Obj:
    meta: Obj = {"labels": dict(labels)}
    if annotations:
        meta["annotations"] = annotations
    spec: Obj = {
        "containers": containers,
        "restartPolicy": "Always",
        "serviceAccountName": sa,
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
    }
    if volumes:
        spec["volumes"] = volumes
    return {"metadata": meta, "spec": spec}


def deployment(
    ns: str,
    name: str,
    labels: dict[str, str],
    tpl: Obj,
    *,
    replicas: int,
    revision: int,
    created: str,
    progressed: str,
    available: int | None = None,
    updated: int | None = None,
    ready: int | None = None,
    strategy: Obj | None = None,
    progressing: Obj | None = None,
    generation: int | None = None,
    change_cause: str | None = None,
) -> Obj:
    available = replicas if available is None else available
    updated = replicas if updated is None else updated
    ready = available if ready is None else ready
    ann = {"deployment.kubernetes.io/revision": str(revision)}
    if change_cause:
        ann["kubernetes.io/change-cause"] = change_cause
    prog = progressing or {
        "type": "Progressing",
        "status": "True",
        "reason": "NewReplicaSetAvailable",
        "message": f'ReplicaSet "{name}-{pod_hash(name, revision)}" has successfully progressed.',
        "lastUpdateTime": progressed,
        "lastTransitionTime": progressed,
    }
    avail_ok = available >= max(1, replicas - 1) if replicas else True
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "namespace": ns,
            "creationTimestamp": created,
            "labels": dict(labels),
            "annotations": ann,
            "generation": generation or revision + 1,
            "uid": uid(ns + name),
        },
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": labels["app"]}},
            "strategy": strategy
            or {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
            },
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600,
            "template": tpl,
        },
        "status": {
            "observedGeneration": generation or revision + 1,
            "replicas": max(replicas, updated),
            "updatedReplicas": updated,
            "readyReplicas": ready,
            "availableReplicas": available,
            **({} if available >= replicas else {"unavailableReplicas": replicas - available}),
            "conditions": [
                {
                    "type": "Available",
                    "status": "True" if avail_ok else "False",
                    "reason": "MinimumReplicasAvailable"
                    if avail_ok
                    else "MinimumReplicasUnavailable",
                    "message": "Deployment has minimum availability."
                    if avail_ok
                    else "Deployment does not have minimum availability.",
                    "lastUpdateTime": progressed,
                    "lastTransitionTime": progressed,
                },
                prog,
            ],
        },
    }


def pod_hash(name: str, revision: int) -> str:
    return suffix(f"{name}/rs/{revision}", 10)


def replicaset(
    dep: Obj, revision: int, tpl: Obj, *, replicas: int, created: str, ready: int | None = None
) -> Obj:
    name, ns = dep["metadata"]["name"], dep["metadata"]["namespace"]
    h = pod_hash(name, revision)
    labels = {**tpl["metadata"]["labels"], "pod-template-hash": h}
    t = json.loads(json.dumps(tpl))
    t["metadata"]["labels"] = labels
    ready = replicas if ready is None else ready
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": f"{name}-{h}",
            "namespace": ns,
            "creationTimestamp": created,
            "labels": labels,
            "uid": uid(f"{ns}/{name}-{h}"),
            "annotations": {
                "deployment.kubernetes.io/revision": str(revision),
                "deployment.kubernetes.io/desired-replicas": str(dep["spec"]["replicas"]),
            },
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": name,
                    "uid": dep["metadata"]["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": labels["app"], "pod-template-hash": h}},
            "template": t,
        },
        "status": {
            "replicas": replicas,
            "fullyLabeledReplicas": replicas,
            "readyReplicas": ready,
            "availableReplicas": ready,
            "observedGeneration": 1,
        },
    }
