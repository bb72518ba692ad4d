"""Fernhill Labs: recs-api 3.9.0 ships with a resources block copy-pasted from the GPU
embedding server (nvidia.com/gpu: 1). Its new pods stay Pending; the old ReplicaSet serves; the
rollout sits until its progress deadline and the report says "the deploy is stuck"."""

from __future__ import annotations

import random
from datetime import timedelta

from .kube import (
    at,
    container,
    deploy_status,
    deployment,
    event,
    healthy_deployment,
    http_probe,
    ms,
    namespace,
    node,
    pod,
    pod_hash,
    replicaset,
    running,
    suffix,
    template,
    ts,
)
from .write import Scenario, doc

NOW = at("2026-11-25T17:10:00Z")
ID = "recs-api-deploy-stuck"
NS = "recs"
DEPLOYED = NOW - timedelta(minutes=33)
OLD_IMAGE = "us-central1-docker.pkg.dev/fernhill/recs/recs-api:3.8.4"
NEW_IMAGE = "us-central1-docker.pkg.dev/fernhill/recs/recs-api:3.9.0"
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
MSG = (
    "0/11 nodes are available: 2 node(s) had untolerated taint {nvidia.com/gpu: present}, "
    "9 Insufficient nvidia.com/gpu. preemption: 0/11 nodes are available: 11 Preemption is not "
    "helpful for scheduling."
)


def _template(image: str, gpu: bool):
    requests = {"cpu": "1", "memory": "2Gi"}
    limits = {"memory": "3Gi"}
    if gpu:
        requests = {"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": "1"}
        limits = {"memory": "16Gi", "nvidia.com/gpu": "1"}
    return template(
        {"app": "recs-api", "team": "personalization"},
        [
            container(
                "recs-api",
                image,
                ports=[8000],
                requests=requests,
                limits=limits,
                env=[
                    {"name": "EMBEDDINGS_URL", "value": "http://embedding-server.recs:8000"},
                    {"name": "FEATURE_STORE", "value": "redis://feature-cache.recs:6379/0"},
                    {"name": "WORKERS", "value": "4"},
                ],
                readiness=http_probe("/health/ready", 8000, 5),
                liveness=http_probe("/health/live", 8000, 20, 15),
            )
        ],
        service_account="recs-api",
    )


