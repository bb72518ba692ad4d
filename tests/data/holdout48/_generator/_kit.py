"""Small shared toolkit for the holdout48 scenario generators.

Everything is deterministic: names, uids and "random" jitter derive from fixed seeds.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import random
import shutil
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import yaml

UTC = dt.UTC
_ALNUM = "bcdfghjklmnpqrstvwxz2456789"


# ---------------------------------------------------------------- time and names


def parse(s: str) -> dt.datetime:
    return dt.datetime.fromisoformat(s.replace("Z", "+00:00")).astimezone(UTC)


def iso(t: dt.datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_ms(t: dt.datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def suffix(seed: str, n: int) -> str:
    d = hashlib.sha256(seed.encode()).digest()
    return "".join(_ALNUM[b % len(_ALNUM)] for b in d[:n])


def uid(seed: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "holdout48/" + seed))


def hexid(seed: str, n: int = 16) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()[:n]


def cid(seed: str) -> str:
    return "containerd://" + hashlib.sha256(("c/" + seed).encode()).hexdigest()


# ---------------------------------------------------------------- the scenario

_KEYS = {
    "Pod": "pod",
    "ReplicaSet": "rs",
    "Deployment": "deploy",
    "StatefulSet": "sts",
    "DaemonSet": "ds",
    "Job": "job",
    "CronJob": "cronjob",
    "Service": "svc",
    "HorizontalPodAutoscaler": "hpa",
    "PersistentVolumeClaim": "pvc",
    "ConfigMap": "cm",
}


class Scenario:
    def __init__(
        self,
        sid: str,
        title: str,
        now: str,
        report: str,
        truth: dict[str, Any],
        interventions: list[dict[str, Any]] | None = None,
    ) -> None:
        self.id = sid
        self.title = title
        self.now = parse(now)
        self.report = report
        self.truth = truth
        self.interventions = interventions
        self.objects: list[dict[str, Any]] = []
        self.logs: list[dict[str, Any]] = []
        self.pod_logs: dict[str, list[str]] = {}
        self.metrics = Metrics()
        self.rng = random.Random(sid)

    # times
    def ago(self, **kw: float) -> dt.datetime:
        return self.now - dt.timedelta(**kw)

    def grid(self, hours: float, step: int = 60) -> list[dt.datetime]:
        n = int(hours * 3600 // step)
        return [self.now - dt.timedelta(seconds=step * (n - i)) for i in range(n + 1)]

    # content
    def add(self, *objs: dict[str, Any] | Iterable[dict[str, Any]]) -> None:
        for o in objs:
            if isinstance(o, dict):
                self.objects.append(o)
            else:
                self.objects.extend(o)

    def log(
        self,
        t: dt.datetime,
        ns: str,
        pod: str,
        container: str,
        service: str,
        level: str,
        message: str,
        **extra: Any,
    ) -> None:
        doc: dict[str, Any] = {
            "@timestamp": iso_ms(t),
            "message": message,
            "log.level": level,
            "service.name": service,
            "kubernetes.namespace": ns,
            "kubernetes.pod.name": pod,
            "kubernetes.container.name": container,
        }
        doc.update(extra)
        self.logs.append(doc)

    def pod_log(
        self, ns: str, pod: str, container: str, lines: list[str], previous: bool = False
    ) -> None:
        name = container + (".previous.log" if previous else ".log")
        self.pod_logs[f"{ns}/{pod}/{name}"] = lines

    def event(
        self,
        kind: str,
        ns: str,
        name: str,
        reason: str,
        message: str,
        *,
        type_: str = "Normal",
        count: int = 1,
        first: dt.datetime,
        last: dt.datetime | None = None,
        component: str = "kubelet",
        host: str | None = None,
        obj_uid: str | None = None,
        api_version: str = "v1",
        field_path: str | None = None,
    ) -> None:
        last = last or first
        assert self.now - last <= dt.timedelta(hours=1), (self.id, reason, name)
        assert first <= last <= self.now
        default_uid = (
            uid("node/" + name) if kind == "Node" else uid(f"{ns}/{_KEYS.get(kind, kind)}/{name}")
        )
        involved: dict[str, Any] = {
            "apiVersion": api_version,
            "kind": kind,
            "name": name,
            "uid": obj_uid or default_uid,
        }
        if ns:
            involved["namespace"] = ns
        if field_path:
            involved["fieldPath"] = field_path
        source: dict[str, Any] = {"component": component}
        if host:
            source["host"] = host
        ev_name = f"{name}.{hexid(self.id + kind + name + reason + message + iso(first))}"
        meta: dict[str, Any] = {"name": ev_name, "creationTimestamp": iso(first)}
        meta["namespace"] = ns or "default"
        self.objects.append(
            {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": meta,
                "involvedObject": involved,
                "reason": reason,
                "message": message,
                "type": type_,
                "count": count,
                "firstTimestamp": iso(first),
                "lastTimestamp": iso(last),
                "source": source,
                "reportingComponent": component if component != "kubelet" else "kubelet",
                "reportingInstance": host or "",
            }
        )

    # output
    def write(self, root: Path) -> None:
        d = root / self.id
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
        scen: dict[str, Any] = {
            "id": self.id,
            "title": self.title,
            "now": iso(self.now),
            "report": self.report,
            "truth": self.truth,
        }
        if self.interventions:
            scen["interventions"] = self.interventions
        (d / "scenario.yaml").write_text(_dump(scen))
        if self.objects:
            (d / "cluster.yaml").write_text("---\n".join(_dump(o) for o in self.objects))
        if self.logs:
            for doc in self.logs:
                assert self.now - dt.timedelta(days=7) <= parse(doc["@timestamp"]) <= self.now, doc
            docs = sorted(self.logs, key=lambda x: x["@timestamp"])
            (d / "logs.ndjson").write_text(
                "".join(json.dumps(x, sort_keys=False) + "\n" for x in docs)
            )
        if self.metrics.families:
            (d / "metrics.om").write_text(self.metrics.render(self.now))
        for rel, lines in sorted(self.pod_logs.items()):
            p = d / "pod-logs" / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text("".join(line + "\n" for line in lines))


class _Dumper(yaml.SafeDumper):
    pass


def _str_rep(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


_Dumper.add_representer(str, _str_rep)


def _dump(o: Any) -> str:
    return yaml.dump(o, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=1000)


# ---------------------------------------------------------------- metrics


class Metrics:
    def __init__(self) -> None:
        self.families: dict[
            str, tuple[str, str, list[tuple[dict[str, str], list[tuple[dt.datetime, float]]]]]
        ] = {}

    def series(
        self,
        name: str,
        mtype: str,
        help_: str,
        labels: dict[str, str],
        points: list[tuple[dt.datetime, float]],
    ) -> None:
        fam = self.families.setdefault(name, (mtype, help_, []))
        assert fam[0] == mtype
        fam[2].append((labels, points))

    def gauge(
        self,
        name: str,
        help_: str,
        labels: dict[str, str],
        ts: list[dt.datetime],
        fn: Callable[[dt.datetime], float | None],
    ) -> None:
        pts = [(t, v) for t in ts if (v := fn(t)) is not None]
        self.series(name, "gauge", help_, labels, pts)

    def cumulative(
        self,
        name: str,
        help_: str,
        labels: dict[str, str],
        ts: list[dt.datetime],
        fn: Callable[[dt.datetime], float],
    ) -> None:
        """A counter whose value at each time is given directly (e.g. a restart count)."""
        self.series(name.removesuffix("_total"), "counter", help_, labels, [(t, fn(t)) for t in ts])

    def counter(
        self,
        name: str,
        help_: str,
        labels: dict[str, str],
        ts: list[dt.datetime],
        rate: Callable[[dt.datetime], float],
        start: float = 0.0,
        resets: Iterable[dt.datetime] = (),
        integer: bool = True,
        mtype: str = "counter",
    ) -> None:
        """A counter integrating `rate` (per second) over the grid; resets to 0 after each reset
        time.

        mtype="unknown" keeps a counter whose exposed name has no _total suffix (OpenMetrics
        demands one)."""
        resets = sorted(resets)
        pts: list[tuple[dt.datetime, float]] = []
        v = start
        prev: dt.datetime | None = None
        for t in ts:
            if prev is not None:
                if any(prev < r <= t for r in resets):
                    v = 0.0
                v += rate(t) * (t - prev).total_seconds()
            pts.append((t, float(round(v)) if integer else v))
            prev = t
        self.series(name, mtype, help_, labels, pts)

    def render(self, now: dt.datetime) -> str:
        out: list[str] = []
        lo = now - dt.timedelta(days=7)
        for name, (mtype, help_, series) in self.families.items():
            out.append(f"# TYPE {name} {mtype}")
            out.append(f"# HELP {name} {help_}")
            sample = name + "_total" if mtype == "counter" else name
            for labels, pts in series:
                lab = ",".join(f'{k}="{v}"' for k, v in labels.items())
                last = None
                for t, v in pts:
                    assert lo <= t <= now
                    if mtype == "counter" and last is not None and v < last:
                        pass  # a reset: allowed only at a restart, callers arrange it
                    last = v
                    out.append(f"{sample}{{{lab}}} {_fmt(v)} {int(t.timestamp())}")
        out.append("# EOF")
        return "\n".join(out) + "\n"


def _fmt(v: float) -> str:
    if float(v).is_integer() and abs(v) < 1e15:
        return str(int(v))
    return f"{v:.6g}" if abs(v) < 1e6 else f"{v:.10g}"


# ---------------------------------------------------------------- Kubernetes objects


def namespace(
    name: str, created: dt.datetime, labels: dict[str, str] | None = None
) -> dict[str, Any]:
    lab = {"kubernetes.io/metadata.name": name}
    lab.update(labels or {})
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": name,
            "uid": uid("ns/" + name),
            "creationTimestamp": iso(created),
            "labels": lab,
        },
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


def node(
    name: str,
    *,
    created: dt.datetime,
    now: dt.datetime,
    labels: dict[str, str],
    cpu: str,
    memory: str,
    alloc_cpu: str,
    alloc_memory: str,
    internal_ip: str,
    pods: str = "110",
    kubelet: str = "v1.30.5",
    runtime: str = "containerd://1.7.22",
    os_image: str = "Ubuntu 22.04.4 LTS",
    kernel: str = "6.5.0-1025-gcp",
    conditions: list[dict[str, Any]] | None = None,
    taints: list[dict[str, Any]] | None = None,
    provider_id: str | None = None,
) -> dict[str, Any]:
    hb = iso(now - dt.timedelta(seconds=23))
    trans = iso(max(created + dt.timedelta(minutes=1), now - dt.timedelta(days=6, hours=8)))
    conds = conditions or [
        {
            "type": "MemoryPressure",
            "status": "False",
            "reason": "KubeletHasSufficientMemory",
            "message": "kubelet has sufficient memory available",
        },
        {
            "type": "DiskPressure",
            "status": "False",
            "reason": "KubeletHasNoDiskPressure",
            "message": "kubelet has no disk pressure",
        },
        {
            "type": "PIDPressure",
            "status": "False",
            "reason": "KubeletHasSufficientPID",
            "message": "kubelet has sufficient PID available",
        },
        {
            "type": "Ready",
            "status": "True",
            "reason": "KubeletReady",
            "message": "kubelet is posting ready status",
        },
    ]
    for c in conds:
        c.setdefault("lastHeartbeatTime", hb)
        c.setdefault("lastTransitionTime", trans)
    lab = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "beta.kubernetes.io/arch": "amd64",
    }
    lab.update(labels)
    spec: dict[str, Any] = {"podCIDR": "10.64.0.0/24"}
    if provider_id:
        spec["providerID"] = provider_id
    if taints:
        spec["taints"] = taints
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": uid("node/" + name),
            "creationTimestamp": iso(created),
            "labels": lab,
        },
        "spec": spec,
        "status": {
            "capacity": {
                "cpu": cpu,
                "memory": memory,
                "pods": pods,
                "ephemeral-storage": "101430960Ki",
            },
            "allocatable": {
                "cpu": alloc_cpu,
                "memory": alloc_memory,
                "pods": pods,
                "ephemeral-storage": "47093746742",
            },
            "conditions": conds,
            "addresses": [
                {"type": "InternalIP", "address": internal_ip},
                {"type": "Hostname", "address": name},
            ],
            "nodeInfo": {
                "kubeletVersion": kubelet,
                "kubeProxyVersion": kubelet,
                "containerRuntimeVersion": runtime,
                "osImage": os_image,
                "kernelVersion": kernel,
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
        },
    }


def container(
    name: str,
    image: str,
    *,
    ports: list[int] | None = None,
    requests: dict[str, str] | None = None,
    limits: dict[str, str] | None = None,
    env: list[dict[str, Any]] | None = None,
    args: list[str] | None = None,
    command: list[str] | None = None,
    mounts: list[dict[str, Any]] | None = None,
    readiness: dict[str, Any] | None = None,
    liveness: dict[str, Any] | None = None,
    security: dict[str, Any] | None = None,
    env_from: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, "image": image, "imagePullPolicy": "IfNotPresent"}
    if command:
        c["command"] = command
    if args:
        c["args"] = args
    if ports:
        c["ports"] = [
            {"containerPort": p, "name": ("http" if i == 0 else f"p{p}"), "protocol": "TCP"}
            for i, p in enumerate(ports)
        ]
    if env:
        c["env"] = env
    if env_from:
        c["envFrom"] = env_from
    res: dict[str, Any] = {}
    if limits:
        res["limits"] = limits
    if requests:
        res["requests"] = requests
    c["resources"] = res
    if readiness:
        c["readinessProbe"] = readiness
    if liveness:
        c["livenessProbe"] = liveness
    if security:
        c["securityContext"] = security
    if mounts:
        c["volumeMounts"] = mounts
    c["terminationMessagePath"] = "/dev/termination-log"
    c["terminationMessagePolicy"] = "File"
    return c


def http_probe(
    path: str,
    port: int | str,
    *,
    delay: int = 5,
    period: int = 10,
    timeout: int = 1,
    failure: int = 3,
) -> dict[str, Any]:
    return {
        "httpGet": {"path": path, "port": port, "scheme": "HTTP"},
        "initialDelaySeconds": delay,
        "periodSeconds": period,
        "timeoutSeconds": timeout,
        "successThreshold": 1,
        "failureThreshold": failure,
    }


def env(**kv: str) -> list[dict[str, Any]]:
    return [{"name": k, "value": v} for k, v in kv.items()]


def template(
    labels: dict[str, str],
    containers: list[dict[str, Any]],
    *,
    volumes: list[dict[str, Any]] | None = None,
    node_selector: dict[str, str] | None = None,
    security: dict[str, Any] | None = None,
    service_account: str | None = None,
    annotations: dict[str, str] | None = None,
    tolerations: list[dict[str, Any]] | None = None,
    grace: int = 30,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": containers,
        "restartPolicy": "Always",
        "dnsPolicy": "ClusterFirst",
        "schedulerName": "default-scheduler",
        "terminationGracePeriodSeconds": grace,
    }
    if service_account:
        spec["serviceAccountName"] = service_account
    spec["securityContext"] = security or {}
    if node_selector:
        spec["nodeSelector"] = node_selector
    if tolerations:
        spec["tolerations"] = tolerations
    if volumes:
        spec["volumes"] = volumes
    meta: dict[str, Any] = {"labels": dict(labels)}
    if annotations:
        meta["annotations"] = annotations
    return {"metadata": meta, "spec": spec}


def _with_hash(tpl: dict[str, Any], h: str) -> dict[str, Any]:
    t = json.loads(json.dumps(tpl))
    t["metadata"]["labels"]["pod-template-hash"] = h
    return t


def deployment(
    ns: str,
    name: str,
    *,
    created: dt.datetime,
    replicas: int,
    tpl: dict[str, Any],
    revision: int,
    status: dict[str, Any],
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    strategy: dict[str, Any] | None = None,
    generation: int | None = None,
) -> dict[str, Any]:
    ann = {"deployment.kubernetes.io/revision": str(revision)}
    ann.update(annotations or {})
    sel = {
        k: v for k, v in tpl["metadata"]["labels"].items() if k in ("app", "app.kubernetes.io/name")
    }
    gen = generation or revision + 1
    st = {"observedGeneration": gen}
    st.update(status)
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": uid(f"{ns}/deploy/{name}"),
            "generation": gen,
            "creationTimestamp": iso(created),
            "labels": labels or dict(sel),
            "annotations": ann,
        },
        "spec": {
            "replicas": replicas,
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600,
            "selector": {"matchLabels": sel},
            "strategy": strategy
            or {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
            },
            "template": tpl,
        },
        "status": st,
    }


def deploy_status(
    replicas: int,
    ready: int,
    updated: int | None = None,
    available: int | None = None,
    *,
    progressing: tuple[str, str, str] | None = None,
    avail_since: dt.datetime,
    progress_time: dt.datetime,
    name: str,
    rs_name: str,
    extra_conditions: list[dict[str, Any]] | None = None,
    total: int | None = None,
) -> dict[str, Any]:
    updated = replicas if updated is None else updated
    available = ready if available is None else available
    prog = progressing or (
        "True",
        "NewReplicaSetAvailable",
        f'ReplicaSet "{rs_name}" has successfully progressed.',
    )
    conds = [
        {
            "type": "Available",
            "status": "True" if available >= max(1, replicas - replicas // 4) else "False",
            "reason": "MinimumReplicasAvailable"
            if available >= max(1, replicas - replicas // 4)
            else "MinimumReplicasUnavailable",
            "message": "Deployment has minimum availability."
            if available >= max(1, replicas - replicas // 4)
            else "Deployment does not have minimum availability.",
            "lastUpdateTime": iso(avail_since),
            "lastTransitionTime": iso(avail_since),
        },
        {
            "type": "Progressing",
            "status": prog[0],
            "reason": prog[1],
            "message": prog[2],
            "lastUpdateTime": iso(progress_time),
            "lastTransitionTime": iso(progress_time),
        },
    ]
    conds.extend(extra_conditions or [])
    st: dict[str, Any] = {
        "replicas": total if total is not None else replicas,
        "updatedReplicas": updated,
        "readyReplicas": ready,
        "availableReplicas": available,
    }
    if (total if total is not None else replicas) - available > 0:
        st["unavailableReplicas"] = (total if total is not None else replicas) - available
    st = {k: v for k, v in st.items() if v != 0}
    st["conditions"] = conds
    return st


def replicaset(
    ns: str,
    deploy_name: str,
    *,
    tpl: dict[str, Any],
    h: str,
    revision: int,
    created: dt.datetime,
    replicas: int,
    ready: int,
    available: int | None = None,
    fully: int | None = None,
    conditions: list[dict[str, Any]] | None = None,
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    name = f"{deploy_name}-{h}"
    t = _with_hash(tpl, h)
    sel = {
        k: v for k, v in tpl["metadata"]["labels"].items() if k in ("app", "app.kubernetes.io/name")
    }
    sel["pod-template-hash"] = h
    ann = {
        "deployment.kubernetes.io/desired-replicas": str(replicas),
        "deployment.kubernetes.io/max-replicas": str(replicas + 1),
        "deployment.kubernetes.io/revision": str(revision),
    }
    ann.update(annotations or {})
    st: dict[str, Any] = {
        "replicas": replicas,
        "fullyLabeledReplicas": replicas if fully is None else fully,
        "readyReplicas": ready,
        "availableReplicas": ready if available is None else available,
        "observedGeneration": 1 if replicas else 2,
    }
    st = {k: v for k, v in st.items() if v != 0 or k == "replicas"}
    if conditions:
        st["conditions"] = conditions
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": uid(f"{ns}/rs/{name}"),
            "creationTimestamp": iso(created),
            "generation": 1 if replicas else 2,
            "labels": dict(t["metadata"]["labels"]),
            "annotations": ann,
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": deploy_name,
                    "uid": uid(f"{ns}/deploy/{deploy_name}"),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {"replicas": replicas, "selector": {"matchLabels": sel}, "template": t},
        "status": st,
    }


def running(
    name: str,
    image: str,
    started: dt.datetime,
    *,
    restarts: int = 0,
    ready: bool = True,
    last: dict[str, Any] | None = None,
    image_id: str | None = None,
) -> dict[str, Any]:
    st: dict[str, Any] = {
        "name": name,
        "image": image,
        "imageID": image_id or f"{image.split(':')[0]}@sha256:{hexid(image, 64)}",
        "containerID": cid(name + iso(started)),
        "ready": ready,
        "started": True,
        "restartCount": restarts,
        "state": {"running": {"startedAt": iso(started)}},
    }
    st["lastState"] = {"terminated": last} if last else {}
    return st


def terminated(
    reason: str,
    exit_code: int,
    started: dt.datetime,
    finished: dt.datetime,
    seed: str,
    message: str | None = None,
) -> dict[str, Any]:
    t: dict[str, Any] = {
        "exitCode": exit_code,
        "reason": reason,
        "startedAt": iso(started),
        "finishedAt": iso(finished),
        "containerID": cid(seed + iso(started)),
    }
    if message:
        t["message"] = message
    return t


def waiting(
    name: str,
    image: str,
    *,
    reason: str,
    message: str | None = None,
    restarts: int = 0,
    last: dict[str, Any] | None = None,
    image_id: bool = True,
) -> dict[str, Any]:
    w: dict[str, Any] = {"reason": reason}
    if message:
        w["message"] = message
    st: dict[str, Any] = {
        "name": name,
        "image": image,
        "ready": False,
        "started": False,
        "restartCount": restarts,
        "state": {"waiting": w},
    }
    if image_id:
        st["imageID"] = f"{image.split(':')[0]}@sha256:{hexid(image, 64)}"
    st["lastState"] = {"terminated": last} if last else {}
    return st


def pod(
    ns: str,
    name: str,
    *,
    tpl: dict[str, Any],
    owner: tuple[str, str] | None,
    node_name: str | None,
    created: dt.datetime,
    statuses: list[dict[str, Any]],
    ip: str | None,
    host_ip: str | None,
    phase: str = "Running",
    ready: bool | None = None,
    pending_reason: str | None = None,
    pending_message: str | None = None,
    ready_since: dt.datetime | None = None,
    spec_override: dict[str, Any] | None = None,
    annotations: dict[str, str] | None = None,
    init_statuses: list[dict[str, Any]] | None = None,
    qos: str = "Burstable",
) -> dict[str, Any]:
    spec = json.loads(json.dumps(tpl["spec"]))
    if spec_override:
        spec.update(spec_override)
    if node_name:
        spec["nodeName"] = node_name
    spec.setdefault("tolerations", [])
    spec["tolerations"] = spec["tolerations"] + [
        {
            "key": "node.kubernetes.io/not-ready",
            "operator": "Exists",
            "effect": "NoExecute",
            "tolerationSeconds": 300,
        },
        {
            "key": "node.kubernetes.io/unreachable",
            "operator": "Exists",
            "effect": "NoExecute",
            "tolerationSeconds": 300,
        },
    ]
    spec.setdefault("serviceAccountName", "default")
    spec["enableServiceLinks"] = True
    spec["preemptionPolicy"] = "PreemptLowerPriority"
    spec["priority"] = 0
    meta: dict[str, Any] = {
        "name": name,
        "namespace": ns,
        "uid": uid(f"{ns}/pod/{name}"),
        "creationTimestamp": iso(created),
        "labels": dict(tpl["metadata"]["labels"]),
    }
    ann = dict(tpl["metadata"].get("annotations", {}))
    ann.update(annotations or {})
    if ann:
        meta["annotations"] = ann
    if owner:
        kind, oname = owner
        api = "batch/v1" if kind == "Job" else "apps/v1"
        okey = {"ReplicaSet": "rs", "StatefulSet": "sts", "DaemonSet": "ds", "Job": "job"}[kind]
        meta["ownerReferences"] = [
            {
                "apiVersion": api,
                "kind": kind,
                "name": oname,
                "uid": uid(f"{ns}/{okey}/{oname}"),
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
    if ready is None:
        ready = phase == "Running" and all(s.get("ready") for s in statuses)
    sched = created + dt.timedelta(seconds=1)
    rs = iso(ready_since or (created + dt.timedelta(seconds=9)))
    if phase == "Pending" and not node_name:
        conds = [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": pending_reason or "Unschedulable",
                "message": pending_message or "",
                "lastProbeTime": None,
                "lastTransitionTime": iso(sched),
            }
        ]
        status: dict[str, Any] = {"phase": "Pending", "conditions": conds, "qosClass": qos}
    else:
        started_ok = phase in ("Running", "Succeeded", "Failed")
        conds = [
            {
                "type": "PodReadyToStartContainers",
                "status": "True" if started_ok else "False",
                "lastProbeTime": None,
                "lastTransitionTime": iso(sched + dt.timedelta(seconds=2)),
            },
            {
                "type": "Initialized",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": iso(sched),
            },
            {
                "type": "Ready",
                "status": "True" if ready else "False",
                "lastProbeTime": None,
                "lastTransitionTime": rs,
            },
            {
                "type": "ContainersReady",
                "status": "True" if ready else "False",
                "lastProbeTime": None,
                "lastTransitionTime": rs,
            },
            {
                "type": "PodScheduled",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": iso(sched),
            },
        ]
        if not ready:
            notready = [s["name"] for s in statuses if not s.get("ready")]
            for c in conds:
                if c["type"] == "Ready":
                    c["reason"] = "ContainersNotReady"
                    c["message"] = f"containers with unready status: [{' '.join(notready)}]"
                if c["type"] == "ContainersReady":
                    c["reason"] = "ContainersNotReady"
                    c["message"] = f"containers with unready status: [{' '.join(notready)}]"
        status = {
            "phase": phase,
            "conditions": conds,
            "hostIP": host_ip,
            "hostIPs": [{"ip": host_ip}],
            "podIP": ip,
            "podIPs": [{"ip": ip}],
            "startTime": iso(created + dt.timedelta(seconds=1)),
            "containerStatuses": statuses,
            "qosClass": qos,
        }
        if init_statuses:
            status["initContainerStatuses"] = init_statuses
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def service(
    ns: str,
    name: str,
    *,
    selector: dict[str, str],
    ports: list[tuple[str, int, int | str]],
    cluster_ip: str,
    created: dt.datetime,
    type_: str = "ClusterIP",
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": uid(f"{ns}/svc/{name}"),
            "creationTimestamp": iso(created),
            "labels": {"app": name},
        },
        "spec": {
            "type": type_,
            "clusterIP": cluster_ip,
            "clusterIPs": [cluster_ip],
            "internalTrafficPolicy": "Cluster",
            "ipFamilies": ["IPv4"],
            "ipFamilyPolicy": "SingleStack",
            "sessionAffinity": "None",
            "selector": selector,
            "ports": [
                {"name": n, "port": p, "targetPort": tp, "protocol": "TCP"} for n, p, tp in ports
            ],
        },
        "status": {"loadBalancer": {}},
    }


def endpoints(
    ns: str,
    name: str,
    *,
    ready: list[tuple[str, str, str]],
    not_ready: list[tuple[str, str, str]] = (),
    ports: list[tuple[str, int]],
    created: dt.datetime,
) -> dict[str, Any]:
    def addr(a: tuple[str, str, str]) -> dict[str, Any]:
        ip, pod_name, node_name = a
        return {
            "ip": ip,
            "nodeName": node_name,
            "targetRef": {
                "kind": "Pod",
                "namespace": ns,
                "name": pod_name,
                "uid": uid(f"{ns}/pod/{pod_name}"),
            },
        }

    subset: dict[str, Any] = {}
    if ready:
        subset["addresses"] = [addr(a) for a in ready]
    if not_ready:
        subset["notReadyAddresses"] = [addr(a) for a in not_ready]
    subset["ports"] = [{"name": n, "port": p, "protocol": "TCP"} for n, p in ports]
    return {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": uid(f"{ns}/ep/{name}"),
            "creationTimestamp": iso(created),
            "labels": {"app": name},
        },
        "subsets": [subset] if (ready or not_ready) else [],
    }


def configmap(
    ns: str,
    name: str,
    data: dict[str, str],
    created: dt.datetime,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": ns,
        "uid": uid(f"{ns}/cm/{name}"),
        "creationTimestamp": iso(created),
    }
    if labels:
        meta["labels"] = labels
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


class Cluster:
    """Helper that lays out healthy Deployments (Deployment, ReplicaSet, pods, Service,
    Endpoints)."""

    def __init__(self, sc: Scenario, pod_cidr_base: str) -> None:
        self.sc = sc
        self.base = pod_cidr_base  # e.g. "10.44"
        self._ip = 10
        self._svc = 20

    def pod_ip(self, node_index: int) -> str:
        self._ip += 1
        return f"{self.base}.{node_index}.{self._ip}"

    def svc_ip(self) -> str:
        self._svc += 7
        return f"10.96.{self._svc // 250}.{self._svc % 250 + 2}"

    def healthy(
        self,
        ns: str,
        name: str,
        *,
        image: str,
        nodes: list[tuple[str, str, int]],
        replicas: int,
        created: dt.datetime,
        rollout: dt.datetime,
        revision: int,
        port: int | None = 8080,
        requests: dict[str, str] | None = None,
        limits: dict[str, str] | None = None,
        env_: list[dict[str, Any]] | None = None,
        restarts: dict[int, tuple[int, dict[str, Any]]] | None = None,
        extra_labels: dict[str, str] | None = None,
        node_selector: dict[str, str] | None = None,
        svc: bool = True,
        probe_path: str = "/healthz",
        containers: list[dict[str, Any]] | None = None,
        annotations: dict[str, str] | None = None,
        tpl_annotations: dict[str, str] | None = None,
        pod_extra_containers: list[tuple[dict[str, Any], str]] | None = None,
        volumes: list[dict[str, Any]] | None = None,
        mounts: list[dict[str, Any]] | None = None,
        security: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """nodes: (node name, host ip, node index) cycled over the replicas; returns the pieces."""
        labels = {"app": name}
        labels.update(extra_labels or {})
        cs = containers or [
            container(
                name,
                image,
                ports=[port] if port else None,
                requests=requests or {"cpu": "100m", "memory": "128Mi"},
                limits=limits or {"memory": "256Mi"},
                env=env_,
                readiness=http_probe(probe_path, port) if port else None,
                mounts=mounts,
            )
        ]
        tpl = template(
            labels,
            cs,
            node_selector=node_selector,
            annotations=tpl_annotations,
            volumes=volumes,
            security=security,
        )
        h = suffix(f"{ns}/{name}/{revision}", 10)
        rs_name = f"{name}-{h}"
        dep = deployment(
            ns,
            name,
            created=created,
            replicas=replicas,
            tpl=tpl,
            revision=revision,
            annotations=annotations,
            status=deploy_status(
                replicas,
                replicas,
                avail_since=rollout + dt.timedelta(seconds=40),
                progress_time=rollout + dt.timedelta(seconds=50),
                name=name,
                rs_name=rs_name,
            ),
        )
        rs = replicaset(
            ns,
            name,
            tpl=tpl,
            h=h,
            revision=revision,
            created=rollout,
            replicas=replicas,
            ready=replicas,
        )
        pods = []
        eps = []
        for i in range(replicas):
            nname, hip, nidx = nodes[i % len(nodes)]
            pname = f"{rs_name}-{suffix(rs_name + str(i), 5)}"
            ip = self.pod_ip(nidx)
            started = rollout + dt.timedelta(seconds=8 + 5 * i)
            rcount, last = (restarts or {}).get(i, (0, None))
            st = [running(c["name"], c["image"], started, restarts=rcount, last=last) for c in cs]
            for extra_c, _ in pod_extra_containers or []:
                st.append(running(extra_c["name"], extra_c["image"], started))
            p = pod(
                ns,
                pname,
                tpl=_with_hash(tpl, h),
                owner=("ReplicaSet", rs_name),
                node_name=nname,
                created=rollout + dt.timedelta(seconds=5 * i),
                statuses=st,
                ip=ip,
                host_ip=hip,
            )
            if pod_extra_containers:
                p["spec"]["containers"] = p["spec"]["containers"] + [
                    c for c, _ in pod_extra_containers
                ]
            pods.append(p)
            eps.append((ip, pname, nname))
        objs: list[dict[str, Any]] = [dep, rs, *pods]
        if svc and port:
            objs.append(
                service(
                    ns,
                    name,
                    selector={"app": name},
                    ports=[("http", 80 if port != 5432 else port, port)],
                    cluster_ip=self.svc_ip(),
                    created=created,
                )
            )
            objs.append(endpoints(ns, name, ready=eps, ports=[("http", port)], created=created))
        self.sc.add(objs)
        return {
            "deployment": dep,
            "rs": rs,
            "pods": pods,
            "rs_name": rs_name,
            "tpl": tpl,
            "hash": h,
        }
