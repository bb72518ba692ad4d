"""Kubernetes admission evidence: the LimitRanges that shaped (or refused) a workload's pods.

A LimitRange acts where nobody looks: a workload that declares no limits gets the
namespace's *default* ones at admission (and is throttled or OOM-killed by numbers it never
wrote), and one that declares more than the *max* gets no pod at all. The workload's spec
looks innocent either way; the facts that decide are the namespace's LimitRanges beside
what the template declares and what the admitted pod carries, with the
`kubernetes.io/limit-ranger` annotation the admission plugin leaves on the pods it changed.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from tools._k8s_common import (
    fmt_quantity,
    last_termination,
    list_kinds,
    meta,
    name_of,
    quantity,
    termination_text,
)
from tools._k8s_events import summarize_events
from tools._k8s_templates import Workload, containers_of, find_workload
from tools._toolkit import check_namespace, finish, shorten
from tools.context import ToolContext
from tools.registry import tool
from tools.sources.base import KubeObject

LIMIT_RANGER = "kubernetes.io/limit-ranger"
_BOUNDS = ("max", "min", "maxLimitRequestRatio")
_REFUSAL_WORDS = ("limitrange", "maximum", "minimum", "limit to request ratio")


@tool(describe="Checking the LimitRanges that apply to {namespace}/{pod}")
async def k8s_pod_limit_ranges(ctx: ToolContext, namespace: str, pod: str) -> dict[str, Any]:
    """Show the LimitRanges of a pod's namespace (default, defaultRequest, max, min) beside
    each container's requests and limits as its workload declares them and as admission
    set them, the pod's kubernetes.io/limit-ranger annotation, which values came from a
    LimitRange default, which break a max or min, and the pods refused for it.

    Args:
        namespace: The pod's namespace.
        pod: Pod name, or a workload name (Deployment, StatefulSet, Job, CronJob...); a
            workload with no pod at all is read from its template.
    """
    check_namespace(ctx, namespace)
    workload = await find_workload(ctx, namespace, pod)
    ranges, events = await list_kinds(ctx, namespace, "LimitRange", "Event")
    admitted = workload.pods[0] if workload.pods else None
    result: dict[str, Any] = {}
    if workload.note:
        result["note"] = workload.note
    result["workload"] = workload.ref
    result["pod"] = name_of(admitted) if admitted else "none exists"
    result["limit_ranges"] = [_range_row(r) for r in ranges] or "none in the namespace"
    if admitted is not None:
        annotation = (meta(admitted).get("annotations") or {}).get(LIMIT_RANGER)
        result["limit_ranger_annotation"] = shorten(str(annotation), 300) if annotation \
            else "absent: admission changed no resource of this pod"
    containers, findings = _compare(workload, admitted, ranges, ctx.now)
    result["containers"] = containers
    refused = [e for e in events if e.get("type") == "Warning" and _about(e, workload)
               and any(w in str(e.get("message", "")).lower() for w in _REFUSAL_WORDS)]
    if refused:
        result["refusals"] = summarize_events(refused, ctx.now, 4)
        findings.append(f"{len(refused)} warning event(s) refused pods of {workload.ref} "
                        "citing a LimitRange bound")
    result["findings"] = findings or ["no LimitRange changed or bounds this workload's "
                                      "resources"]
    return finish(result, [workload.obj, *ranges, *refused] + ([admitted] if admitted else []))


def _range_row(limit_range: KubeObject) -> dict[str, Any]:
    """One LimitRange as `{name, Container: {default: "cpu 500m, memory 128Mi", ...}}`."""
    row: dict[str, Any] = {"name": name_of(limit_range)}
    for item in (limit_range.get("spec") or {}).get("limits") or []:
        shown = {key: _amounts(item[key]) for key in ("default", "defaultRequest", *_BOUNDS)
                 if item.get(key)}
        row[str(item.get("type", "Container"))] = shown
    return row


def _amounts(values: dict[str, Any]) -> str:
    return ", ".join(f"{resource} {value}" for resource, value in sorted(values.items()))


def _compare(workload: Workload, admitted: KubeObject | None, ranges: list[KubeObject],
             now: datetime) -> tuple[list[dict[str, Any]], list[str]]:
    """Each container's declared and admitted resources, and what the ranges did to them."""
    admitted_specs = {c.get("name"): c for c in containers_of((admitted or {}).get("spec") or {})}
    statuses = {s.get("name"): s for s in ((admitted or {}).get("status") or {}).get(
        "containerStatuses") or []}
    rows: list[dict[str, Any]] = []
    findings: list[str] = []
    totals: dict[str, dict[str, float]] = {"limits": {}, "requests": {}}
    for container in containers_of(workload.template):
        name = str(container.get("name"))
        declared = _resources(container)
        row: dict[str, Any] = {"name": name, "declared": _shown(declared) or "none"}
        if admitted is not None:
            effective = _resources(admitted_specs.get(name) or {})
            row["admitted"] = _shown(effective) or "none"
        else:
            effective = _predicted(declared, ranges)
            if effective != declared:
                row["would_be_admitted_as"] = _shown(effective)
        supplied: dict[str, list[str]] = {}  # the LimitRange field → the values it gave
        for (section, resource), value in sorted(effective.items()):
            totals[section][resource] = totals[section].get(resource, 0.0) + value
            if (section, resource) not in declared:
                source = _default_source(ranges, section, resource, value)
                if source:
                    supplied.setdefault(source, []).append(
                        f"{section}.{resource} {fmt_quantity(resource, value)}")
        findings += [f"{name}: {', '.join(values)} from LimitRange {source}, not declared "
                     f"by the {workload.kind}" for source, values in supplied.items()]
        findings += _bound_breaks(name, effective, ranges, "Container")
        status = statuses.get(name) or {}
        if term := last_termination(status):
            row["last_exit"] = termination_text(term, now)
        rows.append(row)
    pod_total = {(s, r): v for s, values in totals.items() for r, v in values.items()}
    findings += _bound_breaks("the pod", pod_total, ranges, "Pod")
    return rows, list(dict.fromkeys(findings))


