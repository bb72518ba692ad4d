"""Rewards: points balance and redemptions fail. The managed Redis (ElastiCache) behind the
loyalty-cache ExternalName Service went away: connections are refused, then time out. The
loyalty-api pods themselves are healthy; offer-engine only sees loyalty-api's 503s."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from tests.scenario_tools.common import Story, truth
from tests.scenario_tools.kube import Ctr, ended, http_probe, running
from tests.scenario_tools.telemetry import integrate

from .base import (
    alive,
    deployment,
    eks_nodes,
    gauge,
    http_series,
    logs_for,
    quiet_container,
    set_times,
)

ID = "loyalty-balance-errors"
NOW = datetime.fromisoformat("2027-01-20T03:26:00+00:00")
REGION = "ap-southeast-2"
ECR = f"240591377612.dkr.ecr.{REGION}.amazonaws.com"
CACHE = "loyalty-cache.q3zt9n.ng.0001.apse2.cache.amazonaws.com"
CACHE_IP = "10.61.24.139"
BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


def build() -> Story:
    s = Story(
        id=ID,
        title="Loyalty points balance and redemptions failing",
        now=NOW,
        report="""\
Members can't see their points balance or redeem rewards, the app shows "try again later".
Started around 03:00 UTC. loyalty-api pods look fine in kubectl (all running, no restarts),
offers page is also flaky. What's broken?
""",
        truth=truth(
            "dependency_failure", "Deployment", "rewards", "loyalty-api",
            ["ECONNREFUSED", "ETIMEDOUT", "loyalty-cache", f"{CACHE_IP}:6379",
             "MaxRetriesPerRequestError"],
            "The ElastiCache Redis behind loyalty-cache stopped accepting connections (refused, "
            "then timeouts): restore or fail over the cache node in AWS; loyalty-api recovers "
            "by itself once the cache answers. Consider a read fallback for the balance "
            "endpoint when the cache is down."))
    set_times(s, 2.5, 30)
    c = s.cluster
    t0 = NOW - timedelta(minutes=26, seconds=41)
    t_timeout = t0 + timedelta(minutes=3, seconds=10)
    for ns, days in (("default", 700), ("kube-system", 700), ("rewards", 433),
                     ("partners", 260), ("monitoring", 690)):
        c.namespace(ns, s.ago(days=days))
    nodes = eks_nodes(s, 3, region=REGION, subnet=61, pool="arm-general", instance="m6g.xlarge",
                      kubelet="v1.33.5-eks-113cf36", kernel="6.12.46-66.121.amzn2023.aarch64",
                      os_image="Amazon Linux 2023.9.20251208", cpu="4", memory="15902720Ki",
                      alloc_cpu="3920m", alloc_memory="14885888Ki", pods="58", days=6.4)
    for node in nodes:
        node["metadata"]["labels"]["kubernetes.io/arch"] = "arm64"
        node["status"]["nodeInfo"]["architecture"] = "arm64"

    # ---- the cache outside the cluster, reached through an ExternalName Service
    c.add({"apiVersion": "v1", "kind": "Service",
           "metadata": c.meta("Service", "loyalty-cache", "rewards", s.ago(days=433),
                              {"app.kubernetes.io/name": "loyalty-cache",
                               "app.kubernetes.io/managed-by": "terraform"}),
           "spec": {"type": "ExternalName", "externalName": CACHE, "sessionAffinity": "None"},
           "status": {"loadBalancer": {}}})
    c.add({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": c.meta("ConfigMap", "loyalty-api", "rewards", s.ago(days=433),
                              {"app.kubernetes.io/name": "loyalty-api"}),
           "data": {"REDIS_URL": "redis://loyalty-cache.rewards.svc.cluster.local:6379/0",
                    "REDIS_CONNECT_TIMEOUT_MS": "2000", "REDIS_MAX_RETRIES_PER_REQUEST": "1",
                    "PG_HOST":
                    "loyalty-pg.cluster-ro-c1x8q0zt3fk2.ap-southeast-2.rds.amazonaws.com",
                    "BALANCE_CACHE_TTL_S": "300"}})

    # ---- loyalty-api: healthy pods whose requests fail on the cache
    api = Ctr("loyalty-api", f"{ECR}/rewards/loyalty-api:3.18.4", port=8080,
              requests={"cpu": "300m", "memory": "384Mi"}, limits={"memory": "768Mi"},
              env={"NODE_ENV": "production", "UV_THREADPOOL_SIZE": "8"},
              env_from=[{"configMapRef": {"name": "loyalty-api"}}],
              readiness=http_probe("/healthz/ready", delay=5, period=10),
              liveness=http_probe("/healthz/live", delay=20, period=20))
    old_restart = s.ago(days=4, hours=9, minutes=18)

    def api_states(i: int, started: datetime) -> dict:
        if i != 3:
            return {}
        return {"loyalty-api": running(old_restart, restarts=1, last=ended(
            "Error", 1, started, old_restart - timedelta(seconds=14)))}
    _, apis = deployment(s, "rewards", "loyalty-api", [api], replicas=4, node_list=nodes,
                         revision=64, rollout=s.ago(days=5, hours=3), statuses=api_states,
                         labels={"app.kubernetes.io/name": "loyalty-api",
                                 "app.kubernetes.io/part-of": "rewards"})
    edge, edge2 = t0.timestamp(), t_timeout.timestamp()

    def bad(t: int) -> float:
        return 0.0 if t < edge else 0.47

    for pod in apis:
        quiet_container(s, pod, "loyalty-api", 244, cpu=0.11, limit_mib=768)
        http_series(s, pod, "loyalty-api", rps=lambda t: 17 * _day(t),
                    codes={"200": lambda t: 0.93 - bad(t), "201": lambda t: 0.045,
                           "401": lambda t: 0.021, "404": lambda t: 0.004,
                           "503": lambda t: 0.0003 + bad(t)},
                    median=lambda t: 0.019 if t < edge else (0.06 if t < edge2 else 1.2),
                    buckets=BUCKETS)
        name = pod["metadata"]["name"]
        for result, share in (("hit", lambda t: 0.0 if t >= edge else 0.88),
                              ("miss", lambda t: 0.0 if t >= edge else 0.12),
                              ("error", lambda t: 1.0 if t >= edge else 0.0)):
            s.metrics.counter("cache_requests_total",
                              {"namespace": "rewards", "service": "loyalty-api", "pod": name,
                               "cache": "redis", "result": result},
                              integrate(alive(s, pod), lambda t, f=share: 26 * _day(t) * f(t),
                                        start=s.rng.randrange(10**5, 10**7), rng=s.rng),
                              "Cache lookups by result.")
    start = NOW - timedelta(hours=2.5)
    logs_for(s, apis, "loyalty-api", "loyalty-api", [
        ("info", "GET /v1/members/:id/balance 200 14ms", {"http.response.status_code": 200,
                                                         "url.path": "/v1/members/:id/balance"}),
        ("info", "POST /v1/redemptions 201 88ms", {"http.response.status_code": 201,
                                                   "url.path": "/v1/redemptions"}),
        ("warn", "JWT expired for member session, returning 401", {"http.response.status_code":
                                                                   401}),
        ("info", "GET /v1/members/:id/tier 200 9ms", {"http.response.status_code": 200}),
    ], 260, start=start, end=NOW)
    logs_for(s, apis, "loyalty-api", "loyalty-api", [
        ("error", f"[ioredis] Unhandled error event: Error: connect ECONNREFUSED {CACHE_IP}:6379",
         {"error.type": "Error", "error.code": "ECONNREFUSED", "error.stack_trace":
          "Error: connect ECONNREFUSED 10.61.24.139:6379\n    at TCPConnectWrap.afterConnect "
          "[as oncomplete] (node:net:1615:16)"}),
        ("error", "GET /v1/members/:id/balance 503 4ms - cache unavailable: Error: connect "
         f"ECONNREFUSED {CACHE_IP}:6379", {"http.response.status_code": 503}),
    ], 90, start=t0 + timedelta(seconds=2), end=t_timeout)
    logs_for(s, apis, "loyalty-api", "loyalty-api", [
        ("error", "[ioredis] Unhandled error event: Error: connect ETIMEDOUT",
         {"error.type": "Error", "error.code": "ETIMEDOUT"}),
        ("error", "GET /v1/members/:id/balance 503 2011ms - cache unavailable: "
         "MaxRetriesPerRequestError: Reached the max retries per request limit (which is 1). "
         'Refer to "maxRetriesPerRequest" option for details.',
         {"http.response.status_code": 503, "error.type": "MaxRetriesPerRequestError"}),
        ("error", "POST /v1/redemptions 503 2006ms - idempotency lock failed: "
         "MaxRetriesPerRequestError: Reached the max retries per request limit (which is 1). "
         'Refer to "maxRetriesPerRequest" option for details.',
         {"http.response.status_code": 503, "error.type": "MaxRetriesPerRequestError"}),
        ("warn", "redis reconnecting in 2000ms (attempt 214)", {}),
    ], 260, start=t_timeout, end=NOW)

    # ---- offer-engine: calls loyalty-api, sees its 503s
    oe = Ctr("offer-engine", f"{ECR}/rewards/offer-engine:1.41.0", port=8000,
             requests={"cpu": "250m", "memory": "512Mi"}, limits={"memory": "1Gi"},
             env={"LOYALTY_API": "http://loyalty-api.rewards.svc.cluster.local",
                  "GUNICORN_WORKERS": "3"},
             readiness=http_probe("/ping", delay=5))
    _, oes = deployment(s, "rewards", "offer-engine", [oe], replicas=2, node_list=nodes,
                        revision=29, rollout=s.ago(days=1, hours=20), node_offset=1)
    for pod in oes:
        quiet_container(s, pod, "offer-engine", 402, cpu=0.08, limit_mib=1024)
        http_series(s, pod, "offer-engine", rps=lambda t: 6 * _day(t),
                    codes={"200": lambda t: 0.99 if t < edge else 0.83,
                           "502": lambda t: 0.0 if t < edge else 0.16,
                           "404": lambda t: 0.01},
                    median=lambda t: 0.045 if t < edge2 else 1.4, buckets=BUCKETS,
                    histogram=False)
    logs_for(s, oes, "offer-engine", "offer-engine", [
        ("info", "GET /v1/offers?member=... 200", {"http.response.status_code": 200}),
        ("info", "ranked 42 offers for tier=gold", {}),
    ], 90, start=start, end=NOW)
    logs_for(s, oes, "offer-engine", "offer-engine", [
        ("error", "loyalty-api returned 503 for /v1/members/{id}/tier, serving generic offers",
         {"http.response.status_code": 502, "error.type": "httpx.HTTPStatusError"}),
        ("warn", "circuit 'loyalty-api' half-open, 5 failures in the last 10s", {}),
    ], 70, start=t0 + timedelta(seconds=30), end=NOW)

    # ---- CloudWatch exporter: the cache node stops reporting
    cwe = Ctr("cloudwatch-exporter", "prom/cloudwatch-exporter:v0.16.0", port=9106,
              requests={"cpu": "50m", "memory": "256Mi"}, limits={"memory": "512Mi"})
    _, cwes = deployment(s, "monitoring", "cloudwatch-exporter", [cwe], replicas=1,
                         node_list=nodes, revision=4, rollout=s.ago(days=3, hours=1),
                         service=9106, node_offset=2)
    quiet_container(s, cwes[0], "cloudwatch-exporter", 214)
    cw_times = [t for t in s.times if t % 60 == 0]
    gauge(s, "aws_elasticache_curr_connections_average",
          {"job": "cloudwatch", "cache_cluster_id": "loyalty-cache-001", "cache_node_id": "0001"},
          lambda t: None if t >= edge - 60 else 212 + 18 * math.sin(t / 1100),
          "CloudWatch metric AWS/ElastiCache CurrConnections Dimensions: "
          "[CacheClusterId, CacheNodeId] Statistic: Average Unit: Count", times=cw_times)
    gauge(s, "aws_elasticache_engine_cpuutilization_average",
          {"job": "cloudwatch", "cache_cluster_id": "loyalty-cache-001", "cache_node_id": "0001"},
          lambda t: None if t >= edge - 60 else 7.5 + 1.5 * math.sin(t / 700),
          "CloudWatch metric AWS/ElastiCache EngineCPUUtilization Dimensions: "
          "[CacheClusterId, CacheNodeId] Statistic: Average Unit: Percent", times=cw_times)
    gauge(s, "aws_elasticache_engine_cpuutilization_average",
          {"job": "cloudwatch", "cache_cluster_id": "partners-cache-001", "cache_node_id": "0001"},
          lambda t: 3.1 + 0.7 * math.sin(t / 500),
          "CloudWatch metric AWS/ElastiCache EngineCPUUtilization Dimensions: "
          "[CacheClusterId, CacheNodeId] Statistic: Average Unit: Percent", times=cw_times)

    # ---- red herrings
    sync = Ctr("airline-sync", f"{ECR}/partners/airline-sync:0.22.3", port=8080,
               requests={"cpu": "100m", "memory": "256Mi"}, limits={"memory": "512Mi"},
               readiness=http_probe("/ready", delay=10, timeout=2))
    _, syncs = deployment(s, "partners", "airline-sync", [sync], replicas=1, node_list=nodes,
                          revision=11, rollout=s.ago(days=2, hours=13), node_offset=1)
    quiet_container(s, syncs[0], "airline-sync", 180)
    ip = syncs[0]["status"]["podIP"]
    blip = NOW - timedelta(minutes=47, seconds=5)
    c.event(syncs[0], "Unhealthy", f'Readiness probe failed: Get "http://{ip}:8080/ready": '
            "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
            first=blip, last=blip + timedelta(seconds=20), count=3, type_="Warning",
            field_path="spec.containers{airline-sync}")
    logs_for(s, syncs, "airline-sync", "airline-sync", [
        ("info", "pulled 1,204 accrual records from partner QF", {}),
        ("warn", "SFTP connection reset by sftp.partner-va.example.net, retrying in 30s", {}),
        ("error", "accrual file VA_20270120_0200.csv rejected: 3 rows with unknown member id",
         {"error.type": "ValidationError"}),
    ], 40, start=start, end=NOW)
    lbc = Ctr("aws-load-balancer-controller", "public.ecr.aws/eks/aws-load-balancer-controller:"
              "v2.11.0", port=9443, port_name="webhook-server",
              requests={"cpu": "100m", "memory": "128Mi"}, limits={"memory": "256Mi"},
              args=["--cluster-name=rewards-prod-apse2", "--ingress-class=alb"])
    _, lbcs = deployment(s, "kube-system", "aws-load-balancer-controller", [lbc], replicas=2,
                         node_list=nodes, revision=6, rollout=s.ago(days=6, hours=1),
                         service=443, target="webhook-server",
                         labels={"app.kubernetes.io/name": "aws-load-balancer-controller"})
    for pod in lbcs:
        quiet_container(s, pod, "aws-load-balancer-controller", 61)
    logs_for(s, lbcs, "aws-load-balancer-controller", "aws-load-balancer-controller", [
        ("info", '{"msg":"successfully deployed model","ingressGroup":"rewards/public"}', {}),
        ("error", '{"msg":"Reconciler error","controller":"targetGroupBinding","error":'
         '"ThrottlingException: Rate exceeded\\n\\tstatus code: 400"}', {}),
    ], 30, start=start, end=NOW)
    return s


def _day(t: int) -> float:
    hour = (t % 86400) / 3600  # Sydney evening is early morning UTC
    return 1 + 0.35 * math.cos((hour - 9) / 24 * 2 * math.pi)
