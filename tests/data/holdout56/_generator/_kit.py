"""Shared builders for the holdout56 scenarios: Kubernetes objects, logs and metrics."""

from __future__ import annotations

import hashlib
import json
import math
import random
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

Obj = dict[str, Any]
Labels = dict[str, str]

HASH_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
STEP_SECONDS = 120
WINDOW_MINUTES = 60


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def parse_time(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def iso(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_ms(dt: datetime) -> str:
    dt = dt.astimezone(UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def klog_time(dt: datetime) -> str:
    """The klog header time, as in ``E1130 08:41:27.113502``."""
    return dt.strftime("%m%d %H:%M:%S.") + f"{dt.microsecond:06d}"


def clf_time(dt: datetime) -> str:
    return dt.strftime("%d/%b/%Y:%H:%M:%S +0000")


def fmt_value(value: float) -> str:
    if float(value).is_integer():
        return str(int(value))
    text = f"{value:.4f}".rstrip("0").rstrip(".")
    return text or "0"


class _LiteralStr(str):
    pass


def _literal_representer(dumper: yaml.SafeDumper, data: _LiteralStr) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(data), style="|")


yaml.SafeDumper.add_representer(_LiteralStr, _literal_representer)


@dataclass
class PodRef:
    name: str
    ip: str
    node: str
    uid: str


@dataclass
class Scenario:
    """Everything one scenario writes; built in memory, then written at once."""

    sid: str
    now_text: str
    seed: int
    objects: list[Obj] = field(default_factory=list)
    logs: list[Obj] = field(default_factory=list)
    pod_logs: dict[tuple[str, str, str, bool], list[tuple[datetime, str]]] = field(
        default_factory=dict
    )
    metrics: Metrics = field(init=False)
    rng: random.Random = field(init=False)
    now: datetime = field(init=False)
    _ip_counters: dict[str, int] = field(default_factory=dict)
    _node_index: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.now = parse_time(self.now_text)
        self.metrics = Metrics(self)

    # ----- time -----
    def ago(
        self, minutes: float = 0.0, hours: float = 0.0, days: float = 0.0, seconds: float = 0.0
    ) -> datetime:
        return self.now - timedelta(minutes=minutes, hours=hours, days=days, seconds=seconds)

    def steps(self) -> list[datetime]:
        count = WINDOW_MINUTES * 60 // STEP_SECONDS
        return [self.now - timedelta(seconds=STEP_SECONDS * i) for i in range(count, -1, -1)]

    def jitter(self, dt: datetime, seconds: float) -> datetime:
        return dt + timedelta(seconds=self.rng.uniform(0, seconds))

    def spread(self, start: datetime, end: datetime, count: int) -> list[datetime]:
        span = (end - start).total_seconds()
        moments = [start + timedelta(seconds=self.rng.uniform(0, span)) for _ in range(count)]
        return sorted(moments)

    def poisson_times(
        self, start: datetime, end: datetime, per_minute: Callable[[datetime], float]
    ) -> list[datetime]:
        """Moments of a Poisson process whose rate may change over time."""
        out: list[datetime] = []
        cursor = start
        while cursor < end:
            nxt = min(cursor + timedelta(minutes=1), end)
            expected = per_minute(cursor) * (nxt - cursor).total_seconds() / 60.0
            count = self._poisson(expected)
            out.extend(self.spread(cursor, nxt, count))
            cursor = nxt
        return out

    def _poisson(self, lam: float) -> int:
        if lam <= 0:
            return 0
        if lam > 30:
            return max(0, round(self.rng.gauss(lam, math.sqrt(lam))))
        limit = math.exp(-lam)
        k = 0
        p = 1.0
        while True:
            p *= self.rng.random()
            if p <= limit:
                return k
            k += 1

    # ----- ids -----
    def uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def rs_hash(self) -> str:
        return "".join(self.rng.choice(HASH_ALPHABET) for _ in range(10)).replace("b", "8", 1)

    def pod_suffix(self) -> str:
        return "".join(self.rng.choice(HASH_ALPHABET) for _ in range(5))

    def hexid(self, n: int = 16) -> str:
        return "".join(self.rng.choice("0123456789abcdef") for _ in range(n))

    def pod_ip(self, node: str) -> str:
        index = self._node_index.setdefault(node, len(self._node_index) + 1)
        count = self._ip_counters.get(node, 10) + self.rng.randint(1, 9)
        self._ip_counters[node] = count
        return f"10.42.{index * 4 + count // 250}.{count % 250 + 2}"

    # ----- content -----
    def add(self, *objs: Obj) -> None:
        self.objects.extend(objs)

    def log(
        self,
        when: datetime,
        namespace: str,
        pod: str,
        container: str,
        service: str,
        level: str,
        message: str,
        node: str = "",
        **extra: Any,
    ) -> None:
        doc: Obj = {
            "@timestamp": iso_ms(when),
            "message": message,
            "log.level": level,
            "service.name": service,
            "kubernetes.namespace": namespace,
            "kubernetes.pod.name": pod,
            "kubernetes.container.name": container,
        }
        if node:
            doc["kubernetes.node.name"] = node
        for key, value in extra.items():
            doc[key.replace("__", ".")] = value
        self.logs.append(doc)

    def pod_log(
        self,
        namespace: str,
        pod: str,
        container: str,
        when: datetime,
        line: str,
        previous: bool = False,
    ) -> None:
        self.pod_logs.setdefault((namespace, pod, container, previous), []).append((when, line))

    def event(
        self,
        namespace: str,
        kind: str,
        name: str,
        reason: str,
        message: str,
        first: datetime,
        last: datetime | None = None,
        count: int = 1,
        etype: str = "Normal",
        component: str = "",
        host: str = "",
        api_version: str = "v1",
        field_path: str = "",
        obj_namespace: str | None = None,
    ) -> None:
        last = last or first
        involved: Obj = {"apiVersion": api_version, "kind": kind, "name": name}
        ns_of_obj = namespace if obj_namespace is None else obj_namespace
        if ns_of_obj:
            involved["namespace"] = ns_of_obj
        if field_path:
            involved["fieldPath"] = field_path
        source: Obj = {"component": component or default_component(reason)}
        if host:
            source["host"] = host
        self.add(
            {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {
                    "name": f"{name}.{self.hexid(16)}",
                    "namespace": namespace,
                    "creationTimestamp": iso(first),
                },
                "involvedObject": involved,
                "reason": reason,
                "message": message,
                "type": etype,
                "count": count,
                "firstTimestamp": iso(first),
                "lastTimestamp": iso(last),
                "source": source,
            }
        )

    # ----- writing -----
    def write(
        self,
        root: Path,
        title: str,
        report: str,
        category: str,
        culprit: tuple[str, str, str],
        evidence: list[str],
        fix: str,
    ) -> None:
        folder = root / self.sid
        folder.mkdir(parents=True, exist_ok=True)
        for stale in sorted(folder.rglob("*"), reverse=True):
            if stale.is_file():
                stale.unlink()
            elif stale.is_dir():
                stale.rmdir()
        kind, namespace, name = culprit
        doc: Obj = {
            "id": self.sid,
            "title": title,
            "now": self.now_text,
            "report": _LiteralStr(report.strip() + "\n"),
            "truth": {
                "category": category,
                "culprit": {"kind": kind, "namespace": namespace, "name": name},
                "evidence": evidence,
                "fix": fix,
            },
        }
        (folder / "scenario.yaml").write_text(
            yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100)
        )
        floor = self.now - timedelta(days=6, hours=22)
        for obj in self.objects:
            if "status" in obj:
                obj["status"] = _clamp_times(obj["status"], floor)
        (folder / "cluster.yaml").write_text(
            yaml.safe_dump_all(self.objects, sort_keys=False, width=1000)
        )
        lines = sorted(self.logs, key=lambda d: d["@timestamp"])
        (folder / "logs.ndjson").write_text(
            "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in lines)
        )
        (folder / "metrics.om").write_text(self.metrics.render())
        for (ns, pod, container, previous), entries in sorted(self.pod_logs.items()):
            suffix = ".previous.log" if previous else ".log"
            path = folder / "pod-logs" / ns / pod / f"{container}{suffix}"
            path.parent.mkdir(parents=True, exist_ok=True)
            entries.sort(key=lambda e: e[0])
            path.write_text("".join(line + "\n" for _, line in entries))


def _clamp_times(value: Any, floor: datetime) -> Any:
    """Status times older than the scenario's week are moved just inside it (the format
    wants every status time within the week before ``now``)."""
    if isinstance(value, dict):
        return {key: _clamp_times(val, floor) for key, val in value.items()}
    if isinstance(value, list):
        return [_clamp_times(val, floor) for val in value]
    if isinstance(value, str) and len(value) == 20 and value.endswith("Z") and value[10] == "T":
        try:
            when = parse_time(value)
        except ValueError:
            return value
        if when < floor:
            return iso(floor + timedelta(seconds=int(when.timestamp()) % 5400))
    return value


def default_component(reason: str) -> str:
    kubelet = {
        "Pulled",
        "Pulling",
        "Created",
        "Started",
        "Killing",
        "BackOff",
        "Unhealthy",
        "FailedMount",
        "SandboxChanged",
    }
    if reason in kubelet:
        return "kubelet"
    if reason in {"Scheduled", "FailedScheduling"}:
        return "default-scheduler"
    if reason == "ScalingReplicaSet":
        return "deployment-controller"
    if reason in {"SuccessfulCreate", "SuccessfulDelete"}:
        return "replicaset-controller"
    return "kube-controller-manager"


# ---------------------------------------------------------------------------------------
# metrics


@dataclass
class _Family:
    name: str
    mtype: str
    help: str
    series: dict[tuple[tuple[str, str], ...], list[tuple[int, float]]] = field(default_factory=dict)
    hist: dict[
        tuple[tuple[str, str], ...], list[tuple[int, list[tuple[str, float]], float, float]]
    ] = field(default_factory=dict)


class Metrics:
    def __init__(self, sc: Scenario) -> None:
        self.sc = sc
        self.families: dict[str, _Family] = {}

    def _family(self, name: str, mtype: str, help_text: str) -> _Family:
        fam = self.families.get(name)
        if fam is None:
            fam = _Family(name, mtype, help_text)
            self.families[name] = fam
        return fam

    def gauge(
        self, name: str, labels: Labels, fn: Callable[[datetime], float | None], help_text: str = ""
    ) -> None:
        fam = self._family(name, "gauge", help_text or name.replace("_", " "))
        points = fam.series.setdefault(tuple(labels.items()), [])
        for t in self.sc.steps():
            value = fn(t)
            if value is not None:
                points.append((int(t.timestamp()), float(value)))

    def counter(
        self,
        name: str,
        labels: Labels,
        rate: Callable[[datetime], float],
        start: float = 0.0,
        help_text: str = "",
        resets: Iterable[datetime] = (),
        integer: bool = False,
    ) -> None:
        """A counter whose per-second rate is ``rate(t)``; ``name`` has no ``_total``."""
        fam = self._family(name, "counter", help_text or name.replace("_", " "))
        points = fam.series.setdefault(tuple(labels.items()), [])
        reset_list = sorted(resets)
        value = start
        prev: datetime | None = None
        for t in self.sc.steps():
            if prev is not None:
                if any(prev < r <= t for r in reset_list):
                    value = rate(t) * (t - max(r for r in reset_list if r <= t)).total_seconds()
                else:
                    value += max(0.0, rate(t)) * STEP_SECONDS
            prev = t
            points.append((int(t.timestamp()), float(math.floor(value)) if integer else value))

    def histogram(
        self,
        name: str,
        labels: Labels,
        rate: Callable[[datetime], float],
        median: Callable[[datetime], float],
        sigma: float,
        buckets: list[float],
        start_count: float = 0.0,
        help_text: str = "",
    ) -> None:
        """Cumulative lognormal-ish histogram; median in seconds."""
        fam = self._family(name, "histogram", help_text or name.replace("_", " "))
        points = fam.hist.setdefault(tuple(labels.items()), [])
        cum = [start_count * _lognorm_cdf(le, 0.05, sigma) for le in buckets]
        total = start_count
        total_sum = start_count * 0.05
        prev: datetime | None = None
        for t in self.sc.steps():
            if prev is not None:
                n = max(0.0, rate(t)) * STEP_SECONDS
                m = median(t)
                for i, le in enumerate(buckets):
                    cum[i] += n * _lognorm_cdf(le, m, sigma)
                total += n
                total_sum += n * m * math.exp(sigma * sigma / 2)
            prev = t
            bucket_vals = [
                (fmt_le(le), float(math.floor(c))) for le, c in zip(buckets, cum, strict=True)
            ]
            bucket_vals.append(("+Inf", float(math.floor(total))))
            points.append((int(t.timestamp()), bucket_vals, float(math.floor(total)), total_sum))

    def render(self) -> str:
        out: list[str] = []
        for fam in self.families.values():
            out.append(f"# HELP {fam.name} {fam.help}")
            out.append(f"# TYPE {fam.name} {fam.mtype}")
            if fam.mtype == "histogram":
                for key, hpoints in fam.hist.items():
                    base = list(key)
                    for ts, bucket_vals, count, total_sum in hpoints:
                        for le, val in bucket_vals:
                            lab = _labels([*base, ("le", le)])
                            out.append(f"{fam.name}_bucket{lab} {fmt_value(val)} {ts}")
                        out.append(f"{fam.name}_count{_labels(base)} {fmt_value(count)} {ts}")
                        out.append(f"{fam.name}_sum{_labels(base)} {fmt_value(total_sum)} {ts}")
                continue
            sample = f"{fam.name}_total" if fam.mtype == "counter" else fam.name
            for key, points in fam.series.items():
                lab = _labels(list(key))
                for ts, val in points:
                    out.append(f"{sample}{lab} {fmt_value(val)} {ts}")
        out.append("# EOF")
        return "\n".join(out) + "\n"


def fmt_le(le: float) -> str:
    return repr(float(le))


def _labels(pairs: list[tuple[str, str]]) -> str:
    if not pairs:
        return ""
    inner = ",".join(
        f'{k}="{v.replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"'
        for k, v in pairs
    )
    return "{" + inner + "}"


def _lognorm_cdf(x: float, median: float, sigma: float) -> float:
    if x <= 0:
        return 0.0
    z = (math.log(x) - math.log(max(median, 1e-6))) / sigma
    return 0.5 * (1 + math.erf(z / math.sqrt(2)))


def ramp(t: datetime, start: datetime, end: datetime, low: float, high: float) -> float:
    """Linear from ``low`` at ``start`` to ``high`` at ``end``, flat outside."""
    if t <= start:
        return low
    if t >= end:
        return high
    frac = (t - start).total_seconds() / (end - start).total_seconds()
    return low + (high - low) * frac


def wobble(sc: Scenario, base: float, spread: float) -> Callable[[datetime], float]:
    """A deterministic slightly noisy level; the noise is fixed when the function is built."""
    noise = {int(t.timestamp()): sc.rng.uniform(-spread, spread) for t in sc.steps()}

    def fn(t: datetime) -> float:
        return max(0.0, base * (1 + noise.get(int(t.timestamp()), 0.0)))

    return fn


def noisy(
    sc: Scenario, fn: Callable[[datetime], float], spread: float
) -> Callable[[datetime], float]:
    noise = {int(t.timestamp()): sc.rng.uniform(-spread, spread) for t in sc.steps()}

    def wrapped(t: datetime) -> float:
        return max(0.0, fn(t) * (1 + noise.get(int(t.timestamp()), 0.0)))

    return wrapped


# ---------------------------------------------------------------------------------------
# Kubernetes objects

GI = 1024**3
MI = 1024**2


def namespace(name: str, created: datetime, labels: Labels | None = None) -> Obj:
    meta: Obj = {
        "name": name,
        "creationTimestamp": iso(created),
        "labels": {"kubernetes.io/metadata.name": name, **(labels or {})},
    }
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": meta,
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


def node_condition(
    ctype: str, status: str, reason: str, message: str, heartbeat: datetime, transition: datetime
) -> Obj:
    return {
        "type": ctype,
        "status": status,
        "lastHeartbeatTime": iso(heartbeat),
        "lastTransitionTime": iso(transition),
        "reason": reason,
        "message": message,
    }


def healthy_conditions(heartbeat: datetime, since: datetime) -> list[Obj]:
    return [
        node_condition(
            "MemoryPressure",
            "False",
            "KubeletHasSufficientMemory",
            "kubelet has sufficient memory available",
            heartbeat,
            since,
        ),
        node_condition(
            "DiskPressure",
            "False",
            "KubeletHasNoDiskPressure",
            "kubelet has no disk pressure",
            heartbeat,
            since,
        ),
        node_condition(
            "PIDPressure",
            "False",
            "KubeletHasSufficientPID",
            "kubelet has sufficient PID available",
            heartbeat,
            since,
        ),
        node_condition(
            "Ready", "True", "KubeletReady", "kubelet is posting ready status", heartbeat, since
        ),
    ]


def node(
    name: str,
    zone: str,
    created: datetime,
    heartbeat: datetime,
    instance_type: str = "m6i.xlarge",
    nodegroup: str = "ng-general",
    cpu: str = "4",
    memory_ki: int = 16_000_000,
    allocatable_cpu: str = "3920m",
    allocatable_mem_ki: int = 14_900_000,
    kubelet_version: str = "v1.29.8-eks-a737599",
    runtime: str = "containerd://1.7.22",
    region: str = "eu-west-1",
    conditions: list[Obj] | None = None,
    taints: list[Obj] | None = None,
    extra_labels: Labels | None = None,
    annotations: dict[str, str] | None = None,
    internal_ip: str = "",
) -> Obj:
    labels: Labels = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/os": "linux",
        "kubernetes.io/hostname": name,
        "node.kubernetes.io/instance-type": instance_type,
        "topology.kubernetes.io/region": region,
        "topology.kubernetes.io/zone": zone,
        "eks.amazonaws.com/nodegroup": nodegroup,
        "eks.amazonaws.com/capacityType": "ON_DEMAND",
        **(extra_labels or {}),
    }
    ip = internal_ip or name.split(".")[0].removeprefix("ip-").replace("-", ".")
    spec: Obj = {"providerID": f"aws:///{zone}/i-0{digest(name)[:16]}"}
    if taints:
        spec["taints"] = taints
    meta: Obj = {
        "name": name,
        "creationTimestamp": iso(created),
        "labels": labels,
        "annotations": {
            "node.alpha.kubernetes.io/ttl": "0",
            "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            **(annotations or {}),
        },
    }
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": meta,
        "spec": spec,
        "status": {
            "addresses": [
                {"type": "InternalIP", "address": ip},
                {"type": "Hostname", "address": name},
            ],
            "capacity": {
                "cpu": cpu,
                "ephemeral-storage": "83873772Ki",
                "memory": f"{memory_ki}Ki",
                "pods": "58",
            },
            "allocatable": {
                "cpu": allocatable_cpu,
                "ephemeral-storage": "76224326324",
                "memory": f"{allocatable_mem_ki}Ki",
                "pods": "58",
            },
            "conditions": conditions or healthy_conditions(heartbeat, created),
            "nodeInfo": {
                "architecture": "amd64",
                "containerRuntimeVersion": runtime,
                "kernelVersion": "5.10.226-214.880.amzn2.x86_64",
                "kubeProxyVersion": kubelet_version,
                "kubeletVersion": kubelet_version,
                "operatingSystem": "linux",
                "osImage": "Amazon Linux 2",
            },
        },
    }


