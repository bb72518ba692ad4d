"""Greeting cards: the live preview of a personalised card crawls in the Mother's Day
evening rush. card-renderer (four pods, no autoscaler) has a CPU limit of one core; from
about 18:00 the preview traffic triples, each pod wants ~1.3 cores, usage sits flat at the
limit and the CFS throttling ratio climbs from ~3% to ~75%, so render latency goes from
0.4 s to 6-8 s. The nodes have plenty of idle CPU. Only the metrics show the cause
(usage pinned at the limit, throttled periods); logs and status show slow renders and
nothing else. Red herrings: font-service (the reporter's suspect) rolled out 3.8.0 at
17:40 in the same namespace with fallback warnings; font-cache eviction warnings and a few
S3 timeouts in the renderer; print-bridge unready all evening for the print partner's
planned maintenance; an old OOM restart of order-intake."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import eks_nodes, set_times
from tests.data.holdout2._generator.kit import cpu_seconds, deploy, requests
from tests.data.holdout3._generator.kit3 import (
    chatter,
    ksm_deployment,
    namespaces,
    quiet,
    ready_since,
    steady,
)
from tests.data.holdout4._generator.kit4 import ramp
from tests.scenario_tools.common import MIB, container_metrics, truth
from tests.scenario_tools.failures import probe_events
from tests.scenario_tools.kube import Ctr, http_probe, running

from .kit import Incident, rolled_neighbour

ID = "card-previews-slow"
NOW = datetime.fromisoformat("2029-03-10T19:24:00+00:00")
NS = "cards"
ECR = "318842066517.dkr.ecr.eu-west-2.amazonaws.com"
RUSH = NOW - timedelta(hours=1, minutes=34)  # 17:50: the evening rush starts


def build() -> Incident:
    s = Incident(
        id=ID, title="Card previews very slow in the evening rush", now=NOW,
        report="""\
