"""Municipal election night: the results API is slow and partly times out since the polls
closed at 20:00. Traffic rose tenfold; the HorizontalPodAutoscaler of results-api scaled
3 -> 5 -> 8 by 20:11 and sits at its maxReplicas 8 (ScalingLimited, TooManyReplicas) with
CPU utilisation ~165 % of requests against a 65 % target. The nodes have plenty of free
capacity and the pods have no CPU limit (no throttling): the autoscaler's ceiling is the
limit. Cause visible in the HPA's status, its events and kube-state-metrics. Red herrings:
results-web 9.4.0 rolled out at 19:02 in the same namespace (healthy), the results cache
with a few routine timeouts at the usual rate, an old OOM restart of tally-importer and a
readiness blip in the intranet namespace."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import set_times
from tests.data.holdout2._generator.kit import (
    cpu_seconds,
    deploy,
    requests,
    start_events,
)
from tests.data.holdout3._generator.kit3 import (
    chatter,
    ksm_deployment,
    namespaces,
    quiet,
    steady,
)
from tests.data.holdout4._generator.kit4 import hpa, ramp
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, http_probe

from .kit9 import Incident, NodeKind, hpa_series, provider_nodes

ID = "election-results-lagging"
NOW = datetime.fromisoformat("2028-03-12T20:47:00+00:00")
NS = "election-night"
REG = "registry.gitlab.stadt-example.de/wahlen"
CLOSE = datetime.fromisoformat("2028-03-12T20:00:00+00:00")
UPS = [(CLOSE + timedelta(minutes=6, seconds=12), 3, 5),
       (CLOSE + timedelta(minutes=11, seconds=27), 5, 8)]


def build() -> Incident:
    s = Incident(
        id=ID, title="Election results API slow on election night", now=NOW,
        report="""\
