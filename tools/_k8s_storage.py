"""Kubernetes storage evidence: claims, the StorageClasses they name, and how full they are.

Two storage faults hide behind other symptoms. A claim (often one a StatefulSet's
volumeClaimTemplate makes for a new replica) that names a StorageClass which does not exist
stays Pending forever, and its pod with it: the pod says "unbound immediate
PersistentVolumeClaims", the claim's events say why. A volume that fills up makes its
database fail writes while the callers report the errors: the kubelet's
`kubelet_volume_stats_*` series per claim say which volume it is. This module joins both
facts onto each claim, so one call names the claim, its class (and whether that class
exists), its phase, its users and its fullness.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from engines.errors import BackendError
from tools._k8s_common import (
    fmt_bytes,
    list_kinds,
    meta,
    name_of,
    namespace_of,
)
from tools._k8s_events import summarize_events
from tools._toolkit import ago, check_namespace, cut, finish
from tools.context import ToolContext
from tools.registry import tool
from tools.sources.base import KubeObject

DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
USED, CAPACITY = "kubelet_volume_stats_used_bytes", "kubelet_volume_stats_capacity_bytes"
FULL = 0.9  # a volume this full is flagged: databases fail writes well before 100%
USAGE_WINDOW = timedelta(hours=1)  # "an hour ago" beside the latest value: filling or full


def _where(arguments: dict[str, Any]) -> str:
    return arguments.get("namespace") or "all namespaces"


@tool(describe=lambda a: f"Checking volume claims in {_where(a)}")
async def k8s_list_volume_claims(
    ctx: ToolContext, namespace: str | None = None, workload: str | None = None
) -> dict[str, Any]:
    """List PersistentVolumeClaims with their phase, the StorageClass each names (whether it
    exists, its provisioner), size, the pods using them, their warning events and how full
    each volume is (kubelet_volume_stats used/capacity, when metrics exist), plus each
    StatefulSet's volumeClaimTemplates and the class they name. Problems first.

    Args:
        namespace: Namespace to list; omit for all namespaces.
        workload: Only the claims of this StatefulSet, Deployment or pod (name prefix).
    """
    check_namespace(ctx, namespace)
    claims, sets, pods, events = await list_kinds(
        ctx, namespace, "PersistentVolumeClaim", "StatefulSet", "Pod", "Event")
    (classes,) = await list_kinds(ctx, None, "StorageClass")
    by_class = {name_of(c): c for c in classes}
    default = next((name_of(c) for c in classes if (meta(c).get("annotations") or {}).get(
        DEFAULT_CLASS) == "true"), None)
    users = _users(pods)
    if workload:
        claims = [c for c in claims if _belongs(c, workload, users)]
        sets = [s for s in sets if name_of(s) == workload]
    usage, usage_note = await _usage(ctx, namespace)
    rows = []
    for claim in claims:
        key = (namespace_of(claim), name_of(claim))
        about = [e for e in events if e.get("type") == "Warning" and namespace_of(e) == key[0]
                 and (e.get("involvedObject") or {}).get("name") == key[1]]
        row = _claim_row(claim, by_class, default, users.get(key, []), usage.get(key), ctx,
                         about, with_namespace=namespace is None)
        rows.append(("problems" not in row, row["name"], row))
    rows.sort(key=lambda item: item[:2])
    result: dict[str, Any] = {"total": len(rows),
                              "with_problems": sum(1 for ok, *_ in rows if not ok),
                              "claims": cut([row for *_, row in rows], 30) or "none"}
    templates = [t for s in sets for t in _templates(s, by_class, default)]
    if templates:
        result["claim_templates"] = cut(templates, 20)
    result["storage_classes"] = [_class_text(c, default) for c in classes] or \
        "none exist in the cluster"
    if usage_note:
        result["usage_note"] = usage_note
    return finish(result, [*claims, *sets, *classes])


def _users(pods: list[KubeObject]) -> dict[tuple[str, str], list[str]]:
    """(namespace, claim) → the pods that mount it."""
    found: dict[tuple[str, str], list[str]] = {}
    for pod in pods:
        for volume in (pod.get("spec") or {}).get("volumes") or []:
            claim = (volume.get("persistentVolumeClaim") or {}).get("claimName")
            if claim:
                found.setdefault((namespace_of(pod), str(claim)), []).append(name_of(pod))
    return found


def _belongs(claim: KubeObject, workload: str, users: dict[tuple[str, str], list[str]]) -> bool:
    """A StatefulSet's claims are `<template>-<set>-<ordinal>`; others are mounted by it."""
    name = name_of(claim)
    mounted = users.get((namespace_of(claim), name), [])
    return f"-{workload}-" in f"-{name}" or any(p.startswith(workload) for p in mounted)


