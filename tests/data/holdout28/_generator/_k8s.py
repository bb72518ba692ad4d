"""Builders for Kubernetes objects as `kubectl get -o yaml` prints them.

One place decides names (`<deployment>-<template hash>-<id>`), owner references, status
shapes and event layout, so the eight scenarios are consistent with each other and with
what a real API server returns.
"""

from __future__ import annotations

import copy
import hashlib
from datetime import datetime, timedelta
from typing import Any

Obj = dict[str, Any]
_SAFE = "bcdfghjklmnpqrstvwxz2456789"  # the alphabet of generated Kubernetes names


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def token(seed: str, length: int) -> str:
    digest = hashlib.sha256(seed.encode()).digest()
    return "".join(_SAFE[b % len(_SAFE)] for b in digest[:length])


def uid(seed: str) -> str:
    h = hashlib.md5(seed.encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def namespace(name: str, created: datetime, labels: dict[str, str] | None = None) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": name,
            "uid": uid("ns" + name),
            "creationTimestamp": stamp(created),
            "labels": {"kubernetes.io/metadata.name": name, **(labels or {})},
        },
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


def node(
    name: str,
    created: datetime,
    now: datetime,
    *,
    zone: str,
    cpu: str = "8",
    memory: str = "32Gi",
    conditions_since: datetime | None = None,
) -> Obj:
    since = stamp(conditions_since or max(created, now - timedelta(days=4, hours=7)))
    beat = stamp(now - timedelta(seconds=37))
    pressure = [
        ("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
        ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ]
    conditions = [
        {
            "type": t,
            "status": "False",
            "reason": r,
            "message": m,
            "lastHeartbeatTime": beat,
            "lastTransitionTime": since,
        }
        for t, r, m in pressure
    ]
    conditions.append(
        {
            "type": "Ready",
            "status": "True",
            "reason": "KubeletReady",
            "message": "kubelet is posting ready status",
            "lastHeartbeatTime": beat,
            "lastTransitionTime": since,
        }
    )
    alloc_mem = f"{int(memory[:-2]) * 1024 * 1024 - 1200000}Ki"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": uid("Node" + name),
            "creationTimestamp": stamp(created),
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "node.kubernetes.io/instance-type": "m6i.2xlarge",
                "topology.kubernetes.io/zone": zone,
                "node-role.kubernetes.io/worker": "",
            },
        },
        "spec": {"providerID": f"aws:///{zone}/i-0{token(name, 16)}"},
        "status": {
            "capacity": {
                "cpu": cpu,
                "memory": memory,
                "pods": "110",
                "ephemeral-storage": "104845292Ki",
            },
            "allocatable": {
                "cpu": f"{int(cpu) * 1000 - 90}m",
                "memory": alloc_mem,
                "pods": "110",
                "ephemeral-storage": "96625420Ki",
            },
            "conditions": conditions,
            "nodeInfo": {
                "kubeletVersion": "v1.30.6",
                "containerRuntimeVersion": "containerd://1.7.22",
                "osImage": "Bottlerocket OS 1.26.1",
                "kernelVersion": "6.1.112",
                "architecture": "amd64",
                "operatingSystem": "linux",
            },
        },
    }


def container(
    name: str,
    image: str,
    *,
    port: int | None = None,
    port_name: str = "http",
    resources: dict[str, Any] | None = None,
    env: list[dict[str, Any]] | None = None,
    args: list[str] | None = None,
    command: list[str] | None = None,
    readiness: dict[str, Any] | None = None,
    liveness: dict[str, Any] | None = None,
    mounts: list[dict[str, Any]] | None = None,
) -> Obj:
    spec: Obj = {"name": name, "image": image, "imagePullPolicy": "IfNotPresent"}
    if command:
        spec["command"] = command
    if args:
        spec["args"] = args
    if port:
        spec["ports"] = [{"name": port_name, "containerPort": port, "protocol": "TCP"}]
    if env:
        spec["env"] = env
    spec["resources"] = resources if resources is not None else {}
    if readiness:
        spec["readinessProbe"] = readiness
    if liveness:
        spec["livenessProbe"] = liveness
    if mounts:
        spec["volumeMounts"] = mounts
    spec["terminationMessagePath"] = "/dev/termination-log"
    spec["terminationMessagePolicy"] = "File"
    return spec


def http_probe(
    path: str,
    port: int | str,
    *,
    delay: int = 5,
    period: int = 10,
    failures: int = 3,
    scheme: str | None = None,
) -> Obj:
    get: Obj = {"path": path, "port": port}
    if scheme:
        get["scheme"] = scheme
    return {
        "httpGet": get,
        "initialDelaySeconds": delay,
        "periodSeconds": period,
        "timeoutSeconds": 1,
        "successThreshold": 1,
        "failureThreshold": failures,
    }


