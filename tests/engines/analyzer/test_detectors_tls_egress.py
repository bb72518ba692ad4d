"""Whose certificate a TLS error blames (the client's or the server's), and egress
NetworkPolicies that shut callers out of an address, told apart from a dependency that is
really down."""

from __future__ import annotations

from typing import Any

import pytest

from engines.analyzer.detectors import certificate, dependency, policy, run_detectors
from engines.analyzer.detectors.certificate import whose
from engines.analyzer.detectors.policy import opens, reaches
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

ERRORS_UP = {"abnormal": True, "why": "5xx ratio rose from 0.1% to 38% at 2026-11-30T09:32:00Z",
             "change": {"at": "2026-11-30T09:32:00Z", "error_ratio_before": 0.001,
                        "error_ratio_after": 0.38}}


@pytest.mark.parametrize(("line", "side"), [
    ("http: TLS handshake error from 10.1.2.3:4431: remote error: tls: bad certificate", "own"),
    ("Post \"https://intake.ehr.svc:8443/v2\": remote error: tls: expired certificate", "own"),
    ("httpx.ConnectError: [SSL: SSLV3_ALERT_CERTIFICATE_EXPIRED] sslv3 alert certificate "
     "expired (_ssl.c:2580)", "own"),
    ("javax.net.ssl.SSLHandshakeException: Received fatal alert: certificate_unknown", "own"),
    ("write EPROTO error:14094412:SSL routines:ssl3_read_bytes:sslv3 alert bad certificate:"
     "SSL alert number 42", "own"),
    ("mTLS client certificate /etc/mtls/tls.crt has expired", "own"),
    ("http: TLS handshake error from 10.42.1.17:51514: tls: failed to verify certificate: "
     "x509: certificate has expired or is not yet valid", "client"),
    ("client SSL certificate verify error: (10:certificate has expired) while reading client "
     "request headers, client: 10.42.1.17, server: intake.example.com", "client"),
    ("javax.net.ssl.SSLHandshakeException: Empty client certificate chain", "client"),
    ("Get \"https://inventory.warehouse.svc:8443/stock\": tls: failed to verify certificate: "
     "x509: certificate has expired or is not yet valid", "server"),
    ("PKIX path validation failed: java.security.cert.CertPathValidatorException: validity "
     "check failed", "server"),
])
def test_whose_certificate_a_tls_error_blames(line: str, side: str) -> None:
    assert whose(line) == side


INTAKE = "https://order-intake.ehr.svc:8443/v2/results"
REFUSED = ("http: TLS handshake error from 10.42.1.17:51514: tls: failed to verify certificate: "
           "x509: certificate has expired or is not yet valid")


def intake(*client_lines: str, extra: tuple[Observation, ...] = ()) -> Any:
    """An intake server in ehr refusing a client's certificate; lab-results' own lines."""
    return facts_of(
        workloads(workload("order-intake", "ehr"), workload("lab-results", "lab"),
                  workload("billing-export", "lab")),
        patterns(pattern(REFUSED, service="order-intake", pod="order-intake-6c9d7f5b8-q2w3e",
                         level="warn", count=80),
                 *[pattern(line, service="lab-results", pod="lab-results-7d9f8c6b5-a1b2c")
                   for line in client_lines]),
        signals("lab", "lab-results", requests=ERRORS_UP), *extra)


def test_a_client_told_its_certificate_expired_is_the_culprit_not_the_server() -> None:
    facts = intake(f"submit failed: Post \"{INTAKE}\": remote error: tls: expired certificate")
    found = certificate.detect(facts, scope_of(facts, "lab results do not reach the ehr"))
    assert categories(found) == [("certificate", "lab-results")]
    assert [r.name for r in found[0].affects] == ["order-intake"]
    assert {c.topic for c in found[0].clues} >= {"tls-lab-results",
                                                  "tls-refused-by-order-intake"}
    assert "client certificate (mTLS) that Deployment lab/lab-results presents to " \
        "order-intake" in found[0].fix


