"""payments-db-2 stays Pending: its EBS volume is in a zone the rebuilt db node group left."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from . import _kit as k

SID = "h56-payments-db-2-pending"
NOW = "2026-12-22T13:10:00Z"

GENERAL = [
    ("ip-10-70-11-20.eu-west-3.compute.internal", "eu-west-3a"),
    ("ip-10-70-12-149.eu-west-3.compute.internal", "eu-west-3b"),
    ("ip-10-70-13-61.eu-west-3.compute.internal", "eu-west-3c"),
]
NEW_DB = [
    ("ip-10-70-1-201.eu-west-3.compute.internal", "eu-west-3a"),
    ("ip-10-70-1-37.eu-west-3.compute.internal", "eu-west-3a"),
    ("ip-10-70-2-118.eu-west-3.compute.internal", "eu-west-3b"),
    ("ip-10-70-2-76.eu-west-3.compute.internal", "eu-west-3b"),
]
OLD_DB = [
    ("ip-10-70-1-14.eu-west-3.compute.internal", "eu-west-3a"),
    ("ip-10-70-2-201.eu-west-3.compute.internal", "eu-west-3b"),
    ("ip-10-70-3-88.eu-west-3.compute.internal", "eu-west-3c"),
]
PG_IMAGE = "ghcr.io/zalando/spilo-16:3.3-p2"
SCHED_MSG = (
    "0/7 nodes are available: 2 Insufficient cpu, 2 node(s) had volume node affinity conflict, "
    "3 node(s) didn't match Pod's node affinity/selector. preemption: 0/7 nodes are available: "
    "2 No preemption victims found for incoming pod, 5 Preemption is not helpful for scheduling."
)
SPARK_MSG = (
    "0/7 nodes are available: 3 Insufficient cpu, 4 node(s) had untolerated taint "
    "{dedicated: db}. preemption: 0/7 nodes are available: 3 No preemption victims found for "
    "incoming pod, 4 Preemption is not helpful for scheduling."
)


def build(root: Path) -> None:
    sc = k.Scenario(SID, NOW, seed=5608)
    db_taint = [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]
    new_up = [sc.ago(minutes=56 - 2 * i) for i in range(4)]
    old_gone = [sc.ago(minutes=50, seconds=10), sc.ago(minutes=49, seconds=30), sc.ago(minutes=44)]
    for i, (name, zone) in enumerate(GENERAL):
        sc.add(
            k.node(
                name,
                zone,
                sc.ago(days=10 + i),
                sc.ago(minutes=0.2),
                instance_type="m6i.2xlarge",
                cpu="8",
                allocatable_cpu="7910m",
                region="eu-west-3",
                nodegroup="ng-general",
            )
        )
    for i, (name, zone) in enumerate(NEW_DB):
        sc.add(
            k.node(
                name,
                zone,
                new_up[i],
                sc.ago(minutes=0.2),
                instance_type="r6i.xlarge",
                region="eu-west-3",
                nodegroup="ng-db-v2",
                taints=db_taint,
                extra_labels={"node-pool": "db"},
            )
        )
        sc.event(
            "default",
            "Node",
            name,
            "RegisteredNode",
            f"Node {name} event: Registered Node {name} in Controller",
            new_up[i] + timedelta(seconds=20),
            component="node-controller",
            obj_namespace="",
        )
    general = [n for n, _ in GENERAL]
    db_nodes = [n for n, _ in NEW_DB]
    k.platform(sc, general, ds_nodes=general + db_nodes)
    for ns in ("payments", "analytics", "api"):
        sc.add(k.namespace(ns, sc.ago(days=340)))
    drained = sc.ago(minutes=45, seconds=30)  # 12:24:30, payments-db-2 evicted
    start = sc.ago(minutes=60)

    # ---------------- payments/payments-db ----------------
    pg_c = k.container(
        "postgres",
        PG_IMAGE,
        "3",
        "24Gi",
        None,
        "24Gi",
        [("postgresql", 5432), ("patroni", 8008)],
        env=[
            ("SCOPE", "payments-db"),
            ("PGROOT", "/home/postgres/pgdata/pgroot"),
            ("KUBERNETES_USE_CONFIGMAPS", "true"),
        ],
        readiness=k.http_probe("/readiness", 8008),
        mounts=[("pgdata", "/home/postgres/pgdata")],
    )
    extra = {
        "nodeSelector": {"node-pool": "db"},
        "tolerations": [
            {"key": "dedicated", "operator": "Equal", "value": "db", "effect": "NoSchedule"}
        ],
        "affinity": {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {"matchLabels": {"app.kubernetes.io/name": "payments-db"}},
                        "topologyKey": "kubernetes.io/hostname",
                    }
                ]
            }
        },
    }
    pv_names = [f"pvc-{sc.uid()}" for _ in range(3)]
    selected = {i: {"volume.kubernetes.io/selected-node": OLD_DB[i][0]} for i in range(3)}
    db = k.statefulset(
        sc,
        "payments",
        "payments-db",
        [pg_c],
        [db_nodes[0], db_nodes[2]],
        3,
        sc.ago(days=330),
        sc.ago(minutes=49, seconds=50),
        claim=("pgdata", "400Gi", "gp3-encrypted"),
        skip=[2],
        port=5432,
        pvc_annotations=selected,
    )
    for obj in sc.objects:
        if obj["kind"] == "PersistentVolumeClaim" and obj["metadata"]["namespace"] == "payments":
            idx = int(obj["metadata"]["name"][-1])
            obj["spec"]["volumeName"] = pv_names[idx]
    db.obj["spec"]["template"]["spec"].update(extra)
    for p in sc.objects:
        if p["kind"] == "Pod" and p["metadata"]["name"] in ("payments-db-0", "payments-db-1"):
            p["spec"].update(extra)
    for i, (p, when) in enumerate(zip(db.pods, old_gone[:2], strict=True)):
        sc.event(
            "payments",
            "Pod",
            p.name,
            "Scheduled",
            f"Successfully assigned payments/{p.name} to {p.node}",
            when + timedelta(seconds=20 + i),
        )
        sc.event(
            "payments",
            "Pod",
            p.name,
            "SuccessfulAttachVolume",
            f'AttachVolume.Attach succeeded for volume "{pv_names[i]}" ',
            when + timedelta(seconds=35),
            component="attachdetach-controller",
        )
        sc.event(
            "payments",
            "Pod",
            p.name,
            "Started",
            "Started container postgres",
            when + timedelta(seconds=70),
        )
    pending_tmpl = k.template(
        {"app.kubernetes.io/name": "payments-db"},
        [pg_c],
        extra_spec={
            **extra,
            "hostname": "payments-db-2",
            "subdomain": "payments-db",
            "volumes": [
                {"name": "pgdata", "persistentVolumeClaim": {"claimName": "pgdata-payments-db-2"}}
            ],
        },
    )
    pending = k.pod(
        "payments",
        "payments-db-2",
        sc.uid(),
        k.owner("StatefulSet", "payments-db", db.uid),
        pending_tmpl,
        "",
        "",
        "",
        drained,
        [],
        phase="Pending",
        conditions=[
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": SCHED_MSG,
                "lastProbeTime": None,
                "lastTransitionTime": k.iso(drained + timedelta(seconds=1)),
            }
        ],
        extra_labels={
            "statefulset.kubernetes.io/pod-name": "payments-db-2",
            "apps.kubernetes.io/pod-index": "2",
        },
    )
    pending["status"].pop("startTime", None)
    sc.add(pending)
    sc.event(
        "payments",
        "Pod",
        "payments-db-2",
        "FailedScheduling",
        SCHED_MSG,
        drained + timedelta(seconds=1),
        sc.ago(minutes=1, seconds=12),
        count=38,
        etype="Warning",
    )
    sc.event(
        "payments",
        "Pod",
        "payments-db-2",
        "NotTriggerScaleUp",
        "pod didn't trigger scale-up: 1 node(s) didn't match Pod's node affinity/selector, "
        "1 node(s) had volume node affinity conflict",
        drained + timedelta(seconds=12),
        sc.ago(minutes=0, seconds=48),
        count=271,
        component="cluster-autoscaler",
    )
    sc.event(
        "payments",
        "StatefulSet",
        "payments-db",
        "SuccessfulCreate",
        "create Pod payments-db-2 in StatefulSet payments-db successful",
        drained,
        api_version="apps/v1",
        component="statefulset-controller",
    )
    db.obj["status"]["readyReplicas"] = 2
    db.obj["status"]["availableReplicas"] = 2
    sc.add(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {
                "name": "gp3-encrypted",
                "creationTimestamp": k.iso(sc.ago(days=400)),
            },
            "provisioner": "ebs.csi.aws.com",
            "parameters": {"type": "gp3", "encrypted": "true", "fsType": "ext4"},
            "reclaimPolicy": "Retain",
            "volumeBindingMode": "WaitForFirstConsumer",
            "allowVolumeExpansion": True,
        }
    )

    # ---------------- analytics: the other Pending pods (not enough cpu) --------------
    spark_img = "apache/spark:3.5.3"
    for j in range(2):
        name = f"nightly-rollup-{sc.hexid(6)}-driver"
        created = sc.ago(hours=3, minutes=10 + 7 * j)
        tmpl = k.template(
            {"spark-role": "driver", "app.kubernetes.io/name": "nightly-rollup"},
            [k.container("spark-kubernetes-driver", spark_img, "6", "20Gi", "6", "20Gi")],
        )
        p = k.pod(
            "analytics",
            name,
            sc.uid(),
            None,
            tmpl,
            "",
            "",
            "",
            created,
            [],
            phase="Pending",
            conditions=[
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": SPARK_MSG,
                    "lastProbeTime": None,
                    "lastTransitionTime": k.iso(created + timedelta(seconds=1)),
                }
            ],
        )
        p["status"].pop("startTime", None)
        sc.add(p)
        sc.event(
            "analytics",
            "Pod",
            name,
            "FailedScheduling",
            SPARK_MSG,
            sc.ago(minutes=58),
            sc.ago(minutes=2, seconds=5 * j),
            count=61,
            etype="Warning",
        )
        sc.event(
            "analytics",
            "Pod",
            name,
            "TriggeredScaleUp",
            "pod triggered scale-up: [{eks-ng-general-5ec9b1a2-7f1d-4c1e-9a3e-2f8a19d6c1b4 "
            "3->4 (max: 6)}]",
            sc.ago(minutes=3, seconds=40),
            component="cluster-autoscaler",
        )

    # ---------------- the apps that use the database ----------------
    api = k.simple_deployment(
        sc,
        "payments",
        "payments-api",
        [
            k.container(
                "payments-api",
                "ghcr.io/atlasfin/payments-api:11.2.0",
                "500m",
                "768Mi",
                "2",
                "1Gi",
                [("http", 8080)],
                env=[
                    ("DB_WRITE_URL", "postgres://payments-db.payments.svc:5432/payments"),
                    ("DB_READ_URL", "postgres://payments-db-repl.payments.svc:5432/payments"),
                ],
            )
        ],
        general,
        3,
        created=sc.ago(days=320),
        rolled=sc.ago(days=1, hours=4),
        revision=66,
        port=8080,
    )
    gateway = k.simple_deployment(
        sc,
        "api",
        "api-gateway",
        [
            k.container(
                "gateway",
                "ghcr.io/atlasfin/api-gateway:3.9.1",
                "300m",
                "384Mi",
                "1",
                "768Mi",
                [("http", 8080)],
            )
        ],
        general,
        3,
        created=sc.ago(days=320),
        rolled=sc.ago(days=4),
        revision=29,
        port=8080,
        restarts={2: (1, k.terminated("Error", 2, sc.ago(days=4), sc.ago(days=3, hours=1)))},
    )
    ca = k.simple_deployment(
        sc,
        "kube-system",
        "cluster-autoscaler",
        [
            k.container(
                "cluster-autoscaler",
                "registry.k8s.io/autoscaling/cluster-autoscaler:v1.29.4",
                "100m",
                "600Mi",
                None,
                "600Mi",
                args=[
                    "--cloud-provider=aws",
                    "--balance-similar-node-groups",
                    "--skip-nodes-with-system-pods=false",
                    "--node-group-auto-discovery=asg:tag=k8s.io/cluster-autoscaler/enabled",
                ],
            )
        ],
        general[:1],
        1,
        created=sc.ago(days=390),
        rolled=sc.ago(days=25),
        revision=6,
    )

    status_time = sc.ago(seconds=9).strftime("%Y-%m-%d %H:%M:%S")
    sc.add(
        k.configmap(
            "kube-system",
            "cluster-autoscaler-status",
            sc.ago(days=390),
            {
                "status": (
                    f"Cluster-autoscaler status at {status_time} +0000 UTC:\n"
                    "Cluster-wide:\n"
                    "  Health:      Healthy (ready=7 unready=0 (resourceUnready=0) "
                    "notStarted=0 longNotStarted=0 registered=7 longUnregistered=0)\n"
                    "  ScaleUp:     InProgress (ready=7 registered=7)\n"
                    "  ScaleDown:   NoCandidates (candidates=0)\n\n"
                    "NodeGroups:\n"
                    "  Name:        eks-ng-db-v2-8ac9b3f1-1d2e-4b7a-bb1c-0e6f2d9a7c55\n"
                    "  Health:      Healthy (ready=4 unready=0 notStarted=0 registered=4 "
                    "cloudProviderTarget=4 (minSize=4, maxSize=8))\n"
                    "  ScaleUp:     NoActivity (ready=4 cloudProviderTarget=4)\n"
                    "  Zones:       eu-west-3a, eu-west-3b\n\n"
                    "  Name:        eks-ng-general-5ec9b1a2-7f1d-4c1e-9a3e-2f8a19d6c1b4\n"
                    "  Health:      Healthy (ready=3 unready=0 notStarted=0 registered=3 "
                    "cloudProviderTarget=4 (minSize=3, maxSize=6))\n"
                    "  ScaleUp:     InProgress (ready=3 cloudProviderTarget=4)\n"
                    "  Zones:       eu-west-3a, eu-west-3b, eu-west-3c\n"
                ),
            },
        )
    )

    # ---------------- metrics ----------------
    zone_of = dict(GENERAL + NEW_DB + OLD_DB)
    for name, zone in OLD_DB + NEW_DB + GENERAL:
        old = name in dict(OLD_DB)
        group = "ng-db" if old else ("ng-db-v2" if name in dict(NEW_DB) else "ng-general")
        born = new_up[db_nodes.index(name)] if name in dict(NEW_DB) else None
        gone = old_gone[[n for n, _ in OLD_DB].index(name)] + timedelta(minutes=2) if old else None

        def alive(t: datetime, born: datetime | None = born, gone: datetime | None = gone) -> bool:
            return (born is None or t >= born + timedelta(seconds=40)) and (
                gone is None or t < gone
            )

        sc.metrics.gauge(
            "kube_node_labels",
            {
                "node": name,
                "label_topology_kubernetes_io_zone": zone,
                "label_eks_amazonaws_com_nodegroup": group,
            },
            lambda t, a=alive: 1 if a(t) else None,
            help_text="Kubernetes labels converted to Prometheus labels.",
        )
    for i, pv in enumerate(pv_names):
        sc.metrics.gauge(
            "kube_persistentvolume_labels",
            {
                "persistentvolume": pv,
                "label_topology_kubernetes_io_zone": zone_of[OLD_DB[i][0]],
            },
            lambda _t: 1,
            help_text="Kubernetes labels converted to Prometheus labels.",
        )
        sc.metrics.gauge(
            "kube_persistentvolumeclaim_info",
            {
                "namespace": "payments",
                "persistentvolumeclaim": f"pgdata-payments-db-{i}",
                "storageclass": "gp3-encrypted",
                "volumename": pv,
            },
            lambda _t: 1,
            help_text="Information about persistent volume claim.",
        )
    for pod_name, since in (("payments-db-2", drained),):
        sc.metrics.gauge(
            "kube_pod_status_phase",
            {"namespace": "payments", "pod": pod_name, "phase": "Pending"},
            lambda t, s=since: 1 if t >= s else 0,
            help_text="The pods current phase.",
        )

    def ready_db(t: datetime) -> float:
        if t >= drained:
            return 2
        if old_gone[0] <= t < old_gone[1] + timedelta(minutes=2):
            return 2
        return 3

    sc.metrics.gauge(
        "kube_statefulset_status_replicas_ready",
        {"namespace": "payments", "statefulset": "payments-db"},
        ready_db,
        help_text="The number of ready replicas per StatefulSet.",
    )
    sc.metrics.gauge(
        "cluster_autoscaler_unschedulable_pods_count",
        {"type": "unschedulable"},
        lambda t: 3 if t >= drained else 2,
        help_text="Number of unschedulable pods in the cluster.",
    )
    leader = db.pods[0]
    sc.metrics.gauge(
        "pg_replication_slots_active",
        {"pod": leader.name, "slot_name": "payments_db_2"},
        lambda t: 0 if t >= drained - timedelta(seconds=30) else 1,
        help_text="Flag indicating if the slot is active.",
    )
    sc.metrics.gauge(
        "pg_replication_slots_pg_wal_lsn_diff",
        {"pod": leader.name, "slot_name": "payments_db_2"},
        lambda t: 0 if t < drained else 2.1e8 * (t - drained).total_seconds() / 60,
        help_text="Replication lag in bytes.",
    )
    k.container_metrics(sc, "payments", db.pods, "postgres", 0.9, 14 * k.GI)
    k.container_metrics(sc, "payments", api.pods, "payments-api", 0.3, 500 * k.MI)
    k.restarts_metric(sc, "payments", db.pods, "postgres")

    # ---------------- logs ----------------
    for t in sc.poisson_times(drained + timedelta(seconds=15), sc.now, lambda _t: 1.0):
        hdr = k.klog_time(t)
        msg = sc.rng.choice(
            [
                f"I{hdr}       1 orchestrator.go:565] Pod payments/payments-db-2 can't be "
                "scheduled on eks-ng-db-v2-8ac9b3f1-1d2e-4b7a-bb1c-0e6f2d9a7c55, predicate "
                "checking error: node(s) had volume node affinity conflict; predicateName="
                "VolumeBinding; reasons: node(s) had volume node affinity conflict; debugInfo=",
                f"I{hdr}       1 orchestrator.go:565] Pod payments/payments-db-2 can't be "
                "scheduled on eks-ng-general-5ec9b1a2-7f1d-4c1e-9a3e-2f8a19d6c1b4, predicate "
                "checking error: node(s) didn't match Pod's node affinity/selector; "
                "predicateName=NodeAffinity; reasons: node(s) didn't match Pod's node "
                "affinity/selector; debugInfo=",
                f"I{hdr}       1 orchestrator.go:150] No pod can fit to "
                "eks-ng-db-v2-8ac9b3f1-1d2e-4b7a-bb1c-0e6f2d9a7c55",
                f"I{hdr}       1 static_autoscaler.go:586] No unschedulable pods",
            ]
        )
        if "No unschedulable" in msg:
            msg = f"I{hdr}       1 filter_out_schedulable.go:79] Filtering out schedulables"
        sc.log(
            t,
            "kube-system",
            ca.pods[0].name,
            "cluster-autoscaler",
            "cluster-autoscaler",
            "info",
            msg,
            ca.pods[0].node,
        )
    for t in sc.poisson_times(start, sc.now, lambda _t: 0.4):
        sc.log(
            t,
            "kube-system",
            ca.pods[0].name,
            "cluster-autoscaler",
            "cluster-autoscaler",
            "info",
            f"I{k.klog_time(t)}       1 scale_up.go:580] Final scale-up plan: "
            "[{eks-ng-general-5ec9b1a2-7f1d-4c1e-9a3e-2f8a19d6c1b4 3->4 (max: 6)}]",
            ca.pods[0].node,
        )
    for t in sc.poisson_times(start, sc.now, lambda _t: 0.3):
        sc.log(
            t,
            "kube-system",
            ca.pods[0].name,
            "cluster-autoscaler",
            "cluster-autoscaler",
            "warn",
            f"W{k.klog_time(t)}       1 clusterstate.go:1084] Readiness for node "
            "group eks-ng-general-5ec9b1a2-7f1d-4c1e-9a3e-2f8a19d6c1b4 not found",
            ca.pods[0].node,
        )
    for t in sc.poisson_times(drained, sc.now, lambda _t: 2.0):
        sc.log(
            t,
            "payments",
            leader.name,
            "postgres",
            "payments-db",
            "info",
            f"{t.strftime('%Y-%m-%d %H:%M:%S')},{t.microsecond // 1000:03d} INFO: no action. "
            "I am (payments-db-0), the leader with the lock",
            leader.node,
        )
    for t in sc.poisson_times(drained + timedelta(minutes=1), sc.now, lambda _t: 0.5):
        sc.log(
            t,
            "payments",
            leader.name,
            "postgres",
            "payments-db",
            "warn",
            f"{t.strftime('%Y-%m-%d %H:%M:%S')}.{t.microsecond // 1000:03d} UTC [412] "
            'WARNING:  replication slot "payments_db_2" is inactive; '
            f"{(t - drained).total_seconds() / 60 * 0.2:.1f} GB of WAL retained",
            leader.node,
        )
    rep = db.pods[1]
    for t in sc.poisson_times(sc.ago(minutes=46), sc.now, lambda _t: 2.0):
        sc.log(
            t,
            "payments",
            rep.name,
            "postgres",
            "payments-db",
            "info",
            f"{t.strftime('%Y-%m-%d %H:%M:%S')},{t.microsecond // 1000:03d} INFO: no action. "
            "I am (payments-db-1), a secondary, and following a leader (payments-db-0)",
            rep.node,
        )
    for p in api.pods:
        for t in sc.poisson_times(start, sc.now, lambda _t: 1.0):
            sc.log(
                t,
                "payments",
                p.name,
                "payments-api",
                "payments-api",
                "info",
                f"POST /v3/payments 201 {sc.rng.randint(20, 120)}ms",
                p.node,
            )
        for t in sc.poisson_times(start, sc.now, lambda _t: 0.1):
            sc.log(
                t,
                "payments",
                p.name,
                "payments-api",
                "payments-api",
                "warn",
                "read replica pool: 1 of 2 replicas reachable, routing reads to payments-db-1",
                p.node,
            )
    k.background_logs(
        sc,
        "api",
        gateway.pods,
        "gateway",
        "api-gateway",
        0.6,
        [
            ("info", "route=/v3/payments upstream=payments-api status=201 dur={ms}ms", 10),
            ("error", "rate limit exceeded for client key k_{id}", 1),
        ],
    )

    sc.write(
        root,
        title="payments-db-2 Pending after db node group maintenance",
        report="""
payments-db-2 has been Pending for ~45 min since the platform team rolled the db node group to
ng-db-v2. the scheduler event says Insufficient cpu, same as the analytics spark drivers that have
been pending all morning, so I think the new r6i.xlarge nodes are just too small. can we bump the
instance type or the max size of ng-db-v2? the WAL on the primary is growing.
""",
        category="unschedulable",
        culprit=("StatefulSet", "payments", "payments-db"),
        evidence=[
            "volume node affinity conflict",
            "volume.kubernetes.io/selected-node",
            "eu-west-3c",
        ],
        fix=(
            "payments-db-2's volume (pgdata-payments-db-2) is an EBS volume in eu-west-3c and "
            "ng-db-v2 only has nodes in eu-west-3a/3b. Add eu-west-3c back to ng-db-v2 (or a db "
            "node group there), or recreate the replica: delete pgdata-payments-db-2 and the pod "
            "so it re-provisions in an available zone and re-syncs from the leader; more CPU "
            "does not help."
        ),
    )
