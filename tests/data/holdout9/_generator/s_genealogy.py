"""Genealogy site: family-tree search and record hints slow in the evening. A TV
documentary on emigrant ancestors aired at 19:00 and traffic to record-matcher rose by half.
record-matcher runs three pods with a CPU limit of 1 core (JVM, 8 GC threads): from 19:05
each pod's demand reaches the limit, CFS throttles ~60 % of its periods (was ~4 %) and the
median latency climbs from ~0.14 s to over 1 s. The nodes have plenty of idle CPU; nobody
changed record-matcher (revision 41 is four days old). The cause is visible mainly in the
cAdvisor CFS counters. Red herrings: photo-restorer 4.2.0 rolled out 95 min ago in the same
namespace (healthy), an old OOM restart of dna-kit-tracker two days ago, a handful of
routine Elasticsearch timeouts and retries in record-matcher's logs at the usual rate, and a
readiness blip of the billing portal in another namespace."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import set_times
from tests.data.holdout2._generator.kit import cpu_seconds, deploy, requests, working_set
from tests.data.holdout3._generator.kit3 import (
    chatter,
    ghosts,
    ksm_deployment,
    log_pod,
    namespaces,
    quiet,
    steady,
)
from tests.data.holdout4._generator.kit4 import ramp
from tests.scenario_tools.common import MIB, container_metrics, truth
from tests.scenario_tools.kube import Ctr, http_probe

from .kit9 import Incident, NodeKind, provider_nodes

ID = "family-tree-search-crawling"
NOW = datetime.fromisoformat("2028-06-03T19:41:00+00:00")
NS = "records"
REG = "harbor.rootsline.net/records"
SURGE = NOW - timedelta(minutes=41)  # 19:00, the documentary


def build() -> Incident:
    s = Incident(
        id=ID, title="Family tree search crawling tonight", now=NOW,
        report="""\
