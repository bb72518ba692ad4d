"""Meal-kit boxes: customers cannot edit this week's box, the page spins and then fails.
box-planner (Spring Boot, HikariCP, maximumPoolSize 20) leaks a connection on every meal
swap that hits the allergen-conflict branch (the transaction is never closed): since the
weekly menu opened at 08:00 the pool's active connections climbed from 3 to 20, and from
about 09:41 every request waits 30 s for a connection and fails. The signal is mostly in
metrics (hikaricp_connections_active at hikaricp_connections_max, pending and timeouts
rising; postgres shows the sessions "idle in transaction"), with a few pool timeout lines.
Red herrings: menu-catalog 12.0.0 rolled out in the same namespace 38 min before the
onset, the orders database logs autovacuum and a slow report query, an OOM restart of
label-printer three days ago, a supplier-feed warning in box-planner itself."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.scenario_tools.common import (
    Story,
    const,
    kube_system,
    namespaces,
    nodes,
    truth,
)
from tests.scenario_tools.kube import Ctr, Template, ended, http_probe, running, tcp_probe
from tests.scenario_tools.parts import app, neighbour, rollout

from .kit13 import chatter, counter, gauge, plain_metrics, ramp

ID = "meal-box-edits-spinning"
NOW = datetime(2028, 4, 15, 10, 13, tzinfo=UTC)
NS = "mealkits"
REG = "europe-west3-docker.pkg.dev/kochkiste-prod/apps"


def build() -> Story:
    s = Story(ID, "Customers cannot change their meal box", NOW, """\
