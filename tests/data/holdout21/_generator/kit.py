"""Small helpers of the twenty-first held-out set: StatefulSets caught mid-update, their
claims, and a few metric shortcuts. Everything else comes from the earlier sets' kits."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from tests.data.holdout._generator.base import gauge
from tests.data.holdout2._generator.kit import Incident, pvc
from tests.scenario_tools.common import Story
from tests.scenario_tools.kube import Obj, Workload

__all__ = ["Incident", "claim_volume", "mins", "step_at", "sts_midway"]


def mins(t: datetime, m: float) -> datetime:
    return t + timedelta(minutes=m)


def step_at(when: datetime, before: float, after: float) -> Callable[[int], float]:
    edge = when.timestamp()
    return lambda t: after if t >= edge else before


def claim_volume(s: Story, pod: Obj, work: Workload, claim: str, size: str, klass: str,
                 created: datetime) -> None:
    """Pod `pod` of a StatefulSet mounts its bound claim `<claim>-<pod>`."""
    name = f"{claim}-{pod['metadata']['name']}"
    pod["spec"]["volumes"] = [{"name": claim, "persistentVolumeClaim": {"claimName": name}},
                              *pod["spec"].get("volumes", [])]
    pvc(s, work.namespace, name, size, klass, created=created,
        node_name=pod["spec"]["nodeName"], provisioner="ebs.csi.aws.com",
        labels=dict(work.obj["spec"]["selector"]["matchLabels"]))


def sts_midway(s: Incident, work: Workload, current: Obj, update: Obj, updated: int) -> None:
    """The status of a StatefulSet whose rolling update replaced `updated` pods so far."""
    def fix(objects: list[Obj]) -> None:
        live = [p for p in work.pods if p["status"]["phase"] not in {"Failed", "Succeeded"}]
        ready = [p for p in live if any(c["type"] == "Ready" and c["status"] == "True"
                                        for c in p["status"].get("conditions", []))]
        work.obj["status"] = {
            "availableReplicas": len(ready), "collisionCount": 0,
            "currentReplicas": len(live) - updated,
            "currentRevision": current["metadata"]["name"],
            "observedGeneration": work.obj["metadata"]["generation"],
            "readyReplicas": len(ready), "replicas": len(live),
            "updateRevision": update["metadata"]["name"], "updatedReplicas": updated}
    s.fixes.append(fix)


def ksm_statefulset(s: Story, work: Workload, ready: Callable[[int], float]) -> None:
    labels = {"namespace": work.namespace, "statefulset": work.name}
    gauge(s, "kube_statefulset_replicas", labels, lambda t: float(work.replicas),
          "Number of desired pods for a StatefulSet.")
    gauge(s, "kube_statefulset_status_replicas_ready", labels, ready,
          "The number of ready replicas per StatefulSet.")


def every_pod(pods: Sequence[Obj]) -> list[str]:
    return [p["metadata"]["name"] for p in pods]
