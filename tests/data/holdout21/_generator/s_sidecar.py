"""Trams: card and QR validators at the doors are slow to beep during the morning rush.
validator-api's pods carry an Istio sidecar whose CPU limit is pinned to 200m by the pod
annotation sidecar.istio.io/proxyCPULimit (set when the service was small). With the rush
traffic the istio-proxy container needs more than 0.2 cores, the CFS quota throttles it
most periods and every validation waits in the proxy; the application container uses a
fraction of its 2-core limit and is not throttled. The signal is in metrics (throttled
periods of istio-proxy). Red herrings: fare-rules 4.3.0 rolled out 41 min before the
onset in the same namespace, an ERROR about rejected blacklist entries in the validator's
own logs, an OOM restart of one validator pod yesterday, and a report that suspects the
card-payment backend."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout2._generator.kit import requests, working_set
from tests.data.holdout3._generator.kit3 import chatter, ghosts, log_pod, quiet, steady
from tests.scenario_tools.common import (
    MIB,
    container_metrics,
    kube_system,
    namespaces,
    nodes,
    truth,
)
from tests.scenario_tools.kube import Ctr, http_probe
from tests.scenario_tools.parts import readiness_blip

from .kit import Incident

ID = "tram-validators-slow-beep"
NOW = datetime.fromisoformat("2027-09-21T07:58:00+00:00")
NS = "fares"
REG = "harbor.citytransit.example/fares"
LIMIT = 0.2  # cores of istio-proxy
PER_RPS = 0.0019  # proxy cores per request a second


def rps(t: int) -> float:
    """Validations a second on one pod: night level, then the rush from 06:15 to 07:30."""
    start = NOW.replace(hour=6, minute=15).timestamp()
    end = NOW.replace(hour=7, minute=30).timestamp()
    share = min(1.0, max(0.0, (t - start) / (end - start)))
    return 28 + 114 * share


def demand(t: int) -> float:
    return rps(t) * PER_RPS


def throttled(t: int) -> float:
    return min(0.88, max(0.015, (demand(t) / LIMIT - 0.72) * 1.3))


def median(t: int) -> float:
    return 0.028 + 1.1 * max(0.0, demand(t) / LIMIT - 0.85)


def build() -> Incident:
    s = Incident(
        id=ID, title="Tram validators slow to beep in the morning rush", now=NOW,
        report="""\
