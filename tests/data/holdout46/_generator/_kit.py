"""Small shared kit for the holdout46 generators: deterministic names, Kubernetes objects,
log documents and OpenMetrics series, and one writer for a scenario folder."""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

HASH_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def parse(ts: str) -> datetime:
    return datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def rfc(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def rfc_ms(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


class _Dumper(yaml.SafeDumper):
    pass


def _str_representer(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


_Dumper.add_representer(str, _str_representer)


def dump_yaml(doc: Any) -> str:
    return yaml.dump(doc, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=200)


class Scenario:
    """Everything one scenario writes."""

    def __init__(self, sid: str, now: str, seed: int) -> None:
        self.id = sid
        self.now = parse(now)
        self.rng = random.Random(seed)
        self.objects: list[dict] = []
        self.logs: list[dict] = []
        self.pod_logs: dict[tuple[str, str, str, bool], list[str]] = {}
        self.families: dict[str, dict] = {}
        self.meta: dict = {}
        self._ips: dict[str, int] = {}

    # ---- time and names -------------------------------------------------------------
    def ago(
        self, minutes: float = 0, seconds: float = 0, hours: float = 0, days: float = 0
    ) -> datetime:
        return self.now - timedelta(minutes=minutes, seconds=seconds, hours=hours, days=days)

    def suffix(self, n: int = 5) -> str:
        return "".join(self.rng.choice(HASH_ALPHABET) for _ in range(n))

    def uid(self, *parts: str) -> str:
        digest = hashlib.sha1(("|".join((self.id, *parts))).encode()).digest()
        return str(uuid.UUID(bytes=digest[:16], version=4))

    def digest(self, *parts: str) -> str:
        return "sha256:" + hashlib.sha256(("|".join((self.id, *parts))).encode()).hexdigest()

    def ip(self, prefix: str) -> str:
        n = self._ips.get(prefix, 10) + self.rng.randint(1, 9)
        self._ips[prefix] = n
        return f"{prefix}.{n}"

    def add(self, *objs: dict) -> None:
        self.objects.extend(objs)

    # ---- logs -----------------------------------------------------------------------
    def log(
        self,
        at: datetime,
        ns: str,
        pod: str,
        container: str,
        level: str,
        message: str,
        service: str | None = None,
        **extra: Any,
    ) -> None:
        doc = {
            "@timestamp": rfc_ms(at),
            "message": message,
            "log.level": level,
            "service.name": service or container,
            "kubernetes.namespace": ns,
            "kubernetes.pod.name": pod,
            "kubernetes.container.name": container,
        }
        doc.update(extra)
        self.logs.append(doc)

    def pod_log(
        self, ns: str, pod: str, container: str, lines: list[str], previous: bool = False
    ) -> None:
        self.pod_logs.setdefault((ns, pod, container, previous), []).extend(lines)

    # ---- metrics --------------------------------------------------------------------
    def series(
        self,
        name: str,
        mtype: str,
        help_: str,
        labels: dict[str, str],
        points: list[tuple[datetime, float]],
    ) -> None:
        family = name[:-6] if mtype == "counter" and name.endswith("_total") else name
        fam = self.families.setdefault(family, {"type": mtype, "help": help_, "series": []})
        fam["series"].append((name, labels, points))

    def histogram(
        self,
        name: str,
        help_: str,
        labels: dict[str, str],
        bounds: list[str],
        points: list[tuple[datetime, list[float], float]],
    ) -> None:
        """points: (time, cumulative bucket counts one per bound, the last being +Inf, sum)."""
        fam = self.families.setdefault(name, {"type": "histogram", "help": help_, "series": []})
        lines = []
        base = ",".join(f'{k}="{v}"' for k, v in labels.items())
        for at, counts, total in points:
            ts = int(at.timestamp())
            for le, c in zip(bounds, counts, strict=False):
                lines.append(f'{name}_bucket{{{base},le="{le}"}} {_num(c)} {ts}')
            lines.append(f"{name}_count{{{base}}} {_num(counts[-1])} {ts}")
            lines.append(f"{name}_sum{{{base}}} {_num(total)} {ts}")
        fam["series"].append(("__raw__", lines, []))

    def summary(
        self,
        name: str,
        help_: str,
        labels: dict[str, str],
        points: list[tuple[datetime, float, float]],
    ) -> None:
        """points: (time, count, sum)."""
        fam = self.families.setdefault(name, {"type": "summary", "help": help_, "series": []})
        base = ",".join(f'{k}="{v}"' for k, v in labels.items())
        lines = []
        for at, count, total in points:
            ts = int(at.timestamp())
            lines.append(f"{name}_count{{{base}}} {_num(count)} {ts}")
            lines.append(f"{name}_sum{{{base}}} {_num(total)} {ts}")
        fam["series"].append(("__raw__", lines, []))

    def steps(self, minutes: int, step_s: int = 60) -> list[datetime]:
        start = self.now - timedelta(minutes=minutes)
        count = minutes * 60 // step_s
        return [start + timedelta(seconds=step_s * i) for i in range(count + 1)]

    def _clamp_status_times(self) -> None:
        """Status times of controllers and nodes lie within the week (the store keeps a week)."""
        floor = self.now - timedelta(days=6, hours=22)
        keys = {"lastTransitionTime", "lastUpdateTime", "lastHeartbeatTime", "lastScaleTime"}

        def walk(x: Any) -> None:
            if isinstance(x, dict):
                for key, v in x.items():
                    if key in keys and isinstance(v, str) and parse(v) < floor:
                        x[key] = rfc(floor + timedelta(seconds=self.rng.randint(0, 3000)))
                    else:
                        walk(v)
            elif isinstance(x, list):
                for v in x:
                    walk(v)

        for o in self.objects:
            if o["kind"] not in ("Pod", "Event"):
                walk(o.get("status"))
            elif o["kind"] == "Pod":
                st = o.get("status", {})
                if "startTime" in st and parse(st["startTime"]) < floor:
                    raise ValueError(f"pod {o['metadata']['name']} older than the week")

    # ---- writing --------------------------------------------------------------------
    def write(self, root: Path, scenario_yaml: dict) -> None:
        folder = root / self.id
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        head = {"id": self.id, "now": rfc(self.now)}
        head.update(scenario_yaml)
        (folder / "scenario.yaml").write_text(dump_yaml(head))
        self._clamp_status_times()
        if self.objects:
            text = "---\n".join(dump_yaml(o) for o in self.objects)
            (folder / "cluster.yaml").write_text(text)
        if self.logs:
            docs = sorted(self.logs, key=lambda d: d["@timestamp"])
            (folder / "logs.ndjson").write_text(
                "".join(json.dumps(d, sort_keys=False) + "\n" for d in docs)
            )
        for (ns, pod, container, previous), lines in sorted(self.pod_logs.items()):
            path = (
                folder
                / "pod-logs"
                / ns
                / pod
                / (container + (".previous.log" if previous else ".log"))
            )
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(line + "\n" for line in lines))
        if self.families:
            out: list[str] = []
            for family, fam in self.families.items():
                out.append(f"# TYPE {family} {fam['type']}")
                out.append(f"# HELP {family} {fam['help']}")
                for name, labels, points in fam["series"]:
                    if name == "__raw__":
                        out.extend(labels)
                        continue
                    lab = ",".join(f'{k}="{v}"' for k, v in labels.items())
                    lab = "{" + lab + "}" if lab else ""
                    for at, value in points:
                        out.append(f"{name}{lab} {_num(value)} {int(at.timestamp())}")
            out.append("# EOF")
            (folder / "metrics.om").write_text("\n".join(out) + "\n")


def _num(v: float) -> str:
    if isinstance(v, int) or float(v).is_integer():
        return str(int(v))
    return f"{v:.6g}"


# ---- Kubernetes objects ---------------------------------------------------------------


def meta(
    scn: Scenario,
    kind: str,
    name: str,
    ns: str | None,
    created: datetime,
    labels: dict | None = None,
    annotations: dict | None = None,
    owner: dict | None = None,
) -> dict:
    m: dict = {"name": name}
    if ns:
        m["namespace"] = ns
    m["uid"] = scn.uid(kind, ns or "", name)
    m["resourceVersion"] = str(scn.rng.randint(100000, 9999999))
    m["creationTimestamp"] = rfc(created)
    if labels:
        m["labels"] = dict(labels)
    if annotations:
        m["annotations"] = dict(annotations)
    if owner:
        m["ownerReferences"] = [
            {
                "apiVersion": owner["apiVersion"],
                "kind": owner["kind"],
                "name": owner["name"],
                "uid": owner["uid"],
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
    return m


def owner_of(obj: dict) -> dict:
    return {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": obj["metadata"]["name"],
        "uid": obj["metadata"]["uid"],
    }


def namespace(scn: Scenario, name: str, created: datetime) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": meta(
            scn, "Namespace", name, None, created, labels={"kubernetes.io/metadata.name": name}
        ),
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


def node(
    scn: Scenario,
    name: str,
    created: datetime,
    zone: str,
    instance_type: str = "m6i.xlarge",
    cpu: str = "4",
    memory: str = "16073128Ki",
    pods: str = "58",
    extra_labels: dict | None = None,
    ready: bool = True,
    unschedulable: bool = False,
    taints: list | None = None,
    images: list | None = None,
    runtime: str = "containerd://1.7.11",
    kubelet: str = "v1.28.5",
    heartbeat: datetime | None = None,
    internal_ip: str | None = None,
    provider_id: str | None = None,
    alloc_cpu: str | None = None,
    alloc_mem: str | None = None,
) -> dict:
    region = zone[:-1]
    labels = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": instance_type,
        "topology.kubernetes.io/region": region,
        "topology.kubernetes.io/zone": zone,
    }
    labels.update(extra_labels or {})
    hb = rfc(heartbeat or scn.ago(seconds=scn.rng.randint(5, 40)))
    trans = rfc(created + timedelta(seconds=40))
    conds = [
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
            "status": "True" if ready else "Unknown",
            "reason": "KubeletReady" if ready else "NodeStatusUnknown",
            "message": "kubelet is posting ready status"
            if ready
            else "Kubelet stopped posting node status.",
        },
    ]
    for c in conds:
        c["lastHeartbeatTime"] = hb
        c["lastTransitionTime"] = trans
    ip = internal_ip or scn.ip(f"10.0.{ord(zone[-1]) - 96}")
    spec: dict = {}
    if provider_id:
        spec["providerID"] = provider_id
    if unschedulable:
        spec["unschedulable"] = True
    if taints:
        spec["taints"] = taints
    status = {
        "addresses": [{"type": "InternalIP", "address": ip}, {"type": "Hostname", "address": name}],
        "allocatable": {
            "cpu": alloc_cpu or (str(int(cpu) * 1000 - 90) + "m"),
            "ephemeral-storage": "95491281146",
            "memory": alloc_mem or "14918696Ki",
            "pods": pods,
        },
        "capacity": {
            "cpu": cpu,
            "ephemeral-storage": "104845292Ki",
            "memory": memory,
            "pods": pods,
        },
        "conditions": conds,
        "nodeInfo": {
            "architecture": "amd64",
            "containerRuntimeVersion": runtime,
            "kernelVersion": "6.1.66-91.160.amzn2023.x86_64",
            "kubeProxyVersion": kubelet,
            "kubeletVersion": kubelet,
            "operatingSystem": "linux",
            "osImage": "Amazon Linux 2023.3.20231218",
        },
    }
    if images is not None:
        status["images"] = images
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": meta(scn, "Node", name, None, created, labels=labels),
        "spec": spec,
        "status": status,
    }


