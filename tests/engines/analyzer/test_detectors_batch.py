"""Batch workloads: a scheduled run that fails is its CronJob's fault, a Job whose pods were
OOMKilled ran out of memory (it did not crash at start), and a report that misses what a
batch makes (statements, exports, files) points at the batch workloads even when it names
only the place where the output should have appeared."""

from __future__ import annotations

from datetime import timedelta

from engines.analyzer.detectors import crash, run_detectors
from engines.analyzer.detectors._common import batch_owner
from engines.analyzer.facts import Ref
from tests.engines.analyzer.helpers import (
    categories,
    describe,
    event,
    events,
    facts_of,
    pattern,
    patterns,
    ranked,
    scope_of,
    workload,
    workloads,
)

FAILED = "Failed=True BackoffLimitExceeded: Job has reached the specified backoff limit"
REPORT = "Staff say this month's payslip exports are missing from the staff portal. Please check."


def cron(name: str, namespace: str, reason: str, pods: int = 4) -> dict[str, object]:
    """A k8s_list_workloads CronJob row whose run's pods (which never restart) all ended so."""
    return workload(name, namespace, kind="CronJob", ready="", problems=[
        f"{pods} of {pods} pods unhealthy"], pods={
        "total": pods, "statuses": {reason: pods}, "unhealthy": pods,
        "last_exit_reasons": {reason: pods}})


def job(name: str, namespace: str, age: timedelta, pods: int = 4) -> dict[str, object]:
    return workload(name, namespace, kind="Job", ready="", completed="0/1", failed=pods, age=age,
                    problems=[FAILED, f"{pods} failed pods"])


def portal() -> list[object]:
    """The portal the report names: one restart two days ago, a warning about the output."""
    crashed = describe("staff-portal-7d9f8c6b5-x2k4p", "portal", owner="staff-portal", containers=[{
        "name": "staff-portal", "restarts": 1, "state": {"running": "2026-11-28T09:00:00Z"},
        "last_state": {"terminated": "Error", "exit_code": 1,
                       "started": "2026-11-27T08:00:00Z", "finished": "2026-11-28T09:00:00Z"}}])
    said = patterns(pattern("payslip export for employee E-1042 period 2026-11 not found",
                            service="staff-portal", pod="staff-portal-7d9f8c6b5-x2k4p",
                            level="warn", count=12))
    return [crashed, said]


def test_a_cron_run_whose_pods_were_oomkilled_is_the_cronjob_s_oom_not_a_crash() -> None:
    facts = facts_of(
        workloads(cron("payslip-export", "payroll", "OOMKilled"),
                  job("payslip-export-29001234", "payroll", timedelta(hours=1, minutes=10)),
                  workload("staff-portal", "portal")),
        events(event("BackoffLimitExceeded", "Job/payslip-export-29001234",
                     "Job has reached the specified backoff limit", namespace="payroll",
                     count=1)),
        *portal())
    scope = scope_of(facts, REPORT)
    assert "batch" in scope.symptoms
    assert batch_owner(facts, Ref("Job", "payroll", "payslip-export-29001234")) == Ref(
        "CronJob", "payroll", "payslip-export")
    found = ranked(facts, REPORT, run_detectors(facts, scope))
    assert categories(found)[0] == ("oom_killed", "payslip-export")
    assert found[0].culprit.kind == "CronJob"
    assert {c.topic for c in found[0].clues} >= {"oom-rollup", "oom-job"}
    # pods that died of memory never make the failed Job a crash at start
    assert not [c for c in found if c.category == "crash_loop" and c.culprit.kind in (
        "Job", "CronJob")]


def test_a_failed_run_long_past_counts_little_and_a_fresh_one_is_its_cronjob_s() -> None:
    def failed_run(age: timedelta) -> list[object]:
        facts = facts_of(workloads(cron("ledger-close", "books", "Error", pods=2),
                                   job("ledger-close-28990000", "books", age, pods=2)))
        return crash.detect(facts, scope_of(facts, "the ledger close file was not generated"))

    fresh, past = failed_run(timedelta(minutes=40)), failed_run(timedelta(days=3, hours=2))
    assert categories(fresh) == categories(past) == [("crash_loop", "ledger-close")]
    assert [c.weight for c in fresh[0].clues if c.topic == "job"] == [0.35]
    (old,) = [c for c in past[0].clues if c.topic == "job"]
    assert old.weight == 0.1 and "(3d ago)" in old.note  # the number judged, the text told


def test_a_failed_run_s_age_is_read_as_the_number_the_tool_gives() -> None:
    """The text may say anything ("3d", or a form no parser knows): the seconds decide."""
    def weight(**age: object) -> float:
        row = job("ledger-close-28990000", "books", timedelta(minutes=40), pods=2) | age
        facts = facts_of(workloads(cron("ledger-close", "books", "Error", pods=2), row))
        found = crash.detect(facts, scope_of(facts, "the ledger close file was not generated"))
        return next(c.weight for c in found[0].clues if c.topic == "job")

    assert weight(age="40m", age_seconds=3 * 86400) == 0.1
    assert weight(age="3d", age_seconds=40 * 60) == 0.35
    assert weight(age="3d") == 0.35  # no number: not known to be old
