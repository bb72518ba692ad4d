"""Zoo: annual-pass check-in at the entrance is slow on the first day of the Easter
holidays. The zoo's apps run on GKE Autopilot, which sets CPU limits equal to requests:
pass-checkin asks for 500m a pod, and from about 09:05 the holiday queue drives each of its
three pods to the 0.5-core ceiling; CFS throttles 55-70 % of its periods and the scan
latency climbs from ~90 ms to well over a second (no autoscaler). Red herrings: gift-shop
2.18.0 rolled out at 08:27 in the same namespace; ticket-pdf was OOM-killed three days ago;
the Memorystore cache client logs a few ordinary timeouts; pass-checkin logs a loud but
harmless "SECURITY" warning about a blocked pass; the report suspects the payment
terminals."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import set_times
from tests.data.holdout2._generator.kit import deploy, requests, working_set
from tests.data.holdout3._generator.kit3 import (
    chatter,
    ghosts,
    ksm_deployment,
    namespaces,
    quiet,
    steady,
)
from tests.data.holdout4._generator.kit4 import ramp
from tests.scenario_tools.common import MIB, truth
from tests.scenario_tools.kube import Ctr, ended, http_probe, running
from tests.scenario_tools.parts import app

from .kit import Incident, NodeKind, autopilot_nodes

ID = "zoo-pass-checkin-slow"
NOW = datetime.fromisoformat("2028-03-25T09:51:00+00:00")
NS = "besucher"
AR = "europe-west3-docker.pkg.dev/zoo-tierpark-prod/apps"


def build() -> Incident:
    s = Incident(
        id=ID, title="Annual pass check-in slow at the zoo entrance", now=NOW,
        report="""\
