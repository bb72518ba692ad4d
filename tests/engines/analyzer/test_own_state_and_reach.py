"""General rules: a DNS server's own memory limit is its cause, not "the network"; a
Pending pod whose claim a quota refuses waits on the quota; an egress policy that opens
every port to its own namespace's pods still cuts DNS off, and its victims' crash loops
are its own; an outside API refusing a caller's key fails the caller as a dependency; an
alert's CamelCase name names the workload it pages about; a search cluster past its flood
stage is out of disk itself; a log agent that cannot run is on the path of missing logs."""

from __future__ import annotations

from engines.analyzer.candidates import Candidate
from engines.analyzer.detectors import dependency, exhaustion, policy, run_detectors
from engines.analyzer.facts import Ref
from engines.analyzer.graph import Graph
from engines.analyzer.ranking import PRECEDENCE, relevance
from tests.engines.analyzer.helpers import (
    categories,
    facts_of,
    obs,
    pattern,
    patterns,
    ranked,
    scope_of,
    workload,
    workloads,
)


def test_a_dns_server_killed_for_memory_is_oom_killed_and_a_crashing_one_a_network_fault() -> None:
    rules = {(victim, causes) for victim, causes, *_ in PRECEDENCE}
    assert ("network", ("oom_killed",)) in rules  # its limit is what to fix
    assert ("oom_killed", ("network",)) not in rules
    assert ("crash_loop", ("network",)) in rules  # a resolver that exits: an outage


def test_a_pending_pod_waits_on_the_quota_that_refuses_its_claim() -> None:
    assert ("unschedulable", ("quota_exceeded",)) in {
        (victim, causes) for victim, causes, *_ in PRECEDENCE}


def test_all_ports_to_the_namespaces_own_pods_does_not_let_dns_out() -> None:
    assert not policy.lets_dns_out("to pods all pods on all ports")
    assert policy.lets_dns_out("to namespaces kubernetes.io/metadata.name=kube-system on "
                               "UDP/53, TCP/53")
    assert policy.lets_dns_out("to anywhere on all ports")
    assert not policy.lets_dns_out("to ip 0.0.0.0/0 on TCP/443")
    facts = facts_of(
        workloads(workload("worker", "pay", ready="0/2")),
        patterns(pattern("startup failed: getaddrinfo EAI_AGAIN db.example.net", service="worker",
                         pod="worker-6c9d8-x1y2z"), namespace="pay"),
        obs("k8s_list_network_policies", {"total": 1, "policies": [{
            "name": "deny-egress", "namespace": "pay", "applies_to": "all pods",
            "selected_pods": 2, "types": ["Egress"], "created": "2026-11-30T09:20:00Z (40m ago)",
            "egress": ["to pods all pods on all ports", "to ip 0.0.0.0/0 on TCP/443"]}]},
            namespace="pay"))
    found = policy.detect(facts, scope_of(facts, "the pay worker keeps crashing"))
    assert categories(found) == [("network", "deny-egress")]
    assert [r.name for r in found[0].affects] == ["worker"]


def _mailer(line: str) -> list[tuple[str, str]]:
    facts = facts_of(workloads(workload("mailer", "identity")),
                     patterns(pattern(line, service="mailer", pod="mailer-5f6d7-abcde"),
                              namespace="identity"))
    return categories(dependency.detect(facts, scope_of(facts, "reset emails do not arrive")))


def test_an_outside_provider_refusing_the_callers_key_is_a_failing_dependency() -> None:
    assert _mailer("provider rejected request provider=mailco status=401 body=the API key "
                   "was revoked") == [("dependency_failure", "mailer")]
    assert _mailer("POST https://api.mailco.example.com/v3/send: 401 Unauthorized") == [
        ("dependency_failure", "mailer")]
    # The cluster's own auth saying no is not an outside dependency failing.
    assert _mailer("request from user 42 unauthorized: session expired") == []


def test_the_ranked_answer_of_a_policy_cutting_dns_is_the_policy_not_the_crash() -> None:
    facts = facts_of(
        workloads(workload("worker", "pay", ready="0/2")),
        patterns(pattern("startup failed: getaddrinfo EAI_AGAIN db.example.net", service="worker",
                         pod="worker-6c9d8-x1y2z"), namespace="pay"),
        obs("k8s_list_network_policies", {"total": 1, "policies": [{
            "name": "deny-egress", "namespace": "pay", "applies_to": "all pods",
            "selected_pods": 2, "types": ["Egress"], "created": "2026-11-30T09:20:00Z (40m ago)",
            "egress": ["to pods all pods on all ports"]}]}, namespace="pay"))
    report = "the pay worker keeps crashing"
    found = ranked(facts, report, run_detectors(facts, scope_of(facts, report)))
    assert (found[0].category, found[0].culprit.name) == ("network", "deny-egress")


def test_an_alert_named_in_camel_case_names_the_workload_it_pages_about() -> None:
    facts = facts_of(workloads(workload("eta-estimator", "dispatch"),
                               workload("ledger-export", "finance")))
    scope = scope_of(facts, "getting EtaEstimatorPodsNotReady pages since 16:00")
    assert [r.name for r in scope.primary] == ["eta-estimator"]


def test_a_search_cluster_past_its_flood_stage_is_out_of_disk_itself() -> None:
    facts = facts_of(
        workloads(workload("catalog-es", "search", kind="StatefulSet")),
        patterns(pattern("flood stage disk watermark [95%] exceeded on [catalog-es-0], all "
                         "indices on this node will be marked read-only", service="catalog-es",
                         pod="catalog-es-0", level="warn"), namespace="search"))
    found = exhaustion.detect(facts, scope_of(facts, "catalog updates are stuck"))
    assert categories(found) == [("resource_exhaustion", "catalog-es")]


def test_a_log_agent_that_cannot_run_is_on_the_path_of_missing_logs() -> None:
    facts = facts_of(workloads(workload("clickstream-ingest", "pipelines"),
                               workload("vector-agent", "observability", kind="DaemonSet")))
    agent = Candidate("unschedulable", Ref("DaemonSet", "observability", "vector-agent"))
    missing = scope_of(facts, "clickstream-ingest logs are gone from kibana since 9:50")
    failing = scope_of(facts, "clickstream-ingest is failing since 9:50")
    assert "telemetry" in missing.symptoms
    assert relevance(agent, missing, Graph()) > relevance(agent, failing, Graph()) + 0.2
