"""Live captions: a broadcaster's subtitles on the evening live stream run seconds behind.
caption-aligner (three pods, CPU limit 500m, no autoscaler) aligns speech-recognition text
to the video segments. At 19:00 the evening news and two regional live channels start, the
alignment work a pod must do nearly triples, the pods hit their CFS quota (throttled in
~60% of periods, CPU pinned at 0.5 cores) and each segment takes 1.5-3 s instead of
0.1 s: the captions fall behind. No errors to speak of, no restarts: the cause is in the
metrics (cfs throttling, CPU at the limit) and in the aligner's own slow-segment warnings.
Red herrings: caption-editor 4.12.0 rolled out at 18:36 in the same namespace, a
speech-gateway that logs websocket reconnect errors all day, an aligner log line about a
failed statsd flush (harmless, all day), an OOM restart of transcript-archiver two days
ago."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import gke_nodes, set_times
from tests.data.holdout2._generator.kit import requests
from tests.data.holdout3._generator.kit3 import ksm_deployment
from tests.data.holdout4._generator.kit4 import ramp
from tests.scenario_tools.common import MIB, container_metrics, node_conditions, truth
from tests.scenario_tools.kube import Ctr, http_probe

from .kit15 import Incident, chatter, namespaces, neighbour, rolled, steady

ID = "live-captions-behind"
NOW = datetime.fromisoformat("2028-05-23T19:31:00+00:00")
NS = "captions"
REG = "europe-west4-docker.pkg.dev/bcast-media-prod/captions"
SURGE = NOW - timedelta(minutes=29)  # 19:02


def build() -> Incident:
    s = Incident(
        id=ID, title="Live subtitles lagging on the evening stream", now=NOW,
        report="""\
