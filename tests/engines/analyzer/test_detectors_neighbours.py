"""Causes that sit beside the victim rather than in it: a rollout whose pods suddenly eat the
CPU of the nodes the victim runs on, a client that holds the connections a shared database
refuses to others, a CPU limit behind a full request queue, and a proxy that only reports
its backends' timeouts."""

from __future__ import annotations

from typing import Any

from engines.analyzer.detectors import dependency, run_detectors
from engines.analyzer.detectors._targets import callers_by_callee
from engines.analyzer.facts import Facts, Ref
from engines.analyzer.planner import Toolbox, hints
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

SLOW = {"abnormal": True, "why": "p99 rose from 0.9s to 2.5s at 2026-11-30T09:21:00Z",
        "change": {"at": "2026-11-30T09:21:00Z"}}
ERRORS_UP = {"abnormal": True, "why": "5xx ratio rose from 0.2% to 1.3% at 2026-11-30T09:21:00Z",
             "change": {"at": "2026-11-30T09:21:00Z"}}
CALM_CPU = {"abnormal": False, "why": "no significant CPU throttling", "usage_peak_cores": "400m"}
HUNGRY_CPU = {"abnormal": True,
              "why": "CPU use per pod rose from 60m to 2.3 cores at 2026-11-30T09:22:00Z",
              "usage_per_pod_change": {"at": "2026-11-30T09:22:00Z", "before_cores": "60m",
                                       "after_cores": "2.3"}}
NGINX = ('upstream timed out (110: Operation timed out) while reading response header from '
         'upstream, request: "POST /v1/filings HTTP/2.0", upstream: "http://10.244.2.31:8080/v1/'
         'filings"')


def agent_rollout() -> Observation:
    """A DaemonSet updated in place 42 minutes ago, every pod replaced by its controller."""
    first = "2026-11-30T09:18:00Z (42m ago)"
    return obs("k8s_rollout_history", {
        "workload": "DaemonSet observability/node-agent", "images": ["otel/collector:0.118.0"],
        "created": "2026-02-01T08:00:00Z (302d ago)",
        "revisions": [{"revision": "7f6d5c4b3a", "current": True, "first_pod_created": first,
                       "last_pod_created": first, "images": ["otel/collector:0.118.0"],
                       "pods": "ready 5/5"}],
        "pods_replaced_by_controller": {"deleted": 5, "first": first, "last": first}},
        namespace="observability", workload="node-agent")


def filings(agent_cpu: dict[str, Any]) -> Facts:
    nginx = workload("ingress-nginx-controller", "ingress",
                     images=["registry.k8s.io/ingress-nginx/controller:v1.12.1"])
    return facts_of(
        workloads(workload("filing-api", "efiling"), nginx,
                  workload("node-agent", "observability", kind="DaemonSet", ready="5/5")),
        patterns(pattern(NGINX, service="ingress-nginx", pod="ingress-nginx-controller-9c8d7-x1y2z",
                         count=30)),
        signals("efiling", "filing-api", latency=SLOW, cpu=CALM_CPU),
        agent_rollout(),
        signals("observability", "node-agent", cpu=agent_cpu))


def test_a_rollout_that_multiplies_its_cpu_use_is_blamed_for_its_neighbours_slowness() -> None:
    report = "e-filing uploads are really slow since about 09:20"
    facts = filings(HUNGRY_CPU)
    found = ranked(facts, report, run_detectors(facts, scope_of(facts, report)))
    assert categories(found)[0] == ("bad_rollout", "node-agent")
    assert [r.name for r in found[0].affects] == ["filing-api"]
    assert {"cpu-appetite", "starved-neighbours"} <= {c.topic for c in found[0].clues}

    calm = filings({"abnormal": False, "why": "no significant CPU throttling"})
    found = ranked(calm, report, run_detectors(calm, scope_of(calm, report)))
    agent = next(c for c in found if c.culprit.name == "node-agent")
    assert agent.score < 0.3 and not agent.affects


