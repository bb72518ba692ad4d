"""Gift cards: balance-api keeps card balances in a managed Redis of Open Telekom Cloud's
Distributed Cache Service (master/standby), reached through the ExternalName Service
balance-cache. Since 40 minutes the instance fails over again and again (the provider is
migrating its host): connections drop, writes get READONLY from the demoted master, reads
time out. balance-api itself is healthy (Ready, no restarts, normal CPU and memory) but ~18%
of its requests fail with 503 after its 800 ms cache timeout. Red herrings: balance-api
3.4.1 rolled out 1 h 50 min ago (plausible alternative), PgBouncer login-timeout warnings,
an old OOM restart of voucher-renderer."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import set_times
from tests.data.holdout2._generator.kit import app_counter, requests
from tests.data.holdout3._generator.kit3 import chatter, quiet, steady
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, http_probe

from .kit6 import Incident, NodeKind, provider_nodes

ID = "gift-card-balances-timing-out"
NOW = datetime.fromisoformat("2027-07-23T15:37:00+00:00")
NS = "giftcards"
REG = "swr.eu-de.otc.t-systems.com/cadeau"
CACHE = "redis-8c1f4e2a.dcs.eu-de.otc.t-systems.com"


def build() -> Incident:
    s = Incident(
        id=ID, title="Gift card balance checks slow and failing", now=NOW,
        report="""\
