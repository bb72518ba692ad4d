# ruff: noqa: E501  (data literals: log lines and event messages are kept whole)
"""Shape 1: a CronJob runs its image by the `latest` tag; a new `latest` broke it; nothing changed in the cluster."""

from __future__ import annotations

from datetime import datetime, timedelta

from .common import (
    Scenario,
    available_status,
    container,
    deployment,
    iso,
    meta,
    namespace,
    node,
    pod,
    replicaset,
    running,
    terminated,
    waiting,
)

NS = "finops"
IMG = "registry.larkspur.dev/finops/ledger-rollup:latest"
OLD_DIGEST = "registry.larkspur.dev/finops/ledger-rollup@sha256:3f9a0c1d77e2b4a6f0d5c8e91b2a4d6f8c0e2a4b6d8f0a2c4e6a8b0d2f4a6c8e"
NEW_DIGEST = "registry.larkspur.dev/finops/ledger-rollup@sha256:b71e4d09c2a8f3e5d7b9c1a3e5f7092b4d6f8a0c2e4b6d8f0a1c3e5a7b9d1f3e"


def build() -> Scenario:
    s = Scenario(
        "finops-rollup-latest-tag",
        "Nightly ledger rollup did not produce this morning's numbers",
        "2026-12-02T02:48:00Z",
        "hey, finance's overnight ledger numbers are missing again :( the 02:00 rollup didn't write anything.\n"
        "nobody deployed anything to finops today as far as I know - did the warehouse have a blip?",
        {
            "category": "crash_loop",
            "culprit": {"kind": "CronJob", "namespace": NS, "name": "ledger-rollup"},
            "evidence": [
                "ledger-rollup:latest",
                "unexpected keyword argument 'fiscal_calendar'",
                "ledger-rollup 5.0.0",
            ],
            "fix": "Pin the CronJob's image to the last good version (4.9.3) or its digest instead of `latest`, "
            "then adapt the job's arguments to 5.0.0's breaking config change before moving to it",
        },
    )
    now = s.now
    n1, n2, n3 = (
        "ip-10-31-4-18.eu-central-1.compute.internal",
        "ip-10-31-5-201.eu-central-1.compute.internal",
        "ip-10-31-6-77.eu-central-1.compute.internal",
    )
    for i, (n, z, ip) in enumerate(
        (
            (n1, "eu-central-1a", "10.31.4.18"),
            (n2, "eu-central-1b", "10.31.5.201"),
            (n3, "eu-central-1c", "10.31.6.77"),
        )
    ):
        s.add(node(n, s.ago(days=21 + i), now - timedelta(seconds=9 + i), z, ip))
    s.add(namespace(NS, s.ago(days=300)))
    cron_created = s.ago(days=190)
    env = {
        "ROLLUP_WAREHOUSE_HOST": "warehouse.finops.svc",
        "ROLLUP_SCHEMA": "ledger_v2",
        "LOG_FORMAT": "text",
    }
    job_ctr = container(
        "rollup",
        IMG,
        env=env,
        pull="Always",
        command=["ledger-rollup"],
        args=["--period", "daily", "--currency", "EUR", "--calendar", "gregorian-eu"],
        requests={"cpu": "500m", "memory": "1Gi"},
        limits={"memory": "2Gi"},
    )
    last_ok = now.replace(hour=2, minute=0, second=0) - timedelta(days=1)
    tonight = now.replace(hour=2, minute=0, second=0)
    cron = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {
            **meta(
                "ledger-rollup", NS, {"app": "ledger-rollup", "team": "finops-data"}, cron_created
            ),
            "generation": 7,
        },
        "spec": {
            "schedule": "0 2 * * *",
            "timeZone": "Etc/UTC",
            "concurrencyPolicy": "Forbid",
            "successfulJobsHistoryLimit": 3,
            "failedJobsHistoryLimit": 3,
            "suspend": False,
            "jobTemplate": {
                "spec": {
                    "backoffLimit": 4,
                    "activeDeadlineSeconds": 7200,
                    "template": {
                        "metadata": {"labels": {"app": "ledger-rollup"}},
                        "spec": {"restartPolicy": "OnFailure", "containers": [job_ctr]},
                    },
                }
            },
        },
        "status": {
            "lastScheduleTime": iso(tonight),
            "lastSuccessfulTime": iso(last_ok + timedelta(minutes=23)),
            "active": [
                {
                    "kind": "Job",
                    "namespace": NS,
                    "name": "ledger-rollup-29411640",
                    "apiVersion": "batch/v1",
                }
            ],
        },
    }
    s.add(cron)

    def job(
        name: str, start: datetime, done: datetime | None, ok: bool, failed: bool = False
    ) -> dict:
        st: dict = {"startTime": iso(start)}
        if ok and done:
            st.update(
                {
                    "completionTime": iso(done),
                    "succeeded": 1,
                    "conditions": [
                        {
                            "type": "Complete",
                            "status": "True",
                            "lastProbeTime": iso(done),
                            "lastTransitionTime": iso(done),
                        }
                    ],
                }
            )
        elif failed and done:
            st.update(
                {
                    "failed": 1,
                    "conditions": [
                        {
                            "type": "Failed",
                            "status": "True",
                            "reason": "BackoffLimitExceeded",
                            "message": "Job has reached the specified backoff limit",
                            "lastProbeTime": iso(done),
                            "lastTransitionTime": iso(done),
                        }
                    ],
                }
            )
        else:
            st.update({"active": 1, "ready": 0})
        return {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": meta(
                name,
                NS,
                {"app": "ledger-rollup", "batch.kubernetes.io/job-name": name},
                start,
                ("CronJob", "ledger-rollup"),
                api="batch/v1",
            ),
            "spec": {
                "backoffLimit": 4,
                "activeDeadlineSeconds": 7200,
                "completions": 1,
                "parallelism": 1,
                "template": {
                    "metadata": {"labels": {"app": "ledger-rollup"}},
                    "spec": {"restartPolicy": "OnFailure", "containers": [job_ctr]},
                },
            },
            "status": st,
        }

    for d, jn in (
        (3, "ledger-rollup-29407320"),
        (2, "ledger-rollup-29408760"),
        (1, "ledger-rollup-29410200"),
    ):
        st = tonight - timedelta(days=d)
        s.add(job(jn, st, st + timedelta(minutes=21 + d), ok=True))
    s.add(job("ledger-rollup-29411640", tonight, None, ok=False))
    # last night's pod (succeeded), kept by the job history
    ok_pod = "ledger-rollup-29410200-7xq2m"
    s.add(
        pod(
            ok_pod,
            NS,
            {"app": "ledger-rollup", "batch.kubernetes.io/job-name": "ledger-rollup-29410200"},
            ("Job", "ledger-rollup-29410200"),
            n2,
            [job_ctr],
            [
                {
                    "name": "rollup",
                    "image": IMG,
                    "imageID": OLD_DIGEST,
                    "ready": False,
                    "restartCount": 0,
                    "started": False,
                    "lastState": {},
                    "state": {
                        "terminated": terminated(
                            "Completed",
                            0,
                            last_ok + timedelta(seconds=6),
                            last_ok + timedelta(minutes=22),
                        )
                    },
                }
            ],
            last_ok,
            phase="Succeeded",
            ready=False,
            ip="10.31.5.66",
            host_ip="10.31.5.201",
            restart_policy="OnFailure",
        )
    )
    bad_pod = "ledger-rollup-29411640-k4nvd"
    starts = [
        tonight + timedelta(seconds=x)
        for x in (8, 31, 62, 113, 196, 361, 682, 1004, 1327, 1650, 1973, 2296)
    ]
    last_start = starts[-1]
    s.add(
        pod(
            bad_pod,
            NS,
            {"app": "ledger-rollup", "batch.kubernetes.io/job-name": "ledger-rollup-29411640"},
            ("Job", "ledger-rollup-29411640"),
            n1,
            [job_ctr],
            [
                waiting(
                    "rollup",
                    IMG,
                    "CrashLoopBackOff",
                    f"back-off 5m0s restarting failed container=rollup pod={bad_pod}_{NS}",
                    restarts=11,
                    last=terminated("Error", 1, last_start, last_start + timedelta(seconds=3)),
                    image_id=NEW_DIGEST,
                )
            ],
            tonight,
            ready=False,
            ip="10.31.4.140",
            host_ip="10.31.4.18",
            restart_policy="OnFailure",
        )
    )

    trace = [
        f"{iso(last_start)} INFO  ledger-rollup 5.0.0 (build 2026-12-01T17:42Z) starting",
        f"{iso(last_start)} INFO  reading options from command line",
        f"{iso(last_start + timedelta(seconds=1))} WARN  option --calendar is deprecated, see CHANGELOG for 5.0",
        "Traceback (most recent call last):",
        '  File "/usr/local/bin/ledger-rollup", line 8, in <module>',
        "    sys.exit(main())",
        '  File "/app/rollup/cli.py", line 61, in main',
        "    cfg = RollupConfig.from_args(args)",
        '  File "/app/rollup/config.py", line 118, in from_args',
        "    return cls(period=args.period, currency=args.currency, fiscal_calendar=args.calendar,",
        "TypeError: RollupConfig.__init__() got an unexpected keyword argument 'fiscal_calendar'",
    ]
    s.log(NS, bad_pod, "rollup", trace, previous=True)
    s.log(NS, bad_pod, "rollup", [])
    ok_lines = [
        "2026-12-01T02:00:07Z INFO  ledger-rollup 4.9.3 (build 2026-10-14T09:12Z) starting",
        "2026-12-01T02:00:07Z INFO  reading options from command line",
        "2026-12-01T02:00:08Z INFO  connected to warehouse.finops.svc schema=ledger_v2",
    ]
    for i in range(1, 9):
        ok_lines.append(
            f"2026-12-01T02:{2 * i:02d}:3{i % 10}Z INFO  rolled up partition {i}/8 rows={181000 + 733 * i}"
        )
    ok_lines.append(
        "2026-12-01T02:22:02Z INFO  wrote daily ledger summary for 2026-11-30 (8 partitions)"
    )
    s.log(NS, ok_pod, "rollup", ok_lines)
    for _i, t0 in enumerate(starts):
        s.doc(
            t0 + timedelta(seconds=1),
            "ledger-rollup 5.0.0 (build 2026-12-01T17:42Z) starting",
            "info",
            "ledger-rollup",
            NS,
            bad_pod,
            "rollup",
        )
        s.doc(
            t0 + timedelta(seconds=2),
            "option --calendar is deprecated, see CHANGELOG for 5.0",
            "warn",
            "ledger-rollup",
            NS,
            bad_pod,
            "rollup",
        )
        s.doc(
            t0 + timedelta(seconds=3),
            "TypeError: RollupConfig.__init__() got an unexpected keyword argument 'fiscal_calendar'",
            "error",
            "ledger-rollup",
            NS,
            bad_pod,
            "rollup",
            **{"error.type": "TypeError"},
        )

    # bystanders: the warehouse and an invoicing API
    wh_ctr = container(
        "postgres",
        "registry.larkspur.dev/platform/postgres:16.4",
        ports=[5432],
        requests={"cpu": "1", "memory": "4Gi"},
        limits={"memory": "4Gi"},
    )
    api_img = "registry.larkspur.dev/finops/invoice-api:2.18.0"
    api_ctr = container(
        "api",
        api_img,
        ports=[8080],
        requests={"cpu": "250m", "memory": "512Mi"},
        limits={"memory": "768Mi"},
    )
    h = "5c8d9f7b64"
    s.add(
        deployment(
            "invoice-api",
            NS,
            {"app": "invoice-api"},
            {"app": "invoice-api", "pod-template-hash": h},
            [api_ctr],
            2,
            s.ago(days=200),
            31,
            31,
            available_status(2, s.ago(days=6)),
        )
    )
    s.add(
        replicaset(
            f"invoice-api-{h}",
            NS,
            "invoice-api",
            {"app": "invoice-api", "pod-template-hash": h},
            [api_ctr],
            2,
            2,
            s.ago(days=6),
            31,
        )
    )
    for i, (sfx, nd, ip) in enumerate((("q8w2x", n2, "10.31.5.31"), ("zt6lp", n3, "10.31.6.12"))):
        s.add(
            pod(
                f"invoice-api-{h}-{sfx}",
                NS,
                {"app": "invoice-api", "pod-template-hash": h},
                ("ReplicaSet", f"invoice-api-{h}"),
                nd,
                [api_ctr],
                [running("api", api_img, s.ago(days=6, minutes=-i))],
                s.ago(days=6),
                ip=ip,
            )
        )
    s.add(
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {
                **meta("warehouse", NS, {"app": "warehouse"}, s.ago(days=300)),
                "generation": 4,
            },
            "spec": {
                "replicas": 1,
                "serviceName": "warehouse",
                "selector": {"matchLabels": {"app": "warehouse"}},
                "template": {
                    "metadata": {"labels": {"app": "warehouse"}},
                    "spec": {"containers": [wh_ctr]},
                },
            },
            "status": {
                "replicas": 1,
                "readyReplicas": 1,
                "availableReplicas": 1,
                "currentReplicas": 1,
                "updatedReplicas": 1,
                "observedGeneration": 4,
            },
        }
    )
    s.add(
        pod(
            "warehouse-0",
            NS,
            {"app": "warehouse", "statefulset.kubernetes.io/pod-name": "warehouse-0"},
            ("StatefulSet", "warehouse"),
            n3,
            [wh_ctr],
            [running("postgres", "registry.larkspur.dev/platform/postgres:16.4", s.ago(days=17))],
            s.ago(days=17),
            ip="10.31.6.40",
            host_ip="10.31.6.77",
        )
    )
    wl = []
    for m in range(0, 170, 7):
        t = s.ago(minutes=m)
        wl.append(f"{iso(t)} [71] LOG:  checkpoint complete: wrote {120 + m % 37} buffers")
    s.log(NS, "warehouse-0", "postgres", list(reversed(wl)))
    for m in range(2, 120, 3):
        t = s.ago(minutes=m)
        s.doc(
            t,
            "GET /v1/invoices?status=open 200",
            "info",
            "invoice-api",
            NS,
            f"invoice-api-{h}-q8w2x",
            "api",
            **{"http.response.status_code": 200},
        )
    s.doc(
        s.ago(minutes=41),
        "slow query on invoices_by_customer took 1.8s",
        "warn",
        "invoice-api",
        NS,
        f"invoice-api-{h}-zt6lp",
        "api",
    )

    ev = s.events
    ev.add(
        NS,
        "CronJob",
        "ledger-rollup",
        "SuccessfulCreate",
        "Created job ledger-rollup-29411640",
        tonight,
        component="cronjob-controller",
        api="batch/v1",
    )
    ev.add(
        NS,
        "Job",
        "ledger-rollup-29411640",
        "SuccessfulCreate",
        f"Created pod: {bad_pod}",
        tonight,
        component="job-controller",
        api="batch/v1",
    )
    ev.add(
        NS,
        "Pod",
        bad_pod,
        "Scheduled",
        f"Successfully assigned {NS}/{bad_pod} to {n1}",
        tonight,
        component="default-scheduler",
    )
    ev.add(
        NS,
        "Pod",
        bad_pod,
        "Pulling",
        f'Pulling image "{IMG}"',
        tonight + timedelta(seconds=2),
        starts[-1] - timedelta(seconds=1),
        count=12,
        host=n1,
        field_path="spec.containers{rollup}",
    )
    ev.add(
        NS,
        "Pod",
        bad_pod,
        "Pulled",
        f'Successfully pulled image "{IMG}" in 412ms (412ms including waiting). Image size: 318220411 bytes.',
        tonight + timedelta(seconds=7),
        starts[-1],
        count=12,
        host=n1,
        field_path="spec.containers{rollup}",
    )
    ev.add(
        NS,
        "Pod",
        bad_pod,
        "Created",
        "Created container rollup",
        tonight + timedelta(seconds=8),
        starts[-1],
        count=12,
        host=n1,
        field_path="spec.containers{rollup}",
    )
    ev.add(
        NS,
        "Pod",
        bad_pod,
        "Started",
        "Started container rollup",
        tonight + timedelta(seconds=8),
        starts[-1],
        count=12,
        host=n1,
        field_path="spec.containers{rollup}",
    )
    ev.add(
        NS,
        "Pod",
        bad_pod,
        "BackOff",
        f"Back-off restarting failed container rollup in pod {bad_pod}_{NS}({bad_pod[-5:]})",
        tonight + timedelta(seconds=12),
        now - timedelta(seconds=40),
        count=58,
        type_="Warning",
        host=n1,
        field_path="spec.containers{rollup}",
    )
    ev.add(
        NS,
        "Pod",
        "warehouse-0",
        "Unhealthy",
        "Readiness probe failed: pg_isready: timeout expired",
        s.ago(minutes=52),
        type_="Warning",
        host=n3,
        field_path="spec.containers{postgres}",
    )
    return s