def container(
    name: str,
    image: str,
    cpu_req: str = "100m",
    mem_req: str = "128Mi",
    cpu_lim: str | None = None,
    mem_lim: str | None = "256Mi",
    ports: list[tuple[str, int]] | None = None,
    env: list[tuple[str, str]] | None = None,
    args: list[str] | None = None,
    readiness: Obj | None = None,
    liveness: Obj | None = None,
    security: Obj | None = None,
    mounts: list[tuple[str, str]] | None = None,
) -> Obj:
    limits: Obj = {}
    if cpu_lim:
        limits["cpu"] = cpu_lim
    if mem_lim:
        limits["memory"] = mem_lim
    spec: Obj = {"name": name, "image": image}
    if args:
        spec["args"] = args
    if ports:
        spec["ports"] = [{"name": n, "containerPort": p, "protocol": "TCP"} for n, p in ports]
    if env:
        spec["env"] = [{"name": k, "value": v} for k, v in env]
    res: Obj = {"requests": {"cpu": cpu_req, "memory": mem_req}}
    if limits:
        res["limits"] = limits
    spec["resources"] = res
    if readiness:
        spec["readinessProbe"] = readiness
    if liveness:
        spec["livenessProbe"] = liveness
    if security:
        spec["securityContext"] = security
    if mounts:
        spec["volumeMounts"] = [{"name": n, "mountPath": p} for n, p in mounts]
    spec["imagePullPolicy"] = "IfNotPresent"
    spec["terminationMessagePath"] = "/dev/termination-log"
    spec["terminationMessagePolicy"] = "File"
    return spec


