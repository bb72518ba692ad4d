"""Building blocks for the holdout33 scenarios: Kubernetes objects as `kubectl get -o yaml`
prints them, log lines and documents, and OpenMetrics series, all dated from one clock so
that a scenario's files agree with each other to the second."""

from __future__ import annotations

import hashlib
import json
import math
import random
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

UTC = UTC
SET_DIR = Path(__file__).resolve().parents[1]


def parse(ts: str) -> datetime:
    return datetime.fromisoformat(ts.replace("Z", "+00:00"))


def iso(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_ms(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def uid(*parts: str) -> str:
    h = hashlib.sha1("/".join(parts).encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def suffix(seed: str, n: int = 5) -> str:
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    h = hashlib.sha1(seed.encode()).digest()
    return "".join(alphabet[b % len(alphabet)] for b in h[:n])


def pod_hash(seed: str) -> str:
    return hashlib.sha1(seed.encode()).hexdigest()[:10].replace("a", "7").replace("e", "5")


# ---------------------------------------------------------------- objects


def meta(name: str, namespace: str | None, created: datetime, labels: dict[str, str] | None = None,
         annotations: dict[str, str] | None = None, owner: dict[str, Any] | None = None,
         ) -> dict[str, Any]:
    m: dict[str, Any] = {"name": name}
    if namespace:
        m["namespace"] = namespace
    m["uid"] = uid(namespace or "", name)
    m["creationTimestamp"] = iso(created)
    if labels:
        m["labels"] = dict(labels)
    if annotations:
        m["annotations"] = dict(annotations)
    if owner:
        m["ownerReferences"] = [{"apiVersion": owner["apiVersion"], "kind": owner["kind"],
                                 "name": owner["name"], "uid": uid(owner.get("namespace", ""),
                                                                   owner["name"]),
                                 "controller": True, "blockOwnerDeletion": True}]
    return m


def namespace(name: str, created: datetime) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": meta(name, None, created, {"kubernetes.io/metadata.name": name}),
            "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}


def node(name: str, created: datetime, now: datetime, *, ready: bool = True, zone: str = "a",
         cpu: str = "3920m", memory: str = "15232Mi", kubelet: str = "v1.29.6",
         ready_since: datetime | None = None, ready_message: str | None = None,
         ready_reason: str | None = None, taints: list[dict[str, Any]] | None = None,
         heartbeat: datetime | None = None, instance: str = "m6i.xlarge",
         region: str = "eu-west-1", role: str | None = None) -> dict[str, Any]:
    beat = iso(heartbeat or now - timedelta(seconds=17))
    since = iso(ready_since or created + timedelta(minutes=2))
    def cond(kind: str, status: str, reason: str, message: str) -> dict[str, Any]:
        return {"type": kind, "status": status, "reason": reason, "message": message,
                "lastHeartbeatTime": beat, "lastTransitionTime": since if not ready else
                iso(created + timedelta(minutes=2))}
    if ready:
        conds = [cond("MemoryPressure", "False", "KubeletHasSufficientMemory",
                      "kubelet has sufficient memory available"),
                 cond("DiskPressure", "False", "KubeletHasNoDiskPressure",
                      "kubelet has no disk pressure"),
                 cond("PIDPressure", "False", "KubeletHasSufficientPID",
                      "kubelet has sufficient PID available"),
                 cond("Ready", "True", "KubeletReady", "kubelet is posting ready status")]
    else:
        msg = ready_message or "Kubelet stopped posting node status."
        reason = ready_reason or "NodeStatusUnknown"
        conds = [cond(k, "Unknown", reason, msg) for k in
                 ("MemoryPressure", "DiskPressure", "PIDPressure", "Ready")]
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
              "kubernetes.io/arch": "amd64", "node.kubernetes.io/instance-type": instance,
              "topology.kubernetes.io/region": region,
              "topology.kubernetes.io/zone": f"{region}{zone}"}
    if role:
        labels[f"node-role.kubernetes.io/{role}"] = ""
    obj: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Node", "metadata": meta(name, None, created, labels),
        "spec": {"providerID": f"aws:///{region}{zone}/i-0{suffix(name, 16)}"},
        "status": {"capacity": {"cpu": "4", "memory": "16117632Ki", "pods": "58",
                                "ephemeral-storage": "83873772Ki"},
                   "allocatable": {"cpu": cpu, "memory": memory, "pods": "58",
                                   "ephemeral-storage": "76224326324"},
                   "conditions": conds,
                   "nodeInfo": {"kubeletVersion": kubelet, "kubeProxyVersion": kubelet,
                                "containerRuntimeVersion": "containerd://1.7.11",
                                "osImage": "Amazon Linux 2", "architecture": "amd64",
                                "operatingSystem": "linux"}}}
    if taints:
        obj["spec"]["taints"] = taints
    return obj


def container(name: str, image: str, *, cpu: str | None = "250m", memory: str | None = "256Mi",
              cpu_limit: str | None = None, memory_limit: str | None = "512Mi",
              port: int | None = 8080, env: dict[str, str] | None = None,
              readiness: dict[str, Any] | None = None, liveness: dict[str, Any] | None = None,
              args: list[str] | None = None, env_from: list[dict[str, Any]] | None = None,
              mounts: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, "image": image, "imagePullPolicy": "IfNotPresent"}
    if args:
        c["args"] = args
    if port:
        c["ports"] = [{"name": "http", "containerPort": port, "protocol": "TCP"}]
    if env:
        c["env"] = [{"name": k, "value": v} for k, v in env.items()]
    if env_from:
        c["envFrom"] = env_from
    res: dict[str, Any] = {}
    if cpu or memory:
        res["requests"] = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}
    if cpu_limit or memory_limit:
        res["limits"] = {k: v for k, v in (("cpu", cpu_limit), ("memory", memory_limit)) if v}
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


