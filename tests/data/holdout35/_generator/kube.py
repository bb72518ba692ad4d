"""Builders for the Kubernetes objects of the holdout35 scenarios, shaped as `kubectl get -o
yaml` prints them, so that each scenario module only tells its story."""

from __future__ import annotations

import hashlib
import random
from datetime import UTC, datetime, timedelta
from typing import Any

Obj = dict[str, Any]


def ts(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def ms(moment: datetime) -> str:
    return (
        moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    )


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def suffix(seed: str, length: int = 5) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(length))


def pod_hash(seed: str) -> str:
    return (
        hashlib.sha1(seed.encode())
        .hexdigest()[:10]
        .translate(str.maketrans("0123456789abcdef", "6789bcdfghjklmnp"))
    )


def uid(seed: str) -> str:
    h = hashlib.md5(seed.encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def namespace(name: str, created: datetime, labels: dict[str, str] | None = None) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": name,
            "creationTimestamp": ts(created),
            "uid": uid("ns" + name),
            "labels": {"kubernetes.io/metadata.name": name, **(labels or {})},
        },
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


def node(
    name: str,
    created: datetime,
    *,
    labels: dict[str, str] | None = None,
    taints: list[Obj] | None = None,
    cpu: str = "8",
    memory: str = "32Gi",
    extra_capacity: dict[str, str] | None = None,
    ready: bool = True,
    heartbeat: datetime | None = None,
    unschedulable: bool = False,
    kubelet: str = "v1.29.6",
    image: str = "Ubuntu 22.04.4 LTS",
    address: str = "10.0.0.1",
    cached_images: list[str] | None = None,
    runtime: str = "containerd://1.7.19",
) -> Obj:
    beat = ts(heartbeat or created)
    cap = {
        "cpu": cpu,
        "memory": memory,
        "pods": "110",
        "ephemeral-storage": "101430960Ki",
        **(extra_capacity or {}),
    }
    alloc = dict(cap)
    alloc["cpu"] = f"{int(cpu) * 1000 - 140}m"
    conds = [
        {
            "type": t,
            "status": "False",
            "reason": r,
            "message": m,
            "lastHeartbeatTime": beat,
            "lastTransitionTime": ts(created + timedelta(seconds=20)),
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
            "status": "True" if ready else "False",
            "reason": "KubeletReady" if ready else "NodeStatusUnknown",
            "message": "kubelet is posting ready status"
            if ready
            else "Kubelet stopped posting node status.",
            "lastHeartbeatTime": beat,
            "lastTransitionTime": ts(created + timedelta(seconds=45)),
        }
    )
    spec: Obj = {
        "providerID": f"aws:///eu-west-1a/i-0{hashlib.md5(name.encode()).hexdigest()[:16]}"
    }
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    status: Obj = {
        "capacity": cap,
        "allocatable": alloc,
        "conditions": conds,
        "addresses": [
            {"type": "InternalIP", "address": address},
            {"type": "Hostname", "address": name},
        ],
        "nodeInfo": {
            "kubeletVersion": kubelet,
            "osImage": image,
            "containerRuntimeVersion": runtime,
            "kernelVersion": "6.5.0-1022-aws",
            "architecture": "amd64",
            "operatingSystem": "linux",
        },
    }
    if cached_images:
        status["images"] = [
            {"names": [i], "sizeBytes": 80_000_000 + 1_000_000 * n}
            for n, i in enumerate(cached_images)
        ]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "creationTimestamp": ts(created),
            "uid": uid("node" + name),
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                **(labels or {}),
            },
        },
        "spec": spec,
        "status": status,
    }


