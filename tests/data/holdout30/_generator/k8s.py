"""Kubernetes objects as `kubectl get -o yaml` prints them: nodes, Deployments with their
ReplicaSets and pods, Services with Endpoints, HPAs, ConfigMaps, Ingresses.

A pod's state is given as plain arguments (running, waiting with a reason, last
termination) so that a scenario reads like the story it tells.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from .kit import Obj, World, iso

GiB = 1024**3
MiB = 1024**2


def namespace(world: World, name: str, created: datetime) -> Obj:
    obj = {"apiVersion": "v1", "kind": "Namespace",
           "metadata": {"name": name, "creationTimestamp": iso(created),
                        "labels": {"kubernetes.io/metadata.name": name}},
           "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}
    world.add(obj)
    return obj


def node(world: World, name: str, created: datetime, *, pool: str = "general",
         zone: str = "eu-west-1a", cpu: str = "4", memory: str = "16Gi",
         allocatable_memory: str = "15160Mi", conditions: dict[str, tuple[str, str, str]] | None
         = None, taints: list[Obj] | None = None, images: list[str] | None = None,
         ready_since: datetime | None = None) -> Obj:
    """A node; `conditions` overrides type -> (status, reason, message)."""
    since = iso(ready_since or max(created + timedelta(minutes=2),
                                   world.now - timedelta(days=5, hours=7)))
    default = {
        "MemoryPressure": ("False", "KubeletHasSufficientMemory",
                           "kubelet has sufficient memory available"),
        "DiskPressure": ("False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        "PIDPressure": ("False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        "Ready": ("True", "KubeletReady", "kubelet is posting ready status"),
    }
    default.update(conditions or {})
    conds = [{"type": k, "status": s, "reason": r, "message": m,
              "lastHeartbeatTime": iso(world.now - timedelta(seconds=world.rng.randint(5, 50))),
              "lastTransitionTime": since} for k, (s, r, m) in default.items()]
    obj: Obj = {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "creationTimestamp": iso(created), "labels": {
            "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
            "node.kubernetes.io/instance-type": "m6i.xlarge",
            "topology.kubernetes.io/zone": zone, "nodepool": pool}},
        "spec": {"providerID": f"aws:///{zone}/i-0{world.rng.getrandbits(60):015x}"},
        "status": {
            "capacity": {"cpu": cpu, "memory": memory, "pods": "58", "ephemeral-storage":
                         "100Gi"},
            "allocatable": {"cpu": f"{int(cpu) * 1000 - 80}m", "memory": allocatable_memory,
                            "pods": "58",
                            "ephemeral-storage": "95Gi"},
            "conditions": conds,
            "nodeInfo": {"kubeletVersion": "v1.30.6", "containerRuntimeVersion":
                         "containerd://1.7.23", "osImage": "Amazon Linux 2023",
                         "kernelVersion": "6.1.115-126.197.amzn2023.x86_64"},
            "addresses": [{"type": "InternalIP", "address": world.ip("10.20")},
                          {"type": "Hostname", "address": name}],
        },
    }
    if taints:
        obj["spec"]["taints"] = taints
    if images:
        obj["status"]["images"] = [{"names": [i], "sizeBytes": world.rng.randint(80, 600) * MiB}
                                   for i in images]
    world.add(obj)
    return obj


@dataclass
class PodState:
    """How one pod is doing: scheduled on `node`, created at `created`."""

    node: str
    created: datetime
    ready: bool = True
    phase: str = "Running"
    waiting: tuple[str, str] | None = None       # (reason, message)
    last: Obj | None = None                      # lastState.terminated
    terminated: Obj | None = None                # state.terminated
    restarts: int = 0
    started: datetime | None = None              # current container start
    reason: str | None = None                    # status.reason (Evicted)
    message: str | None = None
    ip: str | None = None


def terminated(reason: str, code: int, started: datetime, finished: datetime,
               message: str | None = None) -> Obj:
    term: Obj = {"exitCode": code, "reason": reason, "startedAt": iso(started),
                 "finishedAt": iso(finished)}
    if message:
        term["message"] = message
    return term


def container(name: str, image: str, *, port: int | None = 8080, port_name: str = "http",
              cpu: str | None = "250m", memory: str | None = "512Mi",
              cpu_limit: str | None = None, memory_limit: str | None = None,
              env: list[Obj] | None = None, liveness: Obj | None = None,
              readiness: Obj | None = None, mounts: list[Obj] | None = None,
              args: list[str] | None = None, pull: str = "IfNotPresent") -> Obj:
    spec: Obj = {"name": name, "image": image, "imagePullPolicy": pull}
    if args:
        spec["args"] = args
    if port:
        spec["ports"] = [{"name": port_name, "containerPort": port, "protocol": "TCP"}]
    if env:
        spec["env"] = env
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}
    limits = {k: v for k, v in (("cpu", cpu_limit), ("memory", memory_limit or memory)) if v}
    if requests or limits:
        spec["resources"] = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
    if liveness:
        spec["livenessProbe"] = liveness
    if readiness:
        spec["readinessProbe"] = readiness
    if mounts:
        spec["volumeMounts"] = mounts
    spec["terminationMessagePath"] = "/dev/termination-log"
    spec["terminationMessagePolicy"] = "File"
    return spec


def http_probe(path: str, port: int | str, *, delay: int = 0, period: int = 10,
               timeout: int = 1, failure: int = 3) -> Obj:
    return {"httpGet": {"path": path, "port": port, "scheme": "HTTP"},
            "initialDelaySeconds": delay, "periodSeconds": period, "timeoutSeconds": timeout,
            "failureThreshold": failure, "successThreshold": 1}


@dataclass
class Revision:
    """One ReplicaSet of a Deployment: its template and its pods."""

    number: int
    created: datetime
    containers: list[Obj]
    pods: list[PodState] = field(default_factory=list)
    volumes: list[Obj] | None = None
    annotations: dict[str, str] | None = None
    replicas: int | None = None                   # spec.replicas; default len(pods)
    hash: str = ""
    pod_names: list[str] = field(default_factory=list)


def deployment(world: World, ns: str, name: str, created: datetime, revisions: list[Revision],
               *, replicas: int, labels: dict[str, str] | None = None, team: str = "platform",
               progressing: tuple[str, str, str] | None = None, strategy: Obj | None = None,
               extra_pod_labels: dict[str, str] | None = None) -> list[Revision]:
    """A Deployment, a ReplicaSet per revision and their pods; the last revision is current.
    Fills each revision's `hash` and `pod_names`."""
    app = {"app": name}
    labels = {"app": name, "app.kubernetes.io/name": name, "team": team, **(labels or {})}
    dep_uid = world.uid()
    current = revisions[-1]
    all_pods: list[tuple[Revision, PodState]] = []
    for rev in revisions:
        rev.hash = world.suffix(9) if not rev.hash else rev.hash
        template = _template(labels | (extra_pod_labels or {}) | {"pod-template-hash": rev.hash},
                             rev)
        rs_replicas = rev.replicas if rev.replicas is not None else len(rev.pods)
        ready = sum(1 for p in rev.pods if p.ready and p.phase == "Running")
        rs_name = f"{name}-{rev.hash}"
        rs_uid = world.uid()
        world.add({
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": rs_name, "namespace": ns, "uid": rs_uid,
                         "creationTimestamp": iso(rev.created),
                         "labels": {**app, "pod-template-hash": rev.hash},
                         "annotations": {"deployment.kubernetes.io/revision": str(rev.number),
                                         "deployment.kubernetes.io/desired-replicas":
                                         str(replicas),
                                         "deployment.kubernetes.io/max-replicas":
                                         str(replicas + 1)},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment",
                                              "name": name, "uid": dep_uid, "controller": True,
                                              "blockOwnerDeletion": True}]},
            "spec": {"replicas": rs_replicas, "selector": {"matchLabels": {
                **app, "pod-template-hash": rev.hash}}, "template": template},
            "status": {"replicas": len(rev.pods), "fullyLabeledReplicas": len(rev.pods),
                       "readyReplicas": ready, "availableReplicas": ready,
                       "observedGeneration": 1} if rev.pods else
            {"replicas": 0, "observedGeneration": 2},
        })
        for state in rev.pods:
            pod_name = f"{rs_name}-{world.suffix()}"
            rev.pod_names.append(pod_name)
            all_pods.append((rev, state))
            world.add(_pod(world, ns, pod_name, rs_name, rs_uid, template, state,
                           labels | (extra_pod_labels or {}) | {"pod-template-hash": rev.hash},
                           volumes=rev.volumes))
    updated = len(current.pods)
    ready_all = sum(1 for _, p in all_pods if p.ready and p.phase == "Running")
    available = "True" if ready_all >= max(1, replicas - 1) else "False"
    prog = progressing or ("True", "NewReplicaSetAvailable",
                           f'ReplicaSet "{name}-{current.hash}" has successfully progressed.')
    dep_template = _template(labels | (extra_pod_labels or {}), current)
    dep_template["metadata"]["labels"].pop("pod-template-hash", None)
    world.add({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns, "uid": dep_uid,
                     "creationTimestamp": iso(created), "generation": current.number + 3,
                     "labels": labels,
                     "annotations": {"deployment.kubernetes.io/revision": str(current.number)}},
        "spec": {"replicas": replicas, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600,
                 "selector": {"matchLabels": app},
                 "strategy": strategy or {"type": "RollingUpdate", "rollingUpdate": {
                     "maxSurge": "25%", "maxUnavailable": "25%"}},
                 "template": dep_template},
        "status": {
            "observedGeneration": current.number + 3, "replicas": len(all_pods),
            "updatedReplicas": updated, "readyReplicas": ready_all,
            "availableReplicas": ready_all,
            **({"unavailableReplicas": len(all_pods) - ready_all}
               if len(all_pods) > ready_all else {}),
            "conditions": [
                {"type": "Available", "status": available,
                 "reason": "MinimumReplicasAvailable" if available == "True"
                 else "MinimumReplicasUnavailable",
                 "message": "Deployment has minimum availability." if available == "True"
                 else "Deployment does not have minimum availability.",
                 "lastUpdateTime": iso(current.created),
                 "lastTransitionTime": iso(max(created, current.created))},
                {"type": "Progressing", "status": prog[0], "reason": prog[1], "message": prog[2],
                 "lastUpdateTime": iso(current.created + timedelta(minutes=1)),
                 "lastTransitionTime": iso(current.created)},
            ]},
    })
    return revisions


