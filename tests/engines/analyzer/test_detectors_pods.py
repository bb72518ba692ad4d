"""Detectors that read pods: OOM kills, crash loops, image pulls, probes, scheduling, quota."""

from __future__ import annotations

from engines.analyzer.candidates import Candidate
from engines.analyzer.detectors import crash, dependency, image, oom, probe, scheduling
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

RECENT_KILL = {"terminated": "OOMKilled", "exit_code": 137,
               "started": "2026-11-30T09:40:00Z (20m ago)",
               "finished": "2026-11-30T09:55:00Z (5m ago)"}


def container(name: str = "app", **extra: object) -> dict[str, object]:
    return {"name": name, "image": f"registry.example.com/{name}:2.0.0",
            "limits": {"memory": "512Mi", "cpu": "1"}, "ready": False, "restarts": 9, **extra}


def test_oom_sees_a_recent_kill_and_quotes_the_limit() -> None:
    facts = facts_of(describe("api-7d9f8c6b5-x2x2x", owner="api",
                              containers=[container(last_state=RECENT_KILL)]))
    found = oom.detect(facts, scope_of(facts, "api keeps restarting"))
    assert categories(found) == [("oom_killed", "api")]
    assert found[0].strength > 0.7
    assert "512Mi" in found[0].fix


def test_oom_of_a_sidecar_blames_the_workload_and_names_the_container() -> None:
    facts = facts_of(describe("api-7d9f8c6b5-x2x2x", owner="api", containers=[
        container("api", last_state={"terminated": "Completed", "exit_code": 0}),
        container("log-shipper", limits={"memory": "64Mi"}, last_state=RECENT_KILL)]))
    found = oom.detect(facts, scope_of(facts, "api restarts"))
    assert categories(found) == [("oom_killed", "api")]
    assert "log-shipper" in found[0].fix


def test_an_old_oom_kill_is_a_weak_signal() -> None:
    old = dict(RECENT_KILL, finished="2026-11-30T04:00:00Z (6h ago)")
    facts = facts_of(describe("api-7d9f8c6b5-x2x2x", owner="api",
                              containers=[container(last_state=old)]))
    found = oom.detect(facts, scope_of(facts, "api is slow"))
    assert found and found[0].strength < 0.45


def test_no_oom_without_kills_or_memory_pressure() -> None:
    facts = facts_of(describe("api-7d9f8c6b5-x2x2x", owner="api", containers=[container()]),
                     signals("shop", "api", memory={"abnormal": False, "why": "fine"}))
    assert oom.detect(facts, scope_of(facts, "api")) == []


def test_java_heap_errors_in_the_previous_log_count_as_oom() -> None:
    logs = obs("k8s_pod_logs", {"pod": "api-7d9f8c6b5-x2x2x", "container": "api",
                                "instance": "previous", "lines_read": 40,
                                "first_error": "Exception in thread \"main\" "
                                               "java.lang.OutOfMemoryError: Java heap space"},
               namespace="shop", pod="api", previous=True)
    facts = facts_of(workloads(workload("api")), logs)
    assert [c.category for c in oom.detect(facts, scope_of(facts, "api"))] == ["oom_killed"]


def test_crash_loop_from_a_bad_config_reads_the_last_words() -> None:
    died = {"terminated": "Error", "exit_code": 1, "started": "2026-11-30T09:57:00Z (3m ago)",
            "finished": "2026-11-30T09:57:02Z (3m ago)"}
    logs = obs("k8s_pod_logs", {"pod": "sync-5c7d9-abcde", "container": "sync",
                                "instance": "previous", "lines_read": 3,
                                "first_error": "KeyError: 'UPSTREAM_URL'"},
               namespace="inv", pod="sync", previous=True)
    facts = facts_of(describe("sync-5c7d9-abcde", "inv", owner="sync", status="CrashLoopBackOff",
                              containers=[container("sync", state={"waiting": "CrashLoopBackOff"},
                                                    last_state=died)]), logs)
    found = crash.detect(facts, scope_of(facts, "sync is down"))
    assert categories(found) == [("crash_loop", "sync")]
    assert found[0].strength > 0.7
    assert any("UPSTREAM_URL" in c.note for c in found[0].clues)