def container(
    name: str,
    image: str,
    ports: list | None = None,
    cpu: str = "250m",
    memory: str = "256Mi",
    limit_cpu: str | None = None,
    limit_memory: str | None = None,
    env: list | None = None,
    readiness: dict | None = None,
    liveness: dict | None = None,
    startup: dict | None = None,
    command: list | None = None,
    args: list | None = None,
    mounts: list | None = None,
) -> dict:
    c: dict = {"name": name, "image": image, "imagePullPolicy": "IfNotPresent"}
    if command:
        c["command"] = command
    if args:
        c["args"] = args
    if ports:
        c["ports"] = ports
    if env:
        c["env"] = env
    res: dict = {"requests": {"cpu": cpu, "memory": memory}}
    lim: dict = {}
    if limit_cpu:
        lim["cpu"] = limit_cpu
    lim["memory"] = limit_memory or memory
    res["limits"] = lim
    c["resources"] = res
    if readiness:
        c["readinessProbe"] = readiness
    if liveness:
        c["livenessProbe"] = liveness
    if startup:
        c["startupProbe"] = startup
    if mounts:
        c["volumeMounts"] = mounts
    c["terminationMessagePath"] = "/dev/termination-log"
    c["terminationMessagePolicy"] = "File"
    return c


def http_probe(
    path: str,
    port: Any,
    delay: int = 10,
    period: int = 10,
    timeout: int = 1,
    failure: int = 3,
    scheme: str = "HTTP",
) -> dict:
    return {
        "httpGet": {"path": path, "port": port, "scheme": scheme},
        "initialDelaySeconds": delay,
        "periodSeconds": period,
        "timeoutSeconds": timeout,
        "successThreshold": 1,
        "failureThreshold": failure,
    }


