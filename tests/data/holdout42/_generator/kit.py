# ruff: noqa: E501 - story data: log lines and messages are kept whole, as the tools print them
"""Building blocks for the holdout42 scenarios: Kubernetes objects as `kubectl get -o yaml`
prints them, log documents, OpenMetrics series, and the writer that lays a scenario out on
disk. Kept apart from the stories so that each story reads as the incident it tells."""

from __future__ import annotations

import hashlib
import json
import random
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

Obj = dict[str, Any]


def parse(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_ms(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + \
        f"{moment.microsecond // 1000:03d}Z"


def uid(seed: str) -> str:
    digest = hashlib.sha1(seed.encode()).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


def suffix(seed: str, length: int = 5) -> str:
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    digest = hashlib.sha1(seed.encode()).digest()
    return "".join(alphabet[b % len(alphabet)] for b in digest[:length])


def rs_hash(seed: str) -> str:
    return suffix("rs" + seed, 10)[:random.Random(seed).choice([9, 10])]


def metadata(name: str, namespace: str | None, created: datetime, *,
             labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None,
             owner: tuple[str, str] | None = None, generation: int | None = None) -> Obj:
    meta: Obj = {"name": name, "creationTimestamp": iso(created), "uid": uid(f"{namespace}/{name}"),
                 "resourceVersion": str(int(hashlib.sha1(name.encode()).hexdigest()[:6], 16))}
    if namespace is not None:
        meta["namespace"] = namespace
    if labels:
        meta["labels"] = dict(labels)
    if annotations:
        meta["annotations"] = dict(annotations)
    if owner:
        kind, owner_name = owner
        meta["ownerReferences"] = [{
            "apiVersion": "apps/v1" if kind in ("ReplicaSet", "Deployment", "StatefulSet", "DaemonSet")
            else "batch/v1", "kind": kind, "name": owner_name, "uid": uid(f"{namespace}/{owner_name}"),
            "controller": True, "blockOwnerDeletion": True}]
    if generation is not None:
        meta["generation"] = generation
    return meta


def namespace(name: str, created: datetime, labels: dict[str, str] | None = None) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": metadata(name, None, created,
                                 labels={"kubernetes.io/metadata.name": name, **(labels or {})}),
            "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}


def node(name: str, created: datetime, now: datetime, *, cpu: str = "4", memory: str = "16Gi",
         allocatable_cpu: str = "3920m", allocatable_memory: str = "14Gi",
         labels: dict[str, str] | None = None, ready: bool = True, pressure: str | None = None,
         ip: str = "10.0.0.10") -> Obj:
    heartbeat = iso(now - timedelta(seconds=17))
    conditions = []
    for kind, reason in (("MemoryPressure", "KubeletHasSufficientMemory"),
                         ("DiskPressure", "KubeletHasNoDiskPressure"),
                         ("PIDPressure", "KubeletHasSufficientPID")):
        bad = pressure == kind
        conditions.append({"type": kind, "status": "True" if bad else "False",
                           "reason": reason.replace("Sufficient", "Insufficient") if bad else reason,
                           "lastHeartbeatTime": heartbeat, "lastTransitionTime": iso(created)})
    conditions.append({"type": "Ready", "status": "True" if ready else "Unknown",
                       "reason": "KubeletReady" if ready else "NodeStatusUnknown",
                       "message": "kubelet is posting ready status" if ready
                       else "Kubelet stopped posting node status.",
                       "lastHeartbeatTime": heartbeat, "lastTransitionTime": iso(created)})
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": metadata(name, None, created, labels={
                "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64", **(labels or {})}),
            "spec": {"providerID": f"aws:///eu-west-1a/i-0{suffix(name, 8)}"},
            "status": {"capacity": {"cpu": cpu, "memory": memory, "pods": "58",
                                    "ephemeral-storage": "104845292Ki"},
                       "allocatable": {"cpu": allocatable_cpu, "memory": allocatable_memory,
                                       "pods": "58", "ephemeral-storage": "95551679124"},
                       "conditions": conditions,
                       "addresses": [{"type": "InternalIP", "address": ip},
                                     {"type": "Hostname", "address": name}],
                       "nodeInfo": {"kubeletVersion": "v1.29.8", "containerRuntimeVersion":
                                    "containerd://1.7.20", "osImage": "Bottlerocket OS 1.21.1",
                                    "kernelVersion": "6.1.102", "architecture": "amd64",
                                    "operatingSystem": "linux"}}}


