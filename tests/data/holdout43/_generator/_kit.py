"""Builders shared by the holdout43 stories: Kubernetes objects as `kubectl get -o yaml`
prints them, ECS log documents, OpenMetrics samples, and the writer that lays a story out
as a scenario folder. Kept apart from the stories so that each story reads as its data."""

from __future__ import annotations

import json
import random
import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

Obj = dict[str, Any]


def ts(t: datetime) -> str:
    """RFC 3339 with a Z, second precision, as the API server prints times."""
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def ms(t: datetime) -> str:
    """RFC 3339 with milliseconds, as log shippers print @timestamp."""
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def parse(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


@dataclass
class Story:
    """One scenario being assembled."""

    id: str
    title: str
    now: datetime
    report: str
    truth: Obj
    objects: list[Obj] = field(default_factory=list)
    pod_logs: dict[str, list[str]] = field(default_factory=dict)
    docs: list[Obj] = field(default_factory=list)
    samples: dict[str, tuple[str, str, list[str]]] = field(default_factory=dict)
    interventions: list[Obj] = field(default_factory=list)

    def add(self, *objs: Obj) -> None:
        self.objects.extend(objs)

    def pod_log(
        self, ns: str, pod: str, container: str, lines: list[str], previous: bool = False
    ) -> None:
        suffix = ".previous.log" if previous else ".log"
        self.pod_logs[f"{ns}/{pod}/{container}{suffix}"] = lines

    def doc(
        self,
        t: datetime,
        level: str,
        service: str,
        ns: str,
        pod: str,
        container: str,
        message: str,
        **extra: Any,
    ) -> None:
        d: Obj = {
            "@timestamp": ms(t),
            "log.level": level,
            "message": message,
            "service.name": service,
            "kubernetes.namespace": ns,
            "kubernetes.pod.name": pod,
            "kubernetes.container.name": container,
        }
        d.update({k.replace("__", "."): v for k, v in extra.items()})
        self.docs.append(d)

    def metric(
        self,
        name: str,
        mtype: str,
        help_text: str,
        labels: dict[str, str],
        points: list[tuple[datetime, float]],
    ) -> None:
        entry = self.samples.setdefault(name, (mtype, help_text, []))
        lab = ",".join(f'{k}="{v}"' for k, v in labels.items())
        sample_name = name + (
            "_total" if mtype == "counter" and not name.endswith("_bucket") else ""
        )
        for t, v in points:
            value = f"{v:.0f}" if abs(v) >= 1000 or v == int(v) else f"{v:.4f}"
            entry[2].append(f"{sample_name}{{{lab}}} {value} {int(t.timestamp())}")

    def write(self, root: Path) -> None:
        floor = self.now - timedelta(days=6, hours=22)
        for obj in self.objects:
            if "status" in obj:
                obj["status"] = _clamp(obj["status"], floor)
        names = {o["metadata"]["name"] for o in self.objects if o["kind"] == "Namespace"}
        used = {o["metadata"].get("namespace") for o in self.objects} - {None, ""}
        for ns in sorted(used - names):
            self.objects.insert(0, namespace(ns, self.now - timedelta(days=400)))
        folder = root / self.id
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        scenario: Obj = {
            "id": self.id,
            "title": self.title,
            "now": ts(self.now),
            "report": self.report,
            "truth": self.truth,
        }
        if self.interventions:
            scenario["interventions"] = self.interventions
        (folder / "scenario.yaml").write_text(yaml.safe_dump(scenario, sort_keys=False, width=100))
        if self.objects:
            (folder / "cluster.yaml").write_text(
                yaml.safe_dump_all(self.objects, sort_keys=False, width=200)
            )
        for rel, lines in self.pod_logs.items():
            p = folder / "pod-logs" / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text("\n".join(lines) + "\n")
        if self.docs:
            docs = sorted(self.docs, key=lambda d: d["@timestamp"])
            (folder / "logs.ndjson").write_text("".join(json.dumps(d) + "\n" for d in docs))
        if self.samples:
            out: list[str] = []
            for name, (mtype, help_text, lines) in self.samples.items():
                out.append(f"# HELP {name} {help_text}")
                out.append(f"# TYPE {name} {mtype}")
                out.extend(lines)
            out.append("# EOF")
            (folder / "metrics.om").write_text("\n".join(out) + "\n")


def _clamp(value: Any, floor: datetime) -> Any:
    """Status times lie within the week before now (the format's rule): a status time older
    than that is moved to just after the floor, as if the kubelet or controller had
    restarted then."""
    if isinstance(value, dict):
        return {k: _clamp(v, floor) for k, v in value.items()}
    if isinstance(value, list):
        return [_clamp(v, floor) for v in value]
    if isinstance(value, str) and len(value) == 20 and value[4] == "-" and value.endswith("Z"):
        try:
            t = parse(value)
        except ValueError:
            return value
        if t < floor:
            return ts(floor + timedelta(seconds=int(t.timestamp()) % 3000))
    return value


# ---------------------------------------------------------------- Kubernetes objects


def meta(
    name: str, ns: str | None, created: datetime, labels: dict[str, str] | None = None, **extra: Any
) -> Obj:
    m: Obj = {"name": name}
    if ns is not None:
        m["namespace"] = ns
    m["uid"] = uid(name + (ns or ""))
    m["creationTimestamp"] = ts(created)
    if labels:
        m["labels"] = dict(labels)
    m.update(extra)
    return m


def uid(seed: str) -> str:
    r = random.Random(seed)
    h = "".join(r.choice("0123456789abcdef") for _ in range(32))
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def namespace(name: str, created: datetime, labels: dict[str, str] | None = None) -> Obj:
    lab = {"kubernetes.io/metadata.name": name, **(labels or {})}
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
    zone: str,
    mem_pressure: bool = False,
    cpu: str = "8",
    memory: str = "32408356Ki",
    instance: str = "m6i.2xlarge",
    pressure_since: datetime | None = None,
    taints: list[Obj] | None = None,
    labels: dict[str, str] | None = None,
) -> Obj:
    since = pressure_since or created

    def cond(kind: str, status: str, reason: str, message: str, t: datetime) -> Obj:
        return {
            "type": kind,
            "status": status,
            "reason": reason,
            "message": message,
            "lastHeartbeatTime": ts(now - timedelta(seconds=23)),
            "lastTransitionTime": ts(t),
        }

    conds = [
        cond(
            "MemoryPressure",
            "True" if mem_pressure else "False",
            "KubeletHasInsufficientMemory" if mem_pressure else "KubeletHasSufficientMemory",
            "kubelet has insufficient memory available"
            if mem_pressure
            else "kubelet has sufficient memory available",
            since if mem_pressure else created,
        ),
        cond(
            "DiskPressure",
            "False",
            "KubeletHasNoDiskPressure",
            "kubelet has no disk pressure",
            created,
        ),
        cond(
            "PIDPressure",
            "False",
            "KubeletHasSufficientPID",
            "kubelet has sufficient PID available",
            created,
        ),
        cond("Ready", "True", "KubeletReady", "kubelet is posting ready status", created),
    ]
    spec: Obj = {"providerID": f"aws:///{zone}/i-0{uid(name).replace('-', '')[:16]}"}
    all_taints = list(taints or [])
    if mem_pressure:
        all_taints.append(
            {
                "key": "node.kubernetes.io/memory-pressure",
                "effect": "NoSchedule",
                "timeAdded": ts(since),
            }
        )
    if all_taints:
        spec["taints"] = all_taints
    lab = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "node.kubernetes.io/instance-type": instance,
        "topology.kubernetes.io/zone": zone,
        **(labels or {}),
    }
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": meta(name, None, created, lab),
        "spec": spec,
        "status": {
            "capacity": {
                "cpu": cpu,
                "memory": memory,
                "pods": "58",
                "ephemeral-storage": "104845292Ki",
            },
            "allocatable": {
                "cpu": str(int(cpu) * 1000 - 90) + "m",
                "memory": str(int(memory[:-2]) - 1060000) + "Ki",
                "pods": "58",
                "ephemeral-storage": "95551679124",
            },
            "conditions": conds,
            "nodeInfo": {
                "kubeletVersion": "v1.29.8",
                "containerRuntimeVersion": "containerd://1.7.22",
                "osImage": "Amazon Linux 2023",
                "kernelVersion": "6.1.109-118.189.amzn2023.x86_64",
                "architecture": "amd64",
                "operatingSystem": "linux",
            },
        },
    }


