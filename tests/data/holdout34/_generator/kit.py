"""Building blocks for the holdout34 scenarios: Kubernetes objects as `kubectl get -o yaml`
prints them, pod log files, log-store documents and OpenMetrics series, all on one clock,
so that every story writes consistent names, owners, timestamps and counter values."""

from __future__ import annotations

import hashlib
import json
import math
import random
import shutil
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

Obj = dict[str, Any]


def h(*parts: Any) -> int:
    """A stable hash (Python's own is salted per process, which would rewrite every file)."""
    return int(hashlib.md5(repr(parts).encode()).hexdigest()[:15], 16)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def ts(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def ts_ms(moment: datetime) -> str:
    return (
        moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    )


def suffix(rng: random.Random, n: int = 5) -> str:
    return "".join(rng.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(n))


def meta(
    name: str,
    namespace: str | None,
    created: datetime,
    labels: dict[str, str] | None = None,
    **extra: Any,
) -> Obj:
    out: Obj = {"name": name}
    if namespace:
        out["namespace"] = namespace
    out["creationTimestamp"] = ts(created)
    if labels:
        out["labels"] = dict(labels)
    out["uid"] = (
        extra.pop("uid", None)
        or f"{h((name, namespace)) % 10**12:012d}-4e1a-9c0d-7b2f{len(name):04d}"
    )
    out.update(extra)
    return out


def namespace(name: str, created: datetime) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": meta(name, None, created, {"kubernetes.io/metadata.name": name}),
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


def node(
    name: str,
    created: datetime,
    cpu: str,
    memory: str,
    labels: dict[str, str],
    *,
    ready: bool = True,
    unschedulable: bool = False,
    taints: list[Obj] | None = None,
    heartbeat: datetime | None = None,
    pods: str = "110",
) -> Obj:
    beat = ts(heartbeat or created)
    conds = [
        {
            "type": t,
            "status": "False",
            "reason": r,
            "message": m,
            "lastHeartbeatTime": beat,
            "lastTransitionTime": ts(created),
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
            "lastHeartbeatTime": beat,
            "lastTransitionTime": ts(created + timedelta(seconds=40)),
        }
    )
    spec: Obj = {"podCIDR": f"10.{h(name) % 200 + 20}.0.0/24"}
    if unschedulable:
        spec["unschedulable"] = True
    if taints:
        spec["taints"] = taints
    base = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
    }
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": meta(name, None, created, {**base, **labels}),
        "spec": spec,
        "status": {
            "capacity": {
                "cpu": cpu,
                "memory": memory,
                "pods": pods,
                "ephemeral-storage": "101430960Ki",
            },
            "allocatable": {
                "cpu": cpu if not cpu.isdigit() else f"{int(cpu) * 1000 - 140}m",
                "memory": memory,
                "pods": pods,
                "ephemeral-storage": "93478772582",
            },
            "conditions": conds,
            "nodeInfo": {
                "kubeletVersion": "v1.29.6",
                "containerRuntimeVersion": "containerd://1.7.18",
                "osImage": "Ubuntu 22.04.4 LTS",
                "kernelVersion": "5.15.0-1061-gke",
                "architecture": "amd64",
                "operatingSystem": "linux",
            },
        },
    }


def container(
    name: str,
    image: str,
    *,
    port: int | None = 8080,
    cpu_req: str = "250m",
    mem_req: str = "256Mi",
    cpu_lim: str | None = None,
    mem_lim: str | None = "512Mi",
    env: dict[str, str] | None = None,
    readiness: Obj | None = None,
    liveness: Obj | None = None,
    args: list[str] | None = None,
) -> Obj:
    out: Obj = {"name": name, "image": image, "imagePullPolicy": "IfNotPresent"}
    if args:
        out["args"] = args
    if port:
        out["ports"] = [{"name": "http", "containerPort": port, "protocol": "TCP"}]
    if env:
        out["env"] = [{"name": k, "value": v} for k, v in env.items()]
    res: Obj = {"requests": {"cpu": cpu_req, "memory": mem_req}}
    limits = {k: v for k, v in (("cpu", cpu_lim), ("memory", mem_lim)) if v}
    if limits:
        res["limits"] = limits
    out["resources"] = res
    if readiness:
        out["readinessProbe"] = readiness
    if liveness:
        out["livenessProbe"] = liveness
    out["terminationMessagePath"] = "/dev/termination-log"
    out["terminationMessagePolicy"] = "File"
    return out


