"""Builders shared by the holdout41 stories: Kubernetes objects as `kubectl get -o yaml`
prints them, log lines, OpenMetrics samples, and the writer of one scenario folder.
Times are computed from the scenario's `now`, so every story keeps the format's windows
(events within the hour, logs and samples within the week)."""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

Obj = dict[str, Any]


def parse(stamp: str) -> datetime:
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


class Clock:
    """The investigation's clock; `ago(minutes)` gives RFC 3339 stamps before `now`."""

    def __init__(self, now: str) -> None:
        self.now = parse(now)

    def at(self, minutes_ago: float) -> datetime:
        return self.now - timedelta(minutes=minutes_ago)

    def ago(self, minutes_ago: float) -> str:
        return self.at(minutes_ago).strftime("%Y-%m-%dT%H:%M:%SZ")

    def ms(self, minutes_ago: float) -> str:
        return self.at(minutes_ago).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"

    def unix(self, minutes_ago: float) -> int:
        return int(self.at(minutes_ago).timestamp())


def suffix(seed: str, n: int = 5) -> str:
    """A stable pod-like suffix (lowercase letters and digits) for a seed."""
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    digest = hashlib.sha256(seed.encode()).digest()
    return "".join(alphabet[b % len(alphabet)] for b in digest[:n])


def uid(seed: str) -> str:
    h = hashlib.md5(seed.encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


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


@dataclass
class Metrics:
    """OpenMetrics families: name -> (type, help, samples[(labels, value, unix)])."""

    families: dict[str, tuple[str, str, list[tuple[dict[str, str], float, int]]]] = field(
        default_factory=dict
    )

    def add(
        self,
        family: str,
        kind: str,
        help_: str,
        sample: str,
        labels: dict[str, str],
        value: float,
        ts: int,
    ) -> None:
        self.families.setdefault(family, (kind, help_, []))[2].append(
            (labels | {"__name__": sample}, value, ts)
        )

    def text(self) -> str:
        out: list[str] = []
        for family, (kind, help_, samples) in self.families.items():
            out.append(f"# TYPE {family} {kind}")
            out.append(f"# HELP {family} {help_}")
            for labels, value, ts in sorted(samples, key=_point_order):
                name = labels["__name__"]
                body = ",".join(f'{k}="{v}"' for k, v in labels.items() if k != "__name__")
                v = float(value)
                val = str(round(v)) if abs(v) >= 1000 or v.is_integer() else f"{v:.6g}"
                out.append(f"{name}{{{body}}} {val} {ts}" if body else f"{name} {val} {ts}")
        out.append("# EOF")
        return "\n".join(out) + "\n"


def _point_order(s: tuple[dict[str, str], float, int]) -> tuple[Any, ...]:
    """Keep a histogram's or summary's samples of one point together: buckets by le, then
    count and sum, as OpenMetrics requires."""
    labels, _, ts = s
    base = sorted((k, v) for k, v in labels.items() if k not in ("le", "__name__"))
    name = labels["__name__"]
    rank = (
        0
        if name.endswith("_bucket")
        else 1
        if name.endswith("_count")
        else 2
        if name.endswith("_sum")
        else 0
    )
    le = labels.get("le", "")
    return (base, ts, rank, float("inf") if le == "+Inf" else float(le) if le else 0.0)


@dataclass
class Scenario:
    id: str
    title: str
    now: str
    report: str
    truth: Obj
    objects: list[Obj] = field(default_factory=list)
    pod_logs: dict[tuple[str, str, str, bool], list[str]] = field(default_factory=dict)
    docs: list[Obj] = field(default_factory=list)
    metrics: Metrics = field(default_factory=Metrics)
    interventions: list[Obj] = field(default_factory=list)

    def log(
        self, ns: str, pod_name: str, container_name: str, lines: list[str], previous: bool = False
    ) -> None:
        self.pod_logs.setdefault((ns, pod_name, container_name, previous), []).extend(lines)

    def doc(
        self,
        stamp: str,
        level: str,
        service_name: str,
        ns: str,
        pod_name: str,
        container_name: str,
        message: str,
        **extra: Any,
    ) -> None:
        d: Obj = {
            "@timestamp": stamp,
            "message": message,
            "log.level": level,
            "service.name": service_name,
            "kubernetes.namespace": ns,
            "kubernetes.pod.name": pod_name,
            "kubernetes.container.name": container_name,
        }
        d.update(extra)
        self.docs.append(d)

    def write(self, root: Path) -> None:
        folder = root / self.id
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        meta: Obj = {
            "id": self.id,
            "title": self.title,
            "now": self.now,
            "report": self.report,
            "truth": self.truth,
        }
        if self.interventions:
            meta["interventions"] = self.interventions
        (folder / "scenario.yaml").write_text(yaml.safe_dump(meta, sort_keys=False, width=100))
        (folder / "cluster.yaml").write_text(
            yaml.safe_dump_all(self.objects, sort_keys=False, width=120)
        )
        for (ns, pod_name, cname, previous), lines in self.pod_logs.items():
            d = folder / "pod-logs" / ns / pod_name
            d.mkdir(parents=True, exist_ok=True)
            (d / f"{cname}{'.previous' if previous else ''}.log").write_text(
                "\n".join(lines) + "\n"
            )
        if self.docs:
            docs = sorted(self.docs, key=lambda d: d["@timestamp"])
            (folder / "logs.ndjson").write_text("".join(json.dumps(d) + "\n" for d in docs))
        if self.metrics.families:
            (folder / "metrics.om").write_text(self.metrics.text())
