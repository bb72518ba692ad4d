# ruff: noqa: E501  (log lines and messages are kept whole, as the systems print them)
"""Shape 1: card-gateway's serving certificate (mounted from a Secret volume) expired at
06:00; its certificate watcher exits, and every restart fails at the keypair check."""

from __future__ import annotations

from datetime import datetime, timedelta

from . import _k8s as k
from ._common import NODES, access, app, chatter, ip, nodes
from ._out import Scenario, accumulate, grid
from ._workloads import Revision, deployment, pod_name

NOW = datetime(2026, 3, 16, 7, 5, 0)
EXPIRY = datetime(2026, 3, 16, 6, 0, 0)
IMAGE = "registry.internal/payments/card-gateway:3.8.2"


def build() -> Scenario:
    sc = Scenario(
        id="payments-card-errors-morning",
        title="Card payments failing since early morning",
        now=NOW,
        seed=101,
        report="checkout is failing card payments since about 6, customers get 'payment "
        "provider unavailable'. card-gateway looks like it restarts a lot. the redis "
        "sessions box was complaining last night again, maybe related?",
        truth={
            "category": "certificate",
            "culprit": {"kind": "Deployment", "namespace": "payments", "name": "card-gateway"},
            "evidence": [
                "certificate has expired",
                "is after 2026-03-16T06:00:00Z",
                "CrashLoopBackOff",
            ],
            "fix": "Issue a new serving certificate for card-gateway (Secret card-gateway-tls, "
            "mounted at /etc/tls) and restart the pods; automate its renewal.",
        },
    )
    nodes(sc)
    for ns in ("payments", "shop", "monitoring"):
        sc.add(k.namespace(ns, NOW - timedelta(days=400)))

    # card-gateway -----------------------------------------------------------------------
    mounts = [
        {"name": "tls", "mountPath": "/etc/tls", "readOnly": True},
        {"name": "config", "mountPath": "/etc/card-gateway", "readOnly": True},
    ]
    volumes = [
        {"name": "tls", "secret": {"secretName": "card-gateway-tls", "defaultMode": 420}},
        {"name": "config", "configMap": {"name": "card-gateway-config", "defaultMode": 420}},
    ]
    main = k.container(
        "card-gateway",
        IMAGE,
        port=8443,
        port_name="https",
        resources=k.res("250m", "256Mi", mem_lim="512Mi"),
        env=[
            {"name": "TLS_CERT_FILE", "value": "/etc/tls/tls.crt"},
            {"name": "TLS_KEY_FILE", "value": "/etc/tls/tls.key"},
            {"name": "CERT_WATCH_INTERVAL", "value": "60s"},
        ],
        readiness=k.http_probe("/ready", 9090, delay=3),
        liveness=k.http_probe("/live", 9090, delay=10, period=20),
        mounts=mounts,
    )
    main["ports"].append({"name": "admin", "containerPort": 9090, "protocol": "TCP"})
    labels = {"app": "card-gateway", "team": "payments-core"}
    old = Revision(
        k.template(
            labels,
            [dict(main, image="registry.internal/payments/card-gateway:3.8.1")],
            volumes=volumes,
        ),
        NOW - timedelta(days=31),
        0,
    )
    cur = Revision(
        k.template(labels, [main], volumes=volumes), NOW - timedelta(days=4, hours=3), 3, ready=0
    )
    dep, rss = deployment(
        "card-gateway", "payments", labels, [old, cur], created=NOW - timedelta(days=300), now=NOW
    )
    sc.add(dep, rss)
    pods = []
    restarts = (16, 15, 16)
    for i in range(3):
        name = pod_name(cur, i)
        last_start = NOW - timedelta(minutes=3, seconds=40 - i * 50)
        last = k.terminated("Error", 1, last_start, last_start + timedelta(seconds=1), IMAGE)
        status = k.crashing(
            "card-gateway",
            image=IMAGE,
            restarts=restarts[i],
            last=last,
            message=f"back-off 5m0s restarting failed container=card-gateway "
            f"pod={name}_payments({k.uid('Pod' + 'payments' + name)})",
        )
        p = k.pod(
            name,
            "payments",
            cur.template,
            owner=("ReplicaSet", cur.name),
            created=cur.created + timedelta(seconds=i * 9),
            node=NODES[i],
            ip=ip(sc, i + 1),
            statuses=[status],
            extra_labels={"pod-template-hash": cur.hash},
        )
        sc.add(p)
        pods.append(p)
        # the instance that failed most recently
        t = last_start
        lines = [
            f"{_ms(t)} INFO  card-gateway 3.8.2 (commit 4f1c2ab, go1.22.5) starting",
            f"{_ms(t, 3)} INFO  config loaded path=/etc/card-gateway/config.yaml profile=prod",
            f"{_ms(t, 6)} INFO  acquirers configured: adyen-eu, worldline-fr, stripe-fallback",
            f"{_ms(t, 41)} INFO  redis connected addr=redis-sessions.payments.svc:6379 db=2",
            f"{_ms(t, 44)} INFO  admin listener started addr=:9090",
            f"{_ms(t, 52)} INFO  loading serving keypair cert=/etc/tls/tls.crt key=/etc/tls/tls.key",
            f"{_ms(t, 53)} ERROR keypair check failed: x509: certificate has expired or is not yet "
            f"valid: current time {k.stamp(t)} is after 2026-03-16T06:00:00Z "
            "(subject=CN=card-gateway.payments.svc, issuer=CN=Payments Internal CA G2)",
            f"{_ms(t, 53)} ERROR https listener :8443 not started: no valid serving certificate",
            f"{_ms(t, 55)} INFO  closing redis pool",
            f"{_ms(t, 57)} INFO  exit status=1",
        ]
        sc.log_file("payments", name, "card-gateway", lines, previous=True)
        for n, line in enumerate(lines):
            level = line.split()[1].lower()
            sc.doc(
                t + timedelta(milliseconds=n * 5),
                "card-gateway",
                "payments",
                name,
                level,
                line.split(" ", 2)[2].strip(),
            )
        # the watcher's exit at 06:00 and the failed restarts since
        first = EXPIRY + timedelta(seconds=14 + i * 21)
        sc.doc(
            first,
            "card-gateway",
            "payments",
            name,
            "warn",
            "cert watcher: serving certificate /etc/tls/tls.crt no longer valid "
            "(notAfter=2026-03-16T06:00:00Z); draining listener",
        )
        sc.doc(
            first + timedelta(seconds=5),
            "card-gateway",
            "payments",
            name,
            "info",
            "graceful shutdown finished, in-flight=0",
        )
        back, start = 10, first + timedelta(seconds=6)
        while start + timedelta(seconds=back) < last_start - timedelta(seconds=30):
            start += timedelta(seconds=back)
            sc.doc(
                start,
                "card-gateway",
                "payments",
                name,
                "info",
                "card-gateway 3.8.2 (commit 4f1c2ab, go1.22.5) starting",
            )
            sc.doc(
                start + timedelta(milliseconds=53),
                "card-gateway",
                "payments",
                name,
                "error",
                "keypair check failed: x509: certificate has expired or is not yet valid: "
                f"current time {k.stamp(start)} is after 2026-03-16T06:00:00Z "
                "(subject=CN=card-gateway.payments.svc, issuer=CN=Payments Internal CA G2)",
            )
            sc.doc(
                start + timedelta(milliseconds=57),
                "card-gateway",
                "payments",
                name,
                "info",
                "exit status=1",
            )
            back = min(back * 2, 300)
        # before 06:00 it served normally
        for moment in sc.every(NOW - timedelta(hours=3), EXPIRY, 9):
            took = sc.rng.randint(80, 420)
            sc.doc(
                moment,
                "card-gateway",
                "payments",
                name,
                "info",
                f"POST /v2/authorize 200 {took}ms acquirer={sc.rng.choice(['adyen-eu', 'worldline-fr'])}",
                http__response__status_code=200,
            )
        sc.add(
            k.event(
                "payments",
                "Pod",
                name,
                "BackOff",
                "Back-off restarting failed container card-gateway in pod "
                f"{name}_payments({k.uid('Pod' + 'payments' + name)})",
                first=EXPIRY + timedelta(seconds=40 + i * 20),
                last=NOW - timedelta(seconds=20 + i * 30),
                count=230 + i * 7,
                type="Warning",
                host=NODES[i],
                field_path="spec.containers{card-gateway}",
            )
        )
        sc.add(
            k.event(
                "payments",
                "Pod",
                name,
                "Pulled",
                f'Container image "{IMAGE}" already present on machine',
                first=EXPIRY + timedelta(seconds=20 + i * 20),
                last=last_start,
                count=restarts[i],
                host=NODES[i],
                field_path="spec.containers{card-gateway}",
            )
        )
        sc.add(
            k.event(
                "payments",
                "Pod",
                name,
                "Unhealthy",
                f'Readiness probe failed: Get "http://{p["status"]["podIP"]}:9090/ready": '
                "dial tcp: connect: connection refused",
                first=EXPIRY + timedelta(seconds=16 + i * 21),
                last=last_start + timedelta(seconds=1),
                count=restarts[i] + 2,
                type="Warning",
                host=NODES[i],
                field_path="spec.containers{card-gateway}",
            )
        )
    sc.add(
        k.service(
            "card-gateway",
            "payments",
            labels,
            [("https", 443, "https")],
            cluster_ip="172.20.41.9",
            created=NOW - timedelta(days=300),
        )
    )
    sc.add(
        k.endpoints(
            "card-gateway", "payments", pods, [("https", 8443)], created=NOW - timedelta(days=300)
        )
    )
    sc.add(
        k.configmap(
            "card-gateway-config",
            "payments",
            {
                "config.yaml": (
                    "listen: :8443\nadmin: :9090\ntls:\n  cert: /etc/tls/tls.crt\n  key: /etc/tls/tls.key\n"
                    "  watch: true\nacquirers:\n  - adyen-eu\n  - worldline-fr\n  - stripe-fallback\n"
                    "redis: redis-sessions.payments.svc:6379\n"
                )
            },
            created=NOW - timedelta(days=41),
        )
    )

    # bystanders ---------------------------------------------------------------------------
    ledger, _ = app(sc, "ledger-api", "payments", "registry.internal/payments/ledger-api:2.14.0")
    fx, _ = app(sc, "fx-rates", "payments", "registry.internal/payments/fx-rates:1.3.7", replicas=1)
    redis, _ = app(
        sc,
        "redis-sessions",
        "payments",
        "redis:7.2.5",
        replicas=1,
        port=6379,
        age_days=6,
        history=1,
    )
    checkout, _ = app(sc, "checkout", "shop", "registry.internal/shop/checkout:5.21.3", replicas=3)
    store, _ = app(sc, "storefront", "shop", "registry.internal/shop/storefront:9.2.0", replicas=3)
    access(
        sc,
        "ledger-api",
        "payments",
        ledger,
        NOW - timedelta(hours=3),
        ["GET /v1/accounts/{id}/balance", "POST /v1/entries"],
        gap=12,
    )
    chatter(
        sc,
        "fx-rates",
        "payments",
        fx,
        NOW - timedelta(hours=3),
        ["refreshed 164 currency pairs from ecb", "cache hit ratio 0.97"],
        gap=120,
    )
    access(
        sc,
        "storefront",
        "shop",
        store,
        NOW - timedelta(hours=3),
        ["GET /", "GET /p/{sku}", "GET /cart", "GET /search"],
        gap=2,
    )
    for moment in sc.every(NOW - timedelta(hours=9), NOW, 300):
        sc.doc(
            moment,
            "redis-sessions",
            "payments",
            redis[0],
            "warn",
            "Asynchronous AOF fsync is taking too long (disk is busy?). Writing the AOF buffer "
            "without waiting for fsync to complete, this may slow down Redis.",
        )
    sc.add(
        k.event(
            "shop",
            "Pod",
            store[1],
            "Unhealthy",
            f'Readiness probe failed: Get "http://10.0.2.{sc.rng.randint(20, 99)}:8080/healthz": '
            "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
            first=NOW - timedelta(minutes=48),
            last=NOW - timedelta(minutes=47),
            count=2,
            type="Warning",
            host=NODES[1],
            field_path="spec.containers{storefront}",
        )
    )
    # checkout: its card payments fail since 06:00 --------------------------------------------
    for moment in sc.every(NOW - timedelta(hours=3), NOW, 4):
        pod = sc.rng.choice(checkout)
        if moment < EXPIRY + timedelta(seconds=50):
            sc.doc(
                moment,
                "checkout",
                "shop",
                pod,
                "info",
                "POST /api/checkout/pay 200",
                http__response__status_code=200,
            )
        elif sc.rng.random() < 0.93:
            sc.doc(
                moment,
                "checkout",
                "shop",
                pod,
                "error",
                'payment authorize failed: Post "https://card-gateway.payments.svc/v2/authorize": '
                "dial tcp 172.20.41.9:443: connect: connection refused",
                http__response__status_code=502,
                error__type="PaymentProviderUnavailable",
            )
        else:
            sc.doc(
                moment,
                "checkout",
                "shop",
                pod,
                "info",
                "POST /api/checkout/pay 200 method=paypal",
                http__response__status_code=200,
            )
    times = grid(NOW - timedelta(hours=3), NOW)
    expiry_t = EXPIRY.timestamp()
    for pod in checkout:
        for code, rate in (
            ("200", lambda t: 0.09 if t < expiry_t else 0.006),
            ("502", lambda t: 0.0 if t < expiry_t else 0.08),
        ):
            sc.counter(
                "http_requests_total",
                "HTTP requests served.",
                {
                    "namespace": "shop",
                    "pod": pod,
                    "service": "checkout",
                    "route": "/api/checkout/pay",
                    "code": code,
                },
                accumulate(times, rate, 1200 if code == "200" else 3),
            )
    for i, p in enumerate(pods):
        name = p["metadata"]["name"]
        points, count = [], 0
        back, nxt = 10, expiry_t + 60 + i * 20
        for t in times:
            while t >= nxt and count < restarts[i]:
                count += 1
                nxt += back
                back = min(back * 2, 300)
            points.append((t, float(count)))
        sc.counter(
            "kube_pod_container_status_restarts_total",
            "The number of container restarts per container.",
            {"namespace": "payments", "pod": name, "container": "card-gateway"},
            points,
        )
    return sc


def _ms(t: datetime, plus_ms: int = 0) -> str:
    moment = t + timedelta(milliseconds=plus_ms + 402)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
