"""Shape 4, dependency_failure: a node drain evicted two of the three ZooKeeper pods; one is
Pending on its zonal volume, the third is never recreated (OrderedReady), the ensemble has no
quorum and every client fails; the clients are blamed."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from . import _kit as k

SID = "billing-scheduler-no-leader"
ZK_READY = ("OK=$(echo srvr | nc -w 2 127.0.0.1 2181); echo \"$OK\" | grep -q Mode || "
            "{ echo \"$OK\"; exit 1; }")
NOT_SERVING = "This ZooKeeper instance is not currently serving requests"


def build(root: Path) -> None:
    s = k.Story(SID, "2026-07-21T02:47:00Z", seed=5504)
    old = s.ago(days=500)
    nodes = k.eks_nodes(s, [
        ("eu-west-1a", "r6i.xlarge", "4", "32036472Ki", "general-a"),
        ("eu-west-1a", "r6i.xlarge", "4", "32036472Ki", "general-a"),
        ("eu-west-1b", "r6i.xlarge", "4", "32036472Ki", "general-b"),
        ("eu-west-1b", "r6i.xlarge", "4", "32036472Ki", "general-b"),
        ("eu-west-1c", "r6i.xlarge", "4", "32036472Ki", "general-c"),
        ("eu-west-1c", "r6i.xlarge", "4", "32036472Ki", "general-c"),
    ], old, s.ago(days=6, hours=1))
    drained, full_a, b1, b2, c1, c2 = nodes
    drain = s.ago(37, seconds=20)
    dnode = next(o for o in s.objects if o["kind"] == "Node"
                 and o["metadata"]["name"] == drained[0])
    dnode["spec"]["unschedulable"] = True
    dnode["spec"]["taints"] = [{"key": "node.kubernetes.io/unschedulable", "effect":
                                "NoSchedule", "timeAdded": k.iso(drain)}]
    dnode["metadata"]["annotations"]["ops.example.com/maintenance"] = \
        "kernel patch CVE-2026-1207, ticket OPS-5531"
    s.event("Node", "", drained[0], "NodeNotSchedulable",
            f"Node {drained[0]} status is now: NodeNotSchedulable", first=drain,
            host=drained[0])
    base = k.standard_cluster(s, nodes, old, s.ago(days=6))
    # system pods on the drained node were evicted and rescheduled; daemons stay
    for w in (base["coredns"], base["ksm"]):
        for p, r in zip(w.pods, w.recs, strict=True):
            if p["spec"]["nodeName"] == drained[0]:
                p["spec"]["nodeName"] = b1[0]
                p["status"]["hostIP"] = b1[1]
                r.node = b1[0]
    for ns, team in (("zookeeper", "data-platform"), ("kafka", "data-platform"),
                     ("billing", "billing"), ("catalog", "catalog")):
        k.namespace(s, ns, old, {"team": team})

    # ----- ZooKeeper -----
    zk_c = k.container(
        "zookeeper", "docker.io/library/zookeeper:3.8.4", cpu="500m", mem="6Gi",
        mem_limit="6Gi",
        env=[{"name": "ZOO_SERVERS", "value":
              "server.1=zookeeper-0.zookeeper-headless.zookeeper.svc.cluster.local:2888:3888;"
              "2181 server.2=zookeeper-1.zookeeper-headless.zookeeper.svc.cluster.local:"
              "2888:3888;2181 server.3=zookeeper-2.zookeeper-headless.zookeeper.svc."
              "cluster.local:2888:3888;2181"},
             {"name": "ZOO_4LW_COMMANDS_WHITELIST", "value": "srvr, mntr, ruok"},
             {"name": "ZOO_CFG_EXTRA", "value": "metricsProvider.className=org.apache."
              "zookeeper.metrics.prometheus.PrometheusMetricsProvider "
              "metricsProvider.httpPort=7000"},
             {"name": "JVMFLAGS", "value": "-Xmx4g"}],
        readiness={"exec": {"command": ["/bin/bash", "-c", ZK_READY]},
                   "initialDelaySeconds": 10, "periodSeconds": 10, "timeoutSeconds": 5,
                   "successThreshold": 1, "failureThreshold": 3},
        liveness={"exec": {"command": ["/bin/bash", "-c",
                                       "echo ruok | nc -w 2 127.0.0.1 2181 | grep imok"]},
                  "initialDelaySeconds": 30, "periodSeconds": 10, "timeoutSeconds": 5,
                  "successThreshold": 1, "failureThreshold": 6},
        mounts=[{"name": "data", "mountPath": "/data"},
                {"name": "datalog", "mountPath": "/datalog"}])
    zk_c["ports"] = [{"name": "client", "containerPort": 2181, "protocol": "TCP"},
                     {"name": "follower", "containerPort": 2888, "protocol": "TCP"},
                     {"name": "election", "containerPort": 3888, "protocol": "TCP"},
                     {"name": "metrics", "containerPort": 7000, "protocol": "TCP"}]
    claims = [{"apiVersion": "v1", "kind": "PersistentVolumeClaim",
               "metadata": {"name": n},
               "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "gp3",
                        "resources": {"requests": {"storage": sz}}, "volumeMode":
                        "Filesystem"}} for n, sz in (("data", "50Gi"), ("datalog", "20Gi"))]
    zk = k.statefulset(
        s, "zookeeper", "zookeeper", [zk_c], replicas=3, nodes=[b1, drained, drained],
        created=old, pods_since=s.ago(days=5, hours=2), service="zookeeper-headless",
        volume_claims=claims, cpu=0.12, mem=2.1 * k.GiB,
        labels={"app.kubernetes.io/name": "zookeeper", "app.kubernetes.io/component":
                "ensemble"},
        extra={"securityContext": {"fsGroup": 1000, "runAsUser": 1000}})
    zk.template["spec"]["volumes"] = []
    for i, p in enumerate(zk.pods):
        p["spec"]["volumes"] = [
            {"name": "data", "persistentVolumeClaim": {"claimName": f"data-zookeeper-{i}"}},
            {"name": "datalog", "persistentVolumeClaim":
             {"claimName": f"datalog-zookeeper-{i}"}}]
    for i, nd in enumerate([b1, drained, drained]):
        for vol, sz in (("data", "50Gi"), ("datalog", "20Gi")):
            s.add({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                   "metadata": k.meta(f"{vol}-zookeeper-{i}", "zookeeper", old, s.uid(),
                                      labels={"app.kubernetes.io/name": "zookeeper"},
                                      annotations={
                                          "pv.kubernetes.io/bind-completed": "yes",
                                          "volume.kubernetes.io/selected-node": nd[0],
                                          "volume.kubernetes.io/storage-provisioner":
                                          "ebs.csi.aws.com"}),
                   "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "gp3",
                            "resources": {"requests": {"storage": sz}},
                            "volumeName": f"pvc-{s.uid()}", "volumeMode": "Filesystem"},
                   "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"],
                              "capacity": {"storage": sz}}})
    s.add({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
           "metadata": k.meta("gp3", None, old, s.uid(), annotations={
               "storageclass.kubernetes.io/is-default-class": "true"}),
           "provisioner": "ebs.csi.aws.com", "parameters": {"type": "gp3",
                                                            "encrypted": "true"},
           "reclaimPolicy": "Delete", "volumeBindingMode": "WaitForFirstConsumer",
           "allowVolumeExpansion": True})
    zk0, zk1, zk2 = zk.pods
    r0, r1, r2 = zk.recs
    # zookeeper-0 stays, alive but not ready since the leader went away
    zk0["status"]["conditions"] = k.pod_conditions(
        k.parse(zk0["metadata"]["creationTimestamp"]), None, not_ready_since=drain +
        timedelta(seconds=31), message="containers with unready status: [zookeeper]")
    zk0["status"]["containerStatuses"][0]["ready"] = False
    r0.ready_fn = lambda t: t < drain + timedelta(seconds=31)
    # zookeeper-2 was evicted and, OrderedReady, not recreated yet
    s.objects.remove(zk2)
    s.pods.remove(r2)
    # zookeeper-1 was evicted and recreated; Pending on its zone-a volume
    s.pods.remove(r1)
    recreate = drain + timedelta(seconds=48)
    zk1["metadata"]["uid"] = s.uid()
    zk1["metadata"]["creationTimestamp"] = k.iso(recreate)
    zk1["spec"].pop("nodeName")
    fs_msg = ("0/6 nodes are available: 1 Insufficient memory, 1 node(s) were unschedulable, "
              "4 node(s) had volume node affinity conflict. preemption: 0/6 nodes are "
              "available: 1 No preemption victims found for incoming pod, 5 Preemption is not "
              "helpful for scheduling.")
    zk1["status"] = {"phase": "Pending", "qosClass": "Guaranteed", "conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
         "message": fs_msg, "lastTransitionTime": k.iso(recreate)}]}
    zk.obj["status"].update({"replicas": 2, "readyReplicas": 0, "currentReplicas": 2,
                             "updatedReplicas": 2, "availableReplicas": 0})
    s.event("StatefulSet", "zookeeper", "zookeeper", "SuccessfulCreate",
            "create Pod zookeeper-1 in StatefulSet zookeeper successful", first=recreate,
            component="statefulset-controller", api_version="apps/v1")
    s.event("Pod", "zookeeper", "zookeeper-1", "FailedScheduling", fs_msg, first=recreate,
            last=s.ago(seconds=s.rng.randint(20, 90)), count=14, type_="Warning",
            component="default-scheduler", uid=zk1["metadata"]["uid"])
    s.event("Pod", "zookeeper", "zookeeper-0", "Unhealthy",
            f"Readiness probe failed: {NOT_SERVING}\n", first=drain + timedelta(seconds=12),
            last=s.ago(seconds=4), count=221, type_="Warning", host=b1[0],
            uid=zk0["metadata"]["uid"], field_path="spec.containers{zookeeper}")
    k.service(s, "zookeeper", "zookeeper-headless", zk.template["metadata"]["labels"], 2181,
              2181, old, pods=[], headless=True, not_ready=[zk0], port_name="client")
    k.service(s, "zookeeper", "zookeeper", zk.template["metadata"]["labels"], 2181, 2181, old,
              pods=[], not_ready=[zk0], port_name="client")
    _zk_logs(s, zk0, drain)

    # ----- Kafka (client) -----
    kc = k.container("kafka", "docker.io/bitnami/kafka:3.6.2", cpu="1", mem="8Gi",
                     mem_limit="8Gi",
                     env=[{"name": "KAFKA_CFG_ZOOKEEPER_CONNECT",
                           "value": "zookeeper.zookeeper.svc.cluster.local:2181/kafka"}])
    kc["ports"] = [{"name": "kafka", "containerPort": 9092, "protocol": "TCP"}]
    kafka = k.statefulset(s, "kafka", "kafka", [kc], replicas=3, nodes=[c1, b2, c2],
                          created=old, pods_since=s.ago(days=5, hours=1),
                          service="kafka-headless", cpu=0.6, mem=5.2 * k.GiB)
    for i, p in enumerate(kafka.pods):
        pn = p["metadata"]["name"]
        for t in s.spread(s.ago(65), drain, 240.0):
            s.log(t, "kafka", pn, "kafka", "kafka", "info",
                  f"[ProducerStateManager partition=orders-events-{s.rng.randint(0, 11)}] "
                  f"Wrote producer snapshot at offset {s.rng.randint(10**7, 10**8)} with 0 "
                  f"producer ids in {s.rng.randint(1, 9)} ms.")
        sess = f"0x{s.hexid(16)}"
        seq = [
            (drain + timedelta(seconds=9 + i), "info",
             f"Unable to read additional data from server sessionid {sess}, likely server has "
             "closed socket, closing socket connection and attempting reconnect"),
            (drain + timedelta(seconds=10 + i), "info",
             "[ZooKeeperClient Kafka server] Waiting until connected."),
            (drain + timedelta(seconds=40 + i), "warn",
             f"Client session timed out, have not heard from server in 18012ms for "
             f"session id {sess}"),
            (drain + timedelta(seconds=61 + i), "error",
             f"Unable to reconnect to ZooKeeper service, session {sess} has expired"),
            (drain + timedelta(seconds=61 + i, milliseconds=40), "info",
             "[ZooKeeperClient Kafka server] Session expired."),
        ]
        for t, lvl, m in seq:
            s.log(t, "kafka", pn, "kafka", "kafka", lvl, m)
        for t in s.spread(drain + timedelta(seconds=70), s.now, 35.0):
            m = s.rng.choice([
                "[ZooKeeperClient Kafka server] Waiting until connected.",
                "Opening socket connection to server zookeeper.zookeeper.svc.cluster.local/"
                "172.20.61.9:2181.",
                "Socket connection established, initiating session, client: /"
                f"{p['status']['podIP']}:{s.rng.randint(33000, 60000)}, server: zookeeper."
                "zookeeper.svc.cluster.local/172.20.61.9:2181",
                "Unable to read additional data from server sessionid 0x0, likely server has "
                "closed socket, closing socket connection and attempting reconnect",
                f"[Partition orders-events-{s.rng.randint(0, 11)} broker={i}] Failed to update "
                "ISR to List(0, 2) due to KeeperErrorCode = ConnectionLoss for "
                f"/brokers/topics/orders-events/partitions/{s.rng.randint(0, 11)}/state",
            ])
            lvl = "warn" if "Failed" in m or "Unable" in m else "info"
            s.log(t, "kafka", pn, "kafka", "kafka", lvl, m)
    k.service(s, "kafka", "kafka", kafka.template["metadata"]["labels"], 9092, 9092, old,
              pods=kafka.pods, port_name="kafka")
    kx = k.deployment(s, "kafka", "kafka-exporter",
                      [k.container("kafka-exporter", "docker.io/danielqsj/kafka-exporter:v1.8.0",
                                   port=9308, cpu="20m", mem="64Mi")],
                      replicas=1, nodes=[c2], created=old, pods_since=s.ago(days=4),
                      cpu=0.01, mem=30 * k.MiB)
    xst = kx.pods[0]["status"]["containerStatuses"][0]
    xst["restartCount"] = 3
    xst["lastState"] = {"terminated": k.terminated("Error", 1, s.ago(days=4),
                                                   s.ago(days=3, hours=4))}
    kx.recs[0].restarts = 3

    # ----- billing: invoice-scheduler (leader election on ZK), rolled out 2 h ago -----
    reg = "482913307715.dkr.ecr.eu-west-1.amazonaws.com"
    isch = k.deployment(
        s, "billing", "invoice-scheduler",
        [k.container("scheduler", f"{reg}/billing/invoice-scheduler:5.0.3", port=8080,
                     cpu="200m", mem="512Mi", mem_limit="1Gi",
                     env=[{"name": "ZK_CONNECT", "value":
                           "zookeeper.zookeeper.svc.cluster.local:2181"},
                          {"name": "LEADER_PATH", "value": "/invoice-scheduler/leader"}],
                     readiness=k.http_probe("/actuator/health/readiness", 8080),
                     liveness=k.http_probe("/actuator/health/liveness", 8080, delay=60))],
        replicas=2, nodes=[b2, c1], created=old, pods_since=s.ago(hours=2, minutes=6),
        revision=19, old_revisions=[(18, s.ago(days=9), [k.container(
            "scheduler", f"{reg}/billing/invoice-scheduler:5.0.2", port=8080)])],
        cpu=0.06, mem=380 * k.MiB)
    leader = isch.pods[0]["metadata"]["name"]
    for p in isch.pods:
        pn = p["metadata"]["name"]
        boot = k.parse(p["metadata"]["creationTimestamp"]) + timedelta(seconds=5)
        s.log(boot, "billing", pn, "scheduler", "invoice-scheduler", "info",
              "Starting InvoiceSchedulerApplication v5.0.3 using Java 17.0.11")
        s.log(boot + timedelta(seconds=9), "billing", pn, "scheduler", "invoice-scheduler",
              "info", "Connected to ZooKeeper zookeeper.zookeeper.svc.cluster.local:2181, "
              "joining leader latch /invoice-scheduler/leader")
        if pn == leader:
            s.log(boot + timedelta(seconds=10), "billing", pn, "scheduler",
                  "invoice-scheduler", "info", "Leadership acquired, starting scheduler")
            for t in s.spread(s.ago(65), drain, 300.0):
                s.log(t, "billing", pn, "scheduler", "invoice-scheduler", "info",
                      f"run {t.strftime('%H:%M')}: issued {s.rng.randint(20, 300)} invoices, "
                      f"{s.rng.randint(0, 3)} deferred (payment method expired)")
        s.log(drain + timedelta(seconds=14), "billing", pn, "scheduler", "invoice-scheduler",
              "warn", "ZooKeeper connection state changed: SUSPENDED")
        if pn == leader:
            s.log(drain + timedelta(seconds=14, milliseconds=3), "billing", pn, "scheduler",
                  "invoice-scheduler", "warn", "Leadership lost, stopping scheduler")
        s.log(drain + timedelta(seconds=74), "billing", pn, "scheduler", "invoice-scheduler",
              "error", "ZooKeeper connection state changed: LOST")
        for t in s.spread(drain + timedelta(seconds=80), s.now, 45.0):
            m, lvl = s.rng.choice([
                ("org.apache.zookeeper.KeeperException$ConnectionLossException: "
                 "KeeperErrorCode = ConnectionLoss for /invoice-scheduler/leader", "error"),
                (f"not leader, skipping run {t.strftime('%H:%M')}", "warn"),
                ("Background retry gave up: org.apache.curator.CuratorConnectionLossException: "
                 "KeeperErrorCode = ConnectionLoss", "error"),
            ])
            s.log(t, "billing", pn, "scheduler", "invoice-scheduler", lvl, m)
    iapi = k.deployment(
        s, "billing", "invoice-api",
        [k.container("api", f"{reg}/billing/invoice-api:3.12.0", port=8080, cpu="200m",
                     mem="512Mi", readiness=k.http_probe("/ready", 8080))],
        replicas=2, nodes=[full_a, b2], created=old, pods_since=s.ago(days=3), cpu=0.1,
        mem=420 * k.MiB)
    # one invoice-api pod was evicted by the drain and came back on a live node
    moved = iapi.pods[1]
    moved_at = drain + timedelta(seconds=5)
    moved["metadata"]["creationTimestamp"] = k.iso(moved_at)
    moved["status"]["startTime"] = k.iso(moved_at + timedelta(seconds=1))
    moved["status"]["containerStatuses"][0]["state"] = {
        "running": {"startedAt": k.iso(moved_at + timedelta(seconds=6))}}
    moved["status"]["conditions"] = k.pod_conditions(moved_at, moved_at +
                                                     timedelta(seconds=21))
    iapi.recs[1].created = moved_at
    s.event("Pod", "billing", moved["metadata"]["name"], "Scheduled",
            f"Successfully assigned billing/{moved['metadata']['name']} to {b2[0]}",
            first=moved_at, component="default-scheduler")
    k.http_logs(s, iapi, "invoice-api", s.ago(65), s.now, 60.0, [
        ("GET", "/v1/invoices/{id}", 200, 60), ("GET", "/v1/customers/{id}/invoices", 200, 30),
        ("GET", "/v1/invoices/{id}", 404, 2)], fmt="{method} {path} {status} {ms}ms")
    k.service(s, "billing", "invoice-api", {"app.kubernetes.io/name": "invoice-api"}, 80, 8080,
              old, pods=iapi.pods)

    # ----- catalog search-indexer: reads its config from ZK -----
    idx = k.deployment(
        s, "catalog", "search-indexer",
        [k.container("indexer", f"{reg}/catalog/search-indexer:2.2.9", cpu="300m",
                     mem="1Gi", mem_limit="2Gi")],
        replicas=1, nodes=[c2], created=old, pods_since=s.ago(days=2), cpu=0.2,
        mem=800 * k.MiB)
    ipn = idx.pods[0]["metadata"]["name"]
    for t in s.spread(s.ago(65), drain, 120.0):
        s.log(t, "catalog", ipn, "indexer", "search-indexer", "info",
              f"indexed batch of {s.rng.randint(100, 900)} documents into products_v7")
    for t in s.spread(drain + timedelta(seconds=30), s.now, 90.0):
        s.log(t, "catalog", ipn, "indexer", "search-indexer", "error",
              "cannot refresh collection state: zookeeper: no quorum (session expired); "
              "pausing indexing")

    # ----- a memory-hungry embedder fills the other zone-a node -----
    emb = k.deployment(
        s, "catalog", "image-embedder",
        [k.container("embedder", f"{reg}/catalog/image-embedder:0.6.1", cpu="1", mem="13Gi",
                     mem_limit="13Gi")],
        replicas=2, nodes=[full_a], created=s.ago(days=30), pods_since=s.ago(days=2),
        cpu=0.7, mem=11.5 * k.GiB)
    k.lines(s, emb, "image-embedder", s.ago(65), s.now, 150.0, [
        ("info", "embedded {n} images in {ms}00ms (batch=64, model=clip-vit-b32)", 5),
        ("warn", "image {hex} has no alpha-less variant, converting", 1),
    ])

    # ----- metrics -----
    s.pod_metrics()
    for i, p in enumerate(zk.pods):
        pn = p["metadata"]["name"]
        lab = {"namespace": "zookeeper", "pod": pn, "job": "zookeeper"}
        end = None if i == 0 else drain
        s.gauge("up", "Scrape target health.", lab, lambda t: 1.0, end=end)
        s.gauge("num_alive_connections", "Number of active clients connected to the server.",
                lab, lambda t: float(s.rng.randint(9, 14)) if t < drain else 0.0,
                end=end)
        s.gauge("quorum_size", "Configured ensemble size.", lab, lambda t: 3.0, end=end,
                every=2)
    s.gauge("leader_uptime", "Uptime of the current leader in ms.",
            {"namespace": "zookeeper", "pod": "zookeeper-2", "job": "zookeeper"},
            lambda t: float((t - s.ago(days=5)).total_seconds() * 1000), end=drain)
    s.gauge("kube_statefulset_status_replicas_ready",
            "The number of ready replicas per StatefulSet.",
            {"namespace": "zookeeper", "statefulset": "zookeeper"},
            lambda t: 3.0 if t < drain else (1.0 if t < drain + timedelta(seconds=31) else 0.0))
    s.gauge("kube_statefulset_replicas", "Number of desired pods for a StatefulSet.",
            {"namespace": "zookeeper", "statefulset": "zookeeper"}, lambda t: 3.0, every=5)
    s.gauge("kube_node_spec_unschedulable",
            "Whether a node can schedule new pods.", {"node": drained[0]},
            lambda t: 1.0 if t >= drain else 0.0)
    s.gauge("kube_pod_status_phase", "The pods current phase.",
            {"namespace": "zookeeper", "pod": "zookeeper-1", "phase": "Pending"},
            lambda t: 1.0, begin=recreate)
    for i, p in enumerate(kafka.pods):
        lab = {"namespace": "kafka", "pod": p["metadata"]["name"]}
        s.gauge("kafka_controller_kafkacontroller_activecontrollercount",
                "Attribute exposed for management", lab,
                lambda t, j=i: 1.0 if (j == 1 and t < drain) else 0.0)
        s.gauge("kafka_server_replicamanager_underreplicatedpartitions",
                "Attribute exposed for management", lab,
                lambda t: 0.0 if t < drain + timedelta(minutes=2) else float(s.rng.randint(3, 5)))
        s.counter("kafka_server_sessionexpirelistener_zookeeperexpires_total",
                  "ZooKeeper session expirations", lab,
                  lambda t: 0.0 if t < drain else 1 / 300, start=2)
    for p in isch.pods:
        s.gauge("invoice_scheduler_is_leader", "1 if this instance holds the leader latch.",
                {"namespace": "billing", "pod": p["metadata"]["name"]},
                lambda t, me=p["metadata"]["name"]: 1.0 if me == leader and t < drain else 0.0)
    s.counter("invoice_scheduler_runs_total", "Scheduler runs by outcome.",
              {"namespace": "billing", "outcome": "completed"},
              lambda t: 1 / 300 if t < drain else 0.0, start=5210)
    s.counter("invoice_scheduler_runs_total", "Scheduler runs by outcome.",
              {"namespace": "billing", "outcome": "skipped_not_leader"},
              lambda t: 0.0 if t < drain else 1 / 300, start=14)

    k.scenario(
        s, title="invoice-scheduler stopped issuing invoices",
        report=(
            "billing alert: invoice-scheduler hasn't issued invoices for ~35 min, both pods "
            "log 'not leader' and ConnectionLoss. It was deployed (5.0.3) a couple of hours "
            "ago, I think the new version broke leader election. Kafka also complains about "
            "ZooKeeper sessions, maybe the network between billing and kafka? Please check "
            "invoice-scheduler first.\n"
        ),
        category="dependency_failure", kind="StatefulSet", ns="zookeeper", name="zookeeper",
        evidence=[NOT_SERVING, "volume node affinity conflict", "NodeNotSchedulable",
                  "KeeperErrorCode = ConnectionLoss"],
        fix=("The 02:09 drain of " + drained[0] + " evicted zookeeper-1 and zookeeper-2 (both "
             "on that node, no anti-affinity, no disruption budget); zookeeper-1 is Pending "
             "because its zone-a volume fits no schedulable node, zookeeper-2 waits behind it "
             "(OrderedReady), and zookeeper-0 alone has no quorum. Uncordon the node (or free "
             "memory on the other zone-a node) so zookeeper-1 and -2 return, then add pod "
             "anti-affinity and a PodDisruptionBudget (maxUnavailable 1); the clients are fine."),
    )
    s.write(root)
    k.check_evidence(s, root)


def _zk_logs(s: k.Story, zk0: k.Obj, drain: datetime) -> None:
    pn = zk0["metadata"]["name"]

    def log(t: datetime, lvl: str, msg: str) -> None:
        s.log(t, "zookeeper", pn, "zookeeper", "zookeeper", lvl, msg)

    for t in s.spread(s.ago(65), drain, 200.0):
        log(t, "info", s.rng.choice([
            f"Committing global session 0x{s.hexid(16)}",
            f"Expiring session 0x{s.hexid(16)}, timeout of 40000ms exceeded",
            f"Submitting global closeSession request for session 0x{s.hexid(16)}",
        ]))
    leader = "zookeeper-2.zookeeper-headless.zookeeper.svc.cluster.local"
    seq = [
        (0, "warn", "Exception when following the leader\njava.io.EOFException\n\tat java.base/"
                    "java.io.DataInputStream.readInt(Unknown Source)\n\tat org.apache.jute."
                    "BinaryInputArchive.readInt(BinaryInputArchive.java:96)\n\tat org.apache."
                    "zookeeper.server.quorum.Learner.readPacket(Learner.java:227)"),
        (0.02, "info", "Disconnected from leader (with address: "
                       f"{leader}/10.42.3.88:2888). Was connected for 445311927ms. Sync state: "
                       "true"),
        (0.03, "info", "shutdown Follower"),
        (0.05, "info", "PeerState set: LOOKING"),
        (0.06, "info", "New election. My id = 1, proposed zxid=0x1300ab21f4"),
    ]
    for off, lvl, msg in seq:
        log(drain + timedelta(seconds=7 + off), lvl, msg)
    t = drain + timedelta(seconds=8)
    timeout = 400
    while t < s.now:
        for peer in (2, 3):
            host = f"zookeeper-{peer - 1}.zookeeper-headless.zookeeper.svc.cluster.local"
            log(t, "warn", f"Cannot open channel to {peer} at election address {host}:3888\n"
                f"java.net.UnknownHostException: {host}\n\tat java.base/java.net."
                "InetAddress$CachedLookup.get(Unknown Source)")
        log(t + timedelta(milliseconds=5), "info",
            f"Notification time out: {timeout} ms")
        t += timedelta(milliseconds=timeout)
        timeout = min(timeout * 2, 60000)
    for tt in s.spread(drain + timedelta(seconds=15), s.now, 40.0):
        log(tt, "info", "Closing connection to /10.42."
            f"{s.rng.randint(0, 15)}.{s.rng.randint(2, 250)}:{s.rng.randint(33000, 60000)}")
        log(tt + timedelta(milliseconds=1), "warn",
            "Close of session 0x0\njava.io.IOException: ZooKeeperServer not running\n\tat "
            "org.apache.zookeeper.server.NIOServerCnxn.readLength(NIOServerCnxn.java:554)")
