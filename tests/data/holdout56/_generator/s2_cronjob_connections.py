"""storefront gets "too many clients" from PostgreSQL while a new CronJob's export runs."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from . import _kit as k

SID = "h56-storefront-db-too-many-clients"
NOW = "2026-12-10T14:23:00Z"

NODES = [
    ("ip-10-31-1-55.eu-central-1.compute.internal", "eu-central-1a"),
    ("ip-10-31-2-140.eu-central-1.compute.internal", "eu-central-1b"),
    ("ip-10-31-3-17.eu-central-1.compute.internal", "eu-central-1c"),
    ("ip-10-31-1-203.eu-central-1.compute.internal", "eu-central-1a"),
    ("ip-10-31-2-88.eu-central-1.compute.internal", "eu-central-1b"),
    ("ip-10-31-3-161.eu-central-1.compute.internal", "eu-central-1c"),
]

EXPORT_IMAGE = "ghcr.io/kestrel-shop/invoice-export:0.3.0"
STORE_IMAGE = "ghcr.io/kestrel-shop/storefront:4.12.0"
PG_IMAGE = "postgres:15.8"
RUN_SECONDS = [452, 437, 446, 0]
PARALLELISM = 4
WORKERS = 60


def build(root: Path) -> None:
    sc = k.Scenario(SID, NOW, seed=5602)
    node_names = [n for n, _ in NODES]
    for i, (name, zone) in enumerate(NODES):
        sc.add(
            k.node(
                name,
                zone,
                sc.ago(days=11 + i),
                sc.ago(minutes=0.2),
                instance_type="m6a.2xlarge",
                cpu="8",
                allocatable_cpu="7910m",
                memory_ki=32_000_000,
                allocatable_mem_ki=30_500_000,
                region="eu-central-1",
            )
        )
    plat = k.platform(sc, node_names)
    for ns in ("shop", "billing", "data"):
        sc.add(k.namespace(ns, sc.ago(days=250)))

    # ---------------- runs of the export ----------------
    first_run = sc.now.replace(minute=20, second=0) - timedelta(hours=1)
    runs = [first_run + timedelta(minutes=20 * i) for i in range(4)]
    run_spans: list[tuple[datetime, datetime]] = []
    for start, secs in zip(runs, RUN_SECONDS, strict=True):
        begin = start + timedelta(seconds=4)
        end = begin + timedelta(seconds=secs) if secs else sc.now + timedelta(minutes=10)
        run_spans.append((begin, end))

    def export_conns(t: datetime) -> float:
        for begin, end in run_spans:
            if begin + timedelta(seconds=20) <= t <= end:
                return PARALLELISM * WORKERS
        return 0.0

    def exhausted(t: datetime) -> bool:
        return any(b + timedelta(seconds=25) <= t <= e for b, e in run_spans)

    # ---------------- data/orders-db ----------------
    sc.add(
        k.configmap(
            "data",
            "orders-db-config",
            sc.ago(days=240),
            {
                "postgresql.conf": (
                    "listen_addresses = '*'\nmax_connections = 300\n"
                    "superuser_reserved_connections = 3\nshared_buffers = 4GB\n"
                    "work_mem = 16MB\nlog_min_duration_statement = 1000\n"
                    "log_line_prefix = '%m [%p] %q%u@%d '\nlog_connections = off\n"
                    "idle_in_transaction_session_timeout = 60s\n"
                ),
            },
        )
    )
    pg = k.statefulset(
        sc,
        "data",
        "orders-db",
        [
            k.container(
                "postgres",
                PG_IMAGE,
                "2",
                "8Gi",
                "4",
                "8Gi",
                [("postgres", 5432)],
                env=[("PGDATA", "/var/lib/postgresql/data/pgdata"), ("POSTGRES_DB", "orders")],
                mounts=[("data", "/var/lib/postgresql/data"), ("config", "/etc/postgresql")],
                args=["-c", "config_file=/etc/postgresql/postgresql.conf"],
            ),
            k.container(
                "metrics",
                "quay.io/prometheuscommunity/postgres-exporter:v0.15.0",
                "50m",
                "64Mi",
                "200m",
                "128Mi",
                [("metrics", 9187)],
                env=[("PG_EXPORTER_EXTEND_QUERY_PATH", "/etc/exporter/queries.yaml")],
            ),
        ],
        node_names[2:3],
        1,
        sc.ago(days=240),
        sc.ago(days=40),
        claim=("data", "500Gi", "gp3"),
        port=5432,
        restarts={
            0: (1, k.terminated("Error", 143, sc.ago(days=40), sc.ago(days=5, hours=3, minutes=12)))
        },
    )
    pg_pod = pg.pods[0]

    # ---------------- shop/storefront (the victim) ----------------
    store = k.simple_deployment(
        sc,
        "shop",
        "storefront",
        [
            k.container(
                "storefront",
                STORE_IMAGE,
                "500m",
                "1Gi",
                "2",
                "1536Mi",
                [("http", 8080), ("management", 8081)],
                env=[
                    ("SPRING_DATASOURCE_URL", "jdbc:postgresql://orders-db.data.svc:5432/orders"),
                    ("SPRING_DATASOURCE_HIKARI_MAXIMUM_POOL_SIZE", "20"),
                    ("SPRING_DATASOURCE_HIKARI_MAX_LIFETIME", "300000"),
                ],
                readiness=k.http_probe("/actuator/health/readiness", 8081),
                liveness=k.http_probe("/actuator/health/liveness", 8081, period=20, delay=40),
            )
        ],
        node_names,
        6,
        created=sc.ago(days=230),
        rolled=sc.ago(hours=2, minutes=16),
        revision=58,
        port=8080,
        old_revisions=[
            (
                57,
                sc.ago(days=6),
                [k.container("storefront", "ghcr.io/kestrel-shop/storefront:4.11.3")],
            )
        ],
    )
    worker = k.simple_deployment(
        sc,
        "shop",
        "order-worker",
        [
            k.container(
                "order-worker",
                "ghcr.io/kestrel-shop/order-worker:2.7.1",
                "250m",
                "512Mi",
                "1",
                "768Mi",
                env=[("DB_POOL_MAX", "10")],
            )
        ],
        node_names,
        2,
        created=sc.ago(days=230),
        rolled=sc.ago(days=8),
        revision=19,
    )
    search = k.simple_deployment(
        sc,
        "shop",
        "catalog-search",
        [
            k.container(
                "catalog-search",
                "ghcr.io/kestrel-shop/catalog-search:1.30.2",
                "300m",
                "768Mi",
                "1",
                "1Gi",
                [("http", 8080)],
            )
        ],
        node_names,
        3,
        created=sc.ago(days=200),
        rolled=sc.ago(days=3),
        revision=33,
        port=8080,
    )

    # ---------------- billing/invoice-export (the culprit) ----------------
    cj_uid = sc.uid()
    export_container = k.container(
        "export",
        EXPORT_IMAGE,
        "500m",
        "512Mi",
        "1",
        "1Gi",
        env=[
            ("DATABASE_URL", "postgres://billing_export@orders-db.data.svc:5432/orders"),
            ("EXPORT_WORKERS", str(WORKERS)),
            ("EXPORT_TARGET", "s3://kestrel-billing-exports/invoices/"),
            ("EXPORT_WINDOW", "20m"),
        ],
    )
    job_tmpl = k.template(
        {"app.kubernetes.io/name": "invoice-export"},
        [export_container],
        extra_spec={"restartPolicy": "Never"},
    )
    job_tmpl["spec"]["restartPolicy"] = "Never"
    cj_created = sc.ago(hours=21, minutes=44)
    active_refs: list[dict[str, str]] = []
    job_objs: list[k.Obj] = []
    for idx, (run_at, (begin, end)) in enumerate(zip(runs, run_spans, strict=True)):
        job_name = f"invoice-export-{int(run_at.timestamp()) // 60}"
        job_uid = sc.uid()
        running = idx == len(runs) - 1
        status: k.Obj = {"startTime": k.iso(begin)}
        if running:
            status.update({"active": PARALLELISM, "ready": PARALLELISM})
            active_refs.append(
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": job_name,
                    "namespace": "billing",
                    "uid": job_uid,
                }
            )
        else:
            status.update(
                {
                    "succeeded": PARALLELISM,
                    "ready": 0,
                    "completionTime": k.iso(end),
                    "conditions": [
                        {
                            "type": "Complete",
                            "status": "True",
                            "lastProbeTime": k.iso(end),
                            "lastTransitionTime": k.iso(end),
                        }
                    ],
                }
            )
        if idx == 0:
            continue  # the first run's Job was already cleaned up by the history limit
        job_objs.append(
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {
                    "name": job_name,
                    "namespace": "billing",
                    "uid": job_uid,
                    "creationTimestamp": k.iso(run_at),
                    "labels": {"app.kubernetes.io/name": "invoice-export"},
                    "ownerReferences": [k.owner("CronJob", "invoice-export", cj_uid, "batch/v1")],
                },
                "spec": {
                    "parallelism": PARALLELISM,
                    "completions": PARALLELISM,
                    "completionMode": "Indexed",
                    "backoffLimit": 2,
                    "template": job_tmpl,
                },
                "status": status,
            }
        )
        for w in range(PARALLELISM):
            node_name = node_names[(w + idx) % len(node_names)]
            pname = f"{job_name}-{w}-{sc.pod_suffix()}"
            started = begin + timedelta(seconds=sc.rng.randint(1, 5))
            if running:
                statuses = [k.running_status("export", EXPORT_IMAGE, started)]
                phase = "Running"
                ip = sc.pod_ip(node_name)
            else:
                statuses = [
                    {
                        "name": "export",
                        "image": EXPORT_IMAGE,
                        "imageID": f"{EXPORT_IMAGE.split(':')[0]}@sha256:{k.digest(EXPORT_IMAGE)}",
                        "ready": False,
                        "started": False,
                        "restartCount": 0,
                        "state": {
                            "terminated": k.terminated(
                                "Completed", 0, started, end - timedelta(seconds=w * 3)
                            )
                        },
                        "lastState": {},
                    }
                ]
                phase = "Succeeded"
                ip = ""
            tmpl = {
                "metadata": {
                    "labels": {
                        "app.kubernetes.io/name": "invoice-export",
                        "job-name": job_name,
                        "batch.kubernetes.io/job-name": job_name,
                        "batch.kubernetes.io/job-completion-index": str(w),
                    },
                    "annotations": {"batch.kubernetes.io/job-completion-index": str(w)},
                },
                "spec": job_tmpl["spec"],
            }
            sc.add(
                k.pod(
                    "billing",
                    pname,
                    sc.uid(),
                    k.owner("Job", job_name, job_uid, "batch/v1"),
                    tmpl,
                    node_name,
                    ip,
                    k.node_ip(node_name),
                    started,
                    statuses,
                    phase=phase,
                    conditions=k.pod_conditions(started, started, running, "PodCompleted"),
                )
            )
            _export_run_logs(sc, pname, node_name, job_name, w, begin, end, running)
            sc.event(
                "billing",
                "Job",
                job_name,
                "SuccessfulCreate",
                f"Created pod: {pname}",
                run_at + timedelta(seconds=1),
                api_version="batch/v1",
                component="job-controller",
            )
            for reason, msg in (
                ("Scheduled", f"Successfully assigned billing/{pname} to {node_name}"),
                ("Pulled", f'Container image "{EXPORT_IMAGE}" already present on machine'),
                ("Created", "Created container export"),
                ("Started", "Started container export"),
            ):
                sc.event("billing", "Pod", pname, reason, msg, started)
        sc.event(
            "billing",
            "CronJob",
            "invoice-export",
            "SuccessfulCreate",
            f"Created job {job_name}",
            run_at,
            api_version="batch/v1",
            component="cronjob-controller",
        )
        if not running:
            sc.event(
                "billing",
                "Job",
                job_name,
                "Completed",
                "Job completed",
                end,
                api_version="batch/v1",
                component="job-controller",
            )
            sc.event(
                "billing",
                "CronJob",
                "invoice-export",
                "SawCompletedJob",
                f"Saw completed job: {job_name}, status: Complete",
                end + timedelta(seconds=1),
                api_version="batch/v1",
                component="cronjob-controller",
            )
    sc.add(
        {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": {
                "name": "invoice-export",
                "namespace": "billing",
                "uid": cj_uid,
                "creationTimestamp": k.iso(cj_created),
                "labels": {"app.kubernetes.io/name": "invoice-export", "team": "billing"},
                "annotations": {
                    "kestrel.io/owner": "billing-platform",
                    "kestrel.io/change": "BILL-1187 near-real-time invoice export to the lake",
                },
            },
            "spec": {
                "schedule": "*/20 * * * *",
                "timeZone": "Etc/UTC",
                "concurrencyPolicy": "Forbid",
                "startingDeadlineSeconds": 300,
                "successfulJobsHistoryLimit": 2,
                "failedJobsHistoryLimit": 1,
                "suspend": False,
                "jobTemplate": {
                    "metadata": {"labels": {"app.kubernetes.io/name": "invoice-export"}},
                    "spec": {
                        "parallelism": PARALLELISM,
                        "completions": PARALLELISM,
                        "completionMode": "Indexed",
                        "backoffLimit": 2,
                        "template": job_tmpl,
                    },
                },
            },
            "status": {
                "active": active_refs,
                "lastScheduleTime": k.iso(runs[-1]),
                "lastSuccessfulTime": k.iso(run_spans[-2][1]),
            },
        }
    )
    sc.add(*job_objs)

    # ---------------- metrics ----------------
    base_store = {p.name: sc.rng.randint(14, 20) for p in store.pods}

    def store_conns(t: datetime) -> float:
        if not exhausted(t):
            return float(sum(base_store.values()))
        return 300 - 3 - export_conns(t) - 19 - 4

    for state, share in (("active", 0.18), ("idle", 0.74), ("idle in transaction", 0.08)):
        for user, fn in (
            ("storefront", store_conns),
            ("order_worker", lambda _t: 19.0),
            ("billing_export", export_conns),
            ("postgres_exporter", lambda _t: 1.0),
        ):
            if user == "postgres_exporter" and state != "active":
                continue
            sc.metrics.gauge(
                "pg_stat_activity_count",
                {"datname": "orders", "state": state, "usename": user, "pod": pg_pod.name},
                lambda t, f=fn, s=share, u=user: round(f(t) * s) if u != "postgres_exporter" else 1,
                help_text="number of connections in this state",
            )
    sc.metrics.gauge(
        "pg_settings_max_connections",
        {"pod": pg_pod.name, "server": "orders-db-0:5432"},
        lambda _t: 300,
        help_text="Sets the maximum number of concurrent connections.",
    )
    sc.metrics.gauge(
        "pg_settings_superuser_reserved_connections",
        {"pod": pg_pod.name, "server": "orders-db-0:5432"},
        lambda _t: 3,
        help_text="Sets the number of connection slots reserved for superusers.",
    )
    sc.metrics.gauge(
        "pg_up", {"pod": pg_pod.name}, lambda _t: 1, help_text="Whether the last scrape was able."
    )
    k.container_metrics(
        sc, "data", pg.pods, "postgres", lambda t: 0.9 + (0.8 if exhausted(t) else 0.0), 6.1 * k.GI
    )
    for p in store.pods:
        sc.metrics.gauge(
            "hikaricp_connections_pending",
            {"namespace": "shop", "pod": p.name, "pool": "HikariPool-1"},
            lambda t: sc.rng.randint(6, 31) if exhausted(t) else 0,
            help_text="Pending threads",
        )
    for p in store.pods:
        sc.metrics.counter(
            "hikaricp_connections_timeout",
            {"namespace": "shop", "pod": p.name, "pool": "HikariPool-1"},
            lambda t: 0.35 if exhausted(t) else 0.0,
            start=sc.rng.randint(40, 90),
            integer=True,
            help_text="Connection timeout total count",
        )
    for p in store.pods:
        for code, fn in (
            ("200", lambda t: 21.0 - (3.0 if exhausted(t) else 0.0)),
            ("500", lambda t: 3.1 if exhausted(t) else 0.02),
        ):
            sc.metrics.counter(
                "http_server_requests_seconds_count",
                {"namespace": "shop", "pod": p.name, "status": code, "uri": "/api/**"},
                k.noisy(sc, fn, 0.1),
                start=sc.rng.randint(400_000, 900_000),
                integer=True,
                help_text="Duration of HTTP server request handling",
            )
    for i, run_at in enumerate(runs):
        job_name = f"invoice-export-{int(run_at.timestamp()) // 60}"
        begin, end = run_spans[i]
        sc.metrics.gauge(
            "kube_job_status_active",
            {"namespace": "billing", "job_name": job_name},
            lambda t, b=begin, e=end, i=i: (
                None if i == 0 and t > run_spans[2][0] else (PARALLELISM if b <= t <= e else 0)
            ),
            help_text="The number of actively running pods.",
        )
    k.container_metrics(sc, "shop", store.pods, "storefront", 0.45, 880 * k.MI)
    k.restarts_metric(sc, "data", pg.pods, "postgres", 1)
    k.restarts_metric(sc, "shop", store.pods, "storefront")

    # ---------------- logs ----------------
    start = sc.ago(minutes=60)
    pid = 31000
    for t in sc.poisson_times(start, sc.now, lambda t: 3.0 if exhausted(t) else 0.0):
        pid += sc.rng.randint(1, 9)
        sc.log(
            t,
            "data",
            pg_pod.name,
            "postgres",
            "orders-db",
            "error",
            f"{t.strftime('%Y-%m-%d %H:%M:%S')}.{t.microsecond // 1000:03d} UTC [{pid}] "
            "storefront@orders FATAL:  sorry, too many clients already",
            pg_pod.node,
        )
    for begin, end in run_spans:
        for t in sc.poisson_times(max(begin, start), min(end, sc.now), lambda _t: 1.2):
            pid += sc.rng.randint(1, 9)
            ms = sc.rng.uniform(1000, 4200)
            sc.log(
                t,
                "data",
                pg_pod.name,
                "postgres",
                "orders-db",
                "info",
                f"{t.strftime('%Y-%m-%d %H:%M:%S')}.{t.microsecond // 1000:03d} UTC [{pid}] "
                f"billing_export@orders LOG:  duration: {ms:.3f} ms  statement: COPY (SELECT i.* "
                f"FROM invoices i WHERE i.partition_key = {sc.rng.randint(1, 480)} AND "
                "i.updated_at >= now() - interval '20 minutes') TO STDOUT WITH (FORMAT csv)",
                pg_pod.node,
            )
    for t in sc.poisson_times(start, sc.now, lambda _t: 0.2):
        sc.log(
            t,
            "data",
            pg_pod.name,
            "postgres",
            "orders-db",
            "info",
            f"{t.strftime('%Y-%m-%d %H:%M:%S')}.{t.microsecond // 1000:03d} UTC [64] LOG:  "
            f"checkpoint complete: wrote {sc.rng.randint(900, 9000)} buffers "
            f"({sc.rng.uniform(0.5, 4):.1f}%); 0 WAL file(s) added, 0 removed, "
            f"{sc.rng.randint(1, 6)} recycled",
            pg_pod.node,
        )
    for t in sc.poisson_times(start, sc.now, lambda _t: 0.15):
        pid += 3
        sc.log(
            t,
            "data",
            pg_pod.name,
            "postgres",
            "orders-db",
            "info",
            f"{t.strftime('%Y-%m-%d %H:%M:%S')}.{t.microsecond // 1000:03d} UTC [{pid}] "
            "order_worker@orders LOG:  could not receive data from client: Connection reset by "
            "peer",
            pg_pod.node,
        )
    for p in store.pods:
        for t in sc.poisson_times(start, sc.now, lambda t: 1.1 if exhausted(t) else 0.0):
            if sc.rng.random() < 0.55:
                msg = (
                    "o.h.engine.jdbc.spi.SqlExceptionHelper : FATAL: sorry, too many clients "
                    "already"
                )
                etype = "org.postgresql.util.PSQLException"
            else:
                msg = (
                    "o.s.web.servlet.DispatcherServlet : Request processing failed: "
                    "org.springframework.dao.DataAccessResourceFailureException: Unable to "
                    "acquire JDBC Connection; HikariPool-1 - Connection is not available, "
                    "request timed out after 30000ms."
                )
                etype = "org.springframework.dao.DataAccessResourceFailureException"
            sc.log(
                t,
                "shop",
                p.name,
                "storefront",
                "storefront",
                "error",
                msg,
                p.node,
                error__type=etype,
            )
        for t in sc.poisson_times(start, sc.now, lambda _t: 0.5):
            sc.log(
                t,
                "shop",
                p.name,
                "storefront",
                "storefront",
                "info",
                f"c.k.s.web.RequestLog : GET /api/products/{sc.rng.randint(1000, 9999)} 200 "
                f"{sc.rng.randint(8, 90)}ms",
                p.node,
            )
        for t in sc.poisson_times(start, sc.now, lambda _t: 0.08):
            sc.log(
                t,
                "shop",
                p.name,
                "storefront",
                "storefront",
                "warn",
                "o.s.b.a.r.RedisHealthIndicator : Redis health check took 612ms (threshold 500ms)",
                p.node,
            )
    k.background_logs(
        sc,
        "shop",
        worker.pods,
        "order-worker",
        "order-worker",
        0.6,
        [
            ("info", "processed order event id={id} in {ms}ms", 10),
            (
                "warn",
                "Deprecated configuration property 'spring.datasource.initialization-mode' "
                "found, use 'spring.sql.init.mode'",
                1,
            ),
        ],
    )
    k.background_logs(
        sc,
        "shop",
        search.pods,
        "catalog-search",
        "catalog-search",
        0.3,
        [("info", "query served hits={n} took={ms}ms", 10)],
    )
    for t in sc.poisson_times(start, sc.now, lambda t: 1.5 + (2.5 if exhausted(t) else 0.0)):
        p = sc.rng.choice(plat.ingress.pods)
        target = sc.rng.choice(store.pods)
        bad = exhausted(t) and sc.rng.random() < 0.6
        sc.log(
            t,
            "ingress-nginx",
            p.name,
            "controller",
            "ingress-nginx",
            "info",
            k.ingress_line(
                sc,
                t,
                "GET",
                f"/api/cart/{sc.hexid(8)}",
                500 if bad else 200,
                30.0 if bad else sc.rng.uniform(0.02, 0.2),
                "shop",
                "storefront",
                8080,
                target.ip,
            ),
            p.node,
            http__response__status_code=500 if bad else 200,
        )

    sc.write(
        root,
        title="storefront 500s with 'too many clients' from orders-db, on and off",
        report="""