def container(name: str, image: str, *, ports: Iterable[int] = (), requests: dict[str, str] | None = None,
              limits: dict[str, str] | None = None, env: list[Obj] | None = None,
              mounts: list[Obj] | None = None, readiness: Obj | None = None,
              liveness: Obj | None = None, command: list[str] | None = None,
              args: list[str] | None = None) -> Obj:
    spec: Obj = {"name": name, "image": image, "imagePullPolicy": "IfNotPresent"}
    if command:
        spec["command"] = command
    if args:
        spec["args"] = args
    if ports:
        spec["ports"] = [{"containerPort": p, "protocol": "TCP", "name": f"p{p}"} for p in ports]
    if env:
        spec["env"] = env
    res: Obj = {}
    if requests:
        res["requests"] = requests
    if limits:
        res["limits"] = limits
    spec["resources"] = res
    if mounts:
        spec["volumeMounts"] = mounts
    if readiness:
        spec["readinessProbe"] = readiness
    if liveness:
        spec["livenessProbe"] = liveness
    spec["terminationMessagePath"] = "/dev/termination-log"
    spec["terminationMessagePolicy"] = "File"
    return spec


def http_probe(path: str, port: int, *, delay: int = 5, period: int = 10, failures: int = 3) -> Obj:
    return {"httpGet": {"path": path, "port": port, "scheme": "HTTP"}, "initialDelaySeconds": delay,
            "periodSeconds": period, "timeoutSeconds": 2, "successThreshold": 1,
            "failureThreshold": failures}


def env(**values: str) -> list[Obj]:
    return [{"name": k, "value": v} for k, v in values.items()]


def template(labels: dict[str, str], containers: list[Obj], *, volumes: list[Obj] | None = None,
             annotations: dict[str, str] | None = None, service_account: str | None = None,
             init: list[Obj] | None = None, node_selector: dict[str, str] | None = None) -> Obj:
    spec: Obj = {"containers": containers, "restartPolicy": "Always", "dnsPolicy": "ClusterFirst",
                 "terminationGracePeriodSeconds": 30, "schedulerName": "default-scheduler"}
    if init:
        spec["initContainers"] = init
    if volumes:
        spec["volumes"] = volumes
    if service_account:
        spec["serviceAccountName"] = service_account
    if node_selector:
        spec["nodeSelector"] = node_selector
    meta: Obj = {"labels": dict(labels)}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {"metadata": meta, "spec": spec}


