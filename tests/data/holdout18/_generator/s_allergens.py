"""Restaurant chain: the allergen filter of the menu app is slow at lunch. allergen-matcher
(4 pods, CPU limit 500m) evaluates ingredient rules in short bursts; at the lunch peak the
bursts hit the CFS quota in most 100 ms periods (throttled share from about 5 % to over
60 %) and its latency climbs tenfold, while average usage stays below the HPA's target, so
the autoscaler (4 of 3..12 replicas) sees no reason to scale. The cure is the CPU limit,
not the autoscaler. Red herrings: the HPA itself (not at its maximum), menu-images rolled
out in the same namespace 48 min before the onset, a GC pause warning in the victim, an
old OOM restart of order-router and slow-query warnings from the recipe database proxy."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import eks_nodes
from tests.data.holdout3._generator.kit3 import chatter, namespaces, quiet, steady
from tests.data.holdout4._generator.kit4 import ramp
from tests.scenario_tools.common import deployment_metrics, truth
from tests.scenario_tools.kube import Ctr, http_probe
from tests.scenario_tools.parts import app, hpa

from .kit18 import Incident, timed_logs

ID = "menu-allergen-filter-slow"
NOW = datetime.fromisoformat("2028-07-11T02:47:00+00:00")  # 12:47 in Sydney
NS = "menu"
ECR = "640113982275.dkr.ecr.ap-southeast-2.amazonaws.com"


def build() -> Incident:
    s = Incident(
        id=ID, title="Menu allergen filter slow at lunch", now=NOW,
        report="""\
