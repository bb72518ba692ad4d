# ruff: noqa: E501  (verbatim log lines and Kubernetes messages are kept whole)
"""Kubernetes object builders for the holdout32 scenarios.

Every object is shaped like `kubectl get -o yaml` prints it, so that each scenario's
cluster.yaml reads like a dump an on-call engineer took. Times are minutes before the
scenario's `now`, so one clock drives objects, events, logs and metrics alike.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import Any

Obj = dict[str, Any]


class Clock:
    """The investigation's clock: `at(m)` is the RFC 3339 time m minutes before now."""

    def __init__(self, now: str) -> None:
        self.now = datetime.fromisoformat(now.replace("Z", "+00:00"))

    def dt(self, minutes_ago: float) -> datetime:
        return self.now - timedelta(minutes=minutes_ago)

    def at(self, minutes_ago: float) -> str:
        return self.dt(minutes_ago).strftime("%Y-%m-%dT%H:%M:%SZ")

    def ms(self, minutes_ago: float) -> str:
        return self.dt(minutes_ago).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"

    def unix(self, minutes_ago: float) -> int:
        return int(self.dt(minutes_ago).timestamp())


def uid(*parts: str) -> str:
    h = hashlib.sha1("/".join(parts).encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def suffix(seed: str, n: int = 5) -> str:
    """A stable pod-name suffix (kube's alphabet has no vowels)."""
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    h = int(hashlib.sha1(seed.encode()).hexdigest(), 16)
    out = ""
    for _ in range(n):
        h, r = divmod(h, len(alphabet))
        out += alphabet[r]
    return out


def meta(name: str, ns: str | None, created: str, labels: dict[str, str] | None = None, **extra: Any) -> Obj:
    m: Obj = {"name": name}
    if ns is not None:
        m["namespace"] = ns
    m["uid"] = uid(ns or "", name)
    m["creationTimestamp"] = created
    if labels:
        m["labels"] = dict(labels)
    m.update(extra)
    return m


def namespace(name: str, created: str, labels: dict[str, str] | None = None) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": meta(name, None, created, {"kubernetes.io/metadata.name": name, **(labels or {})}),
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


def node(
    clock: Clock,
    name: str,
    zone: str,
    pool: str,
    *,
    created_days: float = 40,
    arch: str = "amd64",
    cpu: str = "3920m",
    memory: str = "15147464Ki",
    pressure: dict[str, tuple[str, str, str, float]] | None = None,
    ready: bool = True,
    kubelet: str = "v1.30.6",
    instance: str = "m6i.xlarge",
    taints: list[Obj] | None = None,
    unschedulable: bool = False,
    region: str = "eu-west-1",
) -> Obj:
    """pressure: {type: (status, reason, message, minutes_since_transition)}."""
    since = clock.at(min(created_days * 1440 - 3, 60 * 24 * 6.5))
    conds = {
        "MemoryPressure": ("False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available", None),
        "DiskPressure": ("False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure", None),
        "PIDPressure": ("False", "KubeletHasSufficientPID", "kubelet has sufficient PID available", None),
        "Ready": ("True", "KubeletReady", "kubelet is posting ready status", None),
    }
    for kind, (status, reason, message, mins) in (pressure or {}).items():
        conds[kind] = (status, reason, message, mins)
    if not ready:
        conds["Ready"] = ("Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status.", 20)
    conditions = [
        {
            "type": k,
            "status": s,
            "reason": r,
            "message": msg,
            "lastHeartbeatTime": clock.at(0.5),
            "lastTransitionTime": clock.at(m) if m is not None else since,
        }
        for k, (s, r, msg, m) in conds.items()
    ]
    spec: Obj = {"providerID": f"aws:///{zone}/i-0{suffix(name, 16)}"}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": meta(
            name,
            None,
            clock.at(created_days * 1440),
            {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": arch,
                "beta.kubernetes.io/arch": arch,
                "topology.kubernetes.io/region": region,
                "topology.kubernetes.io/zone": zone,
                "node.kubernetes.io/instance-type": instance,
                "nodepool": pool,
            },
        ),
        "spec": spec,
        "status": {
            "capacity": {"cpu": "4", "memory": "16069448Ki", "pods": "58", "ephemeral-storage": "83873772Ki"},
            "allocatable": {"cpu": cpu, "memory": memory, "pods": "58", "ephemeral-storage": "76224326324"},
            "conditions": conditions,
            "nodeInfo": {
                "architecture": arch,
                "kubeletVersion": kubelet,
                "containerRuntimeVersion": "containerd://1.7.22",
                "operatingSystem": "linux",
                "osImage": "Bottlerocket OS 1.26.2",
                "kernelVersion": "6.1.112",
            },
        },
    }


