"""Kubernetes tools about what runs: pods and workloads, listed and rolled up (one pod
in depth is tools._k8s_pod)."""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import timedelta
from typing import Annotated, Any, Literal

from pydantic import Field

from engines.errors import ToolError
from tools._k8s_common import (
    Owners,
    container_brief,
    container_statuses,
    last_termination,
    list_kinds,
    meta,
    name_of,
    namespace_of,
    parse_selector,
    pod_health,
    pod_row,
    pod_status,
)
from tools._toolkit import ago, check_namespace, cut, finish, seconds_since, shorten
from tools.context import ToolContext
from tools.registry import tool
from tools.scenarios import parse_time
from tools.sources.base import KubeObject

WorkloadKind = Literal["Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob"]
_REVISION = "deployment.kubernetes.io/revision"


def _where(arguments: dict[str, Any]) -> str:
    return arguments.get("namespace") or "all namespaces"


@tool(describe=lambda a: f"Listing pods in {_where(a)}")
async def k8s_list_pods(
    ctx: ToolContext,
    namespace: str | None = None,
    selector: str | None = None,
    node: str | None = None,
    problems_only: bool = False,
    limit: Annotated[int, Field(ge=1, le=100)] = 20,
    ip: str | None = None,
) -> dict[str, Any]:
    """List pods like `kubectl get pods -o wide`: status, ready/total, restarts, last exit
    (OOMKilled, Error...), node, age and owning workload. Unhealthy pods first; healthy
    ones after them in short.

    Args:
        namespace: Namespace to list; omit for all namespaces.
        selector: Label selector as key=value pairs joined by commas, e.g. app=checkout.
        node: Only pods scheduled on this node.
        problems_only: Only pods that are not healthy (pending, waiting, not ready, failed,
            or restarted within the last hour).
        limit: Most pods to return.
        ip: Only the pod with this IP address, e.g. one that a log line names as a peer.
    """
    check_namespace(ctx, namespace)
    fields = {k: v for k, v in (("spec.nodeName", node), ("status.podIP", ip)) if v} or None
    pods, replicasets, jobs = await asyncio.gather(
        ctx.cluster.list_objects("Pod", namespace, label_selector=parse_selector(selector),
                                 field_selector=fields),
        ctx.cluster.list_objects("ReplicaSet", namespace),
        ctx.cluster.list_objects("Job", namespace),
    )
    pods = [p for p in pods if ctx.allows_namespace(namespace_of(p))]
    owners = Owners(replicasets, jobs)
    rows = []
    for pod in pods:
        healthy, why = pod_health(pod, ctx.now)
        if problems_only and healthy:
            continue
        row = pod_row(pod, ctx.now, with_namespace=namespace is None)
        if ip:
            row["ip"] = ip
        kind, owner = owners.workload(pod)
        if kind != "Pod":
            row["owner"] = f"{kind}/{owner}"
        if why and why != row["status"]:
            row["problem"] = why
        rows.append((healthy, -row["restarts"], row["name"], row))
    rows.sort(key=lambda item: item[:3])
    statuses = Counter(row["status"] for *_, row in rows)
    shown = [row if not healthy else _short(row) for healthy, _, _, row in rows]

    result = {
        "namespace": namespace or "all",
        "total": len(rows),
        "unhealthy": sum(1 for healthy, *_ in rows if not healthy),
        "by_status": dict(statuses.most_common()),
        "pods": cut(shown, limit),
    }
    return finish(result, pods)


def _short(row: dict[str, Any]) -> dict[str, Any]:
    """A healthy pod with only what tells it apart: no node, no exit of days ago."""
    return {k: v for k, v in row.items()
            if k not in ("node", "last_exit") and not (k == "restarts" and v == 0)}


def _desired_ready(obj: KubeObject) -> tuple[int, int, dict[str, Any]]:
    """(desired, ready, extra counts) in the terms of each workload kind."""
    spec, status, kind = obj.get("spec") or {}, obj.get("status") or {}, obj.get("kind")
    if kind == "DaemonSet":
        return (int(status.get("desiredNumberScheduled", 0)), int(status.get("numberReady", 0)),
                {"up_to_date": status.get("updatedNumberScheduled", 0),
                 "misscheduled": status.get("numberMisscheduled", 0)})
    if kind == "Job":
        return (int(spec.get("completions") or 1), int(status.get("succeeded", 0)),
                {"active": status.get("active", 0), "failed": status.get("failed", 0)})
    if kind == "CronJob":
        return (0, 0, {"schedule": spec.get("schedule"), "suspended": bool(spec.get("suspend")),
                       "active_jobs": len(status.get("active") or []),
                       "last_schedule": status.get("lastScheduleTime"),
                       "last_success": status.get("lastSuccessfulTime")})
    desired = int(spec.get("replicas", 1))
    extra = {"up_to_date": status.get("updatedReplicas", 0)}
    if kind == "Deployment":
        extra["available"] = status.get("availableReplicas", 0)
    return desired, int(status.get("readyReplicas", 0)), extra


