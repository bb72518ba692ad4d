"""Builders shared by the holdout29 scenarios: Kubernetes objects as `kubectl get -o yaml`
prints them, OpenMetrics families with explicit timestamps, log documents and pod logs.

Every scenario writes through `Scenario`, so its clock (`now`) dates everything the same
way and its folder is rewritten whole on each run (no stale file survives a change).
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
Obj = dict[str, Any]


def parse(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def iso(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_ms(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + \
        f"{at.microsecond // 1000:03d}Z"


def uid(*parts: str) -> str:
    digest = hashlib.sha1("/".join(parts).encode()).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


def suffix(seed: str, length: int = 5) -> str:
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    digest = hashlib.sha1(seed.encode()).digest()
    return "".join(alphabet[b % len(alphabet)] for b in digest[:length])


def rs_hash(seed: str) -> str:
    return suffix("rs" + seed, 10)[:9] if len(seed) % 2 else suffix("rs" + seed, 10)


def meta(kind: str, name: str, namespace: str | None, created: datetime,
         labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None,
         owner: tuple[str, str] | None = None, api: str = "apps/v1") -> Obj:
    data: Obj = {"name": name}
    if namespace is not None:
        data["namespace"] = namespace
    data["uid"] = uid(kind, namespace or "", name)
    data["creationTimestamp"] = iso(created)
    if labels:
        data["labels"] = dict(labels)
    if annotations:
        data["annotations"] = dict(annotations)
    if owner:
        okind, oname = owner
        data["ownerReferences"] = [{"apiVersion": api, "kind": okind, "name": oname,
                                    "uid": uid(okind, namespace or "", oname),
                                    "controller": True, "blockOwnerDeletion": True}]
    return data


def resources(req_cpu: str, req_mem: str, lim_cpu: str | None = None,
              lim_mem: str | None = None) -> Obj:
    out: Obj = {"requests": {"cpu": req_cpu, "memory": req_mem}}
    limits = {k: v for k, v in (("cpu", lim_cpu), ("memory", lim_mem)) if v}
    if limits:
        out["limits"] = limits
    return out


def container(name: str, image: str, res: Obj, port: int | None = 8080,
              env: dict[str, str] | None = None, **extra: Any) -> Obj:
    c: Obj = {"name": name, "image": image, "imagePullPolicy": "IfNotPresent"}
    if port:
        c["ports"] = [{"name": "http", "containerPort": port, "protocol": "TCP"}]
    if env:
        c["env"] = [{"name": k, "value": v} for k, v in env.items()]
    c["resources"] = res
    c.update(extra)
    return c


def http_probe(path: str, port: int | str = "http", period: int = 10, failure: int = 3,
               delay: int = 5, timeout: int = 1) -> Obj:
    return {"httpGet": {"path": path, "port": port, "scheme": "HTTP"},
            "initialDelaySeconds": delay, "periodSeconds": period, "timeoutSeconds": timeout,
            "successThreshold": 1, "failureThreshold": failure}


def template(labels: dict[str, str], containers: list[Obj], **spec: Any) -> Obj:
    return {"metadata": {"labels": dict(labels)},
            "spec": {"containers": containers, "restartPolicy": spec.pop("restartPolicy",
                                                                        "Always"),
                     "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
                     **spec}}


def deployment(ns: str, name: str, created: datetime, tmpl: Obj, replicas: int,
               revision: int, status: Obj | None = None, strategy: Obj | None = None,
               labels: dict[str, str] | None = None) -> Obj:
    sel = tmpl["metadata"]["labels"]
    st = status or {"observedGeneration": revision + 3, "replicas": replicas,
                    "updatedReplicas": replicas, "readyReplicas": replicas,
                    "availableReplicas": replicas,
                    "conditions": [
                        cond("Available", "True", "MinimumReplicasAvailable",
                             "Deployment has minimum availability.", created),
                        cond("Progressing", "True", "NewReplicaSetAvailable",
                             f'ReplicaSet "{name}" has successfully progressed.', created)]}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {**meta("Deployment", name, ns, created, labels or sel,
                                {"deployment.kubernetes.io/revision": str(revision)}),
                         "generation": revision + 3},
            "spec": {"replicas": replicas, "revisionHistoryLimit": 10,
                     "selector": {"matchLabels": dict(sel)},
                     "strategy": strategy or {"type": "RollingUpdate", "rollingUpdate": {
                         "maxSurge": "25%", "maxUnavailable": "25%"}},
                     "progressDeadlineSeconds": 600, "template": tmpl},
            "status": st}


def replicaset(ns: str, deploy: str, hash_: str, created: datetime, tmpl: Obj, replicas: int,
               revision: int, ready: int | None = None) -> Obj:
    labels = {**tmpl["metadata"]["labels"], "pod-template-hash": hash_}
    t = json.loads(json.dumps(tmpl))
    t["metadata"]["labels"] = labels
    ready = replicas if ready is None else ready
    status: Obj = {"replicas": replicas, "observedGeneration": 1}
    if replicas:
        status |= {"fullyLabeledReplicas": replicas, "readyReplicas": ready,
                   "availableReplicas": ready}
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": meta("ReplicaSet", f"{deploy}-{hash_}", ns, created, labels,
                             {"deployment.kubernetes.io/revision": str(revision),
                              "deployment.kubernetes.io/desired-replicas": str(replicas)},
                             owner=("Deployment", deploy)),
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": t},
            "status": status}


def cond(kind: str, status: str, reason: str | None, message: str | None,
         at: datetime, probe: bool = False) -> Obj:
    c: Obj = {"type": kind, "status": status}
    if probe:
        c["lastProbeTime"] = None
    c["lastTransitionTime"] = iso(at)
    if kind in ("Available", "Progressing"):
        c["lastUpdateTime"] = iso(at)
    if reason:
        c["reason"] = reason
    if message:
        c["message"] = message
    return c


def running(started: datetime, ready: bool = True, restarts: int = 0,
            last: Obj | None = None) -> Obj:
    st: Obj = {"ready": ready, "restartCount": restarts, "started": True,
               "state": {"running": {"startedAt": iso(started)}}}
    if last:
        st["lastState"] = {"terminated": last}
    return st


def waiting(reason: str, message: str | None = None, restarts: int = 0,
            last: Obj | None = None) -> Obj:
    w: Obj = {"reason": reason}
    if message:
        w["message"] = message
    st: Obj = {"ready": False, "restartCount": restarts, "started": False,
               "state": {"waiting": w}}
    if last:
        st["lastState"] = {"terminated": last}
    return st


def terminated(reason: str, code: int, started: datetime, finished: datetime) -> Obj:
    return {"exitCode": code, "reason": reason, "startedAt": iso(started),
            "finishedAt": iso(finished)}


def pod(ns: str, name: str, created: datetime, tmpl: Obj, node: str | None,
        statuses: Sequence[Obj] | None, owner: tuple[str, str], phase: str = "Running",
        ip: str | None = None, conditions: list[Obj] | None = None,
        extra_labels: dict[str, str] | None = None, status_extra: Obj | None = None,
        api: str = "apps/v1") -> Obj:
    spec = json.loads(json.dumps(tmpl["spec"]))
    if node:
        spec["nodeName"] = node
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("serviceAccountName", "default")
    labels = {**tmpl["metadata"]["labels"], **(extra_labels or {})}
    status: Obj = {"phase": phase}
    if conditions is not None:
        status["conditions"] = conditions
    else:
        ready = all(s.get("ready") for s in statuses or [])
        status["conditions"] = [
            cond("Initialized", "True", None, None, created, probe=True),
            cond("Ready", "True" if ready else "False",
                 None if ready else "ContainersNotReady",
                 None if ready else "containers with unready status: [" + " ".join(
                     s["name"] for s in statuses or [] if not s.get("ready")) + "]",
                 created, probe=True),
            cond("ContainersReady", "True" if ready else "False", None, None, created,
                 probe=True),
            cond("PodScheduled", "True", None, None, created, probe=True)]
    if node:
        status["hostIP"] = node_ip(node)
    if ip:
        status["podIP"] = ip
        status["podIPs"] = [{"ip": ip}]
    status["startTime"] = iso(created)
    if statuses is not None:
        images = {c["name"]: c["image"] for c in spec["containers"]}
        status["containerStatuses"] = [
            {"name": s["name"], "image": images[s["name"]],
             **({"imageID": image_id(images[s["name"]])} if s.get("started") else {}),
             "containerID": "containerd://" + hashlib.sha256(
                 (name + s["name"]).encode()).hexdigest()
             if s.get("started") or s.get("lastState") else None,
             **{k: v for k, v in s.items() if k != "name"}}
            for s in statuses]
        for s in status["containerStatuses"]:
            if s["containerID"] is None:
                del s["containerID"]
    status["qosClass"] = "Burstable"
    status |= status_extra or {}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": meta("Pod", name, ns, created, labels, owner=owner, api=api),
            "spec": spec, "status": status}


def image_id(image: str) -> str:
    repo = image.rsplit(":", 1)[0]
    return f"{repo}@sha256:{hashlib.sha256(image.encode()).hexdigest()}"


def node_ip(node: str) -> str:
    digest = hashlib.sha1(node.encode()).digest()
    return f"10.0.{digest[0] % 16}.{digest[1] % 250 + 3}"


def node(name: str, created: datetime, pool: str, cpu: str, memory: str, heartbeat: datetime,
         pods: int = 58, storage: str = "97604588Ki", conditions: list[Obj] | None = None,
         taints: list[Obj] | None = None, zone: str = "eu-west-1a",
         instance: str = "m6i.xlarge", allocatable: Obj | None = None) -> Obj:
    base = {"MemoryPressure": ("False", "KubeletHasSufficientMemory",
                               "kubelet has sufficient memory available"),
            "DiskPressure": ("False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            "PIDPressure": ("False", "KubeletHasSufficientPID", "kubelet has sufficient PID "
                            "available"),
            "Ready": ("True", "KubeletReady", "kubelet is posting ready status")}
    conds = []
    overrides = {c["type"]: c for c in conditions or []}
    for kind, (status, reason, message) in base.items():
        if kind in overrides:
            conds.append(overrides[kind])
        else:
            conds.append({"type": kind, "status": status, "reason": reason, "message": message,
                          "lastHeartbeatTime": iso(heartbeat),
                          "lastTransitionTime": iso(created + timedelta(minutes=1))})
    spec: Obj = {"providerID": f"aws:///{zone}/i-0{hashlib.sha1(name.encode()).hexdigest()[:16]}"}
    if taints:
        spec["taints"] = taints
    capacity = {"cpu": cpu, "ephemeral-storage": storage, "memory": memory, "pods": str(pods)}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": meta("Node", name, None, created, {
                "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                "node.kubernetes.io/instance-type": instance,
                "topology.kubernetes.io/zone": zone, "eks.amazonaws.com/nodegroup": pool}),
            "spec": spec,
            "status": {"capacity": capacity, "allocatable": allocatable or capacity,
                       "conditions": conds,
                       "addresses": [{"type": "InternalIP", "address": node_ip(name)},
                                     {"type": "Hostname", "address": name}],
                       "nodeInfo": {"kubeletVersion": "v1.29.3-eks-ae9a62a",
                                    "containerRuntimeVersion": "containerd://1.7.11",
                                    "osImage": "Amazon Linux 2", "architecture": "amd64"}}}


def event(ns: str, kind: str, name: str, reason: str, message: str, first: datetime,
          last: datetime | None = None, count: int = 1, type_: str = "Normal",
          component: str = "kubelet", host: str | None = None, field: str | None = None,
          api: str = "v1") -> Obj:
    last = last or first
    involved: Obj = {"apiVersion": api, "kind": kind, "name": name,
                     "uid": uid(kind, ns if kind != "Node" else "", name)}
    if kind != "Node":
        involved["namespace"] = ns
    if field:
        involved["fieldPath"] = field
    source: Obj = {"component": component}
    if host:
        source["host"] = host
    ev_name = f"{name}.{hashlib.sha1((reason + message + iso(first)).encode()).hexdigest()[:16]}"
    return {"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": ev_name, "namespace": ns or "default",
                         "creationTimestamp": iso(first)},
            "involvedObject": involved, "reason": reason, "message": message,
            "type": type_, "count": count, "firstTimestamp": iso(first),
            "lastTimestamp": iso(last), "source": source}


def namespace(name: str, created: datetime) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": meta("Namespace", name, None, created,
                             {"kubernetes.io/metadata.name": name}),
            "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}


def service(ns: str, name: str, created: datetime, selector: dict[str, str], port: int = 80,
            target: int | str = "http", cluster_ip: str | None = None) -> Obj:
    ip = cluster_ip or "172.20.{}.{}".format(*hashlib.sha1((ns + name).encode()).digest()[:2])
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": meta("Service", name, ns, created, {"app": name}),
            "spec": {"type": "ClusterIP", "clusterIP": ip, "selector": dict(selector),
                     "ports": [{"name": "http", "port": port, "protocol": "TCP",
                                "targetPort": target}]},
            "status": {"loadBalancer": {}}}


def endpoints(ns: str, name: str, created: datetime, ready: list[tuple[str, str]],
              unready: list[tuple[str, str]] | None = None, port: int = 8080) -> Obj:
    subset: Obj = {}
    if ready:
        subset["addresses"] = [{"ip": ip, "targetRef": {"kind": "Pod", "name": p,
                                                        "namespace": ns}} for p, ip in ready]
    if unready:
        subset["notReadyAddresses"] = [{"ip": ip, "targetRef": {"kind": "Pod", "name": p,
                                                                "namespace": ns}}
                                       for p, ip in unready]
    subset["ports"] = [{"name": "http", "port": port, "protocol": "TCP"}]
    return {"apiVersion": "v1", "kind": "Endpoints",
            "metadata": meta("Endpoints", name, ns, created, {"app": name}),
            "subsets": [subset] if ready or unready else []}


def pod_ip(seed: str) -> str:
    digest = hashlib.sha1(seed.encode()).digest()
    return f"10.0.{digest[0] % 16}.{digest[1] % 250 + 3}"


class Metrics:
    """OpenMetrics families; samples are kept per series and written family by family."""

    def __init__(self) -> None:
        self.families: dict[str, tuple[str, str, dict[tuple[tuple[str, str], ...],
                                                      list[tuple[float, int]]]]] = {}

    def add(self, family: str, kind: str, sample: str, labels: dict[str, str],
            points: Iterable[tuple[datetime, float]], help_: str = "") -> None:
        _, _, series = self.families.setdefault(family, (kind, help_, {}))
        key = (("__name__", sample), *sorted(labels.items()))
        rows = series.setdefault(key, [])
        rows.extend((round(v, 6), int(at.timestamp())) for at, v in points)

    def gauge(self, name: str, labels: dict[str, str],
              points: Iterable[tuple[datetime, float]]) -> None:
        self.add(name, "gauge", name, labels, points)

    def counter(self, name: str, labels: dict[str, str],
                points: Iterable[tuple[datetime, float]]) -> None:
        family = name[:-len("_total")] if name.endswith("_total") else name
        self.add(family, "counter", name if name.endswith("_total") else name + "_total",
                 labels, points)

    def histogram(self, family: str, labels: dict[str, str], bounds: Sequence[float],
                  times: Sequence[datetime], counts: Sequence[Sequence[float]],
                  sums: Sequence[float]) -> None:
        """`counts[i]` are the cumulative bucket counters at `times[i]` (one per bound,
        the last for +Inf)."""
        for j, bound in enumerate([*bounds, float("inf")]):
            le = "+Inf" if bound == float("inf") else f"{bound:g}"
            self.add(family, "histogram", family + "_bucket", {**labels, "le": le},
                     [(t, c[j]) for t, c in zip(times, counts, strict=True)])
        self.add(family, "histogram", family + "_count", labels,
                 [(t, c[-1]) for t, c in zip(times, counts, strict=True)])
        self.add(family, "histogram", family + "_sum", labels, list(zip(times, sums,
                                                                        strict=True)))

    def render(self) -> str:
        out: list[str] = []
        for family, (kind, help_, series) in self.families.items():
            out.append(f"# TYPE {family} {kind}")
            out.append(f"# HELP {family} {help_ or HELP.get(family, family.replace('_', ' '))}")
            for key, rows in series.items():
                name = key[0][1]
                labels = ",".join(f'{k}="{v}"' for k, v in key[1:])
                for value, at in sorted(rows, key=lambda r: r[1]):
                    out.append(f"{name}{{{labels}}} {_num(value)} {at}")
        out.append("# EOF")
        return "\n".join(out) + "\n"


HELP = {
    "container_memory_working_set_bytes": "Current working set of the container in bytes",
    "container_cpu_usage_seconds": "Cumulative cpu time consumed in seconds",
    "container_cpu_cfs_periods": "Number of elapsed enforcement period intervals",
    "container_cpu_cfs_throttled_periods": "Number of throttled period intervals",
    "container_cpu_cfs_throttled_seconds": "Total time duration the container has been "
                                           "throttled",
    "kube_pod_container_resource_limits": "The number of requested limit resource by a "
                                          "container",
    "kube_pod_container_status_restarts": "The number of container restarts per container",
    "kube_pod_container_status_last_terminated_reason": "Describes the last reason the "
                                                        "container was in terminated state",
    "http_requests": "Total HTTP requests by status code",
    "http_request_duration_seconds": "HTTP request latency",
}


def _num(value: float) -> str:
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def steps(start: datetime, end: datetime, every: int = 60) -> list[datetime]:
    out = []
    at = start
    while at <= end:
        out.append(at)
        at += timedelta(seconds=every)
    return out


def cumulative(times: Sequence[datetime], rate: Any, every: int = 60,
               start: float = 0.0) -> list[tuple[datetime, float]]:
    """A counter from a per-second rate function of time."""
    total = start
    out = []
    for at in times:
        out.append((at, total))
        total += max(0.0, rate(at)) * every
    return out


def latency_hist(m: Metrics, family: str, labels: dict[str, str], times: Sequence[datetime],
                 rate: Any, median: Any, rng: random.Random, every: int = 60,
                 bounds: Sequence[float] = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
                                            2.5, 5, 10)) -> None:
    """Cumulative buckets for requests whose latency is log-normal around `median(t)`."""
    totals = [0.0] * (len(bounds) + 1)
    total_sum = 0.0
    counts, sums = [], []
    for at in times:
        counts.append(list(totals))
        sums.append(round(total_sum, 3))
        n = int(rate(at) * every)
        mid = median(at)
        sample = min(n, 400)
        scale = n / sample if sample else 0
        hits = [0.0] * (len(bounds) + 1)
        acc = 0.0
        for _ in range(sample):
            value = rng.lognormvariate(0, 0.6) * mid
            acc += value
            for j, bound in enumerate(bounds):
                if value <= bound:
                    hits[j] += 1
            hits[-1] += 1
        totals = [t + round(h * scale) for t, h in zip(totals, hits, strict=True)]
        total_sum += acc * scale
    m.histogram(family, labels, bounds, times, counts, sums)


def pod_metrics(m: Metrics, ns: str, pod_name: str, cont: str, times: Sequence[datetime],
                memory: Any, cpu: Any, cpu_limit: float | None, mem_limit: float | None,
                throttle: Any = None, restarts_at: Sequence[datetime] = (),
                last_reason: str | None = None, every: int = 60) -> None:
    """cAdvisor and kube-state-metrics series of one container: working set, CPU use, CFS
    periods and throttled periods, limits, restarts (and the last termination reason)."""
    labels = {"namespace": ns, "pod": pod_name, "container": cont}
    m.gauge("container_memory_working_set_bytes", labels, [(t, memory(t)) for t in times])
    m.counter("container_cpu_usage_seconds_total", labels, cumulative(times, cpu, every))
    if cpu_limit:
        periods = cumulative(times, lambda t: 10.0, every)
        m.counter("container_cpu_cfs_periods_total", labels, periods)
        m.counter("container_cpu_cfs_throttled_periods_total", labels, cumulative(
            times, lambda t: 10.0 * (throttle(t) if throttle else 0.0), every))
        m.counter("container_cpu_cfs_throttled_seconds_total", labels, cumulative(
            times, lambda t: 10.0 * (throttle(t) if throttle else 0.0) * 0.05, every))
        m.gauge("kube_pod_container_resource_limits",
                {**labels, "resource": "cpu", "unit": "core"}, [(t, cpu_limit) for t in times])
    if mem_limit:
        m.gauge("kube_pod_container_resource_limits",
                {**labels, "resource": "memory", "unit": "byte"},
                [(t, mem_limit) for t in times])
    m.counter("kube_pod_container_status_restarts_total", labels,
              [(t, float(sum(1 for r in restarts_at if r <= t))) for t in times])
    if last_reason:
        m.gauge("kube_pod_container_status_last_terminated_reason",
                {**labels, "reason": last_reason},
                [(t, 1.0 if any(r <= t for r in restarts_at) else 0.0) for t in times])


_STATUS_TIMES = frozenset({"lastTransitionTime", "lastUpdateTime", "lastHeartbeatTime",
                           "startTime", "startedAt", "finishedAt", "lastScheduleTime",
                           "lastSuccessfulTime", "completionTime", "lastProbeTime"})


class Scenario:
    """One scenario folder being written."""

    def __init__(self, sid: str, now: str) -> None:
        self.id = sid
        self.now = parse(now)
        self.objects: list[Obj] = []
        self.logs: list[Obj] = []
        self.pod_logs: dict[tuple[str, str, str, bool], list[str]] = {}
        self.metrics = Metrics()

    def ago(self, **delta: float) -> datetime:
        return self.now - timedelta(**delta)

    def add(self, *objs: Obj) -> None:
        self.objects.extend(objs)

    def log(self, at: datetime, service: str, ns: str, pod_name: str, level: str,
            message: str, container: str | None = None, **fields: Any) -> None:
        doc: Obj = {"@timestamp": iso_ms(at), "message": message, "log.level": level,
                    "service.name": service, "kubernetes.namespace": ns,
                    "kubernetes.pod.name": pod_name,
                    "kubernetes.container.name": container or service}
        doc.update(fields)
        self.logs.append(doc)

    def pod_log(self, ns: str, pod_name: str, container: str, lines: Iterable[str],
                previous: bool = False) -> None:
        self.pod_logs.setdefault((ns, pod_name, container, previous), []).extend(lines)

    def clamp(self, node: Any, in_status: bool = False) -> Any:
        """Status times older than the format's week are drawn into it, keeping their
        order: an old pod reads as restarted in the last week (a node rotation would do)."""
        if isinstance(node, dict):
            return {k: (self._clamped(v) if in_status and k in _STATUS_TIMES
                        and isinstance(v, str) else
                        self.clamp(v, in_status or k == "status")) for k, v in node.items()}
        if isinstance(node, list):
            return [self.clamp(v, in_status) for v in node]
        return node

    def _clamped(self, text: str) -> str:
        cutoff = self.now - timedelta(days=6)
        at = parse(text)
        if at >= cutoff:
            return text
        x = (cutoff - at).total_seconds()
        month = 30 * 86400
        return iso(cutoff - timedelta(seconds=12 * 3600 * x / (x + month)))

    def write(self, scenario: Obj) -> Path:
        self.objects = [self.clamp(o) for o in self.objects]
        folder = ROOT / self.id
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        head = {"id": self.id, **scenario, "now": iso(self.now)}
        order = ["id", "title", "now", "report", "truth", "interventions"]
        head = {k: head[k] for k in order if k in head}
        (folder / "scenario.yaml").write_text(yaml.safe_dump(head, sort_keys=False,
                                                             width=100, allow_unicode=True))
        (folder / "cluster.yaml").write_text(yaml.safe_dump_all(
            self.objects, sort_keys=False, width=1000))
        if self.logs:
            self.logs.sort(key=lambda d: d["@timestamp"])
            (folder / "logs.ndjson").write_text(
                "".join(json.dumps(d, separators=(",", ":")) + "\n" for d in self.logs))
        for (ns, pod_name, cont, previous), lines in self.pod_logs.items():
            path = folder / "pod-logs" / ns / pod_name / (
                cont + (".previous" if previous else "") + ".log")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("\n".join(lines) + "\n")
        if self.metrics.families:
            (folder / "metrics.om").write_text(self.metrics.render())
        return folder


def healthy(sc: Scenario, ns: str, name: str, image: str, replicas: int, nodes: Sequence[str],
            res: Obj, created: datetime, revision: int = 3, port: int | None = 8080,
            probe: str | None = "/healthz", rollout_at: datetime | None = None,
            restarts: int = 0, env: dict[str, str] | None = None) -> list[str]:
    """A healthy Deployment with its current ReplicaSet, Ready pods and Service: the
    bystanders every cluster has. Returns the pod names."""
    labels = {"app": name}
    extra: Obj = {}
    if probe and port:
        extra["readinessProbe"] = http_probe(probe)
        extra["livenessProbe"] = http_probe(probe, period=20, delay=15)
    tmpl = template(labels, [container(name, image, res, port, env, **extra)])
    rolled = rollout_at or created + timedelta(days=2)
    hash_ = rs_hash(ns + name + str(revision))
    sc.add(deployment(ns, name, created, tmpl, replicas, revision))
    sc.add(replicaset(ns, name, hash_, rolled, tmpl, replicas, revision))
    names = []
    for i in range(replicas):
        pname = f"{name}-{hash_}-{suffix(ns + name + str(i))}"
        started = rolled + timedelta(seconds=20 + 7 * i)
        sc.add(pod(ns, pname, rolled + timedelta(seconds=5 * i), tmpl, nodes[i % len(nodes)],
                   [{"name": name, **running(started, restarts=restarts)}],
                   ("ReplicaSet", f"{name}-{hash_}"), ip=pod_ip(pname),
                   extra_labels={"pod-template-hash": hash_}))
        names.append(pname)
    if port:
        sc.add(service(ns, name, created, labels, 80, "http"))
    return names