def tcp_probe(port: Any, delay: int = 15, period: int = 20) -> dict:
    return {
        "tcpSocket": {"port": port},
        "initialDelaySeconds": delay,
        "periodSeconds": period,
        "timeoutSeconds": 1,
        "successThreshold": 1,
        "failureThreshold": 3,
    }


def pod_spec(
    containers: list,
    init: list | None = None,
    node_selector: dict | None = None,
    affinity: dict | None = None,
    volumes: list | None = None,
    sa: str = "default",
    restart: str = "Always",
    tolerations: list | None = None,
    grace: int = 30,
) -> dict:
    s: dict = {}
    if init:
        s["initContainers"] = init
    s["containers"] = containers
    s["restartPolicy"] = restart
    s["terminationGracePeriodSeconds"] = grace
    s["dnsPolicy"] = "ClusterFirst"
    s["serviceAccountName"] = sa
    if node_selector:
        s["nodeSelector"] = node_selector
    if affinity:
        s["affinity"] = affinity
    s["schedulerName"] = "default-scheduler"
    tol = [
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
    s["tolerations"] = (tolerations or []) + tol
    if volumes:
        s["volumes"] = volumes
    return s


def cs_running(
    name: str,
    image: str,
    image_id: str,
    started: datetime,
    ready: bool = True,
    restarts: int = 0,
    last: dict | None = None,
) -> dict:
    c = {
        "name": name,
        "image": image,
        "imageID": image_id,
        "containerID": "containerd://"
        + hashlib.sha256((name + rfc(started) + image).encode()).hexdigest(),
        "ready": ready,
        "started": True,
        "restartCount": restarts,
        "state": {"running": {"startedAt": rfc(started)}},
        "lastState": {},
    }
    if last:
        c["lastState"] = {"terminated": last}
    return c


def terminated(
    reason: str, exit_code: int, started: datetime, finished: datetime, cid_seed: str = ""
) -> dict:
    return {
        "containerID": "containerd://"
        + hashlib.sha256((cid_seed + rfc(started)).encode()).hexdigest(),
        "exitCode": exit_code,
        "reason": reason,
        "startedAt": rfc(started),
        "finishedAt": rfc(finished),
    }


def cs_waiting(
    name: str,
    image: str,
    reason: str,
    message: str | None = None,
    restarts: int = 0,
    last: dict | None = None,
    image_id: str = "",
) -> dict:
    w: dict = {"reason": reason}
    if message:
        w["message"] = message
    c = {
        "name": name,
        "image": image,
        "imageID": image_id,
        "ready": False,
        "started": False,
        "restartCount": restarts,
        "state": {"waiting": w},
        "lastState": {},
    }
    if last:
        c["lastState"] = {"terminated": last}
        c["containerID"] = last["containerID"]
    return c


def cs_terminated(name: str, image: str, image_id: str, term: dict, restarts: int = 0) -> dict:
    return {
        "name": name,
        "image": image,
        "imageID": image_id,
        "containerID": term["containerID"],
        "ready": False,
        "started": False,
        "restartCount": restarts,
        "state": {"terminated": term},
        "lastState": {},
    }


def pod_conditions(
    created: datetime,
    scheduled: bool = True,
    initialized: bool = True,
    ready: bool = True,
    ready_at: datetime | None = None,
    reason: str | None = None,
    message: str | None = None,
    init_reason: str | None = None,
) -> list:
    t = rfc(created)
    ra = rfc(ready_at or created + timedelta(seconds=12))
    if not scheduled:
        return [
            {
                "type": "PodScheduled",
                "status": "False",
                "lastProbeTime": None,
                "lastTransitionTime": t,
                "reason": "Unschedulable",
                "message": message,
            }
        ]
    conds = [
        {
            "type": "Initialized",
            "status": "True" if initialized else "False",
            "lastProbeTime": None,
            "lastTransitionTime": t,
        }
    ]
    if not initialized:
        conds[0]["reason"] = "ContainersNotInitialized"
        conds[0]["message"] = init_reason
    r = {
        "type": "Ready",
        "status": "True" if ready else "False",
        "lastProbeTime": None,
        "lastTransitionTime": ra if ready else t,
    }
    cr = {
        "type": "ContainersReady",
        "status": r["status"],
        "lastProbeTime": None,
        "lastTransitionTime": r["lastTransitionTime"],
    }
    if not ready:
        r["reason"] = reason or "ContainersNotReady"
        cr["reason"] = reason or "ContainersNotReady"
        if message:
            r["message"] = message
            cr["message"] = message
    conds += [
        r,
        cr,
        {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": t},
    ]
    return conds


def pod(
    scn: Scenario,
    ns: str,
    name: str,
    owner: dict | None,
    labels: dict,
    spec: dict,
    node_name: str | None,
    node_ip: str | None,
    created: datetime,
    phase: str,
    conditions: list,
    statuses: list,
    init_statuses: list | None = None,
    annotations: dict | None = None,
    qos: str = "Burstable",
    pod_ip: str | None = None,
) -> dict:
    sp = dict(spec)
    if node_name:
        sp = {**sp, "nodeName": node_name}
    status: dict = {"phase": phase, "conditions": conditions, "qosClass": qos}
    if node_name:
        status["hostIP"] = node_ip
        ip = pod_ip or scn.ip(f"10.244.{sum(map(ord, node_name)) % 200}")
        status["podIP"] = ip
        status["podIPs"] = [{"ip": ip}]
        status["startTime"] = rfc(created + timedelta(seconds=1))
        if init_statuses is not None:
            status["initContainerStatuses"] = init_statuses
        status["containerStatuses"] = statuses
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta(
            scn, "Pod", name, ns, created, labels=labels, annotations=annotations, owner=owner
        ),
        "spec": sp,
        "status": status,
    }


def deployment(
    scn: Scenario,
    ns: str,
    name: str,
    replicas: int,
    template_labels: dict,
    spec: dict,
    created: datetime,
    revision: int,
    status: dict,
    labels: dict | None = None,
    annotations: dict | None = None,
    strategy: dict | None = None,
    template_annotations: dict | None = None,
) -> dict:
    ann = {"deployment.kubernetes.io/revision": str(revision)}
    ann.update(annotations or {})
    tmeta: dict = {"labels": template_labels}
    if template_annotations:
        tmeta["annotations"] = template_annotations
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta(
            scn, "Deployment", name, ns, created, labels=labels or template_labels, annotations=ann
        ),
        "spec": {
            "replicas": replicas,
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600,
            "selector": {
                "matchLabels": {
                    k: v
                    for k, v in template_labels.items()
                    if k in ("app", "app.kubernetes.io/name", "component")
                }
            },
            "strategy": strategy
            or {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
            },
            "template": {"metadata": tmeta, "spec": spec},
        },
        "status": status,
    }


