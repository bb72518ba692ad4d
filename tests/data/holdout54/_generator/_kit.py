"""Shared builders for the holdout54 scenarios: Kubernetes objects, logs and metrics."""

from __future__ import annotations

import json
import math
import random
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

Obj = dict[str, Any]
Fields = dict[str, Any]
Line = tuple[str, str, Fields]
Gen = Callable[[random.Random, datetime], Line]
ALNUM = "bcdfghjklmnpqrstvwxz2456789"
STEP = 60
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


def parse(s: str) -> datetime:
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def iso(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_ms(t: datetime) -> str:
    t = t.astimezone(UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


class _Dumper(yaml.SafeDumper):
    pass


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def fmt(v: float) -> str:
    if float(v).is_integer():
        return str(int(v))
    return f"{v:.4f}".rstrip("0").rstrip(".")


@dataclass
class Family:
    kind: str
    help: str
    series: dict[tuple[tuple[str, str], ...], list[tuple[int, Any]]] = field(default_factory=dict)


@dataclass
class Ref:
    """Where a container's output is attributed: namespace, pod, container, service, node."""

    ns: str
    pod: str
    container: str
    service: str
    node: str
    ip: str


@dataclass
class Pod:
    obj: Obj
    ref: Ref


@dataclass
class Ctr:
    name: str
    image: str
    port: int | None = 8080
    env: dict[str, str] = field(default_factory=dict)
    cpu_req: str = "100m"
    cpu_lim: str | None = None
    mem_req: str = "128Mi"
    mem_lim: str | None = "256Mi"
    readiness: Obj | None = None
    liveness: Obj | None = None
    args: list[str] | None = None
    extra: Obj = field(default_factory=dict)

    def spec(self) -> Obj:
        out: Obj = {"name": self.name, "image": self.image, "imagePullPolicy": "IfNotPresent"}
        if self.args:
            out["args"] = list(self.args)
        if self.port:
            out["ports"] = [{"name": "http", "containerPort": self.port, "protocol": "TCP"}]
        if self.env:
            out["env"] = [{"name": k, "value": v} for k, v in self.env.items()]
        limits: Obj = {}
        if self.cpu_lim:
            limits["cpu"] = self.cpu_lim
        if self.mem_lim:
            limits["memory"] = self.mem_lim
        res: Obj = {"requests": {"cpu": self.cpu_req, "memory": self.mem_req}}
        if limits:
            res["limits"] = limits
        out["resources"] = res
        probe = self.readiness
        if probe is None and self.port:
            probe = {"httpGet": {"path": "/healthz", "port": self.port, "scheme": "HTTP"},
                     "periodSeconds": 10, "timeoutSeconds": 1, "failureThreshold": 3,
                     "successThreshold": 1}
        if probe:
            out["readinessProbe"] = probe
        if self.liveness:
            out["livenessProbe"] = self.liveness
        out.update(self.extra)
        out["terminationMessagePath"] = "/dev/termination-log"
        out["terminationMessagePolicy"] = "File"
        return out


@dataclass
class Rev:
    ctrs: list[Ctr]
    at: datetime
    pods: int
    cause: str | None = None


@dataclass
class Workload:
    kind: str
    ns: str
    name: str
    obj: Obj
    sets: list[Obj]
    pods: list[Pod]


class Scenario:
    def __init__(self, sid: str, now: str, seed: int) -> None:
        self.sid = sid
        self.now = parse(now)
        self.rng = random.Random(seed)
        self.objects: list[Obj] = []
        self.logs: list[Obj] = []
        self.families: dict[str, Family] = {}
        self.pod_logs: dict[str, list[str]] = {}
        self._ip = 10

    # -- basics -------------------------------------------------------------------------
    def ago(self, *, days: float = 0, hours: float = 0, minutes: float = 0,
            seconds: float = 0) -> datetime:
        return self.now - timedelta(days=days, hours=hours, minutes=minutes, seconds=seconds)

    def status_time(self, t: datetime) -> datetime:
        """Clamp a status time into the week before now."""
        return max(t, self.ago(days=6, hours=12))

    def uid(self) -> str:
        h = f"{self.rng.getrandbits(128):032x}"
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"

    def suffix(self, n: int = 5) -> str:
        return "".join(self.rng.choice(ALNUM) for _ in range(n))

    def pod_ip(self, node_index: int) -> str:
        self._ip += self.rng.randint(1, 7)
        return f"10.42.{node_index}.{self._ip % 250 + 2}"

    def add(self, *objs: Obj) -> None:
        self.objects.extend(objs)

    # -- logs ---------------------------------------------------------------------------
    def log(self, t: datetime, ref: Ref, level: str, message: str,
            fields: Fields | None = None) -> None:
        if t > self.now:
            return
        doc: Obj = {
            "@timestamp": iso_ms(t),
            "message": message,
            "log.level": level,
            "service.name": ref.service,
            "kubernetes.namespace": ref.ns,
            "kubernetes.pod.name": ref.pod,
            "kubernetes.container.name": ref.container,
            "kubernetes.node.name": ref.node,
        }
        if fields:
            doc.update(fields)
        self.logs.append(doc)

    def chatter(self, ref: Ref, gen: Callable[[random.Random, datetime], Line],
                per_min: float, start: datetime | None = None,
                end: datetime | None = None) -> None:
        t = start or self.ago(minutes=60)
        stop = end or self.now
        gap = 60.0 / per_min
        t += timedelta(seconds=self.rng.uniform(0, gap))
        while t < stop:
            level, msg, extra = gen(self.rng, t)
            self.log(t, ref, level, msg, extra)
            t += timedelta(seconds=gap * self.rng.uniform(0.4, 1.6))

    def file_log(self, ref: Ref, lines: list[str], previous: bool = False) -> None:
        tail = ".previous.log" if previous else ".log"
        self.pod_logs[f"{ref.ns}/{ref.pod}/{ref.container}{tail}"] = lines

    # -- metrics ------------------------------------------------------------------------
    def times(self, step: int = STEP, minutes: int = 60) -> list[datetime]:
        n = minutes * 60 // step
        return [self.now - timedelta(seconds=step * i) for i in range(n, -1, -1)]

    def _fam(self, name: str, kind: str, help_: str) -> Family:
        fam = self.families.get(name)
        if fam is None:
            fam = Family(kind, help_)
            self.families[name] = fam
        return fam

    @staticmethod
    def _key(labels: dict[str, str]) -> tuple[tuple[str, str], ...]:
        return tuple(labels.items())

    def gauge(self, name: str, help_: str, labels: dict[str, str],
              fn: Callable[[datetime], float], since: datetime | None = None,
              step: int = STEP, until: datetime | None = None) -> None:
        fam = self._fam(name, "gauge", help_)
        fam.series[self._key(labels)] = [(int(t.timestamp()), fn(t)) for t in self.times(step)
                                         if (since is None or t >= since)
                                         and (until is None or t <= until)]

    def counter(self, name: str, help_: str, labels: dict[str, str],
                rate: Callable[[datetime], float], start: float = 0.0,
                resets: tuple[datetime, ...] = (), since: datetime | None = None,
                step: int = STEP, until: datetime | None = None) -> None:
        assert name.endswith("_total"), name
        fam = self._fam(name[: -len("_total")], "counter", help_)
        value = start
        out: list[tuple[int, Any]] = []
        prev: datetime | None = None
        for t in self.times(step):
            if (since is not None and t < since) or (until is not None and t > until):
                continue
            if prev is not None:
                if any(prev < r <= t for r in resets):
                    value = 0.0
                value += max(0.0, rate(t)) * step
            out.append((int(t.timestamp()), round(value, 3)))
            prev = t
        fam.series[self._key(labels)] = out

    def histogram(self, name: str, help_: str, labels: dict[str, str],
                  rate: Callable[[datetime], float], median: Callable[[datetime], float],
                  spread: float = 0.6, buckets: tuple[float, ...] = LATENCY_BUCKETS,
                  step: int = STEP) -> None:
        fam = self._fam(name, "histogram", help_)
        cum = [0.0] * (len(buckets) + 1)
        total_sum = 0.0
        count = 0.0
        out: list[tuple[int, Any]] = []
        for i, t in enumerate(self.times(step)):
            if i:
                n = max(0.0, rate(t)) * step
                m = median(t)
                for j, le in enumerate(buckets):
                    z = (math.log(le) - math.log(m)) / spread
                    cum[j] += round(n * 0.5 * (1 + math.erf(z / math.sqrt(2))))
                cum[-1] += round(n)
                count = cum[-1]
                total_sum += n * m * math.exp(spread * spread / 2)
            pts = [(fmt(le), cum[j]) for j, le in enumerate(buckets)] + [("+Inf", cum[-1])]
            out.append((int(t.timestamp()), (pts, count, round(total_sum, 3))))
        fam.series[self._key(labels)] = out

    def usage(self, pod: Pod | Ref, cpu: Callable[[datetime], float] | float,
              mem: Callable[[datetime], float] | float, restarts: int = 0,
              cfs: Callable[[datetime], float] | None = None, step: int = 2 * STEP,
              ksm: bool = False, since: datetime | None = None,
              until: datetime | None = None) -> None:
        """cAdvisor and kube-state-metrics series of one container."""
        r = pod.ref if isinstance(pod, Pod) else pod
        win: dict[str, Any] = {"since": since, "until": until, "step": step}
        labels = {"namespace": r.ns, "pod": r.pod, "container": r.container, "node": r.node}
        rng = self.rng

        def cpu_fn(t: datetime) -> float:
            base = cpu(t) if callable(cpu) else cpu
            return base * rng.uniform(0.85, 1.15)

        def mem_fn(t: datetime) -> float:
            base = mem(t) if callable(mem) else mem
            return float(int(base * rng.uniform(0.98, 1.02)))

        self.counter("container_cpu_usage_seconds_total",
                     "Cumulative cpu time consumed in seconds.", labels, cpu_fn,
                     start=rng.uniform(500, 5000), **win)
        self.gauge("container_memory_working_set_bytes", "Current working set in bytes.",
                   labels, mem_fn, **win)
        if restarts or ksm:
            self.counter("kube_pod_container_status_restarts_total",
                         "The number of container restarts per container.",
                         {"namespace": r.ns, "pod": r.pod, "container": r.container},
                         lambda t: 0.0, start=float(restarts), **win)
        if cfs is not None:
            self.counter("container_cpu_cfs_periods_total",
                         "Number of elapsed enforcement period intervals.", labels,
                         lambda t: 10.0, start=rng.uniform(1e5, 5e5), **win)
            self.counter("container_cpu_cfs_throttled_periods_total",
                         "Number of throttled period intervals.", labels,
                         lambda t: 10.0 * cfs(t), start=rng.uniform(1e3, 5e3), **win)

    # -- output -------------------------------------------------------------------------
    def metrics_text(self) -> str:
        out: list[str] = []
        for name, fam in self.families.items():
            out.append(f"# TYPE {name} {fam.kind}")
            out.append(f"# HELP {name} {fam.help}")
            for key, samples in fam.series.items():
                for ts, v in samples:
                    if fam.kind == "counter":
                        out.append(f"{name}_total{_labels(key)} {fmt(v)} {ts}")
                    elif fam.kind == "gauge":
                        out.append(f"{name}{_labels(key)} {fmt(v)} {ts}")
                    else:
                        pts, count, total = v
                        for le, c in pts:
                            out.append(f"{name}_bucket{_labels(key, le)} {fmt(c)} {ts}")
                        out.append(f"{name}_count{_labels(key)} {fmt(count)} {ts}")
                        out.append(f"{name}_sum{_labels(key)} {fmt(total)} {ts}")
        out.append("# EOF")
        return "\n".join(out) + "\n"

    def write(self, root: Path, *, title: str, report: str, truth: Obj) -> None:
        d = root / self.sid
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
        scen = {"id": self.sid, "title": title, "now": iso(self.now), "report": report,
                "truth": truth}
        (d / "scenario.yaml").write_text(
            yaml.dump(scen, Dumper=_Dumper, sort_keys=False, width=100))
        cluster = yaml.dump_all(self.objects, Dumper=_Dumper, sort_keys=False, width=1000)
        (d / "cluster.yaml").write_text(cluster)
        self.logs.sort(key=lambda doc: doc["@timestamp"])
        (d / "logs.ndjson").write_text(
            "".join(json.dumps(doc, ensure_ascii=False) + "\n" for doc in self.logs))
        metrics = self.metrics_text()
        (d / "metrics.om").write_text(metrics)
        texts = [cluster, metrics] + [str(doc["message"]) for doc in self.logs]
        for rel, lines in sorted(self.pod_logs.items()):
            p = d / "pod-logs" / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text("".join(line + "\n" for line in lines))
            texts.extend(lines)
        blob = "\n".join(texts)
        for phrase in truth["evidence"]:
            assert phrase in blob, f"{self.sid}: evidence {phrase!r} not in data"


def _labels(key: tuple[tuple[str, str], ...], le: str | None = None) -> str:
    items = list(key) + ([("le", le)] if le is not None else [])
    if not items:
        return ""
    body = ",".join(f'{k}="{_esc(v)}"' for k, v in items)
    return "{" + body + "}"


def _esc(v: str) -> str:
    return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


# -- Kubernetes objects -------------------------------------------------------------------
def meta(sc: Scenario, name: str, ns: str | None, created: datetime,
         labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None,
         owner: Obj | None = None) -> Obj:
    m: Obj = {"name": name}
    if ns is not None:
        m["namespace"] = ns
    m["uid"] = sc.uid()
    m["resourceVersion"] = str(sc.rng.randint(100000, 99999999))
    m["creationTimestamp"] = iso(created)
    if labels:
        m["labels"] = dict(labels)
    if annotations:
        m["annotations"] = dict(annotations)
    if owner:
        m["ownerReferences"] = [{"apiVersion": owner["apiVersion"], "kind": owner["kind"],
                                 "name": owner["metadata"]["name"],
                                 "uid": owner["metadata"]["uid"], "controller": True,
                                 "blockOwnerDeletion": True}]
    return m


def namespace(sc: Scenario, name: str, created: datetime) -> Obj:
    obj = {"apiVersion": "v1", "kind": "Namespace",
           "metadata": meta(sc, name, None, created, {"kubernetes.io/metadata.name": name}),
           "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}
    sc.add(obj)
    return obj


def condition(ctype: str, status: str, reason: str, message: str, since: datetime,
              heartbeat: datetime) -> Obj:
    return {"type": ctype, "status": status, "lastHeartbeatTime": iso(heartbeat),
            "lastTransitionTime": iso(since), "reason": reason, "message": message}


def node(sc: Scenario, name: str, *, ip: str, zone: str, created: datetime,
         cpu: str = "8", memory: str = "32Gi", instance: str = "m6i.2xlarge",
         extra_conditions: list[Obj] | None = None, ready: Obj | None = None,
         taints: list[Obj] | None = None) -> Obj:
    since = sc.status_time(created)
    hb = sc.ago(seconds=sc.rng.randint(5, 50))
    conds = list(extra_conditions or [])
    conds += [
        condition("MemoryPressure", "False", "KubeletHasSufficientMemory",
                  "kubelet has sufficient memory available", since, hb),
        condition("DiskPressure", "False", "KubeletHasNoDiskPressure",
                  "kubelet has no disk pressure", since, hb),
        condition("PIDPressure", "False", "KubeletHasSufficientPID",
                  "kubelet has sufficient PID available", since, hb),
        ready or condition("Ready", "True", "KubeletReady", "kubelet is posting ready status",
                           since, hb),
    ]
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
              "kubernetes.io/arch": "amd64", "topology.kubernetes.io/zone": zone,
              "topology.kubernetes.io/region": zone[:-1],
              "node.kubernetes.io/instance-type": instance,
              "node-role.kubernetes.io/worker": ""}
    mem_kib = int(memory[:-2]) * 1024 * 1024
    spec: Obj = {"providerID": f"aws:///{zone}/i-0{sc.rng.getrandbits(64):016x}"}
    if taints:
        spec["taints"] = taints
    obj = {"apiVersion": "v1", "kind": "Node",
           "metadata": meta(sc, name, None, created, labels),
           "spec": spec,
           "status": {
               "addresses": [{"type": "InternalIP", "address": ip},
                             {"type": "Hostname", "address": name}],
               "capacity": {"cpu": cpu, "memory": f"{mem_kib}Ki", "pods": "110",
                            "ephemeral-storage": "104845292Ki"},
               "allocatable": {"cpu": f"{int(cpu) * 1000 - 90}m",
                               "memory": f"{mem_kib - 1_200_000}Ki", "pods": "110",
                               "ephemeral-storage": "95551679592"},
               "conditions": conds,
               "nodeInfo": {"kubeletVersion": "v1.29.6-eks-1552ad0",
                            "kubeProxyVersion": "v1.29.6-eks-1552ad0",
                            "containerRuntimeVersion": "containerd://1.7.11",
                            "kernelVersion": "5.10.219-208.866.amzn2.x86_64",
                            "osImage": "Amazon Linux 2", "operatingSystem": "linux",
                            "architecture": "amd64"}}}
    sc.add(obj)
    return obj


def pod(sc: Scenario, *, ns: str, name: str, labels: dict[str, str], node_name: str,
        node_index: int, ctrs: list[Ctr], owner: Obj, started: datetime, ready: bool = True,
        restarts: int = 0, waiting: tuple[str, str] | None = None,
        last_state: Obj | None = None, service: str | None = None,
        annotations: dict[str, str] | None = None, extra_spec: Obj | None = None) -> Pod:
    ip = sc.pod_ip(node_index)
    created = max(started - timedelta(seconds=sc.rng.randint(2, 9)),
                  parse(owner["metadata"]["creationTimestamp"]))
    st = sc.status_time(started)
    statuses = []
    for c in ctrs:
        cs: Obj = {"name": c.name, "image": c.image, "ready": ready and waiting is None,
                   "restartCount": restarts, "started": waiting is None}
        if waiting:
            cs["state"] = {"waiting": {"reason": waiting[0], "message": waiting[1]}}
            cs["imageID"] = ""
            cs["lastState"] = {}
        else:
            cs["imageID"] = f"{c.image.split(':')[0]}@sha256:{sc.rng.getrandbits(256):064x}"
            cs["containerID"] = f"containerd://{sc.rng.getrandbits(256):064x}"
            cs["state"] = {"running": {"startedAt": iso(st)}}
            cs["lastState"] = last_state or {}
        statuses.append(cs)
    is_ready = ready and waiting is None
    unready = "" if is_ready else f"containers with unready status: [{ctrs[0].name}]"
    conds = [
        {"type": "Initialized", "status": "True", "lastProbeTime": None,
         "lastTransitionTime": iso(sc.status_time(created))},
        {"type": "Ready", "status": "True" if is_ready else "False", "lastProbeTime": None,
         "lastTransitionTime": iso(st if is_ready else sc.status_time(started))},
        {"type": "ContainersReady", "status": "True" if is_ready else "False",
         "lastProbeTime": None,
         "lastTransitionTime": iso(st if is_ready else sc.status_time(started))},
        {"type": "PodScheduled", "status": "True", "lastProbeTime": None,
         "lastTransitionTime": iso(sc.status_time(created))},
    ]
    if not is_ready:
        for c in conds[1:3]:
            c["reason"] = "ContainersNotReady"
            c["message"] = unready
    spec: Obj = {"containers": [c.spec() for c in ctrs], "nodeName": node_name,
                 "restartPolicy": "Always", "schedulerName": "default-scheduler",
                 "serviceAccountName": labels.get("app", "default"),
                 "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst"}
    if extra_spec:
        spec.update(extra_spec)
    obj = {"apiVersion": "v1", "kind": "Pod",
           "metadata": meta(sc, name, ns, created, labels, annotations, owner),
           "spec": spec,
           "status": {"phase": "Pending" if waiting else "Running", "conditions": conds,
                      "hostIP": node_ip(sc, node_name), "podIP": ip, "podIPs": [{"ip": ip}],
                      "startTime": iso(sc.status_time(created)), "qosClass": "Burstable",
                      "containerStatuses": statuses}}
    sc.add(obj)
    ref = Ref(ns, name, ctrs[0].name, service or labels.get("app", name), node_name, ip)
    return Pod(obj, ref)


def node_ip(sc: Scenario, name: str) -> str:
    for o in sc.objects:
        if o["kind"] == "Node" and o["metadata"]["name"] == name:
            return str(o["status"]["addresses"][0]["address"])
    return "10.20.0.1"


def _template(labels: dict[str, str], ctrs: list[Ctr], annotations: dict[str, str] | None,
              extra_spec: Obj | None) -> Obj:
    tmeta: Obj = {"labels": dict(labels)}
    if annotations:
        tmeta["annotations"] = dict(annotations)
    spec: Obj = {"containers": [c.spec() for c in ctrs], "restartPolicy": "Always",
                 "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
                 "serviceAccountName": labels["app"]}
    if extra_spec:
        spec.update(extra_spec)
    return {"metadata": tmeta, "spec": spec}


def deployment(sc: Scenario, ns: str, name: str, revs: list[Rev], *, nodes: list[str],
               created: datetime, replicas: int | None = None, first_rev: int = 1,
               strategy: Obj | None = None, pod_hook: Callable[[int, int], Obj] | None = None,
               extra_labels: dict[str, str] | None = None,
               template_annotations: dict[str, str] | None = None,
               extra_spec: Obj | None = None) -> Workload:
    """A Deployment, one ReplicaSet per revision (the last is current) and their pods.

    pod_hook(rev_index, pod_index) returns keyword overrides for pod().
    """
    labels = {"app": name, **(extra_labels or {})}
    cur = revs[-1]
    replicas = replicas if replicas is not None else cur.pods
    dep_ann = {"deployment.kubernetes.io/revision": str(first_rev + len(revs) - 1)}
    if cur.cause:
        dep_ann["kubernetes.io/change-cause"] = cur.cause
    dep: Obj = {"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": meta(sc, name, ns, created, labels, dep_ann),
                "spec": {"replicas": replicas, "revisionHistoryLimit": 10,
                         "progressDeadlineSeconds": 600,
                         "selector": {"matchLabels": {"app": name}},
                         "strategy": strategy or {"type": "RollingUpdate", "rollingUpdate": {
                             "maxSurge": "25%", "maxUnavailable": "25%"}},
                         "template": _template(labels, cur.ctrs, template_annotations,
                                               extra_spec)}}
    dep["metadata"]["generation"] = first_rev + len(revs) + 2
    sc.add(dep)
    sets: list[Obj] = []
    pods: list[Pod] = []
    k = sc.rng.randrange(len(nodes))
    for i, rev in enumerate(revs):
        h = sc.suffix(10)
        rl = {**labels, "pod-template-hash": h}
        ann = {"deployment.kubernetes.io/desired-replicas": str(replicas),
               "deployment.kubernetes.io/max-replicas": str(replicas + 1),
               "deployment.kubernetes.io/revision": str(first_rev + i)}
        if rev.cause:
            ann["kubernetes.io/change-cause"] = rev.cause
        rs: Obj = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
                   "metadata": meta(sc, f"{name}-{h}", ns, rev.at, rl, ann, dep),
                   "spec": {"replicas": rev.pods,
                            "selector": {"matchLabels": {"app": name, "pod-template-hash": h}},
                            "template": _template(rl, rev.ctrs, template_annotations,
                                                  extra_spec)}}
        sc.add(rs)
        sets.append(rs)
        ready = 0
        for j in range(rev.pods):
            kw: Obj = {"started": rev.at + timedelta(seconds=sc.rng.randint(8, 90))}
            if pod_hook:
                kw.update(pod_hook(i, j))
            node_name = kw.pop("node_name", nodes[k % len(nodes)])
            k += 1
            p = pod(sc, ns=ns, name=f"{name}-{h}-{sc.suffix()}", labels=rl,
                    node_name=node_name, node_index=nodes.index(node_name) + 1,
                    ctrs=rev.ctrs, owner=rs, extra_spec=extra_spec,
                    annotations=template_annotations, **kw)
            pods.append(p)
            ready += 1 if p.obj["status"]["containerStatuses"][0]["ready"] else 0
        rs["metadata"]["generation"] = 1
        rs["status"] = {"replicas": rev.pods, "fullyLabeledReplicas": rev.pods,
                        "readyReplicas": ready, "availableReplicas": ready,
                        "observedGeneration": 1}
        if not ready:
            del rs["status"]["readyReplicas"], rs["status"]["availableReplicas"]
    cur_rs = sets[-1]
    total = len(pods)
    ready_all = sum(1 for p in pods if p.obj["status"]["containerStatuses"][0]["ready"])
    updated = cur.pods
    cur_ready = cur_rs["status"].get("readyReplicas", 0)
    done = cur_ready == replicas and total == replicas
    t_done = sc.status_time(cur.at + timedelta(seconds=sc.rng.randint(60, 200)))
    st: Obj = {"observedGeneration": dep["metadata"]["generation"], "replicas": total,
               "updatedReplicas": updated, "readyReplicas": ready_all,
               "availableReplicas": ready_all}
    if total - ready_all:
        st["unavailableReplicas"] = max(0, replicas - ready_all)
    rs_name = cur_rs["metadata"]["name"]
    avail = ready_all >= replicas - max(1, replicas // 4)
    st["conditions"] = [
        {"type": "Available", "status": "True" if avail else "False",
         "lastUpdateTime": iso(sc.status_time(created)),
         "lastTransitionTime": iso(sc.status_time(created)),
         "reason": "MinimumReplicasAvailable" if avail else "MinimumReplicasUnavailable",
         "message": "Deployment has minimum availability." if avail
         else "Deployment does not have minimum availability."},
        {"type": "Progressing", "status": "True",
         "lastUpdateTime": iso(t_done if done else sc.status_time(cur.at)),
         "lastTransitionTime": iso(sc.status_time(cur.at)),
         "reason": "NewReplicaSetAvailable" if done else "ReplicaSetUpdated",
         "message": f'ReplicaSet "{rs_name}" has successfully progressed.' if done
         else f'ReplicaSet "{rs_name}" is progressing.'},
    ]
    if not ready_all:
        del st["readyReplicas"], st["availableReplicas"]
    dep["status"] = st
    return Workload("Deployment", ns, name, dep, sets, pods)


def statefulset(sc: Scenario, ns: str, name: str, ctrs: list[Ctr], *, replicas: int,
                nodes: list[str], created: datetime, at: datetime, service_name: str,
                claims: list[Obj] | None = None,
                pod_hook: Callable[[int], Obj] | None = None) -> Workload:
    labels = {"app": name}
    rev = f"{name}-{sc.suffix(10)}"
    obj: Obj = {"apiVersion": "apps/v1", "kind": "StatefulSet",
                "metadata": meta(sc, name, ns, created, labels),
                "spec": {"replicas": replicas, "serviceName": service_name,
                         "podManagementPolicy": "Parallel",
                         "selector": {"matchLabels": labels},
                         "updateStrategy": {"type": "RollingUpdate",
                                            "rollingUpdate": {"partition": 0}},
                         "template": _template(labels, ctrs, None, None)}}
    if claims:
        obj["spec"]["volumeClaimTemplates"] = claims
    obj["metadata"]["generation"] = 7
    sc.add(obj)
    pods: list[Pod] = []
    for i in range(replicas):
        kw: Obj = {"started": at + timedelta(seconds=20 * i + sc.rng.randint(5, 15))}
        if pod_hook:
            kw.update(pod_hook(i))
        node_name = kw.pop("node_name", nodes[i % len(nodes)])
        pl = {**labels, "controller-revision-hash": rev,
              "statefulset.kubernetes.io/pod-name": f"{name}-{i}"}
        p = pod(sc, ns=ns, name=f"{name}-{i}", labels=pl, node_name=node_name,
                node_index=nodes.index(node_name) + 1, ctrs=ctrs, owner=obj,
                extra_spec={"hostname": f"{name}-{i}", "subdomain": service_name}, **kw)
        pods.append(p)
    ready = sum(1 for p in pods if p.obj["status"]["containerStatuses"][0]["ready"])
    obj["status"] = {"observedGeneration": 7, "replicas": replicas, "readyReplicas": ready,
                     "currentReplicas": replicas, "updatedReplicas": replicas,
                     "availableReplicas": ready, "currentRevision": rev,
                     "updateRevision": rev, "collisionCount": 0}
    return Workload("StatefulSet", ns, name, obj, [], pods)


def daemonset(sc: Scenario, ns: str, name: str, ctrs: list[Ctr], *, nodes: list[str],
              created: datetime, at: datetime) -> Workload:
    labels = {"app": name}
    obj: Obj = {"apiVersion": "apps/v1", "kind": "DaemonSet",
                "metadata": meta(sc, name, ns, created, labels),
                "spec": {"selector": {"matchLabels": labels},
                         "updateStrategy": {"type": "RollingUpdate",
                                            "rollingUpdate": {"maxUnavailable": 1}},
                         "template": _template(labels, ctrs, None,
                                               {"tolerations": [{"operator": "Exists"}]})}}
    obj["metadata"]["generation"] = 3
    sc.add(obj)
    pods = []
    h = sc.suffix(10)
    for i, n in enumerate(nodes):
        pl = {**labels, "controller-revision-hash": h, "pod-template-generation": "3"}
        pods.append(pod(sc, ns=ns, name=f"{name}-{sc.suffix()}", labels=pl, node_name=n,
                        node_index=i + 1, ctrs=ctrs, owner=obj,
                        started=at + timedelta(seconds=sc.rng.randint(5, 60))))
    k = len(nodes)
    obj["status"] = {"currentNumberScheduled": k, "desiredNumberScheduled": k,
                     "numberAvailable": k, "numberMisscheduled": 0, "numberReady": k,
                     "observedGeneration": 3, "updatedNumberScheduled": k}
    return Workload("DaemonSet", ns, name, obj, [], pods)


def service(sc: Scenario, ns: str, name: str, *, selector: dict[str, str] | None,
            ports: list[tuple[str, int, int]], created: datetime, stype: str = "ClusterIP",
            extra_spec: Obj | None = None, annotations: dict[str, str] | None = None) -> Obj:
    spec: Obj = {"type": stype,
                 "ports": [{"name": n, "port": p, "targetPort": t, "protocol": "TCP"}
                           for n, p, t in ports],
                 "sessionAffinity": "None"}
    if selector is not None:
        spec["selector"] = dict(selector)
    spec["clusterIP"] = f"172.20.{sc.rng.randint(0, 255)}.{sc.rng.randint(2, 254)}"
    spec["clusterIPs"] = [spec["clusterIP"]]
    if extra_spec:
        spec.update(extra_spec)
    status: Obj = {"loadBalancer": {}}
    obj = {"apiVersion": "v1", "kind": "Service",
           "metadata": meta(sc, name, ns, created, {"app": name}, annotations),
           "spec": spec, "status": status}
    sc.add(obj)
    return obj


def endpoints(sc: Scenario, ns: str, name: str, ready: list[Pod], port: int,
              created: datetime, not_ready: list[Pod] | None = None,
              port_name: str = "http") -> Obj:
    def addr(p: Pod) -> Obj:
        return {"ip": p.ref.ip, "nodeName": p.ref.node,
                "targetRef": {"kind": "Pod", "namespace": ns, "name": p.ref.pod,
                              "uid": p.obj["metadata"]["uid"]}}

    subset: Obj = {"addresses": [addr(p) for p in ready]}
    if not_ready:
        subset["notReadyAddresses"] = [addr(p) for p in not_ready]
    subset["ports"] = [{"name": port_name, "port": port, "protocol": "TCP"}]
    obj = {"apiVersion": "v1", "kind": "Endpoints",
           "metadata": meta(sc, name, ns, created, {"app": name}),
           "subsets": [subset]}
    sc.add(obj)
    return obj


def event(sc: Scenario, ns: str, kind: str, name: str, reason: str, message: str, *,
          first: datetime, last: datetime, count: int = 1, etype: str = "Normal",
          component: str = "kubelet", host: str | None = None, api: str = "v1",
          field_path: str | None = None) -> Obj:
    inv: Obj = {"kind": kind, "name": name, "apiVersion": api}
    if ns:
        inv["namespace"] = ns
    uid = next((o["metadata"]["uid"] for o in sc.objects
                if o["kind"] == kind and o["metadata"]["name"] == name), None)
    if uid:
        inv["uid"] = uid
    if field_path:
        inv["fieldPath"] = field_path
    src: Obj = {"component": component}
    if host:
        src["host"] = host
    obj = {"apiVersion": "v1", "kind": "Event",
           "metadata": meta(sc, f"{name}.{sc.rng.getrandbits(64):016x}", ns or "default",
                            last),
           "involvedObject": inv, "reason": reason, "message": message, "type": etype,
           "count": count, "firstTimestamp": iso(first), "lastTimestamp": iso(last),
           "source": src, "reportingComponent": component}
    sc.add(obj)
    return obj


def configmap(sc: Scenario, ns: str, name: str, data: dict[str, str],
              created: datetime) -> Obj:
    obj = {"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": meta(sc, name, ns, created, {"app": name}), "data": dict(data)}
    sc.add(obj)
    return obj


# -- common chatter -----------------------------------------------------------------------
def access_log(paths: list[str], *, ms: tuple[int, int] = (4, 40), method: str = "GET",
               err: float = 0.0) -> Callable[[random.Random, datetime], Line]:
    def gen(rng: random.Random, t: datetime) -> Line:
        path = rng.choice(paths)
        code = 500 if rng.random() < err else rng.choice([200, 200, 200, 200, 201, 204])
        dur = rng.randint(*ms)
        level = "error" if code >= 500 else "info"
        msg = f"{method} {path} {code} {dur}ms"
        return level, msg, {"http.request.method": method, "url.path": path,
                            "http.response.status_code": code, "event.duration": dur * 10**6}
    return gen


def lines(options: list[tuple[str, str]]) -> Callable[[random.Random, datetime], Line]:
    def gen(rng: random.Random, t: datetime) -> Line:
        level, msg = rng.choice(options)
        return level, msg.format(n=rng.randint(1, 999), ms=rng.randint(2, 90),
                                 id=f"{rng.getrandbits(48):012x}"), {}
    return gen


def coredns_line(names: list[str]) -> Callable[[random.Random, datetime], Line]:
    def gen(rng: random.Random, t: datetime) -> Line:
        q = rng.choice(names)
        ip = f"10.42.{rng.randint(1, 5)}.{rng.randint(2, 250)}"
        msg = (f'[INFO] {ip}:{rng.randint(30000, 60000)} - {rng.randint(1000, 65000)} '
               f'"A IN {q}. udp 62 false 512" NOERROR qr,aa,rd 128 '
               f"0.000{rng.randint(100, 999)}s")
        return "info", msg, {}
    return gen


def standard_bystanders(sc: Scenario, nodes: list[str], dns_names: list[str]) -> None:
    """kube-system coredns and a logging DaemonSet with its harmless flush warnings."""
    old = sc.ago(days=240)
    namespace(sc, "kube-system", old)
    namespace(sc, "logging", old)
    dns = deployment(sc, "kube-system", "coredns", [Rev(
        [Ctr("coredns", "602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/coredns:v1.11.1",
             port=53, cpu_req="100m", mem_req="70Mi", mem_lim="170Mi",
             readiness={"httpGet": {"path": "/ready", "port": 8181, "scheme": "HTTP"},
                        "periodSeconds": 10, "timeoutSeconds": 1, "failureThreshold": 3,
                        "successThreshold": 1})],
        sc.ago(days=5, hours=3), 2)], nodes=nodes, created=old,
        extra_labels={"k8s-app": "kube-dns"})
    for p in dns.pods:
        sc.chatter(p.ref, coredns_line(dns_names), 0.5)
        sc.usage(p, 0.01, 38e6)
    fb = daemonset(sc, "logging", "fluent-bit",
                   [Ctr("fluent-bit", "cr.fluentbit.io/fluent/fluent-bit:2.2.2", port=2020,
                        cpu_req="50m", mem_req="64Mi", mem_lim="128Mi")],
                   nodes=nodes, created=old, at=sc.ago(days=4, hours=7))
    for p in fb.pods:
        sc.chatter(p.ref, lines([
            ("warn", "[ warn] [engine] failed to flush chunk '1-17{n}.flb', retry in 7 "
                     "seconds: task_id={n}, input=tail.0 > output=es.0 (out_id=0)"),
            ("info", "[ info] [engine] flush chunk '1-17{n}.flb' succeeded at retry 1: "
                     "task_id={n}, input=tail.0 > output=es.0 (out_id=0)"),
            ("info", "[ info] [input:tail:tail.0] inotify_fs_add(): inode={n}{n} watch_fd={n}"),
        ]), 0.12)
        sc.usage(p, 0.02, 52e6)


def make_pending(sc: Scenario, p: Pod, message: str, since: datetime) -> None:
    """Turn a built pod into one the scheduler could not place."""
    p.obj["spec"].pop("nodeName", None)
    p.obj["status"] = {"phase": "Pending", "qosClass": "Burstable", "conditions": [
        {"type": "PodScheduled", "status": "False", "lastProbeTime": None,
         "lastTransitionTime": iso(sc.status_time(since)), "reason": "Unschedulable",
         "message": message}]}
    p.ref.node = ""


def job(sc: Scenario, ns: str, name: str, created: datetime, owner: Obj | None = None) -> Obj:
    labels = {"job-name": name, "app": name.rsplit("-", 1)[0]}
    obj: Obj = {"apiVersion": "batch/v1", "kind": "Job",
                "metadata": meta(sc, name, ns, created, labels, None, owner),
                "spec": {"backoffLimit": 2, "completions": 1, "parallelism": 1,
                         "selector": {"matchLabels": {"job-name": name}},
                         "template": {"metadata": {"labels": labels}, "spec": {
                             "restartPolicy": "Never", "containers": []}}},
                "status": {"active": 1, "startTime": iso(sc.status_time(created)),
                           "ready": 0}}
    sc.add(obj)
    return obj


def worker_nodes(sc: Scenario, names: list[str], **kw: Any) -> list[str]:
    """Nodes named ip-a-b-c-d.<domain>, in zones a, b, c, a, ..."""
    for i, n in enumerate(names):
        ip = n[3:].split(".")[0].replace("-", ".")
        node(sc, n, ip=ip, zone="us-east-1" + "abc"[i % 3], created=sc.ago(days=19, hours=i),
             **kw)
    return names


def gone_pods(sc: Scenario, wl: Workload, rev_index: int, n: int, nodes: list[str]) -> list[Ref]:
    """Refs of pods of an old ReplicaSet that no longer exist (for their logs and metrics)."""
    rs = wl.sets[rev_index]["metadata"]["name"]
    ctr = wl.sets[rev_index]["spec"]["template"]["spec"]["containers"][0]["name"]
    out = []
    for i in range(n):
        node_name = nodes[(i + 1) % len(nodes)]
        out.append(Ref(wl.ns, f"{rs}-{sc.suffix()}", ctr, wl.name, node_name,
                       sc.pod_ip(nodes.index(node_name) + 1)))
    return out
