"""Shared helpers for the holdout53 generators: objects, logs, metrics, files."""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

Obj = dict[str, Any]
ALNUM = "bcdfghjklmnpqrstvwxz2456789"
STEP = 120  # seconds between metric samples
HOUR = 3600


def parse(now: str) -> datetime:
    return datetime.strptime(now, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_ms(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


class _Literal(str):
    pass


def _literal(dumper: yaml.SafeDumper, data: _Literal) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(data), style="|")


yaml.SafeDumper.add_representer(_Literal, _literal)


@dataclass
class Series:
    labels: dict[str, str]
    samples: list[tuple[int, float]]


@dataclass
class Family:
    name: str
    kind: str
    help: str
    series: list[Series] = field(default_factory=list)


@dataclass
class PodRef:
    ns: str
    name: str
    node: str
    ip: str
    containers: list[str]
    service: str
    started: datetime


@dataclass
class AppRefs:
    deployment: Obj
    replicaset: Obj
    pods: list[Obj]
    refs: list[PodRef]
    service: Obj | None
    endpoints: Obj | None


class Scenario:
    """Accumulates the objects, logs and metrics of one scenario and writes them."""

    def __init__(self, sid: str, now: str, seed: int) -> None:
        self.sid = sid
        self.now_s = now
        self.now = parse(now)
        self.rng = random.Random(seed)
        self.objects: list[Obj] = []
        self.logs: list[Obj] = []
        self.families: dict[str, Family] = {}
        self.pod_logs: dict[tuple[str, str, str, bool], list[str]] = {}
        self.auto_pod_logs_skip: set[tuple[str, str, str]] = set()
        self._ip_counter: dict[str, int] = {}
        self.node_subnet: dict[str, int] = {}
        self.node_ips: dict[str, str] = {}

    # ----------------------------------------------------------------- time
    def ago(self, minutes: float) -> datetime:
        return self.now - timedelta(minutes=minutes)

    def t(self, minutes: float) -> str:
        return iso(self.ago(minutes))

    def ticks(self) -> list[int]:
        end = int(self.now.timestamp())
        return [end - HOUR + STEP * i for i in range(HOUR // STEP + 1)]

    def mins_before(self, tick: int) -> float:
        return (self.now.timestamp() - tick) / 60.0

    # ----------------------------------------------------------------- names
    def hash(self, n: int) -> str:
        return "".join(self.rng.choice(ALNUM) for _ in range(n))

    def uid(self) -> str:
        h = "".join(self.rng.choice("0123456789abcdef") for _ in range(32))
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    def pod_ip(self, node: str) -> str:
        sub = self.node_subnet.setdefault(node, len(self.node_subnet) + 1)
        n = self._ip_counter.get(node, 10) + self.rng.randint(1, 9)
        self._ip_counter[node] = n
        return f"10.244.{sub}.{n}"

    # ----------------------------------------------------------------- objects
    def add(self, *objs: Obj) -> None:
        self.objects.extend(objs)

    def event(
        self,
        ns: str,
        kind: str,
        name: str,
        reason: str,
        message: str,
        *,
        type_: str = "Normal",
        count: int = 1,
        first: float = 30.0,
        last: float | None = None,
        component: str = "kubelet",
        host: str | None = None,
        api: str = "v1",
    ) -> Obj:
        last_m = first if last is None else last
        source: Obj = {"component": component}
        if host:
            source["host"] = host
        ev: Obj = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {
                "name": f"{name}.{self.hash(16)}",
                "namespace": ns or "default",
                "creationTimestamp": self.t(first),
            },
            "involvedObject": {
                "apiVersion": api,
                "kind": kind,
                "name": name,
                "namespace": ns,
            },
            "reason": reason,
            "message": message,
            "type": type_,
            "count": count,
            "firstTimestamp": self.t(first),
            "lastTimestamp": self.t(last_m),
            "source": source,
        }
        if not ns:
            del ev["involvedObject"]["namespace"]
        self.objects.append(ev)
        return ev

    # ----------------------------------------------------------------- logs
    def log(
        self,
        minutes: float,
        ref: PodRef | tuple[str, str, str, str],
        level: str,
        message: str,
        *,
        container: str | None = None,
        **extra: Any,
    ) -> None:
        if isinstance(ref, PodRef):
            ns, pod, cont, svc = ref.ns, ref.name, container or ref.containers[0], ref.service
            node = ref.node
        else:
            ns, pod, cont, svc = ref
            node = extra.pop("node", "")
        dt = self.ago(max(0.005, minutes))
        doc: Obj = {
            "@timestamp": iso_ms(dt),
            "message": message,
            "log.level": level,
            "service.name": svc,
            "kubernetes.namespace": ns,
            "kubernetes.pod.name": pod,
            "kubernetes.container.name": cont,
        }
        if node:
            doc["kubernetes.node.name"] = node
        doc.update(extra)
        self.logs.append(doc)

    def spread(self, start: float, end: float, every: float, jitter: float = 0.4) -> list[float]:
        """Minutes-before-now values from start down to end, about `every` minutes apart."""
        out: list[float] = []
        m = start
        while m > end:
            out.append(max(end, m - self.rng.uniform(0, every * jitter)))
            m -= every
        return out

    def pod_log(self, ns: str, pod: str, container: str, lines: list[str], previous: bool) -> None:
        self.pod_logs[(ns, pod, container, previous)] = lines
        if not previous:
            self.auto_pod_logs_skip.add((ns, pod, container))

    # ----------------------------------------------------------------- metrics
    def series(
        self,
        name: str,
        kind: str,
        help_: str,
        labels: dict[str, str],
        fn: Callable[[float], float | None],
    ) -> None:
        """fn gets minutes-before-now of each tick and returns a value or None (no sample)."""
        fam_name = name[: -len("_total")] if kind == "counter" and name.endswith("_total") else name
        fam = self.families.get(fam_name)
        if fam is None:
            fam = Family(fam_name, kind, help_)
            self.families[fam_name] = fam
        samples: list[tuple[int, float]] = []
        for tick in self.ticks():
            v = fn(self.mins_before(tick))
            if v is not None:
                samples.append((tick, v))
        fam.series.append(Series(labels, samples))

    def counter(
        self,
        name: str,
        help_: str,
        labels: dict[str, str],
        rate: Callable[[float], float],
        start: float = 0.0,
        resets: tuple[float, ...] = (),
        since: float | None = None,
    ) -> None:
        """A counter whose per-second rate at minutes-before-now m is rate(m).

        With `since`, the series exists only from that many minutes before now."""
        values: dict[float, float] = {}
        total = start
        reset_left = sorted(resets, reverse=True)
        for tick in self.ticks():
            m = self.mins_before(tick)
            while reset_left and m <= reset_left[0]:
                total = 0.0
                reset_left.pop(0)
            total += max(0.0, rate(m)) * STEP * self.rng.uniform(0.9, 1.1)
            values[round(m, 4)] = total
        self.series(name, "counter", help_, labels,
                    lambda m: None if since is not None and m > since else values[round(m, 4)])

    def gauge(
        self,
        name: str,
        help_: str,
        labels: dict[str, str],
        fn: Callable[[float], float | None],
    ) -> None:
        self.series(name, "gauge", help_, labels, fn)

    def noisy(self, base: float, rel: float = 0.05) -> float:
        return base * (1.0 + self.rng.uniform(-rel, rel))

    # ----------------------------------------------------------------- writing
    def write(self, root: Path, scenario: Obj) -> None:
        out = root / self.sid
        out.mkdir(parents=True, exist_ok=True)
        doc = dict(scenario)
        doc["report"] = _Literal(doc["report"].strip() + "\n")
        with (out / "scenario.yaml").open("w") as fh:
            yaml.safe_dump(doc, fh, sort_keys=False, width=100, allow_unicode=True)
        with (out / "cluster.yaml").open("w") as fh:
            yaml.safe_dump_all(self.objects, fh, sort_keys=False, width=1000)
        self.logs.sort(key=lambda d: d["@timestamp"])
        with (out / "logs.ndjson").open("w") as fh:
            for d in self.logs:
                fh.write(json.dumps(d, separators=(",", ":")) + "\n")
        with (out / "metrics.om").open("w") as fh:
            for fam in self.families.values():
                fh.write(f"# TYPE {fam.name} {fam.kind}\n")
                fh.write(f"# HELP {fam.name} {fam.help}\n")
                sample = fam.name + "_total" if fam.kind == "counter" else fam.name
                for s in fam.series:
                    lab = ",".join(f'{k}="{_esc(v)}"' for k, v in s.labels.items())
                    for tick, v in s.samples:
                        fh.write(f"{sample}{{{lab}}} {_num(v)} {tick}\n")
            fh.write("# EOF\n")
        self._write_pod_logs(out)

    def _write_pod_logs(self, out: Path) -> None:
        auto: dict[tuple[str, str, str], list[str]] = {}
        pods = {(p["metadata"]["namespace"], p["metadata"]["name"]) for p in self._pods()}
        for d in self.logs:
            key = (d["kubernetes.namespace"], d["kubernetes.pod.name"],
                   d["kubernetes.container.name"])
            if key in self.auto_pod_logs_skip or key[:2] not in pods:
                continue
            auto.setdefault(key, []).append(
                f"{d['@timestamp']} {d['log.level'].upper():5} {d['message']}"
            )
        for (ns, pod, cont), lines in auto.items():
            self._write_lines(out, ns, pod, cont, False, lines)
        for (ns, pod, cont, prev), lines in self.pod_logs.items():
            self._write_lines(out, ns, pod, cont, prev, lines)

    def _pods(self) -> list[Obj]:
        return [o for o in self.objects if o.get("kind") == "Pod"]

    @staticmethod
    def _write_lines(
        out: Path, ns: str, pod: str, cont: str, prev: bool, lines: list[str]
    ) -> None:
        d = out / "pod-logs" / ns / pod
        d.mkdir(parents=True, exist_ok=True)
        name = f"{cont}.previous.log" if prev else f"{cont}.log"
        (d / name).write_text("\n".join(lines) + "\n")


def digest(text: str, n: int) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:n]


def _esc(v: str) -> str:
    return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _num(v: float) -> str:
    if float(v).is_integer() and abs(v) < 1e15:
        return str(int(v))
    return f"{v:.6g}" if abs(v) < 1e-3 else f"{v:.4f}".rstrip("0").rstrip(".")


# --------------------------------------------------------------------- objects


def namespace(name: str, created: str, labels: dict[str, str] | None = None) -> Obj:
    lab = {"kubernetes.io/metadata.name": name}
    lab.update(labels or {})
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name, "labels": lab, "creationTimestamp": created},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