def build() -> Scenario:
    rng = random.Random(7)
    s = Scenario(
        id=ID,
        title="recs-api 3.9.0 rollout stuck",
        now=ts(NOW),
        report=(
            "the recs-api 3.9.0 deploy has been stuck for half an hour, argo shows it Progressing "
            "forever and now Degraded. CI was green and the image is in the registry. can someone "
            "kick it or tell me what's wrong? old version still serves so no customer impact yet\n"
        ),
        truth={
            "category": "unschedulable",
            "culprit": {"kind": "Deployment", "namespace": NS, "name": "recs-api"},
            "evidence": ["Insufficient nvidia.com/gpu", "nvidia.com/gpu: 1", "Pending"],
            "fix": (
                "Remove the nvidia.com/gpu request/limit (and the 4 CPU / 16Gi block) that "
                "3.9.0 copied from embedding-server's manifest; recs-api needs no GPU."
            ),
        },
    )
    s.objects += [namespace(n, NOW - timedelta(days=d)) for n, d in ((NS, 500), ("ml-batch", 300))]
    cpu_nodes = [
        (f"gke-fernhill-prod-default-4f2a-{suffix('n' + str(k), 4)}", f"10.10.0.{30 + k}")
        for k in range(9)
    ]
    gpu_nodes = [
        (f"gke-fernhill-prod-gpu-l4-9b1c-{suffix('g' + str(k), 4)}", f"10.10.1.{10 + k}")
        for k in range(2)
    ]
    for k, (n, ip) in enumerate(cpu_nodes):
        s.objects.append(
            node(
                n,
                NOW - timedelta(days=8 + k % 3),
                address=ip,
                cpu="16",
                memory="64Gi",
                kubelet="v1.30.6-gke.1125000",
                image="Container-Optimized OS from Google",
                labels={"cloud.google.com/gke-nodepool": "default"},
                heartbeat=NOW - timedelta(seconds=5 + k),
            )
        )
    for k, (n, ip) in enumerate(gpu_nodes):
        s.objects.append(
            node(
                n,
                NOW - timedelta(days=15),
                address=ip,
                cpu="8",
                memory="32Gi",
                kubelet="v1.30.6-gke.1125000",
                image="Container-Optimized OS from Google",
                extra_capacity={"nvidia.com/gpu": "1"},
                taints=[GPU_TAINT],
                labels={
                    "cloud.google.com/gke-nodepool": "gpu-l4",
                    "cloud.google.com/gke-accelerator": "nvidia-l4",
                },
                heartbeat=NOW - timedelta(seconds=9 + k),
            )
        )
    new_t, old_t = _template(NEW_IMAGE, True), _template(OLD_IMAGE, False)
    d = deployment(
        NS,
        "recs-api",
        NOW - timedelta(days=480),
        new_t,
        replicas=4,
        revision=58,
        updated=DEPLOYED,
        manager="argocd-controller",
        strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 1}},
        status=deploy_status(
            5,
            3,
            2,
            3,
            since=DEPLOYED + timedelta(minutes=10, seconds=2),
            progressing=(
                "False",
                "ProgressDeadlineExceeded",
                f'ReplicaSet "recs-api-{pod_hash("recs58")}" has timed out progressing.',
            ),
            generation=60,
            desired=4,
            max_unavailable=1,
        ),
    )
    h_new, h_old = pod_hash("recs58"), pod_hash("recs57")
    rs_new = replicaset(d, h_new, DEPLOYED, 58, replicas=2, ready=0, tmpl=new_t)
    rs_old = replicaset(
        d, h_old, NOW - timedelta(days=4, hours=6), 57, replicas=3, ready=3, tmpl=old_t
    )
    s.objects += [d, rs_new, rs_old]
    old_pods = []
    for k in range(3):
        started = NOW - timedelta(days=4, hours=6) + timedelta(seconds=30 * k)
        pname = f"recs-api-{h_old}-{suffix(f'ro{k}')}"
        s.objects.append(
            pod(
                rs_old,
                pname,
                started,
                node_name=cpu_nodes[k * 2][0],
                ip=f"10.20.{k}.{44 + k}",
                host_ip=cpu_nodes[k * 2][1],
                statuses=[running("recs-api", OLD_IMAGE, started)],
            )
        )
        old_pods.append(pname)
    for k in range(2):
        created = DEPLOYED + timedelta(seconds=1 + k)
        pname = f"recs-api-{h_new}-{suffix(f'rn{k}')}"
        s.objects.append(
            pod(
                rs_new,
                pname,
                created,
                node_name=None,
                ip=None,
                statuses=[],
                phase="Pending",
                ready=False,
                scheduled=False,
                unschedulable_message=MSG,
            )
        )
        s.objects += [
            event(
                NS,
                "Pod",
                pname,
                "FailedScheduling",
                MSG,
                first=created + timedelta(seconds=1),
                last=NOW - timedelta(minutes=1, seconds=20 + 30 * k),
                count=14 - k,
                type_="Warning",
                source="default-scheduler",
            ),
            event(
                NS,
                "Pod",
                pname,
                "NotTriggerScaleUp",
                "pod didn't trigger scale-up: 1 max node group size reached, 1 Insufficient nvidia.com/gpu",
                first=created + timedelta(seconds=12),
                last=NOW - timedelta(minutes=2 + k),
                count=180 - 3 * k,
                source="cluster-autoscaler",
            ),
            event(
                NS,
                "ReplicaSet",
                f"recs-api-{h_new}",
                "SuccessfulCreate",
                f"Created pod: {pname}",
                first=created,
                last=created,
                source="replicaset-controller",
                api="apps/v1",
            ),
        ]
    s.objects += [
        event(
            NS,
            "Deployment",
            "recs-api",
            "ScalingReplicaSet",
            f"Scaled up replica set recs-api-{h_new} to 1",
            first=DEPLOYED,
            last=DEPLOYED,
            source="deployment-controller",
            api="apps/v1",
        ),
        event(
            NS,
            "Deployment",
            "recs-api",
            "ScalingReplicaSet",
            f"Scaled down replica set recs-api-{h_old} to 3 from 4",
            first=DEPLOYED,
            last=DEPLOYED,
            source="deployment-controller",
            api="apps/v1",
        ),
        event(
            NS,
            "Deployment",
            "recs-api",
            "ScalingReplicaSet",
            f"Scaled up replica set recs-api-{h_new} to 2 from 1",
            first=DEPLOYED + timedelta(seconds=1),
            last=DEPLOYED + timedelta(seconds=1),
            source="deployment-controller",
            api="apps/v1",
        ),
    ]

    gpu_tol = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    objs, emb = healthy_deployment(
        NS,
        "embedding-server",
        "us-central1-docker.pkg.dev/fernhill/recs/embedding-server:1.12.0",
        replicas=2,
        created=NOW - timedelta(days=200),
        rolled=NOW - timedelta(days=6),
        revision=19,
        nodes=gpu_nodes,
        ip_prefix="10.20.8",
        port=8000,
        requests={"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": "1"},
        limits={"memory": "16Gi", "nvidia.com/gpu": "1"},
        tolerations=gpu_tol,
        node_selector={"cloud.google.com/gke-accelerator": "nvidia-l4"},
    )
    s.objects += objs
    objs, _cache = healthy_deployment(
        NS,
        "feature-cache",
        "docker.io/library/redis:7.2.6",
        replicas=1,
        created=NOW - timedelta(days=480),
        rolled=NOW - timedelta(days=6, hours=20),
        revision=5,
        nodes=cpu_nodes[3:],
        ip_prefix="10.20.5",
        port=6379,
    )
    s.objects += objs
    objs, etl = healthy_deployment(
        "ml-batch",
        "feature-etl",
        "us-central1-docker.pkg.dev/fernhill/ml/feature-etl:0.33.1",
        replicas=2,
        created=NOW - timedelta(days=250),
        rolled=NOW - timedelta(hours=3),
        revision=41,
        nodes=cpu_nodes[5:],
        ip_prefix="10.20.6",
        requests={"cpu": "2", "memory": "6Gi"},
        limits={"memory": "8Gi"},
    )
    s.objects += objs
    s.objects.append(
        event(
            "ml-batch",
            "Pod",
            etl[1],
            "Unhealthy",
            'Readiness probe failed: Get "http://10.20.6.27:8080/healthz": context deadline exceeded',
            first=NOW - timedelta(minutes=48),
            last=NOW - timedelta(minutes=44),
            count=3,
            type_="Warning",
            host=cpu_nodes[6][0],
        )
    )

    t = NOW - timedelta(minutes=80)
    k = 0
    while t < NOW:
        p = old_pods[k % 3]
        s.docs.append(
            doc(
                ms(t),
                f'INFO:     10.20.{rng.randint(0, 9)}.{rng.randint(2, 250)}:0 - "POST /v1/recommend '
                f'HTTP/1.1" 200',
                "info",
                "recs-api",
                NS,
                p,
                "recs-api",
                http__response__status_code=200,
                event__duration=int(rng.uniform(18, 70) * 1e6),
            )
        )
        if k % 5 == 0:
            s.docs.append(
                doc(
                    ms(t + timedelta(seconds=2)),
                    f"embedded batch of {rng.randint(32, 128)} in {rng.randint(9, 25)}ms",
                    "info",
                    "embedding-server",
                    NS,
                    emb[k % 2],
                    "embedding-server",
                )
            )
        if k % 29 == 0:
            s.docs.append(
                doc(
                    ms(t + timedelta(seconds=1)),
                    "feature lookup slow: 240ms for user vector (cache miss)",
                    "warning",
                    "recs-api",
                    NS,
                    old_pods[(k + 1) % 3],
                    "recs-api",
                )
            )
        t += timedelta(seconds=15)
        k += 1
    for p in old_pods:
        s.log(
            NS,
            p,
            "recs-api",
            [
                f"INFO:     10.20.{rng.randint(0, 9)}.{rng.randint(2, 250)}:{rng.randint(30000, 60000)} - "
                '"POST /v1/recommend HTTP/1.1" 200 OK'
                for _ in range(30)
            ],
        )
    return s
