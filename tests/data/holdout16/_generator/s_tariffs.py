"""Energy supplier: the switching quote on the website fails for most visitors since about
14:20. At 14:21 a developer applied the tariff-engine Service from a feature branch that
prepares a port scheme for a new sidecar: its targetPort became 9090, where nothing
listens (tariff-engine serves on 8080 `http`, metrics on 9102). Endpoints keep the ready
pods but with port 9090, so quote-web's calls to the ClusterIP are refused. The tariff-
engine pods are healthy and Ready (their probes go to 8080 directly) and their request
rate falls to nothing. Culprit: the Service pricing/tariff-engine (network).

Red herrings: tariff-engine 4.12.0 rolled out 43 minutes before the onset (same
namespace, healthy), quote-web's ERROR lines for unknown meter numbers all day, the meter
ingester's consumer-lag warnings, an old OOMKilled restart of the billing run in another
namespace."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import PCtr, aks_nodes, set_times
from tests.data.holdout2._generator.kit import cpu_seconds, deploy, requests
from tests.data.holdout3._generator.kit3 import chatter, ghosts, log_pod, namespaces, quiet, steady
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, http_probe, iso

from .kit import Incident, ramp

ID = "switching-quotes-failing"
NOW = datetime.fromisoformat("2028-05-16T14:58:00+00:00")
NS = "pricing"
ACR = "voltwiseprod.azurecr.io"


def build() -> Incident:
    s = Incident(
        id=ID, title="Switching quotes failing on the website", now=NOW,
        report="""\
