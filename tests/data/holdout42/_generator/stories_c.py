# ruff: noqa: E501 - story data: log lines and messages are kept whole, as the tools print them
"""Stories 5 and 6: a managed Kafka's leader-election storm seen by one producer; a stream
processor whose RocksDB state store fills its volume."""

from __future__ import annotations

import random
from datetime import timedelta

from tests.data.holdout42._generator import kit
from tests.data.holdout42._generator.kit import Series, Story, parse


def kafka_leader_storm() -> Story:
    """Northwind Mobility: ride-events-ingest (Spring Boot) produces scooter telemetry to a
    managed Kafka (MSK) outside the cluster. For fifteen minutes the brokers re-elect
    partition leaders over and over: produce requests get NOT_LEADER_OR_FOLLOWER, batches
    expire, the ingest API answers 503. The pods stay healthy throughout."""
    now = parse("2026-11-27T07:50:00Z")
    rnd = random.Random(5)
    ns = "telemetry"
    storm0, storm1 = now - timedelta(minutes=21), now - timedelta(minutes=6)
    s = Story("ride-events-kafka-leader-storm", "Ride telemetry dropping, ingest 503s", now,
              "scooters are reporting 'sync failed' and ride-events-ingest was throwing 503s for a good "
              "while this morning. we shipped 2.9 of ingest on tuesday, could that be it? pods never "
              "restarted",
              {"category": "dependency_failure",
               "culprit": {"kind": "Deployment", "namespace": ns, "name": "ride-events-ingest"},
               "evidence": ["NOT_LEADER_OR_FOLLOWER", "Expiration of", "kafka.eu-central-1.amazonaws.com"],
               "fix": "Nothing to change in the service: the managed Kafka cluster was re-electing "
                      "leaders; open a case with the provider, and consider larger delivery.timeout.ms "
                      "/ a local spool so ingest rides out broker elections."})
    old = now - timedelta(days=240)
    s.objects += [kit.namespace(n, old) for n in (ns, "fleet")]
    nodes = [f"ip-10-40-{i}-{100 + i * 3}.eu-central-1.compute.internal" for i in range(3)]
    for i, n in enumerate(nodes):
        s.objects.append(kit.node(n, now - timedelta(days=4, hours=i * 7), now, cpu="8", memory="32Gi",
                                  allocatable_cpu="7910m", allocatable_memory="29Gi", ip=f"10.40.{i}.{100 + i * 3}",
                                  labels={"karpenter.sh/nodepool": "default"}))
    brokers = ",".join(f"b-{i}.ridestream.x7kq2p.c4.kafka.eu-central-1.amazonaws.com:9098" for i in (1, 2, 3))
    s.objects.append(kit.service(ns, "kafka", old, None, [("kafka", 9098, 9098)],
                                 external_name="b-1.ridestream.x7kq2p.c4.kafka.eu-central-1.amazonaws.com"))
    _, _, pods = kit.app(s, ns, "ride-events-ingest", "ghcr.io/northwind-mobility/ride-events-ingest:2.9.0",
                         nodes, replicas=3, revision=41, port=8080, rolled=timedelta(days=2, hours=20),
                         requests={"cpu": "500m", "memory": "1Gi"}, limits={"memory": "1536Mi"},
                         env_vars={"KAFKA_BOOTSTRAP": brokers, "KAFKA_ACKS": "all",
                                   "KAFKA_DELIVERY_TIMEOUT_MS": "120000", "SPRING_PROFILES_ACTIVE": "prod"})
    topic = "ride-telemetry.v3"
    for idx, p in enumerate(pods):
        name = p["metadata"]["name"]
        cid = f"ride-events-ingest-{idx + 1}"
        lines = []
        at = now - timedelta(hours=1, minutes=30)
        seq = 880000 + idx * 100000
        while at < now:
            seq += rnd.randint(30, 90)
            stamp = at.strftime("%Y-%m-%d %H:%M:%S.") + f"{at.microsecond // 1000:03d}"
            thread = f"http-nio-8080-exec-{rnd.randint(1, 40)}"
            if storm0 <= at < storm1:
                part = rnd.randint(0, 23)
                r = rnd.random()
                if r < 0.45:
                    text = (f"[Producer clientId={cid}] Got error produce response with correlation id {seq} on "
                            f"topic-partition {topic}-{part}, retrying (2147483640 attempts left). Error: NOT_LEADER_OR_FOLLOWER")
                    lv, logger, th = "WARN", "o.a.k.c.p.internals.Sender", f"kafka-producer-network-thread | {cid}"
                elif r < 0.65:
                    text = (f"[Producer clientId={cid}] Received invalid metadata error in produce request on partition "
                            f"{topic}-{part} due to org.apache.kafka.common.errors.NotLeaderOrFollowerException: For requests "
                            "intended only for the leader, this error indicates that the broker is not the current leader. "
                            "Going to request metadata update now")
                    lv, logger, th = "WARN", "o.a.k.c.p.internals.Sender", f"kafka-producer-network-thread | {cid}"
                elif r < 0.85 and at > storm0 + timedelta(minutes=2):
                    n = rnd.randint(3, 40)
                    text = (f"send failed, answering 503: org.apache.kafka.common.errors.TimeoutException: Expiration of {n} "
                            f"record(s) for {topic}-{part}:120003 ms has passed since batch creation")
                    lv, logger, th = "ERROR", "c.n.ingest.api.EventsController", thread
                else:
                    text = (f"[Producer clientId={cid}] Disconnecting from node {rnd.randint(1, 3)} due to request timeout.")
                    lv, logger, th = "INFO", "o.apache.kafka.clients.NetworkClient", f"kafka-producer-network-thread | {cid}"
                step = rnd.randint(2, 9)
            else:
                text = f"accepted batch scooters={rnd.randint(20, 120)} events={rnd.randint(200, 1600)} partitions={rnd.randint(4, 24)}"
                lv, logger, th = "INFO", "c.n.ingest.api.EventsController", thread
                step = rnd.randint(25, 70)
                if rnd.random() < 0.04:
                    text = "Pause Young (Normal) (G1 Evacuation Pause) 412M->118M(1024M) 9.812ms"
                    logger = "gc"
            lines.append(f"{stamp}  {lv:5} 1 --- [{th}] {logger:40} : {text}")
            s.docs.append(kit.log_doc(at, text, lv.lower(), "ride-events-ingest", ns, name, "ride-events-ingest",
                                      log__logger=logger, **({"error__type": "org.apache.kafka.common.errors.TimeoutException"}
                                                             if "Expiration" in text else {})))
            at += timedelta(seconds=step)
        s.log(ns, name, "ride-events-ingest", lines)
    # bystanders: fleet-api and geofence in another namespace, one stale warning
    _, _, fleet = kit.app(s, "fleet", "fleet-api", "ghcr.io/northwind-mobility/fleet-api:14.2.1", nodes, replicas=2,
                          revision=88, port=8000, rolled=timedelta(hours=30))
    kit.chatter(s, "fleet", "fleet-api", fleet, "fleet-api",
                lambda at, r: ("info", f"GET /v1/scooters/{r.randint(10000, 99999)}/status 200 {r.randint(3, 40)}ms"),
                seed=51, every=(20, 60), fmt=lambda at, lv, tx: f'{{"ts":"{kit.iso_ms(at)}","level":"{lv}","msg":"{tx}"}}')
    _, _, geo = kit.app(s, "fleet", "geofence", "ghcr.io/northwind-mobility/geofence:3.0.7", nodes[1:], replicas=1,
                        revision=12, port=8081, rolled=timedelta(days=5))
    kit.chatter(s, "fleet", "geofence", geo, "geofence",
                lambda at, r: ("warn" if r.random() < 0.1 else "info",
                               "zone cache refresh slow took=2.1s" if r.random() < 0.1 else f"zone check scooter={r.randint(10000, 99999)} inside=true"),
                seed=52, every=(60, 180))
    s.objects.append(kit.event("fleet", "Pod", geo[0]["metadata"]["name"], "Unhealthy",
                               "Readiness probe failed: Get \"http://10.40.1.77:8081/healthz\": context deadline exceeded",
                               now - timedelta(minutes=44), now - timedelta(minutes=44), type_="Warning"))
    # metrics: producer errors, http codes, cpu steady
    err = Series("kafka_producer_record_error_total", "counter", "The total number of record sends that resulted in errors")
    retry = Series("kafka_producer_record_retry_total", "counter", "The total number of retried record sends")
    http = Series("http_server_requests_total", "counter", "HTTP server requests by status")
    cpu = Series("container_cpu_usage_seconds_total", "counter", "Cumulative cpu time consumed")
    times = kit.steps(now - timedelta(hours=2), now, timedelta(seconds=30))

    def storm(at):
        return storm0 <= at < storm1
    for idx, p in enumerate(pods):
        name = p["metadata"]["name"]
        base = {"namespace": ns, "pod": name, "client_id": f"ride-events-ingest-{idx + 1}", "topic": topic}
        kit.counter_walk(err, base, times, lambda at: 4.5 + rnd.uniform(0, 2) if storm(at) and at > storm0 + timedelta(minutes=2) else 0.0, start=312)
        kit.counter_walk(retry, base, times, lambda at: 60 + rnd.uniform(0, 30) if storm(at) else rnd.uniform(0, 0.02), start=9140)
        hb = {"namespace": ns, "pod": name, "uri": "/v1/events", "method": "POST"}
        kit.counter_walk(http, {**hb, "status": "200"}, times,
                         lambda at: (9 if storm(at) else 38) + rnd.uniform(-2, 2), start=4.1e6)
        kit.counter_walk(http, {**hb, "status": "503"}, times,
                         lambda at: 26 + rnd.uniform(-3, 3) if storm(at) and at > storm0 + timedelta(minutes=2) else 0.0, start=1200)
        kit.counter_walk(cpu, {"namespace": ns, "pod": name, "container": "ride-events-ingest"}, times,
                         lambda at: 0.31 + rnd.uniform(-0.04, 0.04), start=6.2e4)
    s.metrics += [err, retry, http, cpu]
    return s