def container(
    name: str,
    image: str,
    cpu_req: str | None = None,
    mem_req: str | None = None,
    cpu_lim: str | None = None,
    mem_lim: str | None = None,
    port: int | None = None,
    env: list[Obj] | None = None,
    readiness: Obj | None = None,
    liveness: Obj | None = None,
    startup: Obj | None = None,
    args: list[str] | None = None,
    command: list[str] | None = None,
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
    res: Obj = {}
    req = {k: v for k, v in (("cpu", cpu_req), ("memory", mem_req)) if v}
    lim = {k: v for k, v in (("cpu", cpu_lim), ("memory", mem_lim)) if v}
    if lim:
        res["limits"] = lim
    if req:
        res["requests"] = req
    c["resources"] = res
    if readiness:
        c["readinessProbe"] = readiness
    if liveness:
        c["livenessProbe"] = liveness
    if startup:
        c["startupProbe"] = startup
    c["terminationMessagePath"] = "/dev/termination-log"
    c["terminationMessagePolicy"] = "File"
    return c


def http_probe(
    path: str,
    port: int | str,
    period: int = 10,
    failures: int = 3,
    timeout: int = 1,
    delay: int = 0,
) -> Obj:
    p: Obj = {
        "httpGet": {"path": path, "port": port, "scheme": "HTTP"},
        "periodSeconds": period,
        "timeoutSeconds": timeout,
        "failureThreshold": failures,
        "successThreshold": 1,
    }
    if delay:
        p["initialDelaySeconds"] = delay
    return p


def pod_template(labels: dict[str, str], containers: list[Obj], **spec: Any) -> Obj:
    s: Obj = {
        "containers": containers,
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "schedulerName": "default-scheduler",
    }
    s.update(spec)
    return {"metadata": {"labels": dict(labels)}, "spec": s}


def deployment(
    name: str,
    ns: str,
    created: datetime,
    template: Obj,
    replicas: int,
    revision: int,
    ready: int | None = None,
    updated: int | None = None,
    available: int | None = None,
    conditions: list[Obj] | None = None,
    generation: int | None = None,
    annotations: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    max_surge: str = "25%",
    max_unavailable: str = "25%",
    total_replicas: int | None = None,
) -> Obj:
    ready = replicas if ready is None else ready
    gen = generation or revision
    ann = {"deployment.kubernetes.io/revision": str(revision), **(annotations or {})}
    sel = {
        k: v
        for k, v in template["metadata"]["labels"].items()
        if k in ("app", "app.kubernetes.io/name")
    }
    updated = replicas if updated is None else updated
    total = max(replicas, ready, updated) if total_replicas is None else total_replicas
    avail = ready if available is None else available
    status: Obj = {
        "observedGeneration": gen,
        "replicas": total,
        "updatedReplicas": updated,
        "readyReplicas": ready,
        "availableReplicas": avail,
    }
    if total - avail > 0:
        status["unavailableReplicas"] = total - avail
    status["conditions"] = conditions or [
        {
            "type": "Available",
            "status": "True",
            "reason": "MinimumReplicasAvailable",
            "message": "Deployment has minimum availability.",
            "lastUpdateTime": ts(created),
            "lastTransitionTime": ts(created),
        },
        {
            "type": "Progressing",
            "status": "True",
            "reason": "NewReplicaSetAvailable",
            "message": f'ReplicaSet "{name}" has successfully progressed.',
            "lastUpdateTime": ts(created),
            "lastTransitionTime": ts(created),
        },
    ]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta(
            name, ns, created, labels or {"app": name}, generation=gen, annotations=ann
        ),
        "spec": {
            "replicas": replicas,
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600,
            "selector": {"matchLabels": sel},
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": max_surge, "maxUnavailable": max_unavailable},
            },
            "template": template,
        },
        "status": status,
    }


