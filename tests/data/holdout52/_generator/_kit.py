"""Shared builders for the holdout52 scenarios: Kubernetes objects, logs and metrics."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

Obj = dict[str, Any]
STEP = 60
HOUR = 3600
_ALNUM = "bcdfghjklmnpqrstvwxz2456789"
LAT_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


def parse(s: str) -> datetime:
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_ms(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def fmt(v: float) -> str:
    if abs(v - round(v)) < 1e-9 and abs(v) < 1e15:
        return str(round(v))
    return repr(round(v, 6))


def _esc(v: str) -> str:
    return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


class Metrics:
    """OpenMetrics families, rendered with an explicit timestamp on every sample."""

    def __init__(self) -> None:
        self.fams: dict[str, tuple[str, str, list[str]]] = {}

    def _lines(self, name: str, typ: str, help_: str) -> list[str]:
        if name not in self.fams:
            self.fams[name] = (typ, help_, [])
        return self.fams[name][2]

    @staticmethod
    def _lab(labels: dict[str, str]) -> str:
        if not labels:
            return ""
        return "{" + ",".join(f'{k}="{_esc(str(v))}"' for k, v in labels.items()) + "}"

    def gauge(self, name: str, help_: str, labels: dict[str, str],
              points: Sequence[tuple[int, float]]) -> None:
        out = self._lines(name, "gauge", help_)
        lab = self._lab(labels)
        out.extend(f"{name}{lab} {fmt(v)} {t}" for t, v in points)

    def counter(self, name: str, help_: str, labels: dict[str, str],
                points: Sequence[tuple[int, float]]) -> None:
        out = self._lines(name, "counter", help_)
        lab = self._lab(labels)
        out.extend(f"{name}_total{lab} {fmt(v)} {t}" for t, v in points)

    def histogram(self, name: str, help_: str, labels: dict[str, str],
                  times: Sequence[int], rates: Sequence[float], medians: Sequence[float],
                  sigma: float = 0.6, buckets: Sequence[float] = LAT_BUCKETS) -> None:
        """Cumulative histogram from a request rate and a log-normal latency per step."""
        out = self._lines(name, "histogram", help_)
        acc = [0.0] * (len(buckets) + 1)
        total_sum = 0.0
        for i, t in enumerate(times):
            if i > 0:
                n = rates[i] * STEP
                mu = math.log(medians[i])
                for j, le in enumerate(buckets):
                    z = (math.log(le) - mu) / (sigma * math.sqrt(2))
                    acc[j] += n * 0.5 * (1 + math.erf(z))
                acc[-1] += n
                total_sum += n * medians[i] * math.exp(sigma * sigma / 2)
            for j, le in enumerate(buckets):
                lab = self._lab({**labels, "le": repr(float(le))})
                out.append(f"{name}_bucket{lab} {round(acc[j])} {t}")
            lab = self._lab({**labels, "le": "+Inf"})
            out.append(f"{name}_bucket{lab} {round(acc[-1])} {t}")
            out.append(f"{name}_count{self._lab(labels)} {round(acc[-1])} {t}")
            out.append(f"{name}_sum{self._lab(labels)} {fmt(total_sum)} {t}")

    def render(self) -> str:
        parts: list[str] = []
        for name, (typ, help_, lines) in self.fams.items():
            parts.append(f"# HELP {name} {help_}")
            parts.append(f"# TYPE {name} {typ}")
            parts.extend(lines)
        parts.append("# EOF")
        return "\n".join(parts) + "\n"


@dataclass
class App:
    ns: str
    name: str
    deploy: Obj
    rs: Obj
    pods: list[Obj]
    service: Obj | None = None
    endpoints: Obj | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def pod_names(self) -> list[str]:
        return [p["metadata"]["name"] for p in self.pods]


class Story:
    """One scenario being built: objects, log documents, pod logs and metrics."""

    def __init__(self, sid: str, now: str, seed: int) -> None:
        self.sid = sid
        self.now_s = now
        self.now = parse(now)
        self.rng = random.Random(seed)
        self.objs: list[Obj] = []
        self.logs: list[Obj] = []
        self.pod_logs: dict[tuple[str, str, str, bool], list[tuple[datetime, str]]] = {}
        self.metrics = Metrics()
        self.node_index: dict[str, int] = {}
        self._ips: set[str] = set()
        self.keep_logs: set[tuple[str, str]] = set()

    def keep_pod_logs(self, *pods: Obj) -> None:
        """Write pod-logs files for these pods (the others are only in logs.ndjson)."""
        for p in pods:
            self.keep_logs.add((p["metadata"]["namespace"], p["metadata"]["name"]))

    # time -------------------------------------------------------------
    def ago(self, minutes: float = 0, hours: float = 0, days: float = 0,
            seconds: float = 0) -> datetime:
        return self.now - timedelta(minutes=minutes, hours=hours, days=days, seconds=seconds)

    def ts(self, minutes: float = 0, hours: float = 0, days: float = 0,
           seconds: float = 0) -> str:
        return iso(self.ago(minutes, hours, days, seconds))

    @property
    def unix_now(self) -> int:
        return int(self.now.timestamp())

    def times(self) -> list[int]:
        return list(range(self.unix_now - HOUR, self.unix_now + 1, STEP))

    def mins_before(self, t: int) -> float:
        return (self.unix_now - t) / 60.0

    # ids --------------------------------------------------------------
    def uid(self) -> str:
        h = f"{self.rng.getrandbits(128):032x}"
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"

    def hexid(self, n: int = 64) -> str:
        return "".join(self.rng.choice("0123456789abcdef") for _ in range(n))

    def suffix(self, n: int = 5) -> str:
        return "".join(self.rng.choice(_ALNUM) for _ in range(n))

    def rs_hash(self) -> str:
        return self.suffix(self.rng.choice((9, 10)))

    def pod_ip(self, node: str) -> str:
        idx = self.node_index.get(node, 0)
        while True:
            ip = f"10.42.{idx}.{self.rng.randint(3, 250)}"
            if ip not in self._ips:
                self._ips.add(ip)
                return ip

    # collecting -------------------------------------------------------
    def add(self, *objs: Obj) -> None:
        self.objs.extend(objs)

    def log(self, at: datetime, ns: str, pod: str, container: str, service: str, level: str,
            message: str, previous: bool = False, node: str | None = None,
            **extra: Any) -> None:
        doc: Obj = {
            "@timestamp": iso_ms(at),
            "message": message,
            "log.level": level,
            "service.name": service,
            "kubernetes.namespace": ns,
            "kubernetes.pod.name": pod,
            "kubernetes.container.name": container,
        }
        _ = node
        for k, v in extra.items():
            doc[k.replace("__", ".")] = v
        self.logs.append(doc)
        self.pod_logs.setdefault((ns, pod, container, previous), []).append((at, message))

    def event(self, *, ns: str, kind: str, name: str, reason: str, message: str,
              first: datetime, last: datetime | None = None, count: int = 1,
              type_: str = "Normal", component: str = "kubelet", host: str | None = None,
              api_version: str = "v1", field_path: str | None = None,
              obj_uid: str | None = None) -> Obj:
        last = last or first
        assert self.now - last <= timedelta(hours=1), (name, reason)
        inv: Obj = {"apiVersion": api_version, "kind": kind, "name": name,
                    "namespace": ns, "uid": obj_uid or self.uid()}
        if field_path:
            inv["fieldPath"] = field_path
        src: Obj = {"component": component}
        if host:
            src["host"] = host
        ev: Obj = {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{name}.{self.hexid(16)}", "namespace": ns or "default",
                         "creationTimestamp": iso(first)},
            "involvedObject": inv, "reason": reason, "message": message, "type": type_,
            "count": count, "firstTimestamp": iso(first), "lastTimestamp": iso(last),
            "source": src, "reportingComponent": component, "reportingInstance": host or "",
        }
        self.objs.append(ev)
        return ev

    # writing ----------------------------------------------------------
    def _clamp(self, node: Any, floor: datetime) -> Any:
        if isinstance(node, dict):
            return {key: self._clamp(v, floor) for key, v in node.items()}
        if isinstance(node, list):
            return [self._clamp(v, floor) for v in node]
        if isinstance(node, str) and len(node) == 20 and node[4] == "-" and node[10] == "T":
            try:
                when = parse(node)
            except ValueError:
                return node
            return iso(floor) if when < floor else node
        return node

    def _finish(self) -> None:
        """Status times inside the week before now; events point at their objects' uids."""
        floor = self.now - timedelta(days=6, hours=22)
        index: dict[tuple[str, str, str], str] = {}
        for o in self.objs:
            if o["kind"] != "Event":
                md = o["metadata"]
                index[(o["kind"], md.get("namespace", ""), md["name"])] = md["uid"]
            if "status" in o:
                o["status"] = self._clamp(o["status"], floor)
        for o in self.objs:
            if o["kind"] == "Event":
                inv = o["involvedObject"]
                key = (inv["kind"], inv.get("namespace", ""), inv["name"])
                if key in index:
                    inv["uid"] = index[key]

    def write(self, root: Path, title: str, report: str, truth: Obj,
              interventions: list[Obj] | None = None) -> None:
        self._finish()
        pods = {(o["metadata"]["namespace"], o["metadata"]["name"])
                for o in self.objs if o["kind"] == "Pod"}
        d = root / self.sid
        d.mkdir(parents=True, exist_ok=True)
        scen: Obj = {"id": self.sid, "title": title, "now": self.now_s, "report": report,
                     "truth": truth}
        if interventions:
            scen["interventions"] = interventions
        (d / "scenario.yaml").write_text(
            yaml.dump(scen, Dumper=_Dumper, sort_keys=False, width=100, allow_unicode=True))
        (d / "cluster.yaml").write_text(
            yaml.safe_dump_all(self.objs, sort_keys=False, width=200))
        self.logs.sort(key=lambda x: x["@timestamp"])
        (d / "logs.ndjson").write_text(
            "".join(json.dumps(x, separators=(",", ":")) + "\n" for x in self.logs))
        (d / "metrics.om").write_text(self.metrics.render())
        for (ns, pod, cont, prev), lines in sorted(self.pod_logs.items()):
            if (ns, pod) not in pods or ((ns, pod) not in self.keep_logs and not prev):
                continue
            p = d / "pod-logs" / ns / pod / (f"{cont}.previous.log" if prev else f"{cont}.log")
            p.parent.mkdir(parents=True, exist_ok=True)
            lines.sort(key=lambda x: x[0])
            p.write_text("".join(f"{iso_ms(t)} {m}\n" for t, m in lines))