def container(
    name: str,
    image: str,
    *,
    ports: list[int] | None = None,
    requests: dict[str, str] | None = None,
    limits: dict[str, str] | None = None,
    env: list[Obj] | None = None,
    mounts: list[Obj] | None = None,
    readiness: Obj | None = None,
    liveness: Obj | None = None,
    args: list[str] | None = None,
    command: list[str] | None = None,
) -> Obj:
    c: Obj = {"name": name, "image": image, "imagePullPolicy": "IfNotPresent"}
    if command:
        c["command"] = command
    if args:
        c["args"] = args
    if ports:
        c["ports"] = [
            {"containerPort": p, "name": "http" if i == 0 else f"p{p}", "protocol": "TCP"}
            for i, p in enumerate(ports)
        ]
    if env:
        c["env"] = env
    res: Obj = {}
    if requests:
        res["requests"] = requests
    if limits:
        res["limits"] = limits
    c["resources"] = res
    if mounts:
        c["volumeMounts"] = mounts
    if readiness:
        c["readinessProbe"] = readiness
    if liveness:
        c["livenessProbe"] = liveness
    c["terminationMessagePath"] = "/dev/termination-log"
    c["terminationMessagePolicy"] = "File"
    return c


def http_probe(path: str, port: int | str, delay: int = 5, period: int = 10) -> Obj:
    return {
        "httpGet": {"path": path, "port": port, "scheme": "HTTP"},
        "initialDelaySeconds": delay,
        "periodSeconds": period,
        "timeoutSeconds": 1,
        "successThreshold": 1,
        "failureThreshold": 3,
    }


def template(
    labels: dict[str, str],
    containers: list[Obj],
    *,
    init: list[Obj] | None = None,
    volumes: list[Obj] | None = None,
    annotations: dict[str, str] | None = None,
    service_account: str | None = None,
    tolerations: list[Obj] | None = None,
    node_selector: dict[str, str] | None = None,
) -> Obj:
    spec: Obj = {
        "containers": containers,
        "restartPolicy": "Always",
        "dnsPolicy": "ClusterFirst",
        "schedulerName": "default-scheduler",
        "terminationGracePeriodSeconds": 30,
        "serviceAccountName": service_account or "default",
    }
    if init:
        spec["initContainers"] = init
    if volumes:
        spec["volumes"] = volumes
    if tolerations:
        spec["tolerations"] = tolerations
    if node_selector:
        spec["nodeSelector"] = node_selector
    meta: Obj = {"labels": dict(labels)}
    if annotations:
        meta["annotations"] = annotations
    return {"metadata": meta, "spec": spec}


def deployment(
    ns: str,
    name: str,
    created: datetime,
    tmpl: Obj,
    *,
    replicas: int,
    revision: int,
    status: Obj,
    updated: datetime | None = None,
    manager: str = "argocd-controller",
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    strategy: Obj | None = None,
    progress_deadline: int = 600,
) -> Obj:
    ann = {"deployment.kubernetes.io/revision": str(revision), **(annotations or {})}
    meta: Obj = {
        "name": name,
        "namespace": ns,
        "creationTimestamp": ts(created),
        "uid": uid(f"deploy/{ns}/{name}"),
        "generation": revision + 2,
        "labels": {"app.kubernetes.io/name": name, **(labels or {})},
        "annotations": ann,
    }
    if updated:
        meta["managedFields"] = [
            {
                "manager": manager,
                "operation": "Update",
                "apiVersion": "apps/v1",
                "time": ts(updated),
                "fieldsType": "FieldsV1",
            },
            {
                "manager": "kube-controller-manager",
                "operation": "Update",
                "apiVersion": "apps/v1",
                "time": ts(updated + timedelta(seconds=2)),
                "fieldsType": "FieldsV1",
                "subresource": "status",
            },
        ]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta,
        "spec": {
            "replicas": replicas,
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": progress_deadline,
            "selector": {
                "matchLabels": {k: v for k, v in tmpl["metadata"]["labels"].items() if k == "app"}
            },
            "strategy": strategy
            or {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
            },
            "template": tmpl,
        },
        "status": status,
    }


