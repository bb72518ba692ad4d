"""1. resource_exhaustion: JVM Metaspace exhausted by per-request template compilation; no OOM
kill."""

from __future__ import annotations

import random
from datetime import timedelta

from ._kit import (
    Container,
    Scenario,
    app,
    configmap,
    cumulate,
    env,
    event,
    http_probe,
    namespace,
    node,
    parse,
    resources,
    sport,
    terminated,
    times,
)

SID = "report-renderer-metaspace"


def build() -> Scenario:
    rng = random.Random(4901)
    now = parse("2026-12-08T11:25:00Z")
    sc = Scenario(
        id=SID,
        title="Report exports answer 500 while every pod stays Running",
        now=now,
        report=(
            "PDF/CSV exports from the customer portal are failing with 500 since ~10:00, "
            "support has a pile of tickets. report-renderer pods are all Running and nothing "
            "restarted. invoice-api was deployed a few minutes ago and reports-db had slow "
            "queries last week, so probably one of those again?\n"
        ),
        truth={
            "category": "resource_exhaustion",
            "culprit": {"kind": "Deployment", "namespace": "reporting", "name": "report-renderer"},
            "evidence": [
                "java.lang.OutOfMemoryError: Metaspace",
                "MaxMetaspaceSize=256m",
                "jvm_classes_loaded_classes",
                "template cache disabled",
            ],
            "fix": (
                "Re-enable the compiled-template cache (reporting.templates.cache=true) so "
                "templates are not compiled into a new GroovyClassLoader per request, then "
                "restart report-renderer's pods; as a stop-gap raise -XX:MaxMetaspaceSize."
            ),
        },
    )
    old = now - timedelta(days=40)
    nodes = [
        ("ip-10-31-4-18.eu-central-1.compute.internal", "10.31.4.18"),
        ("ip-10-31-5-202.eu-central-1.compute.internal", "10.31.5.202"),
        ("ip-10-31-6-77.eu-central-1.compute.internal", "10.31.6.77"),
    ]
    for i, (n, ip) in enumerate(nodes):
        sc.add(
            node(
                n,
                now - timedelta(days=12 + i),
                now,
                ip=ip,
                zone=f"eu-central-1{'abc'[i]}",
                instance_type="m6i.2xlarge",
                cpu="8",
                memory_ki=32386544,
            )
        )
    for ns in ("reporting", "billing", "observability"):
        sc.add(namespace(ns, old))

    # ---------------------------------------------------------------- report-renderer (culprit)
    rr_start = now - timedelta(days=2, hours=20, minutes=13)
    renderer = Container(
        "report-renderer",
        "registry.fenwick.io/reporting/report-renderer:4.12.3",
        ports=[{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
        env=[
            *env(
                JAVA_TOOL_OPTIONS="-XX:MaxMetaspaceSize=256m -XX:MaxRAMPercentage=60.0 "
                "-XX:+UseG1GC",
                SPRING_PROFILES_ACTIVE="prod",
                REPORTS_DB_URL="jdbc:postgresql://"
                "reports-db.c8xk2p.eu-central-1.rds.amazonaws.com:5432/reports",
            ),
            {
                "name": "REPORTING_TEMPLATES_CACHE",
                "valueFrom": {
                    "configMapKeyRef": {"name": "report-renderer-config", "key": "templates.cache"}
                },
            },
        ],
        resources=resources("1", "1536Mi", "2", "2Gi"),
        readiness=http_probe("/actuator/health/readiness", "http", delay=30),
        liveness=http_probe("/actuator/health/liveness", "http", delay=60, period=20),
    )
    rr = app(
        rng,
        "report-renderer",
        "reporting",
        [renderer],
        created=now - timedelta(days=210),
        rs_created=rr_start,
        replicas=3,
        nodes=nodes,
        pod_cidr="10.31.4",
        revision=17,
        svc_ports=[sport(80, "http")],
        cluster_ip="172.20.61.14",
        labels={"team": "reporting"},
        old_rs=[("6b9f7c5d48", now - timedelta(days=9), 16)],
    )
    sc.add(*rr.objects)
    sc.add(
        configmap(
            "report-renderer-config",
            "reporting",
            now - timedelta(days=6, hours=3),
            {
                "templates.cache": "false",
                "templates.dir": "/templates",
                "render.timeout": "45s",
                "pdf.engine": "openhtmltopdf",
            },
            labels={"app": "report-renderer"},
        )
    )

    # report-scheduler: healthy caller
    sched = Container(
        "report-scheduler",
        "registry.fenwick.io/reporting/report-scheduler:2.3.0",
        ports=[{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
        env=env(RENDERER_URL="http://report-renderer.reporting.svc.cluster.local"),
        resources=resources("200m", "512Mi", None, "768Mi"),
        readiness=http_probe("/actuator/health/readiness", "http", delay=20),
    )
    rs_ = app(
        rng,
        "report-scheduler",
        "reporting",
        [sched],
        created=now - timedelta(days=180),
        rs_created=now - timedelta(days=4, hours=2),
        replicas=1,
        nodes=nodes[1:],
        pod_cidr="10.31.5",
        revision=8,
    )
    sc.add(*rs_.objects)

    # ----------------------------------------------------- billing: harmless recent rollout (decoy)
    inv = Container(
        "invoice-api",
        "registry.fenwick.io/billing/invoice-api:7.4.1",
        ports=[{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
        resources=resources("250m", "512Mi", None, "1Gi"),
        readiness=http_probe("/healthz", "http"),
    )
    inv_roll = now - timedelta(minutes=11)
    ia = app(
        rng,
        "invoice-api",
        "billing",
        [inv],
        created=now - timedelta(days=300),
        rs_created=inv_roll,
        replicas=2,
        nodes=nodes,
        pod_cidr="10.31.6",
        revision=42,
        svc_ports=[sport(80, "http")],
        old_rs=[("5d7c8b9f6c", now - timedelta(days=6), 41)],
    )
    sc.add(*ia.objects)
    old_rs = "invoice-api-5d7c8b9f6c"
    new_rs = ia.rs[-1]["metadata"]["name"]
    sc.add(
        event(
            "billing",
            "Deployment",
            "invoice-api",
            "ScalingReplicaSet",
            f"Scaled up replica set {new_rs} to 1",
            inv_roll,
            inv_roll,
            component="deployment-controller",
            api_version="apps/v1",
        ),
        event(
            "billing",
            "Deployment",
            "invoice-api",
            "ScalingReplicaSet",
            f"Scaled down replica set {old_rs} to 1 from 2",
            inv_roll + timedelta(seconds=20),
            inv_roll + timedelta(seconds=20),
            component="deployment-controller",
            api_version="apps/v1",
        ),
        event(
            "billing",
            "Deployment",
            "invoice-api",
            "ScalingReplicaSet",
            f"Scaled up replica set {new_rs} to 2 from 1",
            inv_roll + timedelta(seconds=20),
            inv_roll + timedelta(seconds=20),
            component="deployment-controller",
            api_version="apps/v1",
        ),
        event(
            "billing",
            "Deployment",
            "invoice-api",
            "ScalingReplicaSet",
            f"Scaled down replica set {old_rs} to 0 from 1",
            inv_roll + timedelta(seconds=45),
            inv_roll + timedelta(seconds=45),
            component="deployment-controller",
            api_version="apps/v1",
        ),
    )
    for p in ia.pods:
        pn, host = p["metadata"]["name"], p["spec"]["nodeName"]
        t = parse(p["metadata"]["creationTimestamp"])
        sc.add(
            event(
                "billing",
                "Pod",
                pn,
                "Scheduled",
                f"Successfully assigned billing/{pn} to {host}",
                t,
                t,
                component="default-scheduler",
            ),
            event(
                "billing",
                "Pod",
                pn,
                "Pulled",
                'Container image "registry.fenwick.io/billing/invoice-api:7.4.1" already '
                "present on machine",
                t + timedelta(seconds=1),
                t + timedelta(seconds=1),
                host=host,
                field_path="spec.containers{invoice-api}",
            ),
            event(
                "billing",
                "Pod",
                pn,
                "Created",
                "Created container invoice-api",
                t + timedelta(seconds=1),
                t + timedelta(seconds=1),
                host=host,
                field_path="spec.containers{invoice-api}",
            ),
            event(
                "billing",
                "Pod",
                pn,
                "Started",
                "Started container invoice-api",
                t + timedelta(seconds=2),
                t + timedelta(seconds=2),
                host=host,
                field_path="spec.containers{invoice-api}",
            ),
        )

    # observability: grafana with an old restart (decoy)
    graf = Container(
        "grafana",
        "docker.io/grafana/grafana:11.3.1",
        ports=[{"containerPort": 3000, "name": "grafana", "protocol": "TCP"}],
        resources=resources("100m", "256Mi", None, "512Mi"),
        readiness=http_probe("/api/health", 3000),
    )
    g_start = now - timedelta(days=5)
    ga = app(
        rng,
        "grafana",
        "observability",
        [graf],
        created=now - timedelta(days=400),
        rs_created=g_start,
        replicas=1,
        nodes=nodes[2:],
        pod_cidr="10.31.6",
        revision=23,
        restarts={0: (1, terminated("OOMKilled", 137, g_start, now - timedelta(days=3, hours=4)))},
    )
    sc.add(*ga.objects)
    prom = Container(
        "prometheus",
        "quay.io/prometheus/prometheus:v2.54.1",
        ports=[{"containerPort": 9090, "name": "web", "protocol": "TCP"}],
        resources=resources("500m", "2Gi", None, "4Gi"),
        readiness=http_probe("/-/ready", 9090),
    )
    pa = app(
        rng,
        "prometheus",
        "observability",
        [prom],
        created=now - timedelta(days=400),
        rs_created=now - timedelta(days=6, hours=1),
        replicas=1,
        nodes=nodes,
        pod_cidr="10.31.4",
        revision=11,
    )
    sc.add(*pa.objects)

    # ---------------------------------------------------------------- metrics
    ts = times(now, 3)
    m = sc.metrics
    full_at = [
        int((now - timedelta(minutes=96)).timestamp()),
        int((now - timedelta(minutes=52)).timestamp()),
        None,
    ]
    ms_max = 268435456
    meta_start = [244.0e6, 238.5e6, 234.0e6]
    cls_start = [50210, 48890, 47330]
    pods = rr.pod_names
    for i, pn in enumerate(pods):
        lab = {"namespace": "reporting", "pod": pn, "container": "report-renderer"}
        fa = full_at[i]
        t0 = ts[0]
        end_used = 266.9e6 if fa else 259.3e6
        end_t = fa or ts[-1]
        slope = (end_used - meta_start[i]) / (end_t - t0)
        used, classes = [], []
        for t in ts:
            if fa and t >= fa:
                u = 267.9e6 + rng.uniform(-0.2e6, 0.2e6)
            else:
                u = meta_start[i] + slope * (t - t0) + rng.uniform(-0.15e6, 0.15e6)
            used.append((t, round(u)))
            classes.append((t, int(cls_start[i] + (min(u, 267.9e6) - meta_start[i]) / 4300)))
        m.gauge(
            "jvm_memory_used_bytes",
            "The amount of used memory",
            lab | {"area": "nonheap", "id": "Metaspace"},
            used,
        )
        m.gauge(
            "jvm_memory_used_bytes",
            "The amount of used memory",
            lab | {"area": "heap", "id": "G1 Old Gen"},
            [
                (t, round(4.1e8 + 1.2e8 * ((t // 60) % 23) / 23 + rng.uniform(-1e7, 1e7)))
                for t in ts
            ],
        )
        m.gauge(
            "jvm_memory_max_bytes",
            "The maximum amount of memory in bytes that can be used for memory management",
            lab | {"area": "nonheap", "id": "Metaspace"},
            [(t, ms_max) for t in ts],
        )
        m.gauge(
            "jvm_classes_loaded_classes",
            "The number of classes that are currently loaded in the Java virtual machine",
            lab,
            classes,
        )
        m.counter(
            "jvm_classes_unloaded_classes",
            "The total number of classes unloaded since the Java virtual machine has started "
            "execution",
            lab,
            [(t, 212 + i * 7) for t in ts],
        )
        m.gauge(
            "container_memory_working_set_bytes",
            "Current working set of the container in bytes",
            lab,
            [(t, round(1.19e9 + 0.05e9 * i + rng.uniform(-2e7, 2e7))) for t in ts],
        )
        m.counter(
            "kube_pod_container_status_restarts",
            "The number of container restarts per container.",
            lab,
            [(t, 0) for t in ts],
        )

        def ok_rate(t: int, fa: int | None = fa) -> float:
            return 0.05 if (fa and t >= fa) else 2.1

        def err_rate(t: int, fa: int | None = fa) -> float:
            return 2.05 if (fa and t >= fa) else 0.002

        base = {
            "namespace": "reporting",
            "pod": pn,
            "service": "report-renderer",
            "method": "POST",
            "handler": "/api/v1/reports/render",
        }
        m.counter(
            "http_requests",
            "Total HTTP requests handled",
            base | {"code": "200"},
            cumulate(ts, ok_rate, start=480000 + 1000 * i),
        )
        m.counter(
            "http_requests",
            "Total HTTP requests handled",
            base | {"code": "500"},
            cumulate(ts, err_rate, start=37 + i),
        )
    # invoice-api healthy
    for pn in ia.pod_names:
        t0 = int(inv_roll.timestamp())
        m.counter(
            "http_requests",
            "Total HTTP requests handled",
            {
                "namespace": "billing",
                "pod": pn,
                "service": "invoice-api",
                "method": "GET",
                "handler": "/v1/invoices",
                "code": "200",
            },
            [(t, v) for t, v in cumulate([x for x in ts if x >= t0 + 60], lambda t: 6.0)],
        )

    # ---------------------------------------------------------------- logs
    L = sc.logs
    ctr = "report-renderer"
    tenants = ["t-1042", "t-2291", "t-3307", "t-4471", "t-5120", "t-6618", "t-7734"]
    tpls = ["statement-monthly", "invoice-detail", "usage-summary", "audit-export"]
    script_no = [41120, 40380, 39910]
    for i, pn in enumerate(pods):
        lines = []
        st = rr_start + timedelta(seconds=5 + 40 * i)
        boot = [
            (
                st + timedelta(seconds=1),
                "INFO",
                "Picked up JAVA_TOOL_OPTIONS: -XX:MaxMetaspaceSize=256m "
                "-XX:MaxRAMPercentage=60.0 -XX:+UseG1GC",
                "main",
            ),
            (
                st + timedelta(seconds=3),
                "INFO",
                "Starting ReportRendererApplication v4.12.3 using Java 17.0.12 with PID 1",
                "main",
            ),
            (
                st + timedelta(seconds=3),
                "INFO",
                'The following 1 profile is active: "prod"',
                "main",
            ),
            (st + timedelta(seconds=9), "INFO", "HikariPool-1 - Starting...", "main"),
            (
                st + timedelta(seconds=10),
                "INFO",
                "HikariPool-1 - Added connection org.postgresql.jdbc.PgConnection@5b0e1f2c",
                "main",
            ),
            (st + timedelta(seconds=10), "INFO", "HikariPool-1 - Start completed.", "main"),
            (
                st + timedelta(seconds=12),
                "WARN",
                "template cache disabled (reporting.templates.cache=false): templates are "
                "compiled per request",
                "main",
            ),
            (
                st + timedelta(seconds=14),
                "INFO",
                "Tomcat started on port 8080 (http) with context path ''",
                "main",
            ),
            (
                st + timedelta(seconds=14),
                "INFO",
                "Started ReportRendererApplication in 13.702 seconds (process running for 14.611)",
                "main",
            ),
        ]
        loggers = {
            "Picked": "",
            "Starting": "c.f.reporting.ReportRendererApplication",
            "The following": "c.f.reporting.ReportRendererApplication",
            "HikariPool": "com.zaxxer.hikari.HikariDataSource",
            "template": "c.f.reporting.template.TemplateEngine",
            "Tomcat": "o.s.b.w.embedded.tomcat.TomcatWebServer",
            "Started": "c.f.reporting.ReportRendererApplication",
        }
        for at, lvl, msg, th in boot:
            lg = next((v for k, v in loggers.items() if msg.startswith(k)), "")
            if lg:
                lines.append(
                    f"{at.strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3]}Z {lvl:>5} 1 --- "
                    f"[{th:>15}] {lg:<40} : {msg}"
                )
            else:
                lines.append(msg)
            L.add(
                at,
                "report-renderer",
                "reporting",
                pn,
                ctr,
                lvl.lower(),
                msg,
                **({"log.logger": lg} if lg else {}),
            )
        # hourly compile info lines and periodic hikari housekeeper warning over the window
        fa = full_at[i]
        t = ts[0]
        n = 0
        while t < ts[-1]:
            at = parse("1970-01-01T00:00:00Z") + timedelta(seconds=t + rng.randint(0, 59))
            full = fa is not None and t >= fa
            if not full:
                if n % 2 == 0:
                    script_no[i] += rng.randint(300, 420)
                    tpl, ten = rng.choice(tpls), rng.choice(tenants)
                    msg = (
                        f"compiled template '{tpl}' for tenant {ten} in {rng.randint(31, 88)} ms "
                        f"(class {tpl.title().replace('-', '')}Script{script_no[i]}, loader "
                        f"groovy.lang.GroovyClassLoader@{rng.randint(0x10000000, 0x7FFFFFFF):x})"
                    )
                    L.add(
                        at,
                        "report-renderer",
                        "reporting",
                        pn,
                        ctr,
                        "info",
                        msg,
                        **{"log.logger": "c.f.reporting.template.TemplateEngine"},
                    )
                    if at >= ts_dt(ts[-1]) - timedelta(minutes=30):
                        lines.append(
                            f"{at.strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3]}Z  INFO 1 --- "
                            f"[nio-8080-exec-{rng.randint(1, 64)}] c.f.reporting.template.Templat"
                            f"eEngine    : {msg}"
                        )
            else:
                for k in range(rng.randint(1, 2)):
                    a2 = at + timedelta(seconds=k * 13)
                    th = f"nio-8080-exec-{rng.randint(1, 64)}"
                    tpl, ten = rng.choice(tpls), rng.choice(tenants)
                    msg = (
                        "Servlet.service() for servlet [dispatcherServlet] in context with path "
                        "[] threw exception [Handler dispatch failed: "
                        "java.lang.OutOfMemoryError: Metaspace] with root cause"
                    )
                    stack = (
                        "java.lang.OutOfMemoryError: Metaspace\n"
                        "\tat java.base/java.lang.ClassLoader.defineClass1(Native Method)\n"
                        "\tat java.base/java.lang.ClassLoader.defineClass(ClassLoader.java:1027"
                        ")\n\tat java.base/java.security.SecureClassLoader.defineClass(SecureCla"
                        "ssLoader.java:150)\n\tat groovy.lang.GroovyClassLoader$InnerLoader.defi"
                        "neClass(GroovyClassLoader.java:1032)\n"
                        "\tat groovy.lang.GroovyClassLoader$ClassCollector.createClass(GroovyCla"
                        "ssLoader.java:704)\n\tat org.codehaus.groovy.control.CompilationUnit.co"
                        "mpile(CompilationUnit.java:686)\n\tat "
                        "groovy.lang.GroovyClassLoader.doParseClass(GroovyClassLoader.java:365)"
                        "\n\tat groovy.text.markup.MarkupTemplateEngine$MarkupTemplateMaker.<ini"
                        "t>(MarkupTemplateEngine.java:244)\n\tat "
                        "c.f.reporting.template.TemplateEngine.compile(TemplateEngine.java:88)"
                        "\n\tat c.f.reporting.render.RenderService.render(RenderService.java:57)"
                    )
                    extra = {"error.stack_trace": stack} if n % 10 == 0 else {}
                    L.add(
                        a2,
                        "report-renderer",
                        "reporting",
                        pn,
                        ctr,
                        "error",
                        msg,
                        **{
                            "log.logger": "o.a.c.c.C.[.[.[/].[dispatcherServlet]",
                            "error.type": "java.lang.OutOfMemoryError",
                            "error.message": "Metaspace",
                        },
                        **extra,
                    )
                    L.add(
                        a2,
                        "report-renderer",
                        "reporting",
                        pn,
                        ctr,
                        "info",
                        f"POST /api/v1/reports/render tenant={ten} template={tpl} status=500 "
                        f"duration_ms={rng.randint(4, 30)}",
                        **{
                            "log.logger": "c.f.reporting.web.AccessLog",
                            "http.response.status_code": 500,
                            "url.path": "/api/v1/reports/render",
                        },
                    )
                    if at >= ts_dt(ts[-1]) - timedelta(minutes=12) and k == 0:
                        lines.append(
                            f"{a2.strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3]}Z ERROR 1 --- [{th:>15}] "
                            f"o.a.c.c.C.[.[.[/].[dispatcherServlet]    : {msg}"
                        )
                        lines.append("")
                        lines.extend(stack.split("\n"))
                if n % 17 == 0:
                    a3 = at + timedelta(seconds=41)
                    msg = 'Exception in thread "scheduling-1" java.lang.OutOfMemoryError: Metaspace'
                    L.add(
                        a3,
                        "report-renderer",
                        "reporting",
                        pn,
                        ctr,
                        "error",
                        msg,
                        **{"error.type": "java.lang.OutOfMemoryError"},
                    )
            if n % 47 == 5:
                a4 = at + timedelta(seconds=7)
                msg = (
                    "HikariPool-1 - Thread starvation or clock leap detected (housekeeper "
                    f"delta={rng.randint(61, 95)}s{rng.randint(100, 999)}ms)."
                )
                L.add(
                    a4,
                    "report-renderer",
                    "reporting",
                    pn,
                    ctr,
                    "warn",
                    msg,
                    **{"log.logger": "com.zaxxer.hikari.pool.HikariPool"},
                )
                if a4 >= ts_dt(ts[-1]) - timedelta(minutes=25):
                    lines.append(
                        f"{a4.strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3]}Z  WARN 1 --- [ool-1 "
                        f"housekeeper] com.zaxxer.hikari.pool.HikariPool        : {msg}"
                    )
            t += 60
            n += 1
        sc.pod_log("reporting", pn, ctr, lines)

    # scheduler logs: 500s from the renderer
    spn = rs_.pod_names[0]
    t = int((now - timedelta(minutes=96)).timestamp())
    while t < ts[-1]:
        at = ts_dt(t) + timedelta(seconds=rng.randint(0, 50))
        job = rng.randint(880000, 899999)
        L.add(
            at,
            "report-scheduler",
            "reporting",
            spn,
            "report-scheduler",
            "error",
            f"render job {job} failed: 500 Internal Server Error from POST "
            "http://report-renderer.reporting.svc.cluster.local/api/v1/reports/render; will "
            "retry in 300s",
            **{"log.logger": "c.f.reporting.scheduler.RenderJobRunner"},
        )
        t += 120
    # invoice-api startup lines (harmless)
    for p in ia.pods:
        st = parse(p["metadata"]["creationTimestamp"]) + timedelta(seconds=3)
        for k, msg in enumerate(
            [
                "invoice-api 7.4.1 starting",
                "connected to billing-db (pool size 20)",
                "listening on :8080",
            ]
        ):
            L.add(
                st + timedelta(seconds=k),
                "invoice-api",
                "billing",
                p["metadata"]["name"],
                "invoice-api",
                "info",
                msg,
            )
        L.add(
            st + timedelta(seconds=5),
            "invoice-api",
            "billing",
            p["metadata"]["name"],
            "invoice-api",
            "warn",
            "feature flag 'pdf-v2-preview' not found in flag store, defaulting to false",
        )
    return sc


def ts_dt(t: int):
    return parse("1970-01-01T00:00:00Z") + timedelta(seconds=t)
