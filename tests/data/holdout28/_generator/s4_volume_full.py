# ruff: noqa: E501  (log lines and messages are kept whole, as the systems print them)
"""Shape 4: crm-postgres' data volume filled up; writes fail with "No space left on
device", reads still work, and crm-api reports "could not save"."""

from __future__ import annotations

from datetime import datetime, timedelta

from . import _k8s as k
from ._common import NODES, app, chatter, ip, nodes
from ._out import Scenario, accumulate, grid
from ._workloads import pvc, statefulset

NOW = datetime(2026, 6, 9, 16, 20, 0)
FULL = datetime(2026, 6, 9, 15, 41, 0)
CAP = 50 * 1024**3


def build() -> Scenario:
    sc = Scenario(
        id="crm-saving-contacts-fails",
        title="CRM users cannot save contacts",
        now=NOW,
        seed=404,
        report="sales says the CRM 'spins then errors' when saving a contact or a deal, started "
        "maybe 40 min ago. looking at contacts works fine. crm-api pods are all green?",
        truth={
            "category": "resource_exhaustion",
            "culprit": {"kind": "StatefulSet", "namespace": "crm", "name": "crm-postgres"},
            "evidence": ["No space left on device", "could not extend file", "could not save"],
            "fix": "Expand crm-postgres' data volume (data-crm-postgres-0) or free space (old WAL, "
            "the audit_log table), then check that writes resume.",
        },
    )
    nodes(sc)
    for ns in ("crm", "tools"):
        sc.add(k.namespace(ns, NOW - timedelta(days=700)))
    labels = {"app": "crm-postgres"}
    tmpl = k.template(
        labels,
        [
            k.container(
                "postgres",
                "postgres:15.7",
                port=5432,
                port_name="postgres",
                resources=k.res("1", "4Gi", mem_lim="4Gi"),
                mounts=[{"name": "data", "mountPath": "/var/lib/postgresql/data"}],
            )
        ],
    )
    claim = {
        "metadata": {"name": "data"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "gp3",
            "resources": {"requests": {"storage": "50Gi"}},
        },
    }
    sts, revision = statefulset(
        "crm-postgres",
        "crm",
        labels,
        tmpl,
        replicas=1,
        created=NOW - timedelta(days=700),
        service_name="crm-postgres",
        claims=[claim],
    )
    sc.add(sts)
    started = NOW - timedelta(days=5, hours=2)
    sc.add(
        k.pod(
            "crm-postgres-0",
            "crm",
            tmpl,
            owner=("StatefulSet", "crm-postgres"),
            created=started,
            node=NODES[0],
            ip=ip(sc, 1),
            qos="Guaranteed",
            statuses=[k.running("postgres", started + timedelta(seconds=5), image="postgres:15.7")],
            extra_labels={
                "controller-revision-hash": revision,
                "statefulset.kubernetes.io/pod-name": "crm-postgres-0",
            },
        )
    )
    sc.add(
        pvc("data-crm-postgres-0", "crm", "50Gi", created=NOW - timedelta(days=700), labels=labels)
    )
    sc.add(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "gp3", "creationTimestamp": k.stamp(NOW - timedelta(days=800))},
            "provisioner": "ebs.csi.aws.com",
            "parameters": {"type": "gp3"},
            "reclaimPolicy": "Delete",
            "volumeBindingMode": "WaitForFirstConsumer",
            "allowVolumeExpansion": True,
        }
    )
    sc.add(
        k.service(
            "crm-postgres",
            "crm",
            labels,
            [("postgres", 5432, 5432)],
            cluster_ip="172.20.9.31",
            created=NOW - timedelta(days=700),
        )
    )
    api, _ = app(sc, "crm-api", "crm", "registry.internal/crm/crm-api:3.3.0", replicas=3)
    web, _ = app(sc, "crm-web", "crm", "registry.internal/crm/crm-web:3.3.0", replicas=2)
    wiki, _ = app(sc, "wiki", "tools", "requarks/wiki:2.5", replicas=1)
    # postgres: writes fail once the volume is full --------------------------------------------------
    tables = ["base/16401/90231", "base/16401/90318", "base/16401/88214"]
    for moment in sc.every(FULL, NOW, 3):
        sc.doc(
            moment,
            "crm-postgres",
            "crm",
            "crm-postgres-0",
            "error",
            f'ERROR:  could not extend file "{sc.rng.choice(tables)}": No space left on device',
            container="postgres",
        )
        if sc.rng.random() < 0.3:
            sc.doc(
                moment,
                "crm-postgres",
                "crm",
                "crm-postgres-0",
                "info",
                "HINT:  Check free disk space.",
                container="postgres",
            )
    for moment in sc.every(FULL, NOW, 60):
        sc.doc(
            moment,
            "crm-postgres",
            "crm",
            "crm-postgres-0",
            "warn",
            'WARNING:  could not write to file "pg_wal/xlogtemp.412": No space left on device',
            container="postgres",
        )
    chatter(
        sc,
        "crm-postgres",
        "crm",
        ["crm-postgres-0"],
        NOW - timedelta(hours=4),
        [
            "LOG:  checkpoint starting: time",
            "LOG:  checkpoint complete: wrote 1803 buffers (11.0%)",
            'LOG:  automatic analyze of table "crm.public.audit_log"',
        ],
        gap=300,
    )
    pg_lines = [
        f"{k.stamp(NOW - timedelta(hours=1, minutes=50))} UTC [1] LOG:  checkpoint starting: time"
    ]
    for moment in sorted(sc.every(FULL, NOW, 20))[-25:]:
        pg_lines.append(
            f"{moment.strftime('%Y-%m-%d %H:%M:%S.%f')[:-3]} UTC [{sc.rng.randint(9000, 9999)}] ERROR:  "
            f'could not extend file "{sc.rng.choice(tables)}": No space left on device'
        )
        pg_lines.append(
            f"{moment.strftime('%Y-%m-%d %H:%M:%S.%f')[:-3]} UTC [{sc.rng.randint(9000, 9999)}] "
            "HINT:  Check free disk space."
        )
    sc.log_file("crm", "crm-postgres-0", "postgres", pg_lines)
    # crm-api: reads fine, writes fail -----------------------------------------------------------------
    for moment in sc.every(NOW - timedelta(hours=3), NOW, 1.5):
        pod = sc.rng.choice(api)
        if sc.rng.random() < 0.8:
            sc.doc(
                moment,
                "crm-api",
                "crm",
                pod,
                "info",
                f"GET /api/contacts/{sc.rng.randint(1000, 99999)} 200",
                http__response__status_code=200,
            )
        elif moment < FULL:
            sc.doc(
                moment,
                "crm-api",
                "crm",
                pod,
                "info",
                "PUT /api/contacts/{id} 200",
                http__response__status_code=200,
            )
        else:
            what = sc.rng.choice(["contact", "deal", "note"])
            sc.doc(
                moment,
                "crm-api",
                "crm",
                pod,
                "error",
                f'could not save {what}: pq: could not extend file "{sc.rng.choice(tables)}": '
                "No space left on device",
                http__response__status_code=500,
                error__type="SaveFailed",
            )
    chatter(
        sc,
        "crm-web",
        "crm",
        web,
        NOW - timedelta(hours=3),
        ["GET / 200", "GET /static/app.js 304"],
        gap=10,
    )
    chatter(
        sc,
        "wiki",
        "tools",
        wiki,
        NOW - timedelta(hours=3),
        ["(WARN) search engine: elasticsearch connection timed out, falling back to basic"],
        gap=600,
        level="warn",
    )
    sc.add(
        k.event(
            "tools",
            "Pod",
            wiki[0],
            "Unhealthy",
            "Readiness probe failed: HTTP probe failed with statuscode: 503",
            first=NOW - timedelta(minutes=58),
            last=NOW - timedelta(minutes=56),
            count=2,
            type="Warning",
            host=NODES[0],
            field_path="spec.containers{wiki}",
        )
    )
    times = grid(NOW - timedelta(hours=6), NOW)
    start_used, full_t = CAP * 0.9, FULL.timestamp()
    t0 = times[0]
    used = [
        (t, min(CAP - 4096 * 1024, start_used + (CAP * 0.1) * (t - t0) / (full_t - t0)))
        for t in times
    ]
    labels_v = {"namespace": "crm", "persistentvolumeclaim": "data-crm-postgres-0"}
    sc.gauge(
        "kubelet_volume_stats_used_bytes", "Number of used bytes in the volume", labels_v, used
    )
    sc.gauge(
        "kubelet_volume_stats_capacity_bytes",
        "Capacity in bytes of the volume",
        labels_v,
        [(t, float(CAP)) for t in times],
    )
    sc.gauge(
        "kubelet_volume_stats_available_bytes",
        "Number of available bytes in the volume",
        labels_v,
        [(t, CAP - v) for t, v in used],
    )
    for pod in api:
        for route, code, rate in (
            ("GET /api/contacts/{id}", "200", lambda t: 0.22),
            ("PUT /api/contacts/{id}", "200", lambda t: 0.05 if t < full_t else 0.0),
            ("PUT /api/contacts/{id}", "500", lambda t: 0.0 if t < full_t else 0.05),
        ):
            sc.counter(
                "http_requests_total",
                "HTTP requests served.",
                {
                    "namespace": "crm",
                    "pod": pod,
                    "service": "crm-api",
                    "route": route,
                    "code": code,
                },
                accumulate(times, rate, 10000),
            )
    return sc