def deployment(ns: str, name: str, created: datetime, tmpl: Obj, *, replicas: int, revision: int,
               ready: int | None = None, updated: int | None = None, available: int | None = None,
               unavailable: int = 0, progressing: tuple[str, str, str] | None = None,
               changed: datetime | None = None, labels: dict[str, str] | None = None) -> Obj:
    ready = replicas if ready is None else ready
    updated = replicas if updated is None else updated
    available = ready if available is None else available
    changed = changed or created
    status_p, reason_p, message_p = progressing or (
        "True", "NewReplicaSetAvailable", f'ReplicaSet "{name}-{rs_hash(f"{ns}/{name}/{revision}")}" '
        "has successfully progressed.")
    status: Obj = {"observedGeneration": revision + 1, "replicas": max(replicas, updated),
                   "updatedReplicas": updated, "readyReplicas": ready,
                   "availableReplicas": available,
                   "conditions": [
                       {"type": "Available", "status": "True" if available >= max(1, replicas - 1) else "False",
                        "reason": "MinimumReplicasAvailable" if available >= max(1, replicas - 1)
                        else "MinimumReplicasUnavailable",
                        "message": "Deployment has minimum availability." if available >= max(1, replicas - 1)
                        else "Deployment does not have minimum availability.",
                        "lastUpdateTime": iso(changed), "lastTransitionTime": iso(changed)},
                       {"type": "Progressing", "status": status_p, "reason": reason_p,
                        "message": message_p, "lastUpdateTime": iso(changed),
                        "lastTransitionTime": iso(changed)}]}
    if unavailable:
        status["unavailableReplicas"] = unavailable
    selector = {k: v for k, v in tmpl["metadata"]["labels"].items() if k in ("app", "app.kubernetes.io/name", "component")}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": metadata(name, ns, created, labels=labels or {"app": name},
                                 annotations={"deployment.kubernetes.io/revision": str(revision)},
                                 generation=revision + 1),
            "spec": {"replicas": replicas, "revisionHistoryLimit": 10,
                     "selector": {"matchLabels": selector},
                     "strategy": {"type": "RollingUpdate",
                                  "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
                     "template": tmpl},
            "status": status}


def replicaset(ns: str, deploy: str, revision: int, created: datetime, tmpl: Obj, *, replicas: int,
               ready: int | None = None) -> tuple[Obj, str]:
    h = rs_hash(f"{ns}/{deploy}/{revision}")
    name = f"{deploy}-{h}"
    ready = replicas if ready is None else ready
    t = json.loads(json.dumps(tmpl))
    t["metadata"]["labels"]["pod-template-hash"] = h
    selector = {k: v for k, v in t["metadata"]["labels"].items() if k in ("app", "app.kubernetes.io/name", "component", "pod-template-hash")}
    obj = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
           "metadata": metadata(name, ns, created, labels=t["metadata"]["labels"],
                                annotations={"deployment.kubernetes.io/revision": str(revision),
                                             "deployment.kubernetes.io/desired-replicas": str(replicas)},
                                owner=("Deployment", deploy), generation=1),
           "spec": {"replicas": replicas, "selector": {"matchLabels": selector}, "template": t},
           "status": {"replicas": replicas, "readyReplicas": ready, "availableReplicas": ready,
                      "fullyLabeledReplicas": replicas, "observedGeneration": 1}}
    if replicas == 0:
        obj["status"] = {"replicas": 0, "observedGeneration": 2}
    return obj, h


def running(name: str, started: datetime, *, restarts: int = 0, ready: bool = True,
            last: Obj | None = None, image: str = "", image_id: str = "") -> Obj:
    status: Obj = {"name": name, "ready": ready, "started": True, "restartCount": restarts,
                   "image": image, "imageID": image_id or f"{image.split(':')[0]}@sha256:{hashlib.sha256(image.encode()).hexdigest()}",
                   "containerID": f"containerd://{hashlib.sha256((name + iso(started)).encode()).hexdigest()}",
                   "state": {"running": {"startedAt": iso(started)}}}
    if last:
        status["lastState"] = {"terminated": last}
    return status


def waiting(name: str, reason: str, message: str, *, restarts: int, last: Obj | None = None,
            image: str = "") -> Obj:
    status: Obj = {"name": name, "ready": False, "started": False, "restartCount": restarts,
                   "image": image, "imageID": f"{image.split(':')[0]}@sha256:{hashlib.sha256(image.encode()).hexdigest()}",
                   "state": {"waiting": {"reason": reason, "message": message}}}
    if last:
        status["lastState"] = {"terminated": last}
        status["containerID"] = last.get("containerID", "")
    return status


