"""node_failure: one GPU node's GPU fell off the bus (Xid 79); only its inference pod fails."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from ._kit import App, Obj, Scenario, crashed_status, rs_hash, worker_nodes

SID = "ml-ranker-inference-errors"
NOW = "2026-11-24T03:18:00Z"
ROLL = 52.0
XID = 37.0
BAD = "ip-10-0-17-142.eu-west-1.compute.internal"


def build(root: Path) -> None:
    s = Scenario(SID, NOW, 5708)
    general = worker_nodes(s, 5)
    gpus = []
    for i, (name, zone) in enumerate([("ip-10-0-1-141.eu-west-1.compute.internal", "eu-west-1a"),
                                      (BAD, "eu-west-1b"),
                                      ("ip-10-0-33-143.eu-west-1.compute.internal", "eu-west-1c"),
                                      ("ip-10-0-1-144.eu-west-1.compute.internal", "eu-west-1a")]):
        bad = name == BAD
        s.node(name, zone, "gpu-a10g", cpu="16", memory="64Gi", instance="g5.4xlarge",
               kernel="5.15.0-1061-aws", created_days=20 + i,
               labels={"nvidia.com/gpu.product": "NVIDIA-A10G", "nvidia.com/gpu.count": "1"},
               taints=[{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
               capacity={"nvidia.com/gpu": "1"},
               allocatable={"nvidia.com/gpu": "0" if bad else "1"})
        gpus.append(name)
    s.background(general, ["ml", "search"])

    # nvidia device plugin DaemonSet
    dp_c: Obj = {"name": "nvidia-device-plugin-ctr",
                 "image": "nvcr.io/nvidia/k8s-device-plugin:v0.14.5",
                 "resources": {}, "securityContext": {"privileged": True}}
    dp_tpl = s.template("nvidia-device-plugin", [dp_c], extra_spec={
        "nodeSelector": {"nodepool": "gpu-a10g"},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]})
    s.add({"apiVersion": "apps/v1", "kind": "DaemonSet",
           "metadata": s.meta("nvidia-device-plugin", "kube-system", 300 * 1440,
                              labels={"app": "nvidia-device-plugin"}),
           "spec": {"selector": {"matchLabels": {"app": "nvidia-device-plugin"}},
                    "template": dp_tpl},
           "status": {"currentNumberScheduled": 4, "desiredNumberScheduled": 4,
                      "numberAvailable": 4, "numberReady": 4, "updatedNumberScheduled": 4,
                      "numberMisscheduled": 0}})
    dp_pods = []
    for i, n in enumerate(gpus):
        p, _ = s.pod("kube-system", "nvidia-device-plugin", "nvidia-device-plugin", dp_tpl, n,
                     created_min=5 * 1440 + i, key=str(i), owner_kind="DaemonSet")
        dp_pods.append(p)
        s.log(s.ago(59.5 - i), "info", "nvidia-device-plugin", "kube-system", p,
              "nvidia-device-plugin-ctr", "Starting GRPC server for 'nvidia.com/gpu'")
    bad_dp = dp_pods[1]
    gpu_uuid = "GPU-3f0a9c1e-77b2-d4a1-5e08-c2b94d1f6a37"
    s.log(s.ago(XID - 0.02), "warn", "nvidia-device-plugin", "kube-system", bad_dp,
          "nvidia-device-plugin-ctr", f"XidCriticalError: Xid=79 on Device={gpu_uuid}; marking "
          "device as unhealthy.")
    s.log(s.ago(XID - 0.03), "warn", "nvidia-device-plugin", "kube-system", bad_dp,
          "nvidia-device-plugin-ctr", f"'nvidia.com/gpu' device marked unhealthy: {gpu_uuid}")
    s.pod_log("kube-system", bad_dp, "nvidia-device-plugin-ctr", [
        f"{iso_(s, 5 * 1440 + 1)} Loading NVML",
        f"{iso_(s, 5 * 1440 + 1)} Starting GRPC server for 'nvidia.com/gpu'",
        f"{iso_(s, 5 * 1440 + 1)} Registered device plugin for 'nvidia.com/gpu' with Kubelet",
        f"{iso_(s, XID - 0.02)} XidCriticalError: Xid=79 on Device={gpu_uuid}; marking device as "
        "unhealthy.",
        f"{iso_(s, XID - 0.03)} 'nvidia.com/gpu' device marked unhealthy: {gpu_uuid}"])
    xid_msg = ("kernel: [1734419.882231] NVRM: Xid (PCI:0000:00:1e): 79, pid='<unknown>', "
               "name=<unknown>, GPU has fallen off the bus.")
    s.event("", "Node", BAD, "GPUXidError", xid_msg, type_="Warning", count=1, first=XID,
            last=XID, component="kernel-monitor", host=BAD)
    s.event("", "Node", BAD, "GPUXidError",
            "kernel: [1734419.882290] NVRM: GPU 0000:00:1e.0: GPU has fallen off the bus.",
            type_="Warning", count=1, first=XID - 0.01, last=XID - 0.01,
            component="kernel-monitor", host=BAD)
    npd = s.app("kube-system", "node-problem-detector", "registry.k8s.io/node-problem-detector/"
                "node-problem-detector:v0.8.19", gpus, revision=4, created_min=5 * 1440,
                service=False)
    s.log(s.ago(XID), "warn", "node-problem-detector", "kube-system", npd.pods[1],
          "node-problem-detector", f"Event: kernel-monitor GPUXidError {xid_msg}")

    # ranker-inference: model ranker-v42 rolled out 52 minutes ago to all four GPU nodes
    c: Obj = {"name": "ranker", "image": "registry.internal/ml/ranker-serving:2.9.0",
              "env": [{"name": "MODEL_URI", "value": "s3://ml-models/ranker/ranker-v42"},
                      {"name": "MODEL_VERSION", "value": "ranker-v42"}],
              "resources": {"requests": {"cpu": "4", "memory": "24Gi", "nvidia.com/gpu": "1"},
                            "limits": {"memory": "24Gi", "nvidia.com/gpu": "1"}},
              "ports": [{"containerPort": 8000, "name": "http", "protocol": "TCP"}],
              "readinessProbe": {"httpGet": {"path": "/v2/health/ready", "port": 8000}}}
    tpl = s.template("ranker-inference", [c], extra_spec={
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "nodeSelector": {"nodepool": "gpu-a10g"}})
    s.deployment("ml", "ranker-inference", tpl, replicas=4, ready=3, updated=4, revision=27,
                 unavailable=1, progressed_min=ROLL - 4)
    old_tpl = s.template("ranker-inference", [{**c, "env": [
        {"name": "MODEL_URI", "value": "s3://ml-models/ranker/ranker-v41"},
        {"name": "MODEL_VERSION", "value": "ranker-v41"}]}], extra_spec=tpl["spec"] | {})
    old_tpl["spec"]["containers"] = [{**c, "env": [
        {"name": "MODEL_URI", "value": "s3://ml-models/ranker/ranker-v41"},
        {"name": "MODEL_VERSION", "value": "ranker-v41"}]}]
    old_rs = s.replicaset("ml", "ranker-inference", 26, old_tpl, replicas=0, ready=0,
                          created_min=12 * 1440)
    s.objects[-1]["status"] = {"replicas": 0, "observedGeneration": 3}
    rs = s.replicaset("ml", "ranker-inference", 27, tpl, replicas=4, ready=3, created_min=ROLL)
    s.event("ml", "Deployment", "ranker-inference", "ScalingReplicaSet",
            f"Scaled up replica set {rs} to 4 from 3", first=ROLL - 3, last=ROLL - 3,
            component="deployment-controller")
    s.event("ml", "Deployment", "ranker-inference", "ScalingReplicaSet",
            f"Scaled down replica set {old_rs} to 0 from 1", first=ROLL - 4, last=ROLL - 4,
            component="deployment-controller")
    pods = []
    bad_starts = [XID - 0.1, XID - 1.6, XID - 3.4, XID - 6.5, XID - 12.0, XID - 17.5,
                  XID - 23.0, XID - 28.5, XID - 34.0]
    for i, n in enumerate(gpus):
        created = ROLL - i
        if n == BAD:
            name = s.pod_name(rs, str(i))
            starts = [created - 0.5] + [x for x in bad_starts[1:] if x > 0.2]
            cs = crashed_status(s, c, "ml", name, starts, reason="Error", code=1, running=False)
            p, ip = s.pod("ml", rs, "ranker-inference", tpl, n, created_min=created, key=str(i),
                          statuses=[cs], ready=False)
            s.event("ml", "Pod", p, "BackOff",
                    f"Back-off restarting failed container ranker in pod "
                    f"{p}_ml({s.uid('ml/' + p)})", type_="Warning", count=41, first=XID - 2,
                    last=0.7, host=n, container="ranker")
            s.event("ml", "Pod", p, "Unhealthy", "Readiness probe failed: HTTP probe failed "
                    "with statuscode: 503", type_="Warning", count=6, first=XID, last=XID - 1,
                    host=n, container="ranker")
            bad_pod = p
            bad_pod_starts = starts
        else:
            p, ip = s.pod("ml", rs, "ranker-inference", tpl, n, created_min=created, key=str(i))
        pods.append((p, ip, n))
    s.service("ml", "ranker-inference", {"app": "ranker-inference"}, 80, 8000,
              [x for x in pods if x[0] != bad_pod],
              not_ready=[x for x in pods if x[0] == bad_pod])

    def boot(p: str, at: float, ok: bool) -> list[str]:
        out = []
        lines = [("info", "ranker-serving 2.9.0 starting (torch 2.3.1+cu121, driver 535.183.01)")]
        if ok:
            lines += [("info", "CUDA device 0: NVIDIA A10G, 22.5 GiB, compute 8.6"),
                      ("info", "loading model ranker-v42 from s3://ml-models/ranker/ranker-v42"),
                      ("info", "model ranker-v42 loaded in 41.3s (fp16, 1.9B params), warmup ok"),
                      ("info", "ready: serving on :8000")]
        else:
            lines += [("error", "NVML: Unable to determine the device handle for GPU "
                                "0000:00:1E.0: Unknown Error"),
                      ("error", "torch.cuda.is_available() returned False: CUDA driver "
                                "initialization failed, you might not have a CUDA gpu."),
                      ("fatal", "RuntimeError: No CUDA GPUs are available")]
        for j, (lvl, msg) in enumerate(lines):
            dt = s.ago(at) + timedelta(seconds=1 + (45 if ok and j > 1 else 0) + j * 0.2)
            s.log(dt, lvl, "ranker-inference", "ml", p, "ranker", msg)
            out.append(f"{dt.strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3]}Z {lvl.upper()} {msg}")
        return out

    for p, _ip, n in pods:
        created = ROLL - gpus.index(n)
        boot(p, created - 0.5, True)
        end = XID if p == bad_pod else 0.0
        m = created - 1.5
        while m > end:
            r = s.rng.random()
            if r < 0.06:
                s.log(s.ago(m), "warn", "ranker-inference", "ml", p, "ranker",
                      f"request {s.uid(p + str(m))[:8]} truncated candidates 1200 -> 1024")
            else:
                s.log(s.ago(m), "info", "ranker-inference", "ml", p, "ranker",
                      f"POST /v2/models/ranker/infer 200 batch={s.rng.randint(8, 64)} "
                      f"{s.rng.randint(9, 38)}ms model=ranker-v42")
            m -= 13 / 60 * s.rng.uniform(0.6, 1.4)
        if p == bad_pod:
            for k in range(6):
                s.log(s.ago(XID - 0.01 * k), "error", "ranker-inference", "ml", p, "ranker",
                      "POST /v2/models/ranker/infer 500: CUDA error: unspecified launch failure"
                      " (CUDA_ERROR_LAUNCH_FAILED); compile with TORCH_USE_CUDA_DSA to enable "
                      "device-side assertions", http__response__status_code=500)
            s.log(s.ago(XID - 0.08), "fatal", "ranker-inference", "ml", p, "ranker",
                  "RuntimeError: CUDA error: unknown error; CUDA context lost, exiting")
            last_txt: list[str] = []
            for st in bad_pod_starts[1:]:
                last_txt = boot(p, st, False)
            s.pod_log("ml", p, "ranker", last_txt, previous=True)

    app = App("ml", "ranker-inference", rs, [p for p, _, _ in pods], [], gpus, c["image"])
    bad_i = [p for p, _, _ in pods].index(bad_pod)

    def alive(m: float, i: int) -> bool:
        return m < ROLL - i
    s.pod_basics(app, cpu=lambda m, i: (0.9 if alive(m, i) else None) if i != bad_i or m > XID
                 else 0.01,
                 mem_mb=lambda m, i: (6100.0 if alive(m, i) else None) if i != bad_i
                 or m > XID else 300.0,
                 rps=lambda m, i: (None if not alive(m, i) else
                                   (0.0 if i == bad_i and m < XID else
                                    (40.0 if m < XID else 30.0))),
                 err=lambda m, i: None if not alive(m, i) else
                 (2.0 if i == bad_i and XID - 1 < m < XID else 0.0), svc="ranker-inference")
    for n in gpus:
        lab = {"Hostname": n, "gpu": "0", "modelName": "NVIDIA A10G",
               "UUID": gpu_uuid if n == BAD else "GPU-" + s.uid(n)}
        bad = n == BAD
        s.gauge("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", lab,
                lambda m, bad=bad: None if bad and m < XID else (71 if m < ROLL else 64))
        s.gauge("DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered.", lab,
                lambda m, bad=bad: None if bad and m < XID - 0.5 else (79 if bad and m < XID
                                                                       else 0))
        s.gauge("kube_node_status_allocatable", "Allocatable resources.",
                {"node": n, "resource": "nvidia_com_gpu", "unit": "integer"},
                lambda m, bad=bad: 0 if bad and m < XID else 1)

    # bystanders: a GPU batch pod cannot schedule, a search service restarted days ago
    bc: Obj = {"name": "embedder", "image": "registry.internal/ml/batch-embedder:0.7.2",
               "resources": {"requests": {"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": "1"},
                             "limits": {"memory": "16Gi", "nvidia.com/gpu": "1"}}}
    btpl = s.template("batch-embedder", [bc], extra_spec={
        "restartPolicy": "Never",
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]})
    s.add({"apiVersion": "batch/v1", "kind": "Job",
           "metadata": s.meta("batch-embedder-29131870", "ml", 30,
                              labels={"app": "batch-embedder"}),
           "spec": {"backoffLimit": 1, "template": btpl}, "status": {"active": 1,
                                                                     "startTime": s.t(30)}})
    fmsg = ("0/9 nodes are available: 4 Insufficient nvidia.com/gpu, 5 node(s) didn't match Pod's "
            "node affinity/selector. preemption: 0/9 nodes are available: 4 No preemption "
            "victims found for incoming pod, 5 Preemption is not helpful for scheduling.")
    bp, _ = s.pod("ml", "batch-embedder-29131870", "batch-embedder", btpl, None, created_min=30,
                  key="0", phase="Pending", ready=False, owner_kind="Job",
                  conditions=[{"type": "PodScheduled", "status": "False",
                               "reason": "Unschedulable", "message": fmsg,
                               "lastTransitionTime": s.t(30)}])
    s.event("ml", "Pod", bp, "FailedScheduling", fmsg, type_="Warning", count=7, first=30,
            last=2, component="default-scheduler")
    feat = s.app("ml", "feature-store", "registry.internal/ml/feature-store:5.1.3", general[:3],
                 revision=40, created_min=4 * 1440)
    s.chatter(feat, [("info", "GET /features/user/{id} 200 {ms}ms"),
                     ("warn", "feature 'ctr_7d' stale by {n}s for shard {rnd}")], every_s=25)
    s.pod_basics(feat, cpu=lambda m, i: 0.3, mem_mb=lambda m, i: 900.0, rps=lambda m, i: 30.0)
    o = s.find("Pod", feat.pods[2])
    cs2 = o["status"]["containerStatuses"][0]
    cs2["restartCount"] = 3
    cs2["lastState"] = {"terminated": {"exitCode": 137, "reason": "OOMKilled",
                                       "startedAt": s.t(4 * 1440), "finishedAt": s.t(3 * 1440)}}
    cs2["state"] = {"running": {"startedAt": s.t(3 * 1440 - 0.2)}}
    gw = s.app("search", "rank-gateway", "registry.internal/search/rank-gateway:1.4.0",
               general[2:5], revision=19, created_min=2 * 1440)
    for p in gw.pods:
        m = 60 - s.rng.uniform(0, 0.3)
        while m > 0:
            if m < XID and s.rng.random() < 0.22:
                s.log(s.ago(m), "error", "rank-gateway", "search", p, "rank-gateway",
                      "ranker-inference POST /v2/models/ranker/infer failed: 500 / connection "
                      "refused from 10.244.7.4:8000; falling back to popularity ranking")
            else:
                s.log(s.ago(m), "info", "rank-gateway", "search", p, "rank-gateway",
                      f"ranked {s.rng.randint(20, 200)} results in {s.rng.randint(20, 80)}ms")
            m -= 20 / 60 * s.rng.uniform(0.6, 1.4)
    s.pod_basics(gw, cpu=lambda m, i: 0.2, mem_mb=lambda m, i: 200.0, rps=lambda m, i: 25.0,
                 err=lambda m, i: 0.0 if m > XID else 1.1)
    _ = rs_hash

    s.scenario_yaml = {
        "id": SID,
        "title": "ranker-inference 5xx and latency after the ranker-v42 model release",
        "now": NOW,
        "report": "ranker-inference is throwing 500s and CUDA errors since ~02:40 and one pod "
                  "is crashlooping. We shipped the ranker-v42 model at 02:26 - I think v42 is "
                  "broken (bad weights / OOM on the GPU?). Should we roll back to v41?\n",
        "truth": {
            "category": "node_failure",
            "culprit": {"kind": "Node", "namespace": "", "name": BAD},
            "evidence": ["Xid", "GPU has fallen off the bus", "XidCriticalError: Xid=79",
                         "No CUDA GPUs are available"],
            "fix": f"The A10G in node {BAD} fell off the PCI bus (NVRM Xid 79) at 02:41; the "
                   "device plugin marked it unhealthy and the pod there can no longer "
                   "initialise CUDA. The other three pods serve ranker-v42 fine, so the model "
                   "is not the cause. Cordon and drain the node and replace it (or reboot it), "
                   "then let the pod reschedule.",
        },
    }
    s.write(root)


def iso_(s: Scenario, minutes: float) -> str:
    return s.t(minutes)
