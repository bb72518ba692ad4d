"""Garden centre web shop: product pages show the "greenhouse is being tidied" fallback.

catalog-api 4.8.0 was rolled out at 10:14 with the Recreate strategy (it migrates the schema
on start with Flyway). Migration V58 adds a column that a hot-fix had already added by hand,
so Flyway fails ("column "pot_size_cm" of relation "variety" already exists"), Spring exits 1
and both new pods crash-loop: no catalog endpoints, the storefront serves its fallback page.
Red herrings: photo-resizer (which the report blames) has an OOMKilled restart two days ago;
garden-planner 2.13.0 rolled out 43 minutes before the onset in the same namespace; the old
catalog pods logged Hikari "thread starvation" and high-heap warnings before the rollout;
order-mailer gets SMTP 421 deferrals in another namespace.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.scenario_tools.common import (
    MIB,
    Story,
    container_metrics,
    http_metrics,
    kube_system,
    namespaces,
    nodes,
    simple_deployment,
    truth,
)
from tests.scenario_tools.failures import crash_events, crash_looping
from tests.scenario_tools.kube import Ctr, ended, http_probe, running
from tests.scenario_tools.parts import app, neighbour, rollout
from tests.scenario_tools.sim import Run, deaths

from .kit import lines, ramp

ID = "plant-shop-catalogue-fallback"
NOW = datetime.fromisoformat("2029-03-14T10:42:00+00:00")
NS = "plantshop"
REG = "registry.gitlab.com/greenleaf-gardens/shop"
IMAGE = f"{REG}/catalog-api:4.8.0"


def _run_lines(start: datetime) -> list[tuple[float, str, str]]:
    """(seconds after start, level, message) of one catalog-api instance that fails."""
    return [
        (0.4, "info", "Starting CatalogApiApplicationKt v4.8.0 using Java 21.0.6 with PID 1"),
        (1.9, "info", "HikariPool-1 - Start completed."),
        (2.3, "info", "Flyway Community Edition 10.20.1 by Redgate"),
        (2.5, "info", "Database: jdbc:postgresql://greenleaf-prod.cluster-c8xq2.eu-central-1."
                      "rds.amazonaws.com:5432/catalog (PostgreSQL 16.6)"),
        (2.8, "info", "Current version of schema \"public\": 57"),
        (2.9, "info", "Migrating schema \"public\" to version \"58 - add pot size to variety\""),
        (3.1, "error", "Migration V58__add_pot_size_to_variety.sql failed\n"
                       "SQL State  : 42701\nError Code : 0\n"
                       "Message    : ERROR: column \"pot_size_cm\" of relation \"variety\" "
                       "already exists\nLocation   : db/migration/V58__add_pot_size_to_variety."
                       "sql\nLine       : 1\nStatement  : ALTER TABLE variety ADD COLUMN "
                       "pot_size_cm smallint"),
        (3.3, "error", "Application run failed: org.springframework.beans.factory."
                       "BeanCreationException: Error creating bean with name "
                       "'flywayInitializer': Migration V58__add_pot_size_to_variety.sql "
                       "failed"),
        (3.6, "info", "HikariPool-1 - Shutdown completed."),
    ]


def build() -> Story:
    s = Story(
        id=ID, title="Plant shop product pages show the fallback page", now=NOW,
        report="""\
