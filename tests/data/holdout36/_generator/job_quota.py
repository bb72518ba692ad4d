"""Brightwell Insurance: count/jobs.batch quota full of finished ad-hoc Jobs."""

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
    rng,
    service,
    write_scenario,
)
from .helpers import nodes_for


def job_quota() -> None:
    """Brightwell Insurance: count/jobs.batch quota full of finished ad-hoc Jobs."""
    now = parse("2026-11-29T08:15:00Z")
    ns = "bi-reports"
    r = rng("quota")
    nodes = nodes_for(now, "worker-eu2", 3, base_days=40)
    sched = now.replace(hour=2, minute=0)
    job_c = container(
        "export",
        "harbor.brightwell.internal/bi/warehouse-export:2.3.1",
        port=None,
        mem_req="1Gi",
        mem_lim="2Gi",
        args=["--target=s3://bw-partner-drop/nightly", "--since=24h"],
    )
    cron = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {
            "name": "nightly-export",
            "namespace": ns,
            "creationTimestamp": iso(ago(now, days=410)),
            "labels": {"app": "nightly-export"},
        },
        "spec": {
            "schedule": "0 2 * * *",
            "concurrencyPolicy": "Forbid",
            "startingDeadlineSeconds": 21600,
            "successfulJobsHistoryLimit": 3,
            "failedJobsHistoryLimit": 1,
            "jobTemplate": {
                "spec": {
                    "backoffLimit": 2,
                    "template": {"spec": {"restartPolicy": "Never", "containers": [job_c]}},
                }
            },
        },
        "status": {
            "lastScheduleTime": iso(sched - timedelta(days=1)),
            "lastSuccessfulTime": iso(sched - timedelta(days=1) + timedelta(minutes=41)),
        },
    }
    hourly = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {
            "name": "claims-rollup",
            "namespace": ns,
            "creationTimestamp": iso(ago(now, days=200)),
        },
        "spec": {
            "schedule": "15 * * * *",
            "suspend": True,
            "jobTemplate": {
                "spec": {
                    "template": {
                        "spec": {
                            "restartPolicy": "Never",
                            "containers": [
                                container(
                                    "rollup",
                                    "harbor.brightwell.internal/bi/rollup:1.0.4",
                                    port=None,
                                )
                            ],
                        }
                    }
                }
            },
        },
        "status": {"lastScheduleTime": iso(ago(now, days=9))},
    }
    quota = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {
            "name": "bi-reports-objects",
            "namespace": ns,
            "creationTimestamp": iso(ago(now, days=380)),
        },
        "spec": {
            "hard": {
                "count/jobs.batch": "40",
                "pods": "60",
                "requests.cpu": "24",
                "requests.memory": "96Gi",
            }
        },
        "status": {
            "hard": {
                "count/jobs.batch": "40",
                "pods": "60",
                "requests.cpu": "24",
                "requests.memory": "96Gi",
            },
            "used": {
                "count/jobs.batch": "40",
                "pods": "9",
                "requests.cpu": "3100m",
                "requests.memory": "11Gi",
            },
        },
    }
    dash_c = [
        container(
            "superset",
            "harbor.brightwell.internal/bi/superset:3.1.3",
            port=8088,
            mem_req="1Gi",
            mem_lim="2Gi",
        )
    ]
    objs = [
        namespace(ns, ago(now, days=420)),
        *nodes,
        cron,
        hourly,
        quota,
        deployment(
            "superset",
            ns,
            ago(now, days=300),
            dash_c,
            replicas=2,
            revision=9,
            ready=2,
            updated=2,
            available=2,
        ),
        service("superset", ns, ago(now, days=300), 80, 8088, cluster_ip="10.43.9.5"),
    ]
    for i, sname in enumerate(("superset-6d8f7c9b5-kw31", "superset-6d8f7c9b5-lw58")):
        objs.append(
            pod(
                sname,
                ns,
                ago(now, days=6),
                dash_c,
                owner=("ReplicaSet", "superset-6d8f7c9b5"),
                node_name=nodes[i]["metadata"]["name"],
                labels={"app": "superset", "pod-template-hash": "6d8f7c9b5"},
            )
        )
    # finished ad-hoc rerun Jobs from the self-service "rerun report" button: no TTL, never deleted
    for i in range(37):
        t0 = ago(now, days=75 - i * 2, hours=r.randint(0, 8))
        name = f"report-rerun-{t0.strftime('%m%d')}-{r.choice('abcdef')}{r.randint(100, 999)}"
        objs.append(
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {
                    "name": name,
                    "namespace": ns,
                    "creationTimestamp": iso(t0),
                    "labels": {
                        "app.kubernetes.io/created-by": "report-portal",
                        "report": f"rpt-{r.randint(10, 99)}",
                    },
                },
                "spec": {
                    "completions": 1,
                    "backoffLimit": 0,
                    "template": {
                        "spec": {
                            "restartPolicy": "Never",
                            "containers": [
                                container(
                                    "rerun",
                                    "harbor.brightwell.internal/bi/report-runner:5.0.2",
                                    port=None,
                                )
                            ],
                        }
                    },
                },
                "status": {
                    "startTime": iso(t0),
                    "completionTime": iso(t0 + timedelta(minutes=r.randint(2, 9))),
                    "succeeded": 1,
                    "conditions": [
                        {
                            "type": "Complete",
                            "status": "True",
                            "lastTransitionTime": iso(t0 + timedelta(minutes=9)),
                        }
                    ],
                },
            }
        )
    for i in range(3):
        d = sched - timedelta(days=3 - i)
        objs.append(
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {
                    "name": f"nightly-export-{int(d.timestamp() // 60)}",
                    "namespace": ns,
                    "creationTimestamp": iso(d),
                    "labels": {"app": "nightly-export"},
                    "ownerReferences": [
                        {
                            "apiVersion": "batch/v1",
                            "kind": "CronJob",
                            "name": "nightly-export",
                            "controller": True,
                        }
                    ],
                },
                "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [job_c]}}},
                "status": {
                    "startTime": iso(d),
                    "completionTime": iso(d + timedelta(minutes=40 + i)),
                    "succeeded": 1,
                    "conditions": [
                        {
                            "type": "Complete",
                            "status": "True",
                            "lastTransitionTime": iso(d + timedelta(minutes=41)),
                        }
                    ],
                },
            }
        )
    jobname = f"nightly-export-{int(sched.timestamp() // 60)}"
    msg = (
        f'Error creating job: jobs.batch "{jobname}" is forbidden: '
        "exceeded quota: bi-reports-objects, "
        f"requested: count/jobs.batch=1, used: count/jobs.batch=40, limited: count/jobs.batch=40"
    )
    objs += [
        event(
            ns,
            "CronJob",
            "nightly-export",
            "FailedCreate",
            msg,
            sched,
            ago(now, minutes=2),
            41,
            source="cronjob-controller",
        ),
        event(
            ns,
            "Pod",
            "superset-6d8f7c9b5-lw58",
            "Unhealthy",
            "Liveness probe failed: HTTP probe failed with statuscode: 503",
            ago(now, minutes=33),
            ago(now, minutes=33),
            1,
        ),
    ]
    logs = []
    t = ago(now, hours=7)
    while t < now:
        logs.append(
            ecs(
                t,
                f"dashboard query ok chart={r.randint(100, 400)} rows={r.randint(10, 9000)} "
                f"{r.randint(100, 2000)}ms",
                "info",
                "superset",
                ns,
                "superset-6d8f7c9b5-kw31",
                "superset",
            )
        )
        if r.random() < 0.05:
            logs.append(
                ecs(
                    t,
                    "partner feed freshness check: nightly/claims_2026-11-28.parquet not found in "
                    "bw-partner-drop",
                    "warn",
                    "superset",
                    ns,
                    "superset-6d8f7c9b5-kw31",
                    "superset",
                )
            )
        t += timedelta(minutes=4)
    write_scenario(
        "partner-nightly-missing",
        {
            "id": "partner-nightly-missing",
            "title": "The nightly export is missing",
            "now": iso(now),
            "report": "the nightly export is missing, the partner says there's no file for "
            "yesterday in the drop bucket. "
            "did S3 creds expire again?",
            "truth": {
                "category": "quota_exceeded",
                "culprit": {"kind": "CronJob", "namespace": ns, "name": "nightly-export"},
                "evidence": ["exceeded quota: bi-reports-objects", "count/jobs.batch=40"],
                "fix": "Delete the finished report-rerun Jobs (and give them "
                "ttlSecondsAfterFinished) or raise "
                "count/jobs.batch in bi-reports-objects, then trigger nightly-export by hand",
            },
        },
        objs,
        {},
        logs,
    )
