# ruff: noqa: E501  (data literals: log lines and event messages are kept whole)
"""Shape 7: a StatefulSet's volume runs out of inodes; bytes are well below the size."""

from __future__ import annotations

from datetime import timedelta

from .common import (
    Scenario,
    container,
    endpoints,
    healthy_deployment,
    iso,
    meta,
    namespace,
    pod,
    running,
    service,
    std_nodes,
    steps,
    ts,
)

NS = "telemetry"


def build() -> Scenario:
    s = Scenario(
        "telemetry-spool-inodes",
        "edge-spool reports disk full but the volume is mostly empty",
        "2026-11-28T21:14:00Z",
        "edge-spool-1 and -2 are throwing 'disk full' errors and dropping device batches since ~20:30, "
        "but grafana says their volumes are at 20-something percent. 50Gi each. is the dashboard lying or is "
        "it the node disk? edge-spool-0 seems ok",
        {
            "category": "resource_exhaustion",
            "culprit": {"kind": "StatefulSet", "namespace": NS, "name": "edge-spool"},
            "evidence": ["No space left on device", "kubelet_volume_stats_inodes_free"],
            "fix": "The spool volumes are out of inodes (millions of tiny segment files): compact or purge "
            "acknowledged segments, pack batches into larger files, and recreate the volumes with more "
            "inodes (smaller bytes-per-inode) or a filesystem with dynamic inodes",
        },
    )
    now = s.now
    nodes = std_nodes(s, "10.50.6", 3, zone="us-east-2")
    s.add(namespace(NS, s.ago(days=330)))
    img = "ghcr.io/beaconiot/edge-spool:0.19.4"
    ctr = container(
        "spool",
        img,
        ports=[7070],
        env={
            "SPOOL_DIR": "/var/spool/edge",
            "RUST_LOG": "info",
            "SEGMENT_MAX_BYTES": "4096",
            "FORWARD_TO": "kafka-0.kafka:9092",
        },
        requests={"cpu": "500m", "memory": "512Mi"},
        limits={"memory": "1Gi"},
        volumeMounts=[{"name": "spool", "mountPath": "/var/spool/edge"}],
        readinessProbe={"tcpSocket": {"port": 7070}, "periodSeconds": 10},
    )
    sts_meta = meta("edge-spool", NS, {"app": "edge-spool"}, s.ago(days=320))
    sts_meta["generation"] = 6
    s.add(
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": sts_meta,
            "spec": {
                "replicas": 3,
                "serviceName": "edge-spool",
                "podManagementPolicy": "Parallel",
                "selector": {"matchLabels": {"app": "edge-spool"}},
                "template": {
                    "metadata": {"labels": {"app": "edge-spool"}},
                    "spec": {"containers": [ctr]},
                },
                "volumeClaimTemplates": [
                    {
                        "metadata": {"name": "spool"},
                        "spec": {
                            "accessModes": ["ReadWriteOnce"],
                            "storageClassName": "gp3-ext4",
                            "resources": {"requests": {"storage": "50Gi"}},
                        },
                    }
                ],
            },
            "status": {
                "replicas": 3,
                "readyReplicas": 3,
                "availableReplicas": 3,
                "currentReplicas": 3,
                "updatedReplicas": 3,
                "observedGeneration": 6,
                "currentRevision": "edge-spool-7c5d9f8b6",
                "updateRevision": "edge-spool-7c5d9f8b6",
            },
        }
    )
    s.add(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": meta("gp3-ext4", labels={"tier": "general"}, created=s.ago(days=500)),
            "provisioner": "ebs.csi.aws.com",
            "parameters": {"type": "gp3", "csi.storage.k8s.io/fstype": "ext4"},
            "reclaimPolicy": "Delete",
            "volumeBindingMode": "WaitForFirstConsumer",
            "allowVolumeExpansion": True,
        }
    )
    fill_at = {1: s.ago(minutes=44), 2: s.ago(minutes=31)}
    pods = []
    for i in range(3):
        pn = f"edge-spool-{i}"
        ip = f"10.50.{7 + i}.{15 + i}"
        pvc = f"spool-edge-spool-{i}"
        pm = meta(
            pvc,
            NS,
            {"app": "edge-spool"},
            s.ago(days=320 - i),
            annotations={
                "pv.kubernetes.io/bind-completed": "yes",
                "volume.kubernetes.io/storage-provisioner": "ebs.csi.aws.com",
            },
        )
        s.add(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": pm,
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": "gp3-ext4",
                    "volumeMode": "Filesystem",
                    "resources": {"requests": {"storage": "50Gi"}},
                    "volumeName": f"pvc-{pm['uid']}",
                },
                "status": {
                    "phase": "Bound",
                    "accessModes": ["ReadWriteOnce"],
                    "capacity": {"storage": "50Gi"},
                },
            }
        )
        s.add(
            pod(
                pn,
                NS,
                {
                    "app": "edge-spool",
                    "statefulset.kubernetes.io/pod-name": pn,
                    "controller-revision-hash": "edge-spool-7c5d9f8b6",
                },
                ("StatefulSet", "edge-spool"),
                nodes[i],
                [ctr],
                [running("spool", img, s.ago(days=11, minutes=-i))],
                s.ago(days=11),
                ip=ip,
                volumes=[{"name": "spool", "persistentVolumeClaim": {"claimName": pvc}}],
            )
        )
        pods.append((ip, pn, nodes[i]))
    s.add(service("edge-spool", NS, {"app": "edge-spool"}, 7070, 7070, s.ago(days=320), "None"))
    s.add(endpoints("edge-spool", NS, pods, 7070, s.ago(days=320)))
    # logs: spool segments written per device batch; ENOSPC once the inodes run out
    lines: dict[str, list[str]] = {p[1]: [] for p in pods}
    seq = 0
    for t in steps(s.ago(hours=2), now, 15):
        for i, (_ip, pn, _nd) in enumerate(pods):
            tt = t + timedelta(seconds=i * 4)
            if tt > now:
                continue
            seq += 1
            dev = f"dev-{(seq * 7919) % 50000:05d}"
            full = i in fill_at and tt >= fill_at[i]
            if full:
                msg = (
                    f"failed to persist batch for {dev}: write /var/spool/edge/segments/{seq % 256:02x}/"
                    f"{seq:010d}.seg: No space left on device (os error 28); batch dropped"
                )
                s.doc(
                    tt, msg, "error", "edge-spool", NS, pn, "spool", **{"error.type": "StorageFull"}
                )
                lines[pn].append(f"{iso(tt)} ERROR edge_spool::segment: {msg}")
                if seq % 5 == 0:
                    m2 = (
                        "compaction skipped: cannot create /var/spool/edge/compact.tmp: No space left on device "
                        "(os error 28)"
                    )
                    s.doc(tt, m2, "warn", "edge-spool", NS, pn, "spool")
                    lines[pn].append(f"{iso(tt)} WARN  edge_spool::compact: {m2}")
            else:
                msg = f"spooled batch for {dev}: {(seq * 13) % 40 + 3} segments, {(seq * 37) % 3000 + 900} bytes each"
                if seq % 3 == 0:
                    s.doc(tt, msg, "info", "edge-spool", NS, pn, "spool")
                lines[pn].append(f"{iso(tt)} INFO  edge_spool::segment: {msg}")
            if seq % 9 == 0:
                m3 = f"forwarded {(seq * 11) % 400 + 100} segments to kafka-0.kafka:9092 (lag {seq % 40}s)"
                lines[pn].append(f"{iso(tt)} INFO  edge_spool::forward: {m3}")
    for pn, ls in lines.items():
        s.log(NS, pn, "spool", ls[-80:])
    s.doc(
        s.ago(minutes=66),
        "kafka broker kafka-0 leader election in progress, retrying produce",
        "warn",
        "edge-spool",
        NS,
        "edge-spool-0",
        "spool",
    )
    # metrics: kubelet volume stats (bytes low, inodes exhausted on -1 and -2)
    cap = 53_660_876_800
    inodes = 3_276_800
    for i, (_ip, _pn, _nd) in enumerate(pods):
        pvc = f"spool-edge-spool-{i}"
        lab = {"namespace": NS, "persistentvolumeclaim": pvc}
        used, ifree, cap_s, ino_s = [], [], [], []
        for k, t in enumerate(steps(s.ago(hours=2), now, 60)):
            if i in fill_at:
                left = max(0, int((fill_at[i] - t).total_seconds()) * 41)
                iu = inodes - left if left else inodes
            else:
                iu = 2_110_000 + k * 1_800
            b = int(iu * 3_900 * (0.95 if i else 0.9))
            used.append((b, ts(t)))
            ifree.append((inodes - iu, ts(t)))
            cap_s.append((cap, ts(t)))
            ino_s.append((inodes, ts(t)))
        s.series(
            "kubelet_volume_stats_capacity_bytes",
            "gauge",
            "Capacity in bytes of the volume",
            dict(lab),
            cap_s,
        )
        s.series(
            "kubelet_volume_stats_used_bytes",
            "gauge",
            "Number of used bytes in the volume",
            dict(lab),
            used,
        )
        s.series(
            "kubelet_volume_stats_available_bytes",
            "gauge",
            "Number of available bytes in the volume",
            dict(lab),
            [(cap - v, t) for v, t in used],
        )
        s.series(
            "kubelet_volume_stats_inodes",
            "gauge",
            "Maximum number of inodes in the volume",
            dict(lab),
            ino_s,
        )
        s.series(
            "kubelet_volume_stats_inodes_free",
            "gauge",
            "Number of free inodes in the volume",
            dict(lab),
            ifree,
        )
        s.series(
            "kubelet_volume_stats_inodes_used",
            "gauge",
            "Number of used inodes in the volume",
            dict(lab),
            [(inodes - v, t) for v, t in ifree],
        )
    ing = healthy_deployment(
        s,
        "device-gateway",
        NS,
        "ghcr.io/beaconiot/device-gateway:2.8.0",
        [p[2] for p in pods],
        "10.50.10",
        port=8443,
        replicas=3,
        age_days=5,
        hash_="c6d8f7b59",
    )
    for m in range(0, 40, 2):
        t = s.ago(minutes=m, seconds=3)
        if t > fill_at[1]:
            continue
        s.doc(
            t,
            "MQTT session resumed for fleet eu-7",
            "info",
            "device-gateway",
            NS,
            ing[m % 3],
            "gateway",
        )
    for m in range(0, 44, 3):
        s.doc(
            s.ago(minutes=m, seconds=9),
            "spool edge-spool-1.edge-spool:7070 rejected batch: 507 Insufficient "
            "Storage; buffering in memory",
            "warn",
            "device-gateway",
            NS,
            ing[m % 3],
            "gateway",
            **{"http.response.status_code": 507},
        )
    s.events.add(
        NS,
        "Pod",
        ing[2],
        "Unhealthy",
        'Readiness probe failed: Get "http://10.50.10.22:8443/healthz": EOF',
        s.ago(minutes=58),
        type_="Warning",
        host=pods[2][2],
        field_path="spec.containers{gateway}",
    )
    s.events.add(
        NS,
        "PersistentVolumeClaim",
        "spool-edge-spool-0",
        "VolumeResizeSkipped",
        "ignoring resize of volume: capacity already matches request",
        s.ago(minutes=50),
        component="volume_expand",
    )
    return s
