"""Stories 7-8: PostgreSQL out of /dev/shm (the 64Mi default); a LimitRange whose
maxLimitRequestRatio refuses a new revision's pods."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from . import kube as k
from .stories_b import _healthy
from .story import Story

_QUERY = ("SELECT date_trunc('month', o.created_at) AS m, r.region_name, sum(oi.amount) "
          "FROM fact_order_items oi JOIN fact_orders o ON o.id = oi.order_id JOIN dim_region r "
          "ON r.id = o.region_id WHERE o.created_at >= '2025-12-01' GROUP BY 1, 2 ORDER BY 1, 2")


def postgres_shm() -> Story:
    now = datetime(2026, 12, 1, 9, 20, tzinfo=UTC)
    s = Story(
        id="superset-month-end-diskfull", title="Month-end dashboards fail with DiskFull",
        now=now,
        report="""month-end dashboards in superset fail with some 'DiskFull' error?? small charts
load fine. did the warehouse db disk fill up again? it did back in june. finance needs the
november numbers by noon""",
        truth={"category": "resource_exhaustion",
               "culprit": {"kind": "StatefulSet", "namespace": "bi", "name": "warehouse-pg"},
               "evidence": ["could not resize shared memory segment",
                            "No space left on device", "kubelet_volume_stats_used_bytes"],
               "fix": "Mount an emptyDir with medium: Memory (sizeLimit ~2Gi) at /dev/shm in "
                      "warehouse-pg: the container runtime's 64Mi /dev/shm is too small for "
                      "parallel hash joins (or lower max_parallel_workers_per_gather); the "
                      "data volume is 38% used"})
    rnd = random.Random(7)
    nodes = [f"bi-pool-{x}" for x in ("m5qz", "t8wc", "r2kd")]
    s.add(k.namespace("bi", "2025-02-01T00:00:00Z"),
          *[k.node(n, "2026-11-10T00:00:00Z", now, zone=f"fsn1-dc{14 + i}",
                   instance="ccx43", cpu="16", memory="64Gi", pool="bi")
            for i, n in enumerate(nodes)])
    conf = ("listen_addresses = '*'\nmax_connections = 200\nshared_buffers = 8GB\n"
            "effective_cache_size = 24GB\nwork_mem = 256MB\nmaintenance_work_mem = 2GB\n"
            "max_worker_processes = 16\nmax_parallel_workers = 8\n"
            "max_parallel_workers_per_gather = 4\ndynamic_shared_memory_type = posix\n"
            "log_min_duration_statement = 5000\nlog_checkpoints = on\n")
    s.add({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": k.metadata("ConfigMap", "bi", "warehouse-pg-config",
                                  "2025-02-01T00:10:00Z", labels={"app": "warehouse-pg"}),
           "data": {"postgresql.conf": conf}})
    img = "docker.io/library/postgres:16.4-bookworm"
    c = k.container("postgres", img, ports=[{"containerPort": 5432, "name": "postgres"}],
                    requests={"cpu": "4", "memory": "16Gi"}, limits={"memory": "24Gi"},
                    args=["-c", "config_file=/etc/postgresql/postgresql.conf"],
                    env=[{"name": "PGDATA", "value": "/var/lib/postgresql/data/pgdata"},
                         {"name": "POSTGRES_DB", "value": "warehouse"}],
                    volumeMounts=[{"name": "data", "mountPath": "/var/lib/postgresql/data"},
                                  {"name": "config", "mountPath": "/etc/postgresql"}],
                    readinessProbe={"exec": {"command": ["pg_isready", "-U", "postgres"]},
                                    "periodSeconds": 10})
    t = k.pod_template({"app": "warehouse-pg"}, [c], volumes=[
        {"name": "config", "configMap": {"name": "warehouse-pg-config"}}])
    s.add({"apiVersion": "apps/v1", "kind": "StatefulSet",
           "metadata": k.metadata("StatefulSet", "bi", "warehouse-pg", "2025-02-01T00:10:00Z",
                                  labels={"app": "warehouse-pg"}),
           "spec": {"replicas": 1, "serviceName": "warehouse-pg",
                    "selector": {"matchLabels": {"app": "warehouse-pg"}}, "template": t,
                    "volumeClaimTemplates": [{
                        "metadata": {"name": "data"},
                        "spec": {"accessModes": ["ReadWriteOnce"],
                                 "storageClassName": "hcloud-volumes",
                                 "resources": {"requests": {"storage": "500Gi"}}}}]},
           "status": {"replicas": 1, "readyReplicas": 1, "currentReplicas": 1,
                      "updatedReplicas": 1, "availableReplicas": 1,
                      "currentRevision": "warehouse-pg-5d8f7c9b6", "observedGeneration": 6}},
          {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
           "metadata": k.metadata("PersistentVolumeClaim", "bi", "data-warehouse-pg-0",
                                  "2025-02-01T00:10:05Z", labels={"app": "warehouse-pg"}),
           "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "hcloud-volumes",
                    "resources": {"requests": {"storage": "500Gi"}},
                    "volumeName": "pvc-2e7f1c0a-93b4-4d11-8a7e-5c4b0f1d9e21"},
           "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"],
                      "capacity": {"storage": "500Gi"}}},
          {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
           "metadata": k.metadata("StorageClass", "", "hcloud-volumes", "2025-01-20T00:00:00Z"),
           "provisioner": "csi.hetzner.cloud", "reclaimPolicy": "Retain",
           "allowVolumeExpansion": True, "volumeBindingMode": "WaitForFirstConsumer"})
    pg_spec = {"metadata": t["metadata"], "spec": {**t["spec"], "volumes": [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-warehouse-pg-0"}},
        *t["spec"]["volumes"]]}}
    s.add(k.pod("bi", "warehouse-pg-0", k.stamp(now, 7600), pg_spec,
                owner=("StatefulSet", "warehouse-pg"), node_name=nodes[0], ip="10.50.0.17",
                phase="Running", ready=True,
                statuses=[k.running("postgres", img, k.stamp(now, 7599))],
                extra_labels={"statefulset.kubernetes.io/pod-name": "warehouse-pg-0"}),
          k.service("bi", "warehouse-pg", "2025-02-01T00:10:00Z", {"app": "warehouse-pg"},
                    [{"name": "postgres", "port": 5432, "targetPort": 5432}],
                    cluster_ip="10.43.20.5"))
    web = _healthy(s, "bi", "superset", "docker.io/apache/superset:4.1.1", nodes, 2, 8088,
                   "10.50.1", revision=12, started_ago=9000, probe_path="/health")
    workers = _healthy(s, "bi", "superset-worker", "docker.io/apache/superset:4.1.1", nodes, 3,
                       8088, "10.50.2", revision=12, started_ago=9000, probe_path="/health")
    s.add({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
           "metadata": k.metadata("HorizontalPodAutoscaler", "bi", "superset",
                                  "2025-02-02T00:00:00Z"),
           "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                       "name": "superset"}, "minReplicas": 2, "maxReplicas": 6,
                    "metrics": [{"type": "Resource", "resource": {
                        "name": "cpu", "target": {"type": "Utilization",
                                                  "averageUtilization": 75}}}]},
           "status": {"currentReplicas": 2, "desiredReplicas": 2,
                      "currentMetrics": [{"type": "Resource", "resource": {
                          "name": "cpu", "current": {"averageUtilization": 31}}}],
                      "conditions": [{"type": "ScalingActive", "status": "True",
                                      "reason": "ValidMetricFound",
                                      "message": "the HPA was able to successfully calculate "
                                                 "a replica count from cpu resource "
                                                 "utilization (percentage of request)",
                                      "lastTransitionTime": k.stamp(now, 20)}]}},
          k.event("bi", "HorizontalPodAutoscaler", "superset", "FailedGetResourceMetric",
                  "failed to get cpu utilization: unable to get metrics for resource cpu: no "
                  "metrics returned from resource metrics API", first=k.stamp(now, 24),
                  last=k.stamp(now, 21), count=4, component="horizontal-pod-autoscaler"))
    # postgres: small queries fine, the big month-end ones fail on the DSM segment
    pg_lines: list[str] = []
    failures = sorted(rnd.uniform(1, 50) for _ in range(14))
    pid = 81200

    def pgts(moment: datetime) -> str:
        return moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{moment.microsecond // 1000:03d} UTC"
    for m in range(60, 0, -1):
        moment = now - timedelta(minutes=m)
        if m % 5 == 0:
            line = (f"checkpoint complete: wrote {rnd.randint(9000, 30000)} buffers "
                    f"({rnd.uniform(1, 6):.1f}%); 0 WAL file(s) added, 0 removed, "
                    f"{rnd.randint(4, 12)} recycled; write={rnd.uniform(20, 27):.3f} s")
            pg_lines.append(f"{pgts(moment)} [62] LOG:  {line}")
            s.log(m, line, "info", "warehouse-pg", "bi", "warehouse-pg-0", "postgres")
        if m % 7 == 0:
            dur = rnd.uniform(5000, 9000)
            line = (f"duration: {dur:.3f} ms  statement: SELECT count(*) FROM fact_orders "
                    "WHERE created_at >= now() - interval '1 day'")
            pg_lines.append(f"{pgts(moment)} [{pid + m}] LOG:  {line}")
            s.log(m, line, "info", "warehouse-pg", "bi", "warehouse-pg-0", "postgres")
    for f in failures:
        pid += rnd.randint(3, 40)
        moment = now - timedelta(minutes=f)
        size = rnd.choice([67108864, 134217728, 268435456])
        seg = f"/PostgreSQL.{rnd.randint(10**9, 4 * 10**9)}"
        err = (f'could not resize shared memory segment "{seg}" to {size} bytes: '
               "No space left on device")
        pg_lines += [f"{pgts(moment)} [{pid}] ERROR:  {err}",
                     f"{pgts(moment)} [{pid}] STATEMENT:  {_QUERY}",
                     f"{pgts(moment + timedelta(milliseconds=40))} [54] LOG:  background worker "
                     f'"parallel worker" (PID {pid + 1}) exited with exit code 1']
        s.log(f, err, "error", "warehouse-pg", "bi", "warehouse-pg-0", "postgres",
              **{"error.code": "53100"})
        s.log(f - 0.0007, f'background worker "parallel worker" (PID {pid + 1}) exited with '
              "exit code 1", "info", "warehouse-pg", "bi", "warehouse-pg-0", "postgres")
        w = workers[int(f) % 3]
        s.log(f - 0.001, f"Query failed: psycopg2.errors.DiskFull: {err}", "error",
              "superset-worker", "bi", w, "superset-worker",
              **{"error.type": "psycopg2.errors.DiskFull"})
        s.log(f - 0.002, "Chart 'Revenue by region (monthly)' on dashboard 'Month-end "
              "finance' failed: DiskFull", "error", "superset", "bi", web[int(f) % 2],
              "superset")
    for m in range(60, 0, -2):
        s.log(m, f"Query finished in {rnd.uniform(0.2, 3):.2f}s: chart 'Orders today'", "info",
              "superset-worker", "bi", workers[m % 3], "superset-worker")
    pg_lines.sort()
    s.pod_log("bi", "warehouse-pg-0", "postgres", pg_lines)
    for m in range(60, -1, -2):
        s.metrics.add("kubelet_volume_stats_used_bytes", "gauge",
                      "Number of used bytes in the volume",
                      {"namespace": "bi", "persistentvolumeclaim": "data-warehouse-pg-0"},
                      [(s.unix(m), 190.4 * 2**30 + (60 - m) * 2**22)])
        s.metrics.add("kubelet_volume_stats_capacity_bytes", "gauge",
                      "Capacity in bytes of the volume",
                      {"namespace": "bi", "persistentvolumeclaim": "data-warehouse-pg-0"},
                      [(s.unix(m), 491.9 * 2**30)])
        s.metrics.add("container_memory_working_set_bytes", "gauge",
                      "Current working set of the container in bytes",
                      {"namespace": "bi", "pod": "warehouse-pg-0", "container": "postgres"},
                      [(s.unix(m), (9.1 + rnd.uniform(-0.3, 0.6)) * 2**30)])
        s.metrics.add("pg_stat_database_numbackends", "gauge", "Number of backends",
                      {"datname": "warehouse", "namespace": "bi"},
                      [(s.unix(m), float(rnd.randint(18, 34)))])
    return s


def limit_ratio_refused() -> Story:
    now = datetime(2026, 11, 24, 13, 50, tzinfo=UTC)
    s = Story(
        id="query-embedder-rollout-no-pods", title="query-embedder rollout creates no pod",
        now=now,
        report="""bumped query-embedder memory to 10Gi because it kept getting OOMKilled