def container(
    name: str,
    image: str,
    *,
    port: int | None = 8080,
    cpu: str = "250m",
    memory: str = "256Mi",
    cpu_limit: str | None = None,
    mem_limit: str | None = "512Mi",
    env: list[Obj] | None = None,
    readiness: Obj | None = None,
    liveness: Obj | None = None,
    command: list[str] | None = None,
    args: list[str] | None = None,
    env_from: list[Obj] | None = None,
    mounts: list[Obj] | None = None,
) -> Obj:
    c: Obj = {"name": name, "image": image, "imagePullPolicy": "IfNotPresent"}
    if command:
        c["command"] = command
    if args:
        c["args"] = args
    if port:
        c["ports"] = [{"name": "http", "containerPort": port, "protocol": "TCP"}]
    if env:
        c["env"] = env
    if env_from:
        c["envFrom"] = env_from
    limits: Obj = {}
    if cpu_limit:
        limits["cpu"] = cpu_limit
    if mem_limit:
        limits["memory"] = mem_limit
    c["resources"] = {"requests": {"cpu": cpu, "memory": memory}, **({"limits": limits} if limits else {})}
    if readiness:
        c["readinessProbe"] = readiness
    if liveness:
        c["livenessProbe"] = liveness
    if mounts:
        c["volumeMounts"] = mounts
    c["terminationMessagePath"] = "/dev/termination-log"
    c["terminationMessagePolicy"] = "File"
    return c


def http_probe(
    path: str, port: int | str = "http", *, delay: int = 5, period: int = 10, timeout: int = 1, failures: int = 3
) -> Obj:
    return {
        "httpGet": {"path": path, "port": port, "scheme": "HTTP"},
        "initialDelaySeconds": delay,
        "periodSeconds": period,
        "timeoutSeconds": timeout,
        "successThreshold": 1,
        "failureThreshold": failures,
    }


def template(labels: dict[str, str], containers: list[Obj], **spec: Any) -> Obj:
    return {
        "metadata": {"labels": dict(labels)},
        "spec": {
            "containers": containers,
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default",
            **spec,
        },
    }


def pod_hash(name: str, revision: int) -> str:
    return suffix(f"{name}-rev{revision}", 9) if revision % 2 else suffix(f"{name}-r{revision}", 10)


def deployment(
    clock: Clock,
    ns: str,
    name: str,
    tmpl: Obj,
    *,
    replicas: int,
    revision: int,
    created_days: float,
    ready: int,
    updated: int,
    available: int | None = None,
    unavailable: int = 0,
    strategy: Obj | None = None,
    progressing: tuple[str, str, str, float] | None = None,
    annotations: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    observed_replicas: int | None = None,
    avail_ok: bool = True,
) -> Obj:
    available = ready if available is None else available
    prog = progressing or (
        "True",
        "NewReplicaSetAvailable",
        f'ReplicaSet "{name}-{pod_hash(name, revision)}" has successfully progressed.',
        600,
    )
    status: Obj = {
        "observedGeneration": revision + 3,
        "replicas": observed_replicas or max(replicas, ready),
        "updatedReplicas": updated,
        "readyReplicas": ready,
        "availableReplicas": available,
        "conditions": [
            {
                "type": "Available",
                "status": "True" if avail_ok else "False",
                "reason": "MinimumReplicasAvailable" if avail_ok else "MinimumReplicasUnavailable",
                "message": "Deployment has minimum availability."
                if avail_ok
                else "Deployment does not have minimum availability.",
                "lastUpdateTime": clock.at(prog[3]),
                "lastTransitionTime": clock.at(prog[3]),
            },
            {
                "type": "Progressing",
                "status": prog[0],
                "reason": prog[1],
                "message": prog[2],
                "lastUpdateTime": clock.at(prog[3]),
                "lastTransitionTime": clock.at(prog[3]),
            },
        ],
    }
    if unavailable:
        status["unavailableReplicas"] = unavailable
    ann = {"deployment.kubernetes.io/revision": str(revision), **(annotations or {})}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta(
            name,
            ns,
            clock.at(created_days * 1440),
            labels or tmpl["metadata"]["labels"],
            annotations=ann,
            generation=revision + 3,
        ),
        "spec": {
            "replicas": replicas,
            "revisionHistoryLimit": 10,
            "selector": {"matchLabels": {"app": tmpl["metadata"]["labels"]["app"]}},
            "strategy": strategy
            or {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
            "progressDeadlineSeconds": 600,
            "template": tmpl,
        },
        "status": status,
    }