def _template(labels: dict[str, str], rev: Revision) -> Obj:
    meta: Obj = {"labels": dict(labels)}
    if rev.annotations:
        meta["annotations"] = dict(rev.annotations)
    spec: Obj = {"containers": rev.containers, "restartPolicy": "Always",
                 "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
                 "serviceAccountName": labels.get("app", "default")}
    if rev.volumes:
        spec["volumes"] = rev.volumes
    return {"metadata": meta, "spec": spec}


def _pod(world: World, ns: str, name: str, rs_name: str, rs_uid: str, template: Obj,
         state: PodState, labels: dict[str, str], volumes: list[Obj] | None) -> Obj:
    spec = {**template["spec"], "nodeName": state.node}
    if volumes:
        spec["volumes"] = volumes
    state.ip = state.ip or world.ip()
    started = state.started or state.created + timedelta(seconds=world.rng.randint(4, 20))
    statuses = []
    for c in template["spec"]["containers"]:
        cs: Obj = {"name": c["name"], "image": c["image"], "ready": state.ready,
                   "restartCount": state.restarts, "started": state.waiting is None}
        if state.waiting:
            cs["state"] = {"waiting": {"reason": state.waiting[0], "message": state.waiting[1]}}
        elif state.terminated:
            cs["state"] = {"terminated": state.terminated}
        else:
            cs["state"] = {"running": {"startedAt": iso(started)}}
        cs["lastState"] = {"terminated": state.last} if state.last else {}
        if state.waiting is None or state.waiting[0] not in ("ErrImagePull", "ImagePullBackOff"):
            cs["imageID"] = f"{c['image'].split(':')[0]}@sha256:{world.rng.getrandbits(256):064x}"
            cs["containerID"] = f"containerd://{world.rng.getrandbits(256):064x}"
        else:
            cs["imageID"] = ""
        statuses.append(cs)
    ready = "True" if state.ready else "False"
    status: Obj = {
        "phase": state.phase,
        "conditions": [
            {"type": "PodReadyToStartContainers", "status": "True",
             "lastTransitionTime": iso(state.created + timedelta(seconds=3))},
            {"type": "Initialized", "status": "True",
             "lastTransitionTime": iso(state.created + timedelta(seconds=1))},
            {"type": "Ready", "status": ready, "lastTransitionTime": iso(started)},
            {"type": "ContainersReady", "status": ready, "lastTransitionTime": iso(started)},
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": iso(state.created)},
        ],
        "hostIP": f"10.20.{sum(map(ord, state.node)) % 200}.{len(state.node) * 3}",
        "podIP": state.ip, "podIPs": [{"ip": state.ip}], "startTime": iso(state.created),
        "qosClass": _qos(template["spec"]["containers"]),
        "containerStatuses": statuses,
    }
    if not state.ready:
        for cond in status["conditions"]:
            if cond["type"] in ("Ready", "ContainersReady"):
                cond["reason"] = "ContainersNotReady"
                first = template["spec"]["containers"][0]["name"]
                cond["message"] = f"containers with unready status: [{first}]"
    if state.reason:
        status["reason"] = state.reason
    if state.message:
        status["message"] = state.message
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "uid": world.uid(),
                     "creationTimestamp": iso(state.created), "labels": labels,
                     **({"annotations": template["metadata"]["annotations"]}
                        if template["metadata"].get("annotations") else {}),
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                          "name": rs_name, "uid": rs_uid, "controller": True,
                                          "blockOwnerDeletion": True}]},
        "spec": spec, "status": status,
    }


