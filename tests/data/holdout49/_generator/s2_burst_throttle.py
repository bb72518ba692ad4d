"""2. cpu_throttling: bursty batched calls throttle quote-engine at ~30% average CPU; p99 rises."""

from __future__ import annotations

import random
from datetime import timedelta

from ._kit import (
    Container,
    Scenario,
    app,
    cumulate,
    env,
    hist_points,
    http_probe,
    meta,
    namespace,
    parse,
    resources,
    smooth,
    sport,
    std_nodes,
    terminated,
    times,
    ts_dt,
)

SID = "quote-engine-burst-throttling"


def build() -> Scenario:
    rng = random.Random(4902)
    now = parse("2026-12-10T19:40:00Z")
    sc = Scenario(
        id=SID,
        title="Price quotes slow at evening peak",
        now=now,
        report=(
            "cart page is slow tonight, p99 on quote-engine went from ~150ms to over a second "
            "since about 18:00. CPU on quote-engine is only ~30% so it's not load. pricing-db "
            "is logging slow queries again, I think price_rules needs an index. can you "
            "confirm?\n"
        ),
        truth={
            "category": "cpu_throttling",
            "culprit": {"kind": "Deployment", "namespace": "pricing", "name": "quote-engine"},
            "evidence": [
                "container_cpu_cfs_throttled_periods_total",
                'cpu: "1"',
                "QUOTE_BATCH_SIZE",
                "batch of 200 items",
            ],
            "fix": (
                "Raise or remove quote-engine's 1-CPU limit (and set GOMAXPROCS to the quota), "
                "or have cart-api spread its quote batches; average use is low but every burst "
                "exhausts the CFS quota."
            ),
        },
    )
    nodes_objs, nodes = std_nodes(
        "10.52.8",
        [14, 71, 133],
        "us-east-2",
        now,
        cpu="8",
        memory_ki=32386544,
        instance_type="c6i.2xlarge",
    )
    sc.add(*nodes_objs)
    old = now - timedelta(days=90)
    for ns in ("pricing", "storefront", "data"):
        sc.add(namespace(ns, old))

    # quote-engine: the throttled one
    qe = Container(
        "quote-engine",
        "ghcr.io/brindle-shop/quote-engine:1.19.2",
        ports=[
            {"containerPort": 8080, "name": "http", "protocol": "TCP"},
            {"containerPort": 9090, "name": "metrics", "protocol": "TCP"},
        ],
        env=env(
            DB_DSN="postgres://quote@pricing-db.pricing.svc:5432/pricing?sslmode=disable",
            WORKERS_PER_BATCH="0",
            LOG_LEVEL="info",
        ),
        resources=resources("500m", "256Mi", "1", "512Mi"),
        readiness=http_probe("/readyz", "http"),
        liveness=http_probe("/livez", "http", period=20),
    )
    qa = app(
        rng,
        "quote-engine",
        "pricing",
        [qe],
        created=now - timedelta(days=400),
        rs_created=now - timedelta(days=5, hours=6),
        replicas=4,
        nodes=nodes,
        pod_cidr="10.52.9",
        revision=27,
        svc_ports=[sport(80, "http")],
        cluster_ip="172.20.30.18",
    )
    sc.add(*qa.objects)
    sc.add(
        {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": meta("quote-engine", "pricing", now - timedelta(days=200)),
            "spec": {
                "maxReplicas": 12,
                "minReplicas": 4,
                "metrics": [
                    {
                        "resource": {
                            "name": "cpu",
                            "target": {"averageUtilization": 70, "type": "Utilization"},
                        },
                        "type": "Resource",
                    }
                ],
                "scaleTargetRef": {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": "quote-engine",
                },
            },
            "status": {
                "conditions": [
                    {
                        "lastTransitionTime": "2026-12-10T13:02:11Z",
                        "message": "recommended size matches current size",
                        "reason": "ReadyForNewScale",
                        "status": "True",
                        "type": "AbleToScale",
                    },
                    {
                        "lastTransitionTime": "2026-12-10T13:02:11Z",
                        "message": "the HPA was able to successfully calculate a replica count "
                        "from cpu resource utilization (percentage of request)",
                        "reason": "ValidMetricFound",
                        "status": "True",
                        "type": "ScalingActive",
                    },
                    {
                        "lastTransitionTime": "2026-12-09T21:14:40Z",
                        "message": "the desired count is within the acceptable range",
                        "reason": "DesiredWithinRange",
                        "status": "False",
                        "type": "ScalingLimited",
                    },
                ],
                "currentMetrics": [
                    {
                        "resource": {
                            "current": {"averageUtilization": 61, "averageValue": "306m"},
                            "name": "cpu",
                        },
                        "type": "Resource",
                    }
                ],
                "currentReplicas": 4,
                "desiredReplicas": 4,
                "lastScaleTime": "2026-12-09T21:14:40Z",
            },
        }
    )

    # pricing-db: StatefulSet postgres (decoy: slow-query log)
    pg_img = "docker.io/library/postgres:16.4"
    pg_created = now - timedelta(days=4, hours=1)
    pg_pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta(
            "pricing-db-0",
            "pricing",
            pg_created,
            {
                "app": "pricing-db",
                "apps.kubernetes.io/pod-index": "0",
                "statefulset.kubernetes.io/pod-name": "pricing-db-0",
            },
            owner={
                "apiVersion": "apps/v1",
                "blockOwnerDeletion": True,
                "controller": True,
                "kind": "StatefulSet",
                "name": "pricing-db",
            },
        ),
        "spec": {
            "containers": [
                {
                    "name": "postgres",
                    "image": pg_img,
                    "ports": [{"containerPort": 5432, "name": "pg", "protocol": "TCP"}],
                    "resources": {
                        "requests": {"cpu": "2", "memory": "8Gi"},
                        "limits": {"memory": "8Gi"},
                    },
                    "volumeMounts": [{"mountPath": "/var/lib/postgresql/data", "name": "data"}],
                }
            ],
            "nodeName": nodes[2][0],
            "volumes": [
                {"name": "data", "persistentVolumeClaim": {"claimName": "data-pricing-db-0"}}
            ],
        },
        "status": {
            "phase": "Running",
            "hostIP": nodes[2][1],
            "podIP": "10.52.9.201",
            "startTime": "2026-12-06T18:40:01Z",
            "conditions": [
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": "2026-12-06T18:40:19Z",
                    "status": "True",
                    "type": "Ready",
                }
            ],
            "containerStatuses": [
                {
                    "name": "postgres",
                    "image": pg_img,
                    "imageID": pg_img + "@sha256:" + "4e" * 32,
                    "ready": True,
                    "restartCount": 0,
                    "started": True,
                    "state": {"running": {"startedAt": "2026-12-06T18:40:09Z"}},
                    "lastState": {},
                }
            ],
            "qosClass": "Burstable",
        },
    }
    sc.add(
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": meta(
                "pricing-db", "pricing", now - timedelta(days=400), {"app": "pricing-db"}
            ),
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "pricing-db"}},
                "serviceName": "pricing-db",
                "template": {
                    "metadata": {"labels": {"app": "pricing-db"}},
                    "spec": pg_pod["spec"] | {"nodeName": None},
                },
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
            },
            "status": {
                "availableReplicas": 1,
                "currentReplicas": 1,
                "readyReplicas": 1,
                "replicas": 1,
                "updatedReplicas": 1,
                "observedGeneration": 6,
                "currentRevision": "pricing-db-7f6d9c8b44",
                "updateRevision": "pricing-db-7f6d9c8b44",
            },
        }
    )
    del sc.objects[-1]["spec"]["template"]["spec"]["nodeName"]
    sc.add(pg_pod)

    # cart-api: the caller whose batching makes bursts (rolled out two days ago)
    cart = Container(
        "cart-api",
        "ghcr.io/brindle-shop/cart-api:5.2.0",
        ports=[{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
        env=env(
            QUOTE_ENGINE_URL="http://quote-engine.pricing.svc.cluster.local",
            QUOTE_BATCH_SIZE="200",
            QUOTE_BATCH_FLUSH_INTERVAL="2s",
            QUOTE_TIMEOUT="800ms",
        ),
        resources=resources("500m", "512Mi", None, "1Gi"),
        readiness=http_probe("/healthz", "http"),
    )
    ca = app(
        rng,
        "cart-api",
        "storefront",
        [cart],
        created=now - timedelta(days=500),
        rs_created=now - timedelta(days=2, hours=3),
        replicas=3,
        nodes=nodes,
        pod_cidr="10.52.10",
        revision=31,
        svc_ports=[sport(80, "http")],
        old_rs=[("77c9d6fb5d", now - timedelta(days=12), 30)],
        restarts={
            1: (
                1,
                terminated(
                    "Error", 2, now - timedelta(days=2, hours=3), now - timedelta(days=1, hours=19)
                ),
            )
        },
    )
    sc.add(*ca.objects)
    web = Container(
        "storefront-web",
        "ghcr.io/brindle-shop/storefront-web:2026.12.3",
        ports=[{"containerPort": 3000, "name": "http", "protocol": "TCP"}],
        resources=resources("250m", "384Mi", None, "768Mi"),
        readiness=http_probe("/api/health", "http"),
    )
    wa = app(
        rng,
        "storefront-web",
        "storefront",
        [web],
        created=now - timedelta(days=500),
        rs_created=now - timedelta(days=1, hours=2),
        replicas=3,
        nodes=nodes,
        pod_cidr="10.52.10",
        revision=88,
        svc_ports=[sport(80, "http")],
    )
    sc.add(*wa.objects)
    exp = Container(
        "price-exporter",
        "ghcr.io/brindle-shop/price-exporter:0.9.4",
        env=env(DB_DSN="postgres://exporter@pricing-db.pricing.svc:5432/pricing"),
        resources=resources("100m", "256Mi", None, "512Mi"),
    )
    ea = app(
        rng,
        "price-exporter",
        "data",
        [exp],
        created=now - timedelta(days=300),
        rs_created=now - timedelta(days=6),
        replicas=1,
        nodes=nodes[2:],
        pod_cidr="10.52.11",
        revision=5,
    )
    sc.add(*ea.objects)

    # ---------------------------------------------------------------- metrics
    ts = times(now, 3)
    m = sc.metrics
    ramp0, ramp1 = (
        int((now - timedelta(minutes=120)).timestamp()),
        int((now - timedelta(minutes=75)).timestamp()),
    )

    def load(t: int) -> float:  # evening traffic factor
        return smooth(t, ramp0, ramp1, 0.55, 1.0)

    for i, pn in enumerate(qa.pod_names):
        lab = {"namespace": "pricing", "pod": pn, "container": "quote-engine"}
        jitter = 1 + 0.04 * (i - 1.5)

        def cpu_rate(t: int, j: float = jitter) -> float:
            return 0.31 * load(t) * j + rng.uniform(-0.01, 0.01)

        m.counter(
            "container_cpu_usage_seconds",
            "Cumulative cpu time consumed by the container in core-seconds",
            lab,
            cumulate(ts, cpu_rate, start=90000 + 3000 * i),
        )

        def periods(t: int) -> float:
            return 4.3 * load(t) + 1.2

        m.counter(
            "container_cpu_cfs_periods",
            "Number of elapsed enforcement period intervals",
            lab,
            cumulate(ts, periods, start=1.1e6 + 1e4 * i),
        )

        def thr_ratio(t: int) -> float:
            return smooth(t, ramp0, ramp1, 0.24, 0.79) + rng.uniform(-0.02, 0.02)

        m.counter(
            "container_cpu_cfs_throttled_periods",
            "Number of throttled period intervals",
            lab,
            cumulate(ts, lambda t, p=periods, r=thr_ratio: p(t) * r(t), start=2.1e5 + 5e3 * i),
        )
        m.counter(
            "container_cpu_cfs_throttled_seconds",
            "Total time duration the container has been throttled",
            lab,
            cumulate(
                ts, lambda t, p=periods, r=thr_ratio: p(t) * r(t) * 0.083, start=1.6e4 + 400 * i
            ),
        )
        m.gauge(
            "kube_pod_container_resource_limits",
            "The number of requested limit resource by a container.",
            lab | {"resource": "cpu", "unit": "core"},
            [(t, 1) for t in ts[::5]],
        )
        m.gauge(
            "kube_pod_container_resource_requests",
            "The number of requested request resource by a container.",
            lab | {"resource": "cpu", "unit": "core"},
            [(t, 0.5) for t in ts[::5]],
        )
        m.gauge(
            "container_memory_working_set_bytes",
            "Current working set of the container in bytes",
            lab,
            [(t, round(1.41e8 + rng.uniform(-5e6, 5e6))) for t in ts[::5]],
        )
    # cart-api and storefront-web cpu: comfortable, no limits
    for pn in ca.pod_names:
        lab = {"namespace": "storefront", "pod": pn, "container": "cart-api"}
        m.counter(
            "container_cpu_usage_seconds",
            "Cumulative cpu time consumed by the container in core-seconds",
            lab,
            cumulate(ts, lambda t: 0.22 * load(t), start=40000),
        )
    # quote-engine latency histogram (service level)
    buckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0]

    def q(t: int) -> tuple[float, float]:
        return (smooth(t, ramp0, ramp1, 0.018, 0.041), smooth(t, ramp0, ramp1, 0.14, 1.35))

    m.histogram(
        "http_request_duration_seconds",
        "Duration of HTTP requests.",
        {
            "namespace": "pricing",
            "service": "quote-engine",
            "handler": "/v2/quotes:batch",
            "method": "POST",
        },
        buckets,
        hist_points(ts[::2], buckets, lambda t: 1.5 * load(t) * 4, q, rng),
    )
    m.counter(
        "http_requests",
        "Total HTTP requests.",
        {
            "namespace": "pricing",
            "service": "quote-engine",
            "handler": "/v2/quotes:batch",
            "code": "200",
        },
        cumulate(ts, lambda t: 6.0 * load(t), start=2.2e6),
    )
    m.counter(
        "http_requests",
        "Total HTTP requests.",
        {
            "namespace": "pricing",
            "service": "quote-engine",
            "handler": "/v2/quotes:batch",
            "code": "504",
        },
        cumulate(ts, lambda t: smooth(t, ramp0, ramp1, 0.0, 0.11), start=310),
    )
    # pricing-db: healthy
    m.gauge(
        "pg_stat_activity_count",
        "number of connections in this state",
        {"namespace": "pricing", "pod": "pricing-db-0", "datname": "pricing", "state": "active"},
        [(t, 3 + rng.randint(0, 3)) for t in ts[::2]],
    )
    m.counter(
        "pg_stat_database_xact_commit",
        "Number of transactions in this database that have been committed",
        {"namespace": "pricing", "pod": "pricing-db-0", "datname": "pricing"},
        cumulate(ts[::2], lambda t: 140 * load(t), start=9.1e8),
    )

    # ---------------------------------------------------------------- logs
    L = sc.logs
    for _i, pn in enumerate(qa.pod_names):
        lines = []
        t = ts[0]
        while t < ts[-1]:
            for _k in range(1):
                at = ts_dt(t) + timedelta(seconds=rng.randint(0, 59))
                ld = load(t)
                slow = rng.random() < smooth(t, ramp0, ramp1, 0.02, 0.35)
                dur = rng.randint(700, 1900) if slow else rng.randint(12, 70)
                items = (
                    rng.choice([200, 200, 200, 200, 137, 200, 64])
                    if ld > 0.6
                    else rng.choice([200, 88, 41, 200, 23])
                )
                msg = "batch quote served"
                L.add(
                    at,
                    "quote-engine",
                    "pricing",
                    pn,
                    "quote-engine",
                    "info",
                    msg,
                    **{
                        "event.duration": dur * 1_000_000,
                        "labels.items": items,
                        "labels.caller": "cart-api",
                        "http.response.status_code": 200,
                    },
                )
                if at > now - timedelta(minutes=15):
                    lines.append(
                        '{"level":"info",'
                        f'"ts":"{at.isoformat().replace("+00:00", "Z")}","msg":"{msg}",'
                        f'"caller":"cart-api","items":{items},"duration_ms":{dur}}}'
                    )
            if rng.random() < 0.05:
                at = ts_dt(t) + timedelta(seconds=rng.randint(0, 59))
                dur = rng.randint(310, 520)
                msg = (
                    f"slow query ({dur}ms): SELECT rule_id, sku_pattern, priority, expr FROM "
                    "price_rules WHERE region = $1 AND active"
                )
                L.add(at, "quote-engine", "pricing", pn, "quote-engine", "warn", msg)
                if at > now - timedelta(minutes=15):
                    lines.append(
                        '{"level":"warn",'
                        f'"ts":"{at.isoformat().replace("+00:00", "Z")}","msg":"{msg}"}}'
                    )
            t += 60
        sc.pod_log("pricing", pn, "quote-engine", lines)
    # postgres slow query log (decoy): the nightly price-exporter's scans plus a few rule lookups
    t = ts[0]
    while t < ts[-1]:
        if rng.random() < 0.12:
            at = ts_dt(t) + timedelta(seconds=rng.randint(0, 59))
            msg = (
                f"duration: {rng.randint(1000, 3400)}.{rng.randint(100, 999)} ms  execute "
                "<unnamed>: SELECT p.sku, p.list_price, pr.expr FROM prices p JOIN price_rules "
                "pr ON pr.sku_pattern = p.sku_family WHERE p.updated_at > $1 ORDER BY p.sku"
            )
            L.add(
                at,
                "pricing-db",
                "pricing",
                "pricing-db-0",
                "postgres",
                "info",
                msg,
                **{"user.name": "exporter", "labels.application_name": "price-exporter"},
            )
        t += 60
    for pn in ca.pod_names:
        t = ramp0
        while t < ts[-1]:
            if rng.random() < smooth(t, ramp0, ramp1, 0.05, 0.8):
                at = ts_dt(t) + timedelta(seconds=rng.randint(0, 59))
                msg = (
                    "flushing quote batch of 200 items to quote-engine "
                    f"took {rng.randint(810, 1500)}ms (budget 800ms); "
                    "serving cached prices for cart"
                )
                L.add(at, "cart-api", "storefront", pn, "cart-api", "warn", msg)
            t += 60
    for pn in ca.pod_names[:1]:
        L.add(
            now - timedelta(days=2, hours=3) + timedelta(seconds=4),
            "cart-api",
            "storefront",
            pn,
            "cart-api",
            "info",
            "quote batching enabled: size=200 flush_interval=2s (QUOTE_BATCH_SIZE, "
            "QUOTE_BATCH_FLUSH_INTERVAL)",
        )
    return sc
