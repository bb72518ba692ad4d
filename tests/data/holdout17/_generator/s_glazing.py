"""Double-glazing installer: the online window quote configurator crawls. quote-engine runs
with a CPU limit of 500m (request 250m) since the chart's defaults were tightened months
ago; it was fine at the usual load. A TV advert aired at 19:05 and traffic roughly tripled:
the pods sit at their 0.5-core limit, most CFS periods are throttled and the price
calculation latency goes from ~0.2 s to several seconds. No restarts, memory flat, no
errors beyond client timeouts. No autoscaler. The cause is visible mainly in metrics
(container_cpu_cfs_throttled_periods_total). Red herrings: the report blames the database,
whose log has a few slow-query lines as every evening; brochure-site rolled out 52 min before
the onset in the same namespace; an old OOM restart of the CRM sync; a WARN about a
deprecated pricing rule in the victim's own log."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout2._generator.kit import requests
from tests.data.holdout3._generator.kit3 import chatter, ksm_deployment, namespaces, quiet, steady
from tests.data.holdout4._generator.kit4 import ramp
from tests.scenario_tools.common import MIB, container_metrics, truth
from tests.scenario_tools.kube import Ctr, http_probe, tcp_probe

from .kit17 import Incident, eks_nodes

ID = "window-quotes-crawling"
NOW = datetime.fromisoformat("2028-10-05T19:41:00+00:00")
NS = "quotes"
REG = "europe-docker.pkg.dev/clearview-prod/apps"


def build() -> Incident:
    s = Incident(
        id=ID, title="Window quote configurator very slow", now=NOW,
        report="""\
