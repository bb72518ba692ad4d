"""2. node_failure: one node's root disk filled (container logs and unused images), image
garbage collection fails, the kubelet reports DiskPressure and evicts pods of several workloads."""

import json
from datetime import timedelta

from ._kit import (
    Family,
    Scenario,
    T,
    container,
    cumulate,
    endpoints,
    event,
    http_probe,
    iso,
    iso_ms,
    namespace,
    node,
    noise,
    pod_usage,
    restarts_metric,
    service,
    steps,
)

SID = "node-disk-pressure-image-gc"

NOW = T("2026-11-05T14:20:00Z")
PRESSURE = T("2026-11-05T13:34:12Z")


def evicted(p, msg, at):
    st = p["status"]
    st["phase"] = "Failed"
    st["reason"] = "Evicted"
    st["message"] = msg
    for c in st["containerStatuses"]:
        started = c["state"]["running"]["startedAt"]
        c["state"] = {
            "terminated": {
                "exitCode": 137,
                "reason": "Error",
                "startedAt": started,
                "finishedAt": iso(at + timedelta(seconds=1)),
                "containerID": c["containerID"],
            }
        }
        c["ready"] = False
        c["started"] = False
    for cd in st["conditions"]:
        if cd["type"] in ("Ready", "ContainersReady", "PodReadyToStartContainers"):
            cd["status"] = "False"
            cd["lastTransitionTime"] = iso(at + timedelta(seconds=1))
            if cd["type"] != "PodReadyToStartContainers":
                cd["reason"] = "PodFailed"
    st["conditions"].insert(
        0,
        {
            "type": "DisruptionTarget",
            "status": "True",
            "lastProbeTime": None,
            "lastTransitionTime": iso(at),
            "reason": "TerminationByKubelet",
            "message": msg,
        },
    )


