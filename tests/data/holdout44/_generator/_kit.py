"""Small shared helpers for the holdout44 generator: object builders, logs, metrics.

Everything is deterministic: names, uids, IPs and jitter come from seeded generators.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
_HASH_CHARS = "bcdfghjklmnpqrstvwxz2456789"


def ts(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def ts_ms(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def parse(s: str) -> datetime:
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def uid(*parts: str) -> str:
    return str(uuid.UUID(hashlib.md5("/".join(parts).encode()).hexdigest()))


def sha(*parts: str) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()


class Scn:
    """One scenario being built."""

    def __init__(self, sid: str, now: str, seed: int):
        self.id = sid
        self.now = parse(now)
        self.rng = random.Random(seed)
        self.objs: list[dict] = []
        self.logs: list[dict] = []
        self.podlogs: dict[tuple[str, str, str, bool], list[str]] = {}
        self.metrics = Metrics()

    # time -----------------------------------------------------------------
    def ago(self, **kw) -> datetime:
        return self.now - timedelta(**kw)

    # names ----------------------------------------------------------------
    def rs_hash(self) -> str:
        return "".join(self.rng.choice(_HASH_CHARS) for _ in range(10))

    def pod_suffix(self) -> str:
        return "".join(self.rng.choice(_HASH_CHARS) for _ in range(5))

    def add(self, *objs: dict) -> None:
        self.objs.extend(objs)

    # logs -----------------------------------------------------------------
    def log(
        self,
        t: datetime,
        ns: str,
        pod: str,
        container: str,
        service: str,
        level: str,
        message: str,
        **extra,
    ) -> None:
        doc = {
            "@timestamp": ts_ms(t),
            "message": message,
            "log.level": level,
            "service.name": service,
            "kubernetes.namespace": ns,
            "kubernetes.pod.name": pod,
            "kubernetes.container.name": container,
        }
        doc.update(extra)
        self.logs.append(doc)

    def podlog(
        self, ns: str, pod: str, container: str, lines: list[str], previous: bool = False
    ) -> None:
        self.podlogs.setdefault((ns, pod, container, previous), []).extend(lines)

    # output ---------------------------------------------------------------
    def write(self, title: str, report: str, truth: dict, interventions=None) -> None:
        out = ROOT / self.id
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        meta = {
            "id": self.id,
            "title": title,
            "now": ts(self.now),
            "report": report,
            "truth": truth,
        }
        if interventions:
            meta["interventions"] = interventions
        (out / "scenario.yaml").write_text(
            yaml.dump(meta, sort_keys=False, width=100, allow_unicode=True)
        )
        (out / "cluster.yaml").write_text(
            yaml.dump_all(self.objs, sort_keys=False, width=1000, explicit_start=False)
        )
        if self.logs:
            docs = sorted(self.logs, key=lambda d: d["@timestamp"])
            (out / "logs.ndjson").write_text(
                "".join(json.dumps(d, separators=(",", ":")) + "\n" for d in docs)
            )
        if self.metrics.families:
            (out / "metrics.om").write_text(self.metrics.render())
        for (ns, pod, container, previous), lines in sorted(self.podlogs.items()):
            d = out / "pod-logs" / ns / pod
            d.mkdir(parents=True, exist_ok=True)
            name = f"{container}.previous.log" if previous else f"{container}.log"
            (d / name).write_text("".join(line + "\n" for line in lines))


# metrics ------------------------------------------------------------------
class Metrics:
    def __init__(self):
        self.families: dict[str, dict] = {}

    def family(self, name: str, mtype: str, help_: str, unit: str | None = None) -> dict:
        fam = self.families.get(name)
        if fam is None:
            fam = {"type": mtype, "help": help_, "unit": unit, "series": []}
            self.families[name] = fam
        return fam

    def series(
        self,
        name: str,
        mtype: str,
        help_: str,
        labels: dict,
        points: list[tuple[float, float]],
        suffix: str = "",
    ) -> None:
        """points: (unix_seconds, value). For counters the sample name gets _total."""
        fam = self.family(name, mtype, help_)
        sample = name + ("_total" if mtype == "counter" else "") + suffix
        fam["series"].append((sample, labels, points))

    def multi(
        self,
        name: str,
        mtype: str,
        help_: str,
        labels: dict,
        parts: dict[str, list[tuple[float, float]]],
    ) -> None:
        """Samples of one metric point rendered together (summary _count/_sum, buckets)."""
        fam = self.family(name, mtype, help_)
        fam["series"].append((None, labels, parts))

    def render(self) -> str:
        lines: list[str] = []
        for name, fam in self.families.items():
            lines.append(f"# TYPE {name} {fam['type']}")
            lines.append(f"# HELP {name} {fam['help']}")
            for sample, labels, points in fam["series"]:
                if sample is None:
                    # parts: suffix (optionally "suffix|le") -> points
                    keys = list(points)
                    n = len(points[keys[0]])
                    for i in range(n):
                        for key in keys:
                            suf, _, le = key.partition("|")
                            lab2 = dict(labels)
                            if le:
                                lab2["le"] = le
                            lab = "{" + ",".join(f'{a}="{b}"' for a, b in lab2.items()) + "}"
                            t, v = points[key][i]
                            lines.append(f"{name}{suf}{lab} {_num(v)} {int(t)}")
                    continue
                lab = ",".join(f'{k}="{v}"' for k, v in labels.items())
                lab = "{" + lab + "}" if lab else ""
                for t, v in points:
                    lines.append(f"{sample}{lab} {_num(v)} {int(t)}")
        lines.append("# EOF")
        return "\n".join(lines) + "\n"


def _num(v: float) -> str:
    if isinstance(v, int) or float(v).is_integer():
        return str(int(v))
    return f"{v:.6g}" if abs(v) < 1e-3 else f"{v:.4f}".rstrip("0").rstrip(".")


def grid(start: datetime, end: datetime, step: int = 60) -> list[float]:
    t0, t1 = int(start.timestamp()), int(end.timestamp())
    t0 -= t0 % step
    return [float(t) for t in range(t0, t1 + 1, step)]


# objects ------------------------------------------------------------------
def namespace(name: str, created: datetime, labels: dict | None = None) -> dict:
    lab = {"kubernetes.io/metadata.name": name}
    lab.update(labels or {})
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": name,
            "uid": uid("ns", name),
            "labels": lab,
            "creationTimestamp": ts(created),
        },
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


def node(
    name: str,
    zone: str,
    created: datetime,
    heartbeat: datetime,
    cpu: str = "4",
    memory: str = "16131288Ki",
    alloc_cpu: str = "3920m",
    alloc_mem: str = "15094488Ki",
    instance: str = "m6i.xlarge",
    unschedulable: bool = False,
    labels: dict | None = None,
    kubelet: str = "v1.29.6",
    pool: str = "general",
    extra_taints: list | None = None,
    region: str = "eu-west-1",
) -> dict:
    lab = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": instance,
        "topology.kubernetes.io/region": region,
        "topology.kubernetes.io/zone": zone,
        "nodepool": pool,
    }
    lab.update(labels or {})
    spec: dict = {"providerID": f"aws:///{zone}/i-0{sha(name)[:16]}"}
    taints = list(extra_taints or [])
    if unschedulable:
        spec["unschedulable"] = True
        taints.append(
            {
                "key": "node.kubernetes.io/unschedulable",
                "effect": "NoSchedule",
                "timeAdded": ts(heartbeat - timedelta(minutes=40)),
            }
        )
    if taints:
        spec["taints"] = taints
    ip = (
        f"10.{20 + int(sha(name)[0], 16) % 4}.{int(sha(name)[1:3], 16) % 64}."
        f"{int(sha(name)[3:5], 16) % 250 + 2}"
    )
    hb = ts(heartbeat)
    since = max(created, heartbeat - timedelta(days=6, hours=20))
    cond = []
    for ctype, reason, msg in [
        ("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
        ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ]:
        cond.append(
            {
                "type": ctype,
                "status": "False",
                "lastHeartbeatTime": hb,
                "lastTransitionTime": ts(since + timedelta(minutes=1)),
                "reason": reason,
                "message": msg,
            }
        )
    cond.append(
        {
            "type": "Ready",
            "status": "True",
            "lastHeartbeatTime": hb,
            "lastTransitionTime": ts(since + timedelta(minutes=1, seconds=20)),
            "reason": "KubeletReady",
            "message": "kubelet is posting ready status",
        }
    )
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": uid("node", name),
            "labels": lab,
            "creationTimestamp": ts(created),
        },
        "spec": spec,
        "status": {
            "addresses": [
                {"type": "InternalIP", "address": ip},
                {"type": "Hostname", "address": name},
            ],
            "capacity": {
                "cpu": cpu,
                "ephemeral-storage": "104845292Ki",
                "memory": memory,
                "pods": "58",
            },
            "allocatable": {
                "cpu": alloc_cpu,
                "ephemeral-storage": "95551679124",
                "memory": alloc_mem,
                "pods": "58",
            },
            "conditions": cond,
            "nodeInfo": {
                "architecture": "amd64",
                "containerRuntimeVersion": "containerd://1.7.11",
                "kernelVersion": "6.1.94-99.176.amzn2023.x86_64",
                "kubeProxyVersion": kubelet,
                "kubeletVersion": kubelet,
                "operatingSystem": "linux",
                "osImage": "Amazon Linux 2023.5.20240701",
            },
        },
    }


def container(
    name: str,
    image: str,
    ports: list | None = None,
    env: list | None = None,
    resources: dict | None = None,
    readiness: dict | None = None,
    liveness: dict | None = None,
    **extra,
) -> dict:
    c: dict = {"name": name, "image": image, "imagePullPolicy": "IfNotPresent"}
    if ports:
        c["ports"] = ports
    if env:
        c["env"] = env
    c.update(extra)
    c["resources"] = resources or {}
    if readiness:
        c["readinessProbe"] = readiness
    if liveness:
        c["livenessProbe"] = liveness
    c["terminationMessagePath"] = "/dev/termination-log"
    c["terminationMessagePolicy"] = "File"
    return c


def res(req_cpu: str, req_mem: str, lim_cpu: str | None = None, lim_mem: str | None = None) -> dict:
    r: dict = {"requests": {"cpu": req_cpu, "memory": req_mem}}
    lim = {}
    if lim_cpu:
        lim["cpu"] = lim_cpu
    if lim_mem:
        lim["memory"] = lim_mem
    if lim:
        r["limits"] = lim
    return r


def http_probe(
    path: str, port, period: int = 10, initial: int = 0, timeout: int = 1, failure: int = 3
) -> dict:
    return {
        "httpGet": {"path": path, "port": port, "scheme": "HTTP"},
        "initialDelaySeconds": initial,
        "periodSeconds": period,
        "timeoutSeconds": timeout,
        "successThreshold": 1,
        "failureThreshold": failure,
    }


def template(labels: dict, containers: list, annotations: dict | None = None, **spec) -> dict:
    meta: dict = {"labels": dict(labels)}
    if annotations:
        meta["annotations"] = annotations
    s = {
        "containers": containers,
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "schedulerName": "default-scheduler",
        "securityContext": {},
    }
    s.update(spec)
    return {"metadata": meta, "spec": s}


def deployment(
    name: str,
    ns: str,
    created: datetime,
    tmpl: dict,
    replicas: int,
    revision: int,
    status: dict,
    conditions: list,
    labels: dict | None = None,
    annotations: dict | None = None,
    strategy: dict | None = None,
    generation: int | None = None,
) -> dict:
    ann = {"deployment.kubernetes.io/revision": str(revision)}
    ann.update(annotations or {})
    gen = generation or revision + 2
    st = {"observedGeneration": gen}
    st.update(status)
    st["conditions"] = conditions
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": uid("deploy", ns, name),
            "generation": gen,
            "creationTimestamp": ts(created),
            "labels": labels or {"app.kubernetes.io/name": name},
            "annotations": ann,
        },
        "spec": {
            "replicas": replicas,
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600,
            "selector": {"matchLabels": {"app.kubernetes.io/name": name}},
            "strategy": strategy
            or {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
            },
            "template": tmpl,
        },
        "status": st,
    }


def dep_conditions(
    avail_since: datetime,
    progress_at: datetime,
    rs: str,
    available: bool = True,
    progressing: str = "complete",
) -> list:
    if available:
        a = {
            "type": "Available",
            "status": "True",
            "lastUpdateTime": ts(avail_since),
            "lastTransitionTime": ts(avail_since),
            "reason": "MinimumReplicasAvailable",
            "message": "Deployment has minimum availability.",
        }
    else:
        a = {
            "type": "Available",
            "status": "False",
            "lastUpdateTime": ts(avail_since),
            "lastTransitionTime": ts(avail_since),
            "reason": "MinimumReplicasUnavailable",
            "message": "Deployment does not have minimum availability.",
        }
    if progressing == "complete":
        p = {
            "type": "Progressing",
            "status": "True",
            "lastUpdateTime": ts(progress_at),
            "lastTransitionTime": ts(progress_at),
            "reason": "NewReplicaSetAvailable",
            "message": f'ReplicaSet "{rs}" has successfully progressed.',
        }
    elif progressing == "updating":
        p = {
            "type": "Progressing",
            "status": "True",
            "lastUpdateTime": ts(progress_at),
            "lastTransitionTime": ts(progress_at),
            "reason": "ReplicaSetUpdated",
            "message": f'ReplicaSet "{rs}" is progressing.',
        }
    else:
        p = {
            "type": "Progressing",
            "status": "False",
            "lastUpdateTime": ts(progress_at),
            "lastTransitionTime": ts(progress_at),
            "reason": "ProgressDeadlineExceeded",
            "message": f'ReplicaSet "{rs}" has timed out progressing.',
        }
    return [a, p]


def replicaset(
    dep: dict,
    rs_hash: str,
    created: datetime,
    revision: int,
    tmpl: dict,
    replicas: int,
    ready: int | None = None,
    available: int | None = None,
) -> dict:
    ns, dname = dep["metadata"]["namespace"], dep["metadata"]["name"]
    name = f"{dname}-{rs_hash}"
    t = json.loads(json.dumps(tmpl))
    t["metadata"]["labels"]["pod-template-hash"] = rs_hash
    sel = dict(dep["spec"]["selector"]["matchLabels"])
    sel["pod-template-hash"] = rs_hash
    ready = replicas if ready is None else ready
    available = ready if available is None else available
    st: dict = {
        "replicas": replicas,
        "fullyLabeledReplicas": replicas,
        "observedGeneration": 1 if replicas == 0 else 2,
    }
    if replicas:
        st["readyReplicas"] = ready
        st["availableReplicas"] = available
    if not ready:
        st.pop("readyReplicas", None)
        st.pop("availableReplicas", None)
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": uid("rs", ns, name),
            "generation": 2 if replicas == 0 else 1,
            "creationTimestamp": ts(created),
            "labels": t["metadata"]["labels"],
            "annotations": {
                "deployment.kubernetes.io/desired-replicas": str(dep["spec"]["replicas"]),
                "deployment.kubernetes.io/max-replicas": str(dep["spec"]["replicas"] + 1),
                "deployment.kubernetes.io/revision": str(revision),
            },
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": dname,
                    "uid": dep["metadata"]["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {"replicas": replicas, "selector": {"matchLabels": sel}, "template": t},
        "status": st,
    }


def image_id(image: str) -> str:
    repo = image.split(":")[0]
    return f"{repo}@sha256:{sha(image)}"


def cs_running(
    c: dict, started: datetime, ready: bool = True, restarts: int = 0, last: dict | None = None
) -> dict:
    s = {
        "name": c["name"],
        "image": c["image"],
        "imageID": image_id(c["image"]),
        "containerID": "containerd://" + sha(c["name"], ts(started), c["image"]),
        "ready": ready,
        "started": True,
        "restartCount": restarts,
        "state": {"running": {"startedAt": ts(started)}},
        "lastState": {},
    }
    if last:
        s["lastState"] = {"terminated": last}
    return s


def cs_waiting(c: dict, reason: str, message: str, restarts: int, last: dict | None) -> dict:
    s = {
        "name": c["name"],
        "image": c["image"],
        "imageID": image_id(c["image"]),
        "ready": False,
        "started": False,
        "restartCount": restarts,
        "state": {"waiting": {"reason": reason, "message": message}},
        "lastState": {},
    }
    if last:
        s["containerID"] = last["containerID"]
        s["lastState"] = {"terminated": last}
    return s


def terminated(
    reason: str,
    code: int,
    started: datetime,
    finished: datetime,
    cid: str,
    message: str | None = None,
) -> dict:
    t = {
        "exitCode": code,
        "reason": reason,
        "startedAt": ts(started),
        "finishedAt": ts(finished),
        "containerID": "containerd://" + sha(cid, ts(started)),
    }
    if message:
        t["message"] = message
    return t


def pod(
    scn: Scn,
    rs: dict | None,
    name: str,
    node_name: str,
    ip: str,
    created: datetime,
    statuses: list,
    ready: bool,
    phase: str = "Running",
    owner: dict | None = None,
    tmpl: dict | None = None,
    scheduled: bool = True,
    pending_msg: str | None = None,
    ready_since: datetime | None = None,
    extra_conditions: list | None = None,
    host_ip: str | None = None,
) -> dict:
    if rs is not None:
        tmpl = rs["spec"]["template"]
        owner = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "name": rs["metadata"]["name"],
            "uid": rs["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
        ns = rs["metadata"]["namespace"]
    else:
        ns = owner.pop("namespace")
    spec = json.loads(json.dumps(tmpl["spec"]))
    meta = {
        "name": name,
        "namespace": ns,
        "uid": uid("pod", ns, name),
        "creationTimestamp": ts(created),
        "labels": dict(tmpl["metadata"]["labels"]),
        "ownerReferences": [owner] if owner else [],
    }
    if tmpl["metadata"].get("annotations"):
        meta["annotations"] = dict(tmpl["metadata"]["annotations"])
    spec.setdefault("serviceAccountName", "default")
    spec["enableServiceLinks"] = True
    spec["priority"] = 0
    spec["preemptionPolicy"] = "PreemptLowerPriority"
    spec["tolerations"] = [
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
    status: dict = {"phase": phase, "qosClass": _qos(spec["containers"])}
    if scheduled:
        spec["nodeName"] = node_name
        rs_t = ready_since or created + timedelta(seconds=15)
        cond = [
            {
                "type": "PodReadyToStartContainers",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": ts(created + timedelta(seconds=3)),
            },
            {
                "type": "Initialized",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": ts(created + timedelta(seconds=2)),
            },
            {
                "type": "Ready",
                "status": "True" if ready else "False",
                "lastProbeTime": None,
                "lastTransitionTime": ts(rs_t),
            },
            {
                "type": "ContainersReady",
                "status": "True" if ready else "False",
                "lastProbeTime": None,
                "lastTransitionTime": ts(rs_t),
            },
            {
                "type": "PodScheduled",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": ts(created),
            },
        ]
        if not ready:
            notready = [s["name"] for s in statuses if not s["ready"]]
            for c in cond[2:4]:
                c["reason"] = "ContainersNotReady"
                c["message"] = f"containers with unready status: [{' '.join(notready)}]"
        cond.extend(extra_conditions or [])
        status.update(
            {
                "conditions": cond,
                "hostIP": host_ip or _host_ip(node_name),
                "podIP": ip,
                "podIPs": [{"ip": ip}],
                "startTime": ts(created),
                "containerStatuses": statuses,
            }
        )
    else:
        status["conditions"] = [
            {
                "type": "PodScheduled",
                "status": "False",
                "lastProbeTime": None,
                "lastTransitionTime": ts(created),
                "reason": "Unschedulable",
                "message": pending_msg,
            }
        ]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def _host_ip(node_name: str) -> str:
    # node names look like ip-10-31-4-17.eu-west-1.compute.internal
    part = node_name.split(".")[0]
    if part.startswith("ip-"):
        return part[3:].replace("-", ".")
    return "10.20.0.10"


def _qos(containers: list) -> str:
    guaranteed = True
    any_res = False
    for c in containers:
        r = c.get("resources", {})
        req, lim = r.get("requests", {}), r.get("limits", {})
        if req or lim:
            any_res = True
        if (
            not lim
            or lim.get("cpu") is None
            or lim.get("memory") is None
            or (
                req and (req.get("cpu") != lim.get("cpu") or req.get("memory") != lim.get("memory"))
            )
        ):
            guaranteed = False
    if not any_res:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def service(
    name: str,
    ns: str,
    created: datetime,
    selector: dict,
    ports: list,
    cluster_ip: str,
    labels: dict | None = None,
    stype: str = "ClusterIP",
) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": uid("svc", ns, name),
            "creationTimestamp": ts(created),
            "labels": labels or {"app.kubernetes.io/name": name},
        },
        "spec": {
            "type": stype,
            "selector": selector,
            "ports": ports,
            "clusterIP": cluster_ip,
            "clusterIPs": [cluster_ip],
            "internalTrafficPolicy": "Cluster",
            "ipFamilies": ["IPv4"],
            "ipFamilyPolicy": "SingleStack",
            "sessionAffinity": "None",
        },
        "status": {"loadBalancer": {}},
    }


def endpoints(
    name: str, ns: str, created: datetime, pods: list, ports: list, not_ready: list | None = None
) -> dict:
    obj = {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": uid("ep", ns, name),
            "creationTimestamp": ts(created),
            "labels": {"app.kubernetes.io/name": name},
        },
    }
    addrs = [_addr(p) for p in pods]
    nr = [_addr(p) for p in (not_ready or [])]
    if addrs or nr:
        sub: dict = {}
        if addrs:
            sub["addresses"] = addrs
        if nr:
            sub["notReadyAddresses"] = nr
        sub["ports"] = ports
        obj["subsets"] = [sub]
    return obj


def _addr(p: dict) -> dict:
    return {
        "ip": p["status"]["podIP"],
        "nodeName": p["spec"]["nodeName"],
        "targetRef": {
            "kind": "Pod",
            "namespace": p["metadata"]["namespace"],
            "name": p["metadata"]["name"],
            "uid": p["metadata"]["uid"],
        },
    }


def configmap(
    name: str,
    ns: str,
    created: datetime,
    data: dict,
    labels: dict | None = None,
    annotations: dict | None = None,
) -> dict:
    meta: dict = {
        "name": name,
        "namespace": ns,
        "uid": uid("cm", ns, name),
        "creationTimestamp": ts(created),
    }
    if labels:
        meta["labels"] = labels
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


_EV_N = [0]


def event(
    ns: str,
    obj: dict,
    reason: str,
    message: str,
    first: datetime,
    last: datetime,
    count: int = 1,
    etype: str = "Normal",
    component: str = "kubelet",
    host: str | None = None,
    field_path: str | None = None,
) -> dict:
    kind = obj["kind"]
    name = obj["metadata"]["name"]
    inv = {
        "kind": kind,
        "name": name,
        "apiVersion": obj["apiVersion"],
        "uid": obj["metadata"]["uid"],
    }
    if obj["metadata"].get("namespace"):
        inv["namespace"] = obj["metadata"]["namespace"]
    if field_path:
        inv["fieldPath"] = field_path
    src: dict = {"component": component}
    if host:
        src["host"] = host
    _EV_N[0] += 1
    ev_name = f"{name}.{sha(ns, name, reason, message, ts(first))[:16]}"
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": ev_name,
            "namespace": ns or "default",
            "uid": uid("ev", ev_name),
            "creationTimestamp": ts(first),
        },
        "involvedObject": inv,
        "reason": reason,
        "message": message,
        "type": etype,
        "count": count,
        "firstTimestamp": ts(first),
        "lastTimestamp": ts(last),
        "source": src,
        "reportingComponent": component,
        "reportingInstance": host or "",
    }


def pod_ip(scn: Scn, node_name: str) -> str:
    host = _host_ip(node_name).split(".")
    return f"10.{host[1]}.{int(host[2]) + scn.rng.randint(64, 90)}.{scn.rng.randint(3, 250)}"


def counter_points(times: list[float], rate_fn, start: float = 0.0, jitter=None) -> list:
    """Integrate a per-second rate function over the grid into a counter."""
    out, total, prev = [], start, None
    for t in times:
        if prev is not None:
            r = rate_fn(t)
            if jitter:
                r *= jitter()
            total += max(r, 0.0) * (t - prev)
        out.append((t, round(total, 3)))
        prev = t
    return out


def healthy_deployment(
    s: Scn,
    node_names: list[str],
    name: str,
    ns: str,
    image: str,
    replicas: int,
    created: datetime,
    port: int = 8080,
    req_cpu: str = "100m",
    req_mem: str = "128Mi",
    lim_cpu: str | None = None,
    lim_mem: str | None = "256Mi",
    env: list | None = None,
    rollout: datetime | None = None,
    revision: int = 4,
    restarts: tuple | None = None,
    probe_path: str = "/healthz",
    labels: dict | None = None,
    template_extra: dict | None = None,
    container_extra: dict | None = None,
    pod_started: datetime | None = None,
    cname: str | None = None,
):
    """A Deployment whose current ReplicaSet is fully available; returns (dep, rs, pods)."""
    c = container(
        cname or name,
        image,
        ports=[{"name": "http", "containerPort": port, "protocol": "TCP"}],
        env=env,
        resources=res(req_cpu, req_mem, lim_cpu, lim_mem),
        readiness=http_probe(probe_path, "http"),
        **(container_extra or {}),
    )
    lab = {"app.kubernetes.io/name": name}
    lab.update(labels or {})
    tm = template(lab, [c], **(template_extra or {}))
    d = deployment(
        name,
        ns,
        created,
        tm,
        replicas,
        revision,
        {
            "replicas": replicas,
            "updatedReplicas": replicas,
            "readyReplicas": replicas,
            "availableReplicas": replicas,
        },
        [],
    )
    h = s.rs_hash()
    rollout = rollout or s.ago(days=6, hours=s.rng.randint(1, 20))
    rs = replicaset(d, h, rollout, revision, tm, replicas)
    d["status"]["conditions"] = dep_conditions(
        max(rollout, s.ago(days=6)) + timedelta(minutes=1),
        rollout + timedelta(minutes=1),
        rs["metadata"]["name"],
    )
    s.add(d, rs)
    pods = []
    for i in range(replicas):
        pn = f"{name}-{h}-{s.pod_suffix()}"
        node_name = node_names[(i + len(name)) % len(node_names)]
        started = (pod_started or rollout) + timedelta(seconds=8 + 20 * i)
        rc, last, run_from = 0, None, started + timedelta(seconds=2)
        if restarts and i == 0:
            rc, last = restarts
            run_from = parse(last["finishedAt"]) + timedelta(seconds=1)
        st = cs_running(c, run_from, True, rc, last)
        p = pod(
            s,
            rs,
            pn,
            node_name,
            pod_ip(s, node_name),
            started,
            [st],
            True,
            ready_since=run_from + timedelta(seconds=6),
        )
        s.add(p)
        pods.append(p)
    return d, rs, pods
