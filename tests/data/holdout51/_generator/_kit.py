"""Shared builders for the holdout51 scenarios: objects, logs, metrics, writing."""

from __future__ import annotations

import hashlib
import json
import random
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

Obj = dict[str, Any]
ALNUM = "bcdfghjklmnpqrstvwxz2456789"


def parse(ts: str) -> datetime:
    return datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def iso(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_ms(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


@dataclass
class Pod:
    """A pod as the log and metric helpers need it."""

    ns: str
    name: str
    node: str
    container: str
    service: str
    ip: str = ""


@dataclass
class CState:
    """One container's status."""

    ready: bool = True
    restarts: int = 0
    started_min: float | None = None
    waiting: tuple[str, str] | None = None
    last: tuple[str, int, float, float] | None = None  # reason, exit code, started, finished


@dataclass
class PState:
    """One pod's status."""

    phase: str = "Running"
    scheduled: bool = True
    containers: list[CState] | None = None
    unschedulable: str | None = None


@dataclass
class Family:
    mtype: str
    help: str
    series: dict[tuple[tuple[str, str], ...], list[tuple[int, float]]] = field(
        default_factory=dict
    )


class Story:
    """Everything one scenario writes."""

    def __init__(self, sid: str, now: str, seed: int) -> None:
        self.sid = sid
        self.now = parse(now)
        self.rng = random.Random(seed)
        self.objects: list[Obj] = []
        self.logs: list[Obj] = []
        self.families: dict[str, Family] = {}
        self.pod_logs: dict[str, list[str]] = {}
        self._ips: set[str] = set()

    # time -------------------------------------------------------------
    def at(self, minutes_ago: float) -> datetime:
        return self.now - timedelta(minutes=minutes_ago)

    def ts(self, minutes_ago: float) -> str:
        return iso(self.at(minutes_ago))

    # names --------------------------------------------------------------
    def suffix(self, n: int = 5) -> str:
        return "".join(self.rng.choice(ALNUM) for _ in range(n))

    def uid(self, *parts: str) -> str:
        digest = hashlib.md5("/".join((self.sid, *parts)).encode()).hexdigest()
        return str(uuid.UUID(digest))

    def ip(self, prefix: str = "10.0") -> str:
        while True:
            a = self.rng.randint(1, 15) if prefix.count(".") == 1 else None
            b = self.rng.randint(2, 250)
            cand = f"{prefix}.{a}.{b}" if a is not None else f"{prefix}.{b}"
            if cand not in self._ips:
                self._ips.add(cand)
                return cand

    def add(self, *objs: Obj) -> None:
        self.objects.extend(objs)

    # logs ---------------------------------------------------------------
    def log(
        self,
        when: datetime,
        pod: Pod,
        level: str,
        message: str,
        fields: dict[str, Any] | None = None,
    ) -> None:
        doc: Obj = {
            "@timestamp": iso_ms(when),
            "message": message,
            "log.level": level,
            "service.name": pod.service,
            "kubernetes.namespace": pod.ns,
            "kubernetes.pod.name": pod.name,
            "kubernetes.container.name": pod.container,
            "kubernetes.node.name": pod.node,
        }
        if fields:
            doc.update(fields)
        self.logs.append(doc)

    def chatter(
        self,
        pods: Iterable[Pod],
        make: Callable[[random.Random], tuple[str, str] | str],
        every_s: float = 60.0,
        start_min: float = 60.0,
        end_min: float = 0.0,
        fields: Callable[[random.Random], dict[str, Any]] | None = None,
    ) -> None:
        """Periodic lines from each pod between start_min and end_min minutes ago."""
        for pod in pods:
            t = self.at(start_min) + timedelta(seconds=self.rng.uniform(0, every_s))
            stop = self.at(end_min)
            while t < stop:
                out = make(self.rng)
                level, msg = out if isinstance(out, tuple) else ("info", out)
                self.log(t, pod, level, msg, fields(self.rng) if fields else None)
                t += timedelta(seconds=every_s * self.rng.uniform(0.6, 1.4))

    def pod_log(self, pod: Pod, lines: list[str], previous: bool = False) -> None:
        ext = "previous.log" if previous else "log"
        self.pod_logs[f"{pod.ns}/{pod.name}/{pod.container}.{ext}"] = lines

    # metrics ------------------------------------------------------------
    def grid(self, span_min: float = 60.0, step_s: int = 150) -> list[float]:
        n = int(span_min * 60 // step_s)
        return [span_min - i * step_s / 60.0 for i in range(n + 1)]

    def sample(self, name: str, mtype: str, help_: str, labels: dict[str, str],
               points: list[tuple[float, float]]) -> None:
        fam_name = name[:-6] if mtype == "counter" and name.endswith("_total") else name
        fam = self.families.setdefault(fam_name, Family(mtype, help_))
        key = tuple(sorted(labels.items()))
        series = fam.series.setdefault(key, [])
        for minutes_ago, value in points:
            series.append((int(self.at(minutes_ago).timestamp()), value))

    def gauge(self, name: str, help_: str, labels: dict[str, str],
              fn: Callable[[float], float], span_min: float = 60.0, step_s: int = 150) -> None:
        self.sample(name, "gauge", help_, labels, [(m, fn(m)) for m in self.grid(span_min, step_s)])

    def counter(self, name: str, help_: str, labels: dict[str, str],
                rate: Callable[[float], float], start: float = 0.0,
                resets: Iterable[float] = (), span_min: float = 60.0, step_s: int = 150) -> None:
        """A counter integrating rate (per second); resets (minutes ago) restart it at 0."""
        pending = sorted(resets, reverse=True)
        value = start
        points: list[tuple[float, float]] = []
        for m in self.grid(span_min, step_s):
            if pending and m <= pending[0]:
                pending.pop(0)
                value = 0.0
            else:
                value += max(rate(m), 0.0) * step_s * self.rng.uniform(0.9, 1.1)
            points.append((m, round(value, 3)))
        self.sample(name, "counter", help_, labels, points)

    def pod_metrics(self, pod: Pod, cpu: float = 0.05, mem_mib: float = 200.0,
                    restarts: Callable[[float], float] | None = None,
                    resets: Iterable[float] = (), mem: Callable[[float], float] | None = None
                    ) -> None:
        lab = {"namespace": pod.ns, "pod": pod.name, "container": pod.container,
               "node": pod.node}
        rs = list(resets)
        self.counter("container_cpu_usage_seconds_total",
                     "Cumulative cpu time consumed by the container in core-seconds", lab,
                     lambda m: cpu * self.rng.uniform(0.8, 1.2),
                     start=self.rng.uniform(500, 20000) if not rs else 0.0, resets=rs)
        base = mem_mib * 1024 * 1024
        self.gauge("container_memory_working_set_bytes", "Current working set of the container",
                   lab, mem or (lambda m: int(base * self.rng.uniform(0.97, 1.03))))
        ksm = {"namespace": pod.ns, "pod": pod.name, "container": pod.container}
        self.sample("kube_pod_container_status_restarts_total", "counter",
                    "The number of container restarts per container.", ksm,
                    [(m, float(restarts(m) if restarts else 0)) for m in self.grid()])

    def node_metrics(self, node: str, cpus: int = 2, busy: float = 0.3,
                     mem_gib: float = 16.0, used: float = 0.5) -> None:
        for c in range(cpus):
            lab = {"instance": node, "cpu": str(c), "mode": "idle"}
            self.counter("node_cpu_seconds_total", "Seconds the CPUs spent in each mode.", lab,
                         lambda m: 1.0 - busy * self.rng.uniform(0.85, 1.15),
                         start=self.rng.uniform(1e5, 9e5))
        total = mem_gib * 1024**3
        self.gauge("node_memory_MemTotal_bytes", "Memory information field MemTotal_bytes.",
                   {"instance": node}, lambda m: total)
        self.gauge("node_memory_MemAvailable_bytes",
                   "Memory information field MemAvailable_bytes.", {"instance": node},
                   lambda m: int(total * (1 - used * self.rng.uniform(0.97, 1.03))))

    def http(self, ns: str, service: str, rps: float, err: Callable[[float], float] | None = None,
             code_err: str = "500") -> None:
        lab = {"namespace": ns, "service": service}
        self.counter("http_requests_total", "Total HTTP requests.", {**lab, "code": "200"},
                     lambda m: rps * (1 - (err(m) if err else 0.0)),
                     start=self.rng.uniform(1e5, 1e6))
        if err is not None:
            self.counter("http_requests_total", "Total HTTP requests.",
                         {**lab, "code": code_err}, lambda m: rps * err(m),
                         start=self.rng.uniform(10, 300))

    # writing -------------------------------------------------------------
    def write(self, root: Path, title: str, report: str, truth: Obj) -> None:
        out = root / self.sid
        out.mkdir(parents=True, exist_ok=True)
        scen = {"id": self.sid, "title": title, "now": iso(self.now), "report": report,
                "truth": truth}
        (out / "scenario.yaml").write_text(_dump(scen))
        floor = iso(self.now - timedelta(days=6, hours=20))
        for o in self.objects:
            if "status" in o:
                o["status"] = _clamp(o["status"], floor)
        (out / "cluster.yaml").write_text(
            yaml.dump_all(self.objects, Dumper=_Dumper, sort_keys=False, width=1000)
        )
        logs = sorted(self.logs, key=lambda d: d["@timestamp"])
        (out / "logs.ndjson").write_text("".join(json.dumps(d) + "\n" for d in logs))
        (out / "metrics.om").write_text(self._openmetrics())
        for rel, lines in self.pod_logs.items():
            p = out / "pod-logs" / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text("".join(line + "\n" for line in lines))

    def _openmetrics(self) -> str:
        out: list[str] = []
        for fam_name, fam in self.families.items():
            out.append(f"# HELP {fam_name} {fam.help}")
            out.append(f"# TYPE {fam_name} {fam.mtype}")
            sname = fam_name + "_total" if fam.mtype == "counter" else fam_name
            for key, points in fam.series.items():
                labels = ",".join(f'{k}="{_esc(v)}"' for k, v in key)
                for t, v in sorted(points):
                    out.append(f"{sname}{{{labels}}} {_num(v)} {t}")
        out.append("# EOF")
        return "\n".join(out) + "\n"


def _clamp(v: Any, floor: str) -> Any:
    """Status times no older than floor (the format keeps them within the week)."""
    if isinstance(v, dict):
        return {k: _clamp(x, floor) for k, x in v.items()}
    if isinstance(v, list):
        return [_clamp(x, floor) for x in v]
    if isinstance(v, str) and len(v) == 20 and v[4] == "-" and v[10] == "T" and v < floor:
        return floor
    return v


def _esc(v: str) -> str:
    return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _num(v: float) -> str:
    if float(v).is_integer():
        return str(int(v))
    return repr(round(float(v), 6))


class _Dumper(yaml.SafeDumper):
    pass


def _str_rep(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


_Dumper.add_representer(str, _str_rep)


def _dump(obj: Obj) -> str:
    return yaml.dump(obj, Dumper=_Dumper, sort_keys=False, width=1000)


# --------------------------------------------------------------------------- objects


def meta(st: Story, kind: str, name: str, ns: str | None, *, created: str,
         labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None,
         owner: tuple[str, str, str] | None = None) -> Obj:
    m: Obj = {"name": name}
    if ns:
        m["namespace"] = ns
    m["uid"] = st.uid(kind, ns or "", name)
    m["resourceVersion"] = str(st.rng.randint(100000, 99999999))
    m["creationTimestamp"] = created
    if labels:
        m["labels"] = dict(labels)
    if annotations:
        m["annotations"] = dict(annotations)
    if owner:
        m["ownerReferences"] = [{"apiVersion": owner[0], "kind": owner[1], "name": owner[2],
                                 "uid": st.uid(owner[1], ns or "", owner[2]),
                                 "controller": True, "blockOwnerDeletion": True}]
    return m


def namespace(st: Story, name: str, age_days: float = 300,
              labels: dict[str, str] | None = None) -> Obj:
    lab = {"kubernetes.io/metadata.name": name, **(labels or {})}
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": meta(st, "Namespace", name, None, created=st.ts(age_days * 1440),
                             labels=lab),
            "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}


def node(st: Story, name: str, *, zone: str, itype: str = "m6i.xlarge", cpu: str = "4",
         mem: str = "15896Mi", age_days: float = 20, ready: bool = True,
         labels: dict[str, str] | None = None, extra_conditions: list[Obj] | None = None,
         allocatable_extra: dict[str, str] | None = None,
         volumes_attached: list[Obj] | None = None, volumes_in_use: list[str] | None = None,
         taints: list[Obj] | None = None, ip: str | None = None) -> Obj:
    lab = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
           "kubernetes.io/arch": "amd64", "node.kubernetes.io/instance-type": itype,
           "topology.kubernetes.io/zone": zone,
           "topology.kubernetes.io/region": zone[:-1], **(labels or {})}
    hb = st.ts(st.rng.uniform(0.1, 0.8))
    since = st.ts(age_days * 1440 - 2)
    conds: list[Obj] = []
    for t, msg, reason in [
        ("MemoryPressure", "kubelet has sufficient memory available", "KubeletHasSufficientMemory"),
        ("DiskPressure", "kubelet has no disk pressure", "KubeletHasNoDiskPressure"),
        ("PIDPressure", "kubelet has sufficient PID available", "KubeletHasSufficientPID"),
    ]:
        conds.append({"type": t, "status": "False", "lastHeartbeatTime": hb,
                      "lastTransitionTime": since, "reason": reason, "message": msg})
    conds.append({"type": "Ready", "status": "True" if ready else "Unknown",
                  "lastHeartbeatTime": hb, "lastTransitionTime": since,
                  "reason": "KubeletReady" if ready else "NodeStatusUnknown",
                  "message": "kubelet is posting ready status" if ready
                  else "Kubelet stopped posting node status."})
    conds = (extra_conditions or []) + conds
    alloc = {"cpu": f"{int(cpu) * 1000 - 90}m", "ephemeral-storage": "95551679124",
             "memory": mem, "pods": "58", **(allocatable_extra or {})}
    cap = {"cpu": cpu, "ephemeral-storage": "104845292Ki", "memory": mem, "pods": "58",
           **(allocatable_extra or {})}
    status: Obj = {
        "addresses": [{"type": "InternalIP", "address": ip or st.ip("10.0")},
                      {"type": "Hostname", "address": name}],
        "allocatable": alloc, "capacity": cap, "conditions": conds,
        "nodeInfo": {"architecture": "amd64", "containerRuntimeVersion": "containerd://1.7.22",
                     "kernelVersion": "6.1.112-122.189.amzn2023.x86_64",
                     "kubeProxyVersion": "v1.30.4-eks-a737599",
                     "kubeletVersion": "v1.30.4-eks-a737599", "operatingSystem": "linux",
                     "osImage": "Amazon Linux 2023.6.20241010"},
    }
    if volumes_attached is not None:
        status["volumesAttached"] = volumes_attached
    if volumes_in_use is not None:
        status["volumesInUse"] = volumes_in_use
    spec: Obj = {"providerID": f"aws:///{zone}/i-0{st.uid('i', name)[:16].replace('-', '')}"}
    if taints:
        spec["taints"] = taints
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": meta(st, "Node", name, None, created=st.ts(age_days * 1440), labels=lab),
            "spec": spec, "status": status}


def ctr(name: str, image: str, *, port: int | None = 8080, cpu: str = "250m",
        mem: str = "256Mi", cpu_limit: str | None = None, mem_limit: str | None = "512Mi",
        env: list[Obj] | None = None, liveness: Obj | None = None,
        readiness: Obj | None = None, command: list[str] | None = None,
        args: list[str] | None = None, mounts: list[Obj] | None = None) -> Obj:
    c: Obj = {"name": name, "image": image, "imagePullPolicy": "IfNotPresent"}
    if command:
        c["command"] = command
    if args:
        c["args"] = args
    if port:
        c["ports"] = [{"name": "http", "containerPort": port, "protocol": "TCP"}]
    if env:
        c["env"] = env
    lim: Obj = {}
    if cpu_limit:
        lim["cpu"] = cpu_limit
    if mem_limit:
        lim["memory"] = mem_limit
    c["resources"] = {"requests": {"cpu": cpu, "memory": mem}, **({"limits": lim} if lim else {})}
    if liveness:
        c["livenessProbe"] = liveness
    if readiness:
        c["readinessProbe"] = readiness
    if mounts:
        c["volumeMounts"] = mounts
    c["terminationMessagePath"] = "/dev/termination-log"
    c["terminationMessagePolicy"] = "File"
    return c


def http_probe(path: str, port: int = 8080, period: int = 10, timeout: int = 1,
               failures: int = 3, delay: int = 0) -> Obj:
    return {"httpGet": {"path": path, "port": port, "scheme": "HTTP"},
            "initialDelaySeconds": delay, "periodSeconds": period, "timeoutSeconds": timeout,
            "successThreshold": 1, "failureThreshold": failures}


def _cstatus(st: Story, c: Obj, cs: CState, created_min: float, scheduled: bool) -> Obj:
    out: Obj = {"name": c["name"], "image": c["image"],
                "imageID": f"{c['image'].split(':')[0]}@sha256:"
                           f"{hashlib.sha256(c['image'].encode()).hexdigest()}",
                "ready": cs.ready, "restartCount": cs.restarts, "started": cs.ready}
    if cs.waiting:
        out["state"] = {"waiting": {"reason": cs.waiting[0], "message": cs.waiting[1]}
                        if cs.waiting[1] else {"reason": cs.waiting[0]}}
        out["started"] = False
        if cs.waiting[0] != "ContainerCreating":
            out["containerID"] = f"containerd://{st.uid('c', c['name'], str(created_min))}"
        else:
            out.pop("imageID")
    else:
        started = cs.started_min if cs.started_min is not None else created_min - 0.3
        out["state"] = {"running": {"startedAt": st.ts(started)}}
        out["containerID"] = f"containerd://{st.uid('c', c['name'], str(created_min))}"
        out["started"] = True
    if cs.last:
        reason, code, s, f = cs.last
        out["lastState"] = {"terminated": {
            "exitCode": code, "reason": reason, "startedAt": st.ts(s), "finishedAt": st.ts(f),
            "containerID": f"containerd://{st.uid('c', c['name'], str(s))}"}}
    else:
        out["lastState"] = {}
    return out


def pod_obj(st: Story, *, ns: str, name: str, node_name: str | None, labels: dict[str, str],
            containers: list[Obj], owner: tuple[str, str, str] | None, created_min: float,
            state: PState | None = None, spec_extra: Obj | None = None,
            ip: str | None = None, sa: str = "default",
            annotations: dict[str, str] | None = None) -> Obj:
    state = state or PState()
    spec: Obj = {"containers": containers, "restartPolicy": "Always",
                 "serviceAccountName": sa, "terminationGracePeriodSeconds": 30,
                 "dnsPolicy": "ClusterFirst", "schedulerName": "default-scheduler",
                 "enableServiceLinks": True, "priority": 0,
                 "tolerations": [
                     {"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                      "effect": "NoExecute", "tolerationSeconds": 300},
                     {"key": "node.kubernetes.io/unreachable", "operator": "Exists",
                      "effect": "NoExecute", "tolerationSeconds": 300}]}
    if spec_extra:
        spec.update(spec_extra)
    if node_name and state.scheduled:
        spec["nodeName"] = node_name
    cst = state.containers or [CState() for _ in containers]
    created = st.ts(created_min)
    status: Obj = {"phase": state.phase, "qosClass": "Burstable"}
    if not state.scheduled:
        status["conditions"] = [{"type": "PodScheduled", "status": "False",
                                 "lastProbeTime": None, "lastTransitionTime": created,
                                 "reason": "Unschedulable",
                                 "message": state.unschedulable or "unschedulable"}]
    else:
        all_ready = all(c.ready for c in cst)
        rtime = st.ts(min(c.started_min if c.started_min is not None else created_min - 0.5
                          for c in cst)) if all_ready else st.ts(created_min - 0.2)
        status["conditions"] = [
            {"type": "PodReadyToStartContainers", "status": "True", "lastProbeTime": None,
             "lastTransitionTime": st.ts(created_min - 0.1)},
            {"type": "Initialized", "status": "True", "lastProbeTime": None,
             "lastTransitionTime": created},
            {"type": "Ready", "status": "True" if all_ready else "False", "lastProbeTime": None,
             "lastTransitionTime": rtime,
             **({} if all_ready else {"reason": "ContainersNotReady",
                                      "message": "containers with unready status: ["
                                      + " ".join(c["name"] for c, s in zip(containers, cst,
                                                                           strict=True)
                                                 if not s.ready) + "]"})},
            {"type": "ContainersReady", "status": "True" if all_ready else "False",
             "lastProbeTime": None, "lastTransitionTime": rtime},
            {"type": "PodScheduled", "status": "True", "lastProbeTime": None,
             "lastTransitionTime": created}]
        status["hostIP"] = "10.0.0.1"
        if state.phase == "Running" or any(c.waiting and c.waiting[0] != "ContainerCreating"
                                           for c in cst):
            pip = ip or st.ip("10.0")
            status["podIP"] = pip
            status["podIPs"] = [{"ip": pip}]
        status["startTime"] = created
        status["containerStatuses"] = [_cstatus(st, c, s, created_min, True)
                                       for c, s in zip(containers, cst, strict=True)]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": meta(st, "Pod", name, ns, created=created, labels=labels,
                             annotations=annotations, owner=owner),
            "spec": spec, "status": status}


