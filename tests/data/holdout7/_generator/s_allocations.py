"""Wine club: members confirming their quarterly allocation get intermittent 502s.
allocation-engine (Spring Boot on Java 21) runs `-Xms1g -Xmx2g`; a "rightsizing" change
rolled out 2 h 10 min ago (revision 42) cut its memory limit from 3Gi to 1536Mi and left the
heap flags alone. Under the allocation-window load the heap grows past the limit and the
kernel kills the JVM every 15-25 minutes (OOMKilled, exit 137); no Java OutOfMemoryError is
ever logged. Red herrings: label-printer 2.8.0 rolled out 35 minutes ago (plausible
alternative), an old OOM restart of tasting-notes, PostgreSQL checkpoint warnings and
Hikari connection warnings right after each restart."""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import partial

from tests.data.holdout._generator.base import gauge, set_times
from tests.data.holdout2._generator.kit import (
    NodeKind,
    cpu_seconds,
    deleted,
    deploy,
    kills,
    lines,
    requests,
    restarts_series,
    runs_from,
    scraped,
    up_at,
    working_set,
)
from tests.data.holdout3._generator.kit3 import chatter, log_pod, namespaces, quiet, steady
from tests.scenario_tools.common import MIB, truth
from tests.scenario_tools.kube import Ctr, Obj, http_probe
from tests.scenario_tools.sim import Run, container_status, restart_events

from .kit7 import Incident, provider_nodes

ID = "wine-club-allocations-502"
NOW = datetime.fromisoformat("2027-09-14T18:23:00+00:00")
NS = "vinothek"
REG = "ghcr.io/kellerei-club"
LIMIT = 1536 * MIB
FLAGS = ("-XX:InitialHeapSize=1073741824 -XX:MaxHeapSize=2147483648 "
         "-XX:MaxMetaspaceSize=268435456 -XX:+UseG1GC -XX:+PrintCommandLineFlags "
         "-XX:+UseCompressedOops")


def _ctr(version: str, limit: str) -> Ctr:
    return Ctr("allocation-engine", f"{REG}/allocation-engine:{version}", port=8080,
               requests={"cpu": "500m", "memory": limit}, limits={"memory": limit},
               env={"JAVA_OPTS": "-Xms1g -Xmx2g -XX:MaxMetaspaceSize=256m -XX:+UseG1GC "
                                 "-XX:+PrintCommandLineFlags",
                    "SPRING_PROFILES_ACTIVE": "prod",
                    "SPRING_DATASOURCE_URL": "jdbc:postgresql://cellar-db.vinothek.svc:5432/"
                                             "club"},
               readiness=http_probe("/actuator/health/readiness", delay=25, period=5),
               liveness=http_probe("/actuator/health/liveness", delay=60, period=15))


def _killed_by(runs: list[Run], t: int) -> float:
    return 1.0 if any(r.end is not None and r.end.timestamp() <= t for r in runs) else 0.0


