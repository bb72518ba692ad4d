"""Workforce management: the shift-planner release 3.14.0 never finishes rolling out. Its new
pod's init container db-migrate (Flyway) refuses to start the migration: the checksum of the
already applied migration V57 no longer matches the file, because someone edited
V57__add_break_rules.sql after it had run in production. The init container exits 1 at every
start, the pod sits in Init:CrashLoopBackOff and the rollout hits its progress deadline; the
three pods of 3.13.2 keep serving. Red herrings: PgBouncer warnings about client connections,
slow queries of the old pods, a noisy payroll-export neighbour."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import gauge, parse, set_times
from tests.data.holdout2._generator.kit import NodeKind, kills, requests, restarts_series, runs_from
from tests.data.holdout3._generator.kit3 import chatter, namespaces, quiet, steady
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, Template, http_probe, running, waiting
from tests.scenario_tools.sim import container_status, restart_events

from .kit4 import Incident, hexof, log_lines, pool

ID = "shift-planner-release-hanging"
NOW = datetime.fromisoformat("2027-08-03T02:26:00+00:00")
NS = "rostering"
REG = "ccr.ccs.tencentyun.com/crewtime"


def _ctrs(version: str) -> tuple[Ctr, Ctr]:
    env = {"DB_URL": "jdbc:postgresql://pgbouncer.rostering.svc:6432/rosters",
           "DB_USER": "shift_planner"}
    init = Ctr("db-migrate", f"{REG}/shift-planner-migrations:{version}", port=None,
               requests={"cpu": "100m", "memory": "256Mi"}, limits={"memory": "512Mi"},
               command=["flyway"], args=["-connectRetries=3", "-validateOnMigrate=true",
                                         "migrate"],
               env={"FLYWAY_URL": env["DB_URL"], "FLYWAY_USER": env["DB_USER"],
                    "FLYWAY_LOCATIONS": "filesystem:/flyway/sql"})
    app = Ctr("shift-planner", f"{REG}/shift-planner:{version}", port=8080,
              requests={"cpu": "500m", "memory": "1Gi"}, limits={"memory": "1536Mi"},
              env={**env, "JAVA_TOOL_OPTIONS": "-XX:MaxRAMPercentage=70"},
              readiness=http_probe("/actuator/health/readiness", delay=25),
              liveness=http_probe("/actuator/health/liveness", delay=60, period=20))
    return init, app


def build() -> Incident:
    s = Incident(
        id=ID,
        title="shift-planner release hangs in the pipeline",
        now=NOW,
        report="""\
