"""unschedulable: new pods request more ephemeral-storage than any node has allocatable."""

from __future__ import annotations

from pathlib import Path

from . import _kit as k

SID = "thumbnailer-rollout-pending"
NOW = "2026-08-03T11:25:00Z"
NODES = [
    "ip-10-4-19-73.ec2.internal",
    "ip-10-4-36-150.ec2.internal",
    "ip-10-4-52-9.ec2.internal",
    "ip-10-4-58-211.ec2.internal",
    "ip-10-4-71-34.ec2.internal",
]
GPU = "ip-10-4-80-120.ec2.internal"
IMG_OLD = "registry.internal/media/thumbnailer:4.9.2"
IMG_NEW = "registry.internal/media/thumbnailer:4.10.0"
ROLLOUT = 38.0
TRAINER = 55.0
MSG_T = ("0/6 nodes are available: 1 node(s) had untolerated taint {nvidia.com/gpu: present}, "
         "5 Insufficient ephemeral-storage. preemption: 0/6 nodes are available: "
         "1 Preemption is not helpful for scheduling, 5 No preemption victims found for "
         "incoming pod.")
MSG_ML = ("0/6 nodes are available: 6 Insufficient cpu. preemption: 0/6 nodes are available: "
          "6 No preemption victims found for incoming pod.")


