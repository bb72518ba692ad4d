"""What a workload asks for before admission changes it: its pod template, and its pods.

A Deployment's template is what its owner wrote; its pods are what the API server made of
it after admission (a LimitRange's defaults, injected sidecars). The evidence tools compare
the two, and they must work when no pod exists at all (a LimitRange's maximum or a missing
StorageClass refusing every one), so a name is looked up as a workload first, then as a
pod, then as a workload's name prefix.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tools._k8s_common import (
    WORKLOAD_KINDS,
    Owners,
    container_statuses,
    find_pod,
    meta,
    name_of,
    pod_health,
)
from tools.context import ToolContext
from tools.sources.base import KubeObject


@dataclass(frozen=True)
class Workload:
    """A workload (or a bare pod) with the template it declares and the pods it owns now.

    `template` is the pod spec as written by the owner (a bare pod's own spec: nothing
    else declares it); `pods` are the owned pods, least healthy first.
    """

    kind: str
    name: str
    namespace: str
    template: dict[str, Any]
    obj: KubeObject
    pods: list[KubeObject] = field(default_factory=list)
    note: str | None = None

    @property
    def ref(self) -> str:
        return f"{self.kind}/{self.name}"


def template_of(obj: KubeObject) -> dict[str, Any]:
    """The pod spec a workload declares: a CronJob's is inside its jobTemplate."""
    spec = obj.get("spec") or {}
    if obj.get("kind") == "Pod":
        return dict(spec)
    if obj.get("kind") == "CronJob":
        spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    return dict((spec.get("template") or {}).get("spec") or {})


async def find_workload(ctx: ToolContext, namespace: str, name: str) -> Workload:
    """A workload by name (any kind), else a pod by name or prefix with its owner's
    template. find_pod raises a ToolError listing what exists when nothing matches."""
    for kind in WORKLOAD_KINDS:
        found = await ctx.cluster.get_object(kind, namespace, name)
        if found is not None:
            found.setdefault("kind", kind)
            return Workload(kind, name, namespace, template_of(found), found,
                            await owned_pods(ctx, namespace, kind, name))
    pod, note = await find_pod(ctx, namespace, name)
    replicasets, jobs = await _owners(ctx, namespace)
    kind, owner = Owners(replicasets, jobs).workload(pod)
    if kind in WORKLOAD_KINDS:
        parent = await ctx.cluster.get_object(kind, namespace, owner)
        if parent is not None:
            parent.setdefault("kind", kind)
            pods = await owned_pods(ctx, namespace, kind, owner)
            chosen = [pod, *(p for p in pods if name_of(p) != name_of(pod))]
            return Workload(kind, owner, namespace, template_of(parent), parent, chosen,
                            note)
    pod.setdefault("kind", "Pod")
    return Workload("Pod", name_of(pod), namespace, template_of(pod), pod, [pod], note)


async def owned_pods(ctx: ToolContext, namespace: str, kind: str, name: str) -> list[
        KubeObject]:
    """The pods whose top owner is `kind/name`, least healthy first."""
    pods = await ctx.cluster.list_objects("Pod", namespace)
    replicasets, jobs = await _owners(ctx, namespace)
    owners = Owners(replicasets, jobs)
    mine = [p for p in pods if owners.workload(p) == (kind, name)]

    def badness(pod: KubeObject) -> tuple[bool, int, str]:
        healthy, _ = pod_health(pod, ctx.now)
        restarts = sum(int(c.get("restartCount", 0)) for c in container_statuses(pod))
        return healthy, -restarts, name_of(pod)

    return sorted(mine, key=badness)


async def _owners(ctx: ToolContext, namespace: str) -> tuple[list[KubeObject], list[KubeObject]]:
    replicasets = await ctx.cluster.list_objects("ReplicaSet", namespace)
    jobs = await ctx.cluster.list_objects("Job", namespace)
    return replicasets, jobs


def containers_of(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """Init containers then containers: admission and mounts treat both alike."""
    return [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]


def labels_of(obj: KubeObject) -> dict[str, str]:
    return dict(meta(obj).get("labels") or {})
