"""7. probe_failure: a distroless image; the exec readiness probe calls curl, which is not there."""

from __future__ import annotations

from datetime import UTC, timedelta

from . import _kit as k

SID = "quote-distroless-exec-probe"
NOW = "2026-12-13T13:10:00Z"
NS = "pricing"
IMG_NEW = "registry.quillmark.io/pricing/quote-engine:4.2.0"
IMG_OLD = "registry.quillmark.io/pricing/quote-engine:4.1.3"


def _template(image: str, base: str) -> dict:
    c = k.container(
        "quote-engine",
        image,
        ports=[{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
        env=[
            {"name": "JAVA_TOOL_OPTIONS", "value": "-XX:MaxRAMPercentage=70"},
            {
                "name": "SPRING_DATASOURCE_URL",
                "value": "jdbc:postgresql://pricing-db.data.svc:5432/pricing",
            },
            {"name": "SPRING_FLYWAY_ENABLED", "value": "true"},
        ],
        resources=k.res("1", "1536Mi", None, "1536Mi"),
        readiness={
            "exec": {
                "command": ["curl", "-fsS", "http://localhost:8080/actuator/health/readiness"]
            },
            "initialDelaySeconds": 15,
            "periodSeconds": 10,
            "timeoutSeconds": 2,
            "successThreshold": 1,
            "failureThreshold": 3,
        },
        liveness=k.http_probe(
            "/actuator/health/liveness", "http", period=15, initial=60, timeout=2, failure=4
        ),
    )
    return k.template(
        {"app.kubernetes.io/name": "quote-engine", "app.kubernetes.io/part-of": "pricing"},
        [c],
        annotations={"quillmark.io/base-image": base},
        serviceAccountName="quote-engine",
    )


def build() -> None:
    s = k.Scn(SID, NOW, 4407)
    now = s.now
    grid = k.grid(s.ago(hours=3), now, 120)
    old = s.ago(days=650)
    nodes = [
        k.node(
            "ip-10-90-8-14.eu-west-1.compute.internal",
            "eu-west-1a",
            s.ago(days=10),
            s.ago(seconds=7),
        ),
        k.node(
            "ip-10-90-25-200.eu-west-1.compute.internal",
            "eu-west-1b",
            s.ago(days=10),
            s.ago(seconds=29),
        ),
        k.node(
            "ip-10-90-39-71.eu-west-1.compute.internal",
            "eu-west-1c",
            s.ago(days=10),
            s.ago(seconds=16),
        ),
        k.node(
            "ip-10-90-44-5.eu-west-1.compute.internal",
            "eu-west-1c",
            s.ago(days=1),
            s.ago(seconds=3),
        ),
    ]
    nn = [n["metadata"]["name"] for n in nodes]
    s.add(*(k.namespace(n, old) for n in (NS, "web", "data")))
    s.add(*nodes)

    roll = s.ago(minutes=43, seconds=10)
    t_new = _template(IMG_NEW, "gcr.io/distroless/java17-debian12:nonroot")
    t_old = _template(IMG_OLD, "eclipse-temurin:17-jre-jammy")
    dep = k.deployment(
        "quote-engine",
        NS,
        s.ago(days=640),
        t_new,
        3,
        46,
        {
            "replicas": 4,
            "updatedReplicas": 1,
            "readyReplicas": 3,
            "availableReplicas": 3,
            "unavailableReplicas": 1,
        },
        [],
        strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
    )
    hn, ho = s.rs_hash(), s.rs_hash()
    rs_new = k.replicaset(dep, hn, roll, 46, t_new, 1, ready=0)
    rs_old = k.replicaset(dep, ho, s.ago(days=8, hours=5), 45, t_old, 3)
    deadline = roll + timedelta(seconds=600)
    dep["status"]["conditions"] = [
        {
            "type": "Available",
            "status": "True",
            "lastUpdateTime": k.ts(s.ago(days=6, hours=1)),
            "lastTransitionTime": k.ts(s.ago(days=6, hours=1)),
            "reason": "MinimumReplicasAvailable",
            "message": "Deployment has minimum availability.",
        },
        {
            "type": "Progressing",
            "status": "False",
            "lastUpdateTime": k.ts(deadline),
            "lastTransitionTime": k.ts(deadline),
            "reason": "ProgressDeadlineExceeded",
            "message": f'ReplicaSet "{rs_new["metadata"]["name"]}" has timed out progressing.',
        },
    ]
    s.add(dep, rs_new, rs_old)

    c_new, c_old = t_new["spec"]["containers"][0], t_old["spec"]["containers"][0]
    old_pods = []
    for i in range(3):
        pn = f"quote-engine-{ho}-{s.pod_suffix()}"
        cr = s.ago(days=6, hours=1, minutes=2) + timedelta(seconds=40 * i)
        last, run = None, cr + timedelta(seconds=3)
        rc = 0
        if i == 1:
            rc = 1
            last = k.terminated("Error", 143, run, s.ago(days=2, hours=4, minutes=31), "qe-old")
            run = s.ago(days=2, hours=4, minutes=30)
        p = k.pod(
            s,
            rs_old,
            pn,
            nn[i],
            k.pod_ip(s, nn[i]),
            cr,
            [k.cs_running(c_old, run, True, rc, last)],
            True,
            ready_since=run + timedelta(seconds=28),
        )
        old_pods.append(p)
        s.add(p)
    npn = f"quote-engine-{hn}-{s.pod_suffix()}"
    ncr = roll + timedelta(seconds=1)
    new_pod = k.pod(
        s,
        rs_new,
        npn,
        nn[3],
        k.pod_ip(s, nn[3]),
        ncr,
        [k.cs_running(c_new, ncr + timedelta(seconds=6), False)],
        False,
        ready_since=ncr + timedelta(seconds=2),
    )
    s.add(new_pod)
    s.add(
        k.service(
            "quote-engine",
            NS,
            s.ago(days=640),
            {"app.kubernetes.io/name": "quote-engine"},
            [{"name": "http", "port": 8080, "protocol": "TCP", "targetPort": "http"}],
            "172.20.66.41",
        )
    )
    s.add(
        k.endpoints(
            "quote-engine",
            NS,
            s.ago(days=640),
            old_pods,
            [{"name": "http", "port": 8080, "protocol": "TCP"}],
            not_ready=[new_pod],
        )
    )

    # ---- neighbours
    _ud, _urs, _upods = k.healthy_deployment(
        s,
        nn,
        "quote-ui",
        "web",
        "registry.quillmark.io/web/quote-ui:3.9.0",
        2,
        s.ago(days=500),
        port=3000,
        rollout=s.ago(days=1, hours=2),
        revision=63,
    )
    bd, brs, bpods = k.healthy_deployment(
        s,
        nn,
        "pgbouncer",
        "data",
        "bitnami/pgbouncer:1.22.1",
        2,
        s.ago(days=600),
        port=6432,
        probe_path="/",
        container_extra={},
    )
    for p in bpods:  # tcp probe for pgbouncer
        p["spec"]["containers"][0]["readinessProbe"] = {
            "tcpSocket": {"port": 6432},
            "periodSeconds": 10,
            "timeoutSeconds": 1,
            "successThreshold": 1,
            "failureThreshold": 3,
        }
    for o in (bd, brs):
        o["spec"]["template"]["spec"]["containers"][0]["readinessProbe"] = {
            "tcpSocket": {"port": 6432},
            "periodSeconds": 10,
            "timeoutSeconds": 1,
            "successThreshold": 1,
            "failureThreshold": 3,
        }
    # pdf-renderer: Pending, wants a node pool that is scaled to zero
    pc = k.container(
        "pdf-renderer",
        "registry.quillmark.io/web/pdf-renderer:1.2.0",
        ports=[{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
        resources=k.res("500m", "1Gi", None, "2Gi"),
    )
    ptm = k.template(
        {"app.kubernetes.io/name": "pdf-renderer"}, [pc], nodeSelector={"nodepool": "batch-spot"}
    )
    pdep = k.deployment(
        "pdf-renderer",
        "web",
        s.ago(days=90),
        ptm,
        1,
        5,
        {"replicas": 1, "updatedReplicas": 1, "unavailableReplicas": 1},
        [],
    )
    ph = s.rs_hash()
    prs = k.replicaset(pdep, ph, s.ago(hours=5), 5, ptm, 1, ready=0)
    pdep["status"]["conditions"] = k.dep_conditions(
        s.ago(hours=5),
        s.ago(hours=4, minutes=50),
        prs["metadata"]["name"],
        available=False,
        progressing="stalled",
    )
    pmsg = (
        "0/4 nodes are available: 4 node(s) didn't match Pod's node affinity/selector. "
        "preemption: 0/4 nodes are "
        "available: 4 Preemption is not helpful for scheduling."
    )
    ppod = k.pod(
        s,
        prs,
        f"pdf-renderer-{ph}-{s.pod_suffix()}",
        "",
        "",
        s.ago(hours=5),
        [],
        False,
        phase="Pending",
        scheduled=False,
        pending_msg=pmsg,
    )
    s.add(pdep, prs, ppod)

    # ---- events
    fp = "spec.containers{quote-engine}"
    exec_id = k.sha("exec", npn)
    probe_msg = (
        "Readiness probe errored: rpc error: code = Unknown desc = failed to exec in container: "
        "failed to start "
        f'exec "{exec_id}": OCI runtime exec failed: exec failed: unable to start container '
        "process: exec: "
        '"curl": executable file not found in $PATH: unknown'
    )
    n_probes = int((now - ncr - timedelta(seconds=21)).total_seconds() // 10)
    evs = [
        k.event(
            NS,
            dep,
            "ScalingReplicaSet",
            f"Scaled up replica set {rs_new['metadata']['name']} to 1",
            roll,
            roll,
            1,
            "Normal",
            "deployment-controller",
        ),
        k.event(
            NS,
            rs_new,
            "SuccessfulCreate",
            f"Created pod: {npn}",
            ncr,
            ncr,
            1,
            "Normal",
            "replicaset-controller",
        ),
        k.event(
            NS,
            new_pod,
            "Scheduled",
            f"Successfully assigned {NS}/{npn} to {nn[3]}",
            ncr,
            ncr,
            1,
            "Normal",
            "default-scheduler",
        ),
        k.event(
            NS,
            new_pod,
            "Pulling",
            f'Pulling image "{IMG_NEW}"',
            ncr + timedelta(seconds=1),
            ncr + timedelta(seconds=1),
            1,
            "Normal",
            "kubelet",
            nn[3],
            fp,
        ),
        k.event(
            NS,
            new_pod,
            "Pulled",
            f'Successfully pulled image "{IMG_NEW}" in 4.381s (4.381s including waiting)',
            ncr + timedelta(seconds=5),
            ncr + timedelta(seconds=5),
            1,
            "Normal",
            "kubelet",
            nn[3],
            fp,
        ),
        k.event(
            NS,
            new_pod,
            "Created",
            "Created container quote-engine",
            ncr + timedelta(seconds=6),
            ncr + timedelta(seconds=6),
            1,
            "Normal",
            "kubelet",
            nn[3],
            fp,
        ),
        k.event(
            NS,
            new_pod,
            "Started",
            "Started container quote-engine",
            ncr + timedelta(seconds=6),
            ncr + timedelta(seconds=6),
            1,
            "Normal",
            "kubelet",
            nn[3],
            fp,
        ),
        k.event(
            NS,
            new_pod,
            "Unhealthy",
            probe_msg,
            ncr + timedelta(seconds=21),
            s.ago(seconds=4),
            n_probes,
            "Warning",
            "kubelet",
            nn[3],
            fp,
        ),
        k.event(
            "web",
            ppod,
            "FailedScheduling",
            pmsg,
            s.ago(minutes=59),
            s.ago(minutes=3),
            14,
            "Warning",
            "default-scheduler",
        ),
    ]
    s.add(*evs)

    # ---- logs
    st = ncr + timedelta(seconds=6)
    lines = _spring_start(st, "4.2.0")
    t = st + timedelta(minutes=1)
    while t < now:
        lines.append(
            f"{_st(t)}  INFO 1 --- [quote-engine] [   scheduling-1] "
            "c.q.pricing.rates.RateCardRefresher      : "
            f"rate cards refreshed: {s.rng.randint(1200, 1300)} cards, version "
            f"2026-12-13.{s.rng.randint(3, 9)}"
        )
        t += timedelta(minutes=5)
    s.podlog(NS, npn, "quote-engine", lines)
    for ln in lines:
        s.log(
            _parse_st(ln),
            NS,
            npn,
            "quote-engine",
            "quote-engine",
            "warn" if " WARN " in ln else "info",
            ln,
        )
    lt0 = s.ago(hours=2)
    t = lt0
    while t < now:
        p = old_pods[s.rng.randint(0, 2)]
        ln = (
            f"{_st(t)}  INFO 1 --- [quote-engine] [nio-8080-exec-{s.rng.randint(1, 60)}] "
            "c.q.pricing.api.QuoteController       "
            f"  : quote issued id=q_{k.sha(str(t))[:12]} lines={s.rng.randint(1, 9)} "
            f"took={s.rng.randint(18, 90)}ms"
        )
        s.log(t, NS, p["metadata"]["name"], "quote-engine", "quote-engine", "info", ln)
        t += timedelta(seconds=s.rng.randint(8, 20))
    for p in old_pods:
        s.podlog(
            NS,
            p["metadata"]["name"],
            "quote-engine",
            _spring_start(
                k.parse(p["status"]["containerStatuses"][0]["state"]["running"]["startedAt"]),
                "4.1.3",
            ),
        )
    for p in bpods:
        t = lt0 + timedelta(minutes=s.rng.randint(0, 5))
        while t < now:
            s.log(
                t,
                "data",
                p["metadata"]["name"],
                "pgbouncer",
                "pgbouncer",
                "info",
                f"{t.strftime('%Y-%m-%d %H:%M:%S')}.{s.rng.randint(100, 999)} UTC [1] LOG stats: "
                f"{s.rng.randint(40, 90)} "
                f"xacts/s, {s.rng.randint(60, 140)} queries/s, {s.rng.randint(2, 4)} client "
                "parses/s, in 31204 B/s, "
                f"out 88412 B/s, xact 1402 us, query 611 us, wait {s.rng.randint(5, 40)} us",
            )
            t += timedelta(minutes=1)

    # ---- metrics
    m = s.metrics
    for p in [*old_pods, new_pod]:
        pn = p["metadata"]["name"]
        stt = k.parse(p["metadata"]["creationTimestamp"]).timestamp()
        ready = 0 if p is new_pod else 1
        m.series(
            "kube_pod_container_status_ready",
            "gauge",
            "Describes whether the containers readiness check succeeded.",
            {"namespace": NS, "pod": pn, "container": "quote-engine", "uid": p["metadata"]["uid"]},
            [(t, ready) for t in grid if t >= stt],
        )
        m.series(
            "kube_pod_container_status_restarts",
            "counter",
            "The number of container restarts per container.",
            {"namespace": NS, "pod": pn, "container": "quote-engine", "uid": p["metadata"]["uid"]},
            [(t, p["status"]["containerStatuses"][0]["restartCount"]) for t in grid if t >= stt][
                ::5
            ],
        )
        busy = 0.45 if ready else 0.03
        m.series(
            "container_cpu_usage_seconds",
            "counter",
            "Cumulative cpu time consumed by the container in core-seconds",
            {"namespace": NS, "pod": pn, "container": "quote-engine"},
            k.counter_points(
                [t for t in grid if t >= stt],
                lambda t, b=busy: b,
                start=0.0 if not ready else float(s.rng.randint(10**5, 2 * 10**5)),
                jitter=lambda: s.rng.uniform(0.8, 1.2),
            ),
        )
        if ready:
            cnt = k.counter_points(
                grid,
                lambda t: 2.1,
                start=float(s.rng.randint(10**6, 2 * 10**6)),
                jitter=lambda: s.rng.uniform(0.9, 1.1),
            )
            sm = [(t, round(v * 0.041, 3)) for t, v in cnt]
            m.multi(
                "http_server_requests_seconds",
                "summary",
                "Duration of HTTP server request handling",
                {
                    "namespace": NS,
                    "pod": pn,
                    "method": "POST",
                    "uri": "/v1/quotes",
                    "status": "200",
                    "outcome": "SUCCESS",
                },
                {"_count": cnt, "_sum": sm},
            )
    m.series(
        "kube_deployment_status_replicas_updated",
        "gauge",
        "The number of updated replicas per deployment.",
        {"namespace": NS, "deployment": "quote-engine"},
        [(t, 0 if t < roll.timestamp() else 1) for t in grid],
    )
    m.series(
        "kube_deployment_status_condition",
        "gauge",
        "The current status conditions of a deployment.",
        {
            "namespace": NS,
            "deployment": "quote-engine",
            "condition": "Progressing",
            "status": "false",
        },
        [(t, 1 if t >= deadline.timestamp() else 0) for t in grid],
    )

    s.write(
        "quote-engine 4.2.0 rollout stuck",
        "quote-engine 4.2.0 rollout has been stuck for 40 min: the one new pod never goes Ready, "
        "old pods still serve. "
        "4.2.0 has a flyway migration so I think it's hanging on a lock in pricing-db. should I "
        "kill the migration or "
        "roll back?\n",
        {
            "category": "probe_failure",
            "culprit": {"kind": "Deployment", "namespace": NS, "name": "quote-engine"},
            "evidence": [
                'exec: "curl": executable file not found in $PATH',
                "Readiness probe errored",
                "gcr.io/distroless/java17-debian12:nonroot",
            ],
            "fix": "4.2.0 moved to a distroless base image that has no curl, so the exec "
            "readiness probe can never run and "
            "the new pod stays unready although the application started fine. Replace the exec "
            "probe by an "
            "httpGet probe on /actuator/health/readiness (port http).",
        },
    )


def _st(t) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def _parse_st(line: str):
    from datetime import datetime

    return datetime.strptime(line[:23], "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=UTC)


def _spring_start(st, version: str) -> list:
    def L(dt, lvl, logger, msg):
        t = st + timedelta(seconds=dt)
        return f"{_st(t)}  {lvl} 1 --- [quote-engine] [           main] {logger:<40} : {msg}"

    return (
        [
            L(
                0.9,
                "INFO",
                "c.q.pricing.QuoteEngineApplication",
                f"Starting QuoteEngineApplication v{version} using Java 17.0.12 with PID 1 "
                "(/app/quote-engine.jar started by nonroot in /app)",
            ),
            L(
                1.0,
                "INFO",
                "c.q.pricing.QuoteEngineApplication",
                'The following 1 profile is active: "prod"',
            ),
            L(
                4.2,
                "INFO",
                "o.s.b.w.embedded.tomcat.TomcatWebServer",
                "Tomcat initialized with port 8080 (http)",
            ),
            L(5.8, "INFO", "com.zaxxer.hikari.HikariDataSource", "HikariPool-1 - Start completed."),
        ]
        + (
            [
                L(
                    6.1,
                    "INFO",
                    "o.f.core.internal.command.DbValidate",
                    "Successfully validated 59 migrations (execution time 00:00.074s)",
                ),
                L(
                    6.2,
                    "INFO",
                    "o.f.core.internal.command.DbMigrate",
                    'Current version of schema "pricing": 58',
                ),
                L(
                    6.2,
                    "INFO",
                    "o.f.core.internal.command.DbMigrate",
                    'Migrating schema "pricing" to version "59 - quote currency index"',
                ),
                L(
                    6.7,
                    "INFO",
                    "o.f.core.internal.command.DbMigrate",
                    'Successfully applied 1 migration to schema "pricing", now at version v59 '
                    "(execution time 00:00.412s)",
                ),
            ]
            if version == "4.2.0"
            else [
                L(
                    6.1,
                    "INFO",
                    "o.f.core.internal.command.DbValidate",
                    "Successfully validated 58 migrations (execution time 00:00.071s)",
                ),
                L(
                    6.2,
                    "INFO",
                    "o.f.core.internal.command.DbMigrate",
                    'Current version of schema "pricing": 58',
                ),
                L(
                    6.2,
                    "INFO",
                    "o.f.core.internal.command.DbMigrate",
                    'Schema "pricing" is up to date. No migration necessary.',
                ),
            ]
        )
        + [
            L(
                9.4,
                "INFO",
                "o.s.b.a.e.web.EndpointLinksResolver",
                "Exposing 3 endpoints beneath base path '/actuator'",
            ),
            L(
                9.7,
                "INFO",
                "o.s.b.w.embedded.tomcat.TomcatWebServer",
                "Tomcat started on port 8080 (http) with context path ''",
            ),
            L(
                9.8,
                "INFO",
                "c.q.pricing.QuoteEngineApplication",
                "Started QuoteEngineApplication in 9.412 seconds (process running for 9.8)",
            ),
        ]
    )
