"""3. bad_rollout at the other hop: payout-worker's new retry policy storms ledger-api, which did
not change."""

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
    namespace,
    parse,
    pod_start_events,
    resources,
    rollout_events,
    smooth,
    sport,
    std_nodes,
    terminated,
    times,
    ts_dt,
)

SID = "ledger-retry-storm"


def build() -> Scenario:
    rng = random.Random(4903)
    now = parse("2026-12-11T08:50:00Z")
    sc = Scenario(
        id=SID,
        title="ledger-api slow and answering 503 to every caller",
        now=now,
        report=(
            "ledger-api has been timing out / returning 503 for ~35 min, payouts AND refunds "
            "are failing. ledger team, did you ship something? their DB connection pool looks "
            "maxed out too.\n"
        ),
        truth={
            "category": "bad_rollout",
            "culprit": {"kind": "Deployment", "namespace": "payments", "name": "payout-worker"},
            "evidence": [
                "LEDGER_RETRY_MAX_ATTEMPTS",
                "LEDGER_RETRY_BACKOFF",
                "attempt=7/10 backoff=0s",
                "Scaled up replica set payout-worker",
            ],
            "fix": (
                "Roll payout-worker back to revision 21 (3 attempts with exponential backoff), "
                "then reintroduce the retry change with backoff, jitter and a retry budget."
            ),
        },
    )
    nodes_objs, nodes = std_nodes(
        "10.70.16",
        [22, 87, 154, 203],
        "eu-west-1",
        now,
        cpu="8",
        memory_ki=32386544,
        instance_type="m6i.2xlarge",
    )
    sc.add(*nodes_objs)
    for ns in ("payments", "ledger", "notifications"):
        sc.add(namespace(ns, now - timedelta(days=300)))

    roll = now - timedelta(minutes=37)
    # ------------------------------------------------ payout-worker: new revision (culprit)
    pw_new = Container(
        "payout-worker",
        "registry.corvid.finance/payments/payout-worker:3.8.0",
        ports=[{"containerPort": 9102, "name": "metrics", "protocol": "TCP"}],
        env=env(
            LEDGER_URL="http://ledger-api.ledger.svc.cluster.local:8080",
            LEDGER_TIMEOUT="2s",
            LEDGER_RETRY_MAX_ATTEMPTS="10",
            LEDGER_RETRY_BACKOFF="none",
            LEDGER_RETRY_BASE_DELAY="0ms",
            WORKER_CONCURRENCY="32",
            QUEUE_URL="amqp://rabbitmq.payments.svc:5672/payouts",
        ),
        resources=resources("250m", "256Mi", None, "512Mi"),
        readiness=http_probe("/healthz", "metrics"),
    )
    pw_old = Container(
        "payout-worker",
        "registry.corvid.finance/payments/payout-worker:3.7.4",
        ports=pw_new.ports,
        env=env(
            LEDGER_URL="http://ledger-api.ledger.svc.cluster.local:8080",
            LEDGER_TIMEOUT="2s",
            LEDGER_RETRY_MAX_ATTEMPTS="3",
            LEDGER_RETRY_BACKOFF="exponential",
            LEDGER_RETRY_BASE_DELAY="200ms",
            WORKER_CONCURRENCY="32",
            QUEUE_URL="amqp://rabbitmq.payments.svc:5672/payouts",
        ),
        resources=pw_new.resources,
        readiness=pw_new.readiness,
    )
    pa = app(
        rng,
        "payout-worker",
        "payments",
        [pw_new],
        created=now - timedelta(days=280),
        rs_created=roll,
        replicas=4,
        nodes=nodes,
        pod_cidr="10.70.17",
        revision=22,
        labels={"team": "payments"},
        deploy_annotations={
            "kubernetes.io/change-cause": "payout-worker 3.8.0: resilient ledger client (PAY-2291)"
        },
    )
    # the old ReplicaSet, scaled to 0, with the previous retry policy
    from ._kit import replicaset, template

    old_tmpl = template({"app": "payout-worker", "team": "payments"}, [pw_old])
    old_rs = replicaset(
        pa.deploy,
        "6f8d7b9c54",
        now - timedelta(days=6, hours=20),
        old_tmpl,
        replicas=0,
        ready=0,
        revision=21,
    )
    sc.add(*pa.objects[:1], old_rs, *pa.objects[1:])
    new_rs = pa.rs[-1]["metadata"]["name"]
    sc.add(
        *rollout_events("payments", "payout-worker", new_rs, "payout-worker-6f8d7b9c54", 4, roll)
    )
    for p in pa.pods:
        sc.add(*pod_start_events(p, pw_new.image, "payout-worker"))

    # refund-service: another ledger caller (victim), unchanged
    rf = Container(
        "refund-service",
        "registry.corvid.finance/payments/refund-service:2.2.9",
        ports=[{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
        env=env(
            LEDGER_URL="http://ledger-api.ledger.svc.cluster.local:8080",
            LEDGER_RETRY_MAX_ATTEMPTS="3",
            LEDGER_RETRY_BACKOFF="exponential",
        ),
        resources=resources("100m", "256Mi", None, "512Mi"),
        readiness=http_probe("/healthz", "http"),
    )
    ra = app(
        rng,
        "refund-service",
        "payments",
        [rf],
        created=now - timedelta(days=200),
        rs_created=now - timedelta(days=3, hours=5),
        replicas=2,
        nodes=nodes[1:],
        pod_cidr="10.70.17",
        revision=14,
        svc_ports=[sport(80, "http")],
    )
    sc.add(*ra.objects)

    # ------------------------------------------------ ledger-api: unchanged callee
    la_c = Container(
        "ledger-api",
        "registry.corvid.finance/ledger/ledger-api:11.4.2",
        ports=[{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
        env=env(
            DB_HOST="ledger-db.cluster-cq71x.eu-west-1.rds.amazonaws.com",
            DB_POOL_SIZE="20",
            MAX_INFLIGHT_REQUESTS="64",
        ),
        resources=resources("1", "1Gi", None, "2Gi"),
        readiness=http_probe("/readyz", "http", timeout=2),
        liveness=http_probe("/livez", "http", period=20, timeout=2),
    )
    la_start = now - timedelta(days=6, hours=2)
    la = app(
        rng,
        "ledger-api",
        "ledger",
        [la_c],
        created=now - timedelta(days=700),
        rs_created=la_start,
        replicas=3,
        nodes=nodes,
        pod_cidr="10.70.18",
        revision=58,
        svc_ports=[sport(8080, "http")],
        cluster_ip="172.20.118.9",
        restarts={2: (1, terminated("Error", 137, la_start, now - timedelta(days=4, hours=7)))},
    )
    sc.add(*la.objects)

    # notifications: a harmless rollout 20 minutes ago
    em = Container(
        "email-sender",
        "registry.corvid.finance/notifications/email-sender:1.30.0",
        resources=resources("50m", "128Mi", None, "256Mi"),
        env=env(SMTP_HOST="email-smtp.eu-west-1.amazonaws.com"),
    )
    em_roll = now - timedelta(minutes=21)
    ema = app(
        rng,
        "email-sender",
        "notifications",
        [em],
        created=now - timedelta(days=500),
        rs_created=em_roll,
        replicas=2,
        nodes=nodes,
        pod_cidr="10.70.19",
        revision=40,
        old_rs=[("58bd9c7f6d", now - timedelta(days=15), 39)],
    )
    sc.add(*ema.objects)
    sc.add(
        *rollout_events(
            "notifications",
            "email-sender",
            ema.rs[-1]["metadata"]["name"],
            "email-sender-58bd9c7f6d",
            2,
            em_roll,
        )
    )

    # ------------------------------------------------ metrics
    ts = times(now, 3)
    m = sc.metrics
    r0 = int(roll.timestamp()) + 60
    r1 = r0 + 180

    def storm(t: int) -> float:
        return smooth(t, r0, r1, 0.0, 1.0)

    # ledger-api server side, by client id
    for client, base, mult in (
        ("payout-worker", 38.0, 5.6),
        ("refund-service", 6.0, 1.0),
        ("reconciler", 2.0, 1.0),
    ):
        lab = {"namespace": "ledger", "service": "ledger-api", "client": client}
        m.counter(
            "http_requests",
            "Requests served, by x-client-id.",
            lab | {"code": "200"},
            cumulate(ts, lambda t, b=base: b * (1 - 0.62 * storm(t)), start=7.3e6 * base / 38),
        )
        m.counter(
            "http_requests",
            "Requests served, by x-client-id.",
            lab | {"code": "503"},
            cumulate(ts, lambda t, b=base, k=mult: b * k * 0.55 * storm(t) + 0.001, start=120),
        )
    buckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0]
    m.histogram(
        "http_request_duration_seconds",
        "Request latency.",
        {"namespace": "ledger", "service": "ledger-api"},
        buckets,
        hist_points(
            ts[::2],
            buckets,
            lambda t: 46 + 190 * storm(t),
            lambda t: (smooth(t, r0, r1, 0.021, 0.38), smooth(t, r0, r1, 0.12, 2.1)),
            rng,
        ),
    )
    for i, pn in enumerate(la.pod_names):
        lab = {"namespace": "ledger", "pod": pn, "container": "ledger-api"}
        m.counter(
            "container_cpu_usage_seconds",
            "Cumulative cpu time consumed by the container in core-seconds",
            lab,
            cumulate(
                ts,
                lambda t: 0.34 + 0.52 * storm(t) + rng.uniform(-0.02, 0.02),
                start=1.5e5 + 1e4 * i,
            ),
        )
        m.gauge(
            "ledger_inflight_requests",
            "Requests being handled.",
            lab,
            [(t, round(9 + 55 * storm(t) + rng.uniform(-2, 2) * (1 - storm(t)))) for t in ts],
        )
        m.gauge(
            "hikaricp_connections_active",
            "Active connections",
            lab | {"pool": "ledger"},
            [(t, round(6 + 14 * storm(t) - (rng.random() < 0.2 and storm(t) < 1))) for t in ts],
        )
    # payout-worker client side
    for pn in pa.pod_names:
        lab = {
            "namespace": "payments",
            "pod": pn,
            "container": "payout-worker",
            "target": "ledger-api",
        }
        m.counter(
            "ledger_client_attempts",
            "Calls to ledger, including retries.",
            lab | {"attempt": "first"},
            cumulate([t for t in ts if t >= r0 - 60], lambda t: 9.5),
        )
        m.counter(
            "ledger_client_attempts",
            "Calls to ledger, including retries.",
            lab | {"attempt": "retry"},
            cumulate([t for t in ts if t >= r0 - 60], lambda t: 44 * storm(t)),
        )
    for pn in ["payout-worker-6f8d7b9c54-" + x for x in ("hq2wd", "m8c4t", "t5vbn", "zk9xr")]:
        lab = {
            "namespace": "payments",
            "pod": pn,
            "container": "payout-worker",
            "target": "ledger-api",
        }
        pre = [t for t in ts if t < r0 + 60]
        m.counter(
            "ledger_client_attempts",
            "Calls to ledger, including retries.",
            lab | {"attempt": "first"},
            cumulate(pre, lambda t: 9.5, start=2.2e5),
        )
        m.counter(
            "ledger_client_attempts",
            "Calls to ledger, including retries.",
            lab | {"attempt": "retry"},
            cumulate(pre, lambda t: 0.04, start=610),
        )

    # ------------------------------------------------ logs
    L = sc.logs
    for p in pa.pods:
        pn = p["metadata"]["name"]
        st = ts_dt(int(parse(p["metadata"]["creationTimestamp"]).timestamp())) + timedelta(
            seconds=3
        )
        lines = [
            f'time={st.isoformat().replace("+00:00", "Z")} level=INFO msg="payout-worker 3.8.0 '
            'starting" ledger_retry_max_attempts=10 ledger_retry_backoff=none '
            "ledger_timeout=2s concurrency=32"
        ]
        L.add(
            st,
            "payout-worker",
            "payments",
            pn,
            "payout-worker",
            "info",
            "payout-worker 3.8.0 starting ledger_retry_max_attempts=10 "
            "ledger_retry_backoff=none ledger_timeout=2s concurrency=32",
        )
        t = int(st.timestamp()) + 30
        while t < int(now.timestamp()):
            s = storm(t)
            for _ in range(1 + int(3 * s)):
                at = ts_dt(t) + timedelta(seconds=rng.randint(0, 59))
                pid = f"po_{rng.randint(10**7, 10**8 - 1)}"
                att = rng.randint(2, 10)
                err = rng.choice(
                    [
                        '503 Service Unavailable: {"error":"overloaded",'
                        '"detail":"inflight limit 64 reached"}',
                        "context deadline exceeded (Client.Timeout exceeded while awaiting "
                        "headers)",
                    ]
                )
                if s < 0.3 and rng.random() < 0.7:
                    continue
                msg = (
                    f'retrying ledger call payout={pid} attempt={att}/10 backoff=0s err="POST '
                    f'http://ledger-api.ledger.svc.cluster.local:8080/v1/entries: {err}"'
                )
                L.add(at, "payout-worker", "payments", pn, "payout-worker", "warn", msg)
                if at > now - timedelta(minutes=6):
                    lines.append(
                        f'time={at.isoformat().replace("+00:00", "Z")} level=WARN msg="retrying '
                        f'ledger call" payout={pid} attempt={att}/10 backoff=0s '
                        f'err="{err.replace(chr(34), chr(92) + chr(34))}"'
                    )
                if rng.random() < 0.25:
                    msg2 = (
                        f"payout {pid} failed after 10 attempts: ledger unavailable; message "
                        "requeued"
                    )
                    L.add(
                        at + timedelta(seconds=1),
                        "payout-worker",
                        "payments",
                        pn,
                        "payout-worker",
                        "error",
                        msg2,
                    )
                    if at > now - timedelta(minutes=6):
                        failed_at = (at + timedelta(seconds=1)).isoformat().replace("+00:00", "Z")
                        lines.append(
                            f'time={failed_at} level=ERROR msg="payout failed" payout={pid} '
                            'attempts=10 err="ledger unavailable" action=requeue'
                        )
            t += 60
        sc.pod_log("payments", pn, "payout-worker", lines)
    for p in la.pods:
        pn = p["metadata"]["name"]
        lines = []
        t = ts[0]
        while t < ts[-1]:
            s = storm(t)
            at = ts_dt(t) + timedelta(seconds=rng.randint(0, 59))
            if s > 0.2:
                for _ in range(1 + int(2 * s)):
                    a2 = at + timedelta(seconds=rng.randint(0, 20))
                    msg = rng.choice(
                        [
                            "rejecting request: inflight limit reached (inflight=64 limit=64) "
                            "client=payout-worker",
                            "rejecting request: inflight limit reached (inflight=64 limit=64) "
                            "client=payout-worker",
                            "rejecting request: inflight limit reached (inflight=64 limit=64) "
                            "client=refund-service",
                            "HikariPool-1 - Connection is not available, request timed out "
                            "after 1000ms (total=20, active=20, idle=0, waiting=41)",
                        ]
                    )
                    lvl = "warn" if msg.startswith("rejecting") else "error"
                    L.add(a2, "ledger-api", "ledger", pn, "ledger-api", lvl, msg)
                    if a2 > now - timedelta(minutes=8):
                        lines.append(
                            f"{a2.strftime('%Y-%m-%d %H:%M:%S,%f')[:-3]} {lvl.upper():5} "
                            f"[http-nio-8080-exec-{rng.randint(1, 64)}] "
                            f"c.c.ledger.web.InflightLimiter - {msg}"
                        )
            elif rng.random() < 0.1:
                L.add(
                    at,
                    "ledger-api",
                    "ledger",
                    pn,
                    "ledger-api",
                    "info",
                    "balance snapshot compacted for 1 partition(s) in 84ms",
                )
            t += 60
        sc.pod_log("ledger", pn, "ledger-api", lines)
    for p in ra.pods:
        pn = p["metadata"]["name"]
        t = r1
        while t < ts[-1]:
            if rng.random() < 0.6:
                at = ts_dt(t) + timedelta(seconds=rng.randint(0, 59))
                L.add(
                    at,
                    "refund-service",
                    "payments",
                    pn,
                    "refund-service",
                    "error",
                    f"refund rf_{rng.randint(10**6, 10**7)} failed: ledger-api returned 503 "
                    "after 3 attempts",
                )
            t += 60
    return sc
