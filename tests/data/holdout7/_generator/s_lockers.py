"""Parcel lockers: customers cannot reserve a locker. locker-booking (namespace
parcel-lockers) asks the gRPC service geo-index (namespace geo-platform,
geo.v1.LockerIndex/Nearby) for free compartments near the address, with a 1.5 s deadline.
Since 17:38 geo-index gets three times its usual call rate (the mobile app's new map screen
polls Nearby every 5 s) on its fixed 3 replicas: its own handling latency climbs to
seconds and its in-flight calls pile up. locker-booking is healthy (Ready, no restarts, low
CPU and memory) but a third of its bookings end in DeadlineExceeded and 504. The truth's
culprit is the overloaded dependency, geo-index. Red herrings: locker-booking 4.6.0 rolled
out 1 h 25 min ago (plausible alternative), an old OOM restart of locker-notifier, a Redis
latency warning."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import gauge, set_times
from tests.data.holdout2._generator.kit import NodeKind, app_counter, cpu_seconds, requests
from tests.data.holdout3._generator.kit3 import chatter, namespaces, quiet, steady
from tests.data.holdout4._generator.kit4 import ramp
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, http_probe
from tests.scenario_tools.telemetry import histogram_points

from .kit7 import Incident, provider_nodes

ID = "locker-reservations-timing-out"
NOW = datetime.fromisoformat("2027-12-09T18:16:00+00:00")
NS = "parcel-lockers"
GEO = "geo-platform"
REG = "dtr.ops.internal/lockers"
METHOD = "Nearby"
SVC = "geo.v1.LockerIndex"


def build() -> Incident:
    s = Incident(
        id=ID, title="Locker reservations timing out", now=NOW,
        report="""\
