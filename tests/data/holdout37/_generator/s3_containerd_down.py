# ruff: noqa: E501  (data literals: log lines and event messages are kept whole)
"""Shape 3: one node's containerd is down; the node is NotReady with the runtime named in its condition."""

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
    node,
    pod,
    replicaset,
    running,
    service,
    waiting,
)

NS = "media"
BAD = "aks-media-31419276-vmss00000c"


def build() -> Scenario:
    s = Scenario(
        "media-node-runtime-down",
        "thumbnail renders timing out for part of the uploads",
        "2026-12-01T16:12:00Z",
        "about a third of photo uploads hang on 'processing thumbnail' since ~15:50. thumbnailer has 3 pods, "
        "dashboard says 3 running... is the render queue stuck? we did bump the queue lib last week",
        {
            "category": "node_failure",
            "culprit": {"kind": "Node", "namespace": "", "name": BAD},
            "evidence": ["container runtime is down", "NodeNotReady", BAD],
            "fix": f"Restart or repair containerd on {BAD} (or cordon, drain and replace the node); "
            "its pods are rescheduled once it is gone",
        },
    )
    now = s.now
    down_since = s.ago(minutes=23)
    good = []
    for i in range(3):
        n = f"aks-media-31419276-vmss00000{'9ab'[i]}"
        s.add(
            node(
                n,
                s.ago(days=30 + i),
                now - timedelta(seconds=6 + i),
                f"westeurope-{i + 1}",
                f"10.224.0.{4 + i}",
                runtime="containerd://1.7.20-1",
                instance="Standard_D8s_v5",
                cpu="4",
                memory="16Gi",
            )
        )
        good.append(n)
    bad = node(
        BAD,
        s.ago(days=30),
        now - timedelta(seconds=11),
        "westeurope-2",
        "10.224.0.9",
        ready=(
            "False",
            "KubeletNotReady",
            "[container runtime is down, PLEG is not healthy: pleg was last seen active 23m1.4s ago; "
            "threshold is 3m0s]",
        ),
        ready_since=down_since + timedelta(minutes=3),
        taints=[
            {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"},
            {
                "key": "node.kubernetes.io/not-ready",
                "effect": "NoExecute",
                "timeAdded": iso(down_since + timedelta(minutes=3)),
            },
        ],
        runtime="containerd://1.7.20-1",
        instance="Standard_D8s_v5",
        cpu="4",
        memory="16Gi",
    )
    bad["spec"]["unschedulable"] = False
    s.add(bad)
    s.add(
        namespace(NS, s.ago(days=500)),
        namespace("default", s.ago(days=500)),
        namespace("kube-system", s.ago(days=500)),
    )
    img = "mediaplatformacr.azurecr.io/thumbnailer:2.31.0"
    ctr = container(
        "render",
        img,
        ports=[8000],
        env={"RENDER_QUEUE": "amqp://rabbitmq.media.svc:5672/renders", "RENDER_WORKERS": "4"},
        requests={"cpu": "2", "memory": "2Gi"},
        limits={"memory": "3Gi"},
        readinessProbe={"httpGet": {"path": "/ready", "port": 8000}, "periodSeconds": 10},
    )
    h = "6fb94c7d2d"
    labels = {"app": "thumbnailer", "pod-template-hash": h}
    s.add(
        deployment(
            "thumbnailer",
            NS,
            {"app": "thumbnailer"},
            labels,
            [ctr],
            3,
            s.ago(days=300),
            40,
            27,
            available_status(3, down_since + timedelta(minutes=3), ready=2, available=2),
        )
    )
    s.add(replicaset(f"thumbnailer-{h}", NS, "thumbnailer", labels, [ctr], 3, 2, s.ago(days=6), 27))
    pods = [
        (f"thumbnailer-{h}-2xk9w", good[0], "10.244.3.17"),
        (f"thumbnailer-{h}-v7pdl", BAD, "10.244.6.22"),
        (f"thumbnailer-{h}-nq4zb", good[2], "10.244.5.40"),
    ]
    for pn, nd, ip in pods:
        on_bad = nd == BAD
        conds = None
        if on_bad:
            t = iso(down_since + timedelta(minutes=3))
            conds = [
                {
                    "type": "PodScheduled",
                    "status": "True",
                    "lastTransitionTime": iso(s.ago(days=6)),
                },
                {"type": "Initialized", "status": "True", "lastTransitionTime": iso(s.ago(days=6))},
                {"type": "ContainersReady", "status": "False", "lastTransitionTime": t},
                {"type": "Ready", "status": "False", "lastTransitionTime": t},
                {
                    "type": "DisruptionTarget",
                    "status": "True",
                    "reason": "DeletionByTaintManager",
                    "message": "Taint manager: deleting due to NoExecute taint",
                    "lastTransitionTime": t,
                },
            ]
        s.add(
            pod(
                pn,
                NS,
                labels,
                ("ReplicaSet", f"thumbnailer-{h}"),
                nd,
                [ctr],
                [running("render", img, s.ago(days=6), ready=not on_bad)],
                s.ago(days=6),
                ready=not on_bad,
                ip=ip,
                host_ip="10.224.0.9" if on_bad else "10.224.0.4",
                conditions=conds,
                deletion=down_since + timedelta(minutes=8, seconds=30) if on_bad else None,
                extra_spec={
                    "tolerations": [
                        {
                            "key": "node.kubernetes.io/not-ready",
                            "operator": "Exists",
                            "effect": "NoExecute",
                            "tolerationSeconds": 300,
                        }
                    ]
                },
            )
        )
    s.add(
        service("thumbnailer", NS, {"app": "thumbnailer"}, 80, 8000, s.ago(days=500), "10.0.41.7")
    )
    s.add(
        endpoints(
            "thumbnailer",
            NS,
            [(ip, pn, nd) for pn, nd, ip in pods if nd != BAD],
            8000,
            s.ago(days=500),
            not_ready=[(ip, pn, nd) for pn, nd, ip in pods if nd == BAD],
        )
    )
    # a replacement that cannot start: the scheduler put it on a node whose capacity is full
    repl = f"thumbnailer-{h}-b8m3t"
    s.add(
        pod(
            repl,
            NS,
            labels,
            ("ReplicaSet", f"thumbnailer-{h}"),
            None,
            [ctr],
            [],
            down_since + timedelta(minutes=8, seconds=31),
            phase="Pending",
            ready=False,
            conditions=[
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": "0/4 nodes are available: 1 node(s) had untolerated taint "
                    "{node.kubernetes.io/not-ready: }, 3 Insufficient cpu. preemption: 0/4 nodes "
                    "are available: 1 Preemption is not helpful for scheduling, 3 No preemption "
                    "victims found for incoming pod.",
                    "lastTransitionTime": iso(down_since + timedelta(minutes=8, seconds=31)),
                }
            ],
        )
    )
    # a DaemonSet pod and a stuck pod of another workload on the bad node
    ds_img = "mcr.microsoft.com/oss/fluent/fluent-bit:3.1.9"
    ds_ctr = container(
        "fluent-bit", ds_img, requests={"cpu": "50m", "memory": "64Mi"}, limits={"memory": "256Mi"}
    )
    s.add(
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {
                **__import__("tests.data.holdout37._generator.common", fromlist=["meta"]).meta(
                    "log-shipper", "kube-system", {"app": "log-shipper"}, s.ago(days=200)
                ),
                "generation": 9,
            },
            "spec": {
                "selector": {"matchLabels": {"app": "log-shipper"}},
                "template": {
                    "metadata": {"labels": {"app": "log-shipper"}},
                    "spec": {"containers": [ds_ctr]},
                },
            },
            "status": {
                "desiredNumberScheduled": 4,
                "currentNumberScheduled": 4,
                "numberReady": 3,
                "numberAvailable": 3,
                "numberUnavailable": 1,
                "updatedNumberScheduled": 4,
                "numberMisscheduled": 0,
                "observedGeneration": 9,
            },
        }
    )
    s.add(
        pod(
            "log-shipper-7hc2q",
            "kube-system",
            {"app": "log-shipper"},
            ("DaemonSet", "log-shipper"),
            BAD,
            [ds_ctr],
            [running("fluent-bit", ds_img, s.ago(days=20), ready=False)],
            s.ago(days=20),
            ready=False,
            ip="10.244.6.3",
            host_ip="10.224.0.9",
        )
    )
    wm_img = "mediaplatformacr.azurecr.io/watermark:1.9.2"
    wm_ctr = container("watermark", wm_img, requests={"cpu": "500m", "memory": "512Mi"})
    wl = {"app": "watermark", "pod-template-hash": "5d7c9b8f6"}
    s.add(
        deployment(
            "watermark",
            NS,
            {"app": "watermark"},
            wl,
            [wm_ctr],
            1,
            s.ago(days=90),
            6,
            6,
            available_status(1, s.ago(minutes=21), ready=0, available=0),
        )
    )
    s.add(replicaset("watermark-5d7c9b8f6", NS, "watermark", wl, [wm_ctr], 1, 0, s.ago(days=8), 6))
    s.add(
        pod(
            "watermark-5d7c9b8f6-tt2rp",
            NS,
            {"app": "watermark", "pod-template-hash": "5d7c9b8f6"},
            ("ReplicaSet", "watermark-5d7c9b8f6"),
            BAD,
            [wm_ctr],
            [waiting("watermark", wm_img, "ContainerCreating")],
            s.ago(minutes=21),
            phase="Pending",
            ready=False,
            host_ip="10.224.0.9",
        )
    )
    up = healthy_deployment(
        s,
        "upload-api",
        NS,
        "mediaplatformacr.azurecr.io/upload-api:5.4.1",
        good,
        "10.244.3",
        port=8080,
        replicas=3,
        age_days=2,
        hash_="79d4f6c8b5",
    )
    rq = healthy_deployment(
        s,
        "rabbitmq-exporter",
        NS,
        "kbudde/rabbitmq-exporter:1.0.0",
        good,
        "10.244.5",
        port=9419,
        replicas=1,
        age_days=40,
        hash_="5b8f7d6c94",
    )
    tc_img = "mediaplatformacr.azurecr.io/video-transcoder:0.44.0"
    tc_ctr = container(
        "transcoder", tc_img, requests={"cpu": "3", "memory": "6Gi"}, limits={"memory": "8Gi"}
    )
    tl = {"app": "video-transcoder", "pod-template-hash": "7f8c6d9b5"}
    s.add(
        deployment(
            "video-transcoder",
            NS,
            {"app": "video-transcoder"},
            tl,
            [tc_ctr],
            1,
            s.ago(days=60),
            11,
            11,
            available_status(1, s.ago(days=3)),
        )
    )
    s.add(
        replicaset(
            "video-transcoder-7f8c6d9b5",
            NS,
            "video-transcoder",
            tl,
            [tc_ctr],
            1,
            1,
            s.ago(days=3),
            11,
        )
    )
    s.add(
        pod(
            "video-transcoder-7f8c6d9b5-hq4wd",
            NS,
            tl,
            ("ReplicaSet", "video-transcoder-7f8c6d9b5"),
            good[1],
            [tc_ctr],
            [running("transcoder", tc_img, s.ago(days=3))],
            s.ago(days=3),
            ip="10.244.4.9",
            host_ip="10.224.0.5",
        )
    )
    ev = s.events
    ev.add(
        "",
        "Node",
        BAD,
        "NodeNotReady",
        f"Node {BAD} status is now: NodeNotReady",
        down_since + timedelta(minutes=3),
        component="node-controller",
    )
    ev.add(
        "",
        "Node",
        BAD,
        "ContainerRuntimeUnhealthy",
        "Container runtime on the node is not healthy: rpc error: code = Unavailable desc = connection error: "
        'desc = "transport: Error while dialing: dial unix /run/containerd/containerd.sock: connect: '
        'connection refused"',
        down_since,
        s.ago(minutes=1),
        count=21,
        type_="Warning",
        component="kubelet",
        host=BAD,
    )
    for pn, nd, _ in pods:
        if nd == BAD:
            ev.add(
                NS,
                "Pod",
                pn,
                "NodeNotReady",
                "Node is not ready",
                down_since + timedelta(minutes=3),
                type_="Warning",
                component="node-controller",
            )
            ev.add(
                NS,
                "Pod",
                pn,
                "TaintManagerEviction",
                f"Marking for deletion Pod {NS}/{pn}",
                down_since + timedelta(minutes=8, seconds=30),
                component="taint-eviction-controller",
            )
    ev.add(
        NS,
        "Pod",
        "watermark-5d7c9b8f6-tt2rp",
        "FailedCreatePodSandBox",
        'Failed to create pod sandbox: rpc error: code = Unavailable desc = connection error: desc = "transport: '
        'Error while dialing: dial unix /run/containerd/containerd.sock: connect: connection refused"',
        s.ago(minutes=20),
        s.ago(minutes=2),
        count=18,
        type_="Warning",
        host=BAD,
    )
    ev.add(
        NS,
        "Pod",
        repl,
        "FailedScheduling",
        "0/4 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }, "
        "3 Insufficient cpu. preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, "
        "3 No preemption victims found for incoming pod.",
        down_since + timedelta(minutes=8, seconds=31),
        s.ago(minutes=1),
        count=9,
        type_="Warning",
        component="default-scheduler",
    )
    ev.add(
        NS,
        "Pod",
        up[1],
        "Unhealthy",
        'Readiness probe failed: Get "http://10.244.3.21:8080/healthz": '
        "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
        s.ago(minutes=37),
        type_="Warning",
        host=good[1],
        field_path="spec.containers{api}",
    )
    for m in range(0, 60):
        t = s.ago(minutes=m, seconds=13)
        for pn, nd, _ in pods:
            if nd != BAD:
                s.doc(
                    t,
                    "rendered thumbnail set (3 sizes) in 412ms",
                    "info",
                    "thumbnailer",
                    NS,
                    pn,
                    "render",
                )
        if t < down_since:
            s.doc(
                t + timedelta(seconds=5),
                "rendered thumbnail set (3 sizes) in 398ms",
                "info",
                "thumbnailer",
                NS,
                pods[1][0],
                "render",
            )
        if t > down_since and m % 2 == 0:
            s.doc(
                t,
                "render job 7f3a timed out after 30s waiting for worker ack; requeueing",
                "warn",
                "upload-api",
                NS,
                up[m % 3],
                "api",
            )
    s.doc(
        s.ago(minutes=55),
        "amqp heartbeat missed, reconnecting",
        "warn",
        "thumbnailer",
        NS,
        pods[0][0],
        "render",
    )
    s.log(
        NS,
        pods[0][0],
        "render",
        [
            f"{iso(s.ago(minutes=m))} INFO rendered thumbnail set (3 sizes) in {380 + m}ms"
            for m in range(40, 0, -1)
        ],
    )
    s.log(
        NS,
        pods[1][0],
        "render",
        [
            f"{iso(down_since - timedelta(minutes=m))} INFO rendered thumbnail set (3 sizes) "
            f"in {395 + m}ms"
            for m in range(10, 0, -1)
        ],
    )
    _ = rq
    return s
