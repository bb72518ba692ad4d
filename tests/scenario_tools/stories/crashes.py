"""crash_loop stories: a release that needs an env var nobody set, a migration that fails."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.scenario_tools.common import (
    MIB,
    Story,
    const,
    container_metrics,
    deployment_metrics,
    http_metrics,
    kube_system,
    namespaces,
    nodes,
    story,
    truth,
)
from tests.scenario_tools.failures import crash_events, crash_looping
from tests.scenario_tools.kube import Ctr, Obj, ended, http_probe, iso, running, waiting
from tests.scenario_tools.parts import neighbour, readiness_blip, rollout
from tests.scenario_tools.sim import Run, deaths

ECR = "497161335245.dkr.ecr.us-east-1.amazonaws.com"


def _stamp(when: datetime) -> str:
    return when.strftime("%Y-%m-%d %H:%M:%S,") + f"{when.microsecond // 1000:03d}"


KEY_ERROR = [
    "Traceback (most recent call last):",
    '  File "<frozen runpy>", line 198, in _run_module_as_main',
    '  File "/app/stock_sync/__main__.py", line 4, in <module>',
    "    from stock_sync.app import main",
    '  File "/app/stock_sync/app.py", line 12, in <module>',
    "    from stock_sync.config import settings",
    '  File "/app/stock_sync/config.py", line 23, in <module>',
    '    warehouse_api_url=os.environ["WAREHOUSE_API_URL"],',
    "                      ~~~~~~~~~~^^^^^^^^^^^^^^^^^^^^^",
    '  File "<frozen os>", line 679, in __getitem__',
    "KeyError: 'WAREHOUSE_API_URL'",
]


@story
def stock_sync_missing_env() -> Story:
    s = Story("stock-sync-missing-env", "Stock levels no longer updating",
              datetime(2026, 12, 9, 8, 15, tzinfo=UTC),
              "stock levels on the site haven't changed since around 7:30, customers order "
              "items that are sold out. can you check stock-sync in the inventory namespace?",
              truth("crash_loop", "Deployment", "inventory", "stock-sync",
                    ["CrashLoopBackOff", "KeyError: 'WAREHOUSE_API_URL'", "exit code 1",
                     "3.3.0"],
                    "Add WAREHOUSE_API_URL to stock-sync's environment (3.3.0 reads it at "
                    "start) or roll back to 3.2.4"))
    namespaces(s, "inventory", "monitoring")
    node_list = nodes(s, 3, subnet=44, region="us-east-1")
    kube_system(s, node_list)
    at = s.ago(minutes=44)
    env = {"KAFKA_BOOTSTRAP": "kafka-0.kafka.inventory.svc:9092", "SYNC_INTERVAL": "30s",
           "LOG_LEVEL": "INFO"}

    def ctr(version: str) -> Ctr:
        return Ctr("stock-sync", f"{ECR}/inventory/stock-sync:{version}", port=9102,
                   port_name="metrics", requests={"cpu": "200m", "memory": "256Mi"},
                   limits={"memory": "512Mi"}, env=env, command=["python", "-m", "stock_sync"])

    states: dict[int, list[Run]] = {}

    def crash(i: int, started: datetime, pod_name: str) -> dict[str, Obj]:
        status, runs = crash_looping(s, pod_name, "inventory", "stock-sync",
                                     started=started, life=1.6)
        states[i] = runs
        return {"stock-sync": status}

    roll = rollout(s, "inventory", "stock-sync", ctr, old="3.2.4", new="3.3.0", at=at,
                   revision=20, replicas=2, node_list=node_list, recreate=True,
                   statuses=crash, service=False)
    image = f"{ECR}/inventory/stock-sync:3.3.0"
    for i, pod in enumerate(roll.new_pods):
        runs = states[i]
        crash_events(s, pod, "stock-sync", runs, image)
        kills = [int(d.timestamp()) for d in deaths(runs)]
        container_metrics(s, pod, "stock-sync", memory=lambda t: 38 * MIB, restarts=kills)
        _crash_logs(s, pod, runs)
    deployment_metrics(s, roll.work, lambda t: 2 if t < at.timestamp() else 0)
    for pod in roll.old_pods:
        container_metrics(s, pod, "stock-sync", memory=lambda t: 171 * MIB, cpu=const(0.08))
    _stock_neighbours(s, node_list)
    return s


def _crash_logs(s: Story, pod: Obj, runs: list[Run]) -> None:
    def instance(run: Run) -> list[str]:
        start = run.start + timedelta(milliseconds=420)
        return [f"{_stamp(start)} INFO stock_sync starting version=3.3.0 pid=1", *KEY_ERROR]
    died = [r for r in runs if r.end is not None]
    s.pod_log(pod, "stock-sync", instance(died[-1]))
    if len(died) > 1:
        s.pod_log(pod, "stock-sync", instance(died[-2]), previous=True)
    for run in died[-14:]:
        s.logs.add(run.start + timedelta(milliseconds=900), "error", "\n".join(KEY_ERROR),
                   namespace="inventory", pod=pod["metadata"]["name"], container="stock-sync",
                   service="stock-sync", node=pod["spec"]["nodeName"], error__type="KeyError",
                   stream="stderr")


def _stock_neighbours(s: Story, node_list: list[Obj]) -> None:
    """inventory-api serves stale stock (a symptom), kafka warns, grafana blips."""
    neighbour(s, "inventory", "inventory-api", f"{ECR}/inventory/inventory-api:5.0.2", node_list,
              logs=[("warn", "stock snapshot older than 10m, serving cached levels", {}),
                    ("info", "GET /v1/stock/{sku} 200", {"http.response.status_code": 200}),
                    ("info", "GET /v1/stock/{sku} 200", {"http.response.status_code": 200}),
                    ("warn", "GET /v1/stock/{sku} 404 unknown sku",
                     {"http.response.status_code": 404})],
              n_logs=60, rps=40, codes={"200": 0.97, "404": 0.03}, revision=44)
    neighbour(s, "inventory", "schema-registry",
                      "docker.io/confluentinc/cp-schema-registry:7.7.1", node_list,
                      replicas=1, memory_mib=510, logs=[
                          ("warn", "[Producer clientId=producer-1] Got error produce response "
                           "with correlation id 4411 on topic-partition _schemas-0, retrying "
                           "(2147483646 attempts left). Error: NOT_LEADER_OR_FOLLOWER", {}),
                          ("info", "Wait to catch up until the offset at 219", {})], n_logs=10,
                      restarts={0: running(s.ago(days=3, hours=2), restarts=1, last=ended(
                          "Error", 143, s.ago(days=6), s.ago(days=3, hours=2, seconds=20)))})
    readiness_blip(s, "monitoring", "grafana", "docker.io/grafana/grafana:11.3.0", node_list,
                   port=3000, path="/api/health", minutes_ago=41)


MIGRATION_ERROR = [
    "INFO  [alembic.runtime.migration] Context impl PostgresqlImpl.",
    "INFO  [alembic.runtime.migration] Will assume transactional DDL.",
    "INFO  [alembic.runtime.migration] Running upgrade 7c1e2f9a4b3d -> a41f0c2d9e77, add tax "
    "region to invoices",
    "Traceback (most recent call last):",
    '  File "/usr/local/lib/python3.12/site-packages/sqlalchemy/engine/base.py", line 1967, in '
    "_exec_single_context",
    "    self.dialect.do_execute(",
    "psycopg2.errors.DuplicateColumn: column \"tax_region\" of relation \"invoices\" already "
    "exists",
    "",
    "The above exception was the direct cause of the following exception:",
    "",
    "Traceback (most recent call last):",
    '  File "/usr/local/bin/alembic", line 8, in <module>',
    "    sys.exit(main())",
    "sqlalchemy.exc.ProgrammingError: (psycopg2.errors.DuplicateColumn) column \"tax_region\" of "
    "relation \"invoices\" already exists",
    "[SQL: ALTER TABLE invoices ADD COLUMN tax_region VARCHAR(8)]",
    "(Background on this error at: https://sqlalche.me/e/20/f405)",
]


@story
def invoice_migration_failed() -> Story:
    s = Story("invoice-migration-failed", "invoice-api deploy never finishes",
              datetime(2026, 12, 11, 16, 45, tzinfo=UTC),
              "the 2.9.0 deploy of invoice-api (billing) has been 'progressing' for 25 min, "
              "argo says degraded. new pods never become ready. old version still serving?",
              truth("crash_loop", "Deployment", "billing", "invoice-api",
                    ["Init:CrashLoopBackOff", "DuplicateColumn", "tax_region", "migrate"],
                    "The 2.9.0 migration adds a column that already exists: fix migration "
                    "a41f0c2d9e77 (guard the ALTER TABLE or stamp the revision) and redeploy"),
              hours=2.0, nested_logs=True)
    namespaces(s, "billing", "platform")
    node_list = nodes(s, 4, subnet=50, region="us-east-1", instance="m7i.xlarge")
    kube_system(s, node_list)
    at = s.ago(minutes=27)
    repo = f"{ECR}/billing/invoice-api"

    def app(version: str) -> Ctr:
        return Ctr("invoice-api", f"{repo}:{version}", requests={"cpu": "250m", "memory":
                   "384Mi"}, limits={"memory": "768Mi"},
                   env={"DB_HOST": "billing-pg.billing.svc.cluster.local", "DB_NAME": "billing"},
                   readiness=http_probe("/health/ready"), liveness=http_probe("/health/live",
                                                                              delay=20))

    def migrate(version: str) -> list[Ctr]:
        return [Ctr("migrate", f"{repo}:{version}", port=None, command=["alembic", "upgrade",
                                                                        "head"],
                    requests={"cpu": "100m", "memory": "128Mi"}, limits={"memory": "256Mi"},
                    env={"DB_HOST": "billing-pg.billing.svc.cluster.local"})]

    runs_of: dict[int, list[Run]] = {}

    def init_state(i: int, started: datetime, pod_name: str) -> dict[str, Obj]:
        status, runs = crash_looping(s, pod_name, "billing", "migrate",
                                     started=started, life=3.1)
        runs_of[i] = runs
        return {"migrate": status}

    roll = rollout(s, "billing", "invoice-api", app, old="2.8.3", new="2.9.0", at=at,
                   revision=67, replicas=4, node_list=node_list, complete=False, pods_of_new=2,
                   init=migrate, init_statuses=init_state,
                   statuses=lambda i, t, n: {"invoice-api": waiting("PodInitializing")})
    for i, pod in enumerate(roll.new_pods):
        runs = runs_of[i]
        crash_events(s, pod, "migrate", runs, f"{repo}:2.9.0", init=True)
        container_metrics(s, pod, "migrate", memory=lambda t: 61 * MIB,
                          restarts=[int(d.timestamp()) for d in deaths(runs)])
        died = [r for r in runs if r.end]
        for run, previous in ((died[-1], False), (died[-2], True)):
            s.pod_log(pod, "migrate", [f"{iso(run.start)} {line}" if line.startswith("INFO")
                                       else line for line in MIGRATION_ERROR], previous=previous)
        for run in died[-10:]:
            s.logs.add(run.end or s.now, "error", MIGRATION_ERROR[-3], namespace="billing",
                       pod=pod["metadata"]["name"], container="migrate", service="invoice-api",
                       node=pod["spec"]["nodeName"], error__type="sqlalchemy.exc."
                       "ProgrammingError")
    deployment_metrics(s, roll.work)
    for pod in roll.old_pods:
        container_metrics(s, pod, "invoice-api", memory=lambda t: 402 * MIB, cpu=const(0.12),
                          limit_memory=768 * MIB)
        http_metrics(s, "invoice-api", pod, rps=const(6.0), codes={
            "200": const(0.93), "201": const(0.05), "422": const(0.02)}, median=const(0.07))
        for _ in range(20):
            when = s.ago(minutes=s.rng.uniform(0, 120))
            code = s.rng.choice([200, 200, 201, 422])
            s.logs.add(when, "warn" if code == 422 else "info",
                       "invoice validation failed: vat_id malformed" if code == 422 else
                       "invoice rendered", namespace="billing", pod=pod["metadata"]["name"],
                       container="invoice-api", service="invoice-api",
                       node=pod["spec"]["nodeName"], http__response__status_code=code)
    _billing_neighbours(s, node_list)
    return s


def _billing_neighbours(s: Story, node_list: list[Obj]) -> None:
    """A renderer with an old OOM, font warnings; a blip in the platform namespace."""
    neighbour(s, "billing", "pdf-renderer", f"{ECR}/billing/pdf-renderer:1.4.7", node_list,
              logs=[("warn", "font 'Helvetica Neue' not found, falling back to 'DejaVu Sans'",
                     {}), ("info", "rendered invoice pdf", {}), ("info", "rendered invoice pdf",
                                                                 {})],
              n_logs=30, memory_mib=610, restarts={1: running(s.ago(days=6, hours=1),
                                                              restarts=1, last=ended(
                  "OOMKilled", 137, s.ago(days=6, hours=9), s.ago(days=6, hours=1, seconds=8)))})
    readiness_blip(s, "platform", "kafka-ui", "docker.io/provectuslabs/kafka-ui:v0.7.2",
                   node_list, port=8080, path="/actuator/health", minutes_ago=53)