overnight, but the deploy doesn't do anything - still the old pods, and they still OOM.
kubectl rollout status just hangs. someone pls look, search relevance is degraded while it
restarts""",
        truth={"category": "quota_exceeded",
               "culprit": {"kind": "Deployment", "namespace": "search",
                           "name": "query-embedder"},
               "evidence": ["memory max limit to request ratio per Container is 4, but "
                            "provided ratio is 5.000000", "FailedCreate"],
               "fix": "Raise query-embedder's memory request with its limit (e.g. request "
                      "3Gi for a 10Gi limit) so the ratio stays within the search LimitRange's "
                      "maxLimitRequestRatio 4, or relax the LimitRange"})
    rnd = random.Random(8)
    nodes = [f"gpu-a10-{i}.search.corp" for i in range(1, 4)] + ["cpu-c2-7.search.corp"]
    s.add(k.namespace("search", "2025-07-01T00:00:00Z"),
          *[k.node(n, "2026-11-01T00:00:00Z", now, zone="dc-lon-2", instance="a10x1-32c128g",
                   cpu="32", memory="128Gi") for n in nodes],
          {"apiVersion": "v1", "kind": "LimitRange",
           "metadata": k.metadata("LimitRange", "search", "search-container-bounds",
                                  "2025-07-01T00:05:00Z"),
           "spec": {"limits": [{"type": "Container",
                                "max": {"cpu": "16", "memory": "32Gi"},
                                "min": {"cpu": "50m", "memory": "64Mi"},
                                "default": {"cpu": "500m", "memory": "512Mi"},
                                "defaultRequest": {"cpu": "100m", "memory": "256Mi"},
                                "maxLimitRequestRatio": {"memory": "4"}}]}},
          {"apiVersion": "v1", "kind": "ResourceQuota",
           "metadata": k.metadata("ResourceQuota", "search", "search-quota",
                                  "2025-07-01T00:05:00Z"),
           "spec": {"hard": {"requests.cpu": "64", "requests.memory": "256Gi",
                             "limits.memory": "384Gi", "pods": "80"}},
           "status": {"hard": {"requests.cpu": "64", "requests.memory": "256Gi",
                               "limits.memory": "384Gi", "pods": "80"},
                      "used": {"requests.cpu": "6500m", "requests.memory": "7424Mi",
                               "limits.memory": "18944Mi", "pods": "8"}}})
    img_old = "harbor.search.corp/ml/query-embedder:0.21.3"
    img_new = "harbor.search.corp/ml/query-embedder:0.21.4"

    def tpl(image: str, limit: str) -> dict:
        c = k.container("embedder", image, ports=[{"containerPort": 8000, "name": "http"}],
                        requests={"cpu": "2", "memory": "2Gi"},
                        limits={"cpu": "4", "memory": limit},
                        env=[{"name": "MODEL_ID", "value": "e5-large-v2-int8"},
                             {"name": "UVICORN_WORKERS", "value": "2"},
                             {"name": "BATCH_MAX_TOKENS", "value": "16384"}],
                        readinessProbe=k.http_probe("/v1/ready", "http", delay=30),
                        livenessProbe=k.http_probe("/v1/live", "http", delay=60, period=20))
        return k.pod_template({"app": "query-embedder"}, [c])
    old_t, new_t = tpl(img_old, "6Gi"), tpl(img_new, "10Gi")
    old_h, new_h = "8596cbd7f4", "5f9b7c6d48"
    refusal = ('pods "query-embedder-5f9b7c6d48-{}" is forbidden: memory max limit to request '
               "ratio per Container is 4, but provided ratio is 5.000000")
    s.add(k.deployment(
        "search", "query-embedder", "2025-07-03T00:00:00Z", new_t, replicas=3, revision=15,
        annotations={"kubernetes.io/change-cause": "memory limit 6Gi -> 10Gi (OOMs overnight), "
                                                   "0.21.4"},
        status=k.deploy_status(
            now, replicas=3, ready=3, updated=0, available=3, generation=19,
            progressing=("False", "ProgressDeadlineExceeded",
                         f'ReplicaSet "query-embedder-{new_h}" has timed out progressing.', 4),
            extra=[{"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
                    "message": refusal.format(k.suffix("qe-r")),
                    "lastUpdateTime": k.stamp(now, 14), "lastTransitionTime": k.stamp(now, 14)}])),
          k.replicaset("search", "query-embedder", old_h, k.stamp(now, 5200), old_t,
                       revision=14, replicas=3, ready=3),
          k.replicaset("search", "query-embedder", new_h, k.stamp(now, 14), new_t, revision=15,
                       replicas=1, ready=0, conditions=[{
                           "type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
                           "message": refusal.format(k.suffix("qe-r")),
                           "lastTransitionTime": k.stamp(now, 14)}]))
    s.add(k.event("search", "ReplicaSet", f"query-embedder-{new_h}", "FailedCreate",
                  "Error creating: " + refusal.format(k.suffix("qe-last")),
                  first=k.stamp(now, 14), last=k.stamp(now, 1.2), count=17,
                  component="replicaset-controller"),
          k.event("search", "Deployment", "query-embedder", "ScalingReplicaSet",
                  f"Scaled up replica set query-embedder-{new_h} to 1", first=k.stamp(now, 14),
                  last=k.stamp(now, 14), type_="Normal", component="deployment-controller"))
    olds = []
    for i in range(3):
        pn = f"query-embedder-{old_h}-{k.suffix('qe' + str(i))}"
        olds.append(pn)
        restarts = [3, 5, 2][i]
        last_oom = [95, 38, 210][i]
        last = k.terminated("OOMKilled", 137, k.stamp(now, last_oom + 160), k.stamp(now, last_oom))
        s.add(k.pod("search", pn, k.stamp(now, 5200), old_t,
                    owner=("ReplicaSet", f"query-embedder-{old_h}"), node_name=nodes[i],
                    ip=f"10.60.{i}.{44 + i}", phase="Running", ready=True,
                    statuses=[k.running("embedder", img_old, k.stamp(now, last_oom - 0.3),
                                        restarts=restarts, last=last)],
                    extra_labels={"pod-template-hash": old_h}))
        if last_oom < 60:
            s.add(k.event("search", "Pod", pn, "BackOff", "Back-off restarting failed container "
                          f"embedder in pod {pn}_search({k.uid('Pod', 'search', pn)})",
                          first=k.stamp(now, last_oom - 0.1), last=k.stamp(now, last_oom - 0.1),
                          host=nodes[i]))
        mem = []
        for m in range(60, -1, -1):
            since = (last_oom - m) if m < last_oom else (last_oom + 160 - m)
            mem.append((s.unix(m), min(5.9, 2.6 + since * 0.022) * 2**30))
        s.metrics.add("container_memory_working_set_bytes", "gauge",
                      "Current working set of the container in bytes",
                      {"namespace": "search", "pod": pn, "container": "embedder"}, mem)
        s.metrics.add("kube_pod_container_status_restarts", "counter",
                      "The number of container restarts per container.",
                      {"namespace": "search", "pod": pn, "container": "embedder"},
                      [(s.unix(m), restarts - (1 if m > last_oom else 0))
                       for m in range(60, -1, -2)])
        lines = []
        for m in range(min(last_oom, 60), 0, -1):
            moment = now - timedelta(minutes=m)
            lines.append(f"{moment.strftime('%Y-%m-%d %H:%M:%S')},{rnd.randint(100, 999)} INFO "
                         f"embedder.batch: batch={rnd.randint(8, 64)} tokens="
                         f"{rnd.randint(2000, 16384)} took={rnd.randint(40, 400)}ms")
            if rnd.random() < 0.4:
                s.log(m, lines[-1].split(" INFO ")[1], "info", "query-embedder", "search", pn,
                      "embedder")
        s.pod_log("search", pn, "embedder", lines)
    s.pod_log("search", olds[1], "embedder", [
        f"{(now - timedelta(minutes=40)).strftime('%Y-%m-%d %H:%M:%S')},118 INFO "
        "embedder.batch: batch=64 tokens=16384 took=512ms",
        f"{(now - timedelta(minutes=38.2)).strftime('%Y-%m-%d %H:%M:%S')},931 WARNING "
        "embedder.batch: tokenizer cache 1.8GiB, evicting"], previous=True)
    _healthy(s, "search", "search-frontend", "harbor.search.corp/web/search-frontend:9.4.0",
             nodes, 3, 3000, "10.60.3", revision=61, started_ago=3000)
    _healthy(s, "search", "indexer", "harbor.search.corp/ml/indexer:2.3.1", nodes, 2, 8080,
             "10.60.2", revision=22, started_ago=9000, probe_path="/healthz")
    return s