Since ~2:20pm most people who ask for a switching quote on the website get "We couldn't
calculate your tariff right now, please try again". Call centre says the agent tool has
the same problem. Nothing changed on the website today as far as I know.
""",
        truth=truth(
            "network", "Service", NS, "tariff-engine",
            ["targetPort: 9090", "connection refused", "containerPort: 8080", "port: 9090"],
            "The tariff-engine Service was re-applied at 14:21 from a feature branch with "
            "targetPort 9090, a port the tariff-engine pods do not listen on (they serve "
            "on 8080, named http); Endpoints now point at podIP:9090 and every call to the "
            "ClusterIP is refused. Restore targetPort: http (8080) on the Service; the "
            "tariff-engine 4.12.0 rollout is not at fault."))
    set_times(s, 2.0, 60)
    c = s.cluster
    namespaces(s, {"default": 512, "kube-system": 512, NS: 470, "billing": 470,
                   "metering": 455})
    nodes = aks_nodes(s, 4, pool="apps", region="uksouth", instance="Standard_D8as_v5",
                      kubelet="v1.31.7", cpu="8", memory="32863772Ki", alloc_cpu="7820m",
                      alloc_memory="28373548Ki", group="rg-voltwise-prod_aks-voltwise_uksouth",
                      subscription="3f1b7c2e-91d4-4a61-b0e8-5cc7a1e2d9f4", days=6.1)
    change = NOW - timedelta(minutes=36, seconds=23)
    broken = ramp(change, 0.5)

    # ---- tariff-engine: rolled to 4.12.0 at 13:38, healthy; its Service re-applied 14:21
    roll = change - timedelta(minutes=43)
    te = PCtr("tariff-engine", f"{ACR}/pricing/tariff-engine:4.12.0", port=8080,
              ports=[("http", 8080, "TCP"), ("metrics", 9102, "TCP")],
              requests={"cpu": "400m", "memory": "768Mi"}, limits={"memory": "1Gi"},
              env={"TARIFF_TABLES": "/etc/tariffs/2028-q2", "WHOLESALE_FEED":
                   "http://wholesale-prices.pricing.svc:8080"},
              readiness=http_probe("/healthz/ready", 8080),
              liveness=http_probe("/healthz/live", 8080, delay=20, period=15))
    work, engines = deploy(s, NS, "tariff-engine", [te], replicas=3, nodes=nodes, revision=29,
                           rollout=roll, born=lambda i: roll + timedelta(seconds=4 + 38 * i),
                           service=None, old=(28, s.ago(days=8, hours=3), [PCtr(
                               "tariff-engine", f"{ACR}/pricing/tariff-engine:4.11.3")]))
    old_gone = ghosts(s, work.revisions[0], nodes, [s.ago(days=8, hours=3) + timedelta(
        seconds=25 * i) for i in range(3)], [roll + timedelta(seconds=40 + 38 * i)
                                            for i in range(3)])
    svc = c.service(NS, "tariff-engine", {"app.kubernetes.io/name": "tariff-engine"},
                    port=80, target=9090, created=s.ago(days=410),
                    labels={"app.kubernetes.io/name": "tariff-engine",
                            "app.kubernetes.io/part-of": "pricing"})
    applied = ('{"apiVersion":"v1","kind":"Service","metadata":{"annotations":{},"labels":'
               '{"app.kubernetes.io/name":"tariff-engine","app.kubernetes.io/part-of":'
               '"pricing"},"name":"tariff-engine","namespace":"pricing"},"spec":{"ports":'
               '[{"name":"http","port":80,"protocol":"TCP","targetPort":9090}],"selector":'
               '{"app.kubernetes.io/name":"tariff-engine"}}}\n')
    svc["metadata"]["annotations"] = {
        "kubectl.kubernetes.io/last-applied-configuration": applied}
    svc["metadata"]["managedFields"] = [
        {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {
            "f:internalTrafficPolicy": {}, "f:sessionAffinity": {}, "f:type": {}}},
         "manager": "helm", "operation": "Update", "time": iso(s.ago(days=410))},
        {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {
            "f:metadata": {"f:annotations": {
                ".": {}, "f:kubectl.kubernetes.io/last-applied-configuration": {}}},
            "f:spec": {"f:ports": {'k:{"port":80,"protocol":"TCP"}': {
                ".": {}, "f:name": {}, "f:port": {}, "f:protocol": {}, "f:targetPort": {}}},
                "f:selector": {}}},
         "manager": "kubectl-client-side-apply", "operation": "Update",
         "time": iso(change)}]
    quiet(s, engines, "tariff-engine", 690)
    for pod in engines + old_gone:
        requests(s, pod, "tariff-engine", rps=lambda t: 5.4 * (1 - broken(t)), codes={
            "200": lambda t: 0.998, "422": lambda t: 0.002},
            median=lambda t: 0.085, buckets=(0.05, 0.1, 0.25, 0.5, 1.0, 2.5))
        cpu_seconds(s, pod, "tariff-engine", lambda t: 0.04 + 0.31 * (1 - broken(t)))
    calc = [("info", "quote Q-4471920 calculated: 2 fuels, 3 tariffs, 71ms", {}),
            ("info", "quote Q-4471934 calculated: electricity only, 2 tariffs, 58ms", {}),
            ("info", "wholesale price curve refreshed (day-ahead, 48 half-hours)", {})]
    for ghost in old_gone:
        log_pod(s, ghost, "tariff-engine", "tariff-engine", calc, 12)
    chatter(s, engines, "tariff-engine", "tariff-engine", [
        *calc, ("info", "tariff-engine 4.12.0 started, 2028-q2 tables loaded (412 tariffs)",
                {})], 60, end=change)
    chatter(s, engines, "tariff-engine", "tariff-engine", [
        ("info", "wholesale price curve refreshed (day-ahead, 48 half-hours)", {}),
        ("info", "tariff table cache: 412 tariffs, 0 evictions", {})], 9, start=change)

    # ---- quote-web: the caller named in the report
    qw = Ctr("quote-web", f"{ACR}/web/quote-web:2.31.0", port=3000,
             requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "512Mi"},
             env={"TARIFF_ENGINE_URL": "http://tariff-engine.pricing.svc.cluster.local",
                  "METER_LOOKUP_URL": "http://meter-lookup.metering.svc:8080"},
             readiness=http_probe("/api/health", 3000))
    _, webs = steady(s, NS, "quote-web", [qw], nodes=nodes, replicas=4, revision=63,
                     rollout=s.ago(days=2, hours=19), offset=1, service=80)
    quiet(s, webs, "quote-web", 188)
    for pod in webs:
        requests(s, pod, "quote-web", rps=lambda t: 3.9, codes={
            "200": lambda t: 0.985 - 0.62 * broken(t), "502": lambda t: 0.6 * broken(t),
            "404": lambda t: 0.015}, median=lambda t: 0.14 - 0.1 * broken(t),
            buckets=(0.05, 0.1, 0.25, 0.5, 1.0, 2.5))
        cpu_seconds(s, pod, "quote-web", lambda t: 0.11)
    meter_err = ("error", "smart meter lookup for MPAN 1200051234567 failed: meter not found "
                 "(404), falling back to manual entry", {"error.type": "MeterNotFound"})
    chatter(s, webs, "quote-web", "quote-web", [
        ("info", "POST /api/quote 200 in 121ms", {"http.response.status_code": 200}),
        ("info", "POST /api/quote 200 in 98ms", {"http.response.status_code": 200}),
        meter_err], 90, end=change)
    for pod in webs:
        port = 30000 + s.rng.randrange(20000)
        ip = svc["spec"]["clusterIP"]
        chatter(s, [pod], "quote-web", "quote-web", [
            ("error", "tariff-engine request failed: POST http://tariff-engine.pricing.svc."
             f"cluster.local/v1/quotes: dial tcp {ip}:80: connect: connection refused",
             {"error.type": "ECONNREFUSED", "http.response.status_code": 502}),
            ("error", f"POST /api/quote 502 in 4ms: upstream tariff-engine: connect "
             f"ECONNREFUSED {ip}:80", {"http.response.status_code": 502}),
            ("info", "POST /api/quote 200 in 12ms (cached quote for postcode SW9 8**)",
             {"http.response.status_code": 200}),
            ("info", f"keep-alive socket to {ip}:80 closed after {port % 90}s idle", {}),
            meter_err], 32, start=change + timedelta(seconds=20))

    # ---- wholesale prices, the meter ingester, the billing run
    wp = Ctr("wholesale-prices", f"{ACR}/pricing/wholesale-prices:1.8.4", port=8080,
             requests={"cpu": "100m", "memory": "256Mi"}, limits={"memory": "384Mi"},
             readiness=http_probe("/ready"))
    _, wps = steady(s, NS, "wholesale-prices", [wp], nodes=nodes, replicas=2, revision=14,
                    rollout=s.ago(days=5, hours=2), offset=2, service=8080)
    quiet(s, wps, "wholesale-prices", 140)
    chatter(s, wps, "wholesale-prices", "wholesale-prices", [
        ("info", "day-ahead auction results imported: 48 periods, mean 71.40 GBP/MWh", {}),
        ("info", "GET /curve/day-ahead 200 in 6ms", {})], 30)
    mi = Ctr("meter-ingest", f"{ACR}/metering/meter-ingest:6.2.0", port=8080,
             requests={"cpu": "300m", "memory": "512Mi"}, limits={"memory": "768Mi"})
    _, mis = steady(s, "metering", "meter-ingest", [mi], nodes=nodes, replicas=3, revision=40,
                    rollout=s.ago(days=1, hours=7), offset=3, service=None)
    quiet(s, mis, "meter-ingest", 455)
    chatter(s, mis, "meter-ingest", "meter-ingest", [
        ("warn", "consumer lag 1184 on topic meter-reads-hh partition 7, catching up", {}),
        ("info", "committed 5000 half-hourly reads (batch 88120)", {}),
        ("warn", "consumer group rebalance in progress, pausing fetch for 2s", {})], 70)
    ml = Ctr("meter-lookup", f"{ACR}/metering/meter-lookup:3.3.1", port=8080,
             requests={"cpu": "100m", "memory": "192Mi"}, limits={"memory": "256Mi"},
             readiness=http_probe("/ready"))
    _, mls = steady(s, "metering", "meter-lookup", [ml], nodes=nodes, replicas=2, revision=22,
                    rollout=s.ago(days=4, hours=9), offset=1, service=8080)
    quiet(s, mls, "meter-lookup", 120)
    br = Ctr("invoice-builder", f"{ACR}/billing/invoice-builder:9.0.6", port=8080,
             requests={"cpu": "500m", "memory": "1Gi"}, limits={"memory": "1536Mi"})
    _, brs = steady(s, "billing", "invoice-builder", [br], nodes=nodes, replicas=2, revision=71,
                    rollout=s.ago(days=3, hours=22), service=None,
                    restarted={0: (s.ago(days=1, hours=16), "OOMKilled", 137)})
    quiet(s, brs, "invoice-builder", 980)
    chatter(s, brs, "invoice-builder", "invoice-builder", [
        ("info", "invoice batch B-20280516-07 built: 2200 accounts", {}),
        ("warn", "account A-0071124 has no tariff end date, using contract default", {})], 40)
    return s