def fix_host_ips(objects: list[Obj]) -> None:
    """Give each scheduled pod its node's InternalIP as hostIP."""
    ips = {o["metadata"]["name"]: o["status"]["addresses"][0]["address"]
           for o in objects if o["kind"] == "Node"}
    for o in objects:
        if o["kind"] == "Pod" and "hostIP" in o["status"]:
            ip = ips.get(o["spec"].get("nodeName", ""), "10.0.0.1")
            o["status"]["hostIP"] = ip
            o["status"]["hostIPs"] = [{"ip": ip}]


@dataclass
class Workload:
    kind: str
    ns: str
    name: str
    pods: list[Pod]
    objects: list[Obj]


def deployment(st: Story, ns: str, name: str, containers: list[Obj], nodes: list[str], *,
               replicas: int | None = None, age_days: float = 40, rollout_min: float | None = None,
               revision: int = 3, states: list[PState] | None = None,
               labels: dict[str, str] | None = None, spec_extra: Obj | None = None,
               sa: str = "default", pod_created_min: list[float] | None = None,
               annotations: dict[str, str] | None = None,
               pod_annotations: dict[str, str] | None = None) -> Workload:
    """A Deployment, its current ReplicaSet and its pods, spread over nodes."""
    replicas = len(nodes) if replicas is None else replicas
    sel = {"app.kubernetes.io/name": name}
    lab = {**sel, "app.kubernetes.io/part-of": ns, **(labels or {})}
    h = st.suffix(9) + st.suffix(1)
    rollout = rollout_min if rollout_min is not None else st.rng.uniform(2, 6) * 1440
    rs_name = f"{name}-{h}"
    pods: list[Pod] = []
    objs: list[Obj] = []
    ready = 0
    for i in range(replicas):
        pname = f"{rs_name}-{st.suffix()}"
        s = states[i] if states else PState()
        created = pod_created_min[i] if pod_created_min else rollout - st.rng.uniform(0, 2)
        nd = nodes[i % len(nodes)]
        p = pod_obj(st, ns=ns, name=pname, node_name=nd,
                    labels={**lab, "pod-template-hash": h}, containers=containers,
                    owner=("apps/v1", "ReplicaSet", rs_name), created_min=created, state=s,
                    spec_extra=spec_extra, sa=sa, annotations=pod_annotations)
        objs.append(p)
        if p["status"]["phase"] == "Running" and all(
                c["ready"] for c in p["status"].get("containerStatuses", [])):
            ready += 1
        pods.append(Pod(ns, pname, nd if s.scheduled else "", containers[0]["name"], name,
                        p["status"].get("podIP", "")))
    tmpl = {"metadata": {"labels": {**lab}}, "spec": {
        "containers": containers, "restartPolicy": "Always", "serviceAccountName": sa,
        "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
        **(spec_extra or {})}}
    if pod_annotations:
        tmpl["metadata"]["annotations"] = dict(pod_annotations)
    dep = {"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": meta(st, "Deployment", name, ns, created=st.ts(age_days * 1440),
                            labels=lab, annotations={"deployment.kubernetes.io/revision":
                                                     str(revision), **(annotations or {})}),
           "spec": {"replicas": replicas, "revisionHistoryLimit": 10,
                    "selector": {"matchLabels": sel},
                    "strategy": {"type": "RollingUpdate",
                                 "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
                    "template": tmpl},
           "status": {"observedGeneration": revision + 1, "replicas": replicas,
                      "updatedReplicas": replicas, "readyReplicas": ready,
                      "availableReplicas": ready,
                      **({"unavailableReplicas": replicas - ready} if ready < replicas else {}),
                      "conditions": [
                          {"type": "Available",
                           "status": "True" if ready * 4 >= replicas * 3 else "False",
                           "reason": "MinimumReplicasAvailable" if ready * 4 >= replicas * 3
                           else "MinimumReplicasUnavailable",
                           "message": "Deployment has minimum availability."
                           if ready * 4 >= replicas * 3
                           else "Deployment does not have minimum availability.",
                           "lastUpdateTime": st.ts(rollout - 1),
                           "lastTransitionTime": st.ts(rollout - 1)},
                          {"type": "Progressing", "status": "True",
                           "reason": "NewReplicaSetAvailable",
                           "message": f'ReplicaSet "{rs_name}" has successfully progressed.',
                           "lastUpdateTime": st.ts(rollout - 1),
                           "lastTransitionTime": st.ts(age_days * 1440)}]}}
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
          "metadata": meta(st, "ReplicaSet", rs_name, ns, created=st.ts(rollout),
                           labels={**lab, "pod-template-hash": h},
                           annotations={"deployment.kubernetes.io/revision": str(revision),
                                        "deployment.kubernetes.io/desired-replicas":
                                        str(replicas)},
                           owner=("apps/v1", "Deployment", name)),
          "spec": {"replicas": replicas,
                   "selector": {"matchLabels": {**sel, "pod-template-hash": h}},
                   "template": {**tmpl, "metadata": {"labels": {**lab, "pod-template-hash": h}}}},
          "status": {"replicas": replicas, "fullyLabeledReplicas": replicas,
                     "readyReplicas": ready, "availableReplicas": ready,
                     "observedGeneration": 1}}
    objs = [dep, rs, *objs]
    st.add(*objs)
    return Workload("Deployment", ns, name, pods, objs)


