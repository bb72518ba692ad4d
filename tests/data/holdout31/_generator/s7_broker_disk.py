"""Shape 7: a message broker reaches its disk free limit and blocks publishers.

RabbitMQ runs as a 3-node StatefulSet with 20Gi volumes and `disk_free_limit.absolute =
2GB`. The `events.audit` stream keeps seven days (x-max-age); Black Friday week tripled
its volume and the data on rabbitmq-1 grew past what the volume holds. At 18:22 the node
raised its disk alarm: every publishing connection in the cluster is blocked, the pods
stay Running and Ready, the producers log publish timeouts. The report suspects a
NetworkPolicy added this week (it allows the producers).
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from . import kube
from .emit import Scenario, steps
from .fleet import App, Node, app, basic_signals, chatter, make_nodes, platform, simple

ID = "orders-stuck-pending"
NOW = datetime.fromisoformat("2026-11-28T19:05:00+00:00")
ALARM = datetime.fromisoformat("2026-11-28T18:22:41+00:00")
NS = "messaging"
IMAGE = "docker.io/library/rabbitmq:3.13.7-management"
GB = 10**9


def build() -> Scenario:
    rng = random.Random(31_07)
    sc = Scenario(
        id=ID, title="Orders stuck in pending, publish timeouts", now=NOW,
        report=(
            "orders stuck in 'pending' since ~18:20, checkout-api is full of publish "
            "timeouts to rabbit. rabbit pods are all green/ready in k8s. network? someone "
            "added netpols in messaging this week\n"),
        truth={"category": "resource_exhaustion",
               "culprit": {"kind": "StatefulSet", "namespace": NS, "name": "rabbitmq"},
               "evidence": ["Free disk space is insufficient", "disk resource limit alarm set",
                            "Publishers will be blocked until this alarm clears",
                            "rabbitmq_alarms_free_disk_space_watermark"],
               "fix": "Give rabbitmq more disk (expand data-rabbitmq-* PVCs, gp3 allows it) "
                      "and cut events.audit's retention (x-max-age / max-length-bytes); "
                      "the NetworkPolicy is not involved."})
    created = NOW - timedelta(days=420)
    sc.add(kube.namespace(NS, created, {"team": "platform"}),
           kube.namespace("commerce", created, {"team": "commerce", "messaging-client": "true"}))
    nodes = make_nodes(sc, ["ip-172-31-10-5.ec2.internal", "ip-172-31-22-140.ec2.internal",
                            "ip-172-31-37-81.ec2.internal", "ip-172-31-41-9.ec2.internal"],
                       created=NOW - timedelta(days=17), cpu="8", memory="32Gi",
                       labels={"eks.amazonaws.com/nodegroup": "core-2026-11",
                               "node.kubernetes.io/instance-type": "m7i.2xlarge"})
    since = NOW - timedelta(days=6, hours=6)
    platform(sc, rng, nodes, created, since=since)
    pods = _broker(sc, rng, nodes, created, since)

    checkout = app(sc, rng, "checkout-api", "commerce", replicas=4, nodes=nodes, created=created,
                   images=[("123456789012.dkr.ecr.us-east-1.amazonaws.com/checkout-api:5.8.2",
                            NOW - timedelta(days=4, hours=2))],
                   containers=simple("checkout-api", cpu="300m", memory="512Mi",
                                     limit_memory="1Gi", probe="/healthz",
                                     env={"AMQP_URL": "amqp://rabbitmq.messaging.svc:5672/shop",
                                          "PUBLISH_TIMEOUT": "5s"}))
    notify = app(sc, rng, "notification-api", "commerce", replicas=2, nodes=nodes,
                 created=created,
                 images=[("123456789012.dkr.ecr.us-east-1.amazonaws.com/notification-api:1.12.0",
                          NOW - timedelta(days=11))], pod_started=since,
                 containers=simple("notification-api", port=8000, cpu="100m", memory="256Mi",
                                   probe="/health",
                                   env={"AMQP_URL": "amqp://rabbitmq.messaging.svc:5672/shop",
                                        "BLOCKED_CONNECTION_TIMEOUT": "60"}))
    fulfil = app(sc, rng, "order-fulfilment", "commerce", replicas=3, nodes=nodes,
                 created=created, port=None, service=False, pod_started=since,
                 images=[("123456789012.dkr.ecr.us-east-1.amazonaws.com/order-fulfilment:3.1.4",
                          NOW - timedelta(days=9))],
                 containers=simple("order-fulfilment", port=None, probe=None))
    audit = app(sc, rng, "audit-indexer", "commerce", replicas=1, nodes=nodes, created=created,
                port=None, service=False, pod_started=since,
                images=[("123456789012.dkr.ecr.us-east-1.amazonaws.com/audit-indexer:0.7.0",
                         NOW - timedelta(days=35))],
                containers=simple("audit-indexer", port=None, probe=None))
    sc.add(_netpol(), _storage_class(created))
    _broker_signals(sc, pods)
    _broker_logs(sc, rng, pods, checkout, notify)
    _client_logs(sc, rng, checkout, notify, fulfil, audit)
    start = NOW - timedelta(hours=6)
    basic_signals(sc, checkout, start, NOW, rps=9.0, cores=0.2, mem_mib=420)
    basic_signals(sc, fulfil, start, NOW, cores=0.05, mem_mib=200)
    return sc


def _broker(sc: Scenario, rng: random.Random, nodes: list[Node], created: datetime,
            since: datetime) -> list[dict]:
    labels = {"app": "rabbitmq", "app.kubernetes.io/name": "rabbitmq"}
    revision = "rabbitmq-6f9c7d5b8d"
    container = kube.container("rabbitmq", IMAGE, requests={"cpu": "1", "memory": "4Gi"},
                               limits={"memory": "4Gi"}, port=5672,
                               env={"RABBITMQ_USE_LONGNAME": "true",
                                    "K8S_SERVICE_NAME": "rabbitmq-nodes",
                                    "RABBITMQ_NODENAME":
                                        "rabbit@$(MY_POD_NAME).rabbitmq-nodes.messaging"},
                               mounts=[{"name": "data", "mountPath": "/var/lib/rabbitmq/mnesia"},
                                       {"name": "config", "mountPath": "/etc/rabbitmq/conf.d"}])
    container["readinessProbe"] = {"exec": {"command": ["rabbitmq-diagnostics", "-q",
                                                        "check_port_connectivity"]},
                                   "periodSeconds": 30, "timeoutSeconds": 20, "failureThreshold": 3}
    container["livenessProbe"] = {"exec": {"command": ["rabbitmq-diagnostics", "-q", "status"]},
                                  "periodSeconds": 30, "timeoutSeconds": 20, "failureThreshold": 6}
    spec = kube.pod_spec([container], service_account="rabbitmq",
                         volumes=[{"name": "config", "configMap": {"name": "rabbitmq-config"}}])
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet",
           "metadata": kube.meta("rabbitmq", NS, created, labels=labels, generation=9),
           "spec": {"replicas": 3, "serviceName": "rabbitmq-nodes",
                    "podManagementPolicy": "Parallel",
                    "selector": {"matchLabels": {"app": "rabbitmq"}},
                    "updateStrategy": {"type": "RollingUpdate"},
                    "template": {"metadata": {"labels": labels}, "spec": spec},
                    "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                        "accessModes": ["ReadWriteOnce"], "storageClassName": "gp3",
                        "resources": {"requests": {"storage": "20Gi"}}}}]},
           "status": {"replicas": 3, "readyReplicas": 3, "currentReplicas": 3, "updatedReplicas": 3,
                      "availableReplicas": 3, "currentRevision": revision,
                      "updateRevision": revision, "observedGeneration": 9, "collisionCount": 0}}
    sc.add(sts)
    pods = []
    for ordinal in range(3):
        name = f"rabbitmq-{ordinal}"
        host = nodes[ordinal]
        started = since + timedelta(minutes=ordinal * 3)
        pod_spec = {**spec, "hostname": name, "subdomain": "rabbitmq-nodes",
                    "volumes": [{"name": "data",
                                 "persistentVolumeClaim": {"claimName": f"data-{name}"}},
                                *spec["volumes"]]}
        pod_obj = kube.pod(name, NS, owner=("apps/v1", "StatefulSet", "rabbitmq"),
                           labels={**labels, "controller-revision-hash": revision,
                                   "statefulset.kubernetes.io/pod-name": name},
                           spec=pod_spec, created=started, node_name=host.name,
                           ip=host.pod_ip(), host_ip=host.ip,
                           statuses=[kube.running("rabbitmq", IMAGE,
                                                  started + timedelta(seconds=4))])
        pods.append(pod_obj)
        sc.add(pod_obj, {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                         "metadata": kube.meta(f"data-{name}", NS, created,
                                               labels={"app": "rabbitmq"},
                                               annotations={"volume.kubernetes.io/storage-provisioner":
                                                            "ebs.csi.aws.com"}),
                         "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "gp3",
                                  "volumeMode": "Filesystem",
                                  "resources": {"requests": {"storage": "20Gi"}},
                                  "volumeName": f"pvc-{kube.uid(NS, 'pv' + name)}"},
                         "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"],
                                    "capacity": {"storage": "20Gi"}}})
    sc.add(kube.service("rabbitmq", NS, selector={"app": "rabbitmq"}, port=5672, target=5672,
                        port_name="amqp", created=created, cluster_ip="10.100.74.12"),
           kube.service("rabbitmq-nodes", NS, selector={"app": "rabbitmq"}, port=4369,
                        target=4369, port_name="epmd", created=created, cluster_ip="None"),
           kube.endpoints("rabbitmq", NS, pods=pods, port=5672, created=created, port_name="amqp"),
           {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": kube.meta("rabbitmq-config", NS, created, labels={"app": "rabbitmq"}),
            "data": {"10-cluster.conf": "cluster_formation.peer_discovery_backend = k8s\n"
                                        "cluster_formation.k8s.host = kubernetes.default.svc\n"
                                        "cluster_partition_handling = pause_minority\n",
                     "20-limits.conf": "vm_memory_high_watermark.relative = 0.6\n"
                                       "disk_free_limit.absolute = 2GB\n",
                     "30-plugins.conf": "prometheus.tcp.port = 15692\n"}})
    return pods


def _netpol() -> dict:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": kube.meta("rabbitmq-clients", NS, NOW - timedelta(days=3, hours=5)),
            "spec": {"podSelector": {"matchLabels": {"app": "rabbitmq"}},
                     "policyTypes": ["Ingress"],
                     "ingress": [{"from": [{"namespaceSelector": {
                                      "matchLabels": {"messaging-client": "true"}}}],
                                  "ports": [{"protocol": "TCP", "port": 5672}]},
                                 {"from": [{"podSelector": {"matchLabels": {"app": "rabbitmq"}}}],
                                  "ports": [{"protocol": "TCP", "port": 4369},
                                            {"protocol": "TCP", "port": 25672}]},
                                 {"from": [{"namespaceSelector": {"matchLabels": {
                                     "kubernetes.io/metadata.name": "monitoring"}}}],
                                  "ports": [{"protocol": "TCP", "port": 15692}]}]}}


def _storage_class(created: datetime) -> dict:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": kube.meta("gp3", None, created),
            "provisioner": "ebs.csi.aws.com", "parameters": {"type": "gp3", "fsType": "ext4"},
            "reclaimPolicy": "Retain", "allowVolumeExpansion": True,
            "volumeBindingMode": "WaitForFirstConsumer"}


def free_bytes(ordinal: int, at: datetime) -> float:
    """Free space on each node's volume: rabbitmq-1 holds most stream segments."""
    capacity = 20 * 2**30
    hours = (at - NOW).total_seconds() / 3600  # negative: hours before now
    if ordinal == 1:
        if at < ALARM:
            return 1.999e9 + (ALARM - at).total_seconds() / 3600 * 0.62e9
        return 1.9987e9 - 0.4e6 * (at - ALARM).total_seconds() / 60
    return capacity * (0.41 if ordinal == 0 else 0.38) - hours * 0.05e9


