"""dependency_failure stories: something outside the cluster fails, the caller is healthy."""

from __future__ import annotations

import json
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
    step,
    story,
    truth,
)
from tests.scenario_tools.kube import Ctr, Obj, Template, ended, http_probe, running

ECR = "208844417712.dkr.ecr.eu-central-1.amazonaws.com"
RDS = "ledger-prod.cluster-c8xq2kzs1abc.eu-central-1.rds.amazonaws.com"


def _py_line(when: datetime, level: str, logger: str, message: str, **extra: object) -> str:
    stamp = when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"
    return json.dumps({"time": stamp, "level": level, "logger": logger, "message": message,
                       **extra}, separators=(",", ":"))


@story
def ledger_db_unreachable() -> Story:
    s = Story("ledger-db-unreachable", "Ledger API answering 503",
              datetime(2026, 12, 7, 2, 40, tzinfo=UTC),
              "ledger-api returns 503 for most calls since ~02:05, the nightly reconciliation "
              "is failing. "
              "pods look fine to me, nothing was deployed tonight",
              truth("dependency_failure", "Deployment", "ledger", "ledger-api",
                    ["OperationalError", "Connection timed out", "5432", RDS],
                    "The managed Postgres (RDS cluster ledger-prod) is unreachable: check its "
                    "status and failover in the AWS console; ledger-api itself needs no change"),
              hours=2.0, nested_logs=True,
              interventions=[{"after_step": 3, "text": "stay out of kube-system, platform is "
                              "patching nodes tonight"}])
    namespaces(s, "ledger", "ingress-nginx", "payments")
    node_list = nodes(s, 3, subnet=61, region="eu-central-1", instance="m6a.xlarge")
    kube_system(s, node_list)
    outage = s.ago(minutes=33, seconds=30)
    ctr = Ctr("ledger-api", f"{ECR}/ledger/ledger-api:7.4.2",
              requests={"cpu": "300m", "memory": "384Mi"}, limits={"memory": "512Mi"},
              env={"DATABASE_HOST": "ledger-db.ledger.svc.cluster.local",
                   "DATABASE_NAME": "ledger", "DB_CONNECT_TIMEOUT": "5",
                   "GUNICORN_CMD_ARGS": "--workers=4 --timeout=30"},
              env_from=[{"secretRef": {"name": "ledger-db-credentials"}}],
              readiness=http_probe("/readyz", delay=5), liveness=http_probe("/livez", delay=15))
    work, pods = simple_deployment(s, "ledger", "ledger-api", "", replicas=3,
                                   node_list=node_list, revision=58, template=Template(
                                       [ctr], service_account="ledger-api"),
                                   rollout=s.ago(days=4, hours=6))
    s.cluster.service("ledger", "ledger-db", {}, kind="ExternalName", external_name=RDS,
                      created=s.ago(days=400))
    deployment_metrics(s, work)
    for pod in pods:
        container_metrics(s, pod, "ledger-api", memory=lambda t: 231 * MIB,
                          cpu=step(0.21, 0.07, outage), limit_memory=512 * MIB)
        http_metrics(s, "ledger-api", pod, rps=const(9.0), codes={
            "200": step(0.985, 0.23, outage), "401": const(0.012),
            "503": step(0.003, 0.76, outage)}, median=step(0.035, 5.1, outage), histogram=True)
    s.metrics.gauge("probe_success", {"job": "blackbox-tcp", "instance": f"{RDS}:5432"},
                    [(t, 0.0 if t >= outage.timestamp() + 40 else 1.0) for t in s.times],
                    "Displays whether or not the probe was a success")
    _ledger_logs(s, pods, outage)
    _ledger_neighbours(s, node_list)
    return s


