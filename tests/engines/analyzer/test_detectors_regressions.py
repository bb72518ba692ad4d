"""Regressions a new revision brings (also of StatefulSets and DaemonSets, even with a probe
flapping along), told apart from probe failures; and the cluster's DNS server going down,
told apart from an ordinary crash loop."""

from __future__ import annotations

from typing import Any

from engines.analyzer.detectors import crash, dns, probe, rollout, run_detectors
from engines.analyzer.detectors._common import phrase_in
from engines.analyzer.detectors.network import DNS_LOOKUP
from engines.analyzer.transcript import Observation
from tests.engines.analyzer.helpers import (
    categories,
    describe,
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

ERRORS_UP = {"abnormal": True, "why": "5xx ratio rose from 0.0% to 6.1% at 2026-11-30T09:21:00Z",
             "change": {"at": "2026-11-30T09:21:00Z", "error_ratio_before": 0.0,
                        "error_ratio_after": 0.061}}
STORE_POD = "ledger-store-2"


def controller_rollout(name: str = "ledger-store", namespace: str = "books", *,
                       kind: str = "StatefulSet", first: str = "2026-11-30T09:18:00Z (42m ago)",
                       created: str = "2026-02-01T08:00:00Z (302d ago)", replaced: int = 3,
                       pods: str = "ready 3/3") -> Observation:
    """k8s_rollout_history of a StatefulSet or DaemonSet whose update is complete."""
    data: dict[str, Any] = {
        "workload": f"{kind} {namespace}/{name}", "images": [f"reg.io/{name}:4.1.0"],
        "created": created, "current_revision": f"{name}-8c7b6", "update_revision":
        f"{name}-8c7b6", "rolling": False,
        "revisions": [{"revision": f"{name}-8c7b6", "current": True, "first_pod_created": first,
                       "last_pod_created": first, "images": [f"reg.io/{name}:4.1.0"],
                       "pods": pods}]}
    if replaced:
        data["pods_replaced_by_controller"] = {"deleted": replaced, "first": first,
                                               "last": first}
    return obs("k8s_rollout_history", data, namespace=namespace, workload=name)


def access(route: str, status: int, *, level: str, count: int = 30,
           first: str = "2026-11-30T09:21:00Z") -> dict[str, Any]:
    return pattern(f"{route} {status} 12ms", service="ledger-store", pod=STORE_POD,
                   count=count, level=level, first=first)


def store_facts(*extra: Observation, probe_last: str = "2026-11-30T09:14:00Z (46m ago)") -> Any:
    failing = pattern("Request processing failed: InvalidDefinitionException: Instant not "
                      "supported", service="ledger-store", pod=STORE_POD, count=40,
                      first="2026-11-30T09:21:30Z")
    return facts_of(
        workloads(workload("ledger-store", "books", kind="StatefulSet"),
                  workload("ledger-ui", "books")),
        events(event("Unhealthy", f"Pod/{STORE_POD}", "Readiness probe failed: HTTP probe "
                     "failed with statuscode: 503", namespace="books", count=24,
                     last=probe_last, first="2026-11-30T09:18:20Z (42m ago)")),
        patterns(failing, access("GET /v1/books/{id}/receipts", 500, level="error"),
                 access("GET /v1/books/{id}", 200, level="info", count=80,
                        first="2026-11-30T08:10:00Z"), namespace="books"),
        controller_rollout(), signals("books", "ledger-store", requests=ERRORS_UP), *extra)


def test_a_statefulset_updated_in_place_before_the_errors_is_a_bad_rollout() -> None:
    facts = store_facts()
    found = rollout.detect(facts, scope_of(facts, "receipts tab fails since 09:20 in books"))
    assert categories(found) == [("bad_rollout", "ledger-store")]
    assert found[0].culprit.kind == "StatefulSet" and found[0].strength > 0.6
    assert any("deleted and recreated 3" in c.note for c in found[0].clues)
    assert "rollout undo statefulset/ledger-store" in found[0].fix


def test_errors_on_one_route_while_others_answer_say_the_revision_serves() -> None:
    facts = store_facts()
    clues = {c.topic: c for c in rollout.detect(facts, scope_of(facts, "books errors"))[0].clues}
    assert "one-route" in clues and "GET /v1/books/{id}/receipts" in clues["one-route"].note
    everything = facts_of(
        patterns(access("GET /v1/books/{id}/receipts", 500, level="error"),
                 access("GET /v1/books/{id}", 503, level="error"), namespace="books"),
        controller_rollout(), signals("books", "ledger-store", requests=ERRORS_UP))
    clues = {c.topic for c in rollout.detect(everything, scope_of(everything, "books"))[0].clues}
    assert "one-route" not in clues


def test_a_controller_whose_pods_are_as_old_as_itself_was_not_updated() -> None:
    fresh = facts_of(controller_rollout(created="2026-11-30T09:17:00Z (43m ago)"),
                     signals("books", "ledger-store", requests=ERRORS_UP))
    assert rollout.detect(fresh, scope_of(fresh, "books")) == []
    quiet = facts_of(controller_rollout(replaced=0))
    found = rollout.detect(quiet, scope_of(quiet, "books"))
    assert found and found[0].strength < 0.2


def test_readiness_failures_only_while_the_new_pods_started_lose_to_the_regression() -> None:
    facts = store_facts()
    scope = scope_of(facts, "receipts tab fails since 09:20 in books")
    found = ranked(facts, "receipts tab fails since 09:20 in books", run_detectors(facts, scope))
    assert categories(found)[0] == ("bad_rollout", "ledger-store")
    flapping = next(c for c in found if c.category == "probe_failure")
    assert flapping.strength < 0.3 and "stopped" in flapping.demoted_because[0]


def test_ongoing_5xx_probe_answers_with_application_errors_only_relay_them() -> None:
    ongoing = store_facts(probe_last="2026-11-30T09:58:00Z (2m ago)")
    quiet = facts_of(events(event("Unhealthy", f"Pod/{STORE_POD}", "Readiness probe failed: "
                                  "HTTP probe failed with statuscode: 503", namespace="books",
                                  count=24)),
                     workloads(workload("ledger-store", "books", kind="StatefulSet")))
    relayed = probe.detect(ongoing, scope_of(ongoing, "books"))[0]
    alone = probe.detect(quiet, scope_of(quiet, "books"))[0]
    assert relayed.strength < alone.strength
    assert "relays the application's own errors" in relayed.demoted_because[0]
    scope = scope_of(ongoing, "receipts tab fails since 09:20 in books")
    leader = ranked(ongoing, "receipts tab fails since 09:20", run_detectors(ongoing, scope))[0]
    assert (leader.category, leader.culprit.name) == ("bad_rollout", "ledger-store")


def test_a_probe_that_gets_404_on_a_new_revision_still_beats_the_rollout() -> None:
    facts = facts_of(
        workloads(workload("ledger-store", "books", kind="StatefulSet", ready="0/3")),
        events(event("Unhealthy", f"Pod/{STORE_POD}", "Readiness probe failed: HTTP probe "
                     "failed with statuscode: 404", namespace="books", count=120)),
        controller_rollout(pods="ready 0/3"), signals("books", "ledger-store",
                                                      requests=ERRORS_UP))
    scope = scope_of(facts, "ledger-store rollout stuck")
    found = ranked(facts, "ledger-store rollout stuck", run_detectors(facts, scope))
    assert categories(found)[0] == ("probe_failure", "ledger-store")


# The cluster's DNS server, known by generic signs.

CACHE_IMAGE = "registry.k8s.io/dns/k8s-dns-node-cache:1.23.1"
LOOKUP = ("fetch rates: dial tcp: lookup fx.bank.example on 169.254.20.10:53: read udp "
          "10.0.4.7:51514->169.254.20.10:53: i/o timeout")


def crashing_pod(owner: str = "node-local-dns", namespace: str = "kube-system", *,
                 image: str = CACHE_IMAGE, ports: tuple[str, ...] = ("53/UDP (dns)",
                                                                     "53/TCP (dns-tcp)"),
                 ) -> Observation:
    return describe(f"{owner}-x7k2p", namespace, owner=owner, status="CrashLoopBackOff",
                    containers=[{"name": "main", "image": image, "ready": False,
                                 "restarts": 14, "ports": list(ports),
                                 "state": {"waiting": "CrashLoopBackOff"},
                                 "last_state": {"terminated": "Error", "exit_code": 1,
                                                "started": "2026-11-30T09:57:00Z (3m ago)",
                                                "finished": "2026-11-30T09:57:02Z (3m ago)"}}])


def callers(*lines: tuple[str, str, str]) -> Observation:
    return patterns(*[pattern(text, service=name, pod=f"{name}-6c9d7f5b8-q2w3e", count=30)
                      for name, _, text in lines])


def test_the_cluster_dns_down_while_callers_cannot_resolve_is_a_network_fault() -> None:
    facts = facts_of(
        workloads(workload("node-local-dns", "kube-system", kind="DaemonSet", ready="0/4",
                           images=[CACHE_IMAGE], pods={"statuses": {"CrashLoopBackOff": 4}}),
                  workload("fx-rates", "treasury"), workload("payouts", "treasury")),
        crashing_pod(),
        callers(("fx-rates", "treasury", LOOKUP),
                ("payouts", "treasury", "payout failed: getaddrinfo EAI_AGAIN ledger.books.svc")))
    scope = scope_of(facts, "fx-rates and payouts in treasury fail since 09:40")
    found = ranked(facts, "fx-rates and payouts in treasury fail since 09:40",
                   run_detectors(facts, scope))
    assert (found[0].category, found[0].culprit.kind, found[0].culprit.name) == (
        "network", "DaemonSet", "node-local-dns")
    assert {r.name for r in found[0].affects} == {"fx-rates", "payouts"}
    crashing = next(c for c in found if c.category == "crash_loop")
    assert crashing.culprit.name == "node-local-dns" and crashing.demoted_because


def test_a_dns_server_is_known_by_its_port_53_service_whatever_its_name() -> None:
    services = obs("k8s_list_services", {"total": 1, "services": [{
        "name": "cluster-resolver", "ports": ["53→53/UDP", "53→53/TCP"],
        "selector": "k8s-app=resolver", "pods": "0 ready of 2 matching",
        "endpoints": {"ready": 0, "not_ready": 2},
        "problems": ["none of the 2 matching pods is ready"]}]}, namespace="infra")
    facts = facts_of(workloads(workload("resolver", "infra", ready="0/2"),
                               workload("fx-rates", "treasury")), services,
                     callers(("fx-rates", "treasury", LOOKUP)))
    assert dns.servers(facts) == {dns.Ref("Deployment", "infra", "resolver"):
                                  "Service cluster-resolver (port 53) selects it"}
    found = dns.detect(facts, scope_of(facts, "fx-rates fails"))
    assert categories(found) == [("network", "resolver")]
    assert "dns-endpoints" in {c.topic for c in found[0].clues}


def test_a_ready_dns_server_that_logs_failed_lookups_is_still_the_culprit() -> None:
    upstream = pattern("[ERROR] plugin/errors: 2 fx.bank.example. A: read udp "
                       "10.0.9.4:40112->10.20.0.2:53: i/o timeout", service="node-local-dns",
                       pod="node-local-dns-x7k2p", count=60)
    facts = facts_of(workloads(workload("node-local-dns", "kube-system", kind="DaemonSet",
                                        ready="4/4", images=[CACHE_IMAGE]),
                               workload("fx-rates", "treasury")),
                     patterns(upstream), callers(("fx-rates", "treasury", LOOKUP)))
    found = dns.detect(facts, scope_of(facts, "fx-rates fails"))
    assert categories(found) == [("network", "node-local-dns")]
    assert {c.topic for c in found[0].clues} >= {"dns-own-errors", "dns-callers"}
    assert found[0].strength > 0.5


def test_a_healthy_dns_server_is_not_blamed_for_lookup_failures() -> None:
    facts = facts_of(workloads(workload("node-local-dns", "kube-system", kind="DaemonSet",
                                        ready="4/4", images=[CACHE_IMAGE]),
                               workload("fx-rates", "treasury")),
                     callers(("fx-rates", "treasury", LOOKUP)))
    assert dns.detect(facts, scope_of(facts, "fx-rates fails")) == []


def test_an_ordinary_app_crash_looping_stays_a_crash_loop() -> None:
    facts = facts_of(
        workloads(workload("fx-rates", "treasury", ready="0/2",
                           pods={"statuses": {"CrashLoopBackOff": 2}}),
                  workload("payouts", "treasury"),
                  workload("coredns", "kube-system", ready="2/2",
                           images=["registry.k8s.io/coredns/coredns:v1.11.1"])),
        crashing_pod("fx-rates", "treasury", image="reg.io/fx-rates:3.2", ports=("8080/TCP",)),
        callers(("payouts", "treasury", "payout failed: no such host fx-rates.treasury.svc")))
    scope = scope_of(facts, "fx-rates keeps restarting")
    found = ranked(facts, "fx-rates keeps restarting", run_detectors(facts, scope))
    assert categories(found)[0] == ("crash_loop", "fx-rates")
    assert not any(c.category == "network" for c in found)
    assert crash.detect(facts, scope)[0].penalty == 1.0


def test_lookup_failures_on_port_53_are_found_right_after_an_address() -> None:
    assert phrase_in("on 10.0.0.10:53: i/o timeout", DNS_LOOKUP) == ":53: i/o timeout"
    assert phrase_in("retrying in 53: seconds", DNS_LOOKUP) is None
