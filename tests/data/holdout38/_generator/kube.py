"""Builders for the Kubernetes objects of the holdout38 scenarios.

Each builder returns the plain dict `kubectl get -o yaml` would print (bookkeeping fields
left out), so a story reads as the objects it involves and not as YAML plumbing. Times are
datetimes; they are written as RFC 3339 here, once.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import Any

Obj = dict[str, Any]


def ts(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def uid(*parts: str) -> str:
    digest = hashlib.sha1("/".join(parts).encode()).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


def suffix(*parts: str, length: int = 5) -> str:
    """A stable pod-name suffix in the alphabet the ReplicaSet controller uses."""
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    digest = hashlib.sha1("/".join(parts).encode()).digest()
    return "".join(alphabet[b % len(alphabet)] for b in digest[:length])


def pod_hash(*parts: str) -> str:
    return suffix(*parts, "hash", length=10)


def namespace(name: str, created: datetime, labels: dict[str, str] | None = None) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name, "creationTimestamp": ts(created),
                         "labels": {"kubernetes.io/metadata.name": name, **(labels or {})}},
            "status": {"phase": "Active"}}


def node(name: str, created: datetime, *, labels: dict[str, str], cpu: str = "3920m",
         memory: str = "14Gi", pods: str = "58", arch: str = "amd64", ready: bool = True,
         unschedulable: bool = False, taints: list[Obj] | None = None,
         heartbeat: datetime | None = None, kubelet: str = "v1.30.6") -> Obj:
    beat = ts(heartbeat or created)
    changed = ts(max(created, (heartbeat or created) - timedelta(days=4, hours=3)))
    conditions = [
        {"type": t, "status": "False", "reason": f"KubeletHas{r}", "lastHeartbeatTime": beat,
         "lastTransitionTime": changed, "message": f"kubelet has {m}"}
        for t, r, m in (("MemoryPressure", "SufficientMemory", "sufficient memory available"),
                        ("DiskPressure", "NoDiskPressure", "no disk pressure"),
                        ("PIDPressure", "SufficientPID", "sufficient PID available"))]
    conditions.append({"type": "Ready", "status": "True" if ready else "Unknown",
                       "reason": "KubeletReady" if ready else "NodeStatusUnknown",
                       "message": "kubelet is posting ready status" if ready else
                       "Kubelet stopped posting node status.",
                       "lastHeartbeatTime": beat, "lastTransitionTime": changed})
    spec: Obj = {"providerID": f"aws:///{labels.get('topology.kubernetes.io/zone', 'x')}/"
                               f"i-0{suffix(name, length=8)}"}
    if unschedulable:
        spec["unschedulable"] = True
    if taints:
        spec["taints"] = taints
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "creationTimestamp": ts(created), "uid": uid("node", name),
                         "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                                    "kubernetes.io/arch": arch, "beta.kubernetes.io/arch": arch,
                                    **labels}},
            "spec": spec,
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods},
                       "capacity": {"cpu": cpu, "memory": memory, "pods": pods},
                       "conditions": conditions,
                       "nodeInfo": {"architecture": arch, "kubeletVersion": kubelet,
                                    "containerRuntimeVersion": "containerd://1.7.22",
                                    "osImage": "Amazon Linux 2023", "operatingSystem": "linux"}}}


def container(name: str, image: str, *, cpu: str | None = None, memory: str | None = None,
              cpu_limit: str | None = None, memory_limit: str | None = None,
              ports: list[Obj] | None = None, env: list[Obj] | None = None,
              **extra: Any) -> Obj:
    spec: Obj = {"name": name, "image": image}
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}
    limits = {k: v for k, v in (("cpu", cpu_limit), ("memory", memory_limit)) if v}
    if requests or limits:
        spec["resources"] = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
    if ports:
        spec["ports"] = ports
    if env:
        spec["env"] = env
    spec.update(extra)
    return spec


def http_probe(path: str, port: int | str, **extra: Any) -> Obj:
    return {"httpGet": {"path": path, "port": port, "scheme": "HTTP"}, "periodSeconds": 10,
            "timeoutSeconds": 2, "failureThreshold": 3, "successThreshold": 1, **extra}


def workload(kind: str, ns: str, name: str, created: datetime, containers: list[Obj], *,
             replicas: int = 1, labels: dict[str, str] | None = None,
             annotations: dict[str, str] | None = None, status: Obj | None = None,
             pod_spec: Obj | None = None, pod_labels: dict[str, str] | None = None,
             **spec_extra: Any) -> Obj:
    """A Deployment, StatefulSet or DaemonSet; `status` is written by the caller."""
    selector = {"app.kubernetes.io/name": name}
    template_labels = {**selector, **(pod_labels or {})}
    spec: Obj = {"selector": {"matchLabels": dict(selector)},
                 "template": {"metadata": {"labels": template_labels},
                              "spec": {"containers": containers, **(pod_spec or {})}}}
    if kind != "DaemonSet":
        spec = {"replicas": replicas, **spec}
    if kind == "Deployment":
        spec.setdefault("strategy", {"type": "RollingUpdate",
                                     "rollingUpdate": {"maxSurge": "25%",
                                                       "maxUnavailable": "25%"}})
        spec["progressDeadlineSeconds"] = 600
        spec["revisionHistoryLimit"] = 10
    spec.update(spec_extra)
    return {"apiVersion": "apps/v1", "kind": kind,
            "metadata": {"name": name, "namespace": ns, "creationTimestamp": ts(created),
                         "uid": uid(kind, ns, name), "generation": 1,
                         "labels": {"app.kubernetes.io/name": name, **(labels or {})},
                         "annotations": dict(annotations or {})},
            "spec": spec, "status": status or {}}


def deployment_status(replicas: int, ready: int, updated: int, *, at: datetime,
                      available: int | None = None, progressing: Obj | None = None,
                      replica_failure: Obj | None = None) -> Obj:
    available = ready if available is None else available
    enough = available >= max(replicas - replicas // 4, 1)
    conditions = [{"type": "Available", "status": "True" if enough else "False",
                   "reason": "MinimumReplicasAvailable" if enough else
                   "MinimumReplicasUnavailable",
                   "message": "Deployment has minimum availability." if enough else
                   "Deployment does not have minimum availability.",
                   "lastUpdateTime": ts(at), "lastTransitionTime": ts(at)}]
    conditions.append(progressing or {
        "type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable",
        "message": "ReplicaSet has successfully progressed.",
        "lastUpdateTime": ts(at), "lastTransitionTime": ts(at)})
    if replica_failure:
        conditions.append(replica_failure)
    return {"observedGeneration": 1, "replicas": replicas, "readyReplicas": ready,
            "availableReplicas": available, "updatedReplicas": updated,
            "unavailableReplicas": max(replicas - available, 0) or None,
            "conditions": conditions}


def replicaset(deploy: Obj, template_hash: str, revision: int, created: datetime,
               containers: list[Obj], *, replicas: int, ready: int,
               conditions: list[Obj] | None = None) -> Obj:
    ns, name = deploy["metadata"]["namespace"], deploy["metadata"]["name"]
    rs_name = f"{name}-{template_hash}"
    labels = {**deploy["spec"]["template"]["metadata"]["labels"],
              "pod-template-hash": template_hash}
    template_spec = {**deploy["spec"]["template"]["spec"], "containers": containers}
    status: Obj = {"replicas": replicas, "readyReplicas": ready, "availableReplicas": ready,
                   "fullyLabeledReplicas": replicas, "observedGeneration": 1}
    if conditions:
        status["conditions"] = conditions
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": rs_name, "namespace": ns, "creationTimestamp": ts(created),
                         "uid": uid("rs", ns, rs_name), "labels": labels,
                         "annotations": {"deployment.kubernetes.io/revision": str(revision),
                                         "deployment.kubernetes.io/desired-replicas":
                                         str(deploy["spec"]["replicas"])},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment",
                                              "name": name, "uid": uid("Deployment", ns, name),
                                              "controller": True}]},
            "spec": {"replicas": replicas,
                     "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": template_spec}},
            "status": status}


def running(started: datetime, *, ready: bool = True, restarts: int = 0,
            last: Obj | None = None) -> Obj:
    """A container status's state part: running since `started`."""
    status: Obj = {"ready": ready, "restartCount": restarts, "started": True,
                   "state": {"running": {"startedAt": ts(started)}}}
    if last:
        status["lastState"] = {"terminated": last}
    return status


