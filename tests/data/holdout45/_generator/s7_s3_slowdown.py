"""7. dependency_failure: S3 throttles upload-gateway's PutObject calls (503 SlowDown: Please reduce
your request rate.); the gateway itself is healthy, and an HPA scale-up and a thumbnailer rollout
are decoys."""

import json
from datetime import timedelta

from ._kit import (
    Family,
    Scenario,
    T,
    container,
    cumulate,
    endpoints,
    event,
    hexid,
    http_probe,
    iso,
    iso_ms,
    meta,
    namespace,
    node,
    noise,
    pod_usage,
    restarts_metric,
    service,
    steps,
    template,
)

SID = "s3-slowdown-upload-throttling"

NOW = T("2026-11-24T09:10:00Z")
SLOW = T("2026-11-24T08:14:30Z")
HPA_UP = T("2026-11-24T08:31:02Z")


def build():
    sc = Scenario(
        SID,
        "photo uploads failing with 503",
        NOW,
        (
            "customers can't upload photos since about 8:15, upload-gateway answers 503 for a big "
            "share of uploads.\n"
            "the HPA added a pod around 8:30 and thumbnailer was deployed at 8:40 - I think one "
            "of those broke\n"
            "it, maybe the new upload-gateway pod is bad? need a fix fast, marketing campaign is "
            "live.\n"
        ),
        {
            "category": "dependency_failure",
            "culprit": {"kind": "Deployment", "namespace": "media", "name": "upload-gateway"},
            "evidence": [
                "api error SlowDown: Please reduce your request rate.",
                "StatusCode: 503",
                "operation error S3: PutObject",
                "upload_gateway_s3_requests_total",
            ],
            "fix": "S3 is throttling PutObject on the bucket's hot date prefix: spread keys over "
            "more prefixes "
            "(hash prefix), add backoff with jitter / a client-side rate limit, and ask AWS about "
            "the "
            "partition; no rollback of upload-gateway or thumbnailer is needed.",
        },
        seed=4507,
    )
    rng = sc.rng
    start = NOW - timedelta(hours=3)
    times = list(steps(start, NOW, 120))
    ncreated = T("2026-11-20T04:00:00Z")
    nodes = [
        ("ip-10-40-12-64.eu-west-1.compute.internal", "10.40.12.64", "eu-west-1a"),
        ("ip-10-40-13-101.eu-west-1.compute.internal", "10.40.13.101", "eu-west-1b"),
        ("ip-10-40-14-177.eu-west-1.compute.internal", "10.40.14.177", "eu-west-1c"),
    ]
    for i, (n, ip, z) in enumerate(nodes):
        sc.add(
            node(
                n,
                ncreated + timedelta(minutes=3 * i),
                NOW,
                ip=ip,
                cpu=8,
                mem_gi=32,
                instance_type="m6i.2xlarge",
                zone=z,
                pool="general-2026a",
            )
        )
    for ns in ("media", "web", "batch", "monitoring"):
        sc.add(namespace(ns, T("2025-02-10T09:00:00Z")))
    N = {i: (nodes[i][0], nodes[i][1]) for i in range(3)}

    # ---------------------------------------------------------------- media/upload-gateway
    ug_rs = T("2026-11-18T11:20:00Z")
    ug_c = [
        container(
            "upload-gateway",
            "registry.quillmark.io/media/upload-gateway:1.31.0",
            cpu_req="500m",
            mem_req="512Mi",
            cpu_lim="2",
            mem_lim="1Gi",
            ports=[("http", 8080), ("metrics", 9100)],
            env=[
                ("S3_BUCKET", "qm-media-originals-euw1"),
                ("AWS_REGION", "eu-west-1"),
                ("S3_KEY_TEMPLATE", "originals/{yyyy}/{mm}/{dd}/{upload_id}"),
                ("AWS_RETRY_MAX_ATTEMPTS", "3"),
            ],
            readiness=http_probe("/readyz", 8080),
            liveness=http_probe("/healthz", 8080, period=20),
        )
    ]
    pcs = [
        T("2026-11-20T04:20:00Z"),
        T("2026-11-20T04:20:40Z"),
        T("2026-11-20T04:21:20Z"),
        HPA_UP + timedelta(seconds=1),
    ]
    ug = Family(
        sc,
        "media",
        "upload-gateway",
        containers=ug_c,
        replicas=4,
        placements=[
            (N[i % 3][0], N[i % 3][1], ip, pcs[i])
            for i, ip in enumerate(["10.40.12.140", "10.40.13.25", "10.40.14.81", "10.40.12.57"])
        ],
        created=T("2025-02-10T10:00:00Z"),
        rs_created=ug_rs,
        revision=33,
        sa="upload-gateway",
        old=[
            (
                32,
                {"upload-gateway": "registry.quillmark.io/media/upload-gateway:1.30.2"},
                T("2026-11-04T10:00:00Z"),
            )
        ],
    )
    sc.add(
        service(
            "upload-gateway",
            "media",
            created=T("2025-02-10T10:00:00Z"),
            selector={"app": "upload-gateway"},
            ports=[("http", 80, 8080)],
            cluster_ip="172.20.77.31",
        )
    )
    sc.add(
        endpoints(
            "upload-gateway",
            "media",
            created=T("2025-02-10T10:00:00Z"),
            ready=[
                (p["status"]["podIP"], p["spec"]["nodeName"], p["metadata"]["name"])
                for p in ug.pods
            ],
            ports=[("http", 8080)],
        )
    )
    sc.add(
        {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": meta(
                "upload-gateway", "media", T("2025-02-10T10:00:00Z"), kind="HorizontalPodAutoscaler"
            ),
            "spec": {
                "scaleTargetRef": {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": "upload-gateway",
                },
                "minReplicas": 3,
                "maxReplicas": 12,
                "metrics": [
                    {
                        "type": "Resource",
                        "resource": {
                            "name": "cpu",
                            "target": {"type": "Utilization", "averageUtilization": 60},
                        },
                    }
                ],
            },
            "status": {
                "currentReplicas": 4,
                "desiredReplicas": 4,
                "lastScaleTime": iso(HPA_UP),
                "currentMetrics": [
                    {
                        "type": "Resource",
                        "resource": {
                            "name": "cpu",
                            "current": {"averageUtilization": 31, "averageValue": "156m"},
                        },
                    }
                ],
                "conditions": [
                    {
                        "type": "AbleToScale",
                        "status": "True",
                        "reason": "ReadyForNewScale",
                        "message": "recommended size matches current size",
                        "lastTransitionTime": iso(HPA_UP + timedelta(minutes=5)),
                    },
                    {
                        "type": "ScalingActive",
                        "status": "True",
                        "reason": "ValidMetricFound",
                        "message": (
                            "the HPA was able to successfully calculate a replica count from cpu "
                            "resource utilization (percentage of request)"
                        ),
                        "lastTransitionTime": "2026-11-20T04:25:00Z",
                    },
                    {
                        "type": "ScalingLimited",
                        "status": "False",
                        "reason": "DesiredWithinRange",
                        "message": "the desired count is within the acceptable range",
                        "lastTransitionTime": "2026-11-20T04:25:00Z",
                    },
                ],
            },
        }
    )
    th_rs = T("2026-11-24T08:40:12Z")
    th = Family(
        sc,
        "media",
        "thumbnailer",
        containers=[
            container(
                "thumbnailer",
                "registry.quillmark.io/media/thumbnailer:2.8.0",
                cpu_req="1",
                mem_req="1Gi",
                cpu_lim="2",
                mem_lim="2Gi",
                ports=[("http", 8080)],
                env=[
                    ("S3_BUCKET", "qm-media-originals-euw1"),
                    ("THUMBS_BUCKET", "qm-media-thumbs-euw1"),
                ],
            )
        ],
        replicas=2,
        placements=[
            (N[1][0], N[1][1], "10.40.13.210", th_rs + timedelta(seconds=2)),
            (N[2][0], N[2][1], "10.40.14.33", th_rs + timedelta(seconds=30)),
        ],
        created=T("2025-02-10T10:00:00Z"),
        rs_created=th_rs,
        revision=19,
        old=[
            (
                18,
                {"thumbnailer": "registry.quillmark.io/media/thumbnailer:2.7.5"},
                T("2026-11-10T10:00:00Z"),
            )
        ],
        ann={"kubernetes.io/change-cause": "thumbnailer 2.8.0: AVIF output"},
    )
    Family(
        sc,
        "web",
        "frontend",
        containers=[
            container(
                "frontend",
                "registry.quillmark.io/web/frontend:2026.11.21",
                cpu_req="250m",
                mem_req="256Mi",
                cpu_lim="1",
                mem_lim="512Mi",
                ports=[("http", 3000)],
                readiness=http_probe("/healthz", 3000),
            )
        ],
        replicas=3,
        placements=[
            (N[i][0], N[i][1], ip, T("2026-11-21T10:00:00Z") + timedelta(seconds=30 * i))
            for i, ip in enumerate(["10.40.12.11", "10.40.13.11", "10.40.14.11"])
        ],
        created=T("2025-02-10T10:00:00Z"),
        rs_created=T("2026-11-21T10:00:00Z"),
        revision=140,
    )
    # batch: the nightly reindex job finished hours ago
    job_start = T("2026-11-24T03:00:00Z")
    sc.add(
        {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": meta("media-reindex", "batch", T("2025-04-01T10:00:00Z"), kind="CronJob"),
            "spec": {
                "schedule": "0 3 * * *",
                "concurrencyPolicy": "Forbid",
                "successfulJobsHistoryLimit": 3,
                "failedJobsHistoryLimit": 1,
                "suspend": False,
                "jobTemplate": {
                    "spec": {
                        "backoffLimit": 2,
                        "template": template(
                            {"app": "media-reindex"},
                            [
                                container(
                                    "reindex",
                                    "registry.quillmark.io/batch/media-reindex:0.12.1",
                                    cpu_req="500m",
                                    mem_req="512Mi",
                                )
                            ],
                        ),
                    }
                },
            },
            "status": {
                "lastScheduleTime": iso(job_start),
                "lastSuccessfulTime": iso(job_start + timedelta(minutes=41)),
            },
        }
    )
    jn = f"media-reindex-{int(job_start.timestamp()) // 60}"
    tmpl = template(
        {"app": "media-reindex", "batch.kubernetes.io/job-name": jn},
        [
            container(
                "reindex",
                "registry.quillmark.io/batch/media-reindex:0.12.1",
                cpu_req="500m",
                mem_req="512Mi",
            )
        ],
    )
    tmpl["spec"]["restartPolicy"] = "OnFailure"
    sc.add(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": meta(
                jn,
                "batch",
                job_start,
                {"app": "media-reindex"},
                owner=("CronJob", "media-reindex"),
                kind="Job",
            ),
            "spec": {"backoffLimit": 2, "completions": 1, "parallelism": 1, "template": tmpl},
            "status": {
                "startTime": iso(job_start),
                "completionTime": iso(job_start + timedelta(minutes=41)),
                "succeeded": 1,
                "ready": 0,
                "terminating": 0,
                "conditions": [
                    {
                        "type": "SuccessCriteriaMet",
                        "status": "True",
                        "lastProbeTime": iso(job_start + timedelta(minutes=41)),
                        "lastTransitionTime": iso(job_start + timedelta(minutes=41)),
                        "reason": "CompletionsReached",
                        "message": "Reached expected number of succeeded pods",
                    },
                    {
                        "type": "Complete",
                        "status": "True",
                        "lastProbeTime": iso(job_start + timedelta(minutes=41)),
                        "lastTransitionTime": iso(job_start + timedelta(minutes=41)),
                        "reason": "CompletionsReached",
                        "message": "Reached expected number of succeeded pods",
                    },
                ],
            },
        }
    )

    # ---------------------------------------------------------------- events (last hour)
    sc.add(
        event(
            "media",
            kind="HorizontalPodAutoscaler",
            name="upload-gateway",
            api="autoscaling/v2",
            reason="SuccessfulRescale",
            message=(
                "New size: 4; reason: cpu resource utilization (percentage of request) above target"
            ),
            first=HPA_UP,
            last=HPA_UP,
            component="horizontal-pod-autoscaler",
        )
    )
    sc.add(
        event(
            "media",
            kind="Deployment",
            name="upload-gateway",
            api="apps/v1",
            reason="ScalingReplicaSet",
            message=f"Scaled up replica set {ug.rs_name} to 4 from 3",
            first=HPA_UP,
            last=HPA_UP,
            component="deployment-controller",
        )
    )
    sc.add(
        event(
            "media",
            kind="Deployment",
            name="thumbnailer",
            api="apps/v1",
            reason="ScalingReplicaSet",
            message=f"Scaled up replica set {th.rs_name} to 1",
            first=th_rs,
            last=th_rs,
            component="deployment-controller",
        )
    )
    sc.add(
        event(
            "media",
            kind="Pod",
            name=ug.pods[3]["metadata"]["name"],
            reason="Started",
            message="Started container upload-gateway",
            first=HPA_UP + timedelta(seconds=4),
            last=HPA_UP + timedelta(seconds=4),
            host=ug.pods[3]["spec"]["nodeName"],
            field_path="spec.containers{upload-gateway}",
        )
    )

    # ---------------------------------------------------------------- logs
    def jl(p, t, level, msg, svc, **kw):
        sc.log(
            t,
            ns=p["metadata"]["namespace"],
            pod=p["metadata"]["name"],
            container=p["spec"]["containers"][0]["name"],
            service=svc,
            level=level,
            message=msg,
            **kw,
        )

    pod_lines = {p["metadata"]["name"]: [] for p in ug.pods}

    def fail_share(t):
        if t < SLOW:
            return 0.0
        return min(0.46, 0.12 + 0.34 * (t - SLOW).total_seconds() / 900)

    for t in steps(start, NOW, 5):
        for p in ug.pods:
            pc = T(p["metadata"]["creationTimestamp"])
            if t < pc + timedelta(seconds=8) or rng.random() > 0.08:
                continue
            tt = t + timedelta(seconds=rng.uniform(0, 4.9))
            uid_ = "up_" + hexid("u", iso_ms(tt), p["metadata"]["name"], n=14)
            key = f"originals/2026/11/24/{uid_}"
            if rng.random() < fail_share(tt):
                rid = hexid("rid", uid_, n=16).upper()
                err = (
                    "operation error S3: PutObject, exceeded maximum number of attempts, 3, "
                    "https response error StatusCode: 503, "
                    f"RequestID: {rid}, HostID: {hexid('host', uid_, n=56)}=, api error SlowDown: "
                    "Please reduce your request rate."
                )
                line = {
                    "level": "error",
                    "ts": iso_ms(tt),
                    "msg": "store original failed",
                    "upload_id": uid_,
                    "bucket": "qm-media-originals-euw1",
                    "key": key,
                    "error": err,
                }
                jl(
                    p,
                    tt,
                    "error",
                    f"store original failed upload_id={uid_} bucket=qm-media-originals-euw1 "
                    f"key={key}: {err}",
                    "upload-gateway",
                    error__type="smithy.OperationError",
                )
                jl(
                    p,
                    tt + timedelta(milliseconds=2),
                    "warn",
                    f"POST /v1/uploads 503 {rng.randint(1800, 4200)}ms upload_id={uid_}",
                    "upload-gateway",
                    http__response__status_code=503,
                    url__path="/v1/uploads",
                )
                pod_lines[p["metadata"]["name"]].append(json.dumps(line))
            else:
                ms = rng.randint(120, 420) if tt < SLOW else rng.randint(300, 1900)
                jl(
                    p,
                    tt,
                    "info",
                    f"POST /v1/uploads 201 {ms}ms upload_id={uid_} "
                    f"bytes={rng.randint(300, 9000)}KiB",
                    "upload-gateway",
                    http__response__status_code=201,
                    url__path="/v1/uploads",
                )
    for p in ug.pods:
        pc = T(p["metadata"]["creationTimestamp"])
        head = [
            json.dumps(
                {
                    "level": "info",
                    "ts": iso_ms(pc + timedelta(seconds=3)),
                    "msg": "upload-gateway 1.31.0 listening",
                    "addr": ":8080",
                    "bucket": "qm-media-originals-euw1",
                    "region": "eu-west-1",
                    "retry_max_attempts": 3,
                }
            )
        ]
        sc.pod_log(
            "media",
            p["metadata"]["name"],
            "upload-gateway",
            head + pod_lines[p["metadata"]["name"]][-400:],
        )
    for t in steps(th_rs + timedelta(seconds=40), NOW, 20):
        p = th.pods[rng.randrange(2)]
        jl(
            p,
            t,
            "info",
            f"thumbnail done key=originals/2026/11/24/up_{hexid('t', iso(t), n=14)} "
            f"sizes=[160,480,1080] format=avif in {rng.randint(140, 600)}ms",
            "thumbnailer",
        )
    for t in steps(start, NOW, 900):
        jl(
            ug.pods[0],
            t + timedelta(seconds=13),
            "warn",
            "client closed connection before upload finished: context canceled",
            "upload-gateway",
        )

    # ---------------------------------------------------------------- metrics
    for p in ug.pods:
        pc = T(p["metadata"]["creationTimestamp"])
        ts = [t for t in times if t >= pc]
        base = {"namespace": "media", "pod": p["metadata"]["name"], "job": "upload-gateway"}
        fresh = pc > start
        sc.metrics.counter(
            "upload_gateway_s3_requests",
            "S3 requests made by upload-gateway, by operation and HTTP status.",
            dict(base, operation="PutObject", status="200", error_code=""),
            cumulate(
                ts,
                lambda t: 0.8 * (1 - fail_share(t)) * (3 / 4 if t >= HPA_UP else 1),
                start_value=0 if fresh else 231_000,
            ),
        )
        sc.metrics.counter(
            "upload_gateway_s3_requests",
            "S3 requests made by upload-gateway, by operation and HTTP status.",
            dict(base, operation="PutObject", status="503", error_code="SlowDown"),
            cumulate(
                ts,
                lambda t: (
                    3 * 0.8 * fail_share(t) * (3 / 4 if t >= HPA_UP else 1)
                    + (0.1 * 0.8 if t >= SLOW else 0)
                ),
                start_value=0 if fresh else 17,
            ),
        )
        sc.metrics.counter(
            "http_requests",
            "Total HTTP requests handled.",
            dict(base, handler="/v1/uploads", method="POST", code="201"),
            cumulate(
                ts,
                lambda t: 0.8 * (1 - fail_share(t)) * (3 / 4 if t >= HPA_UP else 1),
                start_value=0 if fresh else 230_500,
            ),
        )
        sc.metrics.counter(
            "http_requests",
            "Total HTTP requests handled.",
            dict(base, handler="/v1/uploads", method="POST", code="503"),
            cumulate(
                ts,
                lambda t: 0.8 * fail_share(t) * (3 / 4 if t >= HPA_UP else 1),
                start_value=0 if fresh else 5,
            ),
        )
        pod_usage(
            sc,
            p,
            "upload-gateway",
            ts,
            lambda t: noise(rng, 0.14 if t < SLOW else 0.19),
            lambda t: noise(rng, 2.9e8, 0.04),
        )
        restarts_metric(sc, p, "upload-gateway", ts)
    for p in th.pods:
        pc = T(p["metadata"]["creationTimestamp"])
        ts = [t for t in times if t >= pc]
        base = {"namespace": "media", "pod": p["metadata"]["name"], "job": "thumbnailer"}
        sc.metrics.counter(
            "thumbnailer_s3_requests",
            "S3 requests made by thumbnailer, by operation and HTTP status.",
            dict(base, operation="GetObject", status="200"),
            cumulate(ts, lambda t: noise(rng, 1.1)),
        )
    return sc