def replicaset(
    clock: Clock, ns: str, deploy: str, tmpl: Obj, *, revision: int, created_min: float, replicas: int, ready: int
) -> Obj:
    h = pod_hash(deploy, revision)
    t = {"metadata": {"labels": {**tmpl["metadata"]["labels"], "pod-template-hash": h}}, "spec": tmpl["spec"]}
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": meta(
            f"{deploy}-{h}",
            ns,
            clock.at(created_min),
            t["metadata"]["labels"],
            annotations={
                "deployment.kubernetes.io/revision": str(revision),
                "deployment.kubernetes.io/desired-replicas": str(replicas),
            },
            ownerReferences=[
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": deploy,
                    "uid": uid(ns, deploy),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        ),
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": tmpl["metadata"]["labels"]["app"], "pod-template-hash": h}},
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


def running(started_min: float, clock: Clock) -> Obj:
    return {"running": {"startedAt": clock.at(started_min)}}


def cstatus(
    clock: Clock,
    name: str,
    image: str,
    *,
    ready: bool,
    state: Obj,
    restarts: int = 0,
    last: Obj | None = None,
    started: bool | None = None,
) -> Obj:
    s: Obj = {
        "name": name,
        "image": image,
        "imageID": f"{image.split(':')[0]}@sha256:" + hashlib.sha256(image.encode()).hexdigest(),
        "containerID": "containerd://" + hashlib.sha256((name + str(restarts) + image + repr(state)).encode()).hexdigest(),
        "ready": ready,
        "restartCount": restarts,
        "started": ready if started is None else started,
        "state": state,
        "lastState": last or {},
    }
    return s


def terminated(
    clock: Clock, reason: str, code: int, started_min: float, finished_min: float, message: str | None = None
) -> Obj:
    t: Obj = {
        "reason": reason,
        "exitCode": code,
        "startedAt": clock.at(started_min),
        "finishedAt": clock.at(finished_min),
    }
    if message:
        t["message"] = message
    return {"terminated": t}


def pod(
    clock: Clock,
    ns: str,
    name: str,
    owner: tuple[str, str],
    tmpl_labels: dict[str, str],
    spec: Obj,
    *,
    node_name: str | None,
    ip: str | None,
    started_min: float,
    statuses: list[Obj],
    phase: str = "Running",
    ready: bool = True,
    conditions_extra: list[Obj] | None = None,
    reason: str | None = None,
    message: str | None = None,
    qos: str = "Burstable",
    hash_label: str | None = None,
) -> Obj:
    labels = dict(tmpl_labels)
    if hash_label:
        labels["pod-template-hash"] = hash_label
    s = dict(spec)
    if node_name:
        s["nodeName"] = node_name
    conds: list[Obj]
    if node_name is None:
        conds = conditions_extra or []
    else:
        r = "True" if ready else "False"
        conds = [
            {"type": "PodReadyToStartContainers", "status": "True", "lastTransitionTime": clock.at(started_min)},
            {"type": "Initialized", "status": "True", "lastTransitionTime": clock.at(started_min)},
            {
                "type": "Ready",
                "status": r,
                "lastTransitionTime": clock.at(started_min - 0.3),
                **(
                    {}
                    if ready
                    else {
                        "reason": "ContainersNotReady",
                        "message": f"containers with unready status: [{statuses[0]['name']}]",
                    }
                ),
            },
            {
                "type": "ContainersReady",
                "status": r,
                "lastTransitionTime": clock.at(started_min - 0.3),
                **(
                    {}
                    if ready
                    else {
                        "reason": "ContainersNotReady",
                        "message": f"containers with unready status: [{statuses[0]['name']}]",
                    }
                ),
            },
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": clock.at(started_min + 0.1)},
        ]
        conds += conditions_extra or []
    status: Obj = {"phase": phase, "conditions": conds, "qosClass": qos}
    if node_name:
        status |= {
            "hostIP": "10.20." + str(sum(map(ord, node_name)) % 8) + "." + str(sum(map(ord, node_name)) % 200 + 10),
            "startTime": clock.at(started_min),
        }
    if ip:
        status |= {"podIP": ip, "podIPs": [{"ip": ip}]}
    if statuses:
        status["containerStatuses"] = statuses
    if reason:
        status["reason"] = reason
    if message:
        status["message"] = message
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta(
            name,
            ns,
            clock.at(started_min + 0.1),
            labels,
            ownerReferences=[
                {
                    "apiVersion": "apps/v1" if owner[0] != "Job" else "batch/v1",
                    "kind": owner[0],
                    "name": owner[1],
                    "uid": uid(ns, owner[1]),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        ),
        "spec": s,
        "status": status,
    }


def service(
    clock: Clock,
    ns: str,
    name: str,
    selector: dict[str, str],
    *,
    port: int = 80,
    target: int | str = "http",
    cluster_ip: str,
    created_days: float = 90,
    port_name: str = "http",
    annotations: dict[str, str] | None = None,
) -> Obj:
    extra = {"annotations": annotations} if annotations else {}
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta(name, ns, clock.at(created_days * 1440), {"app": selector.get("app", name)}, **extra),
        "spec": {
            "type": "ClusterIP",
            "clusterIP": cluster_ip,
            "clusterIPs": [cluster_ip],
            "selector": selector,
            "sessionAffinity": "None",
            "ports": [{"name": port_name, "port": port, "targetPort": target, "protocol": "TCP"}],
        },
        "status": {"loadBalancer": {}},
    }


