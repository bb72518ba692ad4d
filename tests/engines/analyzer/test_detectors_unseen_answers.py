"""Causes that hide behind how a dependency answers: a Service dialled on a port it no
longer listens on, an outside API that reports its own error inside a 200, a collector of
the caller's own telemetry (not on its requests' path), a JVM out of class metadata, and a
caller whose new revision floods its callee."""

from __future__ import annotations

from typing import Any

from engines.analyzer.detectors import dependency, exhaustion, network, oom, rollout
from tests.engines.analyzer.helpers import (
    categories,
    describe,
    facts_of,
    obs,
    pattern,
    patterns,
    ranked,
    scope_of,
    signals,
    workload,
    workloads,
)


def _service(name: str, namespace: str, ip: str, *ports: str) -> Any:
    return obs("k8s_list_services", {"total": 1, "services": [{
        "name": name, "type": "ClusterIP", "cluster_ip": ip, "ports": list(ports),
        "selector": f"app={name}", "pods": "3 ready of 3 matching",
        "endpoints": {"ready": 3, "not_ready": 0}}]}, namespace=namespace)


def test_callers_dialling_a_port_the_service_no_longer_listens_on_blame_the_service() -> None:
    facts = facts_of(
        workloads(workload("search-api", "search"), workload("storefront", "web")),
        _service("search-api", "search", "172.20.88.41", "8080→http/TCP"),
        patterns(pattern("search proxy error: connect ECONNREFUSED 172.20.88.41:80",
                         service="storefront", pod="storefront-5d6f7-abcde", count=200)))
    report = "storefront returns 502 on every search, search-api pods are all Ready"
    scope = scope_of(facts, report)
    found = ranked(facts, report, network.detect(facts, scope) + dependency.detect(facts, scope))
    assert (found[0].category, found[0].culprit.kind, found[0].culprit.name) == \
        ("network", "Service", "search-api")
    assert "80" in found[0].fix and "8080" in found[0].fix


def test_a_call_on_a_port_the_service_declares_is_not_its_port_fault() -> None:
    facts = facts_of(
        workloads(workload("search-api", "search"), workload("storefront", "web")),
        _service("search-api", "search", "172.20.88.41", "80→http/TCP"),
        patterns(pattern("search proxy error: connect ECONNREFUSED 172.20.88.41:80",
                         service="storefront", pod="storefront-5d6f7-abcde", count=200)))
    found = network.detect(facts, scope_of(facts, "storefront search fails"))
    assert not any(c.topic == "service-port" for f in found for c in f.clues)


def test_an_answer_the_caller_cannot_read_is_a_failing_dependency() -> None:
    facts = facts_of(workloads(workload("address-validator", "delivery")), patterns(pattern(
        "geocode failed for order ord_1: 1 validation error for GeocodeResponse results Field "
        "required [type=missing, input_value={'status': 'OVER_QUERY_LIMIT'}]",
        service="address-validator", pod="address-validator-5d6f7-abcde", count=180)))
    found = dependency.detect(facts, scope_of(facts, "address validation fails"))
    assert categories(found) == [("dependency_failure", "address-validator")]


def test_a_collector_of_the_callers_own_traces_is_not_on_its_path() -> None:
    collector = describe("otel-collector-5d6f7-abcde", "platform", owner="otel-collector",
                         containers=[{"name": "otel-collector", "ready": True, "restarts": 2,
                                      "limits": {"memory": "1Gi"}, "state": {"running": True},
                                      "last_state": {"terminated": "OOMKilled",
                                                     "exit_code": 137,
                                                     "finished": "2026-11-30T09:40:00Z "
                                                                 "(20m ago)"}}])
    facts = facts_of(
        workloads(workload("address-validator", "delivery"),
                  workload("otel-collector", "platform")),
        collector,
        patterns(pattern("geocode failed: 1 validation error for GeocodeResponse",
                         service="address-validator", pod="address-validator-5d6f7-abcde",
                         count=180),
                 pattern("Transient error StatusCode.UNAVAILABLE encountered while exporting "
                         "traces to otel-collector.platform.svc:4317, retrying in 8s",
                         service="address-validator", pod="address-validator-5d6f7-abcde",
                         count=14, level="warn")))
    report = "address-validator fails every validation since 08:30"
    scope = scope_of(facts, report)
    found = ranked(facts, report, dependency.detect(facts, scope) + oom.detect(facts, scope))
    assert categories(found)[0] == ("dependency_failure", "address-validator")
    assert not found[0].demoted_because


def test_a_jvm_out_of_metaspace_exhausts_itself_and_is_not_oom_killed() -> None:
    facts = facts_of(workloads(workload("report-renderer", "reporting")), patterns(pattern(
        "Servlet.service() threw exception [Handler dispatch failed: "
        "java.lang.OutOfMemoryError: Metaspace] with root cause", service="report-renderer",
        pod="report-renderer-5d6f7-abcde", count=160)))
    scope = scope_of(facts, "report exports fail with 500")
    found = exhaustion.detect(facts, scope) + oom.detect(facts, scope)
    assert categories(found) == [("resource_exhaustion", "report-renderer")]
    assert any("class metadata" in c.topic for c in found[0].clues)


def test_a_callers_new_revision_that_floods_its_callee_is_the_cause() -> None:
    jumped = {"abnormal": True, "why": "5xx ratio rose from 0.0% to 86.6% at "
              "2026-11-30T09:15:00Z; request rate went from 46/s to 136/s",
              "change": {"at": "2026-11-30T09:15:00Z", "rate_before_per_s": 46,
                         "rate_after_per_s": 136}}
    history = obs("k8s_rollout_history", {
        "workload": "Deployment payments/payout-worker", "current_revision": 22,
        "revisions": [
            {"revision": 22, "replicaset": "payout-worker-7c8d9", "current": True,
             "created": "2026-11-30T09:13:00Z (47m ago)",
             "images": ["reg.io/payout-worker:3.8.0"], "pods": "ready 3/3"},
            {"revision": 21, "replicaset": "payout-worker-5d6f7", "current": False,
             "created": "2026-11-20T10:00:00Z (10d ago)",
             "images": ["reg.io/payout-worker:3.7.4"], "pods": "ready 0/0"}]},
        namespace="payments", workload="payout-worker")
    facts = facts_of(
        workloads(workload("payout-worker", "payments"), workload("ledger-api", "ledger")),
        history, signals("ledger", "ledger-api", requests=jumped),
        patterns(pattern("retrying ledger call attempt=7/10 backoff=0s err=\"POST "
                         "http://ledger-api.ledger.svc.cluster.local:8080/v1/entries: 503\"",
                         service="payout-worker", pod="payout-worker-7c8d9-abcde", count=270,
                         first="2026-11-30T09:14:00Z")))
    report = "ledger-api returns 503 for 40 min, payouts are failing"
    scope = scope_of(facts, report)
    found = ranked(facts, report, rollout.detect(facts, scope) + dependency.detect(facts, scope))
    assert categories(found)[0] == ("bad_rollout", "payout-worker")
    assert any(c.topic == "overloads-callee" for c in found[0].clues)
