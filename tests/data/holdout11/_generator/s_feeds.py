"""Podcast hosting: RSS feeds slow for podcast apps. At 19:04 someone rolled feed-builder
from revision 58 to 59 with the same image (4.12.2) and one environment change:
FEED_CACHE_TTL_SECONDS went from 900 to 0, so every feed fetch renders the whole episode
list from the database. Latency (http_request_duration_seconds) jumps from ~60 ms to over a
second at the rollout and CPU quadruples; the pods stay up and Ready. The signal is mainly
in metrics and in the ReplicaSets' templates. Red herrings: chapter-markers rolled out to a
new image 1 h 47 min ago in the same namespace (healthy), an OOM restart of
transcode-worker three days ago, occasional statement timeouts from the episodes database
before and after, and a noisy Kafka rebalance warning in listener-stats."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout2._generator.kit import cpu_seconds, deploy, drift, requests, working_set
from tests.data.holdout3._generator.kit3 import (
    chatter,
    ghosts,
    ksm_deployment,
    log_pod,
    namespaces,
    quiet,
    rolling_events,
    steady,
)
from tests.data.holdout4._generator.kit4 import ramp
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, http_probe

from .kit11 import Incident, apps_pool, secs

ID = "podcast-feeds-slow"
NOW = datetime.fromisoformat("2028-03-14T19:42:00+00:00")
NS = "hosting"
REG = "318847295012.dkr.ecr.ca-central-1.amazonaws.com/wavehaus"
IMAGE = f"{REG}/feed-builder:4.12.2"
DB = "episodes-prod.cluster-cq7x2mfa81ve.ca-central-1.rds.amazonaws.com"
BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


def feed_ctr(ttl: str) -> Ctr:
    return Ctr("feed-builder", IMAGE, port=8080,
               requests={"cpu": "500m", "memory": "512Mi"}, limits={"memory": "1Gi"},
               env={"EPISODE_DB_HOST": DB, "EPISODE_DB_POOL": "20",
                    "FEED_CACHE_TTL_SECONDS": ttl, "FEED_CACHE_REDIS_URL":
                    "redis://feed-cache.hosting.svc:6379/2", "CDN_BASE_URL":
                    "https://media.wavehaus.fm", "RENDER_WORKERS": "8"},
               readiness=http_probe("/internal/ready", delay=5, period=10),
               liveness=http_probe("/internal/live", delay=20, period=20, timeout=2))


def build() -> Incident:
    s = Incident(
        id=ID, title="Podcast RSS feeds slow for podcast apps", now=NOW,
        report="""\
