"""Shared builders for the holdout39 scenarios: Kubernetes objects as `kubectl get -o yaml`
prints them, pod logs, log-store documents and OpenMetrics samples, all on one clock.

Each story module builds a `Scenario` and calls `write(root)`. Times are absolute and
derived from the scenario's `now`, so re-running the generator writes the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any

import yaml

_ISO = re.compile(r"(\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d)")
_CLF = re.compile(r"\[(\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d)")


def ts(moment: datetime) -> str:
    """RFC 3339, seconds, Z."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def ts_ms(moment: datetime) -> str:
    return (
        moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    )


def parse(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def uid(*parts: str) -> str:
    digest = hashlib.sha1("/".join(parts).encode()).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


def suffix(seed: str, n: int = 5) -> str:
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    digest = hashlib.sha1(seed.encode()).digest()
    return "".join(alphabet[b % len(alphabet)] for b in digest[:n])


def pod_hash(seed: str) -> str:
    return suffix("rs" + seed, 10)


def _literal_str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(str, _literal_str)


def dump(data: Any) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=200)


# --------------------------------------------------------------------------- objects


def meta(
    name: str,
    namespace: str | None,
    created: datetime,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    owner: dict[str, Any] | None = None,
    kind: str = "",
) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name}
    if namespace:
        body["namespace"] = namespace
    body["uid"] = uid(kind, namespace or "", name)
    body["resourceVersion"] = str(int(hashlib.sha1(name.encode()).hexdigest()[:6], 16))
    body["creationTimestamp"] = ts(created)
    if labels:
        body["labels"] = dict(labels)
    if annotations:
        body["annotations"] = dict(annotations)
    if owner:
        body["ownerReferences"] = [owner]
    return body


