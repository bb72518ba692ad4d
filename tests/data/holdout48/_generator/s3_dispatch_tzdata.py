"""3. crash_loop: a slim runtime image lacks time-zone data; the scheduler exits on its configured
zone."""

from __future__ import annotations

import datetime as dt

from ._kit import (
    Cluster,
    Scenario,
    _with_hash,
    configmap,
    container,
    deploy_status,
    deployment,
    endpoints,
    env,
    http_probe,
    iso,
    iso_ms,
    namespace,
    node,
    pod,
    replicaset,
    running,
    service,
    suffix,
    template,
    terminated,
    uid,
    waiting,
)

SID = "dispatch-tzdata-missing"

ACR = "rivetline.azurecr.io"


def build() -> Scenario:
    sc = Scenario(
        SID,
        "dispatch-scheduler crash-looping since this morning's deploy",
        "2026-05-19T07:15:00Z",
        "dispatch-scheduler in logistics is crashlooping since ~06:50, no dispatch waves "
        "planned for the morning shift. dispatch-db failed over overnight, I bet the scheduler "
        "is still pointed at the old primary or the connection string broke. Warehouse floor is "
        "waiting, please look asap\n",
        {
            "category": "crash_loop",
            "culprit": {
                "kind": "Deployment",
                "namespace": "logistics",
                "name": "dispatch-scheduler",
            },
            "evidence": [
                "unknown time zone Europe/Amsterdam",
                "SCHEDULER_TIMEZONE",
                "2.31.0",
                "CrashLoopBackOff",
            ],
            "fix": "Put time-zone data back into the image (apk add tzdata in the slim runtime "
            "stage, or build with -tags timetzdata / import time/tzdata), or roll back to "
            "2.30.4; the database failover is unrelated.",
        },
    )
    now = sc.now
    old = now - dt.timedelta(days=520)
    for ns in ("logistics", "data", "kube-system"):
        sc.add(namespace(ns, old, {"team": "logistics"} if ns != "kube-system" else {}))
    nodes = []
    for i in range(3):
        name = f"aks-nodepool1-38412967-vmss00000{i}"
        ip = f"10.224.0.{4 + i}"
        nodes.append((name, ip, i))
        sc.add(
            node(
                name,
                created=now - dt.timedelta(days=24),
                now=now,
                cpu="4",
                memory="16364772Ki",
                alloc_cpu="3860m",
                alloc_memory="12880612Ki",
                internal_ip=ip,
                kubelet="v1.29.7",
                os_image="Ubuntu 22.04.4 LTS",
                kernel="5.15.0-1068-azure",
                runtime="containerd://1.7.15-1",
                pods="110",
                labels={
                    "agentpool": "nodepool1",
                    "kubernetes.azure.com/agentpool": "nodepool1",
                    "node.kubernetes.io/instance-type": "Standard_D4s_v5",
                    "topology.kubernetes.io/zone": f"westeurope-{i + 1}",
                },
                provider_id=f"azure:///subscriptions/8d1e/resourceGroups/mc_rivetline/providers/"
                f"Microsoft.Compute/virtualMachineScaleSets/aks-nodepool1-38412967-vmss/virtualMachines/{i}",
            )
        )
    cl = Cluster(sc, "10.244")

    # ------------------------------------------------------------------ dispatch-scheduler
    labels = {"app": "dispatch-scheduler"}
    cfg = {
        "SCHEDULER_TIMEZONE": "Europe/Amsterdam",
        "WAVE_INTERVAL": "15m",
        "CUTOFF_LOCAL_TIME": "18:30",
        "DB_HOST": "dispatch-db-rw.data.svc",
        "DB_NAME": "dispatch",
        "LEADER_ELECTION": "false",
    }

    def tpl_for(version: str) -> dict:
        c = container(
            "dispatch-scheduler",
            f"{ACR}/logistics/dispatch-scheduler:{version}",
            ports=[8080],
            requests={"cpu": "200m", "memory": "256Mi"},
            limits={"memory": "512Mi"},
            env_from=[{"configMapRef": {"name": "dispatch-scheduler-config"}}],
            env=[
                {
                    "name": "DB_PASSWORD",
                    "valueFrom": {"secretKeyRef": {"name": "dispatch-db-app", "key": "password"}},
                }
            ],
            readiness=http_probe("/readyz", 8080),
            liveness=http_probe("/livez", 8080, delay=20),
        )
        return template(
            labels,
            [c],
            service_account="dispatch-scheduler",
            security={"runAsNonRoot": True, "runAsUser": 65532},
        )

    t21, t22 = tpl_for("2.30.4"), tpl_for("2.31.0")
    h21, h22 = suffix("disp21", 10), suffix("disp22", 10)
    rs21, rs22 = f"dispatch-scheduler-{h21}", f"dispatch-scheduler-{h22}"
    roll21 = now - dt.timedelta(days=6, hours=14, minutes=3)
    roll22 = now.replace(hour=6, minute=49, second=31)
    created = now - dt.timedelta(days=480)
    cc22 = "2.31.0: slim runtime image (-61%), NL/BE cutoff rules"
    sc.add(
        deployment(
            "logistics",
            "dispatch-scheduler",
            created=created,
            replicas=1,
            tpl=t22,
            revision=22,
            annotations={"kubernetes.io/change-cause": cc22},
            strategy={"type": "Recreate"},
            status=deploy_status(
                1,
                0,
                updated=1,
                available=0,
                progressing=("True", "ReplicaSetUpdated", f'ReplicaSet "{rs22}" is progressing.'),
                avail_since=roll22 - dt.timedelta(seconds=1),
                progress_time=roll22,
                name="dispatch-scheduler",
                rs_name=rs22,
            ),
        )
    )
    sc.objects[-1]["status"]["conditions"][1].update(
        {
            "status": "False",
            "reason": "ProgressDeadlineExceeded",
            "message": f'ReplicaSet "{rs22}" has timed out progressing.',
            "lastUpdateTime": iso(roll22 + dt.timedelta(seconds=601)),
            "lastTransitionTime": iso(roll22 + dt.timedelta(seconds=601)),
        }
    )
    sc.add(
        replicaset(
            "logistics",
            "dispatch-scheduler",
            tpl=t21,
            h=h21,
            revision=21,
            created=roll21,
            replicas=0,
            ready=0,
            annotations={"kubernetes.io/change-cause": "2.30.4: retry wave publish on 409"},
        )
    )
    sc.add(
        replicaset(
            "logistics",
            "dispatch-scheduler",
            tpl=t22,
            h=h22,
            revision=22,
            created=roll22,
            replicas=1,
            ready=0,
            annotations={"kubernetes.io/change-cause": cc22},
        )
    )
    sc.add(configmap("logistics", "dispatch-scheduler-config", cfg, created))
    image22 = f"{ACR}/logistics/dispatch-scheduler:2.31.0"
    pname = f"{rs22}-{suffix(rs22, 5)}"
    nn, hip, ni = nodes[2]
    ip = cl.pod_ip(ni)
    starts = [
        roll22 + dt.timedelta(seconds=s) for s in (6, 17, 38, 79, 160, 321, 622, 923, 1224, 1525)
    ]
    starts = [s for s in starts if s < now - dt.timedelta(seconds=20)]
    last = starts[-1]
    st = waiting(
        "dispatch-scheduler",
        image22,
        reason="CrashLoopBackOff",
        message="back-off 5m0s restarting failed container=dispatch-scheduler "
        f"pod={pname}_logistics({uid('logistics/pod/' + pname)})",
        restarts=len(starts) - 1,
        last=terminated("Error", 1, last, last + dt.timedelta(milliseconds=260), pname),
    )
    sc.add(
        pod(
            "logistics",
            pname,
            tpl=_with_hash(t22, h22),
            owner=("ReplicaSet", rs22),
            node_name=nn,
            created=roll22,
            statuses=[st],
            ip=ip,
            host_ip=hip,
            ready=False,
        )
    )
    sc.add(
        service(
            "logistics",
            "dispatch-scheduler",
            selector=labels,
            ports=[("http", 80, 8080)],
            cluster_ip="10.0.118.40",
            created=created,
        )
    )
    sc.add(
        endpoints(
            "logistics",
            "dispatch-scheduler",
            ready=[],
            not_ready=[(ip, pname, nn)],
            ports=[("http", 8080)],
            created=created,
        )
    )
    old_pod = f"{rs21}-{suffix(rs21, 5)}"
    sc.event(
        "Deployment",
        "logistics",
        "dispatch-scheduler",
        "ScalingReplicaSet",
        f"Scaled down replica set {rs21} to 0 from 1",
        first=roll22 - dt.timedelta(seconds=1),
        component="deployment-controller",
    )
    sc.event(
        "Deployment",
        "logistics",
        "dispatch-scheduler",
        "ScalingReplicaSet",
        f"Scaled up replica set {rs22} to 1",
        first=roll22,
        component="deployment-controller",
    )
    sc.event(
        "Pod",
        "logistics",
        pname,
        "Scheduled",
        f"Successfully assigned logistics/{pname} to {nn}",
        first=roll22 + dt.timedelta(seconds=1),
        component="default-scheduler",
    )
    sc.event(
        "Pod",
        "logistics",
        pname,
        "Pulling",
        f'Pulling image "{image22}"',
        first=roll22 + dt.timedelta(seconds=2),
        host=nn,
        field_path="spec.containers{dispatch-scheduler}",
    )
    sc.event(
        "Pod",
        "logistics",
        pname,
        "Pulled",
        f'Successfully pulled image "{image22}" in 2.418s (2.418s including waiting). Image '
        "size: 14283712 bytes.",
        first=roll22 + dt.timedelta(seconds=5),
        host=nn,
        field_path="spec.containers{dispatch-scheduler}",
    )
    sc.event(
        "Pod",
        "logistics",
        pname,
        "Pulled",
        f'Container image "{image22}" already present on machine',
        count=len(starts) - 1,
        first=starts[1] - dt.timedelta(seconds=1),
        last=last - dt.timedelta(seconds=1),
        host=nn,
        field_path="spec.containers{dispatch-scheduler}",
    )
    for reason, msg in (
        ("Created", "Created container dispatch-scheduler"),
        ("Started", "Started container dispatch-scheduler"),
    ):
        sc.event(
            "Pod",
            "logistics",
            pname,
            reason,
            msg,
            count=len(starts),
            first=starts[0],
            last=last,
            host=nn,
            field_path="spec.containers{dispatch-scheduler}",
        )
    sc.event(
        "Pod",
        "logistics",
        pname,
        "BackOff",
        f"Back-off restarting failed container dispatch-scheduler in pod {pname}_logistics"
        f"({uid('logistics/pod/' + pname)})",
        type_="Warning",
        count=112,
        first=starts[0] + dt.timedelta(seconds=2),
        last=now - dt.timedelta(seconds=9),
        host=nn,
        field_path="spec.containers{dispatch-scheduler}",
    )

    def crash(t0: dt.datetime) -> list[tuple[dt.datetime, str, str]]:
        out = []
        for ms, lvl, text in (
            (
                95,
                "INFO",
                'msg="dispatch-scheduler starting" version=2.31.0 commit=e41b9d2 go=go1.22.3',
            ),
            (
                188,
                "INFO",
                'msg="connected to postgres" host=dispatch-db-rw.data.svc:5432 db=dispatch '
                "server_version=16.3 in_recovery=false",
            ),
            (
                191,
                "ERROR",
                'msg="invalid configuration" key=SCHEDULER_TIMEZONE value=Europe/Amsterdam '
                'error="unknown time zone Europe/Amsterdam"',
            ),
            (192, "INFO", 'msg="shutting down" exit_code=1'),
        ):
            t = t0 + dt.timedelta(milliseconds=ms)
            out.append((t, lvl.lower(), f"time={iso_ms(t)} level={lvl} {text}"))
        return out

    for k, s in enumerate(starts):
        lines = crash(s)
        for t, lvl, ln in lines:
            sc.log(t, "logistics", pname, "dispatch-scheduler", "dispatch-scheduler", lvl, ln)
        if k == len(starts) - 1:
            sc.pod_log("logistics", pname, "dispatch-scheduler", [x[2] for x in lines])
        if k == len(starts) - 2:
            sc.pod_log(
                "logistics", pname, "dispatch-scheduler", [x[2] for x in lines], previous=True
            )
    # the old revision's last hours: planning waves fine in local time
    t = now.replace(hour=3, minute=0, second=0)
    k = 0
    while t < roll22 - dt.timedelta(seconds=1):
        ln = (
            f'time={iso_ms(t + dt.timedelta(milliseconds=40))} level=INFO msg="wave planned" '
            f"wave=W{t.strftime('%H%M')} orders={120 + (k * 37) % 90} "
            f"local_time={(t + dt.timedelta(hours=2)).strftime('%H:%M')}+02:00 cutoff=18:30"
        )
        sc.log(t, "logistics", old_pod, "dispatch-scheduler", "dispatch-scheduler", "info", ln)
        if t.hour == 2 or (t.hour == 3 and t.minute == 0):
            pass
        t += dt.timedelta(minutes=15)
        k += 1
    sc.log(
        roll22 - dt.timedelta(seconds=1),
        "logistics",
        old_pod,
        "dispatch-scheduler",
        "dispatch-scheduler",
        "info",
        f'time={iso_ms(roll22 - dt.timedelta(seconds=1))} level=INFO msg="received SIGTERM, '
        'stopping"',
    )
    # during the failover the old scheduler logged reconnects, which is what the engineer remembers
    fo = now.replace(hour=2, minute=14, second=7)
    for j in range(4):
        t = fo + dt.timedelta(seconds=2 + 5 * j)
        sc.log(
            t,
            "logistics",
            old_pod,
            "dispatch-scheduler",
            "dispatch-scheduler",
            "warn",
            f'time={iso_ms(t)} level=WARN msg="postgres connection lost, retrying" '
            'host=dispatch-db-rw.data.svc:5432 error="FATAL: terminating connection due to '
            f'administrator command (SQLSTATE 57P01)" attempt={j + 1}',
        )
    t = fo + dt.timedelta(seconds=24)
    sc.log(
        t,
        "logistics",
        old_pod,
        "dispatch-scheduler",
        "dispatch-scheduler",
        "info",
        f'time={iso_ms(t)} level=INFO msg="connected to postgres" '
        "host=dispatch-db-rw.data.svc:5432 db=dispatch server_version=16.3 in_recovery=false",
    )

    # ------------------------------------------------------ data: patroni postgres after a failover
    db_labels = {"app": "dispatch-db", "cluster-name": "dispatch-db"}
    dbc = container(
        "postgres",
        "ghcr.io/zalando/spilo-16:3.3-p1",
        ports=[5432, 8008],
        requests={"cpu": "1", "memory": "4Gi"},
        limits={"memory": "4Gi"},
        env=env(SCOPE="dispatch-db", PGVERSION="16", KUBERNETES_USE_CONFIGMAPS="true"),
        readiness=http_probe("/readiness", 8008, delay=6),
        mounts=[{"name": "pgdata", "mountPath": "/home/postgres/pgdata"}],
    )
    db_tpl = template(db_labels, [dbc], service_account="dispatch-db")
    db_created = now - dt.timedelta(days=480)
    rev = "dispatch-db-" + suffix("dbrev", 10)
    sc.add(
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {
                "name": "dispatch-db",
                "namespace": "data",
                "uid": uid("data/sts/dispatch-db"),
                "generation": 4,
                "creationTimestamp": iso(db_created),
                "labels": db_labels,
            },
            "spec": {
                "replicas": 2,
                "serviceName": "dispatch-db",
                "selector": {"matchLabels": db_labels},
                "podManagementPolicy": "OrderedReady",
                "template": db_tpl,
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
                "volumeClaimTemplates": [
                    {
                        "apiVersion": "v1",
                        "kind": "PersistentVolumeClaim",
                        "metadata": {"name": "pgdata"},
                        "spec": {
                            "accessModes": ["ReadWriteOnce"],
                            "storageClassName": "managed-csi-premium",
                            "resources": {"requests": {"storage": "128Gi"}},
                        },
                    }
                ],
            },
            "status": {
                "observedGeneration": 4,
                "replicas": 2,
                "readyReplicas": 2,
                "currentReplicas": 2,
                "updatedReplicas": 2,
                "availableReplicas": 2,
                "currentRevision": rev,
                "updateRevision": rev,
            },
        }
    )
    db_start = now - dt.timedelta(days=5, hours=19)
    db_pods = {}
    for i, role in ((0, "replica"), (1, "master")):
        pn = f"dispatch-db-{i}"
        t = json_copy(db_tpl)
        t["metadata"]["labels"].update(
            {
                "controller-revision-hash": rev,
                "statefulset.kubernetes.io/pod-name": pn,
                "spilo-role": role,
            }
        )
        t["spec"]["volumes"] = [
            {"name": "pgdata", "persistentVolumeClaim": {"claimName": f"pgdata-{pn}"}}
        ]
        nn_, hip_, ni_ = nodes[i]
        ip_ = cl.pod_ip(ni_)
        if i == 0:
            st_ = running(
                "postgres",
                dbc["image"],
                fo + dt.timedelta(seconds=31),
                restarts=1,
                last=terminated("Error", 1, db_start, fo + dt.timedelta(seconds=29), pn),
            )
        else:
            st_ = running("postgres", dbc["image"], db_start + dt.timedelta(seconds=50))
        p = pod(
            "data",
            pn,
            tpl=t,
            owner=("StatefulSet", "dispatch-db"),
            node_name=nn_,
            created=db_start + dt.timedelta(seconds=40 * i),
            statuses=[st_],
            ip=ip_,
            host_ip=hip_,
            spec_override={"hostname": pn, "subdomain": "dispatch-db"},
            ready_since=(fo + dt.timedelta(seconds=52)) if i == 0 else None,
        )
        sc.add(p)
        db_pods[pn] = (ip_, pn, nn_)
        sc.add(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {
                    "name": f"pgdata-{pn}",
                    "namespace": "data",
                    "uid": uid(f"data/pvc/{pn}"),
                    "creationTimestamp": iso(db_created),
                    "labels": {"app": "dispatch-db"},
                },
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": "managed-csi-premium",
                    "resources": {"requests": {"storage": "128Gi"}},
                    "volumeName": f"pvc-{uid('pv' + pn)}",
                    "volumeMode": "Filesystem",
                },
                "status": {
                    "phase": "Bound",
                    "accessModes": ["ReadWriteOnce"],
                    "capacity": {"storage": "128Gi"},
                },
            }
        )
    sc.add(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {
                "name": "managed-csi-premium",
                "uid": uid("sc/mcp"),
                "creationTimestamp": iso(old),
            },
            "provisioner": "disk.csi.azure.com",
            "parameters": {"skuname": "Premium_LRS"},
            "reclaimPolicy": "Delete",
            "volumeBindingMode": "WaitForFirstConsumer",
            "allowVolumeExpansion": True,
        }
    )
    sc.add(
        service(
            "data",
            "dispatch-db-rw",
            selector={"app": "dispatch-db", "spilo-role": "master"},
            ports=[("postgresql", 5432, 5432)],
            cluster_ip="10.0.77.12",
            created=db_created,
        )
    )
    sc.add(
        endpoints(
            "data",
            "dispatch-db-rw",
            ready=[db_pods["dispatch-db-1"]],
            ports=[("postgresql", 5432)],
            created=db_created,
        )
    )
    sc.add(
        service(
            "data",
            "dispatch-db-ro",
            selector={"app": "dispatch-db", "spilo-role": "replica"},
            ports=[("postgresql", 5432, 5432)],
            cluster_ip="10.0.77.19",
            created=db_created,
        )
    )
    sc.add(
        endpoints(
            "data",
            "dispatch-db-ro",
            ready=[db_pods["dispatch-db-0"]],
            ports=[("postgresql", 5432)],
            created=db_created,
        )
    )
    for t, pn, lvl, msg in (
        (
            fo - dt.timedelta(seconds=4),
            "dispatch-db-0",
            "error",
            "ERROR: failed to update leader lock: Connection to Kubernetes API timed out",
        ),
        (
            fo - dt.timedelta(seconds=1),
            "dispatch-db-0",
            "info",
            "INFO: demoting self because I do not have the lock and I was a leader",
        ),
        (
            fo + dt.timedelta(seconds=29),
            "dispatch-db-0",
            "error",
            "FATAL: postmaster exited during demote, restarting",
        ),
        (
            fo + dt.timedelta(seconds=2),
            "dispatch-db-1",
            "info",
            "INFO: promoted self to leader by acquiring session lock",
        ),
        (
            fo + dt.timedelta(seconds=6),
            "dispatch-db-1",
            "info",
            "INFO: cleared rewind state after becoming the leader",
        ),
        (
            fo + dt.timedelta(seconds=58),
            "dispatch-db-0",
            "info",
            "INFO: Lock owner: dispatch-db-1; I am dispatch-db-0",
        ),
        (
            fo + dt.timedelta(seconds=59),
            "dispatch-db-0",
            "info",
            "INFO: no action. I am (dispatch-db-0), a secondary, and following a leader "
            "(dispatch-db-1)",
        ),
    ):
        sc.log(
            t,
            "data",
            pn,
            "postgres",
            "dispatch-db",
            lvl,
            f"{t.strftime('%Y-%m-%d %H:%M:%S')},{t.microsecond // 1000:03d} {msg}",
        )
    t = fo + dt.timedelta(minutes=10)
    while t < now:
        for pn, role in (("dispatch-db-1", "the leader with the lock"), ("dispatch-db-0", None)):
            msg = (
                f"INFO: no action. I am ({pn}), {role}"
                if role
                else f"INFO: no action. I am ({pn}), a secondary, and following a leader "
                "(dispatch-db-1)"
            )
            sc.log(
                t,
                "data",
                pn,
                "postgres",
                "dispatch-db",
                "info",
                f"{t.strftime('%Y-%m-%d %H:%M:%S')},{t.microsecond // 1000:03d} {msg}",
            )
        t += dt.timedelta(minutes=10)

    # ------------------------------------------------------------------ neighbours
    trk = cl.healthy(
        "logistics",
        "tracking-api",
        image=f"{ACR}/logistics/tracking-api:1.44.0",
        nodes=nodes,
        replicas=3,
        created=created,
        rollout=now - dt.timedelta(hours=19, minutes=12),
        revision=61,
        requests={"cpu": "250m", "memory": "256Mi"},
        limits={"memory": "512Mi"},
        env_=env(TZ="UTC", DB_HOST="dispatch-db-ro.data.svc"),
        annotations={"kubernetes.io/change-cause": "1.44.0: slim runtime image (-58%)"},
    )
    ro = cl.healthy(
        "logistics",
        "route-optimizer",
        image=f"{ACR}/logistics/route-optimizer:0.9.12",
        nodes=nodes[:2],
        replicas=2,
        created=created,
        rollout=now - dt.timedelta(days=3, hours=2),
        revision=17,
        requests={"cpu": "1", "memory": "1Gi"},
        limits={"memory": "2Gi"},
    )
    cl.healthy(
        "kube-system",
        "coredns",
        image="mcr.microsoft.com/oss/kubernetes/coredns:v1.9.4-hotfix.20240704",
        nodes=nodes[:2],
        replicas=2,
        created=old,
        rollout=now - dt.timedelta(days=6, hours=1),
        revision=9,
        port=53,
        svc=False,
        probe_path="/ready",
        extra_labels={"k8s-app": "kube-dns"},
    )
    for k in range(14):
        t = now - dt.timedelta(minutes=118 - 8 * k)
        rp = ro["pods"][k % 2]["metadata"]["name"]
        sc.log(
            t,
            "logistics",
            rp,
            "route-optimizer",
            "route-optimizer",
            "warn",
            f'{{"level":"warn","msg":"solver hit time limit, returning best solution","limit_s":20,'
            f'"gap":0.0{3 + k % 5},"stops":{180 + 11 * k}}}',
        )
    for k in range(30):
        t = now - dt.timedelta(minutes=119 - 4 * k)
        tp = trk["pods"][k % 3]["metadata"]["name"]
        sc.log(
            t,
            "logistics",
            tp,
            "tracking-api",
            "tracking-api",
            "info",
            '{"level":"info","msg":"GET /v1/parcels/{id}/events","status":200,'
            f'"duration_ms":{9 + k % 11},"ts_local":"{iso(t)}"}}',
            **{"http.response.status_code": 200},
        )

    # ------------------------------------------------------------------ metrics
    grid = sc.grid(2)
    m = sc.metrics
    m.cumulative(
        "kube_pod_container_status_restarts_total",
        "The number of container restarts per container.",
        {
            "namespace": "logistics",
            "pod": pname,
            "uid": uid("logistics/pod/" + pname),
            "container": "dispatch-scheduler",
        },
        [t for t in grid if t > roll22],
        lambda t: max(0, sum(1 for s in starts if s <= t) - 1),
    )
    m.gauge(
        "kube_deployment_status_replicas_available",
        "The number of available replicas per deployment.",
        {"namespace": "logistics", "deployment": "dispatch-scheduler"},
        grid,
        lambda t: 1 if t < roll22 else 0,
    )
    m.gauge(
        "kube_deployment_status_replicas_available",
        "The number of available replicas per deployment.",
        {"namespace": "logistics", "deployment": "tracking-api"},
        grid,
        lambda t: 3,
    )
    m.counter(
        "dispatch_waves_planned",
        "Dispatch waves planned.",
        {"namespace": "logistics", "pod": old_pod},
        [t for t in grid if t < roll22],
        lambda t: 1 / 900,
        start=18_211,
    )
    m.gauge(
        "pg_up",
        "Whether the last scrape of postgres was able to connect.",
        {"namespace": "data", "pod": "dispatch-db-1"},
        grid,
        lambda t: 1,
    )
    m.gauge(
        "pg_replication_lag_seconds",
        "Replication lag behind the primary in seconds.",
        {"namespace": "data", "pod": "dispatch-db-0"},
        grid,
        lambda t: 0 if t.minute % 7 else 1,
    )
    return sc


def json_copy(o):
    import json

    return json.loads(json.dumps(o))