Entrance staff say scanning annual passes at the main gate takes forever since ~10:00
local, queue is out to the car park. Day tickets bought at the kiosk go through fine. Are
the card payment terminals acting up again? It's the first day of the Easter holidays.
""",
        truth=truth(
            "cpu_throttling", "Deployment", NS, "pass-checkin",
            ["container_cpu_cfs_throttled_periods_total", "cpu: 500m",
             "http_request_duration_seconds"],
            "pass-checkin's three pods are capped at 0.5 CPU each (Autopilot sets limits equal "
            "to requests) and since ~09:05 UTC the holiday queue keeps them at that ceiling: "
            "most CFS periods are throttled and scan latency rose from ~90 ms to over a "
            "second. Raise the CPU request (e.g. 1500m) or add replicas / an HPA on CPU "
            "for peak days."))
    set_times(s, 2.5, 30)
    namespaces(s, {"default": 300, "kube-system": 300, "gke-managed-system": 300,
                   "gmp-public": 300, NS: 280, "shop": 280})
    kind = NodeKind("e2-standard-4", "4", "16386368Ki", "3920m", "13160256Ki",
                    "v1.32.2-gke.1297002", "6.6.72+", "Container-Optimized OS from Google",
                    runtime="containerd://1.7.24", pods="32", storage="98831908Ki",
                    alloc_storage="47060071478")
    nodes = autopilot_nodes(s, 3, kind=kind, days=4.2, project="zoo-tierpark-prod",
                            cluster="zoo-prod", region="europe-west3")

    onset = NOW - timedelta(minutes=46)

    def load(t: int) -> float:
        return 1.0 + 1.6 * ramp(t, onset - timedelta(minutes=8), 14)

    def cores(t: int) -> float:
        return min(0.5, 0.17 * load(t))

    def throttle(t: int) -> float:
        return 0.04 + 0.6 * ramp(t, onset - timedelta(minutes=2), 10)

    def median(t: int) -> float:
        return 0.09 + 1.25 * ramp(t, onset - timedelta(minutes=2), 12)

    _, pods = app(s, NS, "pass-checkin", f"{AR}/pass-checkin:4.3.1", nodes, replicas=3,
                     revision=21, rps=lambda t: 7.5 * load(t),
                     codes={"200": lambda t: 0.97, "404": lambda t: 0.022,
                            "403": lambda t: 0.006,
                            "504": lambda t: 0.002 + 0.05 * ramp(t, onset, 15)},
                     median=median, cpu=cores, memory_mib=230, throttle=throttle,
                     limits={"cpu": "500m", "memory": "512Mi", "ephemeral-storage": "1Gi"},
                     requests={"cpu": "500m", "memory": "512Mi", "ephemeral-storage": "1Gi"},
                     env={"PASS_DB": "projects/zoo-tierpark-prod/instances/members/databases/"
                          "passes", "CACHE_ADDR": "10.88.0.3:6379", "GOMAXPROCS": "2"},
                     rollout_at=s.ago(days=3, hours=19))
    for pod in pods:
        pod["metadata"]["annotations"] = {"autopilot.gke.io/resource-adjustment": "{}"}
    ksm_deployment(s, NS, "pass-checkin", lambda t: 3.0, lambda t: 3.0)
    chatter(s, pods, "pass-checkin", "pass-checkin", [
        ("info", "pass checked in", {"http.response.status_code": 200,
                                      "event.duration": 84_000_000, "pass.type": "annual"}),
        ("info", "pass checked in", {"http.response.status_code": 200,
                                      "event.duration": 97_000_000, "pass.type": "family"}),
        ("warn", "SECURITY blocked pass presented", {"http.response.status_code": 403,
                                                     "pass.status": "blocked_lost_card"}),
        ("info", "pass not found", {"http.response.status_code": 404}),
        ("warn", "cache GET timed out after 50ms, reading from database",
         {"error.type": "redis.TimeoutError"}),
    ], 260, start=s.ago(hours=2.5), end=onset - timedelta(minutes=4))
    chatter(s, pods, "pass-checkin", "pass-checkin", [
        ("info", "pass checked in", {"http.response.status_code": 200,
                                      "event.duration": 1_180_000_000, "pass.type": "annual"}),
        ("info", "pass checked in", {"http.response.status_code": 200,
                                      "event.duration": 1_640_000_000, "pass.type": "family"}),
        ("warn", "slow request: POST /v1/checkin took 2.31s", {
            "http.response.status_code": 200, "event.duration": 2_310_000_000}),
        ("warn", "SECURITY blocked pass presented", {"http.response.status_code": 403,
                                                     "pass.status": "blocked_lost_card"}),
        ("error", "POST /v1/checkin: context deadline exceeded after 3s", {
            "http.response.status_code": 504, "error.type": "context.DeadlineExceeded"}),
        ("warn", "cache GET timed out after 50ms, reading from database",
         {"error.type": "redis.TimeoutError"}),
    ], 420, start=onset - timedelta(minutes=4))

    # ---- kiosk day tickets: fine
    kiosk = Ctr("day-tickets", f"{AR}/day-tickets:7.0.4", port=8080,
                requests={"cpu": "250m", "memory": "256Mi"},
                limits={"cpu": "250m", "memory": "256Mi"}, readiness=http_probe("/ready"))
    _, kps = steady(s, NS, "day-tickets", [kiosk], nodes=nodes, replicas=2, revision=33,
                    rollout=s.ago(days=2, hours=4), service=80)
    quiet(s, kps, "day-tickets", 120)
    for pod in kps:
        requests(s, pod, "day-tickets", rps=lambda t: 1.4 * (1 + 0.5 * ramp(t, onset, 20)),
                 codes={"200": lambda t: 0.995, "402": lambda t: 0.005},
                 median=lambda t: 0.06, buckets=(0.05, 0.1, 0.25, 0.5, 1.0, 2.5))
    chatter(s, kps, "day-tickets", "day-tickets", [
        ("info", "ticket sold", {"ticket.kind": "adult", "payment.provider": "terminal"}),
        ("warn", "payment terminal T-04 declined: card expired",
         {"http.response.status_code": 402})], 90, start=s.ago(hours=2.5))

    # ---- gift-shop rolled out at 08:27 (healthy)
    groll = onset - timedelta(minutes=38)
    gift = Ctr("gift-shop", f"{AR}/gift-shop:2.18.0", port=8080,
               requests={"cpu": "250m", "memory": "384Mi"},
               limits={"cpu": "250m", "memory": "384Mi"}, readiness=http_probe("/ready"))
    gw, gps = deploy(s, NS, "gift-shop", [gift], replicas=2, nodes=nodes, revision=15,
                     rollout=groll, service=80, offset=1,
                     old=(14, s.ago(days=6), [Ctr("gift-shop", f"{AR}/gift-shop:2.17.3")]))
    gg = ghosts(s, gw.revisions[0], nodes, [s.ago(days=5, hours=2)] * 2,
                [groll + timedelta(seconds=40 + 35 * i) for i in range(2)])
    quiet(s, gps, "gift-shop", 260)
    for p in gg:
        working_set(s, p, "gift-shop", lambda t: 251 * MIB)
    chatter(s, gps, "gift-shop", "gift-shop", [
        ("info", "gift-shop 2.18.0 ready, catalogue 1842 items", {}),
        ("warn", "image cdn slow: plush-lemur-xl.webp took 1.9s", {})], 30,
        start=groll + timedelta(seconds=30))

    # ---- ticket-pdf in shop: one OOM restart three days ago
    pdf = Ctr("ticket-pdf", f"{AR}/ticket-pdf:1.9.2", port=8080,
              requests={"cpu": "250m", "memory": "512Mi"},
              limits={"cpu": "250m", "memory": "512Mi"}, readiness=http_probe("/ready"))
    oom_at = s.ago(days=3, hours=2, minutes=14)

    def pdf_state(i: int, name: str, started: datetime) -> dict:
        if i:
            return {}
        return {"ticket-pdf": running(oom_at + timedelta(seconds=2), restarts=1, last=ended(
            "OOMKilled", 137, started, oom_at))}
    _, pdfs = deploy(s, "shop", "ticket-pdf", [pdf], replicas=2, nodes=nodes, revision=9,
                     rollout=s.ago(days=4, hours=1), statuses=pdf_state, service=80)
    quiet(s, pdfs, "ticket-pdf", 330)
    chatter(s, pdfs, "ticket-pdf", "ticket-pdf", [
        ("info", "rendered e-ticket pdf", {"event.duration": 210_000_000})], 40,
        start=s.ago(hours=2.5))
    return s