def _broker_signals(sc: Scenario, pods: list[dict]) -> None:
    start = NOW - timedelta(hours=6)
    times = steps(start, NOW, timedelta(minutes=2))
    published = 4.2e7
    delivered = 4.19e7
    for at in times:
        blocked = at >= ALARM
        for ordinal, pod_obj in enumerate(pods):
            labels = {"namespace": NS, "pod": pod_obj["metadata"]["name"], "container": "rabbitmq",
                      "instance": f"{pod_obj['status']['podIP']}:15692", "job": "rabbitmq"}
            free = max(free_bytes(ordinal, at), 1.2e9)
            sc.sample("rabbitmq_disk_space_available_bytes", "gauge", labels, at, free,
                      "Disk space available in bytes")
            sc.sample("rabbitmq_disk_space_available_limit_bytes", "gauge", labels, at, 2e9,
                      "Free disk space low watermark in bytes")
            sc.sample("rabbitmq_alarms_free_disk_space_watermark", "gauge", labels, at,
                      1.0 if blocked and ordinal == 1 else 0.0,
                      "is 1 if free disk space watermark alarm is in effect")
            sc.sample("rabbitmq_alarms_memory_used_watermark", "gauge", labels, at, 0.0,
                      "is 1 if VM memory watermark alarm is in effect")
            sc.sample("rabbitmq_connections", "gauge", labels, at,
                      float(11 + ordinal + (6 if blocked else 0)), "Connections currently open")
            pvc = f"data-{pod_obj['metadata']['name']}"
            volume = {"namespace": NS, "persistentvolumeclaim": pvc}
            sc.sample("kubelet_volume_stats_available_bytes", "gauge", volume, at, free - 0.9e9,
                      "Number of available bytes in the volume")
            sc.sample("kubelet_volume_stats_capacity_bytes", "gauge", volume, at,
                      float(20 * 2**30 - 0.5e9), "Capacity in bytes of the volume")
        rate = 0.0 if blocked else 260.0 * 120
        published += rate
        delivered += 0.0 if blocked else rate * 0.999
        total = {"namespace": NS, "pod": "rabbitmq-1", "container": "rabbitmq", "job": "rabbitmq",
                 "instance": f"{pods[1]['status']['podIP']}:15692"}
        sc.sample("rabbitmq_global_messages_received_total", "counter", total, at, published,
                  "Total number of messages received from publishers")
        sc.sample("rabbitmq_global_messages_delivered_total", "counter", total, at, delivered,
                  "Total number of messages delivered to consumers")


