"""Dental imaging cloud: practices cannot upload new X-rays since 13:52. The StatefulSet
imaging-store (Orthanc 1.12, one replica) keeps every DICOM file on its 500Gi volume
dicom-imaging-store-0 and has no storage limit or recycling (MaximumStorageSize 0); the
archive grows ~14Gi a day and the volume filled up today. Orthanc refuses new instances
("The file storage is full", HTTP 507) and xray-upload returns 502 to the practices; viewing
stored images still works. The cause is in the kubelet volume statistics and in Orthanc's
log. Red herrings: treatment-planner 12.1.0 rolled out 100 min ago in the same namespace
(healthy), an old OOM restart of viewer-web, checkpoint warnings of the index database,
and a few timeouts of the insurance-claims service towards an external insurer."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import gauge, set_times
from tests.data.holdout2._generator.kit import app_counter, cpu_seconds, requests, statefulset
from tests.data.holdout3._generator.kit3 import (
    chatter,
    log_pod,
    namespaces,
    quiet,
    steady,
)
from tests.data.holdout4._generator.kit4 import configmap_with
from tests.scenario_tools.common import MIB, truth
from tests.scenario_tools.kube import Ctr, Template, http_probe

from .kit9 import Incident, NodeKind, provider_nodes, volume_stats

ID = "xray-uploads-failing"
NOW = datetime.fromisoformat("2028-02-09T14:26:00+00:00")
NS = "dentalcloud"
REG = "ghcr.io/dentalcloud-eu"
GIB = 1024 * MIB
FULL = datetime.fromisoformat("2028-02-09T13:52:37+00:00")
CAPACITY = 500 * GIB
ORTHANC = """\
{
  "Name": "DentalCloud imaging-store",
  "StorageDirectory": "/var/lib/orthanc/db",
  "IndexDirectory": "/var/lib/orthanc/db",
  "StorageCompression": false,
  "MaximumStorageSize": 0,
  "MaximumPatientCount": 0,
  "StorageAccessOnFind": "Never",
  "HttpPort": 8042,
  "DicomPort": 4242,
  "AuthenticationEnabled": true,
  "PostgreSQL": {
    "EnableIndex": true,
    "EnableStorage": false,
    "Host": "imaging-index.dentalcloud.svc",
    "Database": "orthanc"
  }
}
"""


def build() -> Incident:
    s = Incident(
        id=ID, title="Practices cannot upload X-rays", now=NOW,
        report="""\