def terminated(reason: str, code: int, started: datetime, finished: datetime, seed: str = "") -> Obj:
    return {"reason": reason, "exitCode": code, "startedAt": iso(started), "finishedAt": iso(finished),
            "containerID": f"containerd://{hashlib.sha256((seed + iso(started)).encode()).hexdigest()}"}


def pod(ns: str, name: str, created: datetime, tmpl: Obj, *, owner: tuple[str, str] | None,
        node_name: str | None, statuses: list[Obj] | None, ip: str | None = None,
        phase: str = "Running", pod_conditions: list[Obj] | None = None,
        extra_labels: dict[str, str] | None = None, init_statuses: list[Obj] | None = None,
        host_ip: str = "10.0.0.10") -> Obj:
    t = json.loads(json.dumps(tmpl))
    spec = t["spec"]
    if node_name:
        spec["nodeName"] = node_name
    labels = {**t["metadata"]["labels"], **(extra_labels or {})}
    if owner and owner[0] == "ReplicaSet":
        labels["pod-template-hash"] = owner[1].rsplit("-", 1)[1]
    meta = metadata(name, ns, created, labels=labels, annotations=t["metadata"].get("annotations"),
                    owner=owner)
    status: Obj = {"phase": phase, "qosClass": "Burstable"}
    if phase == "Pending" and not node_name:
        status["conditions"] = pod_conditions or []
    else:
        all_ready = bool(statuses) and all(s.get("ready") for s in statuses or [])
        status["conditions"] = pod_conditions or [
            {"type": "Initialized", "status": "True", "lastTransitionTime": iso(created)},
            {"type": "Ready", "status": "True" if all_ready else "False",
             "lastTransitionTime": iso(created + timedelta(seconds=20)),
             **({} if all_ready else {"reason": "ContainersNotReady",
                                       "message": "containers with unready status: [" + " ".join(
                                           s["name"] for s in statuses or [] if not s.get("ready")) + "]"})},
            {"type": "ContainersReady", "status": "True" if all_ready else "False",
             "lastTransitionTime": iso(created + timedelta(seconds=20))},
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": iso(created)}]
        status["hostIP"] = host_ip
        status["podIP"] = ip or f"10.4.{int(hashlib.sha1(name.encode()).hexdigest()[:2], 16) % 32}.{int(hashlib.sha1(name.encode()).hexdigest()[2:4], 16) % 250 + 2}"
        status["startTime"] = iso(created)
        status["containerStatuses"] = statuses or []
        if init_statuses:
            status["initContainerStatuses"] = init_statuses
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def service(ns: str, name: str, created: datetime, selector: dict[str, str] | None,
            ports: list[tuple[str, int, int | str]], *, cluster_ip: str = "172.20.0.10",
            external_name: str | None = None) -> Obj:
    spec: Obj
    if external_name:
        spec = {"type": "ExternalName", "externalName": external_name,
                "ports": [{"name": n, "port": p, "protocol": "TCP", "targetPort": t} for n, p, t in ports]}
    else:
        spec = {"type": "ClusterIP", "clusterIP": cluster_ip, "clusterIPs": [cluster_ip],
                "selector": selector, "sessionAffinity": "None",
                "ports": [{"name": n, "port": p, "protocol": "TCP", "targetPort": t} for n, p, t in ports]}
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": metadata(name, ns, created, labels={"app": name}),
            "spec": spec, "status": {"loadBalancer": {}}}


def endpoints(ns: str, name: str, created: datetime, pods: list[Obj],
              ports: list[tuple[str, int]]) -> Obj:
    ready = [p for p in pods if p["status"].get("containerStatuses")
             and all(s.get("ready") for s in p["status"]["containerStatuses"])]
    unready = [p for p in pods if p not in ready and p["status"].get("podIP")]
    subset: Obj = {"ports": [{"name": n, "port": p, "protocol": "TCP"} for n, p in ports]}

    def address(p: Obj) -> Obj:
        return {"ip": p["status"]["podIP"], "nodeName": p["spec"].get("nodeName"),
                "targetRef": {"kind": "Pod", "name": p["metadata"]["name"],
                              "namespace": ns, "uid": p["metadata"]["uid"]}}
    if ready:
        subset["addresses"] = [address(p) for p in ready]
    if unready:
        subset["notReadyAddresses"] = [address(p) for p in unready]
    return {"apiVersion": "v1", "kind": "Endpoints",
            "metadata": metadata(name, ns, created, labels={"app": name}),
            "subsets": [subset] if (ready or unready) else []}


