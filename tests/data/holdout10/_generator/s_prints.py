"""Photo print shop: photo book orders fail on and off during the Mother's Day promotion.
print-orders talks to its Cloud SQL database through a cloud-sql-proxy sidecar limited to
64Mi. The promotion tripled the order traffic since about 08:10 and the proxy's memory grows
with the connections it carries: every 20-30 minutes the kernel kills the sidecar
(OOMKilled, exit 137), and for the seconds it is down the app gets "connection refused" on
127.0.0.1:5432 and answers 500. The main container never restarts. Red herrings:
photo-enhancer 2.8.0 rolled out 1 h 50 min ago in the same namespace, slow payment-provider
calls (a few normal timeouts), an old OOM restart of album-share in another namespace, log
agent warnings."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import alive, gauge, set_times
from tests.data.holdout2._generator.kit import (
    cpu_seconds,
    crash_events,
    deploy,
    requests,
    restarts_series,
    working_set,
)
from tests.data.holdout3._generator.kit3 import chatter, log_pod, namespaces, quiet, steady
from tests.data.holdout4._generator.kit4 import ramp
from tests.scenario_tools.common import MIB, truth
from tests.scenario_tools.kube import Ctr, Obj, ended, http_probe, running
from tests.scenario_tools.sim import Run

from .kit10 import Incident, NodeKind, provider_nodes, secs

ID = "photo-book-orders-flaky"
NOW = datetime.fromisoformat("2028-05-11T10:12:00+00:00")
NS = "printlab"
AR = "europe-west3-docker.pkg.dev/prints-prod-3191/apps"
PROXY = "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.14.1"
INSTANCE = "prints-prod-3191:europe-west3:orders-pg"
LIMIT = 64 * MIB
# the sidecar's deaths (minutes before now) per print-orders pod
KILLS = ([97.4, 72.1, 47.9, 24.6, 3.2], [88.3, 61.7, 35.2, 11.8], [93.6, 66.9, 41.3, 16.7])


def build() -> Incident:
    s = Incident(
        id=ID, title="Photo book orders failing intermittently", now=NOW,
        report="""\