def deploy_status(
    replicas: int,
    ready: int,
    updated: int,
    available: int,
    generation: int,
    progressing: tuple[str, str, str, datetime],
    available_cond: tuple[str, str, str, datetime],
    since: datetime,
) -> dict:
    st: dict = {
        "observedGeneration": generation,
        "replicas": replicas,
        "updatedReplicas": updated,
        "readyReplicas": ready,
        "availableReplicas": available,
    }
    if replicas - available > 0:
        st["unavailableReplicas"] = replicas - available
    st = {k: v for k, v in st.items() if v != 0 or k in ("observedGeneration", "replicas")}
    st["conditions"] = [
        {
            "type": "Available",
            "status": available_cond[0],
            "reason": available_cond[1],
            "message": available_cond[2],
            "lastUpdateTime": rfc(available_cond[3]),
            "lastTransitionTime": rfc(available_cond[3]),
        },
        {
            "type": "Progressing",
            "status": progressing[0],
            "reason": progressing[1],
            "message": progressing[2],
            "lastUpdateTime": rfc(progressing[3]),
            "lastTransitionTime": rfc(min(since, progressing[3])),
        },
    ]
    return st


def replicaset(
    scn: Scenario,
    dep: dict,
    rs_name: str,
    pth: str,
    replicas: int,
    ready: int,
    created: datetime,
    revision: int,
    spec: dict,
    template_labels: dict,
) -> dict:
    labels = dict(template_labels)
    labels["pod-template-hash"] = pth
    ann = {
        "deployment.kubernetes.io/desired-replicas": str(dep["spec"]["replicas"]),
        "deployment.kubernetes.io/max-replicas": str(dep["spec"]["replicas"] + 1),
        "deployment.kubernetes.io/revision": str(revision),
    }
    status: dict = {"replicas": replicas, "observedGeneration": 1 + revision}
    if replicas:
        status["fullyLabeledReplicas"] = replicas
    if ready:
        status["readyReplicas"] = ready
        status["availableReplicas"] = ready
    sel = dict(dep["spec"]["selector"]["matchLabels"])
    sel["pod-template-hash"] = pth
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": meta(
            scn,
            "ReplicaSet",
            rs_name,
            dep["metadata"]["namespace"],
            created,
            labels=labels,
            annotations=ann,
            owner=owner_of(dep),
        ),
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": sel},
            "template": {"metadata": {"labels": labels}, "spec": spec},
        },
        "status": status,
    }


