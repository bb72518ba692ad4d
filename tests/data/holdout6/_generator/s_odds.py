"""Sports betting: odds-pricer, a Go service, has a 1-CPU limit but no GOMAXPROCS, so the Go
runtime runs 16 threads (the node's cores). Since the evening kick-off, each price batch
makes all threads burst at once: the 100 ms CFS quota is spent in a few milliseconds and
about half of the periods end throttled, while the container's average CPU stays at 55-65%
of the limit. Batch latency p99 rose from ~60 ms to ~0.9 s. Red herrings: the feed ingester
reconnecting to the data provider's websocket (plausible alternative), the HPA sitting calm
below its target, slow risk-db queries."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import set_times
from tests.data.holdout2._generator.kit import cpu_seconds, requests
from tests.data.holdout3._generator.kit3 import chatter, quiet, steady
from tests.data.holdout4._generator.kit4 import hpa
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, http_probe

from .kit6 import Incident, NodeKind, counted, provider_nodes

ID = "live-odds-updates-lagging"
NOW = datetime.fromisoformat("2027-06-02T19:58:00+00:00")
NS = "wagering"
REG = "harbor.betline.internal/trading"
LIMIT = 1.0


def build() -> Incident:
    s = Incident(
        id=ID, title="In-play odds updating late", now=NOW,
        report="""\
