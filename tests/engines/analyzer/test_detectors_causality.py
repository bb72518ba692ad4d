"""Whose fault it is when the symptom shows elsewhere: a rollout whose new errors are a
failing dependency's, a DNS server that cannot pull its image, pods kept Pending by the
taint of a node under pressure, a latency regression in a workload the named one calls, and
a client that refuses a certificate without naming the server."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from engines.analyzer.detectors import certificate, rollout, run_detectors, scheduling
from engines.analyzer.detectors._targets import named
from engines.analyzer.facts import Ref
from engines.analyzer.planner import Toolbox, hints
from engines.analyzer.transcript import Observation, Transcript
from engines.model import ToolSpec
from tests.engines.analyzer.helpers import (
    NOW,
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
from tests.engines.analyzer.test_detectors_cluster import rollout_obs
from tests.engines.analyzer.test_detectors_regressions import CACHE_IMAGE, LOOKUP, callers

ERRORS_UP = {"abnormal": True, "why": "5xx ratio rose from 0.2% to 34.6% at 2026-11-30T09:30:00Z",
             "change": {"at": "2026-11-30T09:30:00Z", "error_ratio_before": 0.002,
                        "error_ratio_after": 0.346}}
LATENCY_UP = {"abnormal": True, "why": "p99 rose from 0.4s to 5s at 2026-11-30T09:27:00Z",
              "change": {"at": "2026-11-30T09:27:00Z"}}
PROXY = "booking proxy: upstream cart-api answered 500 for POST /v1/carts"
FRESH = "2026-11-30T09:25:00Z (35m ago)"


# A rollout explains only errors of its own code.

def shop(*extra: Observation) -> Any:
    """storefront (web) was just rolled out and logs 5xx answers of cart-api (carts)."""
    return facts_of(
        workloads(workload("storefront", "web"), workload("cart-api", "carts"),
                  workload("cart-worker", "carts")),
        rollout_obs("storefront", "web", FRESH),
        patterns(pattern(PROXY, service="storefront", pod="storefront-5d6f7-abcde")), *extra)


def test_a_rollout_whose_new_errors_are_a_failing_callee_s_loses_to_the_callee() -> None:
    report = "booking fails on the storefront since 09:30, we released storefront at 09:25"
    failing = shop(
        patterns(pattern("lock slot: context deadline exceeded (3s)", service="cart-api",
                         pod="cart-api-7c8d9-fghij")),
        signals("carts", "cart-api", requests=ERRORS_UP),
        rollout_obs("cart-api", "carts", "2026-11-01T10:00:00Z (29d ago)"))
    found = ranked(failing, report, run_detectors(failing, scope_of(failing, report)))
    assert categories(found)[0] == ("dependency_failure", "cart-api")
    release = next(c for c in found if c.category == "bad_rollout")
    assert release.demoted_because == ["Deployment carts/cart-api, which it depends on, fails "
                                       "by itself (dependency failure)"]
    assert found[0].relevance > 0.85  # storefront names cart-api across namespaces

    healthy = shop()  # cart-api fine: the 500s are the new storefront's own doing
    alone = rollout.detect(healthy, scope_of(healthy, report))
    assert categories(alone) == [("bad_rollout", "storefront")]
    assert alone[0].penalty == 1.0
    assert max(c.weight for c in alone[0].clues if c.topic == "new-errors") == 0.4


def test_a_workload_of_another_namespace_is_named_only_when_its_name_is_unique() -> None:
    caller = Ref("Deployment", "web", "storefront")
    unique = facts_of(workloads(workload("storefront", "web"), workload("cart-api", "carts")))
    assert named(PROXY, caller, unique) == [Ref("Deployment", "carts", "cart-api")]
    twice = facts_of(workloads(workload("storefront", "web"), workload("cart-api", "carts"),
                               workload("cart-api", "staging")))
    assert named(PROXY, caller, twice) == []


# A DNS server's new pods that cannot pull: image_pull, not a network outage.

def test_a_dns_server_that_cannot_pull_its_new_image_is_an_image_pull() -> None:
    pulling = describe("node-local-dns-x7k2p", "kube-system", owner="node-local-dns",
                       status="ImagePullBackOff", containers=[{
                           "name": "node-cache", "image": CACHE_IMAGE, "ready": False,
                           "ports": ["53/UDP (dns)", "53/TCP (dns-tcp)"],
                           "state": {"waiting": "ImagePullBackOff",
                                     "message": f"Back-off pulling image \"{CACHE_IMAGE}\""}}],
                       events=[event("Failed", "Pod/node-local-dns-x7k2p",
                                     f"Failed to pull image \"{CACHE_IMAGE}\": not found",
                                     namespace="kube-system")])
    facts = facts_of(
        workloads(workload("node-local-dns", "kube-system", kind="DaemonSet", ready="4/6",
                           images=[CACHE_IMAGE], pods={"statuses": {"ImagePullBackOff": 2}}),
                  workload("fx-rates", "treasury"), workload("payouts", "treasury")),
        pulling,
        callers(("fx-rates", "treasury", LOOKUP),
                ("payouts", "treasury", "payout failed: getaddrinfo EAI_AGAIN ledger.books.svc")))
    report = "fx-rates and payouts in treasury fail since 09:40"
    found = ranked(facts, report, run_detectors(facts, scope_of(facts, report)))
    assert (found[0].category, found[0].culprit.name) == ("image_pull", "node-local-dns")
    assert not found[0].demoted_because
    outage = next(c for c in found if c.category == "network")
    assert "its new pods cannot start: that is the cause" in outage.demoted_because


# Pods kept Pending by a node's condition taint: the node's failure.

PRESSURE_TAINT = ("0/6 nodes are available: 1 node(s) had untolerated taint "
                  "{node.kubernetes.io/pid-pressure: }, 5 node(s) had volume node affinity "
                  "conflict. preemption: 0/6 nodes are available.")


def pending_db(*extra: Observation) -> Any:
    return facts_of(
        workloads(workload("orders-db", "orders", kind="StatefulSet", ready="0/1",
                           pods={"statuses": {"Pending": 1}})),
        events(event("FailedScheduling", "Pod/orders-db-0", PRESSURE_TAINT, namespace="orders")),
        *extra)


PRESSURED = obs("k8s_list_nodes", {"total": 6, "with_problems": 1, "nodes": [
    {"name": "wrk-5", "ready": "True", "taints": ["node.kubernetes.io/pid-pressure:NoSchedule"],
     "problems": ["PIDPressure since 2026-11-30T09:30:00Z (30m ago): kubelet has insufficient "
                  "PID available"]}]}, problems_only=True)


def test_pods_pending_on_a_pressure_taint_blame_the_node_under_pressure() -> None:
    facts = pending_db(PRESSURED, events(event(
        "Evicted", "Pod/batch-7c8d9-fghij", "The node had condition: [PIDPressure].",
        namespace="orders"), event("EvictionThresholdMet", "Node/wrk-5",
                                   "Attempting to reclaim pids", namespace="")))
    report = "orders-db is down since 09:30"
    found = ranked(facts, report, run_detectors(facts, scope_of(facts, report)))
    assert (found[0].category, found[0].culprit.name) == ("node_failure", "wrk-5")
    assert Ref("StatefulSet", "orders", "orders-db") in found[0].affects
    assert "node-blocks-pods" in {c.topic for c in found[0].clues}
    pending = next(c for c in found if c.category == "unschedulable")
    assert pending.demoted_because and "wrk-5" in pending.demoted_because[0]


def test_a_pressure_taint_without_a_node_seen_under_pressure_stays_unschedulable() -> None:
    facts = pending_db()
    found = scheduling.detect(facts, scope_of(facts, "orders-db is down"))
    assert categories(found) == [("unschedulable", "orders-db")]
    assert found[0].penalty == 1.0


# The named workload is healthy: look one hop down its calls.

def test_the_planner_reads_what_changed_in_a_workload_the_named_one_calls() -> None:
    facts = facts_of(
        workloads(workload("quote-web", "sales"), workload("quote-pricer", "sales")),
        patterns(pattern("upstream quote-pricer POST /api/v2/quotes took 3200ms (budget 800ms)",
                         service="quote-web", pod="quote-web-5d6f7-abcde", level="warn")))
    specs = {name: ToolSpec(name, "", {"properties": {"namespace": {}, "workload": {},
                                                      "since": {}}})
             for name in ("k8s_rollout_history", "metrics_workload_signals")}
    box = Toolbox(specs, Transcript(), frozenset())
    hints(box, facts, scope_of(facts, "quotes are slow on quote-web"),
          [Ref("Deployment", "sales", "quote-web")])
    asked = {(tool, args.get("workload")) for tool, args, _ in box.calls}
    assert ("k8s_rollout_history", "quote-pricer") in asked
    assert ("metrics_workload_signals", "quote-pricer") in asked


def test_a_latency_regression_of_the_callee_beats_an_old_oom_kill() -> None:
    report = "quotes are slow on quote-web since 09:30, nothing deployed on the web"
    oom = describe("vehicle-lookup-7c8d9-fghij", "sales", owner="vehicle-lookup",
                   containers=[{"name": "vehicle-lookup", "ready": True, "restarts": 1,
                                "limits": {"memory": "512Mi"}, "state": {"running": True},
                                "last_state": {"terminated": "OOMKilled", "exit_code": 137,
                                               "finished": "2026-11-30T04:00:00Z (6h ago)"}}])
    facts = facts_of(
        workloads(workload("quote-web", "sales"), workload("quote-pricer", "sales"),
                  workload("vehicle-lookup", "sales")),
        patterns(pattern("upstream quote-pricer POST /api/v2/quotes took 3200ms (budget 800ms)",
                         service="quote-web", pod="quote-web-5d6f7-abcde", level="warn")),
        rollout_obs("quote-pricer", "sales", FRESH), signals("sales", "quote-pricer",
                                                             latency=LATENCY_UP), oom)
    found = ranked(facts, report, run_detectors(facts, scope_of(facts, report)))
    assert (found[0].category, found[0].culprit.name) == ("bad_rollout", "quote-pricer")


# A client refuses a peer's certificate without naming the host.

PKIX = ("Sealing failed: javax.net.ssl.SSLHandshakeException: PKIX path validation failed: "
        "validity check failed; CertificateExpiredException")
EXPIRED = ("stamp failed: Post \"https://tsa.trust.svc:8443/tsa\": tls: failed to verify "
           "certificate: x509: certificate has expired or is not yet valid")


def test_a_client_that_names_no_host_blames_the_server_others_refuse() -> None:
    facts = facts_of(
        workloads(workload("tsa", "trust"), workload("sealer", "docs"), workload("signer", "docs")),
        patterns(pattern(PKIX, service="sealer", pod="sealer-5d6f7-abcde"),
                 pattern(EXPIRED, service="signer", pod="signer-6e7f8-klmno")))
    found = certificate.detect(facts, scope_of(facts, "the sealer fails"))
    assert categories(found) == [("certificate", "tsa")]
    assert {r.name for r in found[0].affects} == {"sealer", "signer"}
    alone = facts_of(workloads(workload("sealer", "docs")),
                     patterns(pattern(PKIX, service="sealer", pod="sealer-5d6f7-abcde")))
    assert categories(certificate.detect(alone, scope_of(alone, "the sealer fails"))) == [
        ("certificate", "sealer")]


# A change explains a symptom only when the symptom begins shortly after it.

HEALTHY = {"abnormal": False, "why": "5xx ratio 0.06%, no significant rise"}
CANARY_ERRORS = {"abnormal": True, "why": "11.1% of requests fail with 5xx"}


def single_revision(name: str, namespace: str, created: str, image: str) -> Observation:
    return obs("k8s_rollout_history", {
        "workload": f"Deployment {namespace}/{name}", "current_revision": 1,
        "revisions": [{"revision": 1, "replicaset": f"{name}-5d6f7", "current": True,
                       "created": created, "images": [image], "pods": "ready 1/1"}]},
        namespace=namespace, workload=name)


def test_a_rollout_long_before_the_errors_loses_to_the_dependency_they_name() -> None:
    report = "card balance checks fail with 'balance service unavailable' since 09:30"
    late = {"abnormal": True, "change": {"at": "2026-11-30T09:30:00Z"},
            "why": "5xx ratio rose from 0.2% to 21.5% at 2026-11-30T09:30:00Z"}
    facts = facts_of(
        workloads(workload("balance-api", "cards")),
        rollout_obs("balance-api", "cards", "2026-11-30T08:15:00Z (1h45m ago)"),
        signals("cards", "balance-api", requests=late),
        patterns(pattern("GET /v2/balance 503 cache unavailable after 800ms", service="balance-api",
                         pod="balance-api-5d6f7-abcde", first="2026-11-30T09:31:00Z")))
    found = ranked(facts, report, run_detectors(facts, scope_of(facts, report)))
    assert categories(found)[0] == ("dependency_failure", "balance-api")
    late_rollout = next(c for c in found if c.category == "bad_rollout")
    assert any("75m after it" in c.note for c in late_rollout.clues)


def test_a_rollout_shortly_before_the_errors_keeps_its_full_weight() -> None:
    created = NOW - timedelta(minutes=35)
    assert rollout._lag(created, created + timedelta(minutes=5)) == 1.0
    assert rollout._lag(created, created + timedelta(minutes=65)) == rollout.LATE
    assert rollout._lag(created, created + timedelta(hours=3)) == 0.0
    assert rollout._lag(created, None) == 0.0


def test_a_canary_beside_the_stable_workload_is_a_bad_rollout() -> None:
    report = "substitutions intermittently fail in grocer, retrying usually works"
    facts = facts_of(
        workloads(workload("substitution-engine", "grocer"),
                  workload("substitution-engine-canary", "grocer", ready="1/1")),
        single_revision("substitution-engine", "grocer", "2026-11-26T10:00:00Z (4d ago)",
                        "registry.example.com/substitution-engine:3.14.2"),
        single_revision("substitution-engine-canary", "grocer", "2026-11-30T09:13:00Z (47m ago)",
                        "registry.example.com/substitution-engine:3.15.0"),
        signals("grocer", "substitution-engine", requests=HEALTHY),
        signals("grocer", "substitution-engine-canary", requests=CANARY_ERRORS))
    found = rollout.detect(facts, scope_of(facts, report))
    assert categories(found) == [("bad_rollout", "substitution-engine-canary")]
    assert any("while substitution-engine on the previous version is healthy" in c.note
               for c in found[0].clues)
    assert "--replicas=0" in found[0].fix


def test_a_new_workload_of_another_image_is_no_canary() -> None:
    facts = facts_of(
        workloads(workload("pricing", "grocer"), workload("substitution-engine", "grocer")),
        single_revision("pricing", "grocer", "2026-11-26T10:00:00Z (4d ago)",
                        "registry.example.com/pricing:2.0.0"),
        single_revision("substitution-engine", "grocer", "2026-11-30T09:13:00Z (47m ago)",
                        "registry.example.com/substitution-engine:3.15.0"),
        signals("grocer", "substitution-engine", requests=CANARY_ERRORS))
    assert rollout.detect(facts, scope_of(facts, "substitutions fail")) == []