def _bad_conditions(obj: KubeObject) -> list[str]:
    """Conditions that signal trouble, as "Type=Status Reason: message"."""
    bad = []
    for item in (obj.get("status") or {}).get("conditions") or []:
        type_, status = item.get("type"), item.get("status")
        healthy_false = type_ in ("Available", "Progressing", "Ready", "Complete")
        if (status == "False" and healthy_false) or (
            status == "True" and type_ in ("ReplicaFailure", "Failed", "Stalled")
        ):
            text = f"{type_}={status} {item.get('reason', '')}".strip()
            if item.get("message"):
                text += ": " + shorten(str(item["message"]), 200)
            bad.append(text)
    return bad


def _template_containers(obj: KubeObject) -> list[dict[str, Any]]:
    spec = obj.get("spec") or {}
    if obj.get("kind") == "CronJob":
        spec = ((spec.get("jobTemplate") or {}).get("spec")) or {}
    return list(((spec.get("template") or {}).get("spec") or {}).get("containers") or [])


@tool(describe=lambda a: f"Listing workloads in {_where(a)}")
async def k8s_list_workloads(
    ctx: ToolContext,
    namespace: str | None = None,
    kind: WorkloadKind | None = None,
    name: str | None = None,
    problems_only: bool = False,
    limit: Annotated[int, Field(ge=1, le=100)] = 30,
) -> dict[str, Any]:
    """List Deployments, StatefulSets, DaemonSets, Jobs and CronJobs with ready/desired,
    images, failing conditions, a CronJob's run that hangs, and a roll-up of their pods
    (statuses, restarts, last exit reasons). With `name`, also each container's resources,
    probes and command.

    Args:
        namespace: Namespace to list; omit for all namespaces.
        kind: Only this kind of workload.
        name: Only the workload with this name (shows details).
        problems_only: Only workloads that are not healthy.
        limit: Most workloads to return.
    """
    check_namespace(ctx, namespace)
    kinds = [kind] if kind else ["Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob"]
    listed = await list_kinds(ctx, namespace, "Pod", "ReplicaSet", *kinds)
    pods, replicasets, workloads = listed[0], listed[1], [o for ws in listed[2:] for o in ws]
    jobs = [w for w in workloads if w.get("kind") == "Job"]
    owners = Owners(replicasets, jobs)
    pods_of: dict[tuple[str, str, str], list[KubeObject]] = {}
    for pod in pods:
        owner = owners.workload(pod)
        pods_of.setdefault((namespace_of(pod), *owner), []).append(pod)
    rows = []
    for obj in workloads:
        if name and name_of(obj) != name:
            continue
        row, healthy = _workload_row(ctx, obj, pods_of, replicasets, detail=bool(name),
                                     with_namespace=namespace is None, jobs=jobs)
        if problems_only and healthy:
            continue
        rows.append((healthy, -_severity(row), str(row["kind"]), str(row["name"]), row))
    if name and not rows:
        raise ToolError(f"no workload named {name!r} in {namespace or 'any namespace'}")
    rows.sort(key=lambda item: item[:4])
    shown = [row if not healthy or name else _short_workload(row) for healthy, *_, row in rows]
    result = {"namespace": namespace or "all", "total": len(rows),
              "unhealthy": sum(1 for healthy, *_ in rows if not healthy),
              "workloads": cut(shown, limit)}
    return finish(result, [*workloads, *pods])


_SHORT_KEYS = ("kind", "name", "namespace", "ready", "completed", "images")


def _severity(row: dict[str, Any]) -> int:
    """How much is wrong with a workload: the sickest are listed first, so that what an
    observation budget cuts from a long list is the healthy tail, not the culprit."""
    pods = row.get("pods") or {}
    return int(pods.get("unhealthy", 0)) + int(row.get("failed") or 0) + \
        len(row.get("problems") or ())


def _short_workload(row: dict[str, Any]) -> dict[str, Any]:
    """A healthy workload in a listing: what it is and runs, not its whole state."""
    return {key: row[key] for key in _SHORT_KEYS if key in row}