def test_a_proxy_reporting_upstream_timeouts_is_not_a_failing_dependency_of_its_own() -> None:
    facts = filings(HUNGRY_CPU)
    report = "e-filing uploads are really slow"
    found = dependency.detect(facts, scope_of(facts, report))
    proxy = next(c for c in found if c.culprit.name == "ingress-nginx-controller")
    assert proxy.penalty <= 0.5
    assert any("proxy" in why for why in proxy.demoted_because)


def box_for(*tools: str) -> Toolbox:
    specs = {name: ToolSpec(name, "", {"properties": {"namespace": {}, "workload": {},
                                                      "since": {}, "metric": {}, "limit": {}}})
             for name in tools}
    return Toolbox(specs, Transcript(), frozenset())


CPU_USERS = obs("metrics_query", {
    "metric": "container_cpu_usage_seconds_total", "series": 3, "common_labels": {},
    "values": "per-second rate", "by_series": [
        {"labels": {"namespace": "observability", "pod": "node-agent-4zpfj",
                    "container": "collector"}, "min": 1.5, "mean": 2.3, "max": 2.5, "last": 2.4},
        {"labels": {"namespace": "efiling", "pod": "filing-api-7d9f8-abcde",
                    "container": "api"}, "min": 0.2, "mean": 0.4, "max": 0.6, "last": 0.5},
        {"labels": {"namespace": "shop", "pod": "cart-5c6d7-fghij", "container": "cart"},
         "min": 0.01, "mean": 0.02, "max": 0.03, "last": 0.02}]},
    metric="container_cpu_usage_seconds_total")


def test_the_planner_looks_for_what_else_uses_the_cpu_when_a_workload_slows_unthrottled() -> None:
    tools = ("metrics_query", "k8s_rollout_history", "metrics_workload_signals")
    target = [Ref("Deployment", "efiling", "filing-api")]
    base = (workloads(workload("filing-api", "efiling"), workload("cart", "shop"),
                      workload("node-agent", "observability", kind="DaemonSet")),)
    slowed = facts_of(*base, signals("efiling", "filing-api", latency=SLOW, cpu=CALM_CPU))
    box = box_for(*tools)
    hints(box, slowed, scope_of(slowed, "filing-api is slow"), target)
    assert ("metrics_query", "container_cpu_usage_seconds_total") in {
        (tool, args.get("metric")) for tool, args, _ in box.calls}

    throttled = facts_of(*base, signals("efiling", "filing-api", latency=SLOW,
                                        cpu={"abnormal": True, "why": "60% throttled"}))
    box = box_for(*tools)
    hints(box, throttled, scope_of(throttled, "filing-api is slow"), target)
    assert not any(tool == "metrics_query" for tool, _, _ in box.calls)

    users = facts_of(*base, signals("efiling", "filing-api", latency=SLOW, cpu=CALM_CPU),
                     CPU_USERS)
    box = box_for(*tools)
    hints(box, users, scope_of(users, "filing-api is slow"), target)
    asked = {(tool, args.get("workload")) for tool, args, _ in box.calls}
    assert ("k8s_rollout_history", "node-agent") in asked
    assert ("metrics_workload_signals", "node-agent") in asked
    assert ("k8s_rollout_history", "cart") not in asked  # it uses next to no CPU


REFUSED = "pq: sorry, too many clients already (SQLSTATE 53300)"


def connections(holder: float) -> Observation:
    rows = [("occupancy-reporter", "idle", holder), ("desk-booking", "idle", 12.0),
            ("door-access", "idle", 8.0), ("desk-booking", "active", 4.0)]
    return obs("metrics_query", {
        "metric": "pg_stat_activity_count", "series": len(rows), "values": "raw values",
        "common_labels": {"namespace": "workspace", "pod": "workspace-db-0"},
        "by_series": [{"labels": {"application_name": app, "state": state},
                       "min": value - 10, "mean": value - 5, "max": value, "last": value}
                      for app, state, value in rows]}, metric="pg_stat_activity_count")


