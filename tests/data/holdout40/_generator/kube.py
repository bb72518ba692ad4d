"""Small builders for the Kubernetes objects of the holdout40 stories, so that owners,
labels, template hashes and timestamps stay consistent across a story."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from typing import Any

Obj = dict[str, Any]


def stamp(now: datetime, minutes_ago: float) -> str:
    """RFC 3339 time `minutes_ago` before `now` (seconds precision, Z suffix)."""
    moment = now - timedelta(minutes=minutes_ago)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def uid(*parts: str) -> str:
    digest = hashlib.sha1("/".join(parts).encode()).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


def suffix(seed: str, length: int = 5) -> str:
    """A pod-name suffix in the alphabet Kubernetes uses (no vowels)."""
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    number = int(hashlib.sha1(seed.encode()).hexdigest(), 16)
    out = ""
    for _ in range(length):
        number, index = divmod(number, len(alphabet))
        out += alphabet[index]
    return out


def template_hash(seed: str) -> str:
    return suffix("hash" + seed, 10)[:10]


def metadata(kind: str, namespace: str, name: str, created: str, *,
             labels: dict[str, str] | None = None,
             annotations: dict[str, str] | None = None,
             owner: tuple[str, str] | None = None) -> Obj:
    meta: Obj = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    meta["uid"] = uid(kind, namespace, name)
    meta["creationTimestamp"] = created
    if labels:
        meta["labels"] = dict(labels)
    if annotations:
        meta["annotations"] = dict(annotations)
    if owner:
        okind, oname = owner
        meta["ownerReferences"] = [{
            "apiVersion": "batch/v1" if okind in ("Job", "CronJob") else "apps/v1",
            "kind": okind, "name": oname, "uid": uid(okind, namespace, oname),
            "controller": True, "blockOwnerDeletion": True}]
    return meta


def namespace(name: str, created: str, labels: dict[str, str] | None = None) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": metadata("Namespace", "", name, created,
                                 labels={"kubernetes.io/metadata.name": name, **(labels or {})}),
            "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}


def node(name: str, created: str, now: datetime, *, zone: str, instance: str,
         cpu: str = "8", memory: str = "32Gi", pool: str = "general",
         extra_conditions: list[Obj] | None = None, ready: bool = True,
         labels: dict[str, str] | None = None) -> Obj:
    hb = stamp(now, 0.5)
    created_cond = stamp(now, 8100)  # status times stay within the week: last kubelet restart
    conditions: list[Obj] = [
        {"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory",
         "message": "kubelet has sufficient memory available",
         "lastHeartbeatTime": hb, "lastTransitionTime": created_cond},
        {"type": "DiskPressure", "status": "False", "reason": "KubeletHasNoDiskPressure",
         "message": "kubelet has no disk pressure", "lastHeartbeatTime": hb,
         "lastTransitionTime": created_cond},
        {"type": "PIDPressure", "status": "False", "reason": "KubeletHasSufficientPID",
         "message": "kubelet has sufficient PID available", "lastHeartbeatTime": hb,
         "lastTransitionTime": created_cond},
        {"type": "Ready", "status": "True" if ready else "False",
         "reason": "KubeletReady" if ready else "KubeletNotReady",
         "message": "kubelet is posting ready status" if ready else "PLEG is not healthy",
         "lastHeartbeatTime": hb, "lastTransitionTime": created_cond},
    ]
    conditions = (extra_conditions or []) + conditions
    allocatable_mem = f"{int(memory[:-2]) * 1024 - 1800}Mi" if memory.endswith("Gi") else memory
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": metadata("Node", "", name, created, labels={
                "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                "node.kubernetes.io/instance-type": instance,
                "topology.kubernetes.io/zone": zone, "pool": pool, **(labels or {})}),
            "spec": {"podCIDR": "10.0.0.0/24"},
            "status": {"capacity": {"cpu": cpu, "memory": memory, "pods": "110",
                                    "ephemeral-storage": "128Gi"},
                       "allocatable": {"cpu": f"{int(cpu) * 1000 - 140}m",
                                       "memory": allocatable_mem, "pods": "110",
                                       "ephemeral-storage": "118Gi"},
                       "conditions": conditions,
                       "nodeInfo": {"kubeletVersion": "v1.29.8",
                                    "containerRuntimeVersion": "containerd://1.7.20",
                                    "osImage": "Ubuntu 22.04.4 LTS",
                                    "kernelVersion": "5.15.0-1068-azure"}}}


def pod_template(labels: dict[str, str], containers: list[Obj], **spec: Any) -> Obj:
    body: Obj = {"containers": containers, "restartPolicy": "Always",
                 "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst"}
    body.update(spec)
    return {"metadata": {"labels": dict(labels)}, "spec": body}


def container(name: str, image: str, *, ports: list[Obj] | None = None,
              requests: dict[str, str] | None = None, limits: dict[str, str] | None = None,
              env: list[Obj] | None = None, **extra: Any) -> Obj:
    out: Obj = {"name": name, "image": image, "imagePullPolicy": "IfNotPresent"}
    if ports:
        out["ports"] = ports
    if env:
        out["env"] = env
    out["resources"] = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
    out.update(extra)
    return out


def http_probe(path: str, port: int | str, *, delay: int = 5, period: int = 10,
               failures: int = 3) -> Obj:
    return {"httpGet": {"path": path, "port": port, "scheme": "HTTP"},
            "initialDelaySeconds": delay, "periodSeconds": period, "timeoutSeconds": 1,
            "successThreshold": 1, "failureThreshold": failures}


def deployment(ns: str, name: str, created: str, template: Obj, *, replicas: int,
               revision: int, status: Obj, labels: dict[str, str] | None = None,
               strategy: Obj | None = None, annotations: dict[str, str] | None = None) -> Obj:
    notes = {"deployment.kubernetes.io/revision": str(revision), **(annotations or {})}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": metadata("Deployment", ns, name, created,
                                 labels=labels or {"app": name}, annotations=notes),
            "spec": {"replicas": replicas, "revisionHistoryLimit": 10,
                     "progressDeadlineSeconds": 600,
                     "selector": {"matchLabels": {"app": name}},
                     "strategy": strategy or {"type": "RollingUpdate", "rollingUpdate": {
                         "maxSurge": "25%", "maxUnavailable": "25%"}},
                     "template": template},
            "status": status}


def deploy_status(now: datetime, *, replicas: int, ready: int, updated: int,
                  available: int, generation: int = 1, progressing: tuple[str, str, str,
                  float] | None = None, extra: list[Obj] | None = None) -> Obj:
    """progressing: (status, reason, message, minutes_ago)."""
    conditions: list[Obj] = [{
        "type": "Available", "status": "True" if available else "False",
        "reason": "MinimumReplicasAvailable" if available else "MinimumReplicasUnavailable",
        "message": "Deployment has minimum availability." if available
        else "Deployment does not have minimum availability.",
        "lastUpdateTime": stamp(now, 3000), "lastTransitionTime": stamp(now, 3000)}]
    if progressing:
        st, reason, message, ago = progressing
        conditions.append({"type": "Progressing", "status": st, "reason": reason,
                           "message": message, "lastUpdateTime": stamp(now, ago),
                           "lastTransitionTime": stamp(now, ago)})
    conditions += extra or []
    out: Obj = {"observedGeneration": generation, "replicas": replicas,
                "updatedReplicas": updated, "readyReplicas": ready,
                "availableReplicas": available, "conditions": conditions}
    if replicas - available > 0:
        out["unavailableReplicas"] = replicas - available
    return {k: v for k, v in out.items() if v != 0 or k in ("replicas",)}


def replicaset(ns: str, deploy: str, hash_: str, created: str, template: Obj, *,
               revision: int, replicas: int, ready: int,
               conditions: list[Obj] | None = None) -> Obj:
    labels = {**template["metadata"]["labels"], "pod-template-hash": hash_}
    tpl = {"metadata": {"labels": labels}, "spec": template["spec"]}
    status: Obj = {"replicas": replicas, "fullyLabeledReplicas": replicas,
                   "readyReplicas": ready, "availableReplicas": ready,
                   "observedGeneration": 1}
    if conditions:
        status["conditions"] = conditions
    status = {k: v for k, v in status.items() if v != 0 or k == "replicas"}
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": metadata("ReplicaSet", ns, f"{deploy}-{hash_}", created, labels=labels,
                                 annotations={"deployment.kubernetes.io/revision": str(revision),
                                              "deployment.kubernetes.io/desired-replicas":
                                              str(replicas)},
                                 owner=("Deployment", deploy)),
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": tpl},
            "status": status}


def running(name: str, image: str, started: str, *, ready: bool = True, restarts: int = 0,
            last: Obj | None = None) -> Obj:
    out: Obj = {"name": name, "image": image,
                "imageID": f"{image.split(':')[0]}@sha256:" + hashlib.sha256(image.encode())
                .hexdigest(), "ready": ready, "started": True, "restartCount": restarts,
                "state": {"running": {"startedAt": started}}}
    if last:
        out["lastState"] = {"terminated": last}
    return out


def waiting(name: str, image: str, reason: str, message: str, *, restarts: int = 0,
            last: Obj | None = None) -> Obj:
    out: Obj = {"name": name, "image": image, "imageID": "", "ready": False,
                "started": False, "restartCount": restarts,
                "state": {"waiting": {"reason": reason, "message": message}}}
    if last:
        out["lastState"] = {"terminated": last}
        out["imageID"] = f"{image.split(':')[0]}@sha256:" + hashlib.sha256(
            image.encode()).hexdigest()
    return out


def terminated(reason: str, code: int, started: str, finished: str) -> Obj:
    return {"exitCode": code, "reason": reason, "startedAt": started, "finishedAt": finished,
            "containerID": "containerd://" + hashlib.sha256((started + reason).encode())
            .hexdigest()}


def pod(ns: str, name: str, created: str, template: Obj, *, owner: tuple[str, str] | None,
        node_name: str | None, ip: str | None, phase: str, statuses: list[Obj],
        ready: bool, scheduled: tuple[str, str, str] | None = None,
        host_ip: str | None = None, extra_labels: dict[str, str] | None = None,
        annotations: dict[str, str] | None = None) -> Obj:
    """scheduled: (status, reason, message) for a pod that is not scheduled."""
    labels = {**template["metadata"]["labels"], **(extra_labels or {})}
    spec = dict(template["spec"])
    if node_name:
        spec["nodeName"] = node_name
    conditions: list[Obj] = []
    if scheduled:
        st, reason, message = scheduled
        conditions.append({"type": "PodScheduled", "status": st, "reason": reason,
                           "message": message, "lastTransitionTime": created})
    else:
        conditions += [
            {"type": "Initialized", "status": "True", "lastTransitionTime": created},
            {"type": "Ready", "status": "True" if ready else "False",
             "lastTransitionTime": created,
             **({} if ready else {"reason": "ContainersNotReady",
                                  "message": "containers with unready status: ["
                                  + " ".join(s["name"] for s in statuses if not s["ready"])
                                  + "]"})},
            {"type": "ContainersReady", "status": "True" if ready else "False",
             "lastTransitionTime": created},
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": created}]
    status: Obj = {"phase": phase, "conditions": conditions, "qosClass": "Burstable"}
    if node_name:
        digest = hashlib.sha1(node_name.encode()).digest()
        status["hostIP"] = host_ip or f"10.{digest[0] % 64 + 128}.{digest[1]}.{digest[2] % 250 + 4}"
        status["startTime"] = created
    if ip:
        status["podIP"] = ip
        status["podIPs"] = [{"ip": ip}]
    if statuses:
        status["containerStatuses"] = statuses
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": metadata("Pod", ns, name, created, labels=labels,
                                 annotations=annotations, owner=owner),
            "spec": spec, "status": status}


def service(ns: str, name: str, created: str, selector: dict[str, str], ports: list[Obj],
            *, cluster_ip: str, kind: str = "ClusterIP", external: str | None = None) -> Obj:
    spec: Obj = {"type": kind, "ports": ports}
    if kind == "ExternalName":
        spec = {"type": kind, "externalName": external, "ports": ports}
    else:
        spec["selector"] = selector
        spec["clusterIP"] = cluster_ip
        spec["clusterIPs"] = [cluster_ip]
        spec["sessionAffinity"] = "None"
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": metadata("Service", ns, name, created, labels={"app": name}),
            "spec": spec, "status": {"loadBalancer": {}}}


def endpoints(ns: str, name: str, created: str, ready: list[tuple[str, str, str]],
              not_ready: list[tuple[str, str, str]], ports: list[Obj]) -> Obj:
    """ready / not_ready: (ip, pod name, node name)."""
    def addr(item: tuple[str, str, str]) -> Obj:
        ip, pod_name, node_name = item
        return {"ip": ip, "nodeName": node_name,
                "targetRef": {"kind": "Pod", "namespace": ns, "name": pod_name,
                              "uid": uid("Pod", ns, pod_name)}}
    subset: Obj = {"ports": ports}
    if ready:
        subset["addresses"] = [addr(a) for a in ready]
    if not_ready:
        subset["notReadyAddresses"] = [addr(a) for a in not_ready]
    return {"apiVersion": "v1", "kind": "Endpoints",
            "metadata": metadata("Endpoints", ns, name, created, labels={"app": name}),
            "subsets": [subset] if (ready or not_ready) else []}


def event(ns: str, kind: str, name: str, reason: str, message: str, *, first: str,
          last: str, count: int = 1, type_: str = "Warning", component: str = "kubelet",
          host: str | None = None) -> Obj:
    seed = f"{ns}/{kind}/{name}/{reason}/{message[:40]}"
    api = {"Deployment": "apps/v1", "ReplicaSet": "apps/v1", "StatefulSet": "apps/v1",
           "DaemonSet": "apps/v1", "Job": "batch/v1", "CronJob": "batch/v1",
           "HorizontalPodAutoscaler": "autoscaling/v2"}.get(kind, "v1")
    source: Obj = {"component": component}
    if host:
        source["host"] = host
    return {"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{name}.{hashlib.sha1(seed.encode()).hexdigest()[:16]}",
                         "namespace": ns or "default", "creationTimestamp": first},
            "involvedObject": {"apiVersion": api, "kind": kind, "name": name,
                               **({"namespace": ns} if ns else {}),
                               "uid": uid(kind, ns, name)},
            "reason": reason, "message": message, "type": type_, "count": count,
            "firstTimestamp": first, "lastTimestamp": last, "source": source,
            "reportingComponent": component, "reportingInstance": host or ""}