def deploy_status(
    replicas: int,
    ready: int,
    updated: int,
    available: int,
    *,
    since: datetime,
    progressing: tuple[str, str, str] | None = None,
    generation: int = 1,
    desired: int | None = None,
    max_unavailable: int | None = None,
) -> Obj:
    """`replicas` counts every pod of the Deployment (old and new ReplicaSets); `desired` is
    spec.replicas, and Available means at least desired - maxUnavailable pods are available."""
    want = desired if desired is not None else replicas
    allowed = max_unavailable if max_unavailable is not None else want // 4
    prog = progressing or (
        "True",
        "NewReplicaSetAvailable",
        "ReplicaSet has successfully progressed.",
    )
    avail_ok = available >= max(1, want - allowed)
    return {
        "observedGeneration": generation,
        "replicas": replicas,
        "readyReplicas": ready,
        "updatedReplicas": updated,
        "availableReplicas": available,
        **({"unavailableReplicas": replicas - available} if replicas > available else {}),
        "conditions": [
            {
                "type": "Available",
                "status": "True" if avail_ok else "False",
                "reason": "MinimumReplicasAvailable" if avail_ok else "MinimumReplicasUnavailable",
                "message": "Deployment has minimum availability."
                if avail_ok
                else "Deployment does not have minimum availability.",
                "lastUpdateTime": ts(since),
                "lastTransitionTime": ts(since),
            },
            {
                "type": "Progressing",
                "status": prog[0],
                "reason": prog[1],
                "message": prog[2],
                "lastUpdateTime": ts(since),
                "lastTransitionTime": ts(since),
            },
        ],
    }


def replicaset(
    deploy: Obj,
    hash_: str,
    created: datetime,
    revision: int,
    *,
    replicas: int,
    ready: int,
    tmpl: Obj | None = None,
) -> Obj:
    ns, name = deploy["metadata"]["namespace"], deploy["metadata"]["name"]
    t = tmpl or deploy["spec"]["template"]
    labels = {**t["metadata"]["labels"], "pod-template-hash": hash_}
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": f"{name}-{hash_}",
            "namespace": ns,
            "creationTimestamp": ts(created),
            "uid": uid(f"rs/{ns}/{name}-{hash_}"),
            "labels": labels,
            "annotations": {
                "deployment.kubernetes.io/revision": str(revision),
                "deployment.kubernetes.io/desired-replicas": str(deploy["spec"]["replicas"]),
            },
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": name,
                    "uid": deploy["metadata"]["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {
                    "labels": labels,
                    **(
                        {"annotations": t["metadata"]["annotations"]}
                        if t["metadata"].get("annotations")
                        else {}
                    ),
                },
                "spec": t["spec"],
            },
        },
        "status": {
            "replicas": replicas,
            "readyReplicas": ready,
            "availableReplicas": ready,
            "fullyLabeledReplicas": replicas,
            "observedGeneration": 1,
        },
    }


def running(
    name: str,
    image: str,
    started: datetime,
    *,
    restarts: int = 0,
    ready: bool = True,
    last: Obj | None = None,
) -> Obj:
    s: Obj = {
        "name": name,
        "image": image,
        "imageID": f"{image.split(':')[0]}@sha256:" + hashlib.sha256(image.encode()).hexdigest(),
        "ready": ready,
        "started": True,
        "restartCount": restarts,
        "state": {"running": {"startedAt": ts(started)}},
        "containerID": "containerd://" + hashlib.sha256((name + ts(started)).encode()).hexdigest(),
    }
    if last:
        s["lastState"] = {"terminated": last}
    else:
        s["lastState"] = {}
    return s


def waiting(
    name: str, image: str, reason: str, message: str, *, restarts: int = 0, last: Obj | None = None
) -> Obj:
    s: Obj = {
        "name": name,
        "image": image,
        "imageID": "",
        "ready": False,
        "started": False,
        "restartCount": restarts,
        "state": {"waiting": {"reason": reason, "message": message}},
        "lastState": {"terminated": last} if last else {},
    }
    if last:
        s["imageID"] = f"{image.split(':')[0]}@sha256:" + hashlib.sha256(image.encode()).hexdigest()
    return s


def terminated(
    exit_code: int, reason: str, started: datetime, finished: datetime, message: str | None = None
) -> Obj:
    t: Obj = {
        "exitCode": exit_code,
        "reason": reason,
        "startedAt": ts(started),
        "finishedAt": ts(finished),
        "containerID": "containerd://" + hashlib.sha256(ts(started).encode()).hexdigest(),
    }
    if message:
        t["message"] = message
    return t


