"""Coworking spaces: desk bookings fail intermittently. Three services share the PostgreSQL
StatefulSet workspace-db (max_connections 200, 3 reserved for superusers).
occupancy-reporter (2.3.0, running for five hours) opens a new psycopg connection for every
occupancy snapshot and never closes it: its idle connections grow by about 0.6 a minute
until, 35 minutes ago, the server is full and answers every new connection "FATAL: sorry,
too many clients already". desk-booking recycles its pooled connections every 30 minutes and
cannot get them back, so its pool shrinks and bookings fail; door-access's badge checks slow
down. The culprit is the leaking occupancy-reporter. Red herrings: desk-booking 5.8.0 rolled
out 50 minutes ago (plausible alternative), an old OOM restart of door-access, autovacuum
and checkpoint messages of the database."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from functools import partial

from tests.data.holdout._generator.base import PCtr, gauge, set_times
from tests.data.holdout2._generator.kit import (
    NodeKind,
    app_counter,
    cpu_seconds,
    requests,
    statefulset,
    storage_class,
)
from tests.data.holdout3._generator.kit3 import chatter, namespaces, quiet, steady
from tests.data.holdout4._generator.kit4 import ramp
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, Template, http_probe

from .kit7 import Incident, provider_nodes

ID = "desk-bookings-failing-intermittently"
NOW = datetime.fromisoformat("2027-10-27T12:12:00+00:00")
NS = "workspace"
REG = "registry.gitlab.com/deskhop/platform"
DB = "workspace"


def _rounded(value: Callable[[int], float], t: int) -> float:
    return float(round(value(t)))


def build() -> Incident:
    s = Incident(
        id=ID, title="Desk bookings failing intermittently", now=NOW,
        report="""\