def http_probe(path: str, port: int | str, period: int = 10, delay: int = 5) -> Obj:
    return {
        "httpGet": {"path": path, "port": port, "scheme": "HTTP"},
        "initialDelaySeconds": delay,
        "periodSeconds": period,
        "timeoutSeconds": 2,
        "successThreshold": 1,
        "failureThreshold": 3,
    }


def template(
    labels: Labels,
    containers: list[Obj],
    annotations: dict[str, str] | None = None,
    extra_spec: Obj | None = None,
) -> Obj:
    meta: Obj = {"labels": dict(labels)}
    if annotations:
        meta["annotations"] = dict(annotations)
    spec: Obj = {
        "containers": containers,
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "schedulerName": "default-scheduler",
        **(extra_spec or {}),
    }
    return {"metadata": meta, "spec": spec}


def owner(kind: str, name: str, uid: str, api_version: str = "apps/v1") -> Obj:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": name,
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def running_status(
    name: str,
    image: str,
    started: datetime,
    restarts: int = 0,
    ready: bool = True,
    last_terminated: Obj | None = None,
) -> Obj:
    status: Obj = {
        "name": name,
        "image": image,
        "imageID": f"{image.split(':')[0]}@sha256:{digest(image)}",
        "ready": ready,
        "started": True,
        "restartCount": restarts,
        "state": {"running": {"startedAt": iso(started)}},
        "lastState": {"terminated": last_terminated} if last_terminated else {},
    }
    return status


