"""Parcelwise's late delivery notifications (a consumer that commits after every message)
and Greenleaf Pharmacy's nightly export that leaks PostgreSQL connections."""

from __future__ import annotations

import json
from datetime import UTC
from datetime import timedelta as td
from typing import Any

from tests.data.holdout33._generator.kit33 import (
    Scenario,
    container,
    endpoints,
    event,
    http_probe,
    iso,
    namespace,
    node,
    parse,
    pod,
    pod_hash,
    rollout,
    service,
    suffix,
    template,
    timeline,
)


def notifications_late() -> Scenario:
    now = parse("2026-11-26T16:40:00Z")
    s = Scenario(
        "parcel-push-notifications-late",
        "Delivery push notifications arrive half an hour late",
        now,
        "customers are getting the 'your parcel is out for delivery' push 20-30 min late and "
        "it's getting worse, sometimes it comes after the driver already rang. kafka had a "
        "leader election around noon, "
        "maybe partitions are still messed up? notifier logs show no errors\n",
        {"category": "bad_rollout",
         "culprit": {"kind": "Deployment", "namespace": "notify", "name": "shipment-notifier"},
         "evidence": ["commit=sync every=1", "4.12.0", "kafka_consumergroup_lag"],
         "fix": "Roll shipment-notifier back to 4.11.3 (asynchronous batched commits) or batch "
                "the commits again; the broker's earlier leader election had recovered."})
    old = now - td(days=200)
    nodes = ["ip-10-12-1-44.eu-central-1.compute.internal",
             "ip-10-12-2-81.eu-central-1.compute.internal",
             "ip-10-12-3-19.eu-central-1.compute.internal"]
    hosts = {n: "10.12." + n.split("-")[3] + "." + n.split("-")[4].split(".")[0] for n in nodes}
    for i, n in enumerate(nodes):
        s.add(node(n, old + td(days=i * 30), now, zone="abc"[i], region="eu-central-1"))
    for ns in ("notify", "streaming", "tracking", "monitoring"):
        s.add(namespace(ns, old))
    # kafka brokers
    ktmpl = template({"app": "kafka", "app.kubernetes.io/name": "kafka"},
                     [container("kafka", "bitnami/kafka:3.6.1", cpu="1", memory="4Gi",
                                memory_limit="6Gi", port=9092)])
    kset = {"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "kafka", "namespace": "streaming", "uid": "k-1",
                         "creationTimestamp": iso(old), "labels": {"app": "kafka"},
                         "generation": 7},
            "spec": {"replicas": 3, "serviceName": "kafka-headless",
                     "selector": {"matchLabels": {"app": "kafka"}}, "template": ktmpl,
                     "updateStrategy": {"type": "RollingUpdate"},
                     "podManagementPolicy": "Parallel"},
            "status": {"replicas": 3, "readyReplicas": 3, "currentReplicas": 3,
                       "updatedReplicas": 3, "availableReplicas": 3,
                       "currentRevision": "kafka-6f9c8d7b54", "updateRevision": "kafka-6f9c8d7b54",
                       "observedGeneration": 7}}
    s.add(kset)
    election = now - td(hours=4, minutes=48)
    for i in range(3):
        p = pod(f"kafka-{i}", "streaming", "StatefulSet", "kafka", ktmpl, nodes[i],
                now - td(days=12, hours=i), ip=f"10.12.{i + 1}.{30 + i}", host_ip=hosts[nodes[i]])
        s.add(p)
        lines = []
        t = now - td(hours=6)
        while t < now:
            stamp = t.strftime("%Y-%m-%d %H:%M:%S,") + f"{(t.second * 37) % 1000:03d}"
            lines.append(f"[{stamp}] INFO [GroupMetadataManager brokerId={i}] Group "
                         "metadata expiration removed 0 expired offsets in 1 milliseconds. "
                         "(kafka.coordinator.group.GroupMetadataManager)")
            t += td(minutes=10)
        if i == 1:
            st = election.strftime("%Y-%m-%d %H:%M:%S")
            lines += [
                f"[{st},118] WARN [ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Error in "
                "response for fetch request (type=FetchRequest, replicaId=1, maxWait=500). "
                "java.io.IOException: Connection to 2 was disconnected before the response was "
                "read",
                f"[{st},402] INFO [Controller id=1] Broker 2 session expired; electing new leaders "
                "for 12 partitions (kafka.controller.KafkaController)",
                f"[{st},977] INFO [Partition shipment-events-2 broker=1] ISR updated to 1,0 and "
                "version updated to 88 (kafka.cluster.Partition)",
                f"[{(election + td(minutes=3)).strftime('%Y-%m-%d %H:%M:%S')},210] INFO [Partition "
                "shipment-events-2 broker=1] ISR updated to 1,0,2 and version updated to 89 "
                "(kafka.cluster.Partition)",
                f"[{(election + td(minutes=4)).strftime('%Y-%m-%d %H:%M:%S')},004] INFO "
                "[Controller "
                "id=1] Preferred replica leader election completed for 12 partitions "
                "(kafka.controller.KafkaController)"]
            lines.sort()
        s.log("streaming", f"kafka-{i}", "kafka", lines)
        for line in lines:
            if "WARN" in line or "Controller" in line or "ISR" in line:
                ts = parse(line[1:20].replace(" ", "T") + "Z")
                s.doc(ts, "kafka", "streaming", f"kafka-{i}", "kafka",
                      "warn" if "WARN" in line else "info", line.split("] ", 1)[1])
    s.add(service("kafka-headless", "streaming", old, {"app": "kafka"}, 9092, 9092, headless=True))
    # notifier: revision 22 healthy, 23 (4.12.0) commits every message synchronously
    base_env = {"KAFKA_BROKERS": "kafka-headless.streaming.svc:9092",
                "KAFKA_TOPIC": "shipment-events", "KAFKA_GROUP": "shipment-notifier",
                "PUSH_GATEWAY_URL": "http://push-gateway.notify.svc/v1/send",
                "WORKER_CONCURRENCY": "1", "LOG_FORMAT": "json"}
    def ntmpl(tag: str) -> dict[str, Any]:
        return template({"app": "shipment-notifier", "team": "comms"},
                        [container("notifier", f"registry.parcelwise.io/shipment-notifier:{tag}",
                                   cpu="200m", memory="256Mi", cpu_limit="1",
                                   memory_limit="512Mi", port=9100, env=base_env,
                                   liveness=http_probe("/healthz", 9100, period=20))],
                        annotations={"prometheus.io/scrape": "true", "prometheus.io/port": "9100"})
    rollout_at = now - td(minutes=55)
    t22, t23 = ntmpl("4.11.3"), ntmpl("4.12.0")
    _, npods = rollout(s, "shipment-notifier", "notify", old + td(days=40),
                       [(21, ntmpl("4.11.1"), now - td(days=19)), (22, t22, now - td(days=6)),
                        (23, t23, rollout_at)],
                       [nodes[0], nodes[2]], ips=["10.12.1.112", "10.12.3.57"], host_ips=hosts,
                       change_cause="deploy shipment-notifier 4.12.0 (exactly-once push delivery)")
    old_pods = [f"shipment-notifier-{pod_hash('shipment-notifier22')}-{suffix('old' + str(i))}"
                for i in range(2)]
    # logs: old pods in the log store only; new pods in both
    def lag(t):
        return _lag(t, now, election, rollout_at)
    for i, pname in enumerate(old_pods):
        t = now - td(hours=6) + td(seconds=13 * i)
        while t < rollout_at:
            processed = 3480 + (t.minute * 7 + i * 31) % 240
            s.doc(t, "shipment-notifier", "notify", pname, "notifier", "info",
                  f"consumer stats window=60s processed={processed} commits=6 "
                  f"commit_avg_ms=11.4 lag={int(lag(t) / 2)} push_ok={processed - 2} push_retry=2")
            t += td(minutes=1)
        s.doc(rollout_at + td(seconds=30 + i * 35), "shipment-notifier", "notify", pname,
              "notifier", "info", "received SIGTERM, committing offsets and leaving group")
    for i, p in enumerate(npods):
        pname = p["metadata"]["name"]
        start = parse(p["metadata"]["creationTimestamp"]) + td(seconds=4)
        lines = [json.dumps({"ts": iso(start), "level": "info", "msg": "starting shipment-notifier",
                             "version": "4.12.0", "commit": "9f1c2ab"}),
                 json.dumps({"ts": iso(start + td(seconds=1)), "level": "info",
                             "msg": "consumer config", "group": "shipment-notifier",
                             "enable.auto.commit": False, "commit": "sync every=1",
                             "max.poll.records": 500, "delivery": "exactly-once"}),
                 json.dumps({"ts": iso(start + td(seconds=3)), "level": "info",
                             "msg": "partitions assigned", "partitions":
                             "shipment-events-[0,1,2]" if i == 0 else "shipment-events-[3,4,5]"})]
        for ln in lines:
            rec = json.loads(ln)
            s.doc(parse(rec["ts"]), "shipment-notifier", "notify", pname, "notifier", "info",
                  rec["msg"] + " " + " ".join(f"{k}={_plain(v)}" for k, v in rec.items()
                                              if k not in ("ts", "level", "msg")))
        t = start + td(seconds=60)
        while t < now:
            processed = 1630 + (t.minute * 11 + i * 17) % 160
            msg = (f"consumer stats window=60s processed={processed} commits={processed} "
                   f"commit_avg_ms={31 + (t.minute % 5)}.{t.second % 10} lag={int(lag(t) / 2)} "
                   f"push_ok={processed - 1} push_retry=1")
            lines.append(json.dumps({"ts": iso(t), "level": "info", "msg": msg}))
            s.doc(t, "shipment-notifier", "notify", pname, "notifier", "info", msg)
            t += td(minutes=1)
        s.log("notify", pname, "notifier", lines)
    # push gateway (downstream) and a bystander api
    gtmpl = template({"app": "push-gateway"},
                     [container("gateway", "registry.parcelwise.io/push-gateway:2.3.0",
                                readiness=http_probe("/ready"))])
    _, gpods = rollout(s, "push-gateway", "notify", old, [(8, gtmpl, now - td(days=23))],
                       nodes, ips=["10.12.1.90", "10.12.2.14", "10.12.3.101"], host_ips=hosts)
    s.add(service("push-gateway", "notify", old, {"app": "push-gateway"}, cluster_ip="10.100.31.7"))
    s.add(endpoints("push-gateway", "notify", old, [(p["metadata"]["name"], p["status"]["podIP"],
                                                     p["spec"]["nodeName"]) for p in gpods]))
    for p in gpods:
        pname = p["metadata"]["name"]
        lines = [f"{iso(now - td(minutes=m))} INFO sent batch=64 apns_ok=41 fcm_ok=23 took_ms=88"
                 for m in range(90, 0, -3)]
        lines.insert(7, f"{iso(now - td(minutes=70))} WARN fcm token unregistered device=… dropped")
        s.log("notify", pname, "gateway", lines)
    ttmpl = template({"app": "tracking-api"}, [container("api", "registry.parcelwise.io/"
                                                         "tracking-api:7.0.4",
                                                         readiness=http_probe("/ready"))])
    rollout(s, "tracking-api", "tracking", old, [(31, ttmpl, now - td(days=2))], nodes[:2],
            ips=["10.12.1.70", "10.12.2.71"], host_ips=hosts)
    s.add({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
           "metadata": {"name": "tracking-api", "namespace": "tracking",
                        "creationTimestamp": iso(old)},
           "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                       "name": "tracking-api"}, "minReplicas": 2,
                    "maxReplicas": 6, "metrics": [{"type": "Resource", "resource": {
                        "name": "cpu", "target": {"type": "Utilization",
                                                  "averageUtilization": 70}}}]},
           "status": {"currentReplicas": 2, "desiredReplicas": 2}})
    s.add(event("tracking", "HorizontalPodAutoscaler", "tracking-api", "FailedGetResourceMetric",
                "failed to get cpu utilization: unable to get metrics for resource cpu: no "
                "metrics returned from resource metrics API", now - td(minutes=41),
                now - td(minutes=39), count=3, component="horizontal-pod-autoscaler",
                api="autoscaling/v2"))
    s.add(event("notify", "Pod", gpods[1]["metadata"]["name"], "Pulled",
                'Container image "registry.parcelwise.io/push-gateway:2.3.0" already present on '
                "machine", now - td(minutes=52), now - td(minutes=52), type_="Normal"))
    # metrics
    ts = timeline(now, 6)
    el, ro = election.timestamp(), rollout_at.timestamp()
    for part in range(6):
        s.metrics.gauge("kafka_consumergroup_lag", "Current approximate lag of a consumer group",
                        {"namespace": "monitoring", "pod": "kafka-exporter-7d9f8-x2kqp",
                         "consumergroup": "shipment-notifier", "topic": "shipment-events",
                         "partition": str(part)}, ts,
                        lambda t, part=part: lag(_dt(t)) / 6 * (0.9 + part * 0.04))
    s.metrics.gauge("kafka_topic_partition_under_replicated_partition",
                    "Under replicated partitions", {"namespace": "monitoring",
                                                    "pod": "kafka-exporter-7d9f8-x2kqp",
                                                    "topic": "shipment-events", "partition": "2"},
                    ts, lambda t: 1 if el <= t < el + 180 else 0)
    for i, pname in enumerate(old_pods):
        s.metrics.counter("shipment_notifier_messages_processed", "Messages handled",
                          {"namespace": "notify", "pod": pname, "container": "notifier"},
                          [t for t in ts if t <= ro + 60],
                          lambda t, i=i: 0 if el < t < el + 200 else 59.0 + i)
        s.metrics.counter("shipment_notifier_offset_commits", "Offset commit requests",
                          {"namespace": "notify", "pod": pname, "container": "notifier"},
                          [t for t in ts if t <= ro + 60], lambda t: 0.1)
    for i, p in enumerate(npods):
        pname = p["metadata"]["name"]
        newt = [t for t in ts if t >= ro + 30]
        s.metrics.counter("shipment_notifier_messages_processed", "Messages handled",
                          {"namespace": "notify", "pod": pname, "container": "notifier"}, newt,
                          lambda t, i=i: 28.0 + i)
        s.metrics.counter("shipment_notifier_offset_commits", "Offset commit requests",
                          {"namespace": "notify", "pod": pname, "container": "notifier"}, newt,
                          lambda t, i=i: 28.0 + i)
    for pname, window in [(old_pods[0], [t for t in ts if t <= ro + 60]),
                          (old_pods[1], [t for t in ts if t <= ro + 60]),
                          *[(p["metadata"]["name"], [t for t in ts if t >= ro + 30])
                            for p in npods]]:
        lab = {"namespace": "notify", "pod": pname, "container": "notifier"}
        s.metrics.counter("container_cpu_usage_seconds", "CPU", lab, window, lambda t: 0.21)
        s.metrics.counter("container_cpu_cfs_periods", "periods", lab, window, lambda t: 10)
        s.metrics.counter("container_cpu_cfs_throttled_periods", "throttled", lab, window,
                          lambda t: 0.0)
        s.metrics.gauge("container_memory_working_set_bytes", "memory", lab, window,
                        lambda t: 181_000_000 + (t % 600) * 1000)
    for p in gpods:
        s.metrics.counter("http_requests", "requests", {"namespace": "notify",
                          "pod": p["metadata"]["name"], "code": "200", "path": "/v1/send"},
                          ts, lambda t: 0.6 if t >= ro else 1.2)
    return s


