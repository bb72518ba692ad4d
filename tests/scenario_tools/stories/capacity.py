"""Limits of capacity: cpu_throttling, autoscaling_limit, quota_exceeded, and the
resource_exhaustion of an inner resource (a connection pool, file descriptors)."""

from __future__ import annotations

from collections.abc import Callable
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
    noise_logs,
    simple_deployment,
    story,
    truth,
)
from tests.scenario_tools.kube import (
    Ctr,
    Obj,
    Template,
    ended,
    http_probe,
    iso,
    running,
    tcp_probe,
)
from tests.scenario_tools.parts import (
    app,
    ghost_pod,
    hpa,
    neighbour,
    readiness_blip,
    rollout,
    scale_out,
)


def ramp(start: datetime, end: datetime, low: float, high: float) -> Callable[[int], float]:
    """A value that climbs linearly from `low` at `start` to `high` at `end`."""
    a, b = start.timestamp(), end.timestamp()
    return lambda t: low + (high - low) * min(1.0, max(0.0, (t - a) / (b - a)))


@story
def pricing_cpu_throttle() -> Story:
    s = Story("pricing-cpu-throttle", "Price lookups slow at peak",
              datetime(2026, 12, 4, 9, 55, tzinfo=UTC),
              "price lookups are slow since the morning ramp-up, price-engine p99 is over a "
              "second and product pages time out sometimes. no deploys today",
              truth("cpu_throttling", "Deployment", "pricing", "price-engine",
                    ["cpu_cfs_throttled", "limit 500m", "throttled"],
                    "price-engine is throttled at its 500m CPU limit during peak: raise or "
                    "remove the CPU limit (its request is 400m) or add replicas"),
              hours=3.0)
    namespaces(s, "pricing", "catalog")
    node_list = nodes(s, 4, subnet=28, region="eu-west-1", instance="c6i.2xlarge", cpu="8",
                      memory="16Gi", allocatable_cpu="7910m")
    kube_system(s, node_list)
    morning = ramp(s.ago(hours=2, minutes=20), s.ago(minutes=30), 0.0, 1.0)
    _, engines = app(s, "pricing", "price-engine", "ghcr.io/acme-shop/price-engine:5.9.1",
                     node_list,
        replicas=3, revision=61, rps=lambda t: 90 + 330 * morning(t),
        codes={"200": const(0.994), "404": const(0.005), "500": const(0.001)},
        median=lambda t: 0.018 + 0.27 * morning(t) ** 2, cpu=lambda t: 0.2 + 0.29 * morning(t),
        throttle=lambda t: 0.02 + 0.66 * morning(t) ** 1.5, memory_mib=410,
        limits={"cpu": "500m", "memory": "768Mi"}, requests={"cpu": "400m", "memory": "512Mi"},
        env={"GOMAXPROCS": "4", "PRICE_CACHE_TTL": "30s"})
    for i in range(30):
        when = s.ago(minutes=s.rng.uniform(0, 180))
        slow = morning(int(when.timestamp()))
        pod = engines[i % len(engines)]
        took = int(40 + 900 * slow * s.rng.uniform(0.6, 1.2))
        s.logs.add(when, "warn" if took > 500 else "info", f"GET /v1/prices 200 took {took}ms",
                   namespace="pricing", pod=pod["metadata"]["name"], container="price-engine",
                   service="price-engine", node=pod["spec"]["nodeName"],
                   event__duration=took * 1_000_000)
    neighbour(s, "pricing", "promo-rules", "ghcr.io/acme-shop/promo-rules:2.2.0", node_list,
              logs=[("warn", "promotion 'BF-2026-EXTRA' expired, skipping", {}),
                    ("info", "rules reloaded (412 active)", {})], n_logs=20, revision=19)
    neighbour(s, "pricing", "currency-cache", "docker.io/library/redis:7.4.1", node_list,
              replicas=1, memory_mib=120, port=6379, logs=[
                  ("warn", "WARNING Memory overcommit must be enabled!", {})], n_logs=3)
    neighbour(s, "catalog", "product-pages", "ghcr.io/acme-shop/product-pages:7.0.3", node_list,
              logs=[("warn", "price service slow (>800ms), rendering without promo badge", {}),
                    ("info", "GET /p/[slug] 200", {}), ("error", "GET /p/[slug] upstream "
                                                     "closed connection", {})],
              n_logs=40, rps=80, codes={"200": 0.99, "404": 0.008, "504": 0.002},
              restarts={0: running(s.ago(days=2, hours=5), restarts=2, last=ended(
                  "Error", 1, s.ago(days=3), s.ago(days=2, hours=5, seconds=4)))})
    return s


