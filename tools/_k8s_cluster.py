"""Kubernetes tools about the cluster around the workloads: events, nodes, any object."""

from __future__ import annotations

import asyncio
from typing import Any

from engines.errors import ToolError
from tools._k8s_common import (
    condition,
    fmt_bytes,
    fmt_cpu,
    meta,
    name_of,
    namespace_of,
    quantity,
    when,
)
from tools._k8s_events import summarize_events
from tools._toolkit import ago, check_namespace, cut, finish, shorten
from tools.context import ToolContext
from tools.redact import redact_env
from tools.registry import tool
from tools.sources.base import KubeObject


@tool(describe=lambda a: f"Checking node {a['name']}" if a.get("name") else "Checking nodes")
async def k8s_list_nodes(
    ctx: ToolContext, name: str | None = None, problems_only: bool = False
) -> dict[str, Any]:
    """List nodes with readiness, pressure conditions (memory, disk, PID) and any other
    condition that is True (node-problem-detector's: a read-only filesystem, a kernel
    deadlock, a restarting kubelet), cordons, taints, allocatable cpu/memory, what the pods
    on them request (share of allocatable) and their recent warning events. Problem nodes
    first.

    Args:
        name: Only this node.
        problems_only: Only nodes that are not Ready, report a fault condition or are
            cordoned.
    """
    nodes, pods, events = await asyncio.gather(
        ctx.cluster.list_objects("Node"),
        ctx.cluster.list_objects("Pod"),
        ctx.cluster.list_objects("Event", field_selector={"involvedObject.kind": "Node"}),
    )
    if name:
        nodes = [n for n in nodes if name_of(n) == name]
        if not nodes:
            raise ToolError(f"no node named {name!r}")
    by_node: dict[str, list[KubeObject]] = {}
    for pod in pods:
        phase = (pod.get("status") or {}).get("phase")
        node = (pod.get("spec") or {}).get("nodeName")
        if node and phase not in ("Succeeded", "Failed"):
            by_node.setdefault(str(node), []).append(pod)
    rows = []
    for node in nodes:
        row = _node_row(ctx, node, by_node.get(name_of(node), []))
        node_events = [e for e in events if (e.get("involvedObject") or {}).get("name")
                       == name_of(node) and e.get("type") == "Warning"]
        if node_events:
            row["warnings"] = summarize_events(node_events, ctx.now, 3)
        healthy = not row.get("problems")
        if not (problems_only and healthy):
            rows.append((healthy, name_of(node), row))
    rows.sort(key=lambda item: item[:2])
    result = {"total": len(rows), "with_problems": sum(1 for h, *_ in rows if not h),
              "nodes": cut([row for *_, row in rows], 40)}
    return finish(result, [*nodes, *events])