def _plain(value: Any) -> str:
    """A value as the service's logfmt encoder writes it (JSON's false, not Python's)."""
    return value if isinstance(value, str) else json.dumps(value)


def _dt(t: int) -> Any:
    from datetime import datetime
    return datetime.fromtimestamp(t, UTC)


def _lag(t: Any, now: Any, election: Any, rollout_at: Any) -> float:
    """Messages behind: small, a short spike at the leader election that drains in minutes,
    then a steady climb after the rollout (arrivals ~112/s, the new pods handle ~56/s)."""
    base = 220 + (t.minute % 7) * 15
    since_el = (t - election).total_seconds()
    if 0 <= since_el < 180:
        base += since_el * 95
    elif 180 <= since_el < 600:
        base += max(0.0, 17100 - (since_el - 180) * 45)
    since_ro = (t - rollout_at).total_seconds()
    if since_ro > 0:
        base += since_ro * 56
    return base


# --------------------------------------------------------------------------- pharmacy


def too_many_clients() -> Scenario:
    now = parse("2026-11-24T01:48:00Z")
    s = Scenario(
        "pharmacy-refills-too-many-clients",
        "Prescription refills fail at night with database errors",
        now,
        "refills are failing in the app since ~1:40, prescription-api logs say 'too many "
        "clients'. is postgres down?? @dba-oncall can you look, maybe it needs a restart\n",
        {"category": "resource_exhaustion",
         "culprit": {"kind": "CronJob", "namespace": "rx-batch", "name": "claims-reconciliation"},
         "evidence": ["sorry, too many clients already", "claims_batch", "opening connection"],
         "fix": "Stop the running claims-reconciliation job to free its idle connections and "
                "fix it to reuse one connection (or close each chunk's connection); consider a "
                "per-role connection limit for claims_batch."})
    old = now - td(days=300)
    nodes = [f"aks-pool1-3871{i}-vmss00000{i}" for i in range(4)]
    hosts = {n: f"10.224.0.{4 + i}" for i, n in enumerate(nodes)}
    for i, n in enumerate(nodes):
        s.add(node(n, old + td(days=i * 40), now, zone=str(i % 3 + 1), region="westeurope-",
                   instance="Standard_D4s_v5", kubelet="v1.28.9"))
    for ns in ("rx", "rx-batch", "rx-data", "web"):
        s.add(namespace(ns, old))
    # postgres
    pg_tmpl = template({"app": "postgres", "role": "primary"},
                       [container("postgres", "postgres:15.6", cpu="2", memory="8Gi",
                                  memory_limit="8Gi", port=5432,
                                  env={"POSTGRES_DB": "rx", "PGDATA": "/var/lib/postgresql/data"},
                                  args=["-c", "max_connections=200", "-c",
                                        "shared_buffers=2GB", "-c",
                                        "log_line_prefix=%m [%p] %q%u@%d "])])
    s.add({"apiVersion": "apps/v1", "kind": "StatefulSet",
           "metadata": {"name": "postgres", "namespace": "rx-data", "uid": "pg-1",
                        "creationTimestamp": iso(old), "labels": {"app": "postgres"},
                        "generation": 4},
           "spec": {"replicas": 1, "serviceName": "postgres",
                    "selector": {"matchLabels": {"app": "postgres"}}, "template": pg_tmpl},
           "status": {"replicas": 1, "readyReplicas": 1, "currentReplicas": 1,
                      "updatedReplicas": 1, "availableReplicas": 1, "observedGeneration": 4}})
    pg = pod("postgres-0", "rx-data", "StatefulSet", "postgres", pg_tmpl, nodes[3],
             now - td(days=33), ip="10.244.3.15", host_ip=hosts[nodes[3]])
    s.add(pg, service("postgres", "rx-data", old, {"app": "postgres"}, 5432, 5432,
                      cluster_ip="10.0.88.20"))
    s.add(endpoints("postgres", "rx-data", old, [("postgres-0", "10.244.3.15", nodes[3])],
                    port=5432))
    start = parse("2026-11-24T01:00:00Z")
    full = parse("2026-11-24T01:38:40Z")
    pg_lines = []
    t = now - td(hours=3)
    while t < now:
        pg_lines.append(f"{t.strftime('%Y-%m-%d %H:%M:%S')}.{t.second * 11 % 1000:03d} UTC "
                        "[71] LOG:  "
                        "checkpoint starting: time")
        pg_lines.append(f"{(t + td(seconds=92)).strftime('%Y-%m-%d %H:%M:%S')}.512 UTC [71] LOG:  "
                        "checkpoint complete: wrote 1843 buffers (0.7%); 0 WAL file(s) added, "
                        "0 removed, 1 recycled; write=89.901 s, sync=0.011 s, total=90.004 s")
        t += td(minutes=5)
    pid = 48211
    t = full
    k = 0
    while t < now:
        pid += 3
        who = ["rx_app", "rx_app", "rx_refill", "rx_app", "claims_batch"][k % 5]
        app = {"rx_app": "prescription-api", "rx_refill": "refill-worker",
               "claims_batch": "claims-reconciliation"}[who]
        line = (f"{t.strftime('%Y-%m-%d %H:%M:%S')}.{(k * 137) % 1000:03d} UTC [{pid}] "
                f"{who}@rx FATAL:  sorry, too many clients already")
        pg_lines.append(line)
        s.doc(t, "postgres", "rx-data", "postgres-0", "postgres", "fatal",
              "sorry, too many clients already", **{"user.name": who, "labels.app": app,
                                                       "process.pid": pid})
        t += td(seconds=7 + k % 5)
        k += 1
    pg_lines.append(f"{(now - td(minutes=31)).strftime('%Y-%m-%d %H:%M:%S')}.004 UTC [52119] "
                    "LOG:  automatic vacuum of table \"rx.public.refill_requests\": index scans: 1")
    pg_lines.sort()
    s.log("rx-data", "postgres-0", "postgres", pg_lines)
    # the cronjob and its job
    job_name = f"claims-reconciliation-{int(start.timestamp()) // 60}"
    jtmpl = template({"app": "claims-reconciliation", "job-name": job_name},
                     [container("reconcile", "acr.greenleafrx.io/claims-batch:2026.11.3",
                                cpu="500m", memory="512Mi", memory_limit="1Gi", port=None,
                                env={"PGHOST": "postgres.rx-data.svc", "PGDATABASE": "rx",
                                     "PGUSER": "claims_batch", "CHUNK_SIZE": "500",
                                     "PGAPPNAME": "claims-reconciliation"},
                                args=["python", "-m", "claims.reconcile", "--since", "yesterday"])],
                     restartPolicy="Never")
    jtmpl["spec"]["restartPolicy"] = "Never"
    s.add({"apiVersion": "batch/v1", "kind": "CronJob",
           "metadata": {"name": "claims-reconciliation", "namespace": "rx-batch",
                        "uid": "cj-claims", "creationTimestamp": iso(now - td(days=9)),
                        "labels": {"app": "claims-reconciliation"},
                        "annotations": {"greenleafrx.io/owner": "billing-data"}},
           "spec": {"schedule": "0 1 * * *", "concurrencyPolicy": "Forbid",
                    "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1,
                    "jobTemplate": {"spec": {"backoffLimit": 0, "activeDeadlineSeconds": 10800,
                                             "template": jtmpl}}},
           "status": {"active": [{"kind": "Job", "namespace": "rx-batch", "name": job_name}],
                      "lastScheduleTime": iso(start),
                      "lastSuccessfulTime": iso(start - td(days=1) + td(minutes=52))}})
    s.add({"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": job_name, "namespace": "rx-batch", "uid": "job-claims",
                        "creationTimestamp": iso(start), "labels": {"app": "claims-reconciliation"},
                        "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob",
                                             "name": "claims-reconciliation", "uid": "cj-claims",
                                             "controller": True}]},
           "spec": {"backoffLimit": 0, "completions": 1, "parallelism": 1, "template": jtmpl},
           "status": {"active": 1, "startTime": iso(start), "ready": 1}})
    jpod_name = f"{job_name}-{suffix('claimsjob')}"
    jp = pod(jpod_name, "rx-batch", "Job", job_name, jtmpl, nodes[1], start + td(seconds=2),
             ip="10.244.1.77", host_ip=hosts[nodes[1]])
    s.add(jp)
    jl = []
    t = start + td(seconds=5)
    jl.append(f"{iso(t)} INFO claims.reconcile: reconciling claims since 2026-11-23, 78,412 rows "
              "in 157 chunks of 500")
    chunk = 1
    t += td(seconds=2)
    pid = 30021
    while t < now and chunk <= 157:
        if t < full:
            jl.append(f"{iso(t)} DEBUG claims.db: opening connection to postgres.rx-data.svc:5432 "
                      f"db=rx user=claims_batch (chunk {chunk})")
            jl.append(f"{iso(t + td(seconds=14))} INFO claims.reconcile: chunk {chunk}/157 "
                      f"reconciled 500 claims, 3 adjustments, backend_pid={pid + chunk * 7}")
            t += td(seconds=16 + chunk % 3)
            chunk += 1
        else:
            jl.append(f"{iso(t)} DEBUG claims.db: opening connection to postgres.rx-data.svc:5432 "
                      f"db=rx user=claims_batch (chunk {chunk})")
            jl.append(f"{iso(t + td(seconds=1))} WARNING claims.reconcile: chunk {chunk} failed: "
                      "psycopg2.OperationalError: connection to server at "
                      '"postgres.rx-data.svc" (10.0.88.20), port 5432 failed: FATAL:  sorry, too '
                      "many clients already; retrying in 30s")
            t += td(seconds=31)
    s.log("rx-batch", jpod_name, "reconcile", jl)
    for ln in jl[::3]:
        lvl = ln.split(" ")[1].lower()
        s.doc(parse(ln.split(" ")[0]), "claims-reconciliation", "rx-batch", jpod_name,
              "reconcile", "warn" if lvl == "warning" else lvl, ln.split(": ", 1)[1])
    # last night's job, completed
    prev = f"claims-reconciliation-{int((start - td(days=1)).timestamp()) // 60}"
    s.add({"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": prev, "namespace": "rx-batch", "uid": "job-prev",
                        "creationTimestamp": iso(start - td(days=1)),
                        "labels": {"app": "claims-reconciliation"},
                        "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob",
                                             "name": "claims-reconciliation", "uid": "cj-claims",
                                             "controller": True}]},
           "spec": {"backoffLimit": 0, "completions": 1, "parallelism": 1, "template": jtmpl},
           "status": {"succeeded": 1, "startTime": iso(start - td(days=1)),
                      "completionTime": iso(start - td(days=1) + td(minutes=52)),
                      "conditions": [{"type": "Complete", "status": "True",
                                      "lastTransitionTime": iso(start - td(days=1) +
                                                                td(minutes=52))}]}})
    # online services
    def jtmpl_app(name: str, image: str, env: dict[str, str]) -> dict[str, Any]:
        return template({"app": name}, [container("app", image, cpu="500m", memory="768Mi",
                                                  memory_limit="1Gi", env=env,
                                                  readiness=http_probe("/actuator/health/readiness"),
                                                  liveness=http_probe("/actuator/health/liveness",
                                                                      period=20))])
    atmpl = jtmpl_app("prescription-api", "acr.greenleafrx.io/prescription-api:5.19.2",
                      {"SPRING_DATASOURCE_URL": "jdbc:postgresql://postgres.rx-data.svc:5432/rx",
                       "SPRING_DATASOURCE_USERNAME": "rx_app",
                       "SPRING_DATASOURCE_HIKARI_MAXIMUM_POOL_SIZE": "10"})
    _, apods = rollout(s, "prescription-api", "rx", old, [(44, atmpl, now - td(days=5))],
                       nodes[:3], ips=["10.244.0.31", "10.244.1.32", "10.244.2.33"],
                       host_ips=hosts)
    s.add(service("prescription-api", "rx", old, {"app": "prescription-api"},
                  cluster_ip="10.0.41.9"))
    s.add(endpoints("prescription-api", "rx", old,
                    [(p["metadata"]["name"], p["status"]["podIP"], p["spec"]["nodeName"])
                     for p in apods]))
    for i, p in enumerate(apods):
        pname = p["metadata"]["name"]
        lines = []
        t = now - td(hours=1, minutes=30) + td(seconds=i * 9)
        k = 0
        while t < now:
            ts_ = t.strftime("%Y-%m-%d %H:%M:%S.") + f"{(k * 71) % 1000:03d}"
            if t < full:
                lines.append(f"{ts_}  INFO 1 --- [nio-8080-exec-{k % 10 + 1}] "
                             "c.g.rx.refill.RefillController      : POST /v1/refills 201 "
                             f"({40 + k % 30}ms)")
            else:
                if k % 3 == 0:
                    msg = ("HikariPool-1 - Connection is not available, request timed out after "
                           "30000ms (total=4, active=4, idle=0, waiting=6)")
                    lines.append(f"{ts_}  WARN 1 --- [nio-8080-exec-{k % 10 + 1}] "
                                 f"o.h.engine.jdbc.spi.SqlExceptionHelper : {msg}")
                    s.doc(t, "prescription-api", "rx", pname, "app", "warn", msg,
                          **{"log.logger": "o.h.engine.jdbc.spi.SqlExceptionHelper"})
                msg = ("HikariPool-1 - Exception during pool initialization / add connection: "
                       "org.postgresql.util.PSQLException: FATAL: sorry, too many clients already")
                lines.append(f"{ts_} ERROR 1 --- [onnection adder] "
                             "com.zaxxer.hikari.pool.HikariPool"
                             f"        : {msg}")
                s.doc(t, "prescription-api", "rx", pname, "app", "error", msg,
                      **{"log.logger": "com.zaxxer.hikari.pool.HikariPool",
                         "error.type": "org.postgresql.util.PSQLException"})
                lines.append(f"{ts_} ERROR 1 --- [nio-8080-exec-{k % 10 + 1}] "
                             "c.g.rx.web.ErrorAdvice                 : POST /v1/refills 500 "
                             "CannotCreateTransactionException: Could not open JPA EntityManager "
                             "for transaction")
            t += td(seconds=20)
            k += 1
        s.log("rx", pname, "app", lines)
    wtmpl = jtmpl_app("refill-worker", "acr.greenleafrx.io/refill-worker:1.8.0",
                      {"PGHOST": "postgres.rx-data.svc", "PGUSER": "rx_refill"})
    _, wpods = rollout(s, "refill-worker", "rx", old, [(12, wtmpl, now - td(days=14))],
                       nodes[1:3], ips=["10.244.1.61", "10.244.2.62"], host_ips=hosts)
    for p in wpods:
        s.log("rx", p["metadata"]["name"], "app",
              [f"{iso(now - td(minutes=m))} INFO refill-worker: polled 0 due refills"
               for m in range(60, 0, -2)] +
              [f"{iso(now - td(minutes=6))} ERROR refill-worker: poll failed: FATAL: sorry, too "
               "many clients already (will retry)"])
    ftmpl = template({"app": "pharmacy-web"}, [container("web", "acr.greenleafrx.io/pharmacy-web"
                                                         ":3.2.7", readiness=http_probe("/"))])
    rollout(s, "pharmacy-web", "web", old, [(70, ftmpl, now - td(days=1, hours=3))], nodes[:2],
            ips=["10.244.0.90", "10.244.1.91"], host_ips=hosts)
    # a backup cronjob that ran fine, an old warning
    s.add({"apiVersion": "batch/v1", "kind": "CronJob",
           "metadata": {"name": "pg-basebackup", "namespace": "rx-data", "uid": "cj-bb",
                        "creationTimestamp": iso(old)},
           "spec": {"schedule": "30 0 * * *", "jobTemplate": {"spec": {"template": template(
               {"app": "pg-basebackup"}, [container("backup", "postgres:15.6", port=None)],
               restartPolicy="OnFailure")}}},
           "status": {"lastScheduleTime": iso(parse("2026-11-24T00:30:00Z")),
                      "lastSuccessfulTime": iso(parse("2026-11-24T00:41:12Z"))}})
    s.add(event("rx", "Pod", apods[0]["metadata"]["name"], "Unhealthy",
                "Readiness probe failed: Get "
                "\"http://10.244.0.31:8080/actuator/health/readiness\": "
                "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
                now - td(minutes=8), now - td(minutes=2), count=4, host=nodes[0]))
    s.add(event("rx-batch", "Job", job_name, "SuccessfulCreate", f"Created pod: {jpod_name}",
                now - td(minutes=48), now - td(minutes=48), type_="Normal",
                component="job-controller", api="batch/v1"))
    # metrics
    ts = timeline(now, 4, 120)
    st, fl = start.timestamp(), full.timestamp()
    def batch_conns(t: int) -> float:
        if t < st:
            return 0
        return min(141.0, (t - st) / 16.6)
    exporter = {"namespace": "rx-data", "pod": "postgres-exporter-5f7c9-lq2wd",
                "job": "postgres-exporter", "server": "postgres.rx-data.svc:5432"}
    s.metrics.gauge("pg_settings_max_connections", "max_connections", exporter, ts, lambda t: 200)
    s.metrics.gauge("pg_stat_activity_count", "connections by state",
                    {**exporter, "datname": "rx", "state": "idle"}, ts,
                    lambda t: 42 + batch_conns(t) if t >= fl
                    else 40 + batch_conns(t) + (t // 60) % 3)
    s.metrics.gauge("pg_stat_activity_count", "connections by state",
                    {**exporter, "datname": "rx", "state": "active"}, ts,
                    lambda t: 8 + (t // 60) % 4 if t < fl else 14)
    s.metrics.gauge("pg_stat_activity_count", "connections by state",
                    {**exporter, "datname": "rx", "state": "idle in transaction"}, ts,
                    lambda t: (t // 120) % 2)
    s.metrics.gauge("pg_up", "postgres up", exporter, ts, lambda t: 1)
    for p in apods:
        lab = {"namespace": "rx", "pod": p["metadata"]["name"], "uri": "/v1/refills",
               "method": "POST"}
        s.metrics.histogram("http_server_requests_seconds", "latency", {**lab, "status": "201"},
                            ts, lambda t: 3.1 if t < fl else 0.3, lambda t: 0.05, 0.5)
        s.metrics.histogram("http_server_requests_seconds", "latency", {**lab, "status": "500"},
                            ts, lambda t: 0.01 if t < fl else 2.6, lambda t: 0.4 if t < fl
                            else 9.0, 0.4)
    return s


STORIES = {"parcel-push-notifications-late": notifications_late,
           "pharmacy-refills-too-many-clients": too_many_clients}