Traders say in-play odds are lagging behind the matches tonight, sometimes by a second or
more, and the p99 latency alert on odds-pricer fired at 19:21. Nothing was deployed today.
Error rate looks normal.
""",
        truth=truth(
            "cpu_throttling", "Deployment", NS, "odds-pricer",
            ["container_cpu_cfs_throttled_periods_total", "cpu: \"1\"", "GOMAXPROCS",
             "throttled"],
            "odds-pricer (Go) has a CPU limit of 1 core but no GOMAXPROCS, so the runtime "
            "schedules 16 threads; each price batch bursts on all of them and spends the "
            "100 ms CFS quota in milliseconds. Since kick-off ~50% of CFS periods are "
            "throttled although average usage stays at ~0.6 core, and p99 rose to ~0.9 s. "
            "Set GOMAXPROCS to the limit (automaxprocs or GOMAXPROCS=1..2) and/or raise or "
            "remove the CPU limit."))
    set_times(s, 2.4, 60)
    c = s.cluster
    for name, days in (("default", 610), ("kube-system", 610), ("d8-system", 610),
                       (NS, 575), ("trading-desk", 420)):
        c.namespace(name, s.ago(days=days))
    kind = NodeKind("c16m32", "16", "32862284Ki", "15600m", "31193932Ki", "v1.29.12",
                    "5.15.0-130-generic", "Ubuntu 22.04.5 LTS", runtime="containerd://1.7.24")
    nodes = provider_nodes(s, "deckhouse", 4, kind, days=6.6)
    kick = NOW - timedelta(minutes=52)

    def load(t: int) -> float:  # 0 before kick-off warm-up, 1 in play
        return min(1.0, max(0.0, (t - kick.timestamp() + 900) / 1200))

    def usage(t: int) -> float:
        return 0.21 + 0.42 * load(t)

    def throttled(t: int) -> float:
        return 0.02 + 0.5 * load(t) ** 1.5

    def median(t: int) -> float:
        return 0.018 + 0.16 * load(t) ** 1.5

    api = Ctr("odds-pricer", f"{REG}/odds-pricer:2.41.0", port=8080,
              requests={"cpu": "900m", "memory": "512Mi"},
              limits={"cpu": "1", "memory": "1Gi"},
              env={"KAFKA_BROKERS": "kafka-0.kafka.wagering.svc:9092",
                   "GOMEMLIMIT": "900MiB", "PRICING_WORKERS": "64"},
              readiness=http_probe("/readyz", delay=3, period=5),
              liveness=http_probe("/livez", delay=10, period=10))
    work, pods = steady(s, NS, "odds-pricer", [api], nodes=nodes, replicas=3, revision=93,
                        rollout=s.ago(days=3, hours=5, minutes=40),
                        annotations={"prometheus.io/scrape": "true",
                                     "prometheus.io/port": "8080"})
    for pod in pods:
        name = pod["metadata"]["name"]
        labels = {"namespace": NS, "pod": name, "container": "odds-pricer"}
        quiet(s, [pod], "odds-pricer", 330)
        cpu_seconds(s, pod, "odds-pricer", lambda t: usage(t) * s.rng.uniform(0.92, 1.06))
        s.metrics.gauge("kube_pod_container_resource_limits", {
            **labels, "resource": "cpu", "unit": "core"}, [(t, LIMIT) for t in s.times],
            "The number of requested limit resource by a container.")
        periods = counted(s.times, lambda t: 10.0 * (0.55 + 0.4 * load(t)),
                          s.rng.randrange(2_000_000, 3_000_000))
        s.metrics.counter("container_cpu_cfs_periods_total", labels, periods,
                          "Number of elapsed enforcement period intervals.")
        s.metrics.counter("container_cpu_cfs_throttled_periods_total", labels, counted(
            s.times, lambda t: 10.0 * (0.55 + 0.4 * load(t)) * throttled(t) *
            s.rng.uniform(0.9, 1.1), s.rng.randrange(40_000, 60_000)),
            "Number of throttled period intervals.")
        s.metrics.counter("container_cpu_cfs_throttled_seconds_total", labels, [
            (t, round(v / 1000, 3)) for t, v in counted(
                s.times, lambda t: 1000 * (0.004 + 0.31 * load(t) ** 1.5), 1_800_000)],
            "Total time duration the container has been throttled.")
        requests(s, pod, "odds-pricer", rps=lambda t: 35.0 + 120.0 * load(t), codes={
            "200": lambda t: 1.0}, median=median,
            buckets=(0.025, 0.1, 0.25, 0.5, 1.0))
        s.metrics.gauge("go_sched_gomaxprocs_threads", {"namespace": NS, "pod": name},
                        [(t, 16.0) for t in s.times], "The current runtime.GOMAXPROCS "
                        "setting, or the number of operating system threads that can execute "
                        "user-level Go code simultaneously.")
    chatter(s, pods, "odds-pricer", "odds-pricer", [
        ("info", "repriced market M-88120413 (1X2, 3 selections) in 12ms", {}),
        ("info", "consumed 500 feed events from partition 7, lag 0", {}),
    ], 90, end=kick)
    chatter(s, pods, "odds-pricer", "odds-pricer", [
        ("warn", "reprice batch of 212 markets took 910ms (budget 150ms)", {}),
        ("warn", "reprice batch of 188 markets took 1240ms (budget 150ms)", {}),
        ("info", "repriced market M-88131022 (next goal, 3 selections) in 388ms", {}),
        ("warn", "feed consumer lag on partition 3 is 1840 events", {}),
    ], 150, start=kick + timedelta(minutes=4))
    chatter(s, pods, "odds-pricer", "odds-pricer", [
        ("info", "starting odds-pricer 2.41.0 (go1.23.4 linux/amd64), 16 CPUs, pricing "
         "workers 64", {}),
    ], 3, start=s.ago(days=3, hours=5, minutes=39), end=s.ago(days=3, hours=5, minutes=38))
    hpa(s, work, min_=3, max_=12, created=s.ago(days=300), replicas=3, desired=3,
        metrics=[{"type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": 80}}}],
        current=[{"type": "Resource", "resource": {"name": "cpu", "current": {
            "averageUtilization": 69, "averageValue": "623m"}}}],
        conditions=[("AbleToScale", "True", "ReadyForNewScale",
                     "recommended size matches current size", s.ago(days=3)),
                    ("ScalingActive", "True", "ValidMetricFound", "the HPA was able to "
                     "successfully calculate a replica count from cpu resource utilization "
                     "(percentage of request)", s.ago(days=3)),
                    ("ScalingLimited", "False", "DesiredWithinRange", "the desired count is "
                     "within the acceptable range", s.ago(days=3))])

    # ---- red herrings
    feed = Ctr("feed-ingest", f"{REG}/feed-ingest:1.17.2", port=8080,
               requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "512Mi"})
    _, feeds = steady(s, NS, "feed-ingest", [feed], nodes=nodes, replicas=2, revision=31,
                      rollout=s.ago(days=5, hours=2), offset=1)
    quiet(s, feeds, "feed-ingest", 140)
    chatter(s, feeds, "feed-ingest", "feed-ingest", [
        ("warn", "websocket to wss://push.sportsdata.example/v3 closed (1006), reconnecting in "
         "2s", {}),
        ("info", "subscribed to 412 fixtures", {}),
        ("info", "published 1200 events to odds.raw", {}),
    ], 80)
    pg = Ctr("postgres", "docker.io/library/postgres:16.6", port=5432, port_name="pg",
             requests={"cpu": "1", "memory": "4Gi"}, limits={"memory": "4Gi"})
    _, pgs = steady(s, NS, "risk-db", [pg], nodes=nodes, replicas=1, revision=4,
                    rollout=s.ago(days=6, hours=1), service=5432, target="pg", offset=2)
    quiet(s, pgs, "postgres", 2600)
    chatter(s, pgs, "postgres", "risk-db", [
        ("warn", "duration: 612.3 ms  statement: SELECT sum(stake) FROM exposure WHERE "
         "market_id = ANY($1)", {}),
        ("info", "checkpoint complete: wrote 2210 buffers (13.5%)", {}),
    ], 30)
    return s
