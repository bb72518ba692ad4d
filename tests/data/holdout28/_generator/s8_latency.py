# ruff: noqa: E501  (log lines and messages are kept whole, as the systems print them)
"""Shape 8: reviews-api 4.19.0 (rolled out at 13:04) loads each review's votes with its own
query; p99 latency rises from ~0.15s to ~1.4s with no errors. fluent-bit in logging has
been warning about retries since 10:30, unrelated."""

from __future__ import annotations

from datetime import datetime, timedelta

from . import _k8s as k
from ._common import NODES, app, chatter, ip, nodes
from ._out import Scenario, accumulate, grid
from ._workloads import Revision, deployment, pod_name

NOW = datetime(2026, 10, 6, 14, 10, 0)
ROLLOUT = datetime(2026, 10, 6, 13, 4, 12)
OLD = "registry.internal/shop/reviews-api:4.18.2"
NEW = "registry.internal/shop/reviews-api:4.19.0"
BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


def build() -> Scenario:
    sc = Scenario(
        id="product-pages-sluggish",
        title="Product pages sluggish after lunch",
        now=NOW,
        seed=808,
        report="product pages feel really sluggish since after lunch, no errors anywhere that I can "
        "see. maybe the database? also logging has been flaky all day",
        truth={
            "category": "bad_rollout",
            "culprit": {"kind": "Deployment", "namespace": "shop", "name": "reviews-api"},
            "evidence": ["4.19.0", "db_queries=", "p99"],
            "fix": "Roll reviews-api back to 4.18.2 and batch the vote lookups (one query per page, "
            "not one per review) before re-releasing.",
        },
    )
    nodes(sc)
    for ns in ("shop", "logging", "data"):
        sc.add(k.namespace(ns, NOW - timedelta(days=700)))
    labels = {"app": "reviews-api"}

    def tmpl(image: str) -> dict:
        return k.template(
            labels,
            [
                k.container(
                    "reviews-api",
                    image,
                    port=8080,
                    resources=k.res("500m", "512Mi", cpu_lim="2", mem_lim="1Gi"),
                    readiness=k.http_probe("/ready", 8080),
                    liveness=k.http_probe("/live", 8080, delay=15),
                )
            ],
        )

    r1 = Revision(tmpl(OLD), NOW - timedelta(days=5, hours=3), 0, change_cause="deploy 4.18.2")
    r2 = Revision(
        tmpl(NEW), ROLLOUT, 4, change_cause="deploy 4.19.0: review votes + helpful sorting"
    )
    dep, rss = deployment(
        "reviews-api", "shop", labels, [r1, r2], created=NOW - timedelta(days=600), now=NOW
    )
    sc.add(dep, rss)
    pods = []
    for i in range(4):
        name = pod_name(r2, i)
        t = ROLLOUT + timedelta(seconds=20 * i + 4)
        sc.add(
            k.pod(
                name,
                "shop",
                r2.template,
                owner=("ReplicaSet", r2.name),
                created=t,
                node=NODES[i % 3],
                ip=ip(sc, i % 3 + 1),
                statuses=[k.running("reviews-api", t + timedelta(seconds=3), image=NEW)],
                extra_labels={"pod-template-hash": r2.hash},
            )
        )
        pods.append(name)
    old_pods = [pod_name(r1, i) for i in range(4)]
    sc.add(
        k.service(
            "reviews-api",
            "shop",
            labels,
            [("http", 80, 8080)],
            cluster_ip="172.20.71.5",
            created=NOW - timedelta(days=600),
        )
    )
    # the rollout's ScalingReplicaSet events are older than an hour: the API server dropped them
    onset = ROLLOUT.timestamp() + 70
    for moment in sc.every(NOW - timedelta(hours=4), NOW, 0.9):
        new = moment.timestamp() >= onset
        pod = sc.rng.choice(pods if new else old_pods)
        per_page = sc.rng.randint(8, 40)
        queries = 2 + per_page if new else 3
        took = int((35 + queries * sc.rng.uniform(18, 34)) if new else sc.rng.uniform(25, 140))
        sc.doc(
            moment,
            "reviews-api",
            "shop",
            pod,
            "info",
            f"GET /v2/products/{sc.rng.randint(10000, 99999)}/reviews?sort=helpful 200 {took}ms "
            f"reviews={per_page} db_queries={queries}",
            http__response__status_code=200,
            event__duration=took * 1_000_000,
        )
    # the database: fine, each query fast -----------------------------------------------------------
    db, _ = app(sc, "reviews-db-proxy", "data", "bitnami/pgbouncer:1.23.1", replicas=2, port=6432)
    chatter(
        sc,
        "reviews-db-proxy",
        "data",
        db,
        NOW - timedelta(hours=4),
        [
            "stats: 612 xacts/s, 640 queries/s, in 0.4 MB/s, out 3.1 MB/s, xact 2 ms, query 1 ms, wait 0 us"
        ],
        gap=60,
    )
    chatter(
        sc,
        "reviews-db-proxy",
        "data",
        db,
        datetime.utcfromtimestamp(onset),
        [
            "stats: 905 xacts/s, 7420 queries/s, in 2.9 MB/s, out 5.6 MB/s, xact 31 ms, query 1 ms, wait 0 us"
        ],
        gap=60,
    )
    # bystanders ------------------------------------------------------------------------------------
    fb, _ = app(
        sc,
        "fluent-bit",
        "logging",
        "cr.fluentbit.io/fluent/fluent-bit:3.1.9",
        replicas=3,
        port=2020,
    )
    for moment in sc.every(datetime(2026, 10, 6, 10, 31), NOW, 45):
        sc.doc(
            moment,
            "fluent-bit",
            "logging",
            sc.rng.choice(fb),
            "warn",
            f"[engine] failed to flush chunk '1-{sc.rng.randint(10**9, 10**10)}.flb', retry in "
            f"{sc.rng.randint(6, 60)} seconds: task_id={sc.rng.randint(0, 40)}, input=tail.0 > output=es.0",
        )
    sc.add(
        k.event(
            "logging",
            "Pod",
            fb[1],
            "Unhealthy",
            "Liveness probe failed: HTTP probe failed with statuscode: 500",
            first=NOW - timedelta(hours=3),
            last=NOW - timedelta(minutes=41),
            count=9,
            type="Warning",
            host=NODES[1],
            field_path="spec.containers{fluent-bit}",
        )
    )
    pdp, _ = app(
        sc, "product-page", "shop", "registry.internal/shop/product-page:11.3.0", replicas=3
    )
    for moment in sc.every(NOW - timedelta(hours=4), NOW, 2):
        slow = moment.timestamp() >= onset
        took = sc.rng.randint(400, 1900) if slow else sc.rng.randint(90, 260)
        sc.doc(
            moment,
            "product-page",
            "shop",
            sc.rng.choice(pdp),
            "info",
            f"GET /p/{sc.rng.randint(10000, 99999)} 200 {took}ms",
            http__response__status_code=200,
        )
    times = grid(NOW - timedelta(hours=3), NOW)
    for pod in old_pods + pods:
        is_new = pod in pods
        born = onset - 60 if is_new else times[0]
        dies = onset if not is_new else times[-1] + 1
        ts = [t for t in times if born <= t < dies]
        if len(ts) < 2:
            continue
        sc.histogram(
            "http_request_duration_seconds",
            "Request latency.",
            {
                "namespace": "shop",
                "pod": pod,
                "service": "reviews-api",
                "route": "/v2/products/{id}/reviews",
            },
            ts,
            lambda t: 2.7,
            (lambda t: 0.42) if is_new else (lambda t: 0.045),
            BUCKETS,
        )
        sc.counter(
            "http_requests_total",
            "HTTP requests served.",
            {"namespace": "shop", "pod": pod, "service": "reviews-api", "code": "200"},
            accumulate(ts, lambda t: 2.7, 0),
        )
        cpu = 0.55 if is_new else 0.35
        sc.counter(
            "container_cpu_usage_seconds_total",
            "Cumulative cpu time consumed in seconds.",
            {"namespace": "shop", "pod": pod, "container": "reviews-api"},
            [(t, round(cpu * (t - ts[0]), 2)) for t in ts],
        )
    return sc
