"""The rollout history tool: which revision runs, since when, and what it changed.

A bad rollout is found by lining up "what changed" with "when things broke", so the history
carries exact creation times (to match a metric change point) and a field-level diff of the
pod template between the current and the previous revision.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from engines.errors import ToolError
from tools._k8s_common import (
    condition,
    container_statuses,
    controller_of,
    last_termination,
    meta,
    name_of,
    pod_health,
    probe_text,
    resources,
    selector_matches,
    when,
)
from tools._k8s_events import event_times
from tools._toolkit import check_namespace, cut, finish, iso, shorten
from tools.context import ToolContext
from tools.redact import looks_secret
from tools.registry import tool
from tools.scenarios import parse_time
from tools.sources.base import KubeObject

_REVISION = "deployment.kubernetes.io/revision"
_CHANGE_CAUSE = "kubernetes.io/change-cause"


@tool(describe="Reading the rollout history of {namespace}/{workload}")
async def k8s_rollout_history(ctx: ToolContext, namespace: str, workload: str) -> dict[str, Any]:
    """Rollout history of a Deployment: its revisions newest first (ReplicaSets) with images,
    creation time, desired/ready pods and restarts, which one is current, and what changed
    from the previous revision (image, resources, env, probes, command). For a StatefulSet or
    DaemonSet: its current and update revisions, and the revisions its pods run with when
    their first and last pods were created and how many pods the controller replaced.

    Args:
        namespace: The workload's namespace.
        workload: Name of the Deployment, StatefulSet or DaemonSet.
    """
    check_namespace(ctx, namespace)
    deployment = await ctx.cluster.get_object("Deployment", namespace, workload)
    if deployment is None:
        for kind in ("StatefulSet", "DaemonSet"):
            if obj := await ctx.cluster.get_object(kind, namespace, workload):
                return finish(await _controller(ctx, obj), obj)
        raise ToolError(f"no Deployment, StatefulSet or DaemonSet {workload!r} in {namespace!r}")
    replicasets, pods = await asyncio.gather(
        ctx.cluster.list_objects("ReplicaSet", namespace),
        ctx.cluster.list_objects("Pod", namespace),
    )
    owned = [rs for rs in replicasets if _owned_by(rs, deployment)]
    current = str((meta(deployment).get("annotations") or {}).get(_REVISION, ""))
    owned.sort(key=_revision, reverse=True)
    rows = [_revision_row(ctx, rs, pods, current) for rs in owned]
    spec, status = deployment.get("spec") or {}, deployment.get("status") or {}
    result: dict[str, Any] = {
        "workload": f"Deployment {namespace}/{workload}",
        "current_revision": int(current) if current.isdigit() else current or None,
        "replicas": f"ready {status.get('readyReplicas', 0)}/{spec.get('replicas', 1)}, "
                    f"updated {status.get('updatedReplicas', 0)}, "
                    f"available {status.get('availableReplicas', 0)}",
        "strategy": (spec.get("strategy") or {}).get("type", "RollingUpdate"),
    }
    if spec.get("paused"):
        result["paused"] = True
    result["revisions"] = cut(rows, 10) if rows else "no ReplicaSets found"
    if len(owned) >= 2:
        newest, previous = _template(owned[0]), _template(owned[1])
        result["changes_from_previous"] = _diff(previous, newest) or [
            "no difference in the pod template"]
    return finish(result, [deployment, *owned])


def _owned_by(rs: KubeObject, deployment: KubeObject) -> bool:
    references = meta(rs).get("ownerReferences") or []
    if references:
        return any(r.get("kind") == "Deployment" and r.get("name") == name_of(deployment)
                   for r in references)
    selector = (deployment.get("spec") or {}).get("selector")
    return name_of(rs).startswith(name_of(deployment) + "-") and bool(selector) and \
        selector_matches(selector, meta(rs).get("labels") or {})


def _revision(rs: KubeObject) -> int:
    value = str((meta(rs).get("annotations") or {}).get(_REVISION, "0"))
    return int(value) if value.isdigit() else 0


def _template(rs: KubeObject) -> dict[str, Any]:
    return dict(((rs.get("spec") or {}).get("template") or {}).get("spec") or {})


def _revision_row(ctx: ToolContext, rs: KubeObject, pods: list[KubeObject],
                  current: str) -> dict[str, Any]:
    spec, status = rs.get("spec") or {}, rs.get("status") or {}
    annotations = meta(rs).get("annotations") or {}
    row: dict[str, Any] = {
        "revision": _revision(rs),
        "replicaset": name_of(rs),
        "current": str(_revision(rs)) == current,
        "created": when(meta(rs).get("creationTimestamp"), ctx.now),
        "images": [c.get("image") for c in _template(rs).get("containers") or []],
        "pods": f"ready {status.get('readyReplicas', 0)}/{spec.get('replicas', 0)}",
    }
    mine = [p for p in pods if any(r.get("name") == name_of(rs)
                                   for r in meta(p).get("ownerReferences") or [])]
    row.update(_pods_health(mine, ctx.now))
    if cause := annotations.get(_CHANGE_CAUSE):
        row["change_cause"] = shorten(str(cause), 150)
    return row


def _pods_health(pods: list[dict[str, Any]], now: datetime) -> dict[str, Any]:
    """What a revision's pods went through: restarts, last exit reasons, unhealthy pods
    (only what is there, so a healthy revision stays one short line)."""
    statuses = [c for p in pods for c in container_statuses(p, init=True)]
    found: dict[str, Any] = {}
    if restarts := sum(int(c.get("restartCount", 0)) for c in statuses):
        found["restarts"] = restarts
    if reasons := sorted({str(t.get("reason")) for c in statuses
                          if (t := last_termination(c)) and t.get("reason")}):
        found["last_exit_reasons"] = reasons
    if unhealthy := sum(1 for p in pods if not pod_health(p, now)[0]):
        found["unhealthy_pods"] = unhealthy
    return found


def _diff(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What changed in a pod template, one line per field, secret values never shown."""
    changes: list[str] = []
    old_containers = {c.get("name"): c for c in old.get("containers") or []}
    new_containers = {c.get("name"): c for c in new.get("containers") or []}
    for name in old_containers.keys() - new_containers.keys():
        changes.append(f"container {name} removed")
    for name, after in new_containers.items():
        before = old_containers.get(name)
        if before is None:
            changes.append(f"container {name} added (image {after.get('image')})")
            continue
        changes += [f"{name}: {line}" for line in _container_diff(before, after)]
    for key in ("nodeSelector", "serviceAccountName", "tolerations", "affinity"):
        if old.get(key) != new.get(key):
            changes.append(f"{key}: {shorten(str(old.get(key)), 80)} → "
                           f"{shorten(str(new.get(key)), 80)}")
    old_volumes = {v.get("name") for v in old.get("volumes") or []}
    new_volumes = {v.get("name") for v in new.get("volumes") or []}
    if old_volumes != new_volumes:
        changes.append(f"volumes: {sorted(old_volumes - new_volumes)} removed, "
                       f"{sorted(new_volumes - old_volumes)} added")
    return changes


