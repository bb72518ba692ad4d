"""Quarry Analytics: statement-renderer spools merged PDFs under /tmp and never removes them;
each pod outgrows its 2Gi ephemeral-storage limit and is evicted, again and again, during
the month-end batch."""

from __future__ import annotations

from datetime import datetime, timedelta

from .common import (
    Revision,
    Scenario,
    container,
    cumulative,
    deployment,
    endpoints,
    event,
    namespace,
    node,
    parse,
    pod,
    pod_hash,
    running,
    service,
    simple_service,
    steps,
    suffix,
    terminated,
    ts,
    ts_ms,
    uid,
)

NOW = parse("2026-11-30T23:20:00Z")
NS = "reporting"
BATCH = parse("2026-11-30T21:00:00Z")
NODES = [
    "gke-quarry-prod-pool-b-4c1d9e2a-7xkq",
    "gke-quarry-prod-pool-b-4c1d9e2a-m2fp",
    "gke-quarry-prod-pool-b-9a07f311-zt5c",
    "gke-quarry-prod-pool-c-1e55b0d4-q8rw",
]
LIMIT = 2 * 1024**3
DISPATCH = "europe-docker.pkg.dev/quarry-prod/apps/statement-dispatch:1.6.3"
MESSAGE = "Pod ephemeral local storage usage exceeds the total limit of containers 2Gi. "


