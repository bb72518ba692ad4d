# ruff: noqa: E501 - log lines, event messages and object literals are kept verbatim on one line
"""Quillon Media: transcode-api 5.2.0 was promoted with the staging registry's image
reference; production nodes' pull credentials are refused there. The old pods keep
serving, the rollout sits past its progress deadline."""

from __future__ import annotations

import random
from datetime import timedelta as td

from ._kit import (
    Story,
    cond,
    container,
    counter,
    deployment,
    endpoints,
    event,
    http_probe,
    namespace,
    parse,
    pod,
    pod_template,
    replicaset,
    running_status,
    service,
    ts,
)

STAGING = "registry.staging.quillon.io/video/transcode-api:5.2.0"
PROD = "registry.quillon.io/video/transcode-api:5.1.3"


def build() -> Story:
    now = parse("2026-11-27T17:05:00Z")
    roll = now - td(minutes=36)
    old = parse("2024-11-02T10:00:00Z")
    s = Story(
        id="transcode-deploy-timed-out",
        title="transcode-api deploy timed out in CI",
        now=now,
        report=(
            'CI says the transcode-api prod deploy failed: \'deployment "transcode-api" exceeded its '
            "progress deadline'. site looks fine and uploads work. is the cluster ok? I re-ran the "
            "pipeline once, same result"
        ),
        truth={
            "category": "image_pull",
            "culprit": {"kind": "Deployment", "namespace": "video", "name": "transcode-api"},
            "evidence": [
                "ImagePullBackOff",
                "registry.staging.quillon.io",
                "denied: requested access to the resource is denied",
            ],
            "fix": (
                "Point transcode-api at the production registry (registry.quillon.io/video/"
                "transcode-api:5.2.0, after promoting the image) instead of the staging one"
            ),
        },
    )
    s.add(namespace("video", old, {"team": "media-pipeline"}), namespace("web", old))
    nodes = ["worker-pool-2-8fks", "worker-pool-2-mz4d", "worker-pool-2-t7qa", "worker-pool-3-b2xn"]

    def tpl(image: str) -> dict:
        return pod_template(
            {"app": "transcode-api", "app.kubernetes.io/part-of": "video"},
            [
                container(
                    "transcode-api",
                    image,
                    cpu_req="1",
                    mem_req="1Gi",
                    cpu_lim="2",
                    mem_lim="2Gi",
                    port=8088,
                    readiness=http_probe("/health/ready", 8088),
                    liveness=http_probe("/health/live", 8088, period=20),
                    env=[
                        {"name": "RUST_LOG", "value": "info,transcode_api=debug"},
                        {"name": "SEGMENT_BUCKET", "value": "s3://quillon-prod-segments"},
                    ],
                )
            ],
            imagePullSecrets=[{"name": "quillon-prod-pull"}],
            serviceAccountName="transcode-api",
        )

    old_tpl, new_tpl = tpl(PROD), tpl(STAGING)
    dep = deployment(
        "transcode-api",
        "video",
        old,
        new_tpl,
        6,
        23,
        ready=6,
        updated=2,
        available=6,
        total_replicas=8,
        max_surge="25%",
        max_unavailable="0",
        conditions=[
            cond(
                "Available",
                "True",
                "MinimumReplicasAvailable",
                "Deployment has minimum availability.",
                now - td(days=4),
            ),
            cond(
                "Progressing",
                "False",
                "ProgressDeadlineExceeded",
                'ReplicaSet "transcode-api-7c4f9d6b85" has timed out progressing.',
                roll + td(seconds=601),
            ),
        ],
        annotations={
            "kubernetes.io/change-cause": "ci: promote transcode-api 5.2.0 (pipeline #48812)"
        },
    )
    s.add(
        dep,
        replicaset(dep, "59b8c7d6f4", now - td(days=8), 22, old_tpl, 6),
        replicaset(dep, "7c4f9d6b85", roll, 23, new_tpl, 2, ready=0),
    )
    ips = []
    for i, sfx in enumerate(["4kq2z", "8wd7m", "fv9tn", "jr3xp", "n6hcl", "v2sbq"]):
        name = f"transcode-api-59b8c7d6f4-{sfx}"
        ip = f"10.8.{i % 4}.{110 + i}"
        s.add(
            pod(
                name,
                "video",
                now - td(days=8),
                old_tpl,
                nodes[i % 4],
                ip,
                "ReplicaSet",
                "transcode-api-59b8c7d6f4",
            )
        )
        ips.append((ip, name, nodes[i % 4]))
    pull_msg = (
        f'Failed to pull image "{STAGING}": rpc error: code = Unknown desc = failed to pull and unpack image '
        f'"{STAGING}": failed to resolve reference "{STAGING}": unexpected status from HEAD request to '
        "https://registry.staging.quillon.io/v2/video/transcode-api/manifests/5.2.0: 403 Forbidden: "
        "denied: requested access to the resource is denied"
    )
    for i, sfx in enumerate(["b7x4k", "q2m9h"]):
        name = f"transcode-api-7c4f9d6b85-{sfx}"
        n = nodes[(i + 1) % 4]
        c = new_tpl["spec"]["containers"][0]
        st = running_status(c, roll, ready=False)
        st.update(
            {
                "started": False,
                "state": {
                    "waiting": {
                        "reason": "ImagePullBackOff",
                        "message": f'Back-off pulling image "{STAGING}"',
                    }
                },
                "imageID": "",
                "containerID": None,
            }
        )
        del st["containerID"]
        s.add(
            pod(
                name,
                "video",
                roll + td(seconds=i),
                new_tpl,
                n,
                f"10.8.{(i + 1) % 4}.{140 + i}",
                "ReplicaSet",
                "transcode-api-7c4f9d6b85",
                phase="Pending",
                ready=False,
                statuses=[st],
            )
        )
        s.add(
            event(
                "video",
                "Pod",
                name,
                "Pulling",
                f'Pulling image "{STAGING}"',
                roll + td(seconds=3),
                now - td(minutes=4),
                count=9,
                host=n,
                field_path="spec.containers{transcode-api}",
            ),
            event(
                "video",
                "Pod",
                name,
                "Failed",
                pull_msg,
                roll + td(seconds=4),
                now - td(minutes=4),
                count=9,
                type_="Warning",
                host=n,
                field_path="spec.containers{transcode-api}",
            ),
            event(
                "video",
                "Pod",
                name,
                "Failed",
                "Error: ErrImagePull",
                roll + td(seconds=4),
                now - td(minutes=4),
                count=9,
                type_="Warning",
                host=n,
                field_path="spec.containers{transcode-api}",
            ),
            event(
                "video",
                "Pod",
                name,
                "BackOff",
                f'Back-off pulling image "{STAGING}"',
                roll + td(seconds=20),
                now - td(seconds=40),
                count=151,
                host=n,
                field_path="spec.containers{transcode-api}",
            ),
            event(
                "video",
                "Pod",
                name,
                "Failed",
                "Error: ImagePullBackOff",
                roll + td(seconds=20),
                now - td(seconds=40),
                count=151,
                type_="Warning",
                host=n,
                field_path="spec.containers{transcode-api}",
            ),
        )
    s.add(
        event(
            "video",
            "Deployment",
            "transcode-api",
            "ScalingReplicaSet",
            "Scaled up replica set transcode-api-7c4f9d6b85 to 2",
            roll,
            roll,
            component="deployment-controller",
        )
    )
    s.add(
        service("transcode-api", "video", old, {"app": "transcode-api"}, 80, 8088, "10.100.44.9"),
        endpoints("transcode-api", "video", now - td(days=8), ips, [], 8088),
    )
    # bystanders: a worker rolled yesterday from the production registry, a web frontend
    wk_tpl = pod_template(
        {"app": "thumbnail-worker"},
        [
            container(
                "thumbnail-worker",
                "registry.quillon.io/video/thumbnail-worker:3.0.7",
                cpu_req="500m",
                mem_req="512Mi",
                mem_lim="1Gi",
            )
        ],
        imagePullSecrets=[{"name": "quillon-prod-pull"}],
    )
    wk = deployment("thumbnail-worker", "video", old, wk_tpl, 3, 15)
    s.add(wk, replicaset(wk, "6d9f8b7c5", now - td(hours=26), 15, wk_tpl, 3))
    for i, sfx in enumerate(["2hzk9", "c8tqm", "x4wpl"]):
        s.add(
            pod(
                f"thumbnail-worker-6d9f8b7c5-{sfx}",
                "video",
                now - td(hours=26),
                wk_tpl,
                nodes[i],
                f"10.8.{i}.170",
                "ReplicaSet",
                "thumbnail-worker-6d9f8b7c5",
            )
        )
    web_tpl = pod_template(
        {"app": "player-web"},
        [
            container(
                "player-web",
                "registry.quillon.io/web/player-web:2026.47.1",
                cpu_req="100m",
                mem_req="128Mi",
                mem_lim="256Mi",
                port=8080,
                readiness=http_probe("/", 8080),
            )
        ],
    )
    web = deployment("player-web", "web", old, web_tpl, 2, 130)
    s.add(web, replicaset(web, "85c6d9f7b", now - td(hours=5), 130, web_tpl, 2))
    for i, sfx in enumerate(["gq2rm", "w9kd4"]):
        s.add(
            pod(
                f"player-web-85c6d9f7b-{sfx}",
                "web",
                now - td(hours=5),
                web_tpl,
                nodes[i + 2],
                f"10.8.{i + 2}.20",
                "ReplicaSet",
                "player-web-85c6d9f7b",
            )
        )
    s.add(
        event(
            "web",
            "Pod",
            "player-web-85c6d9f7b-w9kd4",
            "Unhealthy",
            'Readiness probe failed: Get "http://10.8.3.20:8080/": context deadline exceeded',
            now - td(minutes=47),
            now - td(minutes=47),
            type_="Warning",
            host=nodes[3],
            field_path="spec.containers{player-web}",
        )
    )

    # ---- metrics and logs: the old pods serve normally
    rng = random.Random(4)
    start = now - td(hours=20)
    for _ip, name, _n in ips:
        s.metric(
            "http_requests",
            "counter",
            "Requests served.",
            {"namespace": "video", "pod": name, "service": "transcode-api", "code": "200"},
            counter(start, now, 60, lambda t: 3.2 + rng.random(), base=2_400_000),
        )
        s.metric(
            "http_requests",
            "counter",
            "Requests served.",
            {"namespace": "video", "pod": name, "service": "transcode-api", "code": "500"},
            counter(start, now, 60, lambda t: 0.004, base=900),
        )
    t = now - td(hours=2)
    while t < now:
        ip, name, n = rng.choice(ips)
        k = rng.random()
        if k < 0.9:
            s.doc(
                t,
                "info",
                "transcode-api",
                "video",
                name,
                "transcode-api",
                f"job accepted asset_id=a{rng.randint(10**6, 10**7)} profile={rng.choice(['hls-1080', 'hls-720', 'dash-4k'])}",
                http__response__status_code=202,
            )
        elif k < 0.97:
            s.doc(
                t,
                "warn",
                "transcode-api",
                "video",
                name,
                "transcode-api",
                "segment upload retried: s3 SlowDown, attempt 2/5",
            )
        else:
            s.doc(
                t,
                "error",
                "transcode-api",
                "video",
                name,
                "transcode-api",
                "probe failed for asset: moov atom not found",
                http__response__status_code=422,
            )
        t += td(seconds=rng.uniform(5, 30))
    lines = []
    t = now - td(minutes=30)
    while t < now:
        lines.append(
            f"{t:%Y-%m-%dT%H:%M:%S}.{rng.randint(100000, 999999)}Z  INFO transcode_api::jobs: job accepted "
            f"asset_id=a{rng.randint(10**6, 10**7)} profile=hls-720 queue_depth={rng.randint(0, 12)}"
        )
        t += td(seconds=rng.randint(8, 40))
    s.pod_log("video", ips[0][1], "transcode-api", lines)
    _ = ts
    return s
