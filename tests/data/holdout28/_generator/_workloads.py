"""Deployments with their ReplicaSet history, StatefulSets, and their pods.

A Deployment's revisions are ReplicaSets named `<name>-<template hash>` with the
`deployment.kubernetes.io/revision` annotation; pods carry the hash in
`pod-template-hash`, exactly as the controller manager writes them.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ._k8s import Obj, stamp, token, uid


@dataclass
class Revision:
    template: Obj
    created: datetime
    replicas: int
    ready: int | None = None  # defaults to replicas
    change_cause: str | None = None

    hash: str = ""
    name: str = ""
    number: int = 0
    labels: dict[str, str] = field(default_factory=dict)


def _hash(ns: str, name: str, tmpl: Obj) -> str:
    return token(ns + name + json.dumps(tmpl, sort_keys=True), 10)


def deployment(
    name: str,
    ns: str,
    selector: dict[str, str],
    revisions: list[Revision],
    *,
    created: datetime,
    now: datetime,
    labels: dict[str, str] | None = None,
    strategy: Obj | None = None,
    progress: Obj | None = None,
    annotations: dict[str, str] | None = None,
) -> tuple[Obj, list[Obj]]:
    """The Deployment and its ReplicaSets; revisions oldest first, the last is current."""
    replicasets = []
    for number, rev in enumerate(revisions, start=1):
        rev.number = number
        rev.hash = _hash(ns, name, rev.template)
        rev.name = f"{name}-{rev.hash}"
        tmpl = copy.deepcopy(rev.template)
        tmpl["metadata"]["labels"]["pod-template-hash"] = rev.hash
        rev.labels = dict(tmpl["metadata"]["labels"])
        ready = rev.replicas if rev.ready is None else rev.ready
        rs_annotations = {
            "deployment.kubernetes.io/desired-replicas": str(revisions[-1].replicas),
            "deployment.kubernetes.io/max-replicas": str(revisions[-1].replicas + 1),
            "deployment.kubernetes.io/revision": str(number),
        }
        if rev.change_cause:
            rs_annotations["kubernetes.io/change-cause"] = rev.change_cause
        status: Obj = {"replicas": rev.replicas, "observedGeneration": 1 + number}
        if rev.replicas:
            status.update(
                {
                    "fullyLabeledReplicas": rev.replicas,
                    "readyReplicas": ready,
                    "availableReplicas": ready,
                }
            )
        replicasets.append(
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {
                    "name": rev.name,
                    "namespace": ns,
                    "uid": uid("ReplicaSet" + ns + rev.name),
                    "creationTimestamp": stamp(rev.created),
                    "generation": 1 + number,
                    "labels": dict(rev.labels),
                    "annotations": rs_annotations,
                    "ownerReferences": [
                        {
                            "apiVersion": "apps/v1",
                            "kind": "Deployment",
                            "name": name,
                            "uid": uid("Deployment" + ns + name),
                            "controller": True,
                            "blockOwnerDeletion": True,
                        }
                    ],
                },
                "spec": {
                    "replicas": rev.replicas,
                    "selector": {"matchLabels": {**selector, "pod-template-hash": rev.hash}},
                    "template": tmpl,
                },
                "status": status,
            }
        )
    current = revisions[-1]
    total = sum(r.replicas for r in revisions)
    ready_total = sum(r.replicas if r.ready is None else r.ready for r in revisions)
    desired = current.replicas if progress is None else progress.get("desired", current.replicas)
    available = ready_total >= desired - (
        1 if progress is None else progress.get("max_unavailable", 0)
    )
    conditions = [
        {
            "type": "Available",
            "status": "True" if available else "False",
            "reason": "MinimumReplicasAvailable" if available else "MinimumReplicasUnavailable",
            "message": "Deployment has minimum availability."
            if available
            else "Deployment does not have minimum availability.",
            "lastUpdateTime": stamp(current.created),
            "lastTransitionTime": stamp(current.created),
        },
        (progress or {}).get("condition")
        or {
            "type": "Progressing",
            "status": "True",
            "reason": "NewReplicaSetAvailable",
            "message": f'ReplicaSet "{current.name}" has successfully progressed.',
            "lastUpdateTime": stamp(current.created + timedelta(minutes=2)),
            "lastTransitionTime": stamp(current.created),
        },
    ]
    dep_annotations = {
        "deployment.kubernetes.io/revision": str(current.number),
        **(annotations or {}),
    }
    status = {
        "observedGeneration": 1 + current.number,
        "replicas": total,
        "updatedReplicas": current.replicas,
        "readyReplicas": ready_total,
        "availableReplicas": ready_total,
        "conditions": conditions,
    }
    if total - ready_total:
        status["unavailableReplicas"] = total - ready_total
    dep = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": uid("Deployment" + ns + name),
            "creationTimestamp": stamp(created),
            "generation": 1 + current.number,
            "labels": labels or {"app": name},
            "annotations": dep_annotations,
        },
        "spec": {
            "replicas": desired,
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600,
            "selector": {"matchLabels": selector},
            "strategy": strategy
            or {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
            },
            "template": copy.deepcopy(current.template),
        },
        "status": status,
    }
    return dep, replicasets


def pod_name(rev: Revision, index: int) -> str:
    return f"{rev.name}-{token(rev.name + str(index), 5)}"


def statefulset(
    name: str,
    ns: str,
    selector: dict[str, str],
    tmpl: Obj,
    *,
    replicas: int,
    created: datetime,
    service_name: str,
    claims: list[Obj] | None = None,
    ready: int | None = None,
) -> tuple[Obj, str]:
    revision = f"{name}-{token(ns + name + json.dumps(tmpl, sort_keys=True), 10)}"
    ready_count = replicas if ready is None else ready
    spec: Obj = {
        "replicas": replicas,
        "serviceName": service_name,
        "podManagementPolicy": "OrderedReady",
        "selector": {"matchLabels": selector},
        "template": copy.deepcopy(tmpl),
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
    }
    if claims:
        spec["volumeClaimTemplates"] = claims
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": uid("StatefulSet" + ns + name),
            "creationTimestamp": stamp(created),
            "generation": 3,
            "labels": dict(selector),
        },
        "spec": spec,
        "status": {
            "observedGeneration": 3,
            "replicas": replicas,
            "readyReplicas": ready_count,
            "currentReplicas": replicas,
            "updatedReplicas": replicas,
            "availableReplicas": ready_count,
            "currentRevision": revision,
            "updateRevision": revision,
            "collisionCount": 0,
        },
    }
    return sts, revision


def pvc(
    name: str,
    ns: str,
    size: str,
    *,
    created: datetime,
    storage_class: str = "gp3",
    labels: dict[str, str] | None = None,
) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": uid("pvc" + ns + name),
            "creationTimestamp": stamp(created),
            "labels": labels or {},
            "annotations": {
                "pv.kubernetes.io/bind-completed": "yes",
                "volume.kubernetes.io/storage-provisioner": "ebs.csi.aws.com",
            },
            "finalizers": ["kubernetes.io/pvc-protection"],
        },
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": storage_class,
            "resources": {"requests": {"storage": size}},
            "volumeMode": "Filesystem",
            "volumeName": "pvc-" + uid("pv" + ns + name),
        },
        "status": {
            "phase": "Bound",
            "accessModes": ["ReadWriteOnce"],
            "capacity": {"storage": size},
        },
    }


def pretty(value: Any) -> str:
    return json.dumps(value, sort_keys=True)