@story
def storefront_hpa_max() -> Story:
    s = Story("storefront-hpa-max", "Storefront slow during the campaign",
              datetime(2026, 11, 27, 18, 40, tzinfo=UTC),
              "site is crawling since the black friday newsletter went out at 18:00. "
              "storefront-web p95 is ~3s and we see some 503s",
              truth("autoscaling_limit", "Deployment", "web", "storefront-web",
                    ["ScalingLimited", "TooManyReplicas", "maxReplicas 10"],
                    "The HPA of storefront-web sits at maxReplicas 10 with CPU far above "
                    "target: raise maxReplicas (the cluster has room) and review the target"),
              hours=2.0, interventions=[{"after_step": 2, "text": "marketing confirms the "
                                         "newsletter went to 2.1M people, traffic is real"}])
    namespaces(s, "web", "shop")
    node_list = nodes(s, 6, subnet=12, region="us-east-1", instance="c7i.2xlarge", cpu="8",
                      memory="16Gi", allocatable_cpu="7910m")
    kube_system(s, node_list)
    spike = s.ago(minutes=40)
    load = ramp(spike, spike + timedelta(minutes=12), 0.0, 1.0)
    ctr = Ctr("storefront-web", "ghcr.io/acme-shop/storefront-web:14.2.0", port=3000,
              requests={"cpu": "500m", "memory": "768Mi"}, limits={"memory": "1Gi"},
              readiness=http_probe("/api/ready"), liveness=http_probe("/api/live", delay=20))
    work, pods = simple_deployment(s, "web", "storefront-web", "", replicas=4,
                                   node_list=node_list, revision=233, template=Template(
                                       [ctr], service_account="storefront-web"))
    first = [spike + timedelta(minutes=1, seconds=s.rng.randrange(0, 50)) for _ in range(3)]
    second = [spike + timedelta(minutes=6, seconds=s.rng.randrange(0, 50)) for _ in range(3)]
    pods += scale_out(s, work, node_list[2:], first + second)
    current = {t: 4 if t < spike.timestamp() + 60 else 7 if t < spike.timestamp() + 360
               else 10 for t in s.times}
    for pod in pods:
        container_metrics(s, pod, "storefront-web", memory=lambda t: 640 * MIB,
                          cpu=lambda t: (0.12 + 0.37 * load(t)) * s.rng.uniform(0.95, 1.05),
                          limit_memory=1024 * MIB)
        http_metrics(s, "storefront-web", pod, rps=lambda t: (220 + 1500 * load(t)) /
                     current.get(t, 10), codes={
                         "200": lambda t: 0.985 - 0.05 * load(t), "304": const(0.01),
                         "404": const(0.005), "503": lambda t: 0.05 * load(t)},
                     median=lambda t: 0.11 + 0.9 * load(t), histogram=True)
    obj = hpa(s, work, minimum=4, maximum=10, current=10, desired=10, utilization=97,
              target=65, scaled=spike + timedelta(minutes=6))
    s.cluster.event(obj, "SuccessfulRescale", "New size: 10; reason: cpu resource utilization "
                    "(percentage of request) above target", first=spike + timedelta(minutes=6),
                    component="horizontal-pod-autoscaler")
    s.cluster.event(obj, "SuccessfulRescale", "New size: 7; reason: cpu resource utilization "
                    "(percentage of request) above target", first=spike + timedelta(minutes=1),
                    component="horizontal-pod-autoscaler")
    replicas = sorted(current.items())
    for metric, points in (("kube_horizontalpodautoscaler_status_current_replicas", replicas),
                           ("kube_horizontalpodautoscaler_status_desired_replicas", replicas),
                           ("kube_horizontalpodautoscaler_spec_max_replicas",
                            [(t, 10) for t in s.times])):
        s.metrics.gauge(metric, {"namespace": "web", "horizontalpodautoscaler":
                                 "storefront-web"}, points, f"{metric} of the autoscaler.")
    deployment_metrics(s, work, spec=lambda t: current[t], available=lambda t: current[t])
    for pod in pods:
        noise_logs(s, pod, "storefront-web", "storefront-web", [
            ("info", "GET / 200", {"http.response.status_code": 200}),
            ("warn", "render took longer than 2000ms", {}),
            ("error", "upstream request queue full, returning 503",
             {"http.response.status_code": 503})], 6, start=spike + timedelta(minutes=5))
    neighbour(s, "web", "image-proxy", "docker.io/darthsim/imgproxy:v3.27", node_list,
              memory_mib=300, logs=[("warn", "source image not found: 404", {}),
                                    ("info", "processed image", {})], n_logs=20)
    neighbour(s, "shop", "cart", "ghcr.io/acme-shop/cart:6.1.0", node_list, rps=300,
              codes={"200": 0.996, "409": 0.004}, logs=[
                  ("warn", "cart version conflict, retrying", {}),
                  ("info", "cart updated", {})], n_logs=30, revision=88)
    return s