def desks(*extra: Observation) -> Facts:
    return facts_of(
        workloads(workload("desk-booking", "workspace"),
                  workload("occupancy-reporter", "workspace"), workload("door-access", "workspace"),
                  workload("workspace-db", "workspace", kind="StatefulSet")),
        patterns(pattern(f"POST /v2/bookings 500: error acquiring connection: {REFUSED}",
                         service="desk-booking", pod="desk-booking-6b7c8-abcde", count=25),
                 pattern(f"FATAL: {REFUSED.removeprefix('pq: ')}", service="workspace-db",
                         pod="workspace-db-0", count=60)),
        *extra)


def test_whoever_holds_a_refusing_databases_connections_is_the_culprit() -> None:
    report = "desk bookings fail every second or third attempt"
    facts = desks(connections(177.0))
    found = ranked(facts, report, run_detectors(facts, scope_of(facts, report)))
    assert categories(found)[0] == ("resource_exhaustion", "occupancy-reporter")
    assert [r.name for r in found[0].affects] == ["desk-booking"]  # the database is no victim
    victim = next(c for c in found if c.culprit.name == "desk-booking")
    assert victim.penalty < 1.0

    blind = desks()  # the per-client counts were not read: the refused caller is all we see
    found = ranked(blind, report, run_detectors(blind, scope_of(blind, report)))
    assert "occupancy-reporter" not in {c.culprit.name for c in found}
    asked = {(f.tool, f.arguments.get("metric")) for c in found for f in c.followups}
    assert ("metrics_query", "pg_stat_activity_count") in asked


def test_no_holder_is_named_when_the_connections_are_spread_out() -> None:
    report = "desk bookings fail every second or third attempt"
    facts = desks(connections(15.0))
    found = run_detectors(facts, scope_of(facts, report))
    assert "occupancy-reporter" not in {c.culprit.name for c in found}


QUEUE_FULL = "503 request queue full (200 waiting), rejecting /api/hints"


def matcher(cpu: dict[str, Any]) -> Facts:
    return facts_of(
        workloads(workload("record-matcher", "records")),
        patterns(pattern(QUEUE_FULL, service="record-matcher", pod="record-matcher-5d6f7-abcde",
                         count=20)),
        signals("records", "record-matcher", latency=SLOW, cpu=cpu, requests=ERRORS_UP))


def test_a_full_request_queue_under_a_throttled_cpu_is_cpu_throttling() -> None:
    report = "record search is crawling tonight"
    throttled = {"abnormal": True, "throttled_ratio": 0.2, "throttled_ratio_peak_5_steps": 0.64,
                 "why": "20% of CPU periods throttled (peak 64%): the CPU limit slows the "
                        "container"}
    facts = matcher(throttled)
    found = ranked(facts, report, run_detectors(facts, scope_of(facts, report)))
    assert categories(found)[0] == ("cpu_throttling", "record-matcher")

    free = matcher(CALM_CPU)
    found = ranked(free, report, run_detectors(free, scope_of(free, report)))
    assert categories(found)[0] == ("resource_exhaustion", "record-matcher")


# A DNS cache starved by its own CPU limit: callers' lookups time out, it answers slowly.

DNS_CACHE = "registry.k8s.io/dns/k8s-dns-node-cache:1.23.1"
LOOKUP_TIMEOUT = ("seat lookup failed: dial tcp: lookup seat-inventory.boxoffice.svc on "
                  "169.254.20.10:53: read udp 10.31.8.207:46856->169.254.20.10:53: i/o timeout")
THROTTLED_SINCE = {"abnormal": True, "throttled_ratio": 0.2, "throttled_ratio_peak_5_steps": 0.8,
                   "why": "CPU throttling rose from 3% to 74% of periods at "
                          "2026-11-30T09:30:00Z: the CPU limit slows the container",
                   "throttled_change": {"at": "2026-11-30T09:30:00Z", "ratio_before": 0.03,
                                        "ratio_after": 0.74}}


