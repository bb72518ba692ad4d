"""Web shop: checkout hangs on the "choose delivery" step. The call chain crosses three
namespaces: checkout-web (storefront) -> shipping-options (fulfilment) -> carrier-rates
(partners) -> the Nordpost rates API on the internet. From 16:02 Nordpost answers slowly
and often not within carrier-rates' 3 s budget; carrier-rates itself is healthy (CPU,
memory, restarts flat; its DHL quotes are fast), but its outbound histogram and timeout
counter show the external API, and the 504s it returns bubble up the chain. The signal is
mainly in metrics; the logs of carrier-rates say little. Red herrings: checkout-web 7.12.0
rolled out 52 min before the onset (the report blames it), redis GET timeouts that
shipping-options logs as ERROR every day, a promo-banner pod whose readiness probe timed
out twice."""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime, timedelta

from tests.data.holdout._generator.base import alive
from tests.data.holdout2._generator.kit import app_counter, cpu_seconds, requests
from tests.data.holdout3._generator.kit3 import chatter, ghosts, log_pod, quiet, steady
from tests.data.holdout4._generator.kit4 import ramp
from tests.scenario_tools.common import kube_system, namespaces, nodes, truth
from tests.scenario_tools.kube import Ctr, http_probe
from tests.scenario_tools.parts import readiness_blip
from tests.scenario_tools.telemetry import histogram_points

from .kit import Incident

ID = "checkout-delivery-step-hanging"
NOW = datetime.fromisoformat("2027-05-14T16:40:00+00:00")
ONSET = NOW - timedelta(minutes=38, seconds=20)
REG = "registry.gitlab.com/hollowbrook/shop"
BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


def slow(t: int) -> float:
    """How bad Nordpost is at t: 0 before the onset, near 1 a few minutes after."""
    return ramp(t, ONSET, 6) * (0.92 + 0.08 * math.sin(t / 410))