class _Dumper(yaml.SafeDumper):
    pass


def _str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


_Dumper.add_representer(str, _str)


# ---------------------------------------------------------------- objects
def namespace(st: Story, name: str, days: float = 200) -> Obj:
    obj: Obj = {"apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": name, "uid": st.uid(), "creationTimestamp": st.ts(days=days),
                             "labels": {"kubernetes.io/metadata.name": name}},
                "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}
    st.add(obj)
    return obj


def node(st: Story, name: str, zone: str, *, cpu: str = "8", memory: str = "32Gi",
         itype: str = "m6i.2xlarge", days: float = 40, unschedulable: bool = False,
         conditions: list[Obj] | None = None, labels: dict[str, str] | None = None,
         taints: list[Obj] | None = None, volumes_attached: list[Obj] | None = None) -> Obj:
    st.node_index[name] = len(st.node_index) + 1
    hb = st.ts(seconds=st.rng.randint(5, 40))
    conds = conditions or [
        {"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory",
         "message": "kubelet has sufficient memory available"},
        {"type": "DiskPressure", "status": "False", "reason": "KubeletHasNoDiskPressure",
         "message": "kubelet has no disk pressure"},
        {"type": "PIDPressure", "status": "False", "reason": "KubeletHasSufficientPID",
         "message": "kubelet has sufficient PID available"},
        {"type": "Ready", "status": "True", "reason": "KubeletReady",
         "message": "kubelet is posting ready status"},
    ]
    for c in conds:
        c.setdefault("lastHeartbeatTime", hb)
        c.setdefault("lastTransitionTime", st.ts(days=days))
    alloc_cpu = f"{int(cpu) * 1000 - 90}m"
    spec: Obj = {"providerID": f"aws:///{zone}/i-0{st.hexid(16)}",
                 "podCIDR": f"10.42.{st.node_index[name]}.0/24"}
    if unschedulable:
        spec["unschedulable"] = True
    if taints:
        spec["taints"] = taints
    status: Obj = {
        "capacity": {"cpu": cpu, "memory": memory, "pods": "58",
                     "ephemeral-storage": "104845292Ki"},
        "allocatable": {"cpu": alloc_cpu, "memory": memory, "pods": "58",
                        "ephemeral-storage": "95551679124"},
        "conditions": conds,
        "addresses": [{"type": "InternalIP",
                       "address": f"10.0.{st.node_index[name]}.{20 + len(name)}"},
                      {"type": "Hostname", "address": name}],
        "nodeInfo": {"kubeletVersion": "v1.30.6",
                     "containerRuntimeVersion": "containerd://1.7.22",
                     "osImage": "Amazon Linux 2023",
                     "kernelVersion": "6.1.112-122.189.amzn2023.x86_64",
                     "architecture": "amd64", "operatingSystem": "linux"},
    }
    if volumes_attached is not None:
        status["volumesAttached"] = volumes_attached
        status["volumesInUse"] = [v["name"] for v in volumes_attached]
    obj: Obj = {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "uid": st.uid(), "creationTimestamp": st.ts(days=days),
                             "labels": {"kubernetes.io/hostname": name,
                                        "topology.kubernetes.io/zone": zone,
                                        "node.kubernetes.io/instance-type": itype,
                                        "kubernetes.io/os": "linux", **(labels or {})}},
                "spec": spec, "status": status}
    st.add(obj)
    return obj


