"""What a dependency answers, how a container was stopped, and which Service is at fault:
an outside API's error status, throttling or a replica refusing writes blame the caller's
dependency; a client out of local ports is its own exhaustion; a container that shut down
on SIGTERM while its liveness probe failed was killed by the probe; a node-local Service
and an ExternalName alias are the network fault their callers only report."""

from __future__ import annotations

from engines.analyzer.detectors import (
    dependency,
    evidence,
    exhaustion,
    network,
    node,
    run_detectors,
)
from engines.analyzer.detectors._common import CLAIMS
from engines.analyzer.facts import Facts
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
from tests.engines.analyzer.test_detectors_cluster import rollout_obs

REPORT = "members say their points are not credited since 9am"


def caller_logging(line: str, *extra: Observation) -> Facts:
    return facts_of(workloads(workload("points-sync", "loyalty"), workload("accrual", "loyalty")),
                    patterns(pattern(line, service="points-sync", pod="points-sync-6c8b-x1")),
                    *extra)


def test_an_outside_api_answering_an_error_status_is_a_failing_dependency() -> None:
    facts = caller_logging("POST https://api.partner.example/v1/accruals -> 410 Gone")
    found = dependency.detect(facts, scope_of(facts, REPORT))
    assert categories(found) == [("dependency_failure", "points-sync")]


def test_a_status_the_caller_answered_itself_is_not_a_dependency() -> None:
    facts = caller_logging("POST /v1/accruals -> 503 while handling member request")
    assert dependency.detect(facts, scope_of(facts, REPORT)) == []


def test_throttling_counts_only_from_an_outside_host() -> None:
    outside = caller_logging("PUT https://objects.store.example/b/k failed: 503 SlowDown: "
                             "Please reduce your request rate.")
    assert categories(dependency.detect(outside, scope_of(outside, REPORT))) == [
        ("dependency_failure", "points-sync")]
    inside = caller_logging("analytics beacon rejected by collector: 429 Too Many Requests")
    assert dependency.detect(inside, scope_of(inside, REPORT)) == []


def test_a_database_refusing_writes_after_a_failover_is_a_failing_dependency() -> None:
    facts = caller_logging("ERROR: cannot execute INSERT in a read-only transaction")
    found = dependency.detect(facts, scope_of(facts, REPORT))
    assert categories(found) == [("dependency_failure", "points-sync")]


def test_a_client_out_of_local_ports_exhausts_itself() -> None:
    facts = caller_logging("dial tcp 10.0.4.7:8080: connect: cannot assign requested address")
    scope = scope_of(facts, REPORT)
    assert categories(exhaustion.detect(facts, scope)) == [("resource_exhaustion", "points-sync")]
    assert dependency.detect(facts, scope) == []


def gateway(last_words: str) -> Facts:
    container = {"name": "gateway", "state": "waiting: CrashLoopBackOff", "ready": False,
                 "restarts": 11, "last_state": {"terminated": "Error", "exit_code": 2},
                 "liveness_probe": "http-get :8080/livez delay=10s period=5s failure=3"}
    return facts_of(
        workloads(workload("payment-gateway", "billing", ready="4/5", restarts=11)),
        describe("payment-gateway-5f9c-rj8tz", "billing", owner="payment-gateway",
                 containers=[container], status="CrashLoopBackOff"),
        events(event("Unhealthy", "Pod/payment-gateway-5f9c-rj8tz", 'Liveness probe failed: Get '
                     '"http://10.44.2.57:8080/livez": dial tcp 10.44.2.57:8080: connect: '
                     'connection refused', namespace="billing", count=37),
               event("BackOff", "Pod/payment-gateway-5f9c-rj8tz", "Back-off restarting failed "
                     "container gateway", namespace="billing", count=14)),
        obs("k8s_pod_logs", {"pod": "payment-gateway-5f9c-rj8tz", "container": "gateway",
                             "instance": "previous", "last_lines": [
                                 "INFO listening on :9090", last_words]},
            namespace="billing", pod="payment-gateway-5f9c-rj8tz", previous=True))


