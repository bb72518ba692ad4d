"""8. network: the platform team's default-deny egress policy in billing allowlists 10.74.0.0/20 for
PostgreSQL, but the RDS writer sits at 10.74.18.23; every connection from billing times out."""

import json
from datetime import timedelta

from ._kit import (
    Family,
    Scenario,
    T,
    configmap,
    container,
    cumulate,
    endpoints,
    event,
    hexid,
    http_probe,
    iso,
    iso_ms,
    meta,
    namespace,
    node,
    noise,
    pod_usage,
    restarts_metric,
    service,
    steps,
)

SID = "egress-allowlist-misses-db-cidr"

NOW = T("2026-11-26T13:50:00Z")
POLICY = T("2026-11-26T13:12:38Z")
DB_IP = "10.74.18.23"
DB_HOST = "billing-pg.cluster-c8x2k1aqzt7m.eu-west-1.rds.amazonaws.com"


def build():
    sc = Scenario(
        SID,
        "billing cannot reach its database, invoice-service unavailable",
        NOW,
        (
            "invoice-service in billing is down - all pods are not ready and billing-worker says "
            "it can't connect to\n"
            "postgres. RDS had its maintenance window this morning, I think the failover left "
            "billing-pg broken.\n"
            "should we fail over again / open a ticket with AWS?\n"
        ),
        {
            "category": "network",
            "culprit": {"kind": "NetworkPolicy", "namespace": "billing", "name": "baseline-egress"},
            "evidence": [
                "10.74.0.0/20",
                f"dial tcp {DB_IP}:5432: i/o timeout",
                "policyTypes",
                "pg_up",
            ],
            "fix": "Fix baseline-egress's PostgreSQL rule: the RDS subnets are 10.74.16.0/20 "
            "(writer 10.74.18.23), "
            "so allow 10.74.0.0/19 (or 10.74.16.0/20) on TCP 5432; RDS itself is healthy.",
        },
        seed=4508,
    )
    rng = sc.rng
    start = NOW - timedelta(hours=3)
    times = list(steps(start, NOW, 120))
    ncreated = T("2026-11-22T05:00:00Z")
    nodes = [
        ("ip-10-40-12-117.eu-west-1.compute.internal", "10.40.12.117", "eu-west-1a"),
        ("ip-10-40-13-76.eu-west-1.compute.internal", "10.40.13.76", "eu-west-1b"),
        ("ip-10-40-14-39.eu-west-1.compute.internal", "10.40.14.39", "eu-west-1c"),
    ]
    for i, (n, ip, z) in enumerate(nodes):
        sc.add(
            node(
                n,
                ncreated + timedelta(minutes=3 * i),
                NOW,
                ip=ip,
                cpu=8,
                mem_gi=32,
                instance_type="m6i.2xlarge",
                zone=z,
                pool="general-2026a",
            )
        )
    for ns in ("billing", "reporting", "kube-system", "monitoring"):
        sc.add(
            namespace(
                ns,
                T("2025-01-10T09:00:00Z"),
                {"quillmark.io/egress-wave": "1"} if ns == "billing" else None,
            )
        )
    N = {i: (nodes[i][0], nodes[i][1]) for i in range(3)}

    # ---------------------------------------------------------------- the policy
    sc.add(
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": meta(
                "baseline-egress",
                "billing",
                POLICY,
                {
                    "app.kubernetes.io/managed-by": "platform-policies",
                    "quillmark.io/policy-wave": "1",
                },
                {
                    "quillmark.io/change": "PLAT-812 default-deny egress, wave 1 (billing)",
                    "quillmark.io/owner": "platform-networking",
                },
                kind="NetworkPolicy",
            ),
            "spec": {
                "podSelector": {},
                "policyTypes": ["Egress"],
                "egress": [
                    {
                        "to": [
                            {
                                "namespaceSelector": {
                                    "matchLabels": {"kubernetes.io/metadata.name": "kube-system"}
                                },
                                "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
                            }
                        ],
                        "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
                    },
                    {"to": [{"podSelector": {}}]},
                    {
                        "to": [{"ipBlock": {"cidr": "10.74.0.0/20"}}],
                        "ports": [{"protocol": "TCP", "port": 5432}],
                    },
                    {
                        "to": [
                            {
                                "ipBlock": {
                                    "cidr": "0.0.0.0/0",
                                    "except": ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"],
                                }
                            }
                        ],
                        "ports": [{"protocol": "TCP", "port": 443}],
                    },
                ],
            },
        }
    )
    # an older, unrelated ingress policy in the same namespace
    sc.add(
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": meta(
                "allow-ingress-from-web", "billing", T("2025-06-02T10:00:00Z"), kind="NetworkPolicy"
            ),
            "spec": {
                "podSelector": {"matchLabels": {"app": "invoice-service"}},
                "policyTypes": ["Ingress"],
                "ingress": [
                    {
                        "from": [
                            {"podSelector": {"matchLabels": {"app": "billing-web"}}},
                            {
                                "namespaceSelector": {
                                    "matchLabels": {"kubernetes.io/metadata.name": "reporting"}
                                }
                            },
                        ],
                        "ports": [{"protocol": "TCP", "port": 8080}],
                    }
                ],
            },
        }
    )
    sc.add(
        configmap(
            "billing-db",
            "billing",
            created=T("2025-01-10T10:00:00Z"),
            data={
                "DB_HOST": DB_HOST,
                "DB_PORT": "5432",
                "DB_NAME": "billing",
                "DB_USER": "billing",
                "DB_CONNECT_TIMEOUT": "5s",
                "DB_POOL_MAX_CONNS": "20",
            },
        )
    )

    # ---------------------------------------------------------------- billing workloads
    def db_env():
        return [
            {"name": k, "valueFrom": {"configMapKeyRef": {"name": "billing-db", "key": k}}}
            for k in ("DB_HOST", "DB_PORT", "DB_NAME", "DB_USER")
        ]

    NOT_READY = POLICY + timedelta(seconds=31)
    is_c = [
        container(
            "invoice-service",
            "registry.quillmark.io/billing/invoice-service:6.3.1",
            cpu_req="500m",
            mem_req="512Mi",
            cpu_lim="2",
            mem_lim="1Gi",
            ports=[("http", 8080)],
            env=db_env(),
            readiness=http_probe("/readyz", 8080, period=10, timeout=3),
            liveness=http_probe("/healthz", 8080, period=20),
        )
    ]
    isf = Family(
        sc,
        "billing",
        "invoice-service",
        containers=is_c,
        replicas=3,
        placements=[
            (N[i][0], N[i][1], ip, T("2026-11-22T05:30:00Z") + timedelta(seconds=40 * i))
            for i, ip in enumerate(["10.40.12.70", "10.40.13.133", "10.40.14.58"])
        ],
        created=T("2025-01-10T10:00:00Z"),
        rs_created=T("2026-11-19T10:12:00Z"),
        revision=71,
        pod_overrides={
            i: {"ready": False, "ready_since": NOT_READY + timedelta(seconds=4 * i)}
            for i in range(3)
        },
    )
    isf.deploy["status"]["conditions"][0].update(
        {
            "status": "False",
            "reason": "MinimumReplicasUnavailable",
            "message": "Deployment does not have minimum availability.",
            "lastUpdateTime": iso(NOT_READY + timedelta(seconds=8)),
            "lastTransitionTime": iso(NOT_READY + timedelta(seconds=8)),
        }
    )
    for p in isf.pods:
        for c in p["status"]["containerStatuses"]:
            c["ready"] = False
    sc.add(
        service(
            "invoice-service",
            "billing",
            created=T("2025-01-10T10:00:00Z"),
            selector={"app": "invoice-service"},
            ports=[("http", 80, 8080)],
            cluster_ip="172.20.52.14",
        )
    )
    sc.add(
        endpoints(
            "invoice-service",
            "billing",
            created=T("2025-01-10T10:00:00Z"),
            not_ready=[
                (p["status"]["podIP"], p["spec"]["nodeName"], p["metadata"]["name"])
                for p in isf.pods
            ],
            ports=[("http", 8080)],
        )
    )
    bw = Family(
        sc,
        "billing",
        "billing-worker",
        containers=[
            container(
                "billing-worker",
                "registry.quillmark.io/billing/billing-worker:2.9.0",
                cpu_req="250m",
                mem_req="384Mi",
                cpu_lim="1",
                mem_lim="768Mi",
                env=[*db_env(), {"name": "STRIPE_API_BASE", "value": "https://api.stripe.com"}],
            )
        ],
        replicas=2,
        placements=[
            (N[1][0], N[1][1], "10.40.13.201", T("2026-11-22T05:31:00Z")),
            (N[2][0], N[2][1], "10.40.14.188", T("2026-11-22T05:31:30Z")),
        ],
        created=T("2025-01-10T10:00:00Z"),
        rs_created=T("2026-11-12T10:00:00Z"),
        revision=30,
        pod_overrides={
            0: {
                "statuses": {
                    "billing-worker": {
                        "restartCount": 1,
                        "state": {"running": {"startedAt": "2026-11-24T16:02:12Z"}},
                        "lastState": {
                            "terminated": {
                                "exitCode": 137,
                                "reason": "OOMKilled",
                                "startedAt": "2026-11-22T05:31:04Z",
                                "finishedAt": "2026-11-24T16:02:10Z",
                            }
                        },
                    }
                }
            }
        },
    )
    web_rs = T("2026-11-26T10:48:00Z")
    web = Family(
        sc,
        "billing",
        "billing-web",
        containers=[
            container(
                "billing-web",
                "registry.quillmark.io/billing/billing-web:2026.11.26",
                cpu_req="200m",
                mem_req="256Mi",
                cpu_lim="1",
                mem_lim="512Mi",
                ports=[("http", 3000)],
                readiness=http_probe("/healthz", 3000),
            )
        ],
        replicas=2,
        placements=[
            (N[0][0], N[0][1], "10.40.12.201", web_rs),
            (N[2][0], N[2][1], "10.40.14.202", web_rs + timedelta(seconds=30)),
        ],
        created=T("2025-01-10T10:00:00Z"),
        rs_created=web_rs,
        revision=95,
        old=[
            (
                94,
                {"billing-web": "registry.quillmark.io/billing/billing-web:2026.11.20"},
                T("2026-11-20T10:00:00Z"),
            )
        ],
    )
    # reporting uses the same database and has no egress policy yet
    rb = Family(
        sc,
        "reporting",
        "report-builder",
        containers=[
            container(
                "report-builder",
                "registry.quillmark.io/reporting/report-builder:1.17.2",
                cpu_req="500m",
                mem_req="1Gi",
                cpu_lim="2",
                mem_lim="2Gi",
                env=[("PGHOST", DB_HOST), ("PGDATABASE", "billing"), ("PGUSER", "reporting_ro")],
            )
        ],
        replicas=1,
        placements=[(N[0][0], N[0][1], "10.40.12.30", T("2026-11-22T05:33:00Z"))],
        created=T("2025-03-10T10:00:00Z"),
        rs_created=T("2026-11-05T10:00:00Z"),
        revision=12,
    )
    pe = Family(
        sc,
        "monitoring",
        "postgres-exporter-billing",
        containers=[
            container(
                "postgres-exporter",
                "quay.io/prometheuscommunity/postgres-exporter:v0.16.0",
                cpu_req="20m",
                mem_req="64Mi",
                ports=[("metrics", 9187)],
                env=[("DATA_SOURCE_URI", f"{DB_HOST}:5432/billing?sslmode=require")],
            )
        ],
        replicas=1,
        placements=[(N[1][0], N[1][1], "10.40.13.40", T("2026-11-22T05:34:00Z"))],
        created=T("2025-01-10T10:00:00Z"),
        rs_created=T("2026-09-01T10:00:00Z"),
        revision=3,
    )
    dns = Family(
        sc,
        "kube-system",
        "coredns",
        containers=[
            container(
                "coredns",
                "602401143452.dkr.ecr.eu-west-1.amazonaws.com/eks/coredns:v1.11.3-eksbuild.1",
                cpu_req="100m",
                mem_req="70Mi",
                mem_lim="170Mi",
                ports=[("dns", 53)],
            )
        ],
        replicas=2,
        placements=[
            (N[0][0], N[0][1], "10.40.12.5", T("2026-11-22T05:05:00Z")),
            (N[1][0], N[1][1], "10.40.13.5", T("2026-11-22T05:08:00Z")),
        ],
        created=T("2025-01-10T08:00:00Z"),
        rs_created=T("2026-08-12T08:00:00Z"),
        revision=5,
        labels={"k8s-app": "kube-dns"},
    )

    # ---------------------------------------------------------------- events
    for i, p in enumerate(isf.pods):
        sc.add(
            event(
                "billing",
                kind="Pod",
                name=p["metadata"]["name"],
                reason="Unhealthy",
                message="Readiness probe failed: HTTP probe failed with statuscode: 503",
                first=NOT_READY - timedelta(seconds=20) + timedelta(seconds=4 * i),
                last=NOW - timedelta(seconds=6 + 3 * i),
                count=221 + i,
                type_="Warning",
                host=p["spec"]["nodeName"],
                field_path="spec.containers{invoice-service}",
            )
        )

    # ---------------------------------------------------------------- logs
    def jl(p, t, level, msg, svc, **kw):
        sc.log(
            t,
            ns=p["metadata"]["namespace"],
            pod=p["metadata"]["name"],
            container=p["spec"]["containers"][0]["name"],
            service=svc,
            level=level,
            message=msg,
            **kw,
        )

    dial = (
        f"failed to connect to `user=billing database=billing`: {DB_IP}:5432 ({DB_HOST}): "
        f"dial error: dial tcp {DB_IP}:5432: i/o timeout"
    )
    is_lines = {p["metadata"]["name"]: [] for p in isf.pods}
    for t in steps(start, NOW, 30):
        for p in isf.pods:
            tt = t + timedelta(seconds=rng.uniform(0, 29))
            if tt < POLICY:
                if rng.random() < 0.45:
                    m = f"GET /v1/invoices/{rng.randint(100000, 999999)} 200 {rng.randint(4, 60)}ms"
                    jl(p, tt, "info", m, "invoice-service", http__response__status_code=200)
            else:
                m = f"readiness: database check failed: {dial}"
                jl(p, tt, "error", m, "invoice-service", error__type="*pgconn.ConnectError")
                is_lines[p["metadata"]["name"]].append(
                    json.dumps(
                        {
                            "level": "error",
                            "time": iso_ms(tt),
                            "msg": "readiness: database check failed",
                            "error": dial,
                        }
                    )
                )
        for p in bw.pods:
            tt = t + timedelta(seconds=rng.uniform(0, 29))
            if rng.random() < 0.5:
                continue
            if tt < POLICY:
                jl(
                    p,
                    tt,
                    "info",
                    f"charged invoice INV-{rng.randint(300000, 399999)} via stripe "
                    f"(pi_{hexid('pi', iso_ms(tt), n=14)})",
                    "billing-worker",
                )
            else:
                jl(
                    p,
                    tt,
                    "error",
                    f"job run-dunning failed: acquire connection: {dial}",
                    "billing-worker",
                    error__type="*pgconn.ConnectError",
                )
        for p in web.pods:
            tt = t + timedelta(seconds=rng.uniform(0, 29))
            if tt >= NOT_READY and rng.random() < 0.6:
                jl(
                    p,
                    tt,
                    "error",
                    "GET /invoices -> invoice-service: 503 Service Unavailable (upstream connect "
                    "error or disconnect/reset before headers. reset reason: connection failure)",
                    "billing-web",
                    http__response__status_code=503,
                )
    for t in steps(start, NOW, 300):
        jl(
            rb.pods[0],
            t + timedelta(seconds=20),
            "info",
            f"report daily_revenue refreshed from {DB_HOST} in {rng.uniform(1.2, 3.9):.1f}s "
            f"({rng.randint(4000, 9000)} rows)",
            "report-builder",
        )
    jl(
        bw.pods[1],
        POLICY + timedelta(minutes=4),
        "info",
        "stripe webhook sync ok: 14 events (api.stripe.com 200)",
        "billing-worker",
    )
    # the morning RDS maintenance was uneventful from the apps' point of view
    jl(
        bw.pods[0],
        T("2026-11-26T11:02:17Z"),
        "warn",
        "pgx pool: connection reset by peer, reconnecting (server closed the connection "
        "unexpectedly)",
        "billing-worker",
    )
    for pn, lines in is_lines.items():
        sc.pod_log(
            "billing",
            pn,
            "invoice-service",
            [
                json.dumps(
                    {
                        "level": "info",
                        "time": "2026-11-22T05:30:09.114Z",
                        "msg": "invoice-service 6.3.1 listening",
                        "addr": ":8080",
                    }
                ),
                *lines[-150:],
            ],
        )

    # ---------------------------------------------------------------- metrics
    sc.metrics.gauge(
        "pg_up",
        "Whether the last scrape of metrics from PostgreSQL was able to connect to the server (1 "
        "for yes, 0 for no).",
        {
            "namespace": "monitoring",
            "pod": pe.pods[0]["metadata"]["name"],
            "job": "postgres-exporter-billing",
            "server": f"{DB_HOST}:5432",
        },
        [(t, 1) for t in times],
    )
    sc.metrics.gauge(
        "pg_stat_database_numbackends",
        "Number of backends currently connected to this database.",
        {
            "namespace": "monitoring",
            "job": "postgres-exporter-billing",
            "datname": "billing",
            "server": f"{DB_HOST}:5432",
        },
        [(t, (rng.randint(44, 52) if t < POLICY else rng.randint(6, 9))) for t in times],
    )
    for p in isf.pods:
        base = {"namespace": "billing", "pod": p["metadata"]["name"], "job": "invoice-service"}
        sc.metrics.counter(
            "http_requests",
            "Total HTTP requests handled.",
            dict(base, handler="/v1/invoices", code="200"),
            cumulate(times, lambda t: noise(rng, 3.1) if t < POLICY else 0, start_value=1.21e6),
        )
        sc.metrics.gauge(
            "pgxpool_total_conns",
            "Total number of resources currently in the pool.",
            base,
            [(t, rng.randint(12, 16) if t < POLICY else 0) for t in times],
        )
        sc.metrics.gauge(
            "kube_pod_status_ready",
            "Describes whether the pod is ready to serve requests.",
            dict({"namespace": "billing", "pod": p["metadata"]["name"]}, condition="true"),
            [(t, 1 if t < NOT_READY else 0) for t in times],
        )
        pod_usage(
            sc,
            p,
            "invoice-service",
            times,
            lambda t: noise(rng, 0.3 if t < POLICY else 0.03),
            lambda t: noise(rng, 2.4e8, 0.03),
        )
        restarts_metric(sc, p, "invoice-service", times)
    restarts_metric(sc, bw.pods[0], "billing-worker", times, lambda t: 1)
    sc.metrics.counter(
        "coredns_dns_requests",
        "Counter of DNS requests made per zone, protocol and family.",
        {
            "namespace": "kube-system",
            "pod": dns.pods[0]["metadata"]["name"],
            "server": "dns://:53",
            "zone": ".",
            "proto": "udp",
            "family": "1",
            "type": "A",
        },
        cumulate(times, lambda t: noise(rng, 140.0), start_value=9.1e7),
    )
    return sc