def _container_diff(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    changes = []
    if before.get("image") != after.get("image"):
        changes.append(f"image {before.get('image')} → {after.get('image')}")
    old_res, new_res = resources(before), resources(after)
    for kind in ("requests", "limits"):
        for resource in sorted(set(old_res.get(kind, {})) | set(new_res.get(kind, {}))):
            a, b = old_res.get(kind, {}).get(resource), new_res.get(kind, {}).get(resource)
            if a != b:
                changes.append(f"{resource} {kind[:-1]} {a or 'none'} → {b or 'none'}")
    old_env = {e.get("name"): e for e in before.get("env") or []}
    new_env = {e.get("name"): e for e in after.get("env") or []}
    for name in sorted(new_env.keys() - old_env.keys()):
        changes.append(f"env {name} added")
    for name in sorted(old_env.keys() - new_env.keys()):
        changes.append(f"env {name} removed")
    for name in sorted(old_env.keys() & new_env.keys()):
        if old_env[name] != new_env[name]:
            a, b = old_env[name].get("value"), new_env[name].get("value")
            plain = a is not None and b is not None and not looks_secret(str(name))
            changes.append(f"env {name} {shorten(str(a), 60)} → {shorten(str(b), 60)}"
                           if plain else f"env {name} changed")
    for kind in ("liveness", "readiness", "startup"):
        a, b = probe_text(before.get(f"{kind}Probe")), probe_text(after.get(f"{kind}Probe"))
        if a != b:
            changes.append(f"{kind} probe {a or 'none'} → {b or 'none'}")
    for key in ("command", "args", "ports"):
        if before.get(key) != after.get(key):
            changes.append(f"{key} {shorten(str(before.get(key)), 80)} → "
                           f"{shorten(str(after.get(key)), 80)}")
    return changes


async def _controller(ctx: ToolContext, obj: KubeObject) -> dict[str, Any]:
    """A StatefulSet's or DaemonSet's status, with the revisions its pods run."""
    kind, namespace, name = str(obj.get("kind")), str(meta(obj).get("namespace")), name_of(obj)
    pods, events = await asyncio.gather(
        ctx.cluster.list_objects("Pod", namespace),
        ctx.cluster.list_objects("Event", namespace, field_selector={
            "involvedObject.kind": kind, "involvedObject.name": name}))
    result = _controller_status(ctx, obj) | _controller_history(ctx, obj, pods, events)
    note = result.pop("note")
    result["note"] = note + ("; a revision's time is when its first pod was created"
                             if "revisions" in result else "")
    return result


def _controller_status(ctx: ToolContext, obj: KubeObject) -> dict[str, Any]:
    """StatefulSets and DaemonSets keep history in ControllerRevisions, which this source
    does not list; their status still says whether an update is rolling and how far."""
    status, kind = obj.get("status") or {}, obj.get("kind")
    spec = obj.get("spec") or {}
    containers = ((spec.get("template") or {}).get("spec") or {}).get("containers") or []
    result: dict[str, Any] = {
        "workload": f"{kind} {meta(obj).get('namespace')}/{name_of(obj)}",
        "images": [c.get("image") for c in containers],
        "created": when(meta(obj).get("creationTimestamp"), ctx.now),
        "strategy": (spec.get("updateStrategy") or {}).get("type"),
    }
    if kind == "StatefulSet":
        result |= {"current_revision": status.get("currentRevision"),
                   "update_revision": status.get("updateRevision"),
                   "updated": f"{status.get('updatedReplicas', 0)}/{spec.get('replicas', 1)}",
                   "ready": f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 1)}"}
        result["rolling"] = status.get("currentRevision") != status.get("updateRevision")
    else:
        desired = status.get("desiredNumberScheduled", 0)
        result |= {"updated": f"{status.get('updatedNumberScheduled', 0)}/{desired}",
                   "ready": f"{status.get('numberReady', 0)}/{desired}"}
    result["note"] = "earlier revisions (ControllerRevisions) are not available from this source"
    return {k: v for k, v in result.items() if v is not None}