subtitles on the live stream are running way behind the picture, 5-10 sec at least,
started around 7pm when the evening news went on air. viewers are complaining on socials.
the replay/VOD subtitles look fine. anyone around?
""",
        truth=truth(
            "cpu_throttling", "Deployment", NS, "caption-aligner",
            ["container_cpu_cfs_throttled_periods_total", "500m",
             "segment alignment took"],
            "caption-aligner's pods are capped at 500m CPU and the evening live channels "
            "triple their alignment work: they are throttled in most CFS periods and every "
            "segment is aligned late. Raise (or drop) the CPU limit of caption-aligner, add "
            "replicas (or an autoscaler) for the evening peak."))
    set_times(s, 3.0, 60)
    namespaces(s, {"default": 700, "kube-system": 700, NS: 420, "vod": 410,
                   "monitoring": 650})
    nodes = gke_nodes(s, 4, project="bcast-media-prod", cluster="media-prod", pool="apps-e2",
                      region="europe-west4", instance="e2-standard-8",
                      kubelet="v1.32.4-gke.1415000", cpu="8", memory="32880280Ki",
                      alloc_cpu="7910m", alloc_memory="29212824Ki", days=5.6)
    node_conditions(s, nodes)

    # ---- the aligner
    image = f"{REG}/caption-aligner:2.19.4"
    ctr = Ctr("caption-aligner", image, port=8080,
              requests={"cpu": "500m", "memory": "512Mi"},
              limits={"cpu": "500m", "memory": "768Mi"},
              env={"ASR_GATEWAY_URL": "http://speech-gateway.captions.svc:8080",
                   "SEGMENT_BUDGET_MS": "1000", "WORKERS": "8",
                   "STATSD_HOST": "statsd-exporter.monitoring.svc"},
              readiness=http_probe("/ready", delay=5), liveness=http_probe(
                  "/healthz", delay=20, period=20, timeout=3))
    _, pods = steady(s, NS, "caption-aligner", [ctr], nodes=nodes, replicas=3, revision=41,
                        rollout=s.ago(days=4, hours=7, minutes=12), offset=1,
                        annotations={"prometheus.io/scrape": "true",
                                     "prometheus.io/port": "8080"})

    def load(t: int) -> float:  # live channels being captioned, relative to the afternoon
        return 1.0 + 1.8 * ramp(t, SURGE, 9)

    def demand(t: int) -> float:
        return 0.27 * load(t)

    def used(t: int) -> float:
        return min(0.497, demand(t))

    def throttled(t: int) -> float:
        return min(0.66, 0.035 + 0.63 * ramp(t, SURGE + timedelta(minutes=3), 8))

    def median(t: int) -> float:
        return 0.11 + 1.9 * ramp(t, SURGE + timedelta(minutes=3), 10)

    for pod in pods:
        base = 402 * MIB * s.rng.uniform(0.95, 1.05)
        container_metrics(s, pod, "caption-aligner",
                          memory=lambda t, b=base: b * (1 + 0.06 * ramp(t, SURGE, 12)),
                          cpu=used, throttle=throttled, limit_memory=768 * MIB,
                          limit_cpu=0.5)
        requests(s, pod, "caption-aligner", rps=lambda t: 4.6 * load(t),
                 codes={"200": lambda t: 0.999 - 0.012 * ramp(t, SURGE, 15),
                        "504": lambda t: 0.001 + 0.012 * ramp(t, SURGE, 15)},
                 median=median, buckets=(0.1, 0.25, 0.5, 1.0, 2.5, 5.0))
        s.metrics.gauge("caption_delivery_lag_seconds",
                        {"namespace": NS, "pod": pod["metadata"]["name"],
                         "channel": "live-main"},
                        [(t, round(1.3 + 7.4 * ramp(t, SURGE + timedelta(minutes=4), 12)
                                   * s.rng.uniform(0.9, 1.1), 3)) for t in s.times],
                        "Seconds between a segment's air time and its captions' delivery.")
    ksm_deployment(s, NS, "caption-aligner", lambda t: 3.0, lambda t: 3.0, lambda t: 0.0)
    chatter(s, pods, "caption-aligner", "caption-aligner", [
        ("info", "aligned segment ch=regional-north seq=88412 words=41 in 0.104s", {}),
        ("info", "aligned segment ch=live-main seq=120377 words=37 in 0.118s", {}),
        ("info", "aligned segment ch=kids seq=55120 words=12 in 0.061s", {}),
    ], 150, start=s.ago(hours=3), end=SURGE)
    chatter(s, pods, "caption-aligner", "caption-aligner", [
        ("warn", "segment alignment took 2.84s (budget 1.00s), delivering late "
                 "ch=live-main seq=120913", {}),
        ("warn", "segment alignment took 1.97s (budget 1.00s), delivering late "
                 "ch=regional-south seq=40231", {}),
        ("warn", "segment alignment took 3.12s (budget 1.00s), delivering late "
                 "ch=live-main seq=120988", {}),
        ("warn", "alignment backlog 23 segments (workers 8/8 busy)", {}),
        ("info", "aligned segment ch=kids seq=55702 words=9 in 0.421s", {}),
        ("info", "aligned segment ch=regional-north seq=88901 words=44 in 1.362s", {}),
    ], 240, start=SURGE + timedelta(minutes=5))
    chatter(s, pods, "caption-aligner", "caption-aligner", [
        ("error", "statsd flush failed: write udp 10.60.4.17:41288->10.96.12.40:9125: "
                  "write: connection refused (dropped 212 metrics)", {"error.type": "net"}),
    ], 18, start=s.ago(hours=3))

    # ---- red herrings
    def editor(version: str) -> Ctr:
        return Ctr("caption-editor", f"{REG}/caption-editor:{version}", port=3000,
                   requests={"cpu": "150m", "memory": "256Mi"}, limits={"memory": "512Mi"},
                   readiness=http_probe("/api/health", delay=8),
                   liveness=http_probe("/api/health", delay=30, period=20))
    rolled(s, NS, "caption-editor", editor, nodes, old="4.11.3", new="4.12.0",
           at=NOW - timedelta(minutes=55, seconds=14), revision=88, replicas=2, mib=230,
           rps=1.1,
           logs_old=[("info", "editor session opened user=subs-desk-07 ch=live-main", {}),
                     ("info", "cue 00:41:12.200 edited by subs-desk-03", {})],
           logs_new=[("info", "caption-editor 4.12.0 ready (node 20.12.2)", {}),
                     ("info", "editor session opened user=subs-desk-02 ch=regional-north", {}),
                     ("warn", "autosave conflict on cue 00:12:03.480 resolved "
                              "(last-writer-wins)", {}),
                     ("info", "cue 00:07:55.010 edited by subs-desk-02", {})], n_logs=60)
    neighbour(s, NS, "speech-gateway", f"{REG}/speech-gateway:1.33.0", nodes, replicas=2,
              revision=17, rollout=s.ago(days=2, hours=20), mib=310, cpu=0.4, rps=9.0,
              codes={"200": 0.996, "502": 0.004}, logs=[
                  ("info", "ASR stream ch=live-main opened (model=broadcast-de-v9)", {}),
                  ("error", "ASR upstream websocket closed code=1006 (abnormal closure), "
                            "reconnecting in 2s", {"error.type": "websocket"}),
                  ("info", "ASR stream ch=regional-north resumed after reconnect", {}),
                  ("info", "partial transcript flushed ch=kids words=14", {}),
                  ("info", "partial transcript flushed ch=live-main words=31", {}),
              ], n_logs=90)
    neighbour(s, NS, "transcript-archiver", f"{REG}/transcript-archiver:0.9.7", nodes,
              replicas=1, revision=9, rollout=s.ago(days=5, hours=2), mib=880, cpu=0.08,
              restarted={0: (s.ago(days=2, hours=3, minutes=41), "OOMKilled", 137)},
              limits={"memory": "1Gi"}, logs=[
                  ("info", "archived 412 cues for programme EPG-7781231 to gcs", {}),
                  ("info", "archive sweep done in 3.8s", {}),
              ], n_logs=20, offset=2)
    neighbour(s, "vod", "vod-subtitle-packager", f"{REG}/vod-subtitle-packager:3.2.1", nodes,
              replicas=2, revision=23, rollout=s.ago(days=3, hours=9), mib=190, cpu=0.1,
              logs=[("info", "packaged WebVTT for asset VOD-556120 (3 languages)", {}),
                    ("warn", "asset VOD-556131 has no German track, skipped", {})],
              n_logs=30, offset=3)
    return s