def test_a_container_stopped_on_sigterm_while_its_liveness_probe_fails_is_a_probe_failure(
        ) -> None:
    report = "payment-gateway is crashlooping since the release"
    killed = gateway("INFO received signal terminated, shutting down gracefully")
    found = ranked(killed, report, run_detectors(killed, scope_of(killed, report)))
    assert categories(found)[0] == ("probe_failure", "payment-gateway")
    crashed = gateway("FATAL config key payments.url missing, exiting")
    found = ranked(crashed, report, run_detectors(crashed, scope_of(crashed, report)))
    assert categories(found)[0] == ("crash_loop", "payment-gateway")


def services(*rows: dict[str, object]) -> Observation:
    return obs("k8s_list_services", {"total": len(rows), "services": list(rows)})


NODE_LOCAL = {"name": "geocoder", "namespace": "geo", "type": "ClusterIP",
              "cluster_ip": "10.0.148.23", "selector": "app=geocoder",
              "pods": "3 ready of 3 matching", "endpoints": {"ready": 3, "not_ready": 0},
              "problems": ["internalTrafficPolicy Local, and its ready pods run on 3 of 7 nodes "
                           "(n0, n2, n4): callers on the other nodes reach no endpoint"]}


def test_a_node_local_service_named_by_its_cluster_ip_is_the_network_fault() -> None:
    report = "dispatch quotes time out for some drivers"
    facts = facts_of(
        workloads(workload("dispatch-api", "fleet"), workload("geocoder", "geo")), services(
            NODE_LOCAL),
        patterns(pattern("route quote failed: geocode lookup failed: connect ETIMEDOUT "
                         "10.0.148.23:80", service="dispatch-api", pod="dispatch-api-5d-x")))
    scope = scope_of(facts, report)
    found = network.detect(facts, scope)
    assert categories(found) == [("network", "geocoder")]
    assert [r.name for r in found[0].affects] == ["geocoder", "dispatch-api"]
    assert "internalTrafficPolicy back to Cluster" in found[0].fix
    assert dependency.detect(facts, scope) == []  # its Service is at fault, not the callee


ZONE_LOCAL = {"name": "intake-public", "namespace": "edge", "type": "LoadBalancer",
              "selector": "app=intake", "pods": "3 ready of 3 matching",
              "endpoints": {"ready": 3, "not_ready": 0},
              "problems": ["externalTrafficPolicy Local, and its ready pods run on 2 of 6 nodes, "
                           "none in zone-c (zones with pods: zone-a, zone-b): the load "
                           "balancer's health check fails on nodes there and, with no cross-zone "
                           "load balancing, clients it sends to zone-c reach no endpoint"]}


def test_a_load_balanced_service_missing_a_zone_outranks_a_pending_bystander() -> None:
    """The Service's pods are ready (so its fault is its own, not theirs) and a Job pending
    in another namespace explains none of the report's timeouts."""
    report = "clients time out on every few uploads to intake; intake pods look fine"
    pending = workload("nightly-export", "reports", kind="Job", ready="0/1",
                       statuses={"Pending:Unschedulable": 1})
    facts = facts_of(workloads(workload("intake", "edge"), pending), services(ZONE_LOCAL))
    found = ranked(facts, report, run_detectors(facts, scope_of(facts, report)))
    assert categories(found)[0] == ("network", "intake-public")
    assert "while 3 of the pods it selects are ready" in found[0].clues[0].note
    assert "cross-zone load balancing" in found[0].fix


