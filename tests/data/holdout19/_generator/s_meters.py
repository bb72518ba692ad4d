"""Water utility: the self-service portal cannot show a bill estimate. At 07:49 the platform
team applied the NetworkPolicy metering/ingress-from-collectors (a hardening ticket): it
selects every pod of the metering namespace and admits ingress only from the collectors
namespace and from ingress-nginx. billing/invoice-builder reads meter readings from
reading-ingest.metering.svc, so its calls now hang and end in "i/o timeout"; invoice-builder
returns 504 for the estimate endpoints. reading-ingest itself is healthy: the collectors
still post readings. Red herrings: tariff-catalog 4.2.0 rolled out in billing 40 minutes
before the onset, an old OOM restart of payment-reminders, and invoice-builder's own noisy
"circuit breaker" and PDF warnings."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.scenario_tools.common import Story as Base
from tests.scenario_tools.common import (
    const,
    kube_system,
    namespaces,
    nodes,
    truth,
)
from tests.scenario_tools.kube import Ctr, ended, http_probe, running
from tests.scenario_tools.parts import app, neighbour, rollout
from tests.scenario_tools.telemetry import spread

from .kit19 import lines, network_policy

ID = "bill-estimates-timing-out"
NOW = datetime.fromisoformat("2027-03-16T08:41:00+00:00")
REG = "registry.gitlab.com/aquanorte/platform"
POLICY = "ingress-from-collectors"


def build() -> Base:
    s = Base(
        id=ID, title="Bill estimates time out on the customer portal", now=NOW,
        report="""\