def http_probe(
    path: str, port: Any = "http", period: int = 10, delay: int = 5, failures: int = 3
) -> Obj:
    return {
        "httpGet": {"path": path, "port": port, "scheme": "HTTP"},
        "initialDelaySeconds": delay,
        "periodSeconds": period,
        "timeoutSeconds": 1,
        "successThreshold": 1,
        "failureThreshold": failures,
    }


def template(
    labels: dict[str, str],
    containers: list[Obj],
    *,
    annotations: dict[str, str] | None = None,
    extra_spec: Obj | None = None,
) -> Obj:
    md: Obj = {"labels": dict(labels)}
    if annotations:
        md["annotations"] = annotations
    spec: Obj = {
        "containers": containers,
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "schedulerName": "default-scheduler",
    }
    spec.update(extra_spec or {})
    return {"metadata": md, "spec": spec}


def deployment(
    ns: str,
    name: str,
    created: datetime,
    selector: dict[str, str],
    tmpl: Obj,
    *,
    replicas: int,
    revision: int,
    ready: int | None = None,
    updated: int | None = None,
    available: int | None = None,
    progressing: tuple[str, str, str, datetime] | None = None,
    labels: dict[str, str] | None = None,
    generation: int | None = None,
    change_cause: str | None = None,
) -> Obj:
    ready = replicas if ready is None else ready
    updated = replicas if updated is None else updated
    available = ready if available is None else available
    ann = {"deployment.kubernetes.io/revision": str(revision)}
    if change_cause:
        ann["kubernetes.io/change-cause"] = change_cause
    gen = generation or revision + 1
    prog = progressing or (
        "True",
        "NewReplicaSetAvailable",
        f'ReplicaSet "{name}" has successfully progressed.',
        created,
    )
    status: Obj = {
        "observedGeneration": gen,
        "replicas": max(replicas, updated),
        "updatedReplicas": updated,
        "readyReplicas": ready,
        "availableReplicas": available,
        "conditions": [
            {
                "type": "Available",
                "status": "True" if available >= max(1, replicas - 1) else "False",
                "reason": "MinimumReplicasAvailable"
                if available >= max(1, replicas - 1)
                else "MinimumReplicasUnavailable",
                "message": "Deployment has minimum availability."
                if available >= max(1, replicas - 1)
                else "Deployment does not have minimum availability.",
                "lastUpdateTime": ts(prog[3]),
                "lastTransitionTime": ts(created),
            },
            {
                "type": "Progressing",
                "status": prog[0],
                "reason": prog[1],
                "message": prog[2],
                "lastUpdateTime": ts(prog[3]),
                "lastTransitionTime": ts(prog[3]),
            },
        ],
    }
    if replicas - available > 0:
        status["unavailableReplicas"] = replicas - available
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta(name, ns, created, labels or selector, annotations=ann, generation=gen),
        "spec": {
            "replicas": replicas,
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600,
            "selector": {"matchLabels": selector},
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
            },
            "template": tmpl,
        },
        "status": status,
    }


