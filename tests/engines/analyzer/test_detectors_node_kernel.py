"""A node's own kernel, in the lines a node agent ships: a full conntrack table or hung I/O
is the node's fault, and the workloads whose failing pods all run there are its victims,
not the dependencies their timeouts name."""

from __future__ import annotations

from typing import Any

from engines.analyzer.detectors import dependency, kernel, node, probe
from engines.analyzer.facts import Facts
from engines.analyzer.transcript import Observation
from tests.engines.analyzer.helpers import (
    event,
    events,
    facts_of,
    obs,
    pattern,
    patterns,
    ranked,
    scope_of,
    workload,
    workloads,
)
from tests.engines.analyzer.test_detectors_cluster import rollout_obs

NODE = "ip-10-6-44-201.ec2.internal"
AGENT_POD = "fluent-bit-kvg9k"
VICTIM_POD = "orders-api-9b7l4h6q2-7czfn"
CONNTRACK = "kernel: [<NUM>] nf_conntrack: nf_conntrack: table full, dropping packet"
TIMEOUT = ("pgx: failed to connect to `host=orders-db.c7x1q2.us-east-1.rds.amazonaws.com`: "
           "dial tcp 10.6.200.15:5432: i/o timeout")
REPORT = "orders-api throws intermittent 503s, i/o timeout to the orders RDS. is orders-db down?"


def _pod(name: str, namespace: str, owner: str, node: str) -> Observation:
    data: dict[str, Any] = {"name": name, "status": "Running", "ready": "1/1", "restarts": 0,
                            "node": node, "namespace": namespace, "owner": owner,
                            "containers": [{"name": "app", "ready": True}],
                            "events": "no warning in the last hour"}
    return obs("k8s_describe_pod", data, namespace=namespace, pod=name)


def _facts(*extra: Observation) -> Facts:
    return facts_of(
        workloads(workload("orders-api", "shop"),
                  workload("fluent-bit", "logging", kind="DaemonSet", ready="4/4")),
        patterns(pattern(CONNTRACK, service="kernel", pod=AGENT_POD, count=118, level="warn"),
                 pattern(TIMEOUT, service="orders-api", pod=VICTIM_POD, count=27)),
        rollout_obs("orders-api", "shop", "2026-11-10T10:00:00Z (20d ago)"), *extra)


def test_until_the_agent_pods_node_is_known_it_is_asked_for() -> None:
    facts = _facts()
    assert kernel.detect(facts, scope_of(facts, REPORT)) == []
    asked = list(kernel.wanted(facts))
    assert [(tool, args["pod"]) for tool, args, _ in asked] == [
        ("k8s_describe_pod", AGENT_POD), ("k8s_describe_pod", VICTIM_POD)]


def test_a_full_conntrack_table_blames_the_node_that_hosts_the_failing_pods() -> None:
    owner = "Deployment/orders-api → ReplicaSet/orders-api-9b7l4h6q2"
    facts = _facts(_pod(AGENT_POD, "logging", "DaemonSet/fluent-bit", NODE),
                   _pod(VICTIM_POD, "shop", owner, NODE))
    (found,) = kernel.detect(facts, scope_of(facts, REPORT))
    assert (found.category, found.culprit.kind, found.culprit.name) == ("node_failure", "Node",
                                                                        NODE)
    assert found.affects[0].name == "orders-api"
    assert any(c.topic == "kernel-victims" for c in found.clues)
    assert "nf_conntrack_max" in found.fix
    order = ranked(facts, REPORT, [*kernel.detect(facts, scope_of(facts, REPORT)),
                                   *dependency.detect(facts, scope_of(facts, REPORT))])
    assert (order[0].category, order[0].culprit.name) == ("node_failure", NODE)


def test_kernel_faults_keep_an_outside_dependency_from_settling_and_ask_for_kernel_lines() -> None:
    facts = facts_of(workloads(workload("orders-api", "shop")),
                     patterns(pattern(TIMEOUT, service="orders-api", pod=VICTIM_POD)))
    (plain,) = dependency.detect(facts, scope_of(facts, REPORT))
    assert any(f.arguments == dependency.KERNEL_LINES for f in plain.followups)
    (doubted,) = dependency.detect(_facts(), scope_of(_facts(), REPORT))
    assert doubted.penalty < plain.penalty
    assert any("kernel" in why for why in doubted.demoted_because)


def test_an_application_line_that_mentions_a_lockup_is_not_the_kernel() -> None:
    facts = facts_of(
        workloads(workload("fluent-bit", "logging", kind="DaemonSet")),
        patterns(pattern("watchdog: soft lockup suspected in worker loop", service="fluent-bit",
                         pod=AGENT_POD)),
        _pod(AGENT_POD, "logging", "DaemonSet/fluent-bit", NODE))
    assert kernel.detect(facts, scope_of(facts, REPORT)) == []


def test_a_hung_node_explains_the_failing_probes_of_the_pods_it_hosts() -> None:
    """Readiness probes that fail on a node whose kernel reports hung tasks answer slowly
    because the node does: the node is the cause, the probes its victims."""
    nodes = obs("k8s_list_nodes", {"total": 3, "with_problems": 1, "nodes": [
        {"name": NODE, "ready": "True", "problems": [
            "KernelDeadlock: kernel: INFO: task jbd2/nvme1n1-8:1187 blocked for more than "
            "120 seconds. (since 2026-11-30T09:20:00Z)"]}]}, problems_only=True)
    owner = "Deployment/orders-api → ReplicaSet/orders-api-9b7l4h6q2"
    facts = facts_of(workloads(workload("orders-api", "shop", ready="2/3")), nodes,
                     events(event("Unhealthy", f"Pod/{VICTIM_POD}",
                                  "Readiness probe failed: Get http://10.1.2.3:8080/healthz: "
                                  "context deadline exceeded", count=40,
                                  first="2026-11-30T09:25:00Z (35m ago)")),
                     _pod(VICTIM_POD, "shop", owner, NODE))
    report = "orders-api timing out intermittently, a few pods not ready"
    scope = scope_of(facts, report)
    order = ranked(facts, report, [*node.detect(facts, scope), *probe.detect(facts, scope)])
    assert (order[0].category, order[0].culprit.name) == ("node_failure", NODE)
    probes = next(c for c in order if c.category == "probe_failure")
    assert any("fails by itself" in why for why in probes.demoted_because)
