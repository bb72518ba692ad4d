"""5. resource_exhaustion at the other hop: the RabbitMQ StatefulSet's data volumes fill up
(a 14-day replay queue on 20Gi volumes), the broker raises its disk alarm and blocks every
publisher; producers in orders and shipping fail. The culprit is the broker's StatefulSet."""

from __future__ import annotations

from datetime import timedelta

from . import _kit as k

SID = "rabbitmq-disk-alarm-publishers-blocked"

RMQ = "docker.io/library/rabbitmq:3.12.10-management"
REG = "registry.gitlab.com/tidewater/platform"
CAP = 21474836480
LIMIT = 2000000000


def build(root) -> None:
    s = k.Scenario(SID, "2026-12-05T11:30:00Z", 4605)
    for ns in ("default", "kube-system", "messaging", "orders", "shipping", "notify"):
        s.add(k.namespace(s, ns, s.ago(days=600)))
    nodes = []
    for i, zone in enumerate(
        ["eu-north-1a", "eu-north-1b", "eu-north-1c", "eu-north-1a", "eu-north-1b"]
    ):
        ip = f"10.70.{(i % 3) * 32 + 5}.{100 + i * 11}"
        nodes.append(
            k.node(
                s,
                f"ip-{ip.replace('.', '-')}.eu-north-1.compute.internal",
                s.ago(days=30 + i),
                zone,
                "m7i.xlarge",
                internal_ip=ip,
                extra_labels={"karpenter.sh/nodepool": "default"},
            )
        )
    s.add(*nodes)
    nn = [n["metadata"]["name"] for n in nodes]

    ns = "messaging"
    labels = {"app.kubernetes.io/name": "rabbitmq", "app.kubernetes.io/instance": "rabbitmq"}
    rc = k.container(
        "rabbitmq",
        RMQ,
        ports=[
            {"name": "amqp", "containerPort": 5672, "protocol": "TCP"},
            {"name": "management", "containerPort": 15672, "protocol": "TCP"},
            {"name": "prometheus", "containerPort": 15692, "protocol": "TCP"},
            {"name": "epmd", "containerPort": 4369, "protocol": "TCP"},
            {"name": "dist", "containerPort": 25672, "protocol": "TCP"},
        ],
        cpu="1",
        memory="2Gi",
        limit_memory="2Gi",
        env=[
            {"name": "RABBITMQ_USE_LONGNAME", "value": "true"},
            {
                "name": "MY_POD_NAME",
                "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}},
            },
            {
                "name": "RABBITMQ_NODENAME",
                "value": "rabbit@$(MY_POD_NAME).rabbitmq-nodes.messaging",
            },
        ],
        readiness={
            "exec": {"command": ["rabbitmq-diagnostics", "-q", "check_port_connectivity"]},
            "initialDelaySeconds": 10,
            "periodSeconds": 30,
            "timeoutSeconds": 20,
            "successThreshold": 1,
            "failureThreshold": 3,
        },
        liveness={
            "exec": {"command": ["rabbitmq-diagnostics", "-q", "status"]},
            "initialDelaySeconds": 120,
            "periodSeconds": 60,
            "timeoutSeconds": 20,
            "successThreshold": 1,
            "failureThreshold": 3,
        },
        mounts=[
            {"name": "data", "mountPath": "/var/lib/rabbitmq/mnesia"},
            {"name": "config", "mountPath": "/etc/rabbitmq/conf.d"},
        ],
    )
    spec = k.pod_spec(
        [rc],
        sa="rabbitmq",
        volumes=[{"name": "config", "configMap": {"name": "rabbitmq-config", "defaultMode": 420}}],
        grace=604800,
    )
    sts_created = s.ago(days=540)
    rev = "rabbitmq-8c5d7f9b4"
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": k.meta(s, "StatefulSet", "rabbitmq", ns, sts_created, labels=labels),
        "spec": {
            "replicas": 3,
            "serviceName": "rabbitmq-nodes",
            "podManagementPolicy": "OrderedReady",
            "selector": {"matchLabels": labels},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {"metadata": {"labels": labels}, "spec": spec},
            "volumeClaimTemplates": [
                {
                    "apiVersion": "v1",
                    "kind": "PersistentVolumeClaim",
                    "metadata": {"name": "data"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "storageClassName": "gp3",
                        "volumeMode": "Filesystem",
                        "resources": {"requests": {"storage": "20Gi"}},
                    },
                }
            ],
        },
        "status": {
            "replicas": 3,
            "readyReplicas": 3,
            "currentReplicas": 3,
            "updatedReplicas": 3,
            "availableReplicas": 3,
            "currentRevision": rev,
            "updateRevision": rev,
            "observedGeneration": 9,
            "collisionCount": 0,
        },
    }
    s.add(sts)
    alarm_at = {
        0: s.ago(minutes=38, seconds=13),
        2: s.ago(minutes=31, seconds=40),
        1: s.ago(minutes=26, seconds=2),
    }
    rpods = []
    for i in range(3):
        pc = s.ago(days=4, hours=20 - i)
        restarts, last = 0, None
        started = pc + timedelta(seconds=6)
        if i == 2:
            restarts = 1
            fin = s.ago(days=3, hours=22)
            last = k.terminated("Error", 137, started, fin, "rmq2")
            started = fin + timedelta(seconds=3)
        st = k.cs_running(
            "rabbitmq",
            RMQ,
            "docker.io/library/rabbitmq@" + s.digest(RMQ),
            started,
            True,
            restarts,
            last,
        )
        p = k.pod(
            s,
            ns,
            f"rabbitmq-{i}",
            k.owner_of(sts),
            dict(
                labels,
                **{
                    "controller-revision-hash": rev,
                    "statefulset.kubernetes.io/pod-name": f"rabbitmq-{i}",
                    "apps.kubernetes.io/pod-index": str(i),
                },
            ),
            dict(
                spec,
                hostname=f"rabbitmq-{i}",
                subdomain="rabbitmq-nodes",
                volumes=[
                    {"name": "data", "persistentVolumeClaim": {"claimName": f"data-rabbitmq-{i}"}}
                ]
                + spec["volumes"],
            ),
            nn[i],
            nodes[i]["status"]["addresses"][0]["address"],
            pc,
            "Running",
            k.pod_conditions(pc, ready_at=started + timedelta(seconds=40)),
            [st],
        )
        rpods.append(p)
        s.add(
            p,
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": k.meta(
                    s,
                    "PersistentVolumeClaim",
                    f"data-rabbitmq-{i}",
                    ns,
                    sts_created,
                    labels=labels,
                    annotations={
                        "pv.kubernetes.io/bind-completed": "yes",
                        "volume.kubernetes.io/storage-provisioner": "ebs.csi.aws.com",
                    },
                ),
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": "gp3",
                    "volumeMode": "Filesystem",
                    "resources": {"requests": {"storage": "20Gi"}},
                    "volumeName": f"pvc-{s.uid('pv', str(i))}",
                },
                "status": {
                    "phase": "Bound",
                    "accessModes": ["ReadWriteOnce"],
                    "capacity": {"storage": "20Gi"},
                },
            },
        )
    s.add(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": k.meta(s, "StorageClass", "gp3", None, s.ago(days=600)),
            "provisioner": "ebs.csi.aws.com",
            "parameters": {"type": "gp3", "fsType": "ext4"},
            "reclaimPolicy": "Retain",
            "allowVolumeExpansion": True,
            "volumeBindingMode": "WaitForFirstConsumer",
        }
    )
    svc = k.service(
        s,
        ns,
        "rabbitmq",
        labels,
        [
            {"name": "amqp", "port": 5672, "protocol": "TCP", "targetPort": 5672},
            {"name": "management", "port": 15672, "protocol": "TCP", "targetPort": 15672},
        ],
        sts_created,
        labels=labels,
    )
    hsvc = k.service(
        s,
        ns,
        "rabbitmq-nodes",
        labels,
        [
            {"name": "epmd", "port": 4369, "protocol": "TCP", "targetPort": 4369},
            {"name": "dist", "port": 25672, "protocol": "TCP", "targetPort": 25672},
        ],
        sts_created,
        labels=labels,
        headless=True,
    )
    s.add(svc, k.endpoints(s, svc, rpods), hsvc, k.endpoints(s, hsvc, rpods))
    s.add(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": k.meta(s, "ConfigMap", "rabbitmq-config", ns, sts_created, labels=labels),
            "data": {
                "10-defaults.conf": "cluster_formation.peer_discovery_backend = "
                "rabbit_peer_discovery_k8s\n"
                "cluster_formation.k8s.host = kubernetes.default\n"
                "queue_master_locator = min-masters\n"
                "disk_free_limit.absolute = 2GB\n"
                "vm_memory_high_watermark.relative = 0.6\n",
                "definitions-policies.json": '{"policies":[{"vhost":"/","name":"replay-retention",'
                '"pattern":"^replay\\\\.",'
                '"apply-to":"queues","definition":{"message-ttl":1209600000,'
                '"queue-mode":"lazy"},"priority":5},{"vhost":"/","name":"ha-default",'
                '"pattern":".*","apply-to":"queues","definition":{"ha-mode":"exactly",'
                '"ha-params":2,"ha-sync-mode":"automatic"},"priority":0}]}\n',
            },
        }
    )

    # --- rabbitmq logs ---------------------------------------------------------------------------
    for i, p in enumerate(rpods):
        pn = p["metadata"]["name"]
        node = f"rabbit@rabbitmq-{i}.rabbitmq-nodes.messaging"
        t = s.ago(hours=3)
        while t < s.now:
            s.log(
                t,
                ns,
                pn,
                "rabbitmq",
                "info",
                f"{t.strftime('%Y-%m-%d %H:%M:%S')}.{s.rng.randint(100000, 999999)}+00:00 [info] "
                f"<0.{s.rng.randint(2000, 9000)}.0> "
                f"accepting AMQP connection <0.{s.rng.randint(2000, 9000)}.0> "
                f"(10.244.{s.rng.randint(1, 9)}.{s.rng.randint(2, 250)}:"
                f"{s.rng.randint(30000, 60000)} -> 10.244.{i + 1}.7:5672)",
                service="rabbitmq",
            )
            t += timedelta(minutes=s.rng.randint(6, 14))
        a = alarm_at[i]
        free = LIMIT - s.rng.randint(900000, 3000000)
        stamp = a.strftime("%Y-%m-%d %H:%M:%S")
        for off, line in [
            (
                0,
                f"{stamp}.314502+00:00 [warning] <0.496.0> Free disk space is insufficient. Free "
                f"bytes: {free}. Limit: {LIMIT}",
            ),
            (
                0,
                f"{stamp}.314879+00:00 [warning] <0.492.0> disk resource limit alarm set on node "
                f"'{node}'.",
            ),
            (0, f"{stamp}.314879+00:00 [warning] <0.492.0> "),
            (
                0,
                f"{stamp}.314879+00:00 [warning] <0.492.0> "
                "**********************************************************",
            ),
            (
                0,
                f"{stamp}.314879+00:00 [warning] <0.492.0> *** Publishers will be blocked until "
                "this alarm clears ***",
            ),
            (
                0,
                f"{stamp}.314879+00:00 [warning] <0.492.0> "
                "**********************************************************",
            ),
            (0, f"{stamp}.314879+00:00 [warning] <0.492.0> "),
        ]:
            s.log(
                a + timedelta(seconds=off), ns, pn, "rabbitmq", "warning", line, service="rabbitmq"
            )
        s.pod_log(
            ns,
            pn,
            "rabbitmq",
            [
                (
                    f"{s.ago(days=4, hours=20 - i).strftime('%Y-%m-%d %H:%M:%S')}.118210+00:00 "
                    "[notice] <0.44.0> Application syslog exited with reason: stopped"
                ),
                (
                    f"{s.ago(days=4, hours=20 - i).strftime('%Y-%m-%d %H:%M:%S')}.402117+00:00 "
                    f"[info] <0.229.0>  node           : {node}"
                ),
                (
                    f"{s.ago(days=4, hours=20 - i).strftime('%Y-%m-%d %H:%M:%S')}.402117+00:00 "
                    f"[info] <0.229.0>  database dir   : /var/lib/rabbitmq/mnesia/{node}"
                ),
                (
                    f"{s.ago(days=4, hours=20 - i).strftime('%Y-%m-%d %H:%M:%S')}.512004+00:00 "
                    "[info] <0.496.0> Enabling free disk space monitoring (disk free space: "
                    "9214451712, total memory: 16221372416)"
                ),
                (
                    f"{s.ago(days=4, hours=20 - i).strftime('%Y-%m-%d %H:%M:%S')}.512119+00:00 "
                    "[info] <0.496.0> Disk free limit set to 2000MB"
                ),
                (
                    f"{stamp}.314502+00:00 [warning] <0.496.0> Free disk space is insufficient. "
                    f"Free bytes: {free}. Limit: {LIMIT}"
                ),
                (
                    f"{stamp}.314879+00:00 [warning] <0.492.0> disk resource limit alarm set on "
                    f"node '{node}'."
                ),
                f"{stamp}.314879+00:00 [warning] <0.492.0> ",
                (
                    f"{stamp}.314879+00:00 [warning] <0.492.0> "
                    "**********************************************************"
                ),
                (
                    f"{stamp}.314879+00:00 [warning] <0.492.0> *** Publishers will be blocked "
                    "until this alarm clears ***"
                ),
                (
                    f"{stamp}.314879+00:00 [warning] <0.492.0> "
                    "**********************************************************"
                ),
            ],
        )
    first_alarm = alarm_at[0]

    # --- producers and consumers ------------------------------------------------------------------
    osvc = k.healthy_deployment(
        s,
        "orders",
        "order-service",
        f"{REG}/order-service:3.31.0",
        3,
        nodes[2:],
        s.ago(days=400),
        s.ago(hours=2, minutes=12),
        revision=118,
        cpu="250m",
        memory="384Mi",
        env=[
            {"name": "AMQP_URL", "value": "amqp://orders@rabbitmq.messaging.svc:5672/"},
            {"name": "PUBLISH_TIMEOUT", "value": "5s"},
        ],
    )
    k.add_parts(s, osvc)
    s.add(
        k.event(
            s,
            "orders",
            "Deployment",
            "order-service",
            "ScalingReplicaSet",
            "Scaled down replica set order-service-6f8b9c7d5 to 0 from 1",
            s.ago(minutes=59),
            component="deployment-controller",
            api_version="apps/v1",
            involved_uid=osvc["deployment"]["metadata"]["uid"],
        )
    )
    label = k.healthy_deployment(
        s,
        "shipping",
        "label-service",
        f"{REG}/label-service:1.8.4",
        2,
        nodes[:2],
        s.ago(days=300),
        s.ago(days=5),
        revision=26,
        memory="256Mi",
        env=[
            {"name": "AMQP_URL", "value": "amqp://shipping@rabbitmq.messaging.svc:5672/%2f"},
            {"name": "AMQP_BLOCKED_CONNECTION_TIMEOUT", "value": "120"},
        ],
    )
    k.add_parts(s, label)
    disp = k.healthy_deployment(
        s,
        "notify",
        "email-dispatcher",
        f"{REG}/email-dispatcher:0.22.1",
        2,
        nodes[3:],
        s.ago(days=250),
        s.ago(days=6),
        revision=14,
        memory="192Mi",
    )
    k.add_parts(s, disp)
    # orders: HTTP + publish logs
    t = s.ago(hours=3)
    i = 0
    while t < s.now:
        p = osvc["pods"][i % 3]
        pn = p["metadata"]["name"]
        oid = f"ord_{s.suffix(12)}"
        if t < first_alarm:
            s.log(
                t,
                "orders",
                pn,
                "order-service",
                "info",
                f'{{"level":"info","msg":"order created","order_id":"{oid}","published":"order.cre'
                f'ated","took_ms":{s.rng.randint(9, 40)}}}',
                service="order-service",
            )
        else:
            s.log(
                t,
                "orders",
                pn,
                "order-service",
                "error",
                f'{{"level":"error","msg":"publish order.created '
                f'failed","order_id":"{oid}","exchange":"orders.events",'
                f'"error":"context deadline exceeded","timeout":"5s"}}',
                service="order-service",
                **{"error.type": "context.DeadlineExceeded"},
            )
            s.log(
                t + timedelta(milliseconds=5004),
                "orders",
                pn,
                "order-service",
                "info",
                "POST /v1/orders 503 5004ms",
                service="order-service",
                **{"http.response.status_code": 503},
            )
        t += timedelta(seconds=s.rng.randint(15, 40))
        i += 1
    for j, p in enumerate(osvc["pods"]):
        s.log(
            first_alarm + timedelta(milliseconds=240 + j * 31),
            "orders",
            p["metadata"]["name"],
            "order-service",
            "warn",
            '{"level":"warn","msg":"rabbitmq connection blocked by broker","reason":"low on disk"}',
            service="order-service",
        )
    # shipping: pika
    t = s.ago(hours=3)
    i = 0
    while t < s.now:
        p = label["pods"][i % 2]
        pn = p["metadata"]["name"]
        if t < first_alarm:
            s.log(
                t,
                "shipping",
                pn,
                "label-service",
                "info",
                "INFO label_service.publisher: published shipping.label.requested "
                f"shipment=SHP{s.rng.randint(100000, 999999)}",
                service="label-service",
            )
        elif t > first_alarm + timedelta(seconds=120):
            s.log(
                t,
                "shipping",
                pn,
                "label-service",
                "error",
                "ERROR label_service.publisher: publish shipping.label.requested failed: "
                "pika.exceptions.ConnectionBlockedTimeout: Blocked connection timeout expired.",
                service="label-service",
                **{"error.type": "pika.exceptions.ConnectionBlockedTimeout"},
            )
        t += timedelta(seconds=s.rng.randint(30, 75))
        i += 1
    for p in label["pods"]:
        s.log(
            first_alarm + timedelta(milliseconds=410),
            "shipping",
            p["metadata"]["name"],
            "label-service",
            "warning",
            "WARNING label_service.amqp: connection blocked by broker: "
            "<METHOD(['channel_number=0', 'frame_type=1', "
            "\"method=<Connection.Blocked(['reason=low on disk'])>\"])>",
            service="label-service",
        )
    t = s.ago(hours=3)
    while t < s.now:
        p = disp["pods"][0]
        n = s.rng.randint(8, 30) if t < first_alarm else 0
        s.log(
            t,
            "notify",
            p["metadata"]["name"],
            "email-dispatcher",
            "info",
            f"consumer tick queue=notify.email delivered={n} acked={n}",
            service="email-dispatcher",
        )
        t += timedelta(minutes=2)

    # --- metrics ----------------------------------------------------------------------------------
    pts = s.steps(360, 120)
    for i in range(3):
        a = alarm_at[i]
        start_free = 6.2e9 + i * 1.5e8
        rate = (start_free - (LIMIT - 1.5e6)) / (a - pts[0]).total_seconds()
        av = []
        for t in pts:
            v = start_free - rate * (t - pts[0]).total_seconds()
            v = max(v, LIMIT - 4e6)
            av.append(
                (
                    t,
                    int(
                        v + s.rng.randint(-3_000_000, 3_000_000)
                        if t < a
                        else LIMIT - s.rng.randint(1_500_000, 4_000_000)
                    ),
                )
            )
        lab = {"job": "kubelet", "namespace": ns, "persistentvolumeclaim": f"data-rabbitmq-{i}"}
        s.series(
            "kubelet_volume_stats_available_bytes",
            "gauge",
            "Number of available bytes in the volume",
            lab,
            av,
        )
        s.series(
            "kubelet_volume_stats_capacity_bytes",
            "gauge",
            "Capacity in bytes of the volume",
            lab,
            [(t, CAP) for t in pts],
        )
        s.series(
            "kubelet_volume_stats_used_bytes",
            "gauge",
            "Number of used bytes in the volume",
            lab,
            [(t, CAP - 1_100_000_000 - v) for t, v in av],
        )
        s.series(
            "rabbitmq_disk_space_available_bytes",
            "gauge",
            "Disk space available in bytes",
            {
                "job": "rabbitmq",
                "namespace": ns,
                "pod": f"rabbitmq-{i}",
                "instance": f"10.244.{i + 1}.7:15692",
            },
            av,
        )
        s.series(
            "rabbitmq_disk_space_available_limit_bytes",
            "gauge",
            "Free disk space low watermark in bytes",
            {
                "job": "rabbitmq",
                "namespace": ns,
                "pod": f"rabbitmq-{i}",
                "instance": f"10.244.{i + 1}.7:15692",
            },
            [(t, LIMIT) for t in pts],
        )
        s.series(
            "rabbitmq_alarms_free_disk_space_watermark",
            "gauge",
            "is 1 if free disk space watermark alarm is in effect",
            {
                "job": "rabbitmq",
                "namespace": ns,
                "pod": f"rabbitmq-{i}",
                "instance": f"10.244.{i + 1}.7:15692",
            },
            [(t, 1 if t >= a else 0) for t in pts],
        )
    for q, base, growth in (
        ("replay.orders.events", 41_200_000, 3100),
        ("shipping.label.requests", 120, 0),
        ("notify.email", 40, 0),
    ):
        vals = []
        for t in pts:
            el = (t - pts[0]).total_seconds()
            if t < first_alarm:
                v = base + growth * el / 60 + s.rng.randint(0, 50)
            else:
                v = base + growth * (first_alarm - pts[0]).total_seconds() / 60
            vals.append((t, int(v)))
        s.series(
            "rabbitmq_queue_messages",
            "gauge",
            "Sum of ready and unacknowledged messages",
            {"job": "rabbitmq", "namespace": ns, "vhost": "/", "queue": q},
            vals,
        )
    for p in osvc["pods"]:
        ok, bad = 0, 0
        ov, bv = [], []
        for t in pts:
            if t < first_alarm:
                ok += s.rng.randint(80, 120)
            else:
                bad += s.rng.randint(25, 40)
            ov.append((t, ok))
            bv.append((t, bad))
        lab = {
            "job": "order-service",
            "namespace": "orders",
            "pod": p["metadata"]["name"],
            "exchange": "orders.events",
        }
        s.series("amqp_publish_total", "counter", "Messages published.", dict(lab, result="ok"), ov)
        s.series("amqp_publish_total", "counter", "", dict(lab, result="error"), bv)

    s.write(
        root,
        {
            "title": "Orders failing to publish, checkout returning 503",
            "report": "since ~10:50 order-service returns 503 on POST /v1/orders and "
            "label-service in shipping can't "
            "publish either. order-service got 3.31.0 this morning, I suspect that rollout. "
            "rabbit pods look "
            "green in the console.\n",
            "truth": {
                "category": "resource_exhaustion",
                "culprit": {"kind": "StatefulSet", "namespace": "messaging", "name": "rabbitmq"},
                "evidence": [
                    "disk resource limit alarm set",
                    "Publishers will be blocked until this alarm clears",
                    "Free disk space is insufficient",
                    "low on disk",
                    "kubelet_volume_stats_available_bytes",
                ],
                "fix": "The broker's 20Gi data volumes are full (the 14-day replay.orders.events "
                "queue grew past them); "
                "expand data-rabbitmq-0..2 (gp3 allows expansion) or shorten the replay-retention "
                "TTL / purge "
                "replay.orders.events so free space rises above disk_free_limit and the alarm "
                "clears.",
            },
        },
    )