def configmap(ns: str, name: str, created: datetime, data: dict[str, str],
              labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": metadata(name, ns, created, labels=labels, annotations=annotations),
            "data": data}


def event(ns: str, kind: str, name: str, reason: str, message: str, first: datetime,
          last: datetime, *, count: int = 1, type_: str = "Normal", source: str = "kubelet",
          host: str | None = None, api: str | None = None) -> Obj:
    api_version = api or ("v1" if kind in ("Pod", "Node", "PersistentVolumeClaim", "Service")
                          else "autoscaling/v2" if kind == "HorizontalPodAutoscaler" else "apps/v1")
    ev_name = f"{name}.{hashlib.sha1((reason + message + iso(first)).encode()).hexdigest()[:16]}"
    src: Obj = {"component": source}
    if host:
        src["host"] = host
    return {"apiVersion": "v1", "kind": "Event",
            "metadata": metadata(ev_name, ns, first),
            "involvedObject": {"kind": kind, "name": name, "apiVersion": api_version,
                               "uid": uid(f"None/{name}")} if kind == "Node" else
                              {"kind": kind, "namespace": ns, "name": name, "apiVersion": api_version,
                               "uid": uid(f"{ns}/{name}")},
            "reason": reason, "message": message, "type": type_, "count": count,
            "firstTimestamp": iso(first), "lastTimestamp": iso(last), "source": src,
            "reportingComponent": source, "reportingInstance": host or ""}


def log_doc(at: datetime, message: str, level: str, service_name: str, ns: str, pod_name: str,
            container_name: str, **extra: Any) -> Obj:
    doc: Obj = {"@timestamp": iso_ms(at), "message": message, "log.level": level,
                "service.name": service_name, "kubernetes.namespace": ns,
                "kubernetes.pod.name": pod_name, "kubernetes.container.name": container_name}
    doc.update({k.replace("__", "."): v for k, v in extra.items()})
    return doc


@dataclass
class Series:
    """One metric family: samples per label set, in time order."""

    name: str
    kind: str  # gauge or counter
    help: str
    samples: dict[tuple[tuple[str, str], ...], list[tuple[float, float]]] = field(default_factory=dict)

    def add(self, labels: dict[str, str], at: datetime, value: float) -> None:
        key = tuple(sorted(labels.items()))
        self.samples.setdefault(key, []).append((at.timestamp(), value))

    def text(self) -> str:
        family = self.name[:-6] if self.kind == "counter" and self.name.endswith("_total") else self.name
        lines = [f"# HELP {family} {self.help}", f"# TYPE {family} {self.kind}"]
        for key, points in self.samples.items():
            label_text = ",".join(f'{k}="{v}"' for k, v in key)
            for ts, value in sorted(points):
                shown = f"{value:.6g}" if abs(value) < 1e6 or value != int(value) else str(int(value))
                if value == int(value) and abs(value) >= 1e6:
                    shown = str(int(value))
                lines.append(f"{self.name}{{{label_text}}} {shown} {int(ts)}")
        return "\n".join(lines)


