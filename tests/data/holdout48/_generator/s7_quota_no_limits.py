"""7. quota_exceeded: a quota on limits.* with no LimitRange refuses a Deployment that declares no
resources."""

from __future__ import annotations

import datetime as dt

from ._kit import (
    Cluster,
    Scenario,
    _with_hash,
    container,
    deployment,
    env,
    http_probe,
    iso,
    iso_ms,
    namespace,
    node,
    pod,
    replicaset,
    running,
    suffix,
    template,
    uid,
)

SID = "exporter-quota-no-limits"

REG = "europe-west3-docker.pkg.dev/bramble-data/apps"


def quota(ns: str, name: str, hard: dict, used: dict, created: dt.datetime) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": uid(f"{ns}/quota/{name}"),
            "creationTimestamp": iso(created),
        },
        "spec": {"hard": hard},
        "status": {"hard": hard, "used": used},
    }


def build() -> Scenario:
    sc = Scenario(
        SID,
        "New report-exporter Deployment shows 0/2 with no pods",
        "2026-09-15T10:20:00Z",
        "I deployed report-exporter to analytics ~30 min ago (same manifest we run in "
        "warehouse), kubectl says 0/2 and there are no pods at all, not even Pending. Is the "
        "scheduler stuck? I also see trino pods pending in warehouse so maybe the cluster is "
        "just full?\n",
        {
            "category": "quota_exceeded",
            "culprit": {"kind": "Deployment", "namespace": "analytics", "name": "report-exporter"},
            "evidence": [
                "failed quota: analytics-compute: must specify limits.cpu for: exporter; "
                "limits.memory for: exporter",
                "FailedCreate",
                "limits.cpu",
                "resources: {}",
            ],
            "fix": "Declare resources on report-exporter's container (limits.cpu and "
            "limits.memory, plus requests), or add a LimitRange with defaults to analytics as "
            "warehouse has; the quota itself has room.",
        },
    )
    now = sc.now
    old = now - dt.timedelta(days=410)
    sc.add(namespace("analytics", old, {"team": "analytics"}))
    sc.add(namespace("warehouse", old, {"team": "data-platform"}))
    sc.add(namespace("kube-system", old))
    nodes = []
    for i, s in enumerate(("c81b", "k2m9", "r7tq", "x4vd")):
        name = f"gke-bramble-data-default-pool-91ac3e70-{s}"
        ip = f"10.156.0.{12 + i}"
        nodes.append((name, ip, i + 1))
        sc.add(
            node(
                name,
                created=now - dt.timedelta(days=40 + i),
                now=now,
                cpu="16",
                memory="65849420Ki",
                alloc_cpu="15890m",
                alloc_memory="60134988Ki",
                internal_ip=ip,
                kubelet="v1.30.4-gke.1348000",
                os_image="Container-Optimized OS from Google",
                kernel="6.1.100+",
                runtime="containerd://1.7.22",
                labels={
                    "cloud.google.com/gke-nodepool": "default-pool",
                    "node.kubernetes.io/instance-type": "n2-highmem-16"
                    if False
                    else "n2-standard-16",
                    "topology.kubernetes.io/zone": "europe-west3-" + "abc"[i % 3],
                },
                provider_id=f"gce://bramble-data/europe-west3-{'abc'[i % 3]}/{name}",
            )
        )
    cl = Cluster(sc, "10.60")

    # ---------------------------------------------------------- analytics: quota without LimitRange
    sc.add(
        quota(
            "analytics",
            "analytics-compute",
            {"limits.cpu": "24", "limits.memory": "48Gi", "pods": "40"},
            {"limits.cpu": "10", "limits.memory": "20Gi", "pods": "8"},
            old,
        )
    )
    for name, img, reps, cpu, mem, port in (
        ("dashboards-api", "dashboards-api:2.7.3", 3, "1", "2Gi", 8080),
        ("query-runner", "query-runner:0.22.1", 2, "2", "4Gi", 8080),
        ("superset", "superset:4.0.2-bramble3", 2, "1", "2Gi", 8088),
        ("celery-beat", "superset:4.0.2-bramble3", 1, "1", "2Gi", None),
    ):
        cl.healthy(
            "analytics",
            name,
            image=f"{REG}/{img}",
            nodes=nodes,
            replicas=reps,
            created=old,
            rollout=now - dt.timedelta(days=3 + reps, hours=reps * 2),
            revision=10 + reps * 3,
            port=port,
            requests={"cpu": "250m", "memory": "1Gi"},
            limits={"cpu": cpu, "memory": mem},
        )

    ex_img = f"{REG}/report-exporter:1.3.0"
    ex_c = container(
        "exporter",
        ex_img,
        ports=[8080],
        env=env(
            EXPORT_BUCKET="gs://bramble-reports-prod",
            WAREHOUSE_DSN="trino://trino.warehouse.svc:8080/hive",
        ),
        readiness=http_probe("/healthz", 8080),
    )
    ex_tpl = template({"app": "report-exporter"}, [ex_c], service_account="report-exporter")
    created = now.replace(hour=9, minute=48, second=7)
    h = suffix("rexp-a", 10)
    rsn = f"report-exporter-{h}"
    msg = (
        f'pods "{rsn}-" is forbidden: failed quota: analytics-compute: must specify limits.cpu '
        "for: exporter; limits.memory for: exporter"
    )
    fc = {
        "type": "ReplicaFailure",
        "status": "True",
        "reason": "FailedCreate",
        "message": msg,
        "lastUpdateTime": iso(created + dt.timedelta(seconds=1)),
        "lastTransitionTime": iso(created + dt.timedelta(seconds=1)),
    }
    dep = deployment(
        "analytics",
        "report-exporter",
        created=created,
        replicas=2,
        tpl=ex_tpl,
        revision=1,
        generation=1,
        status={
            "unavailableReplicas": 2,
            "conditions": [
                {
                    "type": "Available",
                    "status": "False",
                    "reason": "MinimumReplicasUnavailable",
                    "message": "Deployment does not have minimum availability.",
                    "lastUpdateTime": iso(created),
                    "lastTransitionTime": iso(created),
                },
                {
                    "type": "Progressing",
                    "status": "False",
                    "reason": "ProgressDeadlineExceeded",
                    "message": f'ReplicaSet "{rsn}" has timed out progressing.',
                    "lastUpdateTime": iso(created + dt.timedelta(seconds=601)),
                    "lastTransitionTime": iso(created + dt.timedelta(seconds=601)),
                },
                fc,
            ],
        },
    )
    dep["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] = (
        '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"name":"report-exporter",'
        '"namespace":"analytics"},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"report-exporter"}},'
        '"template":{"metadata":{"labels":{"app":"report-exporter"}},"spec":{"containers":[{"env":[{"name":'
        '"EXPORT_BUCKET","value":"gs://bramble-reports-prod"},{"name":"WAREHOUSE_DSN","value":'
        '"trino://trino.warehouse.svc:8080/hive"}],"image":"'
        + ex_img
        + '","name":"exporter","ports":'
        '[{"containerPort":8080}],"readinessProbe":{"httpGet":{"path":"/healthz","port":8080}}}],'
        '"serviceAccountName":"report-exporter"}}}}\n'
    )
    sc.add(dep)
    rs = replicaset(
        "analytics",
        "report-exporter",
        tpl=ex_tpl,
        h=h,
        revision=1,
        created=created,
        replicas=2,
        ready=0,
        conditions=[{k: v for k, v in fc.items() if k != "lastUpdateTime"}],
    )
    rs["status"] = {
        "replicas": 0,
        "observedGeneration": 1,
        "conditions": rs["status"]["conditions"],
    }
    sc.add(rs)
    sc.event(
        "Deployment",
        "analytics",
        "report-exporter",
        "ScalingReplicaSet",
        f"Scaled up replica set {rsn} to 2",
        first=created,
        component="deployment-controller",
    )
    sc.event(
        "ReplicaSet",
        "analytics",
        rsn,
        "FailedCreate",
        "Error creating: " + msg,
        type_="Warning",
        count=19,
        first=created + dt.timedelta(seconds=1),
        last=now - dt.timedelta(minutes=4, seconds=31),
        component="replicaset-controller",
    )
    from ._kit import endpoints, service

    sc.add(
        service(
            "analytics",
            "report-exporter",
            selector={"app": "report-exporter"},
            ports=[("http", 80, 8080)],
            cluster_ip="10.64.9.201",
            created=created,
        )
    )
    sc.add(
        endpoints("analytics", "report-exporter", ready=[], ports=[("http", 8080)], created=created)
    )

    # CronJob whose last night's run failed on its own (decoy)
    jt = template(
        {"app": "nightly-rollup"},
        [
            container(
                "rollup",
                f"{REG}/rollup:5.1.0",
                requests={"cpu": "500m", "memory": "1Gi"},
                limits={"cpu": "2", "memory": "4Gi"},
            )
        ],
    )
    jt["spec"]["restartPolicy"] = "Never"
    sc.add(
        {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": {
                "name": "nightly-rollup",
                "namespace": "analytics",
                "uid": uid("analytics/cronjob/nr"),
                "creationTimestamp": iso(old),
            },
            "spec": {
                "schedule": "30 2 * * *",
                "concurrencyPolicy": "Forbid",
                "suspend": False,
                "jobTemplate": {"spec": {"backoffLimit": 0, "template": jt}},
            },
            "status": {
                "lastScheduleTime": iso(now.replace(hour=2, minute=30, second=0)),
                "lastSuccessfulTime": iso(now - dt.timedelta(days=1, hours=7, minutes=12)),
            },
        }
    )
    jn = "nightly-rollup-29823990"
    sc.add(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": jn,
                "namespace": "analytics",
                "uid": uid(f"analytics/job/{jn}"),
                "creationTimestamp": iso(now.replace(hour=2, minute=30, second=0)),
                "labels": {"app": "nightly-rollup"},
                "ownerReferences": [
                    {
                        "apiVersion": "batch/v1",
                        "kind": "CronJob",
                        "name": "nightly-rollup",
                        "uid": uid("analytics/cronjob/nr"),
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            },
            "spec": {"backoffLimit": 0, "completions": 1, "parallelism": 1, "template": jt},
            "status": {
                "startTime": iso(now.replace(hour=2, minute=30, second=0)),
                "failed": 1,
                "conditions": [
                    {
                        "type": "Failed",
                        "status": "True",
                        "reason": "BackoffLimitExceeded",
                        "message": "Job has reached the specified backoff limit",
                        "lastProbeTime": iso(now.replace(hour=3, minute=41, second=9)),
                        "lastTransitionTime": iso(now.replace(hour=3, minute=41, second=9)),
                    }
                ],
            },
        }
    )
    sc.log(
        now.replace(hour=3, minute=41, second=7),
        "analytics",
        f"{jn}-b2kx9",
        "rollup",
        "nightly-rollup",
        "error",
        "ERROR rollup.partition: Query exceeded per-node memory limit of 4GB [Session: "
        "20260915_023112_00071_k3fwa]",
    )

    # ------------------------------------------------ warehouse: LimitRange defaults, same manifest
    sc.add(
        {
            "apiVersion": "v1",
            "kind": "LimitRange",
            "metadata": {
                "name": "container-defaults",
                "namespace": "warehouse",
                "uid": uid("warehouse/lr"),
                "creationTimestamp": iso(old),
            },
            "spec": {
                "limits": [
                    {
                        "type": "Container",
                        "default": {"cpu": "1", "memory": "1Gi"},
                        "defaultRequest": {"cpu": "250m", "memory": "512Mi"},
                    }
                ]
            },
        }
    )
    sc.add(
        quota(
            "warehouse",
            "warehouse-compute",
            {"limits.cpu": "64", "limits.memory": "256Gi", "pods": "60"},
            {"limits.cpu": "42", "limits.memory": "142Gi", "pods": "7"},
            old,
        )
    )
    w_roll = now - dt.timedelta(days=4, hours=2, minutes=5)
    wh = suffix("rexp-w", 10)
    wrs = f"report-exporter-{wh}"
    from ._kit import deploy_status

    sc.add(
        deployment(
            "warehouse",
            "report-exporter",
            created=now - dt.timedelta(days=60),
            replicas=2,
            tpl=ex_tpl,
            revision=4,
            status=deploy_status(
                2,
                2,
                avail_since=w_roll + dt.timedelta(seconds=30),
                progress_time=w_roll + dt.timedelta(seconds=40),
                name="report-exporter",
                rs_name=wrs,
            ),
        )
    )
    sc.add(
        replicaset(
            "warehouse",
            "report-exporter",
            tpl=ex_tpl,
            h=wh,
            revision=4,
            created=w_roll,
            replicas=2,
            ready=2,
        )
    )
    for i in range(2):
        pn = f"{wrs}-{suffix(wrs + str(i), 5)}"
        t = _with_hash(ex_tpl, wh)
        t["spec"]["containers"][0]["resources"] = {
            "limits": {"cpu": "1", "memory": "1Gi"},
            "requests": {"cpu": "250m", "memory": "512Mi"},
        }
        nd = nodes[i]
        sc.add(
            pod(
                "warehouse",
                pn,
                tpl=t,
                owner=("ReplicaSet", wrs),
                node_name=nd[0],
                created=w_roll + dt.timedelta(seconds=10 * i),
                statuses=[running("exporter", ex_img, w_roll + dt.timedelta(seconds=10 * i + 5))],
                ip=cl.pod_ip(nd[2]),
                host_ip=nd[1],
                annotations={
                    "kubernetes.io/limit-ranger": "LimitRanger plugin set: cpu, memory request for "
                    "container exporter; cpu, memory limit for container exporter"
                },
            )
        )
        for k in range(6):
            tt = now - dt.timedelta(minutes=110 - 20 * k, seconds=i * 7)
            sc.log(
                tt,
                "warehouse",
                pn,
                "exporter",
                "report-exporter",
                "info",
                f'{{"severity":"INFO","time":"{iso_ms(tt)}","message":"export '
                f'finished","report":"{["weekly-kpis", "finance-daily", "ops-sla"][k % 3]}"'
                f',"rows":{12000 + 311 * k},"duration_s":{4 + k}}}',
            )
    # trino: one worker Pending while the autoscaler adds a node (decoy)
    tr = cl.healthy(
        "warehouse",
        "trino-worker",
        image="trinodb/trino:455",
        nodes=nodes,
        replicas=4,
        created=old,
        rollout=now - dt.timedelta(days=2, hours=3),
        revision=21,
        port=8080,
        svc=False,
        requests={"cpu": "6", "memory": "24Gi"},
        limits={"cpu": "8", "memory": "28Gi"},
        probe_path="/v1/info",
    )
    tpl_tr = tr["tpl"]
    tr_d = tr["deployment"]
    tr_d["spec"]["replicas"] = 5
    tr_d["metadata"]["generation"] += 1
    tr_d["status"]["observedGeneration"] = tr_d["metadata"]["generation"]
    tr_d["status"].update({"replicas": 5, "updatedReplicas": 5, "unavailableReplicas": 1})
    tr["rs"]["spec"]["replicas"] = 5
    tr["rs"]["status"].update({"replicas": 5, "fullyLabeledReplicas": 5})
    tr["rs"]["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] = "5"
    trp = f"{tr['rs_name']}-{suffix(tr['rs_name'] + 'p', 5)}"
    pend_at = now - dt.timedelta(minutes=3, seconds=40)
    tr_msg = (
        "0/4 nodes are available: 4 Insufficient memory. preemption: 0/4 nodes are available: 4 "
        "No preemption victims found for incoming pod."
    )
    sc.add(
        pod(
            "warehouse",
            trp,
            tpl=_with_hash(tpl_tr, tr["hash"]),
            owner=("ReplicaSet", tr["rs_name"]),
            node_name=None,
            created=pend_at,
            statuses=[],
            ip=None,
            host_ip=None,
            phase="Pending",
            pending_message=tr_msg,
        )
    )
    sc.event(
        "Pod",
        "warehouse",
        trp,
        "FailedScheduling",
        tr_msg,
        type_="Warning",
        count=2,
        first=pend_at,
        last=pend_at + dt.timedelta(seconds=61),
        component="default-scheduler",
    )
    sc.event(
        "Pod",
        "warehouse",
        trp,
        "TriggeredScaleUp",
        "pod triggered scale-up: [{https://www.googleapis.com/compute/v1/projects/bramble-data/zones/europe-west3-a/"
        "instanceGroups/gke-bramble-data-default-pool-91ac3e70-grp 4->5 (max: 10)}]",
        first=pend_at + dt.timedelta(seconds=12),
        component="cluster-autoscaler",
    )
    sc.event(
        "Deployment",
        "warehouse",
        "trino-worker",
        "ScalingReplicaSet",
        f"Scaled up replica set {tr['rs_name']} to 5 from 4",
        first=pend_at,
        component="deployment-controller",
    )
    for k in range(20):
        tt = now - dt.timedelta(minutes=118 - 6 * k)
        sc.log(
            tt,
            "warehouse",
            tr["pods"][k % 4]["metadata"]["name"],
            "trino-worker",
            "trino",
            "info",
            f"{iso_ms(tt)}\tINFO\ttask-notification-{k % 7}\tio.trino.execution.SqlTaskManager\t"
            f"Task 20260915_{tt.strftime('%H%M%S')}_{k:05d}_k3fwa.1.0.0 finished",
        )

    # ------------------------------------------------------------------ metrics
    grid = sc.grid(2)
    m = sc.metrics
    for res, hard, used in (
        ("limits.cpu", 24, 10),
        ("limits.memory", 48 * 1024**3, 20 * 1024**3),
        ("pods", 40, 8),
    ):
        for typ, v in (("hard", hard), ("used", used)):
            m.gauge(
                "kube_resourcequota",
                "Information about resource quota.",
                {
                    "namespace": "analytics",
                    "resourcequota": "analytics-compute",
                    "resource": res,
                    "type": typ,
                },
                grid,
                lambda t, v=v: v,
            )
    m.gauge(
        "kube_deployment_spec_replicas",
        "Number of desired pods for a deployment.",
        {"namespace": "analytics", "deployment": "report-exporter"},
        [t for t in grid if t >= created],
        lambda t: 2,
    )
    m.gauge(
        "kube_deployment_status_replicas_available",
        "The number of available replicas per deployment.",
        {"namespace": "analytics", "deployment": "report-exporter"},
        [t for t in grid if t >= created],
        lambda t: 0,
    )
    m.gauge(
        "kube_replicaset_status_replicas",
        "The number of replicas per ReplicaSet.",
        {"namespace": "analytics", "replicaset": rsn},
        [t for t in grid if t >= created],
        lambda t: 0,
    )
    m.gauge(
        "kube_pod_status_phase",
        "The pods current phase.",
        {
            "namespace": "warehouse",
            "pod": trp,
            "uid": uid("warehouse/pod/" + trp),
            "phase": "Pending",
        },
        [t for t in grid if t >= pend_at],
        lambda t: 1,
    )
    return sc