def build() -> Incident:
    s = Incident(
        id=ID, title="Checkout hangs at the delivery step", now=NOW,
        report="""\
Customers say checkout spins forever on "choose delivery" and some get "something went
wrong", since around 16:00. We shipped a new checkout-web release this afternoon, might be
that? Conversion dashboard is dropping.
""",
        truth=truth(
            "dependency_failure", "Deployment", "partners", "carrier-rates",
            ["api.nordpost.example", "carrier_upstream_requests_total",
             'outcome="timeout"', "504"],
            "The Nordpost rates API (api.nordpost.example), which carrier-rates calls for "
            "every delivery quote, has been slow since about 16:02 and mostly misses "
            "carrier-rates' 3 s budget; carrier-rates answers 504, which shipping-options and "
            "checkout-web pass on. carrier-rates itself is healthy. Degrade gracefully: "
            "shorten the Nordpost timeout and serve cached or other carriers' quotes (open "
            "the breaker), and raise the outage with Nordpost. Rolling back checkout-web "
            "would not help."))
    namespaces(s, "storefront", "fulfilment", "partners")
    node_list = nodes(s, 5, subnet=71, region="eu-north-1", pool="shop-general",
                      instance="c7i.2xlarge", cpu="8", memory="16Gi",
                      allocatable_cpu="7910m", allocatable_memory="14452Mi", days=5.2)
    kube_system(s, node_list)

    # ---- carrier-rates (partners): healthy itself, its outbound calls are slow
    rates = Ctr("carrier-rates", f"{REG}/carrier-rates:2.9.3", port=8080,
                requests={"cpu": "300m", "memory": "256Mi"}, limits={"memory": "512Mi"},
                env={"NORDPOST_URL": "https://api.nordpost.example/v2/rates",
                     "DHL_URL": "https://express.api.dhl.com/mydhlapi/rates",
                     "UPSTREAM_TIMEOUT": "3s"},
                readiness=http_probe("/healthz/ready"),
                liveness=http_probe("/healthz/live", delay=15, period=20))
    _, rate_pods = steady(s, "partners", "carrier-rates", [rates], nodes=node_list,
                          replicas=3, revision=18, rollout=s.ago(days=4, hours=7))
    quiet(s, rate_pods, "carrier-rates", 180)
    per = 3
    for pod in rate_pods:
        cpu_seconds(s, pod, "carrier-rates", lambda t: 0.11 + 0.01 * slow(t))
        requests(s, pod, "carrier-rates", rps=lambda t: 18.0 / per, codes={
            "200": lambda t: 0.999 - 0.58 * slow(t), "504": lambda t: 0.58 * slow(t),
            "400": lambda t: 0.001}, median=lambda t: 0.21 + 2.6 * slow(t), buckets=BUCKETS)
        labels = {"namespace": "partners", "pod": pod["metadata"]["name"]}
        for carrier, share, outcomes in (
                ("nordpost", 0.62, {"ok": lambda t: 0.997 - 0.93 * slow(t),
                                    "timeout": lambda t: 0.002 + 0.93 * slow(t),
                                    "error": lambda t: 0.001}),
                ("dhl", 0.38, {"ok": lambda t: 0.998, "timeout": lambda t: 0.001,
                               "error": lambda t: 0.001})):
            for outcome, part in outcomes.items():
                app_counter(s, "carrier_upstream_requests_total",
                            {**labels, "carrier": carrier, "outcome": outcome},
                            alive(s, pod), _rate(18.0 / per * share, part),
                            "Calls to carrier rate APIs by outcome.")
        fam = s.metrics.family("http_client_request_duration_seconds", "histogram",
                               "Outbound HTTP request latency in seconds.", buckets=BUCKETS)
        fam.add({**labels, "peer": "api.nordpost.example"},
                histogram_points(alive(s, pod), BUCKETS, lambda t: 18.0 / per * 0.62,
                                 lambda t: 0.24 + 2.9 * slow(t), s.rng))
        fam.add({**labels, "peer": "express.api.dhl.com"},
                histogram_points(alive(s, pod), BUCKETS, lambda t: 18.0 / per * 0.38,
                                 lambda t: 0.19, s.rng))
    chatter(s, rate_pods, "carrier-rates", "carrier-rates", [
        ("info", "quote ok carrier=dhl zone=SE-3 weight=2.4kg 188ms", {}),
        ("info", "quote ok carrier=nordpost zone=SE-1 weight=0.8kg 231ms", {}),
        ("info", "rate card cache refreshed: 1412 entries", {}),
    ], 80, start=s.ago(hours=3), end=ONSET)
    chatter(s, rate_pods, "carrier-rates", "carrier-rates", [
        ("info", "quote ok carrier=dhl zone=SE-3 weight=2.4kg 191ms", {}),
        ("info", "quote ok carrier=nordpost zone=SE-2 weight=1.1kg 2710ms", {}),
        ("info", "rate card cache refreshed: 1412 entries", {}),
        ("warn", "quote failed carrier=nordpost: context deadline exceeded",
         {"error.type": "DeadlineExceeded", "url.domain": "api.nordpost.example"}),
    ], 40, start=ONSET + timedelta(minutes=2))

    # ---- shipping-options (fulfilment): the middle of the chain
    ship = Ctr("shipping-options", f"{REG}/shipping-options:5.4.1", port=8080,
               requests={"cpu": "250m", "memory": "384Mi"}, limits={"memory": "512Mi"},
               env={"CARRIER_RATES_URL": "http://carrier-rates.partners.svc.cluster.local",
                    "REDIS_ADDR": "shipping-cache.fulfilment.svc:6379",
                    "RATES_TIMEOUT": "4s"},
               readiness=http_probe("/ready"))
    _, ship_pods = steady(s, "fulfilment", "shipping-options", [ship], nodes=node_list,
                          replicas=3, revision=41, rollout=s.ago(days=2, hours=20), offset=1)
    quiet(s, ship_pods, "shipping-options", 260)
    for pod in ship_pods:
        cpu_seconds(s, pod, "shipping-options", lambda t: 0.14)
        requests(s, pod, "shipping-options", rps=lambda t: 11.0 / 3, codes={
            "200": lambda t: 0.998 - 0.55 * slow(t), "502": lambda t: 0.55 * slow(t),
            "422": lambda t: 0.002}, median=lambda t: 0.26 + 2.7 * slow(t), buckets=BUCKETS)
    chatter(s, ship_pods, "shipping-options", "shipping-options", [
        ("info", "options basket=8f2c1 postcode=11434: 4 options in 242ms", {}),
        ("info", "options basket=77aa0 postcode=41106: 3 options in 310ms", {}),
        ("error", "redis GET shipping:zones:v3 i/o timeout after 50ms, falling back to "
         "carrier-rates", {"error.type": "RedisTimeout"}),
    ], 120, start=s.ago(hours=3))
    chatter(s, ship_pods, "shipping-options", "shipping-options", [
        ("error", "carrier-rates answered 504 for basket=31d9e; returning 502",
         {"http.response.status_code": 502}),
        ("info", "options basket=cc210 postcode=75236: 2 options in 3112ms", {}),
    ], 60, start=ONSET + timedelta(minutes=3))

    # ---- checkout-web (storefront): rolled out 52 min before the onset
    roll = ONSET - timedelta(minutes=52)
    web = Ctr("checkout-web", f"{REG}/checkout-web:7.12.0", port=3000,
              requests={"cpu": "200m", "memory": "384Mi"}, limits={"memory": "768Mi"},
              env={"SHIPPING_URL": "http://shipping-options.fulfilment.svc.cluster.local"},
              readiness=http_probe("/api/health"))
    cw, web_pods = steady(s, "storefront", "checkout-web", [web], nodes=node_list,
                          replicas=4, revision=112, rollout=roll, offset=2,
                          old=(111, s.ago(days=6), [Ctr("checkout-web",
                                                       f"{REG}/checkout-web:7.11.4",
                                                       port=3000)]))
    old = ghosts(s, cw.revisions[0], node_list, [s.ago(days=4, minutes=-3 * i)
                                                 for i in range(4)],
                 [roll + timedelta(seconds=35 + 25 * i) for i in range(4)])
    quiet(s, web_pods, "checkout-web", 300)
    for pod in [*web_pods, *old]:
        requests(s, pod, "checkout-web", rps=lambda t: 7.0, codes={
            "200": lambda t: 0.994 - 0.21 * slow(t), "500": lambda t: 0.001 + 0.21 * slow(t),
            "302": lambda t: 0.005}, median=lambda t: 0.16 + 1.9 * slow(t), buckets=BUCKETS)
    chatter(s, web_pods, "checkout-web", "checkout-web", [
        ("info", "checkout-web 7.12.0 ready (node 20.14, next 14.2)", {}),
        ("info", "GET /checkout/delivery 200 402ms", {}),
        ("warn", "feature flag 'klarna-split-pay' not found, defaulting to off", {}),
    ], 70, start=roll + timedelta(seconds=20))
    chatter(s, web_pods, "checkout-web", "checkout-web", [
        ("error", "GET /api/delivery-options failed: upstream shipping-options 502",
         {"http.response.status_code": 500}),
        ("info", "GET /checkout/delivery 200 3655ms", {}),
    ], 45, start=ONSET + timedelta(minutes=3))
    for g in old:
        log_pod(s, g, "checkout-web", "checkout-web", [
            ("info", "GET /checkout/delivery 200 388ms", {})], 12)

    # ---- a harmless neighbour issue
    readiness_blip(s, "storefront", "promo-banner", f"{REG}/promo-banner:1.3.7", node_list,
                   port=3000, path="/api/health", minutes_ago=22)
    return s


def _rate(base: float, part: Callable[[int], float]) -> Callable[[int], float]:
    return lambda t: base * part(t)