_HASH = "controller-revision-hash"
_GENERATION = "pod-template-generation"


def _controller_history(ctx: ToolContext, obj: KubeObject, pods: list[KubeObject],
                        events: list[KubeObject]) -> dict[str, Any]:
    """The revisions a StatefulSet's or DaemonSet's pods run (their controller-revision-hash
    label), newest first, each with when its first and last pod were created; and how many
    pods the controller itself deleted to replace them (a rolling update, not evictions)."""
    kind, name = str(obj.get("kind")), name_of(obj)
    mine = [p for p in pods if controller_of(p) == (kind, name)]
    groups: dict[str, list[KubeObject]] = {}
    for pod in mine:
        groups.setdefault(str((meta(pod).get("labels") or {}).get(_HASH, "")), []).append(pod)
    groups.pop("", None)
    if not groups:
        return {}
    status = obj.get("status") or {}

    def generation(revision: str) -> int:
        values = [str((meta(p).get("labels") or {}).get(_GENERATION, "")) for p in groups[revision]]
        return max((int(v) for v in values if v.isdigit()), default=0)

    def first_created(revision: str) -> datetime:
        return min(_created(p) for p in groups[revision])

    newest = str(status.get("updateRevision") or "") if kind == "StatefulSet" else ""
    if newest not in groups:
        newest = max(groups, key=lambda r: (generation(r), first_created(r)))
    order = sorted(groups, key=first_created, reverse=True)
    order.insert(0, order.pop(order.index(newest)))
    rows = []
    for revision in order:
        members = groups[revision]
        stamps = sorted(_created(p) for p in members)
        row: dict[str, Any] = {
            "revision": revision, "current": revision == newest,
            "first_pod_created": when(iso(stamps[0]), ctx.now),
            "last_pod_created": when(iso(stamps[-1]), ctx.now),
            "images": sorted({str(c.get("image")) for p in members
                              for c in (p.get("spec") or {}).get("containers") or []}),
            "pods": f"ready {sum(1 for p in members if _ready(p))}/{len(members)}",
        }
        row.update(_pods_health(members, ctx.now))
        rows.append(row)
    result: dict[str, Any] = {"revisions": cut(rows, 5)}
    deletes = [e for e in events if e.get("reason") == "SuccessfulDelete"]
    if deletes:
        times = sorted(iso(_moment(t)) for e in deletes for t in event_times(e) if t)
        result["pods_replaced_by_controller"] = {
            "deleted": sum(int(e.get("count") or 1) for e in deletes),
            "first": when(times[0], ctx.now) if times else None,
            "last": when(times[-1], ctx.now) if times else None}
    return result


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _moment(stamp: Any) -> datetime:
    try:
        return parse_time(stamp) if stamp else _EPOCH
    except ValueError:
        return _EPOCH


def _created(obj: KubeObject) -> datetime:
    return _moment(meta(obj).get("creationTimestamp"))


def _ready(pod: KubeObject) -> bool:
    ready = condition(pod, "Ready")
    if ready is not None:
        return ready.get("status") == "True"
    statuses = container_statuses(pod)
    return bool(statuses) and all(c.get("ready") for c in statuses)

