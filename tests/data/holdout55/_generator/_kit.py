"""Shared helpers for the holdout55 scenarios: time, Kubernetes objects, logs, metrics."""

from __future__ import annotations

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

HASH_CHARS = "bcdfghjklmnpqrstvwxz2456789"
STEP = 60  # seconds between metric samples
GiB = 1024**3
MiB = 1024**2


def parse(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def iso(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_ms(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def clock(t: datetime) -> str:
    """Application style timestamp, as many loggers print it."""
    return t.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S,%f")[:-3]


@dataclass
class PodRec:
    """What the metric writer needs to know about a pod."""

    namespace: str
    name: str
    node: str
    containers: list[str]
    created: datetime
    phase: str = "Running"
    ready: bool = True
    cpu: float = 0.05  # cores
    mem: float = 200 * MiB
    restarts: int = 0
    restart_times: list[datetime] = field(default_factory=list)
    mem_fn: Callable[[datetime], float] | None = None
    cpu_fn: Callable[[datetime], float] | None = None
    ready_fn: Callable[[datetime], bool] | None = None
    limit_mem: float | None = None
    metrics: bool = True


class Metrics:
    """OpenMetrics families; samples of a series kept in time order."""

    def __init__(self) -> None:
        self.types: dict[str, tuple[str, str]] = {}
        self.series: dict[str, dict[tuple[tuple[str, str], ...], list[tuple[int, float]]]] = {}

    def _family(self, name: str, kind: str, help_text: str) -> str:
        fam = name[: -len("_total")] if kind == "counter" and name.endswith("_total") else name
        if fam not in self.types:
            self.types[fam] = (kind, help_text)
            self.series[fam] = {}
        return fam

    def add(
        self,
        name: str,
        kind: str,
        help_text: str,
        labels: dict[str, str],
        points: Iterable[tuple[datetime, float]],
    ) -> None:
        fam = self._family(name, kind, help_text)
        key = (("__name__", name), *sorted(labels.items()))
        bucket = self.series[fam].setdefault(key, [])
        bucket.extend((int(t.timestamp()), float(v)) for t, v in points)
        bucket.sort(key=lambda p: p[0])

    def histogram(
        self,
        name: str,
        help_text: str,
        labels: dict[str, str],
        buckets: list[float],
        points: Iterable[tuple[datetime, list[float], float, float]],
    ) -> None:
        """points: (t, cumulative bucket counts incl. +Inf, sum, count)."""
        fam = self._family(name, "histogram", help_text)
        for t, counts, total, count in points:
            ts = int(t.timestamp())
            for le, c in zip([*buckets, float("inf")], counts, strict=True):
                le_s = "+Inf" if le == float("inf") else _num(le)
                key = (("__name__", name + "_bucket"), *sorted({**labels, "le": le_s}.items()))
                self.series[fam].setdefault(key, []).append((ts, c))
            for suffix, v in (("_sum", total), ("_count", count)):
                key = (("__name__", name + suffix), *sorted(labels.items()))
                self.series[fam].setdefault(key, []).append((ts, v))

    def render(self) -> str:
        out: list[str] = []
        for fam, (kind, help_text) in self.types.items():
            out.append(f"# TYPE {fam} {kind}")
            out.append(f"# HELP {fam} {help_text}")
            if kind == "histogram":
                out.extend(self._render_histogram(fam))
                continue
            for key, pts in self.series[fam].items():
                name = key[0][1]
                lab = _labels(key[1:])
                for ts, v in pts:
                    out.append(f"{name}{lab} {_num(v)} {ts}")
        out.append("# EOF")
        return "\n".join(out) + "\n"

    def _render_histogram(self, fam: str) -> list[str]:
        groups: dict[tuple[tuple[str, str], ...], list[tuple[tuple[str, str], ...]]] = {}
        for key in self.series[fam]:
            base = tuple(kv for kv in key[1:] if kv[0] != "le")
            groups.setdefault(base, []).append(key)
        out: list[str] = []
        for keys in groups.values():
            def order(k: tuple[tuple[str, str], ...]) -> tuple[int, float]:
                n = k[0][1]
                if n.endswith("_bucket"):
                    le = dict(k[1:])["le"]
                    return (0, float("inf") if le == "+Inf" else float(le))
                return (1, 0.0) if n.endswith("_sum") else (2, 0.0)

            keys.sort(key=order)
            stamps = sorted({ts for k in keys for ts, _ in self.series[fam][k]})
            index = {k: dict(self.series[fam][k]) for k in keys}
            for ts in stamps:
                for k in keys:
                    if ts in index[k]:
                        out.append(f"{k[0][1]}{_labels(k[1:])} {_num(index[k][ts])} {ts}")
        return out


def _labels(pairs: Iterable[tuple[str, str]]) -> str:
    items = [f'{k}="{v}"' for k, v in pairs]
    return "{" + ",".join(items) + "}" if items else ""


def _num(v: float) -> str:
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return f"{v:.6g}" if abs(v) < 1e-3 else f"{v:.6f}".rstrip("0").rstrip(".")


class Story:
    """One scenario: objects, logs, pod logs, metrics, and the scenario file."""

    def __init__(self, sid: str, now: str, seed: int) -> None:
        self.sid = sid
        self.now = parse(now)
        self.rng = random.Random(seed)
        self.objects: list[Obj] = []
        self.logs: list[Obj] = []
        self.pod_logs: dict[str, list[str]] = {}
        self.metrics = Metrics()
        self.pods: list[PodRec] = []
        self.scenario: Obj = {}

    # ----- time and names -----
    def ago(self, minutes: float = 0, *, seconds: float = 0, hours: float = 0,
            days: float = 0) -> datetime:
        return self.now - timedelta(minutes=minutes, seconds=seconds, hours=hours, days=days)

    def grid(self, start: datetime | None = None, end: datetime | None = None) -> list[datetime]:
        first = self.now - timedelta(hours=1)
        lo = max(first, start) if start else first
        hi = min(self.now, end) if end else self.now
        out: list[datetime] = []
        t = first
        while t <= self.now:
            if lo <= t <= hi:
                out.append(t)
            t += timedelta(seconds=STEP)
        return out

    def uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def suffix(self, n: int = 5) -> str:
        return "".join(self.rng.choice(HASH_CHARS) for _ in range(n))

    def hexid(self, n: int = 16) -> str:
        return "".join(self.rng.choice("0123456789abcdef") for _ in range(n))

    def ip(self, prefix: str = "10.42") -> str:
        return f"{prefix}.{self.rng.randint(0, 15)}.{self.rng.randint(2, 250)}"

    # ----- objects -----
    def add(self, obj: Obj) -> Obj:
        self.objects.append(obj)
        return obj

    def event(
        self,
        kind: str,
        ns: str,
        name: str,
        reason: str,
        message: str,
        *,
        first: datetime,
        last: datetime | None = None,
        count: int = 1,
        type_: str = "Normal",
        component: str = "kubelet",
        host: str | None = None,
        uid: str | None = None,
        field_path: str | None = None,
        api_version: str = "v1",
    ) -> Obj:
        last = last or first
        if self.now - last > timedelta(hours=1) or last > self.now:
            raise ValueError(f"{self.sid}: event {reason} on {name} outside the hour")
        involved: Obj = {"apiVersion": api_version, "kind": kind, "name": name}
        if ns:
            involved["namespace"] = ns
        if uid:
            involved["uid"] = uid
        if field_path:
            involved["fieldPath"] = field_path
        source: Obj = {"component": component}
        if host:
            source["host"] = host
        ev: Obj = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {
                "name": f"{name}.{self.hexid()}",
                "namespace": ns or "default",
                "creationTimestamp": iso(first),
            },
            "involvedObject": involved,
            "reason": reason,
            "message": message,
            "type": type_,
            "count": count,
            "firstTimestamp": iso(first),
            "lastTimestamp": iso(last),
            "source": source,
            "reportingComponent": component,
        }
        return self.add(ev)

    # ----- logs -----
    def log(
        self,
        t: datetime,
        ns: str,
        pod: str,
        container: str,
        service: str,
        level: str,
        message: str,
        **extra: Any,
    ) -> None:
        doc: Obj = {
            "@timestamp": iso_ms(t),
            "message": message,
            "log.level": level,
            "service.name": service,
            "kubernetes.namespace": ns,
            "kubernetes.pod.name": pod,
            "kubernetes.container.name": container,
        }
        for k, v in extra.items():
            doc[k.replace("__", ".")] = v
        self.logs.append(doc)

    def pod_log(self, ns: str, pod: str, container: str, lines: list[str],
                previous: bool = False) -> None:
        name = f"{container}.previous.log" if previous else f"{container}.log"
        self.pod_logs[f"pod-logs/{ns}/{pod}/{name}"] = lines

    def spread(self, start: datetime, end: datetime, every: float) -> list[datetime]:
        """Jittered instants from start to end, about `every` seconds apart."""
        out: list[datetime] = []
        t = start + timedelta(seconds=self.rng.uniform(0, every))
        while t < end:
            out.append(t)
            t += timedelta(seconds=self.rng.expovariate(1.0 / every))
        return out

    # ----- metrics -----
    def pod_metrics(self) -> None:
        m = self.metrics
        grid = self.grid()
        for p in self.pods:
            if not p.metrics:
                continue
            pts = [t for t in grid if t >= p.created]
            if not pts:
                continue
            for c in p.containers:
                lab = {"namespace": p.namespace, "pod": p.name, "container": c}
                if p.phase == "Running":
                    cpu_total = self.rng.uniform(50, 3000)
                    cpu_pts: list[tuple[datetime, float]] = []
                    mem_pts: list[tuple[datetime, float]] = []
                    prev = pts[0]
                    for t in pts:
                        if any(prev < r <= t for r in p.restart_times):
                            cpu_total = self.rng.uniform(0.5, 3)
                        else:
                            rate = p.cpu_fn(t) if p.cpu_fn else p.cpu
                            cpu_total += rate * STEP * self.rng.uniform(0.8, 1.2)
                        cpu_pts.append((t, round(cpu_total, 3)))
                        mem = p.mem_fn(t) if p.mem_fn else p.mem * self.rng.uniform(0.97, 1.03)
                        mem_pts.append((t, float(int(mem))))
                        prev = t
                    m.add("container_cpu_usage_seconds_total", "counter",
                          "Cumulative cpu time consumed by the container in core-seconds",
                          lab, cpu_pts)
                    m.add("container_memory_working_set_bytes", "gauge",
                          "Current working set of the container in bytes", lab, mem_pts)
                base = p.restarts - len([r for r in p.restart_times if r > pts[0]])
                rs_pts = []
                for t in pts:
                    rs_pts.append((t, base + len([r for r in p.restart_times
                                                  if pts[0] < r <= t])))
                if not any(r > pts[0] for r in p.restart_times):
                    rs_pts = rs_pts[::3]
                m.add("kube_pod_container_status_restarts_total", "counter",
                      "The number of container restarts per container.", lab, rs_pts)
                if p.limit_mem:
                    m.add("kube_pod_container_resource_limits", "gauge",
                          "The number of requested limit resource by a container.",
                          {**lab, "resource": "memory", "unit": "byte", "node": p.node},
                          [(t, p.limit_mem) for t in pts[::5]])
            ready_pts = [(t, 1.0 if (p.ready_fn(t) if p.ready_fn else p.ready) else 0.0)
                         for t in pts]
            m.add("kube_pod_status_ready", "gauge",
                  "Describes whether the pod is ready to serve requests.",
                  {"namespace": p.namespace, "pod": p.name, "condition": "true"},
                  ready_pts[::3] if p.ready and not p.ready_fn else ready_pts)
            m.add("kube_pod_status_phase", "gauge", "The pods current phase.",
                  {"namespace": p.namespace, "pod": p.name, "phase": p.phase},
                  [(t, 1.0) for t in pts[::5]])

    def counter(self, name: str, help_text: str, labels: dict[str, str],
                rate: Callable[[datetime], float], start: float | None = None,
                begin: datetime | None = None, end: datetime | None = None) -> None:
        total = start if start is not None else self.rng.uniform(1e4, 5e5)
        pts: list[tuple[datetime, float]] = []
        for t in self.grid(begin, end):
            total += max(0.0, rate(t)) * STEP * self.rng.uniform(0.9, 1.1)
            pts.append((t, float(int(total))))
        self.metrics.add(name, "counter", help_text, labels, pts)

    def gauge(self, name: str, help_text: str, labels: dict[str, str],
              value: Callable[[datetime], float], begin: datetime | None = None,
              end: datetime | None = None, every: int = 1) -> None:
        pts = [(t, value(t)) for t in self.grid(begin, end)[::every]]
        self.metrics.add(name, "gauge", help_text, labels, pts)

    def latency(self, service: str, ns: str, labels: dict[str, str],
                rps: Callable[[datetime], float], p50: Callable[[datetime], float],
                buckets: list[float] | None = None) -> None:
        """A request-duration histogram whose median follows p50(t)."""
        bks = buckets or [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0]
        counts = [0.0] * (len(bks) + 1)
        total_sum = 0.0
        total_count = 0.0
        pts: list[tuple[datetime, list[float], float, float]] = []
        for t in self.grid():
            n = max(0.0, rps(t)) * STEP
            med = p50(t)
            for _ in range(40):
                d = med * self.rng.lognormvariate(0, 0.6)
                share = n / 40
                for i, le in enumerate([*bks, float("inf")]):
                    if d <= le:
                        counts[i] += share
                total_sum += d * share
            total_count += n
            pts.append((t, [float(int(c)) for c in counts], round(total_sum, 3),
                        float(int(total_count))))
        self.metrics.histogram(
            "http_request_duration_seconds",
            "Duration of HTTP requests in seconds.",
            {"namespace": ns, "service": service, **labels}, bks, pts)

    # ----- output -----
    def write(self, root: Path) -> None:
        base = root / self.sid
        if base.exists():
            for path in sorted(base.rglob("*"), reverse=True):
                if path.is_file():
                    path.unlink()
                else:
                    path.rmdir()
        base.mkdir(parents=True, exist_ok=True)
        (base / "scenario.yaml").write_text(
            yaml.dump(self.scenario, Dumper=_BlockDumper, sort_keys=False, width=100,
                      allow_unicode=True))
        (base / "cluster.yaml").write_text(
            yaml.safe_dump_all(self.objects, sort_keys=False, width=100_000))
        self.logs.sort(key=lambda d: d["@timestamp"])
        for d in self.logs:
            ts = parse(d["@timestamp"][:19] + "Z")
            if ts > self.now or self.now - ts > timedelta(days=7):
                raise ValueError(f"{self.sid}: log outside the week: {d['@timestamp']}")
        (base / "logs.ndjson").write_text(
            "".join(json.dumps(d, separators=(",", ":")) + "\n" for d in self.logs))
        (base / "metrics.om").write_text(self.metrics.render())
        for rel, lines in sorted(self.pod_logs.items()):
            path = base / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("\n".join(lines) + "\n")


class _BlockDumper(yaml.SafeDumper):
    """Writes multi-line strings (the report) as literal blocks."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _str)


# ----- Kubernetes object builders -----


def meta(name: str, ns: str | None, created: datetime, uid: str, *,
         labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None,
         owner: Obj | None = None, generation: int | None = None) -> Obj:
    md: Obj = {"name": name}
    if ns:
        md["namespace"] = ns
    md["uid"] = uid
    md["creationTimestamp"] = iso(created)
    if generation is not None:
        md["generation"] = generation
    if labels:
        md["labels"] = dict(labels)
    if annotations:
        md["annotations"] = dict(annotations)
    if owner:
        md["ownerReferences"] = [owner]
    return md


def owner_ref(kind: str, name: str, uid: str, api: str = "apps/v1") -> Obj:
    return {"apiVersion": api, "kind": kind, "name": name, "uid": uid,
            "controller": True, "blockOwnerDeletion": True}


def namespace(s: Story, name: str, created: datetime,
              labels: dict[str, str] | None = None) -> Obj:
    lab = {"kubernetes.io/metadata.name": name, **(labels or {})}
    return s.add({"apiVersion": "v1", "kind": "Namespace",
                  "metadata": meta(name, None, created, s.uid(), labels=lab),
                  "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})


def node(s: Story, name: str, *, zone: str, region: str, itype: str, cpu: str, mem: str,
         created: datetime, ready_since: datetime, pool: str, ip: str,
         kubelet: str = "v1.30.4-eks-a737599", unschedulable: bool = False,
         taints: list[Obj] | None = None, extra_labels: dict[str, str] | None = None,
         alloc_cpu: str | None = None, alloc_mem: str | None = None,
         conditions: list[Obj] | None = None) -> Obj:
    labels = {
        "beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux", "node.kubernetes.io/instance-type": itype,
        "topology.kubernetes.io/region": region, "topology.kubernetes.io/zone": zone,
        "eks.amazonaws.com/nodegroup": pool, **(extra_labels or {}),
    }
    hb = s.now - timedelta(seconds=s.rng.randint(5, 40))
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
        c.setdefault("lastHeartbeatTime", iso(hb))
        c.setdefault("lastTransitionTime", iso(ready_since))
    spec: Obj = {"providerID": f"aws:///{zone}/i-0{s.hexid(16)}"}
    if unschedulable:
        spec["unschedulable"] = True
    if taints:
        spec["taints"] = taints
    return s.add({
        "apiVersion": "v1", "kind": "Node",
        "metadata": meta(name, None, created, s.uid(), labels=labels,
                         annotations={"node.alpha.kubernetes.io/ttl": "0"}),
        "spec": spec,
        "status": {
            "capacity": {"cpu": cpu, "memory": mem, "pods": "58", "ephemeral-storage":
                         "104845292Ki"},
            "allocatable": {"cpu": alloc_cpu or cpu, "memory": alloc_mem or mem, "pods": "58",
                            "ephemeral-storage": "95551679124"},
            "conditions": conds,
            "addresses": [{"type": "InternalIP", "address": ip},
                          {"type": "Hostname", "address": name}],
            "nodeInfo": {"kubeletVersion": kubelet, "kubeProxyVersion": kubelet,
                         "containerRuntimeVersion": "containerd://1.7.22",
                         "osImage": "Amazon Linux 2023.5.20240916",
                         "kernelVersion": "6.1.109-118.189.amzn2023.x86_64",
                         "operatingSystem": "linux", "architecture": "amd64"},
        },
    })


def container(name: str, image: str, *, port: int | None = None, cpu: str = "100m",
              mem: str = "256Mi", cpu_limit: str | None = None, mem_limit: str | None = None,
              env: list[Obj] | None = None, args: list[str] | None = None,
              command: list[str] | None = None, readiness: Obj | None = None,
              liveness: Obj | None = None, startup: Obj | None = None,
              mounts: list[Obj] | None = None, security: Obj | None = None,
              pull: str = "IfNotPresent") -> Obj:
    c: Obj = {"name": name, "image": image}
    if command:
        c["command"] = command
    if args:
        c["args"] = args
    if port:
        c["ports"] = [{"name": "http", "containerPort": port, "protocol": "TCP"}]
    if env:
        c["env"] = env
    res: Obj = {"requests": {"cpu": cpu, "memory": mem}}
    lim: Obj = {}
    if cpu_limit:
        lim["cpu"] = cpu_limit
    if mem_limit:
        lim["memory"] = mem_limit
    if lim:
        res["limits"] = lim
    c["resources"] = res
    if startup:
        c["startupProbe"] = startup
    if liveness:
        c["livenessProbe"] = liveness
    if readiness:
        c["readinessProbe"] = readiness
    if mounts:
        c["volumeMounts"] = mounts
    if security:
        c["securityContext"] = security
    c["imagePullPolicy"] = pull
    c["terminationMessagePath"] = "/dev/termination-log"
    c["terminationMessagePolicy"] = "File"
    return c


def http_probe(path: str, port: int | str, *, delay: int = 5, period: int = 10,
               timeout: int = 1, failures: int = 3) -> Obj:
    return {"httpGet": {"path": path, "port": port, "scheme": "HTTP"},
            "initialDelaySeconds": delay, "periodSeconds": period,
            "timeoutSeconds": timeout, "successThreshold": 1, "failureThreshold": failures}


def running(c: Obj, started: datetime, *, restarts: int = 0, ready: bool = True,
            last: Obj | None = None, image_id: str = "") -> Obj:
    st: Obj = {"name": c["name"], "image": c["image"],
               "imageID": image_id or _image_id(c["image"]),
               "containerID": "containerd://" + _digest(c["name"] + iso(started))[:64],
               "ready": ready, "started": True, "restartCount": restarts,
               "state": {"running": {"startedAt": iso(started)}}, "lastState": {}}
    if last:
        st["lastState"] = {"terminated": last}
    return st


def waiting(c: Obj, reason: str, message: str | None = None, *, restarts: int = 0,
            last: Obj | None = None, image_id: str | None = None) -> Obj:
    w: Obj = {"reason": reason}
    if message:
        w["message"] = message
    st: Obj = {"name": c["name"], "image": c["image"], "imageID": "",
               "ready": False, "started": False, "restartCount": restarts,
               "state": {"waiting": w}, "lastState": {}}
    if image_id is not None:
        st["imageID"] = image_id
    if last:
        st["lastState"] = {"terminated": last}
        st["imageID"] = image_id or _image_id(c["image"])
        st["containerID"] = "containerd://" + _digest(c["name"] + str(last))[:64]
    return st


def terminated(reason: str, code: int, started: datetime, finished: datetime) -> Obj:
    return {"exitCode": code, "reason": reason, "startedAt": iso(started),
            "finishedAt": iso(finished),
            "containerID": "containerd://" + _digest(reason + iso(started))[:64]}


def _digest(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()


def _image_id(image: str) -> str:
    repo = image.rsplit(":", 1)[0]
    return f"{repo}@sha256:{_digest(image)}"


def pod_conditions(scheduled: datetime, ready_at: datetime | None,
                   not_ready_since: datetime | None = None,
                   reason: str = "ContainersNotReady", message: str = "") -> list[Obj]:
    conds: list[Obj] = [
        {"type": "PodReadyToStartContainers", "status": "True",
         "lastTransitionTime": iso(scheduled + timedelta(seconds=2))},
        {"type": "Initialized", "status": "True",
         "lastTransitionTime": iso(scheduled + timedelta(seconds=1))},
    ]
    if ready_at and not not_ready_since:
        conds += [{"type": "Ready", "status": "True", "lastTransitionTime": iso(ready_at)},
                  {"type": "ContainersReady", "status": "True",
                   "lastTransitionTime": iso(ready_at)}]
    else:
        since = not_ready_since or scheduled + timedelta(seconds=2)
        for t in ("Ready", "ContainersReady"):
            conds.append({"type": t, "status": "False", "lastTransitionTime": iso(since),
                          "reason": reason, "message": message})
    conds.append({"type": "PodScheduled", "status": "True",
                  "lastTransitionTime": iso(scheduled)})
    return conds


@dataclass
class Workload:
    """A Deployment, StatefulSet or DaemonSet with its pods, built healthy."""

    kind: str
    ns: str
    name: str
    obj: Obj
    template: Obj
    pods: list[Obj] = field(default_factory=list)
    recs: list[PodRec] = field(default_factory=list)
    rs: list[Obj] = field(default_factory=list)
    uid: str = ""


def template(labels: dict[str, str], containers: list[Obj], *, volumes: list[Obj] | None = None,
             sa: str | None = None, extra: Obj | None = None,
             annotations: dict[str, str] | None = None) -> Obj:
    md: Obj = {"labels": dict(labels)}
    if annotations:
        md["annotations"] = dict(annotations)
    spec: Obj = {"containers": containers}
    if volumes:
        spec["volumes"] = volumes
    spec["restartPolicy"] = "Always"
    spec["terminationGracePeriodSeconds"] = 30
    spec["dnsPolicy"] = "ClusterFirst"
    if sa:
        spec["serviceAccountName"] = sa
    spec["schedulerName"] = "default-scheduler"
    if extra:
        spec.update(extra)
    return {"metadata": md, "spec": spec}


def make_pod(s: Story, ns: str, name: str, tmpl: Obj, owner: Obj, node_name: str | None,
             created: datetime, *, hash_label: dict[str, str] | None = None,
             statuses: list[Obj] | None = None, phase: str = "Running",
             conditions: list[Obj] | None = None, host_ip: str = "10.20.0.10",
             pod_ip: str | None = None, extra_status: Obj | None = None) -> Obj:
    import copy

    spec = copy.deepcopy(tmpl["spec"])
    if node_name:
        spec["nodeName"] = node_name
    labels = {**tmpl["metadata"]["labels"], **(hash_label or {})}
    md = meta(name, ns, created, s.uid(), labels=labels,
              annotations=tmpl["metadata"].get("annotations"), owner=owner)
    start = created + timedelta(seconds=1)
    if statuses is None:
        statuses = [running(c, created + timedelta(seconds=s.rng.randint(3, 9)))
                    for c in spec["containers"]]
    status: Obj = {"phase": phase}
    if conditions is None:
        if phase == "Running":
            ready_at = created + timedelta(seconds=s.rng.randint(10, 40))
            all_ready = all(st.get("ready") for st in statuses)
            conditions = pod_conditions(created, ready_at if all_ready else None)
        else:
            conditions = []
    status["conditions"] = conditions
    if node_name:
        status["hostIP"] = host_ip
        ip = pod_ip or s.ip()
        status["podIP"] = ip
        status["podIPs"] = [{"ip": ip}]
        status["startTime"] = iso(start)
        status["containerStatuses"] = statuses
    status["qosClass"] = _qos(spec["containers"])
    if extra_status:
        status.update(extra_status)
    return s.add({"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec,
                  "status": status})


def _qos(containers: list[Obj]) -> str:
    guaranteed = True
    for c in containers:
        r = c.get("resources", {})
        lim, req = r.get("limits", {}), r.get("requests", {})
        if not lim or lim.get("cpu") != req.get("cpu") or lim.get("memory") != req.get("memory"):
            guaranteed = False
    return "Guaranteed" if guaranteed else "Burstable"


def deployment(s: Story, ns: str, name: str, containers: list[Obj], *, replicas: int,
               nodes: list[tuple[str, str]], created: datetime, pods_since: datetime,
               revision: int = 1, labels: dict[str, str] | None = None,
               volumes: list[Obj] | None = None, sa: str | None = None,
               pod_extra: Obj | None = None, annotations: dict[str, str] | None = None,
               old_revisions: list[tuple[int, datetime, list[Obj]]] | None = None,
               cpu: float = 0.05, mem: float = 200 * MiB, strategy: Obj | None = None,
               tmpl_annotations: dict[str, str] | None = None,
               rollout_done: datetime | None = None) -> Workload:
    """A healthy Deployment: current ReplicaSet with `replicas` running pods.

    nodes: (node name, host IP) to place pods round-robin.
    old_revisions: (revision, created, containers) of scaled-down ReplicaSets.
    """
    app = labels or {"app.kubernetes.io/name": name}
    uid = s.uid()
    tmpl = template(app, containers, volumes=volumes, sa=sa, extra=pod_extra,
                    annotations=tmpl_annotations)
    done = rollout_done or pods_since + timedelta(minutes=2)
    dep: Obj = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": meta(name, ns, created, uid, labels=app, generation=revision + 2,
                         annotations={"deployment.kubernetes.io/revision": str(revision),
                                      **(annotations or {})}),
        "spec": {
            "replicas": replicas, "revisionHistoryLimit": 10,
            "selector": {"matchLabels": app},
            "strategy": strategy or {"type": "RollingUpdate", "rollingUpdate": {
                "maxSurge": "25%", "maxUnavailable": "25%"}},
            "progressDeadlineSeconds": 600,
            "template": tmpl,
        },
        "status": {
            "observedGeneration": revision + 2, "replicas": replicas,
            "updatedReplicas": replicas, "readyReplicas": replicas,
            "availableReplicas": replicas,
            "conditions": [
                {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
                 "message": "Deployment has minimum availability.",
                 "lastUpdateTime": iso(done), "lastTransitionTime": iso(done)},
                {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable",
                 "message": "",
                 "lastUpdateTime": iso(done), "lastTransitionTime": iso(done)},
            ],
        },
    }
    s.add(dep)
    w = Workload("Deployment", ns, name, dep, tmpl, uid=uid)
    for rev, rcreated, rcontainers in old_revisions or []:
        rt = template(app, rcontainers, volumes=volumes, sa=sa, extra=pod_extra,
                      annotations=tmpl_annotations)
        w.rs.append(replicaset(s, w, rt, rev, rcreated, 0, 0))
    h = s.suffix(10) if len(name) < 30 else s.suffix(9)
    dep["status"]["conditions"][1]["message"] = (
        f'ReplicaSet "{name}-{h}" has successfully progressed.')
    rs = replicaset(s, w, tmpl, revision, pods_since, replicas, replicas, hash_=h)
    w.rs.append(rs)
    for i in range(replicas):
        nd, hip = nodes[i % len(nodes)]
        pname = f"{name}-{h}-{s.suffix()}"
        created_i = pods_since + timedelta(seconds=5 * i + s.rng.randint(0, 4))
        p = make_pod(s, ns, pname, tmpl, owner_ref("ReplicaSet", rs["metadata"]["name"],
                                                  rs["metadata"]["uid"]),
                     nd, created_i, hash_label={"pod-template-hash": h}, host_ip=hip)
        w.pods.append(p)
        rec = PodRec(ns, pname, nd, [c["name"] for c in containers], created_i,
                     cpu=cpu * s.rng.uniform(0.8, 1.2), mem=mem * s.rng.uniform(0.9, 1.1))
        s.pods.append(rec)
        w.recs.append(rec)
    return w


def replicaset(s: Story, w: Workload, tmpl: Obj, revision: int, created: datetime,
               replicas: int, ready: int, hash_: str | None = None) -> Obj:
    import copy

    h = hash_ or s.suffix(10)
    t = copy.deepcopy(tmpl)
    t["metadata"]["labels"]["pod-template-hash"] = h
    sel = {**w.obj["spec"]["selector"]["matchLabels"], "pod-template-hash": h}
    status: Obj = {"replicas": replicas, "observedGeneration": 1}
    if replicas:
        status.update({"fullyLabeledReplicas": replicas, "readyReplicas": ready,
                       "availableReplicas": ready})
    rs = {
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": meta(f"{w.name}-{h}", w.ns, created, s.uid(),
                         labels={**w.obj["metadata"]["labels"], "pod-template-hash": h},
                         annotations={"deployment.kubernetes.io/desired-replicas":
                                      str(w.obj["spec"]["replicas"]),
                                      "deployment.kubernetes.io/max-replicas":
                                      str(w.obj["spec"]["replicas"] + 1),
                                      "deployment.kubernetes.io/revision": str(revision)},
                         owner=owner_ref("Deployment", w.name, w.uid), generation=1),
        "spec": {"replicas": replicas, "selector": {"matchLabels": sel}, "template": t},
        "status": status,
    }
    return s.add(rs)


def daemonset(s: Story, ns: str, name: str, containers: list[Obj], *,
              nodes: list[tuple[str, str]], created: datetime, pods_since: datetime,
              cpu: float = 0.02, mem: float = 60 * MiB, extra: Obj | None = None,
              metrics: bool = True) -> Workload:
    app = {"app.kubernetes.io/name": name}
    uid = s.uid()
    tmpl = template(app, containers, extra={"tolerations": [{"operator": "Exists"}],
                                            **(extra or {})})
    n = len(nodes)
    ds: Obj = {
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": meta(name, ns, created, uid, labels=app, generation=4,
                         annotations={"deprecated.daemonset.template.generation": "4"}),
        "spec": {"selector": {"matchLabels": app}, "template": tmpl,
                 "updateStrategy": {"type": "RollingUpdate",
                                    "rollingUpdate": {"maxUnavailable": 1}}},
        "status": {"currentNumberScheduled": n, "desiredNumberScheduled": n,
                   "numberAvailable": n, "numberReady": n, "updatedNumberScheduled": n,
                   "numberMisscheduled": 0, "observedGeneration": 4},
    }
    s.add(ds)
    w = Workload("DaemonSet", ns, name, ds, tmpl, uid=uid)
    for nd, hip in nodes:
        pname = f"{name}-{s.suffix()}"
        c = max(pods_since, _node_created(s, nd))
        created_i = c + timedelta(seconds=s.rng.randint(5, 60))
        p = make_pod(s, ns, pname, tmpl, owner_ref("DaemonSet", name, uid), nd, created_i,
                     hash_label={"controller-revision-hash": s.suffix(10)}, host_ip=hip,
                     pod_ip=hip if (extra or {}).get("hostNetwork") else None)
        w.pods.append(p)
        rec = PodRec(ns, pname, nd, [c_["name"] for c_ in containers], created_i,
                     cpu=cpu * s.rng.uniform(0.7, 1.3), mem=mem * s.rng.uniform(0.9, 1.1),
                     metrics=metrics)
        s.pods.append(rec)
        w.recs.append(rec)
    return w


def _node_created(s: Story, name: str) -> datetime:
    for o in s.objects:
        if o["kind"] == "Node" and o["metadata"]["name"] == name:
            return parse(o["metadata"]["creationTimestamp"])
    return s.now - timedelta(days=30)


def statefulset(s: Story, ns: str, name: str, containers: list[Obj], *, replicas: int,
                nodes: list[tuple[str, str]], created: datetime, pods_since: datetime,
                service: str | None = None, volume_claims: list[Obj] | None = None,
                cpu: float = 0.1, mem: float = 512 * MiB, extra: Obj | None = None,
                labels: dict[str, str] | None = None) -> Workload:
    app = labels or {"app.kubernetes.io/name": name}
    uid = s.uid()
    tmpl = template(app, containers, extra=extra)
    rev = f"{name}-{s.suffix(10)}"
    sts: Obj = {
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": meta(name, ns, created, uid, labels=app, generation=3),
        "spec": {"replicas": replicas, "selector": {"matchLabels": app},
                 "serviceName": service or f"{name}-headless", "template": tmpl,
                 "podManagementPolicy": "OrderedReady",
                 "updateStrategy": {"type": "RollingUpdate",
                                    "rollingUpdate": {"partition": 0}},
                 "revisionHistoryLimit": 10,
                 "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain",
                                                          "whenScaled": "Retain"}},
        "status": {"replicas": replicas, "readyReplicas": replicas,
                   "currentReplicas": replicas, "updatedReplicas": replicas,
                   "availableReplicas": replicas, "currentRevision": rev,
                   "updateRevision": rev, "observedGeneration": 3, "collisionCount": 0},
    }
    if volume_claims:
        sts["spec"]["volumeClaimTemplates"] = volume_claims
    s.add(sts)
    w = Workload("StatefulSet", ns, name, sts, tmpl, uid=uid)
    for i in range(replicas):
        nd, hip = nodes[i % len(nodes)]
        pname = f"{name}-{i}"
        created_i = pods_since + timedelta(seconds=40 * i + s.rng.randint(0, 9))
        p = make_pod(s, ns, pname, tmpl, owner_ref("StatefulSet", name, uid), nd, created_i,
                     hash_label={"controller-revision-hash": rev,
                                 "statefulset.kubernetes.io/pod-name": pname,
                                 "apps.kubernetes.io/pod-index": str(i)}, host_ip=hip)
        p["spec"]["hostname"] = pname
        p["spec"]["subdomain"] = service or f"{name}-headless"
        w.pods.append(p)
        rec = PodRec(ns, pname, nd, [c["name"] for c in containers], created_i,
                     cpu=cpu * s.rng.uniform(0.8, 1.2), mem=mem * s.rng.uniform(0.9, 1.1))
        s.pods.append(rec)
        w.recs.append(rec)
    return w


def service(s: Story, ns: str, name: str, selector: dict[str, str], port: int,
            target: int | str, created: datetime, pods: list[Obj] | None = None,
            headless: bool = False, not_ready: list[Obj] | None = None,
            port_name: str = "http") -> Obj:
    spec: Obj = {"type": "ClusterIP", "selector": selector,
                 "ports": [{"name": port_name, "port": port, "targetPort": target,
                            "protocol": "TCP"}]}
    if headless:
        spec["clusterIP"] = "None"
        spec["publishNotReadyAddresses"] = False
    else:
        spec["clusterIP"] = f"172.20.{s.rng.randint(0, 255)}.{s.rng.randint(1, 254)}"
    svc = s.add({"apiVersion": "v1", "kind": "Service",
                 "metadata": meta(name, ns, created, s.uid(), labels=selector),
                 "spec": spec, "status": {"loadBalancer": {}}})
    if pods is not None:
        tport = target if isinstance(target, int) else port
        subset: Obj = {}
        ready = [_addr(p) for p in pods]
        if ready:
            subset["addresses"] = ready
        if not_ready:
            subset["notReadyAddresses"] = [_addr(p) for p in not_ready]
        subset["ports"] = [{"name": port_name, "port": tport, "protocol": "TCP"}]
        s.add({"apiVersion": "v1", "kind": "Endpoints",
               "metadata": meta(name, ns, created, s.uid(), labels=selector),
               "subsets": [subset] if (ready or not_ready) else []})
    return svc


def _addr(p: Obj) -> Obj:
    return {"ip": p["status"].get("podIP", ""), "nodeName": p["spec"].get("nodeName", ""),
            "targetRef": {"kind": "Pod", "namespace": p["metadata"]["namespace"],
                          "name": p["metadata"]["name"], "uid": p["metadata"]["uid"]}}


def configmap(s: Story, ns: str, name: str, data: dict[str, str], created: datetime) -> Obj:
    return s.add({"apiVersion": "v1", "kind": "ConfigMap",
                  "metadata": meta(name, ns, created, s.uid()), "data": data})


def http_logs(s: Story, w: Workload, service_name: str, start: datetime, end: datetime,
              every: float, routes: list[tuple[str, str, int, float]],
              container_name: str | None = None, level: str = "info",
              fmt: str = "{method} {path} {status} {ms}ms") -> None:
    """Access-style logs for each pod of w: routes are (method, path, status, weight)."""
    weights = [r[3] for r in routes]
    for p in w.pods:
        ns = p["metadata"]["namespace"]
        pname = p["metadata"]["name"]
        cname = container_name or p["spec"]["containers"][0]["name"]
        since = max(start, parse(p["metadata"]["creationTimestamp"]))
        for t in s.spread(since, end, every):
            method, path, status, _ = s.rng.choices(routes, weights)[0]
            ms = int(s.rng.lognormvariate(3.0, 0.5))
            s.log(t, ns, pname, cname, service_name, level,
                  fmt.format(method=method, path=path, status=status, ms=ms),
                  http__request__method=method, url__path=path,
                  http__response__status_code=status, trace__id=s.hexid(32))


def lines(s: Story, w: Workload | list[Obj], service_name: str, start: datetime,
          end: datetime, every: float, templates: list[tuple[str, str, float]],
          container_name: str | None = None) -> None:
    """Free-form app lines for each pod: templates are (level, text, weight).

    A template may use {n}, {ms}, {hex}, {id} placeholders.
    """
    pods = w.pods if isinstance(w, Workload) else w
    weights = [t[2] for t in templates]
    for p in pods:
        ns = p["metadata"]["namespace"]
        pname = p["metadata"]["name"]
        cname = container_name or p["spec"]["containers"][0]["name"]
        since = max(start, parse(p["metadata"]["creationTimestamp"]))
        for t in s.spread(since, end, every):
            level, text, _ = s.rng.choices(templates, weights)[0]
            msg = text.format(n=s.rng.randint(1, 500), ms=int(s.rng.lognormvariate(3, 0.6)),
                              hex=s.hexid(8), id=s.rng.randint(100000, 999999))
            s.log(t, ns, pname, cname, service_name, level, msg)


def scenario(s: Story, *, title: str, report: str, category: str, kind: str, ns: str,
             name: str, evidence: list[str], fix: str) -> None:
    s.scenario = {
        "id": s.sid, "title": title, "now": iso(s.now), "report": report,
        "truth": {"category": category,
                  "culprit": {"kind": kind, "namespace": ns, "name": name},
                  "evidence": evidence, "fix": fix},
    }


def check_evidence(s: Story, root: Path) -> None:
    """Every evidence phrase must occur in some written file of the scenario (YAML files are
    read as the strings they hold)."""
    base = root / s.sid
    texts: list[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, str):
            texts.append(v)

    for path in sorted(base.rglob("*")):
        if not path.is_file() or path.name == "scenario.yaml":
            continue
        raw = path.read_text()
        texts.append(raw)
        if path.suffix == ".yaml":
            for doc in yaml.safe_load_all(raw):
                walk(doc)
    blob = "\n".join(texts)
    for phrase in s.scenario["truth"]["evidence"]:
        if phrase not in blob:
            raise ValueError(f"{s.sid}: evidence {phrase!r} not in the data")


def standard_cluster(s: Story, nodes: list[tuple[str, str]], created: datetime,
                     pods_since: datetime, *, cni: str = "aws-node") -> dict[str, Workload]:
    """kube-system, monitoring and logging basics present in every cluster."""
    out: dict[str, Workload] = {}
    for ns in ("default", "kube-system", "monitoring", "logging"):
        namespace(s, ns, created)
    out["cni"] = daemonset(
        s, "kube-system", cni,
        [container(cni, "602401143452.dkr.ecr.eu-west-1.amazonaws.com/amazon-k8s-cni:v1.18.3",
                   cpu="25m", mem="64Mi")],
        nodes=nodes, created=created, pods_since=pods_since, extra={"hostNetwork": True},
        metrics=False)
    out["kube-proxy"] = daemonset(
        s, "kube-system", "kube-proxy",
        [container("kube-proxy",
                   "602401143452.dkr.ecr.eu-west-1.amazonaws.com/eks/kube-proxy:v1.30.3",
                   cpu="100m", mem="64Mi")],
        nodes=nodes, created=created, pods_since=pods_since, extra={"hostNetwork": True},
        metrics=False)
    out["coredns"] = deployment(
        s, "kube-system", "coredns",
        [container("coredns", "602401143452.dkr.ecr.eu-west-1.amazonaws.com/eks/coredns:"
                   "v1.11.3-eksbuild.1", port=53, cpu="100m", mem="70Mi", mem_limit="170Mi",
                   args=["-conf", "/etc/coredns/Corefile"],
                   liveness=http_probe("/health", 8080, delay=60, period=10, timeout=5,
                                       failures=5),
                   readiness=http_probe("/ready", 8181, delay=0, period=10))],
        replicas=2, nodes=nodes[:2], created=created, pods_since=pods_since,
        labels={"k8s-app": "kube-dns"}, cpu=0.01, mem=28 * MiB)
    for r in out["coredns"].recs:
        r.metrics = False
    service(s, "kube-system", "kube-dns", {"k8s-app": "kube-dns"}, 53, 53, created,
            pods=out["coredns"].pods, port_name="dns")
    out["node-exporter"] = daemonset(
        s, "monitoring", "node-exporter",
        [container("node-exporter", "quay.io/prometheus/node-exporter:v1.8.2", port=9100,
                   cpu="50m", mem="64Mi", mem_limit="128Mi")],
        nodes=nodes, created=created, pods_since=pods_since,
        extra={"hostNetwork": True, "hostPID": True}, metrics=False)
    out["ksm"] = deployment(
        s, "monitoring", "kube-state-metrics",
        [container("kube-state-metrics",
                   "registry.k8s.io/kube-state-metrics/kube-state-metrics:v2.13.0",
                   port=8080, cpu="50m", mem="128Mi", mem_limit="512Mi")],
        replicas=1, nodes=nodes[1:2], created=created, pods_since=pods_since,
        cpu=0.04, mem=96 * MiB)
    out["prometheus"] = statefulset(
        s, "monitoring", "prometheus-k8s",
        [container("prometheus", "quay.io/prometheus/prometheus:v2.54.1", port=9090,
                   cpu="500m", mem="2Gi", mem_limit="6Gi",
                   readiness=http_probe("/-/ready", 9090, delay=0, period=5))],
        replicas=1, nodes=nodes[-1:], created=created, pods_since=pods_since,
        service="prometheus-operated", cpu=0.4, mem=2.6 * GiB)
    for r in out["prometheus"].recs + out["ksm"].recs:
        r.metrics = False
    out["filebeat"] = daemonset(
        s, "logging", "filebeat",
        [container("filebeat", "docker.elastic.co/beats/filebeat:8.15.1", cpu="100m",
                   mem="100Mi", mem_limit="300Mi")],
        nodes=nodes, created=created, pods_since=pods_since, metrics=False)
    return out


def eks_nodes(s: Story, specs: list[tuple[str, str, str, str, str]], created: datetime,
              ready_since: datetime, region: str = "eu-west-1") -> list[tuple[str, str]]:
    """specs: (zone, instance type, cpu, memory, nodegroup). Returns (name, ip) pairs."""
    out: list[tuple[str, str]] = []
    for zone, itype, cpu, mem, pool in specs:
        third = {"a": 32, "b": 64, "c": 96}[zone[-1]] + s.rng.randint(0, 31)
        ip = f"10.20.{third}.{s.rng.randint(4, 250)}"
        name = f"ip-{ip.replace('.', '-')}.{region}.compute.internal"
        node(s, name, zone=zone, region=region, itype=itype, cpu=cpu, mem=mem,
             created=created, ready_since=ready_since, pool=pool, ip=ip,
             alloc_cpu=f"{int(cpu) * 1000 - 90}m",
             alloc_mem=f"{int(mem[:-2]) - 1_400_000}Ki")
        out.append((name, ip))
    return out


def crashloop(start: datetime, end: datetime, run: float) -> list[tuple[datetime, datetime]]:
    """(started, exited) pairs of a container that exits `run` seconds after each start,
    restarted by the kubelet with its 10 s doubling back-off capped at 5 min."""
    out: list[tuple[datetime, datetime]] = []
    t = start
    delay = 10.0
    while t < end:
        out.append((t, t + timedelta(seconds=run)))
        t = t + timedelta(seconds=run + delay)
        delay = min(delay * 2, 300.0)
    return out