@story
def reports_quota() -> Story:
    s = Story("reports-quota", "Report jobs not processed",
              datetime(2026, 12, 1, 9, 35, tzinfo=UTC),
              "month-end reports are piling up in the queue since ~09:10, nothing gets "
              "processed. reporting namespace, report-worker",
              truth("quota_exceeded", "Deployment", "reporting", "report-worker",
                    ["FailedCreate", "exceeded quota", "limits.memory"],
                    "report-worker 4.0 asks for 4Gi per pod and the namespace quota "
                    "(limits.memory 24Gi) refuses the pods: raise the quota or lower the limit"),
              hours=2.0)
    namespaces(s, "reporting", "finance")
    node_list = nodes(s, 4, subnet=46, region="eu-central-1", instance="r6i.xlarge",
                      memory="32Gi", allocatable_memory="30310Mi")
    kube_system(s, node_list)
    c = s.cluster
    at = s.ago(minutes=26)

    def ctr(version: str) -> Ctr:
        memory = "4Gi" if version.startswith("4.") else "2Gi"
        return Ctr("report-worker", f"ghcr.io/acme-fin/report-worker:{version}", port=9100,
                   port_name="metrics", requests={"cpu": "500m", "memory": memory},
                   limits={"memory": memory}, env={"QUEUE_URL": "amqp://rabbitmq.reporting:5672"})

    roll = rollout(s, "reporting", "report-worker", ctr, old="3.7.1", new="4.0.0", at=at,
                   revision=41, replicas=6, node_list=node_list, recreate=True, pods_of_new=0,
                   service=False)
    rs = roll.new_rs
    message = (f'Error creating: pods "{rs["metadata"]["name"]}-{{}}" is forbidden: exceeded '
               "quota: compute, requested: limits.memory=4Gi, used: limits.memory=22Gi, "
               "limited: limits.memory=24Gi")
    for k in range(6):
        c.event(rs, "FailedCreate", message.format(c.token(5)), first=at + timedelta(seconds=k),
                last=s.now - timedelta(seconds=s.rng.randrange(30, 300)), count=14 + k,
                type_="Warning", component="replicaset-controller")
    roll.work.progressing = ("ReplicaSetUpdated", f'ReplicaSet "{rs["metadata"]["name"]}" is '
                             "progressing.", at)
    roll.work.availability_changed = at - timedelta(seconds=6)
    roll.work.extra_conditions.append({
        "type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
        "message": message.format(c.token(5)).removeprefix("Error creating: "),
        "lastUpdateTime": iso(at + timedelta(seconds=1)),
        "lastTransitionTime": iso(at + timedelta(seconds=1))})
    c.add({"apiVersion": "v1", "kind": "ResourceQuota",
           "metadata": c.meta("ResourceQuota", "compute", "reporting", s.ago(days=230)),
           "spec": {"hard": {"limits.memory": "24Gi", "requests.cpu": "12", "pods": "30"}},
           "status": {"hard": {"limits.memory": "24Gi", "requests.cpu": "12", "pods": "30"},
                      "used": {"limits.memory": "22Gi", "requests.cpu": "6350m", "pods": "9"}}})
    c.add({"apiVersion": "v1", "kind": "LimitRange",
           "metadata": c.meta("LimitRange", "defaults", "reporting", s.ago(days=230)),
           "spec": {"limits": [{"type": "Container", "default": {"memory": "512Mi"},
                                "defaultRequest": {"cpu": "100m", "memory": "256Mi"}}]}})
    deployment_metrics(s, roll.work, lambda t: 6 if t < at.timestamp() else 0)
    for pod in roll.old_pods:
        container_metrics(s, pod, "report-worker", memory=lambda t: 1510 * MIB, cpu=const(0.41))
    s.metrics.gauge("rabbitmq_queue_messages_ready", {"namespace": "reporting",
                    "queue": "reports.monthly"},
                    [(t, 40 + (0 if t < at.timestamp() else (t - at.timestamp()) * 1.9))
                     for t in s.times], "Messages ready to be delivered to consumers.")
    # what else uses the quota: a rabbitmq broker and an API that are fine
    neighbour(s, "reporting", "report-api", "ghcr.io/acme-fin/report-api:4.0.0", node_list,
              memory_mib=700, logs=[
                  ("info", "report request queued", {}),
                  ("warn", "report 'ledger-eu-2026-11' requested again while queued", {})],
              n_logs=30, rps=4, codes={"202": 0.98, "409": 0.02}, revision=40)
    neighbour(s, "reporting", "rabbitmq", "docker.io/library/rabbitmq:3.13-management",
              node_list, replicas=1, memory_mib=1900, port=5672, logs=[
                  ("warn", "closing AMQP connection <0.11883.0> (10.46.2.15:51244 -> "
                   "10.46.1.88:5672): client unexpectedly closed TCP connection", {})],
              n_logs=10)
    readiness_blip(s, "finance", "metabase", "docker.io/metabase/metabase:v0.51.4", node_list,
                   port=3000, path="/api/health", minutes_ago=47)
    return s