def _node_row(ctx: ToolContext, node: KubeObject, pods: list[KubeObject]) -> dict[str, Any]:
    status, spec = node.get("status") or {}, node.get("spec") or {}
    ready = condition(node, "Ready") or {}
    row: dict[str, Any] = {"name": name_of(node), "ready": ready.get("status", "Unknown")}
    problems = []
    if row["ready"] != "True":
        problems.append(f"NotReady since {when(ready.get('lastTransitionTime'), ctx.now)}: "
                        f"{shorten(str(ready.get('message', ready.get('reason', ''))), 150)}")
    for item in status.get("conditions") or []:
        kind = str(item.get("type") or "")
        if kind != "Ready" and item.get("status") == "True":  # every other condition is a
            # fault when True: the pressures, and node-problem-detector's (ReadonlyFilesystem,
            # KernelDeadlock, FrequentKubeletRestart, ...)
            problems.append(f"{kind}: {shorten(str(item.get('message', item.get('reason'))), 150)}"
                            f" (since {ago(item.get('lastTransitionTime'), ctx.now) or '?'})")
    if spec.get("unschedulable"):
        problems.append("cordoned (unschedulable)")
    roles = [k.split("/", 1)[1] for k in meta(node).get("labels") or {}
             if k.startswith("node-role.kubernetes.io/")]
    if roles:
        row["roles"] = roles
    if taints := spec.get("taints"):
        row["taints"] = [f"{t.get('key')}{'=' + t['value'] if t.get('value') else ''}:"
                         f"{t.get('effect')}" for t in taints]
    allocatable = status.get("allocatable") or {}
    row["allocatable"] = {k: allocatable[k] for k in ("cpu", "memory", "pods") if k in allocatable}
    requested = {"cpu": 0.0, "memory": 0.0}
    for pod in pods:
        for container in (pod.get("spec") or {}).get("containers") or []:
            asked = (container.get("resources") or {}).get("requests") or {}
            for resource in requested:
                requested[resource] += quantity(asked.get(resource)) or 0.0
    shares = {}
    for resource, total in requested.items():
        capacity = quantity(allocatable.get(resource))
        shown = fmt_cpu(total) if resource == "cpu" else fmt_bytes(total)
        if capacity:
            shown = f"{shown} ({total / capacity:.0%})"
            if total / capacity > 0.9:
                problems.append(f"{resource} requests at {total / capacity:.0%} of allocatable")
        shares[resource] = shown
    row["requested"] = shares
    row["pods"] = len(pods)
    if version := (status.get("nodeInfo") or {}).get("kubeletVersion"):
        row["kubelet"] = version
    row["age"] = ago(meta(node).get("creationTimestamp"), ctx.now)
    if problems:
        row["problems"] = problems
    return row


_NOISE = ("managedFields", "resourceVersion", "uid", "selfLink", "generation")
_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


@tool(describe=lambda a: f"Reading {a.get('kind')} "
                        f"{a['namespace'] + '/' if a.get('namespace') else ''}{a.get('name')}")
async def k8s_get_object(
    ctx: ToolContext, kind: str, name: str, namespace: str | None = None
) -> dict[str, Any]:
    """Read one Kubernetes object as YAML-like data (bookkeeping fields dropped, credentials
    masked, long values cut). For kinds without a dedicated tool: ConfigMap,
    PersistentVolumeClaim, StorageClass, Job, CronJob, Namespace... Secrets are never read.

    Args:
        kind: Object kind, e.g. ConfigMap, PersistentVolumeClaim, Deployment, Node.
        name: Object name.
        namespace: Namespace; omit for cluster-scoped kinds (Node, Namespace, StorageClass).
    """
    if kind.strip().lower() in ("secret", "secrets"):
        raise ToolError("Secrets are never read: Triage has no access to them by design. "
                        "Reference the Secret by name, or ask a human to check it.")
    check_namespace(ctx, namespace)
    obj = await ctx.cluster.get_object(kind, namespace or "", name)
    if obj is None:
        raise ToolError(f"no {kind} {name!r} in {namespace or 'the cluster'}")
    if namespace is None and not ctx.allows_namespace(namespace_of(obj)):
        raise ToolError(f"{kind} {name} is in an excluded namespace")
    return finish(_trim(obj), obj)


def _trim(node: Any, depth: int = 0) -> Any:
    """Drop API bookkeeping, show env as references, cut long lists and strings."""
    if isinstance(node, dict):
        trimmed: dict[str, Any] = {}
        for key, value in node.items():
            if key in _NOISE or key == _LAST_APPLIED:
                continue
            if key == "env" and isinstance(value, list):
                trimmed[key] = cut(redact_env(value), 20)
            elif key == "annotations" and isinstance(value, dict):
                trimmed[key] = {k: shorten(str(v), 200) for k, v in value.items()
                                if k != _LAST_APPLIED}
            else:
                trimmed[key] = _trim(value, depth + 1)
        return trimmed
    if isinstance(node, list):
        return cut([_trim(item, depth + 1) for item in node[:20]] + node[20:], 20)
    if isinstance(node, str) and len(node) > 1500:
        return node[:1500] + f"… [{len(node) - 1500} more characters]"
    return node
