"""6. cpu_throttling: a cost-saving change lowered search-api's CPU limit (same image); CFS
throttling, latency up."""

from __future__ import annotations

from datetime import timedelta

from ._kit import (
    Cluster,
    Metrics,
    Scenario,
    add_nodes,
    container,
    endpoints,
    event,
    http_probe,
    iso,
    jitter,
    namespace,
    rng,
    service,
    terminated,
)

SID = "search-api-cpu-limit-cut"
NOW = "2026-11-18T13:15:00Z"
ROLL = 48  # minutes ago


def build() -> Scenario:
    sc = Scenario(SID, NOW)
    ck = sc.clock
    cl = Cluster(sc, pod_net="10.90")
    for ns in ("catalog", "web", "platform"):
        sc.add(namespace(ns, ck.t(days=500)))
    nodes = add_nodes(
        cl,
        ck,
        "us-west-2",
        [
            ("80.14", "a", "40"),
            ("81.62", "b", "41"),
            ("82.9", "c", "42"),
            ("80.170", "a", "43"),
            ("81.201", "b", "44"),
        ],
        itype="m6i.2xlarge",
    )
    nowts = ck.now.timestamp()
    t_roll = ck.ago(minutes=ROLL)
    rollts = t_roll.timestamp()

    def sa(cpu_req, cpu_lim):
        return container(
            "search-api",
            "registry.tallowcart.com/catalog/search-api:5.3.0",
            cpu_req=cpu_req,
            mem_req="1536Mi",
            cpu_lim=cpu_lim,
            mem_lim="2Gi",
            ports=[("http", 8080)],
            env=[
                {
                    "name": "JAVA_TOOL_OPTIONS",
                    "value": "-XX:MaxRAMPercentage=70 -XX:+ExitOnOutOfMemoryError",
                },
                {
                    "name": "OPENSEARCH_URL",
                    "value": "https://vpc-catalog-prod-4kq7m2x.us-west-2.es.amazonaws.com",
                },
                {"name": "SPRING_PROFILES_ACTIVE", "value": "prod"},
            ],
            readiness=http_probe(
                "/actuator/health/readiness", "http", delay=20, period=10, timeout=2
            ),
            liveness=http_probe(
                "/actuator/health/liveness", "http", delay=90, period=20, timeout=3
            ),
        )

    new_c, old_c = sa("250m", "500m"), sa("1", "2")
    cause = (
        "rightsizing per FinOps FIN-2291: search-api cpu 1/2 -> 250m/500m, price-sync 500m/1 -> "
        "250m/500m"
    )
    born = [rollts + 25 * (i // 2) * 2 + 3 * (i % 2) for i in range(6)]
    sapi = cl.deployment(
        "catalog",
        "search-api",
        [new_c],
        replicas=6,
        created=ck.t(days=500),
        rs_created=iso(t_roll),
        revision=93,
        hash_="7f6d8b9c54",
        change_cause=cause,
        old=[("65b9c7d48f", ck.t(days=5, hours=3), 92, [old_c], 0)],
        pod_status=lambda i, n, nd: {
            "created": iso(ck.ago(seconds=nowts - born[i])),
            "running_since": iso(ck.ago(seconds=nowts - born[i] - 2)),
            "ready_since": iso(ck.ago(seconds=nowts - born[i] - 64)),
        },
        pod_annotations={
            "prometheus.io/scrape": "true",
            "prometheus.io/path": "/actuator/prometheus",
            "prometheus.io/port": "8080",
        },
    )
    dep = sapi["deployment"]
    new_rs, old_rs = sapi["current_rs"]["metadata"]["name"], sapi["rs"][0]["metadata"]["name"]
    svc = service(
        "catalog",
        "search-api",
        ck.t(days=500),
        selector={"app": "search-api"},
        ports=[("http", 80, "http")],
        cluster_ip="172.20.90.10",
    )
    sc.add(svc, endpoints(svc, sapi["pods"]))
    steps = [
        (0, f"Scaled up replica set {new_rs} to 2"),
        (1, f"Scaled down replica set {old_rs} to 5 from 6"),
        (2, f"Scaled up replica set {new_rs} to 3 from 2"),
        (66, f"Scaled down replica set {old_rs} to 3 from 5"),
        (67, f"Scaled up replica set {new_rs} to 5 from 3"),
        (132, f"Scaled down replica set {old_rs} to 1 from 3"),
        (133, f"Scaled up replica set {new_rs} to 6 from 5"),
        (198, f"Scaled down replica set {old_rs} to 0 from 1"),
    ]
    for off, msg in steps:
        sc.add(
            event(
                dep,
                "ScalingReplicaSet",
                msg,
                first=iso(t_roll + timedelta(seconds=off)),
                component="deployment-controller",
            )
        )
    fp = "spec.containers{search-api}"
    for i, p in enumerate(sapi["pods"]):
        pn, nd = p["metadata"]["name"], p["spec"]["nodeName"]
        t0 = ck.ago(seconds=nowts - born[i])
        sc.add(
            event(
                p,
                "Scheduled",
                f"Successfully assigned catalog/{pn} to {nd}",
                first=iso(t0),
                component="default-scheduler",
            ),
            event(
                p,
                "Pulled",
                f'Container image "{new_c["image"]}" already present on machine',
                first=iso(t0 + timedelta(seconds=1)),
                component="kubelet",
                host=nd,
                field_path=fp,
            ),
            event(
                p,
                "Created",
                "Created container search-api",
                first=iso(t0 + timedelta(seconds=1)),
                component="kubelet",
                host=nd,
                field_path=fp,
            ),
            event(
                p,
                "Started",
                "Started container search-api",
                first=iso(t0 + timedelta(seconds=2)),
                component="kubelet",
                host=nd,
                field_path=fp,
            ),
            event(
                p,
                "Unhealthy",
                f'Readiness probe failed: Get "http://{p["status"]["podIP"]}:8080/actuator/health/'
                f'readiness": dial tcp {p["status"]["podIP"]}:8080: connect: connection refused',
                first=iso(t0 + timedelta(seconds=22)),
                last=iso(t0 + timedelta(seconds=52)),
                count=4,
                type_="Warning",
                component="kubelet",
                host=nd,
                field_path=fp,
            ),
        )

    # catalog/price-sync: same FinOps change, but its usage sits far below the new limit (decoy)
    def ps(cpu_req, cpu_lim):
        return container(
            "price-sync",
            "registry.tallowcart.com/catalog/price-sync:2.8.1",
            cpu_req=cpu_req,
            mem_req="256Mi",
            cpu_lim=cpu_lim,
            mem_lim="512Mi",
            ports=[("metrics", 9102)],
        )

    t_ps = t_roll + timedelta(seconds=40)
    psd = cl.deployment(
        "catalog",
        "price-sync",
        [ps("250m", "500m")],
        replicas=2,
        created=ck.t(days=300),
        rs_created=iso(t_ps),
        revision=21,
        hash_="5d7c9f8b6",
        change_cause=cause,
        old=[("6b4f8d7c9", ck.t(days=12), 20, [ps("500m", "1")], 0)],
        pod_status=lambda i, n, nd: {"created": iso(t_ps + timedelta(seconds=20 * i))},
    )
    nrs, ors = psd["current_rs"]["metadata"]["name"], psd["rs"][0]["metadata"]["name"]
    sc.add(
        event(
            psd["deployment"],
            "ScalingReplicaSet",
            f"Scaled up replica set {nrs} to 1",
            first=iso(t_ps),
            component="deployment-controller",
        ),
        event(
            psd["deployment"],
            "ScalingReplicaSet",
            f"Scaled down replica set {ors} to 0 from 2",
            first=iso(t_ps + timedelta(seconds=41)),
            component="deployment-controller",
        ),
    )
    # catalog/catalog-indexer: OOMKilled three days ago (decoy, old)
    ci_c = container(
        "catalog-indexer",
        "registry.tallowcart.com/catalog/catalog-indexer:4.1.0",
        cpu_req="500m",
        mem_req="1Gi",
        cpu_lim="1",
        mem_lim="1Gi",
    )
    t_ci = ck.ago(days=3, hours=4)
    cl.deployment(
        "catalog",
        "catalog-indexer",
        [ci_c],
        replicas=1,
        created=ck.t(days=400),
        rs_created=ck.t(days=6),
        revision=15,
        hash_="8c5f6b7d9",
        pod_status=lambda i, n, nd: {
            "containers": {
                "catalog-indexer": {
                    "restarts": 1,
                    "running_since": iso(t_ci),
                    "last_terminated": terminated(
                        "OOMKilled", 137, ck.t(days=6), iso(t_ci - timedelta(seconds=2)), seed=n
                    ),
                }
            }
        },
    )
    # web/frontend: the caller
    fe_c = container(
        "frontend",
        "registry.tallowcart.com/web/frontend:22.4.0",
        cpu_req="500m",
        mem_req="512Mi",
        cpu_lim="2",
        mem_lim="1Gi",
        ports=[("http", 3000)],
        env=[{"name": "SEARCH_API_URL", "value": "http://search-api.catalog.svc.cluster.local"}],
        readiness=http_probe("/healthz", "http"),
    )
    fe = cl.deployment(
        "web",
        "frontend",
        [fe_c],
        replicas=4,
        created=ck.t(days=500),
        rs_created=ck.t(days=1, hours=2),
        revision=311,
        hash_="9b6c4d7f8",
    )
    fsvc = service(
        "web",
        "frontend",
        ck.t(days=500),
        selector={"app": "frontend"},
        ports=[("http", 80, "http")],
        cluster_ip="172.20.1.80",
    )
    sc.add(fsvc, endpoints(fsvc, fe["pods"]))

    # ---------------------------------------------------------------- metrics
    m = Metrics(ck.ago(minutes=120), ck.now, 60)
    rps = lambda t: 72.0 + 6 * (t - m.start) / (m.end - m.start)  # noqa: E731  (lunchtime, as every day)
    per_req_cpu = 0.0125  # core-seconds per search
    old_pods = [
        f"search-api-65b9c7d48f-{s}" for s in ("b5k2p", "w8zq4", "n6t7c", "h2m9x", "d4r8s", "q7v5j")
    ]
    old_nodes = [nodes[i % 5] for i in range(6)]
    old_gone = [rollts + 2 + 66 * (i // 2) for i in range(6)]

    def n_old(t):
        return sum(1 for g in old_gone if t < g)

    def n_new(t):
        return sum(1 for b in born if t >= b + 64)

    def per_pod_load(t):
        n = n_old(t) + n_new(t)
        return rps(t) / max(n, 1)

    for i, pn in enumerate(old_pods):
        lab = {"namespace": "catalog", "pod": pn, "container": "search-api", "node": old_nodes[i]}
        j = jitter(pn, 0.04)

        def alive(t, g=old_gone[i]):
            return t < g

        m.counter(
            "container_cpu_usage_seconds",
            "Cumulative cpu time consumed in seconds.",
            lab,
            lambda t, a=alive, j=j: per_pod_load(t) * per_req_cpu + 0.06 + j(t) if a(t) else None,
            age=5 * 86400,
        )
        m.counter(
            "container_cpu_cfs_periods",
            "Number of elapsed enforcement period intervals.",
            lab,
            lambda t, a=alive: 10.0 if a(t) else None,
            integer=True,
            age=5 * 86400,
        )
        m.counter(
            "container_cpu_cfs_throttled_periods",
            "Number of throttled period intervals.",
            lab,
            lambda t, a=alive, j=j: (0.04 + abs(j(t))) if a(t) else None,
            integer=True,
            age=5 * 86400,
        )
        m.gauge(
            "kube_pod_container_resource_limits",
            "The number of requested limit resource by a container.",
            {
                "namespace": "catalog",
                "pod": pn,
                "container": "search-api",
                "node": old_nodes[i],
                "resource": "cpu",
                "unit": "core",
            },
            lambda t, a=alive: 2 if a(t) else None,
        )
    for i, p in enumerate(sapi["pods"]):
        pn = p["metadata"]["name"]
        lab = {
            "namespace": "catalog",
            "pod": pn,
            "container": "search-api",
            "node": p["spec"]["nodeName"],
        }
        j = jitter(pn, 0.012)

        def alive(t, b=born[i]):
            return t >= b + 30

        # wanted ~0.22 cores on average but bursts; the 50 ms quota per 100 ms period caps it at 0.5
        m.counter(
            "container_cpu_usage_seconds",
            "Cumulative cpu time consumed in seconds.",
            lab,
            lambda t, a=alive, j=j: (
                min(0.492, per_pod_load(t) * per_req_cpu + 0.34) + j(t) / 4 if a(t) else None
            ),
            age=0,
        )
        m.counter(
            "container_cpu_cfs_periods",
            "Number of elapsed enforcement period intervals.",
            lab,
            lambda t, a=alive: 10.0 if a(t) else None,
            integer=True,
            age=0,
        )
        m.counter(
            "container_cpu_cfs_throttled_periods",
            "Number of throttled period intervals.",
            lab,
            lambda t, a=alive, j=j: 7.4 + j(t) * 40 if a(t) else None,
            integer=True,
            age=0,
        )
        m.counter(
            "container_cpu_cfs_throttled_seconds",
            "Total time duration the container has been throttled.",
            lab,
            lambda t, a=alive, j=j: 0.61 + j(t) * 3 if a(t) else None,
            age=0,
        )
        m.gauge(
            "kube_pod_container_resource_limits",
            "The number of requested limit resource by a container.",
            {
                "namespace": "catalog",
                "pod": pn,
                "container": "search-api",
                "node": p["spec"]["nodeName"],
                "resource": "cpu",
                "unit": "core",
            },
            lambda t, a=alive: 0.5 if a(t) else None,
        )

    def frac_new(t):
        n = n_old(t) + n_new(t)
        return n_new(t) / max(n, 1)

    def lat(t):
        f = frac_new(t)
        med = 0.048 * (1 - f) + 0.41 * f
        sig = 0.45 * (1 - f) + 0.75 * f
        return med, sig

    buckets = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    m.histogram(
        "http_server_requests_seconds",
        "Duration of HTTP server request handling",
        {
            "namespace": "catalog",
            "service": "search-api",
            "method": "GET",
            "uri": "/api/search",
            "status": "200",
            "outcome": "SUCCESS",
        },
        buckets,
        rps,
        lat,
        step=120,
        age=5 * 86400,
    )
    m.histogram(
        "opensearch_client_request_seconds",
        "Duration of requests to the OpenSearch domain",
        {"namespace": "catalog", "service": "search-api", "operation": "search"},
        buckets,
        rps,
        lambda t: (0.021, 0.35),
        step=120,
        age=5 * 86400,
    )
    for p in psd["pods"]:
        pn = p["metadata"]["name"]
        lab = {
            "namespace": "catalog",
            "pod": pn,
            "container": "price-sync",
            "node": p["spec"]["nodeName"],
        }
        b = t_ps.timestamp() + 30
        j = jitter(pn, 0.02)
        m.counter(
            "container_cpu_usage_seconds",
            "Cumulative cpu time consumed in seconds.",
            lab,
            lambda t, j=j, b=b: 0.11 + j(t) if t >= b else None,
            age=0,
        )
        m.counter(
            "container_cpu_cfs_periods",
            "Number of elapsed enforcement period intervals.",
            lab,
            lambda t, b=b: 10.0 if t >= b else None,
            integer=True,
            age=0,
        )
        m.counter(
            "container_cpu_cfs_throttled_periods",
            "Number of throttled period intervals.",
            lab,
            lambda t, b=b: 0.05 if t >= b else None,
            integer=True,
            age=0,
        )
    for p in fe["pods"]:
        m.counter(
            "http_requests",
            "Total HTTP requests served.",
            {
                "namespace": "web",
                "pod": p["metadata"]["name"],
                "service": "frontend",
                "route": "/search",
                "code": "200",
            },
            lambda t: rps(t) / 4,
        )
    sc.metrics = m

    # ---------------------------------------------------------------- logs
    r = rng(SID)
    L = sc.logs

    for i, p in enumerate(sapi["pods"]):
        pn = p["metadata"]["name"]
        t0 = ck.ago(seconds=nowts - born[i] - 3)
        start_lines = [
            (
                0,
                "info",
                "Starting SearchApiApplication v5.3.0 using Java 21.0.5 with PID 1 (/app/app.jar "
                "started by app in /app)",
            ),
            (1, "info", 'The following 1 profile is active: "prod"'),
            (19, "info", "HikariPool-1 - Starting..."),
            (
                23,
                "info",
                "HikariPool-1 - Added connection org.postgresql.jdbc.PgConnection@5b1f29fa",
            ),
            (24, "info", "HikariPool-1 - Start completed."),
            (55, "info", "Tomcat started on port 8080 (http) with context path '/'"),
            (
                58,
                "info",
                f"Started SearchApiApplication in {56 + r.uniform(0, 6):.3f} seconds (process "
                f"running for {60 + r.uniform(0, 6):.2f})",
            ),
        ]
        for off, lvl, msg in start_lines:
            L.add(
                t0 + timedelta(seconds=off, milliseconds=r.randint(0, 999)),
                "catalog",
                pn,
                "search-api",
                "search-api",
                lvl,
                msg,
                log__logger="org.springframework.boot.StartupInfoLogger"
                if "Started" in msg
                else "com.tallowcart.search",
            )
        t = born[i] + 120
        while t < nowts:
            if r.random() < 0.55:
                delta = f"{r.randint(58, 75)}s" if r.random() < 0.6 else f"1m{r.randint(1, 19)}s"
                L.add(
                    ck.ago(seconds=nowts - t),
                    "catalog",
                    pn,
                    "search-api",
                    "search-api",
                    "warn",
                    "HikariPool-1 - Thread starvation or clock leap detected (housekeeper "
                    f"delta={delta}).",
                    log__logger="com.zaxxer.hikari.pool.HikariPool",
                )
            t += 30 + r.randint(0, 60)
        t = born[i] + 90
        while t < nowts:
            L.add(
                ck.ago(seconds=nowts - t),
                "catalog",
                pn,
                "search-api",
                "search-api",
                "warn",
                f"Slow request GET /api/search took {r.randint(1100, 3900)} ms (opensearch "
                f"{r.randint(14, 38)} ms, "
                f"ranking {r.randint(900, 3600)} ms)",
                log__logger="com.tallowcart.search.web.SlowRequestFilter",
            )
            t += r.randint(20, 50)
    # old pods: the same start a week ago ran in 18 s; before the change their logs are quiet
    for i, pn in enumerate(old_pods):
        t = nowts - 120 * 60
        while t < old_gone[i]:
            if r.random() < 0.05:
                L.add(
                    ck.ago(seconds=nowts - t),
                    "catalog",
                    pn,
                    "search-api",
                    "search-api",
                    "warn",
                    f"Slow request GET /api/search took {r.randint(1010, 1300)} ms (opensearch "
                    f"{r.randint(800, 1100)} ms, "
                    f"ranking {r.randint(40, 90)} ms)",
                    log__logger="com.tallowcart.search.web.SlowRequestFilter",
                )
            t += 60
        L.add(
            ck.ago(seconds=nowts - old_gone[i]),
            "catalog",
            pn,
            "search-api",
            "search-api",
            "info",
            "Commencing graceful shutdown. Waiting for active requests to complete",
            log__logger="org.springframework.boot.web.embedded.tomcat.GracefulShutdown",
        )
    for minute in range(120, -1, -1):
        t0 = ck.ago(minutes=minute)
        ts = t0.timestamp()
        for p in fe["pods"]:
            if ts > rollts + 60 and r.random() < 0.5 * frac_new(ts):
                L.add(
                    t0 + timedelta(seconds=r.randint(0, 59)),
                    "web",
                    p["metadata"]["name"],
                    "frontend",
                    "frontend",
                    "warn",
                    "search-api slow: GET /api/search?q=<redacted> took "
                    f"{r.randint(1500, 4200)}ms (budget 800ms)",
                )
            if minute % 10 == 0:
                L.add(
                    t0 + timedelta(seconds=r.randint(0, 59)),
                    "web",
                    p["metadata"]["name"],
                    "frontend",
                    "frontend",
                    "info",
                    f"rendered {r.randint(5200, 6100)} pages in 600s",
                )
        if minute % 5 == 0:
            for p in psd["pods"] if ts > t_ps.timestamp() + 30 else []:
                L.add(
                    t0 + timedelta(seconds=r.randint(0, 59)),
                    "catalog",
                    p["metadata"]["name"],
                    "price-sync",
                    "price-sync",
                    "info",
                    f"synced {r.randint(1200, 1900)} price changes from ERP in "
                    f"{r.uniform(0.8, 1.6):.1f}s",
                )

    sc.meta = {
        "title": "Search slow since lunchtime",
        "report": (
            "search on the site is really slow since ~12:30 (p99 went from ~200ms to 2s+), "
            "traffic is normal for "
            "a tuesday. is the opensearch domain overloaded? nothing was released today afaik\n"
        ),
        "truth": {
            "category": "cpu_throttling",
            "culprit": {"kind": "Deployment", "namespace": "catalog", "name": "search-api"},
            "evidence": [
                "container_cpu_cfs_throttled_periods_total",
                "cpu: 500m",
                "FIN-2291",
                "Thread starvation or clock leap detected",
            ],
            "fix": (
                "The FinOps rightsizing cut search-api's CPU limit from 2 to 500m (same 5.3.0 "
                "image); pods now "
                "hit the CFS quota in ~75% of periods and requests queue. Restore the limit (or "
                "remove it and "
                "keep a realistic request); OpenSearch latency is unchanged and price-sync is "
                "fine under its "
                "new limit."
            ),
        },
    }
    return sc