Drivers and the control room report the ticket validators on trams take several seconds
to beep (green) this morning, queues at the doors. Bank card taps seem worst, maybe the
card payment side again? Started getting bad around 07:20.
""",
        truth=truth(
            "cpu_throttling", "Deployment", NS, "validator-api",
            ["istio-proxy", "container_cpu_cfs_throttled_periods_total",
             "sidecar.istio.io/proxyCPULimit", "200m"],
            "The istio-proxy sidecar of validator-api is limited to 200m CPU by the "
            "sidecar.istio.io/proxyCPULimit annotation; with the morning rush it needs about "
            "0.27 cores a pod and is throttled in most CFS periods, so every validation waits "
            "in the proxy. Raise (or remove) the sidecar CPU limit and add validator-api "
            "replicas for the rush; the application container and the card backend are "
            "fine."))
    namespaces(s, NS, "payments", "monitoring")
    node_list = nodes(s, 4, subnet=36, region="eu-central-1", pool="transit-apps",
                      instance="m6a.2xlarge", cpu="8", memory="32Gi",
                      allocatable_cpu="7910m", allocatable_memory="29948Mi", days=4.6)
    kube_system(s, node_list)

    # ---- validator-api with its sidecar
    app = Ctr("validator-api", f"{REG}/validator-api:11.4.2", port=8080,
              requests={"cpu": "500m", "memory": "512Mi"},
              limits={"cpu": "2", "memory": "768Mi"},
              env={"CARD_GATEWAY_URL": "http://card-gateway.payments.svc:8080",
                   "BLACKLIST_SYNC_INTERVAL": "5m"},
              readiness=http_probe("/ready"), liveness=http_probe("/live", delay=20, period=15))
    proxy = Ctr("istio-proxy", "docker.io/istio/proxyv2:1.24.3", port=15090,
                port_name="http-envoy-prom", requests={"cpu": "100m", "memory": "128Mi"},
                limits={"cpu": "200m", "memory": "1Gi"},
                args=["proxy", "sidecar", "--domain", "$(POD_NAMESPACE).svc.cluster.local",
                      "--proxyLogLevel=warning", "--log_output_level=default:info"],
                readiness=http_probe("/healthz/ready", 15021, delay=0, period=15, timeout=3,
                                     failures=4))
    init = Ctr("istio-init", "docker.io/istio/proxyv2:1.24.3", port=None,
               requests={"cpu": "10m", "memory": "40Mi"}, limits={"cpu": "2", "memory": "1Gi"},
               args=["istio-iptables", "-p", "15001", "-z", "15006", "-u", "1337", "-m",
                     "REDIRECT", "-i", "*", "-x", "", "-b", "*", "-d", "15090,15021,15020"])
    oom_pod = 1
    oom_at = s.ago(hours=21, minutes=14)
    rollout = s.ago(days=2, hours=15)
    _, pods = steady(s, NS, "validator-api", [app, proxy], nodes=node_list, replicas=3,
                     revision=33, rollout=rollout, init=[init],
                     restarted={oom_pod: (oom_at, "OOMKilled", 137)},
                     annotations={"sidecar.istio.io/proxyCPULimit": "200m",
                                  "sidecar.istio.io/proxyCPU": "100m",
                                  "prometheus.io/scrape": "true",
                                  "prometheus.io/port": "15020"},
                     template_labels={"security.istio.io/tlsMode": "istio",
                                      "service.istio.io/canonical-name": "validator-api"})
    for i, pod in enumerate(pods):
        container_metrics(s, pod, "validator-api", memory=lambda t: 410 * MIB,
                          cpu=lambda t: 0.06 + rps(t) * 0.0024, restart_base=int(i == oom_pod),
                          limit_memory=768 * MIB, limit_cpu=2.0, throttle=lambda t: 0.0)
        container_metrics(s, pod, "istio-proxy", memory=lambda t: 96 * MIB,
                          cpu=lambda t: min(LIMIT * 0.985, demand(t)),
                          limit_memory=1024 * MIB, limit_cpu=LIMIT, throttle=throttled)
        requests(s, pod, "validator-api", rps=rps, codes={
            "200": lambda t: 0.991, "402": lambda t: 0.008, "503": lambda t: 0.001},
            median=median, buckets=(0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5))
    rush = NOW.replace(hour=7, minute=5)
    entries = [
        ("info", "validation ok media=qr ticket=T-88213410 vehicle=tram-2217 door=2", {}),
        ("info", "validation ok media=emv token=5f21ab vehicle=tram-2204 door=1", {}),
        ("info", "validation ok media=desfire card=4410-1932 vehicle=tram-2231 door=3", {}),
        ("warn", "validation refused media=qr ticket=T-88190021: expired 06:59",
         {"http.response.status_code": 402}),
    ]
    chatter(s, pods, "validator-api", "validator-api", entries, 210, start=s.ago(hours=3))
    chatter(s, pods, "validator-api", "validator-api", [
        ("error", "blacklist sync: 3 entries rejected (bad checksum), keeping previous list",
         {"error.type": "ChecksumMismatch"}),
    ], 12, start=s.ago(hours=3))
    chatter(s, pods, "validator-api", "validator-api", [
        ("warn", "validation vehicle=tram-2217 door=2 took 1840ms end to end (client "
         "reported)", {}),
        ("info", "validation ok media=emv token=8c02de vehicle=tram-2240 door=2", {}),
    ], 40, start=rush)

    # ---- red herrings: fare-rules rollout, the card backend, a probe blip elsewhere
    onset = NOW.replace(hour=7, minute=12)
    roll = onset - timedelta(minutes=41)
    rules = Ctr("fare-rules", f"{REG}/fare-rules:4.3.0", port=8080,
                requests={"cpu": "100m", "memory": "256Mi"}, limits={"memory": "384Mi"},
                readiness=http_probe("/ready"))
    fr, fr_pods = steady(s, NS, "fare-rules", [rules], nodes=node_list, replicas=2,
                         revision=58, rollout=roll, offset=1,
                         old=(57, s.ago(days=9), [Ctr("fare-rules",
                                                     f"{REG}/fare-rules:4.2.2")]))
    old = ghosts(s, fr.revisions[0], node_list, [s.ago(days=3, minutes=-2 * i)
                                                 for i in range(2)],
                 [roll + timedelta(seconds=30 + 30 * i) for i in range(2)])
    quiet(s, fr_pods, "fare-rules", 180)
    for g in old:
        working_set(s, g, "fare-rules", lambda t: 176 * MIB)
    for pod in [*fr_pods, *old]:
        requests(s, pod, "fare-rules", rps=lambda t: 0.4, codes={"200": lambda t: 1.0})
    chatter(s, fr_pods, "fare-rules", "fare-rules", [
        ("info", "fare-rules 4.3.0: loaded tariff 2027-09 (611 zones, 48 products)", {}),
        ("warn", "product P-STUDENT-SEMESTER has no price for zone C, using zone B price", {}),
    ], 30, start=roll + timedelta(seconds=20))
    for g in old:
        log_pod(s, g, "fare-rules", "fare-rules", [
            ("info", "tariff lookup product=P-SINGLE zones=AB 2.90 EUR", {})], 8)
    card = Ctr("card-gateway", f"{REG}/card-gateway:6.0.9", port=8080,
               requests={"cpu": "250m", "memory": "512Mi"}, limits={"memory": "768Mi"},
               readiness=http_probe("/healthz"))
    _, cards = steady(s, "payments", "card-gateway", [card], nodes=node_list, replicas=2,
                      revision=21, rollout=s.ago(days=5, hours=2))
    quiet(s, cards, "card-gateway", 350)
    for pod in cards:
        requests(s, pod, "card-gateway", rps=lambda t: rps(t) * 0.6, codes={
            "200": lambda t: 0.993, "402": lambda t: 0.006, "504": lambda t: 0.001},
            median=lambda t: 0.062, buckets=(0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5))
    chatter(s, cards, "card-gateway", "card-gateway", [
        ("info", "EMV authorisation ok acquirer=nets amount=3.20 EUR 58ms", {}),
        ("warn", "acquirer nets slow response 1.2s (token 77ab12), within SLA", {}),
    ], 80, start=s.ago(hours=3))
    readiness_blip(s, "monitoring", "tram-telemetry-ui", f"{REG}/tram-telemetry-ui:0.9.4",
                   node_list, port=3000, path="/api/health", minutes_ago=35)
    return s
