# ruff: noqa: E501  (verbatim log lines and Kubernetes messages are kept whole)
"""Scenario 1: eta-estimator 2.8.0 was built for arm64; amd64 nodes cannot exec it.

The new ReplicaSet's pods crash at once ("exec format error", exit 255) while the old
ReplicaSet keeps serving. A finance CronJob failing its runs for its own reason (a
rotated database password) is the loud bystander.
"""

from __future__ import annotations

from .k8s import (
    Clock,
    Obj,
    configmap,
    container,
    crash_times,
    cstatus,
    deployment,
    endpoints,
    event,
    http_probe,
    meta,
    namespace,
    node,
    pod,
    pod_hash,
    replicaset,
    running,
    service,
    suffix,
    template,
    terminated,
    uid,
)
from .out import Metrics, ecs, healthy_app, write

SID = "dispatch-eta-alerts"
NOW = "2026-11-24T16:40:00Z"
NS = "dispatch"
APP = "eta-estimator"


def build() -> None:
    c = Clock(NOW)
    nodes = [
        f"ip-10-31-{z}-{n}.eu-west-1.compute.internal"
        for z, n in ((1, 44), (1, 203), (2, 17), (2, 129), (3, 88), (3, 151))
    ]
    zones = ["eu-west-1a", "eu-west-1a", "eu-west-1b", "eu-west-1b", "eu-west-1c", "eu-west-1c"]
    objs: list[Obj] = [namespace(n, c.at(60 * 24 * 400)) for n in (NS, "finance", "kube-system")]
    objs += [node(c, n, z, "general-amd64") for n, z in zip(nodes, zones, strict=False)]

    old_img, new_img = f"ghcr.io/larkspur/{APP}:2.7.3", f"ghcr.io/larkspur/{APP}:2.8.0"
    env = [
        {"name": "OSRM_URL", "value": "http://osrm-backend.dispatch.svc:5000"},
        {"name": "LOG_FORMAT", "value": "json"},
        {"name": "GOMAXPROCS", "value": "2"},
    ]

    def tmpl(img: str, build_id: str) -> Obj:
        t = template(
            {"app": APP, "team": "dispatch-core"},
            [
                container(
                    APP,
                    img,
                    port=8080,
                    cpu="500m",
                    memory="384Mi",
                    mem_limit="768Mi",
                    env=env,
                    readiness=http_probe("/readyz", delay=3, period=5, timeout=1),
                    liveness=http_probe("/livez", delay=10, period=15, timeout=2),
                )
            ],
        )
        t["metadata"]["annotations"] = {"ci.larkspur.io/build": build_id, "ci.larkspur.io/commit": suffix(build_id, 7)}
        return t

    t_old, t_new = tmpl(old_img, "eta-5488"), tmpl(new_img, "eta-5521")
    rollout = 38  # minutes ago
    h_old, h_new = pod_hash(APP, 13), pod_hash(APP, 14)
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 2, "maxUnavailable": 0}}
    objs.append(
        deployment(
            c,
            NS,
            APP,
            t_new,
            replicas=4,
            revision=14,
            created_days=210,
            ready=4,
            updated=2,
            available=4,
            unavailable=2,
            strategy=strategy,
            observed_replicas=6,
            progressing=(
                "False",
                "ProgressDeadlineExceeded",
                f'ReplicaSet "{APP}-{h_new}" has timed out progressing.',
                rollout - 10,
            ),
            annotations={"kubernetes.io/change-cause": "release 2.8.0: traffic-aware ETA smoothing"},
        )
    )
    objs.append(replicaset(c, NS, APP, t_old, revision=13, created_min=60 * 24 * 5, replicas=4, ready=4))
    objs.append(replicaset(c, NS, APP, t_new, revision=14, created_min=rollout, replicas=2, ready=0))
    addrs, not_ready = [], []
    old_pods = []
    for i in range(4):
        name = f"{APP}-{h_old}-{suffix('old' + str(i))}"
        ip, nd, st = f"10.31.{i % 3 + 1}.{60 + i * 11}", nodes[i], 60 * 24 * 5 - 2 - i
        objs.append(
            pod(
                c,
                NS,
                name,
                ("ReplicaSet", f"{APP}-{h_old}"),
                t_old["metadata"]["labels"],
                t_old["spec"],
                node_name=nd,
                ip=ip,
                started_min=st,
                hash_label=h_old,
                statuses=[cstatus(c, APP, old_img, ready=True, state=running(st - 0.1, c))],
            )
        )
        addrs.append((ip, name, nd))
        old_pods.append(name)
    new_pods = []
    pod_logs: dict[tuple[str, str, str, bool], list[str]] = {}
    for i in range(2):
        name = f"{APP}-{h_new}-{suffix('new' + str(i))}"
        ip, nd = f"10.31.{i + 2}.{140 + i * 9}", nodes[2 + i * 2]
        starts = crash_times(rollout - 0.3 - i * 0.1)
        restarts = len(starts) - 1
        last = terminated(c, "Error", 255, starts[-1], starts[-1] - 0.01)
        state = {
            "waiting": {
                "reason": "CrashLoopBackOff",
                "message": f"back-off 5m0s restarting failed container={APP} pod={name}_{NS}({uid(NS, name)})",
            }
        }
        objs.append(
            pod(
                c,
                NS,
                name,
                ("ReplicaSet", f"{APP}-{h_new}"),
                t_new["metadata"]["labels"],
                t_new["spec"],
                node_name=nd,
                ip=ip,
                started_min=rollout - 0.2,
                hash_label=h_new,
                ready=False,
                statuses=[
                    cstatus(c, APP, new_img, ready=False, state=state, restarts=restarts, last=last, started=False)
                ],
            )
        )
        not_ready.append((ip, name, nd))
        new_pods.append(name)
        line = f"exec /usr/local/bin/{APP}: exec format error"
        pod_logs[(NS, name, APP, False)] = [line]
        pod_logs[(NS, name, APP, True)] = [line]
        objs += [
            event(
                c,
                NS,
                "Pod",
                name,
                "Scheduled",
                f"Successfully assigned {NS}/{name} to {nd}",
                first_min=rollout - 0.1,
                last_min=rollout - 0.1,
                component="default-scheduler",
            ),
            event(
                c,
                NS,
                "Pod",
                name,
                "Pulling",
                f'Pulling image "{new_img}"',
                first_min=rollout - 0.2,
                last_min=rollout - 0.2,
                host=nd,
                field_path=f"spec.containers{{{APP}}}",
            ),
            event(
                c,
                NS,
                "Pod",
                name,
                "Pulled",
                f'Successfully pulled image "{new_img}" in 4.81s (4.81s including waiting). '
                f"Image size: 21733504 bytes.",
                first_min=rollout - 0.3,
                last_min=rollout - 0.3,
                host=nd,
                field_path=f"spec.containers{{{APP}}}",
            ),
            event(
                c,
                NS,
                "Pod",
                name,
                "Pulled",
                f'Container image "{new_img}" already present on machine',
                first_min=rollout - 1,
                last_min=starts[-1],
                count=restarts,
                host=nd,
                field_path=f"spec.containers{{{APP}}}",
            ),
            event(
                c,
                NS,
                "Pod",
                name,
                "Created",
                f"Created container {APP}",
                first_min=rollout - 0.3,
                last_min=starts[-1],
                count=restarts + 1,
                host=nd,
                field_path=f"spec.containers{{{APP}}}",
            ),
            event(
                c,
                NS,
                "Pod",
                name,
                "Started",
                f"Started container {APP}",
                first_min=rollout - 0.3,
                last_min=starts[-1],
                count=restarts + 1,
                host=nd,
                field_path=f"spec.containers{{{APP}}}",
            ),
            event(
                c,
                NS,
                "Pod",
                name,
                "BackOff",
                f"Back-off restarting failed container {APP} in pod {name}_{NS}({uid(NS, name)})",
                first_min=rollout - 0.5,
                last_min=0.4,
                count=171 - i * 6,
                type_="Warning",
                host=nd,
                field_path=f"spec.containers{{{APP}}}",
            ),
        ]
    objs.append(service(c, NS, APP, {"app": APP}, port=80, target="http", cluster_ip="172.20.41.17"))
    objs.append(endpoints(c, NS, APP, addrs, not_ready, 8080))
    objs += [
        event(
            c,
            NS,
            "Deployment",
            APP,
            "ScalingReplicaSet",
            f"Scaled up replica set {APP}-{h_new} to 2 from 0",
            first_min=rollout,
            last_min=rollout,
            component="deployment-controller",
            api_version="apps/v1",
        )
    ]
    # healthy neighbours in the namespace
    objs += healthy_app(
        c,
        NS,
        "osrm-backend",
        "ghcr.io/larkspur/osrm-backend:5.27.1-eu",
        replicas=3,
        nodes=nodes[1::2],
        ip_prefix="10.31.2",
        cluster_ip="172.20.41.90",
        port=5000,
        svc_port=5000,
        cpu="1",
        memory="3Gi",
        mem_limit="4Gi",
        probe_path="/health",
    )
    objs += healthy_app(
        c,
        NS,
        "dispatch-api",
        "ghcr.io/larkspur/dispatch-api:4.19.0",
        replicas=3,
        nodes=nodes[::2],
        ip_prefix="10.31.1",
        cluster_ip="172.20.41.5",
        rollout_min=60 * 26,
    )
    objs += healthy_app(
        c,
        NS,
        "tracking-ingest",
        "ghcr.io/larkspur/tracking-ingest:1.33.2",
        replicas=2,
        nodes=nodes[2:4],
        ip_prefix="10.31.3",
        cluster_ip="172.20.41.66",
    )
    objs.append(
        configmap(
            c, NS, "dispatch-feature-flags", {"eta.smoothing": "true", "eta.window_min": "15"}, created_min=60 * 24 * 30
        )
    )
    objs += _ledger_export(c, nodes)

    logs = []
    for m in range(90, 0, -1):
        for k, p in enumerate(old_pods):
            logs.append(
                ecs(
                    c,
                    m - k * 0.13,
                    "eta computed",
                    "info",
                    APP,
                    NS,
                    p,
                    APP,
                    **{"http.response.status_code": 200, "event.duration": 41000000 + k * 3e6, "url.path": "/v2/eta"},
                )
            )
        if m % 7 == 0:
            logs.append(
                ecs(
                    c,
                    m - 0.5,
                    "osrm upstream slow, using cached matrix",
                    "warn",
                    APP,
                    NS,
                    old_pods[m % 4],
                    APP,
                    **{"error.type": "upstream_timeout"},
                )
            )
        if m % 3 == 0:
            logs.append(
                ecs(
                    c,
                    m - 0.2,
                    "GET /v1/jobs/open 200",
                    "info",
                    "dispatch-api",
                    NS,
                    "dispatch-api-" + pod_hash("dispatch-api", 3) + "-" + suffix("dispatch-api0"),
                    "dispatch-api",
                    **{"http.response.status_code": 200},
                )
            )
    for j, p in enumerate(new_pods):
        for m in crash_times(rollout - 0.3 - j * 0.1):
            logs.append(
                ecs(
                    c,
                    m,
                    f"exec /usr/local/bin/{APP}: exec format error",
                    "error",
                    APP,
                    NS,
                    p,
                    APP,
                    **{"log.origin.stream": "stderr"},
                )
            )
    job_pod = "ledger-export-29402340-" + suffix("ledger-pod")
    for m in (41.5, 40.9, 40.1, 38.6, 36.0, 31.2):
        logs.append(
            ecs(
                c,
                m,
                'psycopg2.OperationalError: connection to server at "ledger-ro.c1x.eu-west-1.'
                'rds.amazonaws.com" (10.31.200.14), port 5432 failed: FATAL:  password '
                'authentication failed for user "ledger_export"',
                "error",
                "ledger-export",
                "finance",
                job_pod,
                "export",
            )
        )

    metrics = Metrics(c)
    for j, p in enumerate(new_pods):
        starts = crash_times(rollout - 0.3 - j * 0.1)
        metrics.series(
            "kube_pod_container_status_restarts",
            "counter",
            {"namespace": NS, "pod": p, "container": APP},
            [(m, sum(1 for t in starts[1:] if t >= m)) for m in range(int(rollout) - 1, -1, -1)],
        )
    for p in old_pods:
        metrics.series(
            "kube_pod_container_status_restarts",
            "counter",
            {"namespace": NS, "pod": p, "container": APP},
            [(m, 0) for m in range(90, -1, -1)],
        )
    for k, p in enumerate(old_pods):
        metrics.series(
            "http_requests",
            "counter",
            {"namespace": NS, "pod": p, "service": APP, "code": "200"},
            [(m, (90 - m) * 60 * (5.2 + k * 0.3) + 1000 * k) for m in range(90, -1, -1)],
        )
    scenario = {
        "id": SID,
        "title": "Dispatch alerts after the afternoon release",
        "now": NOW,
        "report": """
            getting EtaEstimatorPodsNotReady + KubeJobFailed pages since ~16:00. drivers app still shows ETAs
            but the dashboards look weird. is the cluster having a bad day? finance also says their ledger
            export didn't run
        """.replace("            ", ""),
        "truth": {
            "category": "crash_loop",
            "culprit": {"kind": "Deployment", "namespace": NS, "name": APP},
            "evidence": ["exec format error", "exit_code: 255", "2.8.0"],
            "fix": "Rebuild eta-estimator 2.8.0 for linux/amd64 (or as a multi-arch image) and roll "
            "out again; until then roll back to revision 13 (2.7.3).",
        },
    }
    write(SID, scenario, objs, pod_logs=pod_logs, logs=logs, metrics=metrics)