def _qos(containers: list[Obj]) -> str:
    resources = [c.get("resources") or {} for c in containers]
    if not any(r.get("requests") or r.get("limits") for r in resources):
        return "BestEffort"
    if all((r.get("limits") or {}).get("cpu") and (r.get("limits") or {}).get("memory")
           and r.get("requests", r.get("limits")) == r.get("limits") for r in resources):
        return "Guaranteed"
    return "Burstable"


def service(world: World, ns: str, name: str, created: datetime, *, port: int = 80,
            target: int | str = 8080, selector: dict[str, str] | None = None,
            backends: list[tuple[str, str]] | None = None, not_ready: list[tuple[str, str]]
            | None = None, endpoint_port: int | None = None, port_name: str = "http") -> None:
    """A ClusterIP Service and its Endpoints; backends are (pod name, pod IP)."""
    world.add({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": name, "namespace": ns, "creationTimestamp": iso(created),
                     "labels": {"app": name}},
        "spec": {"type": "ClusterIP", "clusterIP": world.ip("172.20"),
                 "selector": selector or {"app": name},
                 "ports": [{"name": port_name, "port": port, "targetPort": target,
                            "protocol": "TCP"}]},
        "status": {"loadBalancer": {}},
    })
    subset: Obj = {}
    if backends:
        subset["addresses"] = [{"ip": ip, "targetRef": {"kind": "Pod", "name": pod,
                                                       "namespace": ns}} for pod, ip in backends]
    if not_ready:
        subset["notReadyAddresses"] = [{"ip": ip, "targetRef": {"kind": "Pod", "name": pod,
                                                               "namespace": ns}}
                                       for pod, ip in not_ready]
    number = endpoint_port or (target if isinstance(target, int) else 8080)
    subset["ports"] = [{"name": port_name, "port": number, "protocol": "TCP"}]
    world.add({"apiVersion": "v1", "kind": "Endpoints",
               "metadata": {"name": name, "namespace": ns, "creationTimestamp": iso(created),
                            "labels": {"app": name}},
               "subsets": [subset] if (backends or not_ready) else []})