@dataclass
class Histogram:
    """A histogram family: cumulative buckets, count and sum per label set."""

    name: str
    help: str
    rows: dict[tuple[tuple[str, str], ...], list[tuple[float, dict[str, float], float, float]]] = \
        field(default_factory=dict)

    def add(self, labels: dict[str, str], at: datetime, buckets: dict[str, float], count: float,
            total: float) -> None:
        self.rows.setdefault(tuple(sorted(labels.items())), []).append((at.timestamp(), buckets, count, total))

    def text(self) -> str:
        lines = [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} histogram"]
        for key, points in self.rows.items():
            base = ",".join(f'{k}="{v}"' for k, v in key)
            for ts, buckets, count, total in sorted(points, key=lambda p: p[0]):
                for edge, value in buckets.items():
                    lines.append(f'{self.name}_bucket{{{base},le="{edge}"}} {int(value)} {int(ts)}')
                lines.append(f"{self.name}_count{{{base}}} {int(count)} {int(ts)}")
                lines.append(f"{self.name}_sum{{{base}}} {total} {int(ts)}")
        return "\n".join(lines)


def steps(start: datetime, end: datetime, every: timedelta) -> list[datetime]:
    out, at = [], start
    while at <= end:
        out.append(at)
        at += every
    return out


def counter_walk(series: Series, labels: dict[str, str], times: list[datetime],
                 rate: Callable[[datetime], float], *, start: float = 0.0,
                 resets: Iterable[datetime] = ()) -> None:
    """A counter that rises by rate(t) per second, back to zero at each reset."""
    reset_at = sorted(resets)
    value, prev = start, None
    for at in times:
        if prev is not None:
            if reset_at and prev < reset_at[0] <= at:
                value = 0.0
                reset_at.pop(0)
            else:
                value += max(0.0, rate(at)) * (at - prev).total_seconds()
        series.add(labels, at, round(value, 3))
        prev = at


@dataclass
class Story:
    id: str
    title: str
    now: datetime
    report: str
    truth: Obj
    objects: list[Obj] = field(default_factory=list)
    pod_logs: dict[tuple[str, str, str, bool], list[str]] = field(default_factory=dict)
    docs: list[Obj] = field(default_factory=list)
    metrics: list[Series | Histogram] = field(default_factory=list)
    interventions: list[Obj] = field(default_factory=list)

    def log(self, ns: str, pod_name: str, container_name: str, lines: list[str],
            previous: bool = False) -> None:
        self.pod_logs[(ns, pod_name, container_name, previous)] = lines

    def clamp(self) -> None:
        """Status times (and pod starts) older than the format's week are moved to six days
        before now: a node's Ready transition or a long-lived pod then reads as a recent
        node rotation, which is what a real week-old cluster shows anyway."""
        floor = self.now - timedelta(days=6, hours=3)
        keys = {"lastTransitionTime", "lastUpdateTime", "startTime", "startedAt",
                "lastHeartbeatTime", "lastScheduleTime", "lastSuccessfulTime"}

        def walk(node: Any) -> None:
            if isinstance(node, dict):
                for k, v in node.items():
                    if k in keys and isinstance(v, str) and parse(v) < floor:
                        node[k] = iso(floor)
                    else:
                        walk(v)
            elif isinstance(node, list):
                for v in node:
                    walk(v)
        for obj in self.objects:
            walk(obj.get("status"))
            if obj["kind"] == "Pod" and parse(obj["metadata"]["creationTimestamp"]) < floor:
                obj["metadata"]["creationTimestamp"] = iso(floor)

    def write(self, root: Path) -> None:
        self.clamp()
        folder = root / self.id
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        scenario: Obj = {"id": self.id, "title": self.title, "now": iso(self.now),
                         "report": self.report, "truth": self.truth}
        if self.interventions:
            scenario["interventions"] = self.interventions
        (folder / "scenario.yaml").write_text(yaml.safe_dump(scenario, sort_keys=False, width=100))
        (folder / "cluster.yaml").write_text(
            yaml.safe_dump_all(self.objects, sort_keys=False, width=120))
        for (ns, pod_name, cont, previous), lines in self.pod_logs.items():
            path = folder / "pod-logs" / ns / pod_name / f"{cont}{'.previous' if previous else ''}.log"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("\n".join(lines) + "\n")
        if self.docs:
            docs = sorted(self.docs, key=lambda d: d["@timestamp"])
            (folder / "logs.ndjson").write_text("".join(json.dumps(d) + "\n" for d in docs))
        if self.metrics:
            (folder / "metrics.om").write_text(
                "\n".join(s.text() for s in self.metrics) + "\n# EOF\n")


