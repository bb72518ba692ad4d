"""Shared helpers for the holdout49 generator: times, Kubernetes objects, logs, metrics.

Everything is deterministic: randomness comes from `random.Random(seed)` per scenario.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
HASH_CHARS = "bcdfghjklmnpqrstvwxz2456789"


def parse(ts: str) -> datetime:
    return datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def iso(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_ms(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def token(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(HASH_CHARS) for _ in range(n))


def hexid(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


class _Dumper(yaml.SafeDumper):
    pass


def _str_presenter(dumper: yaml.SafeDumper, data: str) -> Any:
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


_Dumper.add_representer(str, _str_presenter)


def dump_yaml(doc: Any) -> str:
    return yaml.dump(doc, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=1000)


# --------------------------------------------------------------------------- objects


def meta(
    name: str,
    namespace: str | None,
    created: datetime,
    labels: dict | None = None,
    annotations: dict | None = None,
    owner: dict | None = None,
    uid_rng: random.Random | None = None,
) -> dict:
    m: dict[str, Any] = {"name": name}
    if namespace:
        m["namespace"] = namespace
    m["creationTimestamp"] = iso(created)
    if labels:
        m["labels"] = dict(labels)
    if annotations:
        m["annotations"] = dict(annotations)
    if owner:
        m["ownerReferences"] = [owner]
    if uid_rng is not None:
        m["uid"] = uuid(uid_rng)
    return m


def uuid(rng: random.Random) -> str:
    h = hexid(rng, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"


def namespace(name: str, created: datetime, labels: dict | None = None) -> dict:
    lab = {"kubernetes.io/metadata.name": name}
    lab.update(labels or {})
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": meta(name, None, created, lab),
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


def node(
    name: str,
    created: datetime,
    now: datetime,
    *,
    labels: dict | None = None,
    taints: list | None = None,
    cpu: str = "4",
    memory_ki: int = 16203840,
    pods: str = "58",
    ephemeral_ki: int = 104845292,
    extra_capacity: dict | None = None,
    conditions: dict | None = None,
    ip: str = "10.0.0.1",
    kubelet: str = "v1.29.6-eks-1552ad0",
    heartbeat: datetime | None = None,
    zone: str = "eu-west-1a",
    instance_type: str = "m6i.xlarge",
    pressure_since: dict | None = None,
) -> dict:
    hb = heartbeat or (now - timedelta(seconds=37))
    lab = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": instance_type,
        "topology.kubernetes.io/region": zone[:-1],
        "topology.kubernetes.io/zone": zone,
    }
    lab.update(labels or {})
    cap = {
        "cpu": cpu,
        "ephemeral-storage": f"{ephemeral_ki}Ki",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": f"{memory_ki}Ki",
        "pods": pods,
    }
    alloc_cpu = f"{int(float(cpu) * 1000) - 90}m"
    alloc = {
        "cpu": alloc_cpu,
        "ephemeral-storage": str(int(ephemeral_ki * 1024 * 0.9)),
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": f"{memory_ki - 1001000}Ki",
        "pods": pods,
    }
    if extra_capacity:
        cap.update(extra_capacity)
        alloc.update(extra_capacity)
    conds_state = {
        "MemoryPressure": "False",
        "DiskPressure": "False",
        "PIDPressure": "False",
        "Ready": "True",
    }
    conds_state.update(conditions or {})
    since = pressure_since or {}
    reasons = {
        ("MemoryPressure", "False"): (
            "KubeletHasSufficientMemory",
            "kubelet has sufficient memory available",
        ),
        ("MemoryPressure", "True"): (
            "KubeletHasInsufficientMemory",
            "kubelet has insufficient memory available",
        ),
        ("DiskPressure", "False"): ("KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        ("DiskPressure", "True"): ("KubeletHasDiskPressure", "kubelet has disk pressure"),
        ("PIDPressure", "False"): (
            "KubeletHasSufficientPID",
            "kubelet has sufficient PID available",
        ),
        ("PIDPressure", "True"): (
            "KubeletHasInsufficientPID",
            "kubelet has insufficient PID available",
        ),
        ("Ready", "True"): ("KubeletReady", "kubelet is posting ready status"),
        ("Ready", "False"): ("KubeletNotReady", "container runtime is down"),
    }
    conds = []
    for ctype in ("MemoryPressure", "DiskPressure", "PIDPressure", "Ready"):
        st = conds_state[ctype]
        reason, msg = reasons[(ctype, st)]
        trans = since.get(
            ctype, max(created + timedelta(minutes=1), now - timedelta(days=5, hours=3, minutes=12))
        )
        conds.append(
            {
                "lastHeartbeatTime": iso(hb),
                "lastTransitionTime": iso(trans),
                "message": msg,
                "reason": reason,
                "status": st,
                "type": ctype,
            }
        )
    spec: dict[str, Any] = {
        "providerID": f"aws:///{zone}/i-0{hashlib.sha1(name.encode()).hexdigest()[:16]}"
    }
    if taints:
        spec["taints"] = taints
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": meta(
            name,
            None,
            created,
            lab,
            {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
        ),
        "spec": spec,
        "status": {
            "addresses": [
                {"address": ip, "type": "InternalIP"},
                {"address": name, "type": "Hostname"},
                {"address": name, "type": "InternalDNS"},
            ],
            "allocatable": alloc,
            "capacity": cap,
            "conditions": conds,
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "architecture": "amd64",
                "bootID": "",
                "containerRuntimeVersion": "containerd://1.7.11",
                "kernelVersion": "6.1.97-104.177.amzn2023.x86_64",
                "kubeProxyVersion": kubelet,
                "kubeletVersion": kubelet,
                "machineID": "",
                "operatingSystem": "linux",
                "osImage": "Amazon Linux 2023.5.20240722",
                "systemUUID": "",
            },
        },
    }


@dataclass
class Container:
    name: str
    image: str
    ports: list = field(default_factory=list)
    env: list = field(default_factory=list)
    resources: dict = field(default_factory=dict)
    readiness: dict | None = None
    liveness: dict | None = None
    args: list | None = None
    command: list | None = None
    volume_mounts: list = field(default_factory=list)

    def spec(self) -> dict:
        c: dict[str, Any] = {"name": self.name, "image": self.image}
        if self.command:
            c["command"] = self.command
        if self.args:
            c["args"] = self.args
        if self.env:
            c["env"] = self.env
        if self.ports:
            c["ports"] = self.ports
        if self.resources:
            c["resources"] = self.resources
        if self.liveness:
            c["livenessProbe"] = self.liveness
        if self.readiness:
            c["readinessProbe"] = self.readiness
        if self.volume_mounts:
            c["volumeMounts"] = self.volume_mounts
        c["imagePullPolicy"] = "IfNotPresent"
        c["terminationMessagePath"] = "/dev/termination-log"
        c["terminationMessagePolicy"] = "File"
        return c


def env(**kv: str) -> list:
    return [{"name": k, "value": v} for k, v in kv.items()]


def resources(
    cpu_req: str,
    mem_req: str,
    cpu_lim: str | None = None,
    mem_lim: str | None = None,
    extra: dict | None = None,
) -> dict:
    r: dict[str, Any] = {"requests": {"cpu": cpu_req, "memory": mem_req}}
    lim = {}
    if cpu_lim:
        lim["cpu"] = cpu_lim
    if mem_lim:
        lim["memory"] = mem_lim
    if extra:
        lim.update(extra)
        r["requests"].update(extra)
    if lim:
        r["limits"] = lim
    return r


def http_probe(
    path: str,
    port: Any,
    scheme: str = "HTTP",
    delay: int = 5,
    period: int = 10,
    timeout: int = 1,
    failure: int = 3,
) -> dict:
    get: dict[str, Any] = {"path": path, "port": port, "scheme": scheme}
    return {
        "failureThreshold": failure,
        "httpGet": get,
        "initialDelaySeconds": delay,
        "periodSeconds": period,
        "successThreshold": 1,
        "timeoutSeconds": timeout,
    }


def template(
    labels: dict,
    containers: list[Container],
    *,
    annotations: dict | None = None,
    node_selector: dict | None = None,
    tolerations: list | None = None,
    volumes: list | None = None,
    service_account: str = "default",
    init_containers: list[Container] | None = None,
    affinity: dict | None = None,
) -> dict:
    m: dict[str, Any] = {"labels": dict(labels)}
    if annotations:
        m["annotations"] = dict(annotations)
    spec: dict[str, Any] = {}
    if affinity:
        spec["affinity"] = affinity
    spec["containers"] = [c.spec() for c in containers]
    if init_containers:
        spec["initContainers"] = [c.spec() for c in init_containers]
    spec.update(
        {
            "dnsPolicy": "ClusterFirst",
            "restartPolicy": "Always",
            "schedulerName": "default-scheduler",
            "securityContext": {},
            "serviceAccountName": service_account,
            "terminationGracePeriodSeconds": 30,
        }
    )
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    if tolerations:
        spec["tolerations"] = tolerations
    if volumes:
        spec["volumes"] = volumes
    return {"metadata": m, "spec": spec}


def deployment(
    name: str,
    ns: str,
    created: datetime,
    tmpl: dict,
    *,
    replicas: int,
    revision: int,
    status: dict,
    labels: dict | None = None,
    annotations: dict | None = None,
    strategy: dict | None = None,
    progress_deadline: int = 600,
) -> dict:
    ann = {"deployment.kubernetes.io/revision": str(revision)}
    ann.update(annotations or {})
    sel = {
        k: v
        for k, v in tmpl["metadata"]["labels"].items()
        if k in ("app", "app.kubernetes.io/name", "app.kubernetes.io/instance")
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta(name, ns, created, labels or tmpl["metadata"]["labels"], ann)
        | {"generation": revision + 2},
        "spec": {
            "progressDeadlineSeconds": progress_deadline,
            "replicas": replicas,
            "revisionHistoryLimit": 10,
            "selector": {"matchLabels": sel},
            "strategy": strategy
            or {
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
                "type": "RollingUpdate",
            },
            "template": tmpl,
        },
        "status": status,
    }


def deploy_status(
    replicas: int,
    ready: int,
    updated: int,
    *,
    available: int | None = None,
    gen: int,
    conditions: list,
    unavailable: int = 0,
) -> dict:
    s: dict[str, Any] = {
        "availableReplicas": ready if available is None else available,
        "conditions": conditions,
        "observedGeneration": gen,
        "readyReplicas": ready,
        "replicas": replicas,
        "updatedReplicas": updated,
    }
    if unavailable:
        s["unavailableReplicas"] = unavailable
    if s["readyReplicas"] == 0:
        del s["readyReplicas"]
    if s["availableReplicas"] == 0:
        del s["availableReplicas"]
    return s


def cond(
    ctype: str,
    status: str,
    reason: str,
    message: str,
    update: datetime,
    transition: datetime | None = None,
) -> dict:
    return {
        "lastTransitionTime": iso(transition or update),
        "lastUpdateTime": iso(update),
        "message": message,
        "reason": reason,
        "status": status,
        "type": ctype,
    }


def healthy_deploy_conditions(name: str, rs: str, created: datetime, updated: datetime) -> list:
    return [
        cond(
            "Available",
            "True",
            "MinimumReplicasAvailable",
            "Deployment has minimum availability.",
            updated,
            created,
        ),
        cond(
            "Progressing",
            "True",
            "NewReplicaSetAvailable",
            f'ReplicaSet "{rs}" has successfully progressed.',
            updated,
            created,
        ),
    ]


def replicaset(
    deploy: dict,
    hash_: str,
    created: datetime,
    tmpl: dict,
    *,
    replicas: int,
    ready: int,
    revision: int,
    available: int | None = None,
) -> dict:
    name = f"{deploy['metadata']['name']}-{hash_}"
    ns = deploy["metadata"]["namespace"]
    labels = dict(tmpl["metadata"]["labels"]) | {"pod-template-hash": hash_}
    t = json.loads(json.dumps(tmpl))
    t["metadata"]["labels"] = labels
    sel = dict(deploy["spec"]["selector"]["matchLabels"]) | {"pod-template-hash": hash_}
    status: dict[str, Any] = {
        "fullyLabeledReplicas": replicas,
        "observedGeneration": 1,
        "replicas": replicas,
    }
    if ready:
        status["readyReplicas"] = ready
        status["availableReplicas"] = ready if available is None else available
    if replicas == 0:
        status = {"observedGeneration": 2, "replicas": 0}
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": meta(
            name,
            ns,
            created,
            labels,
            {
                "deployment.kubernetes.io/desired-replicas": str(deploy["spec"]["replicas"]),
                "deployment.kubernetes.io/max-replicas": str(deploy["spec"]["replicas"] + 1),
                "deployment.kubernetes.io/revision": str(revision),
            },
            {
                "apiVersion": "apps/v1",
                "blockOwnerDeletion": True,
                "controller": True,
                "kind": "Deployment",
                "name": deploy["metadata"]["name"],
            },
        ),
        "spec": {"replicas": replicas, "selector": {"matchLabels": sel}, "template": t},
        "status": status,
    }


def running(started: datetime) -> dict:
    return {"running": {"startedAt": iso(started)}}


def terminated(reason: str, code: int, started: datetime, finished: datetime) -> dict:
    return {
        "terminated": {
            "containerID": "",
            "exitCode": code,
            "finishedAt": iso(finished),
            "reason": reason,
            "startedAt": iso(started),
        }
    }


def cstatus(
    c: Container,
    *,
    ready: bool,
    state: dict,
    restarts: int = 0,
    last: dict | None = None,
    started: bool | None = None,
    rng: random.Random | None = None,
) -> dict:
    r = rng or random.Random(c.name)
    s: dict[str, Any] = {
        "containerID": f"containerd://{hexid(r, 64)}",
        "image": c.image,
        "imageID": f"{c.image.split(':')[0]}@sha256:{hexid(r, 64)}",
        "lastState": last or {},
        "name": c.name,
        "ready": ready,
        "restartCount": restarts,
        "started": (("running" in state) if started is None else started),
        "state": state,
    }
    if "terminated" in (last or {}):
        s["lastState"]["terminated"]["containerID"] = f"containerd://{hexid(r, 64)}"
    return s


def pod(
    name: str,
    ns: str,
    owner_kind: str,
    owner_name: str,
    tmpl: dict,
    created: datetime,
    *,
    node_name: str | None,
    pod_ip: str | None,
    host_ip: str | None,
    statuses: list | None,
    phase: str = "Running",
    ready: bool = True,
    extra_labels: dict | None = None,
    conditions: list | None = None,
    status_extra: dict | None = None,
    extra_containers: list[Container] | None = None,
    init_statuses: list | None = None,
    extra_init: list[Container] | None = None,
) -> dict:
    t = json.loads(json.dumps(tmpl))
    labels = dict(t["metadata"]["labels"]) | (extra_labels or {})
    spec = t["spec"]
    if extra_containers:
        spec["containers"] = spec["containers"] + [c.spec() for c in extra_containers]
    if extra_init:
        spec["initContainers"] = [c.spec() for c in extra_init] + spec.get("initContainers", [])
    if node_name:
        spec["nodeName"] = node_name
    spec.setdefault("tolerations", [])
    spec["tolerations"] = spec["tolerations"] + [
        {
            "effect": "NoExecute",
            "key": "node.kubernetes.io/not-ready",
            "operator": "Exists",
            "tolerationSeconds": 300,
        },
        {
            "effect": "NoExecute",
            "key": "node.kubernetes.io/unreachable",
            "operator": "Exists",
            "tolerationSeconds": 300,
        },
    ]
    spec["priority"] = 0
    spec["enableServiceLinks"] = True
    spec["preemptionPolicy"] = "PreemptLowerPriority"
    m = meta(
        name,
        ns,
        created,
        labels,
        t["metadata"].get("annotations"),
        {
            "apiVersion": "apps/v1" if owner_kind != "Job" else "batch/v1",
            "blockOwnerDeletion": True,
            "controller": True,
            "kind": owner_kind,
            "name": owner_name,
        },
    )
    status: dict[str, Any] = {"phase": phase}
    if conditions is None:
        rt = iso(created + timedelta(seconds=14))
        conditions = [
            {
                "lastProbeTime": None,
                "lastTransitionTime": iso(created + timedelta(seconds=2)),
                "status": "True",
                "type": "Initialized",
            },
            {
                "lastProbeTime": None,
                "lastTransitionTime": rt,
                "status": "True" if ready else "False",
                "type": "Ready",
            },
            {
                "lastProbeTime": None,
                "lastTransitionTime": rt,
                "status": "True" if ready else "False",
                "type": "ContainersReady",
            },
            {
                "lastProbeTime": None,
                "lastTransitionTime": iso(created),
                "status": "True",
                "type": "PodScheduled",
            },
        ]
        if not ready:
            for c in conditions:
                if c["type"] in ("Ready", "ContainersReady"):
                    names = [s["name"] for s in (statuses or []) if not s["ready"]]
                    c["reason"] = "ContainersNotReady"
                    c["message"] = f"containers with unready status: [{' '.join(names)}]"
    status["conditions"] = conditions
    if host_ip:
        status["hostIP"] = host_ip
        status["hostIPs"] = [{"ip": host_ip}]
    if pod_ip:
        status["podIP"] = pod_ip
        status["podIPs"] = [{"ip": pod_ip}]
    if statuses is not None:
        status["containerStatuses"] = statuses
    if init_statuses:
        status["initContainerStatuses"] = init_statuses
    status["qosClass"] = "Burstable"
    if node_name:
        status["startTime"] = iso(created + timedelta(seconds=1))
    status.update(status_extra or {})
    return {"apiVersion": "v1", "kind": "Pod", "metadata": m, "spec": spec, "status": status}


def service(
    name: str,
    ns: str,
    created: datetime,
    selector: dict,
    ports: list,
    cluster_ip: str,
    labels: dict | None = None,
    annotations: dict | None = None,
) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta(name, ns, created, labels or {"app": name}, annotations),
        "spec": {
            "clusterIP": cluster_ip,
            "clusterIPs": [cluster_ip],
            "internalTrafficPolicy": "Cluster",
            "ipFamilies": ["IPv4"],
            "ipFamilyPolicy": "SingleStack",
            "ports": ports,
            "selector": selector,
            "sessionAffinity": "None",
            "type": "ClusterIP",
        },
        "status": {"loadBalancer": {}},
    }


def sport(port: int, target: Any, name: str = "http", protocol: str = "TCP") -> dict:
    return {"name": name, "port": port, "protocol": protocol, "targetPort": target}


def endpoints(
    name: str,
    ns: str,
    created: datetime,
    pods: list[dict],
    ports: list,
    not_ready: list[dict] | None = None,
) -> dict:
    def addr(p: dict) -> dict:
        return {
            "ip": p["status"]["podIP"],
            "nodeName": p["spec"]["nodeName"],
            "targetRef": {"kind": "Pod", "name": p["metadata"]["name"], "namespace": ns},
        }

    subset: dict[str, Any] = {}
    if pods:
        subset["addresses"] = [addr(p) for p in pods]
    if not_ready:
        subset["notReadyAddresses"] = [addr(p) for p in not_ready]
    subset["ports"] = ports
    return {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": meta(name, ns, created, {"app": name}),
        "subsets": [subset] if (pods or not_ready) else [],
    }


def event(
    ns: str,
    kind: str,
    name: str,
    reason: str,
    message: str,
    first: datetime,
    last: datetime,
    *,
    count: int = 1,
    type_: str = "Normal",
    component: str = "kubelet",
    host: str | None = None,
    api_version: str = "v1",
    field_path: str | None = None,
    rng: random.Random | None = None,
) -> dict:
    r = rng or random.Random(f"{name}{reason}{first}{message}")
    io: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "name": name}
    if ns:
        io["namespace"] = ns
    if field_path:
        io["fieldPath"] = field_path
    src: dict[str, Any] = {"component": component}
    if host:
        src["host"] = host
    ev_ns = ns or "default"
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": f"{name}.{hexid(r, 16)}",
            "namespace": ev_ns,
            "creationTimestamp": iso(first),
        },
        "involvedObject": io,
        "reason": reason,
        "message": message,
        "type": type_,
        "count": count,
        "firstTimestamp": iso(first),
        "lastTimestamp": iso(last),
        "source": src,
        "reportingComponent": component if component != "kubelet" else "kubelet",
        "reportingInstance": host or "",
    }


def configmap(
    name: str, ns: str, created: datetime, data: dict, labels: dict | None = None
) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": meta(name, ns, created, labels),
        "data": data,
    }


# --------------------------------------------------------------------------- logs


class Logs:
    def __init__(self) -> None:
        self.docs: list[tuple[datetime, dict]] = []

    def add(
        self,
        at: datetime,
        service: str,
        ns: str,
        pod: str,
        container: str,
        level: str,
        message: str,
        **extra: Any,
    ) -> None:
        d: dict[str, Any] = {
            "@timestamp": iso_ms(at),
            "message": message,
            "log.level": level,
            "service.name": service,
            "kubernetes.namespace": ns,
            "kubernetes.pod.name": pod,
            "kubernetes.container.name": container,
        }
        d.update(extra)
        self.docs.append((at, d))

    def text(self) -> str:
        self.docs.sort(key=lambda x: x[0])
        return "".join(json.dumps(d, separators=(",", ":")) + "\n" for _, d in self.docs)


# --------------------------------------------------------------------------- metrics


class Metrics:
    """OpenMetrics families, each written contiguously; samples in time order per series."""

    def __init__(self) -> None:
        self.families: dict[str, dict] = {}

    def _fam(self, name: str, type_: str, help_: str, unit: str | None = None) -> dict:
        if name not in self.families:
            self.families[name] = {"type": type_, "help": help_, "series": [], "unit": unit}
        return self.families[name]

    def gauge(
        self, name: str, help_: str, labels: dict, points: Iterable[tuple[int, float]]
    ) -> None:
        self._fam(name, "gauge", help_)["series"].append(
            (labels, [(name, {}, t, v) for t, v in points])
        )

    def counter(
        self, name: str, help_: str, labels: dict, points: Iterable[tuple[int, float]]
    ) -> None:
        """`name` is the family name, without `_total`."""
        self._fam(name, "counter", help_)["series"].append(
            (labels, [(name + "_total", {}, t, v) for t, v in points])
        )

    def histogram(
        self,
        name: str,
        help_: str,
        labels: dict,
        buckets: list[float],
        points: Iterable[tuple[int, list[float], float]],
    ) -> None:
        """points: (ts, cumulative counts per bucket incl. +Inf as the last, sum)."""
        samples = []
        for t, counts, total in points:
            les = [repr_le(b) for b in buckets] + ["+Inf"]
            for le, c in zip(les, counts, strict=False):
                samples.append((name + "_bucket", {"le": le}, t, c))
            samples.append((name + "_count", {}, t, counts[-1]))
            samples.append((name + "_sum", {}, t, total))
        self._fam(name, "histogram", help_)["series"].append((labels, samples))

    def text(self) -> str:
        out = []
        for name, f in self.families.items():
            out.append(f"# TYPE {name} {f['type']}")
            out.append(f"# HELP {name} {f['help']}")
            for labels, samples in f["series"]:
                for sname, extra, t, v in samples:
                    lab = dict(labels) | extra
                    ls = ",".join(f'{k}="{v2}"' for k, v2 in lab.items())
                    out.append(f"{sname}{{{ls}}} {fmt(v)} {int(t)}")
        out.append("# EOF")
        return "\n".join(out) + "\n"


def repr_le(b: float) -> str:
    return repr(float(b))


def fmt(v: float) -> str:
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer() and abs(v) < 1e15):
        return str(int(v))
    return f"{v:.6g}" if abs(v) < 1e-3 else f"{round(v, 6)}"


def times(now: datetime, hours: float, step: int = 60) -> list[int]:
    end = int(now.timestamp())
    end -= end % step
    n = int(hours * 3600 // step)
    return [end - step * (n - i) for i in range(n + 1)]


def cumulate(
    ts: list[int], rate: Callable[[int], float], start: float = 0.0, step: int = 60
) -> list[tuple[int, float]]:
    """A counter from a per-second rate function."""
    out = []
    v = start
    prev = None
    for t in ts:
        if prev is not None:
            v += max(0.0, rate(t)) * (t - prev)
        out.append((t, round(v, 3)))
        prev = t
    return out


def hist_points(
    ts: list[int],
    buckets: list[float],
    rate: Callable[[int], float],
    quantile_fn: Callable[[int], tuple[float, float]],
    rng: random.Random,
) -> list[tuple[int, list[float], float]]:
    """A latency histogram from a rate and (median, p99) per time, log-normal-ish."""
    counts = [0.0] * (len(buckets) + 1)
    total = 0.0
    out = []
    prev = None
    for t in ts:
        if prev is not None:
            n = max(0.0, rate(t)) * (t - prev)
            med, p99 = quantile_fn(t)
            sigma = max(0.05, math.log(max(p99, med * 1.01) / med) / 2.326)
            for i, b in enumerate(buckets):
                z = (math.log(b) - math.log(med)) / sigma
                frac = 0.5 * (1 + math.erf(z / math.sqrt(2)))
                counts[i] += round(n * frac)
            counts[-1] += round(n)
            # keep cumulative monotonic across buckets
            for i in range(1, len(counts)):
                if counts[i] < counts[i - 1]:
                    counts[i] = counts[i - 1]
            total += n * med * math.exp(sigma * sigma / 2)
        out.append((t, [float(c) for c in counts], round(total, 3)))
        prev = t
    return out


def smooth(t: int, t0: int, t1: int, a: float, b: float) -> float:
    """a before t0, b after t1, linear between."""
    if t <= t0:
        return a
    if t >= t1:
        return b
    return a + (b - a) * (t - t0) / (t1 - t0)


# --------------------------------------------------------------------------- writing


@dataclass
class Scenario:
    id: str
    title: str
    now: datetime
    report: str
    truth: dict
    objects: list = field(default_factory=list)
    logs: Logs = field(default_factory=Logs)
    metrics: Metrics = field(default_factory=Metrics)
    pod_logs: dict = field(default_factory=dict)  # (ns, pod, container, previous) -> text
    interventions: list | None = None

    def add(self, *objs: dict) -> None:
        self.objects.extend(objs)

    def pod_log(
        self, ns: str, pod: str, container: str, lines: list[str], previous: bool = False
    ) -> None:
        self.pod_logs[(ns, pod, container, previous)] = "\n".join(lines) + "\n"

    def write(self) -> None:
        d = ROOT / self.id
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
        sc: dict[str, Any] = {
            "id": self.id,
            "title": self.title,
            "now": iso(self.now),
            "report": self.report,
            "truth": self.truth,
        }
        if self.interventions:
            sc["interventions"] = self.interventions
        (d / "scenario.yaml").write_text(dump_yaml(sc))
        (d / "cluster.yaml").write_text("---\n".join(dump_yaml(o) for o in self.objects))
        self.logs.docs = [x for x in self.logs.docs if x[0] <= self.now]
        if self.logs.docs:
            (d / "logs.ndjson").write_text(self.logs.text())
        if self.metrics.families:
            (d / "metrics.om").write_text(self.metrics.text())
        for (ns, p, c, prev), text in sorted(self.pod_logs.items()):
            text = order_log(text, self.now)
            f = d / "pod-logs" / ns / p / (f"{c}.previous.log" if prev else f"{c}.log")
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(text)


@dataclass
class App:
    deploy: dict
    rs: list
    pods: list
    objects: list

    @property
    def pod_names(self) -> list[str]:
        return [p["metadata"]["name"] for p in self.pods]


def app(
    rng: random.Random,
    name: str,
    ns: str,
    containers: list[Container],
    *,
    created: datetime,
    rs_created: datetime,
    replicas: int,
    nodes: list[tuple[str, str]],
    pod_cidr: str,
    revision: int = 3,
    labels: dict | None = None,
    annotations: dict | None = None,
    svc_ports: list | None = None,
    cluster_ip: str | None = None,
    tmpl_kw: dict | None = None,
    restarts: dict | None = None,
    old_rs: list[tuple[str, datetime, int]] | None = None,
    pod_ages: list[datetime] | None = None,
    deploy_annotations: dict | None = None,
) -> App:
    """A healthy Deployment: its ReplicaSet, Running Ready pods, optionally a Service and Endpoints.

    restarts: {pod_index: (count, last_state_dict)} for old restarts.
    old_rs: (hash, created, revision) of scaled-down earlier ReplicaSets.
    """
    lab = {"app": name} | (labels or {})
    tmpl = template(lab, containers, annotations=annotations, **(tmpl_kw or {}))
    h = token(rng, 10)
    rs_name = f"{name}-{h}"
    objs: list = []
    d = deployment(
        name,
        ns,
        created,
        tmpl,
        replicas=replicas,
        revision=revision,
        status=deploy_status(
            replicas,
            replicas,
            replicas,
            gen=revision + 2,
            conditions=healthy_deploy_conditions(
                name, rs_name, rs_created + timedelta(minutes=1), rs_created + timedelta(minutes=2)
            ),
        ),
        labels=lab,
        annotations=deploy_annotations,
    )
    objs.append(d)
    rss = []
    for oh, oc, orev in old_rs or []:
        rss.append(replicaset(d, oh, oc, tmpl, replicas=0, ready=0, revision=orev))
    rs = replicaset(d, h, rs_created, tmpl, replicas=replicas, ready=replicas, revision=revision)
    rss.append(rs)
    objs.extend(rss)
    pods = []
    for i in range(replicas):
        pn = f"{rs_name}-{token(rng, 5)}"
        nname, nip = nodes[i % len(nodes)]
        pc = pod_ages[i] if pod_ages else rs_created + timedelta(seconds=5 + 40 * i)
        sts = []
        for c in containers:
            cnt, last = (restarts or {}).get(i, (0, None))
            if c is not containers[0]:
                cnt, last = 0, None
            started = pc + timedelta(seconds=4)
            if last and "terminated" in last:
                started = parse(last["terminated"]["finishedAt"]) + timedelta(seconds=1)
            sts.append(
                cstatus(
                    c,
                    ready=True,
                    state=running(started),
                    restarts=cnt,
                    last=json.loads(json.dumps(last)) if last else None,
                    rng=rng,
                )
            )
        ip = f"{pod_cidr}.{rng.randint(10, 250)}"
        p = pod(
            pn,
            ns,
            "ReplicaSet",
            rs_name,
            rs["spec"]["template"],
            pc,
            node_name=nname,
            pod_ip=ip,
            host_ip=nip,
            statuses=sts,
        )
        pods.append(p)
    objs.extend(pods)
    if svc_ports:
        objs.append(
            service(
                name,
                ns,
                created,
                {"app": name},
                svc_ports,
                cluster_ip or f"172.20.{rng.randint(1, 250)}.{rng.randint(2, 250)}",
            )
        )
        eports = [
            {
                "name": sp["name"],
                "port": sp["targetPort"]
                if isinstance(sp["targetPort"], int)
                else next(
                    cp["containerPort"]
                    for cp in containers[0].ports
                    if cp["name"] == sp["targetPort"]
                ),
                "protocol": "TCP",
            }
            for sp in svc_ports
        ]
        objs.append(endpoints(name, ns, created, pods, eports))
    return App(d, rss, pods, objs)


def ts_dt(t: int) -> datetime:
    return datetime.fromtimestamp(t, tz=UTC)


def rollout_events(
    ns: str,
    deploy: str,
    new_rs: str,
    old_rs: str,
    replicas: int,
    at: datetime,
    step: timedelta = timedelta(seconds=25),
    surge: int = 1,
) -> list:
    """ScalingReplicaSet events of a rolling update that completed."""
    out = []
    t = at
    new, old = 0, replicas
    while new < replicas or old > 0:
        if new < replicas:
            n2 = min(replicas, new + surge)
            msg = f"Scaled up replica set {new_rs} to {n2}" + (f" from {new}" if new else "")
            out.append(
                event(
                    ns,
                    "Deployment",
                    deploy,
                    "ScalingReplicaSet",
                    msg,
                    t,
                    t,
                    component="deployment-controller",
                    api_version="apps/v1",
                )
            )
            new = n2
        if old > 0:
            o2 = max(0, old - surge)
            t2 = t + step
            out.append(
                event(
                    ns,
                    "Deployment",
                    deploy,
                    "ScalingReplicaSet",
                    f"Scaled down replica set {old_rs} to {o2} from {old}",
                    t2,
                    t2,
                    component="deployment-controller",
                    api_version="apps/v1",
                )
            )
            old = o2
        t += step
    return out


def pod_start_events(p: dict, image: str, container: str) -> list:
    ns, pn, host = p["metadata"]["namespace"], p["metadata"]["name"], p["spec"]["nodeName"]
    t = parse(p["metadata"]["creationTimestamp"])
    fp = f"spec.containers{{{container}}}"
    return [
        event(
            ns,
            "Pod",
            pn,
            "Scheduled",
            f"Successfully assigned {ns}/{pn} to {host}",
            t,
            t,
            component="default-scheduler",
        ),
        event(
            ns,
            "Pod",
            pn,
            "Pulled",
            f'Container image "{image}" already present on machine',
            t + timedelta(seconds=1),
            t + timedelta(seconds=1),
            host=host,
            field_path=fp,
        ),
        event(
            ns,
            "Pod",
            pn,
            "Created",
            f"Created container {container}",
            t + timedelta(seconds=1),
            t + timedelta(seconds=1),
            host=host,
            field_path=fp,
        ),
        event(
            ns,
            "Pod",
            pn,
            "Started",
            f"Started container {container}",
            t + timedelta(seconds=2),
            t + timedelta(seconds=2),
            host=host,
            field_path=fp,
        ),
    ]


def std_nodes(
    prefix: str, octets: list[int], region: str, now: datetime, **kw: Any
) -> tuple[list[dict], list[tuple[str, str]]]:
    objs, pairs = [], []
    for i, o in enumerate(octets):
        ip = f"{prefix}.{o}"
        name = f"ip-{ip.replace('.', '-')}.{region}.compute.internal"
        objs.append(
            node(
                name,
                now - timedelta(days=9 + 3 * i),
                now,
                ip=ip,
                zone=f"{region}{'abc'[i % 3]}",
                **kw,
            )
        )
        pairs.append((name, ip))
    return objs, pairs


_TS = re.compile(r"(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d:\d\d)")
_MS = re.compile(r'"time":(\d{13})')


def _line_time(line: str) -> datetime | None:
    mt = _TS.search(line[:80])
    if mt:
        return parse(f"{mt.group(1)}T{mt.group(2)}Z")
    mm = _MS.search(line[:40])
    if mm:
        return ts_dt(int(mm.group(1)) // 1000)
    return None


def order_log(text: str, now: datetime) -> str:
    """Group a container log into records (a timed line and its continuation lines), sort them
    by time (stable) and drop the records written after `now`."""
    records: list[tuple[datetime | None, list[str]]] = []
    for line in text.rstrip("\n").split("\n"):
        t = _line_time(line)
        if t is not None or not records:
            records.append((t, [line]))
        else:
            records[-1][1].append(line)
    last = None
    keyed = []
    for t, lines in records:
        last = t or last
        keyed.append((last, lines))
    floor = datetime(1970, 1, 1, tzinfo=UTC)
    keyed = [r for r in keyed if r[0] is None or r[0] <= now]
    keyed.sort(key=lambda r: r[0] or floor)
    return "\n".join(line for _, lines in keyed for line in lines) + "\n"
