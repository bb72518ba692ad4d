"""Shape 8: score-archiver (one replica, a ReadWriteOnce EBS volume, RollingUpdate with
maxUnavailable 0) is rolled to 2.4.0; the new pod lands on another node and waits for the
volume that the old pod still holds ("Multi-Attach error"). The rollout hangs until its
progress deadline; the old pod keeps serving."""

from __future__ import annotations

from .fleet import healthy, old_rs
from .kit import (
    Clock,
    Scenario,
    container,
    deployment,
    endpoints,
    event,
    http_probe,
    namespace,
    node,
    pod,
    pod_hash,
    replicaset,
    running,
    service,
    suffix,
    template,
    waiting,
)

NOW = "2026-11-29T14:22:00Z"
ROLL = 43  # minutes ago the rollout began


def build() -> Scenario:
    c = Clock(NOW)
    sc = Scenario(
        "score-archiver-deploy-stuck",
        "score-archiver 2.4 deploy stuck in the pipeline",
        NOW,
        "deploy of score-archiver 2.4 has been 'progressing' in argo for 40 min, pipeline timed "
        "out. "
        "old version is still up so players are fine for now. image is definitely pushed, I "
        "checked ECR. "
        "what is it waiting for?\n",
        {
            "category": "unschedulable",
            "culprit": {
                "kind": "Deployment",
                "namespace": "leaderboards",
                "name": "score-archiver",
            },
            "evidence": ["Multi-Attach error", "ReadWriteOnce", "ProgressDeadlineExceeded"],
            "fix": "Use strategy Recreate for score-archiver (or run it as a StatefulSet) so the "
            "old pod "
            "releases the ReadWriteOnce volume before the new one starts; to unblock now, scale "
            "the "
            "old ReplicaSet to 0",
        },
    )
    nodes = [
        (f"ip-172-31-{a}-{b}.us-east-2.compute.internal", f"172.31.{a}.{b}")
        for a, b in ((18, 40), (27, 133), (39, 7))
    ]
    for ns in ("leaderboards", "matchmaking"):
        sc.objects.append(namespace(ns, c.ago(330 * 1440)))
    sc.objects += [
        node(
            n,
            c.ago(40 * 1440),
            c.ago(0.2),
            ip=ip,
            zone="us-east-2" + "abc"[i],
            extra_labels={"topology.ebs.csi.aws.com/zone": "us-east-2" + "abc"[i]},
            transition=c.ago(6 * 1440),
        )
        for i, (n, ip) in enumerate(nodes)
    ]
    sc.objects.append(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {
                "name": "gp3",
                "creationTimestamp": c.ago(330 * 1440),
                "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
            },
            "provisioner": "ebs.csi.aws.com",
            "parameters": {"type": "gp3", "encrypted": "true"},
            "reclaimPolicy": "Delete",
            "volumeBindingMode": "WaitForFirstConsumer",
            "allowVolumeExpansion": True,
        }
    )
    pv = "pvc-5b1e0c7a-93d2-4f1e-b7a8-2d6c0e4f9a31"
    sc.objects.append(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {
                "name": "score-archiver-data",
                "namespace": "leaderboards",
                "creationTimestamp": c.ago(300 * 1440),
                "annotations": {
                    "pv.kubernetes.io/bind-completed": "yes",
                    "volume.kubernetes.io/selected-node": nodes[0][0],
                },
            },
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": "gp3",
                "volumeMode": "Filesystem",
                "resources": {"requests": {"storage": "200Gi"}},
                "volumeName": pv,
            },
            "status": {
                "phase": "Bound",
                "accessModes": ["ReadWriteOnce"],
                "capacity": {"storage": "200Gi"},
            },
        }
    )
    lab = {"app": "score-archiver", "tier": "backend"}

    def tmpl(tag: str) -> dict:
        return template(
            lab,
            [
                container(
                    "archiver",
                    f"381492005512.dkr.ecr.us-east-2.amazonaws.com/score-archiver:{tag}",
                    requests={"cpu": "500m", "memory": "1Gi"},
                    limits={"memory": "1536Mi"},
                    port=8080,
                    readiness=http_probe("/ready", 8080),
                    mounts=[{"name": "data", "mountPath": "/var/lib/archiver"}],
                )
            ],
            volumes=[
                {"name": "data", "persistentVolumeClaim": {"claimName": "score-archiver-data"}}
            ],
        )

    new_t, old_t = tmpl("2.4.0"), tmpl("2.3.7")
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    prog = {
        "type": "Progressing",
        "status": "False",
        "reason": "ProgressDeadlineExceeded",
        "message": f'ReplicaSet "score-archiver-{pod_hash("score-archiver", 12)}" has timed out '
        f"progressing.",
        "lastUpdateTime": c.ago(ROLL - 10),
        "lastTransitionTime": c.ago(ROLL - 10),
    }
    dep = deployment(
        "leaderboards",
        "score-archiver",
        lab,
        new_t,
        replicas=1,
        revision=12,
        created=c.ago(300 * 1440),
        progressed=c.ago(ROLL - 10),
        available=1,
        updated=1,
        ready=1,
        strategy=strategy,
        progressing=prog,
        change_cause="argocd: sync score-archiver 2.4.0",
    )
    dep["status"]["replicas"] = 2
    dep["status"]["unavailableReplicas"] = 1
    rs_new = replicaset(dep, 12, new_t, replicas=1, created=c.ago(ROLL), ready=0)
    rs_old = replicaset(dep, 11, old_t, replicas=1, created=c.ago(19 * 1440))
    old_rs(sc, dep, tmpl("2.3.6"), 10, c.ago(33 * 1440))
    sc.objects += [dep, rs_new, rs_old]
    old_name = f"{rs_old['metadata']['name']}-{suffix('sa-old')}"
    old_pod = pod(
        rs_old,
        old_t,
        old_name,
        node_name=nodes[0][0],
        host_ip=nodes[0][1],
        ip="172.31.18.201",
        created=c.ago(6 * 1440 + 30),
        statuses=[
            running("archiver", old_t["spec"]["containers"][0]["image"], c.ago(6 * 1440 + 29))
        ],
    )
    new_name = f"{rs_new['metadata']['name']}-{suffix('sa-new')}"
    new_pod = pod(
        rs_new,
        new_t,
        new_name,
        node_name=nodes[1][0],
        host_ip=nodes[1][1],
        ip=None,
        created=c.ago(ROLL),
        phase="Pending",
        statuses=[
            waiting("archiver", new_t["spec"]["containers"][0]["image"], "ContainerCreating")
        ],
    )
    sc.objects += [old_pod, new_pod]
    svc = service(
        "leaderboards",
        "score-archiver",
        {"app": "score-archiver"},
        80,
        8080,
        "10.100.41.7",
        c.ago(300 * 1440),
    )
    sc.objects += [svc, endpoints(svc, [old_pod, new_pod], 8080)]
    sc.objects.append(
        event(
            "leaderboards",
            "Pod",
            new_name,
            "FailedAttachVolume",
            f'Multi-Attach error for volume "{pv}" Volume is already used by pod(s) {old_name}',
            first=c.ago(ROLL - 0.2),
            last=c.ago(ROLL - 0.2),
            type_="Warning",
            component="attachdetach-controller",
        )
    )
    sc.objects.append(
        event(
            "leaderboards",
            "Pod",
            new_name,
            "FailedMount",
            "Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[data "
            "kube-api-access-8xq2m]: timed out waiting for the condition",
            first=c.ago(ROLL - 2.2),
            last=c.ago(1.2),
            count=20,
            type_="Warning",
            host=nodes[1][0],
        )
    )
    sc.objects.append(
        event(
            "leaderboards",
            "Pod",
            new_name,
            "Scheduled",
            f"Successfully assigned leaderboards/{new_name} to {nodes[1][0]}",
            first=c.ago(ROLL),
            last=c.ago(ROLL),
            component="default-scheduler",
        )
    )
    sc.objects.append(
        event(
            "leaderboards",
            "Deployment",
            "score-archiver",
            "ScalingReplicaSet",
            f"Scaled up replica set {rs_new['metadata']['name']} to 1",
            first=c.ago(ROLL),
            last=c.ago(ROLL),
            component="deployment-controller",
        )
    )
    board = healthy(
        sc,
        c,
        "leaderboards",
        "leaderboard-api",
        "381492005512.dkr.ecr.us-east-2.amazonaws.com/leaderboard-api:7.1.0",
        replicas=3,
        nodes=nodes,
        port=8080,
        cluster_ip="10.100.41.20",
        ip_base="172.31.50",
    )
    mm = healthy(
        sc,
        c,
        "matchmaking",
        "lobby",
        "381492005512.dkr.ecr.us-east-2.amazonaws.com/lobby:4.4.4",
        replicas=2,
        nodes=nodes,
        port=7000,
        cluster_ip="10.100.52.3",
        ip_base="172.31.51",
        rollout_hours=20,
    )
    sc.objects.append(
        event(
            "matchmaking",
            "Pod",
            mm.names[1],
            "Unhealthy",
            "Readiness probe failed: Get "
            '"http://172.31.51.27:7000/healthz": context deadline exceeded',
            first=c.ago(58),
            last=c.ago(56),
            count=2,
            type_="Warning",
            host=nodes[1][0],
        )
    )
    sc.log(
        "leaderboards",
        old_name,
        "archiver",
        [
            f"{c.ms(m)} [info] archiver: flushed {1200 + m * 3} score events to segment "
            f"seg-{88000 + m} "
            f"({14 + m % 9} MiB)"
            for m in range(90, 0, -3)
        ],
    )
    for m in range(120, 0, -2):
        sc.doc(
            c.ms(m),
            "info",
            "score-archiver",
            "leaderboards",
            old_name,
            "archiver",
            f"flushed {1200 + m * 3} score events to segment seg-{88000 + m}",
        )
        sc.doc(
            c.ms(m + 0.5),
            "info",
            "leaderboard-api",
            "leaderboards",
            board.names[m % 3],
            "app",
            "GET /v1/boards/weekly 200",
            **{"http.response.status_code": 200},
        )
    for m in range(ROLL + 5, ROLL - 2, -1):
        sc.doc(
            c.ms(m),
            "info",
            "argocd-application-controller",
            "argocd",
            "argocd-application-controller-0",
            "application-controller",
            "Updated sync status: OutOfSync -> Synced application=score-archiver",
        )
    for m in range(ROLL - 11, 0, -4):
        sc.doc(
            c.ms(m),
            "warn",
            "argocd-application-controller",
            "argocd",
            "argocd-application-controller-0",
            "application-controller",
            'Application score-archiver health: Degraded (Deployment "score-archiver" '
            "exceeded its progress deadline)",
        )
    return sc