def _broker_logs(sc: Scenario, rng: random.Random, pods: list[dict], checkout: App,
                 notify: App) -> None:
    start = NOW - timedelta(hours=8)
    clients = [p["status"]["podIP"] for p in checkout.pods + notify.pods]
    for ordinal, pod_obj in enumerate(pods):
        pod_name = pod_obj["metadata"]["name"]
        me = pod_obj["status"]["podIP"]
        node = f"rabbit@{pod_name}.rabbitmq-nodes.messaging"

        def say(at: datetime, level: str, message: str, pod: str = pod_name) -> None:
            stamp = at.strftime("%Y-%m-%d %H:%M:%S.%f") + "+00:00"
            pid = f"<0.{rng.randint(300, 99999)}.0>"
            sc.doc(at, service="rabbitmq", ns=NS, pod=pod, container="rabbitmq", level=level,
                   message=f"{pid} {message}")
            sc.log(NS, pod, "rabbitmq", at, f"{stamp} [{level}] {pid} {message}")

        at = start + timedelta(seconds=rng.randint(0, 120))
        while at < NOW:
            client = rng.choice(clients)
            port = rng.randint(32768, 60999)
            if rng.random() < 0.5:
                say(at, "info", f"accepting AMQP connection {client}:{port} -> {me}:5672")
            else:
                say(at, "info", f"connection {client}:{port} -> {me}:5672 - publisher: user "
                    "'shop' authenticated and granted access to vhost 'shop'")
            if at > ALARM and rng.random() < 0.5:
                say(at + timedelta(seconds=5), "warning", f"closing AMQP connection ({client}:"
                    f"{port} -> {me}:5672, vhost: 'shop', user: 'shop'):\nclient unexpectedly "
                    "closed TCP connection")
            at += timedelta(seconds=rng.randint(60, 300) if at < ALARM else rng.randint(40, 120))
        for hours in (7.6, 5.1, 2.4):
            at = NOW - timedelta(hours=hours, minutes=rng.randint(0, 20))
            say(at, "info", "Stream: __events.audit_1698839001123456789 will delete 1 segment "
                "file(s) older than 604800 seconds, retained 212 segment(s)")
        if ordinal == 1:
            say(ALARM, "info", "Free disk space is insufficient. Free bytes: 1998716928. "
                "Limit: 2000000000")
            say(ALARM + timedelta(milliseconds=3), "warning",
                f"disk resource limit alarm set on node '{node}'.\n\n"
                "**********************************************************\n"
                "*** Publishers will be blocked until this alarm clears ***\n"
                "**********************************************************")
        else:
            say(ALARM + timedelta(milliseconds=40 + ordinal), "warning",
                "disk resource limit alarm set on node "
                "'rabbit@rabbitmq-1.rabbitmq-nodes.messaging'.")