def statefulset(st: Story, ns: str, name: str, containers: list[Obj], nodes: list[str], *,
                replicas: int | None = None, age_days: float = 90,
                states: list[PState] | None = None, claim: str | None = None,
                storage: str = "100Gi", storage_class: str = "gp3",
                spec_extra: Obj | None = None, pod_created_min: list[float] | None = None,
                labels: dict[str, str] | None = None) -> Workload:
    replicas = len(nodes) if replicas is None else replicas
    sel = {"app.kubernetes.io/name": name}
    lab = {**sel, "app.kubernetes.io/part-of": ns, **(labels or {})}
    rev = f"{name}-{st.suffix(9)}{st.suffix(1)}"
    objs: list[Obj] = []
    pods: list[Pod] = []
    ready = 0
    for i in range(replicas):
        pname = f"{name}-{i}"
        s = states[i] if states else PState()
        created = pod_created_min[i] if pod_created_min else st.rng.uniform(3, 20) * 1440
        extra = dict(spec_extra or {})
        extra["hostname"] = pname
        extra["subdomain"] = name
        if claim:
            extra["volumes"] = [{"name": claim,
                                 "persistentVolumeClaim": {"claimName": f"{claim}-{pname}"}}]
        nd = nodes[i % len(nodes)] if nodes else None
        p = pod_obj(st, ns=ns, name=pname, node_name=nd,
                    labels={**lab, "controller-revision-hash": rev,
                            "statefulset.kubernetes.io/pod-name": pname,
                            "apps.kubernetes.io/pod-index": str(i)},
                    containers=containers, owner=("apps/v1", "StatefulSet", name),
                    created_min=created, state=s, spec_extra=extra)
        objs.append(p)
        if p["status"]["phase"] == "Running" and all(
                c["ready"] for c in p["status"].get("containerStatuses", [])):
            ready += 1
        pods.append(Pod(ns, pname, (nd or "") if s.scheduled else "", containers[0]["name"],
                        name, p["status"].get("podIP", "")))
    spec: Obj = {"replicas": replicas, "serviceName": name, "podManagementPolicy": "Parallel",
                 "selector": {"matchLabels": sel},
                 "updateStrategy": {"type": "RollingUpdate",
                                    "rollingUpdate": {"partition": 0}},
                 "template": {"metadata": {"labels": lab},
                              "spec": {"containers": containers, **(spec_extra or {})}}}
    if claim:
        spec["volumeClaimTemplates"] = [{
            "apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": claim},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": storage_class,
                     "resources": {"requests": {"storage": storage}}, "volumeMode": "Filesystem"}}]
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet",
           "metadata": meta(st, "StatefulSet", name, ns, created=st.ts(age_days * 1440),
                            labels=lab),
           "spec": spec,
           "status": {"observedGeneration": 4, "replicas": replicas, "readyReplicas": ready,
                      "currentReplicas": replicas, "updatedReplicas": replicas,
                      "availableReplicas": ready, "currentRevision": rev,
                      "updateRevision": rev, "collisionCount": 0}}
    objs = [sts, *objs]
    st.add(*objs)
    return Workload("StatefulSet", ns, name, pods, objs)