Rootsline is crawling tonight: family tree search and the record hints panel take 5-10
seconds, some members say the hints never load. Started a bit after 19:00. We had a TV
mention tonight so maybe more visitors than usual, but it's not THAT much traffic.
""",
        truth=truth(
            "cpu_throttling", "Deployment", NS, "record-matcher",
            ["container_cpu_cfs_throttled_periods_total", "container_cpu_cfs_periods_total",
             "cpu: '1'", "record-matcher"],
            "record-matcher's pods are capped at 1 CPU each; since the traffic rise after 19:00 "
            "they sit at the limit and CFS throttles about 60 % of their periods, so searches "
            "and hints queue up (median 0.14 s -> over 1 s) although the nodes have idle CPU. "
            "Raise or remove record-matcher's CPU limit (e.g. requests 1, limit 3 or none) "
            "and add replicas for the evening peak."))
    set_times(s, 2.0, 60)
    c = s.cluster
    namespaces(s, {"default": 830, "kube-system": 830, NS: 800, "dna": 640, "billing": 800})
    kind = NodeKind("harvester-vm-8c32g", "8", "32854124Ki", "7910m", "31703148Ki",
                    "v1.31.4+rke2r1", "5.14.21-150500.55.73-default",
                    "SUSE Linux Enterprise Micro 5.5", runtime="containerd://1.7.23-k3s2")
    nodes = provider_nodes(s, "harvester", 4, kind, days=6.6, group="rl-prod")

    # ---- record-matcher: capped at one core, demand above it after 19:05
    ctr = Ctr("record-matcher", f"{REG}/record-matcher:7.14.2", port=8080,
              requests={"cpu": "500m", "memory": "2Gi"}, limits={"cpu": "1", "memory": "3Gi"},
              env={"JAVA_TOOL_OPTIONS": "-XX:MaxRAMPercentage=70 -XX:ParallelGCThreads=8",
                   "ES_URL": "http://records-es.records.svc:9200",
                   "HINTS_MAX_CANDIDATES": "400"},
              readiness=http_probe("/actuator/health/readiness", delay=20, timeout=3),
              liveness=http_probe("/actuator/health/liveness", delay=60, period=20,
                                  timeout=5, failures=6))
    _, pods = deploy(s, NS, "record-matcher", [ctr], replicas=3, nodes=nodes, revision=41,
                        rollout=s.ago(days=4, hours=3, minutes=12), service=8080,
                        annotations={"prometheus.io/scrape": "true",
                                     "prometheus.io/path": "/actuator/prometheus"},
                        old=(40, s.ago(days=16), [Ctr("record-matcher",
                                                     f"{REG}/record-matcher:7.14.1")]))
    ksm_deployment(s, NS, "record-matcher", lambda t: 3.0, lambda t: 3.0, lambda t: 0.0)

    def load(t: int) -> float:  # traffic relative to the usual evening
        return 1.0 + 0.55 * ramp(t, SURGE, 18)

    def demand(t: int) -> float:  # cores one pod would use without a limit
        return 0.68 * load(t)

    def hot(t: int) -> float:  # 0..1: how far demand passes the limit
        return min(1.0, max(0.0, (demand(t) - 0.75) / 0.25))

    for pod in pods:
        container_metrics(s, pod, "record-matcher",
                          memory=lambda t: 2140 * MIB * (1 + 0.03 * hot(t)),
                          cpu=lambda t: min(demand(t), 0.96),
                          throttle=lambda t: 0.04 + 0.58 * hot(t),
                          limit_memory=3 * 1024 * MIB, limit_cpu=1.0)
        requests(s, pod, "record-matcher", rps=lambda t: 12.5 * load(t), codes={
            "200": lambda t: 0.994 - 0.012 * hot(t), "404": lambda t: 0.005,
            "503": lambda t: 0.001 + 0.012 * hot(t)},
            median=lambda t: 0.14 + 1.05 * hot(t) ** 1.5,
            buckets=(0.1, 0.25, 0.5, 1.0, 2.5, 5.0))
    routine = [
        ("warn", "es request to records-es:9200 timed out after 2000ms "
         "(index=census-1900-1950), retry 1/2", {"error.type": "SocketTimeoutException"}),
    ]
    chatter(s, pods, "record-matcher", "record-matcher", [
        ("info", "GET /api/v2/hints?tree=T-5512093&person=P-118 200 131ms (38 candidates)", {}),
        ("info", "GET /api/v2/search?surname=Lindqvist&born=1871..1881 200 164ms", {}),
        ("info", "GET /api/v2/hints?tree=T-2093311&person=P-7 200 97ms (12 candidates)", {}),
        *routine,
    ], 110, end=SURGE + timedelta(minutes=6))
    chatter(s, pods, "record-matcher", "record-matcher", [
        ("info", "GET /api/v2/hints?tree=T-8810452&person=P-3 200 2481ms (211 candidates)", {}),
        ("info", "GET /api/v2/search?surname=O'Sullivan&born=1845..1855 200 1873ms", {}),
        ("warn", "slow request: GET /api/v2/hints took 6.12s (scoring 5.7s, es 0.31s)", {}),
        ("warn", "G1 Evacuation Pause took 412ms (young), 1.3 GB -> 0.9 GB", {}),
        ("error", "GET /api/v2/hints 503 request queue full (200 waiting), rejecting",
         {"http.response.status_code": 503}),
        ("info", "GET /api/v2/search?surname=Nowak&born=1890..1900 200 1190ms", {}),
        *routine,
    ], 150, start=SURGE + timedelta(minutes=6))

    # ---- Elasticsearch: healthy, a few routine slow-log lines
    es = Ctr("elasticsearch", "docker.elastic.co/elasticsearch/elasticsearch:8.15.3",
             port=9200, requests={"cpu": "2", "memory": "8Gi"}, limits={"memory": "8Gi"},
             readiness=http_probe("/_cluster/health?local=true", delay=20, timeout=5))
    _, ess = steady(s, NS, "records-es", [es], nodes=nodes, replicas=3, revision=9,
                    rollout=s.ago(days=5, hours=19), offset=1, service=9200)
    for pod in ess:
        quiet(s, [pod], "elasticsearch", 6900)
        cpu_seconds(s, pod, "elasticsearch", lambda t: 0.7 + 0.15 * (load(t) - 1))
    chatter(s, ess, "elasticsearch", "records-es", [
        ("info", "[census-1900-1950][2] took[812ms], took_millis[812], search_type"
         "[QUERY_THEN_FETCH], total_shards[6]", {"log.logger": "index.search.slowlog.query"}),
        ("info", "[parish-registers-se][0] merge segment [_4kq] done", {}),
    ], 40)

    # ---- red herrings
    roll = NOW - timedelta(minutes=95)
    pr = Ctr("photo-restorer", f"{REG}/photo-restorer:4.2.0", port=8080,
             requests={"cpu": "500m", "memory": "1536Mi"}, limits={"memory": "2Gi"},
             readiness=http_probe("/healthz"))
    pr_work, prs = steady(s, NS, "photo-restorer", [pr], nodes=nodes, replicas=2, revision=23,
                          rollout=roll, offset=2,
                          old=(22, s.ago(days=12), [Ctr("photo-restorer",
                                                       f"{REG}/photo-restorer:4.1.6")]))
    old_rs = pr_work.revisions[0]
    gone = ghosts(s, old_rs, nodes[2:], [s.ago(days=3, hours=2), s.ago(days=3, hours=2,
                                                                      minutes=-1)],
                  [roll + timedelta(seconds=50), roll + timedelta(seconds=95)])
    for ghost in gone:
        working_set(s, ghost, "photo-restorer", lambda t: 980 * MIB)
        log_pod(s, ghost, "photo-restorer", "photo-restorer", [
            ("info", "restored scan S-22931 (colorize=false, denoise=medium) in 3.4s", {}),
        ], 8)
    for pod in prs:
        quiet(s, [pod], "photo-restorer", 1010)
        requests(s, pod, "photo-restorer", rps=lambda t: 0.4, codes={
            "200": lambda t: 0.997, "500": lambda t: 0.003})
    chatter(s, prs, "photo-restorer", "photo-restorer", [
        ("info", "photo-restorer 4.2.0 started, model deoldify-v3.1 loaded (onnx, cpu)", {}),
        ("info", "restored scan S-23107 (colorize=true, denoise=low) in 4.1s", {}),
        ("warn", "scan S-23112 is 600 dpi grayscale TIFF with 16-bit depth, downsampling", {}),
    ], 40, start=roll + timedelta(minutes=1))
    dk = Ctr("dna-kit-tracker", f"{REG}/dna-kit-tracker:2.8.0", port=8080,
             requests={"cpu": "100m", "memory": "384Mi"}, limits={"memory": "512Mi"},
             readiness=http_probe("/ready"))
    _, dks = steady(s, "dna", "dna-kit-tracker", [dk], nodes=nodes, replicas=2, revision=14,
                    rollout=s.ago(days=5, hours=2),
                    restarted={1: (s.ago(days=2, hours=5), "OOMKilled", 137)})
    quiet(s, dks, "dna-kit-tracker", 300)
    chatter(s, dks, "dna-kit-tracker", "dna-kit-tracker", [
        ("info", "kit K-771203 status lab_received -> sequencing", {}),
        ("warn", "courier webhook for kit K-770981 retried (HTTP 502 from carrier)", {}),
    ], 30)
    bp = Ctr("billing-portal", f"{REG}/billing-portal:3.3.9", port=3000,
             requests={"cpu": "100m", "memory": "256Mi"}, limits={"memory": "512Mi"},
             readiness=http_probe("/api/health", delay=10))
    _, bps = steady(s, "billing", "billing-portal", [bp], nodes=nodes, replicas=1, revision=31,
                    rollout=s.ago(days=2, hours=8), offset=3, service=3000)
    quiet(s, bps, "billing-portal", 190)
    ip = bps[0]["status"]["podIP"]
    blip = NOW - timedelta(minutes=37)
    c.event(bps[0], "Unhealthy", f'Readiness probe failed: Get "http://{ip}:3000/api/health": '
            "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
            first=blip, last=blip + timedelta(seconds=10), count=2, type_="Warning",
            field_path="spec.containers{billing-portal}")
    return s