def replicaset(
    dep: Obj,
    pod_hash: str,
    created: datetime,
    revision: int,
    tmpl: Obj,
    *,
    replicas: int,
    ready: int | None = None,
) -> Obj:
    ns, name = dep["metadata"]["namespace"], dep["metadata"]["name"]
    labels = {**tmpl["metadata"]["labels"], "pod-template-hash": pod_hash}
    t = json.loads(json.dumps(tmpl))
    t["metadata"]["labels"] = labels
    ready = replicas if ready is None else ready
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": meta(
            f"{name}-{pod_hash}",
            ns,
            created,
            labels,
            annotations={
                "deployment.kubernetes.io/revision": str(revision),
                "deployment.kubernetes.io/desired-replicas": str(dep["spec"]["replicas"]),
            },
            ownerReferences=[
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": name,
                    "uid": dep["metadata"]["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        ),
        "spec": {
            "replicas": replicas,
            "selector": {
                "matchLabels": {
                    **dep["spec"]["selector"]["matchLabels"],
                    "pod-template-hash": pod_hash,
                }
            },
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


def cstatus(
    c: Obj,
    started: datetime,
    *,
    ready: bool = True,
    restarts: int = 0,
    last: Obj | None = None,
    waiting: tuple[str, str] | None = None,
    image_id: str | None = None,
) -> Obj:
    st: Obj = {
        "name": c["name"],
        "image": c["image"],
        "imageID": image_id
        or f"{c['image'].split(':')[0]}@sha256:{h(c['image']):x}".ljust(40, "0"),
        "containerID": f"containerd://{h(c['name'], ts(started)):x}".ljust(40, "a"),
        "ready": ready,
        "started": waiting is None,
        "restartCount": restarts,
    }
    if waiting:
        st["state"] = {"waiting": {"reason": waiting[0], "message": waiting[1]}}
    else:
        st["state"] = {"running": {"startedAt": ts(started)}}
    st["lastState"] = {"terminated": last} if last else {}
    return st


def terminated(reason: str, code: int, started: datetime, finished: datetime) -> Obj:
    return {
        "reason": reason,
        "exitCode": code,
        "startedAt": ts(started),
        "finishedAt": ts(finished),
        "containerID": f"containerd://{h(reason, ts(started)):x}".ljust(40, "e"),
    }


def pod(
    rs: Obj | None,
    name: str,
    created: datetime,
    node_name: str | None,
    tmpl: Obj,
    statuses: list[Obj],
    *,
    ip: str,
    phase: str = "Running",
    ready: bool | None = None,
    owner: tuple[str, str, str] | None = None,
    pending: str | None = None,
) -> Obj:
    labels = dict(rs["metadata"]["labels"]) if rs else dict(tmpl["metadata"]["labels"])
    ns = rs["metadata"]["namespace"] if rs else owner[2] if owner else "default"
    refs = []
    if rs:
        refs = [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": rs["metadata"]["name"],
                "uid": rs["metadata"]["uid"],
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
    elif owner:
        refs = [
            {
                "apiVersion": "apps/v1",
                "kind": owner[0],
                "name": owner[1],
                "uid": f"{h(owner):012d}",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
    spec = json.loads(json.dumps(tmpl["spec"]))
    if node_name:
        spec["nodeName"] = node_name
    md = meta(name, ns, created, labels, ownerReferences=refs)
    if tmpl["metadata"].get("annotations"):
        md["annotations"] = dict(tmpl["metadata"]["annotations"])
    if ready is None:
        ready = all(s["ready"] for s in statuses) and phase == "Running"
    if pending:
        conds = [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": pending,
                "lastProbeTime": None,
                "lastTransitionTime": ts(created),
            }
        ]
        status: Obj = {"phase": "Pending", "conditions": conds, "qosClass": "Burstable"}
    else:
        started = created + timedelta(seconds=3)
        conds = [
            {"type": t, "status": s, "lastProbeTime": None, "lastTransitionTime": ts(started)}
            for t, s in (
                ("Initialized", "True"),
                ("Ready", "True" if ready else "False"),
                ("ContainersReady", "True" if ready else "False"),
                ("PodScheduled", "True"),
            )
        ]
        if not ready:
            for c in conds[1:3]:
                c["reason"] = "ContainersNotReady"
                c["message"] = (
                    "containers with unready status: ["
                    + " ".join(s["name"] for s in statuses if not s["ready"])
                    + "]"
                )
        status = {
            "phase": phase,
            "conditions": conds,
            "hostIP": f"10.128.{h(node_name) % 8}.{h(node_name) % 250 + 2}",
            "podIP": ip,
            "podIPs": [{"ip": ip}],
            "startTime": ts(created + timedelta(seconds=1)),
            "containerStatuses": statuses,
            "qosClass": "Burstable",
        }
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec, "status": status}


def service(
    ns: str,
    name: str,
    created: datetime,
    selector: dict[str, str],
    ports: list[tuple[str, int, Any]],
    *,
    cluster_ip: str,
    svc_type: str = "ClusterIP",
    extra_spec: Obj | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
) -> Obj:
    spec: Obj = {
        "type": svc_type,
        "clusterIP": cluster_ip,
        "clusterIPs": [cluster_ip],
        "selector": selector,
        "ports": [{"name": n, "port": p, "targetPort": t, "protocol": "TCP"} for n, p, t in ports],
        "sessionAffinity": "None",
        "ipFamilies": ["IPv4"],
        "ipFamilyPolicy": "SingleStack",
        "internalTrafficPolicy": "Cluster",
    }
    spec.update(extra_spec or {})
    md = meta(name, ns, created, labels or selector)
    if annotations:
        md["annotations"] = annotations
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": md,
        "spec": spec,
        "status": {"loadBalancer": {}},
    }


def endpoints(
    ns: str,
    name: str,
    created: datetime,
    pods: Iterable[Obj],
    ports: list[tuple[str, int]],
    labels: dict[str, str] | None = None,
) -> Obj:
    ready: list[Obj] = []
    not_ready: list[Obj] = []
    for p in pods:
        if p["status"].get("phase") != "Running":
            continue
        addr = {
            "ip": p["status"]["podIP"],
            "nodeName": p["spec"].get("nodeName"),
            "targetRef": {
                "kind": "Pod",
                "name": p["metadata"]["name"],
                "namespace": ns,
                "uid": p["metadata"]["uid"],
            },
        }
        ok = any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"]["conditions"])
        (ready if ok else not_ready).append(addr)
    subset: Obj = {"ports": [{"name": n, "port": p, "protocol": "TCP"} for n, p in ports]}
    if ready:
        subset["addresses"] = ready
    if not_ready:
        subset["notReadyAddresses"] = not_ready
    return {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": meta(name, ns, created, labels),
        "subsets": [subset] if (ready or not_ready) else [],
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
    warning: bool = False,
    component: str = "kubelet",
    host: str | None = None,
    seq: int = 0,
) -> Obj:
    src: Obj = {"component": component}
    if host:
        src["host"] = host
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": meta(
            f"{name}.{h((name, reason, message, seq)) % 16**16:016x}", ns or "default", first
        ),
        "involvedObject": {
            "kind": kind,
            "namespace": ns or None,
            "name": name,
            "apiVersion": "apps/v1"
            if kind in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet")
            else "v1",
        }
        if ns
        else {"kind": kind, "name": name, "apiVersion": "v1"},
        "reason": reason,
        "message": message,
        "type": "Warning" if warning else "Normal",
        "count": count,
        "firstTimestamp": ts(first),
        "lastTimestamp": ts(last),
        "source": src,
    }


class Metrics:
    """OpenMetrics families, each series written contiguously, samples in time order."""

    def __init__(self) -> None:
        self.families: dict[
            str, tuple[str, str, list[tuple[str, dict[str, str], list[tuple[int, float]]]]]
        ] = {}

    def _add(
        self,
        family: str,
        kind: str,
        help_: str,
        sample: str,
        labels: dict[str, str],
        points: list[tuple[int, float]],
    ) -> None:
        self.families.setdefault(family, (kind, help_, []))[2].append((sample, labels, points))

    def gauge(
        self, name: str, labels: dict[str, str], points: list[tuple[int, float]], help_: str = ""
    ) -> None:
        self._add(name, "gauge", help_ or name.replace("_", " "), name, labels, points)

    def untyped(
        self, name: str, labels: dict[str, str], points: list[tuple[int, float]], help_: str = ""
    ) -> None:
        """A counter as an exporter names it without `_total` (OpenMetrics calls that unknown)."""
        self._add(name, "unknown", help_ or name.replace("_", " "), name, labels, points)

    def counter(
        self, name: str, labels: dict[str, str], points: list[tuple[int, float]], help_: str = ""
    ) -> None:
        family = name[: -len("_total")]
        self._add(family, "counter", help_ or family.replace("_", " "), name, labels, points)

    def histogram(
        self,
        base: str,
        labels: dict[str, str],
        times: list[int],
        counts: list[float],
        latency: Callable[..., float],
        buckets: tuple[float, ...],
    ) -> None:
        """counts: requests per step; latency(i): typical latency at step i (log-normal-ish
        spread)."""
        cum = {le: 0.0 for le in buckets}
        total = s = 0.0
        series: dict[float, list[tuple[int, float]]] = {le: [] for le in buckets}
        inf, sums, cnts = [], [], []
        for i, (t, raw) in enumerate(zip(times, counts, strict=True)):
            n = float(round(raw))
            med = latency(i)
            for le in buckets:
                # share of requests under le for a log-normal with sigma ~0.6 around med
                z = (math.log(le) - math.log(med)) / 0.6
                share = 0.5 * (1 + math.erf(z / math.sqrt(2)))
                cum[le] += round(n * share)
            total += n
            s += n * med * 1.2
            for le in buckets:
                series[le].append((t, cum[le]))
            inf.append((t, total))
            sums.append((t, round(s, 3)))
            cnts.append((t, total))
        for le in buckets:
            self._add(
                base,
                "histogram",
                base.replace("_", " "),
                base + "_bucket",
                {**labels, "le": repr(le)},
                series[le],
            )
        self._add(
            base,
            "histogram",
            base.replace("_", " "),
            base + "_bucket",
            {**labels, "le": "+Inf"},
            inf,
        )
        self._add(base, "histogram", base.replace("_", " "), base + "_sum", labels, sums)
        self._add(base, "histogram", base.replace("_", " "), base + "_count", labels, cnts)

    def text(self) -> str:
        out = []
        for family, (kind, help_, rows) in self.families.items():
            out.append(f"# TYPE {family} {kind}")
            out.append(f"# HELP {family} {help_}")
            for sample, labels, points in rows:
                lab = ",".join(f'{k}="{v}"' for k, v in labels.items())
                for t, v in points:
                    val = repr(float(v)) if not float(v).is_integer() else str(int(v))
                    out.append(f"{sample}{{{lab}}} {val} {t}")
        out.append("# EOF")
        return "\n".join(out) + "\n"


def cumulate(rates: Iterable[float], step: int, start: float = 0.0) -> list[float]:
    total, out = start, []
    for r in rates:
        total += r * step
        out.append(round(total, 3))
    return out


def logdoc(
    moment: datetime,
    level: str,
    message: str,
    service: str,
    ns: str,
    pod_name: str,
    container_name: str,
    **extra: Any,
) -> Obj:
    doc: Obj = {
        "@timestamp": ts_ms(moment),
        "message": message,
        "log.level": level,
        "service.name": service,
        "kubernetes.namespace": ns,
        "kubernetes.pod.name": pod_name,
        "kubernetes.container.name": container_name,
    }
    doc.update(extra)
    return doc


STATUS_TIMES = {
    "lastTransitionTime",
    "lastUpdateTime",
    "startTime",
    "lastHeartbeatTime",
    "startedAt",
    "finishedAt",
    "lastScaleTime",
}


def kit_clamp_time(value: Any, floor: datetime) -> Any:
    if isinstance(value, str) and value[:2] == "20" and at(value) < floor:
        return ts(floor)
    return value


class Scenario:
    """One scenario folder being written."""

    def __init__(self, sid: str, title: str, now: datetime, report: str, truth: Obj) -> None:
        self.sid, self.title, self.now, self.report, self.truth = sid, title, now, report, truth
        self.objects: list[Obj] = []
        self.pod_logs: dict[tuple[str, str, str, bool], list[str]] = {}
        self.docs: list[Obj] = []
        self.metrics = Metrics()

    def add(self, *objs: Obj) -> None:
        self.objects.extend(objs)

    def log(
        self, ns: str, pod_name: str, container_name: str, lines: list[str], previous: bool = False
    ) -> None:
        self.pod_logs.setdefault((ns, pod_name, container_name, previous), []).extend(lines)

    def _clamp(self, value: Any, floor: datetime, in_status: bool) -> Any:
        """Status times older than the week before now are clamped into it: the format wants
        every status time in that window, while objects themselves may be older."""
        if isinstance(value, dict):
            return {
                k: (
                    kit_clamp_time(v, floor)
                    if in_status and k in STATUS_TIMES
                    else self._clamp(v, floor, in_status or k == "status")
                )
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [self._clamp(v, floor, in_status) for v in value]
        return value

    def write(self, root: Path) -> None:
        floor = self.now - timedelta(days=6, hours=20)
        self.objects = [self._clamp(o, floor, False) for o in self.objects]
        folder = root / self.sid
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        doc = {
            "id": self.sid,
            "title": self.title,
            "now": ts(self.now),
            "report": self.report,
            "truth": self.truth,
        }
        (folder / "scenario.yaml").write_text(yaml.safe_dump(doc, sort_keys=False, width=100))
        (folder / "cluster.yaml").write_text(
            yaml.safe_dump_all(self.objects, sort_keys=False, width=120)
        )
        for (ns, p, c, prev), lines in self.pod_logs.items():
            path = folder / "pod-logs" / ns / p / (c + (".previous.log" if prev else ".log"))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("\n".join(lines) + "\n")
        self.docs = [d for d in self.docs if at(d["@timestamp"]) <= self.now]
        if self.docs:
            self.docs.sort(key=lambda d: d["@timestamp"])
            (folder / "logs.ndjson").write_text("".join(json.dumps(d) + "\n" for d in self.docs))
        if self.metrics.families:
            (folder / "metrics.om").write_text(self.metrics.text())
