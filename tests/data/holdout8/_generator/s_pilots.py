"""Harbour pilotage: the pilot dispatch board keeps going blank for a minute or two.
pilot-roster's liveness probe (and its readiness probe) both hit /healthz, which checks
its downstream dependencies, among them vessel-positions' /v1/ping, with a 1.5 s budget,
against a 2 s probe timeout and three failures. vessel-positions blips for ~50 s whenever
its upstream AIS feed reconnects (three times in the last hour); each time every
pilot-roster pod fails liveness at once, is killed (SIGTERM, then SIGKILL after the grace
period: exit 137) and restarted, so the whole roster is down together. The probe design is
the cause: liveness must not check dependencies. Red herrings: the vessel-positions blips
themselves (plausible alternative, short and self-healing), pilot-portal 2.19.0 rolled out
68 min ago, an old OOM of berth-planner, Postgres checkpoint warnings."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from tests.data.holdout._generator.base import set_times
from tests.data.holdout2._generator.kit import (
    app_counter,
    cpu_seconds,
    deploy,
    requests,
    restarts_series,
    working_set,
)
from tests.data.holdout3._generator.kit3 import chatter, namespaces, quiet, steady
from tests.data.holdout4._generator.kit4 import log_lines
from tests.scenario_tools.common import MIB, truth
from tests.scenario_tools.kube import Ctr, ended, http_probe, running

from .kit8 import Incident, NodeKind, provider_nodes

ID = "pilot-board-blanking"
NOW = datetime.fromisoformat("2028-02-07T06:42:00+00:00")
NS = "pilotage"
DATA = "maritime-data"
REG = "harbor.port.lan/pilotage"
N = 4


def _rate(x: float) -> Callable[[int], float]:
    return lambda t: x


def build() -> Incident:
    s = Incident(
        id=ID, title="Pilot dispatch board going blank", now=NOW,
        report="""\
