"""The bundled library: valid, covering the taxonomy, and reproducible from its generator."""

from __future__ import annotations

import filecmp
import subprocess
from pathlib import Path

import pytest

from engines.diagnosis import CATEGORIES
from tests._ci import skip_or_fail
from tests.scenario_tools.generate import load_stories, write
from tests.services._process import NotProvisionedError, require_executable
from tools.scenarios import bundled_ids, bundled_root, load_scenario
from tools.scenarios.validate import validate_scenario

IDS = bundled_ids()


def test_library_size() -> None:
    assert len(IDS) >= 20


@pytest.mark.parametrize("scenario_id", IDS)
def test_bundled_scenario_is_valid(scenario_id: str) -> None:
    assert [str(p) for p in validate_scenario(bundled_root() / scenario_id)] == []


def test_every_category_is_covered() -> None:
    covered = {load_scenario(i).truth.category for i in IDS}
    assert set(CATEGORIES) - {"unknown"} <= covered


@pytest.mark.parametrize("scenario_id", IDS)
def test_report_states_the_symptom_not_the_cause(scenario_id: str) -> None:
    """The engineer's message must not give away the answer."""
    scenario = load_scenario(scenario_id)
    report = scenario.report.lower()
    assert scenario.truth.category.replace("_", " ") not in report.replace("_", " ")
    for phrase in scenario.truth.evidence:
        assert phrase.lower() not in report, phrase


@pytest.mark.parametrize("scenario_id", IDS)
def test_scenario_has_red_herrings(scenario_id: str) -> None:
    """Besides the culprit, at least two other workloads log warnings or errors, restarted
    before, or have warning events: the analyzer must tell signal from noise."""
    scenario = load_scenario(scenario_id)
    culprit = scenario.truth.culprit.name
    noisy = {r.service for r in scenario.log_records
             if r.level in {"warn", "warning", "error"} and not r.service.startswith(culprit)}
    for obj in scenario.cluster_objects:
        restarted = any(s.get("restartCount") for s in
                        obj.get("status", {}).get("containerStatuses", []))
        if obj["kind"] == "Pod" and restarted and not obj["metadata"]["name"].startswith(culprit):
            noisy.add(obj["metadata"]["name"])
        if obj["kind"] == "Event" and obj["type"] == "Warning" and not obj["involvedObject"][
                "name"].startswith(culprit):
            noisy.add(obj["involvedObject"]["name"])
    assert len(noisy) >= 2, noisy


def test_nows_differ() -> None:
    nows = [load_scenario(i).now for i in IDS]
    assert len(set(nows)) == len(nows)


def test_generator_reproduces_the_bundled_files(tmp_path: Path) -> None:
    """The data is generated: regenerating a scenario gives the same bytes."""
    stories = load_stories()
    assert set(stories) == set(IDS)
    for scenario_id in ("checkout-oom", "node-not-ready"):
        folder = write(stories[scenario_id](), tmp_path)
        compare = filecmp.dircmp(folder, bundled_root() / scenario_id)
        assert _same(compare), scenario_id


def _same(compare: filecmp.dircmp[str]) -> bool:
    if compare.left_only or compare.right_only or compare.diff_files or compare.funny_files:
        return False
    return all(_same(sub) for sub in compare.subdirs.values())


@pytest.fixture(scope="module")
def promtool() -> str:
    """promtool on PATH, as the Prometheus test server finds it (Debian's prometheus package,
    which tests/services/provision.sh installs); skipped without it, failed under CI."""
    try:
        return require_executable("promtool", "promtool (Debian package prometheus)")
    except NotProvisionedError as exc:
        skip_or_fail(str(exc))


@pytest.mark.parametrize("scenario_id", IDS)
def test_promtool_backfills_the_metrics(scenario_id: str, tmp_path: Path, promtool: str) -> None:
    """The format's promise: the metrics load into a real Prometheus as they are."""
    metrics = bundled_root() / scenario_id / "metrics.om"
    result = subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics",
                             str(metrics), str(tmp_path / "data")],
                            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
