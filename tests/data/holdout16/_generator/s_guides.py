"""Museum audio guide: visitors' tracks stop loading from about 10:40. audio-stream 2.14.1
(rolled out four days ago) keeps an open handle on every transcoded segment it serves from
its local cache and never closes it; the open descriptors climb steadily and, one pod after
the other, reach the 65536 limit. The Go server then fails in accept4 ("too many open
files") and segment opens fail, so streams stall and requests end in 503. Culprit: the
Deployment guides/audio-stream (resource_exhaustion), visible mainly in its metrics
(process_open_fds against process_max_fds) and its logs.

Red herrings: tour-catalog 5.0.0 rolled out 50 minutes before the onset in the same
namespace, audio-stream's ERROR lines about expiring track rights all along, an old
OOMKilled restart of the ticket scanner in another namespace, cache-miss warnings of the
media edge and two readiness time-outs of the gift shop site earlier this morning."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import gauge, gke_nodes, set_times
from tests.data.holdout2._generator.kit import cpu_seconds, deploy, requests
from tests.data.holdout3._generator.kit3 import chatter, ghosts, log_pod, namespaces, quiet, steady
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, http_probe
from tests.scenario_tools.parts import readiness_blip

from .kit import Incident

ID = "audio-guide-tracks-stalling"
NOW = datetime.fromisoformat("2028-09-23T11:26:00+00:00")
NS = "guides"
AR = "europe-west4-docker.pkg.dev/museo-prod/apps"
LIMIT = 65536


def build() -> Incident:
    s = Incident(
        id=ID, title="Audio guide tracks stalling", now=NOW,
        report="""\