def terminated(reason: str, exit_code: int, started: datetime, finished: datetime) -> Obj:
    return {
        "exitCode": exit_code,
        "reason": reason,
        "startedAt": iso(started),
        "finishedAt": iso(finished),
    }


def waiting_status(
    name: str,
    image: str,
    reason: str,
    message: str,
    restarts: int = 0,
    last_terminated: Obj | None = None,
) -> Obj:
    return {
        "name": name,
        "image": image,
        "imageID": f"{image.split(':')[0]}@sha256:{digest(image)}",
        "ready": False,
        "started": False,
        "restartCount": restarts,
        "state": {"waiting": {"reason": reason, "message": message}},
        "lastState": {"terminated": last_terminated} if last_terminated else {},
    }


def pod_conditions(
    scheduled: datetime, ready_since: datetime | None, ready: bool = True, reason: str = ""
) -> list[Obj]:
    ready_time = ready_since or scheduled
    rstatus = "True" if ready else "False"
    out: list[Obj] = [
        {"type": "Initialized", "status": "True", "lastTransitionTime": iso(scheduled)},
        {"type": "Ready", "status": rstatus, "lastTransitionTime": iso(ready_time)},
        {"type": "ContainersReady", "status": rstatus, "lastTransitionTime": iso(ready_time)},
        {"type": "PodScheduled", "status": "True", "lastTransitionTime": iso(scheduled)},
    ]
    if not ready and reason:
        out[1]["reason"] = reason
        out[2]["reason"] = reason
    return out


def pod(
    namespace: str,
    name: str,
    uid: str,
    owner_ref: Obj | None,
    tmpl: Obj,
    node_name: str,
    ip: str,
    host_ip: str,
    created: datetime,
    statuses: list[Obj],
    phase: str = "Running",
    conditions: list[Obj] | None = None,
    extra_labels: Labels | None = None,
    qos: str = "Burstable",
    deletion: datetime | None = None,
) -> Obj:
    meta: Obj = {
        "name": name,
        "namespace": namespace,
        "uid": uid,
        "creationTimestamp": iso(created),
        "labels": {**tmpl["metadata"].get("labels", {}), **(extra_labels or {})},
    }
    if tmpl["metadata"].get("annotations"):
        meta["annotations"] = dict(tmpl["metadata"]["annotations"])
    if owner_ref:
        meta["ownerReferences"] = [owner_ref]
    if deletion:
        meta["deletionTimestamp"] = iso(deletion)
        meta["deletionGracePeriodSeconds"] = 30
    spec = json.loads(json.dumps(tmpl["spec"]))
    if node_name:
        spec["nodeName"] = node_name
    spec.setdefault("serviceAccountName", "default")
    status: Obj = {"phase": phase, "qosClass": qos}
    if conditions is not None:
        status["conditions"] = conditions
    else:
        ready = all(s.get("ready") for s in statuses) if statuses else False
        status["conditions"] = pod_conditions(created, created + timedelta(seconds=12), ready)
    if host_ip:
        status["hostIP"] = host_ip
    if ip:
        status["podIP"] = ip
        status["podIPs"] = [{"ip": ip}]
    status["startTime"] = iso(created)
    if statuses:
        status["containerStatuses"] = statuses
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def node_ip(node_obj_name: str) -> str:
    return node_obj_name.split(".")[0].removeprefix("ip-").replace("-", ".")


@dataclass
class Workload:
    kind: str
    namespace: str
    name: str
    uid: str
    pods: list[PodRef]
    obj: Obj


