"""Brindle Home: product-api 4.12.0 reads the product cache under a new, locale-aware key
(product:v2:<locale>:<sku>) but still writes the old one, so every lookup misses; every
request falls through to catalog-db, whose load and slow-query log make it look guilty.
Nothing errs: latency rises."""

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
    histogram_samples,
    namespace,
    node,
    owner_ref,
    parse,
    pod,
    pods_for,
    running,
    service,
    simple_service,
    steps,
    ts,
    ts_ms,
    uid,
)

NOW = parse("2026-11-25T10:30:00Z")
NS = "storefront"
ROLL = NOW - timedelta(minutes=96)
NODES = [
    f"ip-172-20-{a}-{b}.ec2.internal"
    for a, b in ((33, 140), (41, 7), (52, 88), (33, 19), (41, 210), (52, 61))
]
BOUNDS = [0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5]
IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/brindle/product-api"


def _statefulset(
    name: str,
    created: datetime,
    replicas: int,
    containers: list[dict[str, object]],
    service_name: str,
) -> dict[str, object]:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": uid("StatefulSet", NS, name),
            "creationTimestamp": ts(created),
            "labels": {"app.kubernetes.io/name": name},
            "generation": 4,
        },
        "spec": {
            "replicas": replicas,
            "serviceName": service_name,
            "selector": {"matchLabels": {"app.kubernetes.io/name": name}},
            "podManagementPolicy": "OrderedReady",
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {
                "metadata": {"labels": {"app.kubernetes.io/name": name}},
                "spec": {"containers": containers},
            },
        },
        "status": {
            "replicas": replicas,
            "readyReplicas": replicas,
            "currentReplicas": replicas,
            "updatedReplicas": replicas,
            "availableReplicas": replicas,
            "observedGeneration": 4,
            "currentRevision": f"{name}-6d8f7c9b5",
            "updateRevision": f"{name}-6d8f7c9b5",
        },
    }