The "hide dishes with..." allergen filter in the ordering app takes several seconds or
times out since the lunch rush started (~12:10 Sydney time). Stores are getting
complaints at the counter. I can see the menu autoscaler is there, maybe it's not scaling
fast enough? Prod, menu service.
""",
        truth=truth(
            "cpu_throttling", "Deployment", NS, "allergen-matcher",
            ["container_cpu_cfs_throttled_periods_total", "cpu: 500m",
             "throttled"],
            "allergen-matcher's 500m CPU limit throttles its bursty rule evaluation: at the "
            "lunch peak over 60 % of CFS periods are throttled and latency rises tenfold, "
            "while average CPU stays under the HPA target (71 % of 80 %), so scaling out does "
            "not trigger. Raise or remove the CPU limit (keep the 400m request), and only "
            "then revisit the HPA target."))
    namespaces(s, {"default": 610, "kube-system": 610, NS: 580, "orders": 580, "data": 420})
    nodes = eks_nodes(s, 4, region="ap-southeast-2", subnet=72, pool="menu-c7i",
                      instance="c7i.2xlarge", kubelet="v1.33.1-eks-b9b9a4e",
                      kernel="6.1.140-154.222.amzn2023.x86_64",
                      os_image="Amazon Linux 2023.8.20250707", cpu="8", memory="15896988Ki",
                      alloc_cpu="7910m", alloc_memory="14879132Ki", days=5.8)
    onset = NOW - timedelta(minutes=37)

    def peak(t: int) -> float:
        return ramp(t, onset - timedelta(minutes=6), 10)

    work, pods = app(
        s, NS, "allergen-matcher", f"{ECR}/menu/allergen-matcher:3.6.1", nodes, replicas=4,
        revision=27, rps=lambda t: 38.0 + 52.0 * peak(t),
        codes={"200": lambda t: 0.995 - 0.035 * peak(t), "499": lambda t: 0.03 * peak(t),
               "504": lambda t: 0.002 + 0.006 * peak(t)},
        median=lambda t: 0.07 + 1.25 * peak(t), cpu=lambda t: 0.17 + 0.115 * peak(t),
        memory_mib=340.0, throttle=lambda t: 0.05 + 0.58 * peak(t),
        limits={"cpu": "500m", "memory": "768Mi"}, requests={"cpu": "400m", "memory": "512Mi"},
        env={"RULES_BUNDLE": "s3://menu-rules-prod/allergens/2028-07-01.bundle",
             "WORKER_THREADS": "8", "RECIPES_URL": "http://recipe-store.menu.svc"},
        readiness=http_probe("/ready", delay=5, period=10, timeout=2),
        liveness=http_probe("/healthz", delay=15, period=20, timeout=5),
        rollout_at=s.ago(days=3, hours=14, minutes=22))
    hpa(s, work, minimum=3, maximum=12, current=4, desired=4, utilization=71, target=80,
        scaled=s.ago(hours=20, minutes=13))
    deployment_metrics(s, work)
    for i, pod in enumerate(pods):
        chatter(s, [pod], "allergen-matcher", "allergen-matcher", [
            ("info", "GET /v2/menu/allergens?store=SYD-0142&exclude=peanut,sesame 200 in 61ms",
             {}),
            ("info", "rule bundle 2028-07-01 active: 1184 ingredients, 14 allergens", {}),
            ("warn", "GC pause 180ms (young gen), heap 61% after collection", {}),
        ], 160, end=onset)
        entries = []
        t = onset + timedelta(seconds=9 * i + 4)
        n = 0
        while t < NOW:
            k = (n + i) % 4
            if k == 0:
                entries.append((t, "warn", "slow request GET /v2/menu/allergens?store=SYD-0"
                                f"{s.rng.randrange(100, 400)}&exclude=gluten,milk took "
                                f"{s.rng.uniform(1.4, 3.9):.2f}s (rule eval "
                                f"{s.rng.uniform(1.1, 3.2):.2f}s)", {}))
            elif k == 1:
                entries.append((t, "warn", "GC pause 180ms (young gen), heap 58% after "
                                "collection", {}))
            elif k == 2:
                entries.append((t, "error", "GET /v2/menu/allergens 504: rule evaluation "
                                "exceeded 4s deadline", {"http.response.status_code": 504}))
            else:
                entries.append((t, "info", "worker pool: 8/8 busy, 23 queued", {}))
            n += 1
            t += timedelta(seconds=25 + s.rng.randrange(0, 30))
        timed_logs(s, pod, "allergen-matcher", "allergen-matcher", entries)

    # ---- red herrings
    mi_at = onset - timedelta(minutes=48)
    mi = Ctr("menu-images", f"{ECR}/menu/menu-images:1.19.0", port=8080,
             requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "512Mi"},
             readiness=http_probe("/ready"))
    _, mis = steady(s, NS, "menu-images", [mi], nodes=nodes, replicas=2, revision=44,
                    rollout=mi_at, offset=1,
                    old=(43, s.ago(days=8), [Ctr("menu-images",
                                                 f"{ECR}/menu/menu-images:1.18.2")]))
    quiet(s, mis, "menu-images", 210)
    chatter(s, mis, "menu-images", "menu-images", [
        ("info", "menu-images 1.19.0 started (avif enabled)", {}),
        ("warn", "image dish-4471-hero.jpg missing in CDN origin, serving placeholder", {}),
    ], 40, start=mi_at)
    rs = Ctr("recipe-store", f"{ECR}/menu/recipe-store:5.2.0", port=8080,
             requests={"cpu": "300m", "memory": "512Mi"}, limits={"memory": "1Gi"},
             readiness=http_probe("/ready"))
    _, rss = steady(s, NS, "recipe-store", [rs], nodes=nodes, replicas=2, revision=16,
                    rollout=s.ago(days=5, hours=1), offset=2)
    quiet(s, rss, "recipe-store", 470)
    chatter(s, rss, "recipe-store", "recipe-store", [
        ("info", "GET /recipes/4471 200 in 9ms (cache hit)", {}),
        ("warn", "slow query 612ms: SELECT ... FROM recipe_ingredient WHERE recipe_id = ANY($1)",
         {}),
    ], 70)
    orr = Ctr("order-router", f"{ECR}/orders/order-router:9.0.4", port=8080,
              requests={"cpu": "300m", "memory": "384Mi"}, limits={"memory": "640Mi"})
    _, ors = steady(s, "orders", "order-router", [orr], nodes=nodes, replicas=3, revision=88,
                    rollout=s.ago(days=4, hours=6), offset=3,
                    restarted={2: (s.ago(days=2, hours=9), "OOMKilled", 137)})
    quiet(s, ors, "order-router", 400)
    chatter(s, ors, "order-router", "order-router", [
        ("info", "order O-88120451 routed to store SYD-0142 kitchen display", {}),
        ("warn", "store MEL-0318 printer offline, falling back to KDS only", {}),
    ], 90)
    return s
