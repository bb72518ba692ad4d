"""7. price-resolver-latency-bigger-nodes: the node pool moved to 64-core machines; the Go
service's GOMAXPROCS follows the node (64) while its CPU limit stayed at 1, so it is
throttled most periods and latency rose with no change to the service."""

from __future__ import annotations

import json
import random
from datetime import timedelta
from typing import Any

from tests.data.holdout34._generator import fleet, kit
from tests.data.holdout34._generator.fleet import MiB
from tests.data.holdout34._generator.kit import Scenario

NOW = kit.at("2026-11-26T15:30:00Z")
POOL = kit.at("2026-11-26T13:02:00Z")
MOVED = kit.at("2026-11-26T13:18:30Z")
ROLLED = kit.at("2026-11-20T10:04:00Z")
IMAGE = "eu.gcr.io/oakhollow-prod/catalog/price-resolver:1.14.2"
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


def build() -> Scenario:
    rng = random.Random(3407)
    sc = Scenario(
        "price-resolver-latency-bigger-nodes",
        "price-resolver latency up 10x",
        NOW,
        "price-resolver p99 went from ~50ms to ~500ms early this afternoon and basket pages are "
        "slow because of it.\n"
        "we have NOT deployed it since last friday (checked argo). the new pricing-db read "
        "replica went live today, maybe that?\n"
        "no errors, just slow\n",
        {
            "category": "cpu_throttling",
            "culprit": {"kind": "Deployment", "namespace": "catalog", "name": "price-resolver"},
            "evidence": ["gomaxprocs=64", "throttled", "cpu limit 1"],
            "fix": "Set GOMAXPROCS to the CPU limit (e.g. automaxprocs or env GOMAXPROCS from "
            "resources.limits.cpu) or "
            "raise/remove the 1-core limit; the move to 64-core nodes made the Go runtime run 64 "
            "Ps in a 1-core quota",
        },
    )
    created = NOW - timedelta(days=450)
    for n in ("catalog", "checkout", "kube-system", "monitoring"):
        sc.add(kit.namespace(n, created))
    nodes = [f"gke-oak-prod-c3-64-2f7e1b0a-{kit.suffix(rng, 4)}" for _ in range(4)]
    for i, n in enumerate(nodes):
        sc.add(
            kit.node(
                n,
                POOL + timedelta(minutes=i),
                "64",
                "263914156Ki",
                {
                    "cloud.google.com/gke-nodepool": "c3-64",
                    "node.kubernetes.io/instance-type": "c3-standard-64",
                    "cloud.google.com/machine-family": "c3",
                    "topology.kubernetes.io/zone": f"europe-west2-{'abc'[i % 3]}",
                },
                heartbeat=NOW - timedelta(seconds=19),
            )
        )
    old_nodes = [f"gke-oak-prod-std8-91c4d2e0-{kit.suffix(rng, 4)}" for _ in range(6)]
    times = fleet.grid(NOW, 3)
    move_i = next(i for i, t in enumerate(times) if t >= MOVED.timestamp())

    labels = {"app": "price-resolver", "team": "pricing"}
    pc = kit.container(
        "price-resolver",
        IMAGE,
        port=8080,
        cpu_req="500m",
        mem_req="256Mi",
        cpu_lim="1",
        mem_lim="512Mi",
        readiness=kit.http_probe("/readyz", period=5),
        liveness=kit.http_probe("/livez"),
        env={
            "PRICING_DB_DSN": "postgres://price_ro@pricing-db-ro.catalog.svc:5432/pricing",
            "CACHE_TTL": "30s",
            "GOGC": "100",
            "LOG_LEVEL": "info",
        },
    )
    tmpl = kit.template(
        labels, [pc], annotations={"prometheus.io/scrape": "true", "prometheus.io/port": "9090"}
    )
    dep = kit.deployment(
        "catalog",
        "price-resolver",
        created,
        labels,
        tmpl,
        replicas=6,
        revision=31,
        progressing=(
            "True",
            "NewReplicaSetAvailable",
            'ReplicaSet "price-resolver-84d6b9c7f5" has successfully progressed.',
            ROLLED + timedelta(minutes=2),
        ),
    )
    rs = kit.replicaset(dep, "84d6b9c7f5", ROLLED, 31, tmpl, replicas=6)
    prev = kit.replicaset(
        dep, "6c9f8d7b44", ROLLED - timedelta(days=8), 30, tmpl, replicas=0, ready=0
    )
    prev["spec"]["template"]["spec"]["containers"][0]["image"] = IMAGE.replace("1.14.2", "1.14.1")
    prev["status"] = {"replicas": 0, "observedGeneration": 2}
    sc.add(dep, prev, rs)
    pods = []
    for i in range(6):
        st = MOVED + timedelta(seconds=14 * i + rng.randint(0, 9))
        pods.append(
            kit.pod(
                rs,
                f"price-resolver-84d6b9c7f5-{kit.suffix(rng)}",
                st,
                nodes[i % 4],
                tmpl,
                [kit.cstatus(pc, st + timedelta(seconds=2))],
                ip=fleet.ip(rng, "10.64"),
            )
        )
    sc.add(*pods)
    svc = kit.service(
        "catalog",
        "price-resolver",
        created,
        labels,
        [("http", 80, "http")],
        cluster_ip="10.20.31.8",
    )
    sc.add(svc, kit.endpoints("catalog", "price-resolver", created, pods, [("http", 8080)], labels))
    old_pods = [f"price-resolver-84d6b9c7f5-{kit.suffix(rng)}" for _ in range(6)]
    runs = [(n, old_nodes[k], 0, move_i, False) for k, n in enumerate(old_pods)]
    runs += [(p["metadata"]["name"], p["spec"]["nodeName"], move_i, len(times), True) for p in pods]
    for pn, node_name, lo, hi, big in runs:
        span = times[lo:hi]
        fleet.container_metrics(
            sc,
            "catalog",
            pn,
            "price-resolver",
            span,
            mem=lambda i: 182 * MiB + (i % 9) * 3 * MiB,
            cpu=lambda i, b=big: 0.97 if b else 0.52,
            mem_limit=512 * MiB,
            cpu_limit=1.0,
            throttle=lambda i, b=big: rng.uniform(0.71, 0.84) if b else rng.uniform(0.01, 0.05),
            node_name=node_name,
            rng=rng,
        )
        fleet.requests(
            sc,
            "http_requests_total",
            {
                "namespace": "catalog",
                "pod": pn,
                "service": "price-resolver",
                "handler": "/v1/prices",
            },
            span,
            rate=lambda i: 190.0,
            err=lambda i: 0.0001,
        )
        sc.metrics.histogram(
            "http_request_duration_seconds",
            {
                "namespace": "catalog",
                "pod": pn,
                "service": "price-resolver",
                "handler": "/v1/prices",
            },
            span,
            [190.0 * 60] * len(span),
            lambda i, b=big: 0.118 if b else 0.011,
            BUCKETS,
        )
        sc.metrics.gauge(
            "go_goroutines",
            {"namespace": "catalog", "pod": pn, "job": "price-resolver"},
            [(t, rng.randint(210, 260) if big else rng.randint(90, 120)) for t in span],
        )
        sc.metrics.gauge(
            "go_sched_gomaxprocs_threads",
            {"namespace": "catalog", "pod": pn, "job": "price-resolver"},
            [(t, 64 if big else 8) for t in span],
        )
        _logs(sc, rng, pn, node_name, big, kit.datetime.fromtimestamp(span[0], kit.UTC))
    _bystanders(sc, rng, nodes, created, times)
    return sc


