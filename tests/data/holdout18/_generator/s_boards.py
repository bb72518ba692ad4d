"""Regional buses: station departure boards show "no live data". departure-feed (3 pods,
up for six days since revision 22) leaks one socket for every board websocket that drops
without a close frame; the morning rush of board reconnects drives its open descriptors to
the soft limit of 1024. From about 07:34 its pods fail `accept4: too many open files`
and cannot dial the cache either: 500s and 503s, readiness flapping. The cause is the
inner resource, not a release. Red herrings: journey-planner 4.8.0 rolled out in the same
namespace 36 min before the onset (the report suspects it), readiness probe failures that
look like a probe problem, an OOM restart of vehicle-positions two days ago, stale
vehicle-position warnings and a few normal cache timeouts in departure-feed itself."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import eks_nodes, set_times
from tests.data.holdout2._generator.kit import cpu_seconds, requests, working_set
from tests.data.holdout3._generator.kit3 import (
    chatter,
    ghosts,
    ksm_deployment,
    log_pod,
    namespaces,
    quiet,
    ready_since,
    steady,
)
from tests.scenario_tools.common import MIB, truth
from tests.scenario_tools.kube import Ctr, http_probe

from .kit18 import Incident, clip, pod_gauge, timed_logs

ID = "departure-boards-no-live-data"
NOW = datetime.fromisoformat("2028-03-14T08:12:00+00:00")
NS = "transit"
ECR = "318204776512.dkr.ecr.eu-central-1.amazonaws.com"
IMAGE = f"{ECR}/transit/departure-feed:2.14.3"


def build() -> Incident:
    s = Incident(
        id=ID, title="Station departure boards show no live data", now=NOW,
        report="""\