def app(story: Story, ns: str, name: str, image: str, nodes: list[str], *, replicas: int = 2,
        revision: int = 3, created: datetime | None = None, rolled: timedelta = timedelta(days=4),
        port: int | None = 8080, requests: dict[str, str] | None = None,
        limits: dict[str, str] | None = None, env_vars: dict[str, str] | None = None,
        labels: dict[str, str] | None = None, service_port: int | None = 80,
        mounts: list[Obj] | None = None, volumes: list[Obj] | None = None,
        extra_containers: list[Obj] | None = None) -> tuple[Obj, Obj, list[Obj]]:
    """A healthy Deployment with its ReplicaSet, Running pods, Service and Endpoints."""
    created = created or story.now - timedelta(days=120)
    started = story.now - rolled
    labels = labels or {"app": name}
    main = container(name, image, ports=[port] if port else [], requests=requests or {"cpu": "100m", "memory": "128Mi"},
                     limits=limits or {"memory": "256Mi"}, env=env(**(env_vars or {})) or None,
                     mounts=mounts, readiness=http_probe("/healthz", port) if port else None)
    tmpl = template(labels, [main] + (extra_containers or []), volumes=volumes)
    dep = deployment(ns, name, created, tmpl, replicas=replicas, revision=revision, changed=started)
    rs, h = replicaset(ns, name, revision, started, tmpl, replicas=replicas)
    story.objects += [dep, rs]
    pods = []
    for i in range(replicas):
        pname = f"{name}-{h}-{suffix(f'{ns}{name}{i}')}"
        statuses = [running(c["name"], started + timedelta(seconds=5 + i), image=c["image"])
                    for c in tmpl["spec"]["containers"]]
        p = pod(ns, pname, started + timedelta(seconds=i), tmpl, owner=("ReplicaSet", rs["metadata"]["name"]),
                node_name=nodes[i % len(nodes)], statuses=statuses)
        pods.append(p)
        story.objects.append(p)
    if port and service_port:
        octets = hashlib.sha1(f"{ns}/{name}".encode()).digest()
        story.objects.append(service(ns, name, created, {"app": labels["app"]}, [("http", service_port, port)],
                                     cluster_ip=f"172.20.{octets[0] % 250}.{octets[1] % 250 + 2}"))
        story.objects.append(endpoints(ns, name, created, pods, [("http", port)]))
    return dep, rs, pods


def chatter(story: Story, ns: str, service_name: str, pods: list[Obj], container_name: str,
            make: Callable[[datetime, random.Random], tuple[str, str]], *, span: timedelta = timedelta(hours=2),
            every: tuple[int, int] = (30, 90), seed: int = 0, to_store: int = 2,
            fmt: Callable[[datetime, str, str], str] | None = None) -> None:
    """Routine output for bystander pods: pod logs, and one line in `to_store` to the log store."""
    rnd = random.Random(seed)
    for p in pods:
        lines = []
        at = story.now - span
        k = 0
        while at < story.now:
            level, text = make(at, rnd)
            lines.append(fmt(at, level, text) if fmt else f"{iso_ms(at)} {level.upper():5} {text}")
            if k % to_store == 0:
                story.docs.append(log_doc(at, text, level, service_name, ns, p["metadata"]["name"], container_name))
            k += 1
            at += timedelta(seconds=rnd.randint(*every))
        story.log(ns, p["metadata"]["name"], container_name, lines)