def node(
    name: str,
    created: str,
    heartbeat: str,
    *,
    cpu: str = "3920m",
    memory: str = "15134508Ki",
    eph: str = "95551679124",
    pods: str = "58",
    labels: dict[str, str] | None = None,
    kernel: str = "6.1.109-118.189.amzn2023.x86_64",
    image: str = "Amazon Linux 2023.6.20241031",
    kubelet: str = "v1.30.4-eks-a737599",
    taints: list[Obj] | None = None,
    conditions: dict[str, tuple[str, str, str]] | None = None,
    ip: str = "10.0.0.1",
    transition: str | None = None,
) -> Obj:
    conds_default = {
        "MemoryPressure": ("False", "KubeletHasSufficientMemory",
                           "kubelet has sufficient memory available"),
        "DiskPressure": ("False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        "PIDPressure": ("False", "KubeletHasSufficientPID",
                        "kubelet has sufficient PID available"),
        "Ready": ("True", "KubeletReady", "kubelet is posting ready status"),
    }
    conds_default.update(conditions or {})
    lab = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "node.kubernetes.io/instance-type": "m6i.xlarge",
        "topology.kubernetes.io/zone": "us-east-1a",
    }
    lab.update(labels or {})
    spec: Obj = {"providerID": f"aws:///us-east-1a/i-0{digest(name, 16)}"}
    if taints:
        spec["taints"] = taints
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": lab, "creationTimestamp": created},
        "spec": spec,
        "status": {
            "capacity": {"cpu": "4", "memory": "16069932Ki", "ephemeral-storage": "104845292Ki",
                         "pods": pods},
            "allocatable": {"cpu": cpu, "memory": memory, "ephemeral-storage": eph, "pods": pods},
            "conditions": [
                {
                    "type": t,
                    "status": s,
                    "reason": r,
                    "message": msg,
                    "lastHeartbeatTime": heartbeat,
                    "lastTransitionTime": transition or created,
                }
                for t, (s, r, msg) in conds_default.items()
            ],
            "addresses": [
                {"type": "InternalIP", "address": ip},
                {"type": "Hostname", "address": name},
            ],
            "nodeInfo": {
                "kernelVersion": kernel,
                "osImage": image,
                "containerRuntimeVersion": "containerd://1.7.22",
                "kubeletVersion": kubelet,
                "kubeProxyVersion": kubelet,
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
        },
    }


