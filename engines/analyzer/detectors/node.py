"""node_failure: a node NotReady or under memory, disk or PID pressure, with evictions.

Signals: the node's Ready condition, pressure conditions, its warning events (NodeNotReady,
EvictionThresholdMet, ...), and pods evicted or stuck on it. The culprit is the Node, with
an empty namespace; the workloads whose pods it hosts are what it "affects", which is how
the ranking links a node to the service in the report. Pods that cannot be scheduled
because the node carries the taint its condition brings (node.kubernetes.io/pid-pressure,
...) are affected too: the node's fault, not a scheduling constraint, keeps them Pending.
"""

from __future__ import annotations

import re

from engines.analyzer.candidates import Candidate, Clue
from engines.analyzer.detectors import _common as t
from engines.analyzer.detectors.exhaustion import OWN_LIMIT
from engines.analyzer.facts import Facts, Ref
from engines.analyzer.scope import Scope

PRESSURES = ("MemoryPressure", "DiskPressure", "PIDPressure", "NetworkUnavailable")
NODE_REASONS = ("NodeNotReady", "NodeNotSchedulable", "EvictionThresholdMet", "NodeHasDiskPressure",
                "NodeHasInsufficientMemory", "NodeHasInsufficientPID", "SystemOOM",
                "KubeletNotReady", "Rebooted", "NodeStatusUnknown", "FreeDiskSpaceFailed",
                "ImageGCFailed", "ContainerGCFailed")
EVICTION = ("The node was low on resource", "evicted", "Evicted", "node is not ready",
            "NodeNotReady", "node(s) had condition", "Taint manager")
# Any other condition k8s_list_nodes lists as True ("ReadonlyFilesystem: ...", from
# node-problem-detector): a fault of the node itself.
_CONDITION = re.compile(r"([A-Z][A-Za-z]+): ")
# The taints the node lifecycle controller sets for a condition (a cordon is not a fault).
CONDITION_TAINTS = {"node.kubernetes.io/memory-pressure": "MemoryPressure",
                    "node.kubernetes.io/disk-pressure": "DiskPressure",
                    "node.kubernetes.io/pid-pressure": "PIDPressure",
                    "node.kubernetes.io/network-unavailable": "NetworkUnavailable",
                    "node.kubernetes.io/not-ready": "NotReady",
                    "node.kubernetes.io/unreachable": "NotReady"}


def condition_taints(message: str) -> list[str]:
    """The condition taints a scheduler message names ("had untolerated taint
    {node.kubernetes.io/pid-pressure: }")."""
    low = message.lower()
    return [taint for taint in CONDITION_TAINTS if taint in low]


def nodes_under(facts: Facts, taint: str) -> list[str]:
    """The known nodes that carry this condition taint or report its condition."""
    condition = CONDITION_TAINTS[taint].lower()
    return sorted(name for name, node in facts.nodes.items()
                  if any(taint in mark.lower() for mark in node.taints)
                  or (node.ready != "True" if condition == "notready"
                      else any(condition in problem.lower() for problem in node.problems)))


def detect(facts: Facts, scope: Scope) -> list[Candidate]:
    found: dict[str, Candidate] = {}

    def candidate(name: str) -> Candidate:
        return found.setdefault(name, Candidate("node_failure", Ref("Node", "", name)))

    for name, node in facts.nodes.items():
        if node.ready != "True":
            candidate(name).add(0.65, f"node {name} is NotReady ({node.ready})",
                                ("NotReady since", f"ready: '{node.ready}'"), node.source,
                                (t.NODES,), "notready")
        for problem in node.problems:
            kind = t.phrase_in(problem, PRESSURES) or (
                match.group(1) if (match := _CONDITION.match(problem)) else None)
            if kind:
                candidate(name).add(0.5, f"node {name} reports {kind}", (problem[:60], kind),
                                    node.source, (t.NODES,), f"pressure-{kind}")
    for event in t.recent_events(facts):
        if event.kind == "Node" and (event.reason in NODE_REASONS or event.type == "Warning"):
            if event.name in found or event.reason in NODE_REASONS:
                candidate(event.name).add(0.3, f"{event.reason} on node {event.name}",
                                          (event.message[:60], event.reason), event.source,
                                          t.EVENT_TOOLS, f"node-event-{event.reason}")
        elif event.reason in ("Evicted", "Evicting", "TaintManagerEviction", "NodeNotReady") or (
                event.reason == "Preempting" and "node" in event.message.lower()):
            if (host := _node_of(facts, event.namespace, event.name)) is None or t.phrase_in(
                    event.message, OWN_LIMIT):
                continue  # unknown where, or the pod outgrew its own limit (exhaustion.py)
            entry = candidate(host)
            entry.add(0.35, f"pods evicted from {host}: {event.message[:80]}",
                      (event.message[:60], event.reason), event.source, t.EVENT_TOOLS, "eviction")
            if (ref := t.event_workload(facts, event)) is not None:
                entry.affects += (ref,)
    _blocked_pods(facts, found)
    for pod in facts.pods.values():
        if not pod.node:
            continue
        troubled = (pod.status in ("Evicted", "Unknown", "Terminating", "NodeLost") or (
            pod.message and t.phrase_in(pod.message, EVICTION))) and not (
            pod.message and t.phrase_in(pod.message, OWN_LIMIT))
        if troubled:
            entry = candidate(pod.node)
            entry.add(0.3, f"pod {pod.name} on {pod.node} is {pod.status}", (pod.name, pod.status),
                      pod.source, (t.PODS,), "pod-on-node")
    for name, entry in found.items():
        entry.affects = tuple(dict.fromkeys((*entry.affects, *t.hosted(facts, name))))
        clock = any(re.search(r"ntp|clock|time ?sync", c.topic, re.IGNORECASE)
                    for c in entry.clues)
        entry.fix = (f"Bring node {name}'s clock back in sync (restart its NTP/chrony service, "
                     "or cordon, drain and replace it); tokens and certificates checked there "
                     "fail while its time is off." if clock else
                     f"Drain and replace node {name} (or free the resource under pressure); "
                     "make sure its workloads run with enough replicas spread over other nodes.")
        entry.follow(t.NODES, {"name": name}, f"read node {name}'s conditions")
        entry.follow(t.PODS, {"node": name}, f"see what runs on {name}")
    return [c for c in found.values() if c.clues]


def _blocked_pods(facts: Facts, found: dict[str, Candidate]) -> None:
    """Workloads left Pending by the taint of a faulty node: affected by that node."""
    for event in t.recent_events(facts, reason="FailedScheduling"):
        ref = t.event_workload(facts, event)
        for taint in condition_taints(event.message):
            for name in nodes_under(facts, taint):
                if (entry := found.get(name)) is None or not entry.clues or ref is None:
                    continue
                entry.affects += (ref,)
                entry.clues.append(Clue(0.2, f"{ref.name} cannot be scheduled: {name} carries "
                                        f"the taint {taint}", (taint, "FailedScheduling"),
                                        event.source, t.EVENT_TOOLS, "node-blocks-pods"))


def _node_of(facts: Facts, namespace: str, pod: str) -> str | None:
    known = facts.pods.get((namespace, pod))
    return known.node if known is not None and known.node else None