def build() -> Incident:
    s = Incident(
        id=ID, title="Wine club allocation confirmations intermittently failing", now=NOW,
        report="""\
club members keep telling support that confirming their autumn allocation fails with
"Bad Gateway" and works on the 2nd or 3rd try. since late afternoon. site otherwise fine
""",
        truth=truth(
            "oom_killed", "Deployment", NS, "allocation-engine",
            ["OOMKilled", "exit code 137", "1536Mi", "-Xmx2g", "MaxHeapSize=2147483648"],
            "Revision 42 of allocation-engine (rolled out ~16:13) cut its memory limit from "
            "3Gi to 1536Mi but kept JAVA_OPTS -Xms1g -Xmx2g: the heap may grow past the "
            "container limit, so under load the kernel OOM-kills the JVM every 15-25 minutes "
            "(OOMKilled, exit 137) and requests in flight get 502. Restore a 3Gi limit or set "
            "the heap below the limit (-Xmx1g or -XX:MaxRAMPercentage=70)."))
    set_times(s, 2.5, 60)
    c = s.cluster
    namespaces(s, {"default": 610, "kube-system": 610, NS: 580, "monitoring": 600})
    kind = NodeKind("flex-8-32", "8", "32871836Ki", "7800m", "30119324Ki", "v1.31.4",
                    "6.8.0-51-generic", "Ubuntu 24.04.1 LTS", runtime="containerd://1.7.24")
    nodes = provider_nodes(s, "cloudscale", 4, kind, days=6.1)
    roll = NOW - timedelta(hours=2, minutes=10)
    old_ctr, new_ctr = _ctr("5.12.3", "3Gi"), _ctr("5.12.3", "1536Mi")
    plans: dict[str, list[Run]] = {}

    def states(i: int, pod_name: str, started: datetime) -> dict[str, Obj]:
        runs = runs_from(started, NOW, lambda t: s.rng.uniform(880, 1480), pull=0.4,
                         jitter=lambda: s.rng.uniform(0, 1.5))
        plans[pod_name] = runs
        return {"allocation-engine": container_status(
            runs, pod_name, NS, "allocation-engine", reason="OOMKilled", code=137,
            uid=c.uid("Pod", NS, pod_name))}

    work, pods = deploy(s, NS, "allocation-engine", [new_ctr], replicas=3, nodes=nodes,
                        revision=42, rollout=roll, statuses=states,
                        old=(41, s.ago(days=5, hours=7), [old_ctr]))
    old_rs = work.revisions[0]
    ghosts = [deleted(s, NS, f"{old_rs['metadata']['name']}-{c.token(5)}",
                      nodes[i % 4]["metadata"]["name"], s.ago(days=5, hours=7, minutes=-i),
                      roll + timedelta(seconds=40 + 21 * i)) for i in range(3)]
    for g in ghosts:
        working_set(s, g, "allocation-engine", lambda t: (1780 + 120 * ((t // 60) % 7) / 7)
                    * MIB)
        cpu_seconds(s, g, "allocation-engine", lambda t: 0.42)
        gauge(s, "kube_pod_container_resource_limits", {
            "namespace": NS, "pod": g["metadata"]["name"], "container": "allocation-engine",
            "resource": "memory", "unit": "byte"}, lambda t: 3072 * MIB,
            "The number of requested limit resource by a container.",
            times=[t for t in s.times if t <= g["metadata"]["_deleted"]])
        requests(s, g, "allocation-engine", rps=lambda t: 14.0, codes={
            "200": lambda t: 0.999, "500": lambda t: 0.001})
    by_node = {n["metadata"]["name"]: n for n in nodes}
    ooms: dict[str, list[datetime]] = {}
    hour = NOW - timedelta(hours=1)
    for pod in pods:
        name = pod["metadata"]["name"]
        runs = plans[name]
        restart_events(s, pod, "allocation-engine", runs, now=NOW, image=new_ctr.image)
        for r in runs:
            if r.end is not None and r.end >= hour:
                ooms.setdefault(pod["spec"]["nodeName"], []).append(r.end)
        restarts_series(s, pod, "allocation-engine", 0, kills(runs))
        up = scraped(s, runs, pod)

        def heap(t: int, runs: list[Run] = runs) -> float | None:
            r = up_at(runs, t)
            if r is None:
                return None
            life = ((r.end or NOW + timedelta(minutes=20)) - r.start).total_seconds()
            x = min(1.0, (t - r.start.timestamp()) / life)
            return (640 + (1536 - 640) * 0.985 * x ** 0.85) * MIB
        working_set(s, pod, "allocation-engine", heap, times=up)
        gauge(s, "kube_pod_container_resource_limits", {
            "namespace": NS, "pod": name, "container": "allocation-engine",
            "resource": "memory", "unit": "byte"}, lambda t: LIMIT,
            "The number of requested limit resource by a container.",
            times=[t for t in s.times if t >= roll.timestamp() + 60])
        gauge(s, "kube_pod_container_status_last_terminated_reason", {
            "namespace": NS, "pod": name, "container": "allocation-engine",
            "reason": "OOMKilled"}, partial(_killed_by, runs),
            "Describes the last reason the container was in terminated state.",
            times=[t for t in s.times if t >= runs[0].start.timestamp() + 30])
        cpu_seconds(s, pod, "allocation-engine", lambda t: 0.48, times=up, resets=kills(runs))
        requests(s, pod, "allocation-engine", rps=lambda t: 14.0, times=up, resets=kills(runs),
                 codes={"200": lambda t: 0.998, "500": lambda t: 0.002},
                 median=lambda t: 0.09, buckets=(0.25, 1.0))
        # what each killed instance printed; the last one is the current log
        for k, r in enumerate(runs):
            text = [(0.1, FLAGS),
                    (2.4, "INFO  o.s.b.StartupInfoLogger : Starting AllocationEngineApplication "
                     "v5.12.3 using Java 21.0.4 with PID 1"),
                    (2.5, 'INFO  o.s.b.SpringApplication : The following 1 profile is active: '
                     '"prod"'),
                    (9.8, "INFO  c.z.h.HikariDataSource : HikariPool-1 - Starting..."),
                    (10.4, "INFO  c.z.h.HikariDataSource : HikariPool-1 - Start completed."),
                    (21.7, "INFO  o.s.b.w.e.tomcat.TomcatWebServer : Tomcat started on port "
                     "8080 (http) with context path '/'"),
                    (21.9, "INFO  c.k.a.AllocationEngineApplication : Started "
                     "AllocationEngineApplication in 21.2 seconds (process running for 21.8)"),
                    (24.0, "INFO  c.k.a.w.AllocationWindow : allocation window AUTUMN-2027 open,"
                     " 18422 members, 61 wines")]
            end = (r.end or NOW) - r.start
            t = 30.0
            while t < end.total_seconds() - 2:
                text.append((t, s.rng.choice([
                    "INFO  c.k.a.w.AllocationController : confirmed allocation for member "
                    f"M-{s.rng.randrange(10000, 99999)} ({s.rng.randrange(3, 13)} bottles)",
                    "INFO  c.k.a.w.AllocationController : recomputed allocation preview for "
                    f"member M-{s.rng.randrange(10000, 99999)} in {s.rng.randrange(40, 160)}ms",
                    "INFO  c.k.a.s.SubstitutionService : cached 61 wine profiles "
                    f"({s.rng.randrange(180, 420)} MB of tasting vectors)"])))
                t += s.rng.uniform(90, 200)
            if k == 1 and r.end is not None:
                text.insert(9, (26.0, "WARN  c.z.h.pool.PoolBase : HikariPool-1 - Failed to "
                                "validate connection org.postgresql.jdbc.PgConnection@5e1c7a "
                                "(This connection has been closed.)"))
            for offset, line in sorted(text)[1:]:
                level, message = line.split(None, 1)
                s.logs.add(r.start + timedelta(seconds=offset), level.lower(), message,
                           namespace=NS, pod=name, container="allocation-engine",
                           service="allocation-engine", node=pod["spec"]["nodeName"])
            if k >= len(runs) - 2:
                s.pod_log(pod, "allocation-engine", lines(r.start, sorted(text)),
                          previous=k == len(runs) - 2)
    for node_name, deaths in ooms.items():
        deaths.sort()
        c.event(by_node[node_name], "OOMKilling", "Memory cgroup out of memory: Killed process "
                f"{s.rng.randrange(3000, 9000)} (java) total-vm:4718312kB, anon-rss:1566104kB, "
                "file-rss:22876kB, shmem-rss:0kB, UID:1001 pgtables:3804kB oom_score_adj:939",
                first=deaths[0], last=deaths[-1], count=len(deaths), type_="Warning",
                component="kernel-monitor", host=node_name)

    # ---- what the members see
    portal = Ctr("club-portal", f"{REG}/club-portal:9.3.1", port=3000,
                 requests={"cpu": "150m", "memory": "256Mi"}, limits={"memory": "384Mi"},
                 readiness=http_probe("/healthz"))
    _, portals = steady(s, NS, "club-portal", [portal], nodes=nodes, replicas=2, revision=131,
                        rollout=s.ago(days=3, hours=6), offset=1)
    quiet(s, portals, "club-portal", 180)
    chatter(s, portals, "club-portal", "club-portal", [
        ("error", "POST /api/allocations/confirm 502 upstream allocation-engine: socket hang up",
         {"http.response.status_code": 502}),
        ("error", "POST /api/allocations/confirm 502 upstream allocation-engine: connect "
         "ECONNREFUSED", {"http.response.status_code": 502}),
        ("info", "GET /club/autumn-2027 200 84ms", {}),
        ("info", "POST /api/allocations/confirm 200 212ms", {}),
    ], 120, start=roll + timedelta(minutes=20))

    # ---- red herrings
    lp_roll = NOW - timedelta(minutes=35)
    lp = Ctr("label-printer", f"{REG}/label-printer:2.8.0", port=8080,
             requests={"cpu": "100m", "memory": "256Mi"}, limits={"memory": "512Mi"})
    _, lps = steady(s, NS, "label-printer", [lp], nodes=nodes, replicas=2, revision=17,
                    rollout=lp_roll, offset=2,
                    old=(16, s.ago(days=6), [Ctr("label-printer", f"{REG}/label-printer:2.7.5")]))
    quiet(s, lps, "label-printer", 210)
    chatter(s, lps, "label-printer", "label-printer", [
        ("warn", "courier template DHL-EXPRESS-2027 missing field 'customs_code', using blank",
         {}),
        ("info", "rendered 24 shipping labels for batch AUT-27-0412", {}),
    ], 30, start=lp_roll)
    tn = Ctr("tasting-notes", f"{REG}/tasting-notes:1.19.0", port=8080,
             requests={"cpu": "100m", "memory": "384Mi"}, limits={"memory": "512Mi"})
    _, tns = steady(s, NS, "tasting-notes", [tn], nodes=nodes, replicas=2, revision=58,
                    rollout=s.ago(days=4, hours=2), offset=3,
                    restarted={0: (s.ago(days=2, hours=20), "OOMKilled", 137)})
    quiet(s, tns, "tasting-notes", 330)
    db = Ctr("postgres", "docker.io/library/postgres:16.4", port=5432, port_name="postgres",
             requests={"cpu": "500m", "memory": "2Gi"}, limits={"memory": "2Gi"})
    _, dbs = steady(s, NS, "cellar-db", [db], nodes=nodes, replicas=1, revision=4,
                    rollout=s.ago(days=5, hours=22), offset=1, service=5432, target="postgres")
    quiet(s, dbs, "postgres", 1400)
    chatter(s, dbs, "postgres", "cellar-db", [
        ("warn", "checkpoints are occurring too frequently (24 seconds apart)", {}),
        ("info", "checkpoint complete: wrote 2211 buffers (1.7%); 0 WAL file(s) added", {}),
        ("info", "connection authorized: user=club database=club application_name=PostgreSQL "
         "JDBC Driver", {}),
    ], 60)
    for g in ghosts:
        log_pod(s, g, "allocation-engine", "allocation-engine", [
            ("info", "confirmed allocation for member M-48213 (6 bottles)", {}),
            ("info", "recomputed allocation preview for member M-20931 in 71ms", {}),
        ], 30)
    return s