def _ledger_export(c: Clock, nodes: list[str]) -> list[Obj]:
    """The bystander: an hourly finance export whose database password was rotated."""
    ns, name, job = "finance", "ledger-export", "ledger-export-29402340"
    img = "ghcr.io/larkspur/ledger-export:0.14.2"
    spec = template(
        {"app": name},
        [
            container(
                "export",
                img,
                port=None,
                cpu="100m",
                memory="128Mi",
                env_from=[{"secretRef": {"name": "ledger-export-db"}}],
            )
        ],
        restartPolicy="Never",
    )["spec"]
    spec["restartPolicy"] = "Never"
    cj = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": meta(name, ns, c.at(60 * 24 * 300), {"app": name}),
        "spec": {
            "schedule": "0 * * * *",
            "concurrencyPolicy": "Forbid",
            "successfulJobsHistoryLimit": 3,
            "failedJobsHistoryLimit": 3,
            "suspend": False,
            "jobTemplate": {
                "spec": {"backoffLimit": 3, "template": {"metadata": {"labels": {"app": name}}, "spec": spec}}
            },
        },
        "status": {"lastScheduleTime": c.at(40), "lastSuccessfulTime": c.at(60 * 5 + 40)},
    }
    jb = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta(
            job,
            ns,
            c.at(40),
            {"app": name},
            ownerReferences=[
                {"apiVersion": "batch/v1", "kind": "CronJob", "name": name, "uid": uid(ns, name), "controller": True}
            ],
        ),
        "spec": {
            "backoffLimit": 3,
            "completions": 1,
            "parallelism": 1,
            "template": {"metadata": {"labels": {"app": name}}, "spec": spec},
        },
        "status": {
            "failed": 4,
            "startTime": c.at(40),
            "conditions": [
                {
                    "type": "Failed",
                    "status": "True",
                    "reason": "BackoffLimitExceeded",
                    "message": "Job has reached the specified backoff limit",
                    "lastProbeTime": c.at(31),
                    "lastTransitionTime": c.at(31),
                }
            ],
        },
    }
    pname = f"{job}-{suffix('ledger-pod')}"
    p = pod(
        c,
        ns,
        pname,
        ("Job", job),
        {"app": name, "job-name": job},
        spec,
        node_name=nodes[5],
        ip="10.31.3.201",
        started_min=31.5,
        phase="Failed",
        ready=False,
        statuses=[cstatus(c, "export", img, ready=False, state=terminated(c, "Error", 1, 31.4, 31.2))],
    )
    return [
        cj,
        jb,
        p,
        event(
            c,
            ns,
            "Job",
            job,
            "BackoffLimitExceeded",
            "Job has reached the specified backoff limit",
            first_min=31,
            last_min=31,
            type_="Warning",
            component="job-controller",
            api_version="batch/v1",
        ),
        event(
            c,
            ns,
            "CronJob",
            name,
            "SuccessfulCreate",
            f"Created job {job}",
            first_min=40,
            last_min=40,
            component="cronjob-controller",
            api_version="batch/v1",
        ),
    ]
