"""Flower delivery: checkout takes ages because the delivery quote step hangs. delivery-quote
prices each basket with the external courier partner's rate API (api.parcelroute.eu). Since
about 13:05 that API answers in 3-5 s instead of 150 ms and a fifth of the calls hit the
5 s client timeout; delivery-quote itself is idle (low CPU, no restarts, no change) and its
own latency follows the partner's. The signal is mostly in the client metrics by peer. Red
herrings: bouquet-catalog 12.4.0 rolled out 1 h 40 min ago in the same namespace, a few
normal Redis timeouts of delivery-quote, log-agent warnings about a full buffer."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import alive, daemonset, set_times
from tests.data.holdout2._generator.kit import app_counter, cpu_seconds, requests
from tests.data.holdout3._generator.kit3 import chatter, namespaces, quiet, steady
from tests.data.holdout4._generator.kit4 import ramp
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, http_probe
from tests.scenario_tools.telemetry import histogram_points

from .kit10 import Incident, NodeKind, provider_nodes

ID = "flower-checkout-crawling"
NOW = datetime.fromisoformat("2028-02-13T13:52:00+00:00")
NS = "bouquets"
ECR = "512093348817.dkr.ecr.eu-north-1.amazonaws.com"
PEER = "api.parcelroute.eu"
BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


def build() -> Incident:
    s = Incident(
        id=ID, title="Flower shop checkout very slow", now=NOW,
        report="""\