@story
def fulfilment_db_pool() -> Story:
    s = Story("fulfilment-db-pool", "fulfilment-api requests hang",
              datetime(2026, 12, 10, 12, 25, tzinfo=UTC),
              "fulfilment-api requests hang ~30s then fail since the lunch peak. warehouse "
              "tablets show 'could not load pick list'",
              truth("resource_exhaustion", "Deployment", "fulfilment", "fulfilment-api",
                    ["HikariPool-1 - Connection is not available", "request timed out after "
                     "30000ms", "active=10"],
                    "fulfilment-api's Hikari pool (10 connections) is exhausted at peak while "
                    "the database has headroom: raise maximumPoolSize and fix the slow "
                    "pick-list query holding connections"),
              hours=2.0, nested_logs=True)
    namespaces(s, "fulfilment", "databases")
    node_list = nodes(s, 3, subnet=53, region="eu-west-2", instance="m6i.2xlarge", cpu="8",
                      memory="32Gi", allocatable_cpu="7910m", allocatable_memory="30310Mi")
    kube_system(s, node_list)
    peak = s.ago(minutes=48)
    load = ramp(peak - timedelta(minutes=15), peak + timedelta(minutes=5), 0.0, 1.0)
    _, pods = app(s, "fulfilment", "fulfilment-api", "ghcr.io/acme-ops/fulfilment-api:3.3.2",
                  node_list, replicas=3, revision=52, rps=lambda t: 30 + 45 * load(t),
                  codes={"200": lambda t: 0.995 - 0.4 * load(t), "404": const(0.005),
                         "500": lambda t: 0.4 * load(t)},
                  median=lambda t: 0.06 + 11 * load(t), cpu=lambda t: 0.3 - 0.12 * load(t),
                  memory_mib=900, limits={"memory": "1536Mi"},
                  requests={"cpu": "500m", "memory": "1Gi"},
                  env={"SPRING_DATASOURCE_URL": "jdbc:postgresql://fulfilment-pg.databases:5432"
                       "/fulfilment", "SPRING_DATASOURCE_HIKARI_MAXIMUM_POOL_SIZE": "10"})
    for pod in pods:
        labels = {"namespace": "fulfilment", "pod": pod["metadata"]["name"], "pool":
                  "HikariPool-1"}
        s.metrics.gauge("hikaricp_connections_active", labels,
                        [(t, round(2 + 8 * load(t))) for t in s.times], "Active connections")
        s.metrics.gauge("hikaricp_connections_max", labels, [(t, 10) for t in s.times],
                        "Max connections")
        s.metrics.gauge("hikaricp_connections_pending", labels,
                        [(t, round(55 * load(t) * s.rng.uniform(0.8, 1.2))) for t in s.times],
                        "Pending threads")
        name = pod["metadata"]["name"]
        for _ in range(26):
            when = peak + timedelta(seconds=s.rng.uniform(0, (s.now - peak).total_seconds()))
            s.logs.add(when, "error", "HikariPool-1 - Connection is not available, request "
                       "timed out after 30000ms (total=10, active=10, idle=0, waiting=52)",
                       namespace="fulfilment", pod=name, container="fulfilment-api",
                       service="fulfilment-api", node=pod["spec"]["nodeName"],
                       error__type="java.sql.SQLTransientConnectionException",
                       url__path="/v1/picklists", http__response__status_code=500)
        noise_logs(s, pod, "fulfilment-api", "fulfilment-api", [
            ("info", "GET /v1/picklists 200", {}),
            ("warn", "slow query: pick_list_for_wave took 4120ms", {})], 14)
    pg_labels = {"namespace": "databases", "datname": "fulfilment"}
    s.metrics.gauge("pg_stat_activity_count", {**pg_labels, "state": "active"},
                    [(t, 9 + round(22 * load(t))) for t in s.times],
                    "number of connections in this state")
    s.metrics.gauge("pg_settings_max_connections", {"namespace": "databases"},
                    [(t, 400) for t in s.times], "Sets the maximum number of concurrent "
                    "connections.")
    neighbour(s, "fulfilment", "fulfilment-worker", "ghcr.io/acme-ops/fulfilment-worker:3.3.2",
              node_list, memory_mib=640, logs=[
                  ("info", "wave 812 released to floor", {}),
                  ("warn", "carrier label API returned 429, retrying in 2s", {})], n_logs=30)
    neighbour(s, "databases", "pgbouncer-exporter", "quay.io/prometheuscommunity/"
              "postgres-exporter:v0.16.0", node_list, replicas=1, memory_mib=40, port=9187,
              logs=[("warn", "collector stat_statements failed: pg_stat_statements not "
                     "loaded", {})], n_logs=8, restarts={0: running(
                         s.ago(days=5), restarts=1, last=ended("Error", 2, s.ago(days=6),
                                                                s.ago(days=5, seconds=3)))})
    return s