def build(root: Path) -> None:
    sc = k.Scenario(SID, NOW, seed=5305)
    created = "2025-04-14T08:00:00Z"
    sc.add(*(k.namespace(n, created) for n in ("default", "media", "batch", "kube-system",
                                                "monitoring")))
    k.add_nodes(sc, NODES, "2026-07-30T05:00:00Z")
    gpu = k.add_nodes(sc, [GPU], "2026-07-30T05:20:00Z", cpu="15890m", memory="63408460Ki",
                      taints=[{"key": "nvidia.com/gpu", "value": "present",
                               "effect": "NoSchedule"}])[0]
    gpu["metadata"]["labels"]["node.kubernetes.io/instance-type"] = "g5.4xlarge"
    gpu["status"]["allocatable"]["nvidia.com/gpu"] = "1"
    gpu["status"]["capacity"]["nvidia.com/gpu"] = "1"

    # ------------------------------------------------------------- bystanders
    api = k.AppSpec("media", "media-api", "registry.internal/media/media-api:2.14.3", 3, NODES,
                    revision=44, rps=35, routes=("/assets", "/assets/{id}", "/uploads"),
                    mem_lim="512Mi", mem_mb=280)
    k.add_app(sc, api)
    tr = k.AppSpec("media", "transcoder", "registry.internal/media/transcoder:1.8.0", 2, NODES[2:],
                   revision=12, kind="worker", port=None, cpu_req="2", mem_req="4Gi",
                   mem_lim="6Gi", mem_mb=3100, log_every=2.5,
                   worker_lines=("transcoded asset {id} to hls 1080p in {ms}ms",
                                 "transcoded asset {id} to hls 720p in {ms}ms"))
    t = k.add_app(sc, tr)
    for m in sc.spread(60, 0, 5):
        sc.log(m, sc.rng.choice(t.refs), "warn",
               "ffmpeg: [aac @ 0x55d0c2] Too many bits 8832 > 6144 per frame requested, "
               "clamping to max")
    dns = k.AppSpec("kube-system", "coredns", "registry.k8s.io/coredns/coredns:v1.11.3", 2,
                    NODES[:2], revision=1, port=53, readiness=None, kind="none", service=False)
    k.add_app(sc, dns)
    ca = k.AppSpec("kube-system", "cluster-autoscaler",
                   "registry.k8s.io/autoscaling/cluster-autoscaler:v1.30.2", 1, NODES[:1],
                   revision=5, kind="worker", port=None, log_every=1.0,
                   worker_lines=("Starting main loop",
                                 "No unschedulable pods that could trigger scale-up",
                                 "Scale down status: lastScaleUpTime=2026-08-03 05:02:11 "
                                 "lastScaleDownDeleteTime=2026-08-02 22:40:17"))
    ca_refs = k.add_app(sc, ca)

    # ------------------------------------------------------------- red herring: ml-trainer
    job_uid = sc.uid()
    sc.add({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "ml-trainer-20260803", "namespace": "batch", "uid": job_uid,
                     "creationTimestamp": sc.t(TRAINER),
                     "labels": {"app.kubernetes.io/name": "ml-trainer"}},
        "spec": {"parallelism": 1, "completions": 1, "backoffLimit": 2,
                 "template": {"metadata": {"labels": {"app.kubernetes.io/name": "ml-trainer"}},
                              "spec": {"restartPolicy": "Never", "containers": [k.container(
                                  "trainer", "registry.internal/ml/trainer:0.31.0", port=None,
                                  cpu_req="32", mem_req="96Gi", mem_lim="96Gi")],
                                  "tolerations": [{"key": "nvidia.com/gpu",
                                                   "operator": "Exists",
                                                   "effect": "NoSchedule"}]}}},
        "status": {"active": 1, "startTime": sc.t(TRAINER), "ready": 0},
    })
    mlp = f"ml-trainer-20260803-{sc.hash(5)}"
    sc.add({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": mlp, "namespace": "batch", "uid": sc.uid(),
                     "labels": {"app.kubernetes.io/name": "ml-trainer",
                                "batch.kubernetes.io/job-name": "ml-trainer-20260803"},
                     "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job",
                                          "name": "ml-trainer-20260803", "uid": job_uid,
                                          "controller": True, "blockOwnerDeletion": True}],
                     "creationTimestamp": sc.t(TRAINER)},
        "spec": {"restartPolicy": "Never", "containers": [k.container(
            "trainer", "registry.internal/ml/trainer:0.31.0", port=None, cpu_req="32",
            mem_req="96Gi", mem_lim="96Gi")]},
        "status": {"phase": "Pending", "qosClass": "Burstable", "conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
             "message": MSG_ML, "lastTransitionTime": sc.t(TRAINER)}]},
    })
    sc.event("batch", "Pod", mlp, "FailedScheduling", MSG_ML, type_="Warning", count=19,
             first=TRAINER, last=2.0, component="default-scheduler")
    sc.event("batch", "Pod", mlp, "NotTriggerScaleUp",
             "pod didn't trigger scale-up: 2 Insufficient cpu", type_="Normal", count=33,
             first=TRAINER - 0.2, last=0.8, component="cluster-autoscaler")

    # ------------------------------------------------------------- thumbnailer
    spec = k.AppSpec("media", "thumbnailer", IMG_NEW, 4, NODES, port=None, kind="worker",
                     cpu_req="500m", mem_req="1Gi", mem_lim="2Gi")

    def th(img: str, eph: str) -> dict[str, object]:
        c = k.container("thumbnailer", img, port=None, cpu_req="500m", mem_req="1Gi",
                        mem_lim="2Gi", eph_req=eph,
                        env=[{"name": "SCRATCH_DIR", "value": "/scratch"},
                             {"name": "QUEUE_URL", "value": "amqp://rabbitmq.media.svc:5672"}])
        c["resources"]["limits"]["ephemeral-storage"] = eph
        c["volumeMounts"] = [{"name": "scratch", "mountPath": "/scratch"}]
        return c

    old_c, new_c = th(IMG_OLD, "10Gi"), th(IMG_NEW, "100Gi")

    def pending(created: str) -> k.NewPod:
        return k.NewPod(None, "Pending", [], False, [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
             "message": MSG_T, "lastTransitionTime": created}])

    conds = [
        k.cond("Available", "True", "MinimumReplicasAvailable",
               "Deployment has minimum availability.", sc.t(60 * 24 * 3)),
        k.cond("Progressing", "False", "ProgressDeadlineExceeded", "x", sc.t(ROLLOUT - 10.05)),
    ]
    ro = k.add_rollout(sc, spec, [old_c], [new_c], old_rev=17, new_rev=18, rollout_min=ROLLOUT,
                       old_count=3, new_pods=[pending, pending], dep_conditions=conds,
                       change_cause="values: scratch volume for 8K sources (MEDIA-771)",
                       old_rs_age_min=60 * 24 * 3 + 10)
    for rs in (ro.deployment, ro.old_rs, ro.new_rs):
        rs["spec"]["template"]["spec"]["volumes"] = [{"name": "scratch", "emptyDir": {}}]
    for p in ro.new_pods:
        p["spec"]["volumes"] = [{"name": "scratch", "emptyDir": {}}]
    new_rs = ro.new_rs["metadata"]["name"]
    old_rs = ro.old_rs["metadata"]["name"]
    ro.deployment["status"]["conditions"][1]["message"] = (
        f'ReplicaSet "{new_rs}" has timed out progressing.')
    sc.event("media", "Deployment", "thumbnailer", "ScalingReplicaSet",
             f"Scaled up replica set {new_rs} to 1", first=ROLLOUT,
             component="deployment-controller", api="apps/v1")
    sc.event("media", "Deployment", "thumbnailer", "ScalingReplicaSet",
             f"Scaled down replica set {old_rs} to 3 from 4", first=ROLLOUT - 0.02,
             component="deployment-controller", api="apps/v1")
    sc.event("media", "Deployment", "thumbnailer", "ScalingReplicaSet",
             f"Scaled up replica set {new_rs} to 2 from 1", first=ROLLOUT - 0.3,
             component="deployment-controller", api="apps/v1")
    for i, p in enumerate(ro.new_pods):
        pn = p["metadata"]["name"]
        sc.event("media", "Pod", pn, "FailedScheduling", MSG_T, type_="Warning",
                 count=12 - i, first=ROLLOUT - i * 0.3, last=1.5 + i, component="default-scheduler")
        sc.event("media", "Pod", pn, "NotTriggerScaleUp",
                 "pod didn't trigger scale-up: 2 Insufficient ephemeral-storage",
                 count=22 - i, first=ROLLOUT - i * 0.3 - 0.2, last=0.6 + i * 0.5,
                 component="cluster-autoscaler")
        lab = {"namespace": "media", "pod": pn, "phase": "Pending"}
        sc.gauge("kube_pod_status_phase", "The pods current phase.", lab,
                 lambda m, i=i: None if m > ROLLOUT - i * 0.3 else 1.0)
        sc.gauge("kube_pod_container_resource_requests",
                 "The number of requested request resource by a container.",
                 {"namespace": "media", "pod": pn, "container": "thumbnailer",
                  "resource": "ephemeral_storage", "unit": "byte"},
                 lambda m, i=i: None if m > ROLLOUT - i * 0.3 else float(100 * 1024 ** 3))
    for m in sc.spread(ROLLOUT - 0.5, 0, 1.1):
        sc.log(m, ca_refs.refs[0], "info",
               f"Pod media/{ro.new_pods[0]['metadata']['name']} can't be scheduled on "
               f"eks-media-general-{sc.rng.choice(('a1', 'b2'))}, predicate checking error: "
               "Insufficient ephemeral-storage; predicateName=NodeResourcesFit; "
               "reasons: Insufficient ephemeral-storage")
    for m in sc.spread(TRAINER - 0.5, 0, 1.6):
        sc.log(m, ca_refs.refs[0], "info",
               f"Pod batch/{mlp} can't be scheduled on eks-gpu-{sc.rng.choice(('a1', 'b1'))}, "
               "predicate checking error: Insufficient cpu; predicateName=NodeResourcesFit")
    lab_p = {"namespace": "batch", "pod": mlp, "phase": "Pending"}
    sc.gauge("kube_pod_status_phase", "The pods current phase.", lab_p,
             lambda m: None if m > TRAINER else 1.0)
    for n in [*NODES, GPU]:
        sc.gauge("kube_node_status_allocatable",
                 "The allocatable for different resources of a node that are available for "
                 "scheduling.", {"node": n, "resource": "ephemeral_storage", "unit": "byte"},
                 lambda m: 95551679124.0)
        cpu = 15.89 if n == GPU else 3.92
        sc.gauge("kube_node_status_allocatable",
                 "The allocatable for different resources of a node that are available for "
                 "scheduling.", {"node": n, "resource": "cpu", "unit": "core"},
                 lambda m, c=cpu: c)
    for r in ro.old_refs:
        for m in sc.spread(60, 0, 0.8):
            sc.log(m, r, "info", f"thumbnails for asset ast_{sc.hash(10)}: 6 sizes in "
                                 f"{sc.rng.randint(300, 2400)}ms (scratch {sc.rng.randint(1, 7)}"
                                 ".2GiB)")
        k.healthy_metrics(sc, spec, r)
    sc.gauge("rabbitmq_queue_messages_ready", "Messages ready to be delivered to consumers.",
             {"namespace": "media", "queue": "thumbnails"},
             lambda m: float(int(40 + max(0.0, ROLLOUT - m) * 3.1 + sc.rng.randint(0, 15))))
    k.deployment_available(sc, "media", "thumbnailer", lambda m: 4.0 if m > ROLLOUT else 3.0)
    sc.gauge("kube_deployment_status_replicas_unavailable",
             "The number of unavailable replicas per deployment.",
             {"namespace": "media", "deployment": "thumbnailer"},
             lambda m: 0.0 if m > ROLLOUT else 1.0)
    sc.write(root, {
        "id": SID,
        "title": "thumbnailer rollout stuck with Pending pods",
        "now": NOW,
        "report": (
            "thumbnailer 4.10 rollout in media is stuck, 2 new pods Pending for half an hour "
            "and the thumbnail queue is growing. I think we're out of CPU again because of the "
            "ml-trainer job in batch (it's Pending too). can we kill the trainer or add nodes?"
        ),
        "truth": {
            "category": "unschedulable",
            "culprit": {"kind": "Deployment", "namespace": "media", "name": "thumbnailer"},
            "evidence": ["Insufficient ephemeral-storage", "ephemeral-storage: 100Gi"],
            "fix": (
                "Lower thumbnailer's ephemeral-storage request (100Gi in the new values, 10Gi "
                "before) below a node's allocatable (~89Gi), e.g. back to 10Gi or a sized "
                "scratch volume; adding nodes of the same size or killing ml-trainer will not "
                "help."
            ),
        },
    })