def pod(
    owner: Obj,
    name: str,
    created: datetime,
    *,
    node_name: str | None,
    ip: str | None,
    statuses: list[Obj],
    init_statuses: list[Obj] | None = None,
    phase: str = "Running",
    ready: bool = True,
    hash_: str | None = None,
    tmpl: Obj | None = None,
    scheduled: bool = True,
    unschedulable_message: str | None = None,
    extra_spec: Obj | None = None,
    owner_kind: str | None = None,
    host_ip: str | None = None,
) -> Obj:
    kind = owner_kind or owner["kind"]
    ns = owner["metadata"]["namespace"]
    t = tmpl or (owner["spec"]["template"] if "template" in owner["spec"] else owner["spec"])
    labels = dict(t["metadata"]["labels"])
    if hash_:
        labels["pod-template-hash"] = hash_
    spec = {**t["spec"], **(extra_spec or {})}
    if node_name:
        spec["nodeName"] = node_name
    conds: list[Obj] = []
    if scheduled:
        conds = [
            {
                "type": "Initialized",
                "status": "True"
                if not init_statuses
                or all(
                    s.get("state", {}).get("terminated", {}).get("exitCode") == 0
                    for s in init_statuses
                )
                else "False",
                "lastTransitionTime": ts(created + timedelta(seconds=3)),
            },
            {
                "type": "Ready",
                "status": "True" if ready else "False",
                "lastTransitionTime": ts(created + timedelta(seconds=15)),
            },
            {
                "type": "ContainersReady",
                "status": "True" if ready else "False",
                "lastTransitionTime": ts(created + timedelta(seconds=15)),
            },
            {
                "type": "PodScheduled",
                "status": "True",
                "lastTransitionTime": ts(created + timedelta(seconds=1)),
            },
        ]
        if not ready:
            for c in conds[1:3]:
                c["reason"] = "ContainersNotReady"
    else:
        conds = [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": unschedulable_message or "",
                "lastProbeTime": None,
                "lastTransitionTime": ts(created + timedelta(seconds=1)),
            }
        ]
    status: Obj = {"phase": phase, "conditions": conds, "qosClass": "Burstable"}
    if scheduled:
        status["hostIP"] = host_ip or "10.0.0.1"
        status["startTime"] = ts(created + timedelta(seconds=1))
        if ip:
            status["podIP"] = ip
            status["podIPs"] = [{"ip": ip}]
        status["containerStatuses"] = statuses
        if init_statuses:
            status["initContainerStatuses"] = init_statuses
    owner_ref_name = owner["metadata"]["name"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": ns,
            "creationTimestamp": ts(created),
            "uid": uid(f"pod/{ns}/{name}"),
            "labels": labels,
            **(
                {"annotations": t["metadata"]["annotations"]}
                if t["metadata"].get("annotations")
                else {}
            ),
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1" if kind != "Job" else "batch/v1",
                    "kind": kind,
                    "name": owner_ref_name,
                    "uid": owner["metadata"].get("uid") or uid(owner_ref_name),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": spec,
        "status": status,
    }


def event(
    ns: str,
    kind: str,
    name: str,
    reason: str,
    message: str,
    *,
    first: datetime,
    last: datetime,
    count: int = 1,
    type_: str = "Normal",
    source: str = "kubelet",
    host: str | None = None,
    api: str = "v1",
) -> Obj:
    seed = f"{ns}{kind}{name}{reason}{ts(first)}{message[:30]}"
    src: Obj = {"component": source}
    if host:
        src["host"] = host
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": f"{name}.{hashlib.md5(seed.encode()).hexdigest()[:16]}",
            "namespace": ns or "default",
            "creationTimestamp": ts(first),
        },
        "involvedObject": {"kind": kind, "namespace": ns, "name": name, "apiVersion": api},
        "reason": reason,
        "message": message,
        "type": type_,
        "count": count,
        "firstTimestamp": ts(first),
        "lastTimestamp": ts(last),
        "source": src,
        "reportingComponent": source,
        "reportingInstance": host or "",
    }


def service(
    ns: str,
    name: str,
    created: datetime,
    selector: dict[str, str],
    port: int,
    target: int | str,
    cluster_ip: str,
) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": name,
            "namespace": ns,
            "creationTimestamp": ts(created),
            "uid": uid(f"svc/{ns}/{name}"),
            "labels": {"app": selector.get("app", name)},
        },
        "spec": {
            "type": "ClusterIP",
            "clusterIP": cluster_ip,
            "clusterIPs": [cluster_ip],
            "selector": selector,
            "sessionAffinity": "None",
            "ports": [{"name": "http", "port": port, "targetPort": target, "protocol": "TCP"}],
        },
        "status": {"loadBalancer": {}},
    }