def container(name: str, image: str, *, cpu: str | None = "100m", memory: str | None = "128Mi",
              cpu_limit: str | None = None, mem_limit: str | None = "256Mi",
              port: int | None = 8080, env: dict[str, str] | None = None,
              readiness: str | None = "/healthz", liveness: str | None = None,
              pull: str = "IfNotPresent", args: list[str] | None = None) -> Obj:
    c: Obj = {"name": name, "image": image, "imagePullPolicy": pull}
    if args:
        c["args"] = args
    if port:
        c["ports"] = [{"name": "http", "containerPort": port, "protocol": "TCP"}]
    if env:
        c["env"] = [{"name": k, "value": v} for k, v in env.items()]
    req: Obj = {}
    lim: Obj = {}
    if cpu:
        req["cpu"] = cpu
    if memory:
        req["memory"] = memory
    if cpu_limit:
        lim["cpu"] = cpu_limit
    if mem_limit:
        lim["memory"] = mem_limit
    c["resources"] = {k: v for k, v in (("limits", lim), ("requests", req)) if v}
    if readiness and port:
        c["readinessProbe"] = {"httpGet": {"path": readiness, "port": port, "scheme": "HTTP"},
                               "periodSeconds": 10, "timeoutSeconds": 1, "failureThreshold": 3,
                               "successThreshold": 1}
    if liveness and port:
        c["livenessProbe"] = {"httpGet": {"path": liveness, "port": port, "scheme": "HTTP"},
                              "initialDelaySeconds": 15, "periodSeconds": 20, "timeoutSeconds": 2,
                              "failureThreshold": 3, "successThreshold": 1}
    c["terminationMessagePath"] = "/dev/termination-log"
    c["terminationMessagePolicy"] = "File"
    return c


def running_status(st: Story, c: Obj, started: datetime, restarts: int = 0,
                   last_state: Obj | None = None, ready: bool = True) -> Obj:
    cs: Obj = {"name": c["name"], "image": c["image"],
               "imageID": c["image"].split(":")[0] + "@sha256:" + st.hexid(),
               "containerID": "containerd://" + st.hexid(), "ready": ready, "started": True,
               "restartCount": restarts, "state": {"running": {"startedAt": iso(started)}},
               "lastState": last_state or {}}
    return cs