def cond(kind: str, status: str, reason: str, message: str, t: datetime) -> Obj:
    return {
        "type": kind,
        "status": status,
        "reason": reason,
        "message": message,
        "lastUpdateTime": ts(t),
        "lastTransitionTime": ts(t),
    }


def replicaset(
    deploy: Obj,
    hash_: str,
    created: datetime,
    revision: int,
    template: Obj,
    replicas: int,
    ready: int | None = None,
    conditions: list[Obj] | None = None,
) -> Obj:
    name = deploy["metadata"]["name"]
    ns = deploy["metadata"]["namespace"]
    labels = {**template["metadata"]["labels"], "pod-template-hash": hash_}
    tpl = {"metadata": {"labels": labels}, "spec": template["spec"]}
    ready = replicas if ready is None else ready
    status: Obj = {
        "replicas": replicas,
        "fullyLabeledReplicas": replicas,
        "readyReplicas": ready,
        "availableReplicas": ready,
        "observedGeneration": 1,
    }
    if not ready:
        del status["readyReplicas"], status["availableReplicas"]
    if conditions:
        status["conditions"] = conditions
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": meta(
            f"{name}-{hash_}",
            ns,
            created,
            labels,
            annotations={
                "deployment.kubernetes.io/revision": str(revision),
                "deployment.kubernetes.io/desired-replicas": str(deploy["spec"]["replicas"]),
                "deployment.kubernetes.io/max-replicas": str(deploy["spec"]["replicas"] + 1),
            },
            ownerReferences=[owner("Deployment", name, ns)],
        ),
        "spec": {
            "replicas": replicas,
            "selector": {
                "matchLabels": {
                    **deploy["spec"]["selector"]["matchLabels"],
                    "pod-template-hash": hash_,
                }
            },
            "template": tpl,
        },
        "status": status,
    }