def dns_cache(cpu: dict[str, Any]) -> Facts:
    own = pattern("[ERROR] plugin/errors: 2 seat-inventory.boxoffice.svc.cluster.local. A: read "
                  "udp 10.31.8.207:46856->10.100.0.10:53: i/o timeout", service="node-local-dns",
                  pod="node-local-dns-x7k2p", count=90)
    return facts_of(
        workloads(workload("node-local-dns", "kube-system", kind="DaemonSet", ready="6/6",
                           images=[DNS_CACHE]), workload("seat-map", "boxoffice")),
        patterns(own, pattern(LOOKUP_TIMEOUT, service="seat-map", pod="seat-map-6c9d7-q2w3e",
                              count=40, first="2026-11-30T09:31:00Z")),
        signals("kube-system", "node-local-dns", cpu=cpu))


def test_a_dns_server_throttled_by_its_cpu_limit_is_cpu_throttling_not_an_outage() -> None:
    report = "the seat map is crawling since about 09:30"
    facts = dns_cache(THROTTLED_SINCE)
    found = ranked(facts, report, run_detectors(facts, scope_of(facts, report)))
    assert categories(found)[0] == ("cpu_throttling", "node-local-dns")
    assert {"latency", "throttled-onset"} <= {c.topic for c in found[0].clues}
    outage = next(c for c in found if c.category == "network")
    assert any("CPU limit" in why for why in outage.demoted_because)

    unthrottled = dns_cache(CALM_CPU)
    found = ranked(unthrottled, report, run_detectors(unthrottled, scope_of(unthrottled, report)))
    assert categories(found)[0] == ("network", "node-local-dns")


def test_a_cpu_rise_long_after_a_rollout_is_load_not_the_new_revision() -> None:
    late = {**HUNGRY_CPU, "usage_per_pod_change": {**HUNGRY_CPU["usage_per_pod_change"],
                                                   "at": "2026-11-30T09:58:00Z"}}
    report = "e-filing uploads are really slow"
    facts = filings(late)  # the agent's pods were replaced at 09:18, the rise came at 09:58
    found = ranked(facts, report, run_detectors(facts, scope_of(facts, report)))
    agent = next(c for c in found if c.culprit.name == "node-agent")
    assert "cpu-appetite" not in {c.topic for c in agent.clues}


# "upstream timeout" without a host: the one sick workload next door is the upstream.

def recipes(store_ready: str) -> Facts:
    return facts_of(
        workloads(workload("recipe-api", "cookbook"),
                  workload("favourites-store", "cookbook", kind="StatefulSet", ready=store_ready,
                           pods={"statuses": {"Running": 2, "CrashLoopBackOff": 1},
                                 "restarts": 12} if store_ready != "3/3" else {}),
                  workload("trending", "cookbook")),
        patterns(pattern("favourites list: upstream timeout after 2s (will retry in 60s)",
                         service="recipe-api", pod="recipe-api-5d6f7-abcde", count=15)))


def test_an_unnamed_upstream_that_times_out_is_the_one_sick_workload_beside_the_caller() -> None:
    facts = recipes("2/3")
    graph = callers_by_callee(facts)
    store = Ref("StatefulSet", "cookbook", "favourites-store")
    assert graph.get(store) == {Ref("Deployment", "cookbook", "recipe-api")}
    found = dependency.detect(facts, scope_of(facts, "favourites fail since recipe-api went out"))
    assert found == []  # the sick callee's own detectors own this cause

    healthy = recipes("3/3")
    assert store not in callers_by_callee(healthy)
    found = dependency.detect(healthy, scope_of(healthy, "favourites fail"))
    assert categories(found) == [("dependency_failure", "recipe-api")]


# Down a call chain: the report names the front, the cause sits two hops below.

