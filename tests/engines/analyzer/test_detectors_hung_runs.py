"""A CronJob whose run hangs is the cause of the staleness its consumers report: its
skipped runs and the hung run's last line are its evidence."""

from __future__ import annotations

from engines.analyzer.detectors import batch, run_detectors
from tests.engines.analyzer.helpers import (
    event,
    events,
    facts_of,
    obs,
    ranked,
    scope_of,
    workload,
    workloads,
)

HUNG = ("Job export-1003 has been running for 2h30m, its earlier runs took at most 3m; "
        "concurrencyPolicy Forbid skips every run until it ends")
REPORT = "the warehouse dashboard is 3 hours stale, loader says nothing new to load"


def test_a_hung_run_blames_its_cronjob_with_the_runs_it_skipped_and_its_last_line() -> None:
    facts = facts_of(
        workloads(workload("export", "ops", kind="CronJob", problems=[HUNG]),
                  workload("loader", "ops")),
        events(event("JobAlreadyActive", "CronJob/export", "Not starting job because prior "
                     "execution is running and concurrency policy is Forbid", namespace="ops",
                     type="Normal", count=14)),
        obs("k8s_pod_logs", {"pod": "export-1003-x8k2q", "container": "run", "lines_read": 2,
                             "last_lines": ["09:30:01 dialing warehouse-ftp.example.net:21",
                                            "09:30:02 connected, waiting for greeting"]},
            namespace="ops", pod="export-1003"))
    (found,) = batch.detect(facts, scope_of(facts, REPORT))
    assert (found.category, found.culprit.name) == ("dependency_failure", "export")
    notes = [c.note for c in found.clues]
    assert notes[0].startswith("CronJob export: Job export-1003 has been running for 2h30m")
    assert any(n.startswith("14 runs skipped") for n in notes)
    assert any("waiting for greeting" in n for n in notes)
    assert found.fix.startswith("Delete the hung Job export-1003 of CronJob ops/export")
    top = ranked(facts, REPORT, run_detectors(facts, scope_of(facts, REPORT)))[0]
    assert top.culprit.name == "export"


def test_a_cronjob_without_a_hung_run_is_no_suspect() -> None:
    facts = facts_of(workloads(workload("export", "ops", kind="CronJob")))
    assert batch.detect(facts, scope_of(facts, REPORT)) == []
