"""The evidence tools' findings become anomalies on their own nodes, and the planner asks
for each when a lead's state calls for it (detectors/evidence.py). The data shapes and the
findings' words are those of tools/_k8s_admission.py, _k8s_storage.py, _k8s_config.py and
_k8s_endpoints.py."""

from __future__ import annotations

from engines.analyzer.detectors import evidence, run_detectors
from engines.analyzer.detectors._common import ADMISSION, ENDPOINTS, MOUNTS
from engines.analyzer.diagnose import gather_evidence
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

REFUSED_CALLS = "checkout failed: POST http://pricing.shop.svc:80/quote: connection refused"
SELECTOR = "selector app=pricing-api matches no pod in shop"


def endpoints_of_pricing() -> object:
    return obs(ENDPOINTS, {"service": "shop/pricing", "type": "ClusterIP",
                           "selector": "app=pricing-api", "matching_pods": "none",
                           "endpoints": {"ready": "none", "not_ready": "none"},
                           "problems": [SELECTOR]}, namespace="shop", service="pricing")


def services() -> object:
    return obs("k8s_list_services", {"services": [
        {"name": "pricing", "namespace": "shop", "selector": "app=pricing-api",
         "pods": "0 ready of 0 matching", "problems": ["selector matches no pod"]}]},
        namespace="shop")


def test_a_service_whose_selector_matches_nothing_is_the_cause_of_its_callers_failures() -> None:
    calls = patterns(pattern(REFUSED_CALLS, service="checkout", pod="checkout-5d6f7-abcde"))
    base = (workloads(workload("checkout"), workload("pricing")), services(), calls)
    report = "checkout fails since 09:30"
    before = facts_of(*base)
    leads = ranked(before, report, run_detectors(before, scope_of(before, report)))
    asked = list(evidence.wanted(before, leads))
    assert (ENDPOINTS, {"namespace": "shop", "service": "pricing"}) in [a[:2] for a in asked]

    after = facts_of(*base, endpoints_of_pricing())
    found = ranked(after, report, run_detectors(after, scope_of(after, report)))
    assert (found[0].category, str(found[0].culprit)) == ("network", "Service shop/pricing")
    quotes = [e.quote for e in gather_evidence(found[0], after.observations)]
    assert any(SELECTOR[:40] in q for q in quotes)


LIMIT_DEFAULT = ("worker: limits.memory 128Mi from LimitRange defaults default, not declared "
                 "by the Deployment")


def limit_ranges(*findings: str, last_exit: str = "OOMKilled (exit 137) 3m ago") -> object:
    return obs(ADMISSION, {"workload": "Deployment/worker", "pod": "worker-5d6f7-abcde",
                           "limit_ranges": [{"name": "defaults", "Container": {
                               "default": "cpu 500m, memory 128Mi"}}],
                           "containers": [{"name": "worker", "declared": "none",
                                           "admitted": {"limits": "cpu 500m, memory 128Mi"},
                                           "last_exit": last_exit}],
                           "findings": list(findings)}, namespace="shop", pod="worker")


def test_a_limit_range_default_behind_oom_kills_and_a_bound_that_refuses_pods() -> None:
    facts = facts_of(workloads(workload("worker")), limit_ranges(LIMIT_DEFAULT))
    found = evidence.detect(facts, scope_of(facts, "worker keeps restarting"))
    assert categories(found) == [("oom_killed", "worker")]
    assert "LimitRange" in found[0].fix
    healthy = facts_of(workloads(workload("worker")), limit_ranges(LIMIT_DEFAULT, last_exit=""))
    assert evidence.detect(healthy, scope_of(healthy, "worker is slow")) == []  # no OOM: no fault
    refused = facts_of(workloads(workload("worker")), limit_ranges(
        "the pod: limits.cpu 4 is above LimitRange bounds Container max 2: such pods are "
        "refused", last_exit=""))
    assert categories(evidence.detect(refused, scope_of(refused, "no worker pods"))) == [
        ("quota_exceeded", "worker")]