def deployment_obj(
    namespace: str,
    name: str,
    uid: str,
    created: datetime,
    replicas: int,
    tmpl: Obj,
    revision: int,
    ready: int | None = None,
    updated: int | None = None,
    available: int | None = None,
    unavailable: int = 0,
    generation: int | None = None,
    annotations: dict[str, str] | None = None,
    labels: Labels | None = None,
    progressing: tuple[str, str, str, datetime] | None = None,
    available_cond: tuple[str, str, str, datetime] | None = None,
    new_rs: str = "",
    extra_meta: Obj | None = None,
) -> Obj:
    ready = replicas if ready is None else ready
    updated = replicas if updated is None else updated
    available = ready if available is None else available
    prog = progressing or (
        "True",
        "NewReplicaSetAvailable",
        f'ReplicaSet "{new_rs}" has successfully progressed.',
        created,
    )
    avail = available_cond or (
        "True",
        "MinimumReplicasAvailable",
        "Deployment has minimum availability.",
        created,
    )
    meta: Obj = {
        "name": name,
        "namespace": namespace,
        "uid": uid,
        "creationTimestamp": iso(created),
        "generation": generation or revision,
        "labels": labels or {"app.kubernetes.io/name": name},
        "annotations": {"deployment.kubernetes.io/revision": str(revision), **(annotations or {})},
        **(extra_meta or {}),
    }
    status: Obj = {
        "observedGeneration": generation or revision,
        "replicas": max(replicas, updated + (0 if updated >= replicas else replicas - updated)),
        "updatedReplicas": updated,
        "readyReplicas": ready,
        "availableReplicas": available,
        "conditions": [
            {
                "type": "Available",
                "status": avail[0],
                "reason": avail[1],
                "message": avail[2],
                "lastUpdateTime": iso(avail[3]),
                "lastTransitionTime": iso(avail[3]),
            },
            {
                "type": "Progressing",
                "status": prog[0],
                "reason": prog[1],
                "message": prog[2],
                "lastUpdateTime": iso(prog[3]),
                "lastTransitionTime": iso(prog[3]),
            },
        ],
    }
    if unavailable:
        status["unavailableReplicas"] = unavailable
    if ready == 0:
        status.pop("readyReplicas")
    if available == 0:
        status.pop("availableReplicas")
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta,
        "spec": {
            "replicas": replicas,
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600,
            "selector": {"matchLabels": dict(tmpl["metadata"]["labels"])},
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
            },
            "template": tmpl,
        },
        "status": status,
    }


def replicaset_obj(
    namespace: str,
    deploy: str,
    deploy_uid: str,
    pod_hash: str,
    uid: str,
    created: datetime,
    tmpl: Obj,
    revision: int,
    replicas: int,
    ready: int | None = None,
    change_cause: str = "",
) -> Obj:
    ready = replicas if ready is None else ready
    labels = {**tmpl["metadata"]["labels"], "pod-template-hash": pod_hash}
    rs_tmpl = json.loads(json.dumps(tmpl))
    rs_tmpl["metadata"]["labels"] = labels
    ann = {
        "deployment.kubernetes.io/desired-replicas": str(replicas),
        "deployment.kubernetes.io/max-replicas": str(replicas + max(1, replicas // 4)),
        "deployment.kubernetes.io/revision": str(revision),
    }
    if change_cause:
        ann["kubernetes.io/change-cause"] = change_cause
    status: Obj = {"replicas": replicas, "observedGeneration": 1}
    if replicas:
        status["fullyLabeledReplicas"] = replicas
    if ready:
        status["readyReplicas"] = ready
        status["availableReplicas"] = ready
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": f"{deploy}-{pod_hash}",
            "namespace": namespace,
            "uid": uid,
            "creationTimestamp": iso(created),
            "labels": labels,
            "annotations": ann,
            "ownerReferences": [owner("Deployment", deploy, deploy_uid)],
        },
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": rs_tmpl,
        },
        "status": status,
    }


def simple_deployment(
    sc: Scenario,
    namespace: str,
    name: str,
    containers: list[Obj],
    nodes: list[str],
    replicas: int = 2,
    created: datetime | None = None,
    rolled: datetime | None = None,
    revision: int = 1,
    port: int | None = None,
    restarts: dict[int, tuple[int, Obj]] | None = None,
    annotations: dict[str, str] | None = None,
    extra_spec: Obj | None = None,
    labels: Labels | None = None,
    service: bool = True,
    old_revisions: list[tuple[int, datetime, list[Obj]]] | None = None,
) -> Workload:
    """A healthy Deployment with its ReplicaSet, pods, and optionally Service/Endpoints.

    ``restarts`` maps a pod index to (restart count, last terminated state).
    ``old_revisions`` adds scaled-down ReplicaSets: (revision, created, containers).
    """
    created = created or sc.ago(days=120)
    rolled = rolled or created
    base_labels = labels or {"app.kubernetes.io/name": name}
    tmpl = template(base_labels, containers, annotations, extra_spec)
    d_uid = sc.uid()
    pod_hash = sc.rs_hash()
    rs_name = f"{name}-{pod_hash}"
    rs_uid = sc.uid()
    dep = deployment_obj(
        namespace,
        name,
        d_uid,
        created,
        replicas,
        tmpl,
        revision,
        new_rs=rs_name,
        labels=base_labels,
    )
    dep["status"]["conditions"][0]["lastTransitionTime"] = iso(rolled)
    dep["status"]["conditions"][1]["lastUpdateTime"] = iso(rolled + timedelta(seconds=50))
    objs: list[Obj] = [dep]
    for rev, rev_created, rev_containers in old_revisions or []:
        old_tmpl = template(base_labels, rev_containers, annotations, extra_spec)
        objs.append(
            replicaset_obj(
                namespace, name, d_uid, sc.rs_hash(), sc.uid(), rev_created, old_tmpl, rev, 0
            )
        )
    rs = replicaset_obj(namespace, name, d_uid, pod_hash, rs_uid, rolled, tmpl, revision, replicas)
    objs.append(rs)
    refs: list[PodRef] = []
    for i in range(replicas):
        node_name = nodes[i % len(nodes)]
        pname = f"{rs_name}-{sc.pod_suffix()}"
        ip = sc.pod_ip(node_name)
        uid = sc.uid()
        start = rolled + timedelta(seconds=sc.rng.randint(2, 40))
        restart_count, last = (restarts or {}).get(i, (0, None))
        statuses = [
            running_status(
                c["name"],
                c["image"],
                start + timedelta(seconds=4)
                if not last
                else parse_time(last["finishedAt"]) + timedelta(seconds=1),
                restart_count,
                True,
                last,
            )
            for c in containers
        ]
        p = pod(
            namespace,
            pname,
            uid,
            owner("ReplicaSet", rs_name, rs_uid),
            rs["spec"]["template"],
            node_name,
            ip,
            node_ip(node_name),
            start,
            statuses,
        )
        objs.append(p)
        refs.append(PodRef(pname, ip, node_name, uid))
    if service and port:
        objs.extend(service_and_endpoints(sc, namespace, name, base_labels, port, refs))
    sc.add(*objs)
    return Workload("Deployment", namespace, name, d_uid, refs, dep)


