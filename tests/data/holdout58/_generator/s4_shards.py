"""Scenario 4: the es-logs cluster is at cluster.max_shards_per_node (3 x 1000 shards).

At 00:00 UTC the daily ``logs-<namespace>-YYYY.MM.DD`` indices cannot be created, so every
bulk request for the new day fails; fluent-bit retries and drops chunks. Application logs
in the store stop at midnight; only the ``logging`` namespace (shipped to an existing
self-monitoring data stream) keeps arriving. The cluster stays green with free disk.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from ._k8s import PodSpecBits, app, container, meta, namespace, node, old_restart, owner_ref, pod
from ._kit import Story, accumulate, at, grid, iso, mins

NS = "logging"
ES = "docker.elastic.co/elasticsearch/elasticsearch:8.12.2"
FB = "cr.fluentbit.io/fluent/fluent-bit:3.0.4"
SHARD_MSG = ("Validation Failed: 1: this action would add [2] shards, but this cluster currently "
             "has [2999]/[3000] maximum normal shards open;")


def build() -> Story:
    """Build the scenario."""
    now = at("2026-03-14T07:40:00Z")
    midnight = at("2026-03-14T00:00:00Z")
    s = Story(
        "kibana-empty-since-midnight", "No logs in Kibana since midnight", now,
        "Kibana shows nothing since midnight for any prod namespace, I can't debug the "
        "checkout ticket. fluent-bit was upgraded to 3.0 yesterday afternoon, probably that? "
        "es-logs says green.",
        "resource_exhaustion", {"kind": "StatefulSet", "namespace": NS, "name": "es-logs"},
        ["maximum normal shards open", "[2999]/[3000]", "validation_exception",
         "elasticsearch_cluster_health_active_shards", "failed to flush chunk"],
        "es-logs is at cluster.max_shards_per_node (1000 x 3 data nodes). Delete or shrink old "
        "daily indices (retention went 14d -> 45d), move to rollover data streams with fewer "
        "shards, or raise cluster.max_shards_per_node / add data nodes; then fluent-bit's "
        "buffered chunks flush.",
        seed=5804)
    rng = s.rng
    for ns in (NS, "shop", "payments", "default", "kube-system"):
        s.add(namespace(s, ns, now - timedelta(days=800)))
    ips: dict[str, str] = {}
    for i in range(8):
        n = f"gke-prod-eu-pool-{'ab'[i // 4]}-{rng.getrandbits(32):08x}-{s.suffix(4)}"
        ips[n] = f"10.132.0.{20 + i}"
        s.add(node(s, n, now - timedelta(days=20 + i), ip=ips[n],
                   os_image="Container-Optimized OS from Google", kernel="6.1.58+",
                   kubelet="v1.28.7-gke.1026000", runtime="containerd://1.7.10",
                   labels={"cloud.google.com/gke-nodepool": f"pool-{'ab'[i // 4]}",
                           "topology.kubernetes.io/zone": f"europe-west1-{'bcd'[i % 3]}"}))
    nodes = list(ips)
    sts_uid = s.uid()
    esc = container("elasticsearch", ES, port=9200, cpu="2", memory="8Gi",
                    env=[{"name": "ES_JAVA_OPTS", "value": "-Xms4g -Xmx4g"},
                         {"name": "node.roles", "value": "master,data_hot,ingest"}],
                    probe_path=None)
    restarted = now - timedelta(days=5, hours=2)
    s.add({"apiVersion": "apps/v1", "kind": "StatefulSet",
           "metadata": meta("es-logs", NS, now - timedelta(days=700), sts_uid, {"app": "es-logs"},
                            generation=12),
           "spec": {"replicas": 3, "serviceName": "es-logs-headless",
                    "selector": {"matchLabels": {"app": "es-logs"}},
                    "template": {"metadata": {"labels": {"app": "es-logs"}},
                                 "spec": {"containers": [esc]}},
                    "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                        "accessModes": ["ReadWriteOnce"], "storageClassName": "premium-rwo",
                        "resources": {"requests": {"storage": "1Ti"}}}}]},
           "status": {"replicas": 3, "readyReplicas": 3, "currentReplicas": 3,
                      "updatedReplicas": 3, "availableReplicas": 3, "observedGeneration": 12,
                      "currentRevision": "es-logs-5d8f7b6c9",
                      "updateRevision": "es-logs-5d8f7b6c9"}})
    for i in range(3):
        pn = f"es-logs-{i}"
        s.add(pod(s, NS, pn, PodSpecBits([esc], {"app": "es-logs"}), node_name=nodes[i],
                  ip=f"10.48.{i}.{rng.randint(2, 200)}", start=restarted + mins(7 * i),
                  host_ip=ips[nodes[i]], owner=owner_ref("StatefulSet", "es-logs", sts_uid)))
        s.add({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
               "metadata": meta(f"data-{pn}", NS, now - timedelta(days=700), s.uid(),
                                {"app": "es-logs"}),
               "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "premium-rwo",
                        "resources": {"requests": {"storage": "1Ti"}}},
               "status": {"phase": "Bound", "capacity": {"storage": "1Ti"}}})
    s.add({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": meta("es-logs-config", NS, now - timedelta(days=700), s.uid()),
           "data": {"elasticsearch.yml": "cluster.name: es-logs\nnetwork.host: 0.0.0.0\n"
                    "discovery.seed_hosts: es-logs-headless\n"
                    "cluster.initial_master_nodes: es-logs-0,es-logs-1,es-logs-2\n"
                    "xpack.security.enabled: true\naction.auto_create_index: true\n"}},
          {"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": meta("es-logs-ilm", NS, now - timedelta(days=700), s.uid(),
                            annotations={"acme.io/change": "OBS-311 retention 14d -> 45d for "
                                                           "audit (2026-02-27)"}),
           "data": {"logs-daily.json": '{"policy": {"phases": {"hot": {"actions": {}}, '
                    '"delete": {"min_age": "45d", "actions": {"delete": {}}}}}}',
                    "index-template.json": '{"index_patterns": ["logs-*"], "template": '
                    '{"settings": {"number_of_shards": 1, "number_of_replicas": 1}}}'}})
    _fluentbit(s, nodes, ips, midnight)
    _apps_and_noise(s, nodes, ips, midnight)
    _metrics(s, midnight)
    return s


def _fluentbit(s: Story, nodes: list[str], ips: dict[str, str], midnight: datetime) -> None:
    """The fluent-bit DaemonSet, upgraded yesterday, retrying loudly since midnight."""
    now, rng = s.now, s.rng
    upgraded = at("2026-03-13T15:10:00Z")
    ds_uid = s.uid()
    fc = container("fluent-bit", FB, port=2020, cpu="100m", memory="256Mi",
                   probe_path="/api/v1/health")
    s.add({"apiVersion": "apps/v1", "kind": "DaemonSet",
           "metadata": meta("fluent-bit", NS, now - timedelta(days=700), ds_uid,
                            {"app": "fluent-bit"}, {"deprecated.daemonset.template.generation":
                                                    "23"}, generation=23),
           "spec": {"selector": {"matchLabels": {"app": "fluent-bit"}},
                    "template": {"metadata": {"labels": {"app": "fluent-bit"}},
                                 "spec": {"containers": [fc]}}},
           "status": {"currentNumberScheduled": 8, "desiredNumberScheduled": 8,
                      "numberAvailable": 8, "numberMisscheduled": 0, "numberReady": 8,
                      "observedGeneration": 23, "updatedNumberScheduled": 8}})
    for i, n in enumerate(nodes):
        pn = f"fluent-bit-{s.suffix()}"
        st = upgraded + mins(i)
        s.add(pod(s, NS, pn, PodSpecBits([fc], {"app": "fluent-bit"}), node_name=n,
                  ip=f"10.48.{8 + i}.{rng.randint(2, 200)}", start=st, host_ip=ips[n],
                  owner=owner_ref("DaemonSet", "fluent-bit", ds_uid)))
        f0 = st.strftime("%Y/%m/%d %H:%M:%S")
        lines = [f"[{f0}] [ info] [fluent bit] version=3.0.4, commit=d4d5a2a, pid=1",
                 f"[{f0}] [ info] [output:es:es.0] worker #0 started",
                 f"[{f0}] [ info] [sp] stream processor started"]
        t = midnight + timedelta(seconds=rng.randint(1, 20))
        while t < now:
            f = t.strftime("%Y/%m/%d %H:%M:%S")
            chunk = f"1-{int(t.timestamp())}.{rng.randint(10**8, 10**9)}.flb"
            r = rng.random()
            if r < 0.06:
                ns = rng.choice(["shop", "payments", "kube-system", "default"])
                msg = (f'[error] [output:es:es.0] error: Output {{"create":{{"_index":"logs-{ns}-'
                       f'2026.03.14","status":400,"error":{{"type":"validation_exception",'
                       f'"reason":"{SHARD_MSG}"}}}}}}')
                lvl = "error"
            elif r < 0.14:
                msg = (f"[ warn] [engine] chunk '{chunk}' cannot be retried: task_id="
                       f"{rng.randint(0, 40)}, input=tail.0 > output=es.0")
                lvl = "warning"
            else:
                msg = (f"[ warn] [engine] failed to flush chunk '{chunk}', retry in "
                       f"{rng.randint(6, 60)} seconds: task_id={rng.randint(0, 40)}, "
                       "input=tail.0 > output=es.0 (out_id=0)")
                lvl = "warning"
            lines.append(f"[{f}] {msg}")
            if rng.random() < 0.25:
                s.log(t, NS, pn, "fluent-bit", "fluent-bit", lvl, msg.split("] ", 1)[1])
            t += timedelta(seconds=rng.expovariate(1 / 60.0))
        s.pod_log(NS, pn, "fluent-bit", lines)


def _apps_and_noise(s: Story, nodes: list[str], ips: dict[str, str], midnight: datetime) -> None:
    """App logs that stop at midnight, kibana's old restart, GC noise, a Pending pod."""
    now = s.now
    start = midnight - timedelta(hours=7)
    co = app(s, "shop", "checkout", "europe-docker.pkg.dev/acme-prod/shop/checkout:9.4.2",
             replicas=3, nodes=nodes, node_ips=ips, created=now - timedelta(days=600),
             rolled=now - timedelta(days=3))
    s.chatter("shop", co.pods, "checkout", "checkout", start, midnight, 9.0, [
        (8, "info", "POST /checkout/{id}/confirm 200 {ms}ms"),
        (1, "warning", "payment provider adyen slow: {ms}0ms"),
        (1, "error", "POST /checkout/{id}/confirm 409 cart version conflict")])
    pg = app(s, "payments", "payment-gateway", "europe-docker.pkg.dev/acme-prod/payments/"
             "payment-gateway:4.0.7", replicas=2, nodes=nodes, node_ips=ips,
             created=now - timedelta(days=600), rolled=now - timedelta(days=6))
    s.chatter("payments", pg.pods, "payment-gateway", "payment-gateway", start, midnight, 14.0, [
        (8, "info", "authorised payment {id} in {ms}ms"),
        (1, "warning", "3DS challenge timeout for payment {id}")])
    kb = app(s, NS, "kibana", "docker.elastic.co/kibana/kibana:8.12.2", replicas=1,
             nodes=nodes[3:], node_ips=ips, created=now - timedelta(days=700),
             rolled=now - timedelta(days=5), port=5601,
             restarts={0: old_restart("OOMKilled", 137, now - timedelta(days=5),
                                      now - timedelta(days=3, hours=4))})
    s.chatter(NS, kb.pods, "kibana", "kibana", start, now, 120.0, [
        (4, "info", "[plugins.taskManager] Task Alerting (x{n}) ran in {ms}ms"),
        (1, "warning", "[plugins.security.session] Session idle timeout reached for {user}")])
    for i in range(3):
        s.chatter(NS, [f"es-logs-{i}"], "es-logs", "elasticsearch", start, now,
                  300.0 if i < 2 else 90.0, [
            (3, "info", "[gc][{id}] overhead, spent [{ms}ms] collecting in the last [1.{n}s]"),
            (1, "warning", "[o.e.m.j.JvmGcMonitorService] [gc][young][{id}][{n}] duration "
                           "[1.{n}s], collections [1]/[1.{n}s], total [1.{n}s]/[{n}m]"),
            (2, "info", "[o.e.c.m.MetadataMappingService] [logs-shop-2026.03.13/{hex}] "
                        "update_mapping [_doc]")])
    s.log(midnight - mins(47), NS, "es-logs-0", "elasticsearch", "es-logs", "info",
          "[o.e.x.i.IndexLifecycleRunner] policy [logs-daily] for index [logs-shop-2026.01.28] "
          "on an error step due to a transient error, moving back to the failed step [check-"
          "rollover-ready] for execution. retry attempt [1]")
    pn = f"es-snapshot-verify-28512000-{s.suffix()}"
    s.add(pod(s, NS, pn, PodSpecBits([container(
        "verify", "europe-docker.pkg.dev/acme-prod/obs/es-snapshot-verify:1.2.0",
        port=None, probe_path=None, memory="12Gi")], {"job-name": "es-snapshot-verify-28512000"}),
        node_name=None, ip=None, start=s.ago(100), owner=None, phase="Pending", ready=False,
        conditions=[{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                     "lastTransitionTime": iso(s.ago(100)),
                     "message": "0/8 nodes are available: 8 Insufficient memory."}]))
    s.event(NS, "Pod", pn, "FailedScheduling", "0/8 nodes are available: 8 Insufficient memory. "
            "preemption: 0/8 nodes are available: 8 No preemption victims found for incoming "
            "pod.", type_="Warning", count=24, first=s.ago(59), last=s.ago(2),
            component="default-scheduler")
    s.event("payments", "Pod", pg.pods[1], "Unhealthy", "Readiness probe failed: Get "
            f"\"http://{pg.ips[1]}:8080/healthz\": context deadline exceeded (Client.Timeout "
            "exceeded while awaiting headers)", type_="Warning", count=63, first=s.ago(58),
            last=s.ago(6), host=pg.nodes[1])