def waiting(reason: str, message: str, *, restarts: int = 0) -> Obj:
    return {"ready": False, "restartCount": restarts, "started": False,
            "state": {"waiting": {"reason": reason, "message": message}}}


def terminated(reason: str, code: int, started: datetime, finished: datetime) -> Obj:
    return {"reason": reason, "exitCode": code, "startedAt": ts(started),
            "finishedAt": ts(finished)}


def pod(owner: Obj, pod_name: str, node_name: str | None, created: datetime,
        statuses: dict[str, Obj], *, ip: str | None = None, phase: str = "Running",
        owner_kind: str = "ReplicaSet", containers: list[Obj] | None = None,
        labels: dict[str, str] | None = None, conditions: list[Obj] | None = None,
        qos: str = "Burstable", annotations: dict[str, str] | None = None) -> Obj:
    """A pod of `owner` (a ReplicaSet, StatefulSet or DaemonSet) with its containers'
    statuses by container name (running(), waiting()...)."""
    ns = owner["metadata"]["namespace"]
    template = owner["spec"]["template"]
    spec = {**template["spec"], "containers": containers or template["spec"]["containers"]}
    if node_name:
        spec["nodeName"] = node_name
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    all_ready = bool(statuses) and all(s.get("ready") for s in statuses.values())
    status: Obj = {"phase": phase, "qosClass": qos, "startTime": ts(created)}
    if conditions is None and node_name:
        conditions = [
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": ts(created)},
            {"type": "Initialized", "status": "True", "lastTransitionTime": ts(created)},
            {"type": "ContainersReady", "status": "True" if all_ready else "False",
             "lastTransitionTime": ts(created)},
            {"type": "Ready", "status": "True" if all_ready else "False",
             "lastTransitionTime": ts(created),
             **({} if all_ready else {"reason": "ContainersNotReady",
                                      "message": "containers with unready status: ["
                                      + " ".join(n for n, s in statuses.items()
                                                 if not s.get("ready")) + "]"})}]
    if conditions:
        status["conditions"] = conditions
    if ip:
        status["podIP"] = ip
        status["podIPs"] = [{"ip": ip}]
    images = {c["name"]: c["image"] for c in spec["containers"]}
    if statuses:
        status["containerStatuses"] = [
            {"name": n, "image": images.get(n, ""), **s} for n, s in statuses.items()]
    meta: Obj = {"name": pod_name, "namespace": ns, "creationTimestamp": ts(created),
                 "uid": uid("pod", ns, pod_name),
                 "labels": {**template["metadata"]["labels"], **(labels or {})},
                 "ownerReferences": [{"apiVersion": "apps/v1", "kind": owner_kind,
                                      "name": owner["metadata"]["name"],
                                      "uid": uid("rs" if owner_kind == "ReplicaSet" else
                                                 owner_kind, ns, owner["metadata"]["name"]),
                                      "controller": True}]}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec,
            "status": status}