def service_and_endpoints(
    sc: Scenario,
    namespace: str,
    name: str,
    selector: Labels,
    port: int,
    ready: list[PodRef],
    not_ready: list[PodRef] | None = None,
    created: datetime | None = None,
    port_name: str = "http",
    service_port: int | None = None,
) -> list[Obj]:
    created = created or sc.ago(days=200)
    cluster_ip = f"172.20.{sc.rng.randint(1, 250)}.{sc.rng.randint(2, 250)}"
    svc: Obj = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "creationTimestamp": iso(created),
            "labels": dict(selector),
        },
        "spec": {
            "type": "ClusterIP",
            "clusterIP": cluster_ip,
            "clusterIPs": [cluster_ip],
            "selector": dict(selector),
            "ports": [
                {
                    "name": port_name,
                    "port": service_port or port,
                    "targetPort": port,
                    "protocol": "TCP",
                }
            ],
            "sessionAffinity": "None",
        },
        "status": {"loadBalancer": {}},
    }
    subset: Obj = {}
    if ready:
        subset["addresses"] = [_ep_address(namespace, p) for p in ready]
    if not_ready:
        subset["notReadyAddresses"] = [_ep_address(namespace, p) for p in not_ready]
    subset["ports"] = [{"name": port_name, "port": port, "protocol": "TCP"}]
    ep: Obj = {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "creationTimestamp": iso(created),
            "labels": dict(selector),
        },
        "subsets": [subset] if (ready or not_ready) else [],
    }
    return [svc, ep]


def _ep_address(namespace: str, p: PodRef) -> Obj:
    return {
        "ip": p.ip,
        "nodeName": p.node,
        "targetRef": {"kind": "Pod", "name": p.name, "namespace": namespace, "uid": p.uid},
    }


def daemonset(
    sc: Scenario,
    namespace: str,
    name: str,
    containers: list[Obj],
    nodes: list[str],
    created: datetime | None = None,
    not_ready_nodes: Iterable[str] = (),
) -> Workload:
    created = created or sc.ago(days=200)
    labels = {"app.kubernetes.io/name": name}
    tmpl = template(labels, containers)
    ds_uid = sc.uid()
    bad = set(not_ready_nodes)
    ready = len([n for n in nodes if n not in bad])
    ds: Obj = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": ds_uid,
            "creationTimestamp": iso(created),
            "generation": 3,
            "labels": labels,
            "annotations": {"deprecated.daemonset.template.generation": "3"},
        },
        "spec": {
            "selector": {"matchLabels": labels},
            "template": tmpl,
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
        },
        "status": {
            "currentNumberScheduled": len(nodes),
            "desiredNumberScheduled": len(nodes),
            "numberAvailable": ready,
            "numberMisscheduled": 0,
            "numberReady": ready,
            "observedGeneration": 3,
            "updatedNumberScheduled": len(nodes),
        },
    }
    if ready < len(nodes):
        ds["status"]["numberUnavailable"] = len(nodes) - ready
    objs: list[Obj] = [ds]
    refs: list[PodRef] = []
    for node_name in nodes:
        pname = f"{name}-{sc.pod_suffix()}"
        uid = sc.uid()
        start = created + timedelta(days=sc.rng.randint(1, 30))
        start = max(start, parse_node_created(sc, node_name))
        ok = node_name not in bad
        statuses = [running_status(c["name"], c["image"], start, 0, ok) for c in containers]
        objs.append(
            pod(
                namespace,
                pname,
                uid,
                owner("DaemonSet", name, ds_uid),
                tmpl,
                node_name,
                node_ip(node_name),
                node_ip(node_name),
                start,
                statuses,
                conditions=pod_conditions(start, start, ok, "" if ok else "NodeNotReady"),
            )
        )
        refs.append(PodRef(pname, node_ip(node_name), node_name, uid))
    sc.add(*objs)
    return Workload("DaemonSet", namespace, name, ds_uid, refs, ds)


def parse_node_created(sc: Scenario, node_name: str) -> datetime:
    for obj in sc.objects:
        if obj["kind"] == "Node" and obj["metadata"]["name"] == node_name:
            return parse_time(obj["metadata"]["creationTimestamp"]) + timedelta(seconds=40)
    return sc.ago(days=30)


def container_metrics(
    sc: Scenario,
    namespace: str,
    pods: list[PodRef],
    container_name: str,
    cpu_cores: Callable[[datetime], float] | float,
    memory_bytes: float,
    memory_growth: float = 0.0,
) -> None:
    """cAdvisor CPU and memory series for one container in each of ``pods``."""
    for p in pods:
        cpu_fn = cpu_cores if callable(cpu_cores) else wobble(sc, cpu_cores, 0.15)
        start_cpu = sc.rng.uniform(2_000, 90_000)
        labels = {"namespace": namespace, "pod": p.name, "container": container_name}
        sc.metrics.counter(
            "container_cpu_usage_seconds",
            labels,
            noisy(sc, cpu_fn, 0.08) if callable(cpu_cores) else cpu_fn,
            start=start_cpu,
            help_text="Cumulative cpu time consumed in seconds.",
        )
        base = memory_bytes * sc.rng.uniform(0.9, 1.1)
        first = sc.steps()[0]
        sc.metrics.gauge(
            "container_memory_working_set_bytes",
            labels,
            lambda t, b=base, f=first: round(
                b + memory_growth * (t - f).total_seconds() / 60 + sc.rng.uniform(-1, 1) * b * 0.01
            ),
            help_text="Current working set in bytes.",
        )


def restarts_metric(
    sc: Scenario, namespace: str, pods: list[PodRef], container_name: str, count: int = 0
) -> None:
    for p in pods:
        sc.metrics.gauge(
            "kube_pod_container_status_restarts_total",
            {"namespace": namespace, "pod": p.name, "container": container_name},
            lambda t, c=count: c,
            help_text="The number of container restarts per container.",
        )


def background_logs(
    sc: Scenario,
    namespace: str,
    pods: list[PodRef],
    container_name: str,
    service: str,
    per_minute: float,
    lines: list[tuple[str, str, float]],
    start: datetime | None = None,
    end: datetime | None = None,
    **extra: Any,
) -> None:
    """Routine log lines: ``lines`` holds (level, template, weight); templates use
    ``{n}``, ``{ms}``, ``{id}``, ``{ip}``."""
    start = start or sc.ago(minutes=60)
    end = end or sc.now
    weights = [w for _, _, w in lines]
    for p in pods:
        for t in sc.poisson_times(start, end, lambda _t: per_minute):
            level, text, _ = sc.rng.choices(lines, weights)[0]
            msg = text.format(
                n=sc.rng.randint(1, 999),
                ms=sc.rng.randint(3, 90),
                id=sc.hexid(12),
                ip=f"10.42.{sc.rng.randint(1, 30)}.{sc.rng.randint(2, 250)}",
            )
            sc.log(t, namespace, p.name, container_name, service, level, msg, p.node, **extra)