def test_an_external_name_alias_that_does_not_resolve_is_the_service_s_fault() -> None:
    report = "invoice payments fail with no such host"
    alias = {"name": "payments-gateway", "namespace": "billing", "type": "ExternalName",
             "external_name": "pgw.dc1.corp.example.net"}
    facts = facts_of(
        workloads(workload("invoice-api", "billing")), services(alias),
        patterns(pattern('charge failed: dial tcp: lookup payments-gateway.billing.svc.cluster.'
                         'local on 10.96.0.10:53: no such host', service="invoice-api",
                         pod="invoice-api-6f-x")))
    found = network.detect(facts, scope_of(facts, report))
    assert categories(found) == [("network", "payments-gateway")]
    assert "pgw.dc1.corp.example.net" in found[0].fix


def policies(*rows: dict[str, object]) -> Observation:
    return obs("k8s_list_network_policies", {"total": len(rows), "policies": list(rows)},
               namespace="claims")


OLD = "2025-07-09T09:30:00Z (500d ago)"


def test_an_old_allowlist_the_destination_moved_out_of_is_the_network_fault() -> None:
    """Timeouts to an outside address on the port an egress allowlist opens to other
    blocks only: the destination moved; the policy is the fault though it is old, and the
    broad ones (deny all, DNS only) rank under it."""
    report = "eligibility checks are timing out since 08:40"
    facts = facts_of(
        workloads(workload("eligibility-gateway", "claims")),
        policies({"name": "default-deny-all", "applies_to": "all pods", "created": OLD,
                  "types": ["Ingress", "Egress"], "ingress": "deny all", "egress": "deny all"},
                 {"name": "partner-egress", "applies_to": "app=eligibility-gateway",
                  "created": OLD, "types": ["Egress"],
                  "selected_workloads": ["Deployment/eligibility-gateway"],
                  "egress": ["to ip 198.51.100.32/28 on TCP/443"]}),
        patterns(pattern("call failed: connect ETIMEDOUT 203.0.113.88:443",
                         service="eligibility-gateway", pod="eligibility-gateway-5d-x",
                         count=300)))
    found = ranked(facts, report, run_detectors(facts, scope_of(facts, report)))
    assert categories(found)[0] == ("network", "partner-egress")
    assert "policy-allowlist" in {c.topic for c in found[0].clues}


def test_a_pod_evicted_for_its_own_storage_limit_is_its_own_exhaustion() -> None:
    report = "statements are not generated, renderer pods keep getting evicted"
    facts = facts_of(
        workloads(workload("statement-renderer", "reporting")),
        events(event("Evicted", "Pod/statement-renderer-6c-x1", "Pod ephemeral local storage "
                     "usage exceeds the total limit of containers 2Gi.", namespace="reporting",
                     count=4)))
    found = ranked(facts, report, run_detectors(facts, scope_of(facts, report)))
    assert categories(found) == [("resource_exhaustion", "statement-renderer")]
    assert "ephemeral-storage limit" in found[0].fix


def test_a_consumer_whose_backlog_grows_right_after_its_rollout_is_a_bad_rollout() -> None:
    """No errors, no latency: the consumer's lag, growing since shortly after its new
    revision went live, is the regression; the same lag with no fresh rollout is not one."""
    report = "push notifications arrive 20 minutes late, and later every hour"
    backlog = {"abnormal": True, "why": "consumer lag grew from 265 to 185095 messages since "
               "2026-11-30T09:20:00Z", "growing_since": "2026-11-30T09:20:00Z"}
    fresh = facts_of(workloads(workload("shipment-notifier", "notify")),
                     rollout_obs("shipment-notifier", "notify", "2026-11-30T09:10:00Z (50m ago)"),
                     signals("notify", "shipment-notifier", backlog=backlog))
    found = ranked(fresh, report, run_detectors(fresh, scope_of(fresh, report)))
    assert categories(found)[0] == ("bad_rollout", "shipment-notifier")
    assert "aligned-metrics" in {c.topic for c in found[0].clues}
    old = facts_of(workloads(workload("shipment-notifier", "notify")),
                   rollout_obs("shipment-notifier", "notify", "2026-11-29T09:10:00Z (1d ago)"),
                   signals("notify", "shipment-notifier", backlog=backlog))
    assert "bad_rollout" not in {c.category for c in run_detectors(old, scope_of(old, report))}