Sales says the "get your window quote" page takes 10+ seconds to show a price tonight, some
people give up. Started around 7pm. Probably the quotes database again, it was slow last
month too. Brochure pages and the contact form are fine.
""",
        truth=truth(
            "cpu_throttling", "Deployment", NS, "quote-engine",
            ["container_cpu_cfs_throttled_periods_total", "cpu: 500m", "throttled"],
            "Since the TV advert at 19:05 traffic to quote-engine roughly tripled and its "
            "pods are pinned at their 500m CPU limit: most CFS periods are throttled and "
            "price calculation latency rose from ~0.2 s to several seconds. The database is "
            "not the bottleneck. Raise or remove the CPU limit (e.g. 2 cores), scale the "
            "Deployment out and add an HPA for the next campaign."))
    s.hours = 2.0
    namespaces(s, {"default": 610, "kube-system": 610, NS: 588, "crm": 588})
    nodes = eks_nodes(s, 3, region="eu-west-1", subnet=61, pool="apps-m7g",
                      instance="m7g.xlarge", kubelet="v1.32.9-eks-113cf36",
                      kernel="6.1.150-174.273.amzn2023.aarch64",
                      os_image="Amazon Linux 2023.9.20251014", cpu="4", memory="16108156Ki",
                      alloc_cpu="3920m", alloc_memory="15085180Ki", days=5.8)
    for n in nodes:
        n["metadata"]["labels"]["kubernetes.io/arch"] = "arm64"
        n["status"]["nodeInfo"]["architecture"] = "arm64"
    advert = NOW - timedelta(minutes=36)

    def load(t: int) -> float:
        return 1.0 + 2.1 * ramp(t, advert, 6)

    def busy(t: int) -> float:  # cores the pods would use unthrottled
        return 0.19 * load(t)

    def used(t: int) -> float:
        return min(busy(t), 0.495)

    def throttle(t: int) -> float:
        return min(0.92, 0.02 + max(0.0, busy(t) - 0.33) * 2.4)

    def median(t: int) -> float:
        return 0.21 + 5.2 * max(0.0, busy(t) - 0.45)

    ctr = Ctr("quote-engine", f"{REG}/quote-engine:9.3.1", port=8080,
              requests={"cpu": "250m", "memory": "512Mi"},
              limits={"cpu": "500m", "memory": "768Mi"},
              env={"QUOTES_DB_HOST": "quotes-db.quotes.svc", "PRICE_RULES": "/etc/rules/2028-q4",
                   "WORKERS": "8"},
              readiness=http_probe("/ready", delay=10, timeout=3),
              liveness=http_probe("/live", delay=30, period=20, timeout=5))
    _, pods = steady(s, NS, "quote-engine", [ctr], nodes=nodes, replicas=3, revision=19,
                     rollout=s.ago(days=3, hours=6, minutes=12), service=80,
                        old=(18, s.ago(days=11), [Ctr("quote-engine",
                                                      f"{REG}/quote-engine:9.3.0")]))
    ksm_deployment(s, NS, "quote-engine", lambda t: 3.0, lambda t: 3.0)
    for pod in pods:
        base = s.rng.uniform(380, 420)
        container_metrics(s, pod, "quote-engine", memory=lambda t, b=base: b * MIB,
                          cpu=used, throttle=throttle, limit_memory=768 * MIB,
                          limit_cpu=0.5)
        requests(s, pod, "quote-engine", rps=lambda t: 1.4 * load(t), codes={
            "200": lambda t: 0.995 - 0.03 * (load(t) - 1) / 2.1,
            "499": lambda t: 0.001 + 0.03 * (load(t) - 1) / 2.1,
            "400": lambda t: 0.004}, median=median,
            buckets=(0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0))
    normal = [
        ("info", "quote Q-5521907 priced: 6 windows, uPVC, triple glazing, 7 412.00 GBP in "
         "204ms", {}),
        ("info", "quote Q-5521931 priced: 2 doors, aluminium, 3 980.00 GBP in 187ms", {}),
        ("warn", "pricing rule 'bay-window-legacy-2026' is deprecated, still applied", {}),
    ]
    chatter(s, pods, "quote-engine", "quote-engine", normal, 90, end=advert)
    chatter(s, pods, "quote-engine", "quote-engine", [
        *normal[2:],
        ("info", "quote Q-5523318 priced: 9 windows, timber, double glazing, 11 240.00 GBP in "
         "4870ms", {}),
        ("warn", "quote Q-5523402 pricing took 6312ms (slo 1000ms)", {}),
        ("info", "client closed request GET /api/quote/Q-5523455 after 10002ms (499)",
         {"http.response.status_code": 499}),
        ("info", "worker pool 8/8 busy, 23 quotes queued", {}),
    ], 200, start=advert + timedelta(minutes=4))

    # ---- the database the report blames: busy, not slow
    pg = Ctr("postgres", "docker.io/library/postgres:16.6", port=5432, port_name="pg",
             requests={"cpu": "1", "memory": "2Gi"}, limits={"memory": "2Gi"},
             readiness=tcp_probe("pg"))
    _, pgs = steady(s, NS, "quotes-db", [pg], nodes=nodes, replicas=1, revision=6,
                    rollout=s.ago(days=5, hours=9), service=5432, target="pg", offset=2)
    for pod in pgs:
        container_metrics(s, pod, "postgres", memory=lambda t: 1310 * MIB,
                          cpu=lambda t: 0.22 + 0.1 * ramp(t, advert, 6), limit_memory=2048 * MIB)
    chatter(s, pgs, "postgres", "quotes-db", [
        ("info", "checkpoint complete: wrote 2291 buffers (1.7%); write=229.8 s, sync=0.004 s",
         {}),
        ("warn", "duration: 1204.518 ms  statement: SELECT * FROM quote_audit WHERE created_at "
         "> now() - interval '30 days'", {}),
        ("info", "automatic vacuum of table \"quotes.public.quote_line\": index scans: 1", {}),
    ], 40)

    # ---- red herrings
    roll = advert - timedelta(minutes=52)
    br = Ctr("brochure-site", f"{REG}/brochure-site:2028.10.5-1", port=3000,
             requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "512Mi"},
             readiness=http_probe("/api/health"))
    _, brs = steady(s, NS, "brochure-site", [br], nodes=nodes, replicas=2, revision=244,
                    rollout=roll, service=80, offset=1,
                    old=(243, s.ago(days=2), [Ctr("brochure-site",
                                                  f"{REG}/brochure-site:2028.10.3-2")]))
    quiet(s, brs, "brochure-site", 230)
    for pod in brs:
        requests(s, pod, "brochure-site", rps=lambda t: 3.0 * load(t), codes={
            "200": lambda t: 0.99, "304": lambda t: 0.008, "404": lambda t: 0.002})
    chatter(s, brs, "brochure-site", "brochure-site", [
        ("info", "GET /range/sash-windows 200 38ms", {}),
        ("warn", "image /img/tv-advert-hero.webp missing width attribute", {}),
    ], 40)
    crm = Ctr("crm-sync", f"{REG}/crm-sync:1.14.0", port=8080,
              requests={"cpu": "100m", "memory": "256Mi"}, limits={"memory": "320Mi"})
    _, crms = steady(s, "crm", "crm-sync", [crm], nodes=nodes, replicas=1, revision=33,
                     rollout=s.ago(days=4, hours=11), service=None,
                     restarted={0: (s.ago(days=1, hours=16), "OOMKilled", 137)})
    quiet(s, crms, "crm-sync", 240)
    chatter(s, crms, "crm-sync", "crm-sync", [
        ("info", "pushed 41 new leads to CRM (campaign=tv-autumn-2028)", {}),
        ("warn", "CRM API rate limit 80% used, backing off 2s", {}),
    ], 30)
    return s
