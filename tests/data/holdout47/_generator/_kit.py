"""Small shared kit for the holdout47 generator: objects, events, logs, metrics.

Everything is deterministic: names, uids and jitter derive from fixed seeds.
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

ROOT = Path(__file__).resolve().parent.parent
_ALNUM = "bcdfghjklmnpqrstvwxz2456789"


# --------------------------------------------------------------------------- time
def parse(ts: str) -> datetime:
    return datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def iso(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_ms(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


class Clock:
    def __init__(self, now: str):
        self.now = parse(now)

    def ago(
        self, minutes: float = 0, hours: float = 0, days: float = 0, seconds: float = 0
    ) -> datetime:
        return self.now - timedelta(minutes=minutes, hours=hours, days=days, seconds=seconds)

    def t(self, minutes: float = 0, hours: float = 0, days: float = 0, seconds: float = 0) -> str:
        return iso(self.ago(minutes=minutes, hours=hours, days=days, seconds=seconds))


# --------------------------------------------------------------------------- ids
def uid(*parts: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "holdout47/" + "/".join(parts)))


def khash(seed: str, n: int) -> str:
    h = hashlib.sha256(seed.encode()).digest()
    return "".join(_ALNUM[b % len(_ALNUM)] for b in h[:n])


def hexid(seed: str, n: int = 16) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()[:n]


def rng(seed: str) -> random.Random:
    return random.Random(int(hashlib.sha256(seed.encode()).hexdigest()[:12], 16))


# --------------------------------------------------------------------------- objects
def namespace(name: str, created: str, labels: dict | None = None) -> dict:
    lab = {"kubernetes.io/metadata.name": name}
    lab.update(labels or {})
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": name,
            "uid": uid("ns", name),
            "creationTimestamp": created,
            "labels": lab,
        },
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


def node(
    name: str,
    created: str,
    *,
    zone: str,
    itype: str,
    cpu: str,
    memory: str,
    pods: str = "58",
    internal_ip: str,
    pod_cidr: str,
    ready: bool = True,
    ready_since: str | None = None,
    ready_reason: str | None = None,
    ready_message: str | None = None,
    heartbeat: str,
    extra_conditions: list | None = None,
    taints: list | None = None,
    unschedulable: bool = False,
    kubelet: str = "v1.30.6-eks-7f9249a",
    runtime: str = "containerd://1.7.22",
    alloc_cpu: str | None = None,
    alloc_mem: str | None = None,
    labels: dict | None = None,
) -> dict:
    since = ready_since or created
    conds = []
    for ctype, reason, msg in (
        ("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
        ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ):
        conds.append(
            {
                "type": ctype,
                "status": "False",
                "lastHeartbeatTime": heartbeat,
                "lastTransitionTime": created,
                "reason": reason,
                "message": msg,
            }
        )
    if ready:
        conds.append(
            {
                "type": "Ready",
                "status": "True",
                "lastHeartbeatTime": heartbeat,
                "lastTransitionTime": since,
                "reason": "KubeletReady",
                "message": "kubelet is posting ready status",
            }
        )
    else:
        conds.append(
            {
                "type": "Ready",
                "status": "False",
                "lastHeartbeatTime": heartbeat,
                "lastTransitionTime": since,
                "reason": ready_reason or "KubeletNotReady",
                "message": ready_message or "",
            }
        )
    conds = (extra_conditions or []) + conds
    lab = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": itype,
        "topology.kubernetes.io/region": zone[:-1],
        "topology.kubernetes.io/zone": zone,
    }
    lab.update(labels or {})
    spec: dict = {
        "podCIDR": pod_cidr,
        "podCIDRs": [pod_cidr],
        "providerID": f"aws:///{zone}/i-{hexid(name, 17)}",
    }
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": uid("node", name),
            "creationTimestamp": created,
            "labels": lab,
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
        },
        "spec": spec,
        "status": {
            "addresses": [
                {"type": "InternalIP", "address": internal_ip},
                {"type": "Hostname", "address": name},
            ],
            "capacity": {
                "cpu": cpu,
                "memory": memory,
                "pods": pods,
                "ephemeral-storage": "83873772Ki",
            },
            "allocatable": {
                "cpu": alloc_cpu or cpu,
                "memory": alloc_mem or memory,
                "pods": pods,
                "ephemeral-storage": "76224326324",
            },
            "conditions": conds,
            "nodeInfo": {
                "architecture": "amd64",
                "containerRuntimeVersion": runtime,
                "kernelVersion": "6.1.112-124.190.amzn2023.x86_64",
                "kubeProxyVersion": kubelet,
                "kubeletVersion": kubelet,
                "operatingSystem": "linux",
                "osImage": "Amazon Linux 2023.6.20241031",
                "machineID": hexid("m" + name, 32),
                "systemUUID": uid("sys", name).upper(),
                "bootID": uid("boot", name),
            },
        },
    }


def container(
    name: str,
    image: str,
    *,
    cpu_req: str | None = None,
    mem_req: str | None = None,
    cpu_lim: str | None = None,
    mem_lim: str | None = None,
    ports: list | None = None,
    command: list | None = None,
    args: list | None = None,
    env: list | None = None,
    readiness: dict | None = None,
    liveness: dict | None = None,
    volume_mounts: list | None = None,
    env_from: list | None = None,
) -> dict:
    c: dict = {"name": name, "image": image, "imagePullPolicy": "IfNotPresent"}
    if command:
        c["command"] = command
    if args:
        c["args"] = args
    if env:
        c["env"] = env
    if env_from:
        c["envFrom"] = env_from
    if ports:
        c["ports"] = [{"containerPort": p, "name": n, "protocol": "TCP"} for n, p in ports]
    res: dict = {}
    if cpu_lim or mem_lim:
        res["limits"] = {k: v for k, v in (("cpu", cpu_lim), ("memory", mem_lim)) if v}
    if cpu_req or mem_req:
        res["requests"] = {k: v for k, v in (("cpu", cpu_req), ("memory", mem_req)) if v}
    c["resources"] = res
    if readiness:
        c["readinessProbe"] = readiness
    if liveness:
        c["livenessProbe"] = liveness
    if volume_mounts:
        c["volumeMounts"] = volume_mounts
    c["terminationMessagePath"] = "/dev/termination-log"
    c["terminationMessagePolicy"] = "File"
    return c


def http_probe(
    path: str, port, *, delay: int = 5, period: int = 10, timeout: int = 1, failure: int = 3
) -> dict:
    return {
        "httpGet": {"path": path, "port": port, "scheme": "HTTP"},
        "initialDelaySeconds": delay,
        "periodSeconds": period,
        "timeoutSeconds": timeout,
        "successThreshold": 1,
        "failureThreshold": failure,
    }


def tcp_probe(
    port, *, delay: int = 5, period: int = 10, timeout: int = 1, failure: int = 3
) -> dict:
    return {
        "tcpSocket": {"port": port},
        "initialDelaySeconds": delay,
        "periodSeconds": period,
        "timeoutSeconds": timeout,
        "successThreshold": 1,
        "failureThreshold": failure,
    }


def pod_template(
    labels: dict,
    containers: list,
    *,
    annotations: dict | None = None,
    volumes: list | None = None,
    sa: str = "default",
    node_selector: dict | None = None,
    tolerations: list | None = None,
) -> dict:
    spec: dict = {
        "containers": containers,
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "serviceAccountName": sa,
        "schedulerName": "default-scheduler",
        "securityContext": {},
    }
    if volumes:
        spec["volumes"] = volumes
    if node_selector:
        spec["nodeSelector"] = node_selector
    if tolerations:
        spec["tolerations"] = tolerations
    md: dict = {"labels": dict(labels)}
    if annotations:
        md["annotations"] = annotations
    return {"metadata": md, "spec": spec}


def deployment(
    ns: str,
    name: str,
    created: str,
    template: dict,
    *,
    replicas: int,
    revision: int,
    status: dict,
    labels: dict | None = None,
    annotations: dict | None = None,
    max_surge="25%",
    max_unavailable="25%",
    progress_deadline: int = 600,
    generation: int | None = None,
) -> dict:
    ann = {"deployment.kubernetes.io/revision": str(revision)}
    ann.update(annotations or {})
    sel = {
        k: v
        for k, v in template["metadata"]["labels"].items()
        if k in ("app", "app.kubernetes.io/name")
    }
    gen = generation or revision
    st = {"observedGeneration": gen}
    st.update(status)
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": uid("deploy", ns, name),
            "generation": gen,
            "creationTimestamp": created,
            "labels": labels or {"app": name},
            "annotations": ann,
        },
        "spec": {
            "replicas": replicas,
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": progress_deadline,
            "selector": {"matchLabels": sel},
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": max_surge, "maxUnavailable": max_unavailable},
            },
            "template": template,
        },
        "status": st,
    }


def deploy_status(
    replicas: int,
    ready: int,
    *,
    updated: int | None = None,
    available: int | None = None,
    progressing=("True", "NewReplicaSetAvailable", None),
    available_cond=("True", "MinimumReplicasAvailable"),
    rs_name: str = "",
    progress_time: str = "",
    available_time: str = "",
    extra_conditions: list | None = None,
    total: int | None = None,
) -> dict:
    updated = replicas if updated is None else updated
    available = ready if available is None else available
    st: dict = {
        "replicas": total if total is not None else replicas,
        "updatedReplicas": updated,
        "readyReplicas": ready,
        "availableReplicas": available,
    }
    if ready == 0:
        del st["readyReplicas"]
    if available == 0:
        del st["availableReplicas"]
    unavailable = (total if total is not None else replicas) - available
    if unavailable > 0:
        st["unavailableReplicas"] = unavailable
    p_status, p_reason, p_msg = progressing
    if p_msg is None:
        p_msg = {
            "NewReplicaSetAvailable": f'ReplicaSet "{rs_name}" has successfully progressed.',
            "ReplicaSetUpdated": f'ReplicaSet "{rs_name}" is progressing.',
            "ProgressDeadlineExceeded": f'ReplicaSet "{rs_name}" has timed out progressing.',
        }[p_reason]
    a_status, a_reason = available_cond
    a_msg = (
        "Deployment has minimum availability."
        if a_status == "True"
        else "Deployment does not have minimum availability."
    )
    conds = [
        {
            "type": "Available",
            "status": a_status,
            "lastUpdateTime": available_time,
            "lastTransitionTime": available_time,
            "reason": a_reason,
            "message": a_msg,
        },
        {
            "type": "Progressing",
            "status": p_status,
            "lastUpdateTime": progress_time,
            "lastTransitionTime": progress_time,
            "reason": p_reason,
            "message": p_msg,
        },
    ]
    st["conditions"] = conds + (extra_conditions or [])
    return st


def replicaset(
    deploy: dict,
    hash_: str,
    created: str,
    template: dict,
    *,
    revision: int,
    replicas: int,
    ready: int | None = None,
    available: int | None = None,
    conditions: list | None = None,
) -> dict:
    ns = deploy["metadata"]["namespace"]
    dname = deploy["metadata"]["name"]
    name = f"{dname}-{hash_}"
    tpl = json.loads(json.dumps(template))
    tpl["metadata"]["labels"]["pod-template-hash"] = hash_
    sel = dict(deploy["spec"]["selector"]["matchLabels"])
    sel["pod-template-hash"] = hash_
    ready = replicas if ready is None else ready
    available = ready if available is None else available
    st: dict = {"replicas": replicas, "fullyLabeledReplicas": replicas, "observedGeneration": 1}
    if ready:
        st["readyReplicas"] = ready
    if available:
        st["availableReplicas"] = available
    if conditions:
        st["conditions"] = conditions
    ann = {
        "deployment.kubernetes.io/desired-replicas": str(deploy["spec"]["replicas"]),
        "deployment.kubernetes.io/max-replicas": str(deploy["spec"]["replicas"] + 1),
        "deployment.kubernetes.io/revision": str(revision),
    }
    for k, v in deploy["metadata"]["annotations"].items():
        if k == "kubernetes.io/change-cause" and revision == int(
            deploy["metadata"]["annotations"]["deployment.kubernetes.io/revision"]
        ):
            ann[k] = v
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": uid("rs", ns, name),
            "generation": 1,
            "creationTimestamp": created,
            "labels": tpl["metadata"]["labels"],
            "annotations": ann,
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": dname,
                    "uid": deploy["metadata"]["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {"replicas": replicas, "selector": {"matchLabels": sel}, "template": tpl},
        "status": st,
    }


def statefulset(
    ns: str,
    name: str,
    created: str,
    template: dict,
    *,
    replicas: int,
    ready: int,
    service: str,
    revision_hash: str,
    volume_claims: list | None = None,
    labels: dict | None = None,
) -> dict:
    sel = {
        k: v
        for k, v in template["metadata"]["labels"].items()
        if k in ("app", "app.kubernetes.io/name")
    }
    rev = f"{name}-{revision_hash}"
    spec: dict = {
        "replicas": replicas,
        "serviceName": service,
        "selector": {"matchLabels": sel},
        "podManagementPolicy": "OrderedReady",
        "revisionHistoryLimit": 10,
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
        "template": template,
    }
    if volume_claims:
        spec["volumeClaimTemplates"] = volume_claims
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": uid("sts", ns, name),
            "generation": 3,
            "creationTimestamp": created,
            "labels": labels or {"app": name},
        },
        "spec": spec,
        "status": {
            "observedGeneration": 3,
            "replicas": replicas,
            "readyReplicas": ready,
            "currentReplicas": replicas,
            "updatedReplicas": replicas,
            "availableReplicas": ready,
            "currentRevision": rev,
            "updateRevision": rev,
            "collisionCount": 0,
        },
    }


def daemonset(
    ns: str, name: str, created: str, template: dict, *, desired: int, ready: int | None = None
) -> dict:
    ready = desired if ready is None else ready
    sel = {
        k: v
        for k, v in template["metadata"]["labels"].items()
        if k in ("app", "app.kubernetes.io/name", "k8s-app")
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": uid("ds", ns, name),
            "generation": 2,
            "creationTimestamp": created,
            "labels": dict(sel),
        },
        "spec": {
            "selector": {"matchLabels": sel},
            "template": template,
            "updateStrategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0},
            },
        },
        "status": {
            "currentNumberScheduled": desired,
            "desiredNumberScheduled": desired,
            "numberMisscheduled": 0,
            "numberReady": ready,
            "numberAvailable": ready,
            "updatedNumberScheduled": desired,
            "observedGeneration": 2,
            **({"numberUnavailable": desired - ready} if desired > ready else {}),
        },
    }


def cstatus(
    name: str,
    image: str,
    *,
    ready: bool = True,
    restarts: int = 0,
    running_since: str | None = None,
    waiting: tuple | None = None,
    last_terminated: dict | None = None,
    pod_seed: str = "",
    image_digest: str | None = None,
    started: bool | None = None,
) -> dict:
    digest = image_digest or hexid("img" + image, 64)
    base = image.split(":")[0]
    cs: dict = {
        "name": name,
        "image": image,
        "imageID": f"{base}@sha256:{digest}",
        "ready": ready,
        "restartCount": restarts,
        "started": ready if started is None else started,
    }
    if waiting:
        cs["state"] = {"waiting": {"reason": waiting[0], "message": waiting[1]}}
        cs["started"] = False
    else:
        cs["state"] = {"running": {"startedAt": running_since}}
        cs["containerID"] = "containerd://" + hexid(pod_seed + name + str(restarts), 64)
    if last_terminated:
        cs["lastState"] = {"terminated": last_terminated}
        if waiting:
            cs["containerID"] = "containerd://" + hexid(
                pod_seed + name + "last" + str(restarts), 64
            )
    else:
        cs["lastState"] = {}
    return cs


def terminated(
    reason: str,
    exit_code: int,
    started: str,
    finished: str,
    *,
    message: str | None = None,
    seed: str = "",
) -> dict:
    t: dict = {
        "exitCode": exit_code,
        "reason": reason,
        "startedAt": started,
        "finishedAt": finished,
        "containerID": "containerd://" + hexid("term" + seed + finished, 64),
    }
    if message:
        t["message"] = message
    return t


def pod(
    owner: dict | None,
    name: str,
    created: str,
    template: dict,
    *,
    node_name: str | None,
    pod_ip: str | None,
    host_ip: str | None,
    statuses: list,
    phase: str = "Running",
    ready: bool | None = None,
    scheduled: bool = True,
    sched_message: str | None = None,
    ready_since: str | None = None,
    deletion: str | None = None,
    extra_conditions: list | None = None,
    qos: str | None = None,
    owner_kind: str | None = None,
    labels_extra: dict | None = None,
) -> dict:
    md_ns = owner["metadata"]["namespace"] if owner else template.get("namespace", "default")
    labels = dict(template["metadata"]["labels"])
    if owner and owner["kind"] == "ReplicaSet":
        labels["pod-template-hash"] = owner["metadata"]["labels"]["pod-template-hash"]
    labels.update(labels_extra or {})
    md: dict = {
        "name": name,
        "namespace": md_ns,
        "uid": uid("pod", md_ns, name),
        "creationTimestamp": created,
        "labels": labels,
    }
    if template["metadata"].get("annotations"):
        md["annotations"] = dict(template["metadata"]["annotations"])
    if owner:
        md["ownerReferences"] = [
            {
                "apiVersion": "apps/v1",
                "kind": owner_kind or owner["kind"],
                "name": owner["metadata"]["name"],
                "uid": owner["metadata"]["uid"],
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
    if deletion:
        md["deletionTimestamp"] = deletion
        md["deletionGracePeriodSeconds"] = 30
    spec = json.loads(json.dumps(template["spec"]))
    if node_name:
        spec["nodeName"] = node_name
    spec.setdefault("tolerations", [])
    spec["tolerations"] += [
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
    if ready is None:
        ready = all(s.get("ready") for s in statuses) and phase == "Running"
    rs = ready_since or created
    conds = []
    if scheduled:
        conds += [
            {
                "type": "PodReadyToStartContainers",
                "status": "True" if phase == "Running" else "False",
                "lastProbeTime": None,
                "lastTransitionTime": created,
            },
            {
                "type": "Initialized",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": created,
            },
            {
                "type": "Ready",
                "status": "True" if ready else "False",
                "lastProbeTime": None,
                "lastTransitionTime": rs,
                **(
                    {}
                    if ready
                    else {
                        "reason": "ContainersNotReady",
                        "message": "containers with unready status: ["
                        + " ".join(s["name"] for s in statuses if not s.get("ready"))
                        + "]",
                    }
                ),
            },
            {
                "type": "ContainersReady",
                "status": "True" if ready else "False",
                "lastProbeTime": None,
                "lastTransitionTime": rs,
                **(
                    {}
                    if ready
                    else {
                        "reason": "ContainersNotReady",
                        "message": "containers with unready status: ["
                        + " ".join(s["name"] for s in statuses if not s.get("ready"))
                        + "]",
                    }
                ),
            },
            {
                "type": "PodScheduled",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": created,
            },
        ]
    else:
        conds.append(
            {
                "type": "PodScheduled",
                "status": "False",
                "lastProbeTime": None,
                "lastTransitionTime": created,
                "reason": "Unschedulable",
                "message": sched_message,
            }
        )
    if extra_conditions:
        conds = extra_conditions + conds
    status: dict = {"phase": phase, "conditions": conds, "qosClass": qos or _qos(template)}
    if scheduled:
        status.update(
            {
                "hostIP": host_ip,
                "hostIPs": [{"ip": host_ip}],
                "podIP": pod_ip,
                "podIPs": [{"ip": pod_ip}],
                "startTime": created,
                "containerStatuses": statuses,
            }
        )
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec, "status": status}


def _qos(template: dict) -> str:
    cs = template["spec"]["containers"]
    if all(
        c.get("resources", {}).get("limits")
        and c["resources"].get("requests") == c["resources"]["limits"]
        for c in cs
    ):
        return "Guaranteed"
    if any(c.get("resources") for c in cs):
        return "Burstable"
    return "BestEffort"


def service(
    ns: str,
    name: str,
    created: str,
    *,
    selector: dict | None = None,
    ports: list | None = None,
    cluster_ip: str | None = None,
    type_: str = "ClusterIP",
    external_name: str | None = None,
    annotations: dict | None = None,
    labels: dict | None = None,
    headless: bool = False,
) -> dict:
    md: dict = {
        "name": name,
        "namespace": ns,
        "uid": uid("svc", ns, name),
        "creationTimestamp": created,
        "labels": labels or {"app": name},
    }
    if annotations:
        md["annotations"] = annotations
    spec: dict = {"type": type_}
    if type_ == "ExternalName":
        spec["externalName"] = external_name
        spec["sessionAffinity"] = "None"
        if ports:
            spec["ports"] = [
                {"name": n, "port": p, "protocol": "TCP", "targetPort": tp} for n, p, tp in ports
            ]
    else:
        spec.update(
            {
                "clusterIP": "None" if headless else cluster_ip,
                "clusterIPs": ["None" if headless else cluster_ip],
                "internalTrafficPolicy": "Cluster",
                "ipFamilies": ["IPv4"],
                "ipFamilyPolicy": "SingleStack",
                "sessionAffinity": "None",
                "selector": selector,
                "ports": [
                    {"name": n, "port": p, "protocol": "TCP", "targetPort": tp}
                    for n, p, tp in (ports or [])
                ],
            }
        )
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": md,
        "spec": spec,
        "status": {"loadBalancer": {}},
    }


def endpoints(svc: dict, pods_: list, *, not_ready: list | None = None) -> dict:
    ns = svc["metadata"]["namespace"]
    name = svc["metadata"]["name"]

    def addr(p):
        return {
            "ip": p["status"]["podIP"],
            "nodeName": p["spec"]["nodeName"],
            "targetRef": {
                "kind": "Pod",
                "name": p["metadata"]["name"],
                "namespace": ns,
                "uid": p["metadata"]["uid"],
            },
        }

    subset: dict = {}
    if pods_:
        subset["addresses"] = [addr(p) for p in pods_]
    if not_ready:
        subset["notReadyAddresses"] = [addr(p) for p in not_ready]
    obj = {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": uid("ep", ns, name),
            "creationTimestamp": svc["metadata"]["creationTimestamp"],
            "labels": svc["metadata"]["labels"],
        },
    }
    if subset:
        ports = []
        for sp in svc["spec"]["ports"]:
            tp = sp["targetPort"]
            ports.append(
                {
                    "name": sp["name"],
                    "port": tp if isinstance(tp, int) else sp["port"],
                    "protocol": "TCP",
                }
            )
        subset["ports"] = ports
        obj["subsets"] = [subset]
    return obj


def configmap(ns: str, name: str, created: str, data: dict, labels: dict | None = None) -> dict:
    md: dict = {
        "name": name,
        "namespace": ns,
        "uid": uid("cm", ns, name),
        "creationTimestamp": created,
    }
    if labels:
        md["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": md, "data": data}


def event(
    obj: dict | tuple,
    reason: str,
    message: str,
    *,
    first: str,
    last: str | None = None,
    count: int = 1,
    type_: str = "Normal",
    component: str,
    host: str | None = None,
    field_path: str | None = None,
    seed: str = "",
) -> dict:
    if isinstance(obj, dict):
        kind = obj["kind"]
        name = obj["metadata"]["name"]
        ns = obj["metadata"].get("namespace", "")
        ouid = obj["metadata"].get("uid", uid(kind, ns, name))
        api = obj["apiVersion"]
    else:
        kind, ns, name = obj[:3]
        api = obj[3] if len(obj) > 3 else "v1"
        ouid = uid(kind.lower(), ns, name)
    last = last or first
    inv: dict = {"kind": kind, "name": name, "uid": ouid, "apiVersion": api}
    if ns:
        inv["namespace"] = ns
    if field_path:
        inv["fieldPath"] = field_path
    src: dict = {"component": component}
    if host:
        src["host"] = host
    ev_ns = ns or "default"
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": f"{name}.{hexid(seed + reason + message + first, 16)}",
            "namespace": ev_ns,
            "uid": uid("ev", ev_ns, name, reason, first, seed),
            "creationTimestamp": first,
        },
        "involvedObject": inv,
        "reason": reason,
        "message": message,
        "type": type_,
        "count": count,
        "firstTimestamp": first,
        "lastTimestamp": last,
        "source": src,
        "reportingComponent": component,
        "reportingInstance": host or "",
    }


# --------------------------------------------------------------------------- logs
class Logs:
    def __init__(self, now: datetime | None = None):
        self.docs: list[tuple[datetime, dict]] = []
        self.now = now

    def add(
        self,
        when: datetime,
        ns: str,
        pod_name: str,
        container_name: str,
        service_name: str,
        level: str,
        message: str,
        **extra,
    ) -> None:
        if self.now is not None and when > self.now:
            return
        doc = {
            "@timestamp": iso_ms(when),
            "message": message,
            "log.level": level,
            "service.name": service_name,
            "kubernetes.namespace": ns,
            "kubernetes.pod.name": pod_name,
            "kubernetes.container.name": container_name,
        }
        for k, v in extra.items():
            doc[k.replace("__", ".")] = v
        self.docs.append((when, doc))

    def write(self, path: Path) -> None:
        self.docs.sort(key=lambda x: (x[0], x[1]["kubernetes.pod.name"], x[1]["message"]))
        with path.open("w") as f:
            for _, d in self.docs:
                f.write(json.dumps(d, sort_keys=False) + "\n")


# --------------------------------------------------------------------------- metrics
class Metrics:
    """OpenMetrics families. gauge/counter series are (labels, [(ts, value)])."""

    def __init__(self, start: datetime, end: datetime, step: int = 60):
        self.start = int(start.timestamp())
        self.end = int(end.timestamp())
        self.step = step
        self.families: dict[str, dict] = {}

    def times(self, step: int | None = None) -> list[int]:
        step = step or self.step
        return list(range(self.end - ((self.end - self.start) // step) * step, self.end + 1, step))

    def _fam(self, name: str, type_: str, help_: str) -> dict:
        fam = self.families.setdefault(name, {"type": type_, "help": help_, "series": []})
        return fam

    def gauge(self, name: str, help_: str, labels: dict, fn) -> None:
        """fn(ts) -> value or None (absent)."""
        pts = [(t, fn(t)) for t in self.times()]
        self._fam(name, "gauge", help_)["series"].append(
            (labels, [(t, v) for t, v in pts if v is not None])
        )

    def counter_values(self, name: str, help_: str, labels: dict, fn) -> None:
        """A counter whose value at each sample is given directly (restart counts and the like)."""
        pts = [(t, fn(t)) for t in self.times()]
        self._fam(name, "counter", help_)["series"].append(
            (labels, [(t, v) for t, v in pts if v is not None])
        )

    def counter(
        self,
        name: str,
        help_: str,
        labels: dict,
        rate_fn,
        *,
        start_value: float | None = None,
        resets: list | None = None,
        integer: bool = False,
        age: float = 2 * 86400,
    ) -> None:
        """rate_fn(ts) -> per-second rate (or None when the series is absent); resets: ts list
        where it restarts at 0. Without start_value the series starts at what `age` seconds at
        the first rate would have counted."""
        resets = sorted(resets or [])
        if start_value is None:
            r0 = rate_fn(self.times()[0])
            start_value = (r0 or 0.0) * age
        v = start_value
        pts = []
        prev = None
        for t in self.times():
            r = rate_fn(t)
            if r is None:
                prev = t
                continue
            if prev is not None:
                crossed = [x for x in resets if prev < x <= t]
                if crossed:
                    v = r * (t - crossed[-1])
                else:
                    v += r * (t - prev)
            prev = t
            pts.append((t, float(int(v)) if integer else round(v, 3)))
        self._fam(name, "counter", help_)["series"].append((labels, pts))

    def histogram(
        self,
        name: str,
        help_: str,
        labels: dict,
        buckets: list,
        rate_fn,
        dist_fn,
        step: int | None = None,
        age: float = 2 * 86400,
    ) -> None:
        """rate_fn(ts) -> requests/s; dist_fn(ts) -> (median_seconds, sigma) of a log-normal
        latency."""
        fam = self._fam(name, "histogram", help_)
        t0 = self.times(step)[0]
        n0 = rate_fn(t0) * age
        med0, sig0 = dist_fn(t0)
        cum = [n0 * _lognorm_cdf(b, med0, sig0) for b in buckets] + [n0]
        total = n0
        s = n0 * med0 * math.exp(sig0 * sig0 / 2)
        pts = []
        prev = None
        for t in self.times(step):
            r = rate_fn(t)
            if prev is not None:
                n = r * (t - prev)
                med, sig = dist_fn(t)
                for i, b in enumerate(buckets):
                    cum[i] += n * _lognorm_cdf(b, med, sig)
                cum[-1] += n
                total += n
                s += n * med * math.exp(sig * sig / 2)
            prev = t
            pts.append((t, [round(c) for c in cum], round(total), round(s, 3)))
        fam["series"].append((labels, pts, buckets))

    def write(self, path: Path) -> None:
        out = []
        for name, fam in self.families.items():
            out.append(f"# TYPE {name} {fam['type']}")
            out.append(f"# HELP {name} {fam['help']}")
            for entry in fam["series"]:
                if fam["type"] == "histogram":
                    labels, pts, buckets = entry
                    for t, cum, total, s in pts:
                        for b, c in zip([*buckets, "+Inf"], cum, strict=False):
                            le = b if isinstance(b, str) else _fmt(b)
                            out.append(f"{name}_bucket{_labels({**labels, 'le': le})} {c} {t}")
                        out.append(f"{name}_count{_labels(labels)} {total} {t}")
                        out.append(f"{name}_sum{_labels(labels)} {_fmt(s)} {t}")
                else:
                    labels, pts = entry
                    sample = name + "_total" if fam["type"] == "counter" else name
                    for t, v in pts:
                        out.append(f"{sample}{_labels(labels)} {_fmt(v)} {t}")
        out.append("# EOF")
        path.write_text("\n".join(out) + "\n")


def _lognorm_cdf(x: float, med: float, sig: float) -> float:
    if x <= 0:
        return 0.0
    return 0.5 * (1 + math.erf((math.log(x) - math.log(med)) / (sig * math.sqrt(2))))


def _fmt(v) -> str:
    if isinstance(v, float):
        if v == int(v) and abs(v) < 1e15:
            return str(int(v))
        return repr(round(v, 6))
    return str(v)


def _labels(d: dict) -> str:
    if not d:
        return ""
    return "{" + ",".join(f'{k}="{v}"' for k, v in d.items()) + "}"


def jitter(seed: str, scale: float):
    """A deterministic noise function of time: ts -> value in [-scale, scale]."""

    def f(t: int) -> float:
        h = hashlib.sha256(f"{seed}:{t}".encode()).digest()
        return (h[0] / 255 * 2 - 1) * scale

    return f


def ramp(t: int, t0: int, t1: int, v0: float, v1: float) -> float:
    if t <= t0:
        return v0
    if t >= t1:
        return v1
    return v0 + (v1 - v0) * (t - t0) / (t1 - t0)


# --------------------------------------------------------------------------- writing
class Scenario:
    def __init__(self, sid: str, now: str):
        self.id = sid
        self.clock = Clock(now)
        self.now_str = now
        self.objects: list[dict] = []
        self.logs = Logs(self.clock.now)
        self.metrics: Metrics | None = None
        self.pod_logs: dict[tuple, list[str]] = {}
        self.meta: dict = {}

    def add(self, *objs: dict) -> None:
        self.objects.extend(objs)

    def pod_log(
        self, ns: str, pod_name: str, container_name: str, lines: list[str], previous: bool = False
    ) -> None:
        self.pod_logs[(ns, pod_name, container_name + (".previous" if previous else ""))] = lines

    def write(self) -> Path:
        d = ROOT / self.id
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
        meta = {"id": self.id, **self.meta, "now": self.now_str}
        order = ["id", "title", "now", "report", "truth", "interventions"]
        meta = {k: meta[k] for k in order if k in meta}
        (d / "scenario.yaml").write_text(
            yaml.dump(meta, Dumper=_Dumper, sort_keys=False, width=100, allow_unicode=True)
        )
        with (d / "cluster.yaml").open("w") as f:
            yaml.dump_all(self.objects, f, Dumper=_Dumper, sort_keys=False, width=200)
        if self.logs.docs:
            self.logs.write(d / "logs.ndjson")
        if self.metrics is not None:
            self.metrics.write(d / "metrics.om")
        for (ns, p, c), lines in self.pod_logs.items():
            pd = d / "pod-logs" / ns / p
            pd.mkdir(parents=True, exist_ok=True)
            (pd / f"{c}.log").write_text("\n".join(lines) + ("\n" if lines else ""))
        return d


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data):  # kubectl never prints YAML anchors
        return True


def _str_repr(dumper, data):
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


_Dumper.add_representer(str, _str_repr)


# --------------------------------------------------------------------------- cluster helper
class Cluster:
    """Nodes plus pod-IP allocation and a compact way to build Deployments with their ReplicaSets
    and Pods."""

    def __init__(self, sc: Scenario, pod_net: str = "10.244"):
        self.sc = sc
        self.nodes: list[dict] = []
        self._ipn: dict[str, int] = {}
        self._idx: dict[str, int] = {}
        self.pod_net = pod_net
        self._rr = 0

    def add_node(self, n: dict) -> dict:
        self._idx[n["metadata"]["name"]] = len(self.nodes)
        self._ipn[n["metadata"]["name"]] = 10
        self.nodes.append(n)
        self.sc.add(n)
        return n

    def host_ip(self, node_name: str) -> str:
        n = self.nodes[self._idx[node_name]]
        return n["status"]["addresses"][0]["address"]

    def pod_ip(self, node_name: str) -> str:
        cidr = self.nodes[self._idx[node_name]]["spec"]["podCIDR"]
        base = cidr.split("/")[0].rsplit(".", 1)[0]
        self._ipn[node_name] += 7
        return f"{base}.{self._ipn[node_name] % 250 + 2}"

    def pick(self, k: int = 0) -> str:
        name = self.nodes[(self._rr + k) % len(self.nodes)]["metadata"]["name"]
        return name

    def deployment(
        self,
        ns: str,
        name: str,
        containers: list,
        *,
        replicas: int,
        created: str,
        rs_created: str,
        revision: int,
        hash_: str | None = None,
        change_cause: str | None = None,
        nodes: list | None = None,
        labels: dict | None = None,
        pod_annotations: dict | None = None,
        pod_status=None,
        status: dict | None = None,
        old: list | None = None,
        max_surge="25%",
        max_unavailable="25%",
        volumes: list | None = None,
        sa: str = "default",
        add_pods: bool = True,
        progress_deadline: int = 600,
        node_selector: dict | None = None,
    ) -> dict:
        """old: list of (hash, created, revision, containers, replicas) for earlier ReplicaSets.
        pod_status(i, pod_name, node_name) -> dict of keyword overrides for pod() and cstatus, or
        None."""
        lab = {"app": name}
        lab.update(labels or {})
        tpl = pod_template(
            lab,
            containers,
            annotations=pod_annotations,
            volumes=volumes,
            sa=sa,
            node_selector=node_selector,
        )
        hash_ = (
            hash_
            or khash(f"{ns}/{name}/{revision}", 10)[: random.Random(len(name)).choice([9, 10])]
        )
        ann = {"kubernetes.io/change-cause": change_cause} if change_cause else None
        week = iso(self.sc.clock.ago(days=6, hours=20))
        st = status or deploy_status(
            replicas,
            replicas,
            rs_name=f"{name}-{hash_}",
            progress_time=rs_created,
            available_time=max(week, min(created, rs_created)),
        )
        dep = deployment(
            ns,
            name,
            created,
            tpl,
            replicas=replicas,
            revision=revision,
            status=st,
            labels={"app": name, **(labels or {})},
            annotations=ann,
            max_surge=max_surge,
            max_unavailable=max_unavailable,
            progress_deadline=progress_deadline,
        )
        out = {"deployment": dep, "rs": [], "pods": [], "template": tpl}
        for oh, oc, orev, ocont, orep in old or []:
            otpl = pod_template(
                lab,
                ocont,
                annotations=pod_annotations,
                volumes=volumes,
                sa=sa,
                node_selector=node_selector,
            )
            ors = replicaset(dep, oh, oc, otpl, revision=orev, replicas=orep)
            out["rs"].append(ors)
            out.setdefault("old_templates", []).append(otpl)
        rs = replicaset(dep, hash_, rs_created, tpl, revision=revision, replicas=replicas)
        out["rs"].append(rs)
        out["current_rs"] = rs
        self.sc.add(dep, *out["rs"])
        if add_pods:
            for i in range(replicas):
                out["pods"].append(self.make_pod(rs, tpl, i, rs_created, nodes, pod_status))
        return out

    def make_pod(
        self,
        rs: dict,
        tpl: dict,
        i: int,
        created: str,
        nodes: list | None,
        pod_status=None,
        seed: str | None = None,
    ) -> dict:
        rs["metadata"]["namespace"]
        pname = (
            f"{rs['metadata']['name']}-{khash((seed or '') + rs['metadata']['name'] + str(i), 5)}"
        )
        node_name = nodes[i % len(nodes)] if nodes else self.pick(i)
        ov = (pod_status(i, pname, node_name) if pod_status else None) or {}
        node_name = ov.pop("node", node_name)
        pcreated = ov.pop("created", created)
        started = ov.pop("running_since", iso(parse(pcreated) + timedelta(seconds=4 + i % 5)))
        ready_since = ov.pop("ready_since", iso(parse(started) + timedelta(seconds=8 + i % 3)))
        cst_over = ov.pop("containers", {})
        statuses = []
        for c in tpl["spec"]["containers"]:
            kw = dict(running_since=started, pod_seed=pname)
            kw.update(cst_over.get(c["name"], {}))
            statuses.append(cstatus(c["name"], c["image"], **kw))
        scheduled = ov.pop("scheduled", True)
        ip = self.pod_ip(node_name) if scheduled and node_name else None
        hip = self.host_ip(node_name) if scheduled and node_name else None
        p = pod(
            rs,
            pname,
            pcreated,
            tpl,
            node_name=node_name if scheduled else None,
            pod_ip=ip,
            host_ip=hip,
            statuses=statuses,
            ready_since=ready_since,
            scheduled=scheduled,
            **ov,
        )
        self.sc.add(p)
        return p


def add_nodes(
    cl: Cluster,
    clock: Clock,
    region: str,
    specs: list,
    *,
    created_days: float = 6.2,
    itype: str = "m6i.2xlarge",
    cpu: str = "8",
    memory: str = "32386452Ki",
    alloc_cpu: str = "7910m",
    alloc_mem: str = "31369620Ki",
    heartbeat_min: float = 0.5,
) -> list[str]:
    """specs: list of (ip_last_two, zone_letter, pod_cidr_third_octet[, overrides dict])."""
    names = []
    for k, spec in enumerate(specs):
        ip2, zl, third = spec[:3]
        ov = spec[3] if len(spec) > 3 else {}
        a, b = ip2.split(".")
        name = ov.pop("name", f"ip-10-20-{a}-{b}.{region}.compute.internal")
        kw = dict(
            zone=f"{region}{zl}",
            itype=itype,
            cpu=cpu,
            memory=memory,
            alloc_cpu=alloc_cpu,
            alloc_mem=alloc_mem,
            internal_ip=f"10.20.{a}.{b}",
            pod_cidr=f"{cl.pod_net}.{third}.0/24",
            heartbeat=clock.t(minutes=heartbeat_min + 0.1 * k),
        )
        kw.update(ov)
        cl.add_node(node(name, clock.t(days=created_days - k * 0.4), **kw))
        names.append(name)
    return names
