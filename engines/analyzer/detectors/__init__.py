"""The detector library: one or more detectors per category of the taxonomy.

A detector is a pure function `detect(facts, scope) -> list[Candidate]`: it reads the facts
gathered so far and proposes causes with weighted clues, follow-up calls that would
confirm them, and a fix. Detectors never call tools and never rank: the planner decides
what to read next and ranking.py decides which candidate wins.
"""

from __future__ import annotations

from collections.abc import Callable

from engines.analyzer.candidates import Candidate
from engines.analyzer.detectors import (
    batch,
    capacity,
    certificate,
    crash,
    dependency,
    dns,
    evidence,
    exhaustion,
    image,
    kernel,
    mesh,
    network,
    node,
    node_limits,
    oom,
    policy,
    probe,
    rollout,
    scheduling,
    server_limits,
    webhook,
)
from engines.analyzer.facts import Facts
from engines.analyzer.scope import Scope

Detector = Callable[[Facts, Scope], list[Candidate]]

DETECTORS: dict[str, Detector] = {
    "oom": oom.detect,  # oom_killed
    "crash": crash.detect,  # crash_loop
    "batch": batch.detect,  # dependency_failure: a scheduled run that hangs
    "image": image.detect,  # image_pull
    "scheduling": scheduling.detect,  # unschedulable, quota_exceeded
    "probe": probe.detect,  # probe_failure
    "node": node.detect,  # node_failure
    "kernel": kernel.detect,  # node_failure: what a node's kernel logs through an agent
    "node_limits": node_limits.detect,  # resource_exhaustion: a node's shared kernel limits
    "rollout": rollout.detect,  # bad_rollout
    "mesh": mesh.detect,  # bad_rollout: a mesh control plane whose proxies now refuse calls
    "dependency": dependency.detect,  # dependency_failure
    "exhaustion": exhaustion.detect,  # resource_exhaustion
    "server_limits": server_limits.detect,  # a server's own limit, told by its clients
    "capacity": capacity.detect,  # cpu_throttling, autoscaling_limit
    "network": network.detect,  # network: Services
    "dns": dns.detect,  # network: the cluster's DNS server
    "policy": policy.detect,  # network: NetworkPolicies
    "certificate": certificate.detect,  # certificate
    "webhook": webhook.detect,  # network: admission webhooks the API server cannot reach
    "evidence": evidence.detect,  # the evidence tools' findings, of several categories
}


def run_detectors(facts: Facts, scope: Scope) -> list[Candidate]:
    """Every detector's candidates, in a stable order."""
    found: list[Candidate] = []
    for detect in DETECTORS.values():
        found.extend(detect(facts, scope))
    return found