def _logs(
    sc: Scenario, rng: random.Random, pn: str, node_name: str, big: bool, start: kit.datetime
) -> None:
    boot = start if big else ROLLED + timedelta(seconds=rng.randint(5, 90))
    procs = 64 if big else 8
    docs: list[tuple[kit.datetime, str, str, dict[str, Any]]] = [
        (
            boot,
            "info",
            "starting price-resolver",
            {
                "version": "1.14.2",
                "go": "go1.22.5",
                "gomaxprocs": procs,
                "num_cpu": procs,
                "commit": "a41c09e",
            },
        ),
        (
            boot + timedelta(milliseconds=180),
            "info",
            "connected to pricing db",
            {"pool_max": 20, "host": "pricing-db-ro.catalog.svc"},
        ),
        (boot + timedelta(milliseconds=240), "info", "http server listening", {"addr": ":8080"}),
    ]
    end = MOVED - timedelta(seconds=20) if not big else NOW
    t = max(start, NOW - timedelta(hours=2, minutes=40))
    while t < end and t < NOW:
        t += timedelta(seconds=rng.randint(15, 45))
        took = rng.randint(70, 420) if big else rng.randint(4, 35)
        if big and took > 300:
            docs.append(
                (
                    t,
                    "warn",
                    "slow price resolution",
                    {"sku_count": rng.randint(20, 80), "took_ms": took, "budget_ms": 250},
                )
            )
        else:
            docs.append(
                (
                    t,
                    "info",
                    "resolved basket prices",
                    {
                        "sku_count": rng.randint(1, 60),
                        "took_ms": took,
                        "cache_hit_ratio": round(rng.uniform(0.8, 0.97), 2),
                    },
                )
            )
    lines = []
    for when, lvl, msg, fields in docs:
        if when > NOW:
            continue
        text = (
            msg + "".join(f" {k}={v}" for k, v in fields.items())
            if msg.startswith("starting")
            else msg
        )
        sc.docs.append(
            kit.logdoc(
                when,
                lvl,
                text,
                "price-resolver",
                "catalog",
                pn,
                "price-resolver",
                **{"host.name": node_name, "labels": {k: str(v) for k, v in fields.items()}},
            )
        )
        lines.append(
            json.dumps(
                {
                    "level": lvl,
                    "ts": kit.ts_ms(when),
                    "caller": "server/handler.go:88"
                    if msg.startswith(("resolved", "slow"))
                    else "cmd/main.go:61",
                    "msg": msg,
                    **fields,
                },
                separators=(",", ":"),
            )
        )
    if big:
        sc.log("catalog", pn, "price-resolver", lines)