def build():
    sc = Scenario(
        SID,
        "catalog-api pods dying and being recreated, intermittent 503s",
        NOW,
        (
            "storefront is throwing intermittent 503s and catalog-api pods keep disappearing and "
            "coming back\n"
            "with new names. catalog-api 7.2.0 went out this morning, probably that release is "
            "crashing.\n"
            "query-router in search also lost a pod. should we roll catalog-api back?\n"
        ),
        {
            "category": "node_failure",
            "culprit": {
                "kind": "Node",
                "namespace": "",
                "name": "ip-10-40-13-59.eu-west-1.compute.internal",
            },
            "evidence": [
                "DiskPressure",
                "The node was low on resource: ephemeral-storage",
                "Attempting to reclaim ephemeral-storage",
                "ImageGCFailed",
                "wanted to free",
                "node.kubernetes.io/disk-pressure",
            ],
            "fix": "Free the root disk of ip-10-40-13-59 (remove the unused embedder images, "
            "truncate the "
            "oversized container logs) or cordon, drain and replace the node; lower query-router's "
            "log level and set ephemeral-storage requests/limits so one pod cannot fill a node.",
        },
        seed=4502,
    )
    rng = sc.rng
    start = NOW - timedelta(hours=4)
    times = list(steps(start, NOW, 180))
    ncreated = T("2026-11-01T03:02:10Z")
    nodes = [
        ("ip-10-40-12-18.eu-west-1.compute.internal", "10.40.12.18", "eu-west-1a"),
        ("ip-10-40-13-59.eu-west-1.compute.internal", "10.40.13.59", "eu-west-1b"),
        ("ip-10-40-14-201.eu-west-1.compute.internal", "10.40.14.201", "eu-west-1c"),
        ("ip-10-40-12-240.eu-west-1.compute.internal", "10.40.12.240", "eu-west-1a"),
    ]
    BAD = nodes[1][0]
    embed_images = [
        (
            f"registry.quillmark.io/search/embedder:2.{i}.{j}",
            6_712_000_000 + 37_000_000 * i + j * 1_100_000,
        )
        for i, j in (
            (9, 0),
            (9, 1),
            (9, 2),
            (10, 0),
            (10, 1),
            (11, 0),
            (11, 1),
            (11, 2),
            (11, 3),
            (12, 0),
        )
    ]
    bad_images = [
        *list(reversed(embed_images)),
        ("registry.quillmark.io/search/query-router:4.3.8", 412553901),
        ("registry.quillmark.io/storefront/catalog-api:7.2.0", 288110476),
        ("registry.quillmark.io/storefront/catalog-api:7.1.4", 287904210),
        ("registry.quillmark.io/batch/thumbnail-worker:1.22.0", 1204332880),
        (
            "602401143452.dkr.ecr.eu-west-1.amazonaws.com/amazon-k8s-cni:v1.18.5-eksbuild.1",
            76210336,
        ),
        (
            "602401143452.dkr.ecr.eu-west-1.amazonaws.com/eks/kube-proxy:v1.30.6-minimal-eksbuild.3",
            31890112,
        ),
        ("602401143452.dkr.ecr.eu-west-1.amazonaws.com/eks/pause:3.5", 299025),
    ]
    for i, (n, ip, z) in enumerate(nodes):
        kw = {}
        if n == BAD:
            kw = dict(
                bad={"DiskPressure": PRESSURE},
                taints=[
                    {
                        "key": "node.kubernetes.io/disk-pressure",
                        "effect": "NoSchedule",
                        "timeAdded": iso(PRESSURE),
                    }
                ],
                images=bad_images,
            )
        sc.add(
            node(
                n,
                ncreated + timedelta(minutes=3 * i),
                NOW,
                ip=ip,
                cpu=8,
                mem_gi=32,
                instance_type="m6i.2xlarge",
                zone=z,
                pool="general-2026a",
                ephemeral_gi=80,
                **kw,
            )
        )
    for ns in ("default", "storefront", "search", "batch", "kube-system", "monitoring"):
        sc.add(namespace(ns, T("2025-02-03T09:00:00Z")))

    N = {i: (nodes[i][0], nodes[i][1]) for i in range(4)}
    evs = []

    # ---------------------------------------------------------------- storefront
    cat_rs = T("2026-11-05T09:12:44Z")
    cat_c = [
        container(
            "catalog-api",
            "registry.quillmark.io/storefront/catalog-api:7.2.0",
            cpu_req="500m",
            mem_req="768Mi",
            cpu_lim="2",
            mem_lim="1536Mi",
            ports=[("http", 8080)],
            readiness=http_probe("/ready", 8080),
            liveness=http_probe("/live", 8080, period=20),
        )
    ]
    ev_cat = T("2026-11-05T13:41:37Z")
    cat = Family(
        sc,
        "storefront",
        "catalog-api",
        containers=cat_c,
        replicas=4,
        placements=[
            (N[0][0], N[0][1], "10.40.12.61", cat_rs),
            (N[1][0], N[1][1], "10.40.13.140", cat_rs + timedelta(seconds=25)),
            (N[2][0], N[2][1], "10.40.14.77", cat_rs + timedelta(seconds=50)),
            (N[1][0], N[1][1], "10.40.13.171", cat_rs + timedelta(seconds=75)),
            (N[3][0], N[3][1], "10.40.12.199", ev_cat + timedelta(seconds=1)),
            (N[2][0], N[2][1], "10.40.14.103", T("2026-11-05T14:02:09Z")),
        ],
        created=T("2025-02-03T09:30:00Z"),
        rs_created=cat_rs,
        revision=31,
        old=[
            (
                30,
                {"catalog-api": "registry.quillmark.io/storefront/catalog-api:7.1.4"},
                T("2026-10-29T10:14:00Z"),
            )
        ],
        ann={"kubernetes.io/change-cause": "catalog-api 7.2.0"},
    )
    m1 = (
        "The node was low on resource: ephemeral-storage. Threshold quantity: 8589934592, "
        "available: 7961204Ki. "
        "Container catalog-api was using 212Ki, request is 0, has larger consumption of "
        "ephemeral-storage. "
    )
    m2 = (
        "The node was low on resource: ephemeral-storage. Threshold quantity: 8589934592, "
        "available: 8102664Ki. "
        "Container catalog-api was using 188Ki, request is 0, has larger consumption of "
        "ephemeral-storage. "
    )
    evicted(cat.pods[1], m1, ev_cat)
    evicted(cat.pods[3], m2, T("2026-11-05T14:02:08Z"))
    evs.append((cat.pods[1], m1, ev_cat, "catalog-api"))
    evs.append((cat.pods[3], m2, T("2026-11-05T14:02:08Z"), "catalog-api"))
    cat.deploy["status"].update({"replicas": 4, "readyReplicas": 4, "availableReplicas": 4})
    sc.add(
        service(
            "catalog-api",
            "storefront",
            created=T("2025-02-03T09:30:00Z"),
            selector={"app": "catalog-api"},
            ports=[("http", 80, 8080)],
            cluster_ip="172.20.66.12",
        )
    )
    live_cat = [p for p in cat.pods if p["status"]["phase"] == "Running"]
    sc.add(
        endpoints(
            "catalog-api",
            "storefront",
            created=T("2025-02-03T09:30:00Z"),
            ready=[
                (p["status"]["podIP"], p["spec"]["nodeName"], p["metadata"]["name"])
                for p in live_cat
            ],
            ports=[("http", 8080)],
        )
    )
    web = Family(
        sc,
        "storefront",
        "web",
        containers=[
            container(
                "web",
                "registry.quillmark.io/storefront/web:2026.11.2",
                cpu_req="250m",
                mem_req="256Mi",
                cpu_lim="1",
                mem_lim="512Mi",
                ports=[("http", 3000)],
                readiness=http_probe("/healthz", 3000),
            )
        ],
        replicas=3,
        placements=[
            (N[0][0], N[0][1], "10.40.12.92", T("2026-11-03T16:00:10Z")),
            (N[2][0], N[2][1], "10.40.14.45", T("2026-11-03T16:00:40Z")),
            (N[3][0], N[3][1], "10.40.12.251", T("2026-11-03T16:01:10Z")),
        ],
        created=T("2025-02-03T09:30:00Z"),
        rs_created=T("2026-11-03T16:00:00Z"),
        revision=118,
    )
    cart = Family(
        sc,
        "storefront",
        "cart",
        containers=[
            container(
                "cart",
                "registry.quillmark.io/storefront/cart:3.4.1",
                cpu_req="200m",
                mem_req="256Mi",
                cpu_lim="1",
                mem_lim="512Mi",
                ports=[("http", 8080)],
                readiness=http_probe("/ready", 8080),
            )
        ],
        replicas=2,
        placements=[
            (N[0][0], N[0][1], "10.40.12.37", T("2026-11-01T03:20:00Z")),
            (N[3][0], N[3][1], "10.40.12.244", T("2026-11-01T03:21:00Z")),
        ],
        created=T("2025-02-03T09:30:00Z"),
        rs_created=T("2026-10-20T12:00:00Z"),
        revision=12,
    )

    # ---------------------------------------------------------------- search
    qr_rs = T("2026-11-02T11:05:00Z")
    ev_qr = T("2026-11-05T13:36:02Z")
    qr = Family(
        sc,
        "search",
        "query-router",
        containers=[
            container(
                "query-router",
                "registry.quillmark.io/search/query-router:4.3.8",
                cpu_req="500m",
                mem_req="1Gi",
                cpu_lim="2",
                mem_lim="2Gi",
                ports=[("http", 8080)],
                env=[("LOG_LEVEL", "debug"), ("LOG_FORMAT", "json")],
            )
        ],
        replicas=3,
        placements=[
            (N[1][0], N[1][1], "10.40.13.88", qr_rs),
            (N[2][0], N[2][1], "10.40.14.19", qr_rs + timedelta(seconds=30)),
            (N[0][0], N[0][1], "10.40.12.170", qr_rs + timedelta(seconds=60)),
            (N[3][0], N[3][1], "10.40.12.213", ev_qr + timedelta(seconds=1)),
        ],
        created=T("2025-04-14T10:00:00Z"),
        rs_created=qr_rs,
        revision=44,
    )
    mq = (
        "The node was low on resource: ephemeral-storage. Threshold quantity: 8589934592, "
        "available: 7318552Ki. "
        "Container query-router was using 4871220Ki, request is 0, has larger consumption of "
        "ephemeral-storage. "
    )
    evicted(qr.pods[0], mq, ev_qr)
    evs.append((qr.pods[0], mq, ev_qr, "query-router"))
    qr.deploy["status"].update({"replicas": 3, "readyReplicas": 3, "availableReplicas": 3})
    emb_rs = T("2026-11-04T08:30:00Z")
    emb = Family(
        sc,
        "search",
        "embedder",
        containers=[
            container(
                "embedder",
                "registry.quillmark.io/search/embedder:2.12.0",
                cpu_req="2",
                mem_req="6Gi",
                cpu_lim="4",
                mem_lim="8Gi",
                ports=[("grpc", 9000)],
            )
        ],
        replicas=1,
        placements=[(N[1][0], N[1][1], "10.40.13.230", emb_rs)],
        created=T("2025-09-01T10:00:00Z"),
        rs_created=emb_rs,
        revision=38,
        old=[
            (
                37,
                {"embedder": "registry.quillmark.io/search/embedder:2.11.3"},
                T("2026-11-03T15:00:00Z"),
            ),
            (
                36,
                {"embedder": "registry.quillmark.io/search/embedder:2.11.2"},
                T("2026-11-02T17:40:00Z"),
            ),
        ],
    )

    # ---------------------------------------------------------------- batch
    tw_rs = T("2026-10-30T09:00:00Z")
    ev_tw = T("2026-11-05T13:52:40Z")
    tw = Family(
        sc,
        "batch",
        "thumbnail-worker",
        containers=[
            container(
                "thumbnail-worker",
                "registry.quillmark.io/batch/thumbnail-worker:1.22.0",
                cpu_req="1",
                mem_req="1Gi",
                cpu_lim="2",
                mem_lim="2Gi",
            )
        ],
        replicas=2,
        placements=[
            (N[1][0], N[1][1], "10.40.13.201", T("2026-11-01T03:25:00Z")),
            (N[0][0], N[0][1], "10.40.12.133", T("2026-11-01T03:25:30Z")),
            (N[2][0], N[2][1], "10.40.14.150", ev_tw + timedelta(seconds=1)),
        ],
        created=T("2025-06-10T10:00:00Z"),
        rs_created=tw_rs,
        revision=19,
    )
    mt = (
        "The node was low on resource: ephemeral-storage. Threshold quantity: 8589934592, "
        "available: 8011432Ki. "
        "Container thumbnail-worker was using 611204Ki, request is 0, has larger consumption of "
        "ephemeral-storage. "
    )
    evicted(tw.pods[0], mt, ev_tw)
    evs.append((tw.pods[0], mt, ev_tw, "thumbnail-worker"))
    tw.deploy["status"].update({"replicas": 2, "readyReplicas": 2, "availableReplicas": 2})

    # ---------------------------------------------------------------- kube-system, monitoring
    dns = Family(
        sc,
        "kube-system",
        "coredns",
        containers=[
            container(
                "coredns",
                "602401143452.dkr.ecr.eu-west-1.amazonaws.com/eks/coredns:v1.11.3-eksbuild.1",
                cpu_req="100m",
                mem_req="70Mi",
                mem_lim="170Mi",
                ports=[("dns", 53), ("metrics", 9153)],
                args=["-conf", "/etc/coredns/Corefile"],
            )
        ],
        replicas=2,
        placements=[
            (N[0][0], N[0][1], "10.40.12.5", T("2026-11-01T03:05:00Z")),
            (N[2][0], N[2][1], "10.40.14.6", T("2026-11-01T03:11:00Z")),
        ],
        created=T("2025-02-03T08:00:00Z"),
        rs_created=T("2026-08-12T08:00:00Z"),
        revision=5,
        labels={"k8s-app": "kube-dns"},
        pod_overrides={
            1: {
                "statuses": {
                    "coredns": {
                        "restartCount": 1,
                        "lastState": {
                            "terminated": {
                                "exitCode": 1,
                                "reason": "Error",
                                "startedAt": "2026-11-01T03:11:04Z",
                                "finishedAt": "2026-11-02T22:40:31Z",
                            }
                        },
                    }
                },
                "started": T("2026-11-01T03:11:02Z"),
            }
        },
    )
    dns.pods[1]["status"]["containerStatuses"][0]["state"] = {
        "running": {"startedAt": "2026-11-02T22:40:33Z"}
    }
    Family(
        sc,
        "monitoring",
        "kube-state-metrics",
        containers=[
            container(
                "kube-state-metrics",
                "registry.k8s.io/kube-state-metrics/kube-state-metrics:v2.13.0",
                cpu_req="50m",
                mem_req="128Mi",
                ports=[("http-metrics", 8080)],
            )
        ],
        replicas=1,
        placements=[(N[3][0], N[3][1], "10.40.12.230", T("2026-11-01T03:30:00Z"))],
        created=T("2025-02-03T08:30:00Z"),
        rs_created=T("2026-07-01T10:00:00Z"),
        revision=4,
    )

    # ---------------------------------------------------------------- events
    sc.add(
        event(
            "",
            kind="Node",
            name=BAD,
            obj_ns="",
            reason="NodeHasDiskPressure",
            message=f"Node {BAD} status is now: NodeHasDiskPressure",
            first=PRESSURE,
            last=PRESSURE,
            host=BAD,
        )
    )
    sc.add(
        event(
            "",
            kind="Node",
            name=BAD,
            obj_ns="",
            reason="EvictionThresholdMet",
            message="Attempting to reclaim ephemeral-storage",
            first=PRESSURE + timedelta(seconds=10),
            last=NOW - timedelta(minutes=4),
            count=9,
            type_="Warning",
            host=BAD,
        )
    )
    sc.add(
        event(
            "",
            kind="Node",
            name=BAD,
            obj_ns="",
            reason="ImageGCFailed",
            message=(
                "wanted to free 16502212198 bytes, but freed 0 bytes space with errors in image "
                "deletion: "
                '[rpc error: code = DeadlineExceeded desc = failed to remove image "sha256:'
                'c4f2d1e0b8a7966b5e3a1f0d9c8b7a6e5f4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b": context '
                "deadline exceeded, "
                'rpc error: code = DeadlineExceeded desc = failed to remove image "sha256:'
                '9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b": context '
                "deadline exceeded]"
            ),
            first=NOW - timedelta(minutes=56),
            last=NOW - timedelta(minutes=6),
            count=11,
            type_="Warning",
            host=BAD,
        )
    )
    for p, msg, at, cname in evs:
        ns, pn = p["metadata"]["namespace"], p["metadata"]["name"]
        if at < NOW - timedelta(hours=1):
            continue
        sc.add(
            event(
                ns,
                kind="Pod",
                name=pn,
                reason="Evicted",
                message=msg,
                first=at,
                last=at,
                type_="Warning",
                host=BAD,
            )
        )
        sc.add(
            event(
                ns,
                kind="Pod",
                name=pn,
                reason="Killing",
                message=f"Stopping container {cname}",
                first=at,
                last=at,
                host=BAD,
                field_path=f"spec.containers{{{cname}}}",
            )
        )
        sc.add(
            event(
                ns,
                kind="ReplicaSet",
                name=p["metadata"]["ownerReferences"][0]["name"],
                reason="SuccessfulCreate",
                message=f"Created pod: {p['metadata']['ownerReferences'][0]['name']}-{'x'}".replace(
                    "-x", ""
                ),
                first=at + timedelta(seconds=1),
                last=at + timedelta(seconds=1),
                component="replicaset-controller",
            )
        )
    # fix the SuccessfulCreate messages to name the replacement pods
    repl = {
        cat.pods[1]["metadata"]["name"]: cat.pods[4],
        cat.pods[3]["metadata"]["name"]: cat.pods[5],
        qr.pods[0]["metadata"]["name"]: qr.pods[3],
        tw.pods[0]["metadata"]["name"]: tw.pods[2],
    }
    pending = list(repl.values())
    for o in sc.objects:
        if o["kind"] == "Event" and o["reason"] == "SuccessfulCreate":
            rsn = o["involvedObject"]["name"]
            for rp in pending:
                if (
                    rp["metadata"]["ownerReferences"][0]["name"] == rsn
                    and rp["metadata"]["creationTimestamp"] <= o["lastTimestamp"]
                    and not rp.get("_used")
                ):
                    o["message"] = f"Created pod: {rp['metadata']['name']}"
                    rp["_used"] = True
                    break
    for rp in pending:
        rp.pop("_used", None)
        sc.add(
            event(
                rp["metadata"]["namespace"],
                kind="Pod",
                name=rp["metadata"]["name"],
                reason="Scheduled",
                message=(
                    f"Successfully assigned {rp['metadata']['namespace']}/{rp['metadata']['name']}"
                    f" to {rp['spec']['nodeName']}"
                ),
                first=T(rp["metadata"]["creationTimestamp"]),
                last=T(rp["metadata"]["creationTimestamp"]),
                component="default-scheduler",
            )
        )
    # an unrelated warning: a one-off DNS probe timeout long before the pressure
    sc.add(
        event(
            "storefront",
            kind="Pod",
            name=cart.pods[1]["metadata"]["name"],
            reason="Unhealthy",
            message=(
                'Readiness probe failed: Get "http://10.40.12.244:8080/ready": context deadline '
                "exceeded (Client.Timeout exceeded while awaiting headers)"
            ),
            first=NOW - timedelta(minutes=57),
            last=NOW - timedelta(minutes=55),
            count=2,
            type_="Warning",
            host=nodes[3][0],
            field_path="spec.containers{cart}",
        )
    )

    # ---------------------------------------------------------------- logs
    def jl(p, t, level, msg, svc, **kw):
        sc.log(
            t,
            ns=p["metadata"]["namespace"],
            pod=p["metadata"]["name"],
            container=p["spec"]["containers"][0]["name"],
            service=svc,
            level=level,
            message=msg,
            **kw,
        )

    for t in steps(start, NOW, 60):
        for p in [x for x in cat.pods]:
            ev_at = (
                T(p["status"]["conditions"][0]["lastTransitionTime"])
                if p["status"]["phase"] == "Failed"
                else None
            )
            pc = T(p["metadata"]["creationTimestamp"])
            if t < pc + timedelta(seconds=10) or (ev_at and t > ev_at):
                continue
            if rng.random() < 0.35:
                jl(
                    p,
                    t + timedelta(seconds=rng.uniform(0, 59)),
                    "info",
                    f"GET /v1/products/{rng.randint(10000, 99999)} 200 {rng.randint(4, 40)}ms",
                    "catalog-api",
                    http__response__status_code=200,
                )
        # query-router at debug level: chatty
        for p in qr.pods:
            ev_at = (
                T(p["status"]["conditions"][0]["lastTransitionTime"])
                if p["status"]["phase"] == "Failed"
                else None
            )
            pc = T(p["metadata"]["creationTimestamp"])
            if t < pc + timedelta(seconds=10) or (ev_at and t > ev_at):
                continue
            jl(
                p,
                t + timedelta(seconds=rng.uniform(0, 59)),
                "debug",
                f"shard fan-out q={rng.randint(1, 9) * 1000 + rng.randint(0, 999)} shards=12 "
                f"took={rng.randint(8, 60)}ms cache=miss",
                "query-router",
            )
    # ingress-side 503s while evicted pods were still in the Endpoints
    for _p, _msg, at, cname in evs:
        for k in range(rng.randint(6, 14)):
            t = at + timedelta(seconds=rng.uniform(0, 9))
            jl(
                web.pods[k % 3],
                t,
                "error",
                f"upstream {cname} returned 503 (no healthy upstream) for GET "
                f"/api/catalog/{rng.randint(100, 999)}",
                "web",
                http__response__status_code=503,
            )
    # a noisy warning that has nothing to do with it
    for t in steps(start + timedelta(minutes=7), NOW, 600):
        jl(
            cart.pods[0],
            t,
            "warn",
            "redis: slow command HGETALL cart:{session} took 212ms (threshold 200ms)",
            "cart",
        )
    for p in cat.pods[4:]:
        pc = T(p["metadata"]["creationTimestamp"])
        sc.pod_log(
            "storefront",
            p["metadata"]["name"],
            "catalog-api",
            [
                json.dumps(
                    {
                        "ts": iso_ms(pc + timedelta(seconds=3)),
                        "level": "info",
                        "msg": "catalog-api 7.2.0 listening on :8080",
                    }
                ),
                json.dumps(
                    {
                        "ts": iso_ms(pc + timedelta(seconds=5)),
                        "level": "info",
                        "msg": "warmed product cache: 48211 items",
                    }
                ),
            ],
        )
    emb_p = emb.pods[0]
    sc.pod_log(
        "search",
        emb_p["metadata"]["name"],
        "embedder",
        [
            (
                f"{iso_ms(emb_rs + timedelta(seconds=90))} INFO loaded model minilm-l12-v3 (ONNX, "
                "1.9 GB)"
            ),
            f"{iso_ms(emb_rs + timedelta(seconds=92))} INFO grpc server listening on :9000",
            (
                f"{iso_ms(PRESSURE + timedelta(seconds=40))} WARN could not write request trace "
                "to /tmp/traces: no space left on device"
            ),
        ],
    )

    # ---------------------------------------------------------------- metrics
    size = 85_886_742_528
    for i, (n, ip, _z) in enumerate(nodes):
        lab = {
            "instance": f"{ip}:9100",
            "node": n,
            "device": "/dev/nvme0n1p1",
            "fstype": "xfs",
            "mountpoint": "/",
        }
        if n == BAD:

            def avail(t):
                frac = (t - start).total_seconds() / (PRESSURE - start).total_seconds()
                if t <= PRESSURE:
                    return 21.0e9 - frac * 12.5e9 + rng.uniform(-1e8, 1e8)
                return 7.45e9 + rng.uniform(-3e8, 4e8)
        else:
            base = [38.1e9, 0, 41.7e9, 44.9e9][i]

            def avail(t, base=base):
                return base + rng.uniform(-2e8, 2e8)

        sc.metrics.gauge(
            "node_filesystem_avail_bytes",
            "Filesystem space available to non-root users in bytes.",
            lab,
            [(t, int(avail(t))) for t in times],
        )
        sc.metrics.gauge(
            "node_filesystem_size_bytes",
            "Filesystem size in bytes.",
            lab,
            [(t, size) for t in times],
        )
    for n, _ip, _z in nodes:
        for cond in ("DiskPressure",):
            for stv in ("true", "false"):

                def val(t, n=n, cond=cond, stv=stv):
                    on = n == BAD and cond == "DiskPressure" and t >= PRESSURE
                    return 1 if (stv == "true") == on else 0

                sc.metrics.gauge(
                    "kube_node_status_condition",
                    "The condition of a cluster node.",
                    {"node": n, "condition": cond, "status": stv},
                    [(t, val(t)) for t in times],
                )
    ev_times = sorted(at for _, _, at, _ in evs)
    sc.metrics.counter(
        "kubelet_evictions",
        "Cumulative number of pod evictions by eviction signal",
        {"node": BAD, "instance": f"{nodes[1][1]}:10250", "eviction_signal": "nodefs.available"},
        [(t, sum(1 for a in ev_times if a <= t)) for t in times],
    )
    for p in qr.pods:
        if p["status"]["phase"] == "Failed":
            ev_at = T(p["status"]["conditions"][0]["lastTransitionTime"])
            use = [
                (
                    t,
                    int(
                        4.99e9
                        * (t - start).total_seconds()
                        / (ev_at - start).total_seconds()
                        * 0.35
                        + 3.2e9
                    ),
                )
                for t in times
                if t <= ev_at
            ]
        else:
            pc = T(p["metadata"]["creationTimestamp"])
            use = [
                (t, int(2.4e8 + 1.1e6 * (t - max(pc, start)).total_seconds() / 60))
                for t in times
                if t >= pc
            ]
        sc.metrics.gauge(
            "container_fs_usage_bytes",
            "Number of bytes that are consumed by the container on this filesystem.",
            {
                "namespace": "search",
                "pod": p["metadata"]["name"],
                "container": "query-router",
                "node": p["spec"]["nodeName"],
                "device": "/dev/nvme0n1p1",
            },
            use,
        )
    for p in live_cat + [x for x in cat.pods if x["status"]["phase"] == "Failed"]:
        pc = T(p["metadata"]["creationTimestamp"])
        end = (
            T(p["status"]["conditions"][0]["lastTransitionTime"])
            if p["status"]["phase"] == "Failed"
            else NOW
        )
        ts = [t for t in times if max(pc, start) <= t <= end]
        pod_usage(
            sc, p, "catalog-api", ts, lambda t: noise(rng, 0.42), lambda t: noise(rng, 6.1e8, 0.04)
        )
        restarts_metric(sc, p, "catalog-api", ts)
    # storefront edge status codes
    sc.metrics.counter(
        "nginx_ingress_controller_requests",
        "The total number of client requests",
        {
            "ingress": "storefront",
            "namespace": "storefront",
            "service": "catalog-api",
            "status": "200",
        },
        cumulate(times, lambda t: noise(rng, 61.0), start_value=8.1e7),
    )
    sc.metrics.counter(
        "nginx_ingress_controller_requests",
        "The total number of client requests",
        {
            "ingress": "storefront",
            "namespace": "storefront",
            "service": "catalog-api",
            "status": "503",
        },
        cumulate(
            times,
            lambda t: 0.9 if any(a <= t < a + timedelta(seconds=150) for a in ev_times) else 0.002,
            start_value=1187,
        ),
    )
    return sc
