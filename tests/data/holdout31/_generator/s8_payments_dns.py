"""Shape 8: an ExternalName Service points at a hostname retired after a migration.

The payment gateway moved from the old data centre (pgw.dc1.corp.example.net) to
pgw.eu1.payments.example.com last week. checkout-pay was repointed at the new name; the
`payments-gateway` ExternalName alias, which invoice-api and subscription-renewer use,
was not. At 10:04 the network team deleted the dc1 records: the alias's CNAME target has
no address, and the callers log "no such host" for the alias. CoreDNS answers NXDOMAIN as
it should; every pod is healthy. A DNSConfigForming warning elsewhere is noise.
"""

from __future__ import annotations

import itertools
import random
from datetime import datetime, timedelta

from . import kube
from .emit import Scenario, steps
from .fleet import App, app, basic_signals, chatter, http_series, make_nodes, platform, simple

ID = "invoice-payments-dns"
NOW = datetime.fromisoformat("2026-11-24T10:50:00+00:00")
CLEANUP = datetime.fromisoformat("2026-11-24T10:04:12+00:00")
NS = "billing"
ALIAS = "payments-gateway.billing.svc.cluster.local"
OLD_HOST = "pgw.dc1.corp.example.net"
NEW_HOST = "pgw.eu1.payments.example.com"
COREFILE = """.:53 {
    errors
    log . {
        class denial error
    }
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
    forward . 10.10.0.2 10.10.0.3 {
        max_concurrent 1000
    }
    cache 30
    loop
    reload
    loadbalance
}
"""


def build() -> Scenario:
    rng = random.Random(31_08)
    sc = Scenario(
        id=ID, title="Invoice payments failing with DNS errors", now=NOW,
        report=(
            "invoice payments failing since ~10:05 with 'no such host' errors. is coredns "
            "broken?? checkout payments look ok and other stuff resolves fine as far as i "
            "can see. renewals batch at 11:00 will fail too if this isn't fixed\n"),
        truth={"category": "network",
               "culprit": {"kind": "Service", "namespace": NS, "name": "payments-gateway"},
               "evidence": [f"lookup {ALIAS} on 10.96.0.10:53: no such host",
                            f"externalName: {OLD_HOST}", NEW_HOST],
               "fix": f"Point the payments-gateway ExternalName Service at {NEW_HOST} (as "
                      "checkout-pay already is); CoreDNS is fine."})
    created = NOW - timedelta(days=800)
    sc.add(kube.namespace(NS, created, {"team": "billing"}))
    nodes = make_nodes(sc, ["k8s-prod-w-01", "k8s-prod-w-02", "k8s-prod-w-03", "k8s-prod-w-04"],
                       created=NOW - timedelta(days=45), cpu="16", memory="64Gi",
                       labels={"node-role.kubernetes.io/worker": "",
                               "topology.kubernetes.io/zone": "fra-2"})
    since = NOW - timedelta(days=5, hours=22)
    apps = platform(sc, rng, nodes, created, since=since)
    coredns = apps[0]
    sc.add({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": kube.meta("coredns", "kube-system", created),
            "data": {"Corefile": COREFILE}})
    sc.add(kube.service("payments-gateway", NS, selector=None, port=443, target=443,
                        port_name="https", created=NOW - timedelta(days=610), cluster_ip="",
                        kind="ExternalName", external_name=OLD_HOST,
                        labels={"app.kubernetes.io/part-of": "billing",
                                "app.kubernetes.io/managed-by": "Helm"},
                        annotations={"meta.helm.sh/release-name": "billing-shared",
                                     "meta.helm.sh/release-namespace": NS}))
    invoice = app(sc, rng, "invoice-api", NS, replicas=3, nodes=nodes, created=created,
                  images=[("registry.corp.example/billing/invoice-api:11.4.0",
                           NOW - timedelta(days=6, hours=1))],
                  containers=simple("invoice-api", cpu="250m", memory="512Mi",
                                    limit_memory="1Gi", probe="/healthz",
                                    env={"PGW_URL": f"https://{ALIAS}",
                                         "PGW_TIMEOUT": "10s"}))
    renewer = app(sc, rng, "subscription-renewer", NS, replicas=1, nodes=nodes, created=created,
                  images=[("registry.corp.example/billing/subscription-renewer:3.2.7",
                           NOW - timedelta(days=20))], pod_started=since, port=None,
                  service=False,
                  containers=simple("subscription-renewer", port=None, probe=None,
                                    env={"PGW_URL": f"https://{ALIAS}",
                                         "RENEWAL_SCHEDULE": "0 * * * *"}))
    checkout = app(sc, rng, "checkout-pay", NS, replicas=3, nodes=nodes, created=created,
                   images=[("registry.corp.example/billing/checkout-pay:6.0.1",
                            NOW - timedelta(days=11)),
                           ("registry.corp.example/billing/checkout-pay:6.0.2",
                            NOW - timedelta(days=5, hours=3))],
                   containers=simple("checkout-pay", cpu="250m", memory="512Mi",
                                     limit_memory="1Gi", probe="/healthz",
                                     env={"PGW_URL": f"https://{NEW_HOST}",
                                          "PGW_TIMEOUT": "10s"}))
    pdf = app(sc, rng, "invoice-pdf", NS, replicas=2, nodes=nodes, created=created,
              images=[("registry.corp.example/billing/invoice-pdf:2.3.3", NOW - timedelta(days=3))],
              containers=simple("invoice-pdf", cpu="500m", memory="768Mi", limit_memory="1536Mi",
                                probe="/healthz"),
              spec_extra={"volumes": [{"name": "fonts", "configMap": {"name": "invoice-fonts"}}]})
    for pod_obj in pdf.pods:
        pod_obj["spec"]["dnsPolicy"] = "None"
        pod_obj["spec"]["dnsConfig"] = {"nameservers": ["10.96.0.10", "10.10.0.2", "10.10.0.3",
                                                        "10.10.0.4"],
                                        "searches": ["billing.svc.cluster.local",
                                                     "svc.cluster.local", "cluster.local"]}
    _events(sc, pdf)
    _signals(sc, invoice, checkout, coredns, pdf)
    _logs(sc, rng, invoice, renewer, checkout, coredns, pdf)
    return sc