def service(
    scn: Scenario,
    ns: str,
    name: str,
    selector: dict,
    ports: list,
    created: datetime,
    cluster_ip: str | None = None,
    stype: str = "ClusterIP",
    labels: dict | None = None,
    annotations: dict | None = None,
    lb_hostname: str | None = None,
    headless: bool = False,
) -> dict:
    ip = "None" if headless else (cluster_ip or scn.ip(f"172.20.{scn.rng.randint(10, 250)}"))
    spec: dict = {
        "type": stype,
        "clusterIP": ip,
        "clusterIPs": [ip],
        "selector": selector,
        "ports": ports,
        "sessionAffinity": "None",
        "internalTrafficPolicy": "Cluster",
        "ipFamilies": ["IPv4"],
        "ipFamilyPolicy": "SingleStack",
    }
    if headless:
        spec["publishNotReadyAddresses"] = True
    status: dict = {"loadBalancer": {}}
    if lb_hostname:
        status = {"loadBalancer": {"ingress": [{"hostname": lb_hostname}]}}
        spec["externalTrafficPolicy"] = "Cluster"
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta(
            scn,
            "Service",
            name,
            ns,
            created,
            labels=labels or {"app": name},
            annotations=annotations,
        ),
        "spec": spec,
        "status": status,
    }