@story
def thumbnailer_fd_leak() -> Story:
    s = Story("thumbnailer-fd-leak", "Thumbnails broken on product pages",
              datetime(2026, 12, 6, 11, 10, tzinfo=UTC),
              "product thumbnails show as grey boxes since this morning, thumbnailer returns "
              "500s. restarting one pod seemed to help for a while",
              truth("resource_exhaustion", "Deployment", "media", "thumbnailer",
                    ["too many open files", "process_open_fds", "1024"],
                    "thumbnailer leaks file descriptors (origin response bodies are never "
                    "closed) and hits its 1024 limit: fix the leak; restart pods meanwhile"),
              hours=3.0)
    namespaces(s, "media", "web")
    node_list = nodes(s, 3, subnet=66, region="us-west-2", instance="m6a.xlarge")
    kube_system(s, node_list)
    restarted = s.ago(minutes=41)  # the engineer deleted one pod: its fds start from zero
    ctr = Ctr("thumbnailer", "ghcr.io/acme-shop/thumbnailer:1.12.0",
              requests={"cpu": "200m", "memory": "192Mi"}, limits={"memory": "384Mi"},
              readiness=tcp_probe("http"), liveness=tcp_probe("http", delay=15))
    work, pods = simple_deployment(s, "media", "thumbnailer", "", replicas=3,
                                   node_list=node_list, revision=27, template=Template(
                                       [ctr], service_account="thumbnailer"),
                                   rollout=s.ago(days=2, hours=9))
    deleted = pods.pop(0)
    work.pods.remove(deleted)
    s.cluster.remove(deleted)
    ghost = ghost_pod(s, work.revisions[-1], node_list[0], s.ago(days=2, hours=9), restarted)
    fresh = s.cluster.pod(work, work.revisions[-1], node=node_list[0], created=restarted,
                          statuses={"thumbnailer": running(restarted + timedelta(seconds=6))})
    born = {id(ghost): s.times[0] - 3600 * 7.5, id(pods[0]): s.times[0] - 3600 * 5.0,
            id(pods[1]): s.times[0] - 3600 * 6.2, id(fresh): restarted.timestamp()}
    for pod in (ghost, *pods, fresh):
        _thumbnailer(s, pod, born[id(pod)])
    deployment_metrics(s, work)
    neighbour(s, "web", "product-pages", "ghcr.io/acme-shop/product-pages:7.0.3", node_list,
              logs=[("warn", "thumbnail request failed with 500, using placeholder", {}),
                    ("info", "GET /p/[slug] 200", {})], n_logs=40, rps=70,
              codes={"200": 0.995, "404": 0.005})
    neighbour(s, "media", "media-origin", "docker.io/library/nginx:1.27.3", node_list,
              replicas=2, memory_mib=30, port=80, logs=[
                  ("warn", "upstream prematurely closed connection while reading response "
                   "header", {}), ("info", "GET /p/88213.jpg 200", {})], n_logs=20)
    return s