Customers of the print shop keep getting "Something went wrong, please try again" when
they place photo book orders, on and off since about 8:30. Most go through on the second
or third try, but support is getting a lot of chats and the Mother's Day promo is live.
""",
        truth=truth(
            "oom_killed", "Deployment", NS, "print-orders",
            ["OOMKilled", "cloud-sql-proxy", "64Mi", "connection refused",
             "127.0.0.1:5432"],
            "The cloud-sql-proxy sidecar of print-orders is killed for exceeding its 64Mi "
            "memory limit every 20-30 minutes since the promotion raised the number of "
            "database connections; while it restarts the app cannot reach 127.0.0.1:5432 "
            "and fails orders with 500. Raise the sidecar's memory limit (256Mi) and cap "
            "the connection pool (--max-connections) instead of letting it grow with "
            "traffic."))
    set_times(s, 3.0, 60)
    c = s.cluster
    namespaces(s, {"default": 720, "kube-system": 720, "gmp-system": 700, NS: 690,
                   "sharing": 540})
    kind = NodeKind("n4-standard-8", "8", "32864260Ki", "7910m", "29028356Ki",
                    "v1.32.4-gke.1415000", "6.6.72+", "Container-Optimized OS from Google",
                    runtime="containerd://1.7.27")
    nodes = provider_nodes(s, "gke", 4, kind, days=6.2, group="apps")
    promo = NOW - timedelta(hours=2, minutes=2)

    def load(t: int) -> float:  # traffic relative to an ordinary morning
        return 1.0 + 2.1 * ramp(t, promo, 25)

    # ---- print-orders with its proxy sidecar
    rollout = s.ago(days=3, hours=5, minutes=41)
    main = Ctr("print-orders", f"{AR}/print-orders:4.17.2", port=8080,
               requests={"cpu": "500m", "memory": "512Mi"}, limits={"memory": "768Mi"},
               env={"DB_HOST": "127.0.0.1", "DB_PORT": "5432", "DB_NAME": "orders",
                    "DB_POOL_MAX": "80", "PAYMENT_PROVIDER": "mollie",
                    "RENDER_QUEUE": "projects/prints-prod-3191/topics/book-render"},
               readiness=http_probe("/readyz", delay=5), liveness=http_probe(
                   "/livez", delay=20, period=20, timeout=2))
    proxy = Ctr("cloud-sql-proxy", PROXY, port=None,
                requests={"cpu": "50m", "memory": "32Mi"}, limits={"memory": "64Mi"},
                args=["--private-ip", "--port=5432", "--structured-logs",
                      "--health-check", "--http-address=0.0.0.0", INSTANCE])
    runs_of: dict[int, list[Run]] = {}

    def states(i: int, name: str, started: datetime) -> dict[str, Obj]:
        deaths = sorted(NOW - timedelta(minutes=m) for m in KILLS[i])
        runs, start = [], started + timedelta(seconds=1)
        for d in deaths:
            runs.append(Run(start, d))
            start = d + timedelta(seconds=11.3 + 0.4 * i)
        runs.append(Run(start, None))
        runs_of[i] = runs
        last = runs[-2]
        return {"cloud-sql-proxy": running(runs[-1].start, restarts=len(deaths),
                                           last=ended("OOMKilled", 137, last.start, last.end))}
    _, pods = deploy(s, NS, "print-orders", [main, proxy], nodes=nodes, replicas=3,
                        revision=58, rollout=rollout, statuses=states, offset=1,
                        annotations={"prometheus.io/scrape": "true", "prometheus.io/port":
                                     "8080"},
                        old=(57, s.ago(days=9), [Ctr("print-orders", f"{AR}/print-orders:4.17.1"),
                                                proxy]))
    for i, pod in enumerate(pods):
        runs = runs_of[i]
        meta = pod["metadata"]
        crash_events(s, pod, "cloud-sql-proxy", runs, PROXY)
        host = pod["spec"]["nodeName"]
        for run in runs[:-1]:
            if run.end is not None and run.end > NOW - timedelta(hours=1):
                c.event(next(n for n in nodes if n["metadata"]["name"] == host),
                        "OOMKilling", "Memory cgroup out of memory: Killed process "
                        f"{20000 + s.rng.randrange(9999)} (cloud-sql-proxy) total-vm:1331204kB,"
                        f" anon-rss:{65000 + s.rng.randrange(500)}kB, file-rss:0kB, "
                        "shmem-rss:0kB, UID:65532 pgtables:248kB oom_score_adj:999",
                        first=run.end, type_="Warning", component="kernel-monitor",
                        host=host)

        def mem(t: int, runs: list[Run] = runs) -> float | None:
            for r in runs:
                a = r.start.timestamp()
                b = r.end.timestamp() if r.end else None
                if t < a + 15 or (b is not None and t >= b):
                    continue
                if r is runs[0]:
                    top = b or t
                    climb = top - (promo.timestamp() + 600)
                    x = (t - promo.timestamp() - 600) / climb if climb > 0 else 0
                    return 31 * MIB + max(0.0, min(1.0, x)) * (LIMIT * 0.985 - 31 * MIB)
                life = (b or (a + 25 * 60)) - a
                return 23 * MIB + (t - a) / life * (LIMIT * 0.985 - 23 * MIB)
            return None
        working_set(s, pod, "cloud-sql-proxy", mem)
        kills = [int(r.end.timestamp()) for r in runs if r.end is not None]
        restarts_series(s, pod, "cloud-sql-proxy", 0, kills)
        gauge(s, "kube_pod_container_status_last_terminated_reason",
              {"namespace": NS, "pod": meta["name"], "container": "cloud-sql-proxy",
               "reason": "OOMKilled"}, lambda t, k=kills: 1.0 if t >= k[0] else None,
              "Describes the last reason the container was in terminated state.",
              times=alive(s, pod))
        for ctr_name, limit in (("cloud-sql-proxy", LIMIT), ("print-orders", 768 * MIB)):
            gauge(s, "kube_pod_container_resource_limits",
                  {"namespace": NS, "pod": meta["name"], "container": ctr_name,
                   "resource": "memory", "unit": "byte"}, lambda t, v=limit: v,
                  "The number of requested limit resource by a container.",
                  times=alive(s, pod))
        working_set(s, pod, "print-orders", lambda t: (338 + 40 * (load(t) - 1)) * MIB)
        cpu_seconds(s, pod, "print-orders", lambda t: 0.12 * load(t))
        cpu_seconds(s, pod, "cloud-sql-proxy", lambda t: 0.015 * load(t),
                    resets=kills)

        def down(t: int, k: list[int] = kills) -> float:
            return 1.0 if any(0 <= t - x < 60 for x in k) else 0.0
        requests(s, pod, "print-orders", rps=lambda t: 2.4 * load(t), codes={
            "200": lambda t, d=down: 0.992 - 0.31 * d(t),
            "500": lambda t, d=down: 0.001 + 0.31 * d(t),
            "402": lambda t: 0.007}, median=lambda t: 0.19 + 0.02 * load(t),
            buckets=(0.1, 0.25, 0.5, 1.0, 2.5, 5.0))
        # the app's view of each outage, and the proxy's ordinary chatter
        for k in kills:
            at = datetime.fromtimestamp(k, NOW.tzinfo)
            for j in range(4 + s.rng.randrange(4)):
                when = secs(at, 0.2 + j * 2.7 + s.rng.uniform(0, 1.5))
                s.logs.add(when, "error", "POST /api/v2/orders 500: begin tx: dial tcp "
                           "127.0.0.1:5432: connect: connection refused", namespace=NS,
                           pod=meta["name"], container="print-orders", service="print-orders",
                           node=host, http__response__status_code=500,
                           error__type="*net.OpError", url__path="/api/v2/orders",
                           trace__id=s.cluster.hexid("tr", str(k), str(j), length=32))
            s.logs.add(secs(at, 13.9), "warn", "db pool: 17 connections reset by peer, "
                       "reconnecting", namespace=NS, pod=meta["name"],
                       container="print-orders", service="print-orders", node=host)
        chatter(s, [pod], "print-orders", "print-orders", [
            ("info", "order PB-2028-0511-30417 placed: photo book A4 landscape, 48 pages", {}),
            ("info", "POST /api/v2/orders 201 in 212ms", {"http.response.status_code": 201}),
            ("info", "render job published to book-render", {}),
            ("warn", "payment link creation took 3.4s (provider mollie)", {}),
            ("info", "GET /api/v2/products/photo-books 200 in 18ms",
             {"http.response.status_code": 200}),
        ], 120)
        chatter(s, [pod], "print-orders", "print-orders", [
            ("warn", "mollie POST /v2/payments timed out after 5s, retry 1/2",
             {"error.type": "context.DeadlineExceeded"}),
        ], 3)
        run = runs[-1]
        log_pod(s, pod, "cloud-sql-proxy", "cloud-sql-proxy", [
            ("info", f"[{INSTANCE}] Accepted connection from 127.0.0.1:{port}", {})
            for port in (41822, 43190, 50214, 38876)], 30, start=run.start)
        prev = runs[-2]
        start = prev.start
        s.pod_log(pod, "cloud-sql-proxy", [
            f"{start:%Y/%m/%d %H:%M:%S} Authorizing with Application Default Credentials",
            f"{secs(start, 1):%Y/%m/%d %H:%M:%S} [{INSTANCE}] Listening on 127.0.0.1:5432",
            f"{secs(start, 1):%Y/%m/%d %H:%M:%S} The proxy has started successfully and is "
            "ready for new connections!",
            *[f"{secs(start, 30 + 41 * j):%Y/%m/%d %H:%M:%S} [{INSTANCE}] Accepted connection "
              f"from 127.0.0.1:{40000 + 137 * j}" for j in range(
                  int((prev.end - prev.start).total_seconds() // 41) - 1)]], previous=True)

    # ---- red herrings
    roll = NOW - timedelta(hours=1, minutes=50)
    enh = Ctr("photo-enhancer", f"{AR}/photo-enhancer:2.8.0", port=8080,
              requests={"cpu": "1", "memory": "1536Mi"}, limits={"memory": "2Gi"},
              readiness=http_probe("/healthz", delay=20))
    _, enhs = steady(s, NS, "photo-enhancer", [enh], nodes=nodes, replicas=2, revision=23,
                     rollout=roll, offset=2,
                     old=(22, s.ago(days=6), [Ctr("photo-enhancer",
                                                 f"{AR}/photo-enhancer:2.7.4")]))
    quiet(s, enhs, "photo-enhancer", 1210)
    for pod in enhs:
        requests(s, pod, "photo-enhancer", rps=lambda t: 0.9 * load(t), codes={
            "200": lambda t: 0.999, "422": lambda t: 0.001})
    chatter(s, enhs, "photo-enhancer", "photo-enhancer", [
        ("info", "photo-enhancer 2.8.0 ready: model esrgan-x2-v5 loaded in 14.2s", {}),
        ("info", "enhanced upload u/77120/IMG_2231.HEIC in 1.8s", {}),
        ("warn", "input has no EXIF orientation, assuming landscape", {}),
    ], 60, start=roll)
    share = Ctr("album-share", f"{AR}/album-share:1.33.0", port=8080,
                requests={"cpu": "200m", "memory": "384Mi"}, limits={"memory": "512Mi"},
                readiness=http_probe("/healthz"))
    _, shares = steady(s, "sharing", "album-share", [share], nodes=nodes, replicas=2,
                       revision=14, rollout=s.ago(days=5, hours=2),
                       restarted={1: (s.ago(days=2, hours=7), "OOMKilled", 137)})
    quiet(s, shares, "album-share", 301)
    chatter(s, shares, "album-share", "album-share", [
        ("info", "GET /a/9fQ2x 200 in 44ms", {"http.response.status_code": 200}),
        ("warn", "share link expired: /a/k21Lm", {"http.response.status_code": 410}),
    ], 40)
    return s