Checkout on the flower shop is crawling since lunchtime, the "Calculating delivery..."
spinner sits there for several seconds and some people give up. Day before Valentine's,
so this is really bad timing. No errors on the status page.
""",
        truth=truth(
            "dependency_failure", "Deployment", NS, "delivery-quote",
            [PEER, "timed out after 5s", "http_client_request_duration_seconds"],
            "The courier partner's rate API api.parcelroute.eu slowed down from ~150 ms to "
            "3-5 s around 13:05 and times out on about a fifth of the calls; "
            "delivery-quote waits on it for every basket, so checkout waits too. "
            "delivery-quote itself is healthy. Raise it with the partner, meanwhile serve "
            "cached or flat-rate delivery prices (shorter timeout, circuit breaker)."))
    set_times(s, 3.0, 60)
    namespaces(s, {"default": 400, "kube-system": 400, NS: 380, "logging": 380})
    kind = NodeKind("m7i.2xlarge", "8", "32386856Ki", "7910m", "31373096Ki",
                    "v1.32.3-eks-473151a", "6.1.129", "Bottlerocket OS 1.36.0 (aws-k8s-1.32)",
                    runtime="containerd://1.7.27+bottlerocket")
    nodes = provider_nodes(s, "eks-auto", 4, kind, days=4.3, group="general-purpose")
    slow = NOW - timedelta(minutes=47)

    def bad(t: int) -> float:
        return ramp(t, slow, 6)

    def traffic(t: int) -> float:  # Valentine's eve: busier every hour
        return 1.6 + 0.5 * ramp(t, NOW - timedelta(hours=3), 180)

    # ---- delivery-quote, unchanged for days
    quote = Ctr("delivery-quote", f"{ECR}/bouquets/delivery-quote:2.4.7", port=8080,
                requests={"cpu": "250m", "memory": "256Mi"}, limits={"memory": "512Mi"},
                env={"RATES_API": f"https://{PEER}/v3", "RATES_TIMEOUT": "5s",
                     "RATES_RETRIES": "1", "REDIS_URL": "redis://quote-cache.bouquets.svc:6379"},
                readiness=http_probe("/ready"), liveness=http_probe("/live", delay=15))
    _, quotes = steady(s, NS, "delivery-quote", [quote], nodes=nodes, replicas=3,
                       revision=33, rollout=s.ago(days=3, hours=2, minutes=14))
    fam = s.metrics.family("http_client_request_duration_seconds", "histogram",
                           "Outgoing HTTP request latency in seconds.", buckets=BUCKETS)
    for pod in quotes:
        meta = pod["metadata"]
        quiet(s, [pod], "delivery-quote", 164)
        cpu_seconds(s, pod, "delivery-quote", lambda t: 0.05 * traffic(t))

        def median(t: int) -> float:
            return 0.16 + 3.6 * bad(t)
        requests(s, pod, "delivery-quote", rps=lambda t: 1.9 * traffic(t), codes={
            "200": lambda t: 0.996 - 0.012 * bad(t), "504": lambda t: 0.0003 + 0.012 * bad(t),
            "400": lambda t: 0.0037}, median=lambda t: median(t) + 0.02, buckets=BUCKETS)
        labels = {"namespace": NS, "pod": meta["name"], "service": "delivery-quote",
                  "peer": PEER, "method": "POST"}
        times = alive(s, pod)
        fam.add(labels, histogram_points(times, BUCKETS, lambda t: 2.1 * traffic(t), median,
                                         s.rng))
        for outcome, share in (("success", lambda t: 0.999 - 0.2 * bad(t)),
                               ("timeout", lambda t: 0.001 + 0.2 * bad(t))):
            app_counter(s, "http_client_requests_total", {**labels, "outcome": outcome}, times,
                        lambda t, f=share: 2.1 * traffic(t) * f(t),
                        "Outgoing HTTP requests by outcome.")
        cache = {"namespace": NS, "pod": meta["name"], "service": "delivery-quote",
                 "peer": "quote-cache", "method": "GET"}
        fam.add(cache, histogram_points(times, BUCKETS, lambda t: 3.0 * traffic(t),
                                        lambda t: 0.002, s.rng))
    chatter(s, quotes, "delivery-quote", "delivery-quote", [
        ("info", f"quote basket B-7718{n} zone 1040 same-day: 6.90 EUR ({PEER} 142ms)", {})
        for n in range(3)] + [
        ("warn", "redis GET quote:zone:1040:sameday timed out after 50ms, recomputing", {}),
    ], 150, end=slow)
    chatter(s, quotes, "delivery-quote", "delivery-quote", [
        ("warn", f"POST https://{PEER}/v3/rates took 4.31s", {"event.duration": 4310000000}),
        ("warn", f"POST https://{PEER}/v3/rates took 3.87s", {"event.duration": 3870000000}),
        ("error", f"POST https://{PEER}/v3/rates timed out after 5s (attempt 1/2)",
         {"error.type": "context.DeadlineExceeded"}),
        ("error", f"POST https://{PEER}/v3/rates timed out after 5s (attempt 2/2), answering "
         "504 to checkout", {"error.type": "context.DeadlineExceeded",
                             "http.response.status_code": 504}),
        ("info", f"quote basket B-77301 zone 1190 next-day: 4.90 EUR ({PEER} 3912ms)", {}),
    ], 260, start=slow + timedelta(minutes=2))

    # ---- checkout, which waits for the quote
    checkout = Ctr("checkout", f"{ECR}/bouquets/checkout:9.2.1", port=8080,
                   requests={"cpu": "300m", "memory": "384Mi"}, limits={"memory": "768Mi"},
                   env={"QUOTE_URL": "http://delivery-quote.bouquets.svc"},
                   readiness=http_probe("/ready"))
    _, checkouts = steady(s, NS, "checkout", [checkout], nodes=nodes, replicas=3, revision=71,
                          rollout=s.ago(days=1, hours=21), offset=1)
    for pod in checkouts:
        quiet(s, [pod], "checkout", 301)
        requests(s, pod, "checkout", rps=lambda t: 1.4 * traffic(t), codes={
            "200": lambda t: 0.99 - 0.01 * bad(t), "504": lambda t: 0.0002 + 0.01 * bad(t),
            "409": lambda t: 0.0098}, median=lambda t: 0.31 + 3.7 * bad(t), buckets=BUCKETS)
    chatter(s, checkouts, "checkout", "checkout", [
        ("info", "order FL-20280213-8812 confirmed, delivery 2028-02-14 morning", {}),
        ("warn", "delivery quote took 4.4s for cart 77130", {}),
    ], 70, start=slow + timedelta(minutes=3))

    # ---- red herrings
    roll = NOW - timedelta(hours=1, minutes=40)
    cat = Ctr("bouquet-catalog", f"{ECR}/bouquets/bouquet-catalog:12.4.0", port=8080,
              requests={"cpu": "200m", "memory": "384Mi"}, limits={"memory": "768Mi"},
              readiness=http_probe("/ready"))
    _, cats = steady(s, NS, "bouquet-catalog", [cat], nodes=nodes, replicas=2, revision=140,
                     rollout=roll, offset=2,
                     old=(139, s.ago(days=2), [Ctr("bouquet-catalog",
                                                  f"{ECR}/bouquets/bouquet-catalog:12.3.2")]))
    quiet(s, cats, "bouquet-catalog", 402)
    for pod in cats:
        requests(s, pod, "bouquet-catalog", rps=lambda t: 4.2 * traffic(t), codes={
            "200": lambda t: 0.998, "404": lambda t: 0.002}, median=lambda t: 0.04,
            buckets=BUCKETS)
    chatter(s, cats, "bouquet-catalog", "bouquet-catalog", [
        ("info", "bouquet-catalog 12.4.0 started, valentine collection enabled", {}),
        ("warn", "image variant 'red-roses-24/xl.webp' missing, serving large", {}),
        ("info", "GET /v1/bouquets?collection=valentine 200 in 38ms",
         {"http.response.status_code": 200}),
    ], 90, start=roll)
    agent = Ctr("fluent-bit", "cr.fluentbit.io/fluent/fluent-bit:3.2.6", port=2020,
                requests={"cpu": "50m", "memory": "64Mi"}, limits={"memory": "128Mi"})
    _, agents = daemonset(s, "logging", "fluent-bit", [agent], node_list=nodes, generation=9,
                          since=s.ago(days=3, hours=7))
    quiet(s, agents, "fluent-bit", 41)
    chatter(s, agents, "fluent-bit", "fluent-bit", [
        ("warn", "[input:tail:tail.0] mem buf overlimit, pausing", {}),
        ("info", "[input:tail:tail.0] resume (mem buf overlimit)", {}),
        ("warn", "[output:opensearch:opensearch.0] HTTP status=429 URI=/_bulk, retrying", {}),
    ], 80)
    return s
