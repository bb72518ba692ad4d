"""Kubernetes objects as `kubectl get -o yaml` prints them, built consistently.

Stories declare workloads, revisions and pods with their container states; `Cluster.objects`
derives what a controller would have written (ReplicaSet and Deployment status, Endpoints)
so that counts and owner references can never disagree with the pods.
"""

from __future__ import annotations

import hashlib
import random
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from tests.scenario_tools.spec import (
    Ctr,
    Obj,
    Template,
    ago,
    ended,
    http_probe,
    iso,
    running,
    tcp_probe,
    waiting,
)

__all__ = ["Cluster", "Ctr", "Obj", "Template", "Workload", "ago", "ended", "http_probe", "iso",
           "running", "tcp_probe", "waiting"]

SAFE = "bcdfghjklmnpqrstvwxz2456789"  # the alphabet of Kubernetes' generated names
WORKLOAD_API = {"Deployment": "apps/v1", "ReplicaSet": "apps/v1", "StatefulSet": "apps/v1",
                "DaemonSet": "apps/v1", "Job": "batch/v1", "CronJob": "batch/v1"}


# ------------------------------------------------------------------ the cluster


@dataclass
class Workload:
    """A workload object and the controller-made children a story adds to it."""

    obj: Obj
    template: Template
    replicas: int
    revisions: list[Obj] = field(default_factory=list)  # ReplicaSets / ControllerRevisions
    pods: list[Obj] = field(default_factory=list)
    progressing: tuple[str, str, datetime] | None = None
    availability_changed: datetime | None = None
    extra_conditions: list[Obj] = field(default_factory=list)

    @property
    def kind(self) -> str:
        return str(self.obj["kind"])

    @property
    def name(self) -> str:
        return str(self.obj["metadata"]["name"])

    @property
    def namespace(self) -> str:
        return str(self.obj["metadata"]["namespace"])