def owner(kind: str, name: str, ns: str) -> Obj:
    api = (
        "apps/v1"
        if kind in ("Deployment", "ReplicaSet", "DaemonSet", "StatefulSet")
        else "batch/v1"
    )
    return {
        "apiVersion": api,
        "kind": kind,
        "name": name,
        "uid": uid(name + ns),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def pod(
    name: str,
    ns: str,
    created: datetime,
    template: Obj,
    node_name: str | None,
    ip: str | None,
    owner_kind: str,
    owner_name: str,
    phase: str = "Running",
    ready: bool = True,
    statuses: list[Obj] | None = None,
    started: datetime | None = None,
    conditions: list[Obj] | None = None,
    reason: str | None = None,
    message: str | None = None,
    extra_labels: dict[str, str] | None = None,
) -> Obj:
    spec = dict(template["spec"])
    if node_name:
        spec["nodeName"] = node_name
    labels = {**template["metadata"]["labels"], **(extra_labels or {})}
    if owner_kind == "ReplicaSet":
        labels["pod-template-hash"] = owner_name.rsplit("-", 1)[1]
    st = started or created + timedelta(seconds=4)
    status: Obj = {"phase": phase}
    if conditions is None:
        conditions = [
            {
                "type": "Initialized",
                "status": "True",
                "lastTransitionTime": ts(created + timedelta(seconds=2)),
            },
            {
                "type": "Ready",
                "status": "True" if ready else "False",
                "lastTransitionTime": ts(st + timedelta(seconds=20)),
            },
            {
                "type": "ContainersReady",
                "status": "True" if ready else "False",
                "lastTransitionTime": ts(st + timedelta(seconds=20)),
            },
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": ts(created)},
        ]
        if not ready:
            for c in conditions[1:3]:
                c["reason"] = "ContainersNotReady"
    status["conditions"] = conditions
    if reason:
        status["reason"] = reason
    if message:
        status["message"] = message
    if node_name:
        status["hostIP"] = (
            "10.40." + ".".join(node_name.split("-")[3:5])
            if node_name.startswith("ip-")
            else "10.40.0.10"
        )
    if ip:
        status["podIP"] = ip
        status["podIPs"] = [{"ip": ip}]
    if phase != "Pending" or statuses:
        status["startTime"] = ts(created + timedelta(seconds=1))
    if statuses is None:
        statuses = [running_status(c, st, ready) for c in spec["containers"]]
    if statuses:
        status["containerStatuses"] = statuses
    status["qosClass"] = qos(spec["containers"])
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta(
            name, ns, created, labels, ownerReferences=[owner(owner_kind, owner_name, ns)]
        ),
        "spec": spec,
        "status": status,
    }


def qos(containers: list[Obj]) -> str:
    res = [c.get("resources", {}) for c in containers]
    if all(not r for r in res):
        return "BestEffort"
    if all(
        r.get("limits")
        and r.get("limits") == r.get("requests")
        and set(r["limits"]) == {"cpu", "memory"}
        for r in res
    ):
        return "Guaranteed"
    return "Burstable"


def running_status(
    c: Obj, started: datetime, ready: bool = True, restarts: int = 0, last: Obj | None = None
) -> Obj:
    s: Obj = {
        "name": c["name"],
        "image": c["image"],
        "imageID": image_id(c["image"]),
        "containerID": "containerd://" + uid(c["name"] + ts(started)).replace("-", "") * 2,
        "ready": ready,
        "started": True,
        "restartCount": restarts,
        "state": {"running": {"startedAt": ts(started)}},
        "lastState": last or {},
    }
    return s


