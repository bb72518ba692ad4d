"""Shared kit for the holdout59 generators: workloads (Deployment or StatefulSet, their
ReplicaSets, pods, Service and Endpoints)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from ._base import Clock, Obj, PodRef, digest, iso, uid
from ._container import Container
from ._container import sha as _sha


@dataclass
class Workload:
    """A Deployment or StatefulSet with its ReplicaSets, pods, Service and Endpoints."""

    ns: str
    name: str
    containers: list[Container]
    nodes: list[str]
    created: datetime
    replicas: int = 2
    kind: str = "Deployment"
    revision: int = 1
    rollout_at: datetime | None = None
    previous_images: dict[str, str] | None = None
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    template_annotations: dict[str, str] = field(default_factory=dict)
    pod_spec_extra: Obj = field(default_factory=dict)
    spec_extra: Obj = field(default_factory=dict)
    service_port: int | None = 80
    cluster_ip: str | None = None
    headless: bool = False
    pod_started: list[datetime] | None = None
    restarts: list[int] | None = None
    mutate_pod: Callable[[int, Obj], None] | None = None
    ready: list[bool] | None = None


class WorkloadMixin:
    """Builds workloads into a Cluster's object list."""

    clock: Clock
    objects: list[Obj]
    _node_index: dict[str, int]

    def add(self, obj: Obj) -> Obj:  # pragma: no cover - provided by Cluster
        raise NotImplementedError

    def pod_ip(self, node: str) -> str:  # pragma: no cover - provided by Cluster
        raise NotImplementedError

    def service_ip(self, ns: str, name: str) -> str:  # pragma: no cover - provided by Cluster
        raise NotImplementedError

    def workload(self, w: Workload) -> list[PodRef]:
        """Deployment/StatefulSet, ReplicaSets, pods, Service and Endpoints; returns the pods."""
        labels = {"app.kubernetes.io/name": w.name, **w.labels}
        sel = {"app.kubernetes.io/name": w.name}
        rollout = w.rollout_at or w.created
        template: Obj = {
            "metadata": {"labels": dict(labels)},
            "spec": {
                "containers": [c.spec() for c in w.containers],
                "terminationGracePeriodSeconds": 30,
                **w.pod_spec_extra,
            },
        }
        if w.template_annotations:
            template["metadata"]["annotations"] = dict(w.template_annotations)
        h = digest(w.ns, w.name, w.revision, json.dumps(template, sort_keys=True), n=10)
        api = "apps/v1"
        ready = w.ready or [True] * w.replicas
        n_ready = sum(ready)
        meta: Obj = {
            "name": w.name,
            "namespace": w.ns,
            "uid": uid(w.kind, w.ns, w.name),
            "creationTimestamp": iso(w.created),
            "generation": w.revision + 2,
            "labels": dict(labels),
            "annotations": {
                **(
                    {"deployment.kubernetes.io/revision": str(w.revision)}
                    if w.kind == "Deployment"
                    else {}
                ),
                **w.annotations,
            },
        }
        spec: Obj = {
            "replicas": w.replicas,
            "selector": {"matchLabels": sel},
            "template": template,
            **w.spec_extra,
        }
        if w.kind == "Deployment":
            spec.setdefault(
                "strategy",
                {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
                },
            )
            status: Obj = {
                "observedGeneration": w.revision + 2,
                "replicas": w.replicas,
                "updatedReplicas": w.replicas,
                "readyReplicas": n_ready,
                "availableReplicas": n_ready,
                "conditions": [
                    {
                        "type": "Available",
                        "status": "True" if n_ready else "False",
                        "reason": "MinimumReplicasAvailable"
                        if n_ready
                        else "MinimumReplicasUnavailable",
                        "message": "Deployment has minimum availability."
                        if n_ready
                        else "Deployment does not have minimum availability.",
                        "lastUpdateTime": iso(rollout + timedelta(minutes=2)),
                        "lastTransitionTime": iso(rollout + timedelta(minutes=2)),
                    },
                    {
                        "type": "Progressing",
                        "status": "True",
                        "reason": "NewReplicaSetAvailable",
                        "message": f'ReplicaSet "{w.name}-{h}" has successfully progressed.',
                        "lastUpdateTime": iso(rollout + timedelta(minutes=2)),
                        "lastTransitionTime": iso(w.created),
                    },
                ],
            }
        else:
            spec.setdefault("serviceName", f"{w.name}-hl" if w.headless else w.name)
            spec.setdefault("podManagementPolicy", "Parallel")
            status = {
                "observedGeneration": w.revision + 2,
                "replicas": w.replicas,
                "readyReplicas": n_ready,
                "currentReplicas": w.replicas,
                "updatedReplicas": w.replicas,
                "availableReplicas": n_ready,
                "currentRevision": f"{w.name}-{h}",
                "updateRevision": f"{w.name}-{h}",
            }
        self.add(
            {"apiVersion": api, "kind": w.kind, "metadata": meta, "spec": spec, "status": status}
        )
        owner_kind, owner_name = w.kind, w.name
        if w.kind == "Deployment":
            owner_kind, owner_name = "ReplicaSet", f"{w.name}-{h}"
            if w.previous_images:
                old = json.loads(json.dumps(template))
                for c in old["spec"]["containers"]:
                    c["image"] = w.previous_images.get(c["name"], c["image"])
                oh = digest(w.ns, w.name, w.revision - 1, n=10)
                self._replicaset(w, oh, old, w.revision - 1, 0, w.created)
            self._replicaset(w, h, template, w.revision, w.replicas, rollout, n_ready)
        refs: list[PodRef] = []
        for i in range(w.replicas):
            node = w.nodes[i % len(w.nodes)]
            pname = (
                f"{w.name}-{h}-{digest(w.name, h, i, n=5)}"
                if w.kind == "Deployment"
                else f"{w.name}-{i}"
            )
            started = (
                w.pod_started[i] if w.pod_started else rollout + timedelta(seconds=40 + 17 * i)
            )
            ip = self.pod_ip(node)
            pod = self._pod(
                w, pname, node, ip, template, started, owner_kind, owner_name, i, h, ready[i]
            )
            if w.mutate_pod:
                w.mutate_pod(i, pod)
            self.add(pod)
            refs.append(PodRef(w.ns, pname, w.containers[0].name, w.name, node, ip))
        if w.service_port is not None:
            self._service(
                w,
                sel,
                [r for r, ok in zip(refs, ready, strict=True) if ok],
                [r for r, ok in zip(refs, ready, strict=True) if not ok],
            )
        return refs

    def _replicaset(
        self,
        w: Workload,
        h: str,
        template: Obj,
        revision: int,
        replicas: int,
        created: datetime,
        ready: int = 0,
    ) -> None:
        tpl = json.loads(json.dumps(template))
        tpl["metadata"]["labels"]["pod-template-hash"] = h
        sel = {"app.kubernetes.io/name": w.name, "pod-template-hash": h}
        self.add(
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {
                    "name": f"{w.name}-{h}",
                    "namespace": w.ns,
                    "uid": uid("rs", w.ns, h),
                    "creationTimestamp": iso(created),
                    "labels": dict(tpl["metadata"]["labels"]),
                    "annotations": {
                        "deployment.kubernetes.io/revision": str(revision),
                        "deployment.kubernetes.io/desired-replicas": str(w.replicas),
                    },
                    "ownerReferences": [
                        {
                            "apiVersion": "apps/v1",
                            "kind": "Deployment",
                            "name": w.name,
                            "uid": uid("Deployment", w.ns, w.name),
                            "controller": True,
                            "blockOwnerDeletion": True,
                        }
                    ],
                },
                "spec": {"replicas": replicas, "selector": {"matchLabels": sel}, "template": tpl},
                "status": {
                    "replicas": replicas,
                    "readyReplicas": ready,
                    "availableReplicas": ready,
                    "fullyLabeledReplicas": replicas,
                    "observedGeneration": 1,
                },
            }
        )

    def _pod(
        self,
        w: Workload,
        pname: str,
        node: str,
        ip: str,
        template: Obj,
        started: datetime,
        owner_kind: str,
        owner_name: str,
        i: int,
        h: str,
        ready: bool,
    ) -> Obj:
        tpl = json.loads(json.dumps(template))
        labels = dict(tpl["metadata"]["labels"])
        if w.kind == "Deployment":
            labels["pod-template-hash"] = h
        else:
            labels["controller-revision-hash"] = f"{w.name}-{h}"
            labels["apps.kubernetes.io/pod-index"] = str(i)
            labels["statefulset.kubernetes.io/pod-name"] = pname
        spec = tpl["spec"]
        spec.update(
            {
                "nodeName": node,
                "serviceAccountName": w.name,
                "restartPolicy": "Always",
                "dnsPolicy": "ClusterFirst",
                "schedulerName": "default-scheduler",
            }
        )
        if w.kind == "StatefulSet":
            spec["hostname"] = pname
            spec["subdomain"] = w.spec_extra.get(
                "serviceName", f"{w.name}-hl" if w.headless else w.name
            )
        restarts = (w.restarts or [0] * w.replicas)[i]
        created = started - timedelta(seconds=9)
        statuses = []
        for c in spec["containers"]:
            statuses.append(
                {
                    "name": c["name"],
                    "image": c["image"],
                    "imageID": f"{c['image'].split(':')[0]}@sha256:{_sha(c['image'])}",
                    "containerID": f"containerd://{_sha(pname + c['name'])}",
                    "ready": ready,
                    "started": True,
                    "restartCount": restarts,
                    "state": {"running": {"startedAt": iso(started)}},
                    "lastState": {},
                }
            )
        tr = iso(started + timedelta(seconds=12))
        cond = "True" if ready else "False"
        pod: Obj = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": pname,
                "namespace": w.ns,
                "uid": uid("pod", w.ns, pname),
                "creationTimestamp": iso(created),
                "labels": labels,
                "ownerReferences": [
                    {
                        "apiVersion": "apps/v1",
                        "kind": owner_kind,
                        "name": owner_name,
                        "controller": True,
                        "blockOwnerDeletion": True,
                        "uid": uid(
                            "rs" if owner_kind == "ReplicaSet" else owner_kind,
                            w.ns,
                            h if owner_kind == "ReplicaSet" else owner_name,
                        ),
                    }
                ],
            },
            "spec": spec,
            "status": {
                "phase": "Running",
                "hostIP": f"10.40.{self._node_index.get(node, 99)}."
                f"{10 + self._node_index.get(node, 99)}",
                "podIP": ip,
                "podIPs": [{"ip": ip}],
                "qosClass": "Burstable",
                "startTime": iso(created),
                "conditions": [
                    {
                        "type": "PodReadyToStartContainers",
                        "status": "True",
                        "lastTransitionTime": iso(started),
                    },
                    {"type": "Initialized", "status": "True", "lastTransitionTime": iso(created)},
                    {"type": "Ready", "status": cond, "lastTransitionTime": tr},
                    {"type": "ContainersReady", "status": cond, "lastTransitionTime": tr},
                    {"type": "PodScheduled", "status": "True", "lastTransitionTime": iso(created)},
                ],
                "containerStatuses": statuses,
            },
        }
        if tpl["metadata"].get("annotations"):
            pod["metadata"]["annotations"] = dict(tpl["metadata"]["annotations"])
        return pod

    def _service(
        self, w: Workload, sel: dict[str, str], ready: list[PodRef], not_ready: list[PodRef]
    ) -> None:
        port = w.service_port or 80
        target = w.containers[0].port or port
        name = f"{w.name}-hl" if w.headless else w.name
        spec: Obj = {
            "type": "ClusterIP",
            "selector": sel,
            "ports": [{"name": "http", "port": port, "targetPort": target, "protocol": "TCP"}],
        }
        spec["clusterIP"] = "None" if w.headless else (w.cluster_ip or self.service_ip(w.ns, name))
        self.add(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {
                    "name": name,
                    "namespace": w.ns,
                    "uid": uid("svc", w.ns, name),
                    "creationTimestamp": iso(w.created),
                    "labels": {"app.kubernetes.io/name": w.name},
                },
                "spec": spec,
                "status": {"loadBalancer": {}},
            }
        )
        subset: Obj = {"ports": [{"name": "http", "port": target, "protocol": "TCP"}]}
        addr = [
            {
                "ip": r.ip,
                "nodeName": r.node,
                "targetRef": {"kind": "Pod", "name": r.pod, "namespace": r.ns},
            }
            for r in ready
        ]
        if addr:
            subset["addresses"] = addr
        if not_ready:
            subset["notReadyAddresses"] = [
                {
                    "ip": r.ip,
                    "nodeName": r.node,
                    "targetRef": {"kind": "Pod", "name": r.pod, "namespace": r.ns},
                }
                for r in not_ready
            ]
        self.add(
            {
                "apiVersion": "v1",
                "kind": "Endpoints",
                "metadata": {
                    "name": name,
                    "namespace": w.ns,
                    "creationTimestamp": iso(w.created),
                    "labels": {"app.kubernetes.io/name": w.name},
                },
                "subsets": [subset],
            }
        )