def endpoints(
    scn: Scenario, svc: dict, ready: list[dict], not_ready: list[dict] | None = None
) -> dict:
    """ready / not_ready: list of Pod objects."""

    def addr(p: dict) -> dict:
        return {
            "ip": p["status"]["podIP"],
            "nodeName": p["spec"]["nodeName"],
            "targetRef": {
                "kind": "Pod",
                "name": p["metadata"]["name"],
                "namespace": p["metadata"]["namespace"],
                "uid": p["metadata"]["uid"],
            },
        }

    ports = [
        {
            "name": pt.get("name", ""),
            "port": pt.get("targetPort", pt["port"])
            if isinstance(pt.get("targetPort"), int)
            else pt["port"],
            "protocol": pt.get("protocol", "TCP"),
        }
        for pt in svc["spec"]["ports"]
    ]
    for pt in ports:
        if not pt["name"]:
            del pt["name"]
    subset: dict = {}
    if ready:
        subset["addresses"] = [addr(p) for p in ready]
    if not_ready:
        subset["notReadyAddresses"] = [addr(p) for p in not_ready]
    md = meta(
        scn,
        "Endpoints",
        svc["metadata"]["name"],
        svc["metadata"]["namespace"],
        parse(svc["metadata"]["creationTimestamp"]),
        labels=svc["metadata"].get("labels"),
    )
    obj: dict = {"apiVersion": "v1", "kind": "Endpoints", "metadata": md}
    if subset:
        subset["ports"] = ports
        obj["subsets"] = [subset]
    return obj