def _claim_row(claim: KubeObject, classes: dict[str, KubeObject], default: str | None,
               pods: list[str], usage: tuple[float, float, float | None] | None,
               ctx: ToolContext, events: list[KubeObject], *,
               with_namespace: bool) -> dict[str, Any]:
    spec, status = claim.get("spec") or {}, claim.get("status") or {}
    phase = str(status.get("phase") or "Pending")
    row: dict[str, Any] = {"name": name_of(claim)}
    if with_namespace:
        row["namespace"] = namespace_of(claim)
    row["phase"] = phase
    problems: list[str] = []
    named = spec.get("storageClassName")
    class_name = named if named is not None else default
    if class_name:
        storage_class = classes.get(class_name)
        shown = class_name + ("" if named is not None else " (the default)")
        if storage_class is None and phase == "Bound":
            row["storage_class"] = f"{shown}: does not exist (any more: the claim is bound)"
        elif storage_class is None:
            row["storage_class"] = f"{shown}: does not exist"
            problems.append(f"StorageClass {class_name} does not exist: the claim cannot be "
                            "provisioned")
        else:
            row["storage_class"] = f"{shown} (provisioner {storage_class.get('provisioner')})"
    else:
        row["storage_class"] = "none named and no default class"
        if phase == "Pending" and not spec.get("volumeName"):
            problems.append("no StorageClass and no default class: only a matching "
                            "pre-made PersistentVolume can bind it")
    requested = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    row["size"] = str((status.get("capacity") or {}).get("storage") or requested or "?")
    if spec.get("accessModes"):
        row["access"] = ",".join(spec["accessModes"])
    if pods:
        row["used_by"] = cut(sorted(pods), 5)
    if phase == "Pending":
        problems.append(f"Pending for {ago(meta(claim).get('creationTimestamp'), ctx.now)}: "
                        "pods mounting it cannot start")
    elif phase == "Lost":
        problems.append("Lost: its PersistentVolume is gone")
    if usage is not None:
        used, capacity, earlier = usage
        ratio = used / capacity if capacity else 0.0
        row["usage"] = f"{fmt_bytes(used)} of {fmt_bytes(capacity)} ({ratio:.0%})" + (
            f", {earlier:.0%} an hour ago" if earlier is not None else "")
        if ratio >= FULL:
            problems.append(f"volume {ratio:.0%} full: writes fail when it fills")
    if events:
        row["events"] = summarize_events(events, ctx.now, 3)
    if problems:
        row["problems"] = problems
    return row


def _templates(statefulset: KubeObject, classes: dict[str, KubeObject],
               default: str | None) -> list[dict[str, Any]]:
    """Each volumeClaimTemplate of a StatefulSet: the class its new claims will name."""
    spec = statefulset.get("spec") or {}
    rows = []
    for template in spec.get("volumeClaimTemplates") or []:
        named = (template.get("spec") or {}).get("storageClassName")
        class_name = named if named is not None else default
        row: dict[str, Any] = {"statefulset": name_of(statefulset), "template": name_of(template),
                               "replicas": spec.get("replicas", 1),
                               "storage_class": class_name or "none (no default class)"}
        size = (((template.get("spec") or {}).get("resources") or {}).get("requests") or {}).get(
            "storage")
        if size:
            row["size"] = str(size)
        if class_name and class_name not in classes:
            row["problem"] = (f"StorageClass {class_name} does not exist: claims for new "
                              "replicas stay Pending")
        rows.append(row)
    return rows


def _class_text(storage_class: KubeObject, default: str | None) -> str:
    name = name_of(storage_class)
    text = f"{name}: {storage_class.get('provisioner')}"
    if storage_class.get("volumeBindingMode"):
        text += f", {storage_class['volumeBindingMode']}"
    return text + (" (default)" if name == default else "")


async def _usage(ctx: ToolContext, namespace: str | None) -> tuple[
        dict[tuple[str, str], tuple[float, float, float | None]], str | None]:
    """(namespace, claim) → (used bytes, capacity bytes, used ratio an hour ago), from the
    kubelet's volume stats; a note instead when no metric store answers (the claims are
    still worth showing)."""
    if ctx.sources.metrics is None:
        return {}, "no metric store: volume usage unknown"
    matchers = {"namespace": namespace} if namespace else {}
    start = ctx.now.replace(microsecond=0)
    from_time = start - USAGE_WINDOW
    try:
        used = await ctx.metrics.series(USED, matchers, from_time, start, step_seconds=60)
        capacity = await ctx.metrics.series(CAPACITY, matchers, from_time, start,
                                            step_seconds=60)
    except BackendError as exc:
        return {}, f"volume usage unavailable: {exc}"
    sizes = {_claim_key(s.labels): s.samples[-1].value for s in capacity if s.samples}
    found: dict[tuple[str, str], tuple[float, float, float | None]] = {}
    for series in used:
        key = _claim_key(series.labels)
        if not series.samples or key not in sizes or not ctx.allows_namespace(key[0]):
            continue
        first, last = series.samples[0], series.samples[-1]
        earlier = first.value / sizes[key] if sizes[key] and first is not last else None
        found[key] = (last.value, sizes[key], earlier)
    if not used:
        return {}, f"no {USED} series: volume usage unknown"
    return found, None


def _claim_key(labels: Any) -> tuple[str, str]:
    return str(labels.get("namespace", "")), str(labels.get("persistentvolumeclaim", ""))