def test_a_claim_template_naming_a_missing_class_and_a_full_volume() -> None:
    claims = obs("k8s_list_volume_claims", {
        "total": 1, "with_problems": 1,
        "claims": [{"name": "data-ledger-db-0", "phase": "Bound", "used_by": ["ledger-db-0"],
                    "usage": "9.6GiB of 10GiB (96%)",
                    "problems": ["volume 96% full: writes fail when it fills"]}],
        "claim_templates": [{"statefulset": "ledger-db", "template": "data", "replicas": 3,
                             "storage_class": "fast-ssd", "problem": "StorageClass fast-ssd "
                             "does not exist: claims for new replicas stay Pending"}],
        "storage_classes": ["standard: kubernetes.io/gce-pd (default)"]}, namespace="books")
    facts = facts_of(workloads(workload("ledger-db", "books", kind="StatefulSet", ready="1/3"),
                               workload("ledger-api", "books")), claims)
    found = evidence.detect(facts, scope_of(facts, "ledger writes fail"))
    assert sorted(categories(found)) == [("resource_exhaustion", "ledger-db"),
                                         ("unschedulable", "ledger-db")]
    full = next(c for c in found if c.category == "resource_exhaustion")
    assert all(c.culprit.kind == "StatefulSet" for c in found) and "volume" in full.fix


UNKNOWN_CA = ("reserve stock: Post https://inventory.stock.svc/reserve: tls: failed to verify "
              "certificate: x509: certificate signed by unknown authority")


def test_a_stale_trust_bundle_makes_the_client_the_culprit_not_its_server() -> None:
    logs = patterns(pattern(UNKNOWN_CA, service="orders", pod="orders-5d6f7-abcde"))
    base = (workloads(workload("orders", "shop"), workload("inventory", "stock")), logs)
    report = "orders fail to reserve stock since 09:30"
    before = facts_of(*base)
    leads = ranked(before, report, run_detectors(before, scope_of(before, report)))
    assert categories(leads)[0] == ("certificate", "inventory")  # the logs alone blame the server
    assert (MOUNTS, {"namespace": "shop", "workload": "orders"}) in [
        a[:2] for a in evidence.wanted(before, leads)]

    mounts = obs(MOUNTS, {"workload": "Deployment/orders", "mounted": [
        {"configmap": "internal-ca", "used_as": ["volume ca at /etc/ssl/internal (orders)"],
         "keys": ["ca.crt"], "changed": "2026-11-30T09:25:00Z (35m ago) by kubectl"}],
        "findings": ["ConfigMap internal-ca changed after 3 of 3 pods started (a process that "
                     "loaded it at start keeps the old data)"]},
        namespace="shop", workload="orders")
    after = facts_of(*base, mounts)
    found = ranked(after, report, run_detectors(after, scope_of(after, report)))
    assert categories(found)[0] == ("certificate", "orders")
    assert "Restart" in found[0].fix
    unrelated = facts_of(workloads(workload("orders", "shop")), mounts)  # no TLS trouble logged
    assert evidence.detect(unrelated, scope_of(unrelated, report)) == []


def test_a_claim_template_missing_its_class_is_latent_while_every_replica_runs() -> None:
    claims = obs("k8s_list_volume_claims", {
        "total": 1, "with_problems": 0,
        "claims": [{"name": "data-orders-pg-0", "phase": "Bound", "used_by": ["orders-pg-0"]}],
        "claim_templates": [{"statefulset": "orders-pg", "template": "data", "replicas": 2,
                             "storage_class": "premium", "problem": "StorageClass premium "
                             "does not exist: claims for new replicas stay Pending"}]},
        namespace="data")
    facts = facts_of(workloads(workload("orders-pg", "data", kind="StatefulSet", ready="2/2")),
                     claims)
    assert evidence.detect(facts, scope_of(facts, "orders writes fail")) == []
