"""Kubernetes objects as `kubectl get -o yaml` prints them, built from a few facts.

Every scenario of the set needs the same shapes (a Deployment with its ReplicaSets and
pods, a Service with its Endpoints, events); building them here keeps names, owner
references, hashes and timestamps consistent from one object to the next.
"""

from __future__ import annotations

import hashlib
import random
from datetime import datetime, timedelta
from typing import Any

Obj = dict[str, Any]
_HASH_CHARS = "bcdfghjklmnpqrstvwxz2456789"  # the alphabet of generated names


def ts(at: datetime) -> str:
    """RFC 3339 in UTC with a Z, as the API server writes it."""
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def uid(*parts: str) -> str:
    digest = hashlib.sha1("/".join(parts).encode()).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


def suffix(rng: random.Random, length: int = 5) -> str:
    return "".join(rng.choice(_HASH_CHARS) for _ in range(length))


def pod_hash(seed: str) -> str:
    """A stable pod-template-hash for a revision (9 or 10 characters like the real ones)."""
    rng = random.Random(seed)
    return suffix(rng, 9 + rng.randint(0, 1))


def meta(name: str, namespace: str | None, created: datetime, *,
         labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None,
         owner: tuple[str, str, str] | None = None, generation: int | None = None) -> Obj:
    """Object metadata; `owner` is (apiVersion, kind, name) of the controller."""
    data: Obj = {"name": name}
    if namespace is not None:
        data["namespace"] = namespace
    data["uid"] = uid(namespace or "", name)
    data["creationTimestamp"] = ts(created)
    if generation is not None:
        data["generation"] = generation
    if labels:
        data["labels"] = dict(labels)
    if annotations:
        data["annotations"] = dict(annotations)
    if owner:
        api, kind, owner_name = owner
        data["ownerReferences"] = [{"apiVersion": api, "kind": kind, "name": owner_name,
                                    "uid": uid(namespace or "", owner_name),
                                    "controller": True, "blockOwnerDeletion": True}]
    return data


def namespace(name: str, created: datetime, labels: dict[str, str] | None = None) -> Obj:
    tags = {"kubernetes.io/metadata.name": name, **(labels or {})}
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": meta(name, None, created, labels=tags),
            "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}


