"""Scenario 6: the 12 GB recsys-ranker image cannot be unpacked on the new GPU nodes.

The autoscaler added nodes from a launch template with a 50 GiB root volume; the GPU
operator images already fill most of it, so extracting the ranker's layers fails with
"no space left on device" and the new replicas sit in ImagePullBackOff. Old nodes, with
200 GiB disks and the image cached, run fine.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from ._k8s import (
    PodSpecBits,
    app,
    container,
    cstatus,
    deployment,
    meta,
    namespace,
    node,
    old_restart,
    owner_ref,
    pod,
    replicaset,
    waiting,
)
from ._kit import Obj, Story, accumulate, at, grid, iso, mins

REG = "834112045871.dkr.ecr.us-west-2.amazonaws.com"
IMG = f"{REG}/ml/recsys-ranker:2.4.0-cuda12.1"
LAYER = "sha256:9b2f4c7e1a0d83f5c6e2b1a47d9e0c3f8a6b5d4e2c1f0a9b8c7d6e5f4a3b2c1d"
BASE_IMAGES: list[Obj] = [
    {"names": ["nvcr.io/nvidia/driver:535.129.03-amzn2"], "sizeBytes": 9212334080},
    {"names": ["nvcr.io/nvidia/k8s/dcgm-exporter:3.3.0-3.2.0-ubuntu22.04"],
     "sizeBytes": 1923104768},
    {"names": ["nvcr.io/nvidia/k8s-device-plugin:v0.14.3"], "sizeBytes": 312475648},
    {"names": ["nvcr.io/nvidia/cloud-native/gpu-operator-validator:v23.9.1"],
     "sizeBytes": 2850422784},
    {"names": [f"{REG}/ml/feature-sidecar:1.6.0"], "sizeBytes": 4831838208},
    {"names": ["602401143452.dkr.ecr.us-west-2.amazonaws.com/amazon-k8s-cni:v1.16.0"],
     "sizeBytes": 71245824}]


def _nodes(s: Story, scaled: datetime) -> tuple[dict[str, str], list[str], list[str]]:
    """Four old gpu-g5 nodes (200 GiB, image cached) and three new gpu-g5-v2 (50 GiB)."""
    now, rng = s.now, s.rng
    ips: dict[str, str] = {}
    old_nodes: list[str] = []
    new_nodes: list[str] = []
    for i in range(7):
        ip = f"10.90.{32 + 16 * (i % 3)}.{rng.randint(10, 240)}"
        n = f"ip-{ip.replace('.', '-')}.us-west-2.compute.internal"
        ips[n] = ip
        new = i >= 4
        imgs = list(BASE_IMAGES) + ([] if new else [{"names": [IMG], "sizeBytes": 12884901888}])
        s.add(node(s, n, scaled + mins(2 * (i - 4)) if new else now - timedelta(days=20 + i),
                   ip=ip, cpu="16", memory="64453356Ki", gpu=1,
                   storage="52416492Ki" if new else "209702892Ki", images=imgs,
                   labels={"eks.amazonaws.com/nodegroup": "gpu-g5-v2" if new else "gpu-g5",
                           "node.kubernetes.io/instance-type": "g5.4xlarge",
                           "nvidia.com/gpu.present": "true",
                           "topology.kubernetes.io/zone": f"us-west-2{'abc'[i % 3]}"},
                   taints=[{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}],
                   kubelet="v1.30.4-eks-a737599", os_image="Amazon Linux 2",
                   runtime="containerd://1.7.22"))
        (new_nodes if new else old_nodes).append(n)
    return ips, old_nodes, new_nodes


def build() -> Story:
    """Build the scenario."""
    now = at("2026-10-21T18:50:00Z")
    scaled = now - timedelta(minutes=82)
    s = Story(
        "recsys-new-pods-stuck", "Recommendations slow, new ranker pods never start", now,
        "homepage recommendations are slow / generic since the evening peak. HPA scaled "
        "recsys-ranker up but the new pods never come up. are the new GPU nodes broken? "
        "nvidia driver? we also shipped embedding-service an hour ago.",
        "image_pull", {"kind": "Deployment", "namespace": "ml", "name": "recsys-ranker"},
        ["no space left on device", "ImagePullBackOff", "failed to extract layer",
         "ephemeral-storage: 52416492Ki", "failed to garbage collect required amount of images"],
        "Give the gpu-g5-v2 node group a root/image volume big enough for the 12 GB ranker "
        "image (e.g. 200 GiB like gpu-g5), or pre-pull it into the AMI; slim the image. "
        "Cordon the three small-disk nodes meanwhile.",
        seed=5806)
    rng = s.rng
    for ns in ("ml", "kube-system", "gpu-operator", "default"):
        s.add(namespace(s, ns, now - timedelta(days=500)))
    ips, old_nodes, new_nodes = _nodes(s, scaled)
    cs = [container("ranker", IMG, port=8000, cpu="3", memory="24Gi",
                    probe_path="/v2/health/ready")]
    cs[0]["resources"]["limits"]["nvidia.com/gpu"] = "1"
    tol = {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists",
                            "effect": "NoSchedule"}]}
    rolled = now - timedelta(days=2, hours=4)
    d, duid = deployment(s, "ml", "recsys-ranker", labels={"app": "recsys-ranker"},
                         containers=cs, replicas=10, ready=6, created=now - timedelta(days=300),
                         revision=19, generation=61, changed=scaled, pod_extra=tol)
    rs, rsuid = replicaset(s, "ml", "recsys-ranker", duid, "5f8b9c6d7d", containers=cs,
                           replicas=10, ready=6, revision=19, created=rolled, app="recsys-ranker",
                           pod_extra=tol)
    s.add(d, rs)
    own = owner_ref("ReplicaSet", rs["metadata"]["name"], rsuid)
    bits = PodSpecBits(cs, {"app": "recsys-ranker", "pod-template-hash": "5f8b9c6d7d"}, tol)
    running_pods = []
    for i in range(6):
        pn = f"recsys-ranker-5f8b9c6d7d-{s.suffix()}"
        nd = old_nodes[i % 4]
        s.add(pod(s, "ml", pn, bits, node_name=nd, ip=f"10.90.{rng.randint(64, 95)}.{i + 20}",
                  start=rolled + mins(i) if i < 4 else scaled - mins(40), host_ip=ips[nd],
                  owner=own))
        running_pods.append(pn)
    for i, nd in enumerate([*new_nodes, new_nodes[0]]):
        pn = f"recsys-ranker-5f8b9c6d7d-{s.suffix()}"
        st = scaled + mins(9 + i)
        sts = [cstatus("ranker", IMG, waiting("ImagePullBackOff",
                                              f'Back-off pulling image "{IMG}"'), ready=False)]
        s.add(pod(s, "ml", pn, bits, node_name=nd, ip=f"10.90.{rng.randint(96, 127)}.{i + 40}",
                  start=st, host_ip=ips[nd], owner=own, statuses=sts, phase="Pending",
                  ready=False))
        snap = rng.randint(180, 420)
        err = (f'Failed to pull image "{IMG}": failed to pull and unpack image "{IMG}": failed '
               f"to extract layer {LAYER}: write /var/lib/containerd/io.containerd.snapshotter."
               f"v1.overlayfs/snapshots/{snap}/fs/opt/conda/lib/python3.10/site-packages/torch/"
               "lib/libtorch_cuda.so: no space left on device: unknown")
        n_pull = 6 + i % 2
        s.event("ml", "Pod", pn, "Pulling", f'Pulling image "{IMG}"', count=n_pull,
                first=st, last=s.ago(7 + i), host=nd)
        s.event("ml", "Pod", pn, "Failed", err, type_="Warning", count=n_pull,
                first=st + mins(4), last=s.ago(3 + i), host=nd)
        s.event("ml", "Pod", pn, "Failed", "Error: ErrImagePull", type_="Warning",
                count=n_pull, first=st + mins(4), last=s.ago(3 + i), host=nd)
        s.event("ml", "Pod", pn, "BackOff", f'Back-off pulling image "{IMG}"', count=140 + 9 * i,
                first=st + mins(5), last=s.ago(0.5), host=nd)
        s.event("ml", "Pod", pn, "Failed", "Error: ImagePullBackOff", type_="Warning",
                count=140 + 9 * i, first=st + mins(5), last=s.ago(0.5), host=nd)
    for nd in new_nodes:
        s.event("default", "Node", nd, "FreeDiskSpaceFailed", "Failed to garbage collect "
                "required amount of images. Attempted to free 10737418240 bytes, but only found "
                "0 bytes eligible to free.", type_="Warning", count=11, first=s.ago(55),
                last=s.ago(4), host=nd)
        s.event("default", "Node", nd, "ImageGCFailed", "failed to garbage collect required "
                "amount of images. Attempted to free 10737418240 bytes, but only found 0 bytes "
                "eligible to free", type_="Warning", count=11, first=s.ago(55), last=s.ago(4),
                host=nd)
    s.add({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
           "metadata": meta("recsys-ranker", "ml", now - timedelta(days=300), s.uid()),
           "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                       "name": "recsys-ranker"}, "minReplicas": 4,
                    "maxReplicas": 16, "metrics": [{"type": "Pods", "pods": {
                        "metric": {"name": "ranker_inflight_requests"},
                        "target": {"type": "AverageValue", "averageValue": "24"}}}]},
           "status": {"currentReplicas": 10, "desiredReplicas": 10,
                      "lastScaleTime": iso(scaled),
                      "currentMetrics": [{"type": "Pods", "pods": {
                          "metric": {"name": "ranker_inflight_requests"},
                          "current": {"averageValue": "41"}}}],
                      "conditions": [{"type": "ScalingLimited", "status": "False",
                                      "reason": "DesiredWithinRange",
                                      "message": "the desired count is within the acceptable "
                                                 "range", "lastTransitionTime": iso(scaled)}]}})
    _rest(s, ips, old_nodes, new_nodes, running_pods, scaled)
    _metrics(s, ips, old_nodes, new_nodes, scaled)
    return s


def _rest(s: Story, ips: dict[str, str], old: list[str], new: list[str], ranker: list[str],
          scaled: datetime) -> None:
    """Victim recsys-api, GPU noise, embedding-service deploy, Pending notebook."""
    now = s.now
    start = now - timedelta(hours=6)
    peak = now - timedelta(minutes=95)
    api = app(s, "ml", "recsys-api", f"{REG}/ml/recsys-api:3.8.1", replicas=4,
              nodes=old, node_ips=ips, created=now - timedelta(days=300),
              rolled=now - timedelta(days=5))
    s.chatter("ml", api.pods, "recsys-api", "recsys-api", start, now, 15.0, [
        (8, "info", "GET /v1/recommendations?user={user} 200 {ms}ms source=ranker")])
    s.chatter("ml", api.pods, "recsys-api", "recsys-api", peak, now, 6.0, [
        (4, "warning", "ranker call timed out after 250ms, falling back to popularity list "
                       "for user {user}"),
        (1, "error", "ranker upstream recsys-ranker.ml.svc:8000: 3 of 3 retries exhausted")])
    s.chatter("ml", ranker, "recsys-ranker", "ranker", start, now, 12.0, [
        (8, "info", "scored batch of 64 candidates in {ms}ms"),
        (1, "warning", "inference queue depth {n} above soft limit 32")])
    dp = [f"nvidia-device-plugin-daemonset-{s.suffix()}" for _ in new]
    s.chatter("gpu-operator", dp, "nvidia-device-plugin", "nvidia-device-plugin", scaled, now,
              240.0, [(2, "info", "Registered device plugin for 'nvidia.com/gpu' with Kubelet"),
                      (1, "warning", "Failed to initialize NVML: could not load NVML library, "
                                     "retrying in 5s")])
    s.chatter("gpu-operator", [f"dcgm-exporter-{s.suffix()}"], "dcgm-exporter", "dcgm-exporter",
              start, now, 900.0, [(1, "warning", "XID 13 (Graphics Engine Exception) on GPU 0 "
                                                 "ignored: recovered")])
    emb = app(s, "ml", "embedding-service", f"{REG}/ml/embedding-service:1.8.3", replicas=2,
              nodes=old, node_ips=ips, created=now - timedelta(days=120), rolled=s.ago(58),
              revision=33)
    s.event("ml", "Deployment", "embedding-service", "ScalingReplicaSet",
            f"Scaled up replica set {emb.pods[0].rsplit('-', 1)[0]} to 2 from 0",
            component="deployment-controller", last=s.ago(58), api="apps/v1")
    s.chatter("ml", emb.pods, "embedding-service", "embedding-service", s.ago(58), now, 30.0, [
        (6, "info", "embedded {n} items in {ms}ms"),
        (1, "warning", "model warmup took 4{n}s (first request)")])
    fs = app(s, "ml", "feature-store", f"{REG}/ml/feature-store:0.22.4", replicas=2, nodes=old,
             node_ips=ips, created=now - timedelta(days=300), rolled=now - timedelta(days=6),
             restarts={1: old_restart("OOMKilled", 137, now - timedelta(days=6),
                                      now - timedelta(days=4))})
    s.chatter("ml", fs.pods, "feature-store", "feature-store", start, now, 60.0, [
        (5, "info", "online features served p99={ms}ms"),
        (1, "warning", "redis latency spike {ms}ms on get_features")])
    pn = "training-notebook-jdoe-0"
    c = container("notebook", f"{REG}/ml/notebook:cuda12", port=8888, cpu="4", memory="32Gi",
                  probe_path=None)
    c["resources"]["limits"]["nvidia.com/gpu"] = "1"
    s.add(pod(s, "ml", pn, PodSpecBits([c], {"app": "training-notebook"}), node_name=None,
              ip=None, start=s.ago(200), owner=None, phase="Pending", ready=False,
              conditions=[{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                           "lastTransitionTime": iso(s.ago(200)),
                           "message": "0/7 nodes are available: 7 Insufficient nvidia.com/gpu."}]))
    s.event("ml", "Pod", pn, "FailedScheduling", "0/7 nodes are available: 7 Insufficient "
            "nvidia.com/gpu. preemption: 0/7 nodes are available: 7 No preemption victims "
            "found for incoming pod.", type_="Warning", count=64, first=s.ago(58),
            last=s.ago(3), component="default-scheduler")


def _metrics(s: Story, ips: dict[str, str], old: list[str], new: list[str],
             scaled: datetime) -> None:
    """Root filesystem free bytes (sawtooth on new nodes), GPU load, fallbacks."""
    now, rng = s.now, s.rng
    ts = grid(now - timedelta(hours=6), now, 60)
    peak = now - timedelta(minutes=95)
    for n in old + new:
        lab = {"instance": f"{ips[n]}:9100", "node": n, "mountpoint": "/",
               "device": "/dev/nvme0n1p1", "fstype": "xfs"}
        if n in new:
            first = [t for t in ts if t >= scaled + mins(3)]
            pts = []
            for t in first:
                phase = int((t - first[0]).total_seconds()) % 600
                fill = min(1.0, phase / 240) * 8.4e9 if phase < 300 else 0.0
                pts.append((t, max(2.2e7, 9.1e9 - fill)))
            s.metrics.gauge("node_filesystem_avail_bytes", "free bytes", lab, pts)
            s.metrics.gauge("node_filesystem_size_bytes", "size", lab,
                            [(t, 53674487808.0) for t in first])
        else:
            s.metrics.gauge("node_filesystem_avail_bytes", "free bytes", lab,
                            [(t, 1.31e11 + 2e8 * rng.random()) for t in ts])
            s.metrics.gauge("node_filesystem_size_bytes", "size", lab,
                            [(t, 214735908864.0) for t in ts])
            s.metrics.gauge("DCGM_FI_DEV_GPU_UTIL", "GPU utilisation", {
                "Hostname": n, "gpu": "0", "namespace": "ml"},
                [(t, float(min(100, (55 if t < peak else 97) + rng.randint(-4, 3)))) for t in ts])
    s.metrics.gauge("kube_deployment_status_replicas_available", "available", {
        "namespace": "ml", "deployment": "recsys-ranker"},
        [(t, 4.0 if t < scaled - mins(40) else 6.0) for t in ts])
    s.metrics.counter("http_requests_total", "requests", {
        "namespace": "ml", "service": "recsys-api", "code": "200", "source": "fallback"},
        accumulate(ts, lambda t: 31.0 if t > peak else 0.2))
