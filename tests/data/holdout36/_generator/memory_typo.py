"""Pelican Maps: tile-renderer's new revision requests 64Gi instead of 64Mi for a sidecar."""

from __future__ import annotations

from datetime import timedelta

from .common import (
    ago,
    container,
    deployment,
    ecs,
    event,
    iso,
    namespace,
    parse,
    pod,
    replicaset,
    rng,
    service,
    write_scenario,
)
from .helpers import nodes_for, pods_for


def memory_typo() -> None:
    """Pelican Maps: tile-renderer's new revision requests 64Gi instead of 64Mi for a sidecar."""
    now = parse("2026-11-28T09:10:00Z")
    ns = "maps"
    r = rng("mem")
    roll = ago(now, minutes=27)
    nodes = nodes_for(now, "k8s-w", 5, mem="32Gi", alloc_mem="30Gi")

    def tr(mem_sidecar: str, tag: str):
        return [
            container(
                "renderer",
                f"quay.io/pelican/tile-renderer:{tag}",
                port=8080,
                mem_req="3Gi",
                mem_lim="4Gi",
                cpu_req="1",
                cpu_lim="2",
            ),
            container(
                "stats-agent",
                "quay.io/pelican/stats-agent:0.9.1",
                port=None,
                mem_req=mem_sidecar,
                mem_lim="128Mi" if mem_sidecar == "64Mi" else "64Gi",
                cpu_req="20m",
                cpu_lim="100m",
            ),
        ]

    old_c, new_c = tr("64Mi", "12.3.0"), tr("64Gi", "12.4.0")
    geo_c = [
        container(
            "geocoder", "quay.io/pelican/geocoder:7.0.2", port=8080, mem_req="2Gi", mem_lim="3Gi"
        )
    ]
    objs = [
        namespace(ns, ago(now, days=800)),
        *nodes,
        deployment(
            "tile-renderer",
            ns,
            ago(now, days=500),
            new_c,
            replicas=4,
            revision=66,
            ready=3,
            updated=1,
            available=3,
            unavailable=1,
            progressing={
                "type": "Progressing",
                "status": "True",
                "reason": "ReplicaSetUpdated",
                "lastUpdateTime": iso(roll),
                "lastTransitionTime": iso(roll),
                "message": 'ReplicaSet "tile-renderer-b6f59d8c7" is progressing.',
            },
        ),
        replicaset("tile-renderer", ns, "b6f59d8c7", roll, new_c, 66, 1, 0),
        replicaset("tile-renderer", ns, "7c4d9b8f6", ago(now, days=15), old_c, 65, 3, 3),
        deployment(
            "geocoder",
            ns,
            ago(now, days=500),
            geo_c,
            replicas=2,
            revision=21,
            ready=2,
            updated=2,
            available=2,
        ),
        service("tile-renderer", ns, ago(now, days=500), 80, 8080, cluster_ip="10.32.0.80"),
        {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {
                "name": "tile-renderer",
                "namespace": ns,
                "creationTimestamp": iso(ago(now, days=400)),
            },
            "spec": {
                "scaleTargetRef": {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": "tile-renderer",
                },
                "minReplicas": 4,
                "maxReplicas": 12,
                "metrics": [
                    {
                        "type": "Resource",
                        "resource": {
                            "name": "cpu",
                            "target": {"type": "Utilization", "averageUtilization": 70},
                        },
                    }
                ],
            },
            "status": {
                "currentReplicas": 4,
                "desiredReplicas": 4,
                "currentMetrics": [
                    {
                        "type": "Resource",
                        "resource": {"name": "cpu", "current": {"averageUtilization": 58}},
                    }
                ],
            },
        },
    ]
    pods_ = pods_for(
        objs,
        now,
        r,
        ns,
        nodes,
        [("tile-renderer", "7c4d9b8f6", old_c, 3), ("geocoder", "69f8c7d5b", geo_c, 2)],
        15,
    )
    pend = "tile-renderer-b6f59d8c7-4hq2m"
    objs.append(
        pod(
            pend,
            ns,
            roll,
            new_c,
            owner=("ReplicaSet", "tile-renderer-b6f59d8c7"),
            node_name=None,
            phase="Pending",
            ready=False,
            labels={"app": "tile-renderer", "pod-template-hash": "b6f59d8c7"},
            conditions=[
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "lastTransitionTime": iso(roll),
                    "message": "0/5 nodes are available: 5 Insufficient memory. preemption: 0/5 "
                    "nodes are available: "
                    "5 No preemption victims found for incoming pod.",
                }
            ],
        )
    )
    objs += [
        event(
            ns,
            "Deployment",
            "tile-renderer",
            "ScalingReplicaSet",
            "Scaled up replica set tile-renderer-b6f59d8c7 to 1",
            roll,
            roll,
            1,
            "Normal",
            "deployment-controller",
        ),
        event(
            ns,
            "Pod",
            pend,
            "FailedScheduling",
            "0/5 nodes are available: 5 Insufficient memory. preemption: 0/5 nodes are "
            "available: 5 No preemption victims found for incoming pod.",
            roll,
            ago(now, minutes=2),
            14,
            source="default-scheduler",
        ),
        event(
            ns,
            "Pod",
            pend,
            "NotTriggerScaleUp",
            "pod didn't trigger scale-up: 1 max node group size reached, 2 Insufficient memory",
            ago(now, minutes=26),
            ago(now, minutes=3),
            9,
            "Normal",
            "cluster-autoscaler",
        ),
        event(
            ns,
            "Pod",
            pods_["geocoder"][0],
            "Unhealthy",
            "Readiness probe failed: HTTP probe failed with statuscode: 503",
            ago(now, minutes=50),
            ago(now, minutes=49),
            3,
        ),
    ]
    logs, pod_logs = [], {}
    for name in pods_["tile-renderer"]:
        lines = []
        t = ago(now, hours=1)
        while t < now:
            m = (
                f"rendered z={r.randint(8, 16)} tiles={r.randint(50, 400)} "
                f"cache_hit={r.randint(70, 95)}% {r.randint(30, 120)}ms"
            )
            lines.append(f"{t.strftime('%Y/%m/%d %H:%M:%S')} {m}")
            if r.random() < 0.2:
                logs.append(ecs(t, m, "info", "tile-renderer", ns, name, "renderer"))
            t += timedelta(seconds=30)
        pod_logs[f"{ns}/{name}/renderer.log"] = "\n".join(lines)
    write_scenario(
        "tiles-deploy-hanging",
        {
            "id": "tiles-deploy-hanging",
            "title": "tile-renderer 12.4.0 deploy never finishes",
            "now": iso(now),
            "report": "the 12.4.0 deploy of tile-renderer has been hanging for almost half an "
            "hour, the pipeline times out. "
            "do we need more nodes? autoscaler didn't add any",
            "truth": {
                "category": "unschedulable",
                "culprit": {"kind": "Deployment", "namespace": ns, "name": "tile-renderer"},
                "evidence": ["Insufficient memory", "64Gi"],
                "fix": "Fix the stats-agent memory request/limit in tile-renderer 12.4.0 (64Gi -> "
                "64Mi / 128Mi); no new nodes are needed",
            },
        },
        objs,
        pod_logs,
        logs,
    )