def container(
    name: str,
    image: str,
    *,
    port: int | None = 8080,
    cpu_req: str = "100m",
    mem_req: str = "128Mi",
    cpu_lim: str | None = None,
    mem_lim: str | None = "256Mi",
    eph_req: str | None = None,
    command: list[str] | None = None,
    args: list[str] | None = None,
    env: list[Obj] | None = None,
    readiness: Obj | None = None,
    liveness: Obj | None = None,
    protocol: str = "TCP",
) -> Obj:
    c: Obj = {"name": name, "image": image}
    if command:
        c["command"] = command
    if args:
        c["args"] = args
    if port:
        c["ports"] = [{"name": "http", "containerPort": port, "protocol": protocol}]
    if env:
        c["env"] = env
    req: Obj = {"cpu": cpu_req, "memory": mem_req}
    if eph_req:
        req["ephemeral-storage"] = eph_req
    lim: Obj = {}
    if cpu_lim:
        lim["cpu"] = cpu_lim
    if mem_lim:
        lim["memory"] = mem_lim
    c["resources"] = {"requests": req, "limits": lim} if lim else {"requests": req}
    if readiness:
        c["readinessProbe"] = readiness
    if liveness:
        c["livenessProbe"] = liveness
    c["imagePullPolicy"] = "IfNotPresent"
    c["terminationMessagePath"] = "/dev/termination-log"
    c["terminationMessagePolicy"] = "File"
    return c


def http_probe(path: str, port: int | str = "http", delay: int = 5, period: int = 10,
               failures: int = 3) -> Obj:
    return {
        "httpGet": {"path": path, "port": port, "scheme": "HTTP"},
        "initialDelaySeconds": delay,
        "periodSeconds": period,
        "timeoutSeconds": 1,
        "successThreshold": 1,
        "failureThreshold": failures,
    }