def service(ns: str, name: str, created: datetime, selector: dict[str, str],
            ports: list[Obj], cluster_ip: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": ns, "creationTimestamp": ts(created)},
            "spec": {"type": "ClusterIP", "clusterIP": cluster_ip, "selector": selector,
                     "ports": ports}}


def endpoints(ns: str, name: str, ready: list[tuple[str, str, str]],
              not_ready: list[tuple[str, str, str]], ports: list[Obj]) -> Obj:
    """(ip, pod name, node) triples for the ready and the not ready addresses."""
    def address(ip: str, pod_name: str, node_name: str) -> Obj:
        return {"ip": ip, "nodeName": node_name,
                "targetRef": {"kind": "Pod", "namespace": ns, "name": pod_name}}

    subset: Obj = {"ports": ports}
    if ready:
        subset["addresses"] = [address(*a) for a in ready]
    if not_ready:
        subset["notReadyAddresses"] = [address(*a) for a in not_ready]
    return {"apiVersion": "v1", "kind": "Endpoints",
            "metadata": {"name": name, "namespace": ns}, "subsets": [subset]}


def event(ns: str, kind: str, name: str, reason: str, message: str, first: datetime,
          last: datetime | None = None, *, count: int = 1, type_: str = "Normal",
          component: str = "kubelet", host: str | None = None) -> Obj:
    last = last or first
    key = suffix(ns, kind, name, reason, message, length=16)
    source: Obj = {"component": component}
    if host:
        source["host"] = host
    return {"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{name}.{key}", "namespace": ns or "default",
                         "creationTimestamp": ts(first)},
            "involvedObject": {"kind": kind, "name": name,
                               **({"namespace": ns} if ns else {}),
                               "apiVersion": "apps/v1" if kind in (
                                   "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet")
                               else "v1"},
            "reason": reason, "message": message, "type": type_, "count": count,
            "firstTimestamp": ts(first), "lastTimestamp": ts(last), "source": source}


