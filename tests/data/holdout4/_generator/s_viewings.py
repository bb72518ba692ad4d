"""Lettings: booking a flat viewing intermittently fails with 503. viewing-scheduler's
readiness probe calls /health/ready with timeoutSeconds 1 and failureThreshold 1; that
endpoint checks Postgres, Redis and the calendar-sync service in sequence and takes 0.6-1.6 s
under the ordinary midday load. Every few probes one exceeds the second, the pod is marked
NotReady for a period, comes back, and so on: pods flap, the ingress has often no ready
endpoint for a share of requests, and nothing restarts. The API itself answers in ~40 ms.
Red herrings: slow-query warnings of Postgres, calendar-sync retries to an external calendar
provider, and a liveness probe that is fine."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from tests.data.holdout._generator.base import gauge, set_times
from tests.data.holdout2._generator.kit import NodeKind, requests
from tests.data.holdout3._generator.kit3 import chatter, namespaces, quiet, ready_since, steady
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, http_probe, running, tcp_probe

from .kit4 import Incident, hexof, pool, uuid_of

ID = "flat-viewings-503"
NOW = datetime.fromisoformat("2027-11-23T12:37:00+00:00")
NS = "lettings"
REG = "registry.onstackit.cloud/homefinder"


def build() -> Incident:
    s = Incident(
        id=ID,
        title="Booking a flat viewing fails intermittently with 503",
        now=NOW,
        report="""\