def cstatus(
    name: str,
    image: str,
    state: Obj,
    *,
    ready: bool,
    restarts: int = 0,
    last: Obj | None = None,
    started: bool | None = None,
) -> Obj:
    cs: Obj = {
        "name": name,
        "image": image,
        "imageID": f"{image.split(':')[0]}@sha256:{digest(image, 64)}",
        "containerID": f"containerd://{digest(f'{name}/{image}/{restarts}/{state}', 64)}",
        "ready": ready,
        "restartCount": restarts,
        "started": ready if started is None else started,
        "state": state,
        "lastState": last or {},
    }
    return cs


@dataclass
class AppSpec:
    ns: str
    name: str
    image: str
    replicas: int
    nodes: list[str]
    revision: int = 3
    rs_age_min: float = 60 * 24 * 4
    created: str = "2025-06-02T10:14:05Z"
    port: int | None = 8080
    service_port: int = 80
    cpu_req: str = "100m"
    mem_req: str = "128Mi"
    mem_lim: str | None = "256Mi"
    cpu_lim: str | None = None
    kind: str = "http"  # http | worker | none
    rps: float = 5.0
    mem_mb: float = 120.0
    cpu_cores: float = 0.05
    readiness: str | None = "/healthz"
    routes: tuple[str, ...] = ("/api/v1/items",)
    log_every: float = 1.5  # minutes between access log lines per pod
    service: bool = True
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    env: list[Obj] = field(default_factory=list)
    service_name: str | None = None
    worker_lines: tuple[str, ...] = ("processed batch size={n} in {ms}ms",)
    container_name: str | None = None


def pod_template(spec: AppSpec, containers: list[Obj], pth: str) -> Obj:
    labels = {"app.kubernetes.io/name": spec.name, "app.kubernetes.io/instance": spec.name}
    labels.update(spec.labels)
    if pth:
        labels["pod-template-hash"] = pth
    return {
        "metadata": {"labels": labels, "annotations": dict(spec.annotations) or None},
        "spec": {
            "containers": containers,
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": spec.name,
        },
    }


def _clean(o: Any) -> Any:
    if isinstance(o, dict):
        return {k: _clean(v) for k, v in o.items() if v is not None}
    if isinstance(o, list):
        return [_clean(v) for v in o]
    return o


def app_container(spec: AppSpec) -> Obj:
    return container(
        spec.container_name or spec.name,
        spec.image,
        port=spec.port,
        cpu_req=spec.cpu_req,
        mem_req=spec.mem_req,
        cpu_lim=spec.cpu_lim,
        mem_lim=spec.mem_lim,
        env=spec.env or None,
        readiness=http_probe(spec.readiness) if spec.readiness and spec.port else None,
        liveness=http_probe(spec.readiness, delay=15, period=20)
        if spec.readiness and spec.port
        else None,
    )


def deployment(
    sc: Scenario,
    spec: AppSpec,
    containers: list[Obj],
    *,
    revision: int,
    ready: int,
    updated: int,
    available: int,
    unavailable: int = 0,
    conditions: list[Obj] | None = None,
    strategy: Obj | None = None,
    change_cause: str | None = None,
    generation: int | None = None,
) -> Obj:
    ann = {"deployment.kubernetes.io/revision": str(revision),
           "meta.helm.sh/release-name": spec.name,
           "meta.helm.sh/release-namespace": spec.ns}
    if change_cause:
        ann["kubernetes.io/change-cause"] = change_cause
    gen = generation or revision + 2
    tmpl = pod_template(spec, containers, "")
    labels = {"app.kubernetes.io/name": spec.name, "app.kubernetes.io/managed-by": "Helm"}
    labels.update(spec.labels)
    status: Obj = {
        "observedGeneration": gen,
        "replicas": max(ready, updated) if not unavailable else updated + ready,
        "updatedReplicas": updated,
        "readyReplicas": ready,
        "availableReplicas": available,
        "conditions": conditions
        or [
            {
                "type": "Available",
                "status": "True",
                "reason": "MinimumReplicasAvailable",
                "message": "Deployment has minimum availability.",
                "lastUpdateTime": sc.t(min(spec.rs_age_min + 3, 60 * 24 * 6.5)),
                "lastTransitionTime": sc.t(min(spec.rs_age_min + 3, 60 * 24 * 6.5)),
            },
            {
                "type": "Progressing",
                "status": "True",
                "reason": "NewReplicaSetAvailable",
                "message": f'ReplicaSet "{spec.name}-x" has successfully progressed.',
                "lastUpdateTime": sc.t(spec.rs_age_min - 1),
                "lastTransitionTime": sc.t(min(spec.rs_age_min + 3, 60 * 24 * 6.5)),
            },
        ],
    }
    if unavailable:
        status["unavailableReplicas"] = unavailable
    return _clean(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {
                "name": spec.name,
                "namespace": spec.ns,
                "uid": sc.uid(),
                "generation": gen,
                "labels": labels,
                "annotations": ann,
                "creationTimestamp": spec.created,
            },
            "spec": {
                "replicas": spec.replicas,
                "revisionHistoryLimit": 10,
                "progressDeadlineSeconds": 600,
                "selector": {"matchLabels": {"app.kubernetes.io/name": spec.name,
                                             "app.kubernetes.io/instance": spec.name}},
                "strategy": strategy
                or {"type": "RollingUpdate",
                    "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
                "template": tmpl,
            },
            "status": status,
        }
    )