def pod(st: Story, ns: str, name: str, *, labels: dict[str, str], containers: list[Obj],
        node_name: str | None, owner: Obj | None, created: datetime,
        init_containers: list[Obj] | None = None, restarts: int = 0,
        last_state: Obj | None = None, started: datetime | None = None,
        service_account: str = "default", volumes: list[Obj] | None = None,
        node_selector: dict[str, str] | None = None, tolerations: list[Obj] | None = None,
        host_network: bool = False) -> Obj:
    meta: Obj = {"name": name, "namespace": ns, "uid": st.uid(), "labels": dict(labels),
                 "creationTimestamp": iso(created)}
    if owner:
        meta["generateName"] = name[: name.rfind("-") + 1]
        meta["ownerReferences"] = [{"apiVersion": owner["apiVersion"], "kind": owner["kind"],
                                    "name": owner["metadata"]["name"],
                                    "uid": owner["metadata"]["uid"], "controller": True,
                                    "blockOwnerDeletion": True}]
    spec: Obj = {"containers": containers, "restartPolicy": "Always",
                 "serviceAccountName": service_account, "dnsPolicy": "ClusterFirst",
                 "terminationGracePeriodSeconds": 30, "schedulerName": "default-scheduler"}
    if init_containers:
        spec["initContainers"] = init_containers
    if node_name:
        spec["nodeName"] = node_name
    if volumes:
        spec["volumes"] = volumes
    if node_selector:
        spec["nodeSelector"] = node_selector
    if tolerations:
        spec["tolerations"] = tolerations
    if host_network:
        spec["hostNetwork"] = True
    started = started or created + timedelta(seconds=st.rng.randint(4, 20))
    status: Obj = {"phase": "Running", "qosClass": "Burstable", "startTime": iso(created)}
    if node_name:
        status["hostIP"] = f"10.0.{st.node_index.get(node_name, 0)}.{20 + len(node_name)}"
        ip = status["hostIP"] if host_network else st.pod_ip(node_name)
        status["podIP"] = ip
        status["podIPs"] = [{"ip": ip}]
    status["conditions"] = [
        {"type": "PodReadyToStartContainers", "status": "True", "lastTransitionTime": iso(created)},
        {"type": "Initialized", "status": "True", "lastTransitionTime": iso(created)},
        {"type": "Ready", "status": "True", "lastTransitionTime": iso(started)},
        {"type": "ContainersReady", "status": "True", "lastTransitionTime": iso(started)},
        {"type": "PodScheduled", "status": "True", "lastTransitionTime": iso(created)},
    ]
    if init_containers:
        status["initContainerStatuses"] = [
            {"name": ic["name"], "image": ic["image"],
             "imageID": ic["image"].split(":")[0] + "@sha256:" + st.hexid(),
             "containerID": "containerd://" + st.hexid(), "ready": True, "restartCount": 0,
             "started": False,
             "state": {"terminated": {"exitCode": 0, "reason": "Completed",
                                      "startedAt": iso(created), "finishedAt": iso(started)}},
             "lastState": {}} for ic in init_containers]
    status["containerStatuses"] = [
        running_status(st, c, started, restarts if i == 0 else 0, last_state if i == 0 else None)
        for i, c in enumerate(containers)]
    obj: Obj = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec,
                "status": status}
    return obj


def set_waiting(st: Story, p: Obj, reason: str, message: str, container_name: str | None = None,
                phase: str = "Pending", since: datetime | None = None) -> None:
    """Turn a pod (or one of its containers) into a not-started, not-ready state."""
    s = p["status"]
    s["phase"] = phase
    since_s = iso(since) if since else s["startTime"]
    for c in s["containerStatuses"]:
        if container_name and c["name"] != container_name:
            continue
        c["ready"] = False
        c["started"] = False
        c["state"] = {"waiting": {"reason": reason, "message": message}}
        if reason in ("ContainerCreating", "ErrImagePull", "ImagePullBackOff"):
            c.pop("containerID", None)
            c["imageID"] = ""
    for cond in s["conditions"]:
        if cond["type"] in ("Ready", "ContainersReady"):
            cond["status"] = "False"
            cond["reason"] = "ContainersNotReady"
            names = [c["name"] for c in s["containerStatuses"] if not c["ready"]]
            cond["message"] = f"containers with unready status: [{' '.join(names)}]"
            cond["lastTransitionTime"] = since_s
        if cond["type"] == "PodReadyToStartContainers" and reason == "ContainerCreating":
            cond["status"] = "False"