Since late morning tenants sometimes get a 503 page when they book a viewing slot; pressing
reload usually works. The ingress shows 503s for viewing-scheduler but the pods have no
restarts and CPU looks normal. Agents are calling us because their diaries show half-booked
slots. Could you find out why?
""",
        truth=truth(
            "probe_failure", "Deployment", NS, "viewing-scheduler",
            ["Readiness probe failed", "context deadline exceeded", "timeoutSeconds: 1",
             "/health/ready"],
            "viewing-scheduler's readiness probe (/health/ready, timeoutSeconds 1, "
            "failureThreshold 1) times out under normal load because the endpoint checks "
            "Postgres, Redis and calendar-sync in sequence (0.6-1.6 s): pods flap NotReady "
            "and the ingress returns 503. Raise timeoutSeconds (3-5 s) and failureThreshold "
            "(3), and make readiness a cheap local check."))
    set_times(s, 1.75, 60)
    c = s.cluster
    namespaces(s, {"default": 700, "kube-system": 700, NS: 640, "ingress-nginx": 700})
    kind = NodeKind("c1.4", "4", "16393588Ki", "3800m", "14005620Ki", "v1.31.6",
                    "6.6.71-flatcar", "Flatcar Container Linux by Kinvolk 4081.2.1 (Oklo)",
                    runtime="containerd://1.7.23")

    def namer(i: int) -> tuple[str, str]:
        tok = hexof(s, "mc", str(i), n=5)
        return f"shoot--hf7k2p--prod-pool-main-z1-6d8f4-{tok}", f"10.250.0.{14 + 3 * i}"

    nodes = pool(s, 4, kind=kind, namer=namer, days=5.2, region="eu01",
                 zones=["eu01-1", "eu01-2", "eu01-3"],
                 labels=lambda i, n: {"worker.gardener.cloud/pool": "pool-main",
                                      "worker.garden.sapcloud.io/group": "pool-main",
                                      "node.kubernetes.io/role": "node",
                                      "node.kubernetes.io/instance-type": "c1.4"},
                 provider=lambda i, n: f"openstack:///{uuid_of(s, 'os', n)}",
                 cidr=lambda i: f"100.64.{i}.0/24")

    def load(t: int) -> float:  # the midday curve, 1.0 at 12:00 UTC
        hour = (t % 86400) / 3600
        return 0.55 + 0.45 * math.exp(-((hour - 12.2) / 1.6) ** 2)

    # each pod: NotReady windows (start, seconds)
    flaps: dict[str, list[tuple[int, int]]] = {}

    app = Ctr("viewing-scheduler", f"{REG}/viewing-scheduler:4.9.1", port=8080,
              requests={"cpu": "500m", "memory": "512Mi"}, limits={"memory": "1Gi"},
              env={"DATABASE_URL": "postgres://viewings@pg-viewings.lettings.svc:5432/viewings",
                   "REDIS_URL": "redis://viewing-cache.lettings.svc:6379/2",
                   "CALENDAR_SYNC_URL": "http://calendar-sync.lettings.svc"},
              readiness=http_probe("/health/ready", delay=10, period=5, timeout=1, failures=1),
              liveness=http_probe("/health/live", delay=30, period=20, timeout=3, failures=3))
    work, pods = steady(s, NS, "viewing-scheduler", [app], nodes=nodes, replicas=4,
                        revision=23, rollout=s.ago(days=5, hours=1),
                        labels={"app.kubernetes.io/name": "viewing-scheduler"})
    total = 0
    for k, pod in enumerate(pods):
        name = pod["metadata"]["name"]
        out = []
        t = s.times[0]
        while t < s.times[-1]:
            p = max(0.0, load(t) - 0.78) * 2.6
            if s.rng.random() < p:
                length = 5 * s.rng.randrange(2, 9)
                out.append((t, length))
                t += length
            t += 30
        flaps[name] = out
        total += len(out)
        not_ready_now = k == 2
        if not_ready_now:
            pod["status"]["containerStatuses"][0]["ready"] = False
            for cond in pod["status"]["conditions"]:
                if cond["type"] in ("Ready", "ContainersReady"):
                    cond["status"] = "False"
                    cond["reason"] = "ContainersNotReady"
                    cond["message"] = "containers with unready status: [viewing-scheduler]"
            ready_since(pod, NOW - timedelta(seconds=13))
        else:
            ready_since(pod, NOW - timedelta(seconds=s.rng.randrange(40, 400)))
        ip = pod["status"]["podIP"]
        fails = sum(1 for f in out if f[0] >= NOW.timestamp() - 3600) * 2 + 3
        firsts = [f[0] for f in out if f[0] >= NOW.timestamp() - 3600]
        if firsts:
            c.event(pod, "Unhealthy", f'Readiness probe failed: Get "http://{ip}:8080/health/'
                    'ready": context deadline exceeded (Client.Timeout exceeded while awaiting '
                    "headers)", first=datetime.fromtimestamp(firsts[0], NOW.tzinfo),
                    last=NOW - timedelta(seconds=14 if not_ready_now else s.rng.randrange(
                        30, 200)), count=fails, type_="Warning",
                    field_path="spec.containers{viewing-scheduler}")

        def ready(t: int, out: list[tuple[int, int]] = out,
                  now_bad: bool = not_ready_now) -> float:
            if now_bad and t >= s.times[-1] - 10:
                return 0.0
            return 0.0 if any(a <= t < a + n for a, n in out) else 1.0
        gauge(s, "kube_pod_status_ready", {"namespace": NS, "pod": name, "condition": "true"},
              ready, "Describes whether the pod is ready to serve requests.")
        quiet(s, [pod], "viewing-scheduler", 380)
        requests(s, pod, "viewing-scheduler", rps=lambda t: 7 * load(t), codes={
            "200": lambda t: 0.96, "201": lambda t: 0.03, "409": lambda t: 0.004},
            median=lambda t: 0.038 * (1 + 0.2 * load(t)), buckets=(0.05, 0.25,
                                                                  1.0))
        gauge(s, "health_check_duration_seconds", {"namespace": NS, "pod": name,
                                                    "check": "ready", "quantile": "0.9"},
              lambda t: (0.45 + 1.05 * load(t)) * s.rng.uniform(0.85, 1.15),
              "Duration of the /health/ready checks (postgres, redis, calendar-sync).")
    chatter(s, pods, "viewing-scheduler", "viewing-scheduler", [
        ("info", "POST /api/viewings 201 41ms", {"http.response.status_code": 201}),
        ("info", "GET /api/properties/LET-88120/slots 200 23ms", {}),
        ("info", "health/ready: postgres 212ms, redis 9ms, calendar-sync 604ms", {}),
        ("warn", "health/ready: postgres 388ms, redis 14ms, calendar-sync 1177ms", {}),
        ("warn", "slot LET-77013 2027-11-25T17:30 already taken, returning 409",
         {"http.response.status_code": 409}),
    ], 150)

    # ---- ingress-nginx: 503 when the upstream has no ready endpoint
    nginx = Ctr("controller", "registry.k8s.io/ingress-nginx/controller:v1.12.1", port=80,
                requests={"cpu": "100m", "memory": "90Mi"}, limits={})
    _, ings = steady(s, "ingress-nginx", "ingress-nginx-controller", [nginx], nodes=nodes,
                     replicas=2, revision=9, rollout=s.ago(days=4, hours=20), offset=1)
    quiet(s, ings, "controller", 160)
    bad = [(a, n) for fl in flaps.values() for a, n in fl]
    for k, pod in enumerate(ings):
        gauge(s, "nginx_ingress_controller_requests_rate", {"namespace": NS,
              "ingress": "viewing-scheduler", "status": "503", "controller_pod":
              pod["metadata"]["name"]},
              lambda t: 0.8 * sum(1 for a, n in bad if a <= t < a + n) * s.rng.uniform(0.7, 1.3),
              "Recording rule: requests per second by status over 1m.")
        for a, n in bad[k::2]:
            if a < NOW.timestamp() - 5400:
                continue
            when = datetime.fromtimestamp(min(a + s.rng.uniform(0, n), NOW.timestamp() - 1),
                                          NOW.tzinfo)
            s.logs.add(when, "error", "upstream \"lettings-viewing-scheduler-8080\" has no "
                       "ready endpoint for POST /api/viewings, returning 503", namespace=
                       "ingress-nginx", pod=pod["metadata"]["name"], container="controller",
                       service="ingress-nginx", node=pod["spec"]["nodeName"],
                       **{"http.response.status_code": 503})

    # ---- neighbours: Postgres and calendar-sync
    pg = Ctr("postgres", "docker.io/library/postgres:16.6", port=5432, port_name="pg",
             requests={"cpu": "1", "memory": "2Gi"}, limits={"memory": "4Gi"},
             readiness=tcp_probe("pg"))
    _, pgs = steady(s, NS, "pg-viewings", [pg], nodes=nodes, replicas=1, revision=3,
                    rollout=s.ago(days=6, hours=3), service=5432, target="pg", offset=2)
    quiet(s, pgs, "postgres", 1750)
    chatter(s, pgs, "postgres", "pg-viewings", [
        ("info", "checkpoint complete: wrote 1822 buffers (11.1%); 0 WAL file(s) added", {}),
        ("warn", "duration: 1204.118 ms  statement: SELECT s.* FROM slot s JOIN property p ON "
         "p.id = s.property_id WHERE p.region = 'HH-ALTONA' AND s.starts_at > now()", {}),
    ], 40)
    cal = Ctr("calendar-sync", f"{REG}/calendar-sync:1.6.0", port=8080,
              requests={"cpu": "100m", "memory": "256Mi"}, limits={"memory": "384Mi"},
              readiness=http_probe("/ping"))
    _, cals = steady(s, NS, "calendar-sync", [cal], nodes=nodes, replicas=2, revision=11,
                     rollout=s.ago(days=3, hours=6), offset=3)
    quiet(s, cals, "calendar-sync", 190)
    chatter(s, cals, "calendar-sync", "calendar-sync", [
        ("info", "synced 41 agent calendars in 5.8s", {}),
        ("warn", "graph.microsoft.com answered 429 for agent A-2291, retry after 4s", {}),
        ("info", "GET /status 200 612ms", {}),
    ], 70)
    _ = (running, work, total)
    return s