def replicaset(
    sc: Scenario,
    spec: AppSpec,
    dep: Obj,
    containers: list[Obj],
    pth: str,
    *,
    revision: int,
    replicas: int,
    ready: int,
    created: str,
    conditions: list[Obj] | None = None,
) -> Obj:
    name = f"{spec.name}-{pth}"
    tmpl = pod_template(spec, containers, pth)
    status: Obj = {
        "replicas": replicas,
        "fullyLabeledReplicas": replicas,
        "readyReplicas": ready,
        "availableReplicas": ready,
        "observedGeneration": 1,
    }
    if conditions:
        status["conditions"] = conditions
    if replicas == 0:
        status = {"replicas": 0, "observedGeneration": 2}
    return _clean(
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": name,
                "namespace": spec.ns,
                "uid": sc.uid(),
                "labels": dict(tmpl["metadata"]["labels"]),
                "annotations": {
                    "deployment.kubernetes.io/revision": str(revision),
                    "deployment.kubernetes.io/desired-replicas": str(spec.replicas),
                    "deployment.kubernetes.io/max-replicas": str(spec.replicas + 1),
                },
                "ownerReferences": [
                    {
                        "apiVersion": "apps/v1",
                        "kind": "Deployment",
                        "name": spec.name,
                        "uid": dep["metadata"]["uid"],
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
                "creationTimestamp": created,
            },
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": dict(tmpl["metadata"]["labels"])},
                "template": tmpl,
            },
            "status": status,
        }
    )


def pod(
    sc: Scenario,
    spec: AppSpec,
    rs: Obj,
    containers: list[Obj],
    suffix: str,
    *,
    node_name: str | None,
    ip: str | None,
    created: str,
    phase: str,
    statuses: list[Obj],
    ready: bool,
    conditions: list[Obj] | None = None,
) -> Obj:
    pth = rs["metadata"]["labels"]["pod-template-hash"]
    name = f"{rs['metadata']['name']}-{suffix}"
    if conditions is None:
        conditions = [
            {"type": "PodReadyToStartContainers", "status": "True", "lastTransitionTime": created},
            {"type": "Initialized", "status": "True", "lastTransitionTime": created},
            {"type": "Ready", "status": "True" if ready else "False",
             "lastTransitionTime": created},
            {"type": "ContainersReady", "status": "True" if ready else "False",
             "lastTransitionTime": created},
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": created},
        ]
    labels = dict(rs["spec"]["template"]["metadata"]["labels"])
    labels["pod-template-hash"] = pth
    status: Obj = {"phase": phase, "conditions": conditions, "qosClass": "Burstable"}
    if node_name:
        status["hostIP"] = sc.node_ips.get(node_name, "10.0.0.1")
    if ip:
        status["podIP"] = ip
        status["podIPs"] = [{"ip": ip}]
    if statuses:
        status["startTime"] = created
        status["containerStatuses"] = statuses
    pspec = dict(rs["spec"]["template"]["spec"])
    pspec["containers"] = containers
    if node_name:
        pspec["nodeName"] = node_name
    return _clean(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "generateName": f"{rs['metadata']['name']}-",
                "namespace": spec.ns,
                "uid": sc.uid(),
                "labels": labels,
                "annotations": rs["spec"]["template"]["metadata"].get("annotations"),
                "ownerReferences": [
                    {
                        "apiVersion": "apps/v1",
                        "kind": "ReplicaSet",
                        "name": rs["metadata"]["name"],
                        "uid": rs["metadata"]["uid"],
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
                "creationTimestamp": created,
            },
            "spec": pspec,
            "status": status,
        }
    )


def service(
    sc: Scenario,
    ns: str,
    name: str,
    selector: dict[str, str],
    port: int,
    target: int | str,
    *,
    protocol: str = "TCP",
    cluster_ip: str | None = None,
    created: str = "2025-06-02T10:14:05Z",
    labels: dict[str, str] | None = None,
    port_name: str = "http",
) -> Obj:
    ip = cluster_ip or f"172.20.{sc.rng.randint(1, 250)}.{sc.rng.randint(2, 250)}"
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": name,
            "namespace": ns,
            "labels": labels or {"app.kubernetes.io/name": name,
                                 "app.kubernetes.io/managed-by": "Helm"},
            "annotations": {"meta.helm.sh/release-name": name,
                            "meta.helm.sh/release-namespace": ns},
            "creationTimestamp": created,
        },
        "spec": {
            "type": "ClusterIP",
            "clusterIP": ip,
            "clusterIPs": [ip],
            "selector": selector,
            "ports": [{"name": port_name, "port": port, "targetPort": target,
                       "protocol": protocol}],
            "sessionAffinity": "None",
        },
        "status": {"loadBalancer": {}},
    }