locker-booking in prod is timing out: roughly a third of locker reservations fail with
"try again later" since about 17:40. Can you check what's wrong with locker-booking?
""",
        truth=truth(
            "dependency_failure", "Deployment", GEO, "geo-index",
            ["DeadlineExceeded", "geo.v1.LockerIndex/Nearby",
             "grpc_server_handling_seconds", "deadline 1.5s"],
            "geo-index (namespace geo-platform), the gRPC service locker-booking asks for "
            "nearby free compartments, is overloaded since ~17:38: its call rate tripled (the "
            "app's new map screen polls Nearby every 5 s) on a fixed 3 replicas and its "
            "handling time rose from ~25 ms to seconds, so locker-booking's 1.5 s deadline "
            "expires on about a third of bookings. locker-booking itself is healthy. Scale "
            "geo-index out (and give it an HPA), and throttle or cache the map screen's "
            "polling."))
    set_times(s, 2.0, 60)
    namespaces(s, {"default": 905, "kube-system": 905, NS: 512, GEO: 640, "monitoring": 880})
    kind = NodeKind("esx-16c-64g", "16", "65842412Ki", "15800m", "63140652Ki",
                    "v1.31.5-mirantis-1", "5.14.0-503.21.1.el9_5.x86_64",
                    "Rocky Linux 9.5 (Blue Onyx)", runtime="containerd://1.7.25")
    nodes = provider_nodes(s, "mke", 4, kind, days=6.6)
    surge = NOW - timedelta(minutes=38)

    def calls(t: int) -> float:  # Nearby calls a second, all clients, per geo-index pod
        return 95.0 * (1 + 2.1 * ramp(t, surge, 6)) / 3

    def served(t: int) -> float:  # what geo-index completes within the callers' deadline
        return min(calls(t), 160.0)

    def lat(t: int) -> float:
        return 0.025 + 1.6 * ramp(t, surge + timedelta(minutes=2), 8)

    def late(t: int) -> float:  # share of locker-booking's calls that hit their deadline
        return 0.004 + 0.33 * ramp(t, surge + timedelta(minutes=3), 8)

    # ---- geo-index, the dependency
    geo = Ctr("geo-index", "dtr.ops.internal/geo/geo-index:2.14.1", port=9090,
              port_name="grpc", requests={"cpu": "2", "memory": "3Gi"},
              limits={"memory": "4Gi"},
              env={"GOMAXPROCS": "2", "INDEX_SNAPSHOT": "s3://geo-snapshots/lockers/latest",
                   "GRPC_MAX_CONCURRENT_STREAMS": "256"},
              readiness={"grpc": {"port": 9090}, "periodSeconds": 10, "timeoutSeconds": 5,
                         "successThreshold": 1, "failureThreshold": 3,
                         "initialDelaySeconds": 15})
    _, geos = steady(s, GEO, "geo-index", [geo], nodes=nodes, replicas=3, revision=23,
                     rollout=s.ago(days=4, hours=3), service=9090, target="grpc", offset=1)
    for pod in geos:
        quiet(s, [pod], "geo-index", 2650)
        cpu_seconds(s, pod, "geo-index", lambda t: min(1.96, 0.55 + 0.0135 * calls(t)))
        base = {"namespace": GEO, "pod": pod["metadata"]["name"], "grpc_service": SVC,
                "grpc_method": METHOD, "grpc_type": "unary"}
        app_counter(s, "grpc_server_handled_total", {**base, "grpc_code": "OK"}, s.times,
                    lambda t: served(t) * 0.999,
                    "Total number of RPCs completed on the server, regardless of success or "
                    "failure.")
        app_counter(s, "grpc_server_handled_total", {**base, "grpc_code": "Canceled"},
                    s.times, lambda t: 0.02 + max(0.0, calls(t) - served(t)) * 0.1 +
                    calls(t) * 0.3 * ramp(t, surge + timedelta(minutes=3), 8),
                    "Total number of RPCs completed on the server, regardless of success or "
                    "failure.")
        fam = s.metrics.family("grpc_server_handling_seconds", "histogram",
                               "Histogram of response latency (seconds) of gRPC that had been "
                               "application-level handled by the server.",
                               buckets=(0.05, 0.5, 2.5))
        fam.add(base, histogram_points(s.times, (0.05, 0.5, 2.5), calls, lat, s.rng))
        gauge(s, "geo_index_inflight_requests", {"namespace": GEO,
                                                 "pod": pod["metadata"]["name"]},
              lambda t: round(calls(t) * lat(t) * s.rng.uniform(0.9, 1.1)),
              "Requests being handled right now.")
    chatter(s, geos, "geo-index", "geo-index", [
        ("info", "snapshot lockers@2027-12-09T12:00Z loaded: 18204 lockers, 611k compartments",
         {}),
        ("info", "Nearby p99=31ms over last 60s (5712 calls)", {}),
    ], 30, end=surge)
    chatter(s, geos, "geo-index", "geo-index", [
        ("warn", "slow Nearby call: 2.41s (radius 1500m, 212 candidates, queue wait 2.18s)", {}),
        ("warn", "Nearby p99=3.87s over last 60s (17480 calls)", {}),
        ("warn", "slow Nearby call: 1.96s (radius 800m, 97 candidates, queue wait 1.81s)", {}),
        ("info", "client canceled Nearby after 1.50s: context canceled", {}),
    ], 60, start=surge + timedelta(minutes=2))

    # ---- locker-booking, the caller named in the report
    lb_roll = NOW - timedelta(hours=1, minutes=25)
    lb = Ctr("locker-booking", f"{REG}/locker-booking:4.6.0", port=8080,
             requests={"cpu": "250m", "memory": "384Mi"}, limits={"memory": "512Mi"},
             env={"GEO_INDEX_ADDR": "dns:///geo-index.geo-platform.svc:9090",
                  "GEO_INDEX_DEADLINE": "1.5s", "REDIS_ADDR": "booking-cache:6379"},
             readiness=http_probe("/readyz", delay=5, period=5),
             liveness=http_probe("/livez", delay=10, period=10))
    _, lbs = steady(s, NS, "locker-booking", [lb], nodes=nodes, replicas=3, revision=77,
                    rollout=lb_roll, old=(76, s.ago(days=6), [Ctr(
                        "locker-booking", f"{REG}/locker-booking:4.5.2", port=8080)]))
    for pod in lbs:
        quiet(s, [pod], "locker-booking", 170)
        cpu_seconds(s, pod, "locker-booking", lambda t: 0.07)
        requests(s, pod, "locker-booking", rps=lambda t: 6.5, codes={
            "201": lambda t: 1 - late(t), "504": late})
        base = {"namespace": NS, "pod": pod["metadata"]["name"], "grpc_service": SVC,
                "grpc_method": METHOD, "grpc_type": "unary"}
        app_counter(s, "grpc_client_handled_total", {**base, "grpc_code": "OK"}, s.times,
                    lambda t: 6.5 * (1 - late(t)),
                    "Total number of RPCs completed by the client, regardless of success or "
                    "failure.")
        app_counter(s, "grpc_client_handled_total", {**base, "grpc_code": "DeadlineExceeded"},
                    s.times, lambda t: 6.5 * late(t),
                    "Total number of RPCs completed by the client, regardless of success or "
                    "failure.")
    chatter(s, lbs, "locker-booking", "locker-booking", [
        ("info", "locker-booking 4.6.0 listening on :8080", {}),
    ], 3, start=lb_roll, end=lb_roll + timedelta(minutes=2))
    chatter(s, lbs, "locker-booking", "locker-booking", [
        ("info", "POST /v1/reservations 201 84ms (locker LK-20931, compartment M)", {}),
        ("info", "POST /v1/reservations 201 71ms (locker LK-11807, compartment S)", {}),
    ], 45, end=surge + timedelta(minutes=3))
    chatter(s, lbs, "locker-booking", "locker-booking", [
        ("error", f"{SVC}/{METHOD} failed: rpc error: code = DeadlineExceeded desc = context "
         "deadline exceeded (deadline 1.5s, target dns:///geo-index.geo-platform.svc:9090)",
         {"error.type": "grpc.DeadlineExceeded"}),
        ("error", "POST /v1/reservations 504 nearby lookup timed out after 1.5s",
         {"http.response.status_code": 504}),
        ("info", "POST /v1/reservations 201 1214ms (locker LK-30412, compartment L)", {}),
        ("info", "POST /v1/reservations 201 988ms (locker LK-09921, compartment M)", {}),
    ], 85, start=surge + timedelta(minutes=3))

    # ---- red herrings
    cache = Ctr("redis", "docker.io/library/redis:7.4.1", port=6379, port_name="redis",
                requests={"cpu": "100m", "memory": "256Mi"}, limits={"memory": "512Mi"})
    _, caches = steady(s, NS, "booking-cache", [cache], nodes=nodes, replicas=1, revision=3,
                       rollout=s.ago(days=5, hours=8), service=6379, target="redis", offset=2)
    quiet(s, caches, "redis", 90)
    chatter(s, caches, "redis", "booking-cache", [
        ("warn", "WARNING: latency monitor: fork took 212ms for background RDB save", {}),
        ("info", "Background saving terminated with success", {}),
    ], 16)
    nt = Ctr("locker-notifier", f"{REG}/locker-notifier:2.2.9", port=8080,
             requests={"cpu": "100m", "memory": "256Mi"}, limits={"memory": "384Mi"})
    _, nts = steady(s, NS, "locker-notifier", [nt], nodes=nodes, replicas=2, revision=41,
                    rollout=s.ago(days=3, hours=11), offset=3,
                    restarted={1: (s.ago(days=1, hours=16), "OOMKilled", 137)})
    quiet(s, nts, "locker-notifier", 190)
    chatter(s, nts, "locker-notifier", "locker-notifier", [
        ("info", "pickup code sent for reservation R-8812034 via push", {}),
        ("warn", "push provider returned 410 for device token ****a91f, removing", {}),
    ], 40)
    return s