def _events(sc: Scenario, pdf: App) -> None:
    for pod_obj in pdf.pods:
        sc.add(kube.event(NS, kind="Pod", name=pod_obj["metadata"]["name"],
                          reason="DNSConfigForming", type="Warning",
                          host=pod_obj["spec"]["nodeName"],
                          message="Nameserver limits were exceeded, some nameservers have been "
                                  "omitted, the applied nameserver line is: 10.96.0.10 10.10.0.2 "
                                  "10.10.0.3",
                          count=2968, first=NOW - timedelta(days=3, minutes=-4),
                          last=NOW - timedelta(seconds=40)))


def _signals(sc: Scenario, invoice: App, checkout: App, coredns: App, pdf: App) -> None:
    start = NOW - timedelta(hours=4)
    times = steps(start, NOW, timedelta(minutes=2))
    for pod_obj in invoice.pods:
        http_series(sc, NS, pod_obj["metadata"]["name"], "invoice-api", times, lambda _at: 4.0,
                    lambda at: 0.002 if at < CLEANUP else 0.41,
                    lambda at: 0.18 if at < CLEANUP else 0.04)
    basic_signals(sc, invoice, start, NOW, cores=0.08, mem_mib=350)
    basic_signals(sc, checkout, start, NOW, rps=6.0, cores=0.1, mem_mib=380, median=0.2)
    basic_signals(sc, pdf, start, NOW, cores=0.2, mem_mib=600)
    basic_signals(sc, coredns, start, NOW, cores=0.03, mem_mib=28, container="coredns")
    for pod_obj in coredns.pods:
        labels = {"namespace": "kube-system", "pod": pod_obj["metadata"]["name"],
                  "container": "coredns", "server": "dns://:53", "zone": ".",
                  "plugin": "", "view": ""}
        counts = {"NOERROR": 2.1e6, "NXDOMAIN": 6.4e5, "SERVFAIL": 41.0}
        for previous, at in itertools.pairwise(times):
            seconds = (at - previous).total_seconds()
            counts["NOERROR"] += 210 * seconds
            counts["NXDOMAIN"] += (64 + (9 if at >= CLEANUP else 0)) * seconds
            for rcode, value in counts.items():
                sc.sample("coredns_dns_responses_total", "counter", {**labels, "rcode": rcode},
                          at, float(int(value)), "Counter of response status codes.")