def node(name: str, created: datetime, *, labels: dict[str, str], cpu: str = "8",
         memory: str = "32Gi", ready_since: datetime, heartbeat: datetime,
         taints: list[Obj] | None = None, internal_ip: str = "10.0.0.10",
         kubelet: str = "v1.30.5", unschedulable: bool = False) -> Obj:
    """A healthy node; callers edit conditions for sick ones."""
    allocatable_cpu = f"{int(cpu) * 1000 - 190}m"
    gib = int(memory.removesuffix("Gi"))
    base = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
            "beta.kubernetes.io/arch": "amd64"}
    spec: Obj = {"providerID": f"aws:///eu-west-1a/i-0{hashlib.md5(name.encode()).hexdigest()[:16]}"}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True

    def condition(kind: str, status: str, reason: str, message: str) -> Obj:
        return {"type": kind, "status": status, "reason": reason, "message": message,
                "lastHeartbeatTime": ts(heartbeat), "lastTransitionTime": ts(ready_since)}

    return {"apiVersion": "v1", "kind": "Node",
            "metadata": meta(name, None, created, labels={**base, **labels}),
            "spec": spec,
            "status": {
                "capacity": {"cpu": cpu, "memory": f"{gib * 1024 * 1024}Ki", "pods": "110",
                             "ephemeral-storage": "104845292Ki"},
                "allocatable": {"cpu": allocatable_cpu,
                                "memory": f"{gib * 1024 * 1024 - 1740000}Ki", "pods": "110",
                                "ephemeral-storage": "95551679124"},
                "conditions": [
                    condition("MemoryPressure", "False", "KubeletHasSufficientMemory",
                              "kubelet has sufficient memory available"),
                    condition("DiskPressure", "False", "KubeletHasNoDiskPressure",
                              "kubelet has no disk pressure"),
                    condition("PIDPressure", "False", "KubeletHasSufficientPID",
                              "kubelet has sufficient PID available"),
                    condition("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
                ],
                "addresses": [{"type": "InternalIP", "address": internal_ip},
                              {"type": "Hostname", "address": name}],
                "nodeInfo": {"kubeletVersion": kubelet, "containerRuntimeVersion":
                             "containerd://1.7.22", "osImage": "Amazon Linux 2023",
                             "kernelVersion": "6.1.112-124.190.amzn2023.x86_64",
                             "architecture": "amd64", "operatingSystem": "linux"}}}


def container(name: str, image: str, *, requests: dict[str, str] | None = None,
              limits: dict[str, str] | None = None, port: int | None = None,
              env: dict[str, str] | None = None, readiness: str | None = None,
              liveness: str | None = None, args: list[str] | None = None,
              mounts: list[Obj] | None = None, command: list[str] | None = None) -> Obj:
    """A container spec; `readiness`/`liveness` are HTTP paths on `port`."""
    spec: Obj = {"name": name, "image": image, "imagePullPolicy": "IfNotPresent"}
    if command:
        spec["command"] = command
    if args:
        spec["args"] = args
    if port:
        spec["ports"] = [{"name": "http" if port != 5672 else "amqp", "containerPort": port,
                          "protocol": "TCP"}]
    if env:
        spec["env"] = [{"name": k, "value": v} for k, v in env.items()]
    resources: Obj = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    spec["resources"] = resources
    for kind, path in (("readinessProbe", readiness), ("livenessProbe", liveness)):
        if path and port:
            spec[kind] = {"httpGet": {"path": path, "port": port, "scheme": "HTTP"},
                          "periodSeconds": 10, "timeoutSeconds": 1, "failureThreshold": 3,
                          "successThreshold": 1,
                          "initialDelaySeconds": 5 if kind == "readinessProbe" else 15}
    if mounts:
        spec["volumeMounts"] = mounts
    spec["terminationMessagePath"] = "/dev/termination-log"
    spec["terminationMessagePolicy"] = "File"
    return spec


def pod_spec(containers: list[Obj], *, service_account: str = "default",
             node_selector: dict[str, str] | None = None, affinity: Obj | None = None,
             volumes: list[Obj] | None = None, restart: str = "Always",
             tolerations: list[Obj] | None = None) -> Obj:
    spec: Obj = {"containers": containers, "restartPolicy": restart, "dnsPolicy": "ClusterFirst",
                 "serviceAccountName": service_account, "terminationGracePeriodSeconds": 30,
                 "schedulerName": "default-scheduler", "securityContext": {}}
    if node_selector:
        spec["nodeSelector"] = node_selector
    if affinity:
        spec["affinity"] = affinity
    if volumes:
        spec["volumes"] = volumes
    if tolerations:
        spec["tolerations"] = tolerations
    return spec


def _image_id(image: str) -> str:
    return f"{image.split(':')[0]}@sha256:{hashlib.sha256(image.encode()).hexdigest()}"


def _container_id(name: str, started: datetime) -> str:
    return f"containerd://{hashlib.sha256((name + ts(started)).encode()).hexdigest()}"


def running(name: str, image: str, started: datetime, *, ready: bool = True,
            restarts: int = 0, last: Obj | None = None) -> Obj:
    """A container status: running since `started`; `last` is a lastState.terminated."""
    status: Obj = {"name": name, "image": image, "imageID": _image_id(image),
                   "containerID": _container_id(name, started),
                   "ready": ready, "started": True, "restartCount": restarts,
                   "state": {"running": {"startedAt": ts(started)}}, "lastState": {}}
    if last:
        status["lastState"] = {"terminated": last}
    return status


def terminated(name: str, image: str, *, reason: str, exit_code: int, started: datetime,
               finished: datetime, restarts: int = 0, message: str | None = None) -> Obj:
    state: Obj = {"exitCode": exit_code, "reason": reason, "startedAt": ts(started),
                  "finishedAt": ts(finished),
                  "containerID": _container_id(name, started)}
    if message:
        state["message"] = message
    return {"name": name, "image": image, "imageID": _image_id(image),
            "ready": False, "started": False, "restartCount": restarts,
            "state": {"terminated": state}, "lastState": {}}


def pod(name: str, ns: str, *, owner: tuple[str, str, str] | None, labels: dict[str, str],
        spec: Obj, created: datetime, node_name: str | None, ip: str | None,
        statuses: list[Obj] | None, phase: str = "Running",
        conditions: list[Obj] | None = None, host_ip: str | None = None,
        annotations: dict[str, str] | None = None) -> Obj:
    """A pod; a Running one with all containers ready gets the usual four conditions."""
    body = dict(spec)
    if node_name:
        body["nodeName"] = node_name
    status: Obj = {"phase": phase, "qosClass": "Burstable"}
    if conditions is None:
        all_ready = bool(statuses) and all(s.get("ready") for s in statuses)
        conditions = [
            {"type": "Initialized", "status": "True", "lastTransitionTime": ts(created)},
            {"type": "Ready", "status": "True" if all_ready else "False",
             "lastTransitionTime": ts(created + timedelta(seconds=14))},
            {"type": "ContainersReady", "status": "True" if all_ready else "False",
             "lastTransitionTime": ts(created + timedelta(seconds=14))},
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": ts(created)},
        ]
    status["conditions"] = conditions
    if host_ip:
        status["hostIP"] = host_ip
    if ip:
        status["podIP"] = ip
        status["podIPs"] = [{"ip": ip}]
    if node_name:
        status["startTime"] = ts(created + timedelta(seconds=1))
    if statuses is not None:
        status["containerStatuses"] = statuses
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": meta(name, ns, created, labels=labels, owner=owner,
                             annotations=annotations),
            "spec": body, "status": status}