def rocksdb_volume_full() -> Story:
    """Copperline Bank: risk-scorer is a Kafka Streams app (StatefulSet) whose RocksDB state
    store for a 30-day velocity window lives on a 20Gi PVC per replica. Two of the volumes
    fill; RocksDB flushes fail with "No space left on device", the stream threads die and the
    instances sit in ERROR while the JVM and its HTTP health stay up. Consumer lag grows; the
    in-cluster Kafka is fine."""
    now = parse("2026-11-25T11:15:00Z")
    rnd = random.Random(6)
    ns, kns = "fraud", "streaming"
    full_at = {1: now - timedelta(minutes=47), 2: now - timedelta(minutes=29)}
    s = Story("risk-scorer-state-store-full", "Fraud scores stale, card-auth lag climbing", now,
              "card auths are falling back to the static fraud rules since ~10:30, risk scores look stale. "
              "consumer lag on card-auth-events keeps climbing, is kafka stuck again? brokers had a "
              "rolling restart last week",
              {"category": "resource_exhaustion",
               "culprit": {"kind": "StatefulSet", "namespace": ns, "name": "risk-scorer"},
               "evidence": ["No space left on device", "state-risk-scorer-1", "PENDING_ERROR"],
               "fix": "Expand the risk-scorer state volumes (20Gi is full) or shorten the velocity "
                      "store's retention / enable compaction, then restart the failed instances."})
    old = now - timedelta(days=500)
    s.objects += [kit.namespace(n, old) for n in (ns, kns)]
    nodes = [f"worker-{i}.k8s.copperline.internal" for i in range(1, 5)]
    for i, n in enumerate(nodes):
        s.objects.append(kit.node(n, now - timedelta(days=3, hours=i * 2), now, cpu="16", memory="64Gi",
                                  allocatable_cpu="15800m", allocatable_memory="61Gi", ip=f"192.168.20.{11 + i}"))
    s.objects.append({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                      "metadata": kit.metadata("ceph-rbd-ssd", None, old, annotations={
                          "storageclass.kubernetes.io/is-default-class": "true"}),
                      "provisioner": "rbd.csi.ceph.com", "reclaimPolicy": "Delete",
                      "allowVolumeExpansion": True, "volumeBindingMode": "Immediate",
                      "parameters": {"clusterID": "c0ppe7", "pool": "k8s-ssd"}})
    image = "harbor.copperline.internal/fraud/risk-scorer:8.4.3"
    labels = {"app": "risk-scorer"}
    tmpl = kit.template(labels, [kit.container(
        "risk-scorer", image, ports=[8080], requests={"cpu": "1", "memory": "4Gi"}, limits={"memory": "6Gi"},
        env=kit.env(BOOTSTRAP_SERVERS="kafka-bootstrap.streaming.svc:9092", APPLICATION_ID="risk-scorer",
                    STATE_DIR="/var/lib/kstreams", NUM_STREAM_THREADS="2", VELOCITY_WINDOW_DAYS="30"),
        mounts=[{"name": "state", "mountPath": "/var/lib/kstreams"}],
        readiness=kit.http_probe("/actuator/health/liveness", 8080, delay=20),
        liveness=kit.http_probe("/actuator/health/liveness", 8080, delay=60))])
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet",
           "metadata": kit.metadata("risk-scorer", ns, old, labels=labels, generation=23),
           "spec": {"replicas": 3, "serviceName": "risk-scorer", "podManagementPolicy": "Parallel",
                    "selector": {"matchLabels": labels}, "template": tmpl,
                    "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
                    "volumeClaimTemplates": [{"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                                              "metadata": {"name": "state"},
                                              "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "ceph-rbd-ssd",
                                                       "resources": {"requests": {"storage": "20Gi"}}}}]},
           "status": {"replicas": 3, "readyReplicas": 3, "currentReplicas": 3, "updatedReplicas": 3,
                      "availableReplicas": 3, "currentRevision": "risk-scorer-6d9c7f5b48",
                      "updateRevision": "risk-scorer-6d9c7f5b48", "observedGeneration": 23, "collisionCount": 0}}
    s.objects.append(sts)
    started = now - timedelta(days=5, hours=2)
    pods = []
    for i in range(3):
        name = f"risk-scorer-{i}"
        p = kit.pod(ns, name, started + timedelta(seconds=i * 5), tmpl, owner=("StatefulSet", "risk-scorer"),
                    node_name=nodes[i], statuses=[kit.running("risk-scorer", started, image=image)],
                    extra_labels={"statefulset.kubernetes.io/pod-name": name,
                                  "controller-revision-hash": "risk-scorer-6d9c7f5b48"})
        p["spec"]["volumes"] = [{"name": "state", "persistentVolumeClaim": {"claimName": f"state-risk-scorer-{i}"}}]
        p["spec"]["hostname"] = name
        p["spec"]["subdomain"] = "risk-scorer"
        pods.append(p)
        s.objects.append(p)
        s.objects.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                          "metadata": kit.metadata(f"state-risk-scorer-{i}", ns, old + timedelta(minutes=i), labels=labels,
                                                   annotations={"pv.kubernetes.io/bind-completed": "yes",
                                                                "volume.kubernetes.io/storage-provisioner": "rbd.csi.ceph.com"}),
                          "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "ceph-rbd-ssd",
                                   "resources": {"requests": {"storage": "20Gi"}}, "volumeMode": "Filesystem",
                                   "volumeName": f"pvc-{kit.uid(f'pv{i}')}"},
                          "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "20Gi"}}})
    s.objects.append(kit.service(ns, "risk-scorer", old, labels, [("http", 8080, 8080)], cluster_ip="10.233.40.12"))
    s.objects.append(kit.endpoints(ns, "risk-scorer", old, pods, [("http", 8080)]))
    # logs
    for i, p in enumerate(pods):
        name = p["metadata"]["name"]
        lines = []
        at = now - timedelta(hours=2)
        dead = full_at.get(i)
        while at < now:
            stamp = at.strftime("%Y-%m-%d %H:%M:%S,") + f"{at.microsecond // 1000:03d}"
            th = f"risk-scorer-{kit.uid('app')[:8]}-StreamThread-{rnd.randint(1, 2)}"
            if dead and at >= dead:
                if not any("No space" in x for x in lines):
                    task = f"1_{rnd.randint(0, 11)}"
                    err = [
                        f"{stamp} ERROR [{th}] o.a.k.s.p.internals.StreamThread - stream-thread [{th}] Encountered the following exception during processing and the thread is going to shut down:",
                        f"org.apache.kafka.streams.errors.ProcessorStateException: Error while executing flush from store txn-velocity-store.{kit.iso(now)[:10].replace('-', '')}",
                        "\tat org.apache.kafka.streams.state.internals.RocksDBStore.flush(RocksDBStore.java:642)",
                        "\tat org.apache.kafka.streams.state.internals.AbstractRocksDBSegmentedBytesStore.flush(AbstractRocksDBSegmentedBytesStore.java:289)",
                        "\tat org.apache.kafka.streams.processor.internals.ProcessorStateManager.flush(ProcessorStateManager.java:520)",
                        f"Caused by: org.rocksdb.RocksDBException: While appending to file: /var/lib/kstreams/risk-scorer/{task}/txn-velocity-store/txn-velocity-store.1732406400000/000847.sst: No space left on device",
                        "\tat org.rocksdb.RocksDB.flush(Native Method)",
                        f"{stamp} INFO  [{th}] o.a.k.s.p.internals.StreamThread - stream-thread [{th}] State transition from RUNNING to PENDING_SHUTDOWN",
                        f"{stamp} INFO  [{th}] o.a.k.s.KafkaStreams - stream-client [risk-scorer-{kit.uid('app')[:8]}] State transition from RUNNING to PENDING_ERROR",
                        f"{stamp} INFO  [{th}] o.a.k.s.KafkaStreams - stream-client [risk-scorer-{kit.uid('app')[:8]}] State transition from PENDING_ERROR to ERROR",
                        f"{stamp} ERROR [{th}] o.a.k.s.KafkaStreams - stream-client [risk-scorer-{kit.uid('app')[:8]}] All stream threads have died. The instance will be in error state and should be closed.",
                    ]
                    lines += err
                    for k, text in enumerate(err):
                        if text.startswith(("\t",)):
                            continue
                        lv = "error" if " ERROR " in text or "Exception" in text else "info"
                        s.docs.append(kit.log_doc(at + timedelta(milliseconds=k), text.split(" - ", 1)[-1], lv, "risk-scorer", ns, name,
                                                  "risk-scorer", **({"error__type": "org.rocksdb.RocksDBException"} if "RocksDB" in text else {})))
                else:
                    text = f"GET /actuator/health/liveness 200 ({rnd.randint(1, 4)}ms)"
                    lines.append(f"{stamp} INFO  [http-nio-8080-exec-{rnd.randint(1, 10)}] o.s.w.s.AccessLog - {text}")
                at += timedelta(seconds=rnd.randint(30, 90))
                continue
            if rnd.random() < 0.2:
                text = f"stream-thread [{th}] Processed {rnd.randint(38000, 52000)} total records, ran {rnd.randint(900, 1200)} punctuators, and committed {rnd.randint(28, 34)} total tasks since the last update"
                lv = "INFO"
            elif rnd.random() < 0.05:
                text = f"[RocksDB] stats txn-velocity-store: sst_files={rnd.randint(700, 900)} live_data={14 + i * 2 + rnd.random():.1f}GB pending_compaction={rnd.randint(1, 4)}.{rnd.randint(0, 9)}GB"
                lv = "INFO"
            else:
                text = f"scored auth={kit.suffix(str(at) + name, 10)} card_bin={rnd.randint(400000, 499999)} score={rnd.random():.3f} decision={'review' if rnd.random() < 0.03 else 'approve'} lat={rnd.randint(2, 18)}ms"
                lv = "INFO"
            lines.append(f"{stamp} {lv:5} [{th}] c.c.fraud.ScoringProcessor - {text}")
            if rnd.random() < 0.3:
                s.docs.append(kit.log_doc(at, text, lv.lower(), "risk-scorer", ns, name, "risk-scorer"))
            at += timedelta(seconds=rnd.randint(15, 50))
        s.log(ns, name, "risk-scorer", lines)
    # the broker: healthy, with routine rebalance lines when the instances left the group
    kimage = "quay.io/strimzi/kafka:0.43.0-kafka-3.8.0"
    ktmpl = kit.template({"app": "kafka", "strimzi.io/cluster": "main"}, [kit.container(
        "kafka", kimage, ports=[9092, 9404], requests={"cpu": "2", "memory": "8Gi"}, limits={"memory": "8Gi"})])
    ksts = {"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": kit.metadata("kafka", kns, old, labels={"app": "kafka"}, generation=9),
            "spec": {"replicas": 3, "serviceName": "kafka-brokers", "selector": {"matchLabels": {"app": "kafka"}},
                     "template": ktmpl},
            "status": {"replicas": 3, "readyReplicas": 3, "currentReplicas": 3, "updatedReplicas": 3,
                       "availableReplicas": 3, "observedGeneration": 9}}
    s.objects.append(ksts)
    kpods = []
    for i in range(3):
        kp = kit.pod(kns, f"kafka-{i}", now - timedelta(days=6, hours=i), ktmpl, owner=("StatefulSet", "kafka"),
                     node_name=nodes[(i + 1) % 4], statuses=[kit.running("kafka", now - timedelta(days=6, hours=i), image=kimage)],
                     extra_labels={"statefulset.kubernetes.io/pod-name": f"kafka-{i}"})
        kpods.append(kp)
        s.objects.append(kp)
    s.objects.append(kit.service(kns, "kafka-bootstrap", old, {"app": "kafka"}, [("tcp", 9092, 9092)], cluster_ip="10.233.9.90"))
    s.objects.append(kit.endpoints(kns, "kafka-bootstrap", old, kpods, [("tcp", 9092)]))
    for i, kp in enumerate(kpods):
        lines = []
        at = now - timedelta(hours=2)
        while at < now:
            if i == 1 and any(abs((at - t).total_seconds()) < 40 for t in full_at.values()):
                text = ("[GroupCoordinator 1]: Preparing to rebalance group risk-scorer in state PreparingRebalance with old "
                        f"generation {rnd.randint(400, 420)} (__consumer_offsets-17) (reason: Removing member risk-scorer-"
                        f"{kit.uid('app')[:8]}-StreamThread-1-consumer on heartbeat expiration)")
            else:
                text = rnd.choice([
                    f"[ProducerStateManager partition=card-auth-events-{rnd.randint(0, 11)}] Wrote producer snapshot at offset {rnd.randint(10**8, 10**9)} with 0 producer ids",
                    f"[LocalLog partition=__consumer_offsets-{rnd.randint(0, 49)}, dir=/var/lib/kafka/data-0/kafka-log{i}] Rolled new log segment at offset {rnd.randint(10**7, 10**8)}",
                    f"[GroupMetadataManager brokerId={i}] Removed 0 expired offsets in 1 milliseconds."])
            lines.append(f"{at.strftime('%Y-%m-%d %H:%M:%S,')}{rnd.randint(100, 999)} INFO {text} (kafka.coordinator.group.GroupCoordinator)")
            if rnd.random() < 0.4:
                s.docs.append(kit.log_doc(at, text, "info", "kafka", kns, kp["metadata"]["name"], "kafka"))
            at += timedelta(seconds=rnd.randint(40, 160))
        s.log(kns, kp["metadata"]["name"], "kafka", lines)
    s.objects.append(kit.event(kns, "Pod", "kafka-2", "Unhealthy",
                               "Readiness probe failed: command \"/opt/kafka/kafka_readiness.sh\" timed out",
                               now - timedelta(minutes=55), now - timedelta(minutes=55), type_="Warning"))
    # metrics: volume fullness, consumer lag, jvm fine
    used = Series("kubelet_volume_stats_used_bytes", "gauge", "Number of used bytes in the volume")
    cap = Series("kubelet_volume_stats_capacity_bytes", "gauge", "Capacity in bytes of the volume")
    avail = Series("kubelet_volume_stats_available_bytes", "gauge", "Number of available bytes in the volume")
    lag = Series("kafka_consumergroup_lag", "gauge", "Current approximate lag of a ConsumerGroup at Topic/Partition")
    times = kit.steps(now - timedelta(hours=6), now, timedelta(minutes=1))
    capacity = 20 * 1024 ** 3 * 0.984
    start_fill = {0: 0.80, 1: 0.905, 2: 0.89}
    for i in range(3):
        lab = {"namespace": ns, "persistentvolumeclaim": f"state-risk-scorer-{i}"}
        for at in times:
            hours = (now - timedelta(hours=6) - at).total_seconds() / -3600
            frac = start_fill[i] + hours * 0.0165 + rnd.uniform(-0.002, 0.002)
            if i in full_at and at >= full_at[i]:
                frac = 0.9996
            frac = min(frac, 0.9996)
            used.add(lab, at, int(capacity * frac))
            cap.add(lab, at, int(capacity))
            avail.add(lab, at, int(capacity * (1 - frac)))
    for part in range(12):
        owner = part % 3
        lab = {"namespace": kns, "consumergroup": "risk-scorer", "topic": "card-auth-events", "partition": str(part)}
        for at in times:
            if owner in full_at and at >= full_at[owner]:
                v = (at - full_at[owner]).total_seconds() * 6.5 + rnd.randint(0, 50)
            else:
                v = rnd.randint(0, 120)
            lag.add(lab, at, int(v))
    s.metrics += [used, cap, avail, lag]
    return s
