"""Kubernetes tools about limits on growth: autoscalers, resource quotas, limit ranges."""

from __future__ import annotations

from typing import Any

from tools._k8s_common import (
    fmt_quantity,
    list_kinds,
    name_of,
    namespace_of,
    quantity,
)
from tools._k8s_events import summarize_events
from tools._toolkit import check_namespace, cut, finish, shorten
from tools.context import ToolContext
from tools.registry import tool
from tools.sources.base import KubeObject


def _where(arguments: dict[str, Any]) -> str:
    return arguments.get("namespace") or "all namespaces"


@tool(describe=lambda a: f"Checking autoscalers in {_where(a)}")
async def k8s_list_autoscalers(
    ctx: ToolContext, namespace: str | None = None
) -> dict[str, Any]:
    """List HorizontalPodAutoscalers: target workload, min/max, current and desired replicas,
    whether it sits at its maximum, each metric's current value against its target, its
    scale-up rate policy (behavior.scaleUp), and conditions that limit scaling
    (ScalingLimited, AbleToScale, ScalingActive).

    Args:
        namespace: Namespace to list; omit for all namespaces.
    """
    check_namespace(ctx, namespace)
    (autoscalers,) = await list_kinds(ctx, namespace, "HorizontalPodAutoscaler")
    rows = [_autoscaler_row(hpa, with_namespace=namespace is None) for hpa in autoscalers]
    rows.sort(key=lambda r: (not r.get("at_max"), "problems" not in r, r["name"]))
    result = {"total": len(rows), "at_max": sum(1 for r in rows if r.get("at_max")),
              "autoscalers": cut(rows, 30)}
    return finish(result, autoscalers)


def _autoscaler_row(hpa: KubeObject, *, with_namespace: bool) -> dict[str, Any]:
    spec, status = hpa.get("spec") or {}, hpa.get("status") or {}
    target = spec.get("scaleTargetRef") or {}
    current, desired = status.get("currentReplicas", 0), status.get("desiredReplicas", 0)
    maximum, minimum = spec.get("maxReplicas"), spec.get("minReplicas", 1)
    row: dict[str, Any] = {"name": name_of(hpa)}
    if with_namespace:
        row["namespace"] = namespace_of(hpa)
    row |= {"target": f"{target.get('kind')}/{target.get('name')}", "min": minimum,
            "max": maximum, "current": current, "desired": desired,
            "at_max": maximum is not None and current >= maximum}
    row["metrics"] = _metrics(spec, status)
    if rate := _scale_up_rate(spec):
        row["scale_up"] = rate
    problems = []
    for item in status.get("conditions") or []:
        kind, state = item.get("type"), item.get("status")
        if (kind == "ScalingLimited" and state == "True") or (
            kind in ("AbleToScale", "ScalingActive") and state == "False"
        ):
            problems.append(f"{kind}={state} {item.get('reason', '')}: "
                            f"{shorten(str(item.get('message', '')), 200)}")
    if row["at_max"] and any(_over_target(m) for m in row["metrics"]):
        problems.append("at its maximum while a metric is above target: it cannot add capacity")
    elif rate and any("ScaleUpLimited" in p for p in problems) and any(
            _over_target(m) for m in row["metrics"]):
        problems.append(f"below its maximum but held to {rate} (behavior.scaleUp) while a "
                        "metric is above target: it adds capacity slower than the load grows")
    if problems:
        row["problems"] = problems
    return row


def _metrics(spec: dict[str, Any], status: dict[str, Any]) -> list[str]:
    """Each metric as "cpu 96% / target 70%" (autoscaling/v2, or v1's CPU fields)."""
    if "targetCPUUtilizationPercentage" in spec:
        now = status.get("currentCPUUtilizationPercentage")
        return [f"cpu {now if now is not None else '?'}% / target "
                f"{spec['targetCPUUtilizationPercentage']}%"]
    currents = {_metric_name(m): m for m in status.get("currentMetrics") or []}
    shown = []
    for metric in spec.get("metrics") or []:
        name = _metric_name(metric)
        target = (metric.get(metric.get("type", "").lower()) or {}).get("target") or {}
        current = (currents.get(name, {}).get(metric.get("type", "").lower()) or {}).get(
            "current") or {}
        if "averageUtilization" in target:
            now = current.get("averageUtilization")
            shown.append(f"{name} {now if now is not None else '?'}% / target "
                         f"{target['averageUtilization']}%")
        else:
            key = "averageValue" if "averageValue" in target else "value"
            shown.append(f"{name} {current.get(key, '?')} / target {target.get(key, '?')}")
    return shown