def _metrics(s: Story, midnight: datetime) -> None:
    """Shard count, green health, free disk, fluent-bit retries and output."""
    now, rng = s.now, s.rng
    ts = grid(now - timedelta(days=3, hours=8), now, 300)
    day = timedelta(days=1)
    cl = {"cluster": "es-logs", "job": "elasticsearch-exporter"}

    def shards(t: datetime) -> float:
        if t >= midnight - day:
            return 2999.0
        if t >= midnight - 2 * day:
            return 2903.0
        return 2807.0
    s.metrics.gauge("elasticsearch_cluster_health_active_shards", "active shards", cl,
                    [(t, shards(t)) for t in ts])
    for color in ("green", "yellow", "red"):
        s.metrics.gauge("elasticsearch_cluster_health_status", "cluster health", cl | {
            "color": color}, [(t, 1.0 if color == "green" else 0.0) for t in ts])
    for i in range(3):
        s.metrics.gauge("elasticsearch_filesystem_data_available_bytes", "free data bytes",
                        cl | {"name": f"es-logs-{i}"},
                        [(t, 4.1e11 - (t - ts[0]).total_seconds() * 3.0e4 + 1e9 * rng.random())
                         for t in ts])
        s.metrics.gauge("elasticsearch_filesystem_data_size_bytes", "data size bytes",
                        cl | {"name": f"es-logs-{i}"}, [(t, 1.0995e12) for t in ts])
    fb = {"name": "es.0", "job": "fluent-bit"}
    s.metrics.counter("fluentbit_output_proc_records_total", "records sent", fb, accumulate(
        ts, lambda t: 0.0 if t >= midnight else 2400.0 * (0.6 + 0.8 * rng.random())))
    s.metrics.counter("fluentbit_output_retries_total", "retries", fb, accumulate(
        ts, lambda t: 0.3 if t >= midnight else 0.002))
    s.metrics.counter("fluentbit_output_retries_failed_total", "chunks dropped", fb, accumulate(
        ts, lambda t: 0.025 if t >= midnight else 0.0))
    s.metrics.counter("fluentbit_output_errors_total", "output errors", fb, accumulate(
        ts, lambda t: 0.28 if t >= midnight else 0.001))