def image_id(image: str) -> str:
    repo = image.rsplit(":", 1)[0]
    return f"{repo}@sha256:" + (uid(image).replace("-", "") * 2)


def terminated(reason: str, code: int, started: datetime, finished: datetime) -> Obj:
    return {
        "terminated": {
            "exitCode": code,
            "reason": reason,
            "startedAt": ts(started),
            "finishedAt": ts(finished),
            "containerID": "containerd://" + uid(reason + ts(started)).replace("-", "") * 2,
        }
    }


def service(
    name: str,
    ns: str,
    created: datetime,
    selector: dict[str, str],
    port: int,
    target: int | str,
    cluster_ip: str,
    port_name: str = "http",
    protocol: str = "TCP",
) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta(name, ns, created, {"app": name}),
        "spec": {
            "type": "ClusterIP",
            "clusterIP": cluster_ip,
            "clusterIPs": [cluster_ip],
            "selector": selector,
            "sessionAffinity": "None",
            "ports": [
                {"name": port_name, "port": port, "targetPort": target, "protocol": protocol}
            ],
        },
        "status": {"loadBalancer": {}},
    }


def endpoints(
    name: str,
    ns: str,
    created: datetime,
    ready: list[tuple[str, str, str]],
    not_ready: list[tuple[str, str, str]],
    port: int,
    port_name: str = "http",
    protocol: str = "TCP",
) -> Obj:
    subset: Obj = {}

    def addr(ip: str, pod_name: str, node_name: str) -> Obj:
        return {
            "ip": ip,
            "nodeName": node_name,
            "targetRef": {"kind": "Pod", "namespace": ns, "name": pod_name},
        }

    if ready:
        subset["addresses"] = [addr(*a) for a in ready]
    if not_ready:
        subset["notReadyAddresses"] = [addr(*a) for a in not_ready]
    subset["ports"] = [{"name": port_name, "port": port, "protocol": protocol}]
    return {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": meta(name, ns, created, {"app": name}),
        "subsets": [subset] if (ready or not_ready) else [],
    }


_event_seq = [0]


def event(
    ns: str,
    kind: str,
    name: str,
    reason: str,
    message: str,
    first: datetime,
    last: datetime,
    count: int = 1,
    type_: str = "Normal",
    component: str = "kubelet",
    host: str | None = None,
    field_path: str | None = None,
    obj_uid: str | None = None,
) -> Obj:
    _event_seq[0] += 1
    obj_ns = "" if kind == "Node" else ns
    ev_ns = "default" if kind == "Node" else ns
    inv: Obj = {
        "kind": kind,
        "name": name,
        "apiVersion": "v1" if kind in ("Pod", "Node") else "apps/v1",
    }
    if obj_ns:
        inv["namespace"] = obj_ns
    inv["uid"] = obj_uid or uid(name + obj_ns)
    if field_path:
        inv["fieldPath"] = field_path
    src: Obj = {"component": component}
    if host:
        src["host"] = host
    suffix = uid(f"{name}/{reason}/{ts(first)}/{_event_seq[0]}").replace("-", "")[:16]
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": f"{name}.{suffix}",
            "namespace": ev_ns,
            "creationTimestamp": ts(first),
            "uid": uid(f"{name}{reason}{_event_seq[0]}"),
        },
        "involvedObject": inv,
        "reason": reason,
        "message": message,
        "type": type_,
        "count": count,
        "firstTimestamp": ts(first),
        "lastTimestamp": ts(last),
        "source": src,
        "reportingComponent": component,
        "reportingInstance": host or "",
    }


def series(start: datetime, end: datetime, step_s: int, fn: Any) -> list[tuple[datetime, float]]:
    """Samples of fn(t) every step from start to end inclusive."""
    out = []
    t = start
    while t <= end:
        out.append((t, float(fn(t))))
        t += timedelta(seconds=step_s)
    return out


def counter(
    start: datetime,
    end: datetime,
    step_s: int,
    rate_fn: Any,
    base: float = 0.0,
    integer: bool = True,
) -> list[tuple[datetime, float]]:
    """A counter whose per-second rate at t is rate_fn(t)."""
    out = []
    total = base
    t = start
    while t <= end:
        out.append((t, float(round(total)) if integer else round(total, 3)))
        total += max(0.0, rate_fn(t)) * step_s
        t += timedelta(seconds=step_s)
    return out
