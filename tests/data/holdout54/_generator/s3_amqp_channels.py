"""Shape 3, resource_exhaustion: order-events opens an AMQP channel per publish, never closes."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path

from ._kit import (
    Ctr,
    Line,
    Rev,
    Scenario,
    access_log,
    deployment,
    endpoints,
    iso,
    lines,
    namespace,
    service,
    standard_bystanders,
    statefulset,
    worker_nodes,
)

SID = "order-events-rabbitmq-not-allowed"
REG = "ghcr.io/acme-retail"
CHANNEL_MAX = 2047
LIMIT = (f"number of channels opened ({CHANNEL_MAX}) has reached the negotiated channel_max "
         f"({CHANNEL_MAX})")


def build(root: Path) -> None:
    sc = Scenario(SID, "2026-08-21T16:10:00Z", seed=5403)
    old = sc.ago(days=500)
    nodes = worker_nodes(sc, [f"ip-172-31-{a}-{b}.ec2.internal"
                              for a, b in ((10, 4), (22, 190), (37, 66), (10, 251))])
    standard_bystanders(sc, nodes, ["rabbitmq.messaging.svc.cluster.local",
                                    "orders-db.orders.svc.cluster.local",
                                    "smtp-relay.notify.svc.cluster.local"])
    for ns in ("orders", "messaging", "notify", "warehouse"):
        namespace(sc, ns, old)

    broker_ctr = Ctr("rabbitmq", "rabbitmq:3.13.6-management", port=5672, cpu_req="1",
                     mem_req="2Gi", mem_lim="4Gi",
                     readiness={"exec": {"command": ["rabbitmq-diagnostics", "-q",
                                                     "check_port_connectivity"]},
                                "periodSeconds": 30, "timeoutSeconds": 20,
                                "failureThreshold": 3, "successThreshold": 1})
    upgrade = sc.ago(days=2, hours=3)
    crashed = {"terminated": {"exitCode": 1, "reason": "Error", "startedAt": iso(upgrade),
                              "finishedAt": iso(upgrade + timedelta(minutes=9))}}
    broker = statefulset(sc, "messaging", "rabbitmq", [broker_ctr], replicas=3, nodes=nodes,
                         created=old, at=upgrade, service_name="rabbitmq-nodes",
                         pod_hook=lambda i: {"restarts": 1, "last_state": crashed,
                                             "started": upgrade + timedelta(minutes=10)}
                         if i == 2 else {})
    service(sc, "messaging", "rabbitmq", selector={"app": "rabbitmq"},
            ports=[("amqp", 5672, 5672), ("prometheus", 15692, 15692)], created=old)
    service(sc, "messaging", "rabbitmq-nodes", selector={"app": "rabbitmq"},
            ports=[("epmd", 4369, 4369), ("cluster", 25672, 25672)], created=old,
            extra_spec={"clusterIP": "None", "clusterIPs": ["None"],
                        "publishNotReadyAddresses": True})
    endpoints(sc, "messaging", "rabbitmq", broker.pods, 5672, old, port_name="amqp")

    pub_env = {"AMQP_URL": "amqp://order-events@rabbitmq.messaging.svc:5672/orders",
               "OUTBOX_POLL_MS": "200", "PUBLISH_CONFIRMS": "true"}
    pub = deployment(sc, "orders", "order-events", [
        Rev([Ctr("order-events", f"{REG}/order-events:2.9.1", port=9000, env=pub_env)],
            sc.ago(days=5, hours=4), 3, "order-events 2.9.1: outbox poller batching")],
        nodes=nodes, created=old, first_rev=23)
    sale = sc.ago(minutes=52)

    def pub_rate(t: datetime) -> float:
        return 1.45 if t >= sale else 0.55

    brokers = [p.ref for p in broker.pods]
    drops: list[datetime] = []
    per_broker: dict[tuple[str, int], float] = {}
    conn_id = [sc.rng.randint(20000, 90000)]

    def erl_pid() -> str:
        conn_id[0] += sc.rng.randint(3, 400)
        return f"<0.{conn_id[0]}.0>"

    hour_ago = sc.ago(minutes=60)
    for p in pub.pods:
        r = p.ref
        rng = sc.rng
        t = sc.ago(hours=3)
        ch = float(rng.randint(200, 1900))
        dt = 5
        blocked_until: datetime | None = None
        series: list[tuple[datetime, float, str]] = []
        fails: list[datetime] = []
        port = rng.randint(40000, 60000)
        host = rng.choice(brokers)
        pid = erl_pid()
        while t <= sc.now:
            visible = t >= sc.ago(minutes=60)
            if blocked_until is not None:
                if t >= blocked_until:
                    blocked_until = None
                    ch = 1.0
                    port = rng.randint(40000, 60000)
                    host = rng.choice(brokers)
                    pid = erl_pid()
                    if visible:
                        sc.log(t, host, "info",
                               f"accepting AMQP connection {pid} ({r.ip}:{port} -> "
                               f"{host.ip}:5672)")
                        sc.log(t + timedelta(milliseconds=40), host, "info",
                               f"connection {pid} ({r.ip}:{port} -> {host.ip}:5672): user "
                               "'order-events' authenticated and granted access to vhost "
                               "'orders'")
                        sc.log(t + timedelta(milliseconds=80), r, "info",
                               "connected to amqp://rabbitmq.messaging.svc:5672/orders "
                               f"(server {host.pod}, channel_max={CHANNEL_MAX}, "
                               "frame_max=131072)")
                elif visible and rng.random() < 0.5:
                    fails.append(t)
            else:
                ch += pub_rate(t) * dt
                if ch >= CHANNEL_MAX:
                    ch = CHANNEL_MAX
                    drops.append(t)
                    blocked_until = t + timedelta(seconds=rng.randint(40, 75))
                    if visible:
                        sc.log(t, host, "error",
                               f"Error on AMQP connection {pid} ({r.ip}:{port} -> "
                               f"{host.ip}:5672, vhost: 'orders', user: 'order-events', "
                               "state: running), channel 0:\n operation channel.open caused a "
                               f'connection exception not_allowed: "{LIMIT}"',
                               {"erlang.pid": pid})
                        sc.log(t + timedelta(milliseconds=5), host, "info",
                               f"closing AMQP connection {pid} ({r.ip}:{port} -> "
                               f"{host.ip}:5672, vhost: 'orders', user: 'order-events')")
                        sc.log(t + timedelta(milliseconds=30), r, "error",
                               "amqp connection lost: ConnectionClosedByBroker: (530, "
                               f"'NOT_ALLOWED - {LIMIT}'); reconnecting in "
                               f"{int((blocked_until - t).total_seconds())}s",
                               {"error.type": "pika.exceptions.ConnectionClosedByBroker"})
                elif visible and rng.random() < 0.09:
                    oid = f"o_{rng.getrandbits(40):010x}"
                    kind = rng.choice(["order.created", "order.paid", "order.packed"])
                    sc.log(t, r, "info", f"published {kind} {oid} to exchange orders "
                                         f"(channel {int(ch)}, confirm ok in "
                                         f"{rng.randint(1, 9)}ms)")
            series.append((t, ch, host.pod))
            t += timedelta(seconds=dt)
        for f in fails:
            oid = f"o_{sc.rng.getrandbits(40):010x}"
            sc.log(f, r, "error", f"publish order.created {oid} failed: connection closed, "
                                  "event parked in outbox (retry on reconnect)",
                   {"error.type": "pika.exceptions.ConnectionWrongStateError"})
        lookup = {int(t.timestamp()): v for t, v, _ in series}
        for t, v, h in series:
            per_broker.setdefault((h, int(t.timestamp())), 0.0)
            per_broker[(h, int(t.timestamp()))] += int(v)
        sc.gauge("amqp_publisher_channels_open", "AMQP channels currently open by this "
                 "publisher's connection.", {"namespace": "orders", "service": "order-events",
                                             "pod": r.pod},
                 lambda t, lk=lookup: float(int(lk.get(int(t.timestamp()), 0.0))))
        sc.counter("orders_events_published_total", "Events published to RabbitMQ.",
                   {"namespace": "orders", "service": "order-events", "pod": r.pod},
                   pub_rate, start=sc.rng.uniform(2e5, 4e5))
        sc.counter("orders_events_publish_failures_total", "Publishes that failed.",
                   {"namespace": "orders", "service": "order-events", "pod": r.pod},
                   lambda t, fl=fails: sum(1 for f in fl if t - timedelta(seconds=60) < f <= t)
                   / 60.0 * 10, start=float(sc.rng.randint(300, 900)))
        sc.chatter(r, lines([("info", "outbox poll: {n} rows claimed in {ms}ms"),
                             ("warn", "outbox lag {n}ms above 500ms target")]), 0.6)
        sc.usage(p, 0.09, lambda t: 180e6 + 14e6 * (t - hour_ago).seconds / 600, ksm=True)
    # broker-wide view
    for i, b in enumerate(broker.pods):
        base = 4.0 + i
        sc.gauge("rabbitmq_connections", "Connections currently open.",
                 {"namespace": "messaging", "pod": b.ref.pod}, lambda t, v=base: v + 3)
        sc.gauge("rabbitmq_process_open_fds", "Open file descriptors.",
                 {"namespace": "messaging", "pod": b.ref.pod}, lambda t: 88.0)
        sc.gauge("rabbitmq_alarms_memory_used_watermark", "Memory alarm (1 = raised).",
                 {"namespace": "messaging", "pod": b.ref.pod}, lambda t: 0.0)
        sc.gauge("rabbitmq_channels", "Channels currently open.",
                 {"namespace": "messaging", "pod": b.ref.pod},
                 lambda t, n=b.ref.pod, v=base: v + per_broker.get((n, int(t.timestamp())), 0))
        sc.usage(b, 0.3, 1.1e9)
        ip = b.ref.ip
        sc.chatter(b.ref, lines([
            ("info", "accepting AMQP connection <0.{n}.0> (10.42.0.7:{n}1 -> " + ip + ":5672)"),
            ("warn", "closing AMQP connection <0.{n}.0> (10.42.0.7:{n}1 -> " + ip + ":5672):\n"
                     "client unexpectedly closed TCP connection"),
            ("info", "Successfully synced segment of queue 'warehouse.stock' in vhost "
                     "'orders'")]), 0.5)

    def closed(t: datetime) -> float:
        n = sum(1 for d in drops if t - timedelta(seconds=60) < d <= t)
        return 0.2 + n * CHANNEL_MAX / 60.0

    sc.counter("rabbitmq_channels_opened_total", "Total number of channels opened.",
               {"namespace": "messaging"}, lambda t: 3 * pub_rate(t) + 0.2, start=4.1e6)
    sc.counter("rabbitmq_channels_closed_total", "Total number of channels closed.",
               {"namespace": "messaging"}, closed, start=4.0e6)
    _consumers(sc, nodes, old)
    sc.write(root, title="order events not reaching consumers, RabbitMQ rejecting publisher",
             report="order events are not getting to warehouse and notifications reliably, "
                    "order-events logs are full of NOT_ALLOWED errors coming back from "
                    "RabbitMQ. looks like the broker is rejecting us (it was upgraded to 3.13 "
                    "on tuesday and rabbitmq-2 crashed then). messaging team, can you check "
                    "the cluster?\n",
             truth={"category": "resource_exhaustion",
                    "culprit": {"kind": "Deployment", "namespace": "orders",
                                "name": "order-events"},
                    "evidence": [LIMIT, "amqp_publisher_channels_open"],
                    "fix": "Fix order-events to publish on one long-lived channel (or a small "
                           "pool) and close any channel it opens; until then restart the "
                           "order-events pods to reset their connections. The broker is "
                           "healthy; raising channel_max would only delay the failure."})


def _consumers(sc: Scenario, nodes: list[str], old: datetime) -> None:
    api = deployment(sc, "orders", "orders-api", [
        Rev([Ctr("orders-api", f"{REG}/orders-api:7.4.0", mem_lim="512Mi")],
            sc.ago(days=1, hours=8), 3, "orders-api 7.4.0")], nodes=nodes, created=old,
        first_rev=88)
    for p in api.pods:
        sc.chatter(p.ref, access_log(["/v1/orders", "/v1/orders/o_{n}", "/v1/cart/checkout"],
                                     ms=(10, 70), method="POST"), 1.3)
        sc.usage(p, 0.3, 330e6)
    service(sc, "orders", "orders-api", selector={"app": "orders-api"},
            ports=[("http", 80, 8080)], created=old)
    for ns, name, queue in (("notify", "notification-worker", "notify.order-events"),
                            ("warehouse", "stock-sync", "warehouse.stock")):
        wl = deployment(sc, ns, name, [
            Rev([Ctr(name, f"{REG}/{name}:3.{sc.rng.randint(0, 9)}.2", port=9000)],
                sc.ago(days=3, hours=sc.rng.randint(1, 20)), 2)], nodes=nodes, created=old,
            first_rev=sc.rng.randint(10, 60))

        def gen(rng: random.Random, t: datetime, q: str = queue) -> Line:
            if rng.random() < 0.08:
                return ("warn", f"consumer on {q}: message redelivered (delivery tag "
                                f"{rng.randint(1000, 99999)}), handler took "
                                f"{rng.randint(900, 3000)}ms", {})
            return ("info", f"consumed order.{rng.choice(['created', 'paid', 'packed'])} "
                            f"o_{rng.getrandbits(40):010x} from {q} (channel 1, prefetch 50)",
                    {})

        for p in wl.pods:
            sc.chatter(p.ref, gen, 1.4)
            sc.usage(p, 0.06, 120e6)
            sc.gauge("amqp_publisher_channels_open", "AMQP channels currently open by this "
                     "publisher's connection.", {"namespace": ns, "service": name,
                                                 "pod": p.ref.pod}, lambda t: 2.0)