def res(cpu_req: str, mem_req: str, cpu_lim: str | None = None, mem_lim: str | None = None) -> Obj:
    out: Obj = {"requests": {"cpu": cpu_req, "memory": mem_req}}
    limits = {k: v for k, v in (("cpu", cpu_lim), ("memory", mem_lim)) if v}
    if limits:
        out["limits"] = limits
    return out


def template(
    labels: dict[str, str],
    containers: list[Obj],
    *,
    init: list[Obj] | None = None,
    volumes: list[Obj] | None = None,
    annotations: dict[str, str] | None = None,
    service_account: str = "default",
) -> Obj:
    spec: Obj = {
        "containers": containers,
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "serviceAccountName": service_account,
        "schedulerName": "default-scheduler",
    }
    if init:
        spec["initContainers"] = init
    if volumes:
        spec["volumes"] = volumes
    meta: Obj = {"labels": dict(labels)}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {"metadata": meta, "spec": spec}


def running(
    name: str,
    started: datetime,
    *,
    image: str,
    restarts: int = 0,
    ready: bool = True,
    last: Obj | None = None,
) -> Obj:
    status: Obj = {
        "name": name,
        "image": image,
        "imageID": f"{image.split(':')[0]}@sha256:" + hashlib.sha256(image.encode()).hexdigest(),
        "containerID": "containerd://"
        + hashlib.sha1((name + stamp(started)).encode()).hexdigest()
        + hashlib.sha1(image.encode()).hexdigest()[:24],
        "ready": ready,
        "started": True,
        "restartCount": restarts,
        "state": {"running": {"startedAt": stamp(started)}},
        "lastState": {},
    }
    if last:
        status["lastState"] = {"terminated": last}
    return status


def crashing(
    name: str,
    *,
    image: str,
    restarts: int,
    last: Obj,
    message: str,
    reason: str = "CrashLoopBackOff",
) -> Obj:
    status = running(name, datetime(2000, 1, 1), image=image, restarts=restarts, ready=False)
    status["started"] = False
    status["state"] = {"waiting": {"reason": reason, "message": message}}
    status["lastState"] = {"terminated": last}
    return status


def waiting_init(name: str, *, image: str) -> Obj:
    """An app container that has not started because an init container has not finished."""
    return {
        "name": name,
        "image": image,
        "imageID": "",
        "ready": False,
        "started": False,
        "restartCount": 0,
        "state": {"waiting": {"reason": "PodInitializing"}},
        "lastState": {},
    }


def terminated(reason: str, code: int, started: datetime, finished: datetime, image: str) -> Obj:
    return {
        "reason": reason,
        "exitCode": code,
        "startedAt": stamp(started),
        "finishedAt": stamp(finished),
        "containerID": "containerd://"
        + hashlib.sha1((reason + stamp(finished) + image).encode()).hexdigest()
        + hashlib.sha1(image.encode()).hexdigest()[:24],
    }