Dental practices can't upload new X-rays to DentalCloud since about quarter to two. The
upload spins and then says "Upload failed, please try again". Looking at older images works
fine. Several practices with patients in the chair, high priority.
""",
        truth=truth(
            "resource_exhaustion", "StatefulSet", NS, "imaging-store",
            ["The file storage is full", "No space left on device",
             "kubelet_volume_stats_available_bytes", "dicom-imaging-store-0",
             "\"MaximumStorageSize\": 0"],
            "imaging-store's 500Gi volume dicom-imaging-store-0 is full (the DICOM archive "
            "grows ~14Gi a day and nothing prunes it), so Orthanc rejects every new instance "
            "with 'The file storage is full' (507) and xray-upload fails. Expand the PVC "
            "(the storage class allows expansion) or move older studies to cold storage, "
            "and alert on kubelet_volume_stats_available_bytes."))
    set_times(s, 3.0, 60)
    c = s.cluster
    namespaces(s, {"default": 760, "kube-system": 760, NS: 731, "billing": 700})
    kind = NodeKind("c2-standard-8", "8", "32594392Ki", "7810m", "29449624Ki", "v1.31.3",
                    "6.8.0-1015-oracle", "Ubuntu 24.04.1 LTS", runtime="containerd://1.7.22")
    nodes = provider_nodes(s, "microk8s", 3, kind, days=6.1, group="dc-k8s-")
    c.add({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
           "metadata": c.meta("StorageClass", "ceph-rbd", "", s.ago(days=700),
                              annotations={"storageclass.kubernetes.io/is-default-class":
                                           "true"}),
           "provisioner": "rbd.csi.ceph.com",
           "parameters": {"clusterID": "b9127830-b0cc-4e34-aa47-9d1a2e9949a8",
                          "pool": "k8s-rbd", "imageFeatures": "layering",
                          "csi.storage.k8s.io/fstype": "ext4"},
           "reclaimPolicy": "Retain", "volumeBindingMode": "Immediate",
           "allowVolumeExpansion": True})

    # ---- imaging-store (Orthanc)
    orthanc = Ctr("orthanc", "docker.io/orthancteam/orthanc:24.12.1", port=8042,
                  requests={"cpu": "1", "memory": "2Gi"}, limits={"memory": "4Gi"},
                  env={"ORTHANC__POSTGRESQL__HOST": "imaging-index.dentalcloud.svc",
                       "VERBOSE_ENABLED": "true"},
                  readiness=http_probe("/system", delay=15, timeout=3),
                  liveness=http_probe("/system", delay=60, period=30, timeout=5),
                  mounts=[{"name": "dicom", "mountPath": "/var/lib/orthanc/db"},
                          {"name": "config", "mountPath": "/etc/orthanc/orthanc.json",
                           "subPath": "orthanc.json"}])
    tpl = Template([orthanc], service_account="imaging-store",
                   volumes=[{"name": "config", "configMap": {"name": "imaging-store-config"}}])
    rev_at = s.ago(days=4, hours=21, minutes=5)
    work, stores = statefulset(s, NS, "imaging-store", tpl, replicas=1, nodes=nodes[1:],
                               revisions=[(7, rev_at, tpl)], pod_revision=lambda i: 7,
                               born=lambda i: rev_at + timedelta(seconds=14),
                               claim=("dicom", "500Gi", "ceph-rbd"), created=s.ago(days=610))
    c.service(NS, "imaging-store", dict(work.obj["spec"]["selector"]["matchLabels"]),
              port=8042, target="http", created=s.ago(days=610))
    configmap_with(s, NS, "imaging-store-config", {"orthanc.json": ORTHANC},
                   created=s.ago(days=610), edited=s.ago(days=96), manager="helm",
                   labels={"app.kubernetes.io/name": "imaging-store"})
    store = stores[0]
    name = store["metadata"]["name"]
    rate = 14 * GIB / 86400  # bytes a second

    def used(t: int) -> float:
        return min(CAPACITY, CAPACITY - (FULL.timestamp() - t) * rate)

    def full(t: int) -> bool:
        return t >= FULL.timestamp()

    volume_stats(s, NS, "dicom-imaging-store-0", CAPACITY, used,
                 inodes=32_768_000, inodes_used=lambda t: 9_412_880 + (t % 86400) * 0.9)
    gauge(s, "orthanc_disk_size_mb", {"namespace": NS, "pod": name},
          lambda t: round(used(t) / MIB * 0.996, 1), "Disk space used by the storage area "
          "in MB")
    app_counter(s, "orthanc_store_dicom_failures_total", {"namespace": NS, "pod": name},
                s.times, lambda t: 0.0 if not full(t) else 0.31,
                "DICOM instances that could not be stored.", start=0)
    quiet(s, [store], "orthanc", 1700)
    cpu_seconds(s, store, "orthanc", lambda t: 0.35 if not full(t) else 0.12)
    requests(s, store, "imaging-store", rps=lambda t: 2.4, codes={
        "200": lambda t: 0.87,
        "201": lambda t: 0.13 if not full(t) else 0.0,
        "507": lambda t: 0.0 if not full(t) else 0.13})
    log_pod(s, store, "orthanc", "imaging-store", [
        ("info", "I0209 HTTP-7 ServerContext.cpp:563] New instance stored "
                 "(1.2.826.0.1.3680043.2.1125.1.88231.5512)", {}),
        ("info", "I0209 HTTP-3 OrthancRestApi.cpp:201] Receiving a DICOM file of 18402212 "
                 "bytes through HTTP", {}),
        ("info", "I0209 HTTP-12 ServerContext.cpp:563] New instance stored "
                 "(1.2.826.0.1.3680043.2.1125.1.90012.1177)", {}),
    ], 90, end=FULL)
    log_pod(s, store, "orthanc", "imaging-store", [
        ("info", "I0209 HTTP-3 OrthancRestApi.cpp:201] Receiving a DICOM file of 211844096 "
                 "bytes through HTTP", {}),
        ("error", "E0209 HTTP-3 FilesystemStorage.cpp:118] Cannot write to file "
                  "/var/lib/orthanc/db/7c/1e/7c1e09a2-5b6d4c1f-8e21d0aa-3f9b7c22-e4d10b55: "
                  "No space left on device", {"error.type": "FullStorage"}),
        ("error", "E0209 HTTP-3 OrthancException.cpp:61] The file storage is full",
         {"error.type": "FullStorage", "http.response.status_code": 507}),
        ("error", "E0209 HTTP-9 OrthancException.cpp:61] The file storage is full",
         {"error.type": "FullStorage", "http.response.status_code": 507}),
        ("info", "I0209 HTTP-5 OrthancRestApi.cpp:88] GET /studies/5e1a0c22-1b9f54e1/archive "
                 "200", {}),
    ], 140, start=FULL)

    # ---- xray-upload: the practices' upload API, healthy itself
    up = Ctr("xray-upload", f"{REG}/xray-upload:3.9.2", port=8080,
             requests={"cpu": "200m", "memory": "384Mi"}, limits={"memory": "512Mi"},
             env={"ORTHANC_URL": "http://imaging-store.dentalcloud.svc:8042"},
             readiness=http_probe("/ready"))
    _, ups = steady(s, NS, "xray-upload", [up], nodes=nodes, replicas=3, revision=28,
                    rollout=s.ago(days=3, hours=4))
    for pod in ups:
        quiet(s, [pod], "xray-upload", 240)
        requests(s, pod, "xray-upload", rps=lambda t: 0.11, codes={
            "201": lambda t: 0.0 if full(t) else 0.995,
            "502": lambda t: 1.0 if full(t) else 0.005},
            median=lambda t: 1.8, buckets=(0.5, 1.0, 2.5, 5.0, 10.0))
    chatter(s, ups, "xray-upload", "xray-upload", [
        ("info", "upload from practice PR-0418 (Sirona XIOS, 2 images) stored in 1.4s", {}),
        ("info", "upload from practice PR-1120 (Planmeca ProMax 3D, CBCT 204 MB) stored in "
                 "9.8s", {}),
    ], 60, end=FULL)
    chatter(s, ups, "xray-upload", "xray-upload", [
        ("error", "POST /v1/uploads 502: imaging-store refused instance: HTTP 507 "
                  "\"The file storage is full\"", {"http.response.status_code": 502}),
        ("warn", "upload from practice PR-2207 failed after 3 attempts, client told to retry",
         {}),
    ], 90, start=FULL)

    # ---- red herrings
    roll = NOW - timedelta(minutes=100)
    tp = Ctr("treatment-planner", f"{REG}/treatment-planner:12.1.0", port=8080,
             requests={"cpu": "250m", "memory": "768Mi"}, limits={"memory": "1Gi"},
             readiness=http_probe("/ready"))
    _, tps = steady(s, NS, "treatment-planner", [tp], nodes=nodes, replicas=2, revision=47,
                    rollout=roll, offset=1,
                    old=(46, s.ago(days=8), [Ctr("treatment-planner",
                                                f"{REG}/treatment-planner:12.0.4")]))
    quiet(s, tps, "treatment-planner", 600)
    chatter(s, tps, "treatment-planner", "treatment-planner", [
        ("info", "treatment-planner 12.1.0 started (tariff catalogue BEMA 2028-01)", {}),
        ("info", "plan TP-88120 saved: 4 items, 1 312.40 EUR", {}),
    ], 30, start=roll + timedelta(minutes=1))
    vw = Ctr("viewer-web", f"{REG}/viewer-web:6.4.0", port=8080,
             requests={"cpu": "100m", "memory": "256Mi"}, limits={"memory": "384Mi"},
             readiness=http_probe("/"))
    _, vws = steady(s, NS, "viewer-web", [vw], nodes=nodes, replicas=2, revision=19,
                    rollout=s.ago(days=5, hours=6), offset=2,
                    restarted={0: (s.ago(days=3, hours=1), "OOMKilled", 137)})
    quiet(s, vws, "viewer-web", 210)
    pg = Ctr("postgres", "docker.io/library/postgres:16.6", port=5432, port_name="postgres",
             requests={"cpu": "500m", "memory": "2Gi"}, limits={"memory": "2Gi"})
    _, pgs = steady(s, NS, "imaging-index", [pg], nodes=nodes, replicas=1, revision=4,
                    rollout=s.ago(days=6, hours=1), offset=0, service=5432, target="postgres")
    quiet(s, pgs, "postgres", 1500)
    chatter(s, pgs, "postgres", "imaging-index", [
        ("warn", "LOG:  checkpoints are occurring too frequently (24 seconds apart)", {}),
        ("info", "LOG:  checkpoint complete: wrote 4120 buffers (3.1%)", {}),
    ], 30)
    ic = Ctr("insurance-claims", f"{REG}/insurance-claims:2.2.7", port=8080,
             requests={"cpu": "100m", "memory": "256Mi"}, limits={"memory": "384Mi"},
             readiness=http_probe("/ready"))
    _, ics = steady(s, "billing", "insurance-claims", [ic], nodes=nodes, replicas=2,
                    revision=12, rollout=s.ago(days=4, hours=9))
    quiet(s, ics, "insurance-claims", 200)
    chatter(s, ics, "insurance-claims", "insurance-claims", [
        ("info", "claim CL-2028-04412 submitted to insurer AOK-NW, ack in 820ms", {}),
        ("warn", "insurer gateway https://kzv-gateway.example-insurer.de timed out after 10s, "
                 "claim CL-2028-04419 will be retried", {}),
    ], 30)
    return s
