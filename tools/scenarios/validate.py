"""Validate a scenario folder against scenario-format.md, rule by rule.

The loader (`load_scenario`) stops at the first thing it cannot read; the validator goes on
and lists every broken rule with its file and line, so an author fixes a scenario in one
round. It also checks what the loader never needs but a realistic incident must have:
references that resolve, hashes that match, clocks that agree.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from engines.diagnosis import CATEGORIES, WORKLOAD_KINDS
from tools.scenarios import SCENARIO_ID, flatten, parse_time
from tools.scenarios._check_cluster import ClusterIndex, check_cluster
from tools.scenarios._check_metrics import check_metrics
from tools.scenarios._problems import (
    Located,
    Problem,
    load_located,
    window_problem,
    yaml_error_line,
)

__all__ = ["Problem", "validate_scenario"]

HEADER_KEYS = {"id": str, "title": str, "now": str, "report": str, "truth": dict}
OPTIONAL_KEYS = {"interventions": list}
TRUTH_KEYS = {"category", "culprit", "evidence", "fix"}
CULPRIT_KINDS = {"network": {"Service", "NetworkPolicy"}, "node_failure": {"Node"}}
LOG_FIELDS = ("@timestamp", "message", "log.level", "service.name", "kubernetes.namespace",
              "kubernetes.pod.name", "kubernetes.container.name")
TOP_LEVEL = {"scenario.yaml", "cluster.yaml", "logs.ndjson", "metrics.om", "pod-logs"}


def validate_scenario(folder: str | Path) -> list[Problem]:
    """Every broken rule of the scenario in `folder`, sorted by file and line; [] if none."""
    folder = Path(folder)
    header_file = folder / "scenario.yaml"
    if not header_file.is_file():
        return [Problem(header_file, None, "missing: every scenario needs a scenario.yaml")]
    problems, header, now = _check_header(folder, header_file)
    documents = _cluster_documents(folder / "cluster.yaml", problems)
    index = ClusterIndex(documents)
    if now is not None:
        if documents:
            problems += check_cluster(folder / "cluster.yaml", documents, now)
        problems += _check_logs(folder / "logs.ndjson", now)
        metrics = folder / "metrics.om"
        if metrics.is_file():
            problems += check_metrics(metrics, metrics.read_text(), now,
                                      lambda labels: _restarted(index, labels))
    if header is not None:
        problems += _check_culprit(header_file, header, index, bool(documents))
    problems += _check_pod_logs(folder, index)
    problems += _check_layout(folder)
    return sorted(set(problems), key=lambda p: (str(p.file), p.line or 0, p.message))


# ------------------------------------------------------------------ scenario.yaml


def _check_header(folder: Path, file: Path) -> tuple[list[Problem], Located | None,
                                                     datetime | None]:
    """Required keys and types, the id, the clock, the truth and the interventions."""
    try:
        docs = load_located(file.read_text())
    except yaml.YAMLError as exc:
        return [Problem(file, yaml_error_line(exc), f"not valid YAML: {exc}")], None, None
    if len(docs) != 1 or not isinstance(docs[0].data, dict):
        return [Problem(file, 1, "scenario.yaml must hold one mapping")], None, None
    doc, problems = docs[0], []

    def add(path: tuple[str | int, ...], message: str) -> None:
        problems.append(Problem(file, doc.line_of(*path), message))

    data: dict[str, Any] = doc.data
    for key, kind in {**HEADER_KEYS, **OPTIONAL_KEYS}.items():
        if key not in data:
            if key in HEADER_KEYS:
                add((), f"missing required key {key!r}")
        elif key == "now" and hasattr(data[key], "tzinfo"):
            continue  # an unquoted YAML timestamp: the loader accepts it too
        elif not isinstance(data[key], kind) or (kind is str and not data[key].strip()):
            add((key,), f"{key!r} must be a non-empty {kind.__name__}")
    for key in data:
        if key not in HEADER_KEYS and key not in OPTIONAL_KEYS:
            add((key,), f"unknown key {key!r}")
    scenario_id = data.get("id")
    if isinstance(scenario_id, str):
        if not SCENARIO_ID.match(scenario_id):
            add(("id",), f"id {scenario_id!r} must be lowercase letters, digits and '-'")
        if scenario_id != folder.name:
            add(("id",), f"id {scenario_id!r} differs from the folder name {folder.name!r}")
    now = _now(data.get("now"), lambda m: add(("now",), m))
    if isinstance(data.get("truth"), dict):
        _check_truth(data["truth"], add)
    if isinstance(data.get("interventions"), list):
        _check_interventions(data["interventions"], add)
    return problems, doc, now


def _now(value: Any, add: Any) -> datetime | None:
    if value is None:
        return None
    text = value.isoformat() if hasattr(value, "isoformat") else str(value)
    if not (text.endswith("Z") or "+" in text[10:] or "-" in text[10:]):
        add(f"now {text!r} has no time zone (RFC 3339 needs Z or an offset)")
    try:
        return parse_time(value)
    except (TypeError, ValueError):
        add(f"now {value!r} is not an RFC 3339 time")
        return None


def _check_truth(truth: dict[str, Any], add: Any) -> None:
    for key in truth:
        if key not in TRUTH_KEYS:
            add(("truth", key), f"unknown key {key!r} in truth")
    category = truth.get("category")
    if category not in CATEGORIES or category == "unknown":
        add(("truth", "category"), f"category {category!r} is not a root cause of the taxonomy "
            f"({', '.join(c for c in CATEGORIES if c != 'unknown')})")
    culprit = truth.get("culprit")
    if not isinstance(culprit, dict) or not culprit.get("kind") or not culprit.get("name"):
        add(("truth", "culprit"), "truth.culprit needs kind, namespace and name")
    else:
        for key in culprit:
            if key not in {"kind", "namespace", "name"}:
                add(("truth", "culprit", key), f"unknown key {key!r} in truth.culprit")
        _check_culprit_kind(str(culprit["kind"]), str(culprit.get("namespace") or ""),
                            category, add)
    evidence = truth.get("evidence", [])
    if not isinstance(evidence, list) or not all(isinstance(e, str) for e in evidence):
        add(("truth", "evidence"), "truth.evidence must be a list of phrases")
    if not isinstance(truth.get("fix", ""), str):
        add(("truth", "fix"), "truth.fix must be text")


def _check_culprit_kind(kind: str, namespace: str, category: Any, add: Any) -> None:
    """A workload; a Service or NetworkPolicy for network; a Node for node_failure."""
    allowed = set(WORKLOAD_KINDS) | CULPRIT_KINDS.get(str(category), set())
    if category == "node_failure":
        allowed = {"Node"}
    if kind not in allowed:
        add(("truth", "culprit", "kind"), f"culprit kind {kind} does not fit category "
            f"{category} (expected one of {', '.join(sorted(allowed))})")
    if kind == "Node" and namespace:
        add(("truth", "culprit", "namespace"), "a Node culprit has an empty namespace")
    if kind != "Node" and not namespace:
        add(("truth", "culprit"), f"a {kind} culprit needs its namespace")


def _check_interventions(items: list[Any], add: Any) -> None:
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            add(("interventions", i), "an intervention is a mapping of after_step and text")
            continue
        step = item.get("after_step")
        if not isinstance(step, int) or isinstance(step, bool) or step < 0:
            add(("interventions", i), "intervention after_step must be an integer >= 0")
        if not isinstance(item.get("text"), str) or not item["text"].strip():
            add(("interventions", i), "intervention text must be non-empty")
        for key in item:
            if key not in {"after_step", "text"}:
                add(("interventions", i, key), f"unknown key {key!r} in an intervention")


def _check_culprit(file: Path, header: Located, index: ClusterIndex, has_cluster: bool
                   ) -> list[Problem]:
    culprit = (header.data.get("truth") or {}).get("culprit")
    if not isinstance(culprit, dict) or not culprit.get("kind") or not culprit.get("name"):
        return []
    kind, name = str(culprit["kind"]), str(culprit["name"])
    namespace = str(culprit.get("namespace") or "")
    if index.get(kind, namespace, name) is not None:
        return []
    where = f"{namespace}/{name}" if namespace else name
    message = (f"culprit {kind} {where} is not in cluster.yaml" if has_cluster else
               f"culprit {kind} {where} cannot be found: there is no cluster.yaml")
    return [Problem(file, header.line_of("truth", "culprit"), message)]


# ------------------------------------------------------------------ the other files


def _cluster_documents(file: Path, problems: list[Problem]) -> list[Located]:
    if not file.is_file():
        return []
    try:
        return [d for d in load_located(file.read_text()) if d.data is not None]
    except yaml.YAMLError as exc:
        problems.append(Problem(file, yaml_error_line(exc), f"not valid YAML: {exc}"))
        return []


def _check_logs(file: Path, now: datetime) -> list[Problem]:
    """One ECS document a line, with the required fields (flat or nested), in the week."""
    if not file.is_file():
        return []
    problems = []
    for number, line in enumerate(file.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            document = json.loads(line)
        except ValueError as exc:
            problems.append(Problem(file, number, f"not a JSON document: {exc}"))
            continue
        if not isinstance(document, dict):
            problems.append(Problem(file, number, "a log line must be a JSON object"))
            continue
        flat = flatten(document)
        missing = [f for f in LOG_FIELDS if not isinstance(flat.get(f), str) or not flat[f]]
        if missing:
            problems.append(Problem(file, number, f"log document lacks {', '.join(missing)}"))
        stamp = flat.get("@timestamp")
        if isinstance(stamp, str) and stamp:
            try:
                when = parse_time(stamp)
            except ValueError:
                problems.append(Problem(file, number, f"@timestamp {stamp!r} is not RFC 3339"))
                continue
            if problem := window_problem(when, now, "@timestamp"):
                problems.append(Problem(file, number, problem))
    return problems


def _check_pod_logs(folder: Path, index: ClusterIndex) -> list[Problem]:
    """pod-logs/<namespace>/<pod>/<container>[.previous].log of pods that exist."""
    root = folder / "pod-logs"
    if not root.is_dir():
        return []
    problems = []
    for file in sorted(p for p in root.rglob("*") if p.is_file()):
        parts = file.relative_to(root).parts
        if len(parts) != 3 or not file.name.endswith(".log"):
            problems.append(Problem(file, None, "pod logs live at pod-logs/<namespace>/<pod>/"
                                    "<container>.log or <container>.previous.log"))
            continue
        namespace, pod_name, leaf = parts
        previous = leaf.endswith(".previous.log")
        container = leaf.removesuffix(".previous.log" if previous else ".log")
        pod = index.get("Pod", namespace, pod_name)
        if pod is None:
            problems.append(Problem(file, None, f"pod {namespace}/{pod_name} is not in "
                                    "cluster.yaml"))
            continue
        statuses = _container_statuses(pod)
        if container not in statuses:
            problems.append(Problem(file, None, f"pod {namespace}/{pod_name} has no container "
                                    f"{container!r} (it has {', '.join(sorted(statuses))})"))
        elif previous and not statuses[container]:
            problems.append(Problem(file, None, f"a previous log for {container}, but its "
                                    "restartCount is 0: there was no previous instance"))
    return problems


def _container_statuses(pod: dict[str, Any]) -> dict[str, int]:
    """Container name to restart count, for every container and init container of a pod."""
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    names = {c.get("name"): 0 for key in ("containers", "initContainers")
             for c in spec.get(key) or [] if isinstance(c, dict)}
    for key in ("containerStatuses", "initContainerStatuses"):
        for item in status.get(key) or []:
            if isinstance(item, dict) and item.get("name") in names:
                names[item["name"]] = int(item.get("restartCount") or 0)
    return {str(k): v for k, v in names.items()}


def _restarted(index: ClusterIndex, labels: dict[str, str]) -> bool:
    """Whether the container (or any container of the pod) of a series restarted."""
    pod = index.get("Pod", labels.get("namespace", ""), labels.get("pod", ""))
    if pod is None:
        return False
    counts = _container_statuses(pod)
    container = labels.get("container")
    if container:
        return counts.get(container, 0) > 0
    return any(counts.values())


def _check_layout(folder: Path) -> list[Problem]:
    return [Problem(p, None, f"unexpected {'folder' if p.is_dir() else 'file'} in a scenario "
                    f"(expected {', '.join(sorted(TOP_LEVEL))})")
            for p in sorted(folder.iterdir())
            if p.name not in TOP_LEVEL and p.name != "__pycache__"]
