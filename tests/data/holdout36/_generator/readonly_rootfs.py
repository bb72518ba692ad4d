"""Vireo Search: the hardening release sets readOnlyRootFilesystem; the indexer writes to /var."""

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


def readonly_rootfs() -> None:
    """Vireo Search: the hardening release sets readOnlyRootFilesystem; the indexer writes under "
    "/var/cache."""
    now = parse("2026-11-23T16:45:00Z")
    ns = "search"
    r = rng("rofs")
    roll = ago(now, minutes=31)
    nodes = nodes_for(now, "node-pool-c", 3, mem="64Gi", alloc_mem="61Gi")
    sec = {
        "runAsNonRoot": True,
        "runAsUser": 10001,
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
    }
    old_c = [
        container(
            "indexer",
            "ghcr.io/vireo/catalog-indexer:9.4.0",
            port=8000,
            mem_req="1Gi",
            mem_lim="2Gi",
            security={"runAsNonRoot": True, "runAsUser": 10001},
        )
    ]
    new_c = [
        container(
            "indexer",
            "ghcr.io/vireo/catalog-indexer:9.4.0",
            port=8000,
            mem_req="1Gi",
            mem_lim="2Gi",
            security=sec,
        )
    ]
    q_c = [container("query-api", "ghcr.io/vireo/query-api:4.1.7", port=8000, security=sec)]
    objs = [
        namespace(ns, ago(now, days=365)),
        *nodes,
        deployment(
            "catalog-indexer",
            ns,
            ago(now, days=240),
            new_c,
            replicas=2,
            revision=19,
            ready=2,
            updated=1,
            available=2,
            unavailable=0,
            progressing={
                "type": "Progressing",
                "status": "True",
                "reason": "ReplicaSetUpdated",
                "lastUpdateTime": iso(roll),
                "lastTransitionTime": iso(roll),
                "message": 'ReplicaSet "catalog-indexer-6b8d9f7c5" is progressing.',
            },
            annotations={"kubernetes.io/change-cause": "SEC-2291 pod hardening (restricted PSS)"},
        ),
        replicaset("catalog-indexer", ns, "6b8d9f7c5", roll, new_c, 19, 1, 0),
        replicaset("catalog-indexer", ns, "85c7d6b9f", ago(now, days=20), old_c, 18, 2, 2),
        deployment(
            "query-api",
            ns,
            ago(now, days=240),
            q_c,
            replicas=3,
            revision=41,
            ready=3,
            updated=3,
            available=3,
        ),
        service("query-api", ns, ago(now, days=240), 80, 8000, cluster_ip="10.96.200.9"),
        service("catalog-indexer", ns, ago(now, days=240), 80, 8000, cluster_ip="10.96.200.31"),
    ]
    pods_ = pods_for(
        objs,
        now,
        r,
        ns,
        nodes,
        [("catalog-indexer", "85c7d6b9f", old_c, 2), ("query-api", "5d6c7b8f9", q_c, 3)],
        20,
    )
    bad = "catalog-indexer-6b8d9f7c5-t8vzn"
    objs.append(
        pod(
            bad,
            ns,
            roll,
            new_c,
            owner=("ReplicaSet", "catalog-indexer-6b8d9f7c5"),
            node_name=nodes[2]["metadata"]["name"],
            ready=False,
            restarts=10,
            labels={"app": "catalog-indexer", "pod-template-hash": "6b8d9f7c5"},
            state={
                "waiting": {
                    "reason": "CrashLoopBackOff",
                    "message": f"back-off 5m0s restarting failed container=indexer pod={bad}_{ns}",
                }
            },
            last_state={
                "terminated": {
                    "reason": "Error",
                    "exitCode": 1,
                    "startedAt": iso(ago(now, minutes=4)),
                    "finishedAt": iso(ago(now, minutes=4) + timedelta(seconds=3)),
                }
            },
        )
    )
    objs += [
        event(
            ns,
            "Deployment",
            "catalog-indexer",
            "ScalingReplicaSet",
            "Scaled up replica set catalog-indexer-6b8d9f7c5 to 1",
            roll,
            roll,
            1,
            "Normal",
            "deployment-controller",
        ),
        event(
            ns,
            "Pod",
            bad,
            "BackOff",
            f"Back-off restarting failed container indexer in pod {bad}_{ns}(a93c)",
            ago(now, minutes=29),
            ago(now, minutes=1),
            120,
        ),
        event(
            ns,
            "Pod",
            pods_["query-api"][1],
            "Unhealthy",
            'Readiness probe failed: Get "http://10.244.5.12:8000/healthz": '
            "dial tcp 10.244.5.12:8000: connect: connection refused",
            ago(now, minutes=55),
            ago(now, minutes=55),
            1,
        ),
    ]
    prev = "\n".join(
        [
            f"{iso(ago(now, minutes=4))} [indexer] INFO catalog-indexer 9.4.0 (python 3.12.4) "
            "starting",
            f"{iso(ago(now, minutes=4))} [indexer] INFO loading synonyms from "
            "/etc/indexer/synonyms.txt (4212 entries)",
            f"{iso(ago(now, minutes=4))} [indexer] INFO preparing scratch space",
            "Traceback (most recent call last):",
            '  File "/app/indexer/__main__.py", line 41, in <module>',
            "    main()",
            '  File "/app/indexer/__main__.py", line 27, in main',
            "    scratch = prepare_scratch(settings.scratch_dir)",
            '  File "/app/indexer/scratch.py", line 18, in prepare_scratch',
            '    os.makedirs(path / "segments", exist_ok=True)',
            '  File "<frozen os>", line 225, in makedirs',
            "OSError: [Errno 30] Read-only file system: '/var/cache/indexer/segments'",
        ]
    )
    pod_logs = {
        f"{ns}/{bad}/indexer.previous.log": prev,
        f"{ns}/{bad}/indexer.log": "\n".join(prev.splitlines()[:3]).replace(
            iso(ago(now, minutes=4)), iso(ago(now, seconds=20))
        ),
    }
    logs = []
    for k in range(10):
        t = roll + timedelta(minutes=1 + k * 3)
        logs.append(
            ecs(
                t,
                "OSError: [Errno 30] Read-only file system: '/var/cache/indexer/segments'",
                "error",
                "catalog-indexer",
                ns,
                bad,
                "indexer",
                **{"error.type": "OSError"},
            )
        )
    for name in pods_["catalog-indexer"]:
        lines = []
        t = ago(now, hours=1)
        while t < now:
            m = (
                f"indexed batch docs={r.randint(200, 900)} segment={r.randint(1000, 2000)} "
                f"took={r.randint(400, 2000)}ms"
            )
            lines.append(f"{iso(t)} [indexer] INFO {m}")
            if r.random() < 0.25:
                logs.append(ecs(t, m, "info", "catalog-indexer", ns, name, "indexer"))
            t += timedelta(seconds=40)
        pod_logs[f"{ns}/{name}/indexer.log"] = "\n".join(lines)
    for name in pods_["query-api"]:
        t = ago(now, minutes=50)
        while t < now:
            if r.random() < 0.02:
                logs.append(
                    ecs(
                        t,
                        "slow query q='running shoes' took 1240ms shards=12",
                        "warn",
                        "query-api",
                        ns,
                        name,
                        "query-api",
                    )
                )
            t += timedelta(minutes=1)
    write_scenario(
        "indexer-rollout-stalled",
        {
            "id": "indexer-rollout-stalled",
            "title": "Security hardening rollout stalled in search",
            "now": iso(now),
            "report": "the SEC-2291 hardening rollout is stuck on catalog-indexer, argo shows it "
            "degraded. "
            "query-api got the same change and is fine. can someone look, I need to close the "
            "ticket today",
            "truth": {
                "category": "crash_loop",
                "culprit": {"kind": "Deployment", "namespace": ns, "name": "catalog-indexer"},
                "evidence": [
                    "Read-only file system: '/var/cache/indexer/segments'",
                    "readOnlyRootFilesystem",
                ],
                "fix": "Mount an emptyDir at /var/cache/indexer in catalog-indexer (or point "
                "scratch_dir at a writable volume), "
                "keeping readOnlyRootFilesystem",
            },
        },
        objs,
        pod_logs,
        logs,
    )