def test_a_container_killed_by_its_liveness_probe_is_not_a_crash() -> None:
    killed = {"terminated": "Error", "exit_code": 143, "started": "2026-11-30T09:50:00Z (10m ago)",
              "finished": "2026-11-30T09:51:02Z (9m ago)"}
    pod = describe(
        "search-6b8-abcde", "search", owner="search", status="CrashLoopBackOff",
        containers=[container("search", state={"waiting": "CrashLoopBackOff"}, last_state=killed,
                              liveness_probe="http-get http://:http/live delay=30s timeout=1s "
                                             "period=10s failure=3")],
        events=[event("Unhealthy", "Pod/search-6b8-abcde", "Liveness probe failed: Get "
                      "\"http://10.0.0.1:8080/live\": connect: connection refused",
                      namespace="search", count=120)],
        normal_events="Pulled ×10, Created ×10, Started ×10, Killing ×10; last 2m ago")
    facts = facts_of(pod)
    found = ranked(facts, "search restarts", crash.detect(facts, scope_of(facts, "search")) +
                   probe.detect(facts, scope_of(facts, "search")))
    assert categories(found)[0] == ("probe_failure", "search")
    assert any("liveness probe allows" in c.note for c in found[0].clues)


def test_readiness_failures_after_oom_kills_are_a_symptom() -> None:
    pod = describe("api-7d9f8c6b5-x2x2x", owner="api", containers=[container(
        last_state=RECENT_KILL)], events=[event(
            "Unhealthy", "Pod/api-7d9f8c6b5-x2x2x",
            "Readiness probe failed: dial tcp 10.0.0.1:8080: connect: connection refused",
            count=40)])
    facts = facts_of(pod)
    scope = scope_of(facts, "api")
    found = ranked(facts, "api restarts", oom.detect(facts, scope) + probe.detect(facts, scope))
    assert categories(found)[0] == ("oom_killed", "api")
    assert found[1].category == "probe_failure" and found[1].demoted_because


def test_readiness_probe_404_on_a_running_pod_is_a_probe_failure() -> None:
    pod = describe("profile-5f-abcde", "accounts", owner="profile", containers=[container(
        "profile", state={"running": "2026-11-30T09:40:00Z (20m ago)"}, restarts=0,
        readiness_probe="http-get http://:http/healthz delay=5s timeout=1s period=10s "
                        "failure=3")],
        events=[event("Unhealthy", "Pod/profile-5f-abcde", "Readiness probe failed: HTTP probe "
                      "failed with statuscode: 404", namespace="accounts", count=200)])
    facts = facts_of(pod)
    found = probe.detect(facts, scope_of(facts, "profile"))
    assert categories(found) == [("probe_failure", "profile")]
    assert any("HTTP 404" in c.note for c in found[0].clues)
    assert "readiness" in found[0].fix


def test_a_few_old_readiness_failures_elsewhere_are_noise() -> None:
    facts = facts_of(workloads(workload("api"), workload("grafana", "monitoring")), events(
        event("Unhealthy", "Pod/grafana-5f-abcde", "Readiness probe failed: context deadline "
              "exceeded", namespace="monitoring", count=2)))
    found = ranked(facts, "api returns errors", probe.detect(facts, scope_of(facts, "api")))
    assert found and found[0].score < 0.1


