"""Orchard Media: the in-cluster Elasticsearch's data volumes pass the flood-stage watermark
(daily click indices pile up, nothing deletes them). Elasticsearch marks every index with a
shard there read-only-allow-delete; the writers fail with cluster_block_exception while the
search pods stay Running and Ready and reads still work."""

from __future__ import annotations

import json
import random
from datetime import timedelta

from .kube import (
    at,
    container,
    endpoints,
    event,
    healthy_deployment,
    ms,
    namespace,
    node,
    pod,
    running,
    service,
    template,
    ts,
    uid,
)
from .write import Metrics, Scenario, counter, doc, gauge

NOW = at("2026-12-01T06:50:00Z")
ID = "catalog-updates-stuck"
NS = "search"
FLOOD = NOW - timedelta(hours=3, minutes=38)  # 03:12
GI = 2**30
ES_IMAGE = "docker.elastic.co/elasticsearch/elasticsearch:8.15.3"
BLOCK = (
    "index [{index}] blocked by: [TOO_MANY_REQUESTS/12/disk usage exceeded flood-stage watermark, "
    "index has read-only-allow-delete block];"
)


def _used(k: int, when) -> float:
    """Used bytes of data-catalog-es-k: a slow climb, faster after the 01:00 click rollover."""
    hours = (when - (NOW - timedelta(hours=8))).total_seconds() / 3600
    base = {0: 178.0, 1: 181.5, 2: 182.2}[k]
    climb = 0.55 * hours + (2.4 * max(0.0, hours - 2.1))
    return min(base + climb, {0: 187.9, 1: 191.3, 2: 191.6}[k]) * GI


