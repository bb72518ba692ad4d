"""A mesh control plane whose new version makes its proxies refuse requests the
application would take: the caller's 400s are the control plane's rollout."""

from __future__ import annotations

from engines.analyzer.detectors import mesh
from engines.analyzer.facts import Facts
from engines.analyzer.transcript import Observation
from tests.engines.analyzer.helpers import (
    facts_of,
    obs,
    pattern,
    patterns,
    scope_of,
    workload,
    workloads,
)

TOLD = "export failed: PUT http://archive.store:8080/v2/blobs -> 400 Bad Request"
ACCESS = ('[2026-11-30T09:31:00.000Z] "PUT /v2/blobs HTTP/1.1" 400 DPE http1.invalid_characters'
          ' - "-" 0 11 0 - "-" "curl/8.1" "-" "archive.store:8080"')
REPORT = "exporter uploads fail with 400 since 09:30, did our client change?"


def _mesh(*extra: Observation) -> Facts:
    return facts_of(
        workloads(workload("exporter", "jobs"), workload("archive", "store"),
                  workload("istiod", "istio-system")),
        patterns(pattern(TOLD, service="exporter", pod="exporter-6d5f7c8b9-q1w2e", count=50)),
        *extra)


def test_a_caller_told_bad_request_in_a_mesh_asks_for_its_sidecars_access_log() -> None:
    facts = _mesh()
    (guess,) = mesh.detect(facts, scope_of(facts, REPORT))
    assert (guess.category, guess.culprit.name) == ("bad_rollout", "istiod")
    assert guess.followups[0].arguments == {"namespace": "jobs", "service": "exporter",
                                            "text": "HTTP/1.1", "level": "info"}
    read = obs("logs_error_patterns", {"window": "1h", "matching_lines": 0, "patterns": []},
               namespace="jobs", service="exporter", text="HTTP/1.1", level="info")
    facts = _mesh(read)
    assert mesh.detect(facts, scope_of(facts, REPORT)) == [], "the app answered the 400"


def test_requests_the_proxies_refuse_blame_the_control_plane() -> None:
    access = patterns(pattern(ACCESS, service="exporter", pod="exporter-6d5f7c8b9-q1w2e",
                              level="info", count=50), namespace="jobs")
    facts = _mesh(access)
    (found,) = mesh.detect(facts, scope_of(facts, REPORT))
    assert found.culprit.name == "istiod"
    assert [r.name for r in found.affects] == ["exporter"]
    assert "the application never sees them" in found.clues[0].note
    assert found.followups[0].tool == "k8s_rollout_history"
    assert found.fix.startswith("Roll Deployment istio-system/istiod back")


def test_without_a_mesh_a_bad_request_is_no_mesh_matter() -> None:
    facts = facts_of(workloads(workload("exporter", "jobs")),
                     patterns(pattern(TOLD, service="exporter", pod="exporter-6d5f7c8b9-q1w2e")))
    assert mesh.detect(facts, scope_of(facts, REPORT)) == []