Members report "Something went wrong, please try again" when booking a desk in the app,
maybe every second or third attempt over the last half hour. A few sites also mention the
badge readers at the door being slow to open.
""",
        truth=truth(
            "resource_exhaustion", "Deployment", NS, "occupancy-reporter",
            ["sorry, too many clients already", "pg_stat_activity_count",
             "max_connections", "occupancy-reporter"],
            "occupancy-reporter opens a new PostgreSQL connection for every snapshot and "
            "never closes it: ~160 idle connections of user occupancy fill workspace-db's "
            "max_connections (200, 3 reserved) since ~11:37, so every new connection is "
            "refused with 'sorry, too many clients already' and desk-booking's pool, which "
            "recycles connections every 30 min, shrinks and fails. Restart occupancy-reporter "
            "now and fix it to close (or pool) its connections; set idle_session_timeout "
            "and a per-role connection limit for occupancy."))
    set_times(s, 2.5, 60)
    c = s.cluster
    namespaces(s, {"default": 540, "kube-system": 540, NS: 512, "monitoring": 530})
    kind = NodeKind("v2-c4-m16-d80", "4", "16393620Ki", "3860m", "14248340Ki", "v1.31.3",
                    "6.8.0-48-generic", "Ubuntu 24.04.1 LTS", runtime="containerd://1.7.23",
                    storage="81106868Ki", alloc_storage="74748017434")
    nodes = provider_nodes(s, "elastx", 4, kind, days=5.8)
    full = NOW - timedelta(minutes=35)
    rep_roll = NOW - timedelta(hours=5, minutes=2)
    rate = 162 / (full - rep_roll).total_seconds()

    def desk_pool(t: int) -> float:
        if t < full.timestamp() + 240:
            return 24.0
        return max(9.0, 24.0 - 15 * ramp(t, full + timedelta(minutes=4), 20))

    def leaked(t: int) -> float:  # after `full` it takes every slot the others give back
        if t < full.timestamp():
            return (t - rep_roll.timestamp()) * rate
        return 186.0 - desk_pool(t)

    def failing(t: int) -> float:  # share of desk-booking calls without a connection
        return 0.003 + 0.4 * ramp(t, full + timedelta(minutes=4), 20)

    # ---- the database
    storage_class(s, "cinder-v3-ssd", "cinder.csi.openstack.org", {"type": "v3-ssd"},
                  created=s.ago(days=512), default=True)
    pg = PCtr("postgres", "docker.io/library/postgres:15.10", port=None,
              requests={"cpu": "1", "memory": "4Gi"}, limits={"memory": "4Gi"},
              args=["-c", "max_connections=200", "-c", "superuser_reserved_connections=3",
                    "-c", "shared_buffers=1GB"],
              env={"POSTGRES_DB": DB, "PGDATA": "/var/lib/postgresql/data/pgdata"},
              readiness={"exec": {"command": ["pg_isready", "-U", "postgres"]},
                         "periodSeconds": 10, "timeoutSeconds": 5, "failureThreshold": 3,
                         "successThreshold": 1, "initialDelaySeconds": 5},
              mounts=[{"mountPath": "/var/lib/postgresql/data", "name": "data"}],
              ports=[("postgres", 5432, "TCP")])
    exp = Ctr("postgres-exporter", "quay.io/prometheuscommunity/postgres-exporter:v0.16.0",
              port=9187, port_name="metrics", requests={"cpu": "20m", "memory": "32Mi"},
              limits={"memory": "64Mi"},
              env={"DATA_SOURCE_URI": "localhost:5432/workspace?sslmode=disable"})
    tpl = Template([pg, exp], service_account="workspace-db")
    _, dbs = statefulset(s, NS, "workspace-db", tpl, replicas=1, nodes=nodes[2:],
                         revisions=[(6, s.ago(days=5, hours=4), tpl)],
                         pod_revision=lambda i: 6, born=lambda i: s.ago(days=5, hours=4),
                         claim=("data", "100Gi", "cinder-v3-ssd"), created=s.ago(days=512))
    c.service(NS, "workspace-db", {"app.kubernetes.io/name": "workspace-db"}, port=5432,
              target="postgres", created=s.ago(days=512))
    db = dbs[0]
    quiet(s, [db], "postgres", 2300)
    quiet(s, [db], "postgres-exporter", 22)
    lab = {"namespace": NS, "pod": db["metadata"]["name"], "datname": DB}
    gauge(s, "pg_settings_max_connections", {"namespace": NS, "pod": db["metadata"]["name"]},
          lambda t: 200.0, "Sets the maximum number of concurrent connections.")
    gauge(s, "pg_settings_superuser_reserved_connections", {"namespace": NS,
                                                            "pod": db["metadata"]["name"]},
          lambda t: 3.0, "Sets the number of connection slots reserved for superusers.")
    gauge(s, "pg_up", {"namespace": NS, "pod": db["metadata"]["name"]}, lambda t: 1.0,
          "Whether the last scrape of metrics from PostgreSQL was able to connect.")

    series: list[tuple[str, str, str, Callable[[int], float]]] = [
        ("occupancy", "occupancy-reporter", "idle", leaked),
        ("occupancy", "occupancy-reporter", "active", lambda t: 1.0),
        ("desk", "desk-booking", "idle", lambda t: desk_pool(t) - 4),
        ("desk", "desk-booking", "active", lambda t: 4.0),
        ("door", "door-access", "idle", lambda t: 8.0),
        ("door", "door-access", "active", lambda t: 2.0)]
    for user, app, state, value in series:
        gauge(s, "pg_stat_activity_count", {**lab, "state": state, "usename": user,
                                            "application_name": app},
              partial(_rounded, value), "number of connections in this state")
    chatter(s, [db], "postgres", "workspace-db", [
        ("info", "LOG:  checkpoint complete: wrote 1822 buffers (1.4%); 0 WAL file(s) added, "
         "0 removed, 1 recycled; write=179.911 s", {}),
        ("info", "LOG:  automatic vacuum of table \"workspace.public.badge_events\": index "
         "scans: 1", {}),
        ("warn", "WARNING:  autovacuum worker took 41 s on \"workspace.public.badge_events\"",
         {}),
    ], 40)
    chatter(s, [db], "postgres", "workspace-db", [
        ("error", "FATAL:  sorry, too many clients already", {}),
        ("error", "FATAL:  sorry, too many clients already", {}),
        ("info", "LOG:  connection received: host=10.200.1.37 port=48812", {}),
    ], 150, start=full)

    # ---- the leaking reporter
    rep = Ctr("occupancy-reporter", f"{REG}/occupancy-reporter:2.3.0", port=8000,
              requests={"cpu": "50m", "memory": "128Mi"}, limits={"memory": "256Mi"},
              env={"PGHOST": "workspace-db", "PGUSER": "occupancy", "PGDATABASE": DB,
                   "SNAPSHOT_INTERVAL": "60s", "SITES": "all"})
    _, reps = steady(s, NS, "occupancy-reporter", [rep], nodes=nodes, replicas=1,
                     revision=14, rollout=rep_roll, offset=3, service=8000,
                     old=(13, s.ago(days=6, hours=1), [Ctr(
                         "occupancy-reporter", f"{REG}/occupancy-reporter:2.2.4", port=8000)]))
    for pod in reps:
        quiet(s, [pod], "occupancy-reporter", 96)
        gauge(s, "process_open_fds", {"namespace": NS, "pod": pod["metadata"]["name"],
                                      "job": "occupancy-reporter"},
              lambda t: 15.0 + leaked(t), "Number of open file descriptors.")
        app_counter(s, "occupancy_snapshots_total", {"namespace": NS,
                                                     "pod": pod["metadata"]["name"]},
                    s.times, lambda t: 0.6 if t < full.timestamp() else 0.02,
                    "Occupancy snapshots written.")
    chatter(s, reps, "occupancy-reporter", "occupancy-reporter", [
        ("info", "snapshot written: 41 sites, 2318 desks, 1204 occupied", {}),
        ("info", "snapshot written: 41 sites, 2318 desks, 1187 occupied", {}),
    ], 90, end=full)
    chatter(s, reps, "occupancy-reporter", "occupancy-reporter", [
        ("error", "snapshot failed: psycopg.OperationalError: connection failed: FATAL:  "
         "sorry, too many clients already", {"error.type": "psycopg.OperationalError"}),
    ], 34, start=full)

    # ---- desk-booking, what members use
    dk_roll = NOW - timedelta(minutes=50)
    dk = Ctr("desk-booking", f"{REG}/desk-booking:5.8.0", port=8080,
             requests={"cpu": "200m", "memory": "384Mi"}, limits={"memory": "512Mi"},
             env={"DATABASE_URL": "postgres://desk@workspace-db:5432/workspace",
                  "DB_POOL_MAX": "8", "DB_POOL_MAX_LIFETIME": "30m"},
             readiness=http_probe("/health/ready", delay=5),
             liveness=http_probe("/health/live", delay=15))
    _, dks = steady(s, NS, "desk-booking", [dk], nodes=nodes, replicas=3, revision=58,
                    rollout=dk_roll, offset=1, old=(57, s.ago(days=4), [Ctr(
                        "desk-booking", f"{REG}/desk-booking:5.7.3", port=8080)]))
    for pod in dks:
        quiet(s, [pod], "desk-booking", 210)
        cpu_seconds(s, pod, "desk-booking", lambda t: 0.06)
        requests(s, pod, "desk-booking", rps=lambda t: 4.2, codes={
            "200": lambda t: 1 - failing(t), "500": failing})
    chatter(s, dks, "desk-booking", "desk-booking", [
        ("info", "desk-booking 5.8.0 started, pool max 8, max lifetime 30m", {}),
    ], 3, start=dk_roll, end=dk_roll + timedelta(minutes=2))
    chatter(s, dks, "desk-booking", "desk-booking", [
        ("error", "POST /v2/bookings 500: error acquiring connection: FATAL: sorry, too many "
         "clients already (SQLSTATE 53300)", {"http.response.status_code": 500}),
        ("warn", "pool: replacing connection after max lifetime failed: FATAL: sorry, too many "
         "clients already (SQLSTATE 53300)", {}),
        ("info", "POST /v2/bookings 201 58ms (site OSL-2, desk 4.17)", {}),
        ("info", "GET /v2/sites/OSL-2/availability 200 22ms", {}),
    ], 160, start=full + timedelta(minutes=4))

    # ---- door-access, also a victim; its old OOM restart is a red herring
    door = Ctr("door-access", f"{REG}/door-access:3.1.2", port=8080,
               requests={"cpu": "100m", "memory": "192Mi"}, limits={"memory": "256Mi"},
               env={"DATABASE_URL": "postgres://door@workspace-db:5432/workspace",
                    "DB_POOL_MAX": "5"})
    _, doors = steady(s, NS, "door-access", [door], nodes=nodes, replicas=2, revision=33,
                      rollout=s.ago(days=3, hours=2), offset=2,
                      restarted={0: (s.ago(days=2, hours=5), "OOMKilled", 137)})
    quiet(s, doors, "door-access", 150)
    chatter(s, doors, "door-access", "door-access", [
        ("info", "badge ****3391 granted at OSL-2 main door", {}),
        ("warn", "badge check took 1.8s (waiting for a database connection)", {}),
    ], 60, start=full)
    return s