Since roughly half past nine customers can't change the meals in their box for next week,
the "swap meal" page spins forever and then shows "something went wrong". Customer care
is getting flooded, cut-off for changes is tonight. Ordering new boxes seems ok-ish but slow.
""", truth("resource_exhaustion", "Deployment", NS, "box-planner",
           ["hikaricp_connections_pending", "Connection is not available",
            "hikaricp_connections_max", "idle in transaction"],
           "box-planner leaks database connections (a swap that hits the allergen-conflict "
           "path never ends its transaction): its HikariCP pool sits at 20/20 active with "
           "requests queueing 30 s for a connection. Restart box-planner's pods to free the "
           "pool now, then fix the leak (close the transaction) and enable leak detection."),
        hours=3.0)
    namespaces(s, NS, "orders-data", "print")
    node_list = nodes(s, 3, subnet=52, region="europe-west3", instance="n2-standard-4",
                      days=4.5)
    kube_system(s, node_list)
    opened = NOW - timedelta(hours=2, minutes=13)   # 08:00, the weekly menu opens
    full = NOW - timedelta(minutes=32)              # 09:41, the pools are exhausted
    cut = full.timestamp()

    def sat(t: int) -> float:
        return ramp(t, opened, full)

    _, boxes = app(
        s, NS, "box-planner", f"{REG}/box-planner:7.31.0", node_list, replicas=3,
        revision=88, rollout_at=s.ago(days=2, hours=20),
        rps=lambda t: 3.0 if t < opened.timestamp() else 11.0,
        codes={"200": lambda t: 0.992 if t < cut else 0.31,
               "409": const(0.006),
               "500": lambda t: 0.002 if t < cut else 0.66},
        median=lambda t: 0.08 + 0.5 * sat(t) if t < cut else 28.0, cpu=lambda t: 0.35,
        memory_mib=820, limits={"memory": "1536Mi"}, requests={"cpu": "500m",
                                                              "memory": "1Gi"},
        env={"SPRING_DATASOURCE_URL": "jdbc:postgresql://orders-db.orders-data.svc:5432/"
             "orders", "SPRING_DATASOURCE_HIKARI_MAXIMUM_POOL_SIZE": "20",
             "SPRING_DATASOURCE_HIKARI_CONNECTION_TIMEOUT": "30000",
             "JAVA_TOOL_OPTIONS": "-XX:MaxRAMPercentage=70"},
        readiness=http_probe("/actuator/health/readiness", delay=20),
        liveness=http_probe("/actuator/health/liveness", delay=60, period=20, timeout=3))
    for k, pod in enumerate(boxes):
        labels = {"namespace": NS, "pod": pod["metadata"]["name"], "pool": "HikariPool-1"}
        lag = 60 * (k * 3 - 3)

        def active(t: int, lag: int = lag) -> float:
            v = 3 + 17 * ramp(t, opened, full + timedelta(seconds=lag))
            return float(min(20, round(v)))
        gauge(s, "hikaricp_connections_max", labels, const(20.0),
              "Max connections")
        gauge(s, "hikaricp_connections_active", labels, active, "Active connections")
        gauge(s, "hikaricp_connections_idle", labels,
              lambda t, a=active: float(max(0.0, min(7.0, 20 - a(t)) if a(t) < 20 else 0.0)),
              "Idle connections")
        gauge(s, "hikaricp_connections_pending", labels,
              lambda t, a=active: 0.0 if a(t) < 20 else float(s.rng.randrange(9, 31)),
              "Pending threads")
        counter(s, "hikaricp_connections_timeout", labels,
                lambda t, a=active: 0.0 if a(t) < 20 else 2.4,
                "Connection timeout total count", start=s.rng.randrange(0, 4))
        gauge(s, "jvm_threads_live_threads", {"namespace": NS, "pod": pod["metadata"]["name"]},
              lambda t, a=active: 64.0 if a(t) < 20 else 212.0,
              "The current number of live threads including both daemon and non-daemon "
              "threads", jitter=0.03)
    chatter(s, boxes, "box-planner", [
        ("info", "PUT /api/v2/boxes/B-2028-16-61940/meals 200 swap meal=M116 -> M142",
         {"http.response.status_code": 200}),
        ("info", "GET /api/v2/boxes/B-2028-16-55812 200", {"http.response.status_code": 200}),
        ("info", "allergen check: swap M142 conflicts with profile allergens [sesame], "
         "offering alternatives", {}),
        ("info", "POST /api/v2/subscriptions/S-118274/pause 200", {
            "http.response.status_code": 200}),
    ], 160, end=full)
    chatter(s, boxes, "box-planner", [
        ("warn", "supplier feed stale: farm 'Hof Lindenkamp' last update 26h ago, keeping "
         "cached stock", {}),
    ], 9)
    chatter(s, boxes, "box-planner", [
        ("error", "PUT /api/v2/boxes/B-2028-16-71104/meals 500 "
         "CannotCreateTransactionException: Could not open JPA EntityManager for transaction",
         {"http.response.status_code": 500, "error.type":
          "org.springframework.transaction.CannotCreateTransactionException"}),
        ("error", "HikariPool-1 - Connection is not available, request timed out after "
         "30000ms (total=20, active=20, idle=0, waiting=24)",
         {"error.type": "java.sql.SQLTransientConnectionException"}),
        ("info", "GET /api/v2/boxes/B-2028-16-30977 200", {"http.response.status_code": 200}),
    ], 70, start=full + timedelta(seconds=20))

    # ---- orders-db: healthy, but holds the leaked sessions idle in transaction
    c = s.cluster
    pg = Ctr("postgres", "docker.io/bitnami/postgresql:16.4.0-debian-12-r9", port=5432,
             port_name="tcp-postgresql", requests={"cpu": "1", "memory": "4Gi"},
             limits={"memory": "4Gi"}, readiness=tcp_probe("tcp-postgresql"),
             liveness=tcp_probe("tcp-postgresql", delay=30))
    db = c.workload("StatefulSet", "orders-data", "orders-db",
                    Template([pg], service_account="orders-db"), replicas=1,
                    created=s.ago(days=420))
    rev = c.revision(db, 6, s.ago(days=4, hours=2))
    born = s.ago(days=4, hours=2)
    db_pod = c.pod(db, rev, node=node_list[1], created=born,
                   statuses={"postgres": running(born + timedelta(seconds=5))})
    c.service("orders-data", "orders-db", {"app.kubernetes.io/name": "orders-db"}, port=5432,
              target="tcp-postgresql", created=s.ago(days=420))
    plain_metrics(s, [db_pod], "postgres", 2300, 0.4)
    for state, fn in (("active", lambda t: 4.0), ("idle", lambda t: 21.0 - 12 * sat(t)),
                      ("idle in transaction", lambda t: 1.0 + 50 * sat(t))):
        gauge(s, "pg_stat_activity_count", {"namespace": "orders-data",
                                           "pod": db_pod["metadata"]["name"],
                                           "datname": "orders", "state": state},
              lambda t, f=fn: float(round(f(t))), "number of connections in this state")
    chatter(s, [db_pod], "postgres", [
        ("info", 'automatic vacuum of table "orders.public.box_items": index scans: 1', {}),
        ("info", "checkpoint complete: wrote 1893 buffers (1.4%)", {}),
        ("warn", "duration: 4211.907 ms  statement: SELECT week, sum(total) FROM invoices "
         "GROUP BY week", {}),
    ], 36, service="orders-db")

    # ---- red herring: menu-catalog 12.0.0 rolled out 38 min before the onset
    at = full - timedelta(minutes=38)

    def catalog(version: str) -> Ctr:
        return Ctr("menu-catalog", f"{REG}/menu-catalog:{version}", port=8080,
                   requests={"cpu": "200m", "memory": "512Mi"}, limits={"memory": "768Mi"},
                   readiness=http_probe("/actuator/health/readiness", delay=15),
                   liveness=http_probe("/actuator/health/liveness", delay=40, period=20))
    roll = rollout(s, NS, "menu-catalog", catalog, old="11.9.4", new="12.0.0", at=at,
                   revision=45, replicas=2, node_list=node_list)
    plain_metrics(s, roll.new_pods + roll.old_pods, "menu-catalog", 430, 0.1)
    chatter(s, roll.new_pods, "menu-catalog", [
        ("info", "menu week 2028-17 published: 31 recipes, 4 new", {}),
        ("warn", "recipe R-8812 has no image for locale fr-CH, using de-CH", {}),
        ("info", "GET /menus/2028-17 200 (cache hit)", {}),
    ], 45, start=at + timedelta(minutes=1))
    neighbour(s, "print", "label-printer", f"{REG}/label-printer:3.2.1", node_list,
              replicas=1, memory_mib=410, logs=[
                  ("info", "printed 48 box labels for line packing-2", {}),
                  ("warn", "printer ZD621-packing-3 paper low", {})], n_logs=14,
              restarts={0: running(s.ago(days=3, hours=4), restarts=1, last=ended(
                  "OOMKilled", 137, s.ago(days=5, hours=2), s.ago(days=3, hours=4,
                                                                  seconds=3)))})
    return s