def http_probe(path: str, port: int | str = "http", period: int = 10, timeout: int = 1,
               failures: int = 3, delay: int = 5) -> dict[str, Any]:
    return {"httpGet": {"path": path, "port": port, "scheme": "HTTP"},
            "initialDelaySeconds": delay, "periodSeconds": period, "timeoutSeconds": timeout,
            "failureThreshold": failures, "successThreshold": 1}


def template(labels: dict[str, str], containers: list[dict[str, Any]],
             annotations: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    m: dict[str, Any] = {"labels": dict(labels)}
    if annotations:
        m["annotations"] = dict(annotations)
    return {"metadata": m, "spec": {"containers": containers, "restartPolicy": "Always",
                                    "terminationGracePeriodSeconds": 30,
                                    "dnsPolicy": "ClusterFirst", **spec}}


def deployment(name: str, ns: str, created: datetime, tmpl: dict[str, Any], replicas: int, *,
               revision: int, ready: int | None = None, updated: int | None = None,
               available: int | None = None, progressing_at: datetime | None = None,
               labels: dict[str, str] | None = None, change_cause: str | None = None,
               ) -> dict[str, Any]:
    ready = replicas if ready is None else ready
    updated = replicas if updated is None else updated
    available = ready if available is None else available
    ann = {"deployment.kubernetes.io/revision": str(revision)}
    if change_cause:
        ann["kubernetes.io/change-cause"] = change_cause
    at = iso(progressing_at or created)
    conds = [{"type": "Available", "status": "True" if available >= max(1, replicas - 1) else
              "False", "reason": "MinimumReplicasAvailable" if available >= max(1, replicas - 1)
              else "MinimumReplicasUnavailable",
              "message": "Deployment has minimum availability." if available >=
              max(1, replicas - 1) else "Deployment does not have minimum availability.",
              "lastUpdateTime": at, "lastTransitionTime": at},
             {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable",
              "message": f'ReplicaSet "{name}-{pod_hash(name + str(revision))}" has '
                         "successfully progressed.", "lastUpdateTime": at,
              "lastTransitionTime": iso(created)}]
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": meta(name, ns, created, labels or tmpl["metadata"]["labels"], ann),
            "spec": {"replicas": replicas, "revisionHistoryLimit": 10,
                     "selector": {"matchLabels": {"app": tmpl["metadata"]["labels"]["app"]}},
                     "strategy": {"type": "RollingUpdate",
                                  "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
                     "template": tmpl},
            "status": {"observedGeneration": revision + 1, "replicas": replicas,
                       "updatedReplicas": updated, "readyReplicas": ready,
                       "availableReplicas": available,
                       **({"unavailableReplicas": replicas - available}
                          if replicas > available else {}),
                       "conditions": conds}}


def replicaset(deploy: dict[str, Any], revision: int, tmpl: dict[str, Any], created: datetime,
               replicas: int, ready: int | None = None) -> dict[str, Any]:
    name = deploy["metadata"]["name"]
    ns = deploy["metadata"]["namespace"]
    h = pod_hash(name + str(revision))
    labels = {**tmpl["metadata"]["labels"], "pod-template-hash": h}
    t = json.loads(json.dumps(tmpl))
    t["metadata"]["labels"] = labels
    ready = replicas if ready is None else ready
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": meta(f"{name}-{h}", ns, created, labels,
                             {"deployment.kubernetes.io/revision": str(revision),
                              "deployment.kubernetes.io/desired-replicas":
                              str(deploy["spec"]["replicas"])},
                             {"apiVersion": "apps/v1", "kind": "Deployment", "name": name,
                              "namespace": ns}),
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels}, "template": t},
            "status": {"replicas": replicas, "readyReplicas": ready, "availableReplicas": ready,
                       "fullyLabeledReplicas": replicas, "observedGeneration": 1}}