def _logs(sc: Scenario, rng: random.Random, invoice: App, renewer: App, checkout: App,
          coredns: App, pdf: App) -> None:
    start = NOW - timedelta(hours=5)
    for pod_obj in invoice.pods:
        pod_name = pod_obj["metadata"]["name"]
        at = start + timedelta(seconds=rng.randint(0, 60))
        while at < NOW:
            invoice_id = f"inv_{rng.randint(10**7, 10**8 - 1)}"
            if at < CLEANUP:
                sc.both(at, service="invoice-api", ns=NS, pod=pod_name, container="invoice-api",
                        level="info", message=f"POST /v1/invoices/{invoice_id}/pay 200 "
                        f"charge=ch_{rng.getrandbits(40):010x} took={rng.randint(140, 420)}ms")
            elif rng.random() < 0.55:
                sc.both(at, service="invoice-api", ns=NS, pod=pod_name, container="invoice-api",
                        level="info", message=f"GET /v1/invoices/{invoice_id} 200 "
                        f"took={rng.randint(4, 30)}ms")
            else:
                sc.both(at, service="invoice-api", ns=NS, pod=pod_name, container="invoice-api",
                        level="error", message=f"POST /v1/invoices/{invoice_id}/pay 502: charge "
                        f"failed: Post \"https://{ALIAS}/v1/charges\": dial tcp: lookup "
                        f"{ALIAS} on 10.96.0.10:53: no such host",
                        http__response__status_code=502, error__type="*net.DNSError")
            at += timedelta(seconds=rng.randint(25, 70))
    pod_name = renewer.pods[0]["metadata"]["name"]
    for hour in range(5, -1, -1):
        run = NOW.replace(minute=0, second=2, microsecond=0) - timedelta(hours=hour)
        if run > NOW:
            continue
        sc.both(run, service="subscription-renewer", ns=NS, pod=pod_name,
                container="subscription-renewer", level="info",
                message=f"renewal run started due={rng.randint(30, 90)} subscriptions")
        sc.both(run + timedelta(minutes=2, seconds=rng.randint(0, 50)),
                service="subscription-renewer", ns=NS, pod=pod_name,
                container="subscription-renewer", level="info",
                message=f"renewal run finished charged={rng.randint(30, 90)} failed=0")
    at = CLEANUP + timedelta(minutes=7)
    while at < NOW:  # dunning retries run between the hourly batches
        sc.both(at, service="subscription-renewer", ns=NS, pod=pod_name,
                container="subscription-renewer", level="warn",
                message=f"dunning retry charge sub_{rng.getrandbits(32):08x} failed: dial tcp: "
                f"lookup {ALIAS} on 10.96.0.10:53: no such host (attempt {rng.randint(2, 5)}/6)")
        at += timedelta(minutes=rng.randint(3, 8))
    chatter(sc, checkout, start, NOW, timedelta(minutes=2), [
        ("info", "POST /v1/pay 200 charge=ch_{id} took=1{ms}ms"),
        ("info", "POST /v1/pay 200 charge=ch_{id} took=2{ms}ms"),
        ("warn", "gateway soft decline charge=ch_{id} code=do_not_honor"),
    ], rng)
    chatter(sc, pdf, start, NOW, timedelta(minutes=4), [
        ("info", "rendered invoice inv_{n}{n} pages=2 took={ms}0ms"),
        ("warn", "font 'Inter-Medium' missing, falling back to DejaVuSans"),
    ], rng)
    for pod_obj in coredns.pods:
        pod_name = pod_obj["metadata"]["name"]
        at = start + timedelta(seconds=rng.randint(0, 60))
        while at < NOW:
            client = f"10.42.{rng.randint(1, 4)}.{rng.randint(11, 40)}:{rng.randint(32768, 60999)}"
            query = rng.choice(["A IN api.stripe.com.billing.svc.cluster.local.",
                                "AAAA IN invoice-pdf.billing.svc.cluster.local.",
                                "A IN telemetry.corp.example.net.svc.cluster.local."])
            flags = "qr,aa,rd"
            if at >= CLEANUP and rng.random() < 0.5:
                query, flags = f"A IN {ALIAS}.", "qr,rd,ra"
            line = (f'[INFO] {client} - {rng.randint(1, 65535)} "{query} udp '
                    f'{rng.randint(40, 90)} false 512" NXDOMAIN {flags} '
                    f"{rng.randint(140, 190)} 0.000{rng.randint(100, 999)}s")
            sc.both(at, service="coredns", ns="kube-system", pod=pod_name, container="coredns",
                    level="info", message=line, pod_line=line)
            at += timedelta(seconds=rng.randint(20, 90))
