"""6. unschedulable: tile-cache is pinned by nodeSelector to eu-west-1c; the zone's nodes were
drained and removed (its node group set to 0) and the evicted pods stay Pending. Decoy: a
GPU training Job that has been Pending and noisy all morning."""

from __future__ import annotations

from datetime import timedelta

from . import _kit as k

SID = "tile-cache-zone-gone"

ECR = "590184412207.dkr.ecr.eu-west-1.amazonaws.com"


def build(root) -> None:
    s = k.Scenario(SID, "2026-12-06T09:40:00Z", 4606)
    for ns in ("default", "kube-system", "geo", "web", "ml"):
        s.add(k.namespace(s, ns, s.ago(days=700)))
    drain = s.ago(minutes=37)
    nodes = []
    for i, zone in enumerate(["eu-west-1a", "eu-west-1b"] * 3):
        ip = f"10.60.{0 if zone.endswith('a') else 64}.{30 + i * 9}"
        ng = "ng-a" if zone.endswith("a") else "ng-b"
        nodes.append(
            k.node(
                s,
                f"ip-{ip.replace('.', '-')}.eu-west-1.compute.internal",
                s.ago(days=9 + i),
                zone,
                "c6i.2xlarge",
                cpu="8",
                memory="15896744Ki",
                alloc_cpu="7910m",
                alloc_mem="14880936Ki",
                internal_ip=ip,
                extra_labels={"eks.amazonaws.com/nodegroup": ng},
            )
        )
    s.add(*nodes)
    nn = [n["metadata"]["name"] for n in nodes]

    # --- culprit: tile-cache (pinned to eu-west-1c) -----------------------------------------------
    ns = "geo"
    labels = {"app": "tile-cache"}
    c = k.container(
        "varnish",
        f"{ECR}/tile-cache:6.0.12-r4",
        ports=[{"name": "http", "containerPort": 6081, "protocol": "TCP"}],
        cpu="1500m",
        memory="6Gi",
        readiness=k.http_probe("/healthz", "http", delay=5),
        args=["-s", "malloc,5G", "-a", ":6081", "-f", "/etc/varnish/default.vcl"],
    )
    spec = k.pod_spec([c], node_selector={"topology.kubernetes.io/zone": "eu-west-1c"})
    dep_created = s.ago(days=500)
    dep = k.deployment(
        s,
        ns,
        "tile-cache",
        3,
        labels,
        spec,
        dep_created,
        12,
        k.deploy_status(
            3,
            0,
            3,
            0,
            14,
            ("True", "NewReplicaSetAvailable", "", s.ago(days=6)),
            (
                "False",
                "MinimumReplicasUnavailable",
                "Deployment does not have minimum availability.",
                drain + timedelta(seconds=30),
            ),
            s.ago(days=6),
        ),
        annotations={
            "meridian.io/why-zone-pinned": (
                "tile-store EFS mount target and the origin render farm live in eu-west-1c "
                "(INC-2291)"
            )
        },
    )
    pth = "84d6b7c9f5"
    rs_name = f"tile-cache-{pth}"
    dep["status"]["conditions"][1]["message"] = (
        f'ReplicaSet "{rs_name}" has successfully progressed.'
    )
    rs = k.replicaset(s, dep, rs_name, pth, 3, 0, s.ago(days=6, hours=3), 12, spec, labels)
    rs["status"].pop("readyReplicas", None)
    s.add(dep, rs)
    msg = (
        "0/6 nodes are available: 6 node(s) didn't match Pod's node affinity/selector. "
        "preemption: 0/6 nodes are "
        "available: 6 Preemption is not helpful for scheduling."
    )
    pending = []
    for i in range(3):
        pc = drain + timedelta(seconds=2 + i * 4)
        pn = f"{rs_name}-{s.suffix()}"
        p = k.pod(
            s,
            ns,
            pn,
            k.owner_of(rs),
            dict(labels, **{"pod-template-hash": pth}),
            spec,
            None,
            None,
            pc,
            "Pending",
            k.pod_conditions(pc, scheduled=False, message=msg),
            [],
        )
        pending.append(p)
        uid = p["metadata"]["uid"]
        s.add(
            p,
            k.event(
                s,
                ns,
                "ReplicaSet",
                rs_name,
                "SuccessfulCreate",
                f"Created pod: {pn}",
                pc,
                component="replicaset-controller",
                api_version="apps/v1",
                involved_uid=rs["metadata"]["uid"],
            ),
            k.event(
                s,
                ns,
                "Pod",
                pn,
                "FailedScheduling",
                msg,
                pc,
                s.ago(minutes=2, seconds=10 + i * 7),
                count=9,
                etype="Warning",
                component="default-scheduler",
                involved_uid=uid,
            ),
            k.event(
                s,
                ns,
                "Pod",
                pn,
                "NotTriggerScaleUp",
                "pod didn't trigger scale-up: 2 node(s) didn't match Pod's node affinity/selector, "
                "1 max node group size reached",
                pc + timedelta(seconds=10),
                s.ago(minutes=1, seconds=i * 9),
                count=74,
                component="cluster-autoscaler",
                involved_uid=uid,
            ),
        )
    svc = k.service(
        s,
        ns,
        "tile-cache",
        {"app": "tile-cache"},
        [{"name": "http", "port": 6081, "protocol": "TCP", "targetPort": "http"}],
        dep_created,
    )
    s.add(svc, k.endpoints(s, svc, []))

    # --- geo neighbours: tile-server (front), geocoder (rescheduled fine) -------------------------
    ts = k.healthy_deployment(
        s,
        ns,
        "tile-server",
        f"{ECR}/tile-server:2.4.7",
        3,
        nodes,
        s.ago(days=500),
        s.ago(days=3),
        revision=41,
        memory="512Mi",
        env=[{"name": "CACHE_URL", "value": "http://tile-cache.geo.svc.cluster.local:6081"}],
    )
    k.add_parts(s, ts)
    geo = k.healthy_deployment(
        s,
        ns,
        "geocoder",
        f"{ECR}/geocoder:5.0.3",
        3,
        nodes[1:4],
        s.ago(days=400),
        s.ago(days=5),
        revision=22,
        memory="1Gi",
    )
    for j, p in enumerate(geo["pods"][:2]):
        pc = drain + timedelta(seconds=3 + j)
        p["metadata"]["creationTimestamp"] = k.rfc(pc)
        p["status"]["startTime"] = k.rfc(pc + timedelta(seconds=1))
        p["status"]["containerStatuses"][0]["state"]["running"]["startedAt"] = k.rfc(
            pc + timedelta(seconds=6)
        )
        for cond in p["status"]["conditions"]:
            cond["lastTransitionTime"] = k.rfc(pc + timedelta(seconds=14))
        s.add(
            k.event(
                s,
                ns,
                "Pod",
                p["metadata"]["name"],
                "Scheduled",
                f"Successfully assigned {ns}/{p['metadata']['name']} to {p['spec']['nodeName']}",
                pc,
                component="default-scheduler",
                involved_uid=p["metadata"]["uid"],
            ),
            k.event(
                s,
                ns,
                "ReplicaSet",
                geo["replicaset"]["metadata"]["name"],
                "SuccessfulCreate",
                f"Created pod: {p['metadata']['name']}",
                pc,
                component="replicaset-controller",
                api_version="apps/v1",
                involved_uid=geo["replicaset"]["metadata"]["uid"],
            ),
        )
    k.add_parts(s, geo)
    web = k.healthy_deployment(
        s,
        "web",
        "maps-frontend",
        f"{ECR}/maps-frontend:14.2.0",
        2,
        nodes[2:],
        s.ago(days=600),
        s.ago(days=4),
        revision=207,
        restarts={1: 2},
        memory="256Mi",
    )
    k.add_parts(s, web)
    ca = k.healthy_deployment(
        s,
        "kube-system",
        "cluster-autoscaler",
        "registry.k8s.io/autoscaling/cluster-autoscaler:v1.28.2",
        1,
        nodes[:1],
        s.ago(days=700),
        s.ago(days=5),
        revision=6,
        port=8085,
        readiness_path="/health-check",
        with_service=False,
    )
    k.add_parts(s, ca)

    # --- decoy: GPU training job pending since the morning ----------------------------------------
    jn = "embedding-train-20261206"
    jl = {
        "app": "embedding-train",
        "batch.kubernetes.io/job-name": jn,
        "job-name": jn,
        "batch.kubernetes.io/controller-uid": s.uid("Job", "ml", jn),
        "controller-uid": s.uid("Job", "ml", jn),
    }
    jc = k.container(
        "trainer",
        f"{ECR}/embedding-train:0.9.1",
        cpu="6",
        memory="24Gi",
        command=["python", "train.py", "--epochs", "12"],
    )
    jc["resources"]["limits"]["nvidia.com/gpu"] = "1"
    jc["resources"]["requests"]["nvidia.com/gpu"] = "1"
    jspec = k.pod_spec(
        [jc],
        restart="Never",
        tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    )
    jcreated = s.ago(hours=5, minutes=20)
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": k.meta(s, "Job", jn, "ml", jcreated, labels={"app": "embedding-train"}),
        "spec": {
            "backoffLimit": 2,
            "completions": 1,
            "parallelism": 1,
            "completionMode": "NonIndexed",
            "selector": {
                "matchLabels": {"batch.kubernetes.io/controller-uid": s.uid("Job", "ml", jn)}
            },
            "template": {"metadata": {"labels": jl}, "spec": jspec},
        },
        "status": {"startTime": k.rfc(jcreated), "active": 1, "ready": 0},
    }
    jpn = f"{jn}-{s.suffix()}"
    jmsg = (
        "0/6 nodes are available: 6 Insufficient nvidia.com/gpu. preemption: 0/6 nodes are "
        "available: "
        "6 No preemption victims found for incoming pod."
    )
    jp = k.pod(
        s,
        "ml",
        jpn,
        {"apiVersion": "batch/v1", "kind": "Job", "name": jn, "uid": job["metadata"]["uid"]},
        jl,
        jspec,
        None,
        None,
        jcreated,
        "Pending",
        k.pod_conditions(jcreated, scheduled=False, message=jmsg),
        [],
        qos="Burstable",
    )
    s.add(
        job,
        jp,
        k.event(
            s,
            "ml",
            "Pod",
            jpn,
            "FailedScheduling",
            jmsg,
            s.ago(minutes=58),
            s.ago(seconds=25),
            count=64,
            etype="Warning",
            component="default-scheduler",
            involved_uid=jp["metadata"]["uid"],
        ),
        k.event(
            s,
            "ml",
            "Pod",
            jpn,
            "NotTriggerScaleUp",
            "pod didn't trigger scale-up: 3 Insufficient nvidia.com/gpu",
            s.ago(minutes=59),
            s.ago(seconds=40),
            count=355,
            component="cluster-autoscaler",
            involved_uid=jp["metadata"]["uid"],
        ),
    )

    # --- logs -------------------------------------------------------------------------------------
    t = s.ago(hours=2)
    i = 0
    while t < s.now:
        p = ts["pods"][i % 3]
        pn = p["metadata"]["name"]
        z, x, y = 12 + i % 5, s.rng.randint(1000, 4000), s.rng.randint(1000, 3000)
        if t < drain:
            s.log(
                t,
                ns,
                pn,
                "tile-server",
                "info",
                f"GET /tiles/{z}/{x}/{y}.png 200 cache=HIT {s.rng.randint(3, 18)}ms",
                service="tile-server",
                **{"http.response.status_code": 200},
            )
        else:
            s.log(
                t,
                ns,
                pn,
                "tile-server",
                "error",
                f"GET /tiles/{z}/{x}/{y}.png 502 upstream error: dial tcp 172.20.91.14:6081: "
                "connect: connection refused",
                service="tile-server",
                **{"http.response.status_code": 502, "error.type": "ECONNREFUSED"},
            )
        t += timedelta(seconds=s.rng.randint(6, 16))
        i += 1
    cap = ca["pods"][0]["metadata"]["name"]
    t = drain + timedelta(seconds=15)
    while t < s.now:
        hh = t.strftime("%H:%M:%S")
        for p in pending:
            s.log(
                t,
                "kube-system",
                cap,
                "cluster-autoscaler",
                "info",
                f"I1206 {hh}.{s.rng.randint(100000, 999999)}       1 klogx.go:87] Pod "
                f"geo/{p['metadata']['name']} is "
                f"unschedulable",
                service="cluster-autoscaler",
            )
        s.log(
            t,
            "kube-system",
            cap,
            "cluster-autoscaler",
            "info",
            f"I1206 {hh}.{s.rng.randint(100000, 999999)}       1 orchestrator.go:157] Skipping "
            "node group "
            f"eks-ng-c-7ac5e3b1-9d20-4f6e-b8c2-11f04ad9e6b2 - max size reached",
            service="cluster-autoscaler",
        )
        t += timedelta(minutes=3)
    s.log(
        drain - timedelta(minutes=1),
        "kube-system",
        cap,
        "cluster-autoscaler",
        "info",
        f"I1206 {(drain - timedelta(minutes=1)).strftime('%H:%M:%S')}.004417       1 "
        "static_autoscaler.go:548] "
        f"Scale down status: lastScaleUpTime=2026-12-06 03:11:40 +0000 UTC",
        service="cluster-autoscaler",
    )

    # --- metrics ----------------------------------------------------------------------------------
    pts = s.steps(120)
    ksm = {"job": "kube-state-metrics"}
    gone = [
        "ip-10-60-128-17.eu-west-1.compute.internal",
        "ip-10-60-128-44.eu-west-1.compute.internal",
        "ip-10-60-128-71.eu-west-1.compute.internal",
    ]
    for n in nn + gone:
        zone = (
            "eu-west-1c"
            if n in gone
            else next(x for x in nodes if x["metadata"]["name"] == n)["metadata"]["labels"][
                "topology.kubernetes.io/zone"
            ]
        )
        s.series(
            "kube_node_labels",
            "gauge",
            "Kubernetes labels converted to Prometheus labels.",
            dict(ksm, node=n, label_topology_kubernetes_io_zone=zone),
            [(t, 1) for t in pts if n not in gone or t < drain + timedelta(minutes=3)],
        )
    s.series(
        "kube_deployment_status_replicas_available",
        "gauge",
        "The number of available replicas per deployment.",
        dict(ksm, namespace=ns, deployment="tile-cache"),
        [(t, 3 if t < drain else 0) for t in pts],
    )
    s.series(
        "kube_deployment_status_replicas_available",
        "gauge",
        "",
        dict(ksm, namespace=ns, deployment="geocoder"),
        [(t, 3 if t < drain or t > drain + timedelta(minutes=1) else 1) for t in pts],
    )
    for p in pending:
        s.series(
            "kube_pod_status_phase",
            "gauge",
            "The pods current phase.",
            dict(ksm, namespace=ns, pod=p["metadata"]["name"], phase="Pending"),
            [(t, 1) for t in pts if t > drain],
        )
    s.series(
        "kube_pod_status_phase",
        "gauge",
        "",
        dict(ksm, namespace="ml", pod=jpn, phase="Pending"),
        [(t, 1) for t in pts],
    )
    for code in ("200", "502"):
        acc = 0
        vals = []
        for t in pts:
            if code == "200":
                acc += 5400 if t < drain else 0
            else:
                acc += 0 if t < drain else 5100
            vals.append((t, acc))
        s.series(
            "http_requests_total",
            "counter",
            "Total HTTP requests.",
            {"job": "tile-server", "namespace": ns, "service": "tile-server", "code": code},
            vals,
        )

    s.write(
        root,
        {
            "title": "Map tiles blank, tile-cache has no running pods",
            "report": "map tiles are blank since ~09:05 (tile-server returning 502s). tile-cache "
            "shows 0/3 and all "
            "its pods are Pending. I bet the ML training job is hogging the cluster again, it's "
            "been Pending "
            "and spamming events all morning. can we just kill it?\n",
            "truth": {
                "category": "unschedulable",
                "culprit": {"kind": "Deployment", "namespace": "geo", "name": "tile-cache"},
                "evidence": [
                    "didn't match Pod's node affinity/selector",
                    "topology.kubernetes.io/zone: eu-west-1c",
                    "max node group size reached",
                    "FailedScheduling",
                ],
                "fix": "No node is left in eu-west-1c (the zone's nodes were drained and removed, "
                "its node group is at "
                "max 0); drop or widen tile-cache's nodeSelector (eu-west-1a/b) or bring ng-c "
                "back. The GPU "
                "job is unrelated (it waits for nvidia.com/gpu).",
            },
        },
    )
