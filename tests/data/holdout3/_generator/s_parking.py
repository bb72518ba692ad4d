"""Mobility: starting and stopping a parking session is slow during the morning commute.
session-api (Node.js) runs with a CPU limit of 300m that was fine while most drivers paid at
ticket machines; since the city switched a district to app-only parking, the commute peak
needs more CPU than the limit allows. The container is throttled in most CFS periods, its
CPU usage is flat at the limit, the event loop lags and latency climbs with the traffic.
Nothing was deployed, nothing restarts, the nodes have idle CPU, the database is fine."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from functools import partial

from tests.data.holdout._generator.base import daemonset, gauge, set_times
from tests.data.holdout2._generator.kit import (
    NodeKind,
    app_counter,
    cpu_seconds,
    requests,
    summary,
)
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, http_probe, tcp_probe
from tests.scenario_tools.telemetry import integrate

from .kit3 import Incident, ack_nodes, chatter, log_pod, namespaces, quiet, steady, times_of

ID = "parking-sessions-slow"
NOW = datetime.fromisoformat("2027-05-04T06:52:00+00:00")
NS = "parkpass"
REG = "parkpass-registry-vpc.eu-central-1.cr.aliyuncs.com/parkpass"
LIMIT = 0.3


def build() -> Incident:
    s = Incident(
        id=ID,
        title="Parking sessions slow to start in the app",
        now=NOW,
        report="""\