def endpoints(
    ns: str,
    name: str,
    ready: list[PodRef],
    not_ready: list[PodRef],
    port: int,
    *,
    protocol: str = "TCP",
    port_name: str = "http",
    created: str = "2025-06-02T10:14:05Z",
) -> Obj:
    def addr(r: PodRef) -> Obj:
        return {"ip": r.ip, "nodeName": r.node,
                "targetRef": {"kind": "Pod", "namespace": r.ns, "name": r.name}}

    subset: Obj = {"ports": [{"name": port_name, "port": port, "protocol": protocol}]}
    if ready:
        subset["addresses"] = [addr(r) for r in ready]
    if not_ready:
        subset["notReadyAddresses"] = [addr(r) for r in not_ready]
    return {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {"name": name, "namespace": ns, "creationTimestamp": created,
                     "labels": {"app.kubernetes.io/name": name}},
        "subsets": [subset] if (ready or not_ready) else [],
    }


# --------------------------------------------------------------------- healthy apps

STATUS_OK = (200, 200, 200, 200, 200, 200, 200, 200, 201, 204, 304)
VERBS = ("GET", "GET", "GET", "POST")


def add_app(sc: Scenario, spec: AppSpec, *, start_logs: float = 60.0) -> AppRefs:
    """A healthy workload: Deployment, ReplicaSet, Ready pods, Service, logs and metrics."""
    cont = app_container(spec)
    dep = deployment(sc, spec, [cont], revision=spec.revision, ready=spec.replicas,
                     updated=spec.replicas, available=spec.replicas)
    pth = sc.hash(9 if sc.rng.random() < 0.5 else 10)
    rs_created = sc.t(spec.rs_age_min)
    rs = replicaset(sc, spec, dep, [cont], pth, revision=spec.revision, replicas=spec.replicas,
                    ready=spec.replicas, created=rs_created)
    dep["status"]["conditions"][1]["message"] = (
        f'ReplicaSet "{rs["metadata"]["name"]}" has successfully progressed.'
    )
    pods: list[Obj] = []
    refs: list[PodRef] = []
    for i in range(spec.replicas):
        n = spec.nodes[i % len(spec.nodes)]
        ip = sc.pod_ip(n)
        age = spec.rs_age_min - sc.rng.uniform(0.2, 1.5)
        created = sc.t(age)
        st = cstatus(cont["name"], spec.image, {"running": {"startedAt": sc.t(age - 0.1)}},
                     ready=True)
        p = pod(sc, spec, rs, [cont], sc.hash(5), node_name=n, ip=ip, created=created,
                phase="Running", statuses=[st], ready=True)
        pods.append(p)
        refs.append(PodRef(spec.ns, p["metadata"]["name"], n, ip, [cont["name"]],
                           spec.service_name or spec.name, sc.ago(age)))
    svc = ep = None
    if spec.service and spec.port:
        sel = {"app.kubernetes.io/name": spec.name, "app.kubernetes.io/instance": spec.name}
        svc = service(sc, spec.ns, spec.name, sel, spec.service_port, "http",
                      created=spec.created)
        ep = endpoints(spec.ns, spec.name, refs, [], spec.port, created=spec.created)
    sc.add(dep, rs, *pods)
    if svc and ep:
        sc.add(svc, ep)
    for r in refs:
        healthy_logs(sc, spec, r, start_logs, 0.0)
        healthy_metrics(sc, spec, r)
    return AppRefs(dep, rs, pods, refs, svc, ep)


def healthy_logs(sc: Scenario, spec: AppSpec, r: PodRef, start: float, end: float) -> None:
    if spec.kind == "http":
        for m in sc.spread(start, end, spec.log_every):
            verb = sc.rng.choice(VERBS)
            route = sc.rng.choice(spec.routes)
            code = sc.rng.choice(STATUS_OK) if verb == "GET" else sc.rng.choice((200, 201))
            ms = round(sc.rng.lognormvariate(2.6, 0.5), 1)
            sc.log(m, r, "info", f"{verb} {route} {code} {ms}ms",
                   **{"http.response.status_code": code})
    elif spec.kind == "worker":
        for m in sc.spread(start, end, spec.log_every):
            line = sc.rng.choice(spec.worker_lines)
            sc.log(m, r, "info", line.format(n=sc.rng.randint(5, 200), ms=sc.rng.randint(8, 900),
                                             id=sc.hash(8)))