def pod(name: str, ns: str, owner_kind: str, owner_name: str, tmpl: dict[str, Any],
        node_name: str | None, started: datetime, *, ip: str | None = None,
        phase: str = "Running", ready: bool = True, restarts: int = 0,
        ready_changed: datetime | None = None, extra_labels: dict[str, str] | None = None,
        waiting: tuple[str, str] | None = None, last_terminated: dict[str, Any] | None = None,
        pending_reason: str | None = None, pending_message: str | None = None,
        deletion: datetime | None = None, container_running_since: datetime | None = None,
        host_ip: str | None = None, unknown: bool = False) -> dict[str, Any]:
    labels = {**tmpl["metadata"]["labels"], **(extra_labels or {})}
    spec = json.loads(json.dumps(tmpl["spec"]))
    if node_name:
        spec["nodeName"] = node_name
    spec["serviceAccountName"] = spec.get("serviceAccountName", "default")
    spec.setdefault("tolerations", [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists",
         "effect": "NoExecute", "tolerationSeconds": 300},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists",
         "effect": "NoExecute", "tolerationSeconds": 300}])
    api = "v1" if owner_kind == "Node" else "apps/v1"
    if owner_kind == "Job":
        api = "batch/v1"
    m = meta(name, ns, started, labels, tmpl["metadata"].get("annotations"),
             {"apiVersion": api, "kind": owner_kind, "name": owner_name, "namespace": ns})
    if deletion:
        m["deletionTimestamp"] = iso(deletion)
        m["deletionGracePeriodSeconds"] = 30
    changed = iso(ready_changed or started + timedelta(seconds=20))
    status: dict[str, Any] = {"phase": phase, "qosClass": "Burstable"}
    if phase == "Pending" and not node_name:
        status["conditions"] = [{"type": "PodScheduled", "status": "False",
                                 "reason": pending_reason or "Unschedulable",
                                 "message": pending_message or "", "lastProbeTime": None,
                                 "lastTransitionTime": iso(started)}]
        return {"apiVersion": "v1", "kind": "Pod", "metadata": m, "spec": spec, "status": status}
    rstate = "True" if ready and not unknown else "False"
    status["conditions"] = [
        {"type": "Initialized", "status": "True", "lastProbeTime": None,
         "lastTransitionTime": iso(started)},
        {"type": "Ready", "status": rstate, "lastProbeTime": None, "lastTransitionTime": changed,
         **({} if rstate == "True" else {} if unknown else {
             "reason": "ContainersNotReady",
             "message": f"containers with unready status: [{spec['containers'][0]['name']}]"})},
        {"type": "ContainersReady", "status": rstate, "lastProbeTime": None,
         "lastTransitionTime": changed},
        {"type": "PodScheduled", "status": "True", "lastProbeTime": None,
         "lastTransitionTime": iso(started)}]
    status["hostIP"] = host_ip or "10.0.0.1"
    if ip:
        status["podIP"] = ip
        status["podIPs"] = [{"ip": ip}]
    status["startTime"] = iso(started)
    cstatuses = []
    for c in spec["containers"]:
        cs: dict[str, Any] = {"name": c["name"], "image": c["image"],
                              "imageID": f"{c['image'].split(':')[0]}@sha256:"
                                         f"{hashlib.sha256(c['image'].encode()).hexdigest()}",
                              "ready": ready and phase == "Running", "restartCount": restarts,
                              "started": phase == "Running"}
        if waiting:
            cs["state"] = {"waiting": {"reason": waiting[0], "message": waiting[1]}}
            cs["started"] = False
            cs["ready"] = False
        elif phase == "Running":
            cs["state"] = {"running": {"startedAt": iso(container_running_since or
                                                        started + timedelta(seconds=6))}}
        elif phase == "Succeeded":
            cs["state"] = {"terminated": {"exitCode": 0, "reason": "Completed",
                                          "startedAt": iso(started + timedelta(seconds=5)),
                                          "finishedAt": iso(started + timedelta(minutes=20))}}
        if last_terminated:
            cs["lastState"] = {"terminated": last_terminated}
        cstatuses.append(cs)
    status["containerStatuses"] = cstatuses
    return {"apiVersion": "v1", "kind": "Pod", "metadata": m, "spec": spec, "status": status}