def daemonset(st: Story, ns: str, name: str, containers: list[Obj], nodes: list[str], *,
              age_days: float = 120, rollout_min: float | None = None,
              states: list[PState] | None = None, spec_extra: Obj | None = None,
              labels: dict[str, str] | None = None, revision: int = 5) -> Workload:
    sel = {"app.kubernetes.io/name": name}
    lab = {**sel, "app.kubernetes.io/part-of": ns, **(labels or {})}
    rev = f"{st.suffix(9)}{st.suffix(1)}"
    rollout = rollout_min if rollout_min is not None else st.rng.uniform(5, 30) * 1440
    objs: list[Obj] = []
    pods: list[Pod] = []
    for i, nd in enumerate(nodes):
        pname = f"{name}-{st.suffix()}"
        s = states[i] if states else PState()
        p = pod_obj(st, ns=ns, name=pname, node_name=nd,
                    labels={**lab, "controller-revision-hash": rev, "pod-template-generation":
                            str(revision)},
                    containers=containers, owner=("apps/v1", "DaemonSet", name),
                    created_min=rollout - st.rng.uniform(0, 3), state=s, spec_extra=spec_extra)
        objs.append(p)
        pods.append(Pod(ns, pname, nd, containers[0]["name"], name, p["status"]["podIP"]))
    n = len(nodes)
    ds = {"apiVersion": "apps/v1", "kind": "DaemonSet",
          "metadata": meta(st, "DaemonSet", name, ns, created=st.ts(age_days * 1440),
                           labels=lab,
                           annotations={"deprecated.daemonset.template.generation":
                                        str(revision)}),
          "spec": {"selector": {"matchLabels": sel},
                   "updateStrategy": {"type": "RollingUpdate",
                                      "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
                   "template": {"metadata": {"labels": lab},
                                "spec": {"containers": containers, **(spec_extra or {})}}},
          "status": {"currentNumberScheduled": n, "desiredNumberScheduled": n,
                     "numberAvailable": n, "numberReady": n, "numberMisscheduled": 0,
                     "observedGeneration": revision, "updatedNumberScheduled": n}}
    objs = [ds, *objs]
    st.add(*objs)
    return Workload("DaemonSet", ns, name, pods, objs)


def service(st: Story, ns: str, name: str, selector: dict[str, str] | None, port: int,
            target: int | str = 8080, *, age_days: float = 100, created_min: float | None = None,
            cluster_ip: str | None = None, labels: dict[str, str] | None = None,
            annotations: dict[str, str] | None = None, pods: list[Pod] | None = None,
            port_name: str = "http") -> str:
    """A ClusterIP Service and its Endpoints (ready pods given); returns the cluster IP."""
    cip = cluster_ip or st.ip("172.20")
    created = st.ts(created_min) if created_min is not None else st.ts(age_days * 1440)
    spec: Obj = {"type": "ClusterIP", "clusterIP": cip, "clusterIPs": [cip],
                 "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
                 "ports": [{"name": port_name, "port": port, "protocol": "TCP",
                            "targetPort": target}],
                 "sessionAffinity": "None", "internalTrafficPolicy": "Cluster"}
    if selector is not None:
        spec["selector"] = selector
    svc = {"apiVersion": "v1", "kind": "Service",
           "metadata": meta(st, "Service", name, ns, created=created, labels=labels,
                            annotations=annotations),
           "spec": spec, "status": {"loadBalancer": {}}}
    st.add(svc)
    if pods is not None:
        tport = target if isinstance(target, int) else port
        ep: Obj = {"apiVersion": "v1", "kind": "Endpoints",
                   "metadata": meta(st, "Endpoints", name, ns, created=created, labels=labels),
                   "subsets": []}
        addrs = [{"ip": p.ip, "nodeName": p.node,
                  "targetRef": {"kind": "Pod", "namespace": ns, "name": p.name,
                                "uid": st.uid("Pod", ns, p.name)}} for p in pods if p.ip]
        if addrs:
            ep["subsets"] = [{"addresses": addrs,
                              "ports": [{"name": port_name, "port": tport, "protocol": "TCP"}]}]
        st.add(ep)
    return cip


def event(st: Story, ns: str, kind: str, name: str, reason: str, message: str, *,
          type_: str = "Normal", count: int = 1, first_min: float = 30.0,
          last_min: float | None = None, component: str = "kubelet", host: str | None = None,
          field_path: str | None = None, api: str = "v1") -> None:
    last = first_min if last_min is None else last_min
    inv: Obj = {"kind": kind, "namespace": ns, "name": name, "apiVersion": api,
                "uid": st.uid(kind, ns, name)}
    if kind == "Node":
        inv = {"kind": "Node", "name": name, "apiVersion": "v1", "uid": st.uid("Node", "", name)}
    if field_path:
        inv["fieldPath"] = field_path
    src: Obj = {"component": component}
    if host:
        src["host"] = host
    ev_ns = ns or "default"
    tag = st.uid("ev", name, reason, message).replace("-", "")[:16]
    st.add({"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{name}.{tag}",
                         "namespace": ev_ns, "uid": st.uid("ev", name, reason, message),
                         "resourceVersion": str(st.rng.randint(100000, 99999999)),
                         "creationTimestamp": st.ts(first_min)},
            "involvedObject": inv, "reason": reason, "message": message, "type": type_,
            "count": count, "firstTimestamp": st.ts(first_min), "lastTimestamp": st.ts(last),
            "source": src, "reportingComponent": component, "reportingInstance": host or ""})


