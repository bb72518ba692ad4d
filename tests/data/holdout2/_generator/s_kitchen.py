"""Food delivery: restaurants stop receiving orders at the dinner peak. The managed RabbitMQ
(CloudAMQP) that carries orders to the restaurant tablets went away at 19:06: connections
forced closed, then refused, then timing out. kitchen-dispatch, which publishes every
order, is healthy and Ready but answers 503 to order-gateway for each order it cannot
publish."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from tests.data.holdout._generator.base import daemonset, gauge, logs_for, set_times
from tests.scenario_tools.common import MIB, truth
from tests.scenario_tools.kube import Ctr, Obj, ended, http_probe, running

from .kit import (
    Incident,
    NodeKind,
    after,
    deploy,
    node,
    plain,
    requests,
    restarts_series,
    working_set,
)

ID = "restaurant-orders-stuck"
NOW = datetime.fromisoformat("2027-03-02T19:33:00+00:00")
NS = "delivery"
REG = "registry.digitalocean.com/forkful"
BROKER = "kitchen-prod.rmq4.cloudamqp.com"
BROKER_IP = "35.157.108.44"
PG = "db-postgresql-ams3-41277-do-user-9912051-0.k.db.ondigitalocean.com"


def build() -> Incident:
    s = Incident(
        id=ID,
        title="Restaurants not receiving new orders",
        now=NOW,
        report="""\