def service(name: str, ns: str, created: datetime, selector: dict[str, str], port: int = 80,
            target: int | str = "http", cluster_ip: str = "10.100.0.1",
            headless: bool = False) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": meta(name, ns, created, {"app": selector.get("app", name)}),
            "spec": {"type": "ClusterIP", "clusterIP": "None" if headless else cluster_ip,
                     "selector": selector,
                     "ports": [{"name": "http", "port": port, "targetPort": target,
                                "protocol": "TCP"}]},
            "status": {"loadBalancer": {}}}


def endpoints(name: str, ns: str, created: datetime, ready: list[tuple[str, str, str]],
              not_ready: list[tuple[str, str, str]] = (), port: int = 8080) -> dict[str, Any]:
    """ready/not_ready: (pod name, ip, node)."""
    def addr(p: tuple[str, str, str]) -> dict[str, Any]:
        return {"ip": p[1], "nodeName": p[2],
                "targetRef": {"kind": "Pod", "namespace": ns, "name": p[0],
                              "uid": uid(ns, p[0])}}
    subset: dict[str, Any] = {"ports": [{"name": "http", "port": port, "protocol": "TCP"}]}
    if ready:
        subset["addresses"] = [addr(p) for p in ready]
    if not_ready:
        subset["notReadyAddresses"] = [addr(p) for p in not_ready]
    return {"apiVersion": "v1", "kind": "Endpoints", "metadata": meta(name, ns, created,
                                                                     {"app": name}),
            "subsets": [subset] if (ready or not_ready) else []}


def configmap(name: str, ns: str, created: datetime, data: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta(name, ns, created),
            "data": data}


def event(ns: str, kind: str, name: str, reason: str, message: str, first: datetime,
          last: datetime, *, count: int = 1, type_: str = "Warning", component: str = "kubelet",
          host: str | None = None, api: str = "v1") -> dict[str, Any]:
    ev_name = f"{name}.{hashlib.sha1((reason + message + iso(first)).encode()).hexdigest()[:16]}"
    src: dict[str, Any] = {"component": component}
    if host:
        src["host"] = host
    inv: dict[str, Any] = {"kind": kind, "name": name, "apiVersion": api,
                           "uid": uid(ns if kind != "Node" else "", name)}
    if kind != "Node":
        inv["namespace"] = ns
    return {"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": ev_name, "namespace": ns or "default",
                         "creationTimestamp": iso(first)},
            "involvedObject": inv, "reason": reason, "message": message, "type": type_,
            "count": count, "firstTimestamp": iso(first), "lastTimestamp": iso(last),
            "source": src, "reportingComponent": component}


# ---------------------------------------------------------------- metrics


def hist_fractions(median: float, spread: float, les: Iterable[float]) -> list[float]:
    """The share of requests at or below each bucket bound for a log-normal latency."""
    out = []
    for le in les:
        z = (math.log(le) - math.log(median)) / spread
        out.append(0.5 * (1 + math.erf(z / math.sqrt(2))))
    return out


LES = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