def endpoints(
    ns: str,
    name: str,
    created: datetime,
    ready: list[tuple[str, str]],
    not_ready: list[tuple[str, str]],
    port: int,
) -> Obj:
    subset: Obj = {"ports": [{"name": "http", "port": port, "protocol": "TCP"}]}
    if ready:
        subset["addresses"] = [
            {"ip": ip, "targetRef": {"kind": "Pod", "name": p, "namespace": ns}} for p, ip in ready
        ]
    if not_ready:
        subset["notReadyAddresses"] = [
            {"ip": ip, "targetRef": {"kind": "Pod", "name": p, "namespace": ns}}
            for p, ip in not_ready
        ]
    return {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {"name": name, "namespace": ns, "creationTimestamp": ts(created)},
        "subsets": [subset] if (ready or not_ready) else [],
    }


def config_map(
    ns: str,
    name: str,
    created: datetime,
    data: dict[str, str],
    *,
    edited: datetime | None = None,
    editor: str = "kubectl-edit",
    labels: dict[str, str] | None = None,
) -> Obj:
    meta: Obj = {
        "name": name,
        "namespace": ns,
        "creationTimestamp": ts(created),
        "uid": uid(f"cm/{ns}/{name}"),
        "resourceVersion": str(int(created.timestamp()) % 9_999_999),
    }
    if labels:
        meta["labels"] = labels
    fields = [
        {
            "manager": "argocd-controller",
            "operation": "Update",
            "apiVersion": "v1",
            "time": ts(created),
            "fieldsType": "FieldsV1",
        }
    ]
    if edited:
        fields.append(
            {
                "manager": editor,
                "operation": "Update",
                "apiVersion": "v1",
                "time": ts(edited),
                "fieldsType": "FieldsV1",
            }
        )
    meta["managedFields"] = fields
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


def healthy_deployment(
    ns: str,
    name: str,
    image: str,
    *,
    replicas: int,
    created: datetime,
    rolled: datetime,
    revision: int,
    nodes: list[tuple[str, str]],
    ip_prefix: str,
    port: int = 8080,
    requests: dict[str, str] | None = None,
    limits: dict[str, str] | None = None,
    env: list[Obj] | None = None,
    extra_labels: dict[str, str] | None = None,
    tolerations: list[Obj] | None = None,
    node_selector: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
) -> tuple[list[Obj], list[str]]:
    """A Deployment that works: its current ReplicaSet and Running, Ready pods spread over
    `nodes` (name, host IP); returns the objects and the pod names."""
    labels = {"app": name, **(extra_labels or {})}
    tmpl = template(
        labels,
        [
            container(
                name,
                image,
                ports=[port],
                requests=requests or {"cpu": "100m", "memory": "128Mi"},
                limits=limits or {"memory": "256Mi"},
                env=env,
                readiness=http_probe("/healthz", port),
            )
        ],
        tolerations=tolerations,
        node_selector=node_selector,
        annotations=annotations,
    )
    status = deploy_status(
        replicas, replicas, replicas, replicas, since=rolled, generation=revision + 2
    )
    d = deployment(
        ns, name, created, tmpl, replicas=replicas, revision=revision, status=status, updated=rolled
    )
    h = pod_hash(f"{ns}/{name}/{revision}")
    rs = replicaset(d, h, rolled, revision, replicas=replicas, ready=replicas)
    objs: list[Obj] = [d, rs]
    names: list[str] = []
    for i in range(replicas):
        node_name, host = nodes[i % len(nodes)]
        pname = f"{name}-{h}-{suffix(f'{ns}{name}{i}')}"
        started = rolled + timedelta(seconds=20 + 9 * i)
        objs.append(
            pod(
                rs,
                pname,
                started - timedelta(seconds=8),
                node_name=node_name,
                ip=f"{ip_prefix}.{20 + i * 7 % 200}",
                host_ip=host,
                statuses=[running(name, image, started)],
            )
        )
        names.append(pname)
    return objs, names