Since ~19:05 restaurants don't get new orders on their tablets. Customers' orders hang on
"waiting for the restaurant" or checkout says "restaurant not reachable, please try again".
It's the dinner peak, support is flooded. All pods in delivery are Running and Ready as far
as I can see, no deploys today. What is going on?
""",
        truth=truth(
            "dependency_failure", "Deployment", NS, "kitchen-dispatch",
            [f"{BROKER}:5671", "i/o timeout", "CONNECTION_FORCED", "probe_success",
             "503 broker unavailable"],
            "The CloudAMQP broker that kitchen-dispatch publishes orders to is down (connection "
            "forced closed at 19:06, then refused, then timing out): open a ticket with "
            "CloudAMQP / fail over to the standby broker and point KITCHEN_AMQP_URL at it. "
            "kitchen-dispatch itself is healthy; replay the orders it rejected (order-gateway "
            "keeps them as PENDING_DISPATCH) once the broker answers."))
    set_times(s, 2.0, 60)
    c = s.cluster
    for ns, days in (("default", 400), ("kube-system", 400), (NS, 380), ("promotions", 220),
                     ("o11y", 390)):
        c.namespace(ns, s.ago(days=days))
    kind = NodeKind("s-8vcpu-16gb", "8", "16393968Ki", "7900m", "13742576Ki", "v1.31.1",
                    "6.1.0-28-amd64", "Debian GNU/Linux 12 (bookworm)",
                    runtime="containerd://1.6.36", storage="322284020Ki",
                    alloc_storage="297014652586")
    pool_id = c.uid("pool", "apps")
    nodes: list[Obj] = []
    for i in range(4):
        name = f"apps-pool-{c.token(5)}"
        droplet = 481_220_000 + s.rng.randrange(1000, 99_999)
        nodes.append(node(s, name, ip=f"10.110.0.{3 + i}", kind=kind,
                          created=s.ago(days=6.2 - i * 0.8), region="ams3", zone="",
                          labels={"doks.digitalocean.com/managed": "true",
                                  "doks.digitalocean.com/node-id": c.uid("droplet", name),
                                  "doks.digitalocean.com/node-pool": "apps-pool",
                                  "doks.digitalocean.com/node-pool-id": pool_id,
                                  "doks.digitalocean.com/version": "1.31.1-do.5",
                                  "region": "ams3"},
                          provider_id=f"digitalocean://{droplet}",
                          pod_cidr=f"10.244.{i * 2}.0/24"))
    t0 = NOW - timedelta(minutes=26, seconds=40)  # 19:06:20
    refused_until = t0 + timedelta(seconds=71)
    edge = t0.timestamp()

    def peak(t: int) -> float:
        hour = (t % 86400) / 3600
        return 0.55 + 0.45 * math.exp(-((hour - 19.0) / 1.2) ** 2)

    # ---- kitchen-dispatch: healthy pods, every publish fails
    kd = Ctr("kitchen-dispatch", f"{REG}/kitchen-dispatch:1.27.3", port=8080,
             requests={"cpu": "200m", "memory": "128Mi"}, limits={"memory": "256Mi"},
             env={"KITCHEN_AMQP_URL": f"amqps://kitchen-dispatch@{BROKER}:5671/kitchen",
                  "KITCHEN_EXCHANGE": "kitchen.orders", "PUBLISH_CONFIRM_TIMEOUT": "3s",
                  "GOMAXPROCS": "2"},
             readiness=http_probe("/healthz", delay=3, period=10),
             liveness=http_probe("/livez", delay=10, period=20))
    _, kds = deploy(s, NS, "kitchen-dispatch", [kd], replicas=3, nodes=nodes, revision=44,
                    rollout=s.ago(days=3, hours=5),
                    labels={"app.kubernetes.io/name": "kitchen-dispatch",
                            "app.kubernetes.io/part-of": "delivery"})
    for pod in kds:
        name = pod["metadata"]["name"]
        plain(s, pod, "kitchen-dispatch", 41, 0.06)
        requests(s, pod, "kitchen-dispatch", rps=lambda t: 6.2 * peak(t), codes={
            "202": lambda t: 0.998 if t < edge else 0.0,
            "400": lambda t: 0.002,
            "503": lambda t: 0.0 if t < edge else 0.998})
        gauge(s, "kitchen_dispatch_amqp_connected", {"namespace": NS, "pod": name},
              after(edge, 1.0, 0.0), "1 while the AMQP connection to the broker is open.")
    start = NOW - timedelta(hours=2)
    logs_for(s, kds, "kitchen-dispatch", "kitchen-dispatch", [
        ("info", "published order o_8f21c3 to kitchen.orders (venue v_2217) confirm 14ms",
         {"event.action": "publish"}),
        ("info", "POST /v1/dispatch 202 19ms", {"http.response.status_code": 202}),
        ("warn", "venue v_0913 tablet offline for 12m, order still queued on broker", {}),
    ], 84, start=start, end=t0)
    for pod in kds:
        name = pod["metadata"]["name"]
        base = {"namespace": NS, "pod": name, "container": "kitchen-dispatch",
                "service": "kitchen-dispatch", "node": pod["spec"]["nodeName"]}
        jit = s.rng.uniform(0, 0.3)
        s.logs.add(t0 + timedelta(seconds=jit), "error", 'amqp connection closed: Exception '
                   "(320) Reason: \"CONNECTION_FORCED - broker forced connection closure with "
                   "reason 'shutdown'\"", **base)
        t = t0 + timedelta(seconds=1 + jit)
        backoff = 1.0
        while t < NOW:
            if t < refused_until:
                msg = (f"amqp reconnect failed: dial tcp {BROKER_IP}:5671: connect: connection "
                       f"refused (retry in {backoff:.0f}s)")
            else:
                msg = (f"amqp reconnect failed: dial tcp {BROKER_IP}:5671: i/o timeout "
                       f"(retry in {backoff:.0f}s)")
            s.logs.add(t, "error", msg, **base)
            t += timedelta(seconds=backoff + (10 if t >= refused_until else 0) +
                           s.rng.uniform(0, 0.5))
            backoff = min(backoff * 2, 30.0)
    logs_for(s, kds, "kitchen-dispatch", "kitchen-dispatch", [
        ("error", "POST /v1/dispatch 503 broker unavailable: publish order to kitchen.orders: "
         "amqp: connection not open", {"http.response.status_code": 503,
                                       "error.type": "amqp.ErrClosed"}),
        ("warn", "rejecting dispatch for order o_51b9e0 (venue v_3380): broker unavailable", {}),
    ], 78, start=t0 + timedelta(seconds=1), end=NOW)

    # ---- order-gateway: the caller that sees the 503s
    og = Ctr("order-gateway", f"{REG}/order-gateway:3.8.0", port=8080,
             requests={"cpu": "300m", "memory": "256Mi"}, limits={"memory": "512Mi"},
             env={"KITCHEN_DISPATCH_URL": "http://kitchen-dispatch.delivery.svc/v1/dispatch",
                  "DISPATCH_RETRIES": "2", "DATABASE_HOST": PG},
             readiness=http_probe("/ready", delay=5), liveness=http_probe("/live", delay=15))
    old = s.ago(days=2, hours=1, minutes=9)

    def og_states(i: int, name: str, started: datetime) -> dict[str, Obj]:
        return {"order-gateway": running(old, restarts=1, last=ended(
            "Error", 2, started, old - timedelta(seconds=4)))} if i == 2 else {}
    _, ogs = deploy(s, NS, "order-gateway", [og], replicas=3, nodes=nodes, revision=97,
                    rollout=s.ago(days=2, hours=9), statuses=og_states, offset=1)
    for k, pod in enumerate(ogs):
        plain(s, pod, "order-gateway", 163, 0.21)
        if k == 2:
            restarts_series(s, pod, "order-gateway", 1, [])
        requests(s, pod, "order-gateway", rps=lambda t: 8.1 * peak(t), codes={
            "201": lambda t: 0.76 if t < edge else 0.0,
            "200": lambda t: 0.22,
            "422": lambda t: 0.02,
            "503": lambda t: 0.0 if t < edge else 0.76})
    logs_for(s, ogs, "order-gateway", "order-gateway", [
        ("info", "POST /v2/orders 201 order=o_77a1d0 venue=v_2217 total=38.40 EUR",
         {"http.response.status_code": 201}),
        ("info", "GET /v2/orders/o_77a1d0/status 200", {"http.response.status_code": 200}),
        ("warn", "POST /v2/orders 422 basket below venue minimum (12.50 < 15.00)",
         {"http.response.status_code": 422}),
    ], 84, start=start, end=NOW)
    logs_for(s, ogs, "order-gateway", "order-gateway", [
        ("error", "dispatch of order o_c0d912 failed after 3 attempts: kitchen-dispatch "
         "answered 503 Service Unavailable (broker unavailable); order kept as "
         "PENDING_DISPATCH", {"http.response.status_code": 503}),
        ("warn", "kitchen-dispatch 503 on attempt 1/3, retrying in 250ms", {}),
    ], 72, start=t0 + timedelta(seconds=2), end=NOW)

    # ---- blackbox probes of the external dependencies
    bb = Ctr("blackbox-exporter", "quay.io/prometheus/blackbox-exporter:v0.25.0", port=9115,
             requests={"cpu": "20m", "memory": "32Mi"}, limits={"memory": "64Mi"},
             args=["--config.file=/config/blackbox.yml"],
             readiness=http_probe("/-/healthy", delay=3))
    _, bbs = deploy(s, "o11y", "blackbox-exporter", [bb], replicas=1, nodes=nodes, revision=3,
                    rollout=s.ago(days=5, hours=22), service=9115, offset=3)
    working_set(s, bbs[0], "blackbox-exporter", lambda t: 17.4 * MIB)
    for target, down in ((f"{BROKER}:5671", True), (f"{PG}:25060", False),
                         ("api.stripe.com:443", False)):
        labels = {"job": "blackbox-tcp", "instance": target, "module": "tcp_tls_connect"}
        gauge(s, "probe_success", labels, after(edge + 12, 1.0, 0.0 if down else 1.0),
              "Displays whether or not the probe was a success")
        slow = after(edge + 70, 0.003, 5.0) if down else (
            lambda t: 0.012 + 0.004 * s.rng.random())
        gauge(s, "probe_duration_seconds", labels, slow, "Returns how long the probe took to "
              "complete in seconds")

    # ---- red herrings
    ms = Ctr("menu-sync", f"{REG}/menu-sync:0.44.1", port=8080,
             requests={"cpu": "100m", "memory": "256Mi"}, limits={"memory": "512Mi"},
             readiness=http_probe("/ready", delay=5))
    _, mss = deploy(s, NS, "menu-sync", [ms], replicas=1, nodes=nodes, revision=58,
                    rollout=s.ago(days=1, hours=4), offset=2, service=None)
    working_set(s, mss[0], "menu-sync", lambda t: 188 * MIB)
    logs_for(s, mss, "menu-sync", "menu-sync", [
        ("warn", "POS lightspeed venue v_4412: 502 Bad Gateway, retry in 60s", {}),
        ("info", "synced 214 menu items for venue v_2217 (3 price changes)", {}),
        ("error", "POS untill venue v_0781: invalid API key (401), sync disabled until fixed",
         {"error.type": "PosAuthError"}),
        ("info", "marked 7 items sold out for venue v_1190", {}),
    ], 54, start=start, end=NOW)
    va = Ctr("voucher-api", f"{REG}/voucher-api:2.1.0", port=8080,
             requests={"cpu": "100m", "memory": "128Mi"}, limits={"memory": "256Mi"},
             readiness=http_probe("/ready", delay=5, timeout=1))
    _, vas = deploy(s, "promotions", "voucher-api", [va], replicas=2, nodes=nodes, revision=21,
                    rollout=s.ago(days=4, hours=1), offset=1)
    blip = NOW - timedelta(minutes=41, seconds=5)
    ip = vas[1]["status"]["podIP"]
    c.event(vas[1], "Unhealthy", f'Readiness probe failed: Get "http://{ip}:8080/ready": '
            "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
            first=blip, last=blip + timedelta(seconds=10), count=2, type_="Warning",
            field_path="spec.containers{voucher-api}")
    logs_for(s, vas, "voucher-api", "voucher-api", [
        ("info", "POST /v1/vouchers/redeem 200 code=SPRING10", {"http.response.status_code":
                                                               200}),
        ("warn", "POST /v1/vouchers/redeem 409 code=WELCOME5 already used",
         {"http.response.status_code": 409}),
    ], 30, start=start, end=NOW)
    agent = Ctr("do-node-agent", "docker.io/digitalocean/do-agent:3.18.2", port=None,
                requests={"cpu": "10m", "memory": "50Mi"}, limits={"memory": "300Mi"},
                args=["--path.procfs=/host/proc", "--path.sysfs=/host/sys",
                      "--k8s-metrics-path=http://kube-state-metrics.kube-system.svc:8080/"
                      "metrics"])
    _, agents = daemonset(s, "kube-system", "do-node-agent", [agent], node_list=nodes,
                          generation=5, since=s.ago(days=6.3),
                          labels={"app": "do-node-agent"})
    logs_for(s, agents, "do-node-agent", "do-node-agent", [
        ("warn", "failed to post metrics: Post \"https://sonar.digitalocean.com/v1/metrics/"
         "droplet_id/\": context deadline exceeded, retrying", {}),
        ("info", "metrics sent (216 series)", {}),
    ], 18, start=start, end=NOW)
    return s
