"""Car wash club: members cannot redeem their wash codes at the bays. At 08:09 the platform
team's GitOps sync applied a new namespace-wide egress NetworkPolicy `egress-baseline` to
washclub: it allows DNS, traffic inside the namespace and HTTPS to addresses outside the
cluster, nothing else. wash-redeem keeps its redemption codes in codes-redis, which lives in
the `data` namespace on port 6379: every new connection now times out, the pool drains and
redemptions fail with 503. Redis itself is healthy (its connected clients drop to the few
from other namespaces), wash-redeem runs, is Ready and never restarts. Culprit: the
NetworkPolicy. Red herrings: member-portal 7.4.0 rolled out 36 min before the onset in
the same namespace, codes-redis's overcommit warning, a bay bridge that logs MQTT keepalive
warnings, a redis slow-query warning in wash-redeem before the onset, and an ingress policy
in `data` that does allow washclub (suggesting that the traffic is allowed)."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import aks_nodes, set_times
from tests.data.holdout2._generator.kit import app_counter, cpu_seconds, requests
from tests.data.holdout3._generator.kit3 import ksm_deployment, uuid_of
from tests.data.holdout4._generator.kit4 import ramp
from tests.scenario_tools.common import node_conditions, truth
from tests.scenario_tools.kube import Ctr, http_probe, tcp_probe

from .kit15 import (
    Incident,
    chatter,
    coredns,
    namespaces,
    neighbour,
    network_policy,
    quiet,
    rolled,
    steady,
)

ID = "wash-codes-not-redeeming"
NOW = datetime.fromisoformat("2028-07-08T08:47:00+00:00")
NS = "washclub"
ACR = "sudsclubprod.azurecr.io"
CUT = NOW - timedelta(minutes=38, seconds=17)  # 08:08:43


def build() -> Incident:
    s = Incident(
        id=ID, title="Wash codes not redeeming at the bays", now=NOW,
        report="""\