def test_a_cache_full_to_its_memory_cap_refuses_writes_as_a_failing_dependency() -> None:
    facts = caller_logging("add item failed: OOM command not allowed when used memory > "
                           "'maxmemory'.")
    found = dependency.detect(facts, scope_of(facts, REPORT))
    assert categories(found) == [("dependency_failure", "points-sync")]


def test_a_ready_node_with_a_read_only_filesystem_condition_is_a_node_failure() -> None:
    nodes = obs("k8s_list_nodes", {"total": 1, "with_problems": 1, "nodes": [
        {"name": "aks-general-0b", "ready": "True", "problems": [
            "ReadonlyFilesystem: Filesystem is read-only (since 20m ago)"]}]})
    facts = facts_of(workloads(workload("segment-packager", "streaming")), nodes)
    found = node.detect(facts, scope_of(facts, "streams stutter for some viewers"))
    assert categories(found) == [("node_failure", "aks-general-0b")]
    assert "ReadonlyFilesystem" in found[0].clues[0].note


def test_a_provider_asking_for_payment_is_a_failing_dependency() -> None:
    facts = caller_logging("POST https://api.sms-provider.example/v2/messages -> 402 Payment "
                           "Required: insufficient account balance")
    assert categories(dependency.detect(facts, scope_of(facts, REPORT))) == [
        ("dependency_failure", "points-sync")]


def test_a_database_out_of_transaction_ids_owns_the_errors_its_clients_relay() -> None:
    report = "handhelds show could not save pick on every scan"
    line = 'database is not accepting commands to avoid wraparound data loss in database "wms"'
    facts = facts_of(
        workloads(workload("picking-api", "warehouse"),
                  workload("wms-postgres", "warehouse", kind="StatefulSet",
                           images=["docker.io/library/postgres:16.4"])),
        patterns(pattern(f"confirm pick: ERROR: {line} (SQLSTATE 54000)", service="picking-api",
                         pod="picking-api-7c-x1", count=180),
                 pattern(line, service="wms-postgres", pod="wms-postgres-0", count=20)))
    found = ranked(facts, report, run_detectors(facts, scope_of(facts, report)))
    assert categories(found)[0] == ("resource_exhaustion", "wms-postgres")
    client = next(c for c in found if c.culprit.name == "picking-api")
    assert any("relays wms-postgres" in why for why in client.demoted_because)


def test_a_pod_waiting_for_a_volume_its_old_pod_holds_is_unschedulable() -> None:
    report = "the deploy of score-archiver hangs in progressing"
    facts = facts_of(
        workloads(workload("score-archiver", "leaderboards")),
        events(event("FailedAttachVolume", "Pod/score-archiver-p5kw-sjh62",
                     'Multi-Attach error for volume "pvc-1" Volume is already used by pod(s) '
                     "score-archiver-rc7b-ksj6v", namespace="leaderboards", count=1)))
    found = ranked(facts, report, run_detectors(facts, scope_of(facts, report)))
    assert categories(found)[0] == ("unschedulable", "score-archiver")
    assert "ReadWriteOnce" in found[0].fix


def test_calls_to_a_service_fail_through_a_sick_kube_proxy() -> None:
    """A caller's in-cluster calls time out while kube-proxy crash-loops on a node: the
    proxy's own fault explains them, the caller is its victim."""
    report = "a quarter of eta calls from courier-matcher time out"
    sick = workload("kube-proxy", "kube-system", kind="DaemonSet", ready="3/4",
                    problems=["1 of 4 pods unhealthy"],
                    pods={"total": 4, "statuses": {"Running": 3, "CrashLoopBackOff": 1},
                          "unhealthy": 1, "restarts": 54})
    calls = patterns(pattern("eta lookup failed: GET http://eta-predictor.ml-serving.svc:8080/"
                             "eta timed out", service="courier-matcher",
                             pod="courier-matcher-5d-x"))
    backoff = events(event("BackOff", "Pod/kube-proxy-7xk2p", "Back-off restarting failed "
                           "container kube-proxy", namespace="kube-system", count=30))
    facts = facts_of(workloads(workload("courier-matcher", "dispatch"), sick), backoff, calls)
    found = ranked(facts, report, run_detectors(facts, scope_of(facts, report)))
    assert categories(found)[0] == ("crash_loop", "kube-proxy")
    healthy = facts_of(workloads(workload("courier-matcher", "dispatch"),
                                 workload("kube-proxy", "kube-system", kind="DaemonSet",
                                          ready="4/4")), calls)
    alone = dependency.detect(healthy, scope_of(healthy, report))
    assert [c.blames for c in alone] == [()]  # a healthy proxy is on nobody's path


