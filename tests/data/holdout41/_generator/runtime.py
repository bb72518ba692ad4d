"""What runs and what it says, for the holdout41 stories: pods and their container
statuses, Services with their Endpoints, and Events."""

from __future__ import annotations

import hashlib
import json

from .record import Obj, suffix, uid


def running(
    name: str,
    image: str,
    started: str,
    *,
    restarts: int = 0,
    ready: bool = True,
    last: Obj | None = None,
) -> Obj:
    s: Obj = {
        "name": name,
        "image": image,
        "imageID": f"{image.split(':')[0]}@sha256:{suffix(image, 12)}",
        "ready": ready,
        "started": True,
        "restartCount": restarts,
        "state": {"running": {"startedAt": started}},
        "containerID": f"containerd://{hashlib.sha1((name + started).encode()).hexdigest()}",
    }
    if last:
        s["lastState"] = {"terminated": last}
    else:
        s["lastState"] = {}
    return s


def waiting(
    name: str,
    image: str,
    reason: str,
    message: str | None = None,
    *,
    restarts: int = 0,
    last: Obj | None = None,
) -> Obj:
    w: Obj = {"reason": reason}
    if message:
        w["message"] = message
    return {
        "name": name,
        "image": image,
        "imageID": "",
        "ready": False,
        "started": False,
        "restartCount": restarts,
        "state": {"waiting": w},
        "lastState": {"terminated": last} if last else {},
    }


def terminated(reason: str, code: int, started: str, finished: str) -> Obj:
    return {
        "reason": reason,
        "exitCode": code,
        "startedAt": started,
        "finishedAt": finished,
        "containerID": f"containerd://{hashlib.sha1((reason + finished).encode()).hexdigest()}",
    }


def pod(
    owner: Obj,
    tpl: Obj,
    pod_name: str,
    *,
    node_name: str,
    ip: str | None,
    created: str,
    statuses: list[Obj],
    phase: str = "Running",
    host_ip: str = "10.0.0.1",
    annotations: dict[str, str] | None = None,
    containers: list[Obj] | None = None,
    ready: bool | None = None,
    owner_kind: str | None = None,
) -> Obj:
    ns = owner["metadata"]["namespace"]
    labels = (
        dict(owner["spec"]["template"]["metadata"]["labels"])
        if owner["kind"] == "ReplicaSet"
        else dict(tpl["metadata"]["labels"])
    )
    spec = json.loads(json.dumps(tpl["spec"]))
    if containers is not None:
        spec["containers"] = containers
    spec["nodeName"] = node_name
    all_ready = all(s.get("ready") for s in statuses) if ready is None else ready
    meta: Obj = {
        "name": pod_name,
        "namespace": ns,
        "creationTimestamp": created,
        "labels": labels,
        "uid": uid(ns + pod_name),
        "ownerReferences": [
            {
                "apiVersion": "apps/v1",
                "kind": owner_kind or owner["kind"],
                "name": owner["metadata"]["name"],
                "uid": owner["metadata"]["uid"],
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    }
    ann = dict(tpl["metadata"].get("annotations") or {})
    ann.update(annotations or {})
    if ann:
        meta["annotations"] = ann
    started = [s for s in statuses if "running" in s["state"]]
    cond_time = started[0]["state"]["running"]["startedAt"] if started else created
    status: Obj = {
        "phase": phase,
        "hostIP": host_ip,
        "startTime": created,
        "qosClass": "Burstable",
        "conditions": [
            {"type": "Initialized", "status": "True", "lastTransitionTime": created},
            {
                "type": "Ready",
                "status": "True" if all_ready else "False",
                "lastTransitionTime": cond_time,
                **(
                    {}
                    if all_ready
                    else {
                        "reason": "ContainersNotReady",
                        "message": "containers with unready status: ["
                        + " ".join(s["name"] for s in statuses if not s.get("ready"))
                        + "]",
                    }
                ),
            },
            {
                "type": "ContainersReady",
                "status": "True" if all_ready else "False",
                "lastTransitionTime": cond_time,
            },
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": created},
        ],
        "containerStatuses": statuses,
    }
    if ip:
        status["podIP"] = ip
        status["podIPs"] = [{"ip": ip}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def service(
    ns: str,
    name: str,
    selector: dict[str, str],
    port: int,
    target: int | str,
    cluster_ip: str,
    created: str,
    *,
    labels: dict[str, str] | None = None,
) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": name,
            "namespace": ns,
            "creationTimestamp": created,
            "labels": labels or {"app": name},
        },
        "spec": {
            "type": "ClusterIP",
            "clusterIP": cluster_ip,
            "clusterIPs": [cluster_ip],
            "selector": selector,
            "sessionAffinity": "None",
            "internalTrafficPolicy": "Cluster",
            "ports": [{"name": "http", "port": port, "targetPort": target, "protocol": "TCP"}],
        },
        "status": {"loadBalancer": {}},
    }


def endpoints(svc: Obj, pods: list[Obj], port: int) -> Obj:
    ready = [
        p
        for p in pods
        if p["status"].get("podIP")
        and all(s.get("ready") for s in p["status"]["containerStatuses"])
    ]
    subset: Obj = {"ports": [{"name": "http", "port": port, "protocol": "TCP"}]}
    if ready:
        subset["addresses"] = [
            {
                "ip": p["status"]["podIP"],
                "nodeName": p["spec"]["nodeName"],
                "targetRef": {
                    "kind": "Pod",
                    "namespace": p["metadata"]["namespace"],
                    "name": p["metadata"]["name"],
                },
            }
            for p in ready
        ]
    return {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {
            "name": svc["metadata"]["name"],
            "namespace": svc["metadata"]["namespace"],
            "creationTimestamp": svc["metadata"]["creationTimestamp"],
            "labels": svc["metadata"].get("labels", {}),
        },
        "subsets": [subset] if ready else [],
    }


def event(
    ns: str,
    kind: str,
    name: str,
    reason: str,
    message: str,
    *,
    first: str,
    last: str,
    count: int = 1,
    type_: str = "Normal",
    component: str = "kubelet",
    host: str | None = None,
    api: str = "v1",
) -> Obj:
    seed = f"{ns}/{kind}/{name}/{reason}/{message}/{first}"
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": f"{name}.{hashlib.sha1(seed.encode()).hexdigest()[:16]}",
            "namespace": ns or "default",
            "creationTimestamp": first,
        },
        "involvedObject": {"kind": kind, "namespace": ns, "name": name, "apiVersion": api},
        "reason": reason,
        "message": message,
        "type": type_,
        "count": count,
        "firstTimestamp": first,
        "lastTimestamp": last,
        "source": {"component": component, **({"host": host} if host else {})},
        "reportingComponent": component,
        "reportingInstance": host or "",
    }