def pod(
    name: str,
    ns: str,
    tmpl: Obj,
    *,
    owner: tuple[str, str],
    created: datetime,
    node: str,
    ip: str,
    statuses: list[Obj],
    init_statuses: list[Obj] | None = None,
    phase: str = "Running",
    extra_annotations: dict[str, str] | None = None,
    extra_labels: dict[str, str] | None = None,
    ready: bool | None = None,
    qos: str = "Burstable",
) -> Obj:
    meta = copy.deepcopy(tmpl["metadata"])
    meta["labels"] = {**meta.get("labels", {}), **(extra_labels or {})}
    annotations = {**meta.get("annotations", {}), **(extra_annotations or {})}
    meta.update(
        {
            "name": name,
            "namespace": ns,
            "uid": uid("Pod" + ns + name),
            "creationTimestamp": stamp(created),
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": owner[0],
                    "name": owner[1],
                    "uid": uid(owner[0] + ns + owner[1]),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        }
    )
    if annotations:
        meta["annotations"] = annotations
    spec = copy.deepcopy(tmpl["spec"])
    spec["nodeName"] = node
    is_ready = all(s.get("ready") for s in statuses) if ready is None else ready
    scheduled = stamp(created + timedelta(seconds=1))
    init_done = not init_statuses or all(
        "terminated" in s["state"] and s["state"]["terminated"]["exitCode"] == 0
        for s in init_statuses
    )
    conditions = [
        {"type": "PodReadyToStartContainers", "status": "True", "lastTransitionTime": scheduled},
        {
            "type": "Initialized",
            "status": "True" if init_done else "False",
            "lastTransitionTime": scheduled,
        },
        {
            "type": "Ready",
            "status": "True" if is_ready else "False",
            "lastTransitionTime": scheduled,
        },
        {
            "type": "ContainersReady",
            "status": "True" if is_ready else "False",
            "lastTransitionTime": scheduled,
        },
        {"type": "PodScheduled", "status": "True", "lastTransitionTime": stamp(created)},
    ]
    if not init_done:
        conditions[1].update(
            {
                "reason": "ContainersNotInitialized",
                "message": "containers with incomplete status: ["
                + ", ".join(s["name"] for s in init_statuses or [])
                + "]",
            }
        )
    if not is_ready:
        for c in conditions[2:4]:
            names = [s["name"] for s in statuses if not s.get("ready")]
            c.update(
                {
                    "reason": "ContainersNotReady",
                    "message": f"containers with unready status: [{' '.join(names)}]",
                }
            )
    status: Obj = {
        "phase": phase,
        "conditions": conditions,
        "hostIP": "10.0." + ip.split(".")[2] + ".10",
        "podIP": ip,
        "podIPs": [{"ip": ip}],
        "startTime": stamp(created),
        "containerStatuses": statuses,
        "qosClass": qos,
    }
    if init_statuses:
        status["initContainerStatuses"] = init_statuses
    if phase == "Pending":
        status["phase"] = "Pending"
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def event(
    ns: str,
    kind: str,
    name: str,
    reason: str,
    message: str,
    *,
    first: datetime,
    last: datetime,
    count: int = 1,
    type: str = "Normal",
    component: str = "kubelet",
    host: str | None = None,
    field_path: str | None = None,
) -> Obj:
    involved: Obj = {
        "kind": kind,
        "namespace": ns,
        "name": name,
        "uid": uid(kind + ns + name),
        "apiVersion": "apps/v1"
        if kind in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet")
        else "v1",
    }
    if field_path:
        involved["fieldPath"] = field_path
    if kind == "Node":
        involved.pop("namespace")
    suffix = hashlib.sha1(f"{name}{reason}{stamp(first)}{message}".encode()).hexdigest()[:16]
    source: Obj = {"component": component}
    if host:
        source["host"] = host
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": f"{name}.{suffix}",
            "namespace": ns or "default",
            "creationTimestamp": stamp(first),
        },
        "involvedObject": involved,
        "reason": reason,
        "message": message,
        "type": type,
        "count": count,
        "firstTimestamp": stamp(first),
        "lastTimestamp": stamp(last),
        "source": source,
        "reportingComponent": component,
        "reportingInstance": host or "",
    }


def service(
    name: str,
    ns: str,
    selector: dict[str, str],
    ports: list[tuple[str, int, int | str]],
    *,
    cluster_ip: str,
    created: datetime,
    labels: dict[str, str] | None = None,
) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": uid("svc" + ns + name),
            "creationTimestamp": stamp(created),
            "labels": labels or {"app": name},
        },
        "spec": {
            "type": "ClusterIP",
            "clusterIP": cluster_ip,
            "clusterIPs": [cluster_ip],
            "selector": selector,
            "sessionAffinity": "None",
            "ports": [
                {"name": n, "port": p, "targetPort": t, "protocol": "TCP"} for n, p, t in ports
            ],
        },
        "status": {"loadBalancer": {}},
    }


def endpoints(
    name: str, ns: str, pods: list[Obj], ports: list[tuple[str, int]], *, created: datetime
) -> Obj:
    ready = [p for p in pods if p["status"]["conditions"][2]["status"] == "True"]
    unready = [p for p in pods if p not in ready]

    def address(p: Obj) -> Obj:
        return {
            "ip": p["status"]["podIP"],
            "nodeName": p["spec"]["nodeName"],
            "targetRef": {
                "kind": "Pod",
                "namespace": ns,
                "name": p["metadata"]["name"],
                "uid": p["metadata"]["uid"],
            },
        }

    obj: Obj = {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": uid("ep" + ns + name),
            "creationTimestamp": stamp(created),
            "labels": {"app": name},
        },
    }
    if pods:
        subset: Obj = {"ports": [{"name": n, "port": p, "protocol": "TCP"} for n, p in ports]}
        if ready:
            subset["addresses"] = [address(p) for p in ready]
        if unready:
            subset["notReadyAddresses"] = [address(p) for p in unready]
        obj["subsets"] = [subset]
    return obj


def configmap(
    name: str,
    ns: str,
    data: dict[str, str],
    *,
    created: datetime,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
) -> Obj:
    meta: Obj = {
        "name": name,
        "namespace": ns,
        "uid": uid("cm" + ns + name),
        "creationTimestamp": stamp(created),
    }
    if labels:
        meta["labels"] = labels
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}
