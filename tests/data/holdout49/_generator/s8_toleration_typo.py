"""8. unschedulable: a misspelled toleration key on a workload pinned to the tainted GPU pool."""

from __future__ import annotations

import random
from datetime import timedelta

from ._kit import (
    Container,
    Scenario,
    app,
    cond,
    cumulate,
    deploy_status,
    env,
    event,
    http_probe,
    iso,
    meta,
    namespace,
    node,
    parse,
    pod,
    replicaset,
    resources,
    sport,
    template,
    terminated,
    times,
    token,
    ts_dt,
)

SID = "reranker-toleration-typo"


def build() -> Scenario:
    rng = random.Random(4908)
    now = parse("2026-12-16T10:15:00Z")
    sc = Scenario(
        id=SID,
        title="reranker pods Pending for half an hour",
        now=now,
        report=(
            "the new reranker service has been Pending for ~30 min, nothing gets scheduled. "
            "pretty sure we're out of GPUs again (embedding-server grabbed them), can someone "
            "bump the gpu-inference node group?\n"
        ),
        truth={
            "category": "unschedulable",
            "culprit": {"kind": "Deployment", "namespace": "ml", "name": "reranker"},
            "evidence": [
                "had untolerated taint {pool.tallyfox.io/dedicated: gpu-inference}",
                "pool.tallyfox.io/dedicted",
                "didn't match Pod's node affinity/selector",
            ],
            "fix": (
                "Fix the toleration key in reranker's pod template to "
                "pool.tallyfox.io/dedicated (it says pool.tallyfox.io/dedicted); a GPU node is "
                "free, so no new nodes are needed."
            ),
        },
    )
    gen_nodes, gpu_nodes = [], []
    for i, o in enumerate([11, 47, 83, 129, 166, 201]):
        ip = f"10.24.{8 + i % 3}.{o}"
        n = f"ip-{ip.replace('.', '-')}.us-west-2.compute.internal"
        sc.add(
            node(
                n,
                now - timedelta(days=8 + i),
                now,
                ip=ip,
                zone=f"us-west-2{'abc'[i % 3]}",
                cpu="8",
                memory_ki=32386544,
                instance_type="m6i.2xlarge",
                labels={"node-pool": "general", "eks.amazonaws.com/nodegroup": "general-v3"},
            )
        )
        gen_nodes.append((n, ip))
    taint = {"effect": "NoSchedule", "key": "pool.tallyfox.io/dedicated", "value": "gpu-inference"}
    for i, o in enumerate([34, 90, 152]):
        ip = f"10.24.{12 + i}.{o}"
        n = f"ip-{ip.replace('.', '-')}.us-west-2.compute.internal"
        sc.add(
            node(
                n,
                now - timedelta(days=6 + i),
                now,
                ip=ip,
                zone=f"us-west-2{'abc'[i % 3]}",
                cpu="8",
                memory_ki=32086544,
                instance_type="g5.2xlarge",
                taints=[taint],
                labels={
                    "node-pool": "gpu-inference",
                    "eks.amazonaws.com/nodegroup": "gpu-inference-v2",
                    "nvidia.com/gpu.present": "true",
                    "nvidia.com/gpu.product": "NVIDIA-A10G",
                },
                extra_capacity={"nvidia.com/gpu": "1"},
            )
        )
        gpu_nodes.append((n, ip))
    for ns in ("ml", "search", "kube-system"):
        sc.add(namespace(ns, now - timedelta(days=300)))

    good_tol = [
        {
            "effect": "NoSchedule",
            "key": "pool.tallyfox.io/dedicated",
            "operator": "Equal",
            "value": "gpu-inference",
        }
    ]
    typo_tol = [
        {
            "effect": "NoSchedule",
            "key": "pool.tallyfox.io/dedicted",
            "operator": "Equal",
            "value": "gpu-inference",
        },
        {"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"},
    ]
    sel = {"node-pool": "gpu-inference"}
    # embedding-server: on two GPU nodes, correct toleration
    es = Container(
        "embedding-server",
        "ghcr.io/tallyfox/embedding-server:0.18.2",
        ports=[{"containerPort": 8000, "name": "http", "protocol": "TCP"}],
        env=env(MODEL_NAME="bge-large-en-v1.5", MAX_BATCH_TOKENS="16384"),
        resources=resources("2", "12Gi", None, "14Gi", extra={"nvidia.com/gpu": "1"}),
        readiness=http_probe("/health", "http", delay=60),
        liveness=http_probe("/health", "http", delay=120, period=30),
    )
    esa = app(
        rng,
        "embedding-server",
        "ml",
        [es],
        created=now - timedelta(days=120),
        rs_created=now - timedelta(days=5, hours=8),
        replicas=2,
        nodes=gpu_nodes[:2],
        pod_cidr="10.24.20",
        revision=11,
        svc_ports=[sport(80, "http")],
        tmpl_kw={"node_selector": sel, "tolerations": good_tol},
        restarts={
            1: (
                1,
                terminated(
                    "Error", 1, now - timedelta(days=5, hours=8), now - timedelta(days=2, hours=17)
                ),
            )
        },
    )
    sc.add(*esa.objects)

    # reranker: new Deployment, toleration key misspelled
    created = now - timedelta(minutes=33)
    rr = Container(
        "reranker",
        "ghcr.io/tallyfox/reranker:0.3.0",
        ports=[{"containerPort": 8000, "name": "http", "protocol": "TCP"}],
        env=env(MODEL_NAME="bge-reranker-v2-m3", MAX_BATCH="32"),
        resources=resources("2", "10Gi", None, "12Gi", extra={"nvidia.com/gpu": "1"}),
        readiness=http_probe("/health", "http", delay=60),
    )
    rt = template(
        {"app": "reranker", "team": "search-relevance"},
        [rr],
        node_selector=sel,
        tolerations=typo_tol,
    )
    from ._kit import deployment

    h = token(rng, 10)
    rs_name = f"reranker-{h}"
    d = deployment(
        "reranker",
        "ml",
        created,
        rt,
        replicas=1,
        revision=1,
        labels={"app": "reranker", "team": "search-relevance"},
        status=deploy_status(
            1,
            0,
            1,
            available=0,
            gen=1,
            unavailable=1,
            conditions=[
                cond(
                    "Available",
                    "False",
                    "MinimumReplicasUnavailable",
                    "Deployment does not have minimum availability.",
                    created,
                ),
                cond(
                    "Progressing",
                    "False",
                    "ProgressDeadlineExceeded",
                    f'ReplicaSet "{rs_name}" has timed out progressing.',
                    created + timedelta(seconds=601),
                    created + timedelta(seconds=601),
                ),
            ],
        ),
    )
    d["metadata"]["generation"] = 1
    rs = replicaset(d, h, created, rt, replicas=1, ready=0, revision=1)
    msg = (
        "0/9 nodes are available: 3 node(s) had untolerated taint {pool.tallyfox.io/dedicated: "
        "gpu-inference}, 6 node(s) didn't match Pod's node affinity/selector. preemption: 0/9 "
        "nodes are available: 9 Preemption is not helpful for scheduling."
    )
    pn = f"{rs_name}-{token(rng, 5)}"
    p = pod(
        pn,
        "ml",
        "ReplicaSet",
        rs_name,
        rs["spec"]["template"],
        created,
        node_name=None,
        pod_ip=None,
        host_ip=None,
        statuses=None,
        phase="Pending",
        conditions=[
            {
                "lastProbeTime": None,
                "lastTransitionTime": iso(created),
                "message": msg,
                "reason": "Unschedulable",
                "status": "False",
                "type": "PodScheduled",
            }
        ],
    )
    p["status"]["qosClass"] = "Burstable"
    sc.add(d, rs, p)
    sc.add(
        event(
            "ml",
            "Deployment",
            "reranker",
            "ScalingReplicaSet",
            f"Scaled up replica set {rs_name} to 1",
            created,
            created,
            component="deployment-controller",
            api_version="apps/v1",
        ),
        event(
            "ml",
            "ReplicaSet",
            rs_name,
            "SuccessfulCreate",
            f"Created pod: {pn}",
            created,
            created,
            component="replicaset-controller",
            api_version="apps/v1",
        ),
        event(
            "ml",
            "Pod",
            pn,
            "FailedScheduling",
            msg,
            created,
            now - timedelta(minutes=3),
            count=11,
            type_="Warning",
            component="default-scheduler",
        ),
    )

    # kube-system: nvidia device plugin on the GPU nodes (old restart, decoy), cluster-autoscaler
    dp = Container(
        "nvidia-device-plugin-ctr", "nvcr.io/nvidia/k8s-device-plugin:v0.17.0", resources={}
    )
    dpt = template(
        {"app.kubernetes.io/name": "nvidia-device-plugin"},
        [dp],
        node_selector={"nvidia.com/gpu.present": "true"},
        tolerations=[
            {"key": "pool.tallyfox.io/dedicated", "operator": "Exists", "effect": "NoSchedule"},
            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        ],
    )
    dpt["spec"]["priorityClassName"] = "system-node-critical"
    sc.add(
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": meta(
                "nvidia-device-plugin",
                "kube-system",
                now - timedelta(days=300),
                {"app.kubernetes.io/name": "nvidia-device-plugin"},
                {"deprecated.daemonset.template.generation": "4"},
            ),
            "spec": {
                "selector": {"matchLabels": {"app.kubernetes.io/name": "nvidia-device-plugin"}},
                "template": dpt,
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
            },
            "status": {
                "currentNumberScheduled": 3,
                "desiredNumberScheduled": 3,
                "numberAvailable": 3,
                "numberMisscheduled": 0,
                "numberReady": 3,
                "observedGeneration": 4,
                "updatedNumberScheduled": 3,
            },
        }
    )
    from ._kit import cstatus

    for i, (n, ip) in enumerate(gpu_nodes):
        pc = now - timedelta(days=6 - i, hours=1)
        last = terminated("Error", 2, pc, pc + timedelta(minutes=1)) if i == 2 else None
        started = pc + timedelta(minutes=1, seconds=2) if last else pc + timedelta(seconds=3)
        sc.add(
            pod(
                f"nvidia-device-plugin-{token(rng, 5)}",
                "kube-system",
                "DaemonSet",
                "nvidia-device-plugin",
                dpt,
                pc,
                node_name=n,
                pod_ip=f"10.24.21.{rng.randint(10, 250)}",
                host_ip=ip,
                statuses=[
                    cstatus(
                        dp,
                        ready=True,
                        state={"running": {"startedAt": iso(started)}},
                        restarts=1 if last else 0,
                        last=last,
                        rng=rng,
                    )
                ],
            )
        )
    ca = Container(
        "cluster-autoscaler",
        "registry.k8s.io/autoscaling/cluster-autoscaler:v1.30.2",
        args=[
            "--cloud-provider=aws",
            "--node-group-auto-discovery=asg:tag=k8s.io/cluster-autoscaler/enabled",
            "--balance-similar-node-groups",
            "--skip-nodes-with-system-pods=false",
        ],
        resources=resources("100m", "600Mi", None, "600Mi"),
    )
    caa = app(
        rng,
        "cluster-autoscaler",
        "kube-system",
        [ca],
        created=now - timedelta(days=300),
        rs_created=now - timedelta(days=4),
        replicas=1,
        nodes=gen_nodes[:1],
        pod_cidr="10.24.22",
        revision=7,
    )
    sc.add(*caa.objects)
    sc.add(
        event(
            "ml",
            "Pod",
            pn,
            "NotTriggerScaleUp",
            "pod didn't trigger scale-up: 1 node(s) had untolerated taint "
            "{pool.tallyfox.io/dedicated: gpu-inference}, 1 node(s) didn't match Pod's node "
            "affinity/selector",
            created + timedelta(seconds=10),
            now - timedelta(minutes=1),
            count=31,
            component="cluster-autoscaler",
        )
    )
    # search: healthy neighbours using the reranker later
    sa = Container(
        "search-gateway",
        "ghcr.io/tallyfox/search-gateway:2.9.4",
        ports=[{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
        env=env(
            EMBEDDINGS_URL="http://embedding-server.ml.svc.cluster.local", RERANKER_ENABLED="false"
        ),
        resources=resources("250m", "512Mi", None, "1Gi"),
        readiness=http_probe("/healthz", "http"),
    )
    saa = app(
        rng,
        "search-gateway",
        "search",
        [sa],
        created=now - timedelta(days=200),
        rs_created=now - timedelta(days=1, hours=5),
        replicas=3,
        nodes=gen_nodes,
        pod_cidr="10.24.23",
        revision=44,
        svc_ports=[sport(80, "http")],
    )
    sc.add(*saa.objects)

    # ---------------------------------------------------------------- metrics
    ts = times(now, 2)
    m = sc.metrics
    for i, (n, ip) in enumerate(gpu_nodes):
        lab = {"Hostname": n, "gpu": "0", "modelName": "NVIDIA A10G", "instance": f"{ip}:9400"}
        m.gauge(
            "DCGM_FI_DEV_GPU_UTIL",
            "GPU utilization (in %).",
            lab,
            [(t, (rng.randint(38, 71) if i < 2 else 0)) for t in ts],
        )
        m.gauge(
            "DCGM_FI_DEV_FB_USED",
            "Framebuffer memory used (in MiB).",
            lab,
            [(t, (17210 + rng.randint(-300, 300) if i < 2 else 0)) for t in ts[::2]],
        )
    for n, _ in gpu_nodes:
        m.gauge(
            "kube_node_status_allocatable",
            "The allocatable for different resources of a node that are available for scheduling.",
            {"node": n, "resource": "nvidia_com_gpu", "unit": "integer"},
            [(t, 1) for t in ts[::5]],
        )
    m.gauge(
        "kube_pod_status_phase",
        "The pods current phase.",
        {"namespace": "ml", "pod": pn, "phase": "Pending"},
        [(t, 1) for t in ts if t >= int(created.timestamp()) + 60],
    )
    for q in esa.pod_names:
        m.counter(
            "http_requests",
            "Requests served.",
            {"namespace": "ml", "pod": q, "service": "embedding-server", "code": "200"},
            cumulate(ts, lambda t: 21.0, start=8.8e6),
        )

    # ---------------------------------------------------------------- logs
    L = sc.logs
    for q in esa.pod_names:
        t = ts[0]
        while t < ts[-1]:
            if rng.random() < 0.3:
                at = ts_dt(t) + timedelta(seconds=rng.randint(0, 59))
                L.add(
                    at,
                    "embedding-server",
                    "ml",
                    q,
                    "embedding-server",
                    "info",
                    f"batch done: {rng.randint(40, 128)} inputs, {rng.randint(3000, 16000)} "
                    f"tokens in {rng.randint(40, 190)}ms",
                )
            if rng.random() < 0.02:
                at = ts_dt(t) + timedelta(seconds=rng.randint(0, 59))
                L.add(
                    at,
                    "embedding-server",
                    "ml",
                    q,
                    "embedding-server",
                    "warn",
                    "CUDA out of memory while allocating 1.12 GiB; splitting batch of 128 into "
                    "2 and retrying",
                )
            t += 60
    capod = caa.pod_names[0]
    t = int(created.timestamp()) + 10
    while t < ts[-1]:
        at = ts_dt(t)
        L.add(
            at,
            "cluster-autoscaler",
            "kube-system",
            capod,
            "cluster-autoscaler",
            "info",
            f"Pod ml/{pn} is unschedulable",
        )
        L.add(
            at + timedelta(milliseconds=40),
            "cluster-autoscaler",
            "kube-system",
            capod,
            "cluster-autoscaler",
            "info",
            f"Pod {pn} can't be scheduled on eks-gpu-inference-v2-3cc8a1f2, predicate checking "
            "error: node(s) had untolerated taint {pool.tallyfox.io/dedicated: "
            "gpu-inference}; predicateName=TaintToleration; reasons: node(s) had untolerated "
            "taint {pool.tallyfox.io/dedicated: gpu-inference}; debugInfo=taints on node: "
            '[]v1.Taint{v1.Taint{Key:"pool.tallyfox.io/dedicated", Value:"gpu-inference", '
            'Effect:"NoSchedule", TimeAdded:<nil>}}',
        )
        L.add(
            at + timedelta(milliseconds=60),
            "cluster-autoscaler",
            "kube-system",
            capod,
            "cluster-autoscaler",
            "info",
            "No expansion options",
        )
        t += 60
    return sc
