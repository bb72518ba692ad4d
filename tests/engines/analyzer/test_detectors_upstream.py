"""Whose fault it is when the caller only sees the symptom: an in-cluster dependency that is
itself slow (named by a gRPC resolver target), a public host served by an Ingress of the
cluster whose certificate expired, and an upstream pod address that a NetworkPolicy with a
stale namespaceSelector cuts off."""

from __future__ import annotations

from engines.analyzer.detectors import certificate, dependency, run_detectors
from engines.analyzer.detectors._targets import hosts_in
from engines.analyzer.facts import Facts
from engines.analyzer.planner import Toolbox, follow
from engines.analyzer.readers import read_ingresses
from engines.analyzer.transcript import Observation, Transcript
from engines.model import ToolSpec
from tests.engines.analyzer.helpers import (
    categories,
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

SLOW = {"abnormal": True, "why": "p99 rose from 0.4s to 2.5s at 2026-11-30T09:31:00Z",
        "change": {"at": "2026-11-30T09:31:00Z"}}
ERRORS_UP = {"abnormal": True, "why": "5xx ratio rose from 0.9% to 31.8% at 2026-11-30T09:32:00Z"}
DEADLINE = ("rpc error: code = DeadlineExceeded desc = context deadline exceeded (deadline 1.5s, "
            "target dns:///geo-index.maps.svc:9090)")


def test_a_grpc_resolver_target_names_its_host() -> None:
    assert hosts_in(DEADLINE) == [("geo-index.maps.svc", "9090")]
    assert ("api.example.com", "443") in hosts_in("dial dns://8.8.8.8/api.example.com:443: EOF")


def lockers(*extra: Observation) -> Facts:
    return facts_of(
        workloads(workload("locker-booking", "lockers"), workload("geo-index", "maps")),
        patterns(pattern(DEADLINE, service="locker-booking", pod="locker-booking-7d9f8-abcde")),
        signals("lockers", "locker-booking", requests=ERRORS_UP), *extra)


def test_an_in_cluster_dependency_slow_by_its_own_metrics_is_the_culprit() -> None:
    report = "locker-booking times out on a third of reservations"
    facts = lockers(signals("maps", "geo-index", latency=SLOW))
    found = ranked(facts, report, run_detectors(facts, scope_of(facts, report)))
    assert categories(found)[0] == ("dependency_failure", "geo-index")
    assert [r.name for r in found[0].affects] == ["locker-booking"]
    assert "dep-own-signal" in {c.topic for c in found[0].clues}

    quiet = lockers(signals("maps", "geo-index", latency={"abnormal": False, "why": "steady"}))
    alone = dependency.detect(quiet, scope_of(quiet, report))
    assert categories(alone) == [("dependency_failure", "locker-booking")]


TUTOR = ('msg="Error for HTTP request" target=https://learn.example.org/health/live err="Get '
         '\\"https://learn.example.org/health/live\\": tls: failed to verify certificate: x509: '
         'certificate has expired or is not yet valid"')
INGRESSES = obs("k8s_list_ingresses", {"total": 1, "ingresses": [
    {"name": "tutor-web", "namespace": "tutoring", "class": "haproxy",
     "routes": ["learn.example.org/ → tutor-web:80"],
     "tls": [{"hosts": ["learn.example.org"], "secretName": "tutor-web-tls"}],
     "address": ["203.0.113.7"]}]})


def tutoring(*extra: Observation) -> Facts:
    return facts_of(
        workloads(workload("tutor-web", "tutoring"), workload("blackbox-exporter", "monitoring")),
        patterns(pattern(TUTOR, service="blackbox-exporter", pod="blackbox-exporter-5c6d7-x1y2z",
                         count=20)), *extra)


def test_a_public_host_served_by_an_ingress_blames_the_workload_behind_it() -> None:
    report = "students see certificate warnings on learn.example.org"
    unknown = tutoring()
    found = certificate.detect(unknown, scope_of(unknown, report))
    assert categories(found) == [("certificate", "blackbox-exporter")]
    assert found[0].followups[0].tool == "k8s_list_ingresses"

    known = tutoring(INGRESSES)
    assert known.ingress_hosts == {"learn.example.org": ("tutoring", "tutor-web")}
    found = certificate.detect(known, scope_of(known, report))
    assert categories(found) == [("certificate", "tutor-web")]
    assert [r.name for r in found[0].affects] == ["blackbox-exporter"]
    assert all(f.tool != "k8s_list_ingresses" for f in found[0].followups)


def test_ingress_routes_are_read_by_host() -> None:
    facts = facts_of()
    read_ingresses(INGRESSES, facts)
    assert facts.ingresses_read and facts.ingress_hosts["learn.example.org"] == (
        "tutoring", "tutor-web")


UPSTREAM = ('upstream timed out (110: Operation timed out) while connecting to upstream, client: '
            '84.86.53.9, server: book.example.org, request: "GET /pets HTTP/2.0", upstream: '
            '"http://10.42.0.168:3000/pets", host: "book.example.org"')
POD_AT = obs("k8s_list_pods", {"namespace": "all", "total": 1, "pods": [
    {"name": "booking-web-7d9f8c6b5-a1b2c", "namespace": "kennels", "status": "Running",
     "ready": "1/1", "ip": "10.42.0.168", "owner": "Deployment/booking-web"}]}, ip="10.42.0.168")
GUARDS = obs("k8s_list_network_policies", {"total": 2, "policies": [
    {"name": "default-deny", "namespace": "kennels", "applies_to": "all pods",
     "selected_pods": 3, "types": ["Ingress"], "ingress": "deny all",
     "created": "2025-10-25T08:26:00Z (401d ago)"},
    {"name": "allow-edge", "namespace": "kennels", "applies_to": "app=booking-web",
     "selected_pods": 3, "types": ["Ingress"], "selected_workloads": ["Deployment/booking-web"],
     "created": "2025-11-19T08:26:00Z (376d ago)",
     "ingress": ["from namespaces zone=dmz (matches no namespace) and pods "
                 "app=ingress-nginx on TCP/3000"]}]}, namespace="kennels")


def gateway(*extra: Observation) -> Facts:
    return facts_of(
        workloads(workload("ingress-nginx-controller", "ingress-nginx"),
                  workload("booking-web", "kennels")),
        patterns(pattern(UPSTREAM, service="ingress-nginx", count=42,
                         pod="ingress-nginx-controller-6c9d7f5b8-q2w3e")), *extra)


def test_an_upstream_pod_address_is_looked_up_and_its_namespace_s_policies_read() -> None:
    report = "book.example.org gives 504 Gateway Time-out"
    facts = gateway()
    (alone,) = dependency.detect(facts, scope_of(facts, report))
    assert any(f.tool == "k8s_list_pods" and f.arguments == {"ip": "10.42.0.168"}
               for f in alone.followups)
    assert not any(f.arguments == {"ip": "84.86.53.9"} for f in alone.followups)  # public
    located = gateway(POD_AT)
    (inside,) = dependency.detect(located, scope_of(located, report))
    assert "the dependency 10.42.0.168 runs in the cluster" in inside.demoted_because
    assert any(f.tool == "k8s_list_network_policies" and f.arguments == {"namespace": "kennels"}
               for f in inside.followups)


def test_a_policy_whose_namespace_selector_matches_nothing_cuts_the_upstream_off() -> None:
    report = "book.example.org gives 504 Gateway Time-out"
    facts = gateway(POD_AT, GUARDS)
    found = ranked(facts, report, run_detectors(facts, scope_of(facts, report)))
    assert categories(found)[0] == ("network", "allow-edge")
    assert found[0].culprit.kind == "NetworkPolicy"
    assert "policy-stale" in {c.topic for c in found[0].clues}
    assert not found[0].demoted_because  # the namespaces changed, not the old policy
    deny = next(c for c in found if c.culprit.name == "default-deny")
    assert deny.score < found[0].score


def test_a_weak_leader_s_checks_are_still_followed() -> None:
    facts = gateway(POD_AT)
    report = "book.example.org gives 504 Gateway Time-out"
    leads = ranked(facts, report, run_detectors(facts, scope_of(facts, report)))
    leads[0].relevance = 0.2  # a report that names neither the gateway nor the app
    assert leads[0].score < 0.15
    specs = {name: ToolSpec(name, "", {"properties": {"namespace": {}, "workload": {},
                                                      "ip": {}}})
             for name in ("k8s_list_network_policies", "k8s_rollout_history")}
    box = Toolbox(specs, Transcript(), frozenset())
    follow(box, leads)
    assert ("k8s_list_network_policies", {"namespace": "kennels"}) in [
        (tool, args) for tool, args, _ in box.calls]
