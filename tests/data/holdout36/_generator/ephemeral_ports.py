"""Quillmark Ads: bid-ingest dials a fresh connection to budget-ledger for every bid."""

from __future__ import annotations

from datetime import timedelta

from .common import (
    Metrics,
    ago,
    container,
    deployment,
    ecs,
    endpoints,
    event,
    iso,
    namespace,
    parse,
    pod,
    replicaset,
    rng,
    service,
    write_scenario,
)
from .helpers import nodes_for


def ephemeral_ports() -> None:
    """Quillmark Ads: bid-ingest dials a fresh connection to budget-ledger for every bid."""
    now = parse("2026-11-27T15:20:00Z")
    ns = "adtech"
    r = rng("ports")
    start = ago(now, minutes=35)
    nodes = nodes_for(now, "gke-adtech-pool-b", 4, base_days=40)
    bi_c = [
        container(
            "bid-ingest",
            "eu.gcr.io/quillmark/bid-ingest:2024.11.3",
            port=9000,
            cpu_lim="2",
            env=[
                {"name": "LEDGER_ADDR", "value": "http://budget-ledger.adtech.svc:8080"},
                {"name": "HTTP_KEEPALIVE", "value": "false"},
            ],
        )
    ]
    bl_c = [container("ledger", "eu.gcr.io/quillmark/budget-ledger:1.9.0", port=8080)]
    cr_c = [container("creative-cache", "eu.gcr.io/quillmark/creative-cache:0.44.2", port=8080)]
    objs = [
        namespace(ns, ago(now, days=600)),
        *nodes,
        deployment(
            "bid-ingest",
            ns,
            ago(now, days=250),
            bi_c,
            replicas=2,
            revision=77,
            ready=2,
            updated=2,
            available=2,
        ),
        replicaset("bid-ingest", ns, "84c6d9f7b", ago(now, days=3), bi_c, 77, 2, 2),
        deployment(
            "budget-ledger",
            ns,
            ago(now, days=400),
            bl_c,
            replicas=3,
            revision=40,
            ready=3,
            updated=3,
            available=3,
        ),
        deployment(
            "creative-cache",
            ns,
            ago(now, days=90),
            cr_c,
            replicas=2,
            revision=12,
            ready=2,
            updated=2,
            available=2,
        ),
        {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {
                "name": "creative-cache",
                "namespace": ns,
                "creationTimestamp": iso(ago(now, days=90)),
            },
            "spec": {
                "scaleTargetRef": {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": "creative-cache",
                },
                "minReplicas": 2,
                "maxReplicas": 6,
                "metrics": [
                    {
                        "type": "Resource",
                        "resource": {
                            "name": "cpu",
                            "target": {"type": "Utilization", "averageUtilization": 75},
                        },
                    }
                ],
            },
            "status": {"currentReplicas": 2, "desiredReplicas": 2},
        },
        service("budget-ledger", ns, ago(now, days=400), 8080, 8080, cluster_ip="10.112.4.19"),
        service("bid-ingest", ns, ago(now, days=250), 80, 9000, cluster_ip="10.112.4.40"),
        endpoints(
            "budget-ledger", ns, ago(now, days=400), ["10.60.1.14", "10.60.2.33", "10.60.3.8"]
        ),
    ]
    pods_ = {}
    for dep, h, c, n_ in (
        ("bid-ingest", "84c6d9f7b", bi_c, 2),
        ("budget-ledger", "6b5f8c7d9", bl_c, 3),
        ("creative-cache", "7d9c8b6f5", cr_c, 2),
    ):
        for i in range(n_):
            name = f"{dep}-{h}-{'mnpqrs'[i]}{r.choice('tvwxz')}{r.randint(100, 999)}"
            objs.append(
                pod(
                    name,
                    ns,
                    ago(now, days=2, hours=i * 3),
                    c,
                    owner=("ReplicaSet", f"{dep}-{h}"),
                    node_name=nodes[(i + len(pods_)) % 4]["metadata"]["name"],
                    labels={"app": dep, "pod-template-hash": h},
                )
            )
            pods_.setdefault(dep, []).append((name, c[0]["name"]))
    objs.append(
        event(
            ns,
            "HorizontalPodAutoscaler",
            "creative-cache",
            "FailedGetResourceMetric",
            "failed to get cpu utilization: unable to get metrics for resource cpu: no metrics "
            "returned from resource metrics API",
            ago(now, minutes=50),
            ago(now, minutes=44),
            3,
            source="horizontal-pod-autoscaler",
        )
    )
    logs, pod_logs = [], {}
    m = Metrics()
    for name, cn in pods_["bid-ingest"]:
        st = ago(now, days=2)
        lines = [
            f"{iso(st)} INF bid-ingest 2024.11.3 starting, workers=256",
            f"{iso(st)} INF ledger client: keep-alive disabled (HTTP_KEEPALIVE=false), new "
            "connection per request",
            f"{iso(st)} INF listening on :9000",
        ]
        t = ago(now, hours=1, minutes=30)
        while t < now:
            if t < start:
                lines.append(
                    f"{iso(t)} INF bid accepted campaign=c-{r.randint(1000, 9999)} "
                    f"ledger_ms={r.randint(2, 9)}"
                )
            else:
                if r.random() < 0.7:
                    msg = (
                        "ledger reserve failed: Post "
                        '"http://budget-ledger.adtech.svc:8080/v1/reserve": dial tcp '
                        "10.112.4.19:8080: connect: cannot assign requested address"
                    )
                    lines.append(f"{iso(t)} ERR {msg} campaign=c-{r.randint(1000, 9999)}")
                    logs.append(
                        ecs(
                            t,
                            msg,
                            "error",
                            "bid-ingest",
                            ns,
                            name,
                            cn,
                            **{"error.type": "net.OpError"},
                        )
                    )
                else:
                    lines.append(
                        f"{iso(t)} INF bid accepted campaign=c-{r.randint(1000, 9999)} "
                        f"ledger_ms={r.randint(2, 9)}"
                    )
                if r.random() < 0.15:
                    msg = "bid dropped: ledger unavailable, returning no-bid"
                    lines.append(f"{iso(t)} WRN {msg}")
                    logs.append(ecs(t, msg, "warn", "bid-ingest", ns, name, cn))
            t += timedelta(seconds=15)
        pod_logs[f"{ns}/{name}/{cn}.log"] = "\n".join(lines)
    for name, cn in pods_["budget-ledger"]:
        lines = []
        t = ago(now, hours=1, minutes=30)
        while t < now:
            msg = (
                f"reserve ok p50_ms=1.{r.randint(1, 9)} p99_ms={r.randint(3, 8)} "
                f"qps={r.randint(900, 1300)} open_conns={r.randint(40, 90)}"
            )
            lines.append(f"[{iso(t)}] INFO ledger.http - {msg}")
            if r.random() < 0.2:
                logs.append(ecs(t, msg, "info", "budget-ledger", ns, name, cn))
            t += timedelta(minutes=1)
        pod_logs[f"{ns}/{name}/{cn}.log"] = "\n".join(lines)
    # metrics: ledger healthy, bid-ingest errors, TIME_WAIT on bid-ingest's nodes
    t = ago(now, hours=1, minutes=30)
    acc = {"ok": 0.0, "err": 0.0, "ledger": 0.0}
    while t <= now:
        bad = t >= start
        acc["ok"] += 12000 * (0.3 if bad else 1.0)
        acc["err"] += 8000 if bad else 2
        acc["ledger"] += 36000 * (0.35 if bad else 1.0)
        m.add(
            "http_requests_total",
            "counter",
            "Requests.",
            {"namespace": ns, "service": "bid-ingest", "code": "200"},
            t,
            acc["ok"],
        )
        m.add(
            "http_requests_total",
            "counter",
            "Requests.",
            {"namespace": ns, "service": "bid-ingest", "code": "503"},
            t,
            acc["err"],
        )
        m.add(
            "http_requests_total",
            "counter",
            "Requests.",
            {"namespace": ns, "service": "budget-ledger", "code": "200"},
            t,
            acc["ledger"],
        )
        acc.setdefault("dials", 0.0)
        acc["dials"] += (30000 if bad else 12000) + r.randint(0, 300)
        m.add(
            "http_client_connections_opened_total",
            "counter",
            "Outbound TCP connections dialled.",
            {"namespace": ns, "service": "bid-ingest", "destination": "budget-ledger"},
            t,
            acc["dials"],
        )
        m.add(
            "http_client_requests_in_flight",
            "gauge",
            "Outbound requests in flight.",
            {"namespace": ns, "service": "bid-ingest", "destination": "budget-ledger"},
            t,
            r.randint(400, 600) if bad else r.randint(20, 60),
        )
        t += timedelta(minutes=1)
    write_scenario(
        "bids-no-bid-spike",
        {
            "id": "bids-no-bid-spike",
            "title": "No-bid rate spiking on the exchange",
            "now": iso(now),
            "report": "our no-bid rate went from 1% to 70% in the last half hour, right when the "
            "black friday campaigns "
            "kicked in. budget-ledger looks broken again? the exchange is complaining",
            "truth": {
                "category": "resource_exhaustion",
                "culprit": {"kind": "Deployment", "namespace": ns, "name": "bid-ingest"},
                "evidence": [
                    "cannot assign requested address",
                    "HTTP_KEEPALIVE",
                    "keep-alive disabled",
                ],
                "fix": "Reuse connections in bid-ingest (enable keep-alive / a pooled HTTP client "
                "to budget-ledger); "
                "budget-ledger is healthy",
            },
        },
        objs,
        pod_logs,
        logs,
        m,
    )