The deploy job for shift-planner 3.14.0 has been "waiting for rollout" for over half an hour
and just failed with "deployment exceeded its progress deadline". The app still answers,
apparently on the old version. We need the new break-rules feature live for the morning
shift at 06:00 in Singapore. Can you tell what is blocking it?
""",
        truth=truth(
            "crash_loop", "Deployment", NS, "shift-planner",
            ["Init:CrashLoopBackOff", "db-migrate", "Validate failed",
             "checksum mismatch for migration version 57"],
            "The db-migrate init container (Flyway) of shift-planner 3.14.0 exits 1 at every "
            "start: the applied migration V57 was edited after it ran (checksum mismatch), so "
            "validation fails. Restore V57__add_break_rules.sql to its applied content and put "
            "the change in a new V59 migration (or run flyway repair deliberately), then "
            "re-release; 3.13.2 keeps serving meanwhile."))
    set_times(s, 2.0, 30)
    c = s.cluster
    namespaces(s, {"default": 540, "kube-system": 540, NS: 470, "payroll": 350})
    kind = NodeKind("SA5.2XLARGE16", "8", "15950860Ki", "7600m", "13107132Ki",
                    "v1.30.0-tke.7", "5.4.241-1-tlinux4-0017.12", "TencentOS Server 4.2",
                    runtime="containerd://1.6.9-tke.8", pods="61")

    def namer(i: int) -> tuple[str, str]:
        ip = f"172.21.{16 * (i % 2)}.{41 + 7 * i}"
        return ip, ip

    nodes = pool(s, 4, kind=kind, namer=namer, days=6.4, region="ap-singapore",
                 zones=["ap-singapore-1", "ap-singapore-2"],
                 labels=lambda i, n: {"cloud.tencent.com/node-instance-id":
                                      f"ins-{hexof(s, 'ins', n, n=8)}",
                                      "tke.cloud.tencent.com/nodepool-id": "np-5kq2w8zd",
                                      "node.kubernetes.io/instance-type": "SA5.2XLARGE16"},
                 provider=lambda i, n: f"qcloud:///800002/ins-{hexof(s, 'ins', n, n=8)}",
                 cidr=lambda i: f"10.48.{i * 2}.0/25")
    started = NOW - timedelta(minutes=37, seconds=41)

    # ---- the Deployment: revision 22 (3.13.2) serves, revision 23 (3.14.0) is stuck
    old_init, old_app = _ctrs("3.13.2")
    new_init, new_app = _ctrs("3.14.0")
    tpl = Template([new_app], init=[new_init], service_account="shift-planner")
    work = c.workload("Deployment", NS, "shift-planner", tpl, replicas=3,
                      created=s.ago(days=410), labels={"app.kubernetes.io/name":
                                                       "shift-planner",
                                                       "app.kubernetes.io/part-of": "crewtime"})
    old_rs = c.revision(work, 22, s.ago(days=5, hours=14),
                        Template([old_app], init=[old_init], service_account="shift-planner"),
                        replicas=3)
    new_rs = c.revision(work, 23, started, replicas=1)
    olds = []
    for i in range(3):
        born = s.ago(days=5, hours=14) + timedelta(seconds=6 + 40 * i)
        olds.append(c.pod(work, old_rs, node=nodes[i], created=born,
                          statuses={"shift-planner": running(born + timedelta(seconds=31))}))
    born = started + timedelta(seconds=1)
    name = f"{new_rs['metadata']['name']}-{c.token(5)}"
    runs = runs_from(born + timedelta(seconds=4), NOW, lambda t: s.rng.uniform(3.2, 4.6),
                     pull=0.3, jitter=lambda: s.rng.uniform(0, 0.8))
    init_state = container_status(runs, name, NS, "db-migrate", reason="Error", code=1,
                                  uid=c.uid("Pod", NS, name), ready=False)
    new = c.pod(work, new_rs, node=nodes[3], created=born, name=name,
                statuses={"shift-planner": waiting("PodInitializing")},
                init_statuses={"db-migrate": init_state})
    work.progressing = ("ProgressDeadlineExceeded", f'ReplicaSet "{new_rs["metadata"]["name"]}"'
                        " has timed out progressing.", started + timedelta(minutes=10,
                                                                           seconds=2))
    c.event(work.obj, "ScalingReplicaSet", f"Scaled up replica set {new_rs['metadata']['name']} "
            "from 0 to 1", first=started, component="deployment-controller")
    c.event(new_rs, "SuccessfulCreate", f"Created pod: {name}", first=born,
            component="replicaset-controller")
    c.event(new, "Scheduled", f"Successfully assigned {NS}/{name} to "
            f"{nodes[3]['metadata']['name']}", first=born, component="default-scheduler",
            host="")
    c.event(new, "Pulling", f'Pulling image "{new_init.image}"', first=born +
            timedelta(seconds=0.6), field_path="spec.initContainers{db-migrate}")
    c.event(new, "Pulled", f'Successfully pulled image "{new_init.image}" in 2.61s (2.61s '
            'including waiting). Image size: 104632118 bytes.', first=runs[0].start -
            timedelta(seconds=0.5), field_path="spec.initContainers{db-migrate}")
    restart_events(s, new, "db-migrate", runs, now=NOW, image=new_init.image, init=True)
    restarts_series(s, new, "db-migrate", 0, kills(runs), init=True)
    gauge(s, "kube_pod_init_container_status_waiting_reason",
          {"namespace": NS, "pod": name, "container": "db-migrate",
           "reason": "CrashLoopBackOff"},
          lambda t: 1.0 if t > runs[1].start.timestamp() else 0.0,
          "Describes the reason the init container is currently in waiting state.",
          times=[t for t in s.times if t >= born.timestamp() + 25])
    flyway = [
        "Flyway OSS Edition 10.21.0 by Redgate",
        "",
        "See release notes here: https://rd.gt/416ObMi",
        "Database: jdbc:postgresql://pgbouncer.rostering.svc:6432/rosters (PostgreSQL 15.8)",
        "ERROR: Validate failed: Migrations have failed validation",
        "Migration checksum mismatch for migration version 57",
        "-> Applied to database : 1402771563",
        "-> Resolved locally    : -1178321990",
        "Either revert the changes to the migration, or run repair to update the schema "
        "history.",
        "Need more flexibility with validation rules? Learn more: https://rd.gt/3AbJUZE",
    ]
    last = runs[-2] if runs[-1].end is None else runs[-1]
    s.pod_log(new, "db-migrate", flyway, previous=True)
    if runs[-1].end is None:
        s.pod_log(new, "db-migrate", flyway[:4])
    for r in runs:
        s.logs.add(r.start + timedelta(seconds=2.4), "error", "ERROR: Validate failed: "
                   "Migrations have failed validation. Migration checksum mismatch for "
                   "migration version 57 -> Applied to database : 1402771563 -> Resolved "
                   "locally : -1178321990", namespace=NS, pod=name, container="db-migrate",
                   service="shift-planner", node=nodes[3]["metadata"]["name"])
    _ = last

    # ---- the old pods serve (with their usual slow-query warnings)
    for pod in olds:
        quiet(s, [pod], "shift-planner", 880)
        requests(s, pod, "shift-planner", rps=lambda t: 6.5 + 2.0 * ((t // 1200) % 2),
                 codes={"200": lambda t: 0.992, "409": lambda t: 0.006,
                        "500": lambda t: 0.0015})
    chatter(s, olds, "shift-planner", "shift-planner", [
        ("info", "roster published: site SG-JURONG-DC week 2027-W32 (412 shifts)", {}),
        ("info", "GET /api/rosters/current 200 84ms", {}),
        ("warn", "slow query 1840ms: SELECT * FROM shift_assignment WHERE site_id=$1 AND "
         "week=$2 ORDER BY starts_at", {}),
        ("warn", "shift swap rejected: employee E-20931 would exceed 44h weekly limit", {}),
    ], 150)

    # ---- pgbouncer: a plausible suspect
    bouncer = Ctr("pgbouncer", f"{REG}/pgbouncer:1.23.1", port=6432, port_name="pg",
                  requests={"cpu": "100m", "memory": "64Mi"}, limits={"memory": "128Mi"},
                  readiness=None)
    _, bouncers = steady(s, NS, "pgbouncer", [bouncer], nodes=nodes, replicas=2, revision=6,
                         rollout=s.ago(days=6, hours=1), service=6432, target="pg", offset=1)
    quiet(s, bouncers, "pgbouncer", 21)
    chatter(s, bouncers, "pgbouncer", "pgbouncer", [
        ("info", "stats: 41 xacts/s, 118 queries/s, in 21873 B/s, out 140311 B/s, xact "
         "3102 us, query 1022 us, wait 12 us", {}),
        ("warn", "C-0x55d0c1a2: rosters/shift_planner@10.48.6.23:51234 closing because: "
         "client unexpected eof (age=3s)", {}),
        ("warn", "C-0x55d0c1b9: rosters/payroll_ro@10.48.2.77:40110 pooler error: no more "
         "connections allowed (max_client_conn)", {}),
    ], 90)
    gauge(s, "pgbouncer_pools_client_active_connections",
          {"namespace": NS, "database": "rosters", "user": "shift_planner"},
          lambda t: 14 + s.rng.randrange(0, 6), "Client connections linked to server "
          "connections and able to process queries.")

    # ---- payroll neighbour with an old OOM
    exp = Ctr("payroll-export", f"{REG}/payroll-export:2.2.1", port=8080,
              requests={"cpu": "200m", "memory": "512Mi"}, limits={"memory": "768Mi"},
              readiness=http_probe("/healthz"))
    _, exports = steady(s, "payroll", "payroll-export", [exp], nodes=nodes, replicas=1,
                        revision=15, rollout=s.ago(days=3, hours=7),
                        restarted={0: (s.ago(days=1, hours=20), "OOMKilled", 137)}, offset=2)
    quiet(s, exports, "payroll-export", 540)
    chatter(s, exports, "payroll-export", "payroll-export", [
        ("info", "export batch PR-2027-08-A: 1893 timesheets to SAP SuccessFactors", {}),
        ("warn", "employee E-10442 has no cost centre for site SG-TUAS, skipped", {}),
    ], 30)
    log_lines(s, new, "shift-planner", [])  # the app container never started: empty log
    s.pod_logs.pop(f"pod-logs/{NS}/{name}/shift-planner.log", None)
    _ = parse
    return s