Front desk says the audio guide app on visitors' phones stops mid-track or never starts
playing, since late morning. Started slowly and now it's most of the galleries. Saturday,
so the museum is packed. Can someone look at the guides service?
""",
        truth=truth(
            "resource_exhaustion", "Deployment", NS, "audio-stream",
            ["too many open files", "process_open_fds", "process_max_fds", "65536"],
            "audio-stream 2.14.1 leaks a file descriptor for every cached segment it "
            "serves; after four days its pods reach the 65536 open-file limit one by one "
            "and fail in accept4 and open with 'too many open files'. Restart the "
            "audio-stream pods to recover now, then fix the leak (close segment files "
            "after serving) or roll back to 2.13.x."))
    set_times(s, 3.0, 60)
    namespaces(s, {"default": 640, "kube-system": 640, NS: 602, "ticketing": 602,
                   "shop": 515})
    nodes = gke_nodes(s, 3, project="museo-prod", cluster="museo-prod-ew4", pool="apps",
                      region="europe-west4", instance="n2d-standard-4",
                      kubelet="v1.32.4-gke.1106006", cpu="4", memory="16393604Ki",
                      alloc_cpu="3920m", alloc_memory="13257604Ki", days=6.6)
    rollout = s.ago(days=4, hours=2, minutes=17)
    # descriptors leaked per second at Saturday traffic; pod i reaches the limit at full_at[i]
    full_at = [NOW - timedelta(minutes=m) for m in (46, 29, 12)]

    def fds(i: int, t: int) -> float:
        start = full_at[i].timestamp() - 3.4 * 3600
        base = LIMIT - 14_000
        if t < start:
            return base + 0.3 * (t - start)  # before opening hours: slower creep
        return min(float(LIMIT), base + 14_000 * (t - start) / (3.4 * 3600))

    def stalled(i: int, t: int) -> float:
        return 1.0 if t >= full_at[i].timestamp() else 0.0

    # ---- audio-stream: four days up, descriptors leaking
    ctr = Ctr("audio-stream", f"{AR}/audio-stream:2.14.1", port=8080,
              requests={"cpu": "500m", "memory": "512Mi"}, limits={"memory": "1Gi"},
              env={"SEGMENT_CACHE_DIR": "/cache/segments", "GOMAXPROCS": "2",
                   "TRACK_STORE": "gs://museo-prod-guide-tracks"},
              readiness=http_probe("/readyz", delay=5, period=10, timeout=2),
              liveness=http_probe("/livez", delay=15, period=20, timeout=5, failures=6),
              mounts=[{"mountPath": "/cache", "name": "segment-cache"}])
    _, pods = deploy(s, NS, "audio-stream", [ctr], replicas=3, nodes=nodes, revision=41,
                     rollout=rollout, service=80,
                     volumes=[{"name": "segment-cache", "emptyDir": {"sizeLimit": "20Gi"}}],
                     annotations={"prometheus.io/scrape": "true", "prometheus.io/port": "8080"})
    buckets = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
    for i, pod in enumerate(pods):
        labels = {"namespace": NS, "pod": pod["metadata"]["name"], "service": "audio-stream"}
        gauge(s, "process_open_fds", labels, lambda t, i=i: round(fds(i, t)),
              "Number of open file descriptors.")
        gauge(s, "process_max_fds", labels, lambda t: float(LIMIT),
              "Maximum number of open file descriptors.")
        quiet(s, [pod], "audio-stream", 420 + 35 * i)
        cpu_seconds(s, pod, "audio-stream", lambda t, i=i: 0.34 - 0.2 * stalled(i, t))
        requests(s, pod, "audio-stream", rps=lambda t: 6.5, codes={
            "200": lambda t, i=i: 0.997 - 0.78 * stalled(i, t),
            "206": lambda t: 0.002,
            "503": lambda t, i=i: 0.001 + 0.78 * stalled(i, t)},
            median=lambda t, i=i: 0.08 + 1.4 * stalled(i, t), buckets=buckets)
        before = full_at[i]
        rights = ("error", "track rights check: T-0412 (Room 7, 'The Night Watch commentary') "
                  "licence expires in 6 days", {"error.type": "RightsExpiring"})
        chatter(s, [pod], "audio-stream", "audio-stream", [
            ("info", "GET /tracks/T-0233/seg/00017.aac 200 from cache in 14ms", {}),
            ("info", "GET /tracks/T-0388/seg/00002.aac 200 transcoded in 212ms", {}),
            ("info", "segment cache: 18211 entries, 11.2 GiB", {}), rights],
            60, start=s.ago(hours=3), end=before)
        chatter(s, [pod], "audio-stream", "audio-stream", [
            ("error", "http: Accept error: accept tcp [::]:8080: accept4: too many open "
             "files; retrying in 1s", {"error.type": "EMFILE"}),
            ("error", "GET /tracks/T-0515/seg/00009.aac 503: open /cache/segments/T-0515/"
             "00009.aac: too many open files", {"http.response.status_code": 503,
                                                "error.type": "EMFILE"}),
            ("warn", "transcoder: cannot create temp file: open /tmp/tc-881920: too many open "
             "files", {"error.type": "EMFILE"}), rights],
            int(24 + (NOW - before).total_seconds() / 90), start=before)
    gauge(s, "kube_deployment_status_replicas_available", {"namespace": NS,
                                                           "deployment": "audio-stream"},
          lambda t: 3.0, "The number of available replicas per deployment.")

    # ---- tour-catalog: rolled out 50 minutes before the first pod filled up
    roll = full_at[0] - timedelta(minutes=50)
    tc = Ctr("tour-catalog", f"{AR}/tour-catalog:5.0.0", port=8080,
             requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "384Mi"},
             readiness=http_probe("/readyz"))
    work, cats = deploy(s, NS, "tour-catalog", [tc], replicas=2, nodes=nodes, revision=18,
                        rollout=roll, born=lambda i: roll + timedelta(seconds=4 + 36 * i),
                        offset=1, old=(17, s.ago(days=5, hours=20), [Ctr(
                            "tour-catalog", f"{AR}/tour-catalog:4.9.3")]))
    gone = ghosts(s, work.revisions[0], nodes, [s.ago(days=5, hours=20) + timedelta(
        seconds=21 * i) for i in range(2)], [roll + timedelta(seconds=44 + 36 * i)
                                            for i in range(2)])
    entries = [("info", "GET /v5/tours/highlights-90min 200 in 9ms", {}),
               ("info", "catalogue reloaded: 41 tours, 612 stops, 3 languages added", {})]
    for pod in cats + gone:
        requests(s, pod, "tour-catalog", rps=lambda t: 2.1, codes={
            "200": lambda t: 0.999, "404": lambda t: 0.001},
            median=lambda t: 0.012, buckets=buckets)
    quiet(s, cats, "tour-catalog", 130)
    for ghost in gone:
        log_pod(s, ghost, "tour-catalog", "tour-catalog", entries, 8)
    chatter(s, cats, "tour-catalog", "tour-catalog", [
        *entries, ("warn", "stop S-1204 has no Ukrainian transcript yet, falling back to en",
                   {})], 36)

    # ---- media edge, ticket scanner, gift shop
    me = Ctr("media-edge", "docker.io/library/nginx:1.27.5", port=8080,
             requests={"cpu": "200m", "memory": "128Mi"}, limits={"memory": "256Mi"})
    _, mes = steady(s, NS, "media-edge", [me], nodes=nodes, replicas=2, revision=12,
                    rollout=s.ago(days=6, hours=1), offset=2)
    quiet(s, mes, "media-edge", 48)
    chatter(s, mes, "media-edge", "media-edge", [
        ("warn", "upstream cache MISS for /img/rooms/room-07-1600.webp, fetching from origin",
         {}),
        ("info", "GET /img/rooms/room-12-800.webp 200 HIT", {}),
        ("warn", "client closed connection while sending to client (499)", {})], 60)
    sc = Ctr("ticket-scanner", f"{AR}/ticket-scanner:1.19.0", port=8080,
             requests={"cpu": "250m", "memory": "384Mi"}, limits={"memory": "512Mi"})
    _, scs = steady(s, "ticketing", "ticket-scanner", [sc], nodes=nodes, replicas=2,
                    revision=26, rollout=s.ago(days=3, hours=14),
                    restarted={0: (s.ago(days=1, hours=21), "OOMKilled", 137)})
    quiet(s, scs, "ticket-scanner", 310)
    chatter(s, scs, "ticket-scanner", "ticket-scanner", [
        ("info", "ticket MT-2028-0923-004412 admitted at gate north", {}),
        ("warn", "ticket MT-2028-0922-118004 already used (entry 2028-09-22 14:10)", {})], 50)
    readiness_blip(s, "shop", "gift-shop-web", f"{AR}/gift-shop-web:7.2.0", nodes,
                   port=3000, path="/api/health", minutes_ago=57)
    return s