def build() -> Scenario:
    sc = Scenario(
        id="storefront-product-api-slow-db-busy",
        title="Product pages slow, catalog-db CPU high, no errors",
        now=NOW,
        report="""
PDPs have been sluggish since around 9, product-api p99 went from ~120ms to almost a second.
catalog-db CPU is at 80%+ and the DBAs see a flood of product lookups — did a crawler or the
feed exporter start hammering the db? no errors anywhere as far as I can see
""",
        truth={
            "category": "bad_rollout",
            "culprit": {"kind": "Deployment", "namespace": NS, "name": "product-api"},
            "evidence": ["product-api:4.12.0", "cache_gets_total", "product:v2", 'result="miss"'],
            "fix": "Roll product-api back to 4.11.3 (or fix 4.12.0 so that it writes the "
            "cache under the same product:v2:<locale>:<sku> key it reads); the cache "
            "hit ratio fell from ~95% to ~0 at the rollout and every lookup goes to "
            "catalog-db, which is only the victim.",
        },
    )
    created = NOW - timedelta(days=700)
    sc.add(namespace(NS, created), namespace("monitoring", created))
    for i, name in enumerate(NODES):
        sc.add(
            node(
                name,
                NOW - timedelta(days=6, hours=3 * i),
                NOW,
                cpu="8",
                memory="32Gi",
                region="us-east-1",
                zone="abc"[i % 3],
                instance="m7i.2xlarge",
                kubelet="v1.31.2-eks-7f9249a",
            )
        )
    rng = sc.rng
    name = "product-api"
    env = [
        {"name": "SPRING_PROFILES_ACTIVE", "value": "prod"},
        {"name": "CACHE_REDIS_HOST", "value": "product-cache.storefront.svc"},
        {
            "name": "SPRING_DATASOURCE_URL",
            "value": "jdbc:postgresql://catalog-db.storefront.svc:5432/catalog",
        },
        {"name": "JAVA_TOOL_OPTIONS", "value": "-XX:MaxRAMPercentage=75"},
    ]

    def spec(tag: str) -> dict[str, object]:
        return container(
            name,
            f"{IMAGE}:{tag}",
            port=8080,
            cpu="1",
            memory="1Gi",
            memory_limit="1536Mi",
            env=env,
            readiness="/actuator/health/readiness",
            liveness="/actuator/health/liveness",
        )

    old = Revision(
        52, [spec("4.11.3")], NOW - timedelta(days=6, hours=5), 0, change_cause="product-api 4.11.3"
    )
    new = Revision(
        53,
        [spec("4.12.0")],
        ROLL,
        6,
        change_cause="product-api 4.12.0: locale-aware product cache (STORE-2210)",
    )
    sc.add(deployment(NS, name, created, [old, new], 6))
    pods = pods_for(sc, NS, name, new, NODES, ROLL + timedelta(seconds=4))
    old_names = [
        f"{name}-{old.hash(NS, name)}-{s}"
        for s in ("k2x9p", "q7mzt", "b5wnd", "h8ccr", "t4vfl", "z9rjm")
    ]
    sc.add(service(NS, name, created, 8080), endpoints(NS, name, created, pods, 8080))
    # redis cache and postgres
    redis = container("redis", "redis:7.2.5-alpine", cpu="250m", memory="2Gi", readiness=None)
    redis["ports"] = [{"name": "redis", "containerPort": 6379, "protocol": "TCP"}]
    exporter = container(
        "exporter", "oliver006/redis_exporter:v1.62.0", cpu="50m", memory="64Mi", readiness=None
    )
    sc.add(_statefulset("product-cache", created, 1, [redis, exporter], "product-cache"))
    pg = container("postgres", "postgres:16.4", cpu="2", memory="8Gi", readiness=None)
    pg["resources"]["limits"] = {"memory": "8Gi"}
    pg["ports"] = [{"name": "postgres", "containerPort": 5432, "protocol": "TCP"}]
    pg_exp = container(
        "metrics",
        "quay.io/prometheuscommunity/postgres-exporter:v0.15.0",
        cpu="50m",
        memory="64Mi",
        readiness=None,
    )
    sc.add(_statefulset("catalog-db", created, 2, [pg, pg_exp], "catalog-db"))
    stateful_pods = {}
    for sts, conts, count in (
        ("product-cache", [redis, exporter], 1),
        ("catalog-db", [pg, pg_exp], 2),
    ):
        for i in range(count):
            started = NOW - timedelta(days=5, hours=4 - i)
            p = pod(
                NS,
                f"{sts}-{i}",
                ("StatefulSet", sts),
                NODES[3 + i],
                conts,
                [running(started) for _ in conts],
                started - timedelta(seconds=2),
                labels={
                    "app.kubernetes.io/name": sts,
                    "statefulset.kubernetes.io/pod-name": f"{sts}-{i}",
                },
            )
            p["metadata"]["ownerReferences"] = [owner_ref("StatefulSet", sts, NS)]
            sc.add(p)
            stateful_pods[f"{sts}-{i}"] = p
    for sts, port in (("product-cache", 6379), ("catalog-db", 5432)):
        members = [p for n, p in stateful_pods.items() if n.startswith(sts)]
        sc.add(
            service(NS, sts, created, port, port_name="tcp"),
            endpoints(NS, sts, created, members[:1], port, port_name="tcp"),
        )
    _, web = simple_service(
        sc,
        NS,
        "storefront-web",
        "123456789012.dkr.ecr.us-east-1.amazonaws.com/brindle/storefront-web:2026.11.24-2",
        replicas=4,
        nodes=NODES,
        created=created,
        rolled=NOW - timedelta(days=1, hours=3),
        port=3000,
        number=311,
        memory="512Mi",
    )
    _, cart = simple_service(
        sc,
        NS,
        "cart-api",
        "123456789012.dkr.ecr.us-east-1.amazonaws.com/brindle/cart-api:8.3.1",
        replicas=3,
        nodes=NODES,
        created=created,
        rolled=NOW - timedelta(days=3),
        number=77,
    )
    sc.add(
        event(
            NS,
            "Pod",
            web[2]["metadata"]["name"],
            "Unhealthy",
            'Readiness probe failed: Get "http://10.0.41.77:3000/healthz": context '
            "deadline exceeded (Client.Timeout exceeded while awaiting headers)",
            NOW - timedelta(minutes=18),
            NOW - timedelta(minutes=18),
            type_="Warning",
            host=web[2]["spec"]["nodeName"],
        )
    )
    feed = {
        "name": "exporter",
        "image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/brindle/feed-exporter:1.3.0",
        "args": ["--target=s3://brindle-feeds/google-shopping"],
        "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}, "limits": {"memory": "1Gi"}},
    }
    sc.add(
        {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": {
                "name": "feed-exporter",
                "namespace": NS,
                "uid": uid("CronJob", NS, "feed-exporter"),
                "creationTimestamp": ts(created),
                "labels": {"app.kubernetes.io/name": "feed-exporter"},
            },
            "spec": {
                "schedule": "0 */4 * * *",
                "concurrencyPolicy": "Forbid",
                "successfulJobsHistoryLimit": 1,
                "jobTemplate": {
                    "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [feed]}}}
                },
            },
            "status": {
                "lastScheduleTime": ts(NOW - timedelta(minutes=30)),
                "lastSuccessfulTime": ts(NOW - timedelta(minutes=27)),
            },
        }
    )
    sc.add(
        event(
            NS,
            "CronJob",
            "feed-exporter",
            "SawCompletedJob",
            "Saw completed job: feed-exporter-29401560, status: Complete",
            NOW - timedelta(minutes=27),
            component="cronjob-controller",
            api="batch/v1",
        )
    )

    # --- product-api logs (Spring Boot)
    for p in pods:
        pod_name = p["metadata"]["name"]
        began = parse(p["status"]["startTime"])
        for sec, logger, msg in (
            (
                1,
                "c.b.product.ProductApiApplication",
                "Starting ProductApiApplication v4.12.0 using Java 21.0.5 with PID 1",
            ),
            (
                6,
                "c.b.product.cache.ProductCacheConfig",
                "Product cache 'products' on "
                "product-cache.storefront.svc:6379, ttl=PT6H, key schema product:v2:{locale}:{sku}",
            ),
            (8, "com.zaxxer.hikari.HikariDataSource", "HikariPool-1 - Start completed."),
            (
                14,
                "c.b.product.ProductApiApplication",
                "Started ProductApiApplication in 13.284 seconds (process running for 14.1)",
            ),
        ):
            moment = began + timedelta(seconds=sec)
            line = (
                f"{ts_ms(moment)}  INFO 1 --- [product-api] [           main] {logger:<40} : {msg}"
            )
            sc.log(NS, pod_name, name, line)
            sc.doc(moment, NS, pod_name, name, name, "info", msg, **{"log.logger": logger})
        t = NOW - timedelta(minutes=40)
        while t < NOW:
            t += timedelta(seconds=rng.randint(2, 9))
            if t >= NOW:
                break
            ms = int(rng.lognormvariate(5.6, 0.5))
            sku = f"BH-{rng.randint(10000, 99999)}"
            line = (
                f"{ts_ms(t)}  INFO 1 --- [product-api] [nio-8080-exec-{rng.randint(1, 64)}] "
                f"c.b.product.web.AccessLog              : GET /v1/products/{sku} 200 {ms}ms"
            )
            sc.log(NS, pod_name, name, line)
            if rng.random() < 0.08:
                sc.doc(
                    t,
                    NS,
                    pod_name,
                    name,
                    name,
                    "info",
                    f"GET /v1/products/{sku} 200 {ms}ms",
                    **{"http.response.status_code": 200, "event.duration": ms * 1_000_000},
                )
    for k, pod_name in enumerate(old_names):
        moment = old.created + timedelta(seconds=10 + 17 * k)
        msg = (
            "Product cache 'products' on product-cache.storefront.svc:6379, ttl=PT6H, "
            "key schema product:{sku}"
        )
        sc.doc(
            moment,
            NS,
            pod_name,
            name,
            name,
            "info",
            msg,
            **{"log.logger": "c.b.product.cache.ProductCacheConfig"},
        )
    # --- postgres slow-query log after the rollout (log_min_duration_statement = 250ms)
    db0 = "catalog-db-0"
    t = NOW - timedelta(hours=2, minutes=30)
    while t < NOW:
        t += timedelta(seconds=rng.randint(1, 6) if t >= ROLL else rng.randint(200, 900))
        if t >= NOW:
            break
        dur = rng.uniform(260, 1400) if t >= ROLL else rng.uniform(251, 320)
        pid = rng.randint(20000, 40000)
        stmt = (
            "SELECT p.id, p.sku, p.title, p.attributes, pr.amount, pr.currency, "
            "i.available FROM product p JOIN price pr ON pr.product_id = p.id LEFT JOIN "
            "inventory_summary i ON i.sku = p.sku WHERE p.sku = $1 AND pr.locale = $2"
        )
        if t < ROLL and rng.random() < 0.5:
            stmt = "SELECT count(*) FROM product_review WHERE product_id = $1"
        line = (
            f"{t.strftime('%Y-%m-%d %H:%M:%S.')}{rng.randint(0, 999):03d} UTC [{pid}] "
            f"catalog_app@catalog LOG:  duration: {dur:.3f} ms  execute <unnamed>: {stmt}"
        )
        sc.log(NS, db0, "postgres", line)
        if rng.random() < 0.35:
            sc.doc(
                t,
                NS,
                db0,
                "postgres",
                "catalog-db",
                "info",
                f"duration: {dur:.3f} ms  execute <unnamed>: {stmt}",
            )
    for k in range(3):
        moment = NOW - timedelta(minutes=12 + 25 * k)
        msg = "checkpoint complete: wrote 18211 buffers (13.9%); 0 WAL file(s) added"
        sc.log(
            NS,
            db0,
            "postgres",
            f"{moment.strftime('%Y-%m-%d %H:%M:%S.%f')[:-3]} UTC [61] LOG:  {msg}",
        )
        sc.doc(moment, NS, db0, "postgres", "catalog-db", "info", msg)
    # --- metrics
    times = steps(NOW - timedelta(hours=3), NOW)
    before = [m for m in times if m < ROLL]
    after = [m for m in times if m >= ROLL]
    rate = 35.0

    def old_shape(m: datetime) -> list[float]:
        return [0.62, 0.9, 0.991, 0.997, 0.999, 1.0, 1.0]

    def new_shape(m: datetime) -> list[float]:
        return [0.01, 0.04, 0.12, 0.42, 0.78, 0.97, 0.998]

    for pod_name in old_names:
        lab = {"namespace": NS, "pod": pod_name, "service": name}
        sc.metrics.histogram(
            "http_server_requests_seconds",
            {**lab, "method": "GET", "uri": "/v1/products/{sku}", "status": "200"},
            BOUNDS,
            histogram_samples(before, lambda m: rate, old_shape, BOUNDS),
        )
        for result, share in (("hit", 0.95), ("miss", 0.05)):
            sc.metrics.counter(
                "cache_gets",
                {**lab, "cache": "products", "result": result},
                cumulative(before, lambda m, share=share: rate * share),
            )
    for p in pods:
        pod_name = p["metadata"]["name"]
        lab = {"namespace": NS, "pod": pod_name, "service": name}
        mine = [m for m in after if m >= parse(p["status"]["startTime"])]
        sc.metrics.histogram(
            "http_server_requests_seconds",
            {**lab, "method": "GET", "uri": "/v1/products/{sku}", "status": "200"},
            BOUNDS,
            histogram_samples(mine, lambda m: rate, new_shape, BOUNDS),
        )
        for result, share in (("hit", 0.002), ("miss", 0.998)):
            sc.metrics.counter(
                "cache_gets",
                {**lab, "cache": "products", "result": result},
                cumulative(mine, lambda m, share=share: rate * share),
            )
        clab = {"namespace": NS, "pod": pod_name, "container": name}
        sc.metrics.gauge(
            "container_memory_working_set_bytes",
            clab,
            [(m, 890e6 + rng.uniform(-20e6, 20e6)) for m in mine[::5]],
        )
        sc.metrics.counter(
            "container_cpu_usage_seconds",
            clab,
            cumulative(mine, lambda m: 0.41 + rng.uniform(-0.03, 0.03)),
        )
        sc.metrics.counter("kube_pod_container_status_restarts", clab, [(m, 0) for m in mine[::5]])
    redis_lab = {"namespace": NS, "pod": "product-cache-0", "service": "product-cache"}
    sc.metrics.counter(
        "redis_keyspace_hits",
        redis_lab,
        cumulative(times, lambda m: rate * 6 * (0.95 if m < ROLL else 0.002), 9.1e9),
    )
    sc.metrics.counter(
        "redis_keyspace_misses",
        redis_lab,
        cumulative(times, lambda m: rate * 6 * (0.05 if m < ROLL else 0.998), 4.4e8),
    )
    sc.metrics.gauge(
        "redis_memory_used_bytes",
        redis_lab,
        [(m, 1.31e9 + rng.uniform(-5e6, 5e6)) for m in times[::5]],
    )
    pg_lab = {"namespace": NS, "pod": db0, "service": "catalog-db", "datname": "catalog"}
    sc.metrics.gauge(
        "pg_stat_activity_count",
        {**pg_lab, "state": "active"},
        [(m, (4 if m < ROLL else 31) + rng.randint(-2, 3)) for m in times],
    )
    sc.metrics.counter(
        "pg_stat_database_tup_fetched",
        pg_lab,
        cumulative(times, lambda m: 2100.0 if m < ROLL else 41000.0, 7.7e11),
    )
    sc.metrics.counter(
        "container_cpu_usage_seconds",
        {"namespace": NS, "pod": db0, "container": "postgres"},
        cumulative(times, lambda m: 0.7 if m < ROLL else 6.6, 2.2e6),
    )
    sc.metrics.gauge(
        "container_memory_working_set_bytes",
        {"namespace": NS, "pod": db0, "container": "postgres"},
        [(m, 6.1e9 + rng.uniform(-5e7, 5e7)) for m in times[::5]],
    )
    _ = (cart, event)
    return sc