def deployment(name: str, ns: str, *, template_labels: dict[str, str], spec: Obj,
               replicas: int, created: datetime, revision: int, updated: int | None = None,
               ready: int | None = None, available: int | None = None,
               conditions: list[Obj] | None = None, strategy: Obj | None = None,
               annotations: dict[str, str] | None = None, unavailable: int | None = None,
               total: int | None = None, labels: dict[str, str] | None = None) -> Obj:
    ready = replicas if ready is None else ready
    available = ready if available is None else available
    notes = {"deployment.kubernetes.io/revision": str(revision), **(annotations or {})}
    status: Obj = {"observedGeneration": revision + 1, "replicas": total or replicas,
                   "updatedReplicas": replicas if updated is None else updated,
                   "readyReplicas": ready, "availableReplicas": available}
    if unavailable:
        status["unavailableReplicas"] = unavailable
    status["conditions"] = conditions or [
        {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
         "message": "Deployment has minimum availability.",
         "lastUpdateTime": ts(created), "lastTransitionTime": ts(created)},
        {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable",
         "message": f'ReplicaSet "{name}" has successfully progressed.',
         "lastUpdateTime": ts(created), "lastTransitionTime": ts(created)},
    ]
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": meta(name, ns, created, labels=labels or {"app": name},
                             annotations=notes, generation=revision + 1),
            "spec": {"replicas": replicas, "revisionHistoryLimit": 10,
                     "progressDeadlineSeconds": 600,
                     "selector": {"matchLabels": {"app": template_labels["app"]}},
                     "strategy": strategy or {"type": "RollingUpdate", "rollingUpdate":
                                              {"maxSurge": "25%", "maxUnavailable": "25%"}},
                     "template": {"metadata": {"labels": template_labels}, "spec": spec}},
            "status": status}