def event(
    scn: Scenario,
    ns: str,
    kind: str,
    name: str,
    reason: str,
    message: str,
    first: datetime,
    last: datetime | None = None,
    count: int = 1,
    etype: str = "Normal",
    component: str = "kubelet",
    host: str | None = None,
    field_path: str | None = None,
    api_version: str = "v1",
    involved_uid: str | None = None,
) -> dict:
    last = last or first
    inv: dict = {
        "kind": kind,
        "namespace": ns,
        "name": name,
        "apiVersion": api_version,
        "uid": involved_uid or scn.uid(kind, ns, name),
    }
    if not ns:
        del inv["namespace"]
    if field_path:
        inv["fieldPath"] = field_path
    src: dict = {"component": component}
    if host:
        src["host"] = host
    ev_name = f"{name}.{hashlib.sha1((reason + message + rfc(first)).encode()).hexdigest()[:16]}"
    md = {
        "name": ev_name,
        "namespace": ns or "default",
        "uid": scn.uid("Event", ev_name),
        "resourceVersion": str(scn.rng.randint(100000, 9999999)),
        "creationTimestamp": rfc(first),
    }
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": md,
        "involvedObject": inv,
        "reason": reason,
        "message": message,
        "source": src,
        "type": etype,
        "count": count,
        "firstTimestamp": rfc(first),
        "lastTimestamp": rfc(last),
        "reportingComponent": component,
        "reportingInstance": host or "",
    }