Members can't use their wash codes at the bays since about 8 this morning, bay screen just
says "try again later" after a few seconds. Happening at every site. Saturday = busiest
day, need this fixed asap
""",
        truth=truth(
            "network", "NetworkPolicy", NS, "egress-baseline",
            ["egress-baseline", "i/o timeout", "6379", "policyTypes"],
            "The egress-baseline NetworkPolicy applied to washclub at 08:08 allows only DNS, "
            "in-namespace traffic and HTTPS leaving the cluster, so wash-redeem can no longer "
            "reach codes-redis in the data namespace on 6379. Add an egress rule to the data "
            "namespace (app.kubernetes.io/name=codes-redis, TCP 6379) or revert the policy."))
    set_times(s, 2.5, 60)
    namespaces(s, {"default": 520, "kube-system": 520, NS: 480, "data": 480,
                   "bays": 300})
    nodes = aks_nodes(s, 4, pool="apps", region="westeurope", instance="Standard_D4s_v5",
                      kubelet="v1.31.5", cpu="4", memory="16375324Ki", alloc_cpu="3860m",
                      alloc_memory="12880412Ki", subscription=uuid_of(s, "subscription"),
                      group="rg-sudsclub-prod_aks-sudsclub-prod_westeurope", days=6.1)
    node_conditions(s, nodes)
    coredns(s, nodes[:2], "mcr.microsoft.com/oss/kubernetes/coredns:v1.11.3-8")

    # ---- codes-redis in data
    redis = Ctr("redis", "docker.io/library/redis:7.2.5", port=6379, port_name="redis",
                requests={"cpu": "200m", "memory": "1Gi"}, limits={"memory": "1536Mi"},
                args=["--maxmemory", "1gb", "--maxmemory-policy", "allkeys-lru",
                      "--save", "300", "100"],
                readiness=tcp_probe("redis"), liveness=tcp_probe("redis", delay=15))
    _, rpods = steady(s, "data", "codes-redis", [redis], nodes=nodes, replicas=1, revision=6,
                      rollout=s.ago(days=5, hours=11), service=6379, target="redis", offset=2)
    svc = next(x for x in s.cluster.services if x["metadata"]["name"] == "codes-redis")
    redis_ip = svc["spec"]["clusterIP"]
    quiet(s, rpods, "redis", 640)
    cpu_seconds(s, rpods[0], "redis", lambda t: 0.06 if t < CUT.timestamp() else 0.015)
    labels = {"namespace": "data", "pod": rpods[0]["metadata"]["name"],
              "service": "codes-redis"}
    s.metrics.gauge("redis_up", labels, [(t, 1.0) for t in s.times],
                    "Information about the Redis instance")
    s.metrics.gauge("redis_connected_clients", labels,
                    [(t, float(96 + 4 - round(92 * ramp(t, CUT, 3)) + s.rng.randrange(-2, 3)))
                     for t in s.times], "connected_clients metric")
    app_counter(s, "redis_commands_processed", labels, s.times,
                lambda t: 410.0 - 395.0 * ramp(t, CUT, 3), "commands_processed metric")
    network_policy(s, "data", "allow-from-washclub", {
        "podSelector": {"matchLabels": {"app.kubernetes.io/name": "codes-redis"}},
        "policyTypes": ["Ingress"],
        "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {
            "kubernetes.io/metadata.name": NS}}}],
            "ports": [{"protocol": "TCP", "port": 6379}]}]},
        created=s.ago(days=131), labels={"app.kubernetes.io/managed-by": "argocd"})
    chatter(s, rpods, "redis", "codes-redis", [
        ("info", "100 changes in 300 seconds. Saving...", {}),
        ("info", "Background saving started by pid 4127", {}),
        ("info", "DB saved on disk", {}),
        ("warn", "WARNING Memory overcommit must be enabled! Without it, a background save "
                 "or replication may fail under low memory condition.", {}),
    ], 40, start=s.ago(hours=2.5))

    # ---- the new policy
    network_policy(s, NS, "egress-baseline", {
        "podSelector": {},
        "policyTypes": ["Egress"],
        "egress": [
            {"to": [{"namespaceSelector": {"matchLabels": {
                "kubernetes.io/metadata.name": "kube-system"}},
                "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}],
             "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]},
            {"to": [{"podSelector": {}}]},
            {"to": [{"ipBlock": {"cidr": "0.0.0.0/0", "except": [
                "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"]}}],
             "ports": [{"protocol": "TCP", "port": 443}]}]},
        created=CUT, labels={"app.kubernetes.io/managed-by": "argocd",
                             "policy.sudsclub.io/tier": "baseline"},
        annotations={"argocd.argoproj.io/tracking-id":
                     "platform-policies:networking.k8s.io/NetworkPolicy:washclub/"
                     "egress-baseline"})

    # ---- wash-redeem
    image = f"{ACR}/washclub/wash-redeem:3.8.2"
    ctr = Ctr("wash-redeem", image, port=8080,
              requests={"cpu": "250m", "memory": "256Mi"}, limits={"memory": "512Mi"},
              env={"REDIS_ADDR": "codes-redis.data.svc.cluster.local:6379",
                   "REDIS_POOL_SIZE": "32", "REDIS_DIAL_TIMEOUT": "2s",
                   "PAYMENTS_URL": "https://api.adyen.com"},
              readiness=http_probe("/healthz", delay=5),
              liveness=http_probe("/healthz", delay=15, period=20))
    _, pods = steady(s, NS, "wash-redeem", [ctr], nodes=nodes, replicas=3, revision=27,
                     rollout=s.ago(days=3, hours=19, minutes=4), offset=1)
    quiet(s, pods, "wash-redeem", 142)
    for pod in pods:
        cpu_seconds(s, pod, "wash-redeem", lambda t: 0.09 * s.rng.uniform(0.85, 1.15))
        requests(s, pod, "wash-redeem", rps=lambda t: 1.9 + 0.6 * ramp(t, CUT, 40),
                 codes={"200": lambda t: 0.994 - 0.93 * ramp(t, CUT, 2),
                        "409": lambda t: 0.006,
                        "503": lambda t: 0.93 * ramp(t, CUT, 2)},
                 median=lambda t: 0.018 + 2.0 * ramp(t, CUT, 2),
                 buckets=(0.025, 0.1, 0.5, 1.0, 2.5, 5.0))
        s.metrics.gauge("redis_pool_idle_connections",
                        {"namespace": NS, "pod": pod["metadata"]["name"],
                         "service": "wash-redeem"},
                        [(t, float(max(0, round(30 - 30 * ramp(t, CUT, 6))))) for t in s.times],
                        "Idle connections in the Redis client pool.")
    ksm_deployment(s, NS, "wash-redeem", lambda t: 3.0, lambda t: 3.0, lambda t: 0.0)
    chatter(s, pods, "wash-redeem", "wash-redeem", [
        ("info", "code W7K-2291 redeemed site=leeds-kirkstall bay=3 plan=ultimate", {}),
        ("info", "code Q2M-8810 redeemed site=york-clifton bay=1 plan=basic", {}),
        ("info", "code X9T-0047 rejected: already used today (409)",
         {"http.response.status_code": 409}),
        ("warn", f"slow redis command GETDEL code:W7K-4410 took 212ms ({redis_ip}:6379)", {}),
    ], 120, start=s.ago(hours=2.5), end=CUT)
    chatter(s, pods, "wash-redeem", "wash-redeem", [
        ("error", f"redeem code H3P-7120 failed: dial tcp {redis_ip}:6379: i/o timeout",
         {"http.response.status_code": 503, "error.type": "net.OpError"}),
        ("error", f"redeem code B8R-5531 failed: dial tcp {redis_ip}:6379: i/o timeout",
         {"http.response.status_code": 503, "error.type": "net.OpError"}),
        ("warn", "redis pool exhausted: 0 of 32 connections usable, dialing new connection",
         {}),
        ("error", "POST /v1/redemptions 503 code lookup unavailable",
         {"http.response.status_code": 503}),
        ("info", "code T1L-9930 redeemed site=hull-anlaby bay=2 plan=ultimate", {}),
    ], 200, start=CUT + timedelta(seconds=40))

    # ---- red herrings
    def portal(version: str) -> Ctr:
        return Ctr("member-portal", f"{ACR}/washclub/member-portal:{version}", port=3000,
                   requests={"cpu": "100m", "memory": "192Mi"}, limits={"memory": "384Mi"},
                   readiness=http_probe("/api/ping", delay=6),
                   liveness=http_probe("/api/ping", delay=25, period=20))
    rolled(s, NS, "member-portal", portal, nodes, old="7.3.6", new="7.4.0",
           at=CUT - timedelta(minutes=36, seconds=40), revision=53, replicas=2, mib=170,
           rps=0.7,
           logs_old=[("info", "GET /account/plan 200 34ms", {}),
                     ("info", "GET /sites/nearby 200 61ms", {})],
           logs_new=[("info", "member-portal 7.4.0 listening on :3000", {}),
                     ("info", "GET /account/plan 200 29ms", {}),
                     ("warn", "feature flag 'family-plan-upsell' missing, default off", {}),
                     ("info", "GET /sites/nearby 200 58ms", {})], n_logs=50)
    neighbour(s, "bays", "bay-bridge", f"{ACR}/bays/bay-bridge:1.14.0", nodes, replicas=2,
              revision=12, rollout=s.ago(days=2, hours=6), mib=96, cpu=0.03, logs=[
                  ("info", "bay leeds-kirkstall/3 status=idle", {}),
                  ("warn", "MQTT keepalive missed for bay york-clifton/2, reconnecting", {}),
                  ("info", "bay hull-anlaby/2 wash started program=ultimate", {}),
                  ("warn", "bay sheffield-ecclesall/4 reported door sensor flapping", {}),
              ], n_logs=70, offset=3)
    return s

