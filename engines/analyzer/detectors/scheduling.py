"""unschedulable and quota_exceeded: pods that never run because nowhere takes them, or
because the namespace refuses to create them.

unschedulable: pods Pending with PodScheduled=False, FailedScheduling events whose message
says why (insufficient cpu or memory, taints, selectors or affinity, unbound volumes), and
pods that wait for a ReadWriteOnce volume another pod still holds (Multi-Attach).
quota_exceeded: FailedCreate events or ReplicaFailure conditions saying "exceeded quota" or
a LimitRange maximum/minimum, with the quota's used at its hard limit.

Pods refused because a node carries the taint of its own condition (memory, disk or PID
pressure, NotReady) are a symptom of that node's failure (see node.py), not a scheduling
constraint of the workload: such a candidate is demoted when the node's condition is seen.
"""

from __future__ import annotations

from engines.analyzer.candidates import Candidate
from engines.analyzer.detectors import _common as t
from engines.analyzer.detectors.node import condition_taints, nodes_under
from engines.analyzer.facts import Facts, Ref
from engines.analyzer.scope import Scope

QUOTA_WORDS = ("exceeded quota", "limitrange", "maximum cpu", "maximum memory", "minimum cpu",
               "minimum memory", "must specify limits", "must specify requests",
               "maximum ephemeral", "per container is", "per pod is")


def _schedule_fix(ref: Ref, message: str) -> str:
    where = f"{ref.kind} {ref.namespace}/{ref.name}"
    low = message.lower()
    if "insufficient" in low:
        return (f"Lower the cpu/memory requests of {where} to fit the nodes, or add node "
                "capacity (scale the node group).")
    if "taint" in low:
        return (f"Add a toleration for the nodes' taint to {where}, or schedule it on nodes "
                "without that taint.")
    if "affinity" in low or "selector" in low:
        return (f"Fix the nodeSelector/affinity of {where} so it matches labels that existing "
                "nodes carry, or label nodes accordingly.")
    if "multi-attach" in low:
        return (f"{where} mounts a ReadWriteOnce volume that its old pod still holds on another "
                "node: use the Recreate strategy (or maxSurge 0), or a ReadWriteMany volume, "
                "and delete the old pod to let the rollout go on.")
    if "persistentvolumeclaim" in low or "volume" in low:
        return f"Bind the PersistentVolumeClaim that {where} uses (check its StorageClass)."
    return f"Make the pods of {where} schedulable: compare their requests and constraints with " \
           "the nodes."


def detect(facts: Facts, scope: Scope) -> list[Candidate]:
    return _unschedulable(facts) + _quota(facts)


def _unschedulable(facts: Facts) -> list[Candidate]:
    found: dict[Ref, Candidate] = {}
    reasons: dict[Ref, str] = {}
    for event in t.recent_events(facts, reason="FailedScheduling"):
        if t.phrase_in(event.message, QUOTA_WORDS):
            continue
        if (ref := t.event_workload(facts, event)) is None:
            continue
        entry = found.setdefault(ref, Candidate("unschedulable", ref))
        reasons.setdefault(ref, event.message)
        entry.add(0.6, event.message[:160], (event.message[:60], "FailedScheduling"), event.source,
                  t.EVENT_TOOLS, "scheduling-event")
    for event in t.recent_events(facts, reason="FailedAttachVolume"):
        if "multi-attach" not in event.message.lower() or (
                ref := t.event_workload(facts, event)) is None:
            continue  # a ReadWriteOnce volume still held by a pod on another node
        entry = found.setdefault(ref, Candidate("unschedulable", ref))
        reasons.setdefault(ref, event.message)
        entry.add(0.6, f"its new pod waits for a volume another pod holds: {event.message[:120]}",
                  (event.message[:60], "Multi-Attach"), event.source, t.EVENT_TOOLS,
                  "scheduling-volume-held")
    for ref, pod in t.owned_pods(facts):
        if not pod.status.startswith("Pending"):
            continue
        scheduled = "Unschedulable" in pod.status or any(
            "Unschedulable" in c or "PodScheduled" in c for c in pod.failing_conditions)
        if not scheduled and not pod.message:
            continue
        entry = found.setdefault(ref, Candidate("unschedulable", ref))
        reasons.setdefault(ref, pod.message)
        needles = tuple(n for n in (pod.message[:60], "Unschedulable", pod.status) if n)
        entry.add(0.45, f"pod {pod.name} is {pod.status}", needles, pod.described or pod.source,
                  (t.PODS, t.DESCRIBE), "pending")
    for ref, workload in facts.workloads.items():
        pending = sum(n for s, n in workload.statuses.items() if s.startswith("Pending"))
        if pending and ref in found:
            found[ref].add(0.2, f"{pending} pod(s) Pending", ("Pending",), workload.source,
                           (t.WORKLOADS,), "pending-rollup")
    for ref, entry in found.items():
        faulty = sorted({node for taint in condition_taints(reasons.get(ref, ""))
                         for node in nodes_under(facts, taint)})
        if faulty:
            entry.demote(0.5, f"node {', '.join(faulty)} refuses pods because of its own "
                         "condition: a node failure")
        entry.fix = _schedule_fix(ref, reasons.get(ref, ""))
        entry.follow(t.EVENTS, ref.object_args, f"read the scheduler's verdict on {ref.name}")
        entry.follow(t.DESCRIBE, ref.pod_args, f"see the requests and constraints of {ref.name}")
    return list(found.values())


def _quota(facts: Facts) -> list[Candidate]:
    found: dict[Ref, Candidate] = {}
    for event in t.recent_events(facts, warnings=True):
        if not t.phrase_in(event.message, QUOTA_WORDS) or event.reason not in (
                "FailedCreate", "FailedScheduling", "FailedCreatePodSandBox", "Forbidden"):
            continue
        if (ref := t.event_workload(facts, event)) is None:
            continue
        entry = found.setdefault(ref, Candidate("quota_exceeded", ref))
        entry.add(0.65, event.message[:160], (event.message[:60], event.reason), event.source,
                  t.EVENT_TOOLS, "quota-event")
    for ref, workload in facts.workloads.items():
        for problem in workload.problems:
            if t.phrase_in(problem, QUOTA_WORDS):
                entry = found.setdefault(ref, Candidate("quota_exceeded", ref))
                entry.add(0.55, problem[:160], (problem[:60],), workload.source, (t.WORKLOADS,),
                          "quota-condition")
                break
    for item in facts.quotas:
        if item.ratio is None or item.ratio < 1.0:
            continue
        for entry in found.values():
            if entry.culprit.namespace == item.namespace:
                entry.add(0.25,
                          f"quota {item.quota}: {item.resource} used {item.used} of {item.hard}",
                          (f"resource: {item.resource}", item.quota), item.source, (t.QUOTAS,),
                          "quota-full")
    for ref, entry in found.items():
        entry.fix = (f"Raise the ResourceQuota/LimitRange of namespace {ref.namespace} or lower "
                     f"the requests and limits of {ref.kind} {ref.name} so its pods are admitted.")
        entry.follow(t.QUOTAS, {"namespace": ref.namespace},
                     f"compare the quota of {ref.namespace} with its use")
    return list(found.values())