class Cluster:
    """The objects of one scenario, built from a seeded RNG."""

    def __init__(self, now: datetime, seed: str) -> None:
        self.now = now
        self.seed = seed
        self.rng = random.Random(seed)
        self._objects: list[Obj] = []
        self.workloads: list[Workload] = []
        self.services: list[Obj] = []
        self.nodes: list[Obj] = []
        self._rv = 4_810_000 + self.rng.randrange(100_000)

    # ---- ids
    def uid(self, *parts: str) -> str:
        return str(uuid.uuid5(uuid.NAMESPACE_URL, "/".join((self.seed, *parts))))

    def token(self, length: int) -> str:
        return "".join(self.rng.choice(SAFE) for _ in range(length))

    def hexid(self, *parts: str, length: int = 64) -> str:
        return hashlib.sha256("/".join((self.seed, *parts)).encode()).hexdigest()[:length]

    def rv(self) -> str:
        self._rv += self.rng.randrange(3, 900)
        return str(self._rv)

    def ip(self, subnet: int) -> str:
        return f"10.{subnet}.{self.rng.randrange(1, 4)}.{self.rng.randrange(10, 250)}"

    def meta(self, kind: str, name: str, namespace: str, created: datetime,
             labels: dict[str, str] | None = None, **extra: Any) -> Obj:
        out: Obj = {"name": name}
        if namespace:
            out["namespace"] = namespace
        out["uid"] = self.uid(kind, namespace, name)
        out["resourceVersion"] = self.rv()
        out["creationTimestamp"] = iso(created)
        if labels:
            out["labels"] = dict(labels)
        out.update(extra)
        return out

    def add(self, obj: Obj) -> Obj:
        self._objects.append(obj)
        return obj

    def objects_of(self, kind: str) -> list[Obj]:
        return [o for o in self._objects if o["kind"] == kind]

    def remove(self, obj: Obj) -> None:
        """Forget an object (a pod deleted before `now`)."""
        self._objects.remove(obj)

    # ---- cluster-scoped
    def namespace(self, name: str, created: datetime, labels: dict[str, str] | None = None) -> Obj:
        labels = {"kubernetes.io/metadata.name": name, **(labels or {})}
        return self.add({"apiVersion": "v1", "kind": "Namespace",
                         "metadata": self.meta("Namespace", name, "", created, labels),
                         "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})

    def node(self, name: str, *, created: datetime, zone: str, pool: str = "general",
             instance: str = "m6i.xlarge", cpu: str = "4", memory: str = "16Gi",
             allocatable_cpu: str = "3920m", allocatable_memory: str = "14848Mi",
             conditions: dict[str, tuple[str, str, str, datetime]] | None = None,
             taints: list[Obj] | None = None, heartbeat: datetime | None = None,
             unschedulable: bool = False, labels: dict[str, str] | None = None) -> Obj:
        """A node; `conditions` overrides type -> (status, reason, message, since)."""
        ip = name.split(".")[0].removeprefix("ip-").replace("-", ".")
        beat = heartbeat or self.now - timedelta(seconds=self.rng.randrange(5, 40))
        normal = {
            "MemoryPressure": ("False", "KubeletHasSufficientMemory",
                               "kubelet has sufficient memory available"),
            "DiskPressure": ("False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            "PIDPressure": ("False", "KubeletHasSufficientPID",
                            "kubelet has sufficient PID available"),
            "Ready": ("True", "KubeletReady", "kubelet is posting ready status"),
        }
        conds = []
        for kind, (status, reason, message) in normal.items():
            since = created + timedelta(seconds=40)
            if conditions and kind in conditions:
                status, reason, message, since = conditions[kind]
            conds.append({"type": kind, "status": status, "reason": reason, "message": message,
                          "lastHeartbeatTime": iso(beat), "lastTransitionTime": iso(since)})
        spec: Obj = {"providerID": f"aws:///{zone}/i-0{self.hexid('i', name, length=16)}"}
        if taints:
            spec["taints"] = list(taints)
        if unschedulable:
            spec["unschedulable"] = True
        node_labels = {"kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux",
                       "kubernetes.io/hostname": name,
                       "node.kubernetes.io/instance-type": instance,
                       "topology.kubernetes.io/region": zone[:-1],
                       "topology.kubernetes.io/zone": zone,
                       "eks.amazonaws.com/nodegroup": pool, **(labels or {})}
        obj = {"apiVersion": "v1", "kind": "Node",
               "metadata": self.meta("Node", name, "", created, node_labels),
               "spec": spec,
               "status": {
                   "addresses": [{"type": "InternalIP", "address": ip},
                                 {"type": "Hostname", "address": name}],
                   "allocatable": {"cpu": allocatable_cpu, "memory": allocatable_memory,
                                   "pods": "58", "ephemeral-storage": "76224326324"},
                   "capacity": {"cpu": cpu, "memory": memory, "pods": "58",
                                "ephemeral-storage": "83873772Ki"},
                   "conditions": conds,
                   "nodeInfo": {"architecture": "amd64", "containerRuntimeVersion":
                                "containerd://1.7.27", "kernelVersion":
                                "6.1.141-155.222.amzn2023.x86_64", "kubeletVersion":
                                "v1.33.5-eks-113cf36", "operatingSystem": "linux",
                                "osImage": "Amazon Linux 2023.8.20251110"}}}
        self.nodes.append(obj)
        return self.add(obj)

    # ---- workloads
    def workload(self, kind: str, namespace: str, name: str, template: Template, *,
                 replicas: int = 1, created: datetime, labels: dict[str, str] | None = None,
                 extra_spec: Obj | None = None) -> Workload:
        """A Deployment, StatefulSet or DaemonSet; add revisions and pods afterwards."""
        labels = labels or {"app.kubernetes.io/name": name}
        selector = {"app.kubernetes.io/name": name} if "app.kubernetes.io/name" in labels \
            else {"app": labels.get("app", name)}
        template.labels = {**selector, **template.labels}
        obj: Obj = {"apiVersion": WORKLOAD_API[kind], "kind": kind,
                    "metadata": self.meta(kind, name, namespace, created, labels,
                                          generation=1),
                    "spec": {"selector": {"matchLabels": selector}, **(extra_spec or {})},
                    "status": {}}
        if kind != "DaemonSet":
            obj["spec"]["replicas"] = replicas
        if kind == "Deployment":
            obj["spec"].setdefault("strategy", {"type": "RollingUpdate", "rollingUpdate":
                                                {"maxSurge": "25%", "maxUnavailable": "25%"}})
            obj["spec"]["revisionHistoryLimit"] = 10
            obj["spec"]["progressDeadlineSeconds"] = 600
        if kind == "StatefulSet":
            obj["spec"]["serviceName"] = name
            obj["spec"]["podManagementPolicy"] = "OrderedReady"
        work = Workload(obj, template, replicas)
        self.workloads.append(work)
        self.add(obj)
        return work

    def revision(self, work: Workload, number: int, created: datetime,
                 template: Template | None = None, *, replicas: int = 0) -> Obj:
        """A ReplicaSet of a Deployment (or a ControllerRevision for the other kinds)."""
        template = template or work.template
        template.labels = {**work.template.labels, **template.labels}
        hash_ = self.token(10) if self.rng.random() < 0.8 else self.token(9)
        tpl_labels = {**template.labels, "pod-template-hash": hash_}
        if work.kind != "Deployment":
            hash_ = self.token(10)
        owner = self.owner(work.obj)
        name = f"{work.name}-{hash_}"
        obj: Obj = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
                    "metadata": self.meta("ReplicaSet", name, work.namespace, created,
                                          tpl_labels, annotations={
                                              "deployment.kubernetes.io/desired-replicas":
                                                  str(work.replicas),
                                              "deployment.kubernetes.io/max-replicas":
                                                  str(work.replicas + max(1, work.replicas // 4)),
                                              "deployment.kubernetes.io/revision": str(number)},
                                          generation=2, ownerReferences=[owner]),
                    "spec": {"replicas": replicas,
                             "selector": {"matchLabels": {**work.obj["spec"]["selector"][
                                 "matchLabels"], "pod-template-hash": hash_}},
                             "template": {"metadata": {"labels": tpl_labels,
                                                       **({"annotations": template.annotations}
                                                          if template.annotations else {})},
                                          "spec": template.spec()}},
                    "status": {}}
        obj["_template"] = template
        if work.kind != "Deployment":
            obj["metadata"]["name"] = f"{work.name}-{hash_}"
        work.revisions.append(obj)
        if work.kind == "Deployment":
            self.add(obj)
        return obj

    def owner(self, obj: Obj) -> Obj:
        return {"apiVersion": obj["apiVersion"], "kind": obj["kind"],
                "name": obj["metadata"]["name"], "uid": obj["metadata"]["uid"],
                "controller": True, "blockOwnerDeletion": True}

    def pod(self, work: Workload, rev: Obj | None, *, node: Obj | None, created: datetime,
            statuses: dict[str, Obj], init_statuses: dict[str, Obj] | None = None,
            name: str | None = None, phase: str | None = None, reason: str = "",
            message: str = "", ready_since: datetime | None = None,
            scheduled_message: str = "") -> Obj:
        """A pod of `work` (of revision `rev` for Deployments) with given container states."""
        rev = rev or (work.revisions[-1] if work.revisions else None)
        template: Template = rev["_template"] if rev else work.template
        if work.kind == "Deployment" and rev is not None:
            owner_obj, hash_ = rev, rev["metadata"]["labels"]["pod-template-hash"]
            labels = {**template.labels, "pod-template-hash": hash_}
            name = name or f"{rev['metadata']['name']}-{self.token(5)}"
        else:
            owner_obj, labels = work.obj, dict(template.labels)
            if rev is not None:
                labels["controller-revision-hash"] = rev["metadata"]["name"]
            if work.kind == "StatefulSet":
                name = name or f"{work.name}-{len(work.pods)}"
                labels["statefulset.kubernetes.io/pod-name"] = name
            name = name or f"{work.name}-{self.token(5)}"
        spec = template.spec()
        if node is not None:
            spec["nodeName"] = node["metadata"]["name"]
        meta = self.meta("Pod", name, work.namespace, created, labels,
                         generateName=name[: name.rfind("-") + 1],
                         ownerReferences=[self.owner(owner_obj)])
        if template.annotations:
            meta["annotations"] = dict(template.annotations)
        pod: Obj = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
        pod["status"] = self._pod_status(pod, template, node, created, statuses,
                                         init_statuses or {}, phase, reason, message,
                                         ready_since, scheduled_message)
        work.pods.append(pod)
        self.add(pod)
        return pod

    def _container_status(self, pod: Obj, ctr: Ctr, status: Obj) -> Obj:
        out: Obj = {"name": ctr.name, "image": ctr.image}
        waiting_ = status["state"].get("waiting", {})
        pulled = waiting_.get("reason") not in {"ErrImagePull", "ImagePullBackOff",
                                                "ContainerCreating", "PodInitializing"}
        if pulled:
            repo = ctr.image.rsplit(":", 1)[0]
            out["imageID"] = f"{repo}@sha256:{self.hexid('img', ctr.image)}"
        else:
            out["imageID"] = ""
        if not waiting_ or status["restartCount"]:
            out["containerID"] = "containerd://" + self.hexid(
                "ctr", pod["metadata"]["name"], ctr.name, str(status["restartCount"]))
        out.update(status)
        last = out.get("lastState", {}).get("terminated")
        if last is not None and "containerID" not in last:
            last["containerID"] = "containerd://" + self.hexid(
                "ctr", pod["metadata"]["name"], ctr.name, str(status["restartCount"] - 1))
        return out

    def _pod_status(self, pod: Obj, template: Template, node: Obj | None, created: datetime,
                    statuses: dict[str, Obj], init_statuses: dict[str, Obj], phase: str | None,
                    reason: str, message: str, ready_since: datetime | None,
                    scheduled_message: str) -> Obj:
        scheduled = created + timedelta(seconds=1)
        if node is None:
            return {"phase": "Pending", "qosClass": qos(template), "conditions": [{
                "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                "message": scheduled_message, "lastProbeTime": None,
                "lastTransitionTime": iso(scheduled)}]}
        inits = [self._container_status(pod, c, init_statuses.get(c.name) or {
            "state": {"terminated": {"exitCode": 0, "reason": "Completed",
                                     "startedAt": iso(scheduled + timedelta(seconds=2)),
                                     "finishedAt": iso(scheduled + timedelta(seconds=4))}},
            "ready": True, "restartCount": 0, "lastState": {}}) for c in template.init]
        ctrs = [self._container_status(pod, c, statuses[c.name]) for c in template.containers]
        initialized = all("terminated" in s["state"] and s["state"]["terminated"]["exitCode"] == 0
                          for s in inits)
        all_ready = all(s["ready"] for s in ctrs)
        ever_ran = any("running" in s["state"] or s["restartCount"] or "terminated" in s["state"]
                       for s in ctrs)
        if phase is None:
            phase = "Running" if ever_ran else "Pending"
        since = ready_since or scheduled + timedelta(seconds=12)
        not_ready = [s["name"] for s in ctrs if not s["ready"]]
        ready_cond: Obj = {"type": "Ready", "status": "True" if all_ready else "False",
                           "lastProbeTime": None, "lastTransitionTime": iso(since)}
        if not all_ready:
            ready_cond["reason"] = "ContainersNotReady"
            ready_cond["message"] = f"containers with unready status: [{' '.join(not_ready)}]"
        init_cond: Obj = {"type": "Initialized", "status": "True" if initialized else "False",
                          "lastProbeTime": None,
                          "lastTransitionTime": iso(scheduled + timedelta(seconds=10))}
        if not initialized:
            init_cond["reason"] = "ContainersNotInitialized"
            bad = [s["name"] for s in inits if "terminated" not in s["state"]]
            init_cond["message"] = f"containers with incomplete status: [{' '.join(bad)}]"
        conditions = [
            {"type": "PodReadyToStartContainers", "status": "True", "lastProbeTime": None,
             "lastTransitionTime": iso(scheduled + timedelta(seconds=3))},
            init_cond, ready_cond, {**ready_cond, "type": "ContainersReady"},
            {"type": "PodScheduled", "status": "True", "lastProbeTime": None,
             "lastTransitionTime": iso(scheduled)}]
        node_ip = node["status"]["addresses"][0]["address"]
        pod_ip = ".".join(node_ip.split(".")[:3]) + f".{self.rng.randrange(10, 250)}"
        status: Obj = {"phase": phase}
        if reason:
            status["reason"] = reason
        if message:
            status["message"] = message
        status.update({"conditions": conditions, "hostIP": node_ip,
                       "hostIPs": [{"ip": node_ip}], "podIP": pod_ip, "podIPs": [{"ip": pod_ip}],
                       "qosClass": qos(template), "startTime": iso(scheduled)})
        if inits:
            status["initContainerStatuses"] = inits
        status["containerStatuses"] = ctrs
        return status

    # ---- services and events
    def service(self, namespace: str, name: str, selector: dict[str, str], *, port: int = 80,
                target: int | str = "http", created: datetime, kind: str = "ClusterIP",
                external_name: str = "", labels: dict[str, str] | None = None) -> Obj:
        spec: Obj = {"type": kind}
        if kind == "ExternalName":
            spec["externalName"] = external_name
        else:
            spec.update({"clusterIP": f"172.20.{self.rng.randrange(1, 250)}."
                                      f"{self.rng.randrange(2, 250)}",
                         "ports": [{"name": "http", "port": port, "protocol": "TCP",
                                    "targetPort": target}],
                         "selector": dict(selector), "sessionAffinity": "None"})
            spec["clusterIPs"] = [spec["clusterIP"]]
        obj = {"apiVersion": "v1", "kind": "Service",
               "metadata": self.meta("Service", name, namespace, created,
                                     labels or {"app.kubernetes.io/name": name}),
               "spec": spec, "status": {"loadBalancer": {}}}
        self.services.append(obj)
        return self.add(obj)

    def event(self, obj: Obj, reason: str, message: str, *, first: datetime,
              last: datetime | None = None, count: int = 1, type_: str = "Normal",
              component: str = "kubelet", host: str | None = None, field_path: str = "") -> Obj:
        """A core/v1 Event about `obj`; the kubelet's carry the node as host."""
        last = last or first
        meta = obj["metadata"]
        namespace = meta.get("namespace", "default")
        if host is None:
            host = obj["spec"].get("nodeName", "") if obj["kind"] == "Pod" else ""
        involved: Obj = {"apiVersion": obj["apiVersion"], "kind": obj["kind"],
                         "name": meta["name"], "uid": meta["uid"],
                         "resourceVersion": meta["resourceVersion"]}
        if meta.get("namespace"):
            involved["namespace"] = meta["namespace"]
        if field_path:
            involved["fieldPath"] = field_path
        source: Obj = {"component": component}
        if host:
            source["host"] = host
        name = f"{meta['name']}.{self.hexid('ev', meta['name'], reason, message, length=16)}"
        return self.add({
            "apiVersion": "v1", "kind": "Event",
            "metadata": self.meta("Event", name, namespace, first),
            "involvedObject": involved, "reason": reason, "message": message, "source": source,
            "firstTimestamp": iso(first), "lastTimestamp": iso(last), "count": count,
            "type": type_, "eventTime": None, "reportingComponent": component,
            "reportingInstance": host})

    # ---- derived state
    def objects(self) -> list[Obj]:
        """Every object, with controller-derived status filled in."""
        for work in self.workloads:
            self._derive(work)
        for service in self.services:
            if service["spec"]["type"] != "ExternalName":
                self._endpoints(service)
        out = []
        for obj in self._objects:
            obj.pop("_template", None)
            out.append(obj)
        return out

    def _derive(self, work: Workload) -> None:
        live = [p for p in work.pods if p["status"]["phase"] not in {"Failed", "Succeeded"}
                and "deletionTimestamp" not in p["metadata"]]  # as controllers count them
        ready = [p for p in live if is_ready(p)]
        current = work.revisions[-1] if work.revisions else None
        tpl = current["_template"] if current else work.template
        spec_tpl: Obj = {"metadata": {"labels": dict(tpl.labels)}, "spec": tpl.spec()}
        if tpl.annotations:
            spec_tpl["metadata"]["annotations"] = dict(tpl.annotations)
        work.obj["spec"]["template"] = spec_tpl
        if work.kind == "Deployment":
            self._derive_deployment(work, live, ready, current)
        elif work.kind == "StatefulSet":
            rev = current["metadata"]["name"] if current else ""
            work.obj["status"] = {"availableReplicas": len(ready), "collisionCount": 0,
                                  "currentReplicas": len(live), "currentRevision": rev,
                                  "observedGeneration": 1, "readyReplicas": len(ready),
                                  "replicas": len(live), "updateRevision": rev,
                                  "updatedReplicas": len(live)}
        elif work.kind == "DaemonSet":
            n = len(work.pods)
            work.obj["status"] = {"currentNumberScheduled": n, "desiredNumberScheduled": n,
                                  "numberAvailable": len(ready), "numberMisscheduled": 0,
                                  "numberReady": len(ready), "observedGeneration": 1,
                                  "updatedNumberScheduled": n}
            if len(ready) < n:
                work.obj["status"]["numberUnavailable"] = n - len(ready)

    def _derive_deployment(self, work: Workload, live: list[Obj], ready: list[Obj],
                           current: Obj | None) -> None:
        for rs in work.revisions:
            mine = [p for p in live if p["metadata"]["ownerReferences"][0]["uid"]
                    == rs["metadata"]["uid"]]
            ok = [p for p in mine if is_ready(p)]
            status: Obj = {"replicas": len(mine), "observedGeneration": 2}
            if mine:
                status["fullyLabeledReplicas"] = len(mine)
            if ok:
                status["readyReplicas"] = len(ok)
                status["availableReplicas"] = len(ok)
            rs["status"] = status
        if current is not None:
            revision = current["metadata"]["annotations"]["deployment.kubernetes.io/revision"]
            work.obj["metadata"]["annotations"] = {"deployment.kubernetes.io/revision": revision}
            work.obj["metadata"]["generation"] = int(revision)
        updated = current["status"]["replicas"] if current else 0
        status = {"observedGeneration": work.obj["metadata"]["generation"],
                  "replicas": len(live), "updatedReplicas": updated,
                  "readyReplicas": len(ready), "availableReplicas": len(ready)}
        wanted = sum(int(rs["spec"]["replicas"]) for rs in work.revisions)
        if wanted > len(ready):  # as the controller counts: RS spec replicas minus available
            status["unavailableReplicas"] = wanted - len(ready)
        status = {k: v for k, v in status.items() if v}
        created = current["metadata"]["creationTimestamp"] if current else iso(self.now)
        max_unavailable = work.replicas // 4
        available = len(ready) >= work.replicas - max_unavailable
        rs_name = current["metadata"]["name"] if current else work.name
        progressing = work.progressing or (
            ("NewReplicaSetAvailable", f'ReplicaSet "{rs_name}" has successfully progressed.',
             datetime.fromisoformat(created.replace("Z", "+00:00")) + timedelta(seconds=90)))
        prog_reason, prog_message, prog_time = progressing
        changed = work.availability_changed or prog_time
        status["conditions"] = [
            {"type": "Available", "status": "True" if available else "False",
             "reason": "MinimumReplicasAvailable" if available else "MinimumReplicasUnavailable",
             "message": "Deployment has minimum availability." if available else
             "Deployment does not have minimum availability.",
             "lastUpdateTime": iso(changed), "lastTransitionTime": iso(changed)},
            {"type": "Progressing",
             "status": "False" if prog_reason == "ProgressDeadlineExceeded" else "True",
             "reason": prog_reason, "message": prog_message, "lastUpdateTime": iso(prog_time),
             "lastTransitionTime": created}, *work.extra_conditions]
        work.obj["status"] = status

    def _endpoints(self, service: Obj) -> None:
        meta = service["metadata"]
        selector = service["spec"]["selector"]
        pods = [o for o in self._objects if o["kind"] == "Pod"
                and o["metadata"]["namespace"] == meta["namespace"]
                and o["status"].get("podIP") and o["status"]["phase"] == "Running"
                and "deletionTimestamp" not in o["metadata"]
                and all(o["metadata"]["labels"].get(k) == v for k, v in selector.items())]
        obj: Obj = {"apiVersion": "v1", "kind": "Endpoints",
                    "metadata": self.meta("Endpoints", meta["name"], meta["namespace"],
                                          datetime.fromisoformat(
                                              meta["creationTimestamp"].replace("Z", "+00:00")),
                                          meta.get("labels"))}
        target = service["spec"]["ports"][0]["targetPort"]
        port = target if isinstance(target, int) else _named_port(pods, target)
        address = [self._address(p) for p in pods if is_ready(p)]
        unready = [self._address(p) for p in pods if not is_ready(p)]
        if pods:
            subset: Obj = {}
            if address:
                subset["addresses"] = address
            if unready:
                subset["notReadyAddresses"] = unready
            subset["ports"] = [{"name": "http", "port": port, "protocol": "TCP"}]
            obj["subsets"] = [subset]
        self.add(obj)

    def _address(self, pod: Obj) -> Obj:
        return {"ip": pod["status"]["podIP"], "nodeName": pod["spec"]["nodeName"],
                "targetRef": {"kind": "Pod", "name": pod["metadata"]["name"],
                              "namespace": pod["metadata"]["namespace"],
                              "uid": pod["metadata"]["uid"]}}


def _named_port(pods: list[Obj], name: str) -> int:
    for pod in pods:
        for ctr in pod["spec"]["containers"]:
            for port in ctr.get("ports", []):
                if port.get("name") == name:
                    return int(port["containerPort"])
    return 8080


def is_ready(pod: Obj) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True"
               for c in pod["status"].get("conditions", []))


def qos(template: Template) -> str:
    ctrs = template.containers
    if all(c.limits and c.requests == c.limits for c in ctrs):
        return "Guaranteed"
    return "Burstable" if any(c.requests or c.limits for c in ctrs) else "BestEffort"