def test_a_server_whose_own_certificate_expired_is_the_culprit() -> None:
    facts = facts_of(
        workloads(workload("inventory", "warehouse"), workload("order-router", "shop")),
        patterns(pattern("stock check failed: Get \"https://inventory.warehouse.svc:8443/x\": "
                         "x509: certificate has expired or is not yet valid",
                         service="order-router", pod="order-router-6c9d7f5b8-q2w3e"),
                 pattern("http: TLS handshake error from 10.0.3.9:40112: remote error: tls: "
                         "bad certificate", service="inventory",
                         pod="inventory-7d9f8c6b5-a1b2c", level="info")))
    found = certificate.detect(facts, scope_of(facts, "order-router cannot check stock"))
    assert categories(found) == [("certificate", "inventory")]
    assert "serve it" in found[0].fix and "client certificate" not in found[0].fix


RESET = f"submit failed: Post \"{INTAKE}\": read: connection reset by peer"


def test_the_one_client_whose_calls_fail_is_the_one_refused() -> None:
    facts = intake(RESET)
    found = certificate.detect(facts, scope_of(facts, "lab results stopped reaching the ehr"))
    assert categories(found) == [("certificate", "lab-results")]
    refused = next(c for c in found[0].clues if c.topic == "tls-refused-by-order-intake")
    assert refused.weight < 0.39  # a guess from who calls it, not the server's word


def test_an_unknown_client_is_found_by_its_pod_ip_and_beats_a_dependency_failure() -> None:
    other = pattern(f"export failed: Post \"{INTAKE}\": EOF", service="billing-export",
                    pod="billing-export-5b6c7d8e9-z9y8x", level="warn")
    report = "lab results stopped reaching the ehr"
    facts = intake(RESET, extra=(patterns(other),))
    unknown = certificate.detect(facts, scope_of(facts, report))
    assert categories(unknown) == [("certificate", "order-intake")]
    assert unknown[0].penalty < 1.0
    lookup = next(f for f in unknown[0].followups if f.tool == "k8s_list_pods")
    assert lookup.arguments == {"ip": "10.42.1.17"}
    listed = obs("k8s_list_pods", {"namespace": "all", "total": 1, "pods": [
        {"name": "lab-results-7d9f8c6b5-a1b2c", "namespace": "lab", "status": "Running",
         "ready": "1/1", "ip": "10.42.1.17", "owner": "Deployment/lab-results"}]},
        ip="10.42.1.17")
    known = intake(RESET, extra=(patterns(other), listed))
    found = ranked(known, report, run_detectors(known, scope_of(known, report)))
    assert categories(found)[0] == ("certificate", "lab-results")
    assert "tls-calls-order-intake" in {c.topic for c in found[0].clues}
    blamed = next(c for c in found if c.category == "dependency_failure")
    assert "its calls fail on a TLS certificate" in blamed.demoted_because


def test_a_client_named_by_its_certificate_subject_is_blamed() -> None:
    facts = facts_of(
        workloads(workload("order-intake", "ehr"), workload("lab-results", "lab")),
        patterns(pattern("client certificate verification failed for CN=lab-results.lab.svc: "
                         "x509: certificate has expired", service="order-intake",
                         pod="order-intake-6c9d7f5b8-q2w3e")))
    found = certificate.detect(facts, scope_of(facts, "ehr intake errors"))
    assert categories(found) == [("certificate", "lab-results")]


def test_a_handshake_cut_short_says_nothing_about_certificates() -> None:
    facts = facts_of(workloads(workload("order-intake", "ehr")), patterns(pattern(
        "http: TLS handshake error from 10.0.10.23:41822: EOF", service="order-intake",
        pod="order-intake-6c9d7f5b8-q2w3e", level="warn")))
    assert certificate.detect(facts, scope_of(facts, "intake")) == []


def test_a_webhook_whose_certificate_expired_is_blamed_for_the_pods_it_blocks() -> None:
    webhook = ("Error creating: Internal error occurred: failed calling webhook "
               "\"validate.guard.io\": failed to call webhook: Post \"https://policy-guard."
               "guard.svc:443/validate?timeout=10s\": tls: failed to verify certificate: x509: "
               "certificate has expired or is not yet valid")
    pull = ("Failed to pull image \"registry.corp.example/api:2.1\": x509: certificate signed by "
            "unknown authority")
    facts = facts_of(
        workloads(workload("policy-guard", "guard"), workload("api", ready="1/3"),
                  workload("worker", ready="0/2")),
        events(event("FailedCreate", "ReplicaSet/api-7d9f8c6b5", webhook, count=12),
               event("Failed", "Pod/worker-6c9d7f5b8-q2w3e", pull, count=8)))
    found = certificate.detect(facts, scope_of(facts, "api cannot scale up in shop"))
    assert categories(found) == [("certificate", "policy-guard")]
    assert [r.name for r in found[0].affects] == ["api"]