def owner_ref(kind: str, name: str, namespace: str, api: str = "apps/v1") -> dict[str, Any]:
    return {
        "apiVersion": api,
        "kind": kind,
        "name": name,
        "uid": uid(kind, namespace, name),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def namespace(name: str, created: datetime, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": meta(
            name,
            None,
            created,
            {"kubernetes.io/metadata.name": name, **(labels or {})},
            kind="Namespace",
        ),
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


def node(
    name: str,
    created: datetime,
    now: datetime,
    *,
    cpu: str = "8",
    memory: str = "32Gi",
    zone: str = "a",
    region: str = "eu-west-1",
    instance: str = "m6i.2xlarge",
    ready: str = "True",
    heartbeat: datetime | None = None,
    taints: list[dict[str, Any]] | None = None,
    pressure: dict[str, str] | None = None,
    role: str = "worker",
    kubelet: str = "v1.29.8",
    unschedulable: bool = False,
    extra_labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    beat = ts(heartbeat or (now - timedelta(seconds=23)))
    since = ts(created + timedelta(minutes=2))
    pressure = pressure or {}
    conditions = []
    for kind, reason, message in (
        ("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
        ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ):
        status = pressure.get(kind, "False")
        cond = {
            "type": kind,
            "status": status,
            "lastHeartbeatTime": beat,
            "lastTransitionTime": since,
            "reason": reason,
            "message": message,
        }
        if status == "Unknown":
            cond.update(reason="NodeStatusUnknown", message="Kubelet stopped posting node status.")
        conditions.append(cond)
    ready_cond = {
        "type": "Ready",
        "status": ready,
        "lastHeartbeatTime": beat,
        "lastTransitionTime": since,
        "reason": "KubeletReady",
        "message": "kubelet is posting ready status",
    }
    if ready == "Unknown":
        ready_cond.update(
            reason="NodeStatusUnknown", message="Kubelet stopped posting node status."
        )
    conditions.append(ready_cond)
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "node.kubernetes.io/instance-type": instance,
        "topology.kubernetes.io/region": region,
        "topology.kubernetes.io/zone": f"{region}{zone}",
        f"node-role.kubernetes.io/{role}": "",
        **(extra_labels or {}),
    }
    spec: dict[str, Any] = {"providerID": f"aws:///{region}{zone}/i-0{suffix(name, 16)}"}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    allocatable_mem = memory.replace("Gi", "")
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": meta(name, None, created, labels, kind="Node"),
        "spec": spec,
        "status": {
            "capacity": {
                "cpu": cpu,
                "memory": memory,
                "pods": "58",
                "ephemeral-storage": "104845292Ki",
            },
            "allocatable": {
                "cpu": f"{int(cpu) * 1000 - 90}m",
                "memory": f"{int(allocatable_mem) * 1024 - 1700}Mi",
                "pods": "58",
                "ephemeral-storage": "95551679124",
            },
            "conditions": conditions,
            "addresses": [
                {"type": "InternalIP", "address": node_ip(name)},
                {"type": "Hostname", "address": name},
            ],
            "nodeInfo": {
                "kubeletVersion": kubelet,
                "kubeProxyVersion": kubelet,
                "containerRuntimeVersion": "containerd://1.7.20",
                "osImage": "Amazon Linux 2023",
                "operatingSystem": "linux",
                "architecture": "amd64",
                "kernelVersion": "6.1.102-111.182.amzn2023.x86_64",
            },
        },
    }


def node_ip(name: str) -> str:
    return "10." + ".".join(str(b) for b in hashlib.sha1(name.encode()).digest()[:3])


def container(
    name: str,
    image: str,
    *,
    port: int | None = None,
    cpu: str = "250m",
    memory: str = "256Mi",
    cpu_limit: str | None = None,
    memory_limit: str | None = None,
    env: list[dict[str, Any]] | None = None,
    readiness: str | None = "/healthz",
    liveness: str | None = None,
    mounts: list[dict[str, Any]] | None = None,
    args: list[str] | None = None,
    command: list[str] | None = None,
    extra_limits: dict[str, str] | None = None,
    extra_requests: dict[str, str] | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name, "image": image}
    if command:
        body["command"] = command
    if args:
        body["args"] = args
    if port:
        body["ports"] = [{"name": "http", "containerPort": port, "protocol": "TCP"}]
    if env:
        body["env"] = env
    limits: dict[str, str] = {"memory": memory_limit or memory}
    if cpu_limit:
        limits["cpu"] = cpu_limit
    limits.update(extra_limits or {})
    body["resources"] = {
        "requests": {"cpu": cpu, "memory": memory, **(extra_requests or {})},
        "limits": limits,
    }
    if readiness and port:
        body["readinessProbe"] = {
            "httpGet": {"path": readiness, "port": port},
            "periodSeconds": 10,
            "timeoutSeconds": 2,
            "failureThreshold": 3,
        }
    if liveness and port:
        body["livenessProbe"] = {
            "httpGet": {"path": liveness, "port": port},
            "initialDelaySeconds": 15,
            "periodSeconds": 20,
            "timeoutSeconds": 2,
            "failureThreshold": 3,
        }
    if mounts:
        body["volumeMounts"] = mounts
    body["imagePullPolicy"] = "IfNotPresent"
    body["terminationMessagePolicy"] = "File"
    return body


@dataclass
class Revision:
    """One ReplicaSet of a Deployment: its template, revision number and pods."""

    number: int
    containers: list[dict[str, Any]]
    created: datetime
    replicas: int
    ready: int | None = None
    template_labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    volumes: list[dict[str, Any]] = field(default_factory=list)
    change_cause: str = ""

    def hash(self, ns: str, name: str) -> str:
        return pod_hash(f"{ns}/{name}/{self.number}")


def template(
    labels: dict[str, str],
    containers: list[dict[str, Any]],
    volumes: list[dict[str, Any]] | None = None,
    annotations: dict[str, str] | None = None,
    service_account: str = "default",
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "serviceAccountName": service_account,
        "containers": containers,
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
    }
    if volumes:
        spec["volumes"] = volumes
    spec.update(extra or {})
    body: dict[str, Any] = {"metadata": {"labels": dict(labels)}, "spec": spec}
    if annotations:
        body["metadata"]["annotations"] = dict(annotations)
    return body


def deployment(
    ns: str,
    name: str,
    created: datetime,
    revisions: Sequence[Revision],
    replicas: int,
    *,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    progressing: str = "complete",
    progress_time: datetime | None = None,
    managed: list[dict[str, Any]] | None = None,
    strategy: dict[str, Any] | None = None,
    template_extra: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The Deployment and its ReplicaSets (newest revision last in `revisions`)."""
    selector = {"app.kubernetes.io/name": name}
    base_labels = {**selector, **(labels or {})}
    current = revisions[-1]
    objects: list[dict[str, Any]] = []
    ready_total = sum(r.ready if r.ready is not None else r.replicas for r in revisions)
    available = ready_total
    conditions = [
        {
            "type": "Available",
            "status": "True" if available >= max(replicas - 1, 1) else "False",
            "reason": "MinimumReplicasAvailable"
            if available >= max(replicas - 1, 1)
            else "MinimumReplicasUnavailable",
            "message": "Deployment has minimum availability."
            if available >= max(replicas - 1, 1)
            else "Deployment does not have minimum availability.",
            "lastUpdateTime": ts(current.created),
            "lastTransitionTime": ts(created),
        }
    ]
    rs_name = f"{name}-{current.hash(ns, name)}"
    when = ts(progress_time or current.created)
    if progressing == "complete":
        conditions.append(
            {
                "type": "Progressing",
                "status": "True",
                "reason": "NewReplicaSetAvailable",
                "message": f'ReplicaSet "{rs_name}" has successfully progressed.',
                "lastUpdateTime": when,
                "lastTransitionTime": ts(current.created),
            }
        )
    elif progressing == "progressing":
        conditions.append(
            {
                "type": "Progressing",
                "status": "True",
                "reason": "ReplicaSetUpdated",
                "message": f'ReplicaSet "{rs_name}" is progressing.',
                "lastUpdateTime": when,
                "lastTransitionTime": ts(current.created),
            }
        )
    else:
        conditions.append(
            {
                "type": "Progressing",
                "status": "False",
                "reason": "ProgressDeadlineExceeded",
                "message": f'ReplicaSet "{rs_name}" has timed out progressing.',
                "lastUpdateTime": when,
                "lastTransitionTime": when,
            }
        )
    dep_meta = meta(
        name,
        ns,
        created,
        base_labels,
        {"deployment.kubernetes.io/revision": str(current.number), **(annotations or {})},
        kind="Deployment",
    )
    if managed:
        dep_meta["managedFields"] = managed
    dep_meta["generation"] = current.number + 2
    objects.append(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": dep_meta,
            "spec": {
                "replicas": replicas,
                "revisionHistoryLimit": 10,
                "selector": {"matchLabels": selector},
                "strategy": strategy
                or {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
                },
                "progressDeadlineSeconds": 600,
                "template": template(
                    {**base_labels, **current.template_labels},
                    current.containers,
                    current.volumes,
                    current.annotations or None,
                    extra=template_extra,
                ),
            },
            "status": {
                "observedGeneration": current.number + 2,
                "replicas": sum(r.replicas for r in revisions),
                "updatedReplicas": current.replicas,
                "readyReplicas": ready_total,
                "availableReplicas": ready_total,
                **(
                    {"unavailableReplicas": max(replicas - ready_total, 0)}
                    if replicas > ready_total
                    else {}
                ),
                "conditions": conditions,
            },
        }
    )
    for rev in revisions:
        h = rev.hash(ns, name)
        rs_labels = {**base_labels, **rev.template_labels, "pod-template-hash": h}
        rs_ann = {
            "deployment.kubernetes.io/desired-replicas": str(replicas),
            "deployment.kubernetes.io/max-replicas": str(replicas + max(1, replicas // 4)),
            "deployment.kubernetes.io/revision": str(rev.number),
        }
        if rev.change_cause:
            rs_ann["kubernetes.io/change-cause"] = rev.change_cause
        ready = rev.ready if rev.ready is not None else rev.replicas
        objects.append(
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": meta(
                    f"{name}-{h}",
                    ns,
                    rev.created,
                    rs_labels,
                    rs_ann,
                    owner_ref("Deployment", name, ns),
                    kind="ReplicaSet",
                ),
                "spec": {
                    "replicas": rev.replicas,
                    "selector": {"matchLabels": {**selector, "pod-template-hash": h}},
                    "template": template(
                        rs_labels,
                        rev.containers,
                        rev.volumes,
                        rev.annotations or None,
                        extra=template_extra,
                    ),
                },
                "status": {
                    "replicas": rev.replicas,
                    "fullyLabeledReplicas": rev.replicas,
                    "readyReplicas": ready,
                    "availableReplicas": ready,
                    "observedGeneration": 1,
                },
            }
        )
    return objects


def running(
    started: datetime, restarts: int = 0, last: dict[str, Any] | None = None, ready: bool = True
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "ready": ready,
        "restartCount": restarts,
        "started": True,
        "state": {"running": {"startedAt": ts(started)}},
    }
    if last:
        body["lastState"] = {"terminated": last}
    return body


def terminated(
    reason: str, code: int, started: datetime, finished: datetime, message: str | None = None
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "exitCode": code,
        "reason": reason,
        "startedAt": ts(started),
        "finishedAt": ts(finished),
        "containerID": "containerd://" + hashlib.sha256(f"{reason}{started}".encode()).hexdigest(),
    }
    if message:
        body["message"] = message
    return body


def pod(
    ns: str,
    name: str,
    owner: tuple[str, str],
    node_name: str,
    containers: list[dict[str, Any]],
    statuses: list[dict[str, Any]],
    created: datetime,
    *,
    labels: dict[str, str] | None = None,
    phase: str = "Running",
    ready: bool | None = None,
    volumes: list[dict[str, Any]] | None = None,
    reason: str | None = None,
    message: str | None = None,
    deletion: datetime | None = None,
    conditions: list[dict[str, Any]] | None = None,
    annotations: dict[str, str] | None = None,
    extra_spec: dict[str, Any] | None = None,
    qos: str = "Burstable",
) -> dict[str, Any]:
    kind, owner_name = owner
    api = "batch/v1" if kind == "Job" else "apps/v1"
    body_meta = meta(
        name, ns, created, labels, annotations, owner_ref(kind, owner_name, ns, api), kind="Pod"
    )
    if deletion:
        body_meta["deletionTimestamp"] = ts(deletion)
        body_meta["deletionGracePeriodSeconds"] = 30
    full_statuses = []
    for spec, status in zip(containers, statuses, strict=True):
        full = {
            "name": spec["name"],
            "image": spec["image"],
            "imageID": f"{spec['image'].split(':')[0]}@sha256:"
            + hashlib.sha256(spec["image"].encode()).hexdigest(),
            **status,
        }
        if "containerID" not in full and "running" in (status.get("state") or {}):
            full["containerID"] = (
                "containerd://" + hashlib.sha256(f"{name}/{spec['name']}".encode()).hexdigest()
            )
        full_statuses.append(full)
    all_ready = all(s.get("ready") for s in statuses) if ready is None else ready
    start = created + timedelta(seconds=2)
    conds = conditions or [
        {"type": "Initialized", "status": "True", "lastTransitionTime": ts(start)},
        {
            "type": "Ready",
            "status": "True" if all_ready else "False",
            "lastTransitionTime": ts(start + timedelta(seconds=14)),
        },
        {
            "type": "ContainersReady",
            "status": "True" if all_ready else "False",
            "lastTransitionTime": ts(start + timedelta(seconds=14)),
        },
        {"type": "PodScheduled", "status": "True", "lastTransitionTime": ts(created)},
    ]
    if not all_ready and conditions is None:
        for c in conds[1:3]:
            c["reason"] = "ContainersNotReady"
            not_ready = [s["name"] for s in full_statuses if not s.get("ready")]
            c["message"] = f"containers with unready status: [{' '.join(not_ready)}]"
    spec: dict[str, Any] = {
        "nodeName": node_name,
        "containers": containers,
        "restartPolicy": "Always" if kind != "Job" else "Never",
        "serviceAccountName": "default",
        "dnsPolicy": "ClusterFirst",
        "terminationGracePeriodSeconds": 30,
    }
    if volumes:
        spec["volumes"] = volumes
    spec.update(extra_spec or {})
    status: dict[str, Any] = {
        "phase": phase,
        "conditions": conds,
        "hostIP": node_ip(node_name),
        "podIP": "10.244." + ".".join(str(b) for b in hashlib.sha1(name.encode()).digest()[:2]),
        "startTime": ts(start),
        "containerStatuses": full_statuses,
        "qosClass": qos,
    }
    if reason:
        status["reason"] = reason
    if message:
        status["message"] = message
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": body_meta,
        "spec": spec,
        "status": status,
    }


def service(
    ns: str,
    name: str,
    created: datetime,
    port: int,
    target: int | str | None = None,
    selector: dict[str, str] | None = None,
    cluster_ip: str | None = None,
    labels: dict[str, str] | None = None,
    port_name: str = "http",
) -> dict[str, Any]:
    ip = cluster_ip or "10.96." + ".".join(
        str(b) for b in hashlib.sha1(f"{ns}/{name}".encode()).digest()[:2]
    )
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta(
            name, ns, created, labels or {"app.kubernetes.io/name": name}, kind="Service"
        ),
        "spec": {
            "type": "ClusterIP",
            "clusterIP": ip,
            "clusterIPs": [ip],
            "selector": selector or {"app.kubernetes.io/name": name},
            "ports": [
                {"name": port_name, "port": port, "protocol": "TCP", "targetPort": target or port}
            ],
            "sessionAffinity": "None",
            "internalTrafficPolicy": "Cluster",
        },
        "status": {"loadBalancer": {}},
    }


def endpoints(
    ns: str,
    name: str,
    created: datetime,
    pods: Iterable[dict[str, Any]],
    port: int,
    not_ready: Iterable[dict[str, Any]] = (),
    port_name: str = "http",
) -> dict[str, Any]:
    def address(p: dict[str, Any]) -> dict[str, Any]:
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

    subset: dict[str, Any] = {}
    ready = [address(p) for p in pods]
    waiting = [address(p) for p in not_ready]
    if ready:
        subset["addresses"] = ready
    if waiting:
        subset["notReadyAddresses"] = waiting
    subset["ports"] = [{"name": port_name, "port": port, "protocol": "TCP"}]
    return {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": meta(name, ns, created, {"app.kubernetes.io/name": name}, kind="Endpoints"),
        "subsets": [subset] if ready or waiting else [],
    }


def configmap(
    ns: str,
    name: str,
    created: datetime,
    data: dict[str, str],
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    managed: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    body_meta = meta(name, ns, created, labels, annotations, kind="ConfigMap")
    if managed:
        body_meta["managedFields"] = managed
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": body_meta, "data": data}


def managed_field(manager: str, when: datetime, operation: str = "Apply") -> dict[str, Any]:
    return {
        "manager": manager,
        "operation": operation,
        "apiVersion": "v1",
        "time": ts(when),
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:data": {}},
    }


def event(
    ns: str,
    kind: str,
    name: str,
    reason: str,
    message: str,
    first: datetime,
    last: datetime | None = None,
    count: int = 1,
    type_: str = "Normal",
    component: str = "kubelet",
    host: str | None = None,
    api: str = "v1",
) -> dict[str, Any]:
    last = last or first
    ev_name = f"{name}.{hashlib.sha1(f'{reason}{message}{first}'.encode()).hexdigest()[:16]}"
    source: dict[str, Any] = {"component": component}
    if host:
        source["host"] = host
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": meta(ev_name, ns, first, kind="Event"),
        "involvedObject": {
            "apiVersion": api,
            "kind": kind,
            "name": name,
            **({"namespace": ns} if ns else {}),
            "uid": uid(kind, ns, name),
        },
        "reason": reason,
        "message": message,
        "type": type_,
        "count": count,
        "firstTimestamp": ts(first),
        "lastTimestamp": ts(last),
        "source": source,
        "reportingComponent": component,
        "reportingInstance": host or "",
    }


# --------------------------------------------------------------------------- metrics


class Metrics:
    """OpenMetrics families, each with its series; written grouped, samples in time order."""

    def __init__(self) -> None:
        self._families: dict[str, tuple[str, str, list[str]]] = {}

    def _family(self, name: str, kind: str, help_: str) -> list[str]:
        if name not in self._families:
            self._families[name] = (kind, help_, [])
        return self._families[name][2]

    @staticmethod
    def _labels(labels: dict[str, str]) -> str:
        inner = ",".join(f'{k}="{v}"' for k, v in labels.items())
        return "{" + inner + "}" if inner else ""

    @staticmethod
    def _num(value: float) -> str:
        if value == int(value) and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.6g}" if abs(value) < 1e-3 else f"{round(value, 6)}"

    def gauge(
        self,
        name: str,
        labels: dict[str, str],
        samples: Iterable[tuple[datetime, float]],
        help_: str = "",
    ) -> None:
        lines = self._family(name, "gauge", help_ or name.replace("_", " "))
        for moment, value in samples:
            lines.append(
                f"{name}{self._labels(labels)} {self._num(value)} {int(moment.timestamp())}"
            )

    def counter(
        self,
        family: str,
        labels: dict[str, str],
        samples: Iterable[tuple[datetime, float]],
        help_: str = "",
    ) -> None:
        lines = self._family(family, "counter", help_ or family.replace("_", " "))
        for moment, value in samples:
            lines.append(
                f"{family}_total{self._labels(labels)} {self._num(value)} {int(moment.timestamp())}"
            )

    def histogram(
        self,
        family: str,
        labels: dict[str, str],
        bounds: Sequence[float],
        samples: Iterable[tuple[datetime, Sequence[float], float]],
        help_: str = "",
    ) -> None:
        """samples: (time, cumulative counts per bound then +Inf, sum)."""
        lines = self._family(family, "histogram", help_ or family.replace("_", " "))
        rows: dict[str, list[str]] = {}
        for moment, counts, total in samples:
            stamp = int(moment.timestamp())
            for bound, count in zip([*[str(b) for b in bounds], "+Inf"], counts, strict=True):
                key = f"{family}_bucket{self._labels({**labels, 'le': bound})}"
                rows.setdefault(key, []).append(f"{key} {self._num(count)} {stamp}")
            rows.setdefault(f"{family}_sum{self._labels(labels)}", []).append(
                f"{family}_sum{self._labels(labels)} {self._num(total)} {stamp}"
            )
            rows.setdefault(f"{family}_count{self._labels(labels)}", []).append(
                f"{family}_count{self._labels(labels)} {self._num(counts[-1])} {stamp}"
            )
        for series in rows.values():
            lines.extend(series)

    def text(self) -> str:
        out = []
        for name, (kind, help_, lines) in self._families.items():
            out.append(f"# HELP {name} {help_}")
            out.append(f"# TYPE {name} {kind}")
            out.extend(lines)
        out.append("# EOF")
        return "\n".join(out) + "\n"

    def __bool__(self) -> bool:
        return bool(self._families)


def steps(start: datetime, end: datetime, every: int = 60) -> list[datetime]:
    out = []
    moment = start
    while moment <= end:
        out.append(moment)
        moment += timedelta(seconds=every)
    return out


def cumulative(
    times: Sequence[datetime], rate_at: Any, start: float = 0.0, every: int = 60
) -> list[tuple[datetime, float]]:
    """A counter from a per-second rate function of time."""
    value = start
    out = []
    for moment in times:
        out.append((moment, round(value, 3)))
        value += max(rate_at(moment), 0.0) * every
    return out


def histogram_samples(
    times: Sequence[datetime],
    rate_at: Any,
    shape_at: Any,
    bounds: Sequence[float],
    every: int = 60,
) -> list[tuple[datetime, list[float], float]]:
    """Cumulative bucket counters: rate_at(t) req/s; shape_at(t) fractions at or under each
    bound (non-decreasing, last bound's fraction < 1 allowed; +Inf is 1)."""
    counts = [0.0] * (len(bounds) + 1)
    total = 0.0
    out = []
    for moment in times:
        out.append((moment, [round(c) for c in counts], round(total, 3)))
        n = max(rate_at(moment), 0.0) * every
        fractions = [*shape_at(moment), 1.0]
        for i, frac in enumerate(fractions):
            counts[i] += n * frac
        mids = [bounds[0] / 2, *[(a + b) / 2 for a, b in pairwise(bounds)], bounds[-1] * 1.5]
        prev = 0.0
        for frac, mid in zip(fractions, mids, strict=True):
            total += n * (frac - prev) * mid
            prev = frac
    return out


# --------------------------------------------------------------------------- scenario


@dataclass
class Scenario:
    id: str
    title: str
    now: datetime
    report: str
    truth: dict[str, Any]
    interventions: list[dict[str, Any]] = field(default_factory=list)
    objects: list[dict[str, Any]] = field(default_factory=list)
    pod_logs: dict[tuple[str, str, str, bool], list[str]] = field(default_factory=dict)
    docs: list[dict[str, Any]] = field(default_factory=list)
    metrics: Metrics = field(default_factory=Metrics)
    rng: random.Random = field(default_factory=lambda: random.Random(39))

    def add(self, *objects: dict[str, Any] | list[dict[str, Any]]) -> None:
        for obj in objects:
            if isinstance(obj, list):
                self.objects.extend(obj)
            else:
                self.objects.append(obj)

    def log(
        self, ns: str, pod_name: str, container_name: str, line: str, previous: bool = False
    ) -> None:
        self.pod_logs.setdefault((ns, pod_name, container_name, previous), []).append(line)

    @staticmethod
    def _line_time(line: str) -> datetime | None:
        found = _ISO.search(line)
        if found:
            return parse(found.group(1).replace(" ", "T").replace(",", ".")[:19] + "Z")
        found = _CLF.search(line)
        if found:
            return datetime.strptime(found.group(1), "%d/%b/%Y:%H:%M:%S").replace(tzinfo=UTC)
        return None

    def _sorted(self, lines: list[str]) -> list[str]:
        """Lines in time order (each line's own stamp; an unstamped line follows the last)."""
        keyed = []
        last = datetime.min.replace(tzinfo=UTC)
        for seq, line in enumerate(lines):
            last = self._line_time(line) or last
            keyed.append((last, seq, line))
        return [line for *_, line in sorted(keyed)]

    def doc(
        self,
        moment: datetime,
        ns: str,
        pod_name: str,
        container_name: str,
        service: str,
        level: str,
        message: str,
        **extra: Any,
    ) -> None:
        body: dict[str, Any] = {
            "@timestamp": ts_ms(moment),
            "message": message,
            "log.level": level,
            "service.name": service,
            "kubernetes.namespace": ns,
            "kubernetes.pod.name": pod_name,
            "kubernetes.container.name": container_name,
        }
        body.update(extra)
        self.docs.append(body)

    def write(self, root: Path) -> None:
        folder = root / self.id
        if folder.exists():
            for path in sorted(folder.rglob("*"), reverse=True):
                if path.is_file():
                    path.unlink()
                else:
                    path.rmdir()
        folder.mkdir(parents=True, exist_ok=True)
        header: dict[str, Any] = {
            "id": self.id,
            "title": self.title,
            "now": ts(self.now),
            "report": self.report.strip() + "\n",
            "truth": self.truth,
        }
        if self.interventions:
            header["interventions"] = self.interventions
        (folder / "scenario.yaml").write_text(dump(header))
        for obj in self.objects:
            if "status" in obj:
                obj["status"] = _clamp(obj["status"], self.now - timedelta(days=6, hours=20))
        (folder / "cluster.yaml").write_text("---\n".join(dump(o) for o in self.objects))
        for (ns, pod_name, cont, previous), lines in sorted(self.pod_logs.items()):
            path = (
                folder
                / "pod-logs"
                / ns
                / pod_name
                / (f"{cont}.previous.log" if previous else f"{cont}.log")
            )
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("\n".join(self._sorted(lines)) + "\n")
        if self.docs:
            late = [d for d in self.docs if parse(d["@timestamp"]) > self.now]
            self.docs = [d for d in self.docs if d not in late]
            docs = sorted(self.docs, key=lambda d: d["@timestamp"])
            (folder / "logs.ndjson").write_text(
                "".join(json.dumps(d, separators=(",", ":")) + "\n" for d in docs)
            )
        if self.metrics:
            (folder / "metrics.om").write_text(self.metrics.text())


def pods_for(
    sc: Scenario,
    ns: str,
    name: str,
    rev: Revision,
    nodes: Sequence[str],
    started: datetime,
    count: int | None = None,
    statuses: Any = None,
    seed: str = "",
) -> list[dict[str, Any]]:
    """The pods of one revision, spread over `nodes`; statuses(i, spec) overrides each
    container's status (default: running since `started`, ready)."""
    h = rev.hash(ns, name)
    labels = {"app.kubernetes.io/name": name, **rev.template_labels, "pod-template-hash": h}
    made = []
    for i in range(rev.replicas if count is None else count):
        pod_name = f"{name}-{h}-{suffix(f'{ns}/{name}/{rev.number}/{i}{seed}')}"
        started_i = started + timedelta(seconds=17 * i)
        if statuses is None:
            st = [running(started_i) for _ in rev.containers]
        else:
            st = statuses(i, started_i)
        made.append(
            pod(
                ns,
                pod_name,
                ("ReplicaSet", f"{name}-{h}"),
                nodes[i % len(nodes)],
                rev.containers,
                st,
                max(started_i - timedelta(seconds=3), rev.created + timedelta(seconds=1)),
                labels=labels,
                volumes=rev.volumes or None,
            )
        )
    sc.add(made)
    return made


def simple_service(
    sc: Scenario,
    ns: str,
    name: str,
    image: str,
    *,
    replicas: int,
    nodes: Sequence[str],
    created: datetime,
    rolled: datetime,
    port: int = 8080,
    number: int = 3,
    cpu: str = "200m",
    memory: str = "256Mi",
    memory_limit: str | None = None,
    cpu_limit: str | None = None,
    env: list[dict[str, Any]] | None = None,
    volumes: list[dict[str, Any]] | None = None,
    mounts: list[dict[str, Any]] | None = None,
    expose: bool = True,
    labels: dict[str, str] | None = None,
    extra_containers: list[dict[str, Any]] | None = None,
    readiness: str | None = "/healthz",
) -> tuple[Revision, list[dict[str, Any]]]:
    """A healthy Deployment with one live revision (and an older, scaled-down one), its
    pods, and a Service with Endpoints."""
    main = container(
        name,
        image,
        port=port,
        cpu=cpu,
        memory=memory,
        memory_limit=memory_limit,
        cpu_limit=cpu_limit,
        env=env,
        mounts=mounts,
        readiness=readiness,
        liveness=readiness,
    )
    containers = [main, *(extra_containers or [])]
    old_image = image.rsplit(":", 1)[0] + ":" + _older(image.rsplit(":", 1)[-1])
    old = Revision(
        number - 1,
        [{**main, "image": old_image}, *(extra_containers or [])],
        rolled - timedelta(days=9, hours=3),
        0,
        volumes=volumes or [],
    )
    rev = Revision(number, containers, rolled, replicas, volumes=volumes or [])
    sc.add(deployment(ns, name, created, [old, rev], replicas, labels=labels))
    made = pods_for(sc, ns, name, rev, nodes, rolled + timedelta(seconds=5))
    if expose:
        sc.add(service(ns, name, created, port), endpoints(ns, name, created, made, port))
    return rev, made


def _older(tag: str) -> str:
    parts = tag.split(".")
    for i in range(len(parts) - 1, -1, -1):
        digits = "".join(ch for ch in parts[i] if ch.isdigit())
        if digits and int(digits) > 0 and digits == parts[i]:
            parts[i] = str(int(digits) - 1)
            return ".".join(parts)
    return tag + "-prev"


_TIME_KEYS = ("lastTransitionTime", "lastUpdateTime", "lastHeartbeatTime", "lastProbeTime")


def _clamp(node: Any, floor: datetime) -> Any:
    """Status condition times no older than the scenario's week (the format's window): a
    condition that has held for months is shown as having held since the floor."""
    if isinstance(node, dict):
        return {
            k: (
                ts(floor)
                if k in _TIME_KEYS and isinstance(v, str) and parse(v) < floor
                else _clamp(v, floor)
            )
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_clamp(v, floor) for v in node]
    return node