def test_image_pull_auth_failure_suggests_credentials() -> None:
    pod = describe("fraud-7c-abcde", "risk", owner="fraud", status="ImagePullBackOff",
                   containers=[container("fraud", state={
                       "waiting": "ImagePullBackOff", "message": "Back-off pulling image"})],
                   events=[event("Failed", "Pod/fraud-7c-abcde", "Failed to pull image "
                                 "\"registry.example.com/fraud:2.0.0\": 401 Unauthorized",
                                 namespace="risk")])
    facts = facts_of(pod)
    found = image.detect(facts, scope_of(facts, "fraud"))
    assert categories(found) == [("image_pull", "fraud")]
    assert "credentials" in found[0].fix


def test_insufficient_cpu_is_unschedulable_not_quota() -> None:
    facts = facts_of(workloads(workload("enricher", "analytics", ready="4/8")), events(
        event("FailedScheduling", "Pod/enricher-6d5f-abcde", "0/4 nodes are available: "
              "4 Insufficient cpu.", namespace="analytics", count=30)))
    found = scheduling.detect(facts, scope_of(facts, "enricher lags"))
    assert categories(found) == [("unschedulable", "enricher")]
    assert "requests" in found[0].fix


def test_exceeded_quota_is_quota_exceeded() -> None:
    facts = facts_of(workloads(workload("worker", "reporting", ready="0/6")), events(
        event("FailedCreate", "ReplicaSet/worker-6d5f9c7b8", "Error creating: pods \"worker-6d5f"
              "9c7b8-abcde\" is forbidden: exceeded quota: compute, requested: limits.memory=4Gi",
              namespace="reporting", count=12)))
    found = scheduling.detect(facts, scope_of(facts, "reports pile up"))
    assert categories(found) == [("quota_exceeded", "worker")]


def test_old_scheduling_events_are_ignored() -> None:
    facts = facts_of(workloads(workload("enricher", "analytics")), events(
        event("FailedScheduling", "Pod/enricher-6d5f-abcde", "0/4 nodes are available",
              namespace="analytics", last="2026-11-30T07:00:00Z (3h ago)")))
    assert scheduling.detect(facts, scope_of(facts, "x")) == []


def test_crash_detector_ignores_healthy_pods_and_their_info_logs() -> None:
    facts = facts_of(describe("api-7d9f8c6b5-x2x2x", owner="api", containers=[container(
        ready=True, restarts=0, state={"running": "2026-11-30T08:00:00Z (2h ago)"})]),
        patterns(pattern("config key not found, using default", service="api",
                         pod="api-7d9f8c6b5-x2x2x", level="info")))
    assert crash.detect(facts, scope_of(facts, "api")) == []


def _crashing(last_words: str) -> list[Candidate]:
    died = {"terminated": "Error", "exit_code": 1, "started": "2026-11-30T09:57:00Z (3m ago)",
            "finished": "2026-11-30T09:57:09Z (3m ago)"}
    pod = describe("pay-5c7d9-abcde", "pay", owner="pay", status="CrashLoopBackOff",
                   containers=[container("pay", state={"waiting": "CrashLoopBackOff"},
                                         last_state=died)])
    logs = obs("k8s_pod_logs", {"pod": "pay-5c7d9-abcde", "container": "pay",
                                "instance": "previous", "lines_read": 4, "first_error": last_words},
               namespace="pay", pod="pay", previous=True)
    facts = facts_of(workloads(workload("pay", "pay", ready="0/2")), pod, logs)
    scope = scope_of(facts, "pay is down")
    return ranked(facts, "pay is down", crash.detect(facts, scope) +
                  dependency.detect(facts, scope))


def test_a_container_that_dies_because_its_database_is_unreachable_is_a_dependency_failure(
) -> None:
    found = _crashing("FATAL: could not connect to server at \"pay-db.cloud.example.com\", "
                      "port 5432: Connection refused")
    assert categories(found)[0] == ("dependency_failure", "pay")
    assert any(c.category == "crash_loop" and c.demoted_because for c in found)


def test_a_container_that_dies_of_bad_config_is_a_crash_loop() -> None:
    found = _crashing("FATAL: environment variable DATABASE_URL is required")
    assert categories(found)[0] == ("crash_loop", "pay")
