"""2. network: an ExternalName Service still points at a decommissioned host; its callers get
NXDOMAIN."""

from __future__ import annotations

from datetime import timedelta

from ._kit import (
    Cluster,
    Metrics,
    Scenario,
    add_nodes,
    configmap,
    container,
    endpoints,
    event,
    http_probe,
    iso,
    jitter,
    namespace,
    rng,
    service,
    terminated,
)

SID = "ledger-externalname-nxdomain"
NOW = "2026-11-19T14:25:00Z"
OLD_HOST = "ledgerdb01.dc-ams2.brightmoor.net"
NEW_HOST = "ledger-prod.cluster-c8xq2vbz1k3n.eu-west-1.rds.amazonaws.com"
CUT = 44  # minutes before now: the dc-ams2 zone records were removed


def build() -> Scenario:
    sc = Scenario(SID, NOW)
    ck = sc.clock
    cl = Cluster(sc, pod_net="10.42")
    for ns in ("billing", "customer", "kube-system"):
        sc.add(namespace(ns, ck.t(days=400)))
    add_nodes(
        cl,
        ck,
        "eu-west-1",
        [("8.11", "a", "4"), ("9.76", "b", "5"), ("10.140", "c", "6")],
        itype="m6a.2xlarge",
    )

    # ------------------------------------------------ kube-system/coredns (healthy; an old restart)
    dns_c = container(
        "coredns",
        "registry.k8s.io/coredns/coredns:v1.11.3",
        cpu_req="100m",
        mem_req="70Mi",
        mem_lim="170Mi",
        args=["-conf", "/etc/coredns/Corefile"],
        ports=[("dns", 53), ("metrics", 9153)],
        readiness=http_probe("/ready", 8181, delay=0, period=10),
        liveness=http_probe("/health", 8080, delay=60, period=10, timeout=5, failure=5),
        volume_mounts=[{"name": "config-volume", "mountPath": "/etc/coredns", "readOnly": True}],
    )
    dns_c["ports"] = [
        {"containerPort": 53, "name": "dns", "protocol": "UDP"},
        {"containerPort": 53, "name": "dns-tcp", "protocol": "TCP"},
        {"containerPort": 9153, "name": "metrics", "protocol": "TCP"},
    ]
    t_dns_restart = ck.ago(days=3, hours=7)
    dns = cl.deployment(
        "kube-system",
        "coredns",
        [dns_c],
        replicas=2,
        created=ck.t(days=400),
        rs_created=ck.t(days=5, hours=3),
        revision=6,
        hash_="5b8c7d9f44",
        labels={"k8s-app": "kube-dns"},
        sa="coredns",
        volumes=[
            {
                "name": "config-volume",
                "configMap": {
                    "name": "coredns",
                    "defaultMode": 420,
                    "items": [{"key": "Corefile", "path": "Corefile"}],
                },
            }
        ],
        pod_status=lambda i, n, nd: (
            {
                "containers": {
                    "coredns": {
                        "restarts": 1,
                        "running_since": iso(t_dns_restart),
                        "last_terminated": terminated(
                            "Error",
                            1,
                            ck.t(days=5, hours=3),
                            iso(t_dns_restart - timedelta(seconds=3)),
                            seed=n,
                        ),
                    }
                }
            }
            if i == 1
            else None
        ),
    )
    dns["deployment"]["metadata"]["labels"] = {
        "k8s-app": "kube-dns",
        "eks.amazonaws.com/component": "coredns",
    }
    sc.add(
        configmap(
            "kube-system",
            "coredns",
            ck.t(days=400),
            {
                "Corefile": (
                    ".:53 {\n    errors\n    log . {\n        class denial error\n    }\n    "
                    "health {\n        lameduck 5s\n    }\n"
                    "    ready\n    kubernetes cluster.local in-addr.arpa ip6.arpa {\n      pods "
                    "insecure\n"
                    "      fallthrough in-addr.arpa ip6.arpa\n    }\n    prometheus :9153\n    "
                    "forward . /etc/resolv.conf\n"
                    "    cache 30\n    loop\n    reload\n    loadbalance\n}\n"
                )
            },
            labels={"k8s-app": "kube-dns"},
        )
    )
    kdns = service(
        "kube-system",
        "kube-dns",
        ck.t(days=400),
        selector={"k8s-app": "kube-dns"},
        ports=[("dns", 53, 53), ("dns-tcp", 53, 53), ("metrics", 9153, 9153)],
        cluster_ip="172.20.0.10",
        labels={"k8s-app": "kube-dns", "kubernetes.io/name": "CoreDNS"},
    )
    kdns["spec"]["ports"][0]["protocol"] = "UDP"
    sc.add(kdns, endpoints(kdns, dns["pods"]))

    # ------------------------------------------------ billing: the two ExternalName Services
    legacy = service(
        "billing",
        "legacy-ledger",
        ck.t(days=610),
        type_="ExternalName",
        external_name=OLD_HOST,
        ports=[("postgres", 5432, 5432)],
        labels={"app": "ledger", "tier": "db"},
        annotations={
            "brightmoor.net/description": "Ledger primary, dc-ams2 (on-prem)",
            "brightmoor.net/owner": "team-dba",
        },
    )
    ledger = service(
        "billing",
        "ledger",
        ck.t(days=9),
        type_="ExternalName",
        external_name=NEW_HOST,
        ports=[("postgres", 5432, 5432)],
        labels={"app": "ledger", "tier": "db"},
        annotations={
            "brightmoor.net/description": "Ledger primary, Aurora eu-west-1 (migrated 2026-11-12)",
            "brightmoor.net/owner": "team-dba",
        },
    )
    sc.add(legacy, ledger)

    # billing/ledger-sync (Python worker) uses legacy-ledger
    ls_c = container(
        "ledger-sync",
        "registry.brightmoor.net/billing/ledger-sync:2.7.3",
        cpu_req="200m",
        mem_req="256Mi",
        cpu_lim="1",
        mem_lim="512Mi",
        env=[
            {"name": "LEDGER_DB_HOST", "value": "legacy-ledger.billing.svc.cluster.local"},
            {"name": "LEDGER_DB_PORT", "value": "5432"},
            {"name": "LEDGER_DB_NAME", "value": "ledger"},
            {"name": "SYNC_INTERVAL_SECONDS", "value": "30"},
        ],
    )
    lsync = cl.deployment(
        "billing",
        "ledger-sync",
        [ls_c],
        replicas=1,
        created=ck.t(days=500),
        rs_created=ck.t(days=4, hours=1),
        revision=31,
        hash_="64c9b7f58d",
    )
    # billing/invoice-api (Go) reads balances through legacy-ledger
    ia_c = container(
        "invoice-api",
        "registry.brightmoor.net/billing/invoice-api:4.18.0",
        cpu_req="250m",
        mem_req="256Mi",
        cpu_lim="1",
        mem_lim="512Mi",
        ports=[("http", 8080)],
        env=[
            {"name": "LEDGER_DSN_HOST", "value": "legacy-ledger.billing.svc.cluster.local"},
            {"name": "INVOICES_DSN_HOST", "value": "invoices-db.billing.svc.cluster.local"},
        ],
        readiness=http_probe("/healthz", "http"),
    )
    inv = cl.deployment(
        "billing",
        "invoice-api",
        [ia_c],
        replicas=3,
        created=ck.t(days=500),
        rs_created=ck.t(days=2, hours=20),
        revision=64,
        hash_="7d6f5c8b9",
    )
    svc_inv = service(
        "billing",
        "invoice-api",
        ck.t(days=500),
        selector={"app": "invoice-api"},
        ports=[("http", 80, "http")],
        cluster_ip="172.20.118.40",
    )
    sc.add(svc_inv, endpoints(svc_inv, inv["pods"]))
    # billing/payment-allocator already moved to the new `ledger` Service: healthy
    pa_c = container(
        "payment-allocator",
        "registry.brightmoor.net/billing/payment-allocator:1.4.2",
        cpu_req="200m",
        mem_req="256Mi",
        cpu_lim="1",
        mem_lim="512Mi",
        ports=[("http", 8080)],
        env_from=[{"configMapRef": {"name": "payment-allocator-config"}}],
        readiness=http_probe("/healthz", "http"),
    )
    pa = cl.deployment(
        "billing",
        "payment-allocator",
        [pa_c],
        replicas=2,
        created=ck.t(days=200),
        rs_created=ck.t(days=6, hours=22),
        revision=12,
        hash_="59d8f6c7b",
        change_cause="payment-allocator: point at ledger (Aurora) after the dc-ams2 migration",
    )
    sc.add(
        configmap(
            "billing",
            "payment-allocator-config",
            ck.t(days=200),
            {
                "LEDGER_DB_HOST": "ledger.billing.svc.cluster.local",
                "LEDGER_DB_PORT": "5432",
                "LEDGER_DB_NAME": "ledger",
                "ALLOCATION_BATCH": "500",
            },
        )
    )
    # statement-renderer: harmless rollout 26 minutes ago (decoy)
    t_sr = ck.ago(minutes=26)
    sr_c = container(
        "statement-renderer",
        "registry.brightmoor.net/billing/statement-renderer:3.2.0",
        cpu_req="300m",
        mem_req="512Mi",
        cpu_lim="2",
        mem_lim="1Gi",
        ports=[("http", 8080)],
        readiness=http_probe("/healthz", "http"),
    )
    sr_old = dict(sr_c, image="registry.brightmoor.net/billing/statement-renderer:3.1.9")
    sr = cl.deployment(
        "billing",
        "statement-renderer",
        [sr_c],
        replicas=2,
        created=ck.t(days=300),
        rs_created=iso(t_sr),
        revision=22,
        hash_="6c5d4b8f7",
        change_cause="statement-renderer 3.2.0: new footer for the Dec tariff letter",
        old=[("7f8b9c6d5", ck.t(days=15), 21, [sr_old], 0)],
        pod_status=lambda i, n, nd: {"created": iso(t_sr + timedelta(seconds=35 * i))},
    )
    svc_sr = service(
        "billing",
        "statement-renderer",
        ck.t(days=300),
        selector={"app": "statement-renderer"},
        ports=[("http", 80, "http")],
        cluster_ip="172.20.77.212",
    )
    sc.add(svc_sr, endpoints(svc_sr, sr["pods"]))
    d_sr = sr["deployment"]
    new_rs, old_rs = sr["current_rs"]["metadata"]["name"], sr["rs"][0]["metadata"]["name"]
    sc.add(
        event(
            d_sr,
            "ScalingReplicaSet",
            f"Scaled up replica set {new_rs} to 1",
            first=iso(t_sr),
            component="deployment-controller",
        ),
        event(
            d_sr,
            "ScalingReplicaSet",
            f"Scaled down replica set {old_rs} to 1 from 2",
            first=iso(t_sr + timedelta(seconds=33)),
            component="deployment-controller",
        ),
        event(
            d_sr,
            "ScalingReplicaSet",
            f"Scaled up replica set {new_rs} to 2 from 1",
            first=iso(t_sr + timedelta(seconds=33)),
            component="deployment-controller",
            seed="2",
        ),
        event(
            d_sr,
            "ScalingReplicaSet",
            f"Scaled down replica set {old_rs} to 0 from 1",
            first=iso(t_sr + timedelta(seconds=70)),
            component="deployment-controller",
        ),
    )
    for i, p in enumerate(sr["pods"]):
        t0 = t_sr + timedelta(seconds=35 * i)
        nd, pn = p["spec"]["nodeName"], p["metadata"]["name"]
        fp = "spec.containers{statement-renderer}"
        sc.add(
            event(
                p,
                "Scheduled",
                f"Successfully assigned billing/{pn} to {nd}",
                first=iso(t0),
                component="default-scheduler",
            ),
            event(
                p,
                "Pulled",
                f'Container image "{sr_c["image"]}" already present on machine',
                first=iso(t0 + timedelta(seconds=1)),
                component="kubelet",
                host=nd,
                field_path=fp,
            ),
            event(
                p,
                "Created",
                "Created container statement-renderer",
                first=iso(t0 + timedelta(seconds=1)),
                component="kubelet",
                host=nd,
                field_path=fp,
            ),
            event(
                p,
                "Started",
                "Started container statement-renderer",
                first=iso(t0 + timedelta(seconds=2)),
                component="kubelet",
                host=nd,
                field_path=fp,
            ),
        )
    # billing NetworkPolicy (decoy: it allows DNS and the database port)
    sc.add(
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": {
                "name": "billing-egress",
                "namespace": "billing",
                "uid": "6b7f0d2e-4c1a-4d8e-9a77-5e0c1f2b3a91",
                "creationTimestamp": ck.t(days=120),
                "generation": 3,
            },
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
                    {
                        "to": [
                            {"ipBlock": {"cidr": "10.0.0.0/8"}},
                            {"ipBlock": {"cidr": "172.16.0.0/12"}},
                        ],
                        "ports": [
                            {"protocol": "TCP", "port": 5432},
                            {"protocol": "TCP", "port": 8080},
                        ],
                    },
                    {
                        "to": [{"ipBlock": {"cidr": "0.0.0.0/0"}}],
                        "ports": [{"protocol": "TCP", "port": 443}],
                    },
                ],
            },
        }
    )

    # ------------------------------------------------ customer/portal (where the reporter looks)
    po_c = container(
        "portal",
        "registry.brightmoor.net/customer/portal:9.3.1",
        cpu_req="300m",
        mem_req="384Mi",
        cpu_lim="1",
        mem_lim="768Mi",
        ports=[("http", 3000)],
        env=[{"name": "INVOICE_API_URL", "value": "http://invoice-api.billing.svc.cluster.local"}],
        readiness=http_probe("/healthz", "http"),
    )
    portal = cl.deployment(
        "customer",
        "portal",
        [po_c],
        replicas=3,
        created=ck.t(days=700),
        rs_created=ck.t(days=1, hours=4),
        revision=143,
        hash_="8f5c6d7b9",
    )
    svc_po = service(
        "customer",
        "portal",
        ck.t(days=700),
        selector={"app": "portal"},
        ports=[("http", 80, "http")],
        cluster_ip="172.20.9.3",
    )
    sc.add(svc_po, endpoints(svc_po, portal["pods"]))

    # ------------------------------------------------ metrics
    m = Metrics(ck.ago(minutes=120), ck.now, 60)
    cut = int(ck.ago(minutes=CUT).timestamp())
    broken = lambda t: t >= cut  # noqa: E731
    for k, p in enumerate(dns["pods"]):
        pn = p["metadata"]["name"]
        lab = {"namespace": "kube-system", "pod": pn, "server": "dns://:53", "zone": "."}
        j = jitter(pn, 3)
        # ledger-sync retries every 30 s, invoice-api asks once per balance lookup; ndots:5 adds 3
        # search-path misses
        m.counter(
            "coredns_dns_responses",
            "Counter of response status codes.",
            {**lab, "rcode": "NOERROR"},
            lambda t, j=j: 210 + j(t),
        )
        m.counter(
            "coredns_dns_responses",
            "Counter of response status codes.",
            {**lab, "rcode": "NXDOMAIN"},
            lambda t, j=j: 96 + j(t) / 3 + (14.5 if broken(t) else 0),
        )
        m.counter(
            "coredns_dns_responses",
            "Counter of response status codes.",
            {**lab, "rcode": "SERVFAIL"},
            lambda t: 0.0,
            start_value=3 + k,
        )
        m.gauge(
            "container_memory_working_set_bytes",
            "Current working set in bytes.",
            {
                "namespace": "kube-system",
                "pod": pn,
                "container": "coredns",
                "node": p["spec"]["nodeName"],
            },
            lambda t, j=j: 31e6 + j(t) * 1e5,
        )
    bal_rate = 3.4
    for p in inv["pods"]:
        pn = p["metadata"]["name"]
        lab = {"namespace": "billing", "pod": pn, "service": "invoice-api"}
        m.counter(
            "http_requests",
            "Total HTTP requests served.",
            {**lab, "route": "/v1/invoices/{id}", "code": "200"},
            lambda t: 8.1,
        )
        m.counter(
            "http_requests",
            "Total HTTP requests served.",
            {**lab, "route": "/v1/invoices/{id}/balance", "code": "200"},
            lambda t: 0.0 if broken(t) else bal_rate / 3,
        )
        m.counter(
            "http_requests",
            "Total HTTP requests served.",
            {**lab, "route": "/v1/invoices/{id}/balance", "code": "500"},
            lambda t: bal_rate / 3 if broken(t) else 0.0,
            start_value=2.0,
        )
        cl_ = {
            "namespace": "billing",
            "pod": pn,
            "container": "invoice-api",
            "node": p["spec"]["nodeName"],
        }
        j = jitter(pn, 0.015)
        m.counter(
            "container_cpu_usage_seconds",
            "Cumulative cpu time consumed in seconds.",
            cl_,
            lambda t, j=j: 0.12 + j(t),
        )
    p = lsync["pods"][0]
    m.counter(
        "ledger_sync_batches",
        "Ledger sync batches by result.",
        {"namespace": "billing", "pod": p["metadata"]["name"], "result": "ok"},
        lambda t: 0.0 if broken(t) else 1 / 30,
        integer=True,
    )
    m.counter(
        "ledger_sync_batches",
        "Ledger sync batches by result.",
        {"namespace": "billing", "pod": p["metadata"]["name"], "result": "error"},
        lambda t: 1 / 30 if broken(t) else 0.0,
        integer=True,
        start_value=4,
    )
    m.gauge(
        "ledger_sync_last_success_timestamp_seconds",
        "Unix time of the last successful sync batch.",
        {"namespace": "billing", "pod": p["metadata"]["name"]},
        lambda t: float(min(t, cut - 8) - (min(t, cut - 8) % 30)),
    )
    for p in pa["pods"]:
        m.counter(
            "payment_allocator_allocations",
            "Payments allocated to invoices.",
            {"namespace": "billing", "pod": p["metadata"]["name"], "result": "ok"},
            lambda t: 2.2,
            integer=True,
        )
    for p in portal["pods"]:
        lab = {"namespace": "customer", "pod": p["metadata"]["name"], "service": "portal"}
        m.counter(
            "http_requests",
            "Total HTTP requests served.",
            {**lab, "route": "/account/invoices", "code": "200"},
            lambda t: 2.9 if broken(t) else 4.0,
        )
        m.counter(
            "http_requests",
            "Total HTTP requests served.",
            {**lab, "route": "/account/invoices", "code": "502"},
            lambda t: 1.1 if broken(t) else 0.0,
            start_value=1.0,
        )
    sc.metrics = m

    # ------------------------------------------------ logs
    r = rng(SID)
    L = sc.logs
    lsp = lsync["pods"][0]["metadata"]["name"]
    batch = 48_112
    t = ck.ago(minutes=120)
    while t <= ck.now:
        if t < ck.ago(minutes=CUT):
            n = r.randint(180, 260)
            L.add(
                t,
                "billing",
                lsp,
                "ledger-sync",
                "ledger-sync",
                "info",
                f"synced batch {batch}: {n} invoices posted to ledger in "
                f"{r.uniform(1.4, 2.6):.2f}s",
            )
            batch += 1
        else:
            L.add(
                t,
                "billing",
                lsp,
                "ledger-sync",
                "ledger-sync",
                "error",
                f"sync batch {batch} failed: psycopg.OperationalError: connection failed: could "
                "not translate host "
                'name "legacy-ledger.billing.svc.cluster.local" to address: Name or service not '
                "known",
                error__type="psycopg.OperationalError",
            )
            L.add(
                t + timedelta(milliseconds=4),
                "billing",
                lsp,
                "ledger-sync",
                "ledger-sync",
                "warn",
                f"retrying batch {batch} in 30s (attempt "
                f"{int((t - ck.ago(minutes=CUT)).total_seconds() // 30) + 1})",
            )
        t += timedelta(seconds=30)
    inv_pods = [p["metadata"]["name"] for p in inv["pods"]]
    dns_pods = [(p["metadata"]["name"], p["status"]["podIP"]) for p in dns["pods"]]
    caller_ips = {p["metadata"]["name"]: p["status"]["podIP"] for p in inv["pods"] + lsync["pods"]}
    caller_ips[lsp] = lsync["pods"][0]["status"]["podIP"]
    for minute in range(120, -1, -1):
        t0 = ck.ago(minutes=minute)
        for pn in inv_pods:
            if minute % 5 == 0:
                L.add(
                    t0 + timedelta(seconds=r.randint(0, 59)),
                    "billing",
                    pn,
                    "invoice-api",
                    "invoice-api",
                    "info",
                    f"served {r.randint(460, 520)} requests in the last 60s, 0 slow",
                )
            if minute < CUT:
                for _ in range(2):
                    inv_id = f"INV-2026-{r.randint(100000, 999999)}"
                    L.add(
                        t0 + timedelta(seconds=r.randint(0, 59), milliseconds=r.randint(0, 999)),
                        "billing",
                        pn,
                        "invoice-api",
                        "invoice-api",
                        "error",
                        f"GET /v1/invoices/{inv_id}/balance 500: ledger query failed: failed to "
                        "connect to "
                        "`host=legacy-ledger.billing.svc.cluster.local user=invoice_api "
                        "database=ledger`: "
                        "hostname resolving error (lookup legacy-ledger.billing.svc.cluster.local"
                        " on 172.20.0.10:53: no such host)",
                        http__response__status_code=500,
                        error__type="*pgconn.ConnectError",
                    )
        for p in portal["pods"]:
            pn = p["metadata"]["name"]
            if minute < CUT and r.random() < 0.6:
                L.add(
                    t0 + timedelta(seconds=r.randint(0, 59)),
                    "customer",
                    pn,
                    "portal",
                    "portal",
                    "error",
                    "GET /account/invoices: invoice-api balance lookup failed with 500, showing "
                    "'balance unavailable'",
                    http__response__status_code=502,
                )
        # CoreDNS `log . { class denial error }` prints the NXDOMAIN answers
        if minute < CUT:
            for _ in range(3):
                dpn, dip = dns_pods[r.randrange(2)]
                src = r.choice(list(caller_ips.values()))
                qid = r.randint(1000, 65000)
                port = r.randint(32768, 60999)
                when = t0 + timedelta(seconds=r.randint(0, 59), milliseconds=r.randint(0, 999))
                L.add(
                    when,
                    "kube-system",
                    dpn,
                    "coredns",
                    "coredns",
                    "info",
                    f'[INFO] {src}:{port} - {qid} "A IN legacy-ledger.billing.svc.cluster.local. '
                    'udp 68 false 1232" '
                    f"NXDOMAIN qr,aa,rd 188 {r.uniform(0.004, 0.03):.9f}s",
                )
                L.add(
                    when + timedelta(milliseconds=2),
                    "kube-system",
                    dpn,
                    "coredns",
                    "coredns",
                    "info",
                    f'[INFO] {dip}:{r.randint(32768, 60999)} - {r.randint(1000, 65000)} "A IN '
                    f'{OLD_HOST}. udp 63 false 1232" '
                    f"NXDOMAIN qr,rd,ra 138 {r.uniform(0.003, 0.02):.9f}s",
                )
        if r.random() < 0.5:
            # the usual ndots:5 search-path misses, all day long
            dpn, dip = dns_pods[r.randrange(2)]
            src = r.choice(list(caller_ips.values()))
            host = r.choice(
                [
                    "invoices-db.billing.svc.cluster.local.billing.svc.cluster.local",
                    "sqs.eu-west-1.amazonaws.com.billing.svc.cluster.local",
                    "sqs.eu-west-1.amazonaws.com.svc.cluster.local",
                    "api.stripe.com.cluster.local",
                ]
            )
            L.add(
                t0 + timedelta(seconds=r.randint(0, 59)),
                "kube-system",
                dpn,
                "coredns",
                "coredns",
                "info",
                f'[INFO] {src}:{r.randint(32768, 60999)} - {r.randint(1000, 65000)} "AAAA IN '
                f'{host}. udp 90 false 1232" '
                f"NXDOMAIN qr,aa,rd 183 {r.uniform(0.0001, 0.0004):.9f}s",
            )
        for p in pa["pods"]:
            if minute % 3 == 0:
                L.add(
                    t0 + timedelta(seconds=r.randint(0, 59)),
                    "billing",
                    p["metadata"]["name"],
                    "payment-allocator",
                    "payment-allocator",
                    "info",
                    f"allocated {r.randint(350, 420)} payments "
                    "(ledger=ledger.billing.svc.cluster.local:5432, "
                    f"{r.randint(8, 19)}ms p95)",
                )
    for i, p in enumerate(sr["pods"]):
        t0 = t_sr + timedelta(seconds=35 * i + 3)
        for off, msg in (
            (0, "statement-renderer 3.2.0 starting"),
            (1, "loaded 14 templates (footer: dec-2026-tariff)"),
            (2, "Uvicorn running on http://0.0.0.0:8080 (Press CTRL+C to quit)"),
        ):
            L.add(
                t0 + timedelta(seconds=off),
                "billing",
                p["metadata"]["name"],
                "statement-renderer",
                "statement-renderer",
                "info",
                msg,
            )
        L.add(
            t0 + timedelta(seconds=4),
            "billing",
            p["metadata"]["name"],
            "statement-renderer",
            "statement-renderer",
            "warn",
            "fontconfig: cache directory /var/cache/fontconfig is not writable, using in-memory "
            "cache",
        )

    sc.meta = {
        "title": "Invoice balances unavailable, ledger sync failing",
        "report": (
            "customer portal shows 'balance unavailable' on invoices since about 13:40 and "
            "ledger-sync is failing. "
            "errors talk about name resolution, is CoreDNS acting up again? statement-renderer "
            "was also deployed "
            "around then\n"
        ),
        "truth": {
            "category": "network",
            "culprit": {"kind": "Service", "namespace": "billing", "name": "legacy-ledger"},
            "evidence": [
                "externalName: ledgerdb01.dc-ams2.brightmoor.net",
                "NXDOMAIN",
                "lookup legacy-ledger.billing.svc.cluster.local on 172.20.0.10:53: no such host",
                "could not translate host name",
            ],
            "fix": (
                "The ExternalName Service billing/legacy-ledger still points at "
                "ledgerdb01.dc-ams2.brightmoor.net, "
                "whose DNS records went away with the dc-ams2 decommission; repoint it at the "
                "Aurora host "
                "(as billing/ledger does) or move ledger-sync and invoice-api to "
                "ledger.billing.svc.cluster.local. "
                "CoreDNS is healthy and answers every other name."
            ),
        },
    }
    return sc
