"""Tessera Travel: CoreDNS forwards everything outside cluster.local to two corporate
resolvers that the network team decommissioned; in-cluster names still resolve, every
external name times out or SERVFAILs, so only calls to outside services fail, in three
namespaces at once."""

from __future__ import annotations

from datetime import datetime, timedelta

from .common import (
    Revision,
    Scenario,
    configmap,
    container,
    cumulative,
    deployment,
    endpoints,
    event,
    histogram_samples,
    namespace,
    node,
    parse,
    pods_for,
    service,
    simple_service,
    steps,
    ts,
    ts_ms,
)

NOW = parse("2026-11-26T08:15:00Z")
GONE = NOW - timedelta(minutes=68)  # the old resolvers stop answering
NODES = [f"aks-system-21874163-vmss00000{i}" for i in range(2)] + [
    f"aks-apps-21874163-vmss00000{i}" for i in range(4)
]
UPSTREAMS = ("10.118.0.10", "10.118.0.11")
COREFILE = """.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus :9153
    forward . 10.118.0.10 10.118.0.11 {
       policy sequential
       health_check 5s
    }
    cache 30
    loop
    reload
    loadbalance
}
"""


def build() -> Scenario:
    sc = Scenario(
        id="travel-external-calls-dns",
        title="Payments to the card processor and outgoing e-mail time out; partners sync fails",
        now=NOW,
        report="""
card payments are timing out since ~7:10 and the notifier isn't sending any emails either.
stripe and sendgrid status pages are both green so I think it's our side — did someone touch
the egress / NAT gateway or a network policy? hotel-sync is red in grafana too
""",
        truth={
            "category": "network",
            "culprit": {"kind": "Deployment", "namespace": "kube-system", "name": "coredns"},
            "evidence": [
                "10.118.0.10:53: i/o timeout",
                "server misbehaving",
                "getaddrinfo EAI_AGAIN api.sendgrid.com",
                "forward . 10.118.0.10 10.118.0.11",
            ],
            "fix": "Point CoreDNS's forward plugin (ConfigMap kube-system/coredns) at the "
            "resolvers that replaced 10.118.0.10/11 (or /etc/resolv.conf of the "
            "nodes) and let it reload; in-cluster names are unaffected, nothing is "
            "wrong with egress or the callers.",
        },
    )
    created = NOW - timedelta(days=500)
    for ns in ("kube-system", "checkout", "messaging", "partners", "search"):
        sc.add(namespace(ns, created))
    for i, name in enumerate(NODES):
        sc.add(
            node(
                name,
                NOW - timedelta(days=6, hours=i * 3),
                NOW,
                cpu="4" if i < 2 else "8",
                memory="16Gi" if i < 2 else "32Gi",
                region="westeurope",
                zone=str(1 + i % 3),
                instance="Standard_D4s_v5" if i < 2 else "Standard_D8s_v5",
                role="agent",
                kubelet="v1.29.9",
            )
        )
    rng = sc.rng
    # --- CoreDNS
    dns = container(
        "coredns",
        "mcr.microsoft.com/oss/kubernetes/coredns:v1.11.3-3",
        port=None,
        cpu="100m",
        memory="70Mi",
        memory_limit="500Mi",
        args=["-conf", "/etc/coredns/Corefile"],
        mounts=[{"name": "config-volume", "mountPath": "/etc/coredns", "readOnly": True}],
    )
    dns["ports"] = [
        {"name": "dns", "containerPort": 53, "protocol": "UDP"},
        {"name": "dns-tcp", "containerPort": 53, "protocol": "TCP"},
        {"name": "metrics", "containerPort": 9153, "protocol": "TCP"},
    ]
    dns["readinessProbe"] = {"httpGet": {"path": "/ready", "port": 8181}, "periodSeconds": 10}
    dns["livenessProbe"] = {
        "httpGet": {"path": "/health", "port": 8080},
        "initialDelaySeconds": 60,
        "periodSeconds": 10,
    }
    volumes = [
        {
            "name": "config-volume",
            "configMap": {"name": "coredns", "items": [{"key": "Corefile", "path": "Corefile"}]},
        }
    ]
    dns_rolled = NOW - timedelta(days=3, hours=11)
    old = Revision(
        6,
        [{**dns, "image": dns["image"].replace("-3", "-2")}],
        dns_rolled - timedelta(days=40),
        0,
        volumes=volumes,
        template_labels={"k8s-app": "kube-dns"},
    )
    rev = Revision(
        7, [dns], dns_rolled, 2, volumes=volumes, template_labels={"k8s-app": "kube-dns"}
    )
    sc.add(
        deployment(
            "kube-system",
            "coredns",
            created,
            [old, rev],
            2,
            labels={"k8s-app": "kube-dns", "kubernetes.io/cluster-service": "true"},
        )
    )
    coredns_pods = pods_for(sc, "kube-system", "coredns", rev, NODES[:2], dns_rolled)
    svc = service(
        "kube-system",
        "kube-dns",
        created,
        53,
        53,
        {"k8s-app": "kube-dns"},
        cluster_ip="10.96.0.10",
        port_name="dns",
    )
    svc["spec"]["ports"] = [
        {"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53},
        {"name": "dns-tcp", "port": 53, "protocol": "TCP", "targetPort": 53},
    ]
    sc.add(svc, endpoints("kube-system", "kube-dns", created, coredns_pods, 53, port_name="dns"))
    sc.add(
        configmap(
            "kube-system",
            "coredns",
            created + timedelta(days=60),
            {"Corefile": COREFILE},
            labels={"addonmanager.kubernetes.io/mode": "Reconcile", "k8s-app": "kube-dns"},
        )
    )
    sc.add(
        configmap(
            "kube-system",
            "coredns-custom",
            created + timedelta(days=60),
            {"log.override": "# log\n"},
            labels={"addonmanager.kubernetes.io/mode": "EnsureExists", "k8s-app": "kube-dns"},
        )
    )
    simple_service(
        sc,
        "kube-system",
        "metrics-server",
        "mcr.microsoft.com/oss/kubernetes/metrics-server:v0.7.2",
        replicas=2,
        nodes=NODES[:2],
        created=created,
        rolled=NOW - timedelta(days=3, hours=11),
        port=4443,
        number=5,
        expose=False,
        readiness=None,
    )

    # --- apps
    _, gw = simple_service(
        sc,
        "checkout",
        "payment-gateway",
        "tesseraacr.azurecr.io/checkout/payment-gateway:4.2.9",
        replicas=3,
        nodes=NODES[2:],
        created=created,
        rolled=NOW - timedelta(days=1, hours=20),
        number=57,
        env=[
            {"name": "PSP_BASE_URL", "value": "https://api.stripe.com"},
            {"name": "LEDGER_URL", "value": "http://ledger.checkout.svc:8080"},
        ],
    )
    _, ledger = simple_service(
        sc,
        "checkout",
        "ledger",
        "tesseraacr.azurecr.io/checkout/ledger:1.33.0",
        replicas=2,
        nodes=NODES[2:],
        created=created,
        rolled=NOW - timedelta(days=4),
        number=31,
    )
    sc.add(
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": {
                "name": "payment-gateway-egress",
                "namespace": "checkout",
                "creationTimestamp": ts(created + timedelta(days=90)),
                "uid": "7e0a9b3c-11f2-4b9e-8c5d-2f4e6a7b8c90",
            },
            "spec": {
                "podSelector": {"matchLabels": {"app.kubernetes.io/name": "payment-gateway"}},
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
                        "to": [{"ipBlock": {"cidr": "0.0.0.0/0", "except": ["10.0.0.0/8"]}}],
                        "ports": [{"protocol": "TCP", "port": 443}],
                    },
                ],
            },
        }
    )
    _, notifier = simple_service(
        sc,
        "messaging",
        "notifier",
        "tesseraacr.azurecr.io/messaging/notifier:2.8.1",
        replicas=2,
        nodes=NODES[2:],
        created=created,
        rolled=NOW - timedelta(days=5, hours=3),
        port=3000,
        number=44,
        memory="192Mi",
    )
    _, templates = simple_service(
        sc,
        "messaging",
        "templates",
        "tesseraacr.azurecr.io/messaging/templates:1.4.0",
        replicas=2,
        nodes=NODES[3:],
        created=created,
        rolled=NOW - timedelta(days=6),
        port=8080,
        number=12,
        memory="128Mi",
    )
    _, hotel = simple_service(
        sc,
        "partners",
        "hotel-sync",
        "tesseraacr.azurecr.io/partners/hotel-sync:7.0.3",
        replicas=2,
        nodes=NODES[2:],
        created=created,
        rolled=NOW - timedelta(days=2, hours=9),
        port=8080,
        number=19,
        memory="1Gi",
    )
    _, search_pods = simple_service(
        sc,
        "search",
        "offer-search",
        "tesseraacr.azurecr.io/search/offer-search:12.1.0",
        replicas=3,
        nodes=NODES[2:],
        created=created,
        rolled=NOW - timedelta(days=3),
        number=102,
        memory="1Gi",
    )
    # events: an unrelated warning and harmless noise
    sc.add(
        event(
            "search",
            "Pod",
            search_pods[2]["metadata"]["name"],
            "Unhealthy",
            'Liveness probe failed: Get "http://10.244.5.17:8080/healthz": context '
            "deadline exceeded (Client.Timeout exceeded while awaiting headers)",
            NOW - timedelta(minutes=33),
            type_="Warning",
            host=search_pods[2]["spec"]["nodeName"],
        ),
        event(
            "kube-system",
            "ConfigMap",
            "coredns-custom",
            "Updated",
            "ConfigMap reconciled by addon-manager",
            NOW - timedelta(minutes=55),
            component="addon-manager",
        ),
    )

    # --- CoreDNS logs
    for p in coredns_pods:
        pod_name = p["metadata"]["name"]
        for line in (
            ".:53",
            "[INFO] plugin/reload: Running configuration SHA512 = "
            "b941b080e5322f6519009bb49349462c7ddb6317425b0f6a83e5451175b720703949e3f3b"
            "454a24e77f3ffe57fd5e9c6130e528a5a0dd145e1fd9bd8d9bb5c2d",
            "CoreDNS-1.11.3",
            "linux/amd64, go1.22.7, 9a4a8d3",
        ):
            sc.log("kube-system", pod_name, "coredns", line)  # CoreDNS stamps no line
        ip = p["status"]["podIP"]
        t = GONE
        while t < NOW:
            t += timedelta(seconds=rng.randint(2, 9))
            if t >= NOW:
                break
            qname = rng.choice(
                [
                    "api.stripe.com.",
                    "api.sendgrid.com.",
                    "supply.hotelbeds.com.",
                    "login.microsoftonline.com.",
                    "api.stripe.com.",
                    "hooks.slack.com.",
                    "tesseraacr.azurecr.io.",
                ]
            )
            qtype = rng.choice(["A", "AAAA"])
            upstream = UPSTREAMS[0] if rng.random() < 0.7 else UPSTREAMS[1]
            line = (
                f"[ERROR] plugin/errors: 2 {qname} {qtype}: read udp {ip}:"
                f"{rng.randint(32768, 60999)}->{upstream}:53: i/o timeout"
            )
            sc.log("kube-system", pod_name, "coredns", line)
            if rng.random() < 0.5:
                sc.doc(t, "kube-system", pod_name, "coredns", "coredns", "error", line)
            if rng.random() < 0.04:
                w = "[WARNING] plugin/forward: No healthy upstreams, using random upstream"
                sc.log("kube-system", pod_name, "coredns", w)
                sc.doc(t, "kube-system", pod_name, "coredns", "coredns", "warn", w)
    # coredns lines have no timestamp: give the log-store copies time and keep pod logs as is

    # --- payment-gateway (Go, JSON)
    t = NOW - timedelta(hours=2, minutes=30)
    while t < NOW:
        t += timedelta(seconds=rng.randint(3, 11))
        if t >= NOW:
            break
        p = gw[rng.randrange(len(gw))]
        pod_name, ip = p["metadata"]["name"], p["status"]["podIP"]
        order = f"ord_{rng.getrandbits(40):010x}"
        failing = t >= GONE + timedelta(seconds=40)
        if failing:
            if rng.random() < 0.6:
                err = (
                    f'Post "https://api.stripe.com/v1/payment_intents": dial tcp: lookup '
                    f"api.stripe.com on 10.96.0.10:53: read udp {ip}:{rng.randint(32768, 60999)}"
                    f"->10.96.0.10:53: i/o timeout"
                )
            else:
                err = (
                    'Post "https://api.stripe.com/v1/payment_intents": dial tcp: lookup '
                    "api.stripe.com on 10.96.0.10:53: server misbehaving"
                )
            msg = "psp call failed"
            sc.log(
                "checkout",
                pod_name,
                "payment-gateway",
                f'{{"time":"{ts_ms(t)}","level":"ERROR","msg":"{msg}","order":"{order}",'
                f'"err":"{err.replace(chr(34), chr(92) + chr(34))}"}}',
            )
            sc.doc(
                t,
                "checkout",
                pod_name,
                "payment-gateway",
                "payment-gateway",
                "error",
                f"{msg}: {err}",
                **{"labels.order": order, "http.response.status_code": 502},
            )
        else:
            ms = rng.randint(180, 650)
            sc.log(
                "checkout",
                pod_name,
                "payment-gateway",
                f'{{"time":"{ts_ms(t)}","level":"INFO","msg":"payment authorised",'
                f'"order":"{order}","psp_ms":{ms}}}',
            )
            if rng.random() < 0.3:
                sc.doc(
                    t,
                    "checkout",
                    pod_name,
                    "payment-gateway",
                    "payment-gateway",
                    "info",
                    f"payment authorised order={order} psp_ms={ms}",
                )
        if rng.random() < 0.5:
            t2 = t + timedelta(milliseconds=rng.randint(1, 30))
            sc.log(
                "checkout",
                pod_name,
                "payment-gateway",
                f'{{"time":"{ts_ms(t2)}","level":"INFO","msg":"ledger entry written",'
                f'"order":"{order}","ledger_ms":{rng.randint(3, 14)}}}',
            )
    # --- notifier (Node, pino-style)
    t = NOW - timedelta(hours=2, minutes=30)
    while t < NOW:
        t += timedelta(seconds=rng.randint(5, 20))
        if t >= NOW:
            break
        p = notifier[rng.randrange(len(notifier))]
        pod_name = p["metadata"]["name"]
        msg_id = f"{rng.getrandbits(48):012x}"
        millis = int(t.timestamp() * 1000)
        sc.log(
            "messaging",
            pod_name,
            "notifier",
            f'{{"level":30,"time":{millis},"pid":1,"hostname":"{pod_name}","msg":"rendered '
            f"template booking-confirmation via templates.messaging.svc in "
            f'{rng.randint(4, 18)}ms","messageId":"{msg_id}"}}',
        )
        if t >= GONE + timedelta(seconds=30):
            err = "getaddrinfo EAI_AGAIN api.sendgrid.com"
            sc.log(
                "messaging",
                pod_name,
                "notifier",
                f'{{"level":50,"time":{millis + 5004},"pid":1,"hostname":"{pod_name}",'
                f'"msg":"send failed, will retry","messageId":"{msg_id}","err":{{"type":'
                f'"Error","message":"{err}","code":"EAI_AGAIN","syscall":"getaddrinfo",'
                f'"hostname":"api.sendgrid.com"}}}}',
            )
            sc.doc(
                t + timedelta(seconds=5),
                "messaging",
                pod_name,
                "notifier",
                "notifier",
                "error",
                f"send failed, will retry: Error: {err}",
                **{"error.type": "EAI_AGAIN"},
            )
        else:
            sc.log(
                "messaging",
                pod_name,
                "notifier",
                f'{{"level":30,"time":{millis + 240},"pid":1,"hostname":"{pod_name}",'
                f'"msg":"accepted by provider","messageId":"{msg_id}","status":202}}',
            )
            if rng.random() < 0.3:
                sc.doc(
                    t,
                    "messaging",
                    pod_name,
                    "notifier",
                    "notifier",
                    "info",
                    f"accepted by provider messageId={msg_id} status=202",
                )
    # --- hotel-sync (Java)
    t = NOW - timedelta(hours=2, minutes=30)
    while t < NOW:
        t += timedelta(seconds=rng.randint(30, 70))
        if t >= NOW:
            break
        p = hotel[rng.randrange(len(hotel))]
        pod_name = p["metadata"]["name"]
        stamp = t.strftime("%Y-%m-%d %H:%M:%S.") + f"{rng.randint(0, 999):03d}"
        if t >= GONE + timedelta(seconds=30):
            msg = (
                "Sync of availability page failed: java.net.UnknownHostException: "
                "supply.hotelbeds.com: Temporary failure in name resolution"
            )
            sc.log(
                "partners",
                pod_name,
                "hotel-sync",
                f"{stamp} ERROR 1 --- [sync-pool-3] c.t.partners.sync.AvailabilitySync : {msg}",
            )
            sc.log(
                "partners",
                pod_name,
                "hotel-sync",
                "\tat java.base/java.net.Inet6AddressImpl.lookupAllHostAddr(Native Method)",
            )
            sc.log(
                "partners",
                pod_name,
                "hotel-sync",
                "\tat java.base/java.net.InetAddress$"
                "PlatformResolver.lookupByName(InetAddress.java:1211)",
            )
            sc.doc(
                t,
                "partners",
                pod_name,
                "hotel-sync",
                "hotel-sync",
                "error",
                msg,
                **{"error.type": "java.net.UnknownHostException"},
            )
        else:
            msg = f"Synced {rng.randint(200, 900)} rate plans from supply.hotelbeds.com"
            sc.log(
                "partners",
                pod_name,
                "hotel-sync",
                f"{stamp}  INFO 1 --- [sync-pool-3] c.t.partners.sync.AvailabilitySync : {msg}",
            )
            sc.doc(t, "partners", pod_name, "hotel-sync", "hotel-sync", "info", msg)
        msg = f"Cache refresh from offer-search.search.svc:8080 ok ({rng.randint(5, 30)} ms)"
        sc.log(
            "partners",
            pod_name,
            "hotel-sync",
            f"{stamp}  INFO 1 --- [refresh-1] c.t.partners.cache.OfferCache : {msg}",
        )
    # --- offer-search & ledger noise
    for pods, ns, svc_name in (
        (search_pods, "search", "offer-search"),
        (ledger, "checkout", "ledger"),
        (templates, "messaging", "templates"),
    ):
        for p in pods:
            t = NOW - timedelta(hours=1)
            while t < NOW:
                t += timedelta(seconds=rng.randint(20, 90))
                if t >= NOW:
                    break
                line = f"{ts_ms(t)} INFO served GET /v1/... 200 in {rng.randint(2, 40)}ms"
                sc.log(ns, p["metadata"]["name"], svc_name, line)

    # --- metrics
    times = steps(NOW - timedelta(hours=3), NOW)
    for p in coredns_pods:
        pod_name = p["metadata"]["name"]
        base = {"namespace": "kube-system", "pod": pod_name, "server": "dns://:53", "zone": "."}
        sc.metrics.counter(
            "coredns_dns_responses",
            {**base, "rcode": "NOERROR"},
            cumulative(times, lambda m: 410.0 if m < GONE else 365.0, 8.1e7),
        )
        sc.metrics.counter(
            "coredns_dns_responses",
            {**base, "rcode": "NXDOMAIN"},
            cumulative(times, lambda m: 160.0, 3.3e7),
        )
        sc.metrics.counter(
            "coredns_dns_responses",
            {**base, "rcode": "SERVFAIL"},
            cumulative(times, lambda m: 0.01 if m < GONE else 21.0, 1240),
        )
        for up in UPSTREAMS:
            lab = {"namespace": "kube-system", "pod": pod_name, "to": f"{up}:53"}
            sc.metrics.counter(
                "coredns_forward_requests",
                lab,
                cumulative(
                    times,
                    lambda m, up=up: (38.0 if up == UPSTREAMS[0] else 0.2) if m < GONE else 24.0,
                    4.4e6,
                ),
            )
            sc.metrics.counter(
                "coredns_forward_healthcheck_failures",
                lab,
                cumulative(times, lambda m: 0.0 if m < GONE else 0.2, 3),
            )
        sc.metrics.histogram(
            "coredns_forward_request_duration_seconds",
            {
                "namespace": "kube-system",
                "pod": pod_name,
                "to": f"{UPSTREAMS[0]}:53",
                "rcode": "NOERROR",
            },
            [0.005, 0.025, 0.1, 0.5, 2.0],
            _hist(times, lambda m: 38.0 if m < GONE else 0.0),
        )
    for pods, ns, svc_name, base_rate in (
        (gw, "checkout", "payment-gateway", 0.3),
        (notifier, "messaging", "notifier", 0.1),
    ):
        for p in pods:
            pod_name = p["metadata"]["name"]
            for code in ("200", "502"):

                def fn(m: datetime, code: str = code, base_rate: float = base_rate) -> float:
                    bad = m >= GONE + timedelta(seconds=40)
                    if code == "200":
                        return base_rate * (0.05 if bad else 1.0) + 0.5
                    return base_rate * 0.95 if bad else 0.0005

                sc.metrics.counter(
                    "http_requests",
                    {"namespace": ns, "pod": pod_name, "service": svc_name, "code": code},
                    cumulative(times, fn),
                )
    return sc


def _hist(times: list[datetime], rate: object) -> list[tuple[datetime, list[float], float]]:
    return histogram_samples(
        times, rate, lambda m: [0.55, 0.93, 0.99, 1.0, 1.0], [0.005, 0.025, 0.1, 0.5, 2.0]
    )