The card preview on the personalise page takes 10-20 seconds since about half six,
loads of people drop off before adding to basket. It's the Mother's Day rush, but we
took more orders than this last year without trouble. The font service got a release
this afternoon, could that be it?
""",
        truth=truth(
            "cpu_throttling", "Deployment", NS, "card-renderer",
            ["container_cpu_cfs_throttled_periods_total", "card-renderer",
             "rendered preview"],
            "card-renderer's four pods are capped at 1 CPU each; with the evening rush each "
            "wants about 1.3 cores, usage is pinned at the limit and most CFS periods are "
            "throttled, so previews take seconds. Raise or remove the CPU limit (the nodes "
            "have idle CPU) and scale card-renderer out, ideally with an autoscaler."))
    set_times(s, 3.0, 60)
    namespaces(s, {"default": 700, "kube-system": 700, NS: 655, "fulfilment": 655,
                   "shop": 655})
    nodes = eks_nodes(s, 5, region="eu-west-2", subnet=44, pool="general-c6i",
                      instance="c6i.2xlarge", kubelet="v1.33.4-eks-a737599",
                      kernel="6.1.147-172.266.amzn2023.x86_64",
                      os_image="Amazon Linux 2023.8.20250915", cpu="8", memory="16069788Ki",
                      alloc_cpu="7910m", alloc_memory="15045788Ki", days=4.3)

    # ---- card-renderer: capped at one core a pod
    image = f"{ECR}/cards/card-renderer:7.4.2"
    ctr = Ctr("card-renderer", image, port=8080,
              requests={"cpu": "500m", "memory": "1Gi"},
              limits={"cpu": "1", "memory": "1536Mi"},
              env={"FONT_SERVICE_URL": "http://font-service.cards.svc.cluster.local",
                   "ASSET_BUCKET": "s3://cards-assets-prod", "RENDER_WORKERS": "8",
                   "PREVIEW_DPI": "150"},
              readiness=http_probe("/ready", delay=5, timeout=2),
              liveness=http_probe("/live", delay=20, period=20, timeout=3))
    _, pods = steady(s, NS, "card-renderer", [ctr], nodes=nodes, replicas=4, revision=88,
                     rollout=s.ago(days=2, hours=21, minutes=40),
                     annotations={"prometheus.io/scrape": "true", "prometheus.io/port": "9102"})

    def total_rps(t: int) -> float:
        return 6.2 + 12.4 * ramp(t, RUSH, 40)

    def demand(t: int) -> float:  # cores one pod would use without a limit
        return 0.07 + total_rps(t) / 4 * 0.27

    def used(t: int) -> float:
        return min(demand(t), 0.978)

    def throttled(t: int) -> float:
        return min(0.78, 0.025 + max(0.0, demand(t) - 0.62) * 1.15)

    def median(t: int) -> float:
        return 0.42 * (1 + 16 * max(0.0, demand(t) - 0.9) ** 1.1)

    for pod in pods:
        base = 980 * s.rng.uniform(0.93, 1.05)
        container_metrics(s, pod, "card-renderer",
                          memory=lambda t, b=base: (b + 160 * ramp(t, RUSH, 40)) * MIB,
                          cpu=lambda t: used(t) * s.rng.uniform(0.985, 1.0),
                          throttle=throttled, limit_memory=1536 * MIB, limit_cpu=1.0)
        requests(s, pod, "card-renderer", rps=lambda t: total_rps(t) / 4, codes={
            "200": lambda t: 0.994 - 0.05 * ramp(t, RUSH + timedelta(minutes=30), 20),
            "504": lambda t: 0.001 + 0.05 * ramp(t, RUSH + timedelta(minutes=30), 20),
            "400": lambda t: 0.005}, median=median,
            buckets=(0.25, 0.5, 1.0, 2.5, 5.0, 10.0))
    early = [
        ("info", "rendered preview card=MD-ROSES-042 size=A5 photos=1 in 402ms", {}),
        ("info", "rendered preview card=MD-BEST-MUM-07 size=A5 photos=0 in 318ms", {}),
        ("info", "rendered preview card=BD-DINO-115 size=A6 photos=2 in 611ms", {}),
        ("warn", "font cache eviction: 312 glyph sets evicted (cache 256MiB)", {}),
        ("info", "rendered preview card=MD-TULIPS-009 size=A4 photos=3 in 744ms", {}),
    ]
    chatter(s, pods, "card-renderer", "card-renderer", early, 360, start=s.ago(hours=3),
            end=RUSH + timedelta(minutes=14))
    late = [
        ("info", "rendered preview card=MD-ROSES-042 size=A5 photos=1 in 6914ms", {}),
        ("info", "rendered preview card=MD-BEST-MUM-07 size=A5 photos=0 in 5270ms", {}),
        ("info", "rendered preview card=MD-TULIPS-009 size=A4 photos=3 in 11842ms", {}),
        ("info", "rendered preview card=MD-GARDEN-031 size=A5 photos=2 in 8407ms", {}),
        ("warn", "font cache eviction: 298 glyph sets evicted (cache 256MiB)", {}),
        ("warn", "render queue depth 41 (8 workers busy)", {}),
        ("error", "preview request abandoned by client after 15000ms card=MD-ROSES-042",
         {"http.response.status_code": 504}),
    ]
    chatter(s, pods, "card-renderer", "card-renderer", late, 520,
            start=RUSH + timedelta(minutes=14))
    chatter(s, pods, "card-renderer", "card-renderer", [
        ("error", "upload preview thumbnail to s3://cards-assets-prod failed: RequestTimeout, "
         "retrying (attempt 1/3)", {"error.type": "RequestTimeout"}),
    ], 8, start=s.ago(hours=3))
    ksm_deployment(s, NS, "card-renderer", lambda t: 4.0, lambda t: 4.0, lambda t: 0.0)

    # ---- red herring: font-service, rolled out at 17:40 (the reporter's suspect)
    roll = RUSH - timedelta(minutes=10, seconds=22)
    rolled_neighbour(
        s, NS, "font-service", lambda v: Ctr(
            "font-service", f"{ECR}/cards/font-service:{v}", port=8080,
            requests={"cpu": "200m", "memory": "512Mi"}, limits={"memory": "768Mi"},
            readiness=http_probe("/ready"), liveness=http_probe("/live", delay=15, period=20)),
        old="3.7.5", new="3.8.0", revision=41, at=roll, replicas=2, nodes=nodes[2:],
        mib=388, cpu=0.09, rps=lambda t: 3.1 + 6.2 * ramp(t, RUSH, 40),
        codes={"200": 0.996, "404": 0.004}, entries=[
            ("info", "font subset served: family='Playfair Display' glyphs=61 (cache hit)", {}),
            ("warn", "font subset request for unknown family 'Brush Script MT', falling back "
             "to 'Pacifico'", {}),
            ("info", "font subset served: family='Caveat' glyphs=44 (cache miss, 12ms)", {}),
        ], n_logs=150, size=211_640_332)
    ksm_deployment(s, NS, "font-service", lambda t: 2.0, lambda t: 2.0, lambda t: 0.0)

    # ---- red herring: order-intake, one OOM restart three days ago
    order = Ctr("order-intake", f"{ECR}/shop/order-intake:12.0.3", port=8080,
                requests={"cpu": "250m", "memory": "512Mi"}, limits={"memory": "768Mi"},
                readiness=http_probe("/ready"))
    _, orders = steady(s, "shop", "order-intake", [order], nodes=nodes, replicas=3,
                       revision=203, rollout=s.ago(days=4, hours=1), offset=1,
                       restarted={2: (s.ago(days=3, hours=7, minutes=3), "OOMKilled", 137)})
    quiet(s, orders, "order-intake", 501)
    for pod in orders:
        cpu_seconds(s, pod, "order-intake", lambda t: 0.12)
        requests(s, pod, "order-intake", rps=lambda t: 0.4 + 0.5 * ramp(t, RUSH, 40),
                 codes={"201": lambda t: 0.99, "409": lambda t: 0.01})
    chatter(s, orders, "order-intake", "order-intake", [
        ("info", "order O-7731902 accepted: 2 items, 7.98 GBP, delivery 2029-03-12", {}),
        ("info", "order O-7731925 accepted: 1 item, 4.49 GBP, delivery 2029-03-12", {}),
    ], 90, start=s.ago(hours=3))
    ksm_deployment(s, "shop", "order-intake", lambda t: 3.0, lambda t: 3.0, lambda t: 0.0)

    # ---- red herring: print-bridge unready for the partner's planned maintenance
    pause = NOW - timedelta(minutes=23, seconds=48)  # 19:00:12
    pctr = Ctr("print-bridge", f"{ECR}/fulfilment/print-bridge:2.2.0", port=8080,
               requests={"cpu": "100m", "memory": "256Mi"}, limits={"memory": "384Mi"},
               readiness=http_probe("/ready", delay=5, period=15),
               liveness=http_probe("/live", delay=15, period=20))
    work, prints = deploy(s, "fulfilment", "print-bridge", [pctr], replicas=2, nodes=nodes,
                          revision=17, rollout=s.ago(days=6, hours=2), offset=3,
                          statuses=lambda i, n, st: {"print-bridge": running(st, ready=False)})
    for pod in prints:
        ready_since(pod, pause + timedelta(seconds=31))
        probe_events(s, pod, "print-bridge", "HTTP probe failed with statuscode: 503",
                     since=pause + timedelta(seconds=4), period=15)
    work.availability_changed = pause + timedelta(seconds=31)
    quiet(s, prints, "print-bridge", 143)
    chatter(s, prints, "print-bridge", "print-bridge", [
        ("info", "submitted batch PB-55120 (38 cards) to partner print API", {}),
        ("info", "partner acknowledged batch PB-55118: 41 cards, ETA 2029-03-11", {}),
    ], 40, start=s.ago(hours=3), end=pause)
    chatter(s, prints, "print-bridge", "print-bridge", [
        ("warn", "partner print API in announced maintenance window 19:00-21:00 UTC, "
         "holding batches (queued: 12)", {}),
        ("info", "readiness: reporting not ready while partner is in maintenance", {}),
    ], 24, start=pause)
    ksm_deployment(s, "fulfilment", "print-bridge", lambda t: 2.0,
                   lambda t: 0.0 if t >= pause.timestamp() + 31 else 2.0,
                   lambda t: 2.0 if t >= pause.timestamp() + 31 else 0.0)
    return s
