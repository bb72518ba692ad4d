"""Tallis Energy: invoicing's pool still points at the old primary after an RDS failover."""

from __future__ import annotations

from datetime import timedelta

from .common import (
    Metrics,
    ago,
    configmap,
    container,
    deployment,
    ecs,
    endpoints,
    event,
    iso,
    namespace,
    parse,
    replicaset,
    rng,
    service,
    write_scenario,
)
from .helpers import nodes_for, pods_for


def readonly_primary() -> None:
    """Tallis Energy: invoicing's pool still points at the old primary after an RDS failover."""
    now = parse("2026-11-25T21:30:00Z")
    ns = "billing"
    r = rng("pg")
    fo = ago(now, minutes=41)
    nodes = nodes_for(now, "ip-172-31-9", 3)
    inv_c = [
        container(
            "invoice-service",
            "1234.dkr.ecr.eu-west-1.amazonaws.com/tallis/invoice-service:6.12.0",
            port=8080,
            mem_req="768Mi",
            mem_lim="1Gi",
            env=[
                {
                    "name": "SPRING_DATASOURCE_URL",
                    "value": "jdbc:postgresql://billing-db.cluster-cq1x.eu-west-1.rds.amazonaws.com:5432/billing",
                },
                {"name": "HIKARI_MAX_LIFETIME_MS", "value": "0"},
            ],
        )
    ]
    mtr_c = [
        container(
            "meter-reads",
            "1234.dkr.ecr.eu-west-1.amazonaws.com/tallis/meter-reads:2.2.4",
            port=8080,
        )
    ]
    tariff_c = [
        container(
            "tariff-api", "1234.dkr.ecr.eu-west-1.amazonaws.com/tallis/tariff-api:1.30.1", port=8080
        )
    ]
    objs = [
        namespace(ns, ago(now, days=900)),
        *nodes,
        deployment(
            "invoice-service",
            ns,
            ago(now, days=600),
            inv_c,
            replicas=3,
            revision=144,
            ready=3,
            updated=3,
            available=3,
        ),
        replicaset("invoice-service", ns, "77d9c8b6f4", ago(now, days=8), inv_c, 144, 3, 3),
        deployment(
            "meter-reads",
            ns,
            ago(now, days=300),
            mtr_c,
            replicas=2,
            revision=30,
            ready=2,
            updated=2,
            available=2,
        ),
        deployment(
            "tariff-api",
            ns,
            ago(now, days=300),
            tariff_c,
            replicas=2,
            revision=51,
            ready=2,
            updated=2,
            available=2,
        ),
        configmap(
            "billing-db",
            ns,
            ago(now, days=600),
            {
                "writer_endpoint": "billing-db.cluster-cq1x.eu-west-1.rds.amazonaws.com",
                "reader_endpoint": "billing-db.cluster-ro-cq1x.eu-west-1.rds.amazonaws.com",
                "engine": "aurora-postgresql 15.4",
            },
        ),
        service("invoice-service", ns, ago(now, days=600), 80, 8080, cluster_ip="10.100.8.3"),
        service("tariff-api", ns, ago(now, days=300), 80, 8080, cluster_ip="10.100.8.41"),
    ]
    pods_ = pods_for(
        objs,
        now,
        r,
        ns,
        nodes,
        [
            ("invoice-service", "77d9c8b6f4", inv_c, 3),
            ("meter-reads", "6f5d4c8b7", mtr_c, 2),
            ("tariff-api", "59c7b8d6f", tariff_c, 2),
        ],
    )
    objs.append(
        event(
            ns,
            "Pod",
            pods_["tariff-api"][0],
            "Unhealthy",
            "Readiness probe failed: HTTP probe failed with statuscode: 500",
            ago(now, minutes=39),
            ago(now, minutes=39),
            2,
        )
    )
    objs.append(
        endpoints(
            "invoice-service", ns, ago(now, days=600), ["10.0.31.4", "10.0.32.18", "10.0.33.27"]
        )
    )
    logs, pod_logs = [], {}
    for name in pods_["invoice-service"]:
        lines = []
        t = ago(now, hours=1, minutes=20)
        while t < now:
            tid = f"{r.getrandbits(48):012x}"
            if t < fo or r.random() < 0.5:
                m = f"GET /api/invoices/{r.randint(10**5, 10**6)} 200 {r.randint(8, 40)}ms"
                lines.append(
                    f"{iso(t)}  INFO 1 --- [nio-8080-exec-{r.randint(1, 20)}] "
                    f"c.t.b.web.InvoiceController : {m}"
                )
            else:
                m = (
                    "SQL Error: 0, SQLState: 25006 - ERROR: cannot execute INSERT in a read-only "
                    "transaction"
                )
                lines.append(
                    f"{iso(t)}  WARN 1 --- [nio-8080-exec-{r.randint(1, 20)}] "
                    f"o.h.engine.jdbc.spi.SqlExceptionHelper : {m}"
                )
                logs.append(
                    ecs(
                        t,
                        m,
                        "warn",
                        "invoice-service",
                        ns,
                        name,
                        "invoice-service",
                        **{"trace.id": tid},
                    )
                )
                m2 = (
                    "POST /api/invoices/issue 500 Internal Server Error: could not execute "
                    "statement; "
                    "org.postgresql.util.PSQLException: ERROR: cannot execute INSERT in a "
                    "read-only transaction"
                )
                lines.append(
                    f"{iso(t)} ERROR 1 --- [nio-8080-exec-{r.randint(1, 20)}] "
                    f"c.t.b.web.ApiErrorHandler : {m2}"
                )
                logs.append(
                    ecs(
                        t,
                        m2,
                        "error",
                        "invoice-service",
                        ns,
                        name,
                        "invoice-service",
                        **{"http.response.status_code": 500, "trace.id": tid},
                    )
                )
            if abs((t - fo).total_seconds()) < 10:
                m = (
                    "HikariPool-1 - Connection org.postgresql.jdbc.PgConnection@3f2a1c marked as "
                    "broken because of "
                    "SQLSTATE(08006), ErrorCode(0)"
                )
                lines.append(
                    f"{iso(t)}  WARN 1 --- [nio-8080-exec-3] com.zaxxer.hikari.pool.PoolBase : {m}"
                )
                logs.append(ecs(t, m, "warn", "invoice-service", ns, name, "invoice-service"))
            t += timedelta(seconds=20)
        pod_logs[f"{ns}/{name}/invoice-service.log"] = "\n".join(lines)
    for name in pods_["meter-reads"]:
        lines = []
        t = ago(now, hours=1, minutes=20)
        while t < now:
            if abs((t - fo).total_seconds()) < 15:
                m = (
                    "db: connection lost (terminating connection due to administrator command); "
                    "reconnecting to writer endpoint"
                )
                lines.append(f'time={iso(t)} level=warn msg="{m}"')
                logs.append(ecs(t, m, "warn", "meter-reads", ns, name, "meter-reads"))
                m = "db: reconnected, session read_only=off, in_recovery=false"
                lines.append(f'time={iso(t + timedelta(seconds=9))} level=info msg="{m}"')
                logs.append(
                    ecs(t + timedelta(seconds=9), m, "info", "meter-reads", ns, name, "meter-reads")
                )
            m = f"stored batch reads={r.randint(2000, 6000)} lag_s={r.randint(1, 5)}"
            lines.append(f'time={iso(t)} level=info msg="{m}"')
            if r.random() < 0.2:
                logs.append(ecs(t, m, "info", "meter-reads", ns, name, "meter-reads"))
            t += timedelta(seconds=30)
        pod_logs[f"{ns}/{name}/meter-reads.log"] = "\n".join(lines)
    m = Metrics()
    t = ago(now, hours=1, minutes=20)
    c = {"g2": 0.0, "p2": 0.0, "p5": 0.0}
    while t <= now:
        bad = t >= fo
        c["g2"] += 3000 + r.randint(0, 200)
        c["p2"] += 2 if bad else 400
        c["p5"] += 380 if bad else 0
        for code, key, method in (
            ("200", "g2", "GET"),
            ("200", "p2", "POST"),
            ("500", "p5", "POST"),
        ):
            m.add(
                "http_server_requests_total",
                "counter",
                "Requests handled.",
                {
                    "namespace": ns,
                    "application": "invoice-service",
                    "method": method,
                    "status": code,
                },
                t,
                c[key],
            )
        m.add(
            "hikaricp_connections_active",
            "gauge",
            "Active pool connections.",
            {"namespace": ns, "application": "invoice-service", "pool": "HikariPool-1"},
            t,
            r.randint(3, 9),
        )
        m.add(
            "hikaricp_connections",
            "gauge",
            "Pool connections.",
            {"namespace": ns, "application": "invoice-service", "pool": "HikariPool-1"},
            t,
            20,
        )
        t += timedelta(minutes=1)
    write_scenario(
        "invoices-not-issuing",
        {
            "id": "invoices-not-issuing",
            "title": "Invoices fail to issue, viewing works",
            "now": iso(now),
            "report": "customer care says invoices can be viewed but 'issue invoice' errors out "
            "for everyone. "
            "nothing deployed today afaik. the tariff-api alert fired too around 20:50",
            "truth": {
                "category": "dependency_failure",
                "culprit": {"kind": "Deployment", "namespace": ns, "name": "invoice-service"},
                "evidence": ["cannot execute INSERT in a read-only transaction", "SQLState: 25006"],
                "fix": "The Aurora cluster failed over; recycle invoice-service's connection pool "
                "(restart the pods) "
                "and set a max lifetime / validate the writer on checkout so it follows the writer "
                "endpoint",
            },
        },
        objs,
        pod_logs,
        logs,
        m,
    )