def configmap(st: Story, ns: str, name: str, data: dict[str, str], age_days: float = 60,
              created_min: float | None = None) -> None:
    created = st.ts(created_min) if created_min is not None else st.ts(age_days * 1440)
    st.add({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": meta(st, "ConfigMap", name, ns, created=created), "data": data})


def access(paths: list[str], svc: str, slow: float = 40.0,
           errors: float = 0.0) -> Callable[[random.Random], tuple[str, str]]:
    """A maker of access-log lines."""

    def make(rng: random.Random) -> tuple[str, str]:
        path = rng.choice(paths)
        method = "POST" if path.startswith("+") else "GET"
        path = path.lstrip("+")
        code = 500 if rng.random() < errors else (404 if rng.random() < 0.01 else 200)
        ms = max(1, int(rng.lognormvariate(0, 0.5) * slow))
        level = "error" if code >= 500 else "info"
        return level, (f'{method} {path} {code} {ms}ms "{svc}" '
                       f'trace={rng.getrandbits(64):016x}')

    return make


_NX = ["api.stripe.com.svc.cluster.local", "sqs.eu-west-1.amazonaws.com.cluster.local",
       "metadata.google.internal"]


def platform(st: Story, nodes: list[str], *, busy: float = 0.3, used: float = 0.5) -> None:
    """kube-system and monitoring basics with their chatter and the node metrics."""
    for ns in ("default", "kube-system", "monitoring"):
        st.add(namespace(st, ns, age_days=400))
    dns = deployment(st, "kube-system", "coredns",
                     [ctr("coredns", "602401143452.dkr.ecr.eu-west-1.amazonaws.com/eks/coredns:"
                          "v1.11.3-eksbuild.1", port=53, cpu="100m", mem="70Mi",
                          mem_limit="170Mi",
                          liveness=http_probe("/health", 8080, 10, 5, 5, 60),
                          readiness=http_probe("/ready", 8181))],
                     nodes[:2], age_days=380, revision=4)
    service(st, "kube-system", "kube-dns", {"k8s-app": "kube-dns"}, 53, 53, age_days=400,
            cluster_ip="172.20.0.10", pods=dns.pods, port_name="dns")
    st.chatter(dns.pods, lambda r: (
        "info", f"[INFO] {r.choice(['10.0.4.17', '10.0.9.201', '10.0.12.33'])}:"
                f"{r.randint(30000, 60000)} - {r.randint(1000, 65000)} \"AAAA IN "
                f"{r.choice(_NX)}. udp 60 false 512\" NXDOMAIN "
                f"qr,aa,rd 153 0.000{r.randint(100, 999)}s"), every_s=90)
    prom = statefulset(st, "monitoring", "prometheus-k8s",
                       [ctr("prometheus", "quay.io/prometheus/prometheus:v2.54.1", port=9090,
                            cpu="500m", mem="2Gi", mem_limit="4Gi",
                            readiness=http_probe("/-/ready", 9090))],
                       nodes[-1:], replicas=1, claim="prometheus-data", storage="200Gi")
    st.chatter(prom.pods, lambda r: (
        "info", r.choice(["Compaction completed component=tsdb duration=1.93s",
                          "Head GC completed component=tsdb duration=412ms",
                          "Completed loading of configuration file filename=/etc/prometheus/"
                          "config_out/prometheus.env.yaml"])), every_s=600)
    ksm = deployment(st, "monitoring", "kube-state-metrics",
                     [ctr("kube-state-metrics",
                          "registry.k8s.io/kube-state-metrics/kube-state-metrics:v2.13.0",
                          cpu="50m", mem="128Mi")], nodes[-1:], age_days=200)
    for p in [*dns.pods, *prom.pods, *ksm.pods]:
        st.pod_metrics(p, cpu=0.03, mem_mib=90 if p.service == "coredns" else 600)
    for n in nodes:
        st.node_metrics(n, busy=busy * st.rng.uniform(0.8, 1.2), used=used)