storefront is throwing 500s in bursts since lunch, logs full of "FATAL: sorry, too many clients
already" from postgres. orders-db (data ns) is clearly at its limit, it comes and goes every few
minutes. DBA is out today - do we need to bump max_connections / move to a bigger instance? it did
restart a few days ago too, maybe something is off with it. also storefront 4.12 went out ~12:05.
""",
        category="resource_exhaustion",
        culprit=("CronJob", "billing", "invoice-export"),
        evidence=["sorry, too many clients already", "billing_export", "max_connections = 300"],
        fix=(
            "Cap invoice-export's connections (EXPORT_WORKERS=60 x parallelism 4 = 240 of "
            "orders-db's 300 slots) or put it behind a pooler such as PgBouncer, and suspend the "
            "CronJob until then; orders-db itself and storefront 4.12 are fine."
        ),
    )


def _export_run_logs(
    sc: k.Scenario,
    pod_name: str,
    node_name: str,
    job_name: str,
    index: int,
    begin: datetime,
    end: datetime,
    running: bool,
) -> None:
    sc.log(
        begin + timedelta(seconds=3),
        "billing",
        pod_name,
        "export",
        "invoice-export",
        "info",
        f"invoice-export 0.3.0 job={job_name} index={index}/{PARALLELISM} window=20m "
        "target=s3://kestrel-billing-exports/invoices/",
        node_name,
    )
    sc.log(
        begin + timedelta(seconds=5),
        "billing",
        pod_name,
        "export",
        "invoice-export",
        "info",
        f"opened worker pool: {WORKERS} connections to orders-db.data.svc:5432/orders as "
        "billing_export",
        node_name,
    )
    for t in sc.poisson_times(begin + timedelta(seconds=8), min(end, sc.now), lambda _t: 1.5):
        sc.log(
            t,
            "billing",
            pod_name,
            "export",
            "invoice-export",
            "info",
            f"exported partition {index * 120 + sc.rng.randint(1, 120)}/480 "
            f"rows={sc.rng.randint(9000, 26000)} worker={sc.rng.randint(0, WORKERS - 1)}",
            node_name,
        )
    if not running:
        sc.log(
            end - timedelta(seconds=index * 3 + 1),
            "billing",
            pod_name,
            "export",
            "invoice-export",
            "info",
            f"export finished: partitions=120 rows={sc.rng.randint(1_800_000, 2_400_000)} "
            f"elapsed={int((end - begin).total_seconds())}s",
            node_name,
        )