def configmap(ns: str, name: str, created: datetime, data: dict[str, str],
              annotations: dict[str, str] | None = None) -> Obj:
    meta: Obj = {"name": name, "namespace": ns, "creationTimestamp": ts(created)}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


def minutes(value: float) -> timedelta:
    return timedelta(minutes=value)


def healthy_deployment(ns: str, name: str, image: str, created: datetime, rolled: datetime,
                       nodes: list[str], ips: list[str], *, replicas: int, cpu: str,
                       memory: str, port: int, revision: int = 3,
                       labels: dict[str, str] | None = None,
                       probe_path: str | None = "/healthz") -> list[Obj]:
    """A bystander that works: Deployment, its ReplicaSet and Ready pods, Service, Endpoints.
    `probe_path` None probes the port over TCP (a database, a cache)."""
    probe = http_probe(probe_path, port) if probe_path else {
        "tcpSocket": {"port": port}, "periodSeconds": 10, "timeoutSeconds": 1,
        "failureThreshold": 3, "successThreshold": 1}
    main = container(name if len(name) < 20 else "app", image, cpu=cpu, memory=memory,
                     memory_limit=memory, ports=[{"containerPort": port, "name": "http"}],
                     readinessProbe=probe)
    deploy = workload("Deployment", ns, name, created, [main], replicas=replicas, labels=labels,
                      annotations={"deployment.kubernetes.io/revision": str(revision)},
                      status=deployment_status(replicas, replicas, replicas, at=rolled))
    template_hash = pod_hash(ns, name, str(revision))
    rs = replicaset(deploy, template_hash, revision, rolled, [main], replicas=replicas,
                    ready=replicas)
    pods, addresses = [], []
    for i in range(replicas):
        pod_name = f"{rs['metadata']['name']}-{suffix(ns, name, str(i))}"
        started = rolled + timedelta(seconds=20 + 7 * i)
        pods.append(pod(rs, pod_name, nodes[i % len(nodes)], rolled,
                        {main["name"]: running(started)}, ip=ips[i % len(ips)]))
        addresses.append((ips[i % len(ips)], pod_name, nodes[i % len(nodes)]))
    svc_ports = [{"name": "http", "port": 80, "targetPort": port, "protocol": "TCP"}]
    last_octets = sum(ord(c) for c in name) % 200 + 20
    svc = service(ns, name, created, {"app.kubernetes.io/name": name}, svc_ports,
                  f"172.20.{last_octets}.{len(name) * 7 % 250 + 2}")
    eps = endpoints(ns, name, addresses, [], [{"name": "http", "port": port, "protocol": "TCP"}])
    return [deploy, rs, *pods, svc, eps]