Starting or stopping a parking session in the ParkPass app takes 5-10 seconds this morning,
some drivers get "Zeitüberschreitung, bitte erneut versuchen" and retry, support lines are
ringing. It started slowly around 07:30 local and gets worse with the commute. No deploys
since last week. Traffic is up since the city went app-only in Mitte on Monday, but not
that much. Where is the time going?
""",
        truth=truth(
            "cpu_throttling", "Deployment", NS, "session-api",
            ["container_cpu_cfs_throttled_periods_total", "cpu: 300m",
             "nodejs_eventloop_lag_p99_seconds", "throttled"],
            "session-api is throttled at its 300m CPU limit in most CFS periods during the "
            "commute peak (usage flat at the limit, event loop lag up, latency up; the nodes "
            "have idle CPU): raise or remove the CPU limit (keep the request near real usage, "
            "about 400m) and add replicas or an HPA on CPU before the next peak."))
    set_times(s, 2.5, 60)
    c = s.cluster
    namespaces(s, {"default": 720, "kube-system": 720, NS: 650, "enforcement": 430,
                   "backoffice": 610})
    g7 = NodeKind("ecs.g7.xlarge", "4", "15896224Ki", "3900m", "12803744Ki",
                  "v1.31.1-aliyun.1", "5.10.134-18.al8.x86_64",
                  "Alibaba Cloud Linux 3.2104 U11 (OpenAnolis Edition)",
                  runtime="containerd://1.6.36", pods="64", storage="123329516Ki",
                  alloc_storage="113658262569")
    nodes = ack_nodes(s, 4, region="eu-central-1", zones="ab", subnet="10.80.3", kind=g7,
                      pool_id="np5c1e0a7d2f4b4e19b3a8b1e6f4c2d9a0",
                      cluster_id="c4d9e1f0a2b3c47e8a9b0c1d2e3f4a5b6", days=6.7)

    # ---- traffic of the morning commute (requests a second, whole service)
    def traffic(t: int) -> float:
        hour = (t % 86400) / 3600  # UTC; the peak builds from 05:00 (07:00 local)
        rise = min(1.0, max(0.0, (hour - 4.6) / 2.2)) ** 1.4
        return 9.0 + 132.0 * rise

    def demand(t: int) -> float:  # cores one pod would use without a limit
        return 0.021 + 0.0069 * traffic(t) / 3

    def load(t: int) -> float:
        return demand(t) / LIMIT

    def used(t: int) -> float:
        return min(demand(t), LIMIT * 0.985) * s.rng.uniform(0.96, 1.02)

    def throttled(t: int) -> float:
        return min(0.94, max(0.015, (load(t) - 0.42) * 1.45))

    def median(t: int) -> float:
        return 0.021 + 0.52 * max(0.0, load(t) - 0.55) ** 1.6

    def p99(t: int) -> float:
        return median(t) * (4.4 + 9.0 * max(0.0, load(t) - 0.7))

    # ---- session-api
    api = Ctr("session-api", f"{REG}/session-api:4.21.3", port=3000,
              requests={"cpu": "250m", "memory": "256Mi"},
              limits={"cpu": "300m", "memory": "512Mi"},
              env={"NODE_ENV": "production", "UV_THREADPOOL_SIZE": "8",
                   "PG_HOST": "pgm-gw8p2k7x1c9d4e6f.pg.rds.aliyuncs.com",
                   "REDIS_URL": "redis://session-cache.parkpass.svc:6379/0"},
              readiness=http_probe("/healthz/ready", "http", delay=5, period=10, timeout=1,
                                   failures=3),
              liveness=http_probe("/healthz/live", "http", delay=20, period=20, timeout=2,
                                  failures=5))
    rollout = s.ago(days=6, hours=2, minutes=17)
    work, pods = steady(s, NS, "session-api", [api], nodes=nodes, replicas=3, revision=88,
                        rollout=rollout + timedelta(days=0.2),
                        labels={"app.kubernetes.io/name": "session-api",
                                "app.kubernetes.io/part-of": "parkpass"},
                        annotations={"prometheus.io/scrape": "true",
                                     "prometheus.io/port": "3000"})
    for pod in pods:
        name = pod["metadata"]["name"]
        labels = {"namespace": NS, "pod": name, "container": "session-api"}
        times = times_of(s, pod)
        cpu_seconds(s, pod, "session-api", used, times=times)
        s.metrics.counter("container_cpu_cfs_periods_total", labels, _count(
            s, times, lambda t: 10.0 * min(1.0, 0.35 + load(t))), "Number of elapsed "
            "enforcement period intervals.")
        s.metrics.counter("container_cpu_cfs_throttled_periods_total", labels, _count(
            s, times, lambda t: 10.0 * min(1.0, 0.35 + load(t)) * throttled(t)),
            "Number of throttled period intervals.")
        gauge(s, "nodejs_eventloop_lag_p99_seconds", {"namespace": NS, "pod": name},
              lambda t: 0.011 + 0.9 * max(0.0, load(t) - 0.6) ** 1.3 * s.rng.uniform(0.8, 1.2),
              "The 99th percentile of the recorded event loop delays.", times=times)
        summary(s, "http_request_duration_seconds", "Duration of HTTP requests in seconds",
                {"namespace": NS, "pod": name, "route": "/v1/sessions"}, times,
                lambda t: traffic(t) / 3 * 0.71,
                {"0.5": median, "0.99": p99}, lambda t: median(t) * 1.5)
        requests(s, pod, "session-api", rps=lambda t: traffic(t) / 3, times=times, codes={
            "200": lambda t: 0.985 - min(0.02, 0.01 * max(0.0, load(t) - 0.9)),
            "499": lambda t: 0.001 + min(0.03, 0.012 * max(0.0, load(t) - 0.9))})
    ip = {p["metadata"]["name"]: p["status"]["podIP"] for p in pods}
    for pod in pods:
        name = pod["metadata"]["name"]
        first = NOW - timedelta(minutes=s.rng.uniform(34, 48))
        count = s.rng.randrange(3, 7)
        c.event(pod, "Unhealthy", f'Readiness probe failed: Get "http://{ip[name]}:3000/'
                'healthz/ready": context deadline exceeded (Client.Timeout exceeded while '
                "awaiting headers)", first=first, last=NOW - timedelta(seconds=s.rng.randrange(
                    20, 400)), count=count, type_="Warning",
                field_path="spec.containers{session-api}")

    # what pino printed (shipped as ECS by the log agent)
    for pod in pods:
        name = pod["metadata"]["name"]
        t = NOW - timedelta(hours=2.5)
        while t < NOW:
            ts = int(t.timestamp())
            lat = median(ts) * s.rng.lognormvariate(0, 0.7)
            route = s.rng.choice(["POST /v1/sessions", "POST /v1/sessions/{id}/stop",
                                  "GET /v1/zones/nearby"])
            code = 201 if route == "POST /v1/sessions" else 200
            level = "warn" if lat > 1.0 else "info"
            s.logs.add(t, level, f"request completed {route} {code} {lat * 1000:.0f}ms",
                       namespace=NS, pod=name, container="session-api",
                       service="session-api", node=pod["spec"]["nodeName"],
                       **{"http.response.status_code": code,
                          "event.duration": int(lat * 1e9)})
            if code == 201 and load(ts) > 0.85 and s.rng.random() < 0.6:
                q = median(ts) * s.rng.uniform(1.5, 4.0)
                s.logs.add(t + timedelta(milliseconds=3), "warn", f"slow query "
                           f"{q * 1000:.0f}ms: INSERT INTO parking_session (zone_id, plate, "
                           "started_at, tariff_id) VALUES ($1,$2,$3,$4) RETURNING id",
                           namespace=NS, pod=name, container="session-api",
                           service="session-api", node=pod["spec"]["nodeName"])
            gap = 200.0 / max(1.0, traffic(ts) / 12)
            t += timedelta(seconds=gap * s.rng.uniform(0.6, 1.4) + 30)
        log_pod(s, pod, "session-api", "session-api", [
            ("warn", "zone 10115-A has no active tariff for vehicle class 'motorbike', using "
             "default", {}),
            ("info", "jwks refreshed from https://auth.parkpass.de/.well-known/jwks.json", {}),
        ], 4)

    # ---- the nodes are not busy
    def busy(base: float, t: int) -> float:
        return base + 0.18 * min(1.0, traffic(t) / 141) * s.rng.uniform(0.9, 1.1)

    for n in nodes:
        name = n["metadata"]["name"]
        base = s.rng.uniform(0.22, 0.34)
        gauge(s, "instance:node_cpu_utilisation:rate5m", {"instance": name},
              partial(busy, base),
              "Recording rule: share of CPU time not idle, over 5m.")

    # ---- neighbours
    anpr = Ctr("plate-recognition", f"{REG}/plate-recognition:2.8.0", port=8080,
               requests={"cpu": "1", "memory": "2Gi"}, limits={"memory": "3Gi"},
               readiness=http_probe("/ready", "http", delay=10))
    _, anprs = steady(s, "enforcement", "plate-recognition", [anpr], nodes=nodes, replicas=2,
                      revision=17, rollout=s.ago(days=5, hours=7),
                      restarted={0: (s.ago(days=3, hours=4, minutes=51), "OOMKilled", 137)},
                      offset=1)
    for pod in anprs:
        cpu_seconds(s, pod, "plate-recognition", lambda t: (1.1 + 0.5 * min(1.0, traffic(t)
                                                                           / 141))
                    * s.rng.uniform(0.85, 1.15), times=times_of(s, pod))
    quiet(s, anprs, "plate-recognition", 1610)
    chatter(s, anprs, "plate-recognition", "plate-recognition", [
        ("info", "frame batch from camera ENF-CAM-117: 14 plates, 2 low confidence", {}),
        ("warn", "plate 'B-XY 1O24' confidence 0.41 below 0.6, queued for manual review", {}),
        ("info", "model anpr-eu-v7 inference p50 83ms on 4 threads", {}),
    ], 50)
    pay = Ctr("payment-bridge", f"{REG}/payment-bridge:1.12.4", port=8080,
              requests={"cpu": "100m", "memory": "192Mi"}, limits={"memory": "384Mi"},
              readiness=http_probe("/health", "http", delay=5))
    _, pays = steady(s, NS, "payment-bridge", [pay], nodes=nodes, replicas=2, revision=40,
                     rollout=s.ago(days=4, hours=9), offset=2)
    chatter(s, pays, "payment-bridge", "payment-bridge", [
        ("info", "authorised session prepayment PSP ref 8836212254871321 (EUR 2.40)", {}),
        ("warn", "PSP answered Refused for card ****4410: NOT_ENOUGH_BALANCE", {}),
        ("warn", "PayPal webhook retry 2/5 for event WH-7TY81 (HTTP 502 from "
         "api-m.paypal.com)", {}),
    ], 50)
    redis = Ctr("redis", "parkpass-registry-vpc.eu-central-1.cr.aliyuncs.com/mirror/redis:"
                "7.2.7", port=6379, port_name="redis", requests={"cpu": "100m",
                                                                   "memory": "256Mi"},
                limits={"memory": "512Mi"}, readiness=tcp_probe("redis"))
    _, caches = steady(s, NS, "session-cache", [redis], nodes=nodes, replicas=1, revision=4,
                       rollout=s.ago(days=6, hours=3), service=6379, target="redis", offset=3)
    chatter(s, caches, "redis", "session-cache", [
        ("info", "10 changes in 300 seconds. Saving...", {}),
        ("info", "Background saving terminated with success", {}),
    ], 10)
    admin = Ctr("tariff-admin", f"{REG}/tariff-admin:0.31.0", port=8080,
                requests={"cpu": "50m", "memory": "128Mi"}, limits={"memory": "256Mi"},
                readiness=http_probe("/actuator/health", "http", delay=30, timeout=1))
    _, admins = steady(s, "backoffice", "tariff-admin", [admin], nodes=nodes, replicas=1,
                       revision=9, rollout=s.ago(days=2, hours=11))
    blip = NOW - timedelta(minutes=52)
    c.event(admins[0], "Unhealthy", f'Readiness probe failed: Get "http://'
            f'{admins[0]["status"]["podIP"]}:8080/actuator/health": context deadline exceeded '
            "(Client.Timeout exceeded while awaiting headers)", first=blip,
            last=blip + timedelta(seconds=10), count=2, type_="Warning",
            field_path="spec.containers{tariff-admin}")
    terway = Ctr("terway", "registry-eu-central-1-vpc.ack.aliyuncs.com/acs/terway:v1.13.2",
                 port=None, requests={"cpu": "100m", "memory": "128Mi"}, limits={})
    _, terways = daemonset(s, "kube-system", "terway-eniip", [terway], node_list=nodes,
                           generation=7, since=s.ago(days=6.6),
                           labels={"app": "terway-eniip"})
    chatter(s, terways, "terway", "terway-eniip", [
        ("info", "allocate ip for pod parkpass/session-api, eni eni-gw8a1c2..., ip 10.80.3.77",
         {}),
        ("warn", "failed to sync eni pool: Throttling.User: Request was denied due to user "
         "flow control, retry in 5s", {}),
    ], 14)
    app_counter(s, "session_api_sessions_started_total", {"namespace": NS},
                s.times, lambda t: traffic(t) * 0.31, "Parking sessions started.")
    _ = work
    return s


def _count(s: Incident, times: list[int], rate: Callable[[int], float], whole: bool = True
           ) -> list[tuple[int, float]]:
    return integrate(times, rate, start=s.rng.randrange(200_000, 900_000) if whole
                     else s.rng.uniform(3000, 9000), rng=s.rng, whole=whole)