@dataclass
class Metrics:
    """OpenMetrics families, each a list of (labels, [(unix seconds, value)])."""

    families: dict[str, tuple[str, str, list[tuple[dict[str, str], list[tuple[int, float]]]]]] = \
        field(default_factory=dict)

    def add(self, name: str, kind: str, help_: str, labels: dict[str, str],
            samples: list[tuple[int, float]]) -> None:
        fam = self.families.setdefault(name, (kind, help_, []))
        fam[2].append((labels, samples))

    def counter(self, name: str, help_: str, labels: dict[str, str], times: list[int],
                rate: Callable[[int], float], start: float = 0.0) -> None:
        """A counter integrated from a per-second rate; name without _total."""
        value, samples, prev = start, [], None
        for t in times:
            if prev is not None:
                value += max(0.0, rate(t)) * (t - prev)
            samples.append((t, round(value, 3)))
            prev = t
        self.add(name, "counter", help_, labels, samples)

    def gauge(self, name: str, help_: str, labels: dict[str, str], times: list[int],
              fn: Callable[[int], float]) -> None:
        self.add(name, "gauge", help_, labels, [(t, round(fn(t), 4)) for t in times])

    def histogram(self, name: str, help_: str, labels: dict[str, str], times: list[int],
                  rate: Callable[[int], float], median: Callable[[int], float],
                  spread: float = 0.5) -> None:
        """Cumulative buckets of a request-duration histogram."""
        self.families.setdefault(name, ("histogram", help_, []))
        buckets = [0.0] * len(LES)
        total = total_sum = 0.0
        rows: dict[str, list[tuple[int, float]]] = {str(le): [] for le in LES}
        count_rows: list[tuple[int, float]] = []
        sum_rows: list[tuple[int, float]] = []
        prev = None
        for t in times:
            if prev is not None:
                n = max(0.0, rate(t)) * (t - prev)
                med = median(t)
                for i, f in enumerate(hist_fractions(med, spread, LES)):
                    buckets[i] += n * f
                total += n
                total_sum += n * med * math.exp(spread ** 2 / 2)
            for i, le in enumerate(LES):
                rows[str(le)].append((t, round(buckets[i], 2)))
            count_rows.append((t, round(total, 2)))
            sum_rows.append((t, round(total_sum, 3)))
            prev = t
        self._hist.setdefault(name, []).append((labels, rows, count_rows, sum_rows))

    _hist: dict[str, list[Any]] = field(default_factory=dict)

    def render(self) -> str:
        out: list[str] = []
        for name, (kind, help_, series) in self.families.items():
            if kind == "histogram":
                out.append(f"# TYPE {name} histogram")
                out.append(f"# HELP {name} {help_}")
                for labels, rows, counts, sums in self._hist.get(name, []):
                    for le, samples in rows.items():
                        lab = _labels({**labels, "le": le})
                        out.extend(f"{name}_bucket{lab} {v} {t}" for t, v in samples)
                    lab = _labels({**labels, "le": "+Inf"})
                    out.extend(f"{name}_bucket{lab} {v} {t}" for t, v in counts)
                    out.extend(f"{name}_count{_labels(labels)} {v} {t}" for t, v in counts)
                    out.extend(f"{name}_sum{_labels(labels)} {v} {t}" for t, v in sums)
                continue
            out.append(f"# TYPE {name} {kind}")
            out.append(f"# HELP {name} {help_}")
            sample = name + "_total" if kind == "counter" else name
            for labels, samples in series:
                lab = _labels(labels)
                out.extend(f"{sample}{lab} {_num(v)} {t}" for t, v in samples)
        out.append("# EOF")
        return "\n".join(out) + "\n"


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(round(v, 4))


def _labels(labels: dict[str, str]) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}"


def timeline(now: datetime, hours: float, step: int = 60) -> list[int]:
    end = int(now.timestamp())
    start = end - int(hours * 3600)
    start -= start % step
    return list(range(start, end + 1, step))


# ---------------------------------------------------------------- writing