def _ledger_logs(s: Story, pods: list[Obj], outage: datetime) -> None:
    err = ('connection failed: connection to server at "10.61.12.40", port 5432 failed: '
           "Connection timed out\n\tIs the server running on that host and accepting TCP/IP "
           "connections?")
    for pod in pods:
        name, node = pod["metadata"]["name"], pod["spec"]["nodeName"]
        for _ in range(14):
            when = s.ago(hours=2) + timedelta(seconds=s.rng.uniform(0, (outage - s.ago(
                hours=2)).total_seconds()))
            s.logs.add(when, "info", "POST /v1/entries 200", namespace="ledger", pod=name,
                       container="ledger-api", service="ledger-api", node=node,
                       http__response__status_code=200, url__path="/v1/entries")
        for _ in range(36):
            when = outage + timedelta(seconds=s.rng.uniform(5, (s.now - outage).total_seconds()))
            s.logs.add(when, "error", f"database unavailable: psycopg.OperationalError: {err}",
                       namespace="ledger", pod=name, container="ledger-api",
                       service="ledger-api", node=node, error__type="psycopg.OperationalError",
                       http__response__status_code=503, url__path="/v1/entries")
        noise_logs(s, pod, "ledger-api", "ledger-api", [
            ("warn", "authentication failed: token expired", {"http.response.status_code": 401}),
        ], 6)
        lines = [_py_line(s.ago(days=4, hours=6) + timedelta(seconds=s.rng.uniform(20, 90)),
                          "INFO", "gunicorn.error", "Booting worker with pid: 12")]
        for k in range(8):
            when = outage - timedelta(minutes=40 - 4 * k, seconds=s.rng.uniform(0, 50))
            lines.append(_py_line(when, "INFO", "ledger.api", "POST /v1/entries 200",
                                  duration_ms=round(s.rng.uniform(20, 60), 1)))
        for k in range(16):
            when = outage + timedelta(minutes=2 * k, seconds=s.rng.uniform(0, 50))
            lines.append(_py_line(when, "ERROR", "ledger.db", f"psycopg.OperationalError: {err}",
                                  duration_ms=5003.2 + s.rng.uniform(0, 3)))
            lines.append(_py_line(when + timedelta(milliseconds=4), "INFO", "ledger.api",
                                  "POST /v1/entries 503", duration_ms=5009.8))
        s.pod_log(pod, "ledger-api", lines)


def _ledger_neighbours(s: Story, node_list: list[Obj]) -> None:
    """An exporter that retries S3 uploads, an old restart, an ingress warning elsewhere."""
    _, epods = simple_deployment(s, "ledger", "ledger-exporter", f"{ECR}/ledger/exporter:1.6.0",
                                 replicas=1, node_list=node_list, revision=11, service=False)
    noise_logs(s, epods[0], "ledger-exporter", "ledger-exporter", [
        ("warn", "S3 PutObject throttled (SlowDown), retrying in 400ms", {}),
        ("info", "exported batch to s3://acme-ledger-exports/daily/", {}),
    ], 20)
    back = s.ago(days=5, hours=2, minutes=3)
    _, fpods = simple_deployment(
        s, "ledger", "fx-rates", f"{ECR}/ledger/fx-rates:2.1.9", replicas=2,
        node_list=node_list[1:], revision=6,
        restarts={0: running(back, restarts=2, last=ended("Error", 1, s.ago(days=5, hours=4),
                                                          back))})
    for pod in fpods:
        container_metrics(s, pod, "fx-rates", memory=lambda t: 96 * MIB,
                          restart_base=pod["status"]["containerStatuses"][0]["restartCount"])
        noise_logs(s, pod, "fx-rates", "fx-rates", [
            ("info", "refreshed 168 currency pairs", {}),
            ("warn", "provider returned stale rate for ARS/USD, keeping previous", {}),
        ], 10)
    nginx = Template([Ctr("controller", "registry.k8s.io/ingress-nginx/controller:v1.12.1",
                          port=80, requests={"cpu": "100m", "memory": "90Mi"}, limits={},
                          readiness=http_probe("/healthz", 10254))],
                     service_account="ingress-nginx")
    _, ipods = simple_deployment(s, "ingress-nginx", "ingress-nginx-controller", "", replicas=1,
                                 node_list=node_list, revision=4, template=nginx, service=False)
    noise_logs(s, ipods[0], "controller", "ingress-nginx", [
        ("warn", 'Service "payments/payouts-legacy" does not have any active Endpoint', {}),
    ], 12)
    s.cluster.service("payments", "payouts-legacy", {"app.kubernetes.io/name": "payouts-legacy"},
                      created=s.ago(days=700))


CARRIER = "rates.swiftparcel.example.com"