def healthy_metrics(
    sc: Scenario,
    spec: AppSpec,
    r: PodRef,
    *,
    mem: Callable[[float], float | None] | None = None,
    restarts: int = 0,
    since: float | None = None,
) -> None:
    cname = r.containers[0]

    def alive(f: Callable[[float], float | None]) -> Callable[[float], float | None]:
        return lambda m: None if since is not None and m > since else f(m)

    lab = {"namespace": r.ns, "pod": r.name, "container": cname, "node": r.node}
    base = spec.mem_mb * 1024 * 1024 * sc.rng.uniform(0.85, 1.15)
    sc.gauge("container_memory_working_set_bytes", "Current working set of the container in bytes",
             lab, alive(mem or (lambda m: float(int(sc.noisy(base, 0.03))))))
    cpu = spec.cpu_cores * sc.rng.uniform(0.7, 1.3)
    sc.counter("container_cpu_usage_seconds_total", "Cumulative cpu time consumed in seconds",
               lab, lambda m: sc.noisy(cpu, 0.2),
               start=sc.rng.uniform(500, 20000) if since is None else 0.0, since=since)
    ksm = {"namespace": r.ns, "pod": r.name, "container": cname}
    restarts_series(sc, ksm, alive(lambda m: float(restarts)))
    if spec.kind == "http" and spec.rps > 0:
        rps = spec.rps / max(1, spec.replicas)
        for code, frac in (("200", 0.99),):
            sc.counter("http_requests_total", "Total HTTP requests handled.",
                       {"namespace": r.ns, "service": r.service, "pod": r.name, "code": code},
                       lambda m, f=frac: sc.noisy(rps * f, 0.15),
                       start=sc.rng.uniform(1e4, 5e5) * frac if since is None else 0.0,
                       since=since)


def deployment_available(sc: Scenario, ns: str, name: str,
                         fn: Callable[[float], float | None]) -> None:
    sc.gauge("kube_deployment_status_replicas_available",
             "The number of available replicas per deployment.",
             {"namespace": ns, "deployment": name}, fn)


def restarts_series(sc: Scenario, labels: dict[str, str],
                    fn: Callable[[float], float | None]) -> None:
    sc.series("kube_pod_container_status_restarts_total", "counter",
              "The number of container restarts per container.", labels, fn)


def add_nodes(sc: Scenario, names: list[str], created: str, **kw: Any) -> list[Obj]:
    out = []
    for i, n in enumerate(names):
        ip = f"10.0.{16 + i * 16 + sc.rng.randint(0, 15)}.{sc.rng.randint(10, 250)}"
        sc.node_ips[n] = ip
        zone = ("us-east-1a", "us-east-1b", "us-east-1c")[i % 3]
        kw.setdefault("transition", sc.t(60 * 24 * 6 + sc.rng.uniform(0, 300)))
        nd = node(n, created, sc.t(0.2), ip=ip, **kw)
        nd["metadata"]["labels"]["topology.kubernetes.io/zone"] = zone
        out.append(nd)
    sc.add(*out)
    return out


def add_daemonset(
    sc: Scenario,
    ns: str,
    name: str,
    image: str,
    nodes: list[str],
    *,
    created: str = "2025-03-11T08:00:00Z",
    mem_lim: str = "200Mi",
    lines: tuple[str, ...] = (),
    every: float = 6.0,
) -> list[PodRef]:
    cont = container(name, image, port=None, cpu_req="50m", mem_req="64Mi", mem_lim=mem_lim)
    labels = {"app.kubernetes.io/name": name}
    ds = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": ns, "uid": sc.uid(), "labels": labels,
                     "creationTimestamp": created, "generation": 4,
                     "annotations": {"deprecated.daemonset.template.generation": "4"}},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels},
                         "spec": {"containers": [cont], "serviceAccountName": name,
                                  "tolerations": [{"operator": "Exists"}]}},
            "updateStrategy": {"type": "RollingUpdate",
                               "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
        },
        "status": {"currentNumberScheduled": len(nodes), "desiredNumberScheduled": len(nodes),
                   "numberAvailable": len(nodes), "numberReady": len(nodes),
                   "numberMisscheduled": 0, "updatedNumberScheduled": len(nodes),
                   "observedGeneration": 4},
    }
    sc.add(ds)
    refs = []
    for n in nodes:
        pname = f"{name}-{sc.hash(5)}"
        started = sc.t(60 * 24 * 6 + sc.rng.uniform(0, 300))
        p = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": pname, "namespace": ns, "uid": sc.uid(),
                "generateName": f"{name}-",
                "labels": {**labels, "controller-revision-hash": sc.hash(10),
                           "pod-template-generation": "4"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": name,
                                     "uid": ds["metadata"]["uid"], "controller": True,
                                     "blockOwnerDeletion": True}],
                "creationTimestamp": started,
            },
            "spec": {"nodeName": n, "containers": [cont], "serviceAccountName": name,
                     "restartPolicy": "Always", "tolerations": [{"operator": "Exists"}]},
            "status": {
                "phase": "Running", "hostIP": sc.node_ips.get(n, "10.0.0.1"),
                "podIP": sc.node_ips.get(n, "10.0.0.1"), "startTime": started,
                "qosClass": "Burstable",
                "conditions": [{"type": "Ready", "status": "True",
                                "lastTransitionTime": started}],
                "containerStatuses": [cstatus(name, image, {"running": {"startedAt": started}},
                                              ready=True)],
            },
        }
        sc.add(p)
        r = PodRef(ns, pname, n, sc.node_ips.get(n, ""), [name], name, sc.ago(60 * 24 * 6))
        refs.append(r)
        if lines:
            for m in sc.spread(60, 0, every):
                sc.log(m, r, "info", sc.rng.choice(lines).format(n=sc.rng.randint(1, 400)))
    return refs