def build() -> Scenario:
    rng = random.Random(5)
    s = Scenario(
        id=ID,
        title="Product updates not reaching the site",
        now=ts(NOW),
        report=(
            "product price/stock updates haven't shown up on the site since ~3am, merch team is "
            "panicking before the sale. catalog-indexer logs are full of errors with 429 in them, "
            "it was deployed yesterday afternoon (2.30.0), should we just roll it back? search on "
            "the site works fine btw\n"
        ),
        truth={
            "category": "resource_exhaustion",
            "culprit": {"kind": "StatefulSet", "namespace": NS, "name": "catalog-es"},
            "evidence": [
                "flood stage disk watermark [95%] exceeded",
                "read-only-allow-delete",
                "cluster_block_exception",
            ],
            "fix": (
                "Free or add disk on catalog-es: delete old clicks-* indices (or add an ILM "
                "delete phase) and/or expand the data-catalog-es-* volumes; on 8.x the "
                "read-only-allow-delete block lifts once usage falls below the high "
                "watermark. Rolling back catalog-indexer would not help."
            ),
        },
    )
    nodes = [(f"worker-{k}.orchard-prod.internal", f"192.168.40.{11 + k}") for k in range(4)]
    s.objects += [
        namespace(n, NOW - timedelta(days=d))
        for n, d in ((NS, 800), ("catalog", 800), ("analytics", 500))
    ]
    for k, (n, ip) in enumerate(nodes):
        s.objects.append(
            node(
                n,
                NOW - timedelta(days=60),
                address=ip,
                cpu="16",
                memory="64Gi",
                kubelet="v1.29.9+k3s1",
                image="Debian GNU/Linux 12 (bookworm)",
                labels={"node-role": "worker"},
                heartbeat=NOW - timedelta(seconds=6 + k),
                runtime="containerd://1.7.22-k3s1",
            )
        )
    s.objects.append(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {
                "name": "longhorn-ssd",
                "creationTimestamp": ts(NOW - timedelta(days=800)),
                "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
            },
            "provisioner": "driver.longhorn.io",
            "allowVolumeExpansion": True,
            "reclaimPolicy": "Retain",
            "volumeBindingMode": "Immediate",
            "parameters": {"numberOfReplicas": "2", "diskSelector": "ssd"},
        }
    )
    labels = {"app": "catalog-es", "elasticsearch.k8s.elastic.co/cluster-name": "catalog"}
    tmpl = template(
        labels,
        [
            container(
                "elasticsearch",
                ES_IMAGE,
                ports=[9200, 9300],
                requests={"cpu": "2", "memory": "8Gi"},
                limits={"memory": "8Gi"},
                env=[
                    {"name": "ES_JAVA_OPTS", "value": "-Xms4g -Xmx4g"},
                    {"name": "cluster.name", "value": "catalog"},
                    {"name": "discovery.seed_hosts", "value": "catalog-es-headless"},
                ],
                mounts=[{"name": "data", "mountPath": "/usr/share/elasticsearch/data"}],
                readiness={
                    "exec": {
                        "command": [
                            "bash",
                            "-c",
                            "curl -sf localhost:9200/_cluster/health?local=true",
                        ]
                    },
                    "initialDelaySeconds": 20,
                    "periodSeconds": 10,
                    "timeoutSeconds": 5,
                    "failureThreshold": 3,
                    "successThreshold": 1,
                },
            )
        ],
        service_account="catalog-es",
    )
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {
            "name": "catalog-es",
            "namespace": NS,
            "creationTimestamp": ts(NOW - timedelta(days=610)),
            "uid": uid("sts/catalog-es"),
            "generation": 12,
            "labels": labels,
        },
        "spec": {
            "replicas": 3,
            "serviceName": "catalog-es-headless",
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": "catalog-es"}},
            "template": tmpl,
            "updateStrategy": {"type": "RollingUpdate"},
            "volumeClaimTemplates": [
                {
                    "apiVersion": "v1",
                    "kind": "PersistentVolumeClaim",
                    "metadata": {"name": "data"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "storageClassName": "longhorn-ssd",
                        "resources": {"requests": {"storage": "200Gi"}},
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
            "currentRevision": "catalog-es-6d8f7c9b54",
            "updateRevision": "catalog-es-6d8f7c9b54",
            "observedGeneration": 12,
            "collisionCount": 0,
        },
    }
    s.objects.append(sts)
    es_pods = []
    for k in range(3):
        pname = f"catalog-es-{k}"
        started = NOW - timedelta(days=9, hours=k)
        p = pod(
            sts,
            pname,
            started,
            node_name=nodes[k][0],
            ip=f"10.42.{k}.{30 + k}",
            host_ip=nodes[k][1],
            statuses=[running("elasticsearch", ES_IMAGE, started + timedelta(seconds=4))],
        )
        p["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"] = pname
        p["metadata"]["labels"]["controller-revision-hash"] = "catalog-es-6d8f7c9b54"
        p["spec"]["hostname"] = pname
        p["spec"]["subdomain"] = "catalog-es-headless"
        p["spec"]["volumes"] = [
            {"name": "data", "persistentVolumeClaim": {"claimName": f"data-catalog-es-{k}"}}
        ]
        s.objects.append(p)
        es_pods.append(pname)
        s.objects.append(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {
                    "name": f"data-catalog-es-{k}",
                    "namespace": NS,
                    "creationTimestamp": ts(NOW - timedelta(days=610)),
                    "labels": {"app": "catalog-es"},
                    "annotations": {"pv.kubernetes.io/bind-completed": "yes"},
                },
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": "longhorn-ssd",
                    "resources": {"requests": {"storage": "200Gi"}},
                    "volumeName": f"pvc-{uid(f'pv{k}')}",
                    "volumeMode": "Filesystem",
                },
                "status": {
                    "phase": "Bound",
                    "accessModes": ["ReadWriteOnce"],
                    "capacity": {"storage": "200Gi"},
                },
            }
        )
    s.objects += [
        service(
            NS,
            "catalog-es",
            NOW - timedelta(days=610),
            {"app": "catalog-es"},
            9200,
            9200,
            "10.43.18.200",
        ),
        endpoints(
            NS,
            "catalog-es",
            NOW - timedelta(days=610),
            [(p, f"10.42.{k}.{30 + k}") for k, p in enumerate(es_pods)],
            [],
            9200,
        ),
    ]

    objs, indexer = healthy_deployment(
        "catalog",
        "catalog-indexer",
        "registry.orchard.media/catalog-indexer:2.30.0",
        replicas=2,
        created=NOW - timedelta(days=700),
        rolled=NOW - timedelta(hours=16),
        revision=219,
        nodes=nodes[1:],
        ip_prefix="10.42.3",
        port=3000,
        env=[{"name": "ES_NODE", "value": "http://catalog-es.search:9200"}],
    )
    s.objects += objs
    objs, sapi = healthy_deployment(
        "catalog",
        "search-api",
        "registry.orchard.media/search-api:5.8.4",
        replicas=3,
        created=NOW - timedelta(days=700),
        rolled=NOW - timedelta(days=4),
        revision=77,
        nodes=nodes,
        ip_prefix="10.42.1",
    )
    s.objects += objs
    objs, clicks = healthy_deployment(
        "analytics",
        "clicklog-writer",
        "registry.orchard.media/clicklog-writer:1.4.9",
        replicas=2,
        created=NOW - timedelta(days=480),
        rolled=NOW - timedelta(days=30),
        revision=12,
        nodes=nodes[2:],
        ip_prefix="10.42.2",
    )
    s.objects += objs
    s.objects.append(
        event(
            "catalog",
            "Pod",
            sapi[0],
            "Unhealthy",
            "Readiness probe failed: HTTP probe failed with statuscode: 500",
            first=NOW - timedelta(minutes=41),
            last=NOW - timedelta(minutes=41),
            type_="Warning",
            host=nodes[0][0],
        )
    )

    # elasticsearch logs (ECS JSON, as ES 8 writes them), master is catalog-es-0
    def es_line(when, level, logger, message, node_name="catalog-es-0"):
        return json.dumps(
            {
                "@timestamp": ms(when),
                "log.level": level,
                "message": message,
                "ecs.version": "1.2.0",
                "service.name": "ES_ECS",
                "event.dataset": "elasticsearch.server",
                "process.thread.name": f"elasticsearch[{node_name}][management][T#2]",
                "log.logger": logger,
                "elasticsearch.cluster.name": "catalog",
                "elasticsearch.node.name": node_name,
            }
        )

    mon = "org.elasticsearch.cluster.routing.allocation.DiskThresholdMonitor"
    es0: list[str] = []
    t = NOW - timedelta(hours=5)
    while t < NOW:
        if t < FLOOD:
            msg = (
                "high disk watermark [90%] exceeded on [Yq3LhT0bRfe0M1sV0pW2xA][catalog-es-2]"
                "[/usr/share/elasticsearch/data] free: 12.4gb[6.2%], shards will be relocated away from "
                "this node; currently relocating away shards totalling [0b] bytes; the node is expected "
                "to continue to exceed the high disk watermark when these relocations are complete"
            )
            lvl = "WARN"
        else:
            free = 8.4 - 0.02 * ((t - FLOOD).total_seconds() / 600)
            msg = (
                f"flood stage disk watermark [95%] exceeded on [Yq3LhT0bRfe0M1sV0pW2xA][catalog-es-2]"
                f"[/usr/share/elasticsearch/data] free: {free:.1f}gb[{free / 2:.1f}%], all indices on "
                "this node will be marked read-only"
            )
            lvl = "WARN"
        es0.append(es_line(t, lvl, mon, msg))
        s.docs.append(
            doc(
                ms(t),
                msg,
                lvl.lower(),
                "catalog-es",
                NS,
                "catalog-es-0",
                "elasticsearch",
                log__logger=mon,
            )
        )
        if rng.random() < 0.3:
            gc = f"[gc][{rng.randint(40000, 90000)}] overhead, spent [{rng.randint(200, 600)}ms] collecting in the last [1s]"
            es0.append(
                es_line(
                    t + timedelta(seconds=7),
                    "INFO",
                    "org.elasticsearch.monitor.jvm.JvmGcMonitorService",
                    gc,
                )
            )
        t += timedelta(seconds=60 if t > NOW - timedelta(minutes=40) else 300)
    s.log(NS, "catalog-es-0", "elasticsearch", es0[-60:])
    s.log(
        NS,
        "catalog-es-1",
        "elasticsearch",
        [
            es_line(
                NOW - timedelta(minutes=m),
                "INFO",
                "org.elasticsearch.indices.IndexingMemoryController",
                "now throttling indexing for shard [[clicks-2026.12.01][0]]: segment writing can't keep up",
                "catalog-es-1",
            )
            for m in (52, 31, 9)
        ],
    )

    # writers and readers
    t = NOW - timedelta(hours=5)
    k = 0
    while t < NOW:
        p = indexer[k % 2]
        if t < FLOOD:
            s.docs.append(
                doc(
                    ms(t),
                    f"bulk indexed {rng.randint(300, 900)} docs into products-v7 in "
                    f"{rng.randint(80, 240)}ms",
                    "info",
                    "catalog-indexer",
                    "catalog",
                    p,
                    "catalog-indexer",
                )
            )
        else:
            index = "products-v7" if k % 3 else "products-v7-pricing"
            s.docs.append(
                doc(
                    ms(t),
                    "bulk request failed: ResponseError: cluster_block_exception: "
                    "[cluster_block_exception] Reason: "
                    + BLOCK.format(index=index)
                    + " (status 429), retrying in 30s",
                    "error",
                    "catalog-indexer",
                    "catalog",
                    p,
                    "catalog-indexer",
                    error__type="ResponseError",
                    http__response__status_code=429,
                )
            )
            if k % 4 == 0:
                s.docs.append(
                    doc(
                        ms(t + timedelta(seconds=2)),
                        "clicks bulk rejected: "
                        "ClusterBlockException[" + BLOCK.format(index="clicks-2026.12.01") + "]",
                        "error",
                        "clicklog-writer",
                        "analytics",
                        clicks[k % 2],
                        "clicklog-writer",
                        error__type="ClusterBlockException",
                    )
                )
        if k % 2 == 0:
            s.docs.append(
                doc(
                    ms(t + timedelta(seconds=5)),
                    f"GET /search?q=... 200 hits={rng.randint(0, 400)} took={rng.randint(9, 45)}ms",
                    "info",
                    "search-api",
                    "catalog",
                    sapi[k % 3],
                    "search-api",
                    http__response__status_code=200,
                )
            )
        t += timedelta(seconds=90)
        k += 1
    for p in indexer:
        s.log(
            "catalog",
            p,
            "catalog-indexer",
            [
                f"{ms(NOW - timedelta(seconds=30 * j))} ERROR [bulk] ResponseError: cluster_block_exception: "
                "[cluster_block_exception] Reason: "
                + BLOCK.format(index="products-v7")
                + "\n    at SniffingTransport.request (/app/node_modules/@elastic/transport/lib/Transport.js:492:27)"
                if j % 5 == 0
                else f"{ms(NOW - timedelta(seconds=30 * j))} WARN  [bulk] 612 of 612 actions failed (status 429), "
                "retrying in 30s (attempt 4/5)"
                for j in range(24, 0, -1)
            ],
        )

    # volume metrics
    m = Metrics()
    start = NOW - timedelta(hours=8)
    for k in range(3):
        lbl = {"namespace": NS, "persistentvolumeclaim": f"data-catalog-es-{k}"}
        steps = [start + timedelta(minutes=5 * j) for j in range(97)]
        gauge(
            m,
            "kubelet_volume_stats_capacity_bytes",
            "Capacity in bytes of the volume.",
            lbl,
            [(int(w.timestamp()), float(200 * GI)) for w in steps],
        )
        gauge(
            m,
            "kubelet_volume_stats_used_bytes",
            "Number of used bytes in the volume.",
            lbl,
            [(int(w.timestamp()), float(int(_used(k, w)))) for w in steps],
        )
        gauge(
            m,
            "kubelet_volume_stats_available_bytes",
            "Number of available bytes in the volume.",
            lbl,
            [(int(w.timestamp()), float(int(200 * GI - _used(k, w)))) for w in steps],
        )
    for p in indexer:
        counter(
            m,
            "http_requests",
            "Requests made to Elasticsearch by the indexer.",
            {"namespace": "catalog", "pod": p, "target": "catalog-es", "code": "200"},
            [
                (
                    int((start + timedelta(minutes=5 * j)).timestamp()),
                    0.0
                    if start + timedelta(minutes=5 * j) > FLOOD
                    else float(rng.randint(90, 130)),
                )
                for j in range(97)
            ],
        )
        counter(
            m,
            "http_requests",
            "Requests made to Elasticsearch by the indexer.",
            {"namespace": "catalog", "pod": p, "target": "catalog-es", "code": "429"},
            [
                (
                    int((start + timedelta(minutes=5 * j)).timestamp()),
                    float(rng.randint(90, 130))
                    if start + timedelta(minutes=5 * j) > FLOOD
                    else 0.0,
                )
                for j in range(97)
            ],
        )
    s.metrics = m
    return s