@dataclass
class Scenario:
    id: str
    title: str
    now: datetime
    report: str
    truth: dict[str, Any]
    objects: list[dict[str, Any]] = field(default_factory=list)
    pod_logs: dict[tuple[str, str, str, bool], list[str]] = field(default_factory=dict)
    docs: list[dict[str, Any]] = field(default_factory=list)
    metrics: Metrics = field(default_factory=Metrics)
    rng: random.Random = field(default_factory=lambda: random.Random(33))

    def add(self, *objs: dict[str, Any]) -> None:
        self.objects.extend(objs)

    def log(self, ns: str, pod_name: str, container_name: str, lines: list[str],
            previous: bool = False) -> None:
        self.pod_logs.setdefault((ns, pod_name, container_name, previous), []).extend(lines)

    def doc(self, t: datetime, service_name: str, ns: str, pod_name: str, container_name: str,
            level: str, message: str, **extra: Any) -> None:
        d: dict[str, Any] = {"@timestamp": iso_ms(t), "message": message, "log.level": level,
                             "service.name": service_name, "kubernetes.namespace": ns,
                             "kubernetes.pod.name": pod_name,
                             "kubernetes.container.name": container_name}
        d.update(extra)
        self.docs.append(d)

    def _normalise(self) -> None:
        """One uid per object, references that agree with it, and status times inside the
        format's week (a long-lived object's old transitions are shown as six days old)."""
        floor = self.now - timedelta(days=7)
        shown = iso(self.now - timedelta(days=6, hours=20))
        def clamp(node: Any) -> Any:
            if isinstance(node, dict):
                return {k: clamp(v) for k, v in node.items()}
            if isinstance(node, list):
                return [clamp(v) for v in node]
            if isinstance(node, str) and len(node) == 20 and node[4] == "-" and node[10] == "T":
                try:
                    if parse(node) < floor:
                        return shown
                except ValueError:
                    return node
            return node
        for obj in self.objects:
            if obj["kind"] == "Event":
                continue
            m = obj["metadata"]
            ns = m.get("namespace", "")
            m["uid"] = uid(ns, m["name"])
            for ref in m.get("ownerReferences", []):
                ref["uid"] = uid(ns, ref["name"])
            if "status" in obj:
                obj["status"] = clamp(obj["status"])

    def write(self) -> Path:
        self._normalise()
        folder = SET_DIR / self.id
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        spec = {"id": self.id, "title": self.title, "now": iso(self.now),
                "report": self.report, "truth": self.truth}
        (folder / "scenario.yaml").write_text(yaml.safe_dump(spec, sort_keys=False, width=100))
        (folder / "cluster.yaml").write_text(
            yaml.safe_dump_all(self.objects, sort_keys=False, width=120))
        for (ns, pod_name, cname, previous), lines in self.pod_logs.items():
            target = folder / "pod-logs" / ns / pod_name
            target.mkdir(parents=True, exist_ok=True)
            fname = f"{cname}.previous.log" if previous else f"{cname}.log"
            (target / fname).write_text("\n".join(lines) + "\n")
        if self.docs:
            self.docs.sort(key=lambda d: d["@timestamp"])
            (folder / "logs.ndjson").write_text(
                "".join(json.dumps(d, separators=(",", ":")) + "\n" for d in self.docs))
        if self.metrics.families:
            (folder / "metrics.om").write_text(self.metrics.render())
        return folder


def rollout(s: Scenario, name: str, ns: str, created: datetime,
            revisions: list[tuple[int, dict[str, Any], datetime]], placements: list[str],
            *, ips: list[str], host_ips: dict[str, str], change_cause: str | None = None,
            pod_overrides: dict[int, dict[str, Any]] | None = None,
            ready: int | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A Deployment, its ReplicaSets (older ones scaled to 0) and the current pods, one
    per placement (a node name). Returns the Deployment and the pods."""
    cur_rev, cur_tmpl, cur_at = revisions[-1]
    n = len(placements)
    dep = deployment(name, ns, created, cur_tmpl, n, revision=cur_rev, progressing_at=cur_at,
                     change_cause=change_cause,
                     ready=ready if ready is not None else n)
    s.add(dep)
    for rev, tmpl, at in revisions:
        s.add(replicaset(dep, rev, tmpl, at, n if rev == cur_rev else 0,
                         (ready if ready is not None else n) if rev == cur_rev else 0))
    h = pod_hash(name + str(cur_rev))
    pods = []
    for i, where in enumerate(placements):
        o = (pod_overrides or {}).get(i, {})
        started = o.pop("started", cur_at + timedelta(seconds=20 + 35 * i))
        p = pod(f"{name}-{h}-{suffix(name + str(i) + str(cur_rev))}", ns, "ReplicaSet",
                f"{name}-{h}", cur_tmpl, where, started, ip=ips[i % len(ips)],
                host_ip=host_ips.get(where), extra_labels={"pod-template-hash": h}, **o)
        pods.append(p)
        s.add(p)
    return dep, pods