Since roughly 07:30 a lot of the departure boards at bus stations show "no live data" and
the app's departures tab is failing on and off. Rush hour, so this is very visible. The
journey planner got a new release this morning, could that be it? Please check transit prod.
""",
        truth=truth(
            "resource_exhaustion", "Deployment", NS, "departure-feed",
            ["too many open files", "process_open_fds", "1024"],
            "departure-feed leaks a file descriptor for every board websocket that drops "
            "without a close frame; after six days of uptime and the morning rush of board "
            "reconnects its pods reached the open-file limit of 1024 and can no longer accept "
            "connections or dial the cache. Restart departure-feed to recover now, raise "
            "its nofile limit, and fix the socket leak in the websocket hub."))
    set_times(s, 3.0, 60)
    c = s.cluster
    namespaces(s, {"default": 540, "kube-system": 540, NS: 512, "ops-tools": 300})
    nodes = eks_nodes(s, 4, region="eu-central-1", subnet=44, pool="transit-m7i",
                      instance="m7i.xlarge", kubelet="v1.32.5-eks-5d4a308",
                      kernel="6.1.134-152.225.amzn2023.x86_64",
                      os_image="Amazon Linux 2023.7.20250512", cpu="4", memory="15896988Ki",
                      alloc_cpu="3920m", alloc_memory="14879132Ki", days=6.9)

    # ---- departure-feed: up six days, descriptors climbing to the limit
    rollout = s.ago(days=6, hours=3, minutes=41)
    ctr = Ctr("departure-feed", IMAGE, port=8080,
              requests={"cpu": "300m", "memory": "384Mi"}, limits={"memory": "768Mi"},
              env={"CACHE_ADDR": "departures-cache.xq3tfl.ng.0001.euc1.cache.amazonaws.com:6379",
                   "BOARD_WS_IDLE_TIMEOUT": "0", "GOMAXPROCS": "2",
                   "GTFS_STATIC_URL": "s3://transit-gtfs-prod/static/latest.zip"},
              readiness=http_probe("/readyz", delay=5, period=10, timeout=2),
              liveness=http_probe("/healthz", delay=20, period=30, timeout=5, failures=5))
    _, pods = steady(s, NS, "departure-feed", [ctr], nodes=nodes, replicas=3, revision=22,
                        rollout=rollout, service=80,
                        annotations={"prometheus.io/scrape": "true",
                                     "prometheus.io/port": "8080"},
                        old=(21, s.ago(days=13), [Ctr("departure-feed",
                                                     f"{ECR}/transit/departure-feed:2.14.1")]))
    onset = [NOW - timedelta(minutes=38, seconds=20), NOW - timedelta(minutes=33, seconds=5),
             NOW - timedelta(minutes=24, seconds=40)]
    start_fds = [871.0, 842.0, 806.0]
    rush = (NOW - timedelta(minutes=75)).timestamp()

    def fds(i: int):
        def value(t: int) -> float:
            t0 = s.times[0]
            slow = min(t, rush) - t0
            fast = max(0, t - rush)
            k = (onset[i].timestamp() - rush)
            rate = (1024.0 - start_fds[i] - 0.0093 * (rush - t0)) / k
            return float(round(clip(start_fds[i] + 0.0093 * slow + rate * fast, 0, 1024.0)))
        return value

    def broken(i: int):
        return lambda t: t >= onset[i].timestamp()

    for i, pod in enumerate(pods):
        pod_gauge(s, "process_open_fds", pod, "departure-feed", fds(i),
                  "Number of open file descriptors.")
        pod_gauge(s, "process_max_fds", pod, "departure-feed", lambda t: 1024.0,
                  "Maximum number of open file descriptors.")
        pod_gauge(s, "board_websocket_sessions", pod, "departure-feed",
                  lambda t, i=i: fds(i)(t) * 0.21 + 40, "Board websocket sessions "
                  "currently registered in the hub.")
        working_set(s, pod, "departure-feed", lambda t, b=300 + 15 * i: b * MIB * (
            1 + 0.0000012 * (t - s.times[0])))
        cpu_seconds(s, pod, "departure-feed", lambda t: 0.19 if t < rush else 0.27)
        bad = broken(i)
        requests(s, pod, "departure-feed", rps=lambda t: 7.5 if t < rush else 12.0, codes={
            "200": lambda t, b=bad: 0.58 if b(t) else 0.998,
            "500": lambda t, b=bad: 0.27 if b(t) else 0.001,
            "503": lambda t, b=bad: 0.15 if b(t) else 0.001},
            median=lambda t, b=bad: 0.9 if b(t) else 0.04, buckets=(0.05, 0.1, 0.25, 1.0,
                                                                    2.5))
        ip = pod["status"]["podIP"]
        if i < 2:
            flaps = 14 if i == 0 else 9
            c.event(pod, "Unhealthy", f'Readiness probe failed: Get "http://{ip}:8080/readyz": '
                    f"read tcp {pod['status']['hostIP']}:51234->{ip}:8080: read: "
                    "connection reset by peer",
                    first=onset[i] + timedelta(seconds=52), last=NOW - timedelta(
                        seconds=40 + 60 * i), count=flaps, type_="Warning",
                    field_path="spec.containers{departure-feed}")
            ready_since(pod, NOW - timedelta(seconds=11 + 60 * i))
        chatter(s, [pod], "departure-feed", "departure-feed", [
            ("info", "board BRD-HBF-07 subscribed to stops [4711 4712 4718]", {}),
            ("info", "served departures stop=3302 lines=6 in 12ms", {}),
            ("warn", "vehicle position for trip 611-0712 is 184s stale, dropping", {}),
            ("warn", "redis GET departures:stop:4711 timeout after 50ms, serving from memory",
             {"error.type": "timeout"}),
            ("info", "board BRD-ZOB-02 websocket closed (code 1006), reconnect expected", {}),
        ], 150, end=onset[i])
        err = []
        t = onset[i] + timedelta(seconds=3)
        n = 0
        while t < NOW:
            k = n % 4
            if k == 0:
                err.append((t, "error", "http: Accept error: accept tcp [::]:8080: accept4: "
                            "too many open files; retrying in 1s", {"error.type": "EMFILE"}))
            elif k == 1:
                err.append((t, "error", "GET /v1/departures?stop=4711 500: dial tcp "
                            "10.44.17.203:6379: socket: too many open files",
                            {"http.response.status_code": 500, "error.type": "EMFILE"}))
            elif k == 2:
                err.append((t, "warn", "board hub: 812 sessions, 0 closed in last 60s "
                            "(idle timeout disabled)", {}))
            else:
                err.append((t, "error", "open /etc/gtfs/calendar_dates.txt: too many open "
                            "files", {"error.type": "EMFILE"}))
            n += 1
            t += timedelta(seconds=23 + s.rng.randrange(0, 17))
        timed_logs(s, pod, "departure-feed", "departure-feed", err)
    ksm_deployment(s, NS, "departure-feed", lambda t: 3.0,
                   lambda t: 2.0 if t >= onset[0].timestamp() and t // 60 % 3 == 0
                   else 3.0)

    # ---- red herring: journey-planner 4.8.0 rolled out 36 min before the onset
    roll = onset[0] - timedelta(minutes=36)
    jp = Ctr("journey-planner", f"{ECR}/transit/journey-planner:4.8.0", port=8080,
             requests={"cpu": "500m", "memory": "1Gi"}, limits={"memory": "1536Mi"},
             readiness=http_probe("/ready", delay=10))
    jwork, jpods = steady(s, NS, "journey-planner", [jp], nodes=nodes, replicas=2,
                          revision=57, rollout=roll, offset=1,
                          old=(56, s.ago(days=11), [Ctr("journey-planner",
                                                       f"{ECR}/transit/journey-planner:4.7.2")]))
    old_rs = jwork.revisions[0]
    gone = ghosts(s, old_rs, nodes, [s.ago(days=11) + timedelta(seconds=30 * i)
                                     for i in range(2)],
                  [roll + timedelta(seconds=50 + 40 * i) for i in range(2)])
    for g in gone:
        log_pod(s, g, "journey-planner", "journey-planner", [
            ("info", "route 3302->4711 computed in 41ms (3 legs)", {}),
            ("info", "raptor index rebuilt for service day 2028-03-14", {}),
        ], 30)
    for pod in jpods:
        quiet(s, [pod], "journey-planner", 980)
        requests(s, pod, "journey-planner", rps=lambda t: 3.1, codes={
            "200": lambda t: 0.994, "404": lambda t: 0.005, "500": lambda t: 0.001})
    chatter(s, jpods, "journey-planner", "journey-planner", [
        ("info", "journey-planner 4.8.0 started, walking-speed model v3", {}),
        ("info", "route 3302->4711 computed in 39ms (3 legs)", {}),
        ("warn", "no footpath between stops 5120 and 5121 within 400m, skipping transfer", {}),
    ], 60, start=roll)
    ksm_deployment(s, NS, "journey-planner", lambda t: 2.0, lambda t: 2.0)

    # ---- red herring: vehicle-positions with an old OOM restart, stale-position noise
    vp = Ctr("vehicle-positions", f"{ECR}/transit/vehicle-positions:1.31.0", port=8080,
             requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "512Mi"})
    _, vps = steady(s, NS, "vehicle-positions", [vp], nodes=nodes, replicas=2, revision=18,
                    rollout=s.ago(days=4, hours=2), offset=2,
                    restarted={1: (s.ago(days=2, hours=5), "OOMKilled", 137)})
    quiet(s, vps, "vehicle-positions", 320)
    chatter(s, vps, "vehicle-positions", "vehicle-positions", [
        ("info", "AVL batch: 412 vehicles, 3 without GPS fix", {}),
        ("warn", "vehicle 7731 reported position outside service area, ignored", {}),
        ("error", "AVL gateway sent malformed frame from vehicle 2209 (crc mismatch)", {}),
    ], 80)

    # ---- a minor issue elsewhere
    tool = Ctr("status-page-sync", "ghcr.io/transit-ops/status-page-sync:0.9.4", port=3000,
               requests={"cpu": "50m", "memory": "64Mi"}, limits={"memory": "128Mi"},
               readiness=http_probe("/health", delay=5, timeout=1))
    _, tools = steady(s, "ops-tools", "status-page-sync", [tool], nodes=nodes, replicas=1,
                      revision=4, rollout=s.ago(days=3, hours=8), offset=3)
    quiet(s, tools, "status-page-sync", 48)
    first = NOW - timedelta(minutes=51)
    c.event(tools[0], "Unhealthy", f'Readiness probe failed: Get "http://'
            f'{tools[0]["status"]["podIP"]}:3000/health": context deadline exceeded '
            "(Client.Timeout exceeded while awaiting headers)", first=first,
            last=first + timedelta(seconds=20), count=2, type_="Warning",
            field_path="spec.containers{status-page-sync}")
    return s