def _workload_row(
    ctx: ToolContext,
    obj: KubeObject,
    pods_of: dict[tuple[str, str, str], list[KubeObject]],
    replicasets: list[KubeObject],
    *,
    detail: bool,
    with_namespace: bool,
    jobs: list[KubeObject],
) -> tuple[dict[str, Any], bool]:
    kind, name, namespace = str(obj.get("kind")), name_of(obj), namespace_of(obj)
    desired, ready, extra = _desired_ready(obj)
    row: dict[str, Any] = {"kind": kind, "name": name}
    if with_namespace:
        row["namespace"] = namespace
    if kind == "Job":
        row["completed"] = f"{ready}/{desired}"
    elif kind != "CronJob":
        row["ready"] = f"{ready}/{desired}"
    row |= {k: v for k, v in extra.items() if v not in (None, "")}
    containers = _template_containers(obj)
    row["images"] = [c.get("image") for c in containers]
    if revision := (meta(obj).get("annotations") or {}).get(_REVISION):
        row["revision"] = revision
    created = meta(obj).get("creationTimestamp")
    row["age"] = ago(created, ctx.now)
    row["age_seconds"] = seconds_since(created, ctx.now)  # so no reader parses "3d" back
    problems = _bad_conditions(obj)
    if kind == "Deployment":
        for rs in replicasets:
            owner: dict[str, Any] = next(iter(meta(rs).get("ownerReferences") or []), {})
            if owner.get("name") == name and namespace_of(rs) == namespace:
                problems += [f"ReplicaSet {name_of(rs)}: {p}" for p in _bad_conditions(rs)]
    pods = pods_of.get((namespace, kind, name), [])
    rollup = _pods_rollup(ctx, pods) if pods else {}
    if rollup.get("unhealthy"):
        problems.append(f"{rollup['unhealthy']} of {len(pods)} pods unhealthy")
    if kind in ("Deployment", "StatefulSet", "DaemonSet") and ready < desired:
        problems.append(f"only {ready} of {desired} replicas ready")
    if kind == "Job" and extra.get("failed"):
        problems.append(f"{extra['failed']} failed pods")
    if kind == "CronJob" and (hung := _hung_run(ctx, obj, jobs)):
        problems.append(hung)
    if problems:
        row["problems"] = problems
    if rollup and (problems or detail or rollup.get("restarts")):
        row["pods"] = rollup
    if detail:
        row["containers"] = [container_brief(c) for c in containers]
        strategy = (obj.get("spec") or {}).get("strategy") or (obj.get("spec") or {}).get(
            "updateStrategy")
        if strategy and strategy.get("type"):
            row["strategy"] = strategy["type"]
        if selector := (obj.get("spec") or {}).get("selector"):
            row["selector"] = selector.get("matchLabels") or selector
    return row, not problems


HUNG_AFTER = 3600
"""Seconds a run may take, beyond three times its longest earlier run, before it is hung."""


def _hung_run(ctx: ToolContext, cronjob: KubeObject, jobs: list[KubeObject]) -> str:
    """A CronJob whose active run has taken far longer than its runs do: with
    concurrencyPolicy Forbid every later run is skipped while it lasts, so whatever the job
    feeds goes stale without any failure to show."""
    active = {ref.get("name") for ref in (cronjob.get("status") or {}).get("active") or []}
    mine = [j for j in jobs if namespace_of(j) == namespace_of(cronjob) and any(
        ref.get("name") == name_of(cronjob) for ref in meta(j).get("ownerReferences") or [])]
    took = [seconds_since(status["startTime"], parse_time(status["completionTime"]))
            for j in mine if (status := j.get("status") or {}).get("completionTime")
            and status.get("startTime")]
    longest = max((t for t in took if t is not None), default=0)
    for job in mine:
        started = (job.get("status") or {}).get("startTime")
        running = seconds_since(started, ctx.now)
        if name_of(job) not in active or running is None or running < max(HUNG_AFTER,
                                                                            3 * longest):
            continue
        earlier = (f", its earlier runs took at most "
                   f"{ago(ctx.now - timedelta(seconds=longest), ctx.now)}" if took else "")
        policy = (cronjob.get("spec") or {}).get("concurrencyPolicy") or "Allow"
        after = {"Forbid": "concurrencyPolicy Forbid skips every run until it ends",
                 "Replace": "concurrencyPolicy Replace ends it only at the next run"}.get(
                     policy, "later runs start beside it")
        return f"Job {name_of(job)} has been running for {ago(started, ctx.now)}{earlier}; {after}"
    return ""


def _pods_rollup(ctx: ToolContext, pods: list[KubeObject]) -> dict[str, Any]:
    """What a workload's pods have in common: statuses, restarts, last exit reasons."""
    statuses = Counter(pod_status(p) for p in pods)
    exits: Counter[str] = Counter()
    restarts = 0
    unhealthy = 0
    for pod in pods:
        healthy, _ = pod_health(pod, ctx.now)
        unhealthy += not healthy
        for status in container_statuses(pod, init=True):
            restarts += int(status.get("restartCount", 0))
            if (term := last_termination(status)) and term.get("reason"):
                exits[str(term["reason"])] += 1
    rollup: dict[str, Any] = {"total": len(pods), "statuses": dict(statuses.most_common(5))}
    if unhealthy:
        rollup["unhealthy"] = unhealthy
    if restarts:
        rollup["restarts"] = restarts
    if exits:
        rollup["last_exit_reasons"] = dict(exits.most_common(3))
    return rollup
