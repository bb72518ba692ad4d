# ruff: noqa: E501  (log lines and messages are kept whole, as the systems print them)
"""Shape 5: a NetworkPolicy applied in the data namespace at 08:58 admits the billing and
web namespaces to pg-main but not analytics; report-builder's connections time out."""

from __future__ import annotations

from datetime import datetime, timedelta

from . import _k8s as k
from ._common import NODES, app, chatter, nodes
from ._out import Scenario, accumulate, grid
from ._workloads import statefulset

NOW = datetime(2026, 7, 14, 9, 45, 0)
APPLIED = datetime(2026, 7, 14, 8, 58, 31)


def netpol(name: str, ns: str, created: datetime, spec: dict) -> dict:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": k.uid("np" + ns + name),
            "generation": 1,
            "creationTimestamp": k.stamp(created),
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"},
        },
        "spec": spec,
    }


def build() -> Scenario:
    sc = Scenario(
        id="analytics-reports-timing-out",
        title="Scheduled reports timing out",
        now=NOW,
        seed=505,
        report="morning reports didn't go out, report-builder is stuck 'waiting for database'. "
        "is pg-main down? billing seems ok though, not sure",
        truth={
            "category": "network",
            "culprit": {"kind": "NetworkPolicy", "namespace": "data", "name": "pg-main-ingress"},
            "evidence": ["i/o timeout", "pg-main-ingress", "team: billing"],
            "fix": "Admit the analytics namespace in pg-main-ingress (add it to the allowed "
            "namespaceSelector) or label the namespace accordingly.",
        },
    )
    nodes(sc)
    sc.add(
        k.namespace("data", NOW - timedelta(days=600), {"team": "platform"}),
        k.namespace("billing", NOW - timedelta(days=600), {"team": "billing"}),
        k.namespace("web", NOW - timedelta(days=600), {"team": "web"}),
        k.namespace("analytics", NOW - timedelta(days=200), {"team": "data-science"}),
    )
    labels = {"app": "pg-main", "role": "primary"}
    tmpl = k.template(
        labels,
        [
            k.container(
                "postgres",
                "postgres:16.3",
                port=5432,
                port_name="postgres",
                resources=k.res("2", "8Gi", mem_lim="8Gi"),
            )
        ],
    )
    sts, revision = statefulset(
        "pg-main",
        "data",
        labels,
        tmpl,
        replicas=1,
        created=NOW - timedelta(days=600),
        service_name="pg-main",
    )
    sc.add(sts)
    started = NOW - timedelta(days=3, hours=7)
    sc.add(
        k.pod(
            "pg-main-0",
            "data",
            tmpl,
            owner=("StatefulSet", "pg-main"),
            created=started,
            node=NODES[2],
            ip="10.0.3.140",
            qos="Guaranteed",
            statuses=[k.running("postgres", started + timedelta(seconds=5), image="postgres:16.3")],
            extra_labels={
                "controller-revision-hash": revision,
                "statefulset.kubernetes.io/pod-name": "pg-main-0",
            },
        )
    )
    svc = k.service(
        "pg-main",
        "data",
        labels,
        [("postgres", 5432, 5432)],
        cluster_ip="172.20.14.22",
        created=NOW - timedelta(days=600),
    )
    sc.add(svc)
    pods_all = [o for o in sc.objects if o["kind"] == "Pod"]
    sc.add(
        k.endpoints(
            "pg-main", "data", pods_all, [("postgres", 5432)], created=NOW - timedelta(days=600)
        )
    )
    peers = [
        {"namespaceSelector": {"matchLabels": {"team": "billing"}}},
        {"namespaceSelector": {"matchLabels": {"team": "web"}}},
        {"podSelector": {"matchLabels": {"app": "pg-backup"}}},
    ]
    sc.add(
        netpol(
            "pg-main-ingress",
            "data",
            APPLIED,
            {
                "podSelector": {"matchLabels": {"app": "pg-main"}},
                "policyTypes": ["Ingress"],
                "ingress": [
                    {"from": peers, "ports": [{"protocol": "TCP", "port": 5432}]},
                    {
                        "from": [
                            {
                                "namespaceSelector": {
                                    "matchLabels": {"kubernetes.io/metadata.name": "monitoring"}
                                }
                            }
                        ],
                        "ports": [{"protocol": "TCP", "port": 9187}],
                    },
                ],
            },
        )
    )
    sc.add(
        netpol(
            "allow-dns-egress",
            "analytics",
            NOW - timedelta(days=150),
            {
                "podSelector": {},
                "policyTypes": ["Egress"],
                "egress": [
                    {
                        "to": [
                            {
                                "namespaceSelector": {
                                    "matchLabels": {"kubernetes.io/metadata.name": "kube-system"}
                                }
                            }
                        ],
                        "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
                    },
                    {"to": [{"ipBlock": {"cidr": "0.0.0.0/0"}}]},
                ],
            },
        )
    )
    sc.add(
        netpol(
            "default-deny-ingress",
            "web",
            NOW - timedelta(days=300),
            {"podSelector": {}, "policyTypes": ["Ingress"]},
        )
    )
    sc.add(
        netpol(
            "allow-from-ingress",
            "web",
            NOW - timedelta(days=300),
            {
                "podSelector": {"matchLabels": {"app": "portal"}},
                "policyTypes": ["Ingress"],
                "ingress": [
                    {
                        "from": [
                            {
                                "namespaceSelector": {
                                    "matchLabels": {"kubernetes.io/metadata.name": "ingress-nginx"}
                                }
                            }
                        ]
                    }
                ],
            },
        )
    )
    rb, _ = app(
        sc,
        "report-builder",
        "analytics",
        "registry.internal/analytics/report-builder:1.12.0",
        replicas=2,
    )
    bill, _ = app(
        sc, "billing-api", "billing", "registry.internal/billing/billing-api:6.0.2", replicas=3
    )
    portal, _ = app(sc, "portal", "web", "registry.internal/web/portal:2.2.9", replicas=2)
    nb, _ = app(sc, "notebook-hub", "analytics", "jupyterhub/k8s-hub:3.3.7", replicas=1)
    # report-builder -------------------------------------------------------------------------------
    for moment in sc.every(NOW - timedelta(hours=4), APPLIED, 40):
        sc.doc(
            moment,
            "report-builder",
            "analytics",
            sc.rng.choice(rb),
            "info",
            f"query ok rows={sc.rng.randint(200, 90000)} took={sc.rng.randint(40, 2400)}ms report=daily_revenue",
        )
    for moment in sc.every(APPLIED + timedelta(seconds=20), NOW, 12):
        pod = sc.rng.choice(rb)
        sc.doc(
            moment,
            "report-builder",
            "analytics",
            pod,
            "error",
            "failed to connect to `host=pg-main.data.svc user=reports database=warehouse`: dial error "
            "(dial tcp 172.20.14.22:5432: i/o timeout)",
            error__type="ConnectError",
        )
        if sc.rng.random() < 0.4:
            sc.doc(
                moment + timedelta(milliseconds=3),
                "report-builder",
                "analytics",
                pod,
                "warn",
                f"waiting for database, retry in 10s (attempt {sc.rng.randint(2, 40)})",
            )
    sc.log_file(
        "analytics",
        rb[0],
        "report-builder",
        [
            f"{k.stamp(APPLIED + timedelta(seconds=40 * i))} ERROR failed to connect to `host=pg-main.data.svc "
            "user=reports database=warehouse`: dial error (dial tcp 172.20.14.22:5432: i/o timeout)"
            for i in range(30)
        ],
    )
    for moment in sc.every(NOW - timedelta(hours=4), NOW, 2):
        sc.doc(
            moment,
            "billing-api",
            "billing",
            sc.rng.choice(bill),
            "info",
            f"POST /v1/invoices 201 db={sc.rng.randint(2, 18)}ms",
            http__response__status_code=201,
        )
    chatter(
        sc,
        "pg-main",
        "data",
        ["pg-main-0"],
        NOW - timedelta(hours=4),
        [
            "LOG:  checkpoint complete: wrote 2210 buffers (13.5%)",
            "LOG:  connection authorized: user=billing database=billing",
        ],
        gap=90,
    )
    chatter(
        sc,
        "portal",
        "web",
        portal,
        NOW - timedelta(hours=4),
        ["GET /dashboard 200", "GET /api/me 200"],
        gap=8,
    )
    chatter(
        sc,
        "notebook-hub",
        "analytics",
        nb,
        NOW - timedelta(hours=6),
        ["[W] culling idle server for user=mkovacs (inactive 3h)"],
        gap=1200,
        level="warn",
    )
    sc.add(
        k.event(
            "analytics",
            "Pod",
            nb[0],
            "Unhealthy",
            'Readiness probe failed: Get "http://10.0.1.93:8080/healthz": context deadline exceeded',
            first=NOW - timedelta(minutes=59),
            last=NOW - timedelta(minutes=58),
            count=2,
            type="Warning",
            host=NODES[0],
            field_path="spec.containers{notebook-hub}",
        )
    )
    times = grid(NOW - timedelta(hours=3), NOW)
    sc.gauge(
        "pg_up",
        "Whether the last scrape of postgres was able to connect.",
        {"namespace": "data", "pod": "pg-main-0", "service": "pg-main"},
        [(t, 1.0) for t in times],
    )
    sc.gauge(
        "pg_stat_activity_count",
        "number of connections in this state",
        {"namespace": "data", "pod": "pg-main-0", "datname": "warehouse", "state": "active"},
        [(t, 6.0 if t < APPLIED.timestamp() else 0.0) for t in times],
    )
    sc.gauge(
        "pg_stat_activity_count",
        "number of connections in this state",
        {"namespace": "data", "pod": "pg-main-0", "datname": "billing", "state": "active"},
        [(t, float(sc.rng.randint(8, 14))) for t in times],
    )
    for pod in bill:
        sc.counter(
            "http_requests_total",
            "HTTP requests served.",
            {"namespace": "billing", "pod": pod, "service": "billing-api", "code": "201"},
            accumulate(times, lambda t: 0.17, 4000),
        )
    return sc