def replicaset(deploy: str, ns: str, *, template_hash: str, spec: Obj, labels: dict[str, str],
               replicas: int, created: datetime, revision: int, ready: int | None = None,
               conditions: list[Obj] | None = None) -> Obj:
    ready = replicas if ready is None else ready
    tags = {**labels, "pod-template-hash": template_hash}
    status: Obj = {"replicas": replicas, "fullyLabeledReplicas": replicas,
                   "readyReplicas": ready, "availableReplicas": ready,
                   "observedGeneration": 1}
    if conditions:
        status["conditions"] = conditions
    if not replicas:
        status = {"replicas": 0, "observedGeneration": 2}
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": meta(f"{deploy}-{template_hash}", ns, created, labels=tags,
                             owner=("apps/v1", "Deployment", deploy),
                             annotations={
                                 "deployment.kubernetes.io/revision": str(revision),
                                 "deployment.kubernetes.io/desired-replicas": str(replicas)}),
            "spec": {"replicas": replicas,
                     "selector": {"matchLabels": {"app": labels["app"],
                                                  "pod-template-hash": template_hash}},
                     "template": {"metadata": {"labels": tags}, "spec": spec}},
            "status": status}


def service(name: str, ns: str, *, selector: dict[str, str] | None, port: int,
            target: int | str, created: datetime, cluster_ip: str, port_name: str = "http",
            kind: str = "ClusterIP", external_name: str | None = None,
            labels: dict[str, str] | None = None,
            annotations: dict[str, str] | None = None) -> Obj:
    spec: Obj = {"type": kind}
    if kind == "ExternalName":
        spec["externalName"] = external_name
        spec["sessionAffinity"] = "None"
        if port:
            spec["ports"] = [{"name": port_name, "port": port, "protocol": "TCP",
                              "targetPort": target}]
    else:
        spec.update({"clusterIP": cluster_ip, "clusterIPs": [cluster_ip],
                     "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
                     "sessionAffinity": "None",
                     "ports": [{"name": port_name, "port": port, "protocol": "TCP",
                                "targetPort": target}]})
        if selector is not None:
            spec["selector"] = selector
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": meta(name, ns, created, labels=labels or {"app": name},
                             annotations=annotations),
            "spec": spec, "status": {"loadBalancer": {}}}


def endpoints(name: str, ns: str, *, pods: list[Obj], port: int, created: datetime,
              port_name: str = "http") -> Obj:
    ready = [p for p in pods if any(c["type"] == "Ready" and c["status"] == "True"
                                    for c in p["status"].get("conditions", []))]
    not_ready = [p for p in pods if p not in ready and p["status"].get("podIP")]

    def address(p: Obj) -> Obj:
        return {"ip": p["status"]["podIP"], "nodeName": p["spec"].get("nodeName"),
                "targetRef": {"kind": "Pod", "namespace": ns, "name": p["metadata"]["name"],
                              "uid": p["metadata"]["uid"]}}

    subset: Obj = {"ports": [{"name": port_name, "port": port, "protocol": "TCP"}]}
    if ready:
        subset["addresses"] = [address(p) for p in ready]
    if not_ready:
        subset["notReadyAddresses"] = [address(p) for p in not_ready]
    return {"apiVersion": "v1", "kind": "Endpoints",
            "metadata": meta(name, ns, created, labels={"app": name}),
            "subsets": [subset] if (ready or not_ready) else []}


def event(ns: str, *, kind: str, name: str, reason: str, message: str, first: datetime,
          last: datetime, count: int = 1, type: str = "Normal", component: str = "kubelet",
          host: str | None = None, api: str = "v1", field_path: str | None = None) -> Obj:
    involved: Obj = {"kind": kind, "namespace": "" if kind == "Node" else ns, "name": name,
                     "apiVersion": api, "uid": uid("" if kind == "Node" else ns, name)}
    if field_path:
        involved["fieldPath"] = field_path
    source: Obj = {"component": component}
    if host:
        source["host"] = host
    event_name = f"{name}.{hashlib.md5((reason + ts(first) + message).encode()).hexdigest()[:16]}"
    return {"apiVersion": "v1", "kind": "Event",
            "metadata": meta(event_name, ns, first),
            "involvedObject": involved, "reason": reason, "message": message,
            "source": source, "firstTimestamp": ts(first), "lastTimestamp": ts(last),
            "count": count, "type": type, "reportingComponent": component,
            "reportingInstance": host or ""}