def owner_ref(o: Obj) -> list[Obj]:
    return [{"apiVersion": o["apiVersion"], "kind": o["kind"], "name": o["metadata"]["name"],
             "uid": o["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]


def deployment(st: Story, ns: str, name: str, *, labels: dict[str, str], containers: list[Obj],
               replicas: int, revision: int, created: datetime, updated: datetime,
               init_containers: list[Obj] | None = None, ready: int | None = None,
               updated_replicas: int | None = None, available: int | None = None,
               max_surge: str | int = "25%", max_unavailable: str | int = "25%",
               annotations: dict[str, str] | None = None, pod_labels: dict[str, str] | None = None,
               conditions: list[Obj] | None = None, service_account: str = "default") -> Obj:
    tpl_labels = pod_labels or labels
    tspec: Obj = {"containers": containers, "serviceAccountName": service_account,
                  "restartPolicy": "Always", "terminationGracePeriodSeconds": 30}
    if init_containers:
        tspec["initContainers"] = init_containers
    ready = replicas if ready is None else ready
    available = ready if available is None else available
    upd = replicas if updated_replicas is None else updated_replicas
    conds = conditions or [
        {"type": "Available", "status": "True" if available >= replicas else "False",
         "reason": "MinimumReplicasAvailable" if available >= replicas
         else "MinimumReplicasUnavailable",
         "message": "Deployment has minimum availability." if available >= replicas
         else "Deployment does not have minimum availability.",
         "lastUpdateTime": iso(updated), "lastTransitionTime": iso(updated)},
        {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable",
         "message": f'ReplicaSet "{name}" has successfully progressed.',
         "lastUpdateTime": iso(updated), "lastTransitionTime": iso(created)},
    ]
    obj: Obj = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns, "uid": st.uid(), "generation": revision + 1,
                     "labels": dict(labels), "creationTimestamp": iso(created),
                     "annotations": {"deployment.kubernetes.io/revision": str(revision),
                                     **(annotations or {})}},
        "spec": {"replicas": replicas, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600,
                 "selector": {"matchLabels": dict(labels)},
                 "strategy": {"type": "RollingUpdate",
                              "rollingUpdate": {"maxSurge": max_surge,
                                                "maxUnavailable": max_unavailable}},
                 "template": {"metadata": {"labels": dict(tpl_labels)}, "spec": tspec}},
        "status": {"observedGeneration": revision + 1, "replicas": replicas,
                   "updatedReplicas": upd, "readyReplicas": ready,
                   "availableReplicas": available,
                   "unavailableReplicas": max(0, replicas - available), "conditions": conds},
    }
    if obj["status"]["unavailableReplicas"] == 0:
        del obj["status"]["unavailableReplicas"]
    st.add(obj)
    return obj


def replicaset(st: Story, dep: Obj, rs_hash: str, *, revision: int, replicas: int,
               created: datetime, containers: list[Obj] | None = None,
               init_containers: list[Obj] | None = None, ready: int | None = None,
               conditions: list[Obj] | None = None) -> Obj:
    ns = dep["metadata"]["namespace"]
    labels = {**dep["spec"]["template"]["metadata"]["labels"], "pod-template-hash": rs_hash}
    tspec = json.loads(json.dumps(dep["spec"]["template"]["spec"]))
    if containers is not None:
        tspec["containers"] = containers
    if init_containers is not None:
        tspec["initContainers"] = init_containers
    ready = replicas if ready is None else ready
    obj: Obj = {
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": f"{dep['metadata']['name']}-{rs_hash}", "namespace": ns,
                     "uid": st.uid(), "labels": labels, "creationTimestamp": iso(created),
                     "annotations": {"deployment.kubernetes.io/revision": str(revision),
                                     "deployment.kubernetes.io/desired-replicas":
                                     str(dep["spec"]["replicas"])},
                     "ownerReferences": owner_ref(dep)},
        "spec": {"replicas": replicas,
                 "selector": {"matchLabels": {**dep["spec"]["selector"]["matchLabels"],
                                              "pod-template-hash": rs_hash}},
                 "template": {"metadata": {"labels": labels}, "spec": tspec}},
        "status": {"replicas": replicas, "fullyLabeledReplicas": replicas,
                   "readyReplicas": ready, "availableReplicas": ready,
                   "observedGeneration": 1},
    }
    if conditions:
        obj["status"]["conditions"] = conditions
    if replicas == 0:
        for k in ("fullyLabeledReplicas", "readyReplicas", "availableReplicas"):
            del obj["status"][k]
    st.add(obj)
    return obj


def service(st: Story, ns: str, name: str, selector: dict[str, str], port: int = 80,
            target: int | str = 8080, days: float = 90, port_name: str = "http") -> Obj:
    obj: Obj = {"apiVersion": "v1", "kind": "Service",
                "metadata": {"name": name, "namespace": ns, "uid": st.uid(),
                             "creationTimestamp": st.ts(days=days), "labels": {"app": name}},
                "spec": {"type": "ClusterIP",
                         "clusterIP": f"172.20.{st.rng.randint(1, 250)}.{st.rng.randint(2, 250)}",
                         "selector": dict(selector),
                         "ports": [{"name": port_name, "port": port, "targetPort": target,
                                    "protocol": "TCP"}],
                         "sessionAffinity": "None", "internalTrafficPolicy": "Cluster"},
                "status": {"loadBalancer": {}}}
    st.add(obj)
    return obj


def endpoints(st: Story, svc: Obj, pods: list[Obj], port: int = 8080,
              not_ready: list[Obj] | None = None) -> Obj:
    def addr(p: Obj) -> Obj:
        return {"ip": p["status"]["podIP"], "nodeName": p["spec"].get("nodeName"),
                "targetRef": {"kind": "Pod", "namespace": p["metadata"]["namespace"],
                              "name": p["metadata"]["name"], "uid": p["metadata"]["uid"]}}

    subset: Obj = {"addresses": [addr(p) for p in pods],
                   "ports": [{"name": svc["spec"]["ports"][0]["name"], "port": port,
                              "protocol": "TCP"}]}
    if not_ready:
        subset["notReadyAddresses"] = [addr(p) for p in not_ready]
    if not subset["addresses"]:
        del subset["addresses"]
    obj: Obj = {"apiVersion": "v1", "kind": "Endpoints",
                "metadata": {"name": svc["metadata"]["name"],
                             "namespace": svc["metadata"]["namespace"], "uid": st.uid(),
                             "creationTimestamp": svc["metadata"]["creationTimestamp"],
                             "labels": svc["metadata"]["labels"]},
                "subsets": [subset]}
    st.add(obj)
    return obj


