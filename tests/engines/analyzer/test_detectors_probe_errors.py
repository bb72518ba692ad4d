"""A probe that cannot even run (an exec probe whose command the image lacks) is the
probe's fault, and outweighs an unrelated Pending pod elsewhere."""

from __future__ import annotations

from engines.analyzer.detectors import probe, scheduling
from tests.engines.analyzer.helpers import (
    categories,
    describe,
    event,
    events,
    facts_of,
    ranked,
    scope_of,
    workload,
    workloads,
)

ERRORED = ("Readiness probe errored: rpc error: code = Unknown desc = failed to exec in "
           "container: OCI runtime exec failed: exec failed: unable to start container process: "
           "exec: \"curl\": executable file not found in $PATH: unknown")


def _cluster() -> list:
    new_pod = describe("quotes-6c-abcde", "pricing", owner="quotes", containers=[{
        "name": "quotes", "image": "registry.example.com/quotes:4.2.0", "ready": False,
        "restarts": 0, "state": {"running": "2026-11-30T09:20:00Z (40m ago)"},
        "readiness_probe": "exec [curl -fsS http://localhost:8080/ready] delay=10s timeout=1s "
                           "period=10s failure=3"}],
        events=[event("Unhealthy", "Pod/quotes-6c-abcde", ERRORED, namespace="pricing",
                      count=240)])
    return [workloads(workload("quotes", "pricing", ready="3/4"),
                      workload("renderer", "web", ready="0/1")),
            events(event("Unhealthy", "Pod/quotes-6c-abcde", ERRORED, namespace="pricing",
                         count=240),
                   event("FailedScheduling", "Pod/renderer-5d-abcde", "0/4 nodes are "
                         "available: 4 node(s) didn't match Pod's node affinity/selector.",
                         namespace="web", count=14)),
            new_pod]


def test_a_probe_that_errors_is_the_probes_fault() -> None:
    facts = facts_of(*_cluster())
    found = probe.detect(facts, scope_of(facts, "quotes rollout stuck, the new pod never goes "
                                                "Ready"))
    assert categories(found) == [("probe_failure", "quotes")]
    assert any("cannot run in the container" in c.note for c in found[0].clues)


def test_the_errored_probe_outranks_a_pending_pod_elsewhere() -> None:
    facts = facts_of(*_cluster())
    report = "quotes rollout stuck: the new pod never goes Ready, old pods still serve"
    scope = scope_of(facts, report)
    found = ranked(facts, report, probe.detect(facts, scope) + scheduling.detect(facts, scope))
    assert categories(found)[0] == ("probe_failure", "quotes")