@dataclass
class Platform:
    coredns: Workload
    kube_proxy: Workload
    aws_node: Workload
    filebeat: Workload
    ingress: Workload
    kube_state_metrics: Workload
    prometheus: Workload
    metrics_server: Workload | None


def platform(
    sc: Scenario,
    nodes: list[str],
    metrics_server: bool = True,
    not_ready_nodes: Iterable[str] = (),
    ingress_replicas: int = 2,
    ds_nodes: list[str] | None = None,
) -> Platform:
    """kube-system, logging, monitoring and ingress-nginx, healthy."""
    ds_nodes = ds_nodes or nodes
    for ns, age in (
        ("kube-system", 400),
        ("kube-public", 400),
        ("default", 400),
        ("kube-node-lease", 400),
        ("logging", 380),
        ("monitoring", 380),
        ("ingress-nginx", 370),
    ):
        sc.add(namespace(ns, sc.ago(days=age)))
    coredns = simple_deployment(
        sc,
        "kube-system",
        "coredns",
        [
            container(
                "coredns",
                "602401143452.dkr.ecr.eu-west-1.amazonaws.com/eks/coredns:v1.11.1-eksbuild.9",
                "100m",
                "70Mi",
                None,
                "170Mi",
                [("dns", 53), ("metrics", 9153)],
                args=["-conf", "/etc/coredns/Corefile"],
            )
        ],
        nodes[:2],
        2,
        created=sc.ago(days=400),
        rolled=sc.ago(days=41),
        revision=4,
        labels={"k8s-app": "kube-dns"},
        service=False,
    )
    kube_proxy = daemonset(
        sc,
        "kube-system",
        "kube-proxy",
        [
            container(
                "kube-proxy",
                "602401143452.dkr.ecr.eu-west-1.amazonaws.com/eks/kube-proxy:v1.29.7-eksbuild.9",
                "100m",
                "64Mi",
                None,
                None,
            )
        ],
        ds_nodes,
        sc.ago(days=400),
        not_ready_nodes,
    )
    aws_node = daemonset(
        sc,
        "kube-system",
        "aws-node",
        [
            container(
                "aws-node",
                "602401143452.dkr.ecr.eu-west-1.amazonaws.com/amazon-k8s-cni:v1.18.3-eksbuild.2",
                "25m",
                "64Mi",
                None,
                None,
            )
        ],
        ds_nodes,
        sc.ago(days=400),
        not_ready_nodes,
    )
    ms: Workload | None = None
    if metrics_server:
        ms = simple_deployment(
            sc,
            "kube-system",
            "metrics-server",
            [
                container(
                    "metrics-server",
                    "registry.k8s.io/metrics-server/metrics-server:v0.7.2",
                    "100m",
                    "200Mi",
                    None,
                    "400Mi",
                    [("https", 10250)],
                    args=[
                        "--cert-dir=/tmp",
                        "--secure-port=10250",
                        "--kubelet-preferred-address-types=InternalIP",
                        "--metric-resolution=15s",
                    ],
                )
            ],
            nodes[1:2],
            1,
            created=sc.ago(days=390),
            rolled=sc.ago(days=63),
            revision=3,
            labels={"k8s-app": "metrics-server"},
            port=10250,
        )
    filebeat = daemonset(
        sc,
        "logging",
        "filebeat",
        [
            container(
                "filebeat",
                "docker.elastic.co/beats/filebeat:8.15.3",
                "100m",
                "100Mi",
                None,
                "300Mi",
            )
        ],
        ds_nodes,
        sc.ago(days=380),
        not_ready_nodes,
    )
    ingress = simple_deployment(
        sc,
        "ingress-nginx",
        "ingress-nginx-controller",
        [
            container(
                "controller",
                "registry.k8s.io/ingress-nginx/controller:v1.11.3",
                "200m",
                "256Mi",
                None,
                "512Mi",
                [("http", 80), ("https", 443), ("metrics", 10254)],
                readiness=http_probe("/healthz", 10254),
                liveness=http_probe("/healthz", 10254),
            )
        ],
        nodes[-2:],
        ingress_replicas,
        created=sc.ago(days=370),
        rolled=sc.ago(days=27),
        revision=7,
        labels={
            "app.kubernetes.io/name": "ingress-nginx",
            "app.kubernetes.io/component": "controller",
        },
        port=80,
    )
    ksm = simple_deployment(
        sc,
        "monitoring",
        "kube-state-metrics",
        [
            container(
                "kube-state-metrics",
                "registry.k8s.io/kube-state-metrics/kube-state-metrics:v2.13.0",
                "50m",
                "128Mi",
                None,
                "256Mi",
                [("http", 8080), ("telemetry", 8081)],
            )
        ],
        nodes[:1],
        1,
        created=sc.ago(days=380),
        rolled=sc.ago(days=33),
        revision=5,
        port=8080,
    )
    prom = simple_deployment(
        sc,
        "monitoring",
        "prometheus-server",
        [
            container(
                "prometheus",
                "quay.io/prometheus/prometheus:v2.54.1",
                "500m",
                "2Gi",
                None,
                "4Gi",
                [("web", 9090)],
                readiness=http_probe("/-/ready", 9090),
            )
        ],
        nodes[2:3] or nodes[:1],
        1,
        created=sc.ago(days=380),
        rolled=sc.ago(days=33),
        revision=9,
        port=9090,
    )
    for p in filebeat.pods:
        for t in sc.poisson_times(sc.ago(minutes=60), sc.now, lambda _t: 0.15):
            sc.log(
                t,
                "logging",
                p.name,
                "filebeat",
                "filebeat",
                "info",
                "Non-zero metrics in the last 30s: "
                + json.dumps(
                    {
                        "monitoring": {
                            "metrics": {
                                "libbeat": {
                                    "output": {
                                        "events": {
                                            "acked": sc.rng.randint(300, 4000),
                                            "active": 0,
                                        }
                                    }
                                }
                            }
                        }
                    },
                    separators=(",", ":"),
                ),
                p.node,
            )
    return Platform(coredns, kube_proxy, aws_node, filebeat, ingress, ksm, prom, ms)