Since roughly 07:50 the customer portal shows "we couldn't calculate your estimate, try
later" for most people. Paying existing bills still works and logins are fine. invoice
pods are all up and green in Argo. Billing shipped the tariff change this morning, could
that be it?
""",
        truth=truth(
            "network", "NetworkPolicy", "metering", POLICY,
            [POLICY, "i/o timeout", "reading-ingest.metering.svc", "504"],
            "The NetworkPolicy metering/ingress-from-collectors, applied at 07:49, selects "
            "every pod in metering and admits ingress only from the collectors namespace and "
            "ingress-nginx, so invoice-builder in billing can no longer reach reading-ingest "
            "(i/o timeout) and estimates fail with 504. Add an ingress rule for the billing "
            "namespace (app invoice-builder) or roll the policy back."))
    c = s.cluster
    namespaces(s, "billing", "metering", "collectors", "ingress-nginx")
    pool = nodes(s, 5, subnet=41, region="eu-south-2", instance="m7i.xlarge", days=4.3)
    kube_system(s, pool)
    onset = NOW - timedelta(minutes=51, seconds=40)
    applied = onset - timedelta(seconds=25)

    # ---- the policy that nobody in billing knows about
    network_policy(s, "metering", POLICY, {
        "podSelector": {},
        "policyTypes": ["Ingress"],
        "ingress": [
            {"from": [{"namespaceSelector": {"matchLabels": {
                "kubernetes.io/metadata.name": "collectors"}}}],
             "ports": [{"protocol": "TCP", "port": 8080}]},
            {"from": [{"namespaceSelector": {"matchLabels": {
                "kubernetes.io/metadata.name": "ingress-nginx"}}}]},
        ]}, created=applied, labels={"app.kubernetes.io/managed-by": "argocd",
                                     "security.aquanorte.io/ticket": "SEC-2291"},
        annotations={"argocd.argoproj.io/tracking-id":
                     "platform-netpol:networking.k8s.io/NetworkPolicy:metering/" + POLICY})
    network_policy(s, "billing", "allow-same-namespace", {
        "podSelector": {}, "policyTypes": ["Ingress"],
        "ingress": [{"from": [{"podSelector": {}}]},
                    {"from": [{"namespaceSelector": {"matchLabels": {
                        "kubernetes.io/metadata.name": "ingress-nginx"}}}]}]},
        created=s.ago(days=210))

    # ---- reading-ingest: healthy, the collectors keep posting
    ingest_work, ingest = app(
        s, "metering", "reading-ingest", f"{REG}/reading-ingest:2.14.3", pool, replicas=3,
        revision=27, rps=const(38.0), codes={"202": const(0.993), "400": const(0.007)},
        median=const(0.021), cpu=const(0.22), memory_mib=310, rollout_at=s.ago(days=3, hours=5))
    svc = next(o for o in c.objects_of("Service") if o["metadata"]["name"] == "reading-ingest")
    svc_ip = svc["spec"]["clusterIP"]
    lines(s, ingest, "reading-ingest", "reading-ingest", [
        ("info", "batch accepted: 412 readings from gateway GW-ALC-0193", {}),
        ("info", "batch accepted: 388 readings from gateway GW-MUR-0027", {}),
        ("warn", "reading rejected: meter WM-77120431 reported negative delta -3 l",
         {"error.type": "ValidationError"}),
        ("info", "compaction of partition 2027-03-15 done in 4.1s", {}),
    ], 160)

    # ---- invoice-builder: the victim, healthy itself
    fail = onset.timestamp()

    def ok(t: int) -> float:
        return 0.995 if t < fail else 0.41

    def timeout(t: int) -> float:
        return 0.0 if t < fail else 0.585

    def median(t: int) -> float:
        return 0.14 if t < fail else 1.9

    inv_work, inv = app(
        s, "billing", "invoice-builder", f"{REG}/invoice-builder:7.3.1", pool, replicas=3,
        revision=58, rps=const(9.0), codes={"200": ok, "504": timeout,
                                            "404": const(0.005)},
        median=median, cpu=const(0.18), memory_mib=420,
        env={"READINGS_URL": "http://reading-ingest.metering.svc.cluster.local/v1/readings",
             "TARIFFS_URL": "http://tariff-catalog.billing.svc.cluster.local",
             "READINGS_TIMEOUT": "5s"},
        rollout_at=s.ago(days=2, hours=20))
    _ = ingest_work, inv_work
    for when in spread(s.rng, onset, NOW - timedelta(seconds=20), 150):
        pod = s.rng.choice(inv)
        account = f"CU-{s.rng.randrange(100000, 999999)}"
        s.logs.add(when, "error",
                   f"estimate for {account} failed: GET http://reading-ingest.metering.svc."
                   f"cluster.local/v1/readings?account={account}&from=2027-02-01: dial tcp "
                   f"{svc_ip}:80: i/o timeout",
                   namespace="billing", pod=pod["metadata"]["name"],
                   container="invoice-builder", service="invoice-builder",
                   node=pod["spec"]["nodeName"], error__type="net.OpError",
                   http__response__status_code=504, trace__id=s.cluster.hexid(
                       "trace", str(when), length=32))
    lines(s, inv, "invoice-builder", "invoice-builder", [
        ("info", "GET /v2/invoices/INV-2027-0311-88213 200 96ms",
         {"http.response.status_code": 200}),
        ("info", "payment intent pi_3QxR2 matched to invoice INV-2027-0302-11408", {}),
        ("warn", "circuit breaker 'pdf-renderer' half-open after 30s, probing", {}),
        ("error", "ALERT pdf-renderer p99 above 2s for template water-v3 (informational, "
         "rendering continues)", {}),
    ], 140)

    # ---- red herring: tariff-catalog rolled out 40 minutes before the onset
    def tariff(version: str) -> Ctr:
        return Ctr("tariff-catalog", f"{REG}/tariff-catalog:{version}", port=8080,
                   requests={"cpu": "100m", "memory": "192Mi"}, limits={"memory": "384Mi"},
                   readiness=http_probe("/ready"),
                   liveness=http_probe("/healthz", delay=15, period=20))
    roll = rollout(s, "billing", "tariff-catalog", tariff, old="4.1.2", new="4.2.0",
                   at=onset - timedelta(minutes=40), revision=19, replicas=2, node_list=pool)
    lines(s, roll.new_pods, "tariff-catalog", "tariff-catalog", [
        ("info", "loaded tariff set 2027-Q2 (344 bands, effective 2027-04-01)", {}),
        ("warn", "tariff band DOM-T3 overlaps DOM-T4 for 0.2 m3, using the higher band", {}),
        ("info", "GET /v1/tariffs/current 200 4ms", {"http.response.status_code": 200}),
    ], 60, start=onset - timedelta(minutes=39))

    # ---- red herring: an old OOM restart of payment-reminders
    oom_at = s.ago(days=2, hours=7)
    _, rem = neighbour(s, "billing", "payment-reminders", f"{REG}/payment-reminders:1.9.0",
                       pool, replicas=1, memory_mib=230, restarts={0: running(
                           oom_at + timedelta(seconds=12), restarts=1,
                           last=ended("OOMKilled", 137, oom_at - timedelta(days=1, hours=2),
                                      oom_at))},
                       logs=[("info", "queued 37 reminder emails for run 2027-03-16", {}),
                             ("warn", "SMTP relay returned 421 (try again later), retrying "
                              "in 30s", {})], n_logs=24)
    _ = rem

    # ---- the collectors, still posting fine
    _, col = neighbour(s, "collectors", "lorawan-bridge", f"{REG}/lorawan-bridge:0.22.1",
                       pool, replicas=2, memory_mib=120, rps=3.0,
                       logs=[("info", "uplink from WM-61822019 rssi=-109 snr=-4.5", {}),
                             ("info", "forwarded 412 readings to reading-ingest", {})],
                       n_logs=40)
    _ = col
    return s
