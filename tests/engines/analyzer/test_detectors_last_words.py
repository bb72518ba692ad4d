"""What a dying container's end says about why: a scheduled run that filled its disk, a run
that failed once and then succeeded, a container the kubelet killed for failed liveness
probes; and where to look when the workload the report names is fine."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from engines.analyzer.detectors import crash, run_detectors
from engines.analyzer.detectors._common import pattern_workloads
from engines.analyzer.detectors.dependency import is_proxy
from engines.analyzer.facts import Ref
from engines.analyzer.planner import Toolbox, hints
from engines.analyzer.transcript import Transcript
from engines.model import ToolSpec
from tests.engines.analyzer.helpers import (
    categories,
    describe,
    event,
    facts_of,
    obs,
    pattern,
    patterns,
    ranked,
    scope_of,
    workload,
    workloads,
)

FAILED = "Failed=True BackoffLimitExceeded: Job has reached the specified backoff limit"
DISK_FULL = ("ERROR rota_mailer.render: depot D-058: OSError: [Errno 28] No space left on device: "
             "'/var/lib/rota/renders/D-058/rota.pdf'")


def cron(name: str, failed: int, total: int) -> dict[str, Any]:
    return workload(name, "foodbank", kind="CronJob", ready="", problems=[
        f"{failed} of {total} pods unhealthy"], pods={
        "total": total, "statuses": {"Error": failed, "Completed": total - failed},
        "unhealthy": failed})


def run(name: str, completed: str, failed: int, problems: list[str]) -> dict[str, Any]:
    return workload(name, "foodbank", kind="Job", ready="", completed=completed, failed=failed,
                    age=timedelta(minutes=44), problems=problems)


def last_words(pod: str, line: str, state: str = "terminated: Error (exit 1)") -> Any:
    """k8s_pod_logs of a Job pod (restartPolicy Never): its current instance has ended."""
    return obs("k8s_pod_logs", {"pod": pod, "container": "main", "instance": "current",
                                "container_state": state, "lines_read": 11, "first_error": line,
                                "last_lines": [line]}, namespace="foodbank", pod=pod)


def rotas() -> list[Any]:
    return [
        workloads(cron("rota-mailer", 3, 4), cron("donor-receipts", 1, 2),
                  run("rota-mailer-30691050", "0/1", 3, [FAILED, "3 failed pods"]),
                  run("donor-receipts-30691035", "1/1", 1, ["1 failed pods"]),
                  workload("volunteer-portal", "foodbank")),
        patterns(pattern(DISK_FULL, service="rota-mailer", pod="rota-mailer-30691050-8wz64",
                         count=3)),
        last_words("rota-mailer-30691050-8wz64", DISK_FULL),
        last_words("donor-receipts-30691035-cttwv", "ERROR smtp: 421 try again later")]


def test_a_scheduled_runs_lines_are_its_cronjobs() -> None:
    facts = facts_of(*rotas())
    line = next(p for p in facts.patterns if p.pods)
    assert pattern_workloads(line, facts)[0] == Ref("CronJob", "foodbank", "rota-mailer")


def test_the_current_log_of_an_ended_container_is_its_last_words() -> None:
    facts = facts_of(*rotas())
    ended = [p for p in facts.patterns if p.pod == "rota-mailer-30691050-8wz64" and p.role]
    assert ended and all(p.previous for p in ended)
    alive = facts_of(obs("k8s_pod_logs", {"pod": "web-1", "instance": "current",
                                          "first_error": "ERROR x", "last_lines": ["ERROR x"]},
                         namespace="shop", pod="web-1"))
    assert not any(p.previous for p in alive.patterns)


def test_a_run_that_fills_its_disk_is_resource_exhaustion_and_a_recovered_run_is_no_cause(
) -> None:
    facts = facts_of(*rotas())
    report = "nobody got today's volunteer rota email, donor receipt emails went out fine"
    found = ranked(facts, report, run_detectors(facts, scope_of(facts, report)))
    assert categories(found)[0] == ("resource_exhaustion", "rota-mailer")
    crashing = next(c for c in found if c.key == ("crash_loop", "foodbank", "rota-mailer"))
    assert any("disk" in why for why in crashing.demoted_because)
    receipts = next((c for c in crash.detect(facts, scope_of(facts, report))
                     if c.culprit.name == "donor-receipts"), None)
    assert receipts is not None and "its failed run succeeded on a retry" in \
        receipts.demoted_because


def test_batch_last_words_are_read_from_the_current_instance() -> None:
    facts = facts_of(workloads(cron("rota-mailer", 3, 4),
                               run("rota-mailer-30691050", "0/1", 3, [FAILED, "3 failed pods"])))
    (entry,) = [c for c in crash.detect(facts, scope_of(facts, "rotas missing"))
                if c.culprit.name == "rota-mailer"]
    reads = [f.arguments for f in entry.followups if f.tool == "k8s_pod_logs"]
    assert reads and reads[0]["previous"] is False


def killed_by_liveness() -> list[Any]:
    pod = describe("fitting-booking-7d9f8-x2k4p", "rentals", owner="fitting-booking",
                   status="CrashLoopBackOff", containers=[{
                       "name": "app", "ready": False, "restarts": 9,
                       "state": {"waiting": "CrashLoopBackOff"},
                       "last_state": {"terminated": "Error", "exit_code": 143,
                                      "started": "2026-11-30T09:55:00Z (5m ago)",
                                      "finished": "2026-11-30T09:56:10Z (4m ago)"}}],
                   events=[event("Unhealthy", "Pod/fitting-booking-7d9f8-x2k4p",
                                 "Liveness probe failed: HTTP probe failed with statuscode: 404",
                                 namespace="rentals", count=27),
                           event("Killing", "Pod/fitting-booking-7d9f8-x2k4p",
                                 "Container app failed liveness probe, will be restarted",
                                 namespace="rentals", count=9, type="Normal")])
    return [workloads(workload("fitting-booking", "rentals", ready="1/3", pods={
        "statuses": {"CrashLoopBackOff": 2, "Running": 1}, "unhealthy": 2, "restarts": 18,
        "last_exit_reasons": {"Error": 2}})), pod,
        patterns(pattern("Commencing graceful shutdown. Waiting for active requests to complete",
                         service="fitting-booking", pod="fitting-booking-7d9f8-x2k4p",
                         count=18, level="info"))]


def test_restarts_that_are_liveness_kills_are_a_probe_failure_not_a_crash_loop() -> None:
    facts = facts_of(*killed_by_liveness())
    report = "fitting bookings fail since 09:30"
    found = ranked(facts, report, run_detectors(facts, scope_of(facts, report)))
    assert categories(found)[0] == ("probe_failure", "fitting-booking")
    crashing = next((c for c in found if c.category == "crash_loop"), None)
    assert crashing is None or any("liveness" in why for why in crashing.demoted_because)


def test_when_the_named_workload_is_fine_its_neighbours_metrics_are_read() -> None:
    facts = facts_of(workloads(workload("quotes-db", "quotes", kind="StatefulSet"),
                               workload("quote-engine", "quotes"), workload("brochure", "web")))
    scope = scope_of(facts, "the window quote page is slow tonight, probably the quotes database")
    assert scope.primary[0].name == "quotes-db"
    assert Ref("Deployment", "quotes", "quote-engine") in scope.workloads  # a word, beside it
    spec = ToolSpec("metrics_workload_signals", "", {"properties": {
        "namespace": {}, "workload": {}, "since": {}}})
    box = Toolbox({spec.name: spec}, Transcript(), frozenset())
    hints(box, facts, scope, scope.primary, [])
    assert {a["workload"] for _, a, _ in box.calls} >= {"quote-engine"}
    assert "brochure" not in {a["workload"] for _, a, _ in box.calls}


def test_an_application_with_a_mesh_sidecar_is_not_a_proxy() -> None:
    facts = facts_of(workloads(
        workload("mortgage-calculator", "web", images=["reg.io/mortgage-calculator:2.1.0",
                                                        "docker.io/istio/proxyv2:1.22.1"]),
        workload("istio-ingressgateway", "istio-system", images=["docker.io/istio/proxyv2:1.22"]),
        workload("ingress-nginx-controller", "ingress",
                 images=["registry.k8s.io/ingress-nginx/controller:v1.12.1"])))
    assert not is_proxy(facts, Ref("Deployment", "web", "mortgage-calculator"))
    assert is_proxy(facts, Ref("Deployment", "istio-system", "istio-ingressgateway"))
    assert is_proxy(facts, Ref("Deployment", "ingress", "ingress-nginx-controller"))
