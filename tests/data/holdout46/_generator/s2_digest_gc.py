"""2. image_pull: a digest-pinned image that Harbor's retention policy deleted; only the pods
rescheduled off the replaced workers have to pull it, and the manifest is gone."""

from __future__ import annotations

from datetime import timedelta

from . import _kit as k

SID = "ledger-writer-digest-gone"

REG = "harbor.kestrelpay.internal"


def _crio(obj) -> None:
    if isinstance(obj, dict):
        for key, v in obj.items():
            if key == "containerID" and isinstance(v, str):
                obj[key] = v.replace("containerd://", "cri-o://")
            else:
                _crio(v)
    elif isinstance(obj, list):
        for v in obj:
            _crio(v)


def build(root) -> None:
    s = k.Scenario(SID, "2026-12-03T07:55:00Z", 4602)
    for ns in ("default", "kube-system", "payments", "risk", "monitoring"):
        s.add(k.namespace(s, ns, s.ago(days=410)))

    def worker(n: int, created, zone: str, images: list, unschedulable=False):
        return k.node(
            s,
            f"k8s-worker-{n:02d}",
            created,
            zone,
            "r6a.2xlarge",
            cpu="8",
            memory="65023000Ki",
            alloc_cpu="7800m",
            alloc_mem="63871000Ki",
            runtime="cri-o://1.28.2",
            kubelet="v1.28.4",
            extra_labels={"node-role.kubernetes.io/worker": "", "kestrelpay.io/pool": "general"},
            images=images,
            internal_ip=f"10.12.{ord(zone[-1]) - 96}.{40 + n}",
            unschedulable=unschedulable,
        )

    ledger_digest = s.digest("ledger-writer", "1.42.0")
    ledger_img = f"{REG}/payments/ledger-writer@{ledger_digest}"
    fx_img = f"{REG}/payments/fx-rates:3.2.1"
    scorer_img = f"{REG}/risk/fraud-scorer:7.0.4"
    gw_img = f"{REG}/payments/payments-gateway:2.19.0"
    base_images = [
        {
            "names": [
                f"{REG}/library/node-exporter@" + s.digest("ne"),
                f"{REG}/library/node-exporter:v1.7.0",
            ],
            "sizeBytes": 23111874,
        }
    ]
    ledger_cached = {"names": [ledger_img], "sizeBytes": 212558431}
    others = [
        {"names": [fx_img, f"{REG}/payments/fx-rates@" + s.digest(fx_img)], "sizeBytes": 141220311},
        {
            "names": [gw_img, f"{REG}/payments/payments-gateway@" + s.digest(gw_img)],
            "sizeBytes": 167002115,
        },
        {
            "names": [scorer_img, f"{REG}/risk/fraud-scorer@" + s.digest(scorer_img)],
            "sizeBytes": 880441201,
        },
    ]
    old_t = s.ago(days=96)
    w1 = worker(1, old_t, "eu-west-1a", [*base_images, ledger_cached, *others])
    w2 = worker(2, old_t, "eu-west-1b", base_images + others)
    w5 = worker(5, old_t + timedelta(days=20), "eu-west-1c", [*base_images, ledger_cached, *others])
    w6 = worker(6, old_t + timedelta(days=20), "eu-west-1a", base_images + others[:2])
    drain3 = s.ago(minutes=57)
    drain4 = s.ago(minutes=52)
    new9_t = s.ago(minutes=46)
    new10_t = s.ago(minutes=44, seconds=30)
    w9 = worker(9, new9_t, "eu-west-1b", base_images + others[:1])
    w10 = worker(10, new10_t, "eu-west-1c", base_images + others[1:2])
    taint = [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": None}]
    w3 = worker(3, old_t, "eu-west-1b", [*base_images, ledger_cached, *others], unschedulable=True)
    w4 = worker(4, old_t, "eu-west-1c", [*base_images, ledger_cached, *others], unschedulable=True)
    w3["metadata"]["labels"]["kestrelpay.io/patch-state"] = "drained"
    w4["metadata"]["labels"]["kestrelpay.io/patch-state"] = "drained"
    for w, t in ((w3, drain3), (w4, drain4)):
        w["spec"]["taints"] = [dict(taint[0], timeAdded=k.rfc(t))]
    nodes = [w1, w2, w3, w4, w5, w6, w9, w10]
    s.add(*nodes)
    for w, t in ((w3, drain3), (w4, drain4)):
        n = w["metadata"]["name"]
        s.add(
            k.event(
                s,
                "",
                "Node",
                n,
                "NodeNotSchedulable",
                f"Node {n} status is now: NodeNotSchedulable",
                t,
                host=n,
                involved_uid=w["metadata"]["uid"],
            )
        )
    for nd, t in ((w9, new9_t), (w10, new10_t)):
        nm = nd["metadata"]["name"]
        uid = nd["metadata"]["uid"]
        s.add(
            k.event(
                s, "", "Node", nm, "Starting", "Starting kubelet.", t, host=nm, involved_uid=uid
            ),
            k.event(
                s,
                "",
                "Node",
                nm,
                "RegisteredNode",
                f"Node {nm} event: Registered Node {nm} in Controller",
                t + timedelta(seconds=4),
                component="node-controller",
                involved_uid=uid,
            ),
            k.event(
                s,
                "",
                "Node",
                nm,
                "NodeReady",
                f"Node {nm} status is now: NodeReady",
                t + timedelta(seconds=38),
                host=nm,
                involved_uid=uid,
            ),
        )

    # --- culprit: ledger-writer ----------------------------------------------------------------
    ns = "payments"
    labels = {"app": "ledger-writer", "app.kubernetes.io/part-of": "ledger"}
    c = k.container(
        "ledger-writer",
        ledger_img,
        ports=[{"name": "metrics", "containerPort": 9102, "protocol": "TCP"}],
        cpu="500m",
        memory="1Gi",
        limit_memory="1536Mi",
        env=[
            {"name": "KAFKA_BOOTSTRAP", "value": "kafka-ledger.kestrelpay.internal:9093"},
            {"name": "KAFKA_GROUP_ID", "value": "ledger-writer"},
            {"name": "LEDGER_TOPIC", "value": "ledger.postings"},
            {"name": "PG_HOST", "value": "ledger-db.cluster-cx81.eu-west-1.rds.amazonaws.com"},
        ],
        readiness=k.http_probe("/healthz", "metrics", delay=10),
    )
    c["imagePullPolicy"] = "IfNotPresent"
    spec = k.pod_spec(
        [c],
        sa="ledger-writer",
        affinity={
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 100,
                        "podAffinityTerm": {
                            "topologyKey": "kubernetes.io/hostname",
                            "labelSelector": {"matchLabels": {"app": "ledger-writer"}},
                        },
                    }
                ]
            }
        },
    )
    spec["imagePullSecrets"] = [{"name": "harbor-pull"}]
    dep_created = s.ago(days=380)
    rs_created = s.ago(days=50)
    dep = k.deployment(
        s,
        ns,
        "ledger-writer",
        4,
        labels,
        spec,
        dep_created,
        31,
        k.deploy_status(
            4,
            2,
            4,
            2,
            33,
            ("True", "NewReplicaSetAvailable", "", rs_created + timedelta(minutes=2)),
            (
                "False",
                "MinimumReplicasUnavailable",
                "Deployment does not have minimum availability.",
                drain4 + timedelta(seconds=1),
            ),
            rs_created,
        ),
        annotations={
            "kestrelpay.io/release": "ledger-writer 1.42.0 (pinned by digest, change CHG-20931)"
        },
    )
    pth = "7f6b9d4c85"
    rs_name = f"ledger-writer-{pth}"
    dep["status"]["conditions"][1]["message"] = (
        f'ReplicaSet "{rs_name}" has successfully progressed.'
    )
    rs = k.replicaset(s, dep, rs_name, pth, 4, 2, rs_created, 31, spec, labels)
    s.add(dep, rs)
    plabels = dict(labels, **{"pod-template-hash": pth})
    running = []
    for nd in (w1, w5):
        pc = s.ago(days=5, hours=7, minutes=running.__len__() * 3)
        st = k.cs_running("ledger-writer", ledger_img, ledger_img, pc + timedelta(seconds=6))
        running.append(
            k.pod(
                s,
                ns,
                f"{rs_name}-{s.suffix()}",
                k.owner_of(rs),
                plabels,
                spec,
                nd["metadata"]["name"],
                nd["status"]["addresses"][0]["address"],
                pc,
                "Running",
                k.pod_conditions(pc, ready_at=pc + timedelta(seconds=19)),
                [st],
            )
        )
    s.add(*running)
    stuck = []
    mf = (
        f"reading manifest {ledger_digest} in {REG}/payments/ledger-writer: manifest unknown: "
        "manifest unknown"
    )
    for nd, t, _gone in ((w9, drain3, "k8s-worker-03"), (w10, drain4, "k8s-worker-04")):
        nm = nd["metadata"]["name"]
        pname = f"{rs_name}-{s.suffix()}"
        sched = max(
            t + timedelta(seconds=2),
            k.parse(nd["metadata"]["creationTimestamp"]) + timedelta(seconds=45),
        )
        st = k.cs_waiting(
            "ledger-writer",
            ledger_img,
            "ImagePullBackOff",
            f'Back-off pulling image "{ledger_img}"',
        )
        p = k.pod(
            s,
            ns,
            pname,
            k.owner_of(rs),
            plabels,
            spec,
            nm,
            nd["status"]["addresses"][0]["address"],
            t + timedelta(seconds=1),
            "Pending",
            k.pod_conditions(
                t + timedelta(seconds=1),
                ready=False,
                message="containers with unready status: [ledger-writer]",
            ),
            [st],
        )
        p["status"]["startTime"] = k.rfc(sched)
        stuck.append(p)
        uid = p["metadata"]["uid"]
        fp = "spec.containers{ledger-writer}"
        n = 9 if nm.endswith("09") else 8
        cordoned = 1 if nm.endswith("09") else 2
        s.add(
            k.event(
                s,
                ns,
                "ReplicaSet",
                rs_name,
                "SuccessfulCreate",
                f"Created pod: {pname}",
                t + timedelta(seconds=1),
                component="replicaset-controller",
                api_version="apps/v1",
                involved_uid=rs["metadata"]["uid"],
            ),
            k.event(
                s,
                ns,
                "Pod",
                pname,
                "FailedScheduling",
                f"0/6 nodes are available: {cordoned} node(s) were unschedulable, {6 - cordoned} "
                "Insufficient memory. "
                f"preemption: 0/6 nodes are available: {cordoned} Preemption is not helpful for "
                "scheduling, "
                f"{6 - cordoned} No preemption victims found for incoming pod.",
                t + timedelta(seconds=1),
                t + timedelta(seconds=40),
                count=3,
                etype="Warning",
                component="default-scheduler",
                involved_uid=uid,
            )
            if sched - t > timedelta(seconds=30)
            else k.event(
                s,
                ns,
                "Pod",
                pname,
                "Scheduled",
                f"Successfully assigned {ns}/{pname} to {nm}",
                sched - timedelta(seconds=1),
                component="default-scheduler",
                involved_uid=uid,
            ),
            k.event(
                s,
                ns,
                "Pod",
                pname,
                "Pulling",
                f'Pulling image "{ledger_img}"',
                sched,
                s.ago(minutes=4 + n % 3),
                count=n,
                host=nm,
                field_path=fp,
                involved_uid=uid,
            ),
            k.event(
                s,
                ns,
                "Pod",
                pname,
                "Failed",
                f'Failed to pull image "{ledger_img}": rpc error: code = Unknown desc = {mf}',
                sched + timedelta(seconds=1),
                s.ago(minutes=4 + n % 3, seconds=-1),
                count=n,
                etype="Warning",
                host=nm,
                field_path=fp,
                involved_uid=uid,
            ),
            k.event(
                s,
                ns,
                "Pod",
                pname,
                "Failed",
                "Error: ErrImagePull",
                sched + timedelta(seconds=1),
                s.ago(minutes=4 + n % 3, seconds=-1),
                count=n,
                etype="Warning",
                host=nm,
                field_path=fp,
                involved_uid=uid,
            ),
            k.event(
                s,
                ns,
                "Pod",
                pname,
                "BackOff",
                f'Back-off pulling image "{ledger_img}"',
                sched + timedelta(seconds=2),
                s.ago(seconds=35 + n),
                count=170 + n,
                host=nm,
                field_path=fp,
                involved_uid=uid,
            ),
            k.event(
                s,
                ns,
                "Pod",
                pname,
                "Failed",
                "Error: ImagePullBackOff",
                sched + timedelta(seconds=2),
                s.ago(seconds=35 + n),
                count=170 + n,
                etype="Warning",
                host=nm,
                field_path=fp,
                involved_uid=uid,
            ),
        )
        if sched - t > timedelta(seconds=30):
            s.add(
                k.event(
                    s,
                    ns,
                    "Pod",
                    pname,
                    "Scheduled",
                    f"Successfully assigned {ns}/{pname} to {nm}",
                    sched - timedelta(seconds=1),
                    component="default-scheduler",
                    involved_uid=uid,
                )
            )
    s.add(*stuck)
    svc = k.service(
        s,
        ns,
        "ledger-writer",
        {"app": "ledger-writer"},
        [{"name": "metrics", "port": 9102, "protocol": "TCP", "targetPort": "metrics"}],
        dep_created,
    )
    ep = k.endpoints(s, svc, running)
    s.add(svc, ep)

    # --- neighbours: fx-rates (rolled out 3 h ago, one pod re-pulled on worker-09), gateway -------
    fx = k.healthy_deployment(
        s,
        ns,
        "fx-rates",
        fx_img,
        2,
        [w2, w9],
        s.ago(days=200),
        s.ago(hours=3, minutes=10),
        revision=12,
        memory="384Mi",
    )
    fx_moved = fx["pods"][1]
    t = drain3 + timedelta(seconds=1)
    fx_moved["metadata"]["creationTimestamp"] = k.rfc(t)
    st_t = new9_t + timedelta(seconds=52)
    fx_moved["status"]["startTime"] = k.rfc(st_t)
    fx_moved["status"]["containerStatuses"][0]["state"]["running"]["startedAt"] = k.rfc(
        st_t + timedelta(seconds=9)
    )
    for cond in fx_moved["status"]["conditions"]:
        cond["lastTransitionTime"] = k.rfc(st_t + timedelta(seconds=15))
    s.add(
        k.event(
            s,
            ns,
            "Pod",
            fx_moved["metadata"]["name"],
            "Pulled",
            f'Successfully pulled image "{fx_img}" in 7.903s (7.903s including waiting)',
            st_t + timedelta(seconds=8),
            host="k8s-worker-09",
            field_path="spec.containers{fx-rates}",
            involved_uid=fx_moved["metadata"]["uid"],
        ),
        k.event(
            s,
            ns,
            "Pod",
            fx_moved["metadata"]["name"],
            "Started",
            "Started container fx-rates",
            st_t + timedelta(seconds=9),
            host="k8s-worker-09",
            field_path="spec.containers{fx-rates}",
            involved_uid=fx_moved["metadata"]["uid"],
        ),
    )
    k.add_parts(s, fx)
    gw = k.healthy_deployment(
        s,
        ns,
        "payments-gateway",
        gw_img,
        3,
        [w1, w2, w10],
        s.ago(days=300),
        s.ago(days=3),
        revision=44,
        cpu="300m",
        memory="512Mi",
    )
    g_moved = gw["pods"][2]
    g_moved["metadata"]["creationTimestamp"] = k.rfc(drain4 + timedelta(seconds=1))
    gst = new10_t + timedelta(seconds=50)
    g_moved["status"]["startTime"] = k.rfc(gst)
    g_moved["status"]["containerStatuses"][0]["state"]["running"]["startedAt"] = k.rfc(
        gst + timedelta(seconds=11)
    )
    for cond in g_moved["status"]["conditions"]:
        cond["lastTransitionTime"] = k.rfc(gst + timedelta(seconds=20))
    s.add(
        k.event(
            s,
            ns,
            "Pod",
            g_moved["metadata"]["name"],
            "Pulled",
            f'Successfully pulled image "{gw_img}" in 9.114s (9.114s including waiting)',
            gst + timedelta(seconds=10),
            host="k8s-worker-10",
            field_path="spec.containers{payments-gateway}",
            involved_uid=g_moved["metadata"]["uid"],
        )
    )
    k.add_parts(s, gw)
    fraud = k.healthy_deployment(
        s,
        "risk",
        "fraud-scorer",
        scorer_img,
        2,
        [w5, w6],
        s.ago(days=150),
        s.ago(days=6),
        revision=19,
        cpu="1",
        memory="3Gi",
        restarts={0: 1},
    )
    last = fraud["pods"][0]["status"]["containerStatuses"][0]["lastState"]["terminated"]
    last["reason"] = "OOMKilled"
    k.add_parts(s, fraud)
    prom = k.healthy_deployment(
        s,
        "monitoring",
        "kafka-exporter",
        f"{REG}/library/kafka-exporter:v1.7.0",
        1,
        [w6],
        s.ago(days=300),
        s.ago(days=6),
        port=9308,
        readiness_path="/healthz",
    )
    k.add_parts(s, prom)
    for o in s.objects:
        if o["kind"] == "Pod":
            _crio(o.get("status"))

    # --- logs ----------------------------------------------------------------------------------
    t = s.ago(hours=3)
    i = 0
    lag_start = drain3
    while t < s.now:
        for p in running:
            pn = p["metadata"]["name"]
            if t < lag_start:
                s.log(
                    t,
                    ns,
                    pn,
                    "ledger-writer",
                    "info",
                    f"committed batch partition={s.rng.randint(0, 11)} "
                    f"postings={s.rng.randint(180, 260)} "
                    f"offset={1880000 + i * 230} took_ms={s.rng.randint(40, 90)}",
                )
            else:
                s.log(
                    t,
                    ns,
                    pn,
                    "ledger-writer",
                    "info",
                    f"committed batch partition={s.rng.randint(0, 11)} "
                    f"postings={s.rng.randint(480, 500)} "
                    f"offset={1880000 + i * 230} took_ms={s.rng.randint(160, 340)}",
                )
        if t >= lag_start and i % 4 == 0:
            s.log(
                t,
                ns,
                running[i % 2]["metadata"]["name"],
                "ledger-writer",
                "warn",
                "consumer lag high group=ledger-writer topic=ledger.postings "
                f"lag={int((t - lag_start).total_seconds() * 21)} "
                f"assigned_partitions=6",
            )
        t += timedelta(seconds=45)
        i += 1
    s.log(
        drain3 + timedelta(seconds=8),
        ns,
        running[0]["metadata"]["name"],
        "ledger-writer",
        "info",
        "[Consumer clientId=ledger-writer-1, groupId=ledger-writer] Request joining group due to: "
        "group is already rebalancing",
    )
    s.log(
        drain3 + timedelta(seconds=11),
        ns,
        running[0]["metadata"]["name"],
        "ledger-writer",
        "info",
        "[Consumer clientId=ledger-writer-1, groupId=ledger-writer] Adding newly assigned "
        "partitions: ledger.postings-0, "
        "ledger.postings-1, ledger.postings-2, ledger.postings-3, ledger.postings-4, "
        "ledger.postings-5",
    )
    for p in fraud["pods"]:
        tt = s.ago(hours=2)
        while tt < s.now:
            s.log(
                tt,
                "risk",
                p["metadata"]["name"],
                "fraud-scorer",
                "warn",
                "model cache miss ratio 0.31 above 0.25, warming from s3://kp-risk-models/fraud/v7",
            )
            tt += timedelta(minutes=17)

    # --- metrics ----------------------------------------------------------------------------------
    pts = s.steps(180)
    ksm = {"job": "kube-state-metrics"}
    s.series(
        "kube_deployment_status_replicas_available",
        "gauge",
        "The number of available replicas per deployment.",
        dict(ksm, namespace=ns, deployment="ledger-writer"),
        [(t, 4 if t < drain3 else (3 if t < drain4 else 2)) for t in pts],
    )
    s.series(
        "kube_deployment_status_replicas_available",
        "gauge",
        "",
        dict(ksm, namespace=ns, deployment="payments-gateway"),
        [(t, 3 if t < drain4 or t > new10_t + timedelta(minutes=2) else 2) for t in pts],
    )
    s.series(
        "kube_deployment_status_replicas_available",
        "gauge",
        "",
        dict(ksm, namespace=ns, deployment="fx-rates"),
        [(t, 2 if t < drain3 or t > new9_t + timedelta(minutes=2) else 1) for t in pts],
    )
    for p in stuck:
        sched = k.parse(p["status"]["startTime"])
        s.series(
            "kube_pod_container_status_waiting_reason",
            "gauge",
            "Describes the reason the container is currently in waiting state.",
            dict(
                ksm,
                namespace=ns,
                pod=p["metadata"]["name"],
                container="ledger-writer",
                reason="ImagePullBackOff",
            ),
            [(t, 1) for t in pts if t >= sched + timedelta(seconds=60)],
        )
    s.series(
        "kube_node_spec_unschedulable",
        "gauge",
        "Whether a node can schedule new pods.",
        dict(ksm, node="k8s-worker-03"),
        [(t, 0 if t < drain3 else 1) for t in pts if t < drain3 + timedelta(minutes=6)],
    )
    s.series(
        "kube_node_spec_unschedulable",
        "gauge",
        "",
        dict(ksm, node="k8s-worker-04"),
        [(t, 0 if t < drain4 else 1) for t in pts if t < drain4 + timedelta(minutes=6)],
    )
    for part in range(3):
        vals = []
        for t in pts:
            if t < drain3:
                v = s.rng.randint(0, 40)
            else:
                v = int((t - drain3).total_seconds() * 3.5) + s.rng.randint(0, 30) + part * 20
            vals.append((t, v))
        s.series(
            "kafka_consumergroup_lag",
            "gauge",
            "Current Approximate Lag of a ConsumerGroup at Topic/Partition",
            {
                "job": "kafka-exporter",
                "consumergroup": "ledger-writer",
                "topic": "ledger.postings",
                "partition": str(part),
            },
            vals,
        )

    s.write(
        root,
        {
            "title": "ledger-writer half down after the overnight worker replacement",
            "report": "ledger-writer has been at 2/4 since the patching window drained "
            "k8s-worker-03 and -04 "
            "and brought up new workers. the two new pods never start and kafka lag on "
            "ledger.postings keeps "
            "climbing. my guess is the new workers can't reach harbor (new image, maybe the proxy "
            "settings are missing?). can you confirm\n",
            "truth": {
                "category": "image_pull",
                "culprit": {"kind": "Deployment", "namespace": "payments", "name": "ledger-writer"},
                "evidence": [
                    "manifest unknown",
                    "ImagePullBackOff",
                    ledger_digest,
                    (
                        'Successfully pulled image "harbor.kestrelpay.internal/payments/fx-rates:3'
                        '.2.1"'
                    ),
                ],
                "fix": "The digest ledger-writer is pinned to was deleted from Harbor (tag "
                "retention); re-push or "
                "restore 1.42.0 (or pin the Deployment to a digest that exists) and exempt "
                "released "
                "artifacts from the retention rule. The new workers pull other images from Harbor "
                "fine.",
            },
        },
    )
