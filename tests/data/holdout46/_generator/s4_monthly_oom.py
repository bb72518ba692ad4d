"""4. oom_killed: the usage-rollup CronJob runs in monthly mode on the 1st (30 daily partitions
instead of one) and its worker is OOM-killed at the 2Gi limit on every retry. Decoys: the
notifier's readiness warnings and ClickHouse's "client has gone away" lines."""

from __future__ import annotations

from datetime import timedelta

from . import _kit as k

IMG = "ghcr.io/orchardline/usage-rollup:4.6.1"
IMG_ID = (
    "ghcr.io/orchardline/usage-rollup@sha256:4b0c9e1d7a22f36c8e5b91d0a7f3c2e6b8d4f1a09c7e3b5d2f6a8"
    "c0e4b7d9f13"
)

SID = "usage-rollup-first-of-month"
LIMIT = 2147483648


def build(root) -> None:
    s = k.Scenario(SID, "2026-12-01T01:12:00Z", 4604)
    for ns in ("default", "kube-system", "analytics", "web"):
        s.add(k.namespace(s, ns, s.ago(days=330)))
    nodes = []
    for i in range(4):
        zone = ["europe-west4-a", "europe-west4-b", "europe-west4-c", "europe-west4-a"][i]
        nm = (
            f"gke-orchard-prod-pool-2-{['3f1c9a2e', '8b7d0c14', 'c2e5f6a9', '9d4a1b7e'][i]}-"
            f"{s.suffix(4)}"
        )
        nodes.append(
            k.node(
                s,
                nm,
                s.ago(days=6, hours=20 - i),
                zone,
                "e2-standard-8",
                cpu="8",
                memory="32880632Ki",
                alloc_cpu="7910m",
                alloc_mem="29094392Ki",
                runtime="containerd://1.7.10",
                kubelet="v1.28.3-gke.1286000",
                internal_ip=f"10.164.0.{31 + i}",
                extra_labels={"cloud.google.com/gke-nodepool": "pool-2"},
            )
        )
    s.add(*nodes)
    nn = [n["metadata"]["name"] for n in nodes]
    ns = "analytics"
    labels = {"app": "usage-rollup"}
    c = k.container(
        "rollup",
        IMG,
        cpu="1",
        memory="1Gi",
        limit_memory="2Gi",
        command=["usage-rollup"],
        args=[
            "--period",
            "auto",
            "--source",
            "gs://orchard-usage-events",
            "--sink",
            "clickhouse://clickhouse.analytics.svc:9000/usage",
        ],
        env=[{"name": "ROLLUP_WORKERS", "value": "4"}, {"name": "GOMEMLIMIT", "value": "1800MiB"}],
    )
    spec = k.pod_spec([c], restart="Never", sa="usage-rollup")
    cj = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": k.meta(s, "CronJob", "usage-rollup", ns, s.ago(days=290), labels=labels),
        "spec": {
            "schedule": "15 0 * * *",
            "timeZone": "Etc/UTC",
            "concurrencyPolicy": "Forbid",
            "suspend": False,
            "startingDeadlineSeconds": 3600,
            "successfulJobsHistoryLimit": 3,
            "failedJobsHistoryLimit": 2,
            "jobTemplate": {
                "spec": {
                    "backoffLimit": 3,
                    "activeDeadlineSeconds": 7200,
                    "template": {"metadata": {"labels": labels}, "spec": spec},
                }
            },
        },
        "status": {
            "lastScheduleTime": "2026-12-01T00:15:00Z",
            "lastSuccessfulTime": "2026-11-30T00:29:53Z",
        },
    }
    s.add(cj)

    def job(sched_s: str, outcome: str, pods_spec: list) -> None:
        sched = k.parse(sched_s)
        jn = f"usage-rollup-{int(sched.timestamp() // 60)}"
        jl = dict(
            labels,
            **{
                "batch.kubernetes.io/job-name": jn,
                "job-name": jn,
                "batch.kubernetes.io/controller-uid": s.uid("Job", ns, jn),
                "controller-uid": s.uid("Job", ns, jn),
            },
        )
        jo = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": k.meta(
                s,
                "Job",
                jn,
                ns,
                sched,
                labels=jl,
                owner=k.owner_of(cj),
                annotations={"batch.kubernetes.io/job-tracking": ""},
            ),
            "spec": {
                "backoffLimit": 3,
                "activeDeadlineSeconds": 7200,
                "completions": 1,
                "parallelism": 1,
                "completionMode": "NonIndexed",
                "selector": {
                    "matchLabels": {"batch.kubernetes.io/controller-uid": s.uid("Job", ns, jn)}
                },
                "template": {"metadata": {"labels": jl}, "spec": spec},
            },
            "status": {"startTime": k.rfc(sched)},
        }
        pods = []
        for _idx, (created, started, finished, reason, code, node_i) in enumerate(pods_spec):
            pn = f"{jn}-{s.suffix()}"
            term = k.terminated(reason, code, started, finished, pn)
            st = k.cs_terminated("rollup", IMG, IMG_ID, term)
            ph = "Succeeded" if code == 0 else "Failed"
            conds = k.pod_conditions(
                created,
                ready=False,
                reason="PodCompleted" if code == 0 else "PodFailed",
                ready_at=finished,
            )
            for cd in conds:
                if cd["type"] in ("Ready", "ContainersReady"):
                    cd["lastTransitionTime"] = k.rfc(finished)
            p = k.pod(
                s,
                ns,
                pn,
                {"apiVersion": "batch/v1", "kind": "Job", "name": jn, "uid": jo["metadata"]["uid"]},
                jl,
                spec,
                nn[node_i],
                nodes[node_i]["status"]["addresses"][0]["address"],
                created,
                ph,
                conds,
                [st],
            )
            pods.append(p)
        if outcome == "ok":
            fin = k.parse(
                pods[-1]["status"]["containerStatuses"][0]["state"]["terminated"]["finishedAt"]
            )
            jo["status"].update(
                {
                    "succeeded": 1,
                    "completionTime": k.rfc(fin + timedelta(seconds=1)),
                    "ready": 0,
                    "conditions": [
                        {
                            "type": "Complete",
                            "status": "True",
                            "lastProbeTime": k.rfc(fin),
                            "lastTransitionTime": k.rfc(fin + timedelta(seconds=1)),
                        }
                    ],
                }
            )
        else:
            fin = k.parse(
                pods[-1]["status"]["containerStatuses"][0]["state"]["terminated"]["finishedAt"]
            )
            jo["status"].update(
                {
                    "failed": len(pods),
                    "ready": 0,
                    "conditions": [
                        {
                            "type": "Failed",
                            "status": "True",
                            "reason": "BackoffLimitExceeded",
                            "message": "Job has reached the specified backoff limit",
                            "lastProbeTime": k.rfc(fin + timedelta(seconds=1)),
                            "lastTransitionTime": k.rfc(fin + timedelta(seconds=1)),
                        }
                    ],
                }
            )
        s.add(jo, *pods)
        return jo, pods

    def daily(day: str, node_i: int, minutes: int, secs: int):
        t = k.parse(f"{day}T00:15:00Z")
        return [
            (
                t + timedelta(seconds=1),
                t + timedelta(seconds=6),
                t + timedelta(minutes=minutes, seconds=secs),
                "Completed",
                0,
                node_i,
            )
        ]

    rows = {"2026-11-28": 13_118_402, "2026-11-29": 12_604_911, "2026-11-30": 13_977_230}
    peaks = {"2026-11-28": 641, "2026-11-29": 622, "2026-11-30": 688}
    for day, n_i, m, sec in (
        ("2026-11-28", 1, 13, 12),
        ("2026-11-29", 2, 12, 40),
        ("2026-11-30", 0, 14, 53),
    ):
        jo, pods = job(f"{day}T00:15:00Z", "ok", daily(day, n_i, m, sec))
        p = pods[0]
        pn = p["metadata"]["name"]
        t0 = k.parse(p["status"]["containerStatuses"][0]["state"]["terminated"]["startedAt"])
        prev = (k.parse(day + "T00:00:00Z") - timedelta(days=1)).strftime("%Y-%m-%d")
        s.log(
            t0,
            ns,
            pn,
            "rollup",
            "info",
            "usage-rollup 4.6.1 starting period=auto workers=4 gomemlimit=1800MiB",
            service="usage-rollup",
        )
        s.log(
            t0 + timedelta(seconds=1),
            ns,
            pn,
            "rollup",
            "info",
            f"period=auto resolved to daily: {prev} (1 partition)",
            service="usage-rollup",
        )
        s.log(
            t0 + timedelta(seconds=2),
            ns,
            pn,
            "rollup",
            "info",
            f"loading gs://orchard-usage-events/dt={prev}/ (218 files, 6.1 GiB)",
            service="usage-rollup",
        )
        s.log(
            t0 + timedelta(minutes=m - 1),
            ns,
            pn,
            "rollup",
            "info",
            f"aggregated rows_in={rows[day]:,} groups=1,904,221 rss_mb={peaks[day]}",
            service="usage-rollup",
        )
        s.log(
            t0 + timedelta(minutes=m, seconds=sec - 8),
            ns,
            pn,
            "rollup",
            "info",
            f"wrote usage.daily_rollup partition {prev}: 1,904,221 rows",
            service="usage-rollup",
        )
        s.log(
            t0 + timedelta(minutes=m, seconds=sec - 7),
            ns,
            pn,
            "rollup",
            "info",
            f"done period={prev} duration={m}m{sec - 7}s peak_rss_mb={peaks[day]}",
            service="usage-rollup",
        )

    # today's: monthly mode, four attempts, each OOMKilled
    t = k.parse("2026-12-01T00:15:00Z")
    attempts = []
    node_order = [3, 1, 2, 3]
    for a in range(4):
        created = t + timedelta(seconds=1)
        started = created + timedelta(seconds=5)
        finished = started + timedelta(minutes=11, seconds=40 + 13 * a)
        attempts.append((created, started, finished, "OOMKilled", 137, node_order[a]))
        t = finished + timedelta(seconds=10 * 2**a)
    jo, fails = job("2026-12-01T00:15:00Z", "fail", attempts)
    jn = jo["metadata"]["name"]
    s.add(
        k.event(
            s,
            ns,
            "CronJob",
            "usage-rollup",
            "SuccessfulCreate",
            f"Created job {jn}",
            k.parse("2026-12-01T00:15:00Z"),
            component="cronjob-controller",
            api_version="batch/v1",
            involved_uid=cj["metadata"]["uid"],
        )
    )
    for p in fails:
        pn = p["metadata"]["name"]
        uid = p["metadata"]["uid"]
        created = k.parse(p["metadata"]["creationTimestamp"])
        node_name = p["spec"]["nodeName"]
        fp = "spec.containers{rollup}"
        s.add(
            k.event(
                s,
                ns,
                "Job",
                jn,
                "SuccessfulCreate",
                f"Created pod: {pn}",
                created,
                component="job-controller",
                api_version="batch/v1",
                involved_uid=jo["metadata"]["uid"],
            ),
            k.event(
                s,
                ns,
                "Pod",
                pn,
                "Scheduled",
                f"Successfully assigned {ns}/{pn} to {node_name}",
                created,
                component="default-scheduler",
                involved_uid=uid,
            ),
            k.event(
                s,
                ns,
                "Pod",
                pn,
                "Pulled",
                f'Container image "{IMG}" already present on machine',
                created + timedelta(seconds=2),
                host=node_name,
                field_path=fp,
                involved_uid=uid,
            ),
            k.event(
                s,
                ns,
                "Pod",
                pn,
                "Created",
                "Created container rollup",
                created + timedelta(seconds=3),
                host=node_name,
                field_path=fp,
                involved_uid=uid,
            ),
            k.event(
                s,
                ns,
                "Pod",
                pn,
                "Started",
                "Started container rollup",
                created + timedelta(seconds=5),
                host=node_name,
                field_path=fp,
                involved_uid=uid,
            ),
        )
    last_fin = attempts[-1][2]
    s.add(
        k.event(
            s,
            ns,
            "Job",
            jn,
            "BackoffLimitExceeded",
            "Job has reached the specified backoff limit",
            last_fin + timedelta(seconds=1),
            etype="Warning",
            component="job-controller",
            api_version="batch/v1",
            involved_uid=jo["metadata"]["uid"],
        ),
        k.event(
            s,
            ns,
            "CronJob",
            "usage-rollup",
            "SawCompletedJob",
            f"Saw completed job: {jn}, status: Failed",
            last_fin + timedelta(seconds=2),
            component="cronjob-controller",
            api_version="batch/v1",
            involved_uid=cj["metadata"]["uid"],
        ),
    )
    for a, p in enumerate(fails):
        pn = p["metadata"]["name"]
        started = attempts[a][1]
        lines = [
            (0, "info", "usage-rollup 4.6.1 starting period=auto workers=4 gomemlimit=1800MiB"),
            (
                1,
                "info",
                "period=auto resolved to monthly (day of month is 1): 2026-11-01..2026-11-30 (30 "
                "partitions)",
            ),
            (
                2,
                "info",
                "monthly mode: aggregating all partitions in memory by (account_id, sku, day)",
            ),
        ]
        rss = 240
        rows_acc = 0
        for part in range(1, 19):
            rows_acc += s.rng.randint(12_400_000, 14_300_000)
            rss = min(2030, 240 + part * 101 + s.rng.randint(0, 20))
            off = 2 + part * 37
            if off > (attempts[a][2] - started).total_seconds() - 3:
                break
            lines.append(
                (
                    off,
                    "info",
                    f"loaded partition dt=2026-11-{part:02d} ({part}/30) rows_in={rows_acc:,} "
                    f"groups={int(rows_acc * 0.139):,} rss_mb={rss}",
                )
            )
            if rss > 1800:
                lines.append(
                    (
                        off + 1,
                        "warn",
                        f"heap {rss}MiB above soft limit 1800MiB, GC running continuously "
                        f"(gc_cpu_fraction=0.61)",
                    )
                )
        for off, lvl, msg in lines:
            s.log(
                started + timedelta(seconds=off), ns, pn, "rollup", lvl, msg, service="usage-rollup"
            )
        text = [
            f"{k.rfc(started + timedelta(seconds=off))} {lvl.upper():5s} {msg}"
            for off, lvl, msg in lines
        ]
        s.pod_log(ns, pn, "rollup", text)

    # --- neighbours -------------------------------------------------------------------------------
    ch_labels = {"app": "clickhouse"}
    chc = k.container(
        "clickhouse",
        "clickhouse/clickhouse-server:23.8.8.20",
        ports=[
            {"name": "native", "containerPort": 9000, "protocol": "TCP"},
            {"name": "http", "containerPort": 8123, "protocol": "TCP"},
        ],
        cpu="2",
        memory="8Gi",
        readiness=k.http_probe("/ping", "http", delay=10),
    )
    ch_spec = k.pod_spec([chc])
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": k.meta(s, "StatefulSet", "clickhouse", ns, s.ago(days=290), labels=ch_labels),
        "spec": {
            "replicas": 2,
            "serviceName": "clickhouse",
            "selector": {"matchLabels": ch_labels},
            "template": {"metadata": {"labels": ch_labels}, "spec": ch_spec},
            "updateStrategy": {"type": "RollingUpdate"},
        },
        "status": {
            "replicas": 2,
            "readyReplicas": 2,
            "currentReplicas": 2,
            "updatedReplicas": 2,
            "availableReplicas": 2,
            "currentRevision": "clickhouse-5f7b8c9d6",
            "updateRevision": "clickhouse-5f7b8c9d6",
            "observedGeneration": 7,
            "collisionCount": 0,
        },
    }
    s.add(sts)
    ch_pods = []
    for i in range(2):
        pc = s.ago(days=6, hours=10 - i)
        p = k.pod(
            s,
            ns,
            f"clickhouse-{i}",
            k.owner_of(sts),
            dict(
                ch_labels,
                **{
                    "controller-revision-hash": "clickhouse-5f7b8c9d6",
                    "statefulset.kubernetes.io/pod-name": f"clickhouse-{i}",
                },
            ),
            ch_spec,
            nn[i],
            nodes[i]["status"]["addresses"][0]["address"],
            pc,
            "Running",
            k.pod_conditions(pc, ready_at=pc + timedelta(seconds=30)),
            [
                k.cs_running(
                    "clickhouse",
                    "clickhouse/clickhouse-server:23.8.8.20",
                    "docker.io/clickhouse/clickhouse-server@" + s.digest("ch"),
                    pc + timedelta(seconds=4),
                )
            ],
        )
        ch_pods.append(p)
    s.add(*ch_pods)
    chsvc = k.service(
        s,
        ns,
        "clickhouse",
        ch_labels,
        [
            {"name": "native", "port": 9000, "protocol": "TCP", "targetPort": 9000},
            {"name": "http", "port": 8123, "protocol": "TCP", "targetPort": 8123},
        ],
        s.ago(days=290),
    )
    chep = k.endpoints(s, chsvc, ch_pods)
    s.add(chsvc, chep)
    for a in attempts:
        s.log(
            a[2] + timedelta(seconds=1),
            ns,
            "clickhouse-0",
            "clickhouse",
            "warn",
            "<Warning> TCPHandler: Client has gone away.",
            service="clickhouse",
        )
    notifier = k.healthy_deployment(
        s,
        "web",
        "notifier",
        "ghcr.io/orchardline/notifier:2.2.0",
        2,
        nodes[2:],
        s.ago(days=100),
        s.ago(days=4),
        revision=17,
        memory="192Mi",
    )
    k.add_parts(s, notifier)
    np0 = notifier["pods"][0]
    s.add(
        k.event(
            s,
            "web",
            "Pod",
            np0["metadata"]["name"],
            "Unhealthy",
            f'Readiness probe failed: Get "http://{np0["status"]["podIP"]}:8080/healthz": context '
            "deadline "
            f"exceeded (Client.Timeout exceeded while awaiting headers)",
            s.ago(minutes=41),
            s.ago(minutes=9),
            count=6,
            etype="Warning",
            host=np0["spec"]["nodeName"],
            field_path="spec.containers{notifier}",
            involved_uid=np0["metadata"]["uid"],
        )
    )
    t = s.ago(hours=3)
    while t < s.now:
        if s.rng.random() < 0.35:
            s.log(
                t,
                "web",
                np0["metadata"]["name"],
                "notifier",
                "warn",
                "smtp relay smtp-relay.orchardline.net:587 slow: EHLO took "
                f"{s.rng.uniform(2.5, 6.0):.1f}s, "
                f"queue_depth={s.rng.randint(40, 180)}",
                service="notifier",
            )
        t += timedelta(minutes=2)
    web = k.healthy_deployment(
        s,
        "web",
        "dashboard",
        "ghcr.io/orchardline/dashboard:5.11.2",
        2,
        nodes[:2],
        s.ago(days=200),
        s.ago(days=2, hours=6),
        revision=63,
    )
    k.add_parts(s, web)
    s.log(
        s.ago(minutes=20),
        "web",
        web["pods"][0]["metadata"]["name"],
        "dashboard",
        "warn",
        "usage widget: no rows in usage.monthly_rollup for period 2026-11, showing last complete "
        "period 2026-10",
        service="dashboard",
    )

    # --- metrics ----------------------------------------------------------------------------------
    pts = s.steps(150)
    for a, p in enumerate(fails):
        pn = p["metadata"]["name"]
        started, finished = attempts[a][1], attempts[a][2]
        vals = []
        for t in pts:
            if started <= t <= finished:
                frac = (t - started).total_seconds() / (finished - started).total_seconds()
                vals.append(
                    (
                        t,
                        int(
                            min(
                                LIMIT - 3_000_000,
                                2.6e8 + frac * 1.9e9 + s.rng.randint(0, 2_000_000),
                            )
                        ),
                    )
                )
        s.series(
            "container_memory_working_set_bytes",
            "gauge",
            "Current working set of the container in bytes.",
            {"namespace": ns, "pod": pn, "container": "rollup", "job": "kubelet"},
            vals,
        )
    for a, p in enumerate(fails):
        s.series(
            "kube_pod_container_resource_limits",
            "gauge",
            "The number of requested limit resource by a container.",
            {
                "job": "kube-state-metrics",
                "namespace": ns,
                "pod": p["metadata"]["name"],
                "container": "rollup",
                "resource": "memory",
                "unit": "byte",
            },
            [(t, LIMIT) for t in pts if attempts[a][1] <= t],
        )
        s.series(
            "kube_pod_container_status_last_terminated_reason",
            "gauge",
            "Describes the last reason the container was in terminated state.",
            {
                "job": "kube-state-metrics",
                "namespace": ns,
                "pod": p["metadata"]["name"],
                "container": "rollup",
                "reason": "OOMKilled",
            },
            [(t, 1) for t in pts if t > attempts[a][2]],
        )
    s.series(
        "kube_job_status_failed",
        "gauge",
        "The number of pods which reached Phase Failed.",
        {"job": "kube-state-metrics", "namespace": ns, "job_name": jn},
        [(t, sum(1 for a in attempts if a[2] <= t)) for t in pts if t >= attempts[0][0]],
    )
    for p in ch_pods:
        s.series(
            "container_memory_working_set_bytes",
            "gauge",
            "",
            {
                "namespace": ns,
                "pod": p["metadata"]["name"],
                "container": "clickhouse",
                "job": "kubelet",
            },
            [(t, 3.1e9 + s.rng.randint(0, 2e8)) for t in pts],
        )

    s.write(
        root,
        {
            "title": "November usage rollup failed overnight",
            "report": "the usage-rollup job failed last night and the billing dashboard shows "
            "nothing for November. "
            "clickhouse was complaining around the same time and notifier has been flapping too, "
            "so maybe "
            "something node-level? it's been fine every night this week\n",
            "truth": {
                "category": "oom_killed",
                "culprit": {"kind": "CronJob", "namespace": "analytics", "name": "usage-rollup"},
                "evidence": [
                    "OOMKilled",
                    "exitCode: 137",
                    "resolved to monthly",
                    "BackoffLimitExceeded",
                    "2Gi",
                ],
                "fix": "On the 1st the rollup aggregates 30 partitions in memory (≈2 GiB+) "
                "instead of one (≈650 MiB); "
                "give the monthly run more memory (a separate monthly CronJob with a 6Gi limit) "
                "or make monthly "
                "mode sum the daily rollups instead of re-reading raw events, then re-run the job "
                "for 2026-11.",
            },
        },
    )