def _bystanders(
    sc: Scenario, rng: random.Random, nodes: list[str], created: kit.datetime, times: list[int]
) -> None:
    for ns, name, image, reps, lim in (
        ("catalog", "product-api", "eu.gcr.io/oakhollow-prod/catalog/product-api:8.2.0", 4, "4"),
        ("catalog", "pricing-db-ro", "bitnami/pgbouncer:1.22.1", 2, "2"),
        ("checkout", "basket-service", "eu.gcr.io/oakhollow-prod/checkout/basket:5.0.7", 4, "2"),
    ):
        c = kit.container(
            name,
            image,
            port=8080 if name != "pricing-db-ro" else 5432,
            cpu_req="1",
            mem_req="1Gi",
            cpu_lim=lim,
            mem_lim="2Gi",
            readiness=kit.http_probe("/ready")
            if name != "pricing-db-ro"
            else {"tcpSocket": {"port": 5432}, "periodSeconds": 10},
        )
        w = fleet.app(
            sc,
            rng,
            ns,
            name,
            [c],
            nodes[::-1],
            replicas=reps,
            created=created,
            rolled=MOVED + timedelta(seconds=rng.randint(20, 300)),
            revision=rng.randint(10, 70),
            port=8080 if name != "pricing-db-ro" else 5432,
            svc_port=80 if name != "pricing-db-ro" else 5432,
        )
        w.rs[-1]["metadata"]["creationTimestamp"] = kit.ts(NOW - timedelta(days=rng.randint(2, 6)))
        if name == "pricing-db-ro":
            bouncer = w.names[0]
        for p in w.pods:
            fleet.container_metrics(
                sc,
                ns,
                p["metadata"]["name"],
                name,
                times[-70:],
                mem=lambda i: 700 * MiB,
                cpu=lambda i: 0.4,
                mem_limit=2048 * MiB,
                cpu_limit=float(lim),
                throttle=lambda i: 0.02,
                node_name=p["spec"]["nodeName"],
                rng=rng,
            )
    t = kit.at("2026-11-26T11:52:10Z")
    sc.docs.append(
        kit.logdoc(
            t,
            "info",
            "added read replica pricing-db-replica-2 to pool (weight 1)",
            "pricing-db-ro",
            "catalog",
            bouncer,
            "pricing-db-ro",
        )
    )
    for k in range(6):
        sc.docs.append(
            kit.logdoc(
                t + timedelta(minutes=17 * k + 3),
                "warning",
                f"replica pricing-db-replica-2 lag {rng.uniform(0.6, 1.4):.1f}s above 0.5s, "
                "routing reads to replica-1",
                "pricing-db-ro",
                "catalog",
                bouncer,
                "pricing-db-ro",
            )
        )


STORIES = {"price-resolver-latency-bigger-nodes": build}