def healthy_deployment(
    scn: Scenario,
    ns: str,
    name: str,
    image: str,
    replicas: int,
    nodes: list[dict],
    created: datetime,
    rs_created: datetime | None = None,
    revision: int = 1,
    port: int = 8080,
    cpu: str = "100m",
    memory: str = "256Mi",
    limit_cpu: str | None = None,
    env: list | None = None,
    with_service: bool = True,
    readiness_path: str = "/healthz",
    restarts: dict | None = None,
    extra_labels: dict | None = None,
    liveness: dict | None = None,
    mounts: list | None = None,
    volumes: list | None = None,
    service_port: int = 80,
) -> dict:
    """A Deployment with one ReplicaSet and all its pods Running and Ready; returns the parts."""
    rs_created = rs_created or created
    labels = {"app": name}
    labels.update(extra_labels or {})
    c = container(
        name,
        image,
        ports=[{"name": "http", "containerPort": port, "protocol": "TCP"}],
        cpu=cpu,
        memory=memory,
        limit_cpu=limit_cpu,
        env=env,
        readiness=http_probe(readiness_path, "http", delay=5) if readiness_path else None,
        liveness=liveness,
        mounts=mounts,
    )
    spec = pod_spec([c], volumes=volumes)
    dep = deployment(
        scn,
        ns,
        name,
        replicas,
        labels,
        spec,
        created,
        revision,
        deploy_status(
            replicas,
            replicas,
            replicas,
            replicas,
            revision + 1,
            (
                "True",
                "NewReplicaSetAvailable",
                f'ReplicaSet "{name}-PTH" has successfully progressed.',
                rs_created + timedelta(minutes=1),
            ),
            (
                "True",
                "MinimumReplicasAvailable",
                "Deployment has minimum availability.",
                rs_created + timedelta(minutes=1),
            ),
            created,
        ),
    )
    pth = scn.suffix(10)
    rs_name = f"{name}-{pth}"
    prog = dep["status"]["conditions"][1]
    prog["message"] = prog["message"].replace(f"{name}-PTH", rs_name)
    rs = replicaset(scn, dep, rs_name, pth, replicas, replicas, rs_created, revision, spec, labels)
    image_id = image.split(":")[0].split("@")[0] + "@" + scn.digest(image)
    pods = []
    for i in range(replicas):
        nd = nodes[i % len(nodes)]
        pname = f"{rs_name}-{scn.suffix()}"
        pc = max(rs_created, scn.ago(days=6, hours=scn.rng.randint(1, 20))) + timedelta(
            seconds=20 * i + scn.rng.randint(0, 15)
        )
        r = (restarts or {}).get(i, 0)
        last = None
        started = pc + timedelta(seconds=4)
        if r:
            last_fin = scn.ago(days=2, hours=scn.rng.randint(1, 20))
            if last_fin < pc + timedelta(minutes=5):
                last_fin = pc + (scn.now - pc) / 3
            last = terminated("Error", 137, started, last_fin, pname)
            started = last_fin + timedelta(seconds=2)
        st = cs_running(name, image, image_id, started, True, r, last)
        plabels = dict(labels)
        plabels["pod-template-hash"] = pth
        p = pod(
            scn,
            ns,
            pname,
            owner_of(rs),
            plabels,
            spec,
            nd["metadata"]["name"],
            nd["status"]["addresses"][0]["address"],
            pc,
            "Running",
            pod_conditions(pc, ready_at=started + timedelta(seconds=8)),
            [st],
        )
        pods.append(p)
    parts = {"deployment": dep, "replicaset": rs, "pods": pods, "labels": labels}
    if with_service:
        svc = service(
            scn,
            ns,
            name,
            {"app": name},
            [{"name": "http", "port": service_port, "protocol": "TCP", "targetPort": "http"}],
            created,
        )
        ep = endpoints(scn, svc, pods)
        for sub in ep.get("subsets", []):
            for pt in sub["ports"]:
                pt["port"] = port
        parts["service"] = svc
        parts["endpoints"] = ep
    return parts


def add_parts(scn: Scenario, parts: dict) -> None:
    scn.add(parts["deployment"], parts["replicaset"], *parts["pods"])
    if "service" in parts:
        scn.add(parts["service"], parts["endpoints"])


def ramp(points: list[datetime], fn) -> list[tuple[datetime, float]]:
    return [(t, fn(i, t)) for i, t in enumerate(points)]