def chain(*extra: Observation) -> Facts:
    return facts_of(
        workloads(workload("checkout-web", "storefront"),
                  workload("shipping-options", "fulfilment"),
                  workload("carrier-rates", "partners")),
        patterns(pattern("GET /api/delivery-options failed: upstream shipping-options 502",
                         service="checkout-web", pod="checkout-web-5d6f7-abcde", count=20),
                 pattern("carrier-rates answered 504 for basket=31d9e; returning 502",
                         service="shipping-options", pod="shipping-options-4v79c-zwfv4",
                         count=34),
                 pattern("rates call to https://api.nordpost.example/v2/rates timed out after "
                         "3000ms", service="carrier-rates", pod="carrier-rates-6b7c8-q2w3e",
                         count=40)),
        signals("partners", "carrier-rates", latency=SLOW), *extra)


def test_a_cause_two_hops_below_the_named_service_is_still_relevant() -> None:
    report = "checkout-web spins forever on choose delivery since 09:20"
    facts = chain()
    found = ranked(facts, report, run_detectors(facts, scope_of(facts, report)))
    assert categories(found)[0] == ("dependency_failure", "carrier-rates")
    assert found[0].relevance > 0.7  # checkout-web → shipping-options → carrier-rates


def test_a_caller_that_only_relays_a_callees_own_failure_is_demoted() -> None:
    journal = ("POST /v1/lots/{id}/bids 500: could not record bid: journal member "
               "bid-journal-2 answered 507 Insufficient Storage")
    disk = ("bid_journal::api: POST /append 507: write /var/lib/bid-journal/segments/a1.seg: "
            "no space left on device (os error 28)")
    facts = facts_of(
        workloads(workload("bid-api", "auctions"),
                  workload("bid-journal", "auctions", kind="StatefulSet")),
        patterns(pattern(journal, service="bid-api", pod="bid-api-2jz8v-5wfk8", count=52),
                 pattern(disk, service="bid-journal", pod="bid-journal-2", count=38)))
    assert callers_by_callee(facts)[Ref("StatefulSet", "auctions", "bid-journal")] == {
        Ref("Deployment", "auctions", "bid-api")}  # named by one of its pods
    report = "bids fail in tonight's auction; bid-api pods are all up"
    found = ranked(facts, report, run_detectors(facts, scope_of(facts, report)))
    assert categories(found)[0] == ("resource_exhaustion", "bid-journal")
    relay = next(c for c in found if c.category == "dependency_failure")
    assert any("fails by itself" in why for why in relay.demoted_because)


def test_a_database_role_named_after_a_namespace_and_a_part_names_its_batch_workload() -> None:
    """Roles spell with underscores what workloads spell with hyphens, and are often named
    after the team's namespace: "billing_export" is billing's invoice-export CronJob, which
    holds the connections even while the database it calls logs its refusals."""
    rows = [("billing_export", "idle", 178.0), ("desk_booking", "idle", 12.0),
            ("door-access", "idle", 8.0)]
    held = obs("metrics_query", {
        "metric": "pg_stat_activity_count", "series": len(rows), "values": "raw values",
        "common_labels": {"namespace": "workspace", "pod": "workspace-db-0"},
        "by_series": [{"labels": {"usename": app, "state": state}, "min": value - 10,
                       "mean": value - 5, "max": value, "last": value}
                      for app, state, value in rows]}, metric="pg_stat_activity_count")
    facts = desks(held, workloads(workload("invoice-export", "billing", kind="CronJob"),
                                  workload("desk-booking", "workspace"),
                                  workload("door-access", "workspace"),
                                  workload("workspace-db", "workspace", kind="StatefulSet")))
    report = "desk bookings fail every second or third attempt"
    found = ranked(facts, report, run_detectors(facts, scope_of(facts, report)))
    assert categories(found)[0] == ("resource_exhaustion", "invoice-export")
    assert found[0].penalty == 1.0, "what it holds does not explain it"