def hpa(st: Story, ns: str, name: str, target_kind: str, *, min_r: int, max_r: int, current: int,
        desired: int, cpu_target: int, cpu_now: int, conditions: list[Obj],
        last_scale: datetime, days: float = 60) -> Obj:
    obj: Obj = {
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name, "namespace": ns, "uid": st.uid(),
                     "creationTimestamp": st.ts(days=days)},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": target_kind, "name": name},
                 "minReplicas": min_r, "maxReplicas": max_r,
                 "metrics": [{"type": "Resource",
                              "resource": {"name": "cpu",
                                           "target": {"type": "Utilization",
                                                      "averageUtilization": cpu_target}}}]},
        "status": {"currentReplicas": current, "desiredReplicas": desired,
                   "lastScaleTime": iso(last_scale),
                   "currentMetrics": [{"type": "Resource",
                                       "resource": {"name": "cpu",
                                                    "current": {"averageUtilization": cpu_now}}}],
                   "conditions": conditions},
    }
    st.add(obj)
    return obj


def hpa_ok_conditions(st: Story, since: datetime) -> list[Obj]:
    return [
        {"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale",
         "message": "recommended size matches current size", "lastTransitionTime": iso(since)},
        {"type": "ScalingActive", "status": "True", "reason": "ValidMetricFound",
         "message": "the HPA was able to successfully calculate a replica count from cpu "
                    "resource utilization (percentage of request)",
         "lastTransitionTime": iso(since)},
        {"type": "ScalingLimited", "status": "False", "reason": "DesiredWithinRange",
         "message": "the desired count is within the acceptable range",
         "lastTransitionTime": iso(since)},
    ]


# ------------------------------------------------------------- composites
def app(st: Story, ns: str, name: str, image: str, *, nodes: list[str], replicas: int = 2,
        labels: dict[str, str] | None = None, cpu: str = "100m", memory: str = "128Mi",
        cpu_limit: str | None = None, mem_limit: str = "256Mi", port: int = 8080,
        rps: float = 4.0, log_every: int = 90, lat_ms: float = 25.0,
        paths: Sequence[str] = ("/api/v1/items",), days: float = 60, rollout_hours: float = 96,
        revision: int = 7, with_service: bool = True, err_ratio: float = 0.002,
        pull: str = "IfNotPresent", env: dict[str, str] | None = None,
        access_logs: bool = True, metrics: bool = True, restarts: dict[int, Obj] | None = None,
        mem_mb: float = 90.0, cpu_cores: float = 0.05, http: bool = True,
        sidecar: str | None = None, method: str = "GET") -> App:
    """A healthy Deployment with its ReplicaSets, pods, Service, logs and metrics."""
    labels = labels or {"app": name}
    ctr = container(name, image, cpu=cpu, memory=memory, cpu_limit=cpu_limit, mem_limit=mem_limit,
                    port=port, pull=pull, env=env)
    created = st.ago(days=days)
    updated = st.ago(hours=rollout_hours)
    dep = deployment(st, ns, name, labels=labels, containers=[ctr], replicas=replicas,
                     revision=revision, created=created, updated=updated)
    if revision > 1:
        replicaset(st, dep, st.rs_hash(), revision=revision - 1, replicas=0,
                   created=st.ago(hours=rollout_hours + 24 * st.rng.randint(3, 12)))
    h = st.rs_hash()
    rs = replicaset(st, dep, h, revision=revision, replicas=replicas, created=updated)
    pods: list[Obj] = []
    pod_ctrs = [ctr]
    if sidecar:
        pod_ctrs = [ctr, istio_proxy(sidecar)]
    for i in range(replicas):
        pname = f"{name}-{h}-{st.suffix()}"
        n = nodes[i % len(nodes)]
        rst = restarts.get(i) if restarts else None
        p = pod(st, ns, pname, labels={**labels, "pod-template-hash": h}, containers=pod_ctrs,
                node_name=n, owner=rs, created=updated + timedelta(seconds=5 + i * 40),
                restarts=rst["count"] if rst else 0, last_state=rst["last"] if rst else None,
                started=rst["started"] if rst else None)
        if sidecar:
            p["metadata"]["annotations"] = {
                "sidecar.istio.io/status": '{"initContainers":null,"containers":["istio-proxy"],'
                '"volumes":["istio-envoy","istio-data","istio-token"]}'}
            p["metadata"]["labels"]["security.istio.io/tlsMode"] = "istio"
            p["metadata"]["labels"]["service.istio.io/canonical-name"] = name
        pods.append(p)
        st.add(p)
    a = App(ns, name, dep, rs, pods)
    if with_service:
        a.service = service(st, ns, name, labels, target=port)
        a.endpoints = endpoints(st, a.service, pods, port=port)
    if access_logs:
        for p in pods:
            access_log(st, p, name, name, every=log_every, paths=paths, lat_ms=lat_ms,
                       err_ratio=err_ratio, method=method)
    if metrics:
        for p in pods:
            pod_metrics(st, p, name, mem_mb=mem_mb, cpu_cores=cpu_cores)
    if metrics and http:
        http_counters(st, ns, name, rps=lambda m: rps, err=lambda m: rps * err_ratio)
    return a