@dataclass
class NewPod:
    """How one pod of a new ReplicaSet looks: scheduled or not, its statuses."""

    node: str | None
    phase: str
    statuses: list[Obj]
    ready: bool
    conditions: list[Obj] | None = None


@dataclass
class Rollout:
    deployment: Obj
    old_rs: Obj
    new_rs: Obj
    old_refs: list[PodRef]
    new_refs: list[PodRef]
    new_pods: list[Obj]


def add_rollout(
    sc: Scenario,
    spec: AppSpec,
    old_cont: list[Obj],
    new_cont: list[Obj],
    *,
    old_rev: int,
    new_rev: int,
    rollout_min: float,
    old_count: int,
    new_pods: list[Callable[[str], NewPod]],
    dep_conditions: list[Obj],
    strategy: Obj | None = None,
    change_cause: str | None = None,
    new_annotations: dict[str, str] | None = None,
    old_rs_age_min: float = 60 * 24 * 6,
    rs_conditions: list[Obj] | None = None,
    new_rs_replicas: int | None = None,
) -> Rollout:
    """A Deployment mid-rollout: old ReplicaSet still serving, new one in trouble."""
    new_ready = sum(1 for f in new_pods if f("x").ready)
    dep = deployment(sc, spec, new_cont, revision=new_rev, ready=old_count + new_ready,
                     updated=len(new_pods), available=old_count + new_ready,
                     unavailable=max(0, spec.replicas - old_count - new_ready),
                     conditions=dep_conditions, strategy=strategy, change_cause=change_cause)
    if new_annotations:
        dep["spec"]["template"]["metadata"]["annotations"] = dict(new_annotations)
    old_pth, new_pth = sc.hash(10), sc.hash(9)
    old_spec_ann = dict(spec.annotations)
    old_rs = replicaset(sc, spec, dep, old_cont, old_pth, revision=old_rev, replicas=old_count,
                        ready=old_count, created=sc.t(old_rs_age_min))
    old_rs["spec"]["template"]["metadata"]["annotations"] = old_spec_ann or None
    old_rs = _clean(old_rs)
    new_rs = replicaset(sc, spec, dep, new_cont, new_pth, revision=new_rev,
                        replicas=new_rs_replicas if new_rs_replicas is not None
                        else len(new_pods),
                        ready=new_ready, created=sc.t(rollout_min), conditions=rs_conditions)
    if new_annotations:
        new_rs["spec"]["template"]["metadata"]["annotations"] = dict(new_annotations)
    sc.add(dep, old_rs, new_rs)
    old_refs: list[PodRef] = []
    for i in range(old_count):
        n = spec.nodes[i % len(spec.nodes)]
        ip = sc.pod_ip(n)
        age = old_rs_age_min - sc.rng.uniform(0.2, 2)
        st = cstatus(old_cont[0]["name"], old_cont[0]["image"],
                     {"running": {"startedAt": sc.t(age - 0.1)}}, ready=True)
        extra = [cstatus(c["name"], c["image"], {"running": {"startedAt": sc.t(age - 0.1)}},
                         ready=True) for c in old_cont[1:]]
        p = pod(sc, spec, old_rs, old_cont, sc.hash(5), node_name=n, ip=ip, created=sc.t(age),
                phase="Running", statuses=[st, *extra], ready=True)
        sc.add(p)
        old_refs.append(PodRef(spec.ns, p["metadata"]["name"], n, ip,
                               [c["name"] for c in old_cont], spec.service_name or spec.name,
                               sc.ago(age)))
    new_refs: list[PodRef] = []
    objs: list[Obj] = []
    for i, f in enumerate(new_pods):
        created_m = rollout_min - 0.05 - i * 0.3
        desc = f(sc.t(created_m))
        ip = sc.pod_ip(desc.node) if desc.node else None
        p = pod(sc, spec, new_rs, new_cont, sc.hash(5), node_name=desc.node, ip=ip,
                created=sc.t(created_m), phase=desc.phase, statuses=desc.statuses,
                ready=desc.ready, conditions=desc.conditions)
        if desc.phase == "Pending" and not desc.node:
            p["status"].pop("qosClass", None)
            p["status"]["qosClass"] = "Burstable"
        sc.add(p)
        objs.append(p)
        new_refs.append(PodRef(spec.ns, p["metadata"]["name"], desc.node or "", ip or "",
                               [c["name"] for c in new_cont], spec.service_name or spec.name,
                               sc.ago(created_m)))
    return Rollout(dep, old_rs, new_rs, old_refs, new_refs, objs)


def cond(type_: str, status: str, reason: str, message: str, at: str,
         updated: str | None = None) -> Obj:
    return {"type": type_, "status": status, "reason": reason, "message": message,
            "lastUpdateTime": updated or at, "lastTransitionTime": at}
