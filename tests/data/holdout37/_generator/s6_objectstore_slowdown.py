# ruff: noqa: E501  (data literals: log lines and event messages are kept whole)
"""Shape 6: an object store outside the cluster throttles one service's uploads (SlowDown, 503)."""

from __future__ import annotations

from datetime import timedelta

from .common import (
    Scenario,
    available_status,
    container,
    deployment,
    endpoints,
    healthy_deployment,
    iso,
    namespace,
    pod,
    replicaset,
    running,
    service,
    std_nodes,
    steps,
    ts,
)

NS = "docs-ingest"


def build() -> Scenario:
    s = Scenario(
        "docs-archiver-object-store-throttled",
        "scanned documents stuck in processing",
        "2026-11-27T15:30:00Z",
        "customers say uploaded scans stay in 'processing' for over an hour. scan-archiver pods look healthy, "
        "no restarts, cpu is low. the ocr-worker had a memory alert this morning, maybe it's backing up "
        "everything behind it?",
        {
            "category": "dependency_failure",
            "culprit": {"kind": "Deployment", "namespace": NS, "name": "scan-archiver"},
            "evidence": [
                "SlowDown: Please reduce your request rate.",
                "503",
                "objects.nimbusvault.net",
            ],
            "fix": "The object store is throttling scan-archiver's PUTs: lower its upload concurrency / batch "
            "small pages into fewer objects, spread keys across prefixes, and ask the storage provider to "
            "raise the bucket's request-rate limit",
        },
    )
    now = s.now
    nodes = std_nodes(s, "10.9.4", 3, zone="eu-west-3")
    s.add(namespace(NS, s.ago(days=150)))
    img = "registry.gitlab.com/papertrailco/scan-archiver:1.22.0"
    ctr = container(
        "archiver",
        img,
        ports=[3000],
        env={
            "ARCHIVE_ENDPOINT": "https://objects.nimbusvault.net",
            "ARCHIVE_BUCKET": "scans-prod",
            "UPLOAD_CONCURRENCY": "64",
            "MAX_RETRIES": "8",
            "NODE_ENV": "production",
        },
        requests={"cpu": "250m", "memory": "384Mi"},
        limits={"memory": "768Mi"},
        readinessProbe={"httpGet": {"path": "/healthz", "port": 3000}, "periodSeconds": 10},
    )
    h = "5d8b7f9c66"
    labels = {"app": "scan-archiver", "pod-template-hash": h}
    s.add(
        deployment(
            "scan-archiver",
            NS,
            {"app": "scan-archiver"},
            labels,
            [ctr],
            3,
            s.ago(days=140),
            23,
            18,
            available_status(3, s.ago(days=4)),
        )
    )
    s.add(
        replicaset(
            f"scan-archiver-{h}", NS, "scan-archiver", labels, [ctr], 3, 3, s.ago(days=4), 18
        )
    )
    pods = []
    for i, sfx in enumerate(("m2vq8", "fj6tn", "z4pkw")):
        pn = f"scan-archiver-{h}-{sfx}"
        ip = f"10.9.{5 + i}.{70 + i}"
        s.add(
            pod(
                pn,
                NS,
                labels,
                ("ReplicaSet", f"scan-archiver-{h}"),
                nodes[i],
                [ctr],
                [running("archiver", img, s.ago(days=4, minutes=-2 * i))],
                s.ago(days=4),
                ip=ip,
            )
        )
        pods.append(pn)
    s.add(
        service(
            "scan-archiver", NS, {"app": "scan-archiver"}, 80, 3000, s.ago(days=140), "172.20.61.5"
        )
    )
    s.add(
        endpoints(
            "scan-archiver",
            NS,
            [(f"10.9.{5 + i}.{70 + i}", pods[i], nodes[i]) for i in range(3)],
            3000,
            s.ago(days=140),
        )
    )
    ocr = healthy_deployment(
        s,
        "ocr-worker",
        NS,
        "registry.gitlab.com/papertrailco/ocr-worker:3.3.1",
        nodes,
        "10.9.8",
        port=8081,
        replicas=2,
        age_days=2,
        hash_="9c7f6d5b84",
    )
    api = healthy_deployment(
        s,
        "upload-api",
        NS,
        "registry.gitlab.com/papertrailco/upload-api:2.40.2",
        nodes,
        "10.9.9",
        port=8080,
        replicas=2,
        age_days=8,
        hash_="6f5d4c9b87",
    )
    ev = s.events
    ev.add(
        NS,
        "Pod",
        ocr[1],
        "Unhealthy",
        'Readiness probe failed: Get "http://10.9.8.21:8081/healthz": '
        "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
        s.ago(minutes=51),
        count=2,
        type_="Warning",
        host=nodes[1],
        field_path="spec.containers{worker}",
    )
    throttle = s.ago(minutes=85)
    n = 0
    for t in steps(s.ago(hours=2, minutes=30), now, 10):
        for j, pn in enumerate(pods):
            tt = t + timedelta(seconds=j * 2)
            if tt > now:
                continue
            n += 1
            key = f"tenants/{4100 + n % 37}/scans/2026/11/27/{n:07d}-p{n % 9 + 1}.tiff"
            rid = f"tx{n:08x}-slwd"
            if tt < throttle or n % 7 == 0:
                s.doc(
                    tt,
                    f"archived {key} ({180 + n % 60} KiB) in {90 + n % 40}ms",
                    "info",
                    "scan-archiver",
                    NS,
                    pn,
                    "archiver",
                    **{"url.domain": "objects.nimbusvault.net"},
                )
            else:
                attempt = n % 8 + 1
                msg = (
                    f"PUT https://objects.nimbusvault.net/scans-prod/{key} failed: 503 SlowDown: Please reduce "
                    f"your request rate. (request {rid}); retry {attempt}/8 in {min(2**attempt * 100, 20000)}ms"
                )
                s.doc(
                    tt,
                    msg,
                    "warn" if attempt < 8 else "error",
                    "scan-archiver",
                    NS,
                    pn,
                    "archiver",
                    **{
                        "http.response.status_code": 503,
                        "error.type": "SlowDown",
                        "url.domain": "objects.nimbusvault.net",
                    },
                )
                if attempt == 8:
                    s.doc(
                        tt + timedelta(milliseconds=5),
                        f"giving up on {key} after 8 attempts; message returned "
                        "to queue scans.archive",
                        "error",
                        "scan-archiver",
                        NS,
                        pn,
                        "archiver",
                        **{"error.type": "SlowDown"},
                    )
        if int(t.timestamp()) % 60 == 0:
            s.doc(
                t,
                f"POST /v1/scans 202 accepted batch of {20 + int(t.timestamp()) % 9} pages",
                "info",
                "upload-api",
                NS,
                api[int(t.timestamp()) // 60 % 2],
                "api",
                **{"http.response.status_code": 202},
            )
            s.doc(
                t - timedelta(seconds=4),
                f"ocr done for page, {900 + int(t.timestamp()) % 300} words",
                "info",
                "ocr-worker",
                NS,
                ocr[int(t.timestamp()) // 60 % 2],
                "worker",
            )
    s.doc(
        s.ago(hours=5, minutes=12),
        "heap usage 91% of 512Mi, consider raising the limit",
        "warn",
        "ocr-worker",
        NS,
        ocr[0],
        "worker",
    )
    for pn in pods:
        s.log(
            NS,
            pn,
            "archiver",
            [
                f"{d['@timestamp']} {d['log.level'].upper():5} {d['message']}"
                for d in s.docs
                if d["kubernetes.pod.name"] == pn
            ][-60:],
        )
    # metrics: outbound object-store requests by status, queue backlog, pods fine
    c = {"200": 2_400_000, "503": 1200}
    up200, up503, backlog = [], [], []
    q = 40
    for t in steps(s.ago(hours=2, minutes=30), now, 30):
        thr = t >= throttle
        c["200"] += 45 if thr else 290
        c["503"] += 610 if thr else 1
        q = q + 160 if thr else max(30, q - 5)
        up200.append((c["200"], ts(t)))
        up503.append((c["503"], ts(t)))
        backlog.append((q, ts(t)))
    s.series(
        "http_client_requests_total",
        "counter",
        "Outbound HTTP requests by host and status",
        {
            "namespace": NS,
            "service": "scan-archiver",
            "host": "objects.nimbusvault.net",
            "method": "PUT",
            "status": "200",
        },
        up200,
    )
    s.series(
        "http_client_requests_total",
        "counter",
        "Outbound HTTP requests by host and status",
        {
            "namespace": NS,
            "service": "scan-archiver",
            "host": "objects.nimbusvault.net",
            "method": "PUT",
            "status": "503",
        },
        up503,
    )
    s.series(
        "rabbitmq_queue_messages_ready",
        "gauge",
        "Messages ready to be delivered",
        {"namespace": NS, "queue": "scans.archive", "vhost": "/"},
        backlog,
    )
    for _i, pn in enumerate(pods):
        s.series(
            "container_memory_working_set_bytes",
            "gauge",
            "Current working set of the container in bytes",
            {"namespace": NS, "pod": pn, "container": "archiver"},
            [
                (301_000_000 + (k * 104_729) % 9_000_000, ts(t))
                for k, t in enumerate(steps(s.ago(hours=2, minutes=30), now, 60))
            ],
        )
    s.series(
        "container_memory_working_set_bytes",
        "gauge",
        "Current working set of the container in bytes",
        {"namespace": NS, "pod": ocr[0], "container": "worker"},
        [
            (470_000_000 - k * 90_000, ts(t))
            for k, t in enumerate(steps(s.ago(hours=2, minutes=30), now, 60))
        ],
    )
    _ = iso
    return s
