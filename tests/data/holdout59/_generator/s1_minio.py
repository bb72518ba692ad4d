"""minio-uploads-quorum: half of a MinIO erasure set goes offline, writes lose quorum.

Two of the four MinIO pods share one storage node; that node's NVMe filesystem is
remounted read-only, so four of eight drives go offline. EC:4 keeps reads possible (read
quorum 4) but not writes (write quorum 5). The upload API that calls MinIO returns 503s
on uploads and, having shipped 3.9.0 this morning, is blamed.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

from ._kit import Container, Workload, iso
from ._scene import Line, Scene
from ._signals import restarted

SID = "minio-uploads-quorum"
NODES = ["ip-10-40-1-23.eu-west-1.compute.internal", "ip-10-40-2-141.eu-west-1.compute.internal",
         "ip-10-40-3-77.eu-west-1.compute.internal"]
STORAGE = ["ip-10-40-7-88.eu-west-1.compute.internal", "ip-10-40-8-14.eu-west-1.compute.internal"]
BAD = STORAGE[1]


def build(root: Path) -> None:
    """Write the scenario."""
    s = Scene(SID, "2026-03-17T14:20:00Z", seed=5901)
    t0 = s.ago(42)
    broken = s.ago(41.5)
    s.nodes(NODES)
    for i, name in enumerate(STORAGE):
        conds = None
        if name == BAD:
            conds = {"ReadonlyFilesystem": ("True", "FilesystemIsReadOnly",
                                            "Filesystem is read-only")}
        s.cluster.node(name, s.ago(60 * 24 * 90 + 300 * i), zone="eu-west-1b",
                       itype="i4i.2xlarge", pool="storage-i4i", conditions=conds)
    s.find("Node", "", BAD)["status"]["conditions"][-1]["lastTransitionTime"] = iso(broken)
    s.namespaces("storage", "uploads", "ingress-nginx", "analytics", "kube-system")

    # --- MinIO: four pods, two drives each; pods 1 and 3 both landed on BAD.
    minio_c = Container("minio", "quay.io/minio/minio:RELEASE.2025-09-07T16-13-09Z", port=9000,
                        cpu_req="1", cpu_lim=None, mem_req="4Gi", mem_lim="8Gi",
                        env={"MINIO_STORAGE_CLASS_STANDARD": "EC:4",
                             "MINIO_PROMETHEUS_AUTH_TYPE": "public",
                             "MINIO_VOLUMES": "http://minio-{0...3}.minio-hl.storage.svc.cluster"
                                              ".local:9000/export/data{1...2}"},
                        args=["server", "--console-address", ":9001"],
                        probe_path="/minio/health/live",
                        mounts=[{"name": "data1", "mountPath": "/export/data1"},
                                {"name": "data2", "mountPath": "/export/data2"}])
    started = [s.ago(60 * 24 * 19 + 30 * i) for i in range(4)]
    started[2] = s.ago(60 * 24 * 3 + 95)

    def minio_pod(i: int, pod: dict[str, object]) -> None:
        if i == 2:
            restarted(pod, count=1, finished=started[2] - timedelta(seconds=3),
                      reason="Error", exit_code=1)

    vct = [{"metadata": {"name": n}, "spec": {"accessModes": ["ReadWriteOnce"],
                                              "storageClassName": "local-nvme",
                                              "resources": {"requests": {"storage": "1700Gi"}}}}
           for n in ("data1", "data2")]
    minio = s.cluster.workload(Workload(
        "storage", "minio", [minio_c], [STORAGE[0], BAD], s.ago(60 * 24 * 210), replicas=4,
        kind="StatefulSet", headless=True, service_port=9000, pod_started=started,
        mutate_pod=minio_pod,
        spec_extra={"serviceName": "minio-hl", "volumeClaimTemplates": vct},
        pod_spec_extra={"affinity": {"podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [{
                "weight": 50, "podAffinityTerm": {
                    "labelSelector": {"matchLabels": {"app.kubernetes.io/name": "minio"}},
                    "topologyKey": "kubernetes.io/hostname"}}]}},
            "nodeSelector": {"eks.amazonaws.com/nodegroup": "storage-i4i"}}))
    for ref in minio:
        for d in ("data1", "data2"):
            pvc = f"{d}-{ref.pod}"
            s.cluster.add({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                           "metadata": {"name": pvc, "namespace": "storage",
                                        "creationTimestamp": "2025-08-19T09:12:40Z",
                                        "annotations": {"volume.kubernetes.io/selected-node":
                                                        ref.node}},
                           "spec": {"accessModes": ["ReadWriteOnce"],
                                    "storageClassName": "local-nvme",
                                    "resources": {"requests": {"storage": "1700Gi"}},
                                    "volumeName": f"local-pv-{pvc[-12:]}"},
                           "status": {"phase": "Bound", "capacity": {"storage": "1700Gi"}}})
    s.cluster.add({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                   "metadata": {"name": "local-nvme", "creationTimestamp": "2025-08-19T08:55:02Z"},
                   "provisioner": "kubernetes.io/no-provisioner", "reclaimPolicy": "Retain",
                   "volumeBindingMode": "WaitForFirstConsumer"})

    # --- upload-api (victim, rolled out 3.9.0 this morning) and its neighbours.
    rollout = s.ago(131)
    up_c = Container("upload-api", "registry.corp.example.io/platform/upload-api:3.9.0",
                     cpu_req="500m", cpu_lim="2", mem_req="512Mi", mem_lim="1Gi",
                     env={"S3_ENDPOINT": "http://minio.storage.svc.cluster.local:9000",
                          "S3_BUCKET": "user-uploads", "MULTIPART_PART_SIZE": "16MiB"})
    uploads = s.cluster.workload(Workload(
        "uploads", "upload-api", [up_c], NODES, s.ago(60 * 24 * 400), replicas=3, revision=27,
        rollout_at=rollout,
        previous_images={"upload-api": "registry.corp.example.io/platform/upload-api:3.8.4"}))
    clam_c = Container("clamav", "docker.io/clamav/clamav:1.4.1", port=3310, probe_path=None,
                       cpu_req="250m", cpu_lim="1", mem_req="1536Mi", mem_lim="3Gi")
    clam = s.cluster.workload(Workload("uploads", "clamav", [clam_c], NODES[1:],
                                       s.ago(60 * 24 * 200), replicas=1,
                                       rollout_at=s.ago(60 * 24 * 12)))
    ing_c = Container("controller", "registry.k8s.io/ingress-nginx/controller:v1.11.3", port=80,
                      cpu_req="500m", cpu_lim=None, mem_req="512Mi", mem_lim="1Gi")
    ingress = s.cluster.workload(Workload("ingress-nginx", "ingress-nginx-controller", [ing_c],
                                          NODES, s.ago(60 * 24 * 500), replicas=2,
                                          rollout_at=s.ago(60 * 24 * 20)))
    s.pending_pod("analytics", "backfill-events-29034120-x7k2p", "backfill-events",
                  "registry.corp.example.io/data/backfill:2.3.0", cpu="4", memory="48Gi",
                  since=s.ago(95), message="0/5 nodes are available: 5 Insufficient memory. "
                  "preemption: 0/5 nodes are available: 5 No preemption victims found for "
                  "incoming pod.")

    # --- events
    s.cluster.event("", "Node", BAD, "FilesystemIsReadOnly",
                    "Node condition ReadonlyFilesystem is now: True, reason: "
                    "FilesystemIsReadOnly, message: \"Filesystem is read-only\"",
                    first=broken, type_="Warning", component="kernel-monitor", host=BAD)
    s.cluster.event("", "Node", BAD, "IOError",
                    "kernel: nvme nvme1: I/O 817 QID 5 timeout, aborting", first=broken
                    - timedelta(seconds=20), last=broken, count=6, type_="Warning",
                    component="kernel-monitor", host=BAD)
    for i, ref in enumerate(uploads):
        s.cluster.event("uploads", "Pod", ref.pod, "Unhealthy", "Readiness probe failed: HTTP "
                        "probe failed with statuscode: 503", first=s.ago(38 - i),
                        last=s.ago(37 - i), count=2, type_="Warning", host=ref.node)
    s.hpa("uploads", "upload-api", lo=3, hi=12, current=3, cpu_target=70, cpu_now=16)
    s.cluster.event("uploads", "HorizontalPodAutoscaler", "upload-api", "SuccessfulRescale",
                    "New size: 3; reason: All metrics below target", first=s.ago(55),
                    component="horizontal-pod-autoscaler")

    # --- logs
    def failing(t: datetime) -> bool:
        return t >= t0

    def up_line(ref_i: int) -> Callable[[datetime], Line | None]:
        def make(t: datetime) -> Line | None:
            r = s.rng.random()
            trace = s.trace()
            obj = f"tickets/{s.rng.randrange(10**6, 10**7)}/{s.pick(['png', 'pdf', 'jpg', 'docx'])}"
            if r < 0.45:
                size = s.rng.randrange(40_000, 9_000_000)
                if failing(t):
                    return ("error", f"upload failed: PutObject user-uploads/{obj}: Multiple disk "
                            "failures, unable to write data. (XMinioWriteQuorum) status=503",
                            {"http.request.method": "POST", "url.path": "/v1/uploads",
                             "http.response.status_code": 503, "trace.id": trace,
                             "error.type": "minio.ErrorResponse", "upload.bytes": size})
                return ("info", f"stored user-uploads/{obj} ({size} bytes, "
                        f"{s.rng.randrange(1, 6)} parts)",
                        {"http.request.method": "POST", "url.path": "/v1/uploads",
                         "http.response.status_code": 201, "trace.id": trace})
            if r < 0.9:
                return ("info", f"GET /v1/files/{s.rng.randrange(10**6, 10**7)} 200 "
                        f"{s.rng.randrange(8, 60)}ms",
                        {"http.request.method": "GET", "url.path": "/v1/files",
                         "http.response.status_code": 200, "trace.id": trace})
            if r < 0.95:
                return ("warn", "slow virus scan response from clamav:3310 "
                        f"({s.rng.randrange(1200, 2900)}ms)", {})
            return ("debug", "presigned URL cache hit ratio 0.9"
                    f"{s.rng.randrange(1, 9)}", {})
        return make

    for i, ref in enumerate(uploads):
        s.logs.add(rollout + timedelta(seconds=41 + 17 * i), ref, "info",
                   "upload-api 3.9.0 starting (go1.23.4); multipart part size 16MiB "
                   "(previous default 8MiB); S3 endpoint http://minio.storage.svc.cluster.local"
                   ":9000", )
        s.chatter(ref, up_line(i), every_s=14, minutes=150)

    def minio_line(ref_i: int) -> Callable[[datetime], Line | None]:
        def make(t: datetime) -> Line | None:
            if failing(t) and s.rng.random() < 0.55:
                return ("error", "API: PutObject(bucket=user-uploads, object=tickets/"
                        f"{s.rng.randrange(10**6, 10**7)}/upload.bin)\nError: Write failed. "
                        "Insufficient number of drives online (cmd.InsufficientWriteQuorum)",
                        {"error.type": "cmd.InsufficientWriteQuorum"})
            return s.pick([
                ("info", "Scanner: cycle completed for bucket user-uploads, 0 objects healed", {}),
                ("info", f"Lifecycle: expired {s.rng.randrange(0, 40)} objects in "
                 "bucket tmp-exports", {}),
                ("info", "Cluster metrics collected", {}),
            ])
        return make

    for i, ref in enumerate(minio):
        if ref.node == BAD:
            for d in ("data1", "data2"):
                s.logs.add(broken + timedelta(seconds=3 + i), ref, "error",
                           f"Drive /export/{d} returned an unexpected error: read-only file "
                           "system, please investigate - drive will be offline",
                           **{"error.type": "os.SyscallError"})
        else:
            for peer in ("minio-1", "minio-3"):
                for d in ("data1", "data2"):
                    s.logs.add(broken + timedelta(seconds=9 + i), ref, "warn",
                               f"Marking http://{peer}.minio-hl.storage.svc.cluster.local:9000"
                               f"/export/{d} offline temporarily; caused by drive is faulty")
        s.chatter(ref, minio_line(i), every_s=40, minutes=150)

    def ing_line(t: datetime) -> Line | None:
        r = s.rng.random()
        if r < 0.4:
            code = 503 if failing(t) else 201
            return ("info", f'10.40.{s.rng.randrange(1, 4)}.{s.rng.randrange(2, 250)} - - '
                    f'"POST /api/uploads HTTP/2.0" {code} {s.rng.randrange(100, 900)} '
                    f'"Mozilla/5.0" {s.rng.uniform(0.02, 0.9):.3f} '
                    "[uploads-upload-api-80]", {"http.response.status_code": code})
        if r < 0.8:
            return ("info", f'10.40.{s.rng.randrange(1, 4)}.{s.rng.randrange(2, 250)} - - '
                    f'"GET /api/files/{s.rng.randrange(10**6, 10**7)} HTTP/2.0" 200 '
                    f'{s.rng.randrange(10**4, 10**6)} "Mozilla/5.0" 0.0{s.rng.randrange(1, 9)} '
                    "[uploads-upload-api-80]", {"http.response.status_code": 200})
        return ("info", f'185.220.{s.rng.randrange(1, 250)}.{s.rng.randrange(2, 250)} - - '
                f'"GET /{s.pick([".env", "wp-login.php", ".git/config"])} HTTP/1.1" 404 153 '
                '"curl/8.4.0" 0.001 [-]', {"http.response.status_code": 404})

    for ref in ingress:
        s.chatter(ref, ing_line, every_s=20, minutes=150)
    s.chatter(clam[0], lambda t: ("warn", "WARNING: Your ClamAV installation is OUTDATED! "
                                  "Local version: 1.4.1 Recommended version: 1.4.2", {}),
              every_s=300, minutes=170)

    # --- metrics
    def up_err(t: datetime) -> float:
        return 0.97 if failing(t) else 0.002

    for ref in uploads:
        s.http(ref, "/v1/uploads", lambda t: 3.1, up_err, lambda t: 0.35 if not failing(t)
               else 0.06, method="POST")
        s.http(ref, "/v1/files/{id}", lambda t: 7.5, lambda t: 0.001, lambda t: 0.03)
        s.usage(ref, 0.32, 190e6, cpu_limit=2)
    for ref in minio:
        lab = {"server": f"{ref.pod}.minio-hl.storage.svc.cluster.local:9000",
               "namespace": "storage", "pod": ref.pod}
        s.gauge("minio_cluster_drive_online_total", "Total drives online in the cluster",
                lab, lambda t: 4 if failing(t) else 8)
        s.gauge("minio_cluster_drive_offline_total", "Total drives offline in the cluster",
                lab, lambda t: 4 if failing(t) else 0)
        s.gauge("minio_cluster_write_quorum", "Maximum write quorum across all pools and sets",
                lab, lambda t: 5)
        s.gauge("minio_cluster_health_status", "Get current cluster health status",
                lab, lambda t: 0 if failing(t) else 1)
        s.counter("minio_s3_requests", "Total number of S3 requests",
                  {**lab, "api": "putobject"}, lambda t: 2.3)
        s.counter("minio_s3_requests_errors", "Total number of S3 requests with (4xx and 5xx) "
                  "errors", {**lab, "api": "putobject"}, lambda t: 2.2 if failing(t) else 0.0)
        s.counter("minio_s3_requests", "Total number of S3 requests",
                  {**lab, "api": "getobject"}, lambda t: 5.6)
        s.usage(ref, 0.6, 2.9e9)
    s.restarts(minio[2], lambda t: 1)
    s.usage(ingress[0], 0.4, 300e6)

    s.write(root, title="Uploads fail with 503 while downloads work",
            report="upload-api has been throwing 503s for ~40 min, people can't attach files "
            "to tickets. It went out as 3.9.0 this morning, should we just roll it back? "
            "Downloads still work fine.",
            category="dependency_failure", culprit=("StatefulSet", "storage", "minio"),
            evidence=["Insufficient number of drives online", "minio_cluster_drive_offline_total",
                      "FilesystemIsReadOnly", BAD],
            fix="Restore the four offline MinIO drives on " + BAD + " (replace the failed NVMe "
            "or reschedule minio-1 and minio-3 onto healthy storage and heal); make the pod "
            "anti-affinity required so one node cannot hold half of the erasure set.")
