"""Faults that hide behind something working: a node whose GPU the kernel lost (the node is
Ready, the pods elsewhere serve), an autoscaler that scales but too slowly for the load,
and a Service that keeps each zone's callers on that zone's few pods."""

from __future__ import annotations

from engines.analyzer.detectors import capacity, kernel, network
from tests.engines.analyzer.helpers import (
    categories,
    event,
    events,
    facts_of,
    obs,
    ranked,
    scope_of,
    signals,
    workload,
    workloads,
)
from tests.engines.analyzer.test_detectors_answers import services

GPU_NODE = "ip-10-4-9-88.us-west-2.compute.internal"
XID = ("kernel: [882211.004512] NVRM: Xid (PCI:0000:00:1e): 79, pid='<unknown>', "
       "name=<unknown>, GPU has fallen off the bus.")


def test_a_lost_gpu_in_a_nodes_own_events_is_that_nodes_failure_with_a_gpu_fix() -> None:
    """node-problem-detector's kernel-monitor event on the Node names it directly; an Xid
    that is only an application fault (13, a bad kernel launch) is not the node's."""
    facts = facts_of(workloads(workload("embedder", "ml")), events(
        event("GPUXidError", f"Node/{GPU_NODE}", XID, namespace="default", count=2),
        event("GPUXidError", "Node/ip-10-4-9-90", "kernel: NVRM: Xid (PCI:0000:00:1e): 13, "
              "Graphics SM Warp Exception", namespace="default")))
    (found,) = kernel.detect(facts, scope_of(facts, "embedder returns CUDA errors"))
    assert (found.category, found.culprit.kind, found.culprit.name) == ("node_failure", "Node",
                                                                        GPU_NODE)
    assert "GPU" in found.fix and "Cordon and drain" in found.fix
    assert any("NVRM: Xid (PCI:0000:00:1e): 79" in needle for c in found.clues
               for needle in c.needles)


def _hpa(problems: list[str], scale_up: str = "1 pod per 300s") -> dict[str, object]:
    return {"name": "dispatcher", "namespace": "push", "target": "Deployment/dispatcher",
            "min": 3, "max": 40, "current": 9, "desired": 9, "at_max": False,
            "metrics": ["cpu 178% / target 60%"], "scale_up": scale_up, "problems": problems}


LIMITED = "ScalingLimited=True ScaleUpLimited: the desired replica count is increasing faster"
HELD = ("below its maximum but held to 1 pod per 300s (behavior.scaleUp) while a metric is "
        "above target")


def test_a_scale_up_policy_that_holds_the_autoscaler_back_is_its_limit() -> None:
    """Far below maxReplicas yet ScaleUpLimited with CPU above target: the policy is the
    limit, and the fix loosens it rather than raising maxReplicas."""
    report = "push notifications arrive minutes late; the dispatcher is scaling"
    facts = facts_of(workloads(workload("dispatcher", "push", ready="9/9")),
                     obs("k8s_list_autoscalers", {"total": 1, "at_max": 0,
                                                  "autoscalers": [_hpa([LIMITED, HELD])]}),
                     signals("push", "dispatcher", cpu={"abnormal": True,
                                                        "why": "CPU per pod rose 3x"}))
    found = ranked(facts, report, capacity.detect(facts, scope_of(facts, report)))
    assert categories(found)[0] == ("autoscaling_limit", "dispatcher")
    assert "Loosen the scale-up policy" in found[0].fix and "1 pod per 300s" in found[0].fix
    calm = facts_of(obs("k8s_list_autoscalers", {"total": 1, "at_max": 0,
                                                 "autoscalers": [_hpa([])]}))
    assert capacity.detect(calm, scope_of(calm, report)) == []


ZONE_KEPT = {"name": "pricing", "namespace": "catalog", "type": "ClusterIP",
             "selector": "app=pricing", "pods": "6 ready of 6 matching",
             "endpoints": {"ready": 6, "not_ready": 0},
             "problems": ["topology-aware routing (service.kubernetes.io/topology-mode: Auto) "
                          "keeps each zone's callers on that zone's ready pods, which are uneven "
                          "(zone-a 3, zone-b 2, zone-c 1): the 1 pod(s) in zone-c take all of "
                          "that zone's traffic"]}


def test_zone_kept_routing_over_an_uneven_spread_is_the_services_fault() -> None:
    report = "only the storefront pods in zone-c time out calling pricing"
    facts = facts_of(workloads(workload("pricing", "catalog"), workload("storefront", "web")),
                     services(ZONE_KEPT))
    (found,) = network.detect(facts, scope_of(facts, report))
    assert categories([found]) == [("network", "pricing")]
    assert "Turn off topology-aware routing" in found.fix