@story
def shipping_carrier_timeout() -> Story:
    s = Story("shipping-carrier-timeout", "Shipping options unavailable at checkout",
              datetime(2026, 12, 20, 10, 50, tzinfo=UTC),
              "checkout shows 'shipping options unavailable' for a lot of users since ~10:20. "
              "rates-api (shipping namespace) pods are all running, no restarts",
              truth("dependency_failure", "Deployment", "shipping", "rates-api",
                    ["context deadline exceeded", CARRIER, "circuit breaker"],
                    "The SwiftParcel rates API times out (outside the cluster): contact the "
                    "carrier, and meanwhile serve cached or flat-rate quotes for it"),
              hours=2.0)
    namespaces(s, "shipping", "shop")
    node_list = nodes(s, 3, subnet=77, region="eu-west-1", instance="m6i.large", cpu="2",
                      memory="8Gi", allocatable_cpu="1930m", allocatable_memory="7031Mi")
    kube_system(s, node_list)
    down = s.ago(minutes=31)
    ctr = Ctr("rates-api", f"{ECR}/shipping/rates-api:4.4.0", requests={"cpu": "200m",
              "memory": "256Mi"}, limits={"memory": "512Mi"},
              env={"CARRIERS": "swiftparcel,dhl-express,postnl",
                   "SWIFTPARCEL_URL": f"https://{CARRIER}/v3", "CARRIER_TIMEOUT": "3s"},
              readiness=http_probe("/ready"), liveness=http_probe("/healthz", delay=10))
    work, pods = simple_deployment(s, "shipping", "rates-api", "", replicas=3,
                                   node_list=node_list, revision=36, template=Template(
                                       [ctr], service_account="rates-api"),
                                   rollout=s.ago(days=3, hours=5))
    deployment_metrics(s, work)
    for pod in pods:
        container_metrics(s, pod, "rates-api", memory=lambda t: 180 * MIB, cpu=const(0.08),
                          limit_memory=512 * MIB)
        http_metrics(s, "rates-api", pod, rps=const(8.0), codes={
            "200": step(0.995, 0.42, down), "400": const(0.005), "504": step(0.0, 0.575, down)},
            median=step(0.21, 3.05, down), histogram=True)
    target = {"job": "blackbox-https", "instance": f"https://{CARRIER}/v3/health"}
    s.metrics.gauge("probe_success", target, [(t, 0 if t >= down.timestamp() + 30 else 1)
                                              for t in s.times],
                    "Displays whether or not the probe was a success")
    s.metrics.gauge("probe_duration_seconds", target, [
        (t, 5.0 if t >= down.timestamp() + 30 else round(s.rng.uniform(0.12, 0.3), 3))
        for t in s.times], "Returns how long the probe took to complete in seconds")
    for i in range(60):
        pod = pods[i % 3]
        when = down + timedelta(seconds=s.rng.uniform(5, (s.now - down).total_seconds()))
        message = s.rng.choice([
            f'swiftparcel quote failed: Post "https://{CARRIER}/v3/quotes": context deadline '
            "exceeded (Client.Timeout exceeded while awaiting headers)",
            "circuit breaker 'swiftparcel' is OPEN, failing fast"])
        s.logs.add(when, "error", message, namespace="shipping", pod=pod["metadata"]["name"],
                   container="rates-api", service="rates-api", node=pod["spec"]["nodeName"],
                   error__type="TimeoutError", url__domain=CARRIER)
    noise_logs(s, pods[0], "rates-api", "rates-api", [
        ("warn", "postnl returned 422 for postcode 1011 AB: unsupported service level", {}),
        ("info", "quotes returned carriers=3", {})], 25)
    _, shop = simple_deployment(s, "shop", "checkout", f"{ECR}/shop/checkout:2.11.0",
                                replicas=2, node_list=node_list, revision=131)
    for pod in shop:
        container_metrics(s, pod, "checkout", memory=lambda t: 240 * MIB)
        noise_logs(s, pod, "checkout", "checkout", [
            ("warn", "shipping quotes unavailable, showing 'options unavailable'", {})], 15,
            start=down + timedelta(seconds=40))
        noise_logs(s, pod, "checkout", "checkout", [
            ("info", "checkout step shipping rendered", {}),
            ("warn", "address validation: ambiguous street name", {})], 12)
    _, labels = simple_deployment(
        s, "shipping", "label-service", f"{ECR}/shipping/label-service:2.0.3", replicas=1,
        node_list=node_list, revision=14,
        restarts={0: running(s.ago(days=1, hours=4), restarts=2, last=ended(
            "Error", 1, s.ago(days=2), s.ago(days=1, hours=4, seconds=12)))})
    container_metrics(s, labels[0], "label-service", memory=lambda t: 130 * MIB,
                      restart_base=2)
    noise_logs(s, labels[0], "label-service", "label-service", [
        ("error", "PDF font cache miss, regenerating", {}), ("info", "label printed", {})], 10)
    return s
