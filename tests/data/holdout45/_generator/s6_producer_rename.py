"""6. bad_rollout at the other hop: order-service 4.8.0 renamed shipping_address to delivery_address
in the OrderPlaced events it publishes; fulfillment-router (unchanged) rejects every new message."""

from datetime import timedelta

from ._kit import (
    Family,
    Scenario,
    T,
    container,
    cumulate,
    endpoints,
    event,
    hexid,
    http_probe,
    iso_ms,
    meta,
    namespace,
    node,
    noise,
    pod,
    pod_usage,
    restarts_metric,
    service,
    steps,
    suffix,
    template,
    tmpl_hash,
)

SID = "producer-field-rename-consumer-errors"

NOW = T("2026-11-19T20:45:00Z")
ROLL = T("2026-11-19T19:52:10Z")
STREETS = ["Kastanienallee", "Rue Oberkampf", "Keizersgracht", "Calle Mayor", "Via Roma"]


def build():
    sc = Scenario(
        SID,
        "fulfillment-router failing orders into the DLQ",
        NOW,
        (
            "fulfillment-router started failing orders into the DLQ around 8pm, hundreds so far "
            "and warehouse\n"
            "says no new pick lists. fulfillment hasn't deployed in over a week. kafka-2 "
            "restarted this afternoon,\n"
            "maybe the cluster is still unhealthy? please look, it's peak evening traffic.\n"
        ),
        {
            "category": "bad_rollout",
            "culprit": {"kind": "Deployment", "namespace": "orders", "name": "order-service"},
            "evidence": [
                "shipping_address\n  Field required",
                "'delivery_address'",
                "producer=order-service@4.8.0",
                "order-service 4.8.0",
                "fulfillment_messages_total",
            ],
            "fix": "Roll order-service back to 4.7.3 (revision 63), then re-publish the DLQ "
            "messages; re-ship the "
            "rename with both fields (or a new event version) after fulfillment-router reads "
            "delivery_address.",
        },
        seed=4506,
    )
    rng = sc.rng
    start = NOW - timedelta(hours=3)
    times = list(steps(start, NOW, 120))
    ncreated = T("2026-11-14T05:00:00Z")
    nodes = [
        ("ip-10-40-12-200.eu-west-1.compute.internal", "10.40.12.200", "eu-west-1a"),
        ("ip-10-40-13-14.eu-west-1.compute.internal", "10.40.13.14", "eu-west-1b"),
        ("ip-10-40-14-96.eu-west-1.compute.internal", "10.40.14.96", "eu-west-1c"),
        ("ip-10-40-13-231.eu-west-1.compute.internal", "10.40.13.231", "eu-west-1b"),
    ]
    for i, (n, ip, z) in enumerate(nodes):
        sc.add(
            node(
                n,
                ncreated + timedelta(minutes=3 * i),
                NOW,
                ip=ip,
                cpu=8,
                mem_gi=32,
                instance_type="m6i.2xlarge",
                zone=z,
                pool="general-2026a",
            )
        )
    for ns in ("orders", "fulfillment", "notifications", "kafka", "monitoring"):
        sc.add(namespace(ns, T("2025-01-15T09:00:00Z")))
    N = {i: (nodes[i][0], nodes[i][1]) for i in range(4)}

    # ---------------------------------------- orders/order-service (producer, culprit)
    os_c = [
        container(
            "order-service",
            "registry.quillmark.io/orders/order-service:4.8.0",
            cpu_req="500m",
            mem_req="768Mi",
            cpu_lim="2",
            mem_lim="1536Mi",
            ports=[("http", 8080), ("management", 8081)],
            env=[
                ("SPRING_PROFILES_ACTIVE", "prod"),
                ("KAFKA_BOOTSTRAP_SERVERS", "kafka-bootstrap.kafka.svc:9092"),
                ("ORDERS_EVENTS_TOPIC", "orders.placed.v1"),
            ],
            readiness=http_probe("/actuator/health/readiness", 8081),
            liveness=http_probe("/actuator/health/liveness", 8081, period=20, delay=45),
        )
    ]
    pcs = [ROLL + timedelta(seconds=5 + 38 * i) for i in range(3)]
    osf = Family(
        sc,
        "orders",
        "order-service",
        containers=os_c,
        replicas=3,
        placements=[
            (N[i][0], N[i][1], ip, pcs[i])
            for i, ip in enumerate(["10.40.12.17", "10.40.13.120", "10.40.14.52"])
        ],
        created=T("2025-01-15T10:00:00Z"),
        rs_created=ROLL,
        revision=64,
        old=[
            (
                63,
                {"order-service": "registry.quillmark.io/orders/order-service:4.7.3"},
                T("2026-11-11T13:20:00Z"),
            ),
            (
                62,
                {"order-service": "registry.quillmark.io/orders/order-service:4.7.2"},
                T("2026-11-04T10:02:00Z"),
            ),
        ],
        ann={
            "kubernetes.io/change-cause": (
                "order-service 4.8.0 (ORD-2291 shipping -> delivery address naming)"
            )
        },
    )
    old_hash = tmpl_hash("orders", "order-service", "63")
    sc.add(
        service(
            "order-service",
            "orders",
            created=T("2025-01-15T10:00:00Z"),
            selector={"app": "order-service"},
            ports=[("http", 80, 8080)],
            cluster_ip="172.20.30.5",
        )
    )
    sc.add(
        endpoints(
            "order-service",
            "orders",
            created=T("2025-01-15T10:00:00Z"),
            ready=[
                (p["status"]["podIP"], p["spec"]["nodeName"], p["metadata"]["name"])
                for p in osf.pods
            ],
            ports=[("http", 8080)],
        )
    )
    Family(
        sc,
        "orders",
        "checkout-web",
        containers=[
            container(
                "checkout-web",
                "registry.quillmark.io/orders/checkout-web:2026.11.18",
                cpu_req="250m",
                mem_req="256Mi",
                cpu_lim="1",
                mem_lim="512Mi",
                ports=[("http", 3000)],
            )
        ],
        replicas=2,
        placements=[
            (N[0][0], N[0][1], "10.40.12.88", T("2026-11-18T09:00:00Z")),
            (N[3][0], N[3][1], "10.40.13.250", T("2026-11-18T09:00:40Z")),
        ],
        created=T("2025-01-15T10:00:00Z"),
        rs_created=T("2026-11-18T09:00:00Z"),
        revision=88,
    )

    # ---------------------------------------- fulfillment
    fr_c = [
        container(
            "fulfillment-router",
            "registry.quillmark.io/fulfillment/fulfillment-router:2.14.1",
            cpu_req="250m",
            mem_req="384Mi",
            cpu_lim="1",
            mem_lim="768Mi",
            ports=[("metrics", 8000)],
            env=[
                ("KAFKA_BOOTSTRAP_SERVERS", "kafka-bootstrap.kafka.svc:9092"),
                ("CONSUMER_GROUP", "fulfillment-router"),
                ("INPUT_TOPIC", "orders.placed.v1"),
                ("DLQ_TOPIC", "orders.placed.v1.fulfillment-dlq"),
                ("MAX_ATTEMPTS", "3"),
            ],
        )
    ]
    frr = Family(
        sc,
        "fulfillment",
        "fulfillment-router",
        containers=fr_c,
        replicas=2,
        placements=[
            (N[1][0], N[1][1], "10.40.13.60", T("2026-11-14T05:20:00Z")),
            (N[2][0], N[2][1], "10.40.14.144", T("2026-11-14T05:21:00Z")),
        ],
        created=T("2025-02-01T10:00:00Z"),
        rs_created=T("2026-11-10T15:31:00Z"),
        revision=12,
        old=[
            (
                11,
                {
                    "fulfillment-router": (
                        "registry.quillmark.io/fulfillment/fulfillment-router:2.14.0"
                    )
                },
                T("2026-10-22T10:00:00Z"),
            )
        ],
    )
    lp_rs = T("2026-11-19T19:47:30Z")
    lpf = Family(
        sc,
        "fulfillment",
        "label-printer",
        containers=[
            container(
                "label-printer",
                "registry.quillmark.io/fulfillment/label-printer:0.31.0",
                cpu_req="100m",
                mem_req="128Mi",
                cpu_lim="500m",
                mem_lim="256Mi",
                ports=[("http", 8080)],
            )
        ],
        replicas=2,
        placements=[
            (N[3][0], N[3][1], "10.40.13.190", lp_rs + timedelta(seconds=3)),
            (N[0][0], N[0][1], "10.40.12.131", lp_rs + timedelta(seconds=31)),
        ],
        created=T("2025-02-01T10:00:00Z"),
        rs_created=lp_rs,
        revision=27,
        old=[
            (
                26,
                {"label-printer": "registry.quillmark.io/fulfillment/label-printer:0.30.2"},
                T("2026-11-06T10:00:00Z"),
            )
        ],
        ann={"kubernetes.io/change-cause": "label-printer 0.31.0: ZPL template for DHL Paket"},
    )
    em = Family(
        sc,
        "notifications",
        "order-emailer",
        containers=[
            container(
                "order-emailer",
                "registry.quillmark.io/notifications/order-emailer:1.4.9",
                cpu_req="100m",
                mem_req="256Mi",
                cpu_lim="500m",
                mem_lim="512Mi",
                env=[("INPUT_TOPIC", "orders.placed.v1"), ("CONSUMER_GROUP", "order-emailer")],
            )
        ],
        replicas=1,
        placements=[(N[3][0], N[3][1], "10.40.13.77", T("2026-11-14T05:25:00Z"))],
        created=T("2025-03-01T10:00:00Z"),
        rs_created=T("2026-10-30T10:00:00Z"),
        revision=15,
    )

    # ---------------------------------------- kafka (StatefulSet, kafka-2 restarted this afternoon)
    kl = {"app.kubernetes.io/name": "kafka", "app": "kafka"}
    kc = [
        container(
            "kafka",
            "quay.io/strimzi/kafka:0.43.0-kafka-3.8.0",
            cpu_req="2",
            mem_req="8Gi",
            cpu_lim="4",
            mem_lim="8Gi",
            ports=[("clients", 9092), ("replication", 9091), ("metrics", 9404)],
        )
    ]
    krev = "kafka-" + "5b8d7c9f6d"
    sc.add(
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": dict(
                meta("kafka", "kafka", T("2025-01-15T09:30:00Z"), kl, kind="StatefulSet"),
                generation=6,
            ),
            "spec": {
                "replicas": 3,
                "serviceName": "kafka-headless",
                "podManagementPolicy": "Parallel",
                "selector": {"matchLabels": {"app": "kafka"}},
                "updateStrategy": {"type": "RollingUpdate"},
                "template": template(kl, kc),
            },
            "status": {
                "observedGeneration": 6,
                "replicas": 3,
                "readyReplicas": 3,
                "currentReplicas": 3,
                "updatedReplicas": 3,
                "availableReplicas": 3,
                "currentRevision": krev,
                "updateRevision": krev,
                "collisionCount": 0,
            },
        }
    )
    kpods = []
    for i in range(3):
        st = {}
        if i == 2:
            st = {
                "kafka": {
                    "restartCount": 1,
                    "state": {"running": {"startedAt": "2026-11-19T14:31:52Z"}},
                    "lastState": {
                        "terminated": {
                            "exitCode": 143,
                            "reason": "Error",
                            "startedAt": "2026-11-14T05:33:10Z",
                            "finishedAt": "2026-11-19T14:31:40Z",
                        }
                    },
                }
            }
        p = pod(
            f"kafka-{i}",
            "kafka",
            node_name=N[i][0],
            host_ip=N[i][1],
            ip=f"10.40.{12 + i}.{30 + i}",
            created=T("2026-11-14T05:33:00Z") + timedelta(seconds=i),
            owner=("StatefulSet", "kafka"),
            labels=dict(
                kl,
                **{
                    "controller-revision-hash": krev,
                    "statefulset.kubernetes.io/pod-name": f"kafka-{i}",
                },
            ),
            containers=kc,
            statuses=st,
            hostname=f"kafka-{i}",
            subdomain="kafka-headless",
        )
        kpods.append(p)
        sc.add(p)
    sc.add(
        service(
            "kafka-bootstrap",
            "kafka",
            created=T("2025-01-15T09:30:00Z"),
            selector={"app": "kafka"},
            ports=[("clients", 9092, 9092)],
            cluster_ip="172.20.9.92",
        )
    )
    sc.add(
        endpoints(
            "kafka-bootstrap",
            "kafka",
            created=T("2025-01-15T09:30:00Z"),
            ready=[
                (p["status"]["podIP"], p["spec"]["nodeName"], p["metadata"]["name"]) for p in kpods
            ],
            ports=[("clients", 9092)],
        )
    )

    # ---------------------------------------- events (last hour)
    def scale_ev(ns, dep, msg, t):
        sc.add(
            event(
                ns,
                kind="Deployment",
                name=dep,
                api="apps/v1",
                reason="ScalingReplicaSet",
                message=msg,
                first=t,
                last=t,
                component="deployment-controller",
            )
        )

    scale_ev("fulfillment", "label-printer", f"Scaled up replica set {lpf.rs_name} to 1", lp_rs)
    scale_ev(
        "fulfillment",
        "label-printer",
        f"Scaled down replica set label-printer-{tmpl_hash('fulfillment', 'label-printer', '26')} "
        "to 1 from 2",
        lp_rs + timedelta(seconds=12),
    )
    scale_ev(
        "fulfillment",
        "label-printer",
        f"Scaled up replica set {lpf.rs_name} to 2 from 1",
        lp_rs + timedelta(seconds=12),
    )
    scale_ev(
        "fulfillment",
        "label-printer",
        f"Scaled down replica set label-printer-{tmpl_hash('fulfillment', 'label-printer', '26')} "
        "to 0 from 1",
        lp_rs + timedelta(seconds=40),
    )
    scale_ev("orders", "order-service", f"Scaled up replica set {osf.rs_name} to 1", ROLL)
    for k in range(1, 3):
        scale_ev(
            "orders",
            "order-service",
            f"Scaled down replica set order-service-{old_hash} to {3 - k} from {4 - k}",
            pcs[k] - timedelta(seconds=2),
        )
        scale_ev(
            "orders",
            "order-service",
            f"Scaled up replica set {osf.rs_name} to {k + 1} from {k}",
            pcs[k] - timedelta(seconds=2),
        )
    scale_ev(
        "orders",
        "order-service",
        f"Scaled down replica set order-service-{old_hash} to 0 from 1",
        pcs[2] + timedelta(seconds=36),
    )
    for i, p in enumerate(osf.pods):
        sc.add(
            event(
                "orders",
                kind="Pod",
                name=p["metadata"]["name"],
                reason="Pulled",
                message=(
                    'Successfully pulled image "registry.quillmark.io/orders/order-service:4.8.0" '
                    "in 2.114s (2.114s including waiting). Image size: 201338770 bytes."
                ),
                first=pcs[i] + timedelta(seconds=3),
                last=pcs[i] + timedelta(seconds=3),
                host=p["spec"]["nodeName"],
                field_path="spec.containers{order-service}",
            )
        )
        sc.add(
            event(
                "orders",
                kind="Pod",
                name=p["metadata"]["name"],
                reason="Unhealthy",
                message=(
                    'Readiness probe failed: Get "http://{}:8081/actuator/health/readiness": dial '
                    "tcp {}:8081: connect: connection refused"
                ).format(p["status"]["podIP"], p["status"]["podIP"]),
                first=pcs[i] + timedelta(seconds=8),
                last=pcs[i] + timedelta(seconds=18),
                count=2,
                type_="Warning",
                host=p["spec"]["nodeName"],
                field_path="spec.containers{order-service}",
            )
        )

    # ---------------------------------------- logs
    def jl(p, t, level, msg, svc, **kw):
        sc.log(
            t,
            ns=p["metadata"]["namespace"],
            pod=p["metadata"]["name"],
            container=p["spec"]["containers"][0]["name"],
            service=svc,
            level=level,
            message=msg,
            **kw,
        )

    # which producer pods exist when: old (4.7.3) pods until replaced, then 4.8.0
    old_names = [
        f"order-service-{old_hash}-{suffix('orders', 'order-service', '63', str(i))}"
        for i in range(3)
    ]
    old_end = [
        pcs[0] + timedelta(seconds=36),
        pcs[1] + timedelta(seconds=36),
        pcs[2] + timedelta(seconds=36),
    ]
    new_ready = [pc + timedelta(seconds=25) for pc in pcs]

    def producer_at(t):
        alive = [("4.7.3", old_names[i]) for i in range(3) if t < old_end[i]]
        alive += [("4.8.0", osf.pods[i]["metadata"]["name"]) for i in range(3) if t >= new_ready[i]]
        return alive

    offs = {p: 8_811_000 + 1377 * p for p in range(6)}
    fr_lines = {p["metadata"]["name"]: [] for p in frr.pods}
    emailer = em.pods[0]
    per_min = {}
    for t in steps(start, NOW, 4):
        tt = t + timedelta(seconds=rng.uniform(0, 3.9))
        if tt > NOW:
            continue
        rate = 0.06 + 0.03 * (tt - start).total_seconds() / (3 * 3600)
        if rng.random() > rate * 4:
            continue
        alive = producer_at(tt)
        ver, prod_pod = alive[rng.randrange(len(alive))]
        part = rng.randrange(6)
        offs[part] += 1
        oid = "ord_" + hexid("ord", iso_ms(tt), n=12)
        cid = "cus_" + hexid("cus", oid, n=10)
        consumer = frr.pods[part % 2]
        ctime = tt + timedelta(milliseconds=rng.randint(20, 300))
        key = (prod_pod, tt.replace(second=0, microsecond=0))
        per_min[key] = per_min.get(key, 0) + 1
        if ver == "4.7.3":
            per_min[
                (consumer["metadata"]["name"], "ok", ctime.replace(second=0, microsecond=0))
            ] = (
                per_min.get(
                    (consumer["metadata"]["name"], "ok", ctime.replace(second=0, microsecond=0)), 0
                )
                + 1
            )
            continue
        payload = (
            f"{{'order_id': '{oid}', 'customer_id': '{cid}', 'delivery_address': {{'line1': "
            f"'{rng.randint(1, 180)} "
            f"{rng.choice(STREETS)}"
            f"', 'postcode': '{rng.randint(10000, 99999)}', "
            f"'country': '{rng.choice(['DE', 'FR', 'NL', 'ES', 'IT'])}'}}, 'lines': [{{'sku': "
            f"'SKU-{rng.randint(10000, 99999)}', 'qty': {rng.randint(1, 4)}}}], "
            f"'currency': 'EUR', 'total': {rng.randint(900, 25000) / 100}, 'placed_at': "
            f"'{iso_ms(tt)}'}}"
        )
        msg = (
            f"failed to handle message topic=orders.placed.v1 partition={part} "
            f"offset={offs[part]} key={oid} "
            f"producer=order-service@4.8.0 attempt=3/3, sent to orders.placed.v1.fulfillment-dlq: "
            "1 validation error for OrderPlaced\nshipping_address\n  Field required "
            f"[type=missing, input_value={payload}, input_type=dict]\n"
            f"    For further information visit https://errors.pydantic.dev/2.9/v/missing"
        )
        jl(
            consumer,
            ctime,
            "error",
            msg,
            "fulfillment-router",
            error__type="pydantic_core._pydantic_core.ValidationError",
        )
        fr_lines[consumer["metadata"]["name"]].append(
            f"{iso_ms(ctime)} ERROR fulfillment_router.consumer: {msg}"
        )
        per_min[(consumer["metadata"]["name"], "fail", ctime.replace(second=0, microsecond=0))] = (
            per_min.get(
                (consumer["metadata"]["name"], "fail", ctime.replace(second=0, microsecond=0)), 0
            )
            + 1
        )
    # per-minute summaries
    for t in steps(start, NOW, 60):
        for p in frr.pods:
            pn = p["metadata"]["name"]
            ok = per_min.get((pn, "ok", t), 0)
            bad = per_min.get((pn, "fail", t), 0)
            line = (
                f"processed {ok + bad} messages from orders.placed.v1 in the last 60s ({ok} ok, "
                f"{bad} failed)"
            )
            jl(
                p,
                t + timedelta(seconds=59),
                "info" if not bad else "warning",
                line,
                "fulfillment-router",
            )
            fr_lines[pn].append(
                f"{iso_ms(t + timedelta(seconds=59))} {'INFO' if not bad else 'WARNING'} "
                f"fulfillment_router.stats: {line}"
            )
        for _ver, pname in [("4.7.3", n) for n in old_names] + [
            ("4.8.0", p["metadata"]["name"]) for p in osf.pods
        ]:
            c = per_min.get((pname, t), 0)
            if c:
                sc.log(
                    t + timedelta(seconds=59, milliseconds=500),
                    ns="orders",
                    pod=pname,
                    container="order-service",
                    service="order-service",
                    level="INFO",
                    message=(
                        f"c.q.orders.outbox.OutboxRelay : published {c} OrderPlaced events to "
                        "orders.placed.v1 (outbox lag 0)"
                    ),
                )
        jl(
            emailer,
            t + timedelta(seconds=58),
            "info",
            f"sent {sum(v for k, v in per_min.items() if len(k) == 3 and k[2] == t)} order "
            "confirmation emails",
            "order-emailer",
        )
    for i, p in enumerate(osf.pods):
        t0 = pcs[i] + timedelta(seconds=4)
        for j, m in enumerate(
            [
                "Starting OrderServiceApplication v4.8.0 using Java 21.0.5 with PID 1",
                "Kafka version: 3.8.0",
                "Started OrderServiceApplication in 17.92 seconds (process running for 19.3)",
            ]
        ):
            sc.log(
                t0 + timedelta(seconds=[0, 9, 18][j]),
                ns="orders",
                pod=p["metadata"]["name"],
                container="order-service",
                service="order-service",
                level="INFO",
                message=f"c.q.orders.OrderServiceApplication : {m}",
            )
        sc.pod_log(
            "orders",
            p["metadata"]["name"],
            "order-service",
            [
                (
                    f"{iso_ms(t0 + timedelta(seconds=[0, 9, 18][j]))}  INFO 1 --- [           "
                    f"main] c.q.orders.OrderServiceApplication       : {m}"
                )
                for j, m in enumerate(
                    [
                        "Starting OrderServiceApplication v4.8.0 using Java 21.0.5 with PID 1",
                        "Kafka version: 3.8.0",
                        (
                            "Started OrderServiceApplication in 17.92 seconds (process running "
                            "for 19.3)"
                        ),
                    ]
                )
            ],
        )
    for pn, lines in fr_lines.items():
        sc.pod_log("fulfillment", pn, "fulfillment-router", sorted(lines)[-160:])
    # kafka-2's restart this afternoon (outside the window), and its recovery chatter
    for t in steps(start, NOW, 600):
        jl(
            kpods[rng.randrange(3)],
            t,
            "INFO",
            f"[GroupCoordinator {rng.randrange(3)}]: Preparing to rebalance group label-printer "
            "in state PreparingRebalance"
            if abs((t - lp_rs).total_seconds()) < 300
            else (
                "[LogCleaner]: Log cleaner thread 0 cleaned log "
                f"__consumer_offsets-{rng.randint(0, 49)} (dirty section = "
                f"[{rng.randint(10**6, 10**7)}, {rng.randint(10**7, 2 * 10**7)}])"
            ),
            "kafka",
        )
    jl(
        kpods[2],
        start + timedelta(minutes=3),
        "WARN",
        "[ReplicaFetcher replicaId=2, leaderId=0, fetcherId=0] Partition orders.placed.v1-4 has "
        "an older epoch (41) than the current leader. Will await the new LeaderAndIsr state "
        "before resuming fetching.",
        "kafka",
    )

    # ---------------------------------------- metrics
    def cum_from(key_fn):
        pts = []
        v = 0
        for t in times:
            v += sum(c for k, c in per_min.items() if key_fn(k, t))
            pts.append((t, v))
        return pts

    for p in frr.pods:
        pn = p["metadata"]["name"]
        for res in ("ok", "fail"):
            pts = cum_from(
                lambda k, t, pn=pn, res=res: (
                    len(k) == 3
                    and k[0] == pn
                    and k[1] == res
                    and t - timedelta(seconds=120) <= k[2] < t
                )
            )
            base = {"ok": 91_204 + 311 * (pn == frr.pods[1]["metadata"]["name"]), "fail": 4}[res]
            sc.metrics.counter(
                "fulfillment_messages",
                "Messages handled by fulfillment-router, by result.",
                {
                    "namespace": "fulfillment",
                    "pod": pn,
                    "topic": "orders.placed.v1",
                    "result": "ok" if res == "ok" else "dead_lettered",
                },
                [(t, v + base) for t, v in pts],
            )
    dlq = cum_from(
        lambda k, t: len(k) == 3 and k[1] == "fail" and t - timedelta(seconds=120) <= k[2] < t
    )
    sc.metrics.gauge(
        "kafka_topic_partition_current_offset_sum",
        "Current offset of the topic, summed over partitions (kafka-exporter recording rule).",
        {"topic": "orders.placed.v1.fulfillment-dlq"},
        [(t, 1_204 + v) for t, v in dlq],
    )
    for grp in ("fulfillment-router", "order-emailer"):
        sc.metrics.gauge(
            "kafka_consumergroup_lag_sum",
            "Current Approximate Lag of a ConsumerGroup at Topic for all partitions",
            {"consumergroup": grp, "topic": "orders.placed.v1"},
            [(t, rng.randint(0, 12)) for t in times],
        )
    for b in range(3):
        sc.metrics.gauge(
            "kafka_server_replicamanager_underreplicatedpartitions",
            "Number of under-replicated partitions",
            {"namespace": "kafka", "pod": f"kafka-{b}"},
            [(t, 0) for t in times],
        )
    # producer http side: healthy before and after
    prod_series = [(old_names[i], start, old_end[i]) for i in range(3)] + [
        (osf.pods[i]["metadata"]["name"], pcs[i], NOW) for i in range(3)
    ]
    for pn, a, b in prod_series:
        ts = [t for t in times if a <= t <= b]
        lab = {
            "namespace": "orders",
            "pod": pn,
            "job": "order-service",
            "uri": "/v1/orders",
            "method": "POST",
        }
        sc.metrics.counter(
            "http_requests",
            "Total HTTP requests handled.",
            dict(lab, status="201", outcome="SUCCESS"),
            cumulate(ts, lambda t: noise(rng, 0.09), start_value=0 if a > start else 52_000),
        )
        sc.metrics.counter(
            "http_requests",
            "Total HTTP requests handled.",
            dict(lab, status="500", outcome="SERVER_ERROR"),
            cumulate(ts, lambda t: 0.0003, start_value=0 if a > start else 9),
        )
    for p in frr.pods:
        pod_usage(
            sc,
            p,
            "fulfillment-router",
            times,
            lambda t: noise(rng, 0.08),
            lambda t: noise(rng, 2.6e8, 0.03),
        )
        restarts_metric(sc, p, "fulfillment-router", times)
    restarts_metric(sc, kpods[2], "kafka", times, lambda t: 1)
    return sc
