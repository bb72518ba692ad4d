"""The validator reports each broken rule of scenario-format.md at the right file and line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.scenarios.conftest import (
    BASE,
    assert_reported,
    edit_first,
    line_of,
    problems,
    replace,
)
from tools.scenarios.validate import Problem, validate_scenario


def _kind(kind: str) -> Any:
    return lambda d: isinstance(d, dict) and d.get("kind") == kind


def _pod_of_rs(d: Any) -> bool:
    return _kind("Pod")(d) and "pod-template-hash" in d["metadata"].get("labels", {})


def test_the_copy_is_valid(scenario: Path) -> None:
    assert problems(scenario) == []


def test_problem_prints_path_line_message() -> None:
    assert str(Problem(Path("a/b.yaml"), 3, "bad")) == "a/b.yaml:3: bad"
    assert str(Problem(Path("a/b.yaml"), None, "bad")) == "a/b.yaml: bad"


# ------------------------------------------------------------------ scenario.yaml


def test_missing_scenario_yaml(scenario: Path) -> None:
    (scenario / "scenario.yaml").unlink()
    assert_reported(problems(scenario), scenario / "scenario.yaml", None, "missing")


def test_required_key_missing(scenario: Path) -> None:
    file = scenario / "scenario.yaml"
    replace(file, "title: Stock levels no longer updating\n", "")
    assert_reported(problems(scenario), file, 1, "missing required key 'title'")


def test_wrong_type_and_unknown_key(scenario: Path) -> None:
    file = scenario / "scenario.yaml"
    replace(file, "title: Stock levels no longer updating", "title: [a, b]\nseverity: high")
    found = problems(scenario)
    assert_reported(found, file, line_of(file, "title:"), "'title' must be a non-empty str")
    assert_reported(found, file, line_of(file, "severity:"), "unknown key 'severity'")


def test_id_must_match_folder_and_pattern(scenario: Path) -> None:
    file = scenario / "scenario.yaml"
    replace(file, f"id: {BASE}", "id: Stock_Sync")
    found = problems(scenario)
    assert_reported(found, file, 1, "must be lowercase letters, digits and '-'")
    assert_reported(found, file, 1, "differs from the folder name")


def test_now_needs_a_time_zone(scenario: Path) -> None:
    file = scenario / "scenario.yaml"
    replace(file, "now: '2026-12-09T08:15:00Z'", "now: '2026-12-09T08:15:00'")
    assert_reported(problems(scenario), file, line_of(file, "now:"), "has no time zone")


def test_category_outside_the_taxonomy(scenario: Path) -> None:
    file = scenario / "scenario.yaml"
    replace(file, "category: crash_loop", "category: gremlins")
    assert_reported(problems(scenario), file, line_of(file, "category:"),
                    "category 'gremlins' is not a root cause of the taxonomy")


def test_unknown_is_not_a_truth(scenario: Path) -> None:
    file = scenario / "scenario.yaml"
    replace(file, "category: crash_loop", "category: unknown")
    assert_reported(problems(scenario), file, line_of(file, "category:"), "category 'unknown'")


def test_culprit_must_exist(scenario: Path) -> None:
    file = scenario / "scenario.yaml"
    replace(file, "name: stock-sync\n", "name: stock-sink\n")
    assert_reported(problems(scenario), file, line_of(file, "culprit:"),
                    "culprit Deployment inventory/stock-sink is not in cluster.yaml")


def test_culprit_kind_must_fit_the_category(scenario: Path) -> None:
    file = scenario / "scenario.yaml"
    replace(file, "kind: Deployment", "kind: Node")
    found = problems(scenario)
    assert_reported(found, file, line_of(file, "kind: Node"),
                    "culprit kind Node does not fit category crash_loop")
    assert_reported(found, file, line_of(file, "namespace: inventory"),
                    "a Node culprit has an empty namespace")


def test_node_failure_needs_a_node(scenario: Path) -> None:
    file = scenario / "scenario.yaml"
    replace(file, "category: crash_loop", "category: node_failure")
    assert_reported(problems(scenario), file, line_of(file, "kind: Deployment"),
                    "culprit kind Deployment does not fit category node_failure")


def test_interventions_are_checked(scenario: Path) -> None:
    file = scenario / "scenario.yaml"
    file.write_text(file.read_text() + "interventions:\n- after_step: -1\n  text: ''\n")
    found = problems(scenario)
    line = line_of(file, "after_step")
    assert_reported(found, file, line, "after_step must be an integer >= 0")
    assert_reported(found, file, line, "intervention text must be non-empty")


# ------------------------------------------------------------------ cluster.yaml


def test_secrets_are_refused(scenario: Path) -> None:
    file = scenario / "cluster.yaml"
    file.write_text(file.read_text() + "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: "
                    "db\n  namespace: inventory\ndata:\n  password: aHVudGVyMg==\n")
    assert_reported(problems(scenario), file, line_of(file, "kind: Secret"),
                    "Secret objects are not allowed")


def test_kinds_outside_the_list_are_refused(scenario: Path) -> None:
    file = scenario / "cluster.yaml"
    file.write_text(file.read_text() + "---\napiVersion: v1\nkind: PersistentVolume\n"
                    "metadata:\n  name: pv-1\n")
    assert_reported(problems(scenario), file, line_of(file, "kind: PersistentVolume"),
                    "kind 'PersistentVolume' is not allowed")


def test_owner_uid_must_match(scenario: Path) -> None:
    file = scenario / "cluster.yaml"
    pod = edit_first(file, _pod_of_rs, lambda d: d["metadata"]["ownerReferences"][0].update(
        uid="00000000-0000-0000-0000-000000000000"))
    assert_reported(problems(scenario), file,
                    line_of(file, "uid: 00000000-0000-0000-0000-000000000000"),
                    f"Pod {pod['metadata']['name']}: owner ReplicaSet")


def test_owner_must_exist(scenario: Path) -> None:
    file = scenario / "cluster.yaml"
    edit_first(file, _pod_of_rs, lambda d: d["metadata"]["ownerReferences"][0].update(
        name="ghost-rs"))
    assert_reported(problems(scenario), file, line_of(file, "name: ghost-rs") - 2,
                    "owner ReplicaSet ghost-rs not found")


def test_replicaset_must_have_its_deployment(scenario: Path) -> None:
    file = scenario / "cluster.yaml"
    rs = edit_first(file, _kind("ReplicaSet"), lambda d: d["metadata"]["ownerReferences"][0]
                    .update(uid="11111111-1111-1111-1111-111111111111"))
    assert_reported(problems(scenario), file,
                    line_of(file, "uid: 11111111-1111-1111-1111-111111111111"),
                    f"ReplicaSet {rs['metadata']['name']}: owner Deployment")


def test_pod_template_hash_must_agree(scenario: Path) -> None:
    file = scenario / "cluster.yaml"
    pod = edit_first(file, _pod_of_rs, lambda d: d["metadata"]["labels"].update(
        {"pod-template-hash": "zzzzzzzzzz"}))
    name = pod["metadata"]["name"]
    line = line_of(file, "labels:", line_of(file, f"name: {name}"))
    assert_reported(problems(scenario), file, line, f"Pod {name} has pod-template-hash "
                    "zzzzzzzzzz")


def test_replicaset_name_carries_the_hash(scenario: Path) -> None:
    file = scenario / "cluster.yaml"
    rs = edit_first(file, _kind("ReplicaSet"), lambda d: d["metadata"]["labels"].update(
        {"pod-template-hash": "bbbbbbbbbb"}))
    found = problems(scenario)
    assert any(f"ReplicaSet {rs['metadata']['name']} should be named" in p for p in found)
    assert any("selects pod-template-hash" in p for p in found)


def test_event_must_involve_an_existing_object(scenario: Path) -> None:
    file = scenario / "cluster.yaml"
    edit_first(file, _kind("Event"), lambda d: d["involvedObject"].update(name="nobody-0"))
    assert_reported(problems(scenario), file, line_of(file, "name: nobody-0") - 3,
                    "Event involves")


def test_event_older_than_an_hour(scenario: Path) -> None:
    file = scenario / "cluster.yaml"
    event = edit_first(file, _kind("Event"), lambda d: d.update(
        firstTimestamp="2026-12-09T05:00:00Z", lastTimestamp="2026-12-09T06:00:00Z"))
    assert_reported(problems(scenario), file, line_of(file, "lastTimestamp: '2026-12-09T06:00"),
                    f"Event {event['metadata']['name']} was last updated at")


def test_event_needs_count_and_type(scenario: Path) -> None:
    file = scenario / "cluster.yaml"
    edit_first(file, _kind("Event"), lambda d: d.update(count=0, type="Error"))
    found = problems(scenario)
    assert any("has count 0" in p for p in found)
    assert any("has type 'Error'" in p for p in found)


def test_status_time_after_now(scenario: Path) -> None:
    file = scenario / "cluster.yaml"
    edit_first(file, _pod_of_rs, lambda d: d["status"].update(startTime="2026-12-09T09:00:00Z"))
    assert_reported(problems(scenario), file, line_of(file, "startTime: '2026-12-09T09:00"),
                    "status.startTime 2026-12-09T09:00:00+00:00 is after now")


def test_status_time_older_than_a_week(scenario: Path) -> None:
    file = scenario / "cluster.yaml"
    edit_first(file, _kind("Node"), lambda d: d["status"]["conditions"][0].update(
        lastTransitionTime="2026-11-20T00:00:00Z"))
    assert_reported(problems(scenario), file, line_of(file, "2026-11-20T00:00:00Z"),
                    "is more than a week before now")


def test_objects_may_be_older_than_a_week(scenario: Path) -> None:
    file = scenario / "cluster.yaml"
    edit_first(file, _kind("Deployment"), lambda d: d["metadata"].update(
        creationTimestamp="2025-01-01T00:00:00Z"))
    assert problems(scenario) == []


# ------------------------------------------------------------------ logs


def test_log_document_without_required_fields(scenario: Path) -> None:
    file = scenario / "logs.ndjson"
    lines = file.read_text().splitlines()
    doc = json.loads(lines[4])
    doc.pop("kubernetes.pod.name", None)
    doc.get("kubernetes", {}).get("pod", {}).pop("name", None)
    lines[4] = json.dumps(doc)
    file.write_text("\n".join(lines) + "\n")
    assert_reported(problems(scenario), file, 5, "log document lacks kubernetes.pod.name")


def test_nested_and_flat_documents_are_both_accepted(scenario: Path) -> None:
    file = scenario / "logs.ndjson"
    nested = {"@timestamp": "2026-12-09T08:00:00.000Z", "message": "hello",
              "log": {"level": "info"}, "service": {"name": "stock-sync"},
              "kubernetes": {"namespace": "inventory", "pod": {"name": "p"},
                             "container": {"name": "c"}}}
    file.write_text(file.read_text() + json.dumps(nested) + "\n")
    assert problems(scenario) == []


def test_log_outside_the_window(scenario: Path) -> None:
    file = scenario / "logs.ndjson"
    lines = file.read_text().splitlines()
    doc = json.loads(lines[0])
    doc["@timestamp"] = "2026-12-09T08:16:00.000Z"
    file.write_text("\n".join([json.dumps(doc), *lines[1:]]) + "\n")
    assert_reported(problems(scenario), file, 1, "@timestamp 2026-12-09T08:16:00+00:00 is after")


def test_log_line_not_json(scenario: Path) -> None:
    file = scenario / "logs.ndjson"
    file.write_text(file.read_text() + "{not json\n")
    number = len(file.read_text().splitlines())
    assert_reported(problems(scenario), file, number, "not a JSON document")


# ------------------------------------------------------------------ pod logs


def test_pod_logs_of_a_missing_pod(scenario: Path) -> None:
    file = scenario / "pod-logs" / "inventory" / "stock-sync-zzzzzzzzzz-zzzzz" / "app.log"
    file.parent.mkdir(parents=True)
    file.write_text("hello\n")
    assert_reported(problems(scenario), file, None, "pod inventory/stock-sync-zzzzzzzzzz-zzzzz "
                    "is not in cluster.yaml")


def test_pod_logs_of_a_missing_container(scenario: Path) -> None:
    existing = next((scenario / "pod-logs" / "inventory").iterdir())
    file = existing / "sidecar.log"
    file.write_text("hello\n")
    assert_reported(problems(scenario), file, None, "has no container 'sidecar'")


def test_previous_log_needs_a_restart(scenario: Path) -> None:
    pods = [p for p in (scenario / "pod-logs").rglob("*") if p.is_dir() and p.parent.name
            == "inventory"]
    assert pods
    folder = scenario / "cluster.yaml"
    edit_first(folder, lambda d: _kind("Pod")(d) and d["metadata"]["name"] == pods[0].name,
               lambda d: d["status"]["containerStatuses"][0].update(restartCount=0))
    file = pods[0] / "stock-sync.previous.log"
    assert_reported(problems(scenario), file, None, "its restartCount is 0")


def test_unexpected_files(scenario: Path) -> None:
    (scenario / "logs.json").write_text("{}\n")
    assert_reported(problems(scenario), scenario / "logs.json", None, "unexpected file")


# ------------------------------------------------------------------ metrics


def _metrics(scenario: Path) -> tuple[Path, list[str]]:
    file = scenario / "metrics.om"
    return file, file.read_text().splitlines()


def _write(file: Path, lines: list[str]) -> None:
    file.write_text("\n".join(lines) + "\n")


def test_metrics_need_the_final_eof(scenario: Path) -> None:
    file, lines = _metrics(scenario)
    _write(file, lines[:-1])
    assert_reported(problems(scenario), file, len(lines) - 1, "no final '# EOF' line")


def test_metric_sample_without_timestamp(scenario: Path) -> None:
    file, lines = _metrics(scenario)
    index = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    lines[index] = lines[index].rsplit(" ", 1)[0]
    _write(file, lines)
    assert_reported(problems(scenario), file, index + 1, "has no timestamp")


def test_metric_sample_outside_the_window(scenario: Path) -> None:
    file, lines = _metrics(scenario)
    index = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    lines[index] = lines[index].rsplit(" ", 1)[0] + " 1765000000"
    _write(file, lines)
    assert_reported(problems(scenario), file, index + 1, "is more than a week before now")


def test_interleaved_families(scenario: Path) -> None:
    file, lines = _metrics(scenario)
    first = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    moved = lines.pop(first)
    at = len(lines) - 1  # just before # EOF, after other families
    lines.insert(at, moved)
    _write(file, lines)
    assert_reported(problems(scenario), file, at + 1, "interleaved with another family")


def test_counter_that_falls_without_a_restart(scenario: Path) -> None:
    file, lines = _metrics(scenario)
    index = next(i for i, line in enumerate(lines)
                 if line.startswith("container_cpu_usage_seconds_total{")
                 and lines[i + 1].startswith("container_cpu_usage_seconds_total{"))
    name, _, stamp = lines[index + 1].rsplit(" ", 2)
    lines[index + 1] = f"{name} 0.5 {stamp}"
    _write(file, lines)
    assert_reported(problems(scenario), file, index + 2, "falls from")


def test_counter_reset_allowed_when_the_container_restarted(scenario: Path) -> None:
    file, lines = _metrics(scenario)
    restarted = json.loads(json.dumps([line for line in lines
                                       if line.startswith("kube_pod_container_status_restarts")
                                       ]))
    assert restarted, "the base scenario has a restarting container"
    index = next(i for i, line in enumerate(lines)
                 if line.startswith("kube_pod_container_status_restarts_total{")
                 and lines[i + 1].startswith("kube_pod_container_status_restarts_total{"))
    name, _, stamp = lines[index + 1].rsplit(" ", 2)
    lines[index + 1] = f"{name} 0 {stamp}"
    _write(file, lines)
    assert problems(scenario) == []


def test_counter_family_named_with_total(scenario: Path) -> None:
    file, lines = _metrics(scenario)
    index = lines.index("# TYPE kube_pod_container_status_restarts counter")
    lines[index] = "# TYPE kube_pod_container_status_restarts_total counter"
    _write(file, lines)
    assert_reported(problems(scenario), file, index + 1, "must be declared without _total")


def test_histogram_without_inf_bucket(tmp_path: Path, scenario: Path) -> None:
    file = scenario / "metrics.om"
    file.write_text(
        "# TYPE http_request_duration_seconds histogram\n"
        "# HELP http_request_duration_seconds Latency.\n"
        'http_request_duration_seconds_bucket{pod="p",le="0.1"} 1 1796810000\n'
        'http_request_duration_seconds_count{pod="p"} 1 1796810000\n'
        'http_request_duration_seconds_sum{pod="p"} 0.05 1796810000\n'
        "# EOF\n")
    assert_reported(problems(scenario), file, 3, "point without a +Inf bucket")


def test_metric_family_without_type(scenario: Path) -> None:
    file, lines = _metrics(scenario)
    lines.insert(len(lines) - 1, 'stray_metric{pod="p"} 1 1796810000')
    _write(file, lines)
    assert_reported(problems(scenario), file, len(lines) - 1, "has no # TYPE line")


def test_every_problem_is_reported_at_once(scenario: Path) -> None:
    (scenario / "scenario.yaml").write_text((scenario / "scenario.yaml").read_text().replace(
        "category: crash_loop", "category: gremlins"))
    file, lines = _metrics(scenario)
    _write(file, lines[:-1])
    files = {p.file.name for p in validate_scenario(scenario)}
    assert {"scenario.yaml", "metrics.om"} <= files