def istio_proxy(image: str) -> Obj:
    c = container("istio-proxy", image, cpu="100m", memory="128Mi", cpu_limit="2",
                  mem_limit="1Gi", port=15090, readiness=None,
                  args=["proxy", "sidecar", "--domain", "$(POD_NAMESPACE).svc.cluster.local",
                        "--proxyLogLevel=warning", "--log_output_level=default:info"])
    c["ports"] = [{"name": "http-envoy-prom", "containerPort": 15090, "protocol": "TCP"}]
    c["readinessProbe"] = {"httpGet": {"path": "/healthz/ready", "port": 15021,
                                       "scheme": "HTTP"}, "periodSeconds": 15,
                           "timeoutSeconds": 3, "failureThreshold": 4, "successThreshold": 1}
    return c


def access_log(st: Story, p: Obj, container_name: str, svc: str, *, every: int = 90,
               paths: Sequence[str] = ("/api/v1/items",), lat_ms: float = 25.0,
               err_ratio: float = 0.002, start_min: float = 60.0, end_min: float = 0.0,
               method: str = "GET", lat_fn: Callable[[float], float] | None = None) -> None:
    ns, pname = p["metadata"]["namespace"], p["metadata"]["name"]
    nd = p["spec"].get("nodeName")
    t = st.ago(minutes=start_min) + timedelta(seconds=st.rng.randint(0, every))
    end = st.ago(minutes=end_min)
    while t < end:
        m = (st.now - t).total_seconds() / 60
        base = lat_fn(m) if lat_fn else lat_ms
        lat = max(1, int(st.rng.lognormvariate(math.log(base), 0.4)))
        code = 500 if st.rng.random() < err_ratio else 200
        path = st.rng.choice(list(paths))
        lvl = "error" if code >= 500 else "info"
        st.log(t, ns, pname, container_name, svc, lvl,
               f'{method} {path} {code} {lat}ms', node=nd,
               http__request__method=method, url__path=path,
               http__response__status_code=code, event__duration=lat * 1_000_000)
        t += timedelta(seconds=every + st.rng.randint(-every // 4, every // 4))


def pod_metrics(st: Story, p: Obj, container_name: str, *, mem_mb: float = 90.0,
                cpu_cores: float = 0.05, cpu_fn: Callable[[float], float] | None = None,
                mem_fn: Callable[[float], float] | None = None,
                restarts_fn: Callable[[float], float] | None = None,
                throttle_fn: Callable[[float], float] | None = None) -> None:
    """cAdvisor and kube-state-metrics series for one container; fns take minutes before now."""
    ns, pname = p["metadata"]["namespace"], p["metadata"]["name"]
    lab = {"namespace": ns, "pod": pname, "container": container_name}
    times = st.times()
    created = int(parse(p["metadata"]["creationTimestamp"]).timestamp())
    times = [t for t in times if t >= created]
    if not times:
        return
    cpu_acc = st.rng.uniform(50, 500) if created < times[0] - 600 else 0.0
    cpu_pts: list[tuple[int, float]] = []
    mem_pts: list[tuple[int, float]] = []
    per_pts: list[tuple[int, float]] = []
    thr_pts: list[tuple[int, float]] = []
    periods = float(st.rng.randint(10000, 90000))
    thr = float(st.rng.randint(0, 50))
    for t in times:
        m = st.mins_before(t)
        c = cpu_fn(m) if cpu_fn else cpu_cores * st.rng.uniform(0.85, 1.15)
        cpu_acc += c * STEP
        cpu_pts.append((t, round(cpu_acc, 3)))
        mb = mem_fn(m) if mem_fn else mem_mb * st.rng.uniform(0.97, 1.03)
        mem_pts.append((t, float(int(mb * 1024 * 1024))))
        periods += 600
        thr += 600 * (throttle_fn(m) if throttle_fn else 0.0)
        per_pts.append((t, periods))
        thr_pts.append((t, float(int(thr))))
    M = st.metrics
    M.counter("container_cpu_usage_seconds", "Cumulative cpu time consumed in seconds.", lab,
              cpu_pts)
    M.gauge("container_memory_working_set_bytes", "Current working set in bytes.", lab, mem_pts)
    if throttle_fn:
        M.counter("container_cpu_cfs_periods", "Number of elapsed enforcement period intervals.",
                  lab, per_pts)
        M.counter("container_cpu_cfs_throttled_periods",
                  "Number of throttled period intervals.", lab, thr_pts)
    r0 = p["status"]["containerStatuses"][0]["restartCount"] if p["status"].get(
        "containerStatuses") else 0
    if not restarts_fn and not r0:
        return
    rpts = [(t, float(restarts_fn(st.mins_before(t)) if restarts_fn else r0)) for t in times]
    M.counter("kube_pod_container_status_restarts",
              "The number of container restarts per container.", lab, rpts)


def http_counters(st: Story, ns: str, svc: str, *, rps: Callable[[float], float],
                  err: Callable[[float], float], extra: dict[str, str] | None = None,
                  err_code: str = "500") -> None:
    ok_acc = st.rng.uniform(1e5, 5e5)
    err_acc = st.rng.uniform(10, 200)
    ok_pts: list[tuple[int, float]] = []
    err_pts: list[tuple[int, float]] = []
    for t in st.times():
        m = st.mins_before(t)
        total = rps(m) * st.rng.uniform(0.93, 1.07)
        e = err(m)
        ok_acc += max(0.0, total - e) * STEP
        err_acc += e * STEP
        ok_pts.append((t, float(int(ok_acc))))
        err_pts.append((t, float(int(err_acc))))
    base = {"namespace": ns, "service": svc, **(extra or {})}
    st.metrics.counter("http_requests", "Total HTTP requests handled.", {**base, "code": "200"},
                       ok_pts)
    st.metrics.counter("http_requests", "Total HTTP requests handled.",
                       {**base, "code": err_code}, err_pts)


def latency_hist(st: Story, ns: str, svc: str, *, rps: Callable[[float], float],
                 median_s: Callable[[float], float], sigma: float = 0.6,
                 buckets: Sequence[float] = LAT_BUCKETS) -> None:
    times = st.times()
    st.metrics.histogram("http_request_duration_seconds",
                         "HTTP request latency in seconds.", {"namespace": ns, "service": svc},
                         times, [rps(st.mins_before(t)) for t in times],
                         [median_s(st.mins_before(t)) for t in times], sigma=sigma,
                         buckets=buckets)


def ramp(m: float, start_min: float, full_min: float, lo: float, hi: float) -> float:
    """lo before start_min minutes ago, rising linearly to hi at full_min minutes ago."""
    if m >= start_min:
        return lo
    if m <= full_min:
        return hi
    f = (start_min - m) / (start_min - full_min)
    return lo + f * (hi - lo)


def noise(st: Story, p: Obj, container_name: str, svc: str, level: str, messages: Sequence[str],
          every: int, start_min: float = 60.0, end_min: float = 0.0) -> None:
    """Recurring harmless lines (cache misses, deprecation warnings, retries that succeed)."""
    ns, pname = p["metadata"]["namespace"], p["metadata"]["name"]
    t = st.ago(minutes=start_min) + timedelta(seconds=st.rng.randint(0, every))
    end = st.ago(minutes=end_min)
    while t < end:
        st.log(t, ns, pname, container_name, svc, level, st.rng.choice(list(messages)),
               node=p["spec"].get("nodeName"))
        t += timedelta(seconds=every + st.rng.randint(-every // 3, every // 3))


def standard_nodes(st: Story, names: Sequence[str], zones: Sequence[str] = (
        "eu-west-1a", "eu-west-1b", "eu-west-1c")) -> list[str]:
    for i, n in enumerate(names):
        node(st, n, zones[i % len(zones)])
    return list(names)


def kube_system(st: Story, nodes: Sequence[str]) -> None:
    """CoreDNS and kube-proxy: healthy cluster plumbing that every scenario has."""
    namespace(st, "kube-system", days=400)
    namespace(st, "default", days=400)
    app(st, "kube-system", "coredns", "registry.k8s.io/coredns/coredns:v1.11.3",
        nodes=list(nodes), replicas=2, labels={"k8s-app": "kube-dns"}, port=8181,
        access_logs=False, rps=0, days=400, rollout_hours=24 * 6, revision=3,
        mem_mb=32, cpu_cores=0.01, with_service=False, http=False)


def meta(st: Story, ns: str, name: str, days: float = 60,
         labels: dict[str, str] | None = None) -> Obj:
    m: Obj = {"name": name, "namespace": ns, "uid": st.uid(), "creationTimestamp": st.ts(days=days)}
    if labels:
        m["labels"] = labels
    return m


def pending_pod(st: Story, ns: str, name: str, ctr: Obj, message: str, minutes: float,
                labels: dict[str, str] | None = None, owner: Obj | None = None) -> Obj:
    """An unschedulable pod, with its FailedScheduling event."""
    p = pod(st, ns, name, labels=labels or {"app": name}, containers=[ctr], node_name=None,
            owner=owner, created=st.ago(minutes))
    p["status"] = {"phase": "Pending", "qosClass": "Burstable", "conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
         "lastTransitionTime": st.ts(minutes), "message": message}]}
    st.add(p)
    st.event(ns=ns, kind="Pod", name=name, reason="FailedScheduling", type_="Warning",
             component="default-scheduler", count=max(1, int(minutes // 3)),
             first=st.ago(min(minutes, 59)), last=st.ago(1.5), message=message)
    return p


def gauge_fn(st: Story, name: str, help_: str, labels: dict[str, str],
             fn: Callable[[float], float], since_min: float = 60.0) -> None:
    pts = [(t, float(fn(st.mins_before(t)))) for t in st.times() if st.mins_before(t) <= since_min]
    st.metrics.gauge(name, help_, labels, pts)


def counter_fn(st: Story, name: str, help_: str, labels: dict[str, str],
               rate: Callable[[float], float], start: float = 0.0,
               since_min: float = 60.0) -> None:
    acc = start
    pts: list[tuple[int, float]] = []
    for t in st.times():
        m = st.mins_before(t)
        if m > since_min:
            continue
        if pts:
            acc += max(0.0, rate(m)) * STEP
        pts.append((t, float(int(acc))))
    st.metrics.counter(name, help_, labels, pts)


def retime(st: Story, p: Obj, minutes: float) -> None:
    """Make a pod (created by a composite) start `minutes` before now."""
    made = st.ago(minutes)
    started = made + timedelta(seconds=st.rng.randint(6, 20))
    p["metadata"]["creationTimestamp"] = iso(made)
    s = p["status"]
    s["startTime"] = iso(made)
    for c in s.get("conditions", []):
        ready = c["type"] in ("Ready", "ContainersReady")
        c["lastTransitionTime"] = iso(started if ready else made)
    for cs in s.get("containerStatuses", []):
        if "running" in cs["state"]:
            cs["state"]["running"]["startedAt"] = iso(started)
