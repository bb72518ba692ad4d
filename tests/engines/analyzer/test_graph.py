"""The causal graph: which edges the observations show, and the walk that names the node
whose own anomaly is earliest on the path instead of the victim that reports it."""

from __future__ import annotations

from engines.analyzer.candidates import Candidate, Clue
from engines.analyzer.detectors import run_detectors
from engines.analyzer.facts import Ref
from engines.analyzer.graph import build_graph, key, onset
from tests.engines.analyzer.helpers import (
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

STORE_ERROR = 'ERROR: could not write block 812 of relation "ledger": Disk quota exceeded'
RELAYED = 'save failed: pq: could not write block 812 of relation "ledger": Disk quota exceeded'
API = Ref("Deployment", "books", "books-api")
DB = Ref("StatefulSet", "books", "ledger-db")


def _books(api_first: str, db_first: str) -> list:
    return [workloads(workload("books-api", "books"),
                      workload("ledger-db", "books", kind="StatefulSet", ready="1/1")),
            patterns(pattern(STORE_ERROR, service="ledger-db", pod="ledger-db-0", count=90,
                             first=db_first),
                     pattern(RELAYED, service="books-api", pod="books-api-6f7d9c-x2k4p",
                             count=40, first=api_first))]


def test_a_caller_that_relays_its_callees_own_error_depends_on_it() -> None:
    facts = facts_of(*_books("2026-11-30T09:31:20Z", "2026-11-30T09:31:00Z"))
    graph = build_graph(facts)
    assert graph.dependencies(API) == {key(DB): (1, "calls")}
    assert graph.dependencies(DB) == {}  # the first to say it relays nothing


def test_a_line_said_first_by_the_caller_is_not_a_relay() -> None:
    facts = facts_of(*_books("2026-11-30T09:20:00Z", "2026-11-30T09:31:00Z"))
    assert build_graph(facts).dependencies(API) == {}


def test_the_walk_names_the_callee_whose_disk_is_full_not_the_caller() -> None:
    facts = facts_of(*_books("2026-11-30T09:31:20Z", "2026-11-30T09:31:00Z"),
                     signals("books", "books-api", requests={
                         "abnormal": True,
                         "why": "5xx ratio rose from 0.0% to 20% at 2026-11-30T09:31:00Z"}))
    report = "books-api fails to save since 09:30"
    found = ranked(facts, report, run_detectors(facts, scope_of(facts, report)))
    assert (found[0].category, found[0].culprit) == ("resource_exhaustion", DB)
    victim = next(c for c in found if c.culprit == API)
    assert any("StatefulSet books/ledger-db, which it depends on" in why
               for why in victim.demoted_because)


def test_a_dependency_whose_fault_began_later_explains_nothing() -> None:
    facts = facts_of(workloads(workload("web", "shop"), workload("cache", "shop")))
    caller = Candidate("dependency_failure", Ref("Deployment", "shop", "web"),
                       [Clue(0.6, "web calls fail since 2026-11-30T09:00:00Z", ("x",))],
                       blames=(Ref("Deployment", "shop", "cache"),))
    late = Candidate("oom_killed", Ref("Deployment", "shop", "cache"),
                     [Clue(0.7, "OOMKilled at 2026-11-30T09:40:00Z", ("y",))])
    assert onset(late, facts) is not None
    found = ranked(facts, "web is failing", [caller, late])
    assert not next(c for c in found if c.culprit.name == "web").demoted_because
    early = Candidate("oom_killed", Ref("Deployment", "shop", "cache"),
                      [Clue(0.7, "OOMKilled at 2026-11-30T08:58:00Z", ("y",))])
    again = ranked(facts, "web is failing", [Candidate(
        "dependency_failure", caller.culprit, list(caller.clues), blames=caller.blames), early])
    assert next(c for c in again if c.culprit.name == "web").demoted_because


def test_an_autoscaler_that_cannot_read_metrics_depends_on_the_metrics_server() -> None:
    hpa = obs("k8s_list_autoscalers", {"total": 1, "at_max": 0, "autoscalers": [{
        "name": "search", "namespace": "search", "target": "Deployment/search", "min": 3,
        "max": 20, "current": 3, "desired": 3, "at_max": False, "metrics": ["cpu <unknown>"],
        "problems": ["ScalingActive=False FailedGetResourceMetric: the HPA was unable to "
                     "compute the replica count: unable to get metrics for resource cpu"]}]})
    facts = facts_of(workloads(workload("search", "search"),
                               workload("metrics-server", "kube-system")), hpa)
    reach = build_graph(facts).dependencies(Ref("Deployment", "search", "search"))
    assert ("kube-system", "metrics-server") in reach  # through the autoscaler


def _on_api(category: str, weight: float, note: str) -> Candidate:
    return Candidate(category, Ref("Deployment", "shop", "api"), [Clue(weight, note, ("x",))])


def test_a_container_that_exits_on_its_own_certificate_is_a_certificate_fault() -> None:
    facts = facts_of(workloads(workload("api")))
    found = ranked(facts, "api keeps restarting", [
        _on_api("crash_loop", 0.9, "container api is in CrashLoopBackOff"),
        _on_api("certificate", 0.65, "api logs 'x509: certificate has expired'")])
    assert [c.category for c in found] == ["certificate", "crash_loop"]


def test_probes_that_fail_once_the_cpu_is_throttled_are_the_throttlings_symptom() -> None:
    facts = facts_of(workloads(workload("api")))
    throttled = "CPU throttling rose from 2% to 70% of periods at 2026-11-30T09:30:00Z"
    found = ranked(facts, "api is slow", [
        _on_api("probe_failure", 0.8, "probes failed since 2026-11-30T09:34:00Z"),
        _on_api("cpu_throttling", 0.7, throttled)])
    assert found[0].category == "cpu_throttling"
    before = ranked(facts, "api is slow", [
        _on_api("probe_failure", 0.8, "probes failed since 2026-11-30T09:00:00Z"),
        _on_api("cpu_throttling", 0.7, throttled)])
    assert before[0].category == "probe_failure" and not before[0].demoted_because