Election night: the results pages are very slow since the first precincts came in after
20:00 and the press tickers get timeouts from the results API every few minutes. Everyone
is watching us right now. Municipal election, production.
""",
        truth=truth(
            "autoscaling_limit", "Deployment", NS, "results-api",
            ["ScalingLimited", "TooManyReplicas", "maxReplicas: 8",
             "the desired replica count is more than the maximum replica count",
             "kube_horizontalpodautoscaler_status_desired_replicas"],
            "results-api's HorizontalPodAutoscaler reached its maxReplicas of 8 at 20:11 and "
            "would need about 20 for the election-night traffic (CPU ~165 % of requests against a "
            "65 % target), so the eight pods are saturated and latency rises with 503s. The "
            "nodes have spare capacity: raise maxReplicas (e.g. to 24) now, and pre-scale "
            "(minReplicas) before future election nights."))
    set_times(s, 2.0, 60)
    c = s.cluster
    namespaces(s, {"default": 950, "kube-system": 950, NS: 400, "intranet": 930})
    kind = NodeKind("SCS-16V-64", "16", "65841052Ki", "15820m", "62593436Ki", "v1.31.5",
                    "6.8.0-52-generic", "Ubuntu 24.04.1 LTS", runtime="containerd://1.7.25")
    nodes = provider_nodes(s, "magnum", 5, kind, days=6.9, group="wahl-prod")

    def load(t: int) -> float:  # traffic relative to the afternoon
        return 1.0 + 9.5 * ramp(t, CLOSE, 25)

    def replicas(t: int) -> float:
        n = 3.0
        for when, _, b in UPS:
            if t >= when.timestamp() + 20:
                n = float(b)
        return n

    def per_pod(t: int) -> float:  # cores one pod would need
        return 0.25 * load(t) * 3 / replicas(t)

    def busy(t: int) -> float:  # 0..1: how saturated the pods are
        return min(1.0, max(0.0, (per_pod(t) - 0.7) / 0.3))

    # ---- results-api and its autoscaler
    api = Ctr("results-api", f"{REG}/results-api:4.7.1", port=8080,
              requests={"cpu": "600m", "memory": "768Mi"}, limits={"memory": "1Gi"},
              env={"CACHE_URL": "redis://results-cache.election-night.svc:6379",
                   "DB_URL": "postgresql://results-db.election-night.svc:5432/wahl",
                   "UVICORN_WORKERS": "2"},
              readiness=http_probe("/health/ready", timeout=2),
              liveness=http_probe("/health/live", delay=20, period=20, timeout=3))
    rollout = s.ago(days=2, hours=5, minutes=33)

    def born(i: int) -> datetime:
        if i < 3:
            return rollout + timedelta(seconds=6 + 21 * i)
        when = UPS[0][0] if i < 5 else UPS[1][0]
        return when + timedelta(seconds=1 + 0.4 * i)
    work, pods = deploy(s, NS, "results-api", [api], replicas=8, nodes=nodes, revision=19,
                        rollout=rollout, born=born, service=8080,
                        old=(18, s.ago(days=9), [Ctr("results-api",
                                                    f"{REG}/results-api:4.7.0")]))
    rs = work.revisions[-1]
    for when, a, b in UPS:
        c.event(work.obj, "ScalingReplicaSet", f"Scaled up replica set {rs['metadata']['name']} "
                f"from {a} to {b}", first=when + timedelta(seconds=0.5),
                component="deployment-controller", host="")
    for i, pod in enumerate(pods[3:], start=3):
        created = born(i)
        c.event(rs, "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}",
                first=created, component="replicaset-controller", host="")
        start_events(s, pod, scheduled=created + timedelta(seconds=0.3),
                     started=created + timedelta(seconds=4 + i % 3))
    hpa_obj = hpa(s, work, min_=3, max_=8, metrics=[
        {"type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": 65}}}],
        current=[{"type": "Resource", "resource": {"name": "cpu", "current": {
            "averageUtilization": 164, "averageValue": "984m"}}}],
        replicas=8, desired=8, created=s.ago(days=380), last_scale=UPS[-1][0], conditions=[
            ("AbleToScale", "True", "ReadyForNewScale", "recommended size matches current "
             "size", UPS[-1][0] + timedelta(minutes=5)),
            ("ScalingActive", "True", "ValidMetricFound", "the HPA was able to successfully "
             "calculate a replica count from cpu resource utilization (percentage of request)",
             s.ago(days=6, hours=3)),
            ("ScalingLimited", "True", "TooManyReplicas", "the desired replica count is more "
             "than the maximum replica count", UPS[-1][0] + timedelta(seconds=15))])
    for when, _, b in UPS:
        c.event(hpa_obj, "SuccessfulRescale", f"New size: {b}; reason: cpu resource "
                "utilization (percentage of request) above target", first=when,
                component="horizontal-pod-autoscaler", host="")
    hpa_series(s, NS, "results-api", maximum=8.0, minimum=3.0, current=replicas,
               desired=lambda t: min(8.0, max(3.0, -(-per_pod(t) * replicas(t) // 0.39))),
               limited=lambda t: t >= UPS[-1][0].timestamp() + 15)
    ksm_deployment(s, NS, "results-api", replicas, replicas, lambda t: 0.0)
    for pod in pods:
        quiet(s, [pod], "results-api", 520)
        cpu_seconds(s, pod, "results-api", lambda t: min(per_pod(t), 1.05))
        requests(s, pod, "results-api", rps=lambda t: 95 * load(t) / replicas(t), codes={
            "200": lambda t: 0.998 - 0.035 * busy(t), "304": lambda t: 0.0,
            "503": lambda t: 0.002 + 0.035 * busy(t)},
            median=lambda t: 0.045 + 0.9 * busy(t) ** 1.7,
            buckets=(0.05, 0.1, 0.25, 0.5, 1.0, 2.5))
    routine = ("warn", "cache GET results:precinct:0412 timed out after 50ms, reading from "
                       "database", {"error.type": "TimeoutError"})
    chatter(s, pods[:3], "results-api", "results-api", [
        ("info", "GET /v1/contests/oberbuergermeister/summary 200 38ms", {}),
        ("info", "GET /v1/districts/12/turnout 200 22ms", {}), routine,
    ], 60, end=CLOSE)
    chatter(s, pods, "results-api", "results-api", [
        ("info", "GET /v1/contests/oberbuergermeister/summary 200 840ms", {}),
        ("info", "GET /v1/contests/stadtrat/precincts?reported=true 200 1430ms", {}),
        ("warn", "request queue depth 187 on worker 2, oldest waiting 2.1s", {}),
        ("error", "GET /v1/contests/stadtrat/summary 503 upstream worker busy, shed by "
                  "admission control", {"http.response.status_code": 503}),
        ("info", "precinct 0412 reported: 1 931 ballots, turnout 47.2%", {}), routine,
    ], 260, start=CLOSE + timedelta(minutes=4))

    # ---- the cache, the frontend, the importer
    rc = Ctr("redis", "docker.io/library/redis:7.4.2", port=6379, port_name="redis",
             requests={"cpu": "200m", "memory": "512Mi"}, limits={"memory": "1Gi"})
    _, rcs = steady(s, NS, "results-cache", [rc], nodes=nodes, replicas=1, revision=3,
                    rollout=s.ago(days=6, hours=2), offset=2, service=6379, target="redis")
    quiet(s, rcs, "redis", 140)
    cpu_seconds(s, rcs[0], "redis", lambda t: 0.08 + 0.05 * (load(t) - 1))
    chatter(s, rcs, "redis", "results-cache", [
        ("info", "1:M 12 Mar 2028 DB saved on disk", {}),
        ("info", "1:M 12 Mar 2028 100 changes in 300 seconds. Saving...", {}),
    ], 20)
    roll = NOW - timedelta(minutes=105)
    web = Ctr("results-web", f"{REG}/results-web:9.4.0", port=8080,
              requests={"cpu": "100m", "memory": "128Mi"}, limits={"memory": "256Mi"},
              readiness=http_probe("/"))
    _, webs = steady(s, NS, "results-web", [web], nodes=nodes, replicas=3, revision=44,
                     rollout=roll, offset=1,
                     old=(43, s.ago(days=4), [Ctr("results-web", f"{REG}/results-web:9.3.2")]))
    for pod in webs:
        quiet(s, [pod], "results-web", 60)
        requests(s, pod, "results-web", rps=lambda t: 40 * load(t) / 3, codes={
            "200": lambda t: 0.999, "404": lambda t: 0.001})
    chatter(s, webs, "results-web", "results-web", [
        ("info", "nginx: GET /wahl/2028/ob/ 200 (static, cache HIT)", {}),
        ("warn", "nginx: GET /wahl/2028/assets/map-districts.geojson 404", {}),
    ], 40, start=roll + timedelta(minutes=1))
    ti = Ctr("tally-importer", f"{REG}/tally-importer:2.1.3", port=8080,
             requests={"cpu": "200m", "memory": "512Mi"}, limits={"memory": "768Mi"},
             readiness=http_probe("/ready"))
    _, tis = steady(s, NS, "tally-importer", [ti], nodes=nodes, replicas=1, revision=11,
                    rollout=s.ago(days=5, hours=8), offset=3,
                    restarted={0: (s.ago(days=2, hours=1), "OOMKilled", 137)})
    quiet(s, tis, "tally-importer", 420)
    chatter(s, tis, "tally-importer", "tally-importer", [
        ("info", "imported precinct 0412 (votemanager export, 14 contests)", {}),
        ("info", "imported precinct 0388 (votemanager export, 14 contests)", {}),
    ], 50, start=CLOSE)
    intra = Ctr("staff-wiki", f"{REG}/staff-wiki:1.41.2", port=3000,
                requests={"cpu": "100m", "memory": "256Mi"}, limits={"memory": "512Mi"},
                readiness=http_probe("/healthz", delay=10))
    _, intras = steady(s, "intranet", "staff-wiki", [intra], nodes=nodes, replicas=1,
                       revision=6, rollout=s.ago(days=3, hours=2), offset=4, service=3000)
    quiet(s, intras, "staff-wiki", 230)
    ip = intras[0]["status"]["podIP"]
    blip = NOW - timedelta(minutes=24)
    c.event(intras[0], "Unhealthy", f'Readiness probe failed: Get "http://{ip}:3000/healthz": '
            "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
            first=blip, last=blip + timedelta(seconds=20), count=3, type_="Warning",
            field_path="spec.containers{staff-wiki}")
    return s