def _client_logs(sc: Scenario, rng: random.Random, checkout: App, notify: App, fulfil: App,
                 audit: App) -> None:
    start = NOW - timedelta(hours=6)
    for pod_obj in checkout.pods:
        pod_name = pod_obj["metadata"]["name"]
        at = start + timedelta(seconds=rng.randint(0, 30))
        outbox = 0
        while at < NOW:
            order = f"ord_{rng.getrandbits(40):010x}"
            if at < ALARM:
                sc.both(at, service="checkout-api", ns="commerce", pod=pod_name,
                        container="checkout-api", level="info",
                        message=f"order {order} created, published order.created "
                        f"({rng.randint(2, 14)}ms)")
            else:
                outbox += 1
                sc.both(at, service="checkout-api", ns="commerce", pod=pod_name,
                        container="checkout-api", level="error",
                        message=f"publish order.created for {order} failed: timeout after 5s "
                        "waiting for publisher confirm (exchange=orders.events); order left "
                        f"in outbox (pending={outbox})", error__type="PublishTimeout")
            at += timedelta(seconds=rng.randint(30, 80))
    for pod_obj in notify.pods:
        pod_name = pod_obj["metadata"]["name"]
        at = start + timedelta(seconds=rng.randint(0, 30))
        while at < NOW:
            if at < ALARM:
                sc.both(at, service="notification-api", ns="commerce", pod=pod_name,
                        container="notification-api", level="info",
                        message=f"queued email template=order_confirmation to=<redacted> "
                        f"msg={rng.getrandbits(32):08x}")
                at += timedelta(seconds=rng.randint(60, 150))
            else:
                sc.both(at, service="notification-api", ns="commerce", pod=pod_name,
                        container="notification-api", level="error",
                        message="pika.exceptions.ConnectionBlockedTimeout: blocked connection "
                        "timeout expired (60s); reconnecting to rabbitmq.messaging.svc:5672",
                        error__type="ConnectionBlockedTimeout")
                sc.both(at + timedelta(seconds=1), service="notification-api", ns="commerce",
                        pod=pod_name, container="notification-api", level="info",
                        message="connected to amqp://rabbitmq.messaging.svc:5672/shop")
                at += timedelta(seconds=61 + rng.randint(0, 4))
    for pod_obj in fulfil.pods:
        pod_name = pod_obj["metadata"]["name"]
        at = start + timedelta(seconds=rng.randint(0, 30))
        while at < NOW:
            if at < ALARM + timedelta(minutes=3):
                sc.both(at, service="order-fulfilment", ns="commerce", pod=pod_name,
                        container="order-fulfilment", level="info",
                        message=f"fulfilled order ord_{rng.getrandbits(40):010x} "
                        f"warehouse=WH-{rng.randint(1, 4)}")
                at += timedelta(seconds=rng.randint(40, 100))
            else:
                sc.both(at, service="order-fulfilment", ns="commerce", pod=pod_name,
                        container="order-fulfilment", level="info",
                        message="queue orders.fulfilment idle, waiting for deliveries")
                at += timedelta(minutes=5)
    chatter(sc, audit, start, NOW, timedelta(minutes=5), [
        ("info", "indexed {n} audit events from stream events.audit offset={id}"),
        ("warn", "opensearch bulk took {ms}00ms, backing off"),
    ], rng)