# Egress NetworkPolicies against addresses and hosts.

@pytest.mark.parametrize(("rule", "address", "port", "verdict"), [
    ("to ip 0.0.0.0/0 except 10.0.0.0/8,192.168.0.0/16 on TCP/443", "192.168.40.7", "3306",
     (False, True)),
    ("to ip 0.0.0.0/0 except 10.0.0.0/8,192.168.0.0/16 on all ports", "192.168.40.7", "3306",
     (False, True)),
    ("to ip 10.30.0.0/16 on TCP/6379", "10.30.2.5", "6379", (True, False)),
    ("to ip 10.30.0.0/16 on TCP/6379", "10.31.2.5", "6379", (False, False)),
    ("to namespaces kubernetes.io/metadata.name=kube-system on UDP/53, TCP/53", "10.30.2.5",
     "6379", (False, False)),
    ("to pods all pods on all ports", "10.30.2.5", "6379", (None, False)),
    ("to pods all pods on all ports", "52.14.3.9", "443", (False, False)),
    ("to anywhere on TCP/5432", "52.14.3.9", "5432", (True, False)),
    ("to ip 0.0.0.0/0 on TCP/443", None, "443", (True, False)),
    ("to ip 0.0.0.0/0 on TCP/443", None, "5432", (False, False)),
    ("deny all", "10.30.2.5", "6379", (False, False)),
])
def test_an_egress_rule_judged_against_an_address(rule: str, address: str | None, port: str,
                                                  verdict: tuple[bool | None, bool]) -> None:
    assert reaches(rule, address, port) == verdict


def test_ports_of_a_rule() -> None:
    assert opens("TCP/5432, UDP/53", "5432") is True
    assert opens("TCP/5432", "6379") is False
    assert opens("TCP/5432", "") is None
    assert opens("TCP/postgres", "5432") is None
    assert opens("all ports", "1") is True


DB_DOWN = "pool: new connection failed: connect ETIMEDOUT 192.168.40.7:3306"


def egress(rules: list[str], *, created: str, changed: str | None = None) -> Observation:
    row: dict[str, Any] = {"name": "baseline-egress", "namespace": "courses",
                           "applies_to": "all pods", "selected_pods": 6, "types": ["Egress"],
                           "created": created, "egress": rules}
    if changed:
        row["changed"] = changed
    return obs("k8s_list_network_policies", {"total": 1, "policies": [row]},
               namespace="courses")


def courses(policies: Observation) -> Any:
    """Two callers of a database outside the cluster, and a third that calls the first."""
    return facts_of(
        workloads(workload("catalog-api", "courses"), workload("grade-sync", "courses"),
                  workload("course-web", "courses")),
        patterns(pattern(DB_DOWN, service="catalog-api", pod="catalog-api-7d9f8c6b5-a1b2c",
                         first="2026-11-30T09:31:00Z"),
                 pattern(DB_DOWN, service="grade-sync", pod="grade-sync-6c9d7f5b8-q2w3e",
                         count=12, first="2026-11-30T09:31:30Z"),
                 pattern("GET /courses 500: catalog-api responded 500", service="course-web",
                         pod="course-web-5b6c7d8e9-z9y8x"), namespace="courses"),
        signals("courses", "catalog-api", requests=ERRORS_UP), policies)


SHUT = ["to namespaces kubernetes.io/metadata.name=kube-system on UDP/53, TCP/53",
        "to pods all pods on all ports",
        "to ip 0.0.0.0/0 except 10.0.0.0/8,172.16.0.0/12,192.168.0.0/16 on TCP/443"]
REPORT = "courses return 500 since 09:30, the database looks healthy in the provider console"