def _thumbnailer(s: Story, pod: Obj, start: float) -> None:
    """One pod's descriptors leak from `start` until they hit the limit, then it fails."""
    def fds(t: int) -> float:
        return min(1024.0, 24 + (t - start) * 0.031)

    def failing(t: int) -> float:
        return 0.88 if fds(t) >= 1020 else 0.0

    name = pod["metadata"]["name"]
    labels = {"namespace": "media", "pod": name, "container": "thumbnailer"}
    container_metrics(s, pod, "thumbnailer", memory=lambda t: (120 + fds(t) * 0.05) * MIB,
                      cpu=const(0.06), limit_memory=384 * MIB)
    times = [t for t in s.times if t >= start and t <= pod["metadata"].get("_deleted", t)]
    s.metrics.gauge("process_open_fds", labels, [(t, round(fds(t))) for t in times],
                    "Number of open file descriptors.")
    s.metrics.gauge("process_max_fds", labels, [(t, 1024) for t in times],
                    "Maximum number of open file descriptors.")
    http_metrics(s, "thumbnailer", pod, rps=const(12.0), codes={
        "200": lambda t: 0.98 - failing(t), "404": const(0.02), "500": failing},
        median=const(0.05))
    bad = [t for t in times if failing(t)]
    for _ in range(30 if bad else 0):
        when = min(s.now, datetime.fromtimestamp(s.rng.choice(bad) + s.rng.uniform(0, 59), UTC))
        message = s.rng.choice([
            "http: Accept error: accept tcp [::]:8080: accept4: too many open files; "
            "retrying in 1s",
            "resize failed: open /tmp/thumb-2319811.webp: too many open files",
            "fetch origin https://media-origin.media.svc/p/88213.jpg: dial tcp "
            "10.66.0.12:80: socket: too many open files"])
        s.logs.add(when, "error", message, namespace="media", pod=name,
                   container="thumbnailer", service="thumbnailer",
                   node=pod["spec"]["nodeName"], error__type="syscall.EMFILE")
    noise_logs(s, pod, "thumbnailer", "thumbnailer", [
        ("info", "GET /t/300x300/88213.webp 200", {}),
        ("warn", "origin returned 404 for /p/77120.jpg", {})], 8,
        start=max(s.ago(hours=s.hours), datetime.fromtimestamp(start, UTC)),
        end=min(s.now, datetime.fromtimestamp(pod["metadata"].get("_deleted", 1e10), UTC)))
