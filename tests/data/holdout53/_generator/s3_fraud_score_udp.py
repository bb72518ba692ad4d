"""network: a Helm values typo turns a Service port's protocol to UDP; TCP clients time out."""

from __future__ import annotations

from pathlib import Path

from . import _kit as k

SID = "checkout-orders-held-for-review"
NOW = "2026-06-02T08:55:00Z"
NODES = [
    "ip-10-2-18-66.ec2.internal",
    "ip-10-2-35-140.ec2.internal",
    "ip-10-2-51-12.ec2.internal",
    "ip-10-2-62-203.ec2.internal",
]
IMG_OLD = "registry.internal/payments/fraud-score:3.7.4"
IMG_NEW = "registry.internal/payments/fraud-score:3.8.0"
UPGRADE = 34.0
CLUSTER_IP = "172.20.44.12"


def build(root: Path) -> None:
    sc = k.Scenario(SID, NOW, seed=5303)
    created = "2024-09-20T10:00:00Z"
    sc.add(*(k.namespace(n, created) for n in ("default", "payments", "shop", "kube-system",
                                                "monitoring")))
    k.add_nodes(sc, NODES, "2026-05-29T03:10:00Z")

    # ------------------------------------------------------------- bystanders
    cart = k.AppSpec("shop", "cart", "registry.internal/shop/cart:4.4.1", 3, NODES, revision=29,
                     rps=30, routes=("/cart", "/cart/items"))
    k.add_app(sc, cart)
    catalog = k.AppSpec("shop", "catalog", "registry.internal/shop/catalog:7.0.3", 3, NODES,
                        revision=61, rps=55, routes=("/products", "/products/{id}", "/brands"),
                        mem_lim="512Mi", mem_mb=260)
    k.add_app(sc, catalog)
    lw = k.AppSpec("payments", "ledger-writer", "registry.internal/payments/ledger-writer:2.2.0",
                   2, NODES[2:], revision=8, kind="worker",
                   worker_lines=("committed ledger batch {id} entries={n}",
                                 "outbox drained: {n} events in {ms}ms"), log_every=1.2)
    k.add_app(sc, lw)
    dns = k.AppSpec("kube-system", "coredns", "registry.k8s.io/coredns/coredns:v1.11.3", 2,
                    NODES[:2], revision=1, port=53, readiness=None, kind="worker",
                    service=False, log_every=2.5,
                    worker_lines=('[INFO] 10.244.2.{n}:41022 - 5121 "AAAA IN '
                                  'fraud-score.payments.svc.cluster.local.shop.svc.cluster.local. '
                                  'udp 80 false 1232" NXDOMAIN qr,aa,rd 173 0.000{n}s',
                                  '[INFO] 10.244.1.{n}:53110 - 1207 "A IN '
                                  'catalog.shop.svc.cluster.local. udp 60 false 1232" NOERROR '
                                  'qr,aa,rd 106 0.000{n}s'))
    k.add_app(sc, dns)
    k.add_daemonset(sc, "kube-system", "kube-proxy",
                    "602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/kube-proxy:v1.30.4",
                    NODES, lines=("Successfully retrieved node IP(s)",), every=30)
    bb = k.AppSpec("monitoring", "blackbox-exporter",
                   "quay.io/prometheus/blackbox-exporter:v0.25.0", 1, NODES[3:], revision=3,
                   port=9115, kind="none")
    k.add_app(sc, bb)

    # ------------------------------------------------------------- fraud-score (healthy pods)
    spec = k.AppSpec("payments", "fraud-score", IMG_NEW, 3, NODES, port=9000, cpu_req="250m",
                     mem_req="512Mi", mem_lim="1Gi", readiness="/healthz", rps=0)

    def fs(img: str) -> dict[str, object]:
        return k.container("fraud-score", img, port=9000, cpu_req="250m", mem_req="512Mi",
                           mem_lim="1Gi", readiness=k.http_probe("/healthz"),
                           liveness=k.http_probe("/healthz", delay=15, period=20),
                           env=[{"name": "MODEL_VERSION", "value": "gbm-2026-05-30"}])

    def ok(i: int) -> k.Callable[[str], k.NewPod]:
        def f(created: str) -> k.NewPod:
            st = k.cstatus("fraud-score", IMG_NEW,
                           {"running": {"startedAt": sc.t(UPGRADE - 0.2 - i * 0.7)}}, ready=True)
            return k.NewPod(NODES[i], "Running", [st], True)
        return f

    conds = [
        k.cond("Available", "True", "MinimumReplicasAvailable",
               "Deployment has minimum availability.", sc.t(UPGRADE - 1)),
        k.cond("Progressing", "True", "NewReplicaSetAvailable",
               'ReplicaSet "x" has successfully progressed.', sc.t(UPGRADE - 2)),
    ]
    ro = k.add_rollout(sc, spec, [fs(IMG_OLD)], [fs(IMG_NEW)], old_rev=14, new_rev=15,
                       rollout_min=UPGRADE, old_count=0, new_pods=[ok(i) for i in range(3)],
                       dep_conditions=conds, old_rs_age_min=60 * 24 * 6 + 80)
    ro.deployment["status"]["conditions"][1]["message"] = (
        f'ReplicaSet "{ro.new_rs["metadata"]["name"]}" has successfully progressed.')
    ro.deployment["metadata"]["labels"]["helm.sh/chart"] = "fraud-score-3.8.0"
    sel = {"app.kubernetes.io/name": "fraud-score", "app.kubernetes.io/instance": "fraud-score"}
    svc = k.service(sc, "payments", "fraud-score", sel, 9000, "http", protocol="UDP",
                    cluster_ip=CLUSTER_IP, created="2024-10-01T12:30:00Z",
                    labels={"app.kubernetes.io/name": "fraud-score",
                            "app.kubernetes.io/managed-by": "Helm",
                            "helm.sh/chart": "fraud-score-3.8.0"})
    sc.add(svc, k.endpoints("payments", "fraud-score", ro.new_refs, [], 9000, protocol="UDP",
                            created="2024-10-01T12:30:00Z"))
    sc.add({
        "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
        "metadata": {"name": "fraud-score-allow-shop", "namespace": "payments",
                     "creationTimestamp": "2025-01-08T15:00:00Z"},
        "spec": {"podSelector": {"matchLabels": {"app.kubernetes.io/name": "fraud-score"}},
                 "policyTypes": ["Ingress"],
                 "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {
                     "kubernetes.io/metadata.name": "shop"}}},
                     {"namespaceSelector": {"matchLabels": {
                         "kubernetes.io/metadata.name": "monitoring"}}}],
                     "ports": [{"protocol": "TCP", "port": 9000}]}]},
    })
    new_rs = ro.new_rs["metadata"]["name"]
    old_rs = ro.old_rs["metadata"]["name"]
    for j, ev in enumerate((f"Scaled up replica set {new_rs} to 1",
                            f"Scaled down replica set {old_rs} to 2 from 3",
                            f"Scaled up replica set {new_rs} to 2 from 1",
                            f"Scaled down replica set {old_rs} to 1 from 2",
                            f"Scaled up replica set {new_rs} to 3 from 2",
                            f"Scaled down replica set {old_rs} to 0 from 1")):
        sc.event("payments", "Deployment", "fraud-score", "ScalingReplicaSet", ev,
                 first=UPGRADE - j * 0.35, component="deployment-controller", api="apps/v1")
    for r in ro.new_refs:
        t0 = (sc.now - r.started).total_seconds() / 60
        sc.log(t0 - 0.05, r, "info", "fraud-score 3.8.0 loading model gbm-2026-05-30 (412 trees)")
        sc.log(t0 - 0.3, r, "info", "model loaded in 14.2s, serving on 0.0.0.0:9000 (tcp)")
        for m in sc.spread(t0 - 0.4, 0, 0.5):
            sc.log(m, r, "debug", "GET /healthz 200 0.3ms ua=kube-probe/1.30",
                   **{"http.response.status_code": 200, "url.path": "/healthz"})
        for m in sc.spread(t0 - 0.6, 0, 14):
            sc.log(m, r, "info", "POST /v1/score 200 9ms src=10.244.4.7 (blackbox probe)",
                   **{"http.response.status_code": 200, "url.path": "/v1/score"})
        sc.log(t0 - 0.5, r, "warn", "feature 'device_age_days' missing in 0.4% of requests "
                                    "during warmup, defaulting to 0")
        k.healthy_metrics(sc, spec, r, since=t0)
    # the replaced pods served real traffic before the upgrade (logged from the old pods)
    gone_refs: list[k.PodRef] = []
    for i in range(3):
        gone = k.PodRef("payments", f"{old_rs}-{sc.hash(5)}", NODES[i], sc.pod_ip(NODES[i]),
                        ["fraud-score"], "fraud-score", sc.ago(60 * 24 * 6))
        for m in sc.spread(60, UPGRADE - i * 0.7, 0.3):
            sc.log(m, gone, "info", f"POST /v1/score 200 {sc.rng.randint(6, 30)}ms "
                                    f"decision={sc.rng.choice(('approve',) * 12 + ('review',))}",
                   **{"http.response.status_code": 200, "url.path": "/v1/score"})
        gone_refs.append(gone)
        sc.log(UPGRADE - i * 0.7 - 0.02, gone, "info",
               "SIGTERM received, draining 0 in-flight requests")
    for r in ro.new_refs:
        t0 = (sc.now - r.started).total_seconds() / 60
        sc.counter("http_requests_total", "Total HTTP requests handled.",
                   {"namespace": "payments", "service": "fraud-score", "pod": r.name,
                    "code": "200", "path": "/v1/score"},
                   lambda m: sc.noisy(0.0012, 0.2), since=t0)
    for g in gone_refs:
        sc.counter("http_requests_total", "Total HTTP requests handled.",
                   {"namespace": "payments", "service": "fraud-score", "pod": g.name,
                    "code": "200", "path": "/v1/score"},
                   lambda m: sc.noisy(3.6, 0.15), start=sc.rng.uniform(1e6, 2e6))
        k.restarts_series(sc, {"namespace": "payments", "pod": g.name,
                               "container": "fraud-score"},
                          lambda m: None if m < UPGRADE - 1 else 0.0)

    # ------------------------------------------------------------- checkout (the symptom)
    co = k.AppSpec("shop", "checkout-api", "registry.internal/shop/checkout-api:9.3.2", 4, NODES,
                   revision=112, rps=11, routes=("/checkout/confirm", "/checkout/quote"),
                   mem_lim="768Mi", mem_mb=380, rs_age_min=60 * 24 * 2 + 500)
    co_refs = k.add_app(sc, co)
    for r in co_refs.refs:
        for m in sc.spread(UPGRADE - 0.2, 0, 1.0):
            oid = f"ord_{sc.hash(10)}"
            if sc.rng.random() < 0.8:
                err = f"dial tcp {CLUSTER_IP}:9000: i/o timeout"
            else:
                err = f"dial tcp {CLUSTER_IP}:9000: connect: connection refused"
            sc.log(m, r, "error", f"fraud-score call failed after 2 attempts: Post "
                                  f'"http://fraud-score.payments.svc:9000/v1/score": {err}',
                   **{"error.type": "net.OpError", "order.id": oid})
            sc.log(m - 0.001, r, "warn", f"fraud check unavailable, order {oid} held for manual "
                                         "review")
        for m in sc.spread(60, UPGRADE, 0.9):
            sc.log(m, r, "info", f"fraud-score decision=approve order=ord_{sc.hash(10)} "
                                 f"latency={sc.rng.randint(8, 35)}ms")
        sc.counter("http_client_requests_total", "Outgoing HTTP requests by target and outcome.",
                   {"namespace": "shop", "pod": r.name, "target": "fraud-score",
                    "outcome": "timeout"},
                   lambda m: 0.0 if m > UPGRADE else sc.noisy(2.2, 0.2))
        sc.counter("http_client_requests_total", "Outgoing HTTP requests by target and outcome.",
                   {"namespace": "shop", "pod": r.name, "target": "fraud-score",
                    "outcome": "success"},
                   lambda m: sc.noisy(2.7, 0.2) if m > UPGRADE else 0.0, start=8e4)
        sc.gauge("checkout_orders_manual_review", "Orders waiting for manual fraud review.",
                 {"namespace": "shop", "pod": r.name},
                 lambda m: float(max(0, int((UPGRADE - m) * 2.7 * 60 / 4 * 0.9)))
                 if m < UPGRADE else float(sc.rng.randint(0, 2)))

    # blackbox probes: the Service fails, the pod IPs answer
    for target, fn in (("fraud-score.payments.svc:9000", lambda m: 1.0 if m > UPGRADE else 0.0),
                       *[(f"{r.ip}:9000", (lambda m, r=r: None if m > (
                           sc.now - r.started).total_seconds() / 60 - 1 else 1.0))
                         for r in ro.new_refs]):
        sc.gauge("probe_success", "Displays whether or not the probe was a success",
                 {"job": "blackbox-tcp", "module": "tcp_connect", "instance": target}, fn)
    k.deployment_available(sc, "payments", "fraud-score", lambda m: 3.0)
    k.deployment_available(sc, "shop", "checkout-api", lambda m: 4.0)

    sc.write(root, {
        "id": SID,
        "title": "checkout holding every order for manual fraud review",
        "now": NOW,
        "report": (
            "since ~08:20 UTC checkout-api can't get fraud decisions, every order goes to "
            "manual review and the queue is exploding. fraud-score 3.8.0 was deployed exactly "
            "then, can we roll it back? weird thing: the fraud-score pods look healthy and "
            "curling a pod IP on 9000 from a checkout pod works."
        ),
        "truth": {
            "category": "network",
            "culprit": {"kind": "Service", "namespace": "payments", "name": "fraud-score"},
            "evidence": ["protocol: UDP", f"dial tcp {CLUSTER_IP}:9000: i/o timeout"],
            "fix": (
                "Set the fraud-score Service port 9000 back to protocol TCP (fix the Helm "
                "values typo of the 3.8.0 chart upgrade); the pods are healthy and answer on "
                "their own IPs, only the Service forwards UDP."
            ),
        },
    })
