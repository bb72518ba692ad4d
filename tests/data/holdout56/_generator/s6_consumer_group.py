"""A consumer's new revision renamed its Kafka group id and re-reads the topic from the start."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from . import _kit as k

SID = "h56-order-events-lag"
NOW = "2026-12-18T10:35:00Z"

NODES = [
    ("ip-10-12-0-41.us-west-2.compute.internal", "us-west-2a"),
    ("ip-10-12-1-206.us-west-2.compute.internal", "us-west-2b"),
    ("ip-10-12-2-19.us-west-2.compute.internal", "us-west-2c"),
    ("ip-10-12-0-133.us-west-2.compute.internal", "us-west-2a"),
    ("ip-10-12-1-77.us-west-2.compute.internal", "us-west-2b"),
    ("ip-10-12-2-250.us-west-2.compute.internal", "us-west-2c"),
]
OLD_GROUP = "fulfillment-order-events"
NEW_GROUP = "fulfillment-order-events-v2"
NEW_IMAGE = "registry.gitlab.com/brightcart/fulfillment/order-events-consumer:2.8.0"
OLD_IMAGE = "registry.gitlab.com/brightcart/fulfillment/order-events-consumer:2.7.3"
PARTITIONS = 12
PRODUCE_RATE = 78.0  # messages per second on order-events
CATCHUP_RATE = 1450.0


def _consumer(image: str, group: str) -> k.Obj:
    return k.container(
        "consumer",
        image,
        "500m",
        "768Mi",
        "2",
        "1Gi",
        [("metrics", 8081)],
        env=[
            ("KAFKA_BOOTSTRAP_SERVERS", "kafka-bootstrap.kafka.svc:9092"),
            ("KAFKA_TOPIC", "order-events"),
            ("KAFKA_GROUP_ID", group),
            ("KAFKA_AUTO_OFFSET_RESET", "earliest"),
            ("KAFKA_MAX_POLL_RECORDS", "500"),
            ("SHIPPING_URL", "http://shipping-service.fulfillment.svc:8080"),
            ("NOTIFY_URL", "http://notification-service.fulfillment.svc:8080"),
        ],
        readiness=k.http_probe("/actuator/health", 8081),
    )


def build(root: Path) -> None:
    sc = k.Scenario(SID, NOW, seed=5606)
    node_names = [n for n, _ in NODES]
    for i, (name, zone) in enumerate(NODES):
        sc.add(
            k.node(
                name,
                zone,
                sc.ago(days=16 + i),
                sc.ago(minutes=0.2),
                instance_type="m6i.2xlarge",
                cpu="8",
                allocatable_cpu="7910m",
                region="us-west-2",
            )
        )
    k.platform(sc, node_names)
    for ns in ("fulfillment", "kafka", "storefront"):
        sc.add(k.namespace(ns, sc.ago(days=300)))
    rolled = sc.ago(minutes=32, seconds=41)
    start = sc.ago(minutes=60)

    def after(t: datetime) -> bool:
        return t >= rolled + timedelta(seconds=30)

    # ---------------- kafka ----------------
    kafka = k.statefulset(
        sc,
        "kafka",
        "kafka",
        [
            k.container(
                "kafka",
                "bitnami/kafka:3.7.1",
                "2",
                "8Gi",
                None,
                "8Gi",
                [("client", 9092), ("controller", 9093), ("metrics", 9404)],
                env=[("KAFKA_CFG_LOG_RETENTION_HOURS", "168"), ("KAFKA_CFG_NUM_PARTITIONS", "12")],
            )
        ],
        node_names[3:],
        3,
        sc.ago(days=290),
        sc.ago(days=21),
        claim=("data", "1Ti", "gp3"),
        port=9092,
        restarts={1: (1, k.terminated("Error", 143, sc.ago(days=21), sc.ago(days=4, hours=9)))},
    )
    exporter = k.simple_deployment(
        sc,
        "kafka",
        "kafka-exporter",
        [
            k.container(
                "kafka-exporter",
                "danielqsj/kafka-exporter:v1.8.0",
                "50m",
                "64Mi",
                "200m",
                "128Mi",
                [("metrics", 9308)],
                args=["--kafka.server=kafka-bootstrap.kafka.svc:9092", "--group.filter=.*"],
            )
        ],
        node_names[:1],
        1,
        created=sc.ago(days=280),
        rolled=sc.ago(days=60),
        revision=2,
        port=9308,
    )

    # ---------------- fulfillment/order-events-consumer ----------------
    consumer = k.simple_deployment(
        sc,
        "fulfillment",
        "order-events-consumer",
        [_consumer(NEW_IMAGE, NEW_GROUP)],
        node_names[:3],
        3,
        created=sc.ago(days=280),
        rolled=rolled,
        revision=12,
        port=8081,
        old_revisions=[(11, sc.ago(days=13, hours=4), [_consumer(OLD_IMAGE, OLD_GROUP)])],
        annotations={"prometheus.io/scrape": "true", "prometheus.io/port": "8081"},
    )
    rs_old, rs_new = k.replicaset_names(sc, "fulfillment", "order-events-consumer")
    old_pods = [f"{rs_old}-{sc.pod_suffix()}" for _ in range(3)]
    for i, p in enumerate(consumer.pods):
        at = rolled + timedelta(seconds=12 * i)
        sc.event(
            "fulfillment",
            "Deployment",
            "order-events-consumer",
            "ScalingReplicaSet",
            f"Scaled up replica set {rs_new} to {i + 1}" + (f" from {i}" if i else ""),
            at,
            api_version="apps/v1",
        )
        sc.event(
            "fulfillment",
            "ReplicaSet",
            rs_new,
            "SuccessfulCreate",
            f"Created pod: {p.name}",
            at,
            api_version="apps/v1",
        )
        for reason, msg in (
            ("Scheduled", f"Successfully assigned fulfillment/{p.name} to {p.node}"),
            ("Pulling", f'Pulling image "{NEW_IMAGE}"'),
            (
                "Pulled",
                f'Successfully pulled image "{NEW_IMAGE}" in 6.204s (6.204s including '
                "waiting). Image size: 187442913 bytes.",
            ),
            ("Created", "Created container consumer"),
            ("Started", "Started container consumer"),
        ):
            sc.event("fulfillment", "Pod", p.name, reason, msg, at + timedelta(seconds=2))
        sc.event(
            "fulfillment",
            "Deployment",
            "order-events-consumer",
            "ScalingReplicaSet",
            f"Scaled down replica set {rs_old} to {2 - i} from {3 - i}",
            at + timedelta(seconds=11),
            api_version="apps/v1",
        )
    shipping = k.simple_deployment(
        sc,
        "fulfillment",
        "shipping-service",
        [
            k.container(
                "shipping",
                "registry.gitlab.com/brightcart/fulfillment/shipping-service:5.0.9",
                "300m",
                "512Mi",
                "1",
                "768Mi",
                [("http", 8080)],
            )
        ],
        node_names,
        3,
        created=sc.ago(days=280),
        rolled=sc.ago(days=3, hours=5),
        revision=40,
        port=8080,
    )
    notify = k.simple_deployment(
        sc,
        "fulfillment",
        "notification-service",
        [
            k.container(
                "notify",
                "registry.gitlab.com/brightcart/fulfillment/notification-service:3.1.2",
                "200m",
                "256Mi",
                "1",
                "512Mi",
                [("http", 8080)],
            )
        ],
        node_names,
        2,
        created=sc.ago(days=280),
        rolled=sc.ago(days=9),
        revision=18,
        port=8080,
    )
    orders = k.simple_deployment(
        sc,
        "storefront",
        "orders-api",
        [
            k.container(
                "orders-api",
                "registry.gitlab.com/brightcart/storefront/orders-api:12.4.0",
                "500m",
                "768Mi",
                "2",
                "1Gi",
                [("http", 8080)],
            )
        ],
        node_names,
        4,
        created=sc.ago(days=300),
        rolled=sc.ago(days=1, hours=2),
        revision=91,
        port=8080,
    )

    # ---------------- metrics ----------------
    log_start = 18_220_331  # per partition, roughly; the topic keeps 7 days
    span_backlog = PRODUCE_RATE * 7 * 86400

    def new_lag(t: datetime) -> float | None:
        if t < rolled:
            return None
        gone = (t - rolled).total_seconds()
        return max(0.0, span_backlog + PRODUCE_RATE * gone - CATCHUP_RATE * max(0.0, gone - 25))

    def old_lag(t: datetime) -> float:
        if t < rolled:
            return 180 + sc.rng.uniform(-60, 90)
        return 180 + PRODUCE_RATE * (t - rolled).total_seconds()

    lbl = {"topic": "order-events"}
    sc.metrics.gauge(
        "kafka_consumergroup_lag_sum",
        {**lbl, "consumergroup": OLD_GROUP},
        old_lag,
        help_text="Current Approximate Lag of a ConsumerGroup at Topic for all partitions",
    )
    sc.metrics.gauge("kafka_consumergroup_lag_sum", {**lbl, "consumergroup": NEW_GROUP}, new_lag)
    for part in range(PARTITIONS):
        share = sc.rng.uniform(0.93, 1.07) / PARTITIONS
        sc.metrics.gauge(
            "kafka_consumergroup_lag",
            {**lbl, "consumergroup": NEW_GROUP, "partition": str(part)},
            lambda t, s=share: None if new_lag(t) is None else round((new_lag(t) or 0) * s),
            help_text="Current Approximate Lag of a ConsumerGroup at Topic/Partition",
        )
    for group, fn in (
        (OLD_GROUP, lambda t: 0 if after(t) else 3),
        (NEW_GROUP, lambda t: 3 if after(t) else None),
    ):
        sc.metrics.gauge(
            "kafka_consumergroup_members",
            {"consumergroup": group},
            fn,
            help_text="Amount of members in a consumer group",
        )
    for part in range(PARTITIONS):
        first = log_start + sc.rng.randint(-90_000, 90_000)
        sc.metrics.gauge(
            "kafka_topic_partition_oldest_offset",
            {**lbl, "partition": str(part)},
            lambda _t, f=first: f,
            help_text="Oldest Offset of a Broker at Topic/Partition",
        )
    for b in kafka.pods:
        sc.metrics.counter(
            "kafka_server_brokertopicmetrics_bytesin",
            {"pod": b.name, "topic": "order-events"},
            k.noisy(sc, lambda _t: PRODUCE_RATE * 1900 / 3, 0.1),
            start=sc.rng.uniform(1e12, 2e12),
            help_text="Incoming byte rate",
        )
        sc.metrics.counter(
            "kafka_server_brokertopicmetrics_bytesout",
            {"pod": b.name, "topic": "order-events"},
            k.noisy(
                sc,
                lambda t: (CATCHUP_RATE if after(t) else PRODUCE_RATE * 4) * 1900 / 3,
                0.1,
            ),
            start=sc.rng.uniform(4e12, 6e12),
            help_text="Outgoing byte rate",
        )
        sc.metrics.gauge(
            "kafka_server_replicamanager_underreplicatedpartitions",
            {"pod": b.name},
            lambda _t: 0,
            help_text="Number of under-replicated partitions",
        )
    for p in consumer.pods:
        sc.metrics.counter(
            "order_events_processed",
            {"namespace": "fulfillment", "pod": p.name},
            k.noisy(sc, lambda t: CATCHUP_RATE / 3 if after(t) else 0.0, 0.05),
            start=0,
            integer=True,
            help_text="Order events processed by this consumer.",
        )
        sc.metrics.gauge(
            "order_events_last_event_age_seconds",
            {"namespace": "fulfillment", "pod": p.name},
            lambda t: (
                None
                if not after(t)
                else max(
                    1.0,
                    7 * 86400
                    - (CATCHUP_RATE - PRODUCE_RATE) * (t - rolled).total_seconds() / PRODUCE_RATE,
                )
            ),
            help_text="Age of the event most recently processed.",
        )
    for p in notify.pods:
        sc.metrics.counter(
            "notification_emails_sent",
            {"namespace": "fulfillment", "pod": p.name, "template": "order_confirmation"},
            k.noisy(sc, lambda t: 0.6 if not after(t) else 6.5, 0.1),
            start=sc.rng.randint(300_000, 400_000),
            integer=True,
            help_text="Emails sent.",
        )
    k.container_metrics(
        sc,
        "fulfillment",
        consumer.pods,
        "consumer",
        lambda t: 1.6 if after(t) else 0.2,
        610 * k.MI,
    )
    k.container_metrics(
        sc, "kafka", kafka.pods, "kafka", lambda t: 1.1 if after(t) else 0.7, 5.9 * k.GI
    )
    k.restarts_metric(sc, "kafka", kafka.pods, "kafka", 0)
    k.restarts_metric(sc, "fulfillment", consumer.pods, "consumer")

    # ---------------- logs ----------------
    def klog(t: datetime, pod: str, node: str, level: str, msg: str) -> None:
        sc.log(t, "fulfillment", pod, "consumer", "order-events-consumer", level, msg, node)

    old_nodes = node_names[:3]
    for i, old in enumerate(old_pods):
        stop = rolled + timedelta(seconds=12 * i + 11)
        for t in sc.poisson_times(start, stop, lambda _t: 2.0):
            age = sc.rng.uniform(0.3, 3.0)
            klog(
                t,
                old,
                old_nodes[i],
                "info",
                f"c.b.f.OrderEventHandler - processed {sc.rng.choice(_TYPES)} "
                f"order={_order(sc, t - timedelta(seconds=age))} "
                f"event_time={k.iso(t - timedelta(seconds=age))} partition="
                f"{sc.rng.randint(0, 11)}",
            )
        klog(
            stop,
            old,
            old_nodes[i],
            "info",
            f"o.a.k.c.c.i.ConsumerCoordinator - [Consumer clientId=consumer-{OLD_GROUP}-1, "
            f"groupId={OLD_GROUP}] Member consumer-{OLD_GROUP}-1-{sc.uid()} sending LeaveGroup "
            "request to coordinator kafka-1.kafka.kafka.svc:9092 (id: 2147483646 rack: null) "
            "due to the consumer is being closed",
        )
    for i, p in enumerate(consumer.pods):
        at = rolled + timedelta(seconds=12 * i + 9)
        cid = f"consumer-{NEW_GROUP}-1"
        klog(
            at,
            p.name,
            p.node,
            "info",
            "c.b.f.Application - Starting order-events-consumer 2.8.0 using Java 21.0.5",
        )
        klog(
            at + timedelta(seconds=3),
            p.name,
            p.node,
            "info",
            f"o.a.k.c.c.i.ConsumerCoordinator - [Consumer clientId={cid}, groupId={NEW_GROUP}] "
            "Successfully joined group with generation Generation{generationId="
            f"{i + 1}, memberId='{cid}-{sc.uid()}', protocol='range'}}",
        )
        for part in range(i * 4, i * 4 + 4):
            klog(
                at + timedelta(seconds=4),
                p.name,
                p.node,
                "info",
                f"o.a.k.c.c.i.ConsumerCoordinator - [Consumer clientId={cid}, groupId="
                f"{NEW_GROUP}] Found no committed offset for partition order-events-{part}",
            )
            klog(
                at + timedelta(seconds=4, milliseconds=30),
                p.name,
                p.node,
                "info",
                f"o.a.k.c.c.i.SubscriptionState - [Consumer clientId={cid}, groupId={NEW_GROUP}] "
                f"Resetting offset for partition order-events-{part} to position FetchPosition"
                f"{{offset={log_start + sc.rng.randint(-90_000, 90_000)}, offsetEpoch=Optional."
                "empty, currentLeader=LeaderAndEpoch{leader=Optional[kafka-"
                f"{part % 3}.kafka.kafka.svc:9092 (id: {part % 3} rack: null)], epoch=17}}}}.",
            )
        for t in sc.poisson_times(at + timedelta(seconds=5), sc.now, lambda _t: 4.0):
            replay = (
                t
                - timedelta(days=7)
                + timedelta(seconds=(CATCHUP_RATE / PRODUCE_RATE) * (t - rolled).total_seconds())
            )
            klog(
                t,
                p.name,
                p.node,
                "info",
                f"c.b.f.OrderEventHandler - processed {sc.rng.choice(_TYPES)} "
                f"order={_order(sc, replay)} event_time={k.iso(replay)} "
                f"partition={sc.rng.randint(i * 4, i * 4 + 3)}",
            )
        for t in sc.poisson_times(at + timedelta(seconds=60), sc.now, lambda _t: 0.3):
            klog(
                t,
                p.name,
                p.node,
                "warn",
                f"o.a.k.c.c.i.ConsumerCoordinator - [Consumer clientId={cid}, groupId="
                f"{NEW_GROUP}] Offset commit took {sc.rng.randint(1100, 2400)}ms for "
                f"{sc.rng.randint(900, 1800)} records",
            )
    kafka1 = kafka.pods[1]
    sc.log(
        rolled + timedelta(seconds=11),
        "kafka",
        kafka1.name,
        "kafka",
        "kafka",
        "info",
        f"[GroupCoordinator 1]: Member consumer-{OLD_GROUP}-1-{sc.uid()} in group {OLD_GROUP} "
        "has left, removing it from the group (kafka.coordinator.group.GroupCoordinator)",
        kafka1.node,
    )
    sc.log(
        rolled + timedelta(seconds=36),
        "kafka",
        kafka1.name,
        "kafka",
        "kafka",
        "info",
        f"[GroupCoordinator 1]: Group {OLD_GROUP} with generation 39 is now empty "
        "(__consumer_offsets-31) (kafka.coordinator.group.GroupCoordinator)",
        kafka1.node,
    )
    kafka2 = kafka.pods[2]
    sc.log(
        rolled + timedelta(seconds=12),
        "kafka",
        kafka2.name,
        "kafka",
        "kafka",
        "info",
        f"[GroupCoordinator 2]: Dynamic member with unknown member id joins group {NEW_GROUP} "
        "in Empty state. Created a new member id consumer-"
        f"{NEW_GROUP}-1-{sc.uid()} and request the member to rejoin with this id. "
        "(kafka.coordinator.group.GroupCoordinator)",
        kafka2.node,
    )
    sc.log(
        rolled + timedelta(seconds=15),
        "kafka",
        kafka2.name,
        "kafka",
        "kafka",
        "info",
        f"[GroupCoordinator 2]: Stabilized group {NEW_GROUP} generation 1 "
        "(__consumer_offsets-8) with 1 members (kafka.coordinator.group.GroupCoordinator)",
        kafka2.node,
    )
    for b in kafka.pods:
        for t in sc.poisson_times(start, sc.now, lambda _t: 0.5):
            part = sc.rng.randint(0, 11)
            sc.log(
                t,
                "kafka",
                b.name,
                "kafka",
                "kafka",
                "info",
                f"[LocalLog partition=order-events-{part}, dir=/bitnami/kafka/data] Rolled new "
                f"log segment at offset {log_start + sc.rng.randint(40_000_000, 48_000_000)} "
                f"in {sc.rng.randint(1, 9)} ms. (kafka.log.LocalLog)",
                b.node,
            )
        for t in sc.poisson_times(start, sc.now, lambda _t: 0.12):
            sc.log(
                t,
                "kafka",
                b.name,
                "kafka",
                "kafka",
                "warn",
                f"[SocketServer listenerType=BROKER, nodeId={b.name[-1]}] Unexpected error from "
                f"/10.42.{sc.rng.randint(1, 30)}.{sc.rng.randint(2, 250)} (channelId="
                f"{b.ip}:9092-10.42.3.7:{sc.rng.randint(30000, 60000)}-0); closing connection "
                "(org.apache.kafka.common.network.InvalidReceiveException: Invalid receive "
                "(size = 1195725856 larger than 104857600))",
                b.node,
            )
    for p in shipping.pods:
        for t in sc.poisson_times(start, sc.now, lambda _t: 1.0):
            sc.log(
                t,
                "fulfillment",
                p.name,
                "shipping",
                "shipping-service",
                "info",
                f"created shipment for order={_order(sc, t)} carrier="
                f"{sc.rng.choice(['ups', 'fedex', 'usps'])}",
                p.node,
            )
        for t in sc.poisson_times(start, sc.now, lambda t: 6.0 if after(t) else 0.0):
            replay = (
                t
                - timedelta(days=7)
                + timedelta(seconds=(CATCHUP_RATE / PRODUCE_RATE) * (t - rolled).total_seconds())
            )
            sc.log(
                t,
                "fulfillment",
                p.name,
                "shipping",
                "shipping-service",
                "warn",
                f"duplicate CreateShipment for order={_order(sc, replay)}: idempotency key "
                "already used, returning existing shipment",
                p.node,
            )
    for p in notify.pods:
        for t in sc.poisson_times(start, sc.now, lambda t: 6.0 if after(t) else 0.5):
            when = (
                t
                if not after(t)
                else t
                - timedelta(days=7)
                + timedelta(seconds=(CATCHUP_RATE / PRODUCE_RATE) * (t - rolled).total_seconds())
            )
            sc.log(
                t,
                "fulfillment",
                p.name,
                "notify",
                "notification-service",
                "info",
                f"sent order_confirmation email order={_order(sc, when)} to=***@***",
                p.node,
            )
        for t in sc.poisson_times(start, sc.now, lambda _t: 0.1):
            sc.log(
                t,
                "fulfillment",
                p.name,
                "notify",
                "notification-service",
                "warn",
                "smtp relay responded 421 4.7.0 Try again later, retrying in 5s",
                p.node,
            )
    k.background_logs(
        sc,
        "storefront",
        orders.pods,
        "orders-api",
        "orders-api",
        0.5,
        [
            ("info", "POST /v1/orders 201 {ms}ms", 8),
            ("info", "published OrderPlaced to order-events in {ms}ms", 8),
            ("warn", "payment provider latency {ms}0ms above threshold", 1),
        ],
    )
    k.background_logs(
        sc,
        "kafka",
        exporter.pods,
        "kafka-exporter",
        "kafka-exporter",
        0.1,
        [
            ("info", "Refreshing client metadata", 1),
        ],
    )

    sc.write(
        root,
        title="order-events consumer lag exploded, duplicate emails",
        report="""
big consumer lag alert on order-events since ~10:05, tens of millions of messages behind, and
customers are getting order confirmation emails for orders they placed last week (!). kafka bytes
out is through the roof, I think the brokers are struggling / rebalancing. nobody touched kafka
that I know of. what's wrong with the cluster?
""",
        category="bad_rollout",
        culprit=("Deployment", "fulfillment", "order-events-consumer"),
        evidence=[NEW_GROUP, "Found no committed offset", "kafka_consumergroup_lag_sum"],
        fix=(
            "Roll order-events-consumer back to revision 11 (2.7.3) or restore KAFKA_GROUP_ID="
            f"{OLD_GROUP}: 2.8.0 joined a new group {NEW_GROUP} with auto.offset.reset=earliest "
            "and is replaying 7 days of order-events. If keeping the new id, first reset its "
            "offsets to the old group's committed offsets. Kafka itself is healthy."
        ),
    )


_TYPES = ["OrderPlaced", "OrderPaid", "OrderPacked"]


def _order(sc: k.Scenario, when: datetime) -> str:
    return f"ORD-{when.strftime('%Y%m%d')}-{sc.rng.randint(100000, 999999)}"