def backends(world: World, ns: str, revisions: list[Revision], *, ready_only: bool = True
             ) -> list[tuple[str, str]]:
    """(pod name, IP) of the Running, ready pods of the given revisions."""
    out = []
    for rev in revisions:
        for pod_name, state in zip(rev.pod_names, rev.pods, strict=True):
            if state.phase == "Running" and (state.ready or not ready_only):
                out.append((pod_name, state.ip or ""))
    return out


def configmap(world: World, ns: str, name: str, created: datetime, data: dict[str, str]) -> None:
    world.add({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": name, "namespace": ns, "creationTimestamp": iso(created)},
               "data": data})


def ingress(world: World, ns: str, name: str, created: datetime, host: str,
            paths: list[tuple[str, str, int]]) -> None:
    """An nginx Ingress; paths are (path, service, port)."""
    world.add({
        "apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
        "metadata": {"name": name, "namespace": ns, "creationTimestamp": iso(created),
                     "annotations": {"nginx.ingress.kubernetes.io/proxy-read-timeout": "30"}},
        "spec": {"ingressClassName": "nginx", "tls": [{"hosts": [host],
                                                        "secretName": f"{name}-tls"}],
                 "rules": [{"host": host, "http": {"paths": [
                     {"path": p, "pathType": "Prefix", "backend": {"service": {
                         "name": s, "port": {"number": n}}}} for p, s, n in paths]}}]},
        "status": {"loadBalancer": {"ingress": [{"hostname":
                   "a1b2c3d4e5f6-1234567890.eu-west-1.elb.amazonaws.com"}]}},
    })


def hpa(world: World, ns: str, name: str, created: datetime, *, target: str, minimum: int,
        maximum: int, current: int, desired: int, metrics: list[Obj], current_metrics: list[Obj],
        conditions: list[tuple[str, str, str, str]], last_scale: datetime) -> None:
    world.add({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name, "namespace": ns, "creationTimestamp": iso(created)},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                    "name": target},
                 "minReplicas": minimum, "maxReplicas": maximum, "metrics": metrics},
        "status": {"currentReplicas": current, "desiredReplicas": desired,
                   "lastScaleTime": iso(last_scale), "currentMetrics": current_metrics,
                   "conditions": [{"type": t, "status": s, "reason": r, "message": m,
                                   "lastTransitionTime": iso(last_scale)}
                                  for t, s, r, m in conditions]},
    })


def cpu_hpa_metric(utilization: int) -> Obj:
    return {"type": "Resource", "resource": {"name": "cpu", "target": {
        "type": "Utilization", "averageUtilization": utilization}}}


def cpu_hpa_current(utilization: int, milli: int) -> Obj:
    return {"type": "Resource", "resource": {"name": "cpu", "current": {
        "averageUtilization": utilization, "averageValue": f"{milli}m"}}}