Shops using our POS integration say gift card redemptions hang and then fail with
"balance service unavailable", roughly one in five tries, starting a bit after 3pm.
""",
        truth=truth(
            "dependency_failure", "Deployment", NS, "balance-api",
            ["READONLY You can't write against a read only replica", "i/o timeout", CACHE,
             "redis_up"],
            "The managed Redis (OTC DCS, master/standby) behind balance-cache keeps failing "
            "over since ~14:57: connections drop, writes hit a demoted master (READONLY) and "
            "reads time out after 800 ms, so balance-api answers 503. balance-api itself is "
            "healthy. Open a ticket with the provider / pin the instance's maintenance, and "
            "make balance-api reconnect on READONLY and fall back to the ledger database."))
    set_times(s, 2.1, 60)
    c = s.cluster
    for name, days in (("default", 530), ("kube-system", 530), ("monitoring", 520),
                       (NS, 497), ("pos-gateway", 470)):
        c.namespace(name, s.ago(days=days))
    kind = NodeKind("s3.xlarge.4", "4", "16243836Ki", "3860m", "13928572Ki", "v1.30.3-r0",
                    "5.10.0-182.0.0.95.r1941_123.hce2.x86_64", "Huawei Cloud EulerOS 2.0",
                    runtime="containerd://1.7.20")
    nodes = provider_nodes(s, "otc", 4, kind, days=6.3)
    trouble = NOW - timedelta(minutes=40)
    flips = [trouble + timedelta(minutes=m) for m in (0, 7.5, 16, 23, 31.5, 37)]

    def down(t: int) -> bool:
        return any(0 <= t - f.timestamp() < 75 for f in flips)

    def bad(t: int) -> float:
        if t < trouble.timestamp():
            return 0.0015
        return 0.55 if down(t) else 0.11

    roll = NOW - timedelta(hours=1, minutes=50)
    api = Ctr("balance-api", f"{REG}/balance-api:3.4.1", port=8080,
              requests={"cpu": "300m", "memory": "256Mi"}, limits={"memory": "512Mi"},
              env={"REDIS_ADDR": "balance-cache.giftcards.svc:6379",
                   "REDIS_READ_TIMEOUT": "800ms", "LEDGER_DSN": "postgres://pgbouncer:6432/"
                   "ledger"},
              readiness=http_probe("/healthz", delay=3, period=5),
              liveness=http_probe("/healthz", delay=10, period=10))
    _, apis = steady(s, NS, "balance-api", [api], nodes=nodes, replicas=3, revision=57,
                     rollout=roll, old=(56, s.ago(days=9), [Ctr(
                         "balance-api", f"{REG}/balance-api:3.4.0", port=8080)]))
    c.service(NS, "balance-cache", {}, kind="ExternalName", external_name=CACHE,
              created=s.ago(days=497))
    for pod in apis:
        quiet(s, [pod], "balance-api", 140)
        requests(s, pod, "balance-api", rps=lambda t: 22.0, codes={
            "200": lambda t: 1 - bad(t), "503": bad},
            median=lambda t: 0.9 if down(t) else (0.24 if t >= trouble.timestamp() else 0.021),
            buckets=(0.05, 0.25, 1.0, 2.5))
        app_counter(s, "redis_pool_timeouts_total", {"namespace": NS,
                                                     "pod": pod["metadata"]["name"]},
                    s.times, lambda t: 22.0 * bad(t) * 0.8,
                    "Number of times a wait timeout occurred on the go-redis pool.")
    chatter(s, apis, "balance-api", "balance-api", [
        ("info", "GET /v2/cards/****4471/balance 200 14ms", {}),
        ("info", "POST /v2/cards/****0922/redeem 200 31ms", {}),
    ], 90, end=trouble)
    chatter(s, apis, "balance-api", "balance-api", [
        ("error", "HGET card:****5108 failed: redis: i/o timeout (addr 192.168.0.212:6379, "
         "read timeout 800ms)", {"error.type": "redis.timeout"}),
        ("error", "redeem card ****0922 failed: READONLY You can't write against a read only "
         "replica.", {"error.type": "redis.readonly"}),
        ("error", "GET /v2/cards/****5108/balance 503 cache unavailable after 800ms",
         {"http.response.status_code": 503}),
        ("warn", f"redis: discarding bad PubSub connection: dial tcp {CACHE}:6379: connect: "
         "connection refused", {}),
        ("info", "GET /v2/cards/****4471/balance 200 19ms", {}),
    ], 180, start=trouble)
    chatter(s, apis, "balance-api", "balance-api", [
        ("info", "balance-api 3.4.1 listening on :8080 (redis balance-cache.giftcards.svc:6379)",
         {}),
    ], 3, start=roll, end=roll + timedelta(minutes=2))
    exp = Ctr("redis-exporter", "quay.io/oliver006/redis_exporter:v1.66.0", port=9121,
              requests={"cpu": "20m", "memory": "32Mi"}, limits={"memory": "64Mi"},
              env={"REDIS_ADDR": f"redis://{CACHE}:6379"})
    _, exps = steady(s, "monitoring", "redis-exporter-dcs", [exp], nodes=nodes, replicas=1,
                     revision=5, rollout=s.ago(days=4, hours=3), offset=2, service=9121)
    quiet(s, exps, "redis-exporter", 18)
    s.metrics.gauge("redis_up", {"instance": f"{CACHE}:6379", "job": "redis-exporter-dcs"},
                    [(t, 0.0 if down(t) else 1.0) for t in s.times],
                    "Information about the Redis instance")
    s.metrics.gauge("redis_connected_slaves", {"instance": f"{CACHE}:6379",
                                               "job": "redis-exporter-dcs"},
                    [(t, 1.0) for t in s.times if not down(t)],
                    "connected_slaves metric")
    app_counter(s, "redis_connections_received_total", {"instance": f"{CACHE}:6379",
                                                        "job": "redis-exporter-dcs"},
                s.times, lambda t: 0.4 + (6.0 if t >= trouble.timestamp() else 0.0),
                "connections_received_total metric")
    chatter(s, exps, "redis-exporter", "redis-exporter", [
        ("error", f"Couldn't connect to redis instance (redis://{CACHE}:6379): dial tcp "
         "192.168.0.212:6379: connect: connection refused", {}),
    ], 14, start=trouble)
    # ---- red herrings
    pgb = Ctr("pgbouncer", "docker.io/bitnami/pgbouncer:1.23.1", port=6432, port_name="pg",
              requests={"cpu": "50m", "memory": "64Mi"}, limits={"memory": "128Mi"})
    _, pgbs = steady(s, NS, "pgbouncer", [pgb], nodes=nodes, replicas=2, revision=9,
                     rollout=s.ago(days=5), service=6432, target="pg", offset=1)
    quiet(s, pgbs, "pgbouncer", 20)
    chatter(s, pgbs, "pgbouncer", "pgbouncer", [
        ("warn", "C-0x55d1a2: ledger/balance@192.168.7.33:53110 closing because: client_login_"
         "timeout (server down) (age=60s)", {}),
        ("info", "stats: 41 xacts/s, 44 queries/s, in 16220 B/s, out 51231 B/s", {}),
    ], 40)
    vr = Ctr("voucher-renderer", f"{REG}/voucher-renderer:1.8.2", port=8080,
             requests={"cpu": "200m", "memory": "384Mi"}, limits={"memory": "512Mi"})
    _, vrs = steady(s, NS, "voucher-renderer", [vr], nodes=nodes, replicas=2, revision=22,
                    rollout=s.ago(days=3, hours=2), offset=3,
                    restarted={0: (s.ago(days=1, hours=7), "OOMKilled", 137)})
    quiet(s, vrs, "voucher-renderer", 300)
    pos = Ctr("pos-gateway", f"{REG}/pos-gateway:6.0.3", port=8080,
              requests={"cpu": "150m", "memory": "256Mi"}, limits={"memory": "512Mi"})
    _, poss = steady(s, "pos-gateway", "pos-gateway", [pos], nodes=nodes, replicas=2,
                     revision=118, rollout=s.ago(days=2, hours=1), offset=2)
    chatter(s, poss, "pos-gateway", "pos-gateway", [
        ("warn", "balance-api returned 503 for terminal T-44812, answering 'balance service "
         "unavailable'", {}),
        ("info", "terminal T-44190 heartbeat ok", {}),
    ], 60, start=trouble)
    return s
