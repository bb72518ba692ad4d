"""A CronJob's run that hangs: k8s_list_workloads says so when a run has lasted far longer
than the CronJob's runs do, and what its concurrency policy does meanwhile."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from tests.tools._tooling import call, context

NOW = datetime(2027, 3, 9, 12, 0, tzinfo=UTC)


def _at(minutes_ago: float) -> str:
    return (NOW - timedelta(minutes=minutes_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _cronjob(name: str, policy: str, active: list[str]) -> dict[str, Any]:
    template = {"spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
        {"name": "run", "image": "reg.io/exporter:1"}]}}}}
    return {"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {"name": name, "namespace": "ops", "creationTimestamp": _at(90 * 1440)},
            "spec": {"schedule": "*/10 * * * *", "concurrencyPolicy": policy,
                     "jobTemplate": template},
            "status": {"active": [{"kind": "Job", "name": n, "namespace": "ops"}
                                  for n in active], "lastScheduleTime": _at(150)}}


def _job(name: str, owner: str, started: float, took: float | None) -> dict[str, Any]:
    status: dict[str, Any] = {"startTime": _at(started)}
    if took is None:
        status["active"] = 1
    else:
        status |= {"succeeded": 1, "completionTime": _at(started - took)}
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": "ops", "creationTimestamp": _at(started),
                         "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob",
                                              "name": owner, "controller": True, "uid": owner}]},
            "spec": {"completions": 1, "template": {"spec": {"restartPolicy": "Never",
                                                             "containers": [{"name": "run"}]}}},
            "status": status}


def _scenario(root: Path) -> Path:
    objects = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ops"}},
               _cronjob("export", "Forbid", ["export-1003"]),
               _job("export-1001", "export", 180, 2), _job("export-1002", "export", 170, 3),
               _job("export-1003", "export", 150, None),
               _cronjob("digest", "Forbid", ["digest-77"]), _job("digest-77", "digest", 12, None)]
    folder = root / "batch"
    folder.mkdir()
    header = {"id": "batch", "title": "batch", "now": NOW.strftime("%Y-%m-%dT%H:%M:%SZ"),
              "report": "exports are stale", "truth": {"category": "dependency_failure",
                                                       "culprit": {"kind": "CronJob",
                                                                   "namespace": "ops",
                                                                   "name": "export"}}}
    (folder / "scenario.yaml").write_text(yaml.safe_dump(header))
    (folder / "cluster.yaml").write_text(yaml.safe_dump_all(objects))
    return folder


async def test_a_run_far_longer_than_the_cronjobs_runs_is_called_hung(tmp_path: Path) -> None:
    data = await call(context(_scenario(tmp_path)), "k8s_list_workloads", namespace="ops")
    rows = {row["name"]: row for row in data["workloads"]}
    assert rows["export"]["problems"] == [
        "Job export-1003 has been running for 2h30m, its earlier runs took at most 3m; "
        "concurrencyPolicy Forbid skips every run until it ends"]
    assert "problems" not in rows["digest"], "12 minutes is not hung"


async def test_without_its_jobs_listed_no_run_is_judged(tmp_path: Path) -> None:
    data = await call(context(_scenario(tmp_path)), "k8s_list_workloads", namespace="ops",
                      kind="CronJob")
    assert data["unhealthy"] == 0