greenleaf.shop: product pages and search show "Our greenhouse is being tidied, back in a
moment" since roughly 10:15, for every plant we tried. The basket page still loads. Did the
photo-resizer break again? It was acting up earlier this week.
""",
        truth=truth(
            "crash_loop", "Deployment", NS, "catalog-api",
            ["CrashLoopBackOff", "V58__add_pot_size_to_variety.sql failed",
             "column \"pot_size_cm\" of relation \"variety\" already exists",
             "catalog-api:4.8.0"],
            "catalog-api 4.8.0 (Recreate strategy, rolled out at 10:14) runs the Flyway "
            "migration V58 on start; the column pot_size_cm already exists in the catalog "
            "database, so the migration fails, the app exits 1 and both pods crash-loop with "
            "no endpoints left. Roll catalog-api back to 4.7.2 now, then make V58 idempotent "
            "(ADD COLUMN IF NOT EXISTS) or baseline it with flyway repair before redeploying."))
    c = s.cluster
    namespaces(s, NS, "orders")
    ns_nodes = nodes(s, 4, subnet=31, region="eu-central-1", instance="m7i.xlarge", days=5.5)
    kube_system(s, ns_nodes)
    at = NOW - timedelta(minutes=28, seconds=14)

    # ---- catalog-api: Recreate rollout 4.7.2 -> 4.8.0, both new pods crash-loop
    runs_of: dict[str, list[Run]] = {}

    def ctr(version: str) -> Ctr:
        return Ctr("catalog-api", f"{REG}/catalog-api:{version}", port=8080,
                   requests={"cpu": "300m", "memory": "640Mi"}, limits={"memory": "768Mi"},
                   env={"SPRING_PROFILES_ACTIVE": "prod", "SPRING_FLYWAY_ENABLED": "true",
                        "DB_HOST": "greenleaf-prod.cluster-c8xq2.eu-central-1.rds.amazonaws.com",
                        "JAVA_TOOL_OPTIONS": "-XX:MaxRAMPercentage=70"},
                   readiness=http_probe("/actuator/health/readiness", delay=20),
                   liveness=http_probe("/actuator/health/liveness", delay=45, period=20))

    def states(i: int, started: datetime, pod_name: str) -> dict:
        status, runs = crash_looping(s, pod_name, NS, "catalog-api", started=started,
                                     life=3.9 + 0.3 * i)
        runs_of[pod_name] = runs
        return {"catalog-api": status}

    roll = rollout(s, NS, "catalog-api", ctr, old="4.7.2", new="4.8.0", at=at, revision=23,
                   replicas=2, node_list=ns_nodes, statuses=states, recreate=True)
    for pod in roll.new_pods:
        name = pod["metadata"]["name"]
        runs = runs_of[name]
        crash_events(s, pod, "catalog-api", runs, IMAGE)
        alive = runs

        def mem(t: int, r: list[Run] = alive) -> float | None:
            for run in r:
                end = run.end or NOW
                if run.start.timestamp() <= t <= end.timestamp():
                    return 180 * MIB
            return None
        container_metrics(s, pod, "catalog-api", memory=mem,
                          restarts=[int(d.timestamp()) for d in deaths(runs)])
        node = pod["spec"]["nodeName"]
        last_lines: list[str] = []
        for run in runs:
            if run.end is not None:
                last_lines = []
            for off, level, msg in _run_lines(run.start):
                when = run.start + timedelta(seconds=off)
                if when > NOW:
                    break
                if run.end is None:
                    s.logs.add(when, level, msg, namespace=NS, pod=name,
                               container="catalog-api", service="catalog-api", node=node)
                    continue
                s.logs.add(when, level, msg, namespace=NS, pod=name, container="catalog-api",
                           service="catalog-api", node=node)
                stamp = when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"
                last_lines.append(f"{stamp} {level.upper():<5} {msg}")
        s.pod_log(pod, "catalog-api", last_lines, previous=True)
    for ghost in roll.old_pods:
        container_metrics(s, ghost, "catalog-api", memory=lambda t: 555 * MIB)
        http_metrics(s, "catalog-api", ghost, rps=lambda t: 21.0,
                     codes={"200": lambda t: 0.994, "404": lambda t: 0.006},
                     median=lambda t: 0.04)
        gone = datetime.fromtimestamp(ghost["metadata"]["_deleted"], NOW.tzinfo)
        lines(s, ghost, "catalog-api", "catalog-api", s.ago(hours=3), gone, 70, [
            ("info", "GET /v2/varieties/hosta-june 200 31ms", {}),
            ("info", "GET /v2/search?q=lavender 200 58ms", {}),
            ("info", "GET /v2/varieties/acer-palmatum-bloodgood 200 27ms", {}),
            ("warn", "HikariPool-1 - Thread starvation or clock leap detected "
                     "(housekeeper delta=1m2s).", {}),
            ("warn", "heap usage after GC 81% of max (433MiB/535MiB), consider raising "
                     "limits", {}),
        ])

    # ---- storefront: serves the fallback once catalog-api has no endpoints
    down = ramp(at, 0.5)
    front, fronts = app(s, NS, "storefront", f"{REG}/storefront:2026.11.3", ns_nodes,
                        replicas=3, revision=88, rps=lambda t: 36.0,
                        codes={"200": lambda t: 0.99 - 0.62 * down(t),
                               "503": lambda t: 0.001 + 0.62 * down(t),
                               "404": lambda t: 0.009},
                        median=lambda t: 0.09 - 0.05 * down(t), cpu=lambda t: 0.22,
                        memory_mib=210, port=3000,
                        env={"CATALOG_URL": "http://catalog-api.plantshop.svc:80",
                             "BASKET_URL": "http://basket.plantshop.svc:80"})
    svc_ip = next(o for o in c.objects_of("Service")
                  if o["metadata"]["name"] == "catalog-api")["spec"]["clusterIP"]
    for pod in fronts:
        lines(s, pod, "storefront", "storefront", s.ago(hours=3), at, 30, [
            ("info", "GET /plants/hosta-june 200 88ms", {"http.response.status_code": 200}),
            ("info", "GET /search?q=lavender 200 121ms", {"http.response.status_code": 200}),
        ])
        lines(s, pod, "storefront", "storefront", at + timedelta(seconds=8), NOW, 45, [
            ("error", f"catalog fetch failed: connect ECONNREFUSED {svc_ip}:80 - rendering "
                      "maintenance fallback", {"http.response.status_code": 503,
                                               "error.type": "ECONNREFUSED"}),
            ("error", "GET /plants/echinacea-purpurea 503 (catalog unavailable)",
             {"http.response.status_code": 503}),
            ("info", "GET /basket 200 64ms", {"http.response.status_code": 200}),
        ])

    # ---- red herrings
    def planner(version: str) -> Ctr:
        return Ctr("garden-planner", f"{REG}/garden-planner:{version}", port=8080,
                   requests={"cpu": "100m", "memory": "256Mi"}, limits={"memory": "384Mi"},
                   readiness=http_probe("/healthz"))
    planned = rollout(s, NS, "garden-planner", planner, old="2.12.4", new="2.13.0",
                      at=NOW - timedelta(minutes=71, seconds=40), revision=41, replicas=2,
                      node_list=ns_nodes)
    for pod in planned.new_pods:
        container_metrics(s, pod, "garden-planner", memory=lambda t: 201 * MIB)
        lines(s, pod, "garden-planner", "garden-planner", s.ago(minutes=70), NOW, 20, [
            ("info", "planner 2.13.0 ready, frost dates table eu-2029 loaded (4.112 rows)", {}),
            ("info", "GET /v1/beds/1184/plan 200 22ms", {}),
            ("warn", "companion rule 'tomato+fennel' deprecated, using fallback", {}),
        ])
    oom = s.ago(days=2, hours=3, minutes=11)
    _, resizers = simple_deployment(
        s, NS, "photo-resizer", f"{REG}/photo-resizer:1.9.2", replicas=2, node_list=ns_nodes,
        revision=12, rollout=s.ago(days=4, hours=5), memory="512Mi",
        restarts={0: running(oom + timedelta(seconds=11), restarts=1,
                             last=ended("OOMKilled", 137, s.ago(days=4, hours=4, minutes=59),
                                        oom))})
    for i, pod in enumerate(resizers):
        container_metrics(s, pod, "photo-resizer", memory=lambda t: 290 * MIB,
                          restart_base=1 if i == 0 else 0)
        lines(s, pod, "photo-resizer", "photo-resizer", s.ago(hours=3), NOW, 20, [
            ("info", "resized hosta-june/1.jpg to 3 variants in 212ms", {}),
            ("warn", "source image acer-06.heic larger than 20MP, downscaling first", {}),
        ])
    neighbour(s, "orders", "order-mailer", f"{REG}/order-mailer:3.2.0", ns_nodes,
              replicas=2, memory_mib=120, n_logs=40, logs=[
                  ("info", "order GL-2291841 confirmation queued", {}),
                  ("warn", "SMTP 421 4.7.0 try again later from mx.t-online.de, deferring "
                           "GL-2291833 (attempt 2)", {}),
                  ("info", "order GL-2291845 confirmation sent", {}),
              ])
    del front
    return s
