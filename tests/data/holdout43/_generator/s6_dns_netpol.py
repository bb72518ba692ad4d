# ruff: noqa: E501 - log lines, event messages and object literals are kept verbatim on one line
"""Tessaly Health: kube-system holds an ingress NetworkPolicy on CoreDNS that admits DNS only
from a list of namespaces. claims-v2, created yesterday for the claims move, is not on the
list: its pods resolve no name at all. The namespace's own default-deny is a red herring."""

from __future__ import annotations

import random
from datetime import timedelta as td

from ._kit import (
    Story,
    container,
    counter,
    deployment,
    endpoints,
    event,
    http_probe,
    meta,
    namespace,
    parse,
    pod,
    pod_template,
    replicaset,
    service,
    ts,
    uid,
)

ALLOWED = [
    "kube-system",
    "default",
    "claims",
    "patients",
    "billing",
    "scheduling",
    "monitoring",
    "ingress-nginx",
]


def build() -> Story:
    now = parse("2026-12-01T09:45:00Z")
    born = parse("2026-11-30T13:10:00Z")
    moved = parse("2026-12-01T08:58:00Z")
    old = parse("2024-04-08T12:00:00Z")
    s = Story(
        id="claims-intake-500s-new-namespace",
        title="claims-intake 500s after the namespace move",
        now=now,
        report=(
            "since we cut claims-intake over to the claims-v2 namespace this morning every claim "
            "submission returns 500. DB team says claims-db is up and idle. the old deployment in "
            "`claims` was fine with the same image. help?"
        ),
        truth={
            "category": "network",
            "culprit": {
                "kind": "NetworkPolicy",
                "namespace": "kube-system",
                "name": "coredns-ingress",
            },
            "evidence": ["getaddrinfo EAI_AGAIN", "coredns-ingress", "kubernetes.io/metadata.name"],
            "fix": "Add claims-v2 to the namespaces that kube-system/coredns-ingress admits on port 53",
        },
    )
    for ns in ALLOWED:
        s.add(namespace(ns, old))
    s.add(namespace("claims-v2", born, {"team": "claims", "tessaly.io/data-class": "phi"}))
    s.add(
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": meta(
                "coredns-ingress",
                "kube-system",
                parse("2025-07-14T10:30:00Z"),
                {"app.kubernetes.io/managed-by": "platform-policies"},
                annotations={
                    "tessaly.io/owner": "platform-security",
                    "tessaly.io/ticket": "SEC-2291 restrict cluster DNS to onboarded namespaces",
                },
                generation=7,
            ),
            "spec": {
                "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
                "policyTypes": ["Ingress"],
                "ingress": [
                    {
                        "from": [
                            {
                                "namespaceSelector": {
                                    "matchExpressions": [
                                        {
                                            "key": "kubernetes.io/metadata.name",
                                            "operator": "In",
                                            "values": ALLOWED,
                                        }
                                    ]
                                }
                            }
                        ],
                        "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
                    },
                    {
                        "from": [
                            {
                                "namespaceSelector": {
                                    "matchLabels": {"kubernetes.io/metadata.name": "monitoring"}
                                }
                            }
                        ],
                        "ports": [{"protocol": "TCP", "port": 9153}],
                    },
                ],
            },
        }
    )
    s.add(
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": meta("default-deny-ingress", "claims-v2", born + td(minutes=2)),
            "spec": {"podSelector": {}, "policyTypes": ["Ingress"]},
        },
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": meta("allow-ingress-nginx-to-intake", "claims-v2", born + td(minutes=2)),
            "spec": {
                "podSelector": {"matchLabels": {"app": "claims-intake"}},
                "policyTypes": ["Ingress"],
                "ingress": [
                    {
                        "from": [
                            {
                                "namespaceSelector": {
                                    "matchLabels": {"kubernetes.io/metadata.name": "ingress-nginx"}
                                }
                            }
                        ],
                        "ports": [{"protocol": "TCP", "port": 3000}],
                    }
                ],
            },
        },
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": meta("allow-intake-to-db", "claims-v2", born + td(minutes=2)),
            "spec": {
                "podSelector": {"matchLabels": {"app": "claims-db"}},
                "policyTypes": ["Ingress"],
                "ingress": [
                    {
                        "from": [{"podSelector": {"matchLabels": {"app": "claims-intake"}}}],
                        "ports": [{"protocol": "TCP", "port": 5432}],
                    }
                ],
            },
        },
    )
    nodes = [
        "ip-172-22-14-201.ec2.internal",
        "ip-172-22-33-17.ec2.internal",
        "ip-172-22-48-96.ec2.internal",
    ]
    # CoreDNS
    dns_tpl = pod_template(
        {"k8s-app": "kube-dns", "app": "coredns"},
        [
            container(
                "coredns",
                "602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/coredns:v1.11.3-eksbuild.1",
                cpu_req="100m",
                mem_req="70Mi",
                mem_lim="170Mi",
                args=["-conf", "/etc/coredns/Corefile"],
                readiness=http_probe("/ready", 8181),
                liveness=http_probe("/health", 8080, period=10, timeout=5, delay=60),
            )
        ],
        priorityClassName="system-cluster-critical",
    )
    dns = deployment("coredns", "kube-system", old, dns_tpl, 2, 4, labels={"k8s-app": "kube-dns"})
    dns["spec"]["selector"]["matchLabels"] = {"k8s-app": "kube-dns"}
    s.add(dns, replicaset(dns, "5b8f9d7c6", now - td(days=33), 4, dns_tpl, 2))
    dns_pods = [
        ("coredns-5b8f9d7c6-9jq2w", nodes[0], "172.22.14.40"),
        ("coredns-5b8f9d7c6-tx4mb", nodes[2], "172.22.48.12"),
    ]
    for name, n, ip in dns_pods:
        s.add(
            pod(
                name,
                "kube-system",
                now - td(days=33),
                dns_tpl,
                n,
                ip,
                "ReplicaSet",
                "coredns-5b8f9d7c6",
            )
        )
    kd = service(
        "kube-dns",
        "kube-system",
        old,
        {"k8s-app": "kube-dns"},
        53,
        53,
        "10.100.0.10",
        port_name="dns",
        protocol="UDP",
    )
    kd["spec"]["ports"].append({"name": "dns-tcp", "port": 53, "targetPort": 53, "protocol": "TCP"})
    s.add(
        kd,
        endpoints(
            "kube-dns",
            "kube-system",
            now - td(days=33),
            [(ip, name, n) for name, n, ip in dns_pods],
            [],
            53,
            port_name="dns",
            protocol="UDP",
        ),
    )

    def intake_tpl(ns: str) -> dict:
        return pod_template(
            {"app": "claims-intake"},
            [
                container(
                    "claims-intake",
                    "tessaly.jfrog.io/claims/claims-intake:3.8.1",
                    cpu_req="250m",
                    mem_req="384Mi",
                    mem_lim="768Mi",
                    port=3000,
                    readiness=http_probe("/healthz", 3000, period=10),
                    liveness=http_probe("/healthz", 3000, period=20),
                    env=[
                        {"name": "PGHOST", "value": f"claims-db.{ns}.svc.cluster.local"},
                        {
                            "name": "PAYER_GATEWAY_URL",
                            "value": "https://payer-gw.tessaly.internal/v1",
                        },
                        {"name": "NODE_ENV", "value": "production"},
                    ],
                )
            ],
        )

    new_t, old_t = intake_tpl("claims-v2"), intake_tpl("claims")
    d2 = deployment("claims-intake", "claims-v2", born + td(hours=1), new_t, 3, 2)
    s.add(d2, replicaset(d2, "74c9d8b6f5", moved - td(minutes=5), 2, new_t, 3))
    new_pods = [
        (f"claims-intake-74c9d8b6f5-{x}", nodes[i], f"172.22.{(14, 33, 48)[i]}.{150 + i}")
        for i, x in enumerate(["6zq8k", "cw2nd", "r9tlm"])
    ]
    for name, n, ip in new_pods:
        s.add(
            pod(
                name,
                "claims-v2",
                moved - td(minutes=5),
                new_t,
                n,
                ip,
                "ReplicaSet",
                "claims-intake-74c9d8b6f5",
            )
        )
    d1 = deployment("claims-intake", "claims", old, old_t, 0, 31, ready=0, available=0)
    s.add(d1, replicaset(d1, "9f6b7c8d4", now - td(days=16), 31, old_t, 0, ready=0))
    s.add(
        event(
            "claims",
            "Deployment",
            "claims-intake",
            "ScalingReplicaSet",
            "Scaled down replica set claims-intake-9f6b7c8d4 to 0 from 3",
            moved,
            moved,
            component="deployment-controller",
        )
    )
    s.add(
        service(
            "claims-intake",
            "claims-v2",
            born + td(hours=1),
            {"app": "claims-intake"},
            80,
            3000,
            "10.100.82.33",
        ),
        endpoints(
            "claims-intake",
            "claims-v2",
            moved,
            [(ip, name, n) for name, n, ip in new_pods],
            [],
            3000,
        ),
    )
    db_tpl = pod_template(
        {"app": "claims-db"},
        [
            container(
                "postgres", "postgres:16.4", cpu_req="1", mem_req="2Gi", mem_lim="4Gi", port=5432
            )
        ],
    )
    s.add(
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": meta(
                "claims-db", "claims-v2", born + td(minutes=30), {"app": "claims-db"}, generation=1
            ),
            "spec": {
                "replicas": 1,
                "serviceName": "claims-db",
                "selector": {"matchLabels": {"app": "claims-db"}},
                "template": db_tpl,
            },
            "status": {
                "replicas": 1,
                "readyReplicas": 1,
                "currentReplicas": 1,
                "updatedReplicas": 1,
                "availableReplicas": 1,
                "observedGeneration": 1,
            },
        }
    )
    s.add(
        pod(
            "claims-db-0",
            "claims-v2",
            born + td(minutes=30),
            db_tpl,
            nodes[1],
            "172.22.33.90",
            "StatefulSet",
            "claims-db",
        )
    )
    s.add(
        service(
            "claims-db",
            "claims-v2",
            born + td(minutes=30),
            {"app": "claims-db"},
            5432,
            5432,
            "10.100.91.4",
            port_name="postgres",
        ),
        endpoints(
            "claims-db",
            "claims-v2",
            born + td(minutes=31),
            [("172.22.33.90", "claims-db-0", nodes[1])],
            [],
            5432,
            port_name="postgres",
        ),
    )
    for name, n, _ip in new_pods:
        s.add(
            event(
                "claims-v2",
                "Pod",
                name,
                "Started",
                "Started container claims-intake",
                moved - td(minutes=5),
                moved - td(minutes=5),
                host=n,
                field_path="spec.containers{claims-intake}",
            )
        )
    s.add(
        event(
            "kube-system",
            "Pod",
            "coredns-5b8f9d7c6-tx4mb",
            "Unhealthy",
            "Readiness probe failed: HTTP probe failed with statuscode: 503",
            now - td(minutes=52),
            now - td(minutes=52),
            type_="Warning",
            host=nodes[2],
            field_path="spec.containers{coredns}",
        )
    )

    # ---- logs
    rng = random.Random(6)
    t = now - td(hours=3)
    while t < now:
        if t < moved:
            s.doc(
                t,
                "info",
                "claims-intake",
                "claims",
                f"claims-intake-9f6b7c8d4-{rng.choice(['2kd7x', 'h8qpz', 'v5mwc'])}",
                "claims-intake",
                f"claim accepted id=CLM-{rng.randint(10**6, 10**7)} payer={rng.choice(['aetna', 'bcbs', 'uhc'])}",
                http__response__status_code=201,
            )
        else:
            name, n, ip = rng.choice(new_pods)
            k = rng.random()
            if k < 0.55:
                s.doc(
                    t,
                    "error",
                    "claims-intake",
                    "claims-v2",
                    name,
                    "claims-intake",
                    "Error: getaddrinfo EAI_AGAIN claims-db.claims-v2.svc.cluster.local",
                    error__type="Error",
                    error__code="EAI_AGAIN",
                )
                s.doc(
                    t + td(milliseconds=4),
                    "error",
                    "claims-intake",
                    "claims-v2",
                    name,
                    "claims-intake",
                    "POST /v2/claims 500 - database unavailable",
                    http__response__status_code=500,
                )
            elif k < 0.8:
                s.doc(
                    t,
                    "error",
                    "claims-intake",
                    "claims-v2",
                    name,
                    "claims-intake",
                    "payer eligibility check failed: queryA ETIMEOUT payer-gw.tessaly.internal",
                    error__code="ETIMEOUT",
                )
            else:
                s.doc(
                    t,
                    "info",
                    "claims-intake",
                    "claims-v2",
                    name,
                    "claims-intake",
                    "GET /healthz 200 1ms",
                    http__response__status_code=200,
                )
        t += td(seconds=rng.uniform(3, 14))
    t = now - td(hours=3)
    src = ["172.22.14.77", "172.22.33.120", "172.22.48.31", "172.22.14.150"]
    while t < now:
        name, n, ip = rng.choice(dns_pods)
        q = rng.choice(
            [
                ("A", "patients-api.patients.svc.cluster.local."),
                ("AAAA", "billing-db.billing.svc.cluster.local."),
                ("A", "payer-gw.tessaly.internal."),
                ("A", "sts.us-east-1.amazonaws.com."),
            ]
        )
        s.doc(
            t,
            "info",
            "coredns",
            "kube-system",
            name,
            "coredns",
            f'[INFO] {rng.choice(src[:3])}:{rng.randint(30000, 60000)} - {rng.randint(1000, 65000)} "{q[0]} IN {q[1]} udp 64 false 1232" NOERROR qr,aa,rd 128 0.000{rng.randint(100, 999)}s',
        )
        t += td(seconds=rng.uniform(10, 60))
    lines = [
        "> claims-intake@3.8.1 start",
        "> node dist/server.js",
        f'{{"level":30,"time":{int((moved - td(minutes=5)).timestamp() * 1000)},"pid":1,"msg":"claims-intake listening on :3000"}}',
    ]
    t = moved
    while t < now:
        lines.append(
            f'{{"level":50,"time":{int(t.timestamp() * 1000)},"pid":1,"err":{{"type":"Error","message":"getaddrinfo EAI_AGAIN claims-db.claims-v2.svc.cluster.local","code":"EAI_AGAIN","syscall":"getaddrinfo","hostname":"claims-db.claims-v2.svc.cluster.local"}},"msg":"pg pool: could not connect"}}'
        )
        lines.append(
            f'{{"level":40,"time":{int(t.timestamp() * 1000) + 6},"pid":1,"req":{{"method":"POST","url":"/v2/claims"}},"res":{{"statusCode":500}},"responseTime":{rng.randint(5000, 5020)},"msg":"request errored"}}'
        )
        t += td(seconds=rng.randint(20, 70))
    s.pod_log("claims-v2", new_pods[0][0], "claims-intake", lines)
    s.pod_log(
        "claims-v2",
        "claims-db-0",
        "postgres",
        [
            f"{born + td(minutes=31):%Y-%m-%d %H:%M:%S}.221 UTC [1] LOG:  database system is ready to accept connections",
            f"{born + td(hours=6):%Y-%m-%d %H:%M:%S}.004 UTC [27] LOG:  checkpoint starting: time",
            f"{born + td(hours=6, minutes=1):%Y-%m-%d %H:%M:%S}.551 UTC [27] LOG:  checkpoint complete: wrote 3 buffers (0.0%)",
        ],
    )
    # ---- metrics: CoreDNS busy and healthy; intake's 5xx since the move
    start = now - td(days=1)
    for name, _n, _ip in dns_pods:
        s.metric(
            "coredns_dns_requests",
            "counter",
            "Counter of DNS requests made per zone, protocol and family.",
            {
                "namespace": "kube-system",
                "pod": name,
                "server": "dns://:53",
                "zone": ".",
                "proto": "udp",
                "family": "1",
                "type": "A",
            },
            counter(start, now, 60, lambda t: 310 + 40 * rng.random(), base=9_800_000),
        )
        s.metric(
            "coredns_dns_responses",
            "counter",
            "Counter of response status codes.",
            {
                "namespace": "kube-system",
                "pod": name,
                "server": "dns://:53",
                "zone": ".",
                "rcode": "SERVFAIL",
            },
            counter(start, now, 60, lambda t: 0.02, base=120),
        )
    s.metric(
        "http_requests",
        "counter",
        "HTTP requests.",
        {"namespace": "claims-v2", "service": "claims-intake", "code": "500"},
        counter(moved - td(minutes=5), now, 60, lambda t: 0.0 if t < moved else 1.8 + rng.random()),
    )
    _ = (ts, uid)
    return s