def test_a_new_egress_policy_that_excepts_the_database_address_is_the_culprit() -> None:
    facts = courses(egress(SHUT, created="2026-11-30T09:29:40Z (30m ago)"))
    found = ranked(facts, REPORT, run_detectors(facts, scope_of(facts, REPORT)))
    assert (found[0].category, found[0].culprit.kind, found[0].culprit.name) == (
        "network", "NetworkPolicy", "baseline-egress")
    assert {c.topic for c in found[0].clues} >= {"policy-rule", "policy-new", "policy-breadth"}
    assert {r.name for r in found[0].affects} == {"catalog-api", "grade-sync"}
    assert not any(f.tool == "k8s_get_object" for f in found[0].followups)
    demoted = {c.culprit.name: c.demoted_because for c in found
               if c.category == "dependency_failure"}
    assert "NetworkPolicy courses/baseline-egress, which it depends on, fails by itself (network)" \
        in demoted["catalog-api"]
    # course-web's 500s name catalog-api, whose own error rate rose: they are its failure
    assert "course-web" not in demoted


def test_a_policy_changed_just_before_the_errors_is_as_suspect_as_a_new_one() -> None:
    facts = courses(egress(SHUT, created="2026-06-01T08:00:00Z (182d ago)",
                           changed="2026-11-30T09:28:00Z (32m ago) by argocd-controller"))
    found = policy.detect(facts, scope_of(facts, REPORT))
    assert "it was changed at 09:28" in {c.note.split(",")[0] for c in found[0].clues}
    assert found[0].penalty == 1.0


def test_an_egress_policy_that_allows_the_address_is_innocent() -> None:
    allowed = [*SHUT, "to ip 192.168.40.0/24 on TCP/3306"]
    facts = courses(egress(allowed, created="2026-11-30T09:29:40Z (30m ago)"))
    assert policy.detect(facts, scope_of(facts, REPORT)) == []
    found = ranked(facts, REPORT, run_detectors(facts, scope_of(facts, REPORT)))
    assert categories(found)[0] == ("dependency_failure", "catalog-api")


def test_an_old_policy_that_cannot_be_judged_loses_to_a_dead_dependency() -> None:
    unclear = ["to pods all pods on all ports"]
    facts = courses(egress(unclear, created="2026-05-01T08:00:00Z (213d ago)"))
    found = ranked(facts, REPORT, run_detectors(facts, scope_of(facts, REPORT)))
    assert categories(found)[0] == ("dependency_failure", "catalog-api")
    blamed = next(c for c in found if c.category == "network")
    assert blamed.demoted_because == ["it was in place, unchanged, long before the failures "
                                      "began"]
    assert not found[0].demoted_because


def test_a_policy_shutting_out_a_host_outside_the_cluster_by_name() -> None:
    rules = ["to namespaces kubernetes.io/metadata.name=kube-system on UDP/53, TCP/53",
             "to ip 0.0.0.0/0 on TCP/443"]
    facts = facts_of(
        workloads(workload("ledger", "books")),
        patterns(pattern("sync failed: dial tcp: connect to ledger-db.prod.example.net:5432: "
                         "i/o timeout", service="ledger", pod="ledger-7d9f8c6b5-a1b2c"),
                 namespace="books"),
        obs("k8s_list_network_policies", {"total": 1, "policies": [{
            "name": "lock-egress", "namespace": "books", "applies_to": "all pods",
            "selected_pods": 2, "types": ["Egress"], "created": "2026-11-30T09:20:00Z (40m ago)",
            "egress": rules}]}, namespace="books"))
    scope = scope_of(facts, "ledger sync fails")
    found = policy.detect(facts, scope)
    assert categories(found) == [("network", "lock-egress")]
    assert "ledger-db.prod.example.net port 5432" in found[0].clues[0].note
    assert dependency.detect(facts, scope)[0].culprit.name == "ledger"


def test_a_policy_selecting_pods_by_another_label_covers_the_workloads_listed() -> None:
    listing = obs("k8s_list_network_policies", {"total": 1, "policies": [{
        "name": "backend-egress", "namespace": "courses", "applies_to": "tier=backend",
        "selected_pods": 2, "selected_workloads": ["Deployment/catalog-api"],
        "types": ["Egress"], "created": "2026-11-30T09:29:40Z (30m ago)", "egress": SHUT}]},
        namespace="courses")
    facts = courses(listing)
    found = policy.detect(facts, scope_of(facts, REPORT))
    assert categories(found) == [("network", "backend-egress")]
    assert [r.name for r in found[0].affects] == ["catalog-api"]
    assert policy.selects(facts.policies[("courses", "backend-egress")],
                          policy.Ref("Deployment", "courses", "catalog-api"))