def ingress_line(
    sc: Scenario,
    when: datetime,
    method: str,
    path: str,
    status: int,
    seconds: float,
    upstream_ns: str,
    upstream_svc: str,
    port: int,
    upstream_ip: str,
    agent: str = "Mozilla/5.0",
) -> str:
    client = f"81.{sc.rng.randint(2, 250)}.{sc.rng.randint(2, 250)}.{sc.rng.randint(2, 250)}"
    size = sc.rng.randint(200, 3000)
    return (
        f'{client} - - [{clf_time(when)}] "{method} {path} HTTP/2.0" {status} {size} "-" '
        f'"{agent}" {sc.rng.randint(300, 900)} {seconds:.3f} '
        f"[{upstream_ns}-{upstream_svc}-{port}] [] {upstream_ip}:{port} {size} "
        f"{max(0.0, seconds - 0.001):.3f} {status} {sc.hexid(32)}"
    )


def replicaset_names(sc: Scenario, namespace: str, deploy: str) -> list[str]:
    """The ReplicaSets of a Deployment, oldest revision first."""
    found: list[tuple[int, str]] = []
    for obj in sc.objects:
        if obj["kind"] != "ReplicaSet" or obj["metadata"]["namespace"] != namespace:
            continue
        refs = obj["metadata"].get("ownerReferences", [])
        if refs and refs[0]["name"] == deploy:
            rev = int(obj["metadata"]["annotations"]["deployment.kubernetes.io/revision"])
            found.append((rev, obj["metadata"]["name"]))
    return [name for _, name in sorted(found)]


def pvc(
    sc: Scenario,
    namespace: str,
    name: str,
    size: str,
    storage_class: str,
    created: datetime,
    volume: str = "",
    labels: Labels | None = None,
    annotations: dict[str, str] | None = None,
) -> Obj:
    volume = volume or f"pvc-{sc.uid()}"
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "creationTimestamp": iso(created),
            "labels": labels or {},
            "annotations": {
                "pv.kubernetes.io/bind-completed": "yes",
                "pv.kubernetes.io/bound-by-controller": "yes",
                "volume.beta.kubernetes.io/storage-provisioner": "ebs.csi.aws.com",
                "volume.kubernetes.io/storage-provisioner": "ebs.csi.aws.com",
                **(annotations or {}),
            },
            "finalizers": ["kubernetes.io/pvc-protection"],
        },
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": size}},
            "storageClassName": storage_class,
            "volumeMode": "Filesystem",
            "volumeName": volume,
        },
        "status": {
            "phase": "Bound",
            "accessModes": ["ReadWriteOnce"],
            "capacity": {"storage": size},
        },
    }


def statefulset(
    sc: Scenario,
    namespace: str,
    name: str,
    containers: list[Obj],
    nodes: list[str],
    replicas: int,
    created: datetime,
    rolled: datetime,
    claim: tuple[str, str, str] | None = None,
    skip: Iterable[int] = (),
    port: int | None = None,
    restarts: dict[int, tuple[int, Obj]] | None = None,
    ready_replicas: int | None = None,
    pvc_annotations: dict[int, dict[str, str]] | None = None,
) -> Workload:
    """A StatefulSet, its pods (except ``skip``), its PVCs and a headless Service.

    ``claim`` is (template name, size, storage class)."""
    labels = {"app.kubernetes.io/name": name}
    extra: Obj = {"subdomain": name, "hostname": ""}
    tmpl = template(labels, containers)
    ss_uid = sc.uid()
    revision = f"{name}-{sc.rs_hash()}"
    skipped = set(skip)
    ready_n = replicas - len(skipped) if ready_replicas is None else ready_replicas
    spec: Obj = {
        "replicas": replicas,
        "selector": {"matchLabels": labels},
        "serviceName": name,
        "podManagementPolicy": "OrderedReady",
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
        "template": tmpl,
    }
    if claim:
        spec["volumeClaimTemplates"] = [
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": claim[0]},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": claim[1]}},
                    "storageClassName": claim[2],
                    "volumeMode": "Filesystem",
                },
            }
        ]
    ss: Obj = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": ss_uid,
            "creationTimestamp": iso(created),
            "generation": 4,
            "labels": labels,
        },
        "spec": spec,
        "status": {
            "observedGeneration": 4,
            "replicas": replicas,
            "readyReplicas": ready_n,
            "availableReplicas": ready_n,
            "currentReplicas": replicas,
            "updatedReplicas": replicas,
            "currentRevision": revision,
            "updateRevision": revision,
            "collisionCount": 0,
        },
    }
    objs: list[Obj] = [ss]
    refs: list[PodRef] = []
    for i in range(replicas):
        pname = f"{name}-{i}"
        if claim:
            objs.append(
                pvc(
                    sc,
                    namespace,
                    f"{claim[0]}-{pname}",
                    claim[1],
                    claim[2],
                    created + timedelta(seconds=30 * i),
                    labels=labels,
                    annotations=(pvc_annotations or {}).get(i),
                )
            )
        if i in skipped:
            continue
        node_name = nodes[i % len(nodes)]
        ip = sc.pod_ip(node_name)
        uid = sc.uid()
        start = rolled + timedelta(seconds=40 * i + sc.rng.randint(1, 20))
        restart_count, last = (restarts or {}).get(i, (0, None))
        began = parse_time(last["finishedAt"]) + timedelta(seconds=2) if last else start
        statuses = [
            running_status(c["name"], c["image"], began, restart_count, True, last)
            for c in containers
        ]
        ptmpl = json.loads(json.dumps(tmpl))
        ptmpl["spec"].update(extra)
        ptmpl["spec"]["hostname"] = pname
        if claim:
            ptmpl["spec"]["volumes"] = [
                {"name": claim[0], "persistentVolumeClaim": {"claimName": f"{claim[0]}-{pname}"}}
            ]
        p = pod(
            namespace,
            pname,
            uid,
            owner("StatefulSet", name, ss_uid),
            ptmpl,
            node_name,
            ip,
            node_ip(node_name),
            start,
            statuses,
            extra_labels={
                "controller-revision-hash": revision,
                "statefulset.kubernetes.io/pod-name": pname,
                "apps.kubernetes.io/pod-index": str(i),
            },
        )
        objs.append(p)
        refs.append(PodRef(pname, ip, node_name, uid))
    if port:
        objs.extend(service_and_endpoints(sc, namespace, name, labels, port, refs))
    sc.add(*objs)
    return Workload("StatefulSet", namespace, name, ss_uid, refs, ss)


def configmap(
    namespace: str, name: str, created: datetime, data: dict[str, str], labels: Labels | None = None
) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "creationTimestamp": iso(created),
            "labels": labels or {},
        },
        "data": data,
    }
