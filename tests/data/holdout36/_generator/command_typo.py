"""Ostrava Media: thumbnailer's rollout overrides the command with a misspelled binary."""

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
from .helpers import nodes_for


def command_typo() -> None:
    """Ostrava Media: thumbnailer's rollout overrides the command with a misspelled binary."""
    now = parse("2026-11-26T11:05:00Z")
    ns = "media-pipeline"
    r = rng("cmd")
    roll = ago(now, minutes=24)
    nodes = nodes_for(now, "aks-media-3312", 3, base_days=40)
    old_c = [
        container(
            "thumbnailer",
            "omcr.azurecr.io/media/thumbnailer:4.6.2",
            port=8080,
            command=["thumbnailerd"],
            args=["--workers=4", "--queue=renditions"],
        )
    ]
    new_c = [
        container(
            "thumbnailer",
            "omcr.azurecr.io/media/thumbnailer:4.7.0",
            port=8080,
            command=["thumbnailred"],
            args=["--workers=6", "--queue=renditions", "--webp"],
        )
    ]
    tc_c = [
        container(
            "transcoder",
            "omcr.azurecr.io/media/transcoder:11.2.0",
            port=8080,
            mem_req="2Gi",
            mem_lim="4Gi",
        )
    ]
    up_c = [container("upload-api", "omcr.azurecr.io/media/upload-api:3.3.8", port=8080)]
    objs = [
        namespace(ns, ago(now, days=700)),
        *nodes,
        deployment(
            "thumbnailer",
            ns,
            ago(now, days=330),
            new_c,
            replicas=4,
            revision=23,
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
                "message": 'ReplicaSet "thumbnailer-7b9d6c5f48" is progressing.',
            },
            annotations={"kubernetes.io/change-cause": "release 4.7.0: webp renditions"},
        ),
        replicaset("thumbnailer", ns, "7b9d6c5f48", roll, new_c, 23, 1, 0),
        replicaset("thumbnailer", ns, "5f8c9d7b66", ago(now, days=12), old_c, 22, 3, 3),
        deployment(
            "transcoder",
            ns,
            ago(now, days=500),
            tc_c,
            replicas=2,
            revision=61,
            ready=2,
            updated=2,
            available=2,
        ),
        deployment(
            "upload-api",
            ns,
            ago(now, days=500),
            up_c,
            replicas=3,
            revision=88,
            ready=3,
            updated=3,
            available=3,
        ),
        service("thumbnailer", ns, ago(now, days=330), 80, 8080, cluster_ip="10.0.77.12"),
    ]
    logs, pod_logs = [], {}
    old_pods = []
    for i in range(3):
        name = f"thumbnailer-5f8c9d7b66-{'bcd'[i]}{r.choice('hjk')}{r.randint(10, 99)}"
        objs.append(
            pod(
                name,
                ns,
                ago(now, days=12, hours=-i),
                old_c,
                owner=("ReplicaSet", "thumbnailer-5f8c9d7b66"),
                node_name=nodes[i]["metadata"]["name"],
                labels={"app": "thumbnailer", "pod-template-hash": "5f8c9d7b66"},
            )
        )
        old_pods.append(name)
    bad = "thumbnailer-7b9d6c5f48-x2lq9"
    err = (
        "failed to create containerd task: failed to create shim task: OCI runtime create failed: "
        "runc create failed: "
        'unable to start container process: exec: "thumbnailred": '
        "executable file not found in $PATH: unknown"
    )
    objs.append(
        pod(
            bad,
            ns,
            roll,
            new_c,
            owner=("ReplicaSet", "thumbnailer-7b9d6c5f48"),
            node_name=nodes[1]["metadata"]["name"],
            ready=False,
            restarts=9,
            labels={"app": "thumbnailer", "pod-template-hash": "7b9d6c5f48"},
            state={
                "waiting": {
                    "reason": "CrashLoopBackOff",
                    "message": "back-off 5m0s restarting failed container=thumbnailer "
                    f"pod={bad}_{ns}",
                }
            },
            last_state={
                "terminated": {
                    "reason": "StartError",
                    "exitCode": 128,
                    "message": err,
                    "finishedAt": iso(ago(now, minutes=3)),
                }
            },
        )
    )
    for dep, h, c, n_ in (
        ("transcoder", "86f7c9d5b", tc_c, 2),
        ("upload-api", "5c7d8f9b4", up_c, 3),
    ):
        for i in range(n_):
            name = f"{dep}-{h}-{'fgh'[i]}{r.choice('pqr')}{r.randint(10, 99)}"
            objs.append(
                pod(
                    name,
                    ns,
                    ago(now, days=4, hours=i),
                    c,
                    owner=("ReplicaSet", f"{dep}-{h}"),
                    node_name=nodes[i % 3]["metadata"]["name"],
                    labels={"app": dep, "pod-template-hash": h},
                    restarts=1 if (dep == "transcoder" and i == 0) else 0,
                )
            )
            if dep == "upload-api":
                lines = []
                t = ago(now, hours=1)
                while t < now:
                    msg = f"PUT /v1/assets/{r.randint(10**6, 10**7)} 201 {r.randint(80, 400)}ms"
                    lines.append(f"{t.strftime('%d/%b/%Y:%H:%M:%S +0000')} upload-api {msg}")
                    t += timedelta(seconds=40)
                pod_logs[f"{ns}/{name}/upload-api.log"] = "\n".join(lines)
    objs += [
        event(
            ns,
            "Deployment",
            "thumbnailer",
            "ScalingReplicaSet",
            "Scaled up replica set thumbnailer-7b9d6c5f48 to 1",
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
            "Pulled",
            'Container image "omcr.azurecr.io/media/thumbnailer:4.7.0" already present on machine',
            ago(now, minutes=22),
            ago(now, minutes=3),
            10,
            "Normal",
        ),
        event(
            ns, "Pod", bad, "Failed", "Error: " + err, ago(now, minutes=22), ago(now, minutes=3), 10
        ),
        event(
            ns,
            "Pod",
            bad,
            "BackOff",
            "Back-off restarting failed container thumbnailer in pod " + bad + "_" + ns + "(5e1f)",
            ago(now, minutes=21),
            ago(now, minutes=1),
            96,
        ),
        event(
            ns,
            "Pod",
            objs[-1]["metadata"]["name"],
            "Unhealthy",
            'Readiness probe failed: Get "http://10.244.2.17:8080/healthz": '
            "context deadline exceeded",
            ago(now, minutes=47),
            ago(now, minutes=47),
            1,
        ),
    ]
    for name in old_pods:
        lines = []
        t = ago(now, hours=1)
        while t < now:
            q = r.randint(0, 40) if t < roll else r.randint(120, 400)
            msg = (
                f"rendition done asset={r.randint(10**6, 10**7)} sizes=5 "
                f"took={r.randint(300, 900)}ms backlog={q}"
            )
            lines.append(f"{iso(t)} [INFO] worker-{r.randint(0, 3)}: {msg}")
            if r.random() < 0.3:
                logs.append(ecs(t, msg, "info", "thumbnailer", ns, name, "thumbnailer"))
            t += timedelta(seconds=30)
        pod_logs[f"{ns}/{name}/thumbnailer.log"] = "\n".join(lines)
    write_scenario(
        "thumbnails-lagging",
        {
            "id": "thumbnails-lagging",
            "title": "Thumbnails lagging behind uploads",
            "now": iso(now),
            "report": "new uploads take ages to get thumbnails, editors are waiting 10+ min. "
            "transcoder restarted earlier today, maybe related?",
            "truth": {
                "category": "crash_loop",
                "culprit": {"kind": "Deployment", "namespace": ns, "name": "thumbnailer"},
                "evidence": ["executable file not found in $PATH", "thumbnailred", "StartError"],
                "fix": "Fix the command override in thumbnailer 4.7.0 (thumbnailred -> "
                "thumbnailerd) or roll back to revision 22",
            },
        },
        objs,
        pod_logs,
        logs,
    )
