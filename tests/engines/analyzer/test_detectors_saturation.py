"""Saturated thread pools, worker pools and queues: recognised by what they log, phrases or
bare figures ("12 of 12 threads busy", "queue 64/64", a task rejected from an executor),
whatever the numbers, told apart from pools that merely report their size, and submitted
as resource exhaustion rather than an autoscaling limit or `unknown` when CPU is low."""

from __future__ import annotations

import pytest

from engines.analyzer.detectors import exhaustion, run_detectors
from engines.analyzer.detectors.exhaustion import saturation
from engines.analyzer.diagnose import diagnosis_arguments
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

POD = "invoicer-6c8d7f9b4-qwxyz"
ERRORS_UP = {"abnormal": True, "why": "5xx ratio rose from 0.1% to 18.0% at 2026-11-30T09:31:00Z",
             "change": {"at": "2026-11-30T09:31:00Z", "error_ratio_before": 0.001,
                        "error_ratio_after": 0.18}}

SATURATED = [
    "GET /invoices 503: Task io.acme.Job@1a2b3c rejected from "
    "java.util.concurrent.ThreadPoolExecutor@77aa[Running, pool size = 24, active threads = 24, "
    "queued tasks = 200, completed tasks = 9120]",
    "pdf pool saturated: 12 of 12 threads busy, 9 waiting on a lock",
    "render executor: active threads: 40/40, callers are waiting",
    "job queue 64/64, dropping request",
    "All threads (150) are currently busy, waiting. Increase maxThreads (150) or check the "
    "servlet status",
    "upstream handler: no available workers, request dropped",
    "WARNING: [pool www] server reached pm.max_children setting (25), consider raising it",
    "accept4() failed (24: Too many open files)",
]
RELAXED = [
    "pool started: 8/8 workers active",
    "render executor: active threads: 12/40",
    "job queue 3/64",
    "pods 3/3 ready",
    "pool size = 24, active threads = 7, queued tasks = 0",
]


@pytest.mark.parametrize("line", SATURATED)
def test_a_saturated_pool_or_queue_is_resource_exhaustion(line: str) -> None:
    facts = facts_of(workloads(workload("invoicer", "billing")), patterns(pattern(
        line, service="invoicer", pod=POD, count=60)))
    found = exhaustion.detect(facts, scope_of(facts, "invoicer returns 503s"))
    assert categories(found) == [("resource_exhaustion", "invoicer")]
    assert found[0].strength >= 0.5


@pytest.mark.parametrize("line", RELAXED)
def test_a_pool_that_only_reports_its_size_is_not_exhausted(line: str) -> None:
    assert saturation(line) is None
    facts = facts_of(workloads(workload("invoicer", "billing")), patterns(pattern(
        line, service="invoicer", pod=POD, count=60, level="info")))
    assert exhaustion.detect(facts, scope_of(facts, "invoicer returns 503s")) == []


def test_a_saturated_executor_under_a_low_cpu_autoscaler_is_submitted_as_exhaustion() -> None:
    hpa = obs("k8s_list_autoscalers", {"total": 1, "at_max": 0, "autoscalers": [{
        "name": "invoicer", "namespace": "billing", "target": "Deployment/invoicer", "min": 2,
        "max": 8, "current": 2, "desired": 2, "at_max": False,
        "metrics": ["cpu 9% / target 70%"]}]}, namespace="billing")
    facts = facts_of(
        workloads(workload("invoicer", "billing", ready="2/2")), hpa,
        patterns(pattern(SATURATED[0], service="invoicer", pod=POD, count=140,
                         example=SATURATED[0]),
                 pattern("pdf pool saturated: 12 of 12 threads busy", service="invoicer",
                         pod=POD, count=3, level="warn")),
        signals("billing", "invoicer", requests=ERRORS_UP,
                cpu={"abnormal": False, "why": "CPU stays far below its limit"}))
    report = "invoicer in billing answers 503 'busy, try again' since 09:30, CPU is low"
    scope = scope_of(facts, report)
    best = ranked(facts, report, run_detectors(facts, scope))
    assert categories(best)[0] == ("resource_exhaustion", "invoicer")
    arguments, sure = diagnosis_arguments(best, [], facts, scope)
    assert arguments["category"] == "resource_exhaustion"
    assert "threads" in arguments["fix"] and sure >= 0.5
