"""Detectors that read logs, metrics, nodes, services, policies, rollouts and autoscalers."""

from __future__ import annotations

from engines.analyzer.detectors import (
    capacity,
    certificate,
    dependency,
    exhaustion,
    network,
    node,
    policy,
    rollout,
    run_detectors,
)
from engines.analyzer.transcript import Observation
from tests.engines.analyzer.helpers import (
    categories,
    event,
    events,
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

API_POD = "ledger-api-6c9d7f5b8-q2w3e"
ERRORS_UP = {"abnormal": True, "why": "5xx ratio rose from 0.3% to 75.8% at 2026-11-30T09:31:00Z",
             "change": {"at": "2026-11-30T09:31:00Z", "error_ratio_before": 0.003,
                        "error_ratio_after": 0.758}}


def rollout_obs(name: str, namespace: str, created: str, *, ready: str = "ready 3/3",
                change: str = "app: image app:1.0 → app:1.1") -> Observation:
    return obs("k8s_rollout_history", {
        "workload": f"Deployment {namespace}/{name}", "current_revision": 8,
        "revisions": [
            {"revision": 8, "replicaset": f"{name}-5d6f7", "current": True, "created": created,
             "images": [f"{name}:1.1"], "pods": ready},
            {"revision": 7, "replicaset": f"{name}-4c5e6", "current": False,
             "created": "2026-11-01T10:00:00Z (29d ago)", "images": [f"{name}:1.0"],
             "pods": "ready 0/0"}],
        "changes_from_previous": [change]}, namespace=namespace, workload=name)


def test_external_database_timeouts_blame_the_caller() -> None:
    facts = facts_of(workloads(workload("ledger-api", "ledger")), patterns(pattern(
        "OperationalError: connection to server at \"db.prod.rds.amazonaws.com\", port 5432 "
        "failed: Connection timed out", service="ledger-api", pod=API_POD, count=108)),
        signals("ledger", "ledger-api", requests=ERRORS_UP),
        rollout_obs("ledger-api", "ledger", "2026-11-20T10:00:00Z (10d ago)"))
    found = ranked(facts, "ledger-api returns 503", dependency.detect(
        facts, scope_of(facts, "ledger-api returns 503")))
    assert categories(found) == [("dependency_failure", "ledger-api")]
    assert found[0].score > 0.6
    assert any("outside the cluster" in c.note for c in found[0].clues)


def test_errors_calling_a_sick_in_cluster_workload_are_not_a_dependency_failure() -> None:
    facts = facts_of(workloads(
        workload("frontend"), workload("checkout", ready="1/3", problems=["2 of 3 pods unhealthy"],
                                       pods={"total": 3, "unhealthy": 2, "restarts": 30})),
        patterns(pattern("upstream checkout.shop.svc.cluster.local:80 socket hang up",
                         service="frontend", pod="frontend-5d6f7c8b9-abcde", count=50)))
    assert dependency.detect(facts, scope_of(facts, "frontend 502")) == []


def test_pool_exhaustion_is_not_taken_for_a_dependency_failure() -> None:
    hikari = ("HikariPool-1 - Connection is not available, request timed out after 30000ms "
              "(total=10, active=10, idle=0, waiting=52)")
    facts = facts_of(workloads(workload("fulfilment-api", "fulfilment")), patterns(pattern(
        hikari, service="fulfilment-api", pod="fulfilment-api-5d6f7c8b9-abcde", count=78)))
    scope = scope_of(facts, "fulfilment-api hangs")
    assert dependency.detect(facts, scope) == []
    assert categories(exhaustion.detect(facts, scope)) == [("resource_exhaustion",
                                                            "fulfilment-api")]


def test_a_pool_warning_that_predates_the_incident_is_a_red_herring() -> None:
    facts = facts_of(workloads(workload("cart"), workload("checkout")), patterns(pattern(
        "redis: connection pool timeout, retrying", service="cart", pod="cart-5d6f7c8b9-abcde",
        level="warn", count=6, first="2026-11-30T09:00:30Z")))
    found = ranked(facts, "checkout fails since 09:40", exhaustion.detect(
        facts, scope_of(facts, "checkout fails since 09:40")))
    assert found and found[0].score < 0.15


def test_expired_certificate_of_an_in_cluster_server_blames_the_server() -> None:
    facts = facts_of(workloads(workload("order-router", "fulfilment"),
                               workload("inventory-api", "warehouse")), patterns(pattern(
        "Get \"https://inventory-api.warehouse.svc.cluster.local:8443/stock\": tls: failed to "
        "verify certificate: x509: certificate has expired or is not yet valid",
        service="order-router", pod="order-router-5d6f7c8b9-abcde", count=60)))
    found = certificate.detect(facts, scope_of(facts, "order-router can't reach inventory"))
    assert categories(found) == [("certificate", "inventory-api")]


def test_service_selector_matching_no_pod_is_a_network_fault() -> None:
    services = obs("k8s_list_services", {"total": 1, "services": [{
        "name": "cart", "type": "ClusterIP", "selector": "app=cart,tier=api",
        "pods": "0 ready of 0 matching", "endpoints": {"ready": 0, "not_ready": 0},
        "problems": ["selector app=cart,tier=api matches no pod in the namespace"]}]},
        namespace="shop")
    facts = facts_of(workloads(workload("cart"), workload("frontend")), services, patterns(
        pattern("GET /api/cart 502: upstream cart: connect ECONNREFUSED 10.0.0.7:80",
                service="frontend", pod="frontend-5d6f7c8b9-abcde"), namespace="shop"))
    scope = scope_of(facts, "add to cart fails, frontend says cart is unreachable")
    found = ranked(facts, "add to cart fails, frontend says cart is unreachable",
                   network.detect(facts, scope) + dependency.detect(facts, scope))
    assert categories(found)[0] == ("network", "cart")
    assert found[0].culprit.kind == "Service"


def test_new_ingress_policy_that_shuts_out_the_caller_is_the_culprit() -> None:
    policies = obs("k8s_list_network_policies", {"total": 2, "policies": [
        {"name": "lock-down", "namespace": "payments", "applies_to": "all pods",
         "selected_pods": 3, "types": ["Ingress"],
         "ingress": ["from namespaces kubernetes.io/metadata.name=ingress on TCP/8080"]},
        {"name": "allow-metrics", "namespace": "payments", "applies_to": "app=payments-api",
         "selected_pods": 3, "types": ["Ingress"],
         "ingress": ["from namespaces kubernetes.io/metadata.name=monitoring on TCP/9090"]}]})
    new = obs("k8s_get_object", {"kind": "NetworkPolicy", "metadata": {
        "name": "lock-down", "namespace": "payments",
        "creationTimestamp": "2026-11-30T09:29:00Z"}}, kind="NetworkPolicy", name="lock-down",
        namespace="payments")
    old = obs("k8s_get_object", {"kind": "NetworkPolicy", "metadata": {
        "name": "allow-metrics", "namespace": "payments",
        "creationTimestamp": "2026-03-01T09:29:00Z"}}, kind="NetworkPolicy",
        name="allow-metrics", namespace="payments")
    facts = facts_of(workloads(workload("checkout"), workload("payments-api", "payments")),
                     patterns(pattern("Post \"http://payments-api.payments.svc.cluster.local/"
                                      "v1/charges\": dial tcp 10.0.4.4:80: i/o timeout",
                                      service="checkout", pod="checkout-5d6f7c8b9-abcde")),
                     signals("shop", "checkout", requests=ERRORS_UP), policies, new, old)
    report = "checkout can't reach payments, calls time out"
    found = ranked(facts, report, run_detectors(facts, scope_of(facts, report)))
    assert categories(found)[0] == ("network", "lock-down")


def test_a_policy_that_admits_the_caller_is_innocent() -> None:
    policies = obs("k8s_list_network_policies", {"total": 1, "policies": [
        {"name": "allow-shop", "namespace": "payments", "applies_to": "all pods",
         "selected_pods": 3, "types": ["Ingress"],
         "ingress": ["from namespaces kubernetes.io/metadata.name=shop on TCP/8080"]}]})
    facts = facts_of(workloads(workload("checkout"), workload("payments-api", "payments")),
                     patterns(pattern("Post \"http://payments-api.payments.svc:80/x\": i/o "
                                      "timeout", service="checkout",
                                      pod="checkout-5d6f7c8b9-abcde")), policies)
    assert policy.detect(facts, scope_of(facts, "checkout")) == []


def test_not_ready_node_blames_the_node_linked_to_the_named_service() -> None:
    nodes = obs("k8s_list_nodes", {"total": 2, "with_problems": 1, "nodes": [
        {"name": "node-b", "ready": "Unknown",
         "problems": ["NotReady since 2026-11-30T09:35:00Z (25m ago): Kubelet stopped posting "
                      "node status."]}]}, problems_only=True)
    pods = obs("k8s_list_pods", {"namespace": "all", "total": 1, "pods": [
        {"name": "cart-5d6f7c8b9-abcde", "namespace": "shop", "status": "Terminating",
         "ready": "0/1", "restarts": 0, "node": "node-b", "owner": "Deployment/cart"}]},
        node="node-b")
    facts = facts_of(workloads(workload("cart")), nodes, pods)
    found = ranked(facts, "cart errors", node.detect(facts, scope_of(facts, "cart errors")))
    assert categories(found) == [("node_failure", "node-b")]
    assert found[0].culprit.namespace == "" and found[0].relevance > 0.9


def test_a_fresh_rollout_aligned_with_the_error_spike_is_a_bad_rollout() -> None:
    facts = facts_of(workloads(workload("orders-api", "orders")),
                     rollout_obs("orders-api", "orders", "2026-11-30T09:29:00Z (31m ago)"),
                     signals("orders", "orders-api", requests=ERRORS_UP))
    found = rollout.detect(facts, scope_of(facts, "500s on orders since 09:30"))
    assert categories(found) == [("bad_rollout", "orders-api")]
    assert found[0].strength > 0.5 and "revision 7" in found[0].fix


def test_an_old_rollout_is_not_a_suspect_and_a_quiet_new_one_is_weak() -> None:
    old = facts_of(rollout_obs("orders-api", "orders", "2026-11-20T09:29:00Z (10d ago)"),
                   signals("orders", "orders-api", requests=ERRORS_UP))
    assert rollout.detect(old, scope_of(old, "orders")) == []
    quiet = facts_of(rollout_obs("orders-api", "orders", "2026-11-30T09:29:00Z (31m ago)"))
    assert rollout.detect(quiet, scope_of(quiet, "orders"))[0].strength < 0.2


def test_throttling_with_rising_latency_is_cpu_throttling() -> None:
    facts = facts_of(signals("pricing", "price-engine", cpu={
        "abnormal": True, "why": "31% of CPU periods throttled (peak 70%)",
        "throttled_ratio": 0.31, "throttled_ratio_peak_5_steps": 0.7},
        latency={"abnormal": True, "why": "p99 rose from 0.4s to 1.1s"}))
    found = capacity.detect(facts, scope_of(facts, "prices slow"))
    assert categories(found) == [("cpu_throttling", "price-engine")]


def test_capped_autoscaler_beats_the_throttling_it_causes() -> None:
    hpa = obs("k8s_list_autoscalers", {"total": 1, "at_max": 1, "autoscalers": [{
        "name": "web", "namespace": "web", "target": "Deployment/web", "min": 3, "max": 10,
        "current": 10, "desired": 10, "at_max": True, "metrics": ["cpu 180% / target 70%"],
        "problems": ["ScalingLimited=True TooManyReplicas: the desired replica count is more "
                     "than the maximum replica count",
                     "at its maximum while a metric is above target: it cannot add capacity"]}]})
    facts = facts_of(workloads(workload("web", "web", ready="10/10")), hpa, signals(
        "web", "web", cpu={"abnormal": True, "why": "30% of CPU periods throttled",
                           "throttled_ratio": 0.3},
        latency={"abnormal": True, "why": "p99 rose from 0.4s to 2.5s"}))
    report = "site is crawling, web p95 is 3s"
    found = ranked(facts, report, capacity.detect(facts, scope_of(facts, report)))
    assert categories(found)[0] == ("autoscaling_limit", "web")


def test_an_autoscaler_at_max_below_target_is_weak() -> None:
    hpa = obs("k8s_list_autoscalers", {"total": 1, "at_max": 1, "autoscalers": [{
        "name": "batch", "namespace": "jobs", "target": "Deployment/batch", "min": 1, "max": 2,
        "current": 2, "desired": 2, "at_max": True, "metrics": ["cpu 40% / target 70%"]}]})
    facts = facts_of(hpa)
    found = capacity.detect(facts, scope_of(facts, "x"))
    assert found and found[0].strength < 0.3


def test_warning_events_about_a_node_make_it_a_suspect() -> None:
    facts = facts_of(events(event("EvictionThresholdMet", "Node/node-a",
                                  "Attempting to reclaim ephemeral-storage", namespace="")))
    assert categories(node.detect(facts, scope_of(facts, "pods evicted"))) == [
        ("node_failure", "node-a")]