def build() -> Scenario:
    sc = Scenario(
        id="reporting-statements-evicted",
        title="Month-end statement run crawling, renderer pods keep disappearing",
        now=NOW,
        report="""
month-end statement run is crawling, the job has been retrying for over an hour and
statement-renderer pods keep vanishing and coming back with new names. kubectl shows a pile
of Failed pods in reporting. are the pool-b nodes sick again? we had disk trouble there in
october
""",
        truth={
            "category": "resource_exhaustion",
            "culprit": {"kind": "Deployment", "namespace": NS, "name": "statement-renderer"},
            "evidence": [MESSAGE.strip(), "Evicted", "/tmp/render-", "ephemeral-storage: 2Gi"],
            "fix": "Make statement-renderer delete its /tmp/render-* spool after each "
            "statement (the cleanup fails on non-empty directories), or give /tmp an "
            "emptyDir with a sizeLimit and raise the ephemeral-storage limit for the "
            "batch; the nodes are healthy.",
        },
    )
    created = NOW - timedelta(days=640)
    sc.add(namespace(NS, created, {"owner": "data-platform"}), namespace("monitoring", created))
    for i, name in enumerate(NODES):
        sc.add(
            node(
                name,
                NOW - timedelta(days=5, hours=i * 7),
                NOW,
                cpu="16",
                memory="64Gi",
                region="europe-west4",
                zone="bbbc"[i],
                instance="n2-standard-16",
                kubelet="v1.30.5-gke.1014001",
            )
        )
    rng = sc.rng
    name = "statement-renderer"
    main = container(
        name,
        "europe-docker.pkg.dev/quarry-prod/apps/statement-renderer:2.14.1",
        port=8000,
        cpu="1",
        memory="1536Mi",
        memory_limit="2Gi",
        extra_limits={"ephemeral-storage": "2Gi"},
        extra_requests={"ephemeral-storage": "512Mi"},
        env=[
            {"name": "RENDER_WORKERS", "value": "4"},
            {"name": "TMPDIR", "value": "/tmp"},
            {"name": "FONT_CACHE", "value": "/var/cache/fonts"},
        ],
        readiness="/ready",
        liveness="/live",
    )
    rolled = NOW - timedelta(days=4, hours=6)
    old = Revision(
        30,
        [{**main, "image": main["image"].replace("2.14.1", "2.14.0")}],
        rolled - timedelta(days=16),
        0,
    )
    rev = Revision(31, [main], rolled, 3)
    sc.add(deployment(NS, name, created, [old, rev], 3))
    h = rev.hash(NS, name)
    labels = {"app.kubernetes.io/name": name, "pod-template-hash": h}
    # pod lives: (start, evicted at or None)
    lives: list[tuple[datetime, datetime | None, str]] = [
        (rolled, parse("2026-11-30T21:41:12Z"), NODES[0]),
        (rolled + timedelta(seconds=20), parse("2026-11-30T21:52:40Z"), NODES[1]),
        (rolled + timedelta(seconds=41), parse("2026-11-30T22:04:05Z"), NODES[2]),
        (parse("2026-11-30T21:41:15Z"), parse("2026-11-30T22:31:50Z"), NODES[3]),
        (parse("2026-11-30T21:52:43Z"), parse("2026-11-30T22:44:31Z"), NODES[0]),
        (parse("2026-11-30T22:04:08Z"), parse("2026-11-30T22:57:02Z"), NODES[1]),
        (parse("2026-11-30T22:31:53Z"), parse("2026-11-30T23:13:48Z"), NODES[2]),
        (parse("2026-11-30T22:44:34Z"), None, NODES[3]),
        (parse("2026-11-30T22:57:05Z"), None, NODES[0]),
        (parse("2026-11-30T23:13:51Z"), None, NODES[1]),
    ]
    pods = []
    for i, (start, evicted, node_name) in enumerate(lives):
        pod_name = f"{name}-{h}-{suffix(f'renderer{i}')}"
        if evicted:
            st = [
                {
                    "ready": False,
                    "restartCount": 0,
                    "started": False,
                    "state": {
                        "terminated": terminated(
                            "ContainerStatusUnknown",
                            137,
                            start + timedelta(seconds=2),
                            evicted,
                            "The container could not be located when the pod was terminated",
                        )
                    },
                }
            ]
            p = pod(
                NS,
                pod_name,
                ("ReplicaSet", f"{name}-{h}"),
                node_name,
                [main],
                st,
                start,
                labels=labels,
                phase="Failed",
                ready=False,
                reason="Evicted",
                message=MESSAGE,
                conditions=[
                    {
                        "type": "DisruptionTarget",
                        "status": "True",
                        "reason": "TerminationByKubelet",
                        "message": "The node was low on resource: ephemeral-storage.",
                        "lastTransitionTime": ts(evicted),
                    },
                    {
                        "type": "Ready",
                        "status": "False",
                        "reason": "PodFailed",
                        "lastTransitionTime": ts(evicted),
                    },
                    {"type": "PodScheduled", "status": "True", "lastTransitionTime": ts(start)},
                ],
            )
        else:
            p = pod(
                NS,
                pod_name,
                ("ReplicaSet", f"{name}-{h}"),
                node_name,
                [main],
                [running(start + timedelta(seconds=2))],
                start,
                labels=labels,
            )
        pods.append((p, start, evicted))
        sc.add(p)
    live = [p for p, _, ev in pods if ev is None]
    sc.add(service(NS, name, created, 80, 8000), endpoints(NS, name, created, live, 80))
    # events (only the last hour survives)
    for p, start, evicted in pods:
        pod_name = p["metadata"]["name"]
        if evicted and evicted > NOW - timedelta(hours=1):
            sc.add(
                event(
                    NS,
                    "Pod",
                    pod_name,
                    "Evicted",
                    MESSAGE,
                    evicted,
                    type_="Warning",
                    host=p["spec"]["nodeName"],
                ),
                event(
                    NS,
                    "Pod",
                    pod_name,
                    "Killing",
                    f"Stopping container {name}",
                    evicted + timedelta(seconds=1),
                    host=p["spec"]["nodeName"],
                ),
            )
        if start > NOW - timedelta(hours=1):
            sc.add(
                event(
                    NS,
                    "ReplicaSet",
                    f"{name}-{h}",
                    "SuccessfulCreate",
                    f"Created pod: {pod_name}",
                    start,
                    component="replicaset-controller",
                ),
                event(
                    NS,
                    "Pod",
                    pod_name,
                    "Scheduled",
                    f"Successfully assigned {NS}/{pod_name} to {p['spec']['nodeName']}",
                    start,
                    component="default-scheduler",
                ),
                event(
                    NS,
                    "Pod",
                    pod_name,
                    "Pulled",
                    f'Container image "{main["image"]}" already present on machine',
                    start + timedelta(seconds=1),
                    host=p["spec"]["nodeName"],
                ),
                event(
                    NS,
                    "Pod",
                    pod_name,
                    "Started",
                    f"Started container {name}",
                    start + timedelta(seconds=2),
                    host=p["spec"]["nodeName"],
                ),
            )
    # the batch job
    cron = "month-end-statements"
    job = f"{cron}-29409720"
    sc.add(
        {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": {
                "name": cron,
                "namespace": NS,
                "uid": uid("CronJob", NS, cron),
                "creationTimestamp": ts(created),
                "labels": {"app.kubernetes.io/name": cron},
            },
            "spec": {
                "schedule": "0 21 L * *",
                "concurrencyPolicy": "Forbid",
                "jobTemplate": {
                    "spec": {
                        "backoffLimit": 2,
                        "template": {
                            "spec": {
                                "restartPolicy": "Never",
                                "containers": [
                                    {
                                        "name": "dispatcher",
                                        "image": DISPATCH,
                                        "args": ["--period=2026-11", "--concurrency=12"],
                                        "resources": {
                                            "requests": {"cpu": "200m", "memory": "256Mi"},
                                            "limits": {"memory": "512Mi"},
                                        },
                                    }
                                ],
                            }
                        },
                    }
                },
            },
            "status": {
                "active": [{"kind": "Job", "name": job, "namespace": NS}],
                "lastScheduleTime": ts(BATCH),
            },
        }
    )
    job_container = {
        "name": "dispatcher",
        "image": DISPATCH,
        "args": ["--period=2026-11", "--concurrency=12"],
        "resources": {
            "requests": {"cpu": "200m", "memory": "256Mi"},
            "limits": {"memory": "512Mi"},
        },
    }
    sc.add(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": job,
                "namespace": NS,
                "uid": uid("Job", NS, job),
                "creationTimestamp": ts(BATCH),
                "labels": {"app.kubernetes.io/name": cron},
                "ownerReferences": [
                    {
                        "apiVersion": "batch/v1",
                        "kind": "CronJob",
                        "name": cron,
                        "controller": True,
                        "uid": uid("CronJob", NS, cron),
                    }
                ],
            },
            "spec": {
                "backoffLimit": 2,
                "completions": 1,
                "parallelism": 1,
                "template": {"spec": {"restartPolicy": "Never", "containers": [job_container]}},
            },
            "status": {"active": 1, "startTime": ts(BATCH), "ready": 1},
        }
    )
    job_pod_name = f"{job}-{suffix('jobpod')}"
    sc.add(
        pod(
            NS,
            job_pod_name,
            ("Job", job),
            NODES[2],
            [job_container],
            [running(BATCH + timedelta(seconds=3))],
            BATCH,
            labels={"batch.kubernetes.io/job-name": job, "job-name": job},
        )
    )
    # bystanders
    _, metabase = simple_service(
        sc,
        NS,
        "metabase",
        "metabase/metabase:v0.50.21",
        replicas=1,
        nodes=NODES[3:],
        created=created,
        rolled=NOW - timedelta(days=6),
        port=3000,
        number=12,
        memory="2Gi",
        readiness="/api/health",
    )
    simple_service(
        sc,
        NS,
        "warehouse-proxy",
        "europe-docker.pkg.dev/quarry-prod/apps/warehouse-proxy:0.9.7",
        replicas=2,
        nodes=NODES,
        created=created,
        rolled=NOW - timedelta(days=3, hours=2),
        port=8443,
        number=9,
    )
    sc.add(
        event(
            NS,
            "Pod",
            metabase[0]["metadata"]["name"],
            "Unhealthy",
            "Readiness probe failed: HTTP probe failed with statuscode: 503",
            NOW - timedelta(minutes=51),
            NOW - timedelta(minutes=50),
            count=3,
            type_="Warning",
            host=NODES[3],
        )
    )

    # --- logs of the renderer: per life, statements rendered, spool grows, cleanup fails
    usage: dict[str, list[tuple[datetime, float]]] = {}
    for p, start, evicted in pods:
        pod_name = p["metadata"]["name"]
        end = evicted or NOW
        t = start + timedelta(seconds=3)
        lines = [
            f'{{"ts":"{ts_ms(t)}","level":"info","logger":"renderer.app",'
            f'"event":"startup","workers":4,"tmpdir":"/tmp","version":"2.14.1"}}'
        ]
        sc.doc(t, NS, pod_name, name, name, "info", "startup workers=4 tmpdir=/tmp version=2.14.1")
        spool = 58e6  # image layer writes + font cache
        busy_from = max(start, BATCH)
        if evicted:
            per_minute = (LIMIT * 1.003 - spool) / ((evicted - busy_from).total_seconds() / 60)
        else:
            per_minute = 42e6
        samples = [(start, spool)]
        for moment in steps(start + timedelta(seconds=60), end, 60):
            if moment >= BATCH:
                spool += per_minute * rng.uniform(0.8, 1.2)
            else:
                spool += rng.uniform(0, 0.02e6)
            samples.append((moment, min(spool, LIMIT * 1.003)))
        usage[pod_name] = samples
        t = max(start, BATCH - timedelta(minutes=30)) + timedelta(seconds=5)
        while t < end:
            t += timedelta(seconds=rng.randint(5, 14) if t >= BATCH else rng.randint(120, 400))
            if t >= end:
                break
            acct = f"AC-{rng.randint(100000, 999999)}"
            job_id = f"{rng.getrandbits(32):08x}"
            pages = rng.randint(3, 60)
            ms = rng.randint(900, 4800)
            msg = f"rendered statement account={acct} pages={pages} duration_ms={ms}"
            lines.append(
                f'{{"ts":"{ts_ms(t)}","level":"info","logger":"renderer.render",'
                f'"event":"rendered","account":"{acct}","pages":{pages},'
                f'"duration_ms":{ms},"spool":"/tmp/render-{job_id}"}}'
            )
            if rng.random() < 0.25:
                sc.doc(
                    t,
                    NS,
                    pod_name,
                    name,
                    name,
                    "info",
                    msg,
                    **{"labels.spool": f"/tmp/render-{job_id}"},
                )
            if t >= BATCH and rng.random() < 0.18:
                t2 = t + timedelta(milliseconds=40)
                w = (
                    f"could not remove spool /tmp/render-{job_id}: [Errno 39] Directory not "
                    f"empty: '/tmp/render-{job_id}/pages'"
                )
                lines.append(
                    f'{{"ts":"{ts_ms(t2)}","level":"warning","logger":"renderer.spool",'
                    f'"event":"cleanup_failed","error":"{w}"}}'
                )
                sc.doc(t2, NS, pod_name, name, name, "warning", w, **{"error.type": "OSError"})
        if evicted is None:  # an evicted pod's containers are gone, and their logs with them
            for line in lines:
                sc.log(NS, pod_name, name, line)
    # dispatcher (the batch): retries on the renderer
    t = BATCH + timedelta(seconds=4)
    sc.log(
        NS,
        job_pod_name,
        "dispatcher",
        f"{ts(t)} INFO dispatch: period=2026-11 "
        "accounts=184223 concurrency=12 target=http://statement-renderer.reporting.svc",
    )
    sc.doc(
        t,
        NS,
        job_pod_name,
        "dispatcher",
        cron,
        "info",
        "dispatch: period=2026-11 accounts=184223 concurrency=12",
    )
    done = 0
    evictions = sorted(ev for _, _, ev in pods if ev)
    while t < NOW:
        t += timedelta(seconds=rng.randint(20, 45))
        if t >= NOW:
            break
        near = [ev for ev in evictions if timedelta(0) <= t - ev < timedelta(minutes=3)]
        if near:
            n = rng.randint(6, 19)
            msg = (
                f"retrying {n} statements: POST http://statement-renderer.reporting.svc/"
                "render: connection reset by peer (attempt 2/5)"
            )
            sc.log(NS, job_pod_name, "dispatcher", f"{ts(t)} WARN {msg}")
            sc.doc(t, NS, job_pod_name, "dispatcher", cron, "warn", msg)
        done += rng.randint(150, 420) if not near else rng.randint(10, 60)
        if rng.random() < 0.3:
            per_minute = int(done / max((t - BATCH).seconds, 1) * 60)
            msg = f"progress: {done}/184223 statements, {per_minute}/min"
            sc.log(NS, job_pod_name, "dispatcher", f"{ts(t)} INFO {msg}")
            sc.doc(t, NS, job_pod_name, "dispatcher", cron, "info", msg)
    # --- metrics
    times = steps(NOW - timedelta(hours=3), NOW)
    for p, start, evicted in pods:
        pod_name = p["metadata"]["name"]
        labels_m = {"namespace": NS, "pod": pod_name, "container": name}
        series = [(m, v) for m, v in usage[pod_name] if m >= NOW - timedelta(hours=3)]
        if series:
            sc.metrics.gauge(
                "container_fs_usage_bytes",
                {**labels_m, "device": "/dev/sda1"},
                series,
                "Number of bytes that are consumed by the container on this filesystem.",
            )
        mem = [
            (m, 610e6 + (220e6 if m >= BATCH else 0) + rng.uniform(-30e6, 30e6))
            for m in times
            if start <= m <= (evicted or NOW)
        ]
        if mem:
            sc.metrics.gauge("container_memory_working_set_bytes", labels_m, mem)
            sc.metrics.counter(
                "kube_pod_container_status_restarts", labels_m, [(m, 0) for m, _ in mem[::3]]
            )
        cpu = [m for m in times if start <= m <= (evicted or NOW)]
        if cpu:
            sc.metrics.counter(
                "container_cpu_usage_seconds",
                labels_m,
                cumulative(cpu, lambda m: 0.85 if m >= BATCH else 0.03),
            )
        limit_series = [(m, float(LIMIT)) for m in cpu[::5]]
        if limit_series:
            sc.metrics.gauge(
                "kube_pod_container_resource_limits",
                {**labels_m, "resource": "ephemeral_storage", "unit": "byte"},
                limit_series,
            )
        reqs = [m for m in times if start <= m <= (evicted or NOW)]
        if reqs:
            sc.metrics.counter(
                "http_requests",
                {"namespace": NS, "pod": pod_name, "service": name, "code": "200"},
                cumulative(reqs, lambda m: 1.9 if m >= BATCH else 0.01),
            )
    for node_name in NODES:
        sc.metrics.gauge(
            "node_filesystem_avail_bytes",
            {"instance": node_name, "mountpoint": "/", "device": "/dev/sda1", "fstype": "ext4"},
            [(m, 61e9 + rng.uniform(-1.5e9, 1.5e9)) for m in times[::5]],
        )
    _ = pod_hash
    return sc
