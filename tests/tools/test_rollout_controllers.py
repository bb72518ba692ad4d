"""k8s_rollout_history of a StatefulSet or DaemonSet: the revisions its pods run.

ControllerRevisions are not listed, so the tool groups the pods by their
controller-revision-hash label: the update revision first, each with when its first and last
pod were created, and how many pods the controller itself deleted (a rolling update).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from tests.tools._tooling import call, context

NOW = datetime(2027, 2, 3, 12, 0, tzinfo=UTC)


def _ago(minutes: float) -> str:
    return (NOW - timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _pod(name: str, owner: tuple[str, str], revision: str, minutes: float, image: str, *,
         ready: bool = True, generation: str | None = None) -> dict[str, Any]:
    labels = {"app": owner[1], "controller-revision-hash": revision}
    if generation:
        labels["pod-template-generation"] = generation
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "data", "creationTimestamp": _ago(minutes),
                         "labels": labels, "ownerReferences": [
                             {"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1],
                              "controller": True, "uid": f"uid-{owner[1]}"}]},
            "spec": {"nodeName": "node-a", "containers": [{"name": "app", "image": image}]},
            "status": {"phase": "Running",
                       "conditions": [{"type": "Ready", "status": str(ready)}],
                       "containerStatuses": [{"name": "app", "image": image, "ready": ready,
                                             "restartCount": 0,
                                             "state": {"running": {"startedAt": _ago(minutes)}}}]}}


def _controller(kind: str, name: str, status: dict[str, Any]) -> dict[str, Any]:
    template = {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": f"reg.io/{name}:2.0"}]}}
    return {"apiVersion": "apps/v1", "kind": kind,
            "metadata": {"name": name, "namespace": "data", "creationTimestamp": _ago(90 * 1440),
                         "uid": f"uid-{name}"},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": name}},
                     "template": template, "updateStrategy": {"type": "RollingUpdate"}},
            "status": status}


def _deleted(kind: str, name: str, pod: str, minutes: float) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{name}.{pod}", "namespace": "data"},
            "involvedObject": {"kind": kind, "name": name, "namespace": "data"},
            "reason": "SuccessfulDelete", "type": "Normal", "count": 1,
            "message": f"delete Pod {pod} in {kind} {name} successful",
            "firstTimestamp": _ago(minutes), "lastTimestamp": _ago(minutes)}


def _scenario(root: Path) -> Path:
    store = ("StatefulSet", "store")
    agent = ("DaemonSet", "agent")
    objects: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "data"}},
        _controller("StatefulSet", "store", {
            "replicas": 3, "readyReplicas": 3, "updatedReplicas": 3,
            "currentRevision": "store-6f7d", "updateRevision": "store-6f7d"}),
        *[_pod(f"store-{i}", store, "store-6f7d", 40 - 2 * i, "reg.io/store:2.0")
          for i in range(3)],
        *[_deleted("StatefulSet", "store", f"store-{i}", 40 - 2 * i + 0.1) for i in range(3)],
        _controller("DaemonSet", "agent", {"desiredNumberScheduled": 3, "numberReady": 2,
                                           "updatedNumberScheduled": 1}),
        _pod("agent-a1", agent, "77c9", 20, "reg.io/agent:1.5", ready=False, generation="4"),
        _pod("agent-b2", agent, "5b1d", 9000, "reg.io/agent:1.4", generation="3"),
        _pod("agent-c3", agent, "5b1d", 8000, "reg.io/agent:1.4", generation="3"),
    ]
    folder = root / "controllers"
    folder.mkdir()
    header = {"id": "controllers", "title": "controllers", "now": NOW.strftime(
        "%Y-%m-%dT%H:%M:%SZ"), "report": "store errors",
        "truth": {"category": "bad_rollout",
                  "culprit": {"kind": "StatefulSet", "namespace": "data", "name": "store"}}}
    (folder / "scenario.yaml").write_text(yaml.safe_dump(header))
    (folder / "cluster.yaml").write_text(yaml.safe_dump_all(objects))
    return folder


async def test_a_statefulset_updated_in_place_shows_when_its_revision_replaced_the_pods(
        tmp_path: Path) -> None:
    data = await call(context(_scenario(tmp_path)), "k8s_rollout_history", namespace="data",
                      workload="store")
    assert data["workload"] == "StatefulSet data/store" and data["rolling"] is False
    (revision,) = data["revisions"]
    assert revision["revision"] == "store-6f7d" and revision["current"] is True
    assert revision["first_pod_created"].startswith(_ago(40))
    assert revision["last_pod_created"].startswith(_ago(36))
    assert revision["pods"] == "ready 3/3" and revision["images"] == ["reg.io/store:2.0"]
    assert data["pods_replaced_by_controller"]["deleted"] == 3
    assert list(data)[-1] == "note"


async def test_a_daemonset_mid_update_lists_its_new_revision_first(tmp_path: Path) -> None:
    data = await call(context(_scenario(tmp_path)), "k8s_rollout_history", namespace="data",
                      workload="agent")
    new, old = data["revisions"]
    assert (new["revision"], new["current"], new["pods"]) == ("77c9", True, "ready 0/1")
    assert new["unhealthy_pods"] == 1 and new["images"] == ["reg.io/agent:1.5"]
    assert (old["revision"], old["current"], old["pods"]) == ("5b1d", False, "ready 2/2")
    assert old["first_pod_created"].startswith(_ago(9000))
    assert "pods_replaced_by_controller" not in data