def endpoints(
    clock: Clock,
    ns: str,
    name: str,
    ready: list[tuple[str, str, str]],
    not_ready: list[tuple[str, str, str]],
    port: int,
    port_name: str = "http",
) -> Obj:
    """ready/not_ready: (ip, pod name, node name)."""

    def addr(a: tuple[str, str, str]) -> Obj:
        return {
            "ip": a[0],
            "nodeName": a[2],
            "targetRef": {"kind": "Pod", "namespace": ns, "name": a[1], "uid": uid(ns, a[1])},
        }

    subset: Obj = {"ports": [{"name": port_name, "port": port, "protocol": "TCP"}]}
    if ready:
        subset["addresses"] = [addr(a) for a in ready]
    if not_ready:
        subset["notReadyAddresses"] = [addr(a) for a in not_ready]
    return {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": meta(name, ns, clock.at(60 * 24 * 30), {"app": name}),
        "subsets": [subset],
    }


def configmap(
    clock: Clock,
    ns: str,
    name: str,
    data: dict[str, str],
    *,
    created_min: float,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
) -> Obj:
    extra = {"annotations": annotations} if annotations else {}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": meta(name, ns, clock.at(created_min), labels, **extra),
        "data": data,
    }


def event(
    clock: Clock,
    ns: str,
    kind: str,
    name: str,
    reason: str,
    message: str,
    *,
    first_min: float,
    last_min: float,
    count: int = 1,
    type_: str = "Normal",
    component: str = "kubelet",
    host: str | None = None,
    field_path: str | None = None,
    api_version: str = "v1",
) -> Obj:
    inv: Obj = {"kind": kind, "namespace": ns, "name": name, "uid": uid(ns, name), "apiVersion": api_version}
    if not ns:
        inv.pop("namespace")
    if field_path:
        inv["fieldPath"] = field_path
    src: Obj = {"component": component}
    if host:
        src["host"] = host
    ev_name = f"{name}.{hashlib.sha1((reason + message + str(first_min)).encode()).hexdigest()[:16]}"
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": ev_name, "namespace": ns or "default", "creationTimestamp": clock.at(first_min)},
        "involvedObject": inv,
        "reason": reason,
        "message": message,
        "type": type_,
        "count": count,
        "firstTimestamp": clock.at(first_min),
        "lastTimestamp": clock.at(last_min),
        "source": src,
        "reportingComponent": component,
        "reportingInstance": host or "",
    }


def crash_times(start_min: float, until_min: float = 0.0) -> list[float]:
    """Minutes-ago of each start of a crash-looping container: the kubelet's back-off
    doubles from 10 s to a 5 min cap."""
    times, t, delay = [], start_min, 10.0
    while t > until_min:
        times.append(t)
        t -= delay / 60 + 0.02
        delay = min(delay * 2, 300.0)
    return times


def hpa(
    clock: Clock,
    ns: str,
    name: str,
    *,
    min_r: int,
    max_r: int,
    current: int,
    desired: int,
    cpu_target: int,
    cpu_now: int,
    created_days: float = 100,
    able: tuple[str, str, str] | None = None,
    limited: tuple[str, str, str] | None = None,
    last_scale_min: float = 120,
) -> Obj:
    conds = [
        {
            "type": "AbleToScale",
            "status": "True",
            "reason": (able or ("", "ReadyForNewScale", ""))[1],
            "message": (able or ("", "", "recommended size matches current size"))[2],
            "lastTransitionTime": clock.at(last_scale_min),
        },
        {
            "type": "ScalingActive",
            "status": "True",
            "reason": "ValidMetricFound",
            "message": "the HPA was able to successfully calculate a replica count from cpu resource utilization "
            "(percentage of request)",
            "lastTransitionTime": clock.at(60 * 24 * 5),
        },
        {
            "type": "ScalingLimited",
            "status": (limited or ("False",))[0],
            "reason": (limited or ("False", "DesiredWithinRange"))[1],
            "message": (limited or ("", "", "the desired count is within the acceptable range"))[2],
            "lastTransitionTime": clock.at(last_scale_min),
        },
    ]
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": meta(name, ns, clock.at(created_days * 1440), {"app": name}),
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
            "minReplicas": min_r,
            "maxReplicas": max_r,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": cpu_target}},
                }
            ],
        },
        "status": {
            "currentReplicas": current,
            "desiredReplicas": desired,
            "lastScaleTime": clock.at(last_scale_min),
            "currentMetrics": [
                {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": cpu_now}}}
            ],
            "conditions": conds,
        },
    }