def _scale_up_rate(spec: dict[str, Any]) -> str:
    """The scale-up policies of autoscaling/v2's `behavior`, as "1 pod per 300s" (several
    joined by the selectPolicy that picks among them); "" when the defaults apply."""
    scale_up = (spec.get("behavior") or {}).get("scaleUp") or {}
    policies = [p for p in scale_up.get("policies") or [] if isinstance(p, dict)]
    if not policies:
        return ""
    shown = [f"{p.get('value')}{'%' if p.get('type') == 'Percent' else ' pod'}"
             f"{'s' if p.get('type') == 'Pods' and p.get('value') != 1 else ''} per "
             f"{p.get('periodSeconds')}s" for p in policies]
    joined = f" ({scale_up.get('selectPolicy', 'Max')} of)" if len(shown) > 1 else ""
    return "; ".join(shown) + joined


def _metric_name(metric: dict[str, Any]) -> str:
    body = metric.get(str(metric.get("type", "")).lower()) or {}
    return str(body.get("name") or (body.get("metric") or {}).get("name") or metric.get("type"))


def _over_target(text: str) -> bool:
    try:
        value, target = text.split(" / target ")
        return float(value.split()[-1].rstrip("%")) > float(target.rstrip("%"))
    except ValueError:
        return False


@tool(describe=lambda a: f"Checking quotas in {_where(a)}")
async def k8s_list_quotas(ctx: ToolContext, namespace: str | None = None) -> dict[str, Any]:
    """List ResourceQuotas (used against hard per resource, fullest first, at or near the
    limit flagged), LimitRanges (defaults, min and max per container or pod), and recent
    pod-creation failures that mention a quota or limit. k8s_pod_limit_ranges shows what
    the LimitRanges did to one workload's pods.

    Args:
        namespace: Namespace to list; omit for all namespaces.
    """
    check_namespace(ctx, namespace)
    quotas, ranges, events = await list_kinds(ctx, namespace, "ResourceQuota", "LimitRange",
                                              "Event")
    result: dict[str, Any] = {
        "quotas": cut([_quota_row(q, with_namespace=namespace is None) for q in quotas], 20)
        or "none",
        "limit_ranges": cut([_range_row(r, with_namespace=namespace is None) for r in ranges], 20)
        or "none",
    }
    refused = [e for e in events if e.get("type") == "Warning" and any(
        word in str(e.get("message", "")).lower()
        for word in ("exceeded quota", "forbidden", "limitrange", "maximum", "minimum"))]
    if refused:
        result["refusals"] = summarize_events(refused, ctx.now, 5,
                                              with_namespace=namespace is None)
    return finish(result, [*quotas, *ranges])


def _quota_row(quota: KubeObject, *, with_namespace: bool) -> dict[str, Any]:
    status = quota.get("status") or {}
    hard = status.get("hard") or (quota.get("spec") or {}).get("hard") or {}
    used = status.get("used") or {}
    items = []
    for resource, limit in hard.items():
        cap, taken = quantity(limit), quantity(used.get(resource, 0))
        ratio = taken / cap if cap and taken is not None else None
        item: dict[str, Any] = {"resource": resource,
                                "used": fmt_quantity(resource, taken) or used.get(resource),
                                "hard": fmt_quantity(resource, cap) or str(limit)}
        if ratio is not None:
            item["used_ratio"] = round(ratio, 2)
            if ratio >= 1:
                item["state"] = "at limit: new pods needing it are refused"
            elif ratio >= 0.9:
                item["state"] = "near limit"
        items.append(item)
    items.sort(key=lambda i: -i.get("used_ratio", 0))
    row: dict[str, Any] = {"name": name_of(quota)}
    if with_namespace:
        row["namespace"] = namespace_of(quota)
    row["resources"] = items
    return row


def _range_row(limit_range: KubeObject, *, with_namespace: bool) -> dict[str, Any]:
    row: dict[str, Any] = {"name": name_of(limit_range)}
    if with_namespace:
        row["namespace"] = namespace_of(limit_range)
    row["limits"] = [{k: v for k, v in item.items() if v}
                     for item in (limit_range.get("spec") or {}).get("limits") or []]
    return row