def test_a_workload_out_of_disk_space_has_its_volumes_read() -> None:
    report = "risk scores look stale since 10:30"
    facts = facts_of(workloads(workload("risk-scorer", "fraud", kind="StatefulSet")),
                     patterns(pattern("rocksdb: IO error: No space left on device",
                                      service="risk-scorer", pod="risk-scorer-0", count=2)))
    found = ranked(facts, report, run_detectors(facts, scope_of(facts, report)))
    assert (CLAIMS, {"namespace": "fraud"}) in [(tool, args) for tool, args, _ in
                                                evidence.wanted(facts, found)]


def test_a_server_full_for_this_client_is_a_dependency_not_its_own_pool() -> None:
    """An SMTP relay's "421 4.7.0 Too many connections from your IP" is the server's limit;
    the same words from the client's own pool stay its exhaustion."""
    refused = caller_logging("smtp: 421 4.7.0 Too many connections from your IP "
                             "(35.204.77.19), try again later")
    assert categories(exhaustion.detect(refused, scope_of(refused, REPORT))) == [
        ("dependency_failure", "points-sync")]
    own = caller_logging("HikariPool-1: too many connections in use, request timed out")
    assert categories(exhaustion.detect(own, scope_of(own, REPORT))) == [
        ("resource_exhaustion", "points-sync")]


def test_a_migration_that_hits_a_lock_timeout_is_a_crash_not_a_dependency() -> None:
    """The database answered (it made the statement wait): the container's own start-up
    fails, not its reach of the database."""
    line = ("sqlalchemy.exc.OperationalError: (psycopg2.errors.LockNotAvailable) canceling "
            "statement due to lock timeout")
    facts = caller_logging(line)
    assert dependency.detect(facts, scope_of(facts, REPORT)) == []
    reach = caller_logging("could not connect to server: connection timed out")
    assert categories(dependency.detect(reach, scope_of(reach, REPORT))) == [
        ("dependency_failure", "points-sync")]


def test_an_egress_rule_to_pods_that_moved_away_is_the_network_fault() -> None:
    """The rule opens the database's port to pods of its own namespace whose workload runs
    no pod there any more: the database moved, the old policy is the fault."""
    report = "fulfilment fails on every order, timeouts connecting to the database"
    facts = facts_of(
        workloads(workload("fulfillment-api", "claims"),
                  workload("orders-db", "claims", kind="StatefulSet", ready="0/0"),
                  workload("orders-pg", "databases", kind="StatefulSet", ready="2/2")),
        policies({"name": "fulfillment-egress", "applies_to": "app=fulfillment-api",
                  "created": OLD, "types": ["Egress"],
                  "selected_workloads": ["Deployment/fulfillment-api"],
                  "egress": ["to pods app=orders-db on TCP/5432"]}),
        patterns(pattern("client error: connect ETIMEDOUT 10.2.31.7:5432",
                         service="fulfillment-api", pod="fulfillment-api-5d-x", count=200)))
    found = ranked(facts, report, run_detectors(facts, scope_of(facts, report)))
    assert categories(found)[0] == ("network", "fulfillment-egress")
    assert any("orders-db runs no pod in claims" in c.note for c in found[0].clues)