Podcasters are emailing us that Apple Podcasts and Spotify show "feed could not be
refreshed" for their shows, and our own feed checker says fetches of
feeds.wavehaus.fm take 1-3 seconds since around 19:00 (normally way under 100 ms).
The web player seems fine. Can someone look at the hosting platform?
""",
        truth=truth(
            "bad_rollout", "Deployment", NS, "feed-builder",
            ["FEED_CACHE_TTL_SECONDS", "http_request_duration_seconds"],
            "Revision 59 of feed-builder (same image 4.12.2) set FEED_CACHE_TTL_SECONDS from "
            "900 to 0, disabling the rendered-feed cache: every fetch renders from the "
            "episodes database and latency went from ~60 ms to over a second. Roll back to "
            "revision 58 (kubectl rollout undo deployment/feed-builder -n hosting) or restore "
            "the 900 s TTL."))
    namespaces(s, {"default": 520, "kube-system": 520, NS: 470, "listener-stats": 301})
    nodes = apps_pool(s, 4, region="ca-central-1", subnet=41, pool="apps-m7i", days=6.3,
                      zones="abd")
    roll = NOW - timedelta(minutes=38, seconds=14)
    old_at = s.ago(days=6, hours=3, minutes=22)

    # ---- feed-builder: revision 59 differs from 58 only in one env value
    born = [secs(roll, 2 + 41 * i) for i in range(4)]
    work, pods = deploy(
        s, NS, "feed-builder", [feed_ctr("0")], replicas=4, nodes=nodes, revision=59,
        rollout=roll, born=lambda i: born[i], service=80,
        annotations={"prometheus.io/scrape": "true", "prometheus.io/port": "8080"},
        old=(58, old_at, [feed_ctr("900")]), offset=1)
    old_rs, new_rs = work.revisions[0], work.revisions[1]
    olds = ghosts(s, old_rs, nodes, [secs(old_at, 6 + 23 * i) for i in range(4)],
                  [secs(b, 37) for b in born])
    rolling_events(s, work, old_rs, new_rs, pods, olds, image=IMAGE, size=0)
    ksm_deployment(s, NS, "feed-builder", lambda t: 4.0, lambda t: 4.0, lambda t: 0.0)
    rps = 38.0 / 4

    def slow(t: int) -> float:
        return 1.05 + 0.25 * ramp(t, roll, 30)
    for ghost in olds:
        requests(s, ghost, "feed-builder", rps=lambda t: rps, codes={
            "200": lambda t: 0.81, "304": lambda t: 0.18, "404": lambda t: 0.01},
            median=lambda t: 0.058, buckets=BUCKETS)
        cpu_seconds(s, ghost, "feed-builder", lambda t: 0.31)
    for pod in pods:
        requests(s, pod, "feed-builder", rps=lambda t: rps, codes={
            "200": lambda t: 0.805, "304": lambda t: 0.18, "404": lambda t: 0.01,
            "503": lambda t: 0.005}, median=slow, buckets=BUCKETS)
        cpu_seconds(s, pod, "feed-builder", lambda t: 1.35)
    for p in [*olds, *pods]:
        working_set(s, p, "feed-builder", drift(s, 610 * 1024 * 1024))
    fast = [("info", f"GET /shows/{show}/feed.xml 200 {ms}ms", {"http.response.status_code":
                                                               200, "url.path":
                                                               f"/shows/{show}/feed.xml"})
            for show, ms in (("night-shift-stories", 41), ("the-compost-hour", 63),
                             ("backroads-cycling", 52), ("tiny-law-school", 77))]
    fast.append(("info", "GET /shows/quiet-harbour/feed.xml 304 4ms",
                 {"http.response.status_code": 304}))
    slow_lines = [("info", f"GET /shows/{show}/feed.xml 200 {ms}ms",
                   {"http.response.status_code": 200, "url.path": f"/shows/{show}/feed.xml"})
                  for show, ms in (("night-shift-stories", 1184), ("the-compost-hour", 1471),
                                   ("backroads-cycling", 962), ("tiny-law-school", 2210),
                                   ("market-close-daily", 1690))]
    slow_lines.append(("info", "GET /shows/quiet-harbour/feed.xml 304 1022ms",
                       {"http.response.status_code": 304}))
    dbwarn = ("warn", f"episode query on {DB} cancelled: statement timeout (5000ms) "
              "show=market-close-daily", {"error.type": "QueryCanceled"})
    for ghost in olds:
        log_pod(s, ghost, "feed-builder", "feed-builder", [*fast, *fast, dbwarn], 70)
    chatter(s, pods, "feed-builder", "feed-builder", [*slow_lines, *slow_lines, dbwarn], 300,
            start=roll + timedelta(seconds=20))
    for i, pod in enumerate(pods):
        s.logs.add(born[i] + timedelta(seconds=11.4), "info",
                   "feed-builder 4.12.2 listening on :8080 (render_workers=8, db_pool=20)",
                   namespace=NS, pod=pod["metadata"]["name"], container="feed-builder",
                   service="feed-builder", node=pod["spec"]["nodeName"])

    # ---- red herrings
    chap_at = NOW - timedelta(hours=1, minutes=47)
    _, chaps = steady(s, NS, "chapter-markers", [Ctr(
        "chapter-markers", f"{REG}/chapter-markers:2.4.0", port=8080,
        requests={"cpu": "100m", "memory": "192Mi"}, limits={"memory": "256Mi"},
        readiness=http_probe("/healthz"))], nodes=nodes, replicas=2, revision=17,
        rollout=chap_at, old=(16, s.ago(days=11), [Ctr("chapter-markers",
                                                      f"{REG}/chapter-markers:2.3.1")]))
    quiet(s, chaps, "chapter-markers", 140)
    for pod in chaps:
        requests(s, pod, "chapter-markers", rps=lambda t: 1.4, codes={
            "200": lambda t: 0.995, "422": lambda t: 0.005})
    chatter(s, chaps, "chapter-markers", "chapter-markers", [
        ("info", "chapter-markers 2.4.0 started, podcast:chapters JSON v1.2 enabled", {}),
        ("info", "POST /episodes/ep_8812xq/chapters 201 (14 chapters)", {}),
        ("warn", "chapter image https://img.example-host.net/c/77.png returned 404, skipped",
         {}),
    ], 40)
    _, trans = steady(s, NS, "transcode-worker", [Ctr(
        "transcode-worker", f"{REG}/transcode-worker:7.1.5", port=9090, port_name="metrics",
        requests={"cpu": "1", "memory": "1536Mi"}, limits={"memory": "2Gi"})], nodes=nodes,
        replicas=2, revision=33, rollout=s.ago(days=5, hours=2), service=None,
        restarted={1: (s.ago(days=3, hours=4, minutes=9), "OOMKilled", 137)}, offset=2)
    quiet(s, trans, "transcode-worker", 1100)
    chatter(s, trans, "transcode-worker", "transcode-worker", [
        ("info", "transcoded ep_8809ka.wav -> 128k mp3 in 41.2s", {}),
        ("info", "transcoded ep_8811rm.flac -> 128k mp3 in 63.0s", {}),
    ], 30)
    _, stats = steady(s, "listener-stats", "stats-ingest", [Ctr(
        "stats-ingest", f"{REG}/stats-ingest:1.19.0", port=8080,
        requests={"cpu": "250m", "memory": "384Mi"}, limits={"memory": "512Mi"})],
        nodes=nodes, replicas=3, revision=8, rollout=s.ago(days=2, hours=19), offset=3)
    quiet(s, stats, "stats-ingest", 300)
    chatter(s, stats, "stats-ingest", "stats-ingest", [
        ("warn", "consumer group stats-ingest rebalancing (member left: heartbeat expired)",
         {}),
        ("info", "flushed 18211 download events to s3://wavehaus-stats/raw/", {}),
        ("info", "IAB 2.2 filter dropped 412 duplicate downloads", {}),
    ], 90)
    return s