The pilot dispatch board goes blank every 20 minutes or so, for a minute or two, then comes
back on its own. Dispatchers had to phone pilots for the 06:30 departures. Happened at
least three times this morning.
""",
        truth=truth(
            "probe_failure", "Deployment", NS, "pilot-roster",
            ["Liveness probe failed", "failed liveness probe, will be restarted",
             "/healthz", "exit code 137", "vessel-positions"],
            "pilot-roster's liveness probe calls /healthz, which checks vessel-positions (and "
            "its other dependencies) within 1.5 s. Each short vessel-positions blip makes "
            "every pilot-roster pod fail liveness at the same moment, so the kubelet kills "
            "and restarts all of them together (exit 137) and the board is blank until they "
            "are back. Point the liveness probe at a process-only endpoint (e.g. /livez) and "
            "keep dependency checks out of it (at most in readiness, with a degraded mode)."))
    set_times(s, 2.0, 60)
    c = s.cluster
    namespaces(s, {"default": 820, "kube-system": 820, NS: 701, DATA: 650, "databases": 701})
    kind = NodeKind("one-w16-64", "16", "65831652Ki", "15700m", "63119076Ki", "v1.30.8",
                    "5.15.0-130-generic", "Ubuntu 22.04.5 LTS", runtime="containerd://1.7.23")
    nodes = provider_nodes(s, "one", 5, kind, days=6.7, group="wrk")
    blips = [NOW - timedelta(minutes=51, seconds=14), NOW - timedelta(minutes=32, seconds=31),
             NOW - timedelta(minutes=12, seconds=47)]

    def blip(t: float) -> bool:
        return any(b.timestamp() <= t < b.timestamp() + 52 for b in blips)

    # per pod: when the kubelet decided to kill, when the container died, when it came back
    kills = [[b + timedelta(seconds=29 + 2.3 * i + s.rng.uniform(0, 1.5)) for b in blips]
             for i in range(N)]
    deaths = [[k + timedelta(seconds=30) for k in ks] for ks in kills]
    starts = [[d + timedelta(seconds=11 + 0.4 * i) for d in ds] for i, ds in enumerate(deaths)]
    rollout = s.ago(days=3, hours=21, minutes=5)
    boot = [rollout + timedelta(seconds=14 + 21 * i) for i in range(N)]

    def up(i: int, t: float) -> bool:
        lives = [(boot[i], deaths[i][0]), *zip(starts[i], [*deaths[i][1:], None],
                                                   strict=True)]
        return any(a.timestamp() + 15 <= t and (b is None or t < b.timestamp())
                   for a, b in lives)

    probe = {"httpGet": {"path": "/healthz", "port": "http", "scheme": "HTTP"},
             "initialDelaySeconds": 20, "periodSeconds": 10, "timeoutSeconds": 2,
             "successThreshold": 1, "failureThreshold": 3}
    ctr = Ctr("pilot-roster", f"{REG}/pilot-roster:7.4.2", port=8080,
              requests={"cpu": "300m", "memory": "640Mi"}, limits={"memory": "1Gi"},
              env={"VESSEL_POSITIONS_URL": "http://vessel-positions.maritime-data.svc",
                   "TIDE_API_URL": "https://tides.hydro.example.org/v2",
                   "DB_HOST": "roster-db.databases.svc", "HEALTH_DEP_TIMEOUT": "1.5s",
                   "SHUTDOWN_DRAIN": "45s"},
              readiness=dict(probe, periodSeconds=5), liveness=probe)

    def states(i: int, name: str, started: datetime) -> dict[str, dict]:
        return {"pilot-roster": running(starts[i][-1], restarts=3, last=ended(
            "Error", 137, starts[i][-2], deaths[i][-1]))}
    work, pods = deploy(s, NS, "pilot-roster", [ctr], replicas=N, nodes=nodes, revision=58,
                        rollout=rollout, born=lambda i: boot[i] - timedelta(seconds=9),
                        statuses=states, service=80,
                        old=(57, s.ago(days=9), [Ctr("pilot-roster",
                                                     f"{REG}/pilot-roster:7.4.1")]))
    field_ = "spec.containers{pilot-roster}"
    for i, pod in enumerate(pods):
        meta = pod["metadata"]
        ip = pod["status"]["podIP"]
        fails = [b + timedelta(seconds=8 + 2.3 * i + 10 * k) for b in blips for k in range(3)]
        c.event(pod, "Unhealthy", f'Liveness probe failed: Get "http://{ip}:8080/healthz": '
                "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
                first=fails[0], last=fails[-1], count=len(fails), type_="Warning",
                field_path=field_)
        c.event(pod, "Unhealthy", f'Readiness probe failed: Get "http://{ip}:8080/healthz": '
                "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
                first=blips[0] + timedelta(seconds=4 + i), last=blips[-1] + timedelta(
                    seconds=29 + i), count=18 + i % 2, type_="Warning", field_path=field_)
        c.event(pod, "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: "
                "503", first=starts[i][0] + timedelta(seconds=6), last=starts[i][-1] +
                timedelta(seconds=6), count=3, type_="Warning", field_path=field_)
        c.event(pod, "Killing", "Container pilot-roster failed liveness probe, will be "
                "restarted", first=kills[i][0], last=kills[i][-1], count=3, field_path=field_)
        c.event(pod, "Pulled", f'Container image "{ctr.image}" already present on machine',
                first=starts[i][0] - timedelta(seconds=0.5), last=starts[i][-1] -
                timedelta(seconds=0.5), count=3, field_path=field_)
        c.event(pod, "Created", "Created container: pilot-roster",
                first=starts[i][0] - timedelta(seconds=0.3), last=starts[i][-1] -
                timedelta(seconds=0.3), count=3, field_path=field_)
        c.event(pod, "Started", "Started container pilot-roster", first=starts[i][0],
                last=starts[i][-1], count=3, field_path=field_)
        times = [t for t in s.times if up(i, t)]
        resets = [int(x.timestamp()) + 15 for x in starts[i]]
        restarts_series(s, pod, "pilot-roster", 0, [int(d.timestamp()) for d in deaths[i]])
        working_set(s, pod, "pilot-roster", lambda t: 520 * MIB, times=times)
        cpu_seconds(s, pod, "pilot-roster", lambda t: 0.18, times=times, resets=resets)
        for code, share in (("200", 0.996), ("503", 0.004)):
            app_counter(s, "http_requests_total", {"namespace": NS, "service": "pilot-roster",
                                                   "pod": meta["name"], "code": code},
                        times, _rate(5.5 * share),
                        "Total number of HTTP requests by status code.", resets=resets)
        app_counter(s, "prober_probe_total", {"namespace": NS, "pod": meta["name"],
                                              "container": "pilot-roster",
                                              "probe_type": "Liveness", "result": "failed"},
                    s.times, lambda t: 0.1 if blip(t) and t > blips[0].timestamp() + 8 else 0,
                    "Cumulative number of a liveness, readiness or startup probe for a "
                    "container by result.", start=2)
        app_counter(s, "prober_probe_total", {"namespace": NS, "pod": meta["name"],
                                              "container": "pilot-roster",
                                              "probe_type": "Liveness",
                                              "result": "successful"},
                    s.times, lambda t: 0.0 if blip(t) else 0.1,
                    "Cumulative number of a liveness, readiness or startup probe for a "
                    "container by result.")
        prev = starts[i][-2]
        lines = [(prev + timedelta(seconds=0.4), "INFO  pilot-roster 7.4.2 starting "
                  "(profile=prod)"),
                 (prev + timedelta(seconds=3.1), "INFO  roster cache warmed: 61 pilots, "
                  "212 jobs for the next 48h"),
                 (prev + timedelta(seconds=3.6), "INFO  listening on :8080")]
        t = prev + timedelta(seconds=40)
        while t < blips[-1]:
            lines.append((t, f"INFO  GET /api/jobs?from=now 200 {s.rng.randrange(18, 60)}ms"))
            t += timedelta(seconds=s.rng.uniform(50, 130))
        for k in range(4):
            lines.append((blips[-1] + timedelta(seconds=8 + 2.3 * i + 10 * k - 1.5),
                          "WARN  healthz: dependency vessel-positions unhealthy: Get "
                          "\"http://vessel-positions.maritime-data.svc/v1/ping\": context "
                          "deadline exceeded (budget 1.5s)"))
            lines.append((blips[-1] + timedelta(seconds=8 + 2.3 * i + 10 * k),
                          "WARN  GET /healthz 503 1502ms (db=ok tides=ok "
                          "vessel-positions=timeout)"))
        lines.append((kills[i][-1] + timedelta(seconds=0.1),
                      "INFO  SIGTERM received, draining in-flight requests (up to 45s)"))
        lines.append((kills[i][-1] + timedelta(seconds=10.2),
                      f"INFO  drain: {s.rng.randrange(3, 9)} requests still in flight"))
        log_lines(s, pod, "pilot-roster", sorted(lines), previous=True)
        cur = starts[i][-1]
        now_lines = [(cur + timedelta(seconds=0.4), "INFO  pilot-roster 7.4.2 starting "
                      "(profile=prod)"),
                     (cur + timedelta(seconds=3.3), "INFO  roster cache warmed: 61 pilots, "
                      "209 jobs for the next 48h"),
                     (cur + timedelta(seconds=3.8), "INFO  listening on :8080"),
                     (cur + timedelta(seconds=6), "WARN  GET /healthz 503 12ms (warming up)")]
        t = cur + timedelta(seconds=30)
        while t < NOW:
            now_lines.append((t, f"INFO  GET /api/jobs?from=now 200 {s.rng.randrange(18, 60)}ms"))
            t += timedelta(seconds=s.rng.uniform(40, 110))
        log_lines(s, pod, "pilot-roster", now_lines)
    chatter(s, pods, "pilot-roster", "pilot-roster", [
        ("info", "GET /api/jobs?from=now 200 31ms", {}),
        ("info", "job J-28-0412 assigned to pilot P-17 (MSC ARINA, inbound, berth 7)", {}),
        ("warn", "tide API slow: 880ms for station HW-Elbe-3", {}),
    ], 140)
    for b in blips:
        chatter(s, pods, "pilot-roster", "pilot-roster", [
            ("warn", "healthz: dependency vessel-positions unhealthy: context deadline "
             "exceeded (budget 1.5s)", {}),
            ("warn", "GET /healthz 503 1502ms (db=ok tides=ok vessel-positions=timeout)",
             {"http.response.status_code": 503}),
            ("info", "SIGTERM received, draining in-flight requests (up to 45s)", {}),
        ], 24, start=b + timedelta(seconds=6), end=b + timedelta(seconds=52))

    # ---- vessel-positions: the dependency that blips
    vp = Ctr("vessel-positions", "harbor.port.lan/maritime/vessel-positions:1.12.0",
             port=8080, requests={"cpu": "200m", "memory": "512Mi"}, limits={"memory": "1Gi"},
             readiness=http_probe("/ready"))
    _, vps = steady(s, DATA, "vessel-positions", [vp], nodes=nodes, replicas=2, revision=14,
                    rollout=s.ago(days=5, hours=2), offset=2)
    for pod in vps:
        quiet(s, [pod], "vessel-positions", 340)
        requests(s, pod, "vessel-positions", rps=lambda t: 9.0, codes={
            "200": lambda t: 0.55 if blip(t) else 0.999,
            "504": lambda t: 0.45 if blip(t) else 0.001},
            median=lambda t: 3.2 if blip(t) else 0.012, buckets=(0.05, 0.5, 2.0, 5.0))
    chatter(s, vps, "vessel-positions", "vessel-positions", [
        ("info", "AIS feed: 1843 vessels in area, last message 0.4s ago", {}),
    ], 40)
    for b in blips:
        chatter(s, vps, "vessel-positions", "vessel-positions", [
            ("warn", "AIS upstream tcp://ais-feed.example.net:5631 closed connection, "
             "reconnecting", {}),
            ("warn", "serving stale snapshot while AIS feed reconnects", {}),
            ("info", "AIS feed reconnected after 47s, resync 1843 vessels", {}),
        ], 6, start=b, end=b + timedelta(seconds=55))

    # ---- the board (pilot-portal) and red herrings
    roll = NOW - timedelta(minutes=68)
    portal = Ctr("pilot-portal", f"{REG}/pilot-portal:2.19.0", port=8080,
                 requests={"cpu": "100m", "memory": "256Mi"}, limits={"memory": "384Mi"},
                 readiness=http_probe("/"))
    _, portals = steady(s, NS, "pilot-portal", [portal], nodes=nodes, replicas=2, revision=33,
                        rollout=roll, offset=3,
                        old=(32, s.ago(days=6), [Ctr("pilot-portal",
                                                     f"{REG}/pilot-portal:2.18.4")]))
    for pod in portals:
        quiet(s, [pod], "pilot-portal", 120)

        def gone(t: int) -> float:
            return 1.0 if any(b.timestamp() + 30 <= t < b.timestamp() + 110 for b in blips) \
                else 0.0
        requests(s, pod, "pilot-portal", rps=lambda t: 3.0, codes={
            "200": lambda t: 1 - 0.9 * gone(t), "502": lambda t: 0.9 * gone(t)})
    for b in blips:
        chatter(s, portals, "pilot-portal", "pilot-portal", [
            ("error", "GET /board 502 upstream pilot-roster: connect: connection refused",
             {"http.response.status_code": 502}),
            ("error", "GET /board 502 upstream pilot-roster: no healthy endpoints",
             {"http.response.status_code": 502}),
        ], 20, start=b + timedelta(seconds=32), end=b + timedelta(seconds=108))
    chatter(s, portals, "pilot-portal", "pilot-portal", [
        ("info", "pilot-portal 2.19.0 config loaded: theme=night-shift, refresh=15s", {}),
        ("info", "GET /board 200 44ms", {}),
    ], 40, start=roll)
    bp = Ctr("berth-planner", f"{REG}/berth-planner:4.0.6", port=8080,
             requests={"cpu": "250m", "memory": "768Mi"}, limits={"memory": "1Gi"})
    _, bps = steady(s, NS, "berth-planner", [bp], nodes=nodes, replicas=1, revision=22,
                    rollout=s.ago(days=4, hours=9), offset=4,
                    restarted={0: (s.ago(days=2, hours=5), "OOMKilled", 137)})
    quiet(s, bps, "berth-planner", 690)
    chatter(s, bps, "berth-planner", "berth-planner", [
        ("info", "berth plan recomputed for 2028-02-07: 23 calls, 0 conflicts", {}),
    ], 12)
    db = Ctr("postgres", "docker.io/library/postgres:16.6", port=5432, port_name="postgres",
             requests={"cpu": "1", "memory": "2Gi"}, limits={"memory": "4Gi"})
    _, dbs = steady(s, "databases", "roster-db", [db], nodes=nodes, replicas=1, revision=5,
                    rollout=s.ago(days=6, hours=1), service=5432, target="postgres", offset=1)
    quiet(s, dbs, "postgres", 1400)
    chatter(s, dbs, "postgres", "roster-db", [
        ("warn", "LOG:  checkpoints are occurring too frequently (24 seconds apart)", {}),
        ("info", "LOG:  checkpoint complete: wrote 1822 buffers (11.1%)", {}),
    ], 20)
    _ = work
    return s
