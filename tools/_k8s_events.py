"""Kubernetes events: the cluster's own account of what went wrong, grouped and counted.

Events are the noisiest Kubernetes output (one per probe failure, per back-off, per pull);
grouped by reason and object, with the pods of one owner together and routine Normal
events folded by reason, an hour of them fits in a few hundred tokens.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import Field

from tools._k8s_common import meta, namespace_of, visible, when
from tools._toolkit import ago, check_namespace, cut, finish, shorten
from tools.context import ToolContext
from tools.registry import tool
from tools.sources.base import KubeObject


def event_times(event: KubeObject) -> tuple[str, str]:
    """(first, last) time of an Event, whichever API version wrote it."""
    series = event.get("series") or {}
    last = (event.get("lastTimestamp") or series.get("lastObservedTime") or event.get("eventTime")
            or meta(event).get("creationTimestamp") or "")
    first = event.get("firstTimestamp") or event.get("eventTime") or last
    return str(first), str(last)


def summarize_events(events: Sequence[KubeObject], now: datetime, limit: int,
                     *, with_namespace: bool = False) -> list[Any]:
    """Events grouped: Warnings by reason and object, the pods of one owner together (and
    any reason seen on `_MANY` owners or more in one row); routine Normal events by reason
    alone. Warnings first, then the most recent.

    `object` is always a real "Kind/name" (the latest one of the group) and
    `similar_objects` counts the others, so a row can be matched to its owner. Its
    `message` is the group's latest, unless that is a bare "Error: X" and another says why.
    """
    groups: dict[tuple[str, str, str, str, str], dict[str, Any]] = {}
    for event in events:
        involved = event.get("involvedObject") or event.get("regarding") or {}
        kind, name = str(involved.get("kind", "")), str(involved.get("name", ""))
        type_ = str(event.get("type", "Normal"))
        family = name.rsplit("-", 1)[0] if kind == "Pod" and "-" in name else name
        key = (namespace_of(event), kind if type_ == "Warning" else "",
               family if type_ == "Warning" else "", str(event.get("reason", "")), type_)
        first, last = event_times(event)
        count = int(event.get("count") or (event.get("series") or {}).get("count") or 1)
        group = groups.setdefault(key, {"first": first, "last": last, "count": 0,
                                        "objects": set(), "message": "", "latest": "",
                                        "why": "", "why_at": ""})
        group["count"] += count
        group["objects"].add(f"{kind}/{name}")
        group["first"] = min(group["first"], first)
        message = str(event.get("message") or event.get("note") or "")
        if last >= group["last"] or not group["message"]:
            group["last"] = max(group["last"], last)
            group["message"] = message
            group["latest"] = f"{kind}/{name}"
        if message and not _BARE.match(message) and last >= group["why_at"]:
            group["why"], group["why_at"] = message, last  # the latest line that says why
    rows = []
    for (namespace, _, _, reason, type_), group in _merge_many(groups).items():
        warning = type_ == "Warning"
        row: dict[str, Any] = {"type": type_, "reason": reason, "object": group["latest"]}
        if len(group["objects"]) > 1:
            row["similar_objects"] = len(group["objects"]) - 1
        if with_namespace:
            row["namespace"] = namespace
        row |= {"count": group["count"], "last_seen": when(group["last"], now),
                "message": shorten(_UID.sub("", str(group["why"] or group["message"])),
                                   320 if warning else 120,
                                   ends=True)}
        if warning and group["count"] > 1 and group["first"] != group["last"]:
            row["first_seen"] = when(group["first"], now)
        rows.append((not warning, _negated(group["last"]), row))
    rows.sort(key=lambda item: (item[0], item[1]))
    return cut([row for _, _, row in rows], limit)


_MANY = 3
# The kubelet's bare status lines ("Error: ImagePullBackOff", "Error: ErrImagePull"), which it
# repeats far more often than the one of the same reason that says why ("Failed to pull
# image ...: no space left on device"): a group shows the one that says why.
_BARE = re.compile(r"^Error: \w+$")


def _merge_many(
    groups: dict[tuple[str, str, str, str, str], dict[str, Any]],
) -> dict[tuple[str, str, str, str, str], dict[str, Any]]:
    """One row for a Warning reason that hit many owners (evictions across a node): the
    reason and its extent matter, not each pod. The newest group gives the row its place."""
    by_reason: dict[str, list[tuple[str, str, str, str, str]]] = {}
    for key in groups:
        if key[4] == "Warning":
            by_reason.setdefault(key[3], []).append(key)
    for keys in by_reason.values():
        if len(keys) < _MANY:
            continue
        keys.sort(key=lambda k: groups[k]["last"])
        merged = groups[keys[-1]]
        for key in keys[:-1]:
            group = groups.pop(key)
            merged["count"] += group["count"]
            merged["objects"] |= group["objects"]
            merged["first"] = min(merged["first"], group["first"])
            if group["why_at"] > merged["why_at"]:
                merged["why"], merged["why_at"] = group["why"], group["why_at"]
    return groups


def routine_events(events: Sequence[KubeObject], now: datetime) -> str | None:
    """Normal events of one object in a line: "Pulled ×14, Started ×13; last 3m ago"."""
    counts: Counter[str] = Counter()
    last = ""
    for event in events:
        if event.get("type") == "Warning":
            continue
        counts[str(event.get("reason", ""))] += int(event.get("count") or 1)
        last = max(last, event_times(event)[1])
    if not counts:
        return None
    listed = ", ".join(f"{reason} ×{n}" if n > 1 else reason for reason, n in counts.most_common())
    return f"{listed}; last {ago(last, now)} ago"


_UID = re.compile(r"\(?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\)?")


def _negated(stamp: str) -> tuple[int, ...]:
    """Sort key for newest first on RFC 3339 strings."""
    return tuple(-ord(c) for c in stamp)


def _events_line(arguments: dict[str, Any]) -> str:
    target = arguments.get("object_name") or arguments.get("namespace") or "all namespaces"
    return f"Reading events of {target}"


@tool(describe=_events_line)
async def k8s_events(
    ctx: ToolContext,
    namespace: str | None = None,
    object_kind: str | None = None,
    object_name: str | None = None,
    reason: str | None = None,
    type: Literal["Warning", "Normal"] | None = None,
    limit: Annotated[int, Field(ge=1, le=100)] = 12,
) -> dict[str, Any]:
    """Recent Kubernetes events (the API server keeps about an hour) grouped by object and
    reason, with counts, first/last seen and the latest message; Warnings first.

    Args:
        namespace: Namespace to read; omit for all namespaces.
        object_kind: Only events about this kind of object: Pod, ReplicaSet, Deployment, Node, ...
        object_name: Only events about this object; a workload name also matches its pods
            and ReplicaSets (names starting with the name and a dash).
        reason: Only this reason, e.g. BackOff, FailedScheduling, Unhealthy, FailedCreate, Evicted.
        type: Only Warning or only Normal events.
        limit: Most groups to return.
    """
    check_namespace(ctx, namespace)
    fields = {k: v for k, v in (("involvedObject.kind", object_kind), ("reason", reason),
                                ("type", type)) if v}
    events = visible(ctx, await ctx.cluster.list_objects("Event", namespace,
                                                         field_selector=fields or None))
    if object_name:
        events = [e for e in events if _about(e, object_name)]
    reasons: Counter[tuple[str, str]] = Counter()
    objects: dict[tuple[str, str], set[str]] = {}
    for event in events:
        key = (str(event.get("type", "Normal")), str(event.get("reason", "")))
        reasons[key] += int(event.get("count") or 1)
        involved = event.get("involvedObject") or {}
        objects.setdefault(key, set()).add(f"{involved.get('kind')}/{involved.get('name')}")
    grouped = summarize_events(events, ctx.now, limit,
                               with_namespace=namespace is None)
    result: dict[str, Any] = {"namespace": namespace or "all", "total": sum(reasons.values())}
    if grouped and "omitted" in grouped[-1]:  # the overview says what the cut list leaves out
        result["by_reason"] = cut(
            [{"type": t, "reason": r, "count": n, "objects": len(objects[(t, r)])}
             for (t, r), n in sorted(reasons.items(),
                                     key=lambda kv: (kv[0][0] != "Warning", -kv[1]))], 10)
    result["events"] = grouped
    if not events:
        result["note"] = "no event matches; events older than about an hour are gone"
    return finish(result, events)


def _about(event: KubeObject, name: str) -> bool:
    involved = str((event.get("involvedObject") or {}).get("name", ""))
    return involved == name or involved.startswith(name + "-")
