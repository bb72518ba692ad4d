"""Two limits that look healthy from afar: an autoscaler that scales, but one pod per long
period (behavior.scaleUp), and a Service that keeps callers in their zone (topology-aware
routing) while its pods are spread unevenly over the zones."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.tools._tooling import call, context
from tests.tools.test_network_peers import _pod_on, _scenario, _with, _zoned


def _hpa(name: str, policies: list[dict[str, Any]], cpu_now: int, limited: bool) -> dict[str, Any]:
    conditions = [{"type": "ScalingLimited", "status": "True", "reason": "ScaleUpLimited",
                   "message": "the desired replica count is increasing faster than the "
                              "maximum scale rate"}] if limited else []
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": name, "namespace": "lab"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": name},
                     "minReplicas": 3, "maxReplicas": 40,
                     "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                         "type": "Utilization", "averageUtilization": 60}}}],
                     "behavior": {"scaleUp": {"selectPolicy": "Max", "policies": policies}}},
            "status": {"currentReplicas": 9, "desiredReplicas": 9, "conditions": conditions,
                       "currentMetrics": [{"type": "Resource", "resource": {
                           "name": "cpu", "current": {"averageUtilization": cpu_now}}}]}}


async def test_a_scale_up_policy_that_holds_an_autoscaler_back_is_a_problem(
        tmp_path: Path) -> None:
    """One pod per 300 s, ScaleUpLimited and CPU three times its target, far below
    maxReplicas: shown with its rate and a problem; the same rate with the metric under
    target, or several policies, is only shown."""
    one_pod = [{"type": "Pods", "value": 1, "periodSeconds": 300}]
    several = [{"type": "Pods", "value": 4, "periodSeconds": 60},
               {"type": "Percent", "value": 100, "periodSeconds": 60}]
    folder = _with(_scenario(tmp_path), _hpa("push", one_pod, 178, True),
                   _hpa("calm", one_pod, 40, False), _hpa("burst", several, 50, False))
    rows = {r["name"]: r for r in (await call(context(folder), "k8s_list_autoscalers",
                                              namespace="lab"))["autoscalers"]}
    assert rows["push"]["scale_up"] == "1 pod per 300s"
    assert any("held to 1 pod per 300s (behavior.scaleUp)" in p
               for p in rows["push"]["problems"]), rows["push"]
    assert "problems" not in rows["calm"]
    assert rows["burst"]["scale_up"] == "4 pods per 60s; 100% per 60s (Max of)"


def _routed(name: str, annotations: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": "lab", "annotations": annotations},
            "spec": {"selector": {"app": "intake"}, "ports": [{"port": 443}]}}


async def test_zone_kept_routing_over_pods_spread_unevenly_is_a_problem(tmp_path: Path) -> None:
    """topology-mode Auto with three pods in zone-a and one in zone-c: the one pod takes
    all of zone-c's callers. Without the annotation the same spread is no problem."""
    nodes = [_zoned(f"n{i}", f"zone-{'abc'[i % 3]}") for i in range(6)]
    pods = [_pod_on("intake-1", "n0"), _pod_on("intake-2", "n3"), _pod_on("intake-3", "n0"),
            _pod_on("intake-4", "n1"), _pod_on("intake-5", "n4"), _pod_on("intake-6", "n2")]
    folder = _with(_scenario(tmp_path), *nodes, *pods,
                   _routed("intake", {"service.kubernetes.io/topology-mode": "Auto"}),
                   _routed("intake-plain", {}))
    rows = {s["name"]: s for s in (await call(context(folder), "k8s_list_services",
                                              namespace="lab"))["services"]}
    problems = rows["intake"]["problems"]
    assert any("uneven (zone-a 3, zone-b 2, zone-c 1): the 1 pod(s) in zone-c" in p
               for p in problems), problems
    assert not any("topology" in p for p in rows["intake-plain"].get("problems", []))
