"""Small shared kit: Kubernetes object builders, log and metric writers.

Everything is deterministic: uids are uuid5 of the object's path, random choices come
from a per-scenario seeded Random.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import shutil
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import yaml

UTC = UTC
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

ALNUM = "bcdfghjklmnpqrstvwxz2456789"


def T(s: str) -> datetime:
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def iso(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_ms(dt: datetime) -> str:
    dt = dt.astimezone(UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def unix(dt: datetime) -> int:
    return int(dt.timestamp())


def uid(*parts: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "quillmark/" + "/".join(parts)))


def hexid(*parts: str, n: int = 64) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()[:n]


def tmpl_hash(*parts: str) -> str:
    h = hashlib.sha256(("tmpl/" + "/".join(parts)).encode()).digest()
    return "".join(ALNUM[b % len(ALNUM)] for b in h[:10])


def suffix(*parts: str, n: int = 5) -> str:
    h = hashlib.sha256(("sfx/" + "/".join(parts)).encode()).digest()
    return "".join(ALNUM[b % len(ALNUM)] for b in h[:n])


# --------------------------------------------------------------------------- objects


def meta(name, ns=None, created=None, labels=None, annotations=None, owner=None, kind=""):
    m = {"name": name}
    if ns:
        m["namespace"] = ns
    m["uid"] = uid(kind, ns or "", name)
    m["resourceVersion"] = str(int(hexid(kind, ns or "", name, n=7), 16))
    if created is not None:
        m["creationTimestamp"] = iso(created)
    if labels:
        m["labels"] = dict(labels)
    if annotations:
        m["annotations"] = dict(annotations)
    if owner:
        okind, oname = owner[0], owner[1]
        oapi = {
            "ReplicaSet": "apps/v1",
            "StatefulSet": "apps/v1",
            "DaemonSet": "apps/v1",
            "Deployment": "apps/v1",
            "Job": "batch/v1",
            "CronJob": "batch/v1",
            "Node": "v1",
        }[okind]
        m["ownerReferences"] = [
            {
                "apiVersion": oapi,
                "kind": okind,
                "name": oname,
                "uid": uid(okind, "" if okind == "Node" else ns or "", oname),
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
    return m


def namespace(name, created, labels=None):
    lb = {"kubernetes.io/metadata.name": name}
    lb.update(labels or {})
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": meta(name, None, created, lb, kind="Namespace"),
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


COND_OK = {
    "MemoryPressure": (
        "False",
        "KubeletHasSufficientMemory",
        "kubelet has sufficient memory available",
    ),
    "DiskPressure": ("False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    "PIDPressure": ("False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    "Ready": ("True", "KubeletReady", "kubelet is posting ready status"),
}
COND_BAD = {
    "MemoryPressure": (
        "True",
        "KubeletHasInsufficientMemory",
        "kubelet has insufficient memory available",
    ),
    "DiskPressure": ("True", "KubeletHasDiskPressure", "kubelet has disk pressure"),
    "PIDPressure": ("True", "KubeletHasInsufficientPID", "kubelet has insufficient PID available"),
    "Ready": (
        "False",
        "KubeletNotReady",
        "container runtime status check may not have completed yet",
    ),
}


def node(
    name,
    created,
    now,
    *,
    ip,
    cpu,
    mem_gi,
    instance_type,
    zone,
    pool,
    ephemeral_gi=100,
    pods=58,
    bad=None,
    taints=None,
    unschedulable=False,
    kubelet="v1.30.6-eks-7f9249a",
    images=None,
    extra_labels=None,
    pid_max=None,
):
    bad = bad or {}
    conds = []
    for t in ("MemoryPressure", "DiskPressure", "PIDPressure", "Ready"):
        if t in bad:
            st, reason, msg = COND_BAD[t]
            since = bad[t]
        else:
            st, reason, msg = COND_OK[t]
            since = created + timedelta(seconds=41)
        conds.append(
            {
                "type": t,
                "status": st,
                "lastHeartbeatTime": iso(now - timedelta(seconds=23)),
                "lastTransitionTime": iso(since),
                "reason": reason,
                "message": msg,
            }
        )
    labels = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": instance_type,
        "topology.kubernetes.io/region": zone[:-1],
        "topology.kubernetes.io/zone": zone,
        "eks.amazonaws.com/nodegroup": pool,
        "eks.amazonaws.com/capacityType": "ON_DEMAND",
    }
    labels.update(extra_labels or {})
    alloc_cpu = f"{cpu * 1000 - (70 if cpu <= 4 else 110 if cpu <= 16 else 190)}m"
    alloc_mem = f"{int(mem_gi * 1024 * 1024 * 0.93)}Ki"
    spec = {"providerID": f"aws:///{zone}/i-0{hexid('i', name, n=16)}"}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    status = {
        "addresses": [
            {"type": "InternalIP", "address": ip},
            {"type": "Hostname", "address": name},
            {"type": "InternalDNS", "address": name},
        ],
        "allocatable": {
            "cpu": alloc_cpu,
            "ephemeral-storage": str(int(ephemeral_gi * 1024**3 * 0.9)),
            "hugepages-1Gi": "0",
            "hugepages-2Mi": "0",
            "memory": alloc_mem,
            "pods": str(pods),
        },
        "capacity": {
            "cpu": str(cpu),
            "ephemeral-storage": f"{ephemeral_gi * 1024 * 1024}Ki",
            "hugepages-1Gi": "0",
            "hugepages-2Mi": "0",
            "memory": f"{mem_gi * 1024 * 1024}Ki",
            "pods": str(pods),
        },
        "conditions": conds,
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {
            "architecture": "amd64",
            "bootID": uid("boot", name),
            "containerRuntimeVersion": "containerd://1.7.22",
            "kernelVersion": "6.1.112-122.189.amzn2023.x86_64",
            "kubeProxyVersion": kubelet,
            "kubeletVersion": kubelet,
            "machineID": hexid("m", name, n=32),
            "operatingSystem": "linux",
            "osImage": "Amazon Linux 2023.6.20241031",
            "systemUUID": uid("sys", name),
        },
    }
    if images:
        status["images"] = [{"names": [n], "sizeBytes": s} for n, s in images]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": meta(
            name,
            None,
            created,
            labels,
            {
                "alpha.kubernetes.io/provided-node-ip": ip,
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
            kind="Node",
        ),
        "spec": spec,
        "status": status,
    }


def container(
    name,
    image,
    *,
    cpu_req=None,
    mem_req=None,
    cpu_lim=None,
    mem_lim=None,
    ports=None,
    env=None,
    args=None,
    command=None,
    readiness=None,
    liveness=None,
    mounts=None,
    eph_req=None,
    eph_lim=None,
):
    c = {"name": name, "image": image}
    if command:
        c["command"] = command
    if args:
        c["args"] = args
    if ports:
        c["ports"] = [{"name": pn, "containerPort": pp, "protocol": "TCP"} for pn, pp in ports]
    if env:
        c["env"] = [e if isinstance(e, dict) else {"name": e[0], "value": e[1]} for e in env]
    res = {}
    if cpu_lim or mem_lim or eph_lim:
        res["limits"] = {
            k: v
            for k, v in (("cpu", cpu_lim), ("memory", mem_lim), ("ephemeral-storage", eph_lim))
            if v
        }
    if cpu_req or mem_req or eph_req:
        res["requests"] = {
            k: v
            for k, v in (("cpu", cpu_req), ("memory", mem_req), ("ephemeral-storage", eph_req))
            if v
        }
    c["resources"] = res
    if readiness:
        c["readinessProbe"] = readiness
    if liveness:
        c["livenessProbe"] = liveness
    if mounts:
        c["volumeMounts"] = mounts
    c["terminationMessagePath"] = "/dev/termination-log"
    c["terminationMessagePolicy"] = "File"
    c["imagePullPolicy"] = "IfNotPresent"
    return c


def http_probe(path, port, period=10, delay=0, timeout=1, failure=3):
    p = {
        "httpGet": {"path": path, "port": port, "scheme": "HTTP"},
        "periodSeconds": period,
        "timeoutSeconds": timeout,
        "successThreshold": 1,
        "failureThreshold": failure,
    }
    if delay:
        p["initialDelaySeconds"] = delay
    return p


def qos(containers):
    lims = [c["resources"].get("limits", {}) for c in containers]
    reqs = [c["resources"].get("requests", {}) for c in containers]
    if not any(lims) and not any(reqs):
        return "BestEffort"
    for li, rq in zip(lims, reqs, strict=False):
        if not li.get("cpu") or not li.get("memory"):
            return "Burstable"
        if rq.get("cpu", li["cpu"]) != li["cpu"] or rq.get("memory", li["memory"]) != li["memory"]:
            return "Burstable"
    return "Guaranteed"


def pod(
    name,
    ns,
    *,
    node_name,
    ip,
    host_ip,
    created,
    owner,
    labels,
    containers,
    started=None,
    statuses=None,
    phase="Running",
    ready=True,
    volumes=None,
    sa="default",
    priority=0,
    priority_class=None,
    reason=None,
    message=None,
    annotations=None,
    init_containers=None,
    tolerations=None,
    node_selector=None,
    hostname=None,
    subdomain=None,
    ready_since=None,
):
    started = started or created + timedelta(seconds=2)
    statuses = statuses or {}
    cstat = []
    for c in containers:
        s = statuses.get(c["name"], {})
        st = {
            "name": c["name"],
            "image": c["image"],
            "imageID": c["image"].split(":")[0] + "@sha256:" + hexid("img", c["image"]),
            "containerID": "containerd://"
            + hexid("ctr", ns, name, c["name"], str(s.get("restartCount", 0))),
            "ready": s.get("ready", ready),
            "started": s.get("started", phase == "Running"),
            "restartCount": s.get("restartCount", 0),
        }
        if "state" in s:
            st["state"] = s["state"]
        else:
            st["state"] = {"running": {"startedAt": iso(started + timedelta(seconds=3))}}
        st["lastState"] = s.get("lastState", {})
        if phase == "Failed" and "state" not in s:
            st["state"] = {
                "terminated": {
                    "exitCode": 137,
                    "reason": "ContainerStatusUnknown",
                    "message": "The container could not be located when the pod was terminated",
                    "startedAt": iso(started + timedelta(seconds=3)),
                    "finishedAt": iso(ready_since or started),
                }
            }
            st["ready"] = False
            st["started"] = False
        if phase == "Pending" and "state" not in s:
            st = None
        if st:
            cstat.append(st)
    rs = ready_since or started + timedelta(seconds=12)
    rdy = "True" if ready and phase == "Running" else "False"
    conds = [
        {
            "type": "PodReadyToStartContainers",
            "status": "True" if phase == "Running" else "False",
            "lastProbeTime": None,
            "lastTransitionTime": iso(started + timedelta(seconds=2)),
        },
        {
            "type": "Initialized",
            "status": "True",
            "lastProbeTime": None,
            "lastTransitionTime": iso(started),
        },
        {"type": "Ready", "status": rdy, "lastProbeTime": None, "lastTransitionTime": iso(rs)},
        {
            "type": "ContainersReady",
            "status": rdy,
            "lastProbeTime": None,
            "lastTransitionTime": iso(rs),
        },
        {
            "type": "PodScheduled",
            "status": "True",
            "lastProbeTime": None,
            "lastTransitionTime": iso(created),
        },
    ]
    if rdy == "False" and phase == "Running":
        notready = [c["name"] for c in cstat if not c["ready"]]
        for cd in conds[2:4]:
            cd["reason"] = "ContainersNotReady"
            cd["message"] = f"containers with unready status: [{' '.join(notready)}]"
    if phase == "Failed":
        for cd in conds[2:4]:
            cd["reason"] = "PodFailed"
        conds[0]["status"] = "False"
    spec = {
        "containers": containers,
        "dnsPolicy": "ClusterFirst",
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": priority,
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "serviceAccount": sa,
        "serviceAccountName": sa,
        "terminationGracePeriodSeconds": 30,
        "tolerations": tolerations
        or [
            {
                "effect": "NoExecute",
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "tolerationSeconds": 300,
            },
            {
                "effect": "NoExecute",
                "key": "node.kubernetes.io/unreachable",
                "operator": "Exists",
                "tolerationSeconds": 300,
            },
        ],
    }
    if node_name:
        spec["nodeName"] = node_name
    if priority_class:
        spec["priorityClassName"] = priority_class
    if init_containers:
        spec["initContainers"] = init_containers
    if node_selector:
        spec["nodeSelector"] = node_selector
    if hostname:
        spec["hostname"] = hostname
    if subdomain:
        spec["subdomain"] = subdomain
    vols = list(volumes or [])
    vols.append(
        {
            "name": "kube-api-access-" + suffix(ns, name, "vol"),
            "projected": {
                "defaultMode": 420,
                "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {
                        "configMap": {
                            "items": [{"key": "ca.crt", "path": "ca.crt"}],
                            "name": "kube-root-ca.crt",
                        }
                    },
                    {
                        "downwardAPI": {
                            "items": [
                                {
                                    "fieldRef": {
                                        "apiVersion": "v1",
                                        "fieldPath": "metadata.namespace",
                                    },
                                    "path": "namespace",
                                }
                            ]
                        }
                    },
                ],
            },
        }
    )
    spec["volumes"] = vols
    status = {"phase": phase, "conditions": conds, "qosClass": qos(containers)}
    if phase != "Pending":
        status.update({"hostIP": host_ip, "hostIPs": [{"ip": host_ip}], "startTime": iso(started)})
        if ip:
            status["podIP"] = ip
            status["podIPs"] = [{"ip": ip}]
        status["containerStatuses"] = cstat
    if reason:
        status["reason"] = reason
    if message:
        status["message"] = message
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta(name, ns, created, labels, annotations, owner, kind="Pod"),
        "spec": spec,
        "status": status,
    }


def template(
    labels,
    containers,
    volumes=None,
    sa=None,
    priority_class=None,
    annotations=None,
    node_selector=None,
):
    spec = {
        "containers": containers,
        "dnsPolicy": "ClusterFirst",
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "terminationGracePeriodSeconds": 30,
    }
    if volumes:
        spec["volumes"] = volumes
    if sa:
        spec["serviceAccountName"] = sa
    if priority_class:
        spec["priorityClassName"] = priority_class
    if node_selector:
        spec["nodeSelector"] = node_selector
    md = {"creationTimestamp": None, "labels": dict(labels)}
    if annotations:
        md["annotations"] = annotations
    return {"metadata": md, "spec": spec}


def deployment(
    name,
    ns,
    *,
    created,
    labels,
    replicas,
    tmpl,
    revision,
    ready=None,
    updated=None,
    available=None,
    progressing_since=None,
    available_since=None,
    new_rs=None,
    generation=None,
    annotations=None,
):
    ready = replicas if ready is None else ready
    updated = replicas if updated is None else updated
    available = ready if available is None else available
    ann = {"deployment.kubernetes.io/revision": str(revision)}
    ann.update(annotations or {})
    gen = generation or revision
    sel = {
        k: v
        for k, v in labels.items()
        if k in ("app", "app.kubernetes.io/name", "app.kubernetes.io/instance")
    }
    conds = [
        {
            "type": "Available",
            "status": "True" if available >= max(replicas - max(1, replicas // 4), 1) else "False",
            "reason": "MinimumReplicasAvailable"
            if available >= max(replicas - max(1, replicas // 4), 1)
            else "MinimumReplicasUnavailable",
            "message": "Deployment has minimum availability."
            if available >= max(replicas - max(1, replicas // 4), 1)
            else "Deployment does not have minimum availability.",
            "lastUpdateTime": iso(available_since or created + timedelta(seconds=30)),
            "lastTransitionTime": iso(available_since or created + timedelta(seconds=30)),
        },
        {
            "type": "Progressing",
            "status": "True",
            "reason": "NewReplicaSetAvailable",
            "message": f'ReplicaSet "{new_rs}" has successfully progressed.',
            "lastUpdateTime": iso(progressing_since or created + timedelta(seconds=40)),
            "lastTransitionTime": iso(created + timedelta(seconds=5)),
        },
    ]
    status = {
        "observedGeneration": gen,
        "replicas": replicas,
        "updatedReplicas": updated,
        "readyReplicas": ready,
        "availableReplicas": available,
        "conditions": conds,
    }
    if replicas - available > 0:
        status["unavailableReplicas"] = replicas - available
    if ready == 0:
        del status["readyReplicas"]
    if available == 0:
        del status["availableReplicas"]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": dict(meta(name, ns, created, labels, ann, kind="Deployment"), generation=gen),
        "spec": {
            "progressDeadlineSeconds": 600,
            "replicas": replicas,
            "revisionHistoryLimit": 10,
            "selector": {"matchLabels": sel},
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
            },
            "template": tmpl,
        },
        "status": status,
    }


def replicaset(
    name, ns, *, deploy, created, labels, replicas, tmpl, revision, ready=None, deploy_replicas=None
):
    ready = replicas if ready is None else ready
    dr = replicas if deploy_replicas is None else deploy_replicas
    ann = {
        "deployment.kubernetes.io/desired-replicas": str(dr),
        "deployment.kubernetes.io/max-replicas": str(dr + max(1, math.ceil(dr * 0.25))),
        "deployment.kubernetes.io/revision": str(revision),
    }
    sel = {
        k: v
        for k, v in labels.items()
        if k in ("app", "app.kubernetes.io/name", "app.kubernetes.io/instance", "pod-template-hash")
    }
    status = {
        "replicas": replicas,
        "fullyLabeledReplicas": replicas,
        "observedGeneration": 1 if replicas else 2,
    }
    if ready:
        status["readyReplicas"] = ready
        status["availableReplicas"] = ready
    if replicas == 0:
        status = {"replicas": 0, "observedGeneration": 2}
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": dict(
            meta(name, ns, created, labels, ann, ("Deployment", deploy), kind="ReplicaSet"),
            generation=1 if replicas else 2,
        ),
        "spec": {"replicas": replicas, "selector": {"matchLabels": sel}, "template": tmpl},
        "status": status,
    }


def service(
    name,
    ns,
    *,
    created,
    selector,
    ports,
    cluster_ip,
    labels=None,
    type_="ClusterIP",
    annotations=None,
):
    spec = {
        "clusterIP": cluster_ip,
        "clusterIPs": [cluster_ip],
        "internalTrafficPolicy": "Cluster",
        "ipFamilies": ["IPv4"],
        "ipFamilyPolicy": "SingleStack",
        "ports": [
            {"name": pn, "port": p, "protocol": "TCP", "targetPort": tp} for pn, p, tp in ports
        ],
        "sessionAffinity": "None",
        "type": type_,
    }
    if selector is not None:
        spec["selector"] = selector
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta(name, ns, created, labels, annotations, kind="Service"),
        "spec": spec,
        "status": {"loadBalancer": {}},
    }


def endpoints(name, ns, *, created, ready=(), not_ready=(), ports=(), labels=None):
    """ready / not_ready: (ip, node, pod_name) or (ip, None, None) for an external address."""

    def addr(a):
        ip, nd, pn = a
        d = {"ip": ip}
        if nd:
            d["nodeName"] = nd
        if pn:
            d["targetRef"] = {"kind": "Pod", "name": pn, "namespace": ns, "uid": uid("Pod", ns, pn)}
        return d

    sub = {}
    if ready:
        sub["addresses"] = [addr(a) for a in ready]
    if not_ready:
        sub["notReadyAddresses"] = [addr(a) for a in not_ready]
    sub["ports"] = [{"name": pn, "port": p, "protocol": "TCP"} for pn, p in ports]
    md = meta(name, ns, created, labels, kind="Endpoints")
    return {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": md,
        "subsets": [sub] if (ready or not_ready) else [],
    }


def configmap(name, ns, *, created, data, labels=None, annotations=None):
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": meta(name, ns, created, labels, annotations, kind="ConfigMap"),
        "data": data,
    }


_evn = {}


def event(
    ns,
    *,
    kind,
    name,
    reason,
    message,
    first,
    last,
    count=1,
    type_="Normal",
    component="kubelet",
    host=None,
    api="v1",
    field_path=None,
    obj_ns=None,
    obj_uid=None,
):
    obj_ns = ns if obj_ns is None else obj_ns
    key = (ns, kind, name, reason, message)
    _evn[key] = _evn.get(key, 0) + 1
    io = {"apiVersion": api, "kind": kind, "name": name}
    if obj_ns:
        io["namespace"] = obj_ns
    io["uid"] = obj_uid or uid(kind, obj_ns or "", name)
    if field_path:
        io["fieldPath"] = field_path
    src = {"component": component}
    if host:
        src["host"] = host
    evname = f"{name}.{hexid('ev', ns, kind, name, reason, message, str(_evn[key]), n=16)}"
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": evname,
            "namespace": ns or "default",
            "uid": uid("Event", ns, evname),
            "resourceVersion": str(int(hexid("rv", evname, n=7), 16)),
            "creationTimestamp": iso(first),
        },
        "involvedObject": io,
        "reason": reason,
        "message": message,
        "type": type_,
        "count": count,
        "firstTimestamp": iso(first),
        "lastTimestamp": iso(last),
        "source": src,
        "reportingComponent": component if component != "kubelet" else "kubelet",
        "reportingInstance": host or "",
        "eventTime": None,
    }


# --------------------------------------------------------------------------- metrics


def fmt(v):
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer() and abs(v) < 1e15):
        return str(int(v))
    s = f"{v:.6f}".rstrip("0").rstrip(".")
    return s if s not in ("", "-0") else "0"


class Metrics:
    def __init__(self):
        self.fams = {}

    def family(self, name, type_, help_):
        if name not in self.fams:
            self.fams[name] = {"type": type_, "help": help_, "series": []}
        return self.fams[name]

    def add(self, fam, type_, help_, sample, labels, points):
        f = self.family(fam, type_, help_)
        f["series"].append((sample, dict(labels), list(points)))

    def gauge(self, name, help_, labels, points):
        self.add(name, "gauge", help_, name, labels, points)

    def counter(self, name, help_, labels, points):
        """name without _total; points are cumulative values."""
        self.add(name, "counter", help_, name + "_total", labels, points)

    def histogram(self, name, help_, labels, buckets, points):
        """points: [(t, {le: cum_count}, sum, count)]."""
        f = self.family(name, "histogram", help_)
        les = [*list(buckets), "+Inf"]
        for le in les:
            key = fmt(le) if le != "+Inf" else "+Inf"
            pts = [(t, b[le]) for t, b, s, c in points]
            f["series"].append((name + "_bucket", dict(labels, le=key), pts))
        f["series"].append((name + "_count", dict(labels), [(t, c) for t, b, s, c in points]))
        f["series"].append((name + "_sum", dict(labels), [(t, s) for t, b, s, c in points]))

    def render(self):
        out = []
        for name, f in self.fams.items():
            out.append(f"# HELP {name} {f['help']}")
            out.append(f"# TYPE {name} {f['type']}")
            for sample, labels, pts in f["series"]:
                lab = ",".join(f'{k}="{v}"' for k, v in labels.items())
                lab = "{" + lab + "}" if lab else ""
                for t, v in pts:
                    out.append(
                        f"{sample}{lab} {fmt(v)} {unix(t) if isinstance(t, datetime) else int(t)}"
                    )
        out.append("# EOF")
        return "\n".join(out) + "\n"


def steps(start, end, step=60):
    t = start
    while t <= end:
        yield t
        t += timedelta(seconds=step)


def cumulate(times, rate_fn=None, start_value=0.0, step=None, f=None):
    """counter points from a per-second rate function of time; the rate function may
    return None for a reset (container restart). The step is read from the times."""
    fn = rate_fn or f
    v = start_value
    pts = []
    prev = None
    for t in times:
        dt = (t - prev).total_seconds() if prev is not None else 0
        prev = t
        r = fn(t)
        if r is None:
            v = 0.0
        else:
            v += max(r, 0.0) * dt
        pts.append((t, round(v, 3)))
    return pts


# --------------------------------------------------------------------------- scenario


class _Literal(str):
    pass


def _lit_rep(dumper, data):
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(_Literal, _lit_rep)


def _str_rep(dumper, data):
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


_Dumper.add_representer(str, _str_rep)


def dump(obj):
    return yaml.dump(
        obj,
        Dumper=_Dumper,
        sort_keys=False,
        default_flow_style=False,
        width=200,
        allow_unicode=True,
    )


def _clamp(node_, floor, seed):
    """status times older than the week before now are moved to just after `floor`
    (the tools only keep a week); the offset is deterministic."""
    items = (
        node_.items()
        if isinstance(node_, dict)
        else enumerate(node_)
        if isinstance(node_, list)
        else ()
    )
    for k, v in list(items):
        if isinstance(v, (dict, list)):
            _clamp(v, floor, seed + str(k))
        elif (
            isinstance(v, str)
            and len(v) == 20
            and v[4] == "-"
            and v[10] == "T"
            and v.endswith("Z")
            and T(v) < floor
        ):
            off = int(hexid("clamp", seed, str(k), n=4), 16) % 1800
            node_[k] = iso(floor + timedelta(seconds=off))


class Scenario:
    def __init__(self, sid, title, now, report, truth, seed, interventions=None):
        self.id = sid
        self.title = title
        self.now = T(now) if isinstance(now, str) else now
        self.report = report
        self.truth = truth
        self.interventions = interventions
        self.rng = random.Random(seed)
        _evn.clear()
        self.objects = []
        self.logs = []
        self.pod_logs = {}
        self.metrics = Metrics()

    def add(self, *objs):
        for o in objs:
            if isinstance(o, list):
                self.objects.extend(o)
            else:
                self.objects.append(o)

    def log(self, t, *, ns, pod, container, service, level, message, **extra):
        if t > self.now:
            return
        d = {
            "@timestamp": iso_ms(t),
            "message": message,
            "log.level": level,
            "service.name": service,
            "kubernetes.namespace": ns,
            "kubernetes.pod.name": pod,
            "kubernetes.container.name": container,
        }
        for k, v in extra.items():
            d[k.replace("__", ".")] = v
        self.logs.append(d)

    def pod_log(self, ns, pod, container, lines, previous=False):
        key = (ns, pod, container + (".previous" if previous else ""))
        self.pod_logs.setdefault(key, []).extend(lines)

    def write(self):
        d = ROOT / self.id
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
        sc = {
            "id": self.id,
            "title": self.title,
            "now": iso(self.now),
            "report": _Literal(self.report.strip() + "\n"),
            "truth": self.truth,
        }
        if self.interventions:
            sc["interventions"] = self.interventions
        (d / "scenario.yaml").write_text(dump(sc))
        floor = self.now - timedelta(days=6, hours=20)
        for o in self.objects:
            if o["kind"] != "Event" and "status" in o:
                _clamp(o["status"], floor, o["metadata"]["name"])
        if self.objects:
            (d / "cluster.yaml").write_text("---\n".join(dump(o) for o in self.objects))
        if self.logs:
            self.logs.sort(key=lambda x: x["@timestamp"])
            (d / "logs.ndjson").write_text(
                "".join(json.dumps(x, separators=(",", ":")) + "\n" for x in self.logs)
            )
        if self.metrics.fams:
            (d / "metrics.om").write_text(self.metrics.render())
        for (ns, p, c), lines in sorted(self.pod_logs.items()):
            pd = d / "pod-logs" / ns / p
            pd.mkdir(parents=True, exist_ok=True)
            (pd / f"{c}.log").write_text("\n".join(lines) + "\n")


# --------------------------------------------------------------------------- families


class Family:
    """A Deployment with its ReplicaSets and pods, built in one go."""

    def __init__(
        self,
        sc,
        ns,
        name,
        *,
        containers,
        replicas,
        placements,
        created,
        rs_created,
        revision,
        labels=None,
        sa=None,
        volumes=None,
        priority_class=None,
        priority=0,
        old=None,
        pod_overrides=None,
        ready_count=None,
        ann=None,
        tmpl_ann=None,
        node_selector=None,
    ):
        """placements: list of (node, host_ip, pod_ip, pod_created) per current pod.
        old: list of (revision, image_map, rs_created) older ReplicaSets scaled to 0."""
        self.ns, self.name = ns, name
        base = {"app.kubernetes.io/name": name, "app": name}
        base.update(labels or {})
        self.hash = tmpl_hash(ns, name, str(revision))
        plabels = dict(base, **{"pod-template-hash": self.hash})
        self.rs_name = f"{name}-{self.hash}"
        tm = template(base, containers, volumes, sa, priority_class, tmpl_ann, node_selector)
        self.pods = []
        pod_overrides = pod_overrides or {}
        for i, (nd, hip, pip, pc) in enumerate(placements):
            pn = f"{self.rs_name}-{suffix(ns, name, str(revision), str(i))}"
            kw = dict(
                node_name=nd,
                ip=pip,
                host_ip=hip,
                created=pc,
                owner=("ReplicaSet", self.rs_name),
                labels=plabels,
                containers=containers,
                volumes=volumes,
                sa=sa or "default",
                priority_class=priority_class,
                priority=priority,
                node_selector=node_selector,
            )
            kw.update(pod_overrides.get(i, {}))
            p = pod(pn, ns, **kw)
            self.pods.append(p)
        nready = sum(
            1
            for p in self.pods
            if any(
                c["type"] == "Ready" and c["status"] == "True" for c in p["status"]["conditions"]
            )
        )
        if ready_count is not None:
            nready = ready_count
        self.deploy = deployment(
            name,
            ns,
            created=created,
            labels=base,
            replicas=replicas,
            tmpl=tm,
            revision=revision,
            ready=nready,
            new_rs=self.rs_name,
            progressing_since=rs_created + timedelta(seconds=75),
            available_since=rs_created + timedelta(seconds=60),
            annotations=ann,
        )
        self.rs = [
            replicaset(
                self.rs_name,
                ns,
                deploy=name,
                created=rs_created,
                labels=plabels,
                replicas=replicas,
                tmpl=dict(tm, metadata=dict(tm["metadata"], labels=plabels)),
                revision=revision,
                ready=nready,
            )
        ]
        for orev, oimages, ocreated in old or []:
            oh = tmpl_hash(ns, name, str(orev))
            ocs = [dict(c, image=oimages.get(c["name"], c["image"])) for c in containers]
            ol = dict(base, **{"pod-template-hash": oh})
            otm = template(ol, ocs, volumes, sa, priority_class, tmpl_ann, node_selector)
            self.rs.append(
                replicaset(
                    f"{name}-{oh}",
                    ns,
                    deploy=name,
                    created=ocreated,
                    labels=ol,
                    replicas=0,
                    tmpl=otm,
                    revision=orev,
                    deploy_replicas=replicas,
                )
            )
        sc.add(self.deploy, *self.rs, *self.pods)

    def pod_names(self):
        return [p["metadata"]["name"] for p in self.pods]


def pod_usage(sc, p, container, times, cpu_fn, mem_fn, step=60):
    """cAdvisor cpu/memory series for one container of a pod object."""
    ns, name = p["metadata"]["namespace"], p["metadata"]["name"]
    nd = p["spec"].get("nodeName", "")
    lab = {"namespace": ns, "pod": name, "container": container, "node": nd}
    sc.metrics.counter(
        "container_cpu_usage_seconds",
        "Cumulative cpu time consumed in seconds.",
        lab,
        cumulate(times, cpu_fn, step=step),
    )
    sc.metrics.gauge(
        "container_memory_working_set_bytes",
        "Current working set in bytes.",
        lab,
        [(t, int(mem_fn(t))) for t in times],
    )


def restarts_metric(sc, p, container, times, fn=lambda t: 0):
    ns, name = p["metadata"]["namespace"], p["metadata"]["name"]
    sc.metrics.counter(
        "kube_pod_container_status_restarts",
        "The number of container restarts per container.",
        {"namespace": ns, "pod": name, "container": container},
        [(t, fn(t)) for t in times],
    )


def noise(rng, base, frac=0.08):
    return base * (1 + rng.uniform(-frac, frac))


def secret_vol(name, secret):
    return {"name": name, "secret": {"secretName": secret, "defaultMode": 420}}


def cm_vol(name, cm):
    return {"name": name, "configMap": {"name": cm, "defaultMode": 420}}