Amounts = dict[tuple[str, str], float]  # (requests|limits, resource) → number


def _resources(container: dict[str, Any]) -> Amounts:
    found: Amounts = {}
    for section in ("requests", "limits"):
        for resource, value in ((container.get("resources") or {}).get(section) or {}).items():
            number = quantity(value)
            if number is not None:
                found[(section, str(resource))] = number
    return found


def _shown(amounts: Amounts) -> dict[str, str]:
    shown: dict[str, list[str]] = {}
    for (section, resource), value in sorted(amounts.items()):
        shown.setdefault(section, []).append(f"{resource} {fmt_quantity(resource, value)}")
    return {section: ", ".join(parts) for section, parts in shown.items()}


def _items(ranges: list[KubeObject], kind: str) -> list[tuple[str, dict[str, Any]]]:
    return [(name_of(r), item) for r in ranges
            for item in (r.get("spec") or {}).get("limits") or []
            if str(item.get("type", "Container")) == kind]


def _defaults(item: dict[str, Any]) -> dict[tuple[str, str], tuple[float, str]]:
    """The defaults a Container item applies, completed as the API server completes a
    stored LimitRange: a max stands in for a missing default limit; a missing
    defaultRequest is the default limit, else the min. (section, resource) → (value, why)."""
    def read(key: str) -> dict[str, float]:
        return {str(r): n for r, v in (item.get(key) or {}).items()
                if (n := quantity(v)) is not None}

    limits = {r: (n, "max") for r, n in read("max").items()}
    limits |= {r: (n, "default") for r, n in read("default").items()}
    requests = {r: (n, "min (with no defaultRequest, the min is the default request)")
                for r, n in read("min").items()}
    requests |= {r: (n, f"{key} (with no defaultRequest, the default limit is also the "
                        "default request)") for r, (n, key) in limits.items()}
    requests |= {r: (n, "defaultRequest") for r, n in read("defaultRequest").items()}
    said = {"max": "max (with no default, the max is the default limit)", "default": "default"}
    return {**{("limits", r): (n, said[key]) for r, (n, key) in limits.items()},
            **{("requests", r): v for r, v in requests.items()}}


def _predicted(declared: Amounts, ranges: list[KubeObject]) -> Amounts:
    """What admission would make of a template (the pod does not exist). The API server
    first gives a request that is not declared the declared limit; the LimitRanger then
    fills what is still missing from the defaults."""
    effective = dict(declared)
    for (section, resource), value in declared.items():
        if section == "limits":
            effective.setdefault(("requests", resource), value)
    for _, item in _items(ranges, "Container"):
        for key, (value, _why) in _defaults(item).items():
            effective.setdefault(key, value)
    return effective


def _default_source(ranges: list[KubeObject], section: str, resource: str,
                    value: float) -> str | None:
    """The LimitRange (and which of its fields) whose default equals an undeclared value."""
    for name, item in _items(ranges, "Container"):
        default = _defaults(item).get((section, resource))
        if default is not None and default[0] == value:
            return f"{name} {default[1]}"
    return None


def _bound_breaks(who: str, amounts: Amounts, ranges: list[KubeObject], kind: str) -> list[str]:
    """Values over a max or under a min of the ranges' items of `kind` (Container, Pod)."""
    broken = []
    for name, item in _items(ranges, kind):
        for bound, over in (("max", True), ("min", False)):
            for resource, limit in (item.get(bound) or {}).items():
                cap = quantity(limit)
                for section in ("limits", "requests"):  # the API names the first only
                    value = amounts.get((section, str(resource)))
                    if cap is None or value is None or (value <= cap if over else value >= cap):
                        continue
                    broken.append(f"{who}: {section}.{resource} {fmt_quantity(resource, value)}"
                                  f" is {'above' if over else 'below'} LimitRange {name} "
                                  f"{kind} {bound} {limit}: such pods are refused")
                    break
        for resource, ratio in (item.get("maxLimitRequestRatio") or {}).items():
            limit_value = amounts.get(("limits", str(resource)))
            request = amounts.get(("requests", str(resource)))
            cap = quantity(ratio)
            if limit_value and request and cap and limit_value / request > cap:
                broken.append(f"{who}: {resource} limit/request {limit_value / request:.1f} "
                              f"is above LimitRange {name} maxLimitRequestRatio {ratio}")
    return broken


def _about(event: KubeObject, workload: Workload) -> bool:
    """An event about the workload or what it creates (its ReplicaSets, Jobs, pods)."""
    involved = str((event.get("involvedObject") or {}).get("name", ""))
    return involved == workload.name or involved.startswith(workload.name + "-")

