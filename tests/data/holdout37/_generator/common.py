"""Helpers shared by the holdout37 scenario builders: objects, events, logs, metrics.

Why a generator: timestamps, counts and volumes stay consistent with each scenario's `now`
when every file is derived from one clock, and the data can be regenerated after an edit.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

SET_DIR = Path(__file__).resolve().parent.parent

Obj = dict[str, Any]


def parse(ts: str) -> datetime:
    return datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def iso(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_ms(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def uid(seed: str) -> str:
    h = hashlib.sha1(seed.encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def meta(
    name: str,
    ns: str | None = None,
    labels: dict[str, str] | None = None,
    created: datetime | None = None,
    owner: tuple[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    api: str = "apps/v1",
) -> Obj:
    m: Obj = {"name": name, "uid": uid(f"{ns}/{name}")}
    if ns:
        m["namespace"] = ns
    if labels:
        m["labels"] = dict(labels)
    if annotations:
        m["annotations"] = dict(annotations)
    if created:
        m["creationTimestamp"] = iso(created)
    if owner:
        m["ownerReferences"] = [
            {
                "apiVersion": api,
                "kind": owner[0],
                "name": owner[1],
                "uid": uid(f"{ns}/{owner[1]}"),
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
    return m


def namespace(name: str, created: datetime) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": meta(name, labels={"kubernetes.io/metadata.name": name}, created=created),
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


def node(
    name: str,
    created: datetime,
    heartbeat: datetime,
    zone: str,
    ip: str,
    ready: tuple[str, str, str] = ("True", "KubeletReady", "kubelet is posting ready status"),
    ready_since: datetime | None = None,
    taints: list[Obj] | None = None,
    cpu: str = "4",
    memory: str = "16Gi",
    runtime: str = "containerd://1.7.22",
    instance: str = "m6i.xlarge",
) -> Obj:
    since = ready_since or created + timedelta(minutes=2)
    conds = []
    for ctype, reason, msg in (
        ("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
        ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ):
        conds.append(
            {
                "type": ctype,
                "status": "False",
                "reason": reason,
                "message": msg,
                "lastHeartbeatTime": iso(heartbeat),
                "lastTransitionTime": iso(created + timedelta(minutes=2)),
            }
        )
    conds.append(
        {
            "type": "Ready",
            "status": ready[0],
            "reason": ready[1],
            "message": ready[2],
            "lastHeartbeatTime": iso(heartbeat),
            "lastTransitionTime": iso(since),
        }
    )
    alloc_mem = memory
    spec: Obj = {"providerID": f"aws:///{zone}/i-0{hashlib.md5(name.encode()).hexdigest()[:16]}"}
    if taints:
        spec["taints"] = taints
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": meta(
            name,
            labels={
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "topology.kubernetes.io/zone": zone,
                "node.kubernetes.io/instance-type": instance,
            },
            created=created,
        ),
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
                "memory": alloc_mem,
                "pods": "58",
                "ephemeral-storage": "95551679124",
            },
            "conditions": conds,
            "addresses": [
                {"type": "InternalIP", "address": ip},
                {"type": "Hostname", "address": name},
            ],
            "nodeInfo": {
                "kubeletVersion": "v1.30.4",
                "containerRuntimeVersion": runtime,
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
    ports: list[int] | None = None,
    env: dict[str, str] | None = None,
    requests: dict[str, str] | None = None,
    limits: dict[str, str] | None = None,
    **extra: Any,
) -> Obj:
    c: Obj = {"name": name, "image": image, "imagePullPolicy": extra.pop("pull", "IfNotPresent")}
    if ports:
        c["ports"] = [
            {"containerPort": p, "name": "http" if i == 0 else f"p{p}", "protocol": "TCP"}
            for i, p in enumerate(ports)
        ]
    if env:
        c["env"] = [{"name": k, "value": v} for k, v in env.items()]
    res: Obj = {}
    if requests:
        res["requests"] = requests
    if limits:
        res["limits"] = limits
    c["resources"] = res
    c.update(extra)
    return c


def running(
    name: str,
    image: str,
    started: datetime,
    ready: bool = True,
    restarts: int = 0,
    last: Obj | None = None,
    image_id: str | None = None,
) -> Obj:
    s: Obj = {
        "name": name,
        "image": image,
        "imageID": image_id
        or f"{image.split(':')[0]}@sha256:" + hashlib.sha256(image.encode()).hexdigest(),
        "ready": ready,
        "restartCount": restarts,
        "started": True,
        "state": {"running": {"startedAt": iso(started)}},
    }
    s["lastState"] = {"terminated": last} if last else {}
    s["containerID"] = "containerd://" + hashlib.sha256((name + iso(started)).encode()).hexdigest()
    return s


def waiting(
    name: str,
    image: str,
    reason: str,
    message: str | None = None,
    restarts: int = 0,
    last: Obj | None = None,
    image_id: str | None = None,
) -> Obj:
    w: Obj = {"reason": reason}
    if message:
        w["message"] = message
    s: Obj = {
        "name": name,
        "image": image,
        "imageID": image_id
        or (
            f"{image.split(':')[0]}@sha256:" + hashlib.sha256(image.encode()).hexdigest()
            if restarts or last
            else ""
        ),
        "ready": False,
        "restartCount": restarts,
        "started": False,
        "state": {"waiting": w},
    }
    s["lastState"] = {"terminated": last} if last else {}
    return s


def terminated(reason: str, code: int, started: datetime, finished: datetime) -> Obj:
    return {
        "reason": reason,
        "exitCode": code,
        "startedAt": iso(started),
        "finishedAt": iso(finished),
        "containerID": "containerd://"
        + hashlib.sha256((reason + iso(started)).encode()).hexdigest(),
    }


def pod(
    name: str,
    ns: str,
    labels: dict[str, str],
    owner: tuple[str, str] | None,
    node_name: str | None,
    containers: list[Obj],
    statuses: list[Obj],
    created: datetime,
    phase: str = "Running",
    ready: bool = True,
    ip: str | None = None,
    init: list[Obj] | None = None,
    init_statuses: list[Obj] | None = None,
    host_ip: str | None = None,
    extra_spec: Obj | None = None,
    conditions: list[Obj] | None = None,
    deletion: datetime | None = None,
    sa: str = "default",
    restart_policy: str = "Always",
    volumes: list[Obj] | None = None,
) -> Obj:
    api = "batch/v1" if owner and owner[0] == "Job" else "apps/v1"
    m = meta(name, ns, labels, created, owner, api=api)
    if deletion:
        m["deletionTimestamp"] = iso(deletion)
        m["deletionGracePeriodSeconds"] = 30
    spec: Obj = {
        "containers": containers,
        "restartPolicy": restart_policy,
        "serviceAccountName": sa,
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "schedulerName": "default-scheduler",
    }
    if node_name:
        spec["nodeName"] = node_name
    if init:
        spec["initContainers"] = init
    if volumes:
        spec["volumes"] = volumes
    if extra_spec:
        spec.update(extra_spec)
    sched = created + timedelta(seconds=1)
    conds = conditions or [
        {
            "type": "PodScheduled",
            "status": "True" if node_name else "False",
            "lastTransitionTime": iso(sched),
        },
        {
            "type": "Initialized",
            "status": "True",
            "lastTransitionTime": iso(sched + timedelta(seconds=2)),
        },
        {
            "type": "ContainersReady",
            "status": str(ready),
            "lastTransitionTime": iso(sched + timedelta(seconds=20)),
        },
        {
            "type": "Ready",
            "status": str(ready),
            "lastTransitionTime": iso(sched + timedelta(seconds=20)),
        },
    ]
    status: Obj = {"phase": phase, "conditions": conds, "qosClass": "Burstable"}
    if node_name:
        status["hostIP"] = host_ip or "10.0.0.1"
        status["startTime"] = iso(sched)
    if ip:
        status["podIP"] = ip
        status["podIPs"] = [{"ip": ip}]
    if init_statuses is not None:
        status["initContainerStatuses"] = init_statuses
    status["containerStatuses"] = statuses
    return {"apiVersion": "v1", "kind": "Pod", "metadata": m, "spec": spec, "status": status}


def deployment(
    name: str,
    ns: str,
    labels: dict[str, str],
    template_labels: dict[str, str],
    containers: list[Obj],
    replicas: int,
    created: datetime,
    generation: int,
    revision: int,
    status: Obj,
    selector: dict[str, str] | None = None,
    init: list[Obj] | None = None,
    annotations: dict[str, str] | None = None,
    strategy: Obj | None = None,
    volumes: list[Obj] | None = None,
    template_annotations: dict[str, str] | None = None,
) -> Obj:
    m = meta(
        name,
        ns,
        labels,
        created,
        annotations={"deployment.kubernetes.io/revision": str(revision), **(annotations or {})},
    )
    m["generation"] = generation
    tspec: Obj = {
        "containers": containers,
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
    }
    if init:
        tspec["initContainers"] = init
    if volumes:
        tspec["volumes"] = volumes
    tmeta: Obj = {"labels": template_labels}
    if template_annotations:
        tmeta["annotations"] = template_annotations
    st = {"observedGeneration": generation, **status}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": m,
        "spec": {
            "replicas": replicas,
            "revisionHistoryLimit": 10,
            "selector": {"matchLabels": selector or {"app": name}},
            "strategy": strategy
            or {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
            },
            "progressDeadlineSeconds": 600,
            "template": {"metadata": tmeta, "spec": tspec},
        },
        "status": st,
    }


def available_status(
    replicas: int,
    at: datetime,
    updated: int | None = None,
    ready: int | None = None,
    available: int | None = None,
    progressing: tuple[str, str, str] | None = None,
) -> Obj:
    r = replicas if ready is None else ready
    a = r if available is None else available
    prog = progressing or (
        "True",
        "NewReplicaSetAvailable",
        "ReplicaSet has successfully progressed.",
    )
    st: Obj = {
        "replicas": replicas,
        "updatedReplicas": replicas if updated is None else updated,
        "readyReplicas": r,
        "availableReplicas": a,
        "conditions": [
            {
                "type": "Available",
                "status": "True" if a >= max(1, replicas - replicas // 4) else "False",
                "reason": "MinimumReplicasAvailable"
                if a >= max(1, replicas - replicas // 4)
                else "MinimumReplicasUnavailable",
                "message": "Deployment has minimum availability."
                if a >= max(1, replicas - replicas // 4)
                else "Deployment does not have minimum availability.",
                "lastUpdateTime": iso(at),
                "lastTransitionTime": iso(at),
            },
            {
                "type": "Progressing",
                "status": prog[0],
                "reason": prog[1],
                "message": prog[2],
                "lastUpdateTime": iso(at),
                "lastTransitionTime": iso(at),
            },
        ],
    }
    if a < replicas:
        st["unavailableReplicas"] = replicas - a
    return st


def replicaset(
    name: str,
    ns: str,
    deploy: str,
    template_labels: dict[str, str],
    containers: list[Obj],
    replicas: int,
    ready: int,
    created: datetime,
    revision: int,
    init: list[Obj] | None = None,
    selector: dict[str, str] | None = None,
) -> Obj:
    m = meta(
        name,
        ns,
        template_labels,
        created,
        ("Deployment", deploy),
        annotations={
            "deployment.kubernetes.io/revision": str(revision),
            "deployment.kubernetes.io/desired-replicas": str(max(replicas, 1)),
        },
    )
    tspec: Obj = {"containers": containers}
    if init:
        tspec["initContainers"] = init
    sel = dict(selector or {"app": deploy})
    sel["pod-template-hash"] = template_labels["pod-template-hash"]
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": m,
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": sel},
            "template": {"metadata": {"labels": template_labels}, "spec": tspec},
        },
        "status": {
            "replicas": replicas,
            "readyReplicas": ready,
            "availableReplicas": ready,
            "fullyLabeledReplicas": replicas,
            "observedGeneration": 1,
        },
    }


def service(
    name: str,
    ns: str,
    selector: dict[str, str],
    port: int,
    target: int | str,
    created: datetime,
    ip: str,
    labels: dict[str, str] | None = None,
) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta(name, ns, labels or {"app": name}, created),
        "spec": {
            "type": "ClusterIP",
            "clusterIP": ip,
            "clusterIPs": [ip],
            "selector": selector,
            "ports": [{"name": "http", "port": port, "targetPort": target, "protocol": "TCP"}],
            "sessionAffinity": "None",
        },
        "status": {"loadBalancer": {}},
    }


def endpoints(
    name: str,
    ns: str,
    addrs: list[tuple[str, str, str]],
    port: int,
    created: datetime,
    not_ready: list[tuple[str, str, str]] | None = None,
) -> Obj:
    """addrs: (ip, pod name, node name)."""
    m = meta(name, ns, {"app": name}, created)
    subsets = []
    if addrs or not_ready:
        sub: Obj = {"ports": [{"name": "http", "port": port, "protocol": "TCP"}]}
        if addrs:
            sub["addresses"] = [
                {"ip": ip, "nodeName": nd, "targetRef": {"kind": "Pod", "namespace": ns, "name": p}}
                for ip, p, nd in addrs
            ]
        if not_ready:
            sub["notReadyAddresses"] = [
                {"ip": ip, "nodeName": nd, "targetRef": {"kind": "Pod", "namespace": ns, "name": p}}
                for ip, p, nd in not_ready
            ]
        subsets.append(sub)
    o: Obj = {"apiVersion": "v1", "kind": "Endpoints", "metadata": m}
    if subsets:
        o["subsets"] = subsets
    return o


class Events:
    """Collects core/v1 Events; every one ends within the hour before `now`."""

    def __init__(self, now: datetime) -> None:
        self.now = now
        self.items: list[Obj] = []

    def add(
        self,
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
        field_path: str | None = None,
        api: str = "v1",
    ) -> None:
        last = last or first
        assert self.now - last <= timedelta(hours=1), (reason, name, last)
        assert first <= last <= self.now, (reason, name)
        io: Obj = {
            "kind": kind,
            "namespace": ns,
            "name": name,
            "apiVersion": api,
            "uid": uid(f"{ns or None}/{name}"),
        }
        if not ns:
            io.pop("namespace")
        if field_path:
            io["fieldPath"] = field_path
        n = len(self.items)
        ev_name = f"{name}.{hashlib.md5((name + reason + str(n)).encode()).hexdigest()[:16]}"
        src: Obj = {"component": component}
        if host:
            src["host"] = host
        self.items.append(
            {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {
                    "name": ev_name,
                    "namespace": ns or "default",
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
                "reportingComponent": component,
            }
        )


class Scenario:
    """One scenario folder under construction."""

    def __init__(
        self,
        sid: str,
        title: str,
        now: str,
        report: str,
        truth: Obj,
        interventions: list[Obj] | None = None,
    ) -> None:
        self.sid = sid
        self.title = title
        self.now = parse(now)
        self.report = report
        self.truth = truth
        self.interventions = interventions
        self.objects: list[Obj] = []
        self.events = Events(self.now)
        self.pod_logs: dict[tuple[str, str, str, bool], list[str]] = {}
        self.docs: list[Obj] = []
        self.metrics: dict[
            str, tuple[str, str, list[tuple[dict[str, str], list[tuple[float, int]]]]]
        ] = {}

    def ago(self, **kw: float) -> datetime:
        return self.now - timedelta(**kw)

    def add(self, *objs: Obj) -> None:
        self.objects.extend(objs)

    def log(
        self, ns: str, pod_name: str, ctr: str, lines: list[str], previous: bool = False
    ) -> None:
        self.pod_logs.setdefault((ns, pod_name, ctr, previous), []).extend(lines)

    def doc(
        self,
        t: datetime,
        message: str,
        level: str,
        service: str,
        ns: str,
        pod_name: str,
        ctr: str,
        **extra: Any,
    ) -> None:
        assert t <= self.now
        d: Obj = {
            "@timestamp": iso_ms(t),
            "message": message,
            "log.level": level,
            "service.name": service,
            "kubernetes.namespace": ns,
            "kubernetes.pod.name": pod_name,
            "kubernetes.container.name": ctr,
        }
        d.update(extra)
        self.docs.append(d)

    def series(
        self,
        name: str,
        mtype: str,
        help_: str,
        labels: dict[str, str],
        samples: list[tuple[float, int]],
    ) -> None:
        entry = self.metrics.setdefault(name, (mtype, help_, []))
        entry[2].append((labels, samples))

    def write(self) -> None:
        out = SET_DIR / self.sid
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        sc: Obj = {
            "id": self.sid,
            "title": self.title,
            "now": iso(self.now),
            "report": self.report,
            "truth": self.truth,
        }
        if self.interventions:
            sc["interventions"] = self.interventions
        (out / "scenario.yaml").write_text(yaml.safe_dump(sc, sort_keys=False, width=100))
        floor = iso(self.now - timedelta(days=6, hours=20))
        for o in self.objects:
            if "status" in o:
                o["status"] = _clamp(o["status"], floor)
        objs = self.objects + sorted(self.events.items, key=lambda e: e["lastTimestamp"])
        (out / "cluster.yaml").write_text(yaml.safe_dump_all(objs, sort_keys=False, width=120))
        for (ns, p, c, prev), lines in self.pod_logs.items():
            d = out / "pod-logs" / ns / p
            d.mkdir(parents=True, exist_ok=True)
            (d / (c + (".previous.log" if prev else ".log"))).write_text("\n".join(lines) + "\n")
        if self.docs:
            self.docs.sort(key=lambda x: x["@timestamp"])
            (out / "logs.ndjson").write_text("".join(json.dumps(x) + "\n" for x in self.docs))
        if self.metrics:
            lines: list[str] = []
            for name, (mtype, help_, sers) in self.metrics.items():
                family = (
                    name[: -len("_total")]
                    if mtype == "counter" and name.endswith("_total")
                    else name
                )
                if mtype == "histogram":
                    family = name
                lines.append(f"# TYPE {family} {mtype}")
                lines.append(f"# HELP {family} {help_}")
                for labels, samples in sers:
                    lab = ",".join(f'{k}="{v}"' for k, v in labels.items())
                    metric_name = labels.pop("__name__", None) if False else name
                    for value, ts in samples:
                        v = repr(float(value)) if isinstance(value, float) else str(value)
                        lines.append(f"{metric_name}{{{lab}}} {v} {ts}")
            lines.append("# EOF")
            (out / "metrics.om").write_text("\n".join(lines) + "\n")


def steps(start: datetime, end: datetime, every_s: int = 60) -> list[datetime]:
    out = []
    t = start
    while t <= end:
        out.append(t)
        t += timedelta(seconds=every_s)
    return out


def ts(t: datetime) -> int:
    return int(t.timestamp())


def _clamp(value: Any, floor: str) -> Any:
    """Status times older than the scenario's week are raised to its start (the format's rule)."""
    if isinstance(value, dict):
        return {k: _clamp(v, floor) for k, v in value.items()}
    if isinstance(value, list):
        return [_clamp(v, floor) for v in value]
    if (
        isinstance(value, str)
        and len(value) == 20
        and value[4] == "-"
        and value.endswith("Z")
        and value < floor
    ):
        return floor
    return value


def healthy_deployment(
    s: Scenario,
    name: str,
    ns: str,
    image: str,
    nodes: list[str],
    ip_base: str,
    port: int = 8080,
    replicas: int = 2,
    age_days: float = 5,
    hash_: str = "6d9f8b7c5",
    revision: int = 12,
) -> list[str]:
    """A bystander: a Deployment, its ReplicaSet and Running pods. Returns the pod names."""
    labels = {"app": name, "pod-template-hash": hash_}
    ctr = container(
        name.split("-")[-1],
        image,
        ports=[port],
        requests={"cpu": "100m", "memory": "256Mi"},
        limits={"memory": "512Mi"},
        readinessProbe={
            "httpGet": {"path": "/healthz", "port": port, "scheme": "HTTP"},
            "periodSeconds": 10,
            "timeoutSeconds": 1,
            "failureThreshold": 3,
        },
    )
    s.add(
        deployment(
            name,
            ns,
            {"app": name},
            labels,
            [ctr],
            replicas,
            s.ago(days=200),
            revision,
            revision,
            available_status(replicas, s.ago(days=age_days)),
        )
    )
    s.add(
        replicaset(
            f"{name}-{hash_}",
            ns,
            name,
            labels,
            [ctr],
            replicas,
            replicas,
            s.ago(days=age_days),
            revision,
        )
    )
    names = []
    for i in range(replicas):
        pn = f"{name}-{hash_}-{hashlib.md5((name + str(i)).encode()).hexdigest()[:5]}"
        s.add(
            pod(
                pn,
                ns,
                labels,
                ("ReplicaSet", f"{name}-{hash_}"),
                nodes[i % len(nodes)],
                [ctr],
                [running(ctr["name"], image, s.ago(days=age_days, minutes=-i))],
                s.ago(days=age_days),
                ip=f"{ip_base}.{20 + i}",
            )
        )
        names.append(pn)
    s.add(
        service(
            name, ns, {"app": name}, 80, port, s.ago(days=200), f"172.20.{len(name)}.{10 + len(ns)}"
        )
    )
    s.add(
        endpoints(
            name,
            ns,
            [(f"{ip_base}.{20 + i}", names[i], nodes[i % len(nodes)]) for i in range(replicas)],
            port,
            s.ago(days=200),
        )
    )
    return names


def std_nodes(s: Scenario, prefix: str, count: int = 3, zone: str = "us-east-1") -> list[str]:
    out = []
    for i in range(count):
        ip = f"{prefix}.{11 + 37 * i}"
        n = f"ip-{ip.replace('.', '-')}.ec2.internal"
        s.add(
            node(
                n, s.ago(days=12 + i), s.now - timedelta(seconds=7 + i), f"{zone}{'abc'[i % 3]}", ip
            )
        )
        out.append(n)
    return out
