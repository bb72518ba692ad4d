"""node_failure: one node's conntrack table is full; only pods on that node time out."""

from __future__ import annotations

from pathlib import Path

from . import _kit as k

SID = "orders-api-intermittent-db-timeouts"
NOW = "2026-10-19T21:40:00Z"
BAD = "ip-10-6-44-201.ec2.internal"
GOOD = [
    "ip-10-6-17-90.ec2.internal",
    "ip-10-6-29-133.ec2.internal",
    "ip-10-6-53-12.ec2.internal",
    "ip-10-6-61-247.ec2.internal",
]
FULL = 41.0
RDS = "orders-db.cluster-c7x1q2.us-east-1.rds.amazonaws.com"
RDS_IP = "10.6.200.15"


def build(root: Path) -> None:
    sc = k.Scenario(SID, NOW, seed=5307)
    created = "2025-03-03T08:00:00Z"
    sc.add(*(k.namespace(n, created) for n in ("default", "shop", "payments", "logging",
                                                "monitoring", "kube-system")))
    nodes = k.add_nodes(sc, GOOD, "2026-10-13T04:00:00Z",
                        labels={"eks.amazonaws.com/nodegroup": "general-2026-09"})
    bad = k.add_nodes(sc, [BAD], "2025-03-21T11:42:00Z", kernel="5.10.226-214.880.amzn2.x86_64",
                      image="Amazon Linux 2", kubelet="v1.30.4-eks-a737599",
                      labels={"eks.amazonaws.com/nodegroup": "general-2025-03"})[0]
    for n in nodes:
        n["metadata"]["labels"]["eks.amazonaws.com/nodegroup-image"] = "ami-0a5e1c8d3b7f29e41"
    bad["metadata"]["labels"]["eks.amazonaws.com/nodegroup-image"] = "ami-04c2d7e91f03b6a55"
    all_nodes = [GOOD[0], BAD, GOOD[1], GOOD[2], GOOD[3]]

    # ------------------------------------------------------------- node agents
    fb = k.add_daemonset(sc, "logging", "fluent-bit", "cr.fluentbit.io/fluent/fluent-bit:3.1.9",
                         all_nodes)
    k.add_daemonset(sc, "monitoring", "node-exporter", "quay.io/prometheus/node-exporter:v1.8.2",
                    all_nodes)
    k.add_daemonset(sc, "kube-system", "kube-proxy",
                    "602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/kube-proxy:v1.30.4",
                    all_nodes)
    fb_bad = next(r for r in fb if r.node == BAD)
    for m in sc.spread(FULL, 0, 0.35):
        n = sc.rng.randint(40, 900)
        if sc.rng.random() < 0.3:
            sc.log(m + 0.001, ("logging", fb_bad.name, "fluent-bit", "kernel"), "warn",
                   f"kernel: net_ratelimit: {n} callbacks suppressed", node=BAD,
                   **{"host.name": BAD, "log.file.path": "/var/log/messages",
                      "event.dataset": "system.kernel"})
        up = 3_000_000 + int((60 - m) * 60 * 11.7)
        sc.log(m, ("logging", fb_bad.name, "fluent-bit", "kernel"), "warn",
               f"kernel: [{up}.{sc.rng.randint(100000, 999999)}] nf_conntrack: nf_conntrack: "
               "table full, dropping packet", node=BAD,
               **{"host.name": BAD, "log.file.path": "/var/log/messages",
                  "event.dataset": "system.kernel"})
    for r in fb:
        for m in sc.spread(60, 0, 9):
            sc.log(m, ("logging", r.name, "fluent-bit", "fluent-bit"), "info",
                   f"[output:es:es.0] flushed {sc.rng.randint(200, 4000)} records", node=r.node)
        if r.node != BAD:
            for m in sc.spread(60, 0, 17):
                sc.log(m, ("logging", r.name, "fluent-bit", "kernel"), "info",
                       f"kernel: [{sc.rng.randint(400000, 900000)}.{sc.rng.randint(1, 999999)}] "
                       f"IPv6: ADDRCONF(NETDEV_CHANGE): eni{sc.hash(10)}: link becomes ready",
                       node=r.node, **{"host.name": r.node, "log.file.path": "/var/log/messages",
                                       "event.dataset": "system.kernel"})

    # ------------------------------------------------------------- workloads
    orders = k.AppSpec("shop", "orders-api", "registry.internal/shop/orders-api:11.2.0", 3,
                       [GOOD[0], BAD, GOOD[2]], revision=53, rps=0, mem_lim="768Mi",
                       mem_mb=350, rs_age_min=60 * 24 * 3 + 70)
    o = k.add_app(sc, orders)
    pricing = k.AppSpec("shop", "pricing", "registry.internal/shop/pricing:3.0.5", 2,
                        [BAD, GOOD[3]], revision=19, rps=0, rs_age_min=60 * 24 * 4)
    p = k.add_app(sc, pricing)
    inv = k.AppSpec("shop", "inventory", "registry.internal/shop/inventory:6.6.1", 2,
                    [GOOD[1], GOOD[3]], revision=31, rps=20, routes=("/stock/{sku}",),
                    rs_age_min=60 * 24 * 2)
    k.add_app(sc, inv)
    pw = k.AppSpec("payments", "payments-worker", "registry.internal/payments/worker:8.0.0", 2,
                   [GOOD[2], GOOD[1]], revision=70, port=None, kind="worker", rs_age_min=50,
                   worker_lines=("settled {n} captures with acquirer in {ms}ms",), log_every=1.5)
    pwr = k.add_app(sc, pw)
    sc.event("payments", "Deployment", "payments-worker", "ScalingReplicaSet",
             f"Scaled up replica set {pwr.replicaset['metadata']['name']} to 2 from 1", first=49.5,
             component="deployment-controller", api="apps/v1")
    for r in pwr.refs:
        sc.log(49.8, r, "info", "payments-worker 8.0.0 started, acquirer=adyen-live")
    mailer = k.AppSpec("shop", "order-mailer", "registry.internal/shop/order-mailer:1.3.3", 1,
                       [GOOD[3]], revision=9, port=None, kind="worker", log_every=4,
                       worker_lines=("sent {n} order confirmation emails",))
    mr = k.add_app(sc, mailer)
    mcs = mr.pods[0]["status"]["containerStatuses"][0]
    mcs["restartCount"] = 3
    mcs["lastState"] = {"terminated": {"exitCode": 1, "reason": "Error",
                                       "startedAt": sc.t(60 * 24 * 5 + 30),
                                       "finishedAt": sc.t(60 * 24 * 5)}}
    dns = k.AppSpec("kube-system", "coredns", "registry.k8s.io/coredns/coredns:v1.11.3", 2,
                    [GOOD[0], GOOD[2]], revision=1, port=53, readiness=None, kind="none",
                    service=False)
    k.add_app(sc, dns)

    routes = ("/v1/orders", "/v1/orders/{id}", "/v1/orders/{id}/status")
    for r in o.refs:
        on_bad = r.node == BAD
        for m in sc.spread(60, 0, 0.35):
            route = sc.rng.choice(routes)
            broken = on_bad and m < FULL and sc.rng.random() < 0.38
            if broken:
                kind = sc.rng.random()
                if kind < 0.6:
                    err = f"dial tcp {RDS_IP}:5432: i/o timeout"
                    what = f"pgx: failed to connect to `host={RDS} user=orders database=orders`"
                elif kind < 0.85:
                    err = "context deadline exceeded"
                    what = 'POST "http://pricing.shop.svc/v1/quote"'
                else:
                    err = "lookup pricing.shop.svc.cluster.local on 172.20.0.10:53: i/o timeout"
                    what = 'POST "http://pricing.shop.svc/v1/quote"'
                sc.log(m + 0.0005, r, "error", f"{what}: {err}",
                       **{"error.type": "net.OpError"})
                sc.log(m, r, "warn", f"GET {route} 503 {sc.rng.randint(3000, 5000)}ms",
                       **{"http.response.status_code": 503, "url.path": route})
            else:
                sc.log(m, r, "info", f"GET {route} 200 {sc.rng.randint(8, 120)}ms",
                       **{"http.response.status_code": 200, "url.path": route})
        for code, f in (("200", lambda m, b=on_bad: 6.0 * (0.62 if b and m < FULL else 1.0)),
                        ("503", lambda m, b=on_bad: 6.0 * 0.38 if b and m < FULL else 0.0)):
            sc.counter("http_requests_total", "Total HTTP requests handled.",
                       {"namespace": "shop", "service": "orders-api", "pod": r.name,
                        "code": code}, f, start=sc.rng.uniform(1e6, 2e6) if code == "200" else 40)
        sc.counter("pgx_pool_connect_errors_total", "Failed connection attempts of the pgx pool.",
                   {"namespace": "shop", "pod": r.name, "db": "orders"},
                   lambda m, b=on_bad: sc.noisy(1.4, 0.3) if b and m < FULL else 0.0, start=2)
    for r in p.refs:
        for m in sc.spread(60, 0, 0.8):
            if r.node == BAD and m < FULL and sc.rng.random() < 0.35:
                sc.log(m, r, "error", 'refresh price rules: Get "http://rules-cache.shop.svc:6379"'
                                      ": dial tcp 172.20.61.3:6379: i/o timeout")
            else:
                sc.log(m, r, "info", f"POST /v1/quote 200 {sc.rng.randint(2, 30)}ms",
                       **{"http.response.status_code": 200})
    for r in (*o.refs, *p.refs):
        if r.node == BAD:
            sc.event("shop", "Pod", r.name, "Unhealthy",
                     f'Readiness probe failed: Get "http://{r.ip}:8080/healthz": context '
                     "deadline exceeded (Client.Timeout exceeded while awaiting headers)",
                     type_="Warning", count=sc.rng.randint(9, 16), first=FULL - 1, last=1.2,
                     host=BAD)
    # node-exporter conntrack series
    for n in all_nodes:
        inst = {"instance": n, "job": "node-exporter"}
        if n == BAD:
            sc.gauge("node_nf_conntrack_entries", "Number of currently allocated flow entries "
                     "for connection tracking.", inst,
                     lambda m: 65536.0 if m < FULL else float(int(52000 + (60 - m) * 700)))
            sc.gauge("node_nf_conntrack_entries_limit", "Maximum size of connection tracking "
                     "table.", inst, lambda m: 65536.0)
            sc.gauge("node_nf_conntrack_stat_drop", "Number of packets dropped due to conntrack "
                     "failure.", inst,
                     lambda m: float(int(max(0.0, FULL - m) * 60 * 38.5)))
        else:
            base = sc.rng.uniform(38000, 61000)
            sc.gauge("node_nf_conntrack_entries", "Number of currently allocated flow entries "
                     "for connection tracking.", inst,
                     lambda m, b=base: float(int(sc.noisy(b, 0.06))))
            sc.gauge("node_nf_conntrack_entries_limit", "Maximum size of connection tracking "
                     "table.", inst, lambda m: 262144.0)
            sc.gauge("node_nf_conntrack_stat_drop", "Number of packets dropped due to conntrack "
                     "failure.", inst, lambda m: 0.0)
        sc.gauge("node_load1", "1m load average.", inst,
                 lambda m: round(sc.noisy(1.3, 0.3), 2))
    sc.gauge("aws_rds_database_connections_average", "RDS DatabaseConnections (CloudWatch).",
             {"dbinstance_identifier": "orders-db-1"}, lambda m: float(sc.rng.randint(140, 175)))
    sc.gauge("aws_rds_cpuutilization_average", "RDS CPUUtilization (CloudWatch).",
             {"dbinstance_identifier": "orders-db-1"}, lambda m: round(sc.noisy(31.0, 0.2), 1))
    sc.write(root, {
        "id": SID,
        "title": "orders-api intermittent timeouts to the orders database",
        "now": NOW,
        "report": (
            "orders-api has been throwing intermittent 503s since ~21:00, logs say "
            "'dial tcp 10.6.200.15:5432: i/o timeout' to the orders RDS. is orders-db "
            "overloaded again? payments-worker 8.0 also went out at 20:50 and it hits the "
            "same VPC, could be that."
        ),
        "truth": {
            "category": "node_failure",
            "culprit": {"kind": "Node", "namespace": "", "name": BAD},
            "evidence": ["nf_conntrack: table full, dropping packet",
                         "node_nf_conntrack_entries_limit"],
            "fix": (
                f"Cordon and drain {BAD} (the only node of the old general-2025-03 node group, "
                "nf_conntrack_max 65536 vs 262144 elsewhere) and replace it, or raise "
                "net.netfilter.nf_conntrack_max on it; only pods on that node time out, the "
                "database is fine."
            ),
        },
    })
