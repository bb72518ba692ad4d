"""4. quota_exceeded: analytics' storage ResourceQuota is full, so the clickhouse StatefulSet
scale-out from 3 to 4 cannot create data-clickhouse-3 and its pod never appears."""

from datetime import timedelta

from ._kit import (
    Family,
    Scenario,
    T,
    container,
    endpoints,
    event,
    hexid,
    http_probe,
    iso,
    iso_ms,
    meta,
    namespace,
    node,
    noise,
    pod,
    pod_usage,
    restarts_metric,
    service,
    steps,
    template,
    uid,
)

NOW = T("2026-11-12T16:05:00Z")
SCALE = T("2026-11-12T15:09:27Z")
QUOTA_MSG = (
    'persistentvolumeclaims "data-clickhouse-3" is forbidden: exceeded quota: analytics-storage, '
    "requested: requests.storage=150Gi, used: requests.storage=600Gi, limited: "
    "requests.storage=600Gi"
)

SID = "statefulset-pvc-quota-full"


def pvc(name, ns, *, created, size, sc_name="gp3", phase="Bound", node_name=None, labels=None):
    vol = "pvc-" + uid("PersistentVolume", ns, name)
    ann = {
        "volume.beta.kubernetes.io/storage-provisioner": "ebs.csi.aws.com",
        "volume.kubernetes.io/storage-provisioner": "ebs.csi.aws.com",
    }
    if phase == "Bound":
        ann.update(
            {
                "pv.kubernetes.io/bind-completed": "yes",
                "pv.kubernetes.io/bound-by-controller": "yes",
            }
        )
    if node_name:
        ann["volume.kubernetes.io/selected-node"] = node_name
    spec = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": size}},
        "storageClassName": sc_name,
        "volumeMode": "Filesystem",
    }
    status = {"phase": phase}
    if phase == "Bound":
        spec["volumeName"] = vol
        status.update({"accessModes": ["ReadWriteOnce"], "capacity": {"storage": size}})
    m = meta(name, ns, created, labels, ann, kind="PersistentVolumeClaim")
    m["finalizers"] = ["kubernetes.io/pvc-protection"]
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": m,
        "spec": spec,
        "status": status,
    }


def build():
    sc = Scenario(
        SID,
        "clickhouse scale-out stuck at 3 of 4 replicas",
        NOW,
        (
            "we scaled clickhouse in analytics from 3 to 4 an hour ago (queries are slow, the 3 "
            "shards are maxed out)\n"
            "and clickhouse-3 never showed up, not even as Pending. I'm fairly sure the EBS CSI "
            "driver is acting up\n"
            "again, it was throwing throttling errors last week. can you check what's wrong with "
            "the volumes?\n"
        ),
        {
            "category": "quota_exceeded",
            "culprit": {"kind": "StatefulSet", "namespace": "analytics", "name": "clickhouse"},
            "evidence": [
                "exceeded quota: analytics-storage",
                "requested: requests.storage=150Gi",
                "used: requests.storage=600Gi, limited: requests.storage=600Gi",
                (
                    "create Claim data-clickhouse-3 for Pod clickhouse-3 in StatefulSet "
                    "clickhouse failed"
                ),
            ],
            "fix": "Raise analytics-storage's requests.storage (600Gi is used up by the 3 data "
            "claims, "
            "backups-staging and notebook-scratch) to at least 750Gi, or delete backups-staging; "
            "the "
            "StatefulSet controller then creates data-clickhouse-3 and clickhouse-3.",
        },
        seed=4504,
    )
    rng = sc.rng
    start = NOW - timedelta(hours=3)
    times = list(steps(start, NOW, 120))
    ncreated = T("2026-11-08T06:10:00Z")
    nodes = [
        ("ip-10-40-12-45.eu-west-1.compute.internal", "10.40.12.45", "eu-west-1a"),
        ("ip-10-40-13-90.eu-west-1.compute.internal", "10.40.13.90", "eu-west-1b"),
        ("ip-10-40-14-66.eu-west-1.compute.internal", "10.40.14.66", "eu-west-1c"),
        ("ip-10-40-12-181.eu-west-1.compute.internal", "10.40.12.181", "eu-west-1a"),
    ]
    for i, (n, ip, z) in enumerate(nodes):
        sc.add(
            node(
                n,
                ncreated + timedelta(minutes=3 * i),
                NOW,
                ip=ip,
                cpu=8,
                mem_gi=64,
                instance_type="r6i.2xlarge",
                zone=z,
                pool="data-2026a",
            )
        )
    for ns in ("analytics", "ingest", "monitoring", "kube-system"):
        sc.add(
            namespace(
                ns,
                T("2025-04-01T09:00:00Z"),
                {"quillmark.io/team": "data" if ns in ("analytics", "ingest") else "platform"},
            )
        )
    N = {i: (nodes[i][0], nodes[i][1]) for i in range(4)}

    sc.add(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": meta(
                "gp3",
                None,
                T("2025-04-01T08:00:00Z"),
                None,
                {"storageclass.kubernetes.io/is-default-class": "true"},
                kind="StorageClass",
            ),
            "provisioner": "ebs.csi.aws.com",
            "parameters": {"type": "gp3", "encrypted": "true", "fsType": "ext4"},
            "reclaimPolicy": "Delete",
            "allowVolumeExpansion": True,
            "volumeBindingMode": "WaitForFirstConsumer",
        }
    )

    # ----------------------------------------------- quota and limits
    sc.add(
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": meta(
                "analytics-storage",
                "analytics",
                T("2025-09-15T10:00:00Z"),
                {"quillmark.io/managed-by": "platform-quotas"},
                kind="ResourceQuota",
            ),
            "spec": {"hard": {"persistentvolumeclaims": "8", "requests.storage": "600Gi"}},
            "status": {
                "hard": {"persistentvolumeclaims": "8", "requests.storage": "600Gi"},
                "used": {"persistentvolumeclaims": "5", "requests.storage": "600Gi"},
            },
        }
    )
    sc.add(
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": meta(
                "analytics-compute",
                "analytics",
                T("2025-09-15T10:00:00Z"),
                {"quillmark.io/managed-by": "platform-quotas"},
                kind="ResourceQuota",
            ),
            "spec": {
                "hard": {
                    "requests.cpu": "40",
                    "requests.memory": "200Gi",
                    "limits.memory": "260Gi",
                    "pods": "40",
                }
            },
            "status": {
                "hard": {
                    "requests.cpu": "40",
                    "requests.memory": "200Gi",
                    "limits.memory": "260Gi",
                    "pods": "40",
                },
                "used": {
                    "requests.cpu": "11",
                    "requests.memory": "78336Mi",
                    "limits.memory": "93Gi",
                    "pods": "6",
                },
            },
        }
    )
    sc.add(
        {
            "apiVersion": "v1",
            "kind": "LimitRange",
            "metadata": meta(
                "analytics-defaults", "analytics", T("2025-09-15T10:00:00Z"), kind="LimitRange"
            ),
            "spec": {
                "limits": [
                    {
                        "type": "Container",
                        "default": {"cpu": "1", "memory": "1Gi"},
                        "defaultRequest": {"cpu": "250m", "memory": "512Mi"},
                    },
                    {
                        "type": "PersistentVolumeClaim",
                        "max": {"storage": "500Gi"},
                        "min": {"storage": "1Gi"},
                    },
                ]
            },
        }
    )

    # ----------------------------------------------- clickhouse StatefulSet
    labels = {
        "app.kubernetes.io/name": "clickhouse",
        "app": "clickhouse",
        "app.kubernetes.io/part-of": "analytics",
    }
    ch_c = [
        container(
            "clickhouse",
            "clickhouse/clickhouse-server:24.8.6.70",
            cpu_req="3",
            mem_req="24Gi",
            cpu_lim="4",
            mem_lim="28Gi",
            ports=[("http", 8123), ("native", 9000), ("interserver", 9009), ("metrics", 9363)],
            readiness=http_probe("/ping", 8123),
            mounts=[
                {"name": "data", "mountPath": "/var/lib/clickhouse"},
                {"name": "config", "mountPath": "/etc/clickhouse-server/config.d"},
            ],
        )
    ]
    rev = "clickhouse-" + "7d9c6b8f4c"
    tm = template(
        labels,
        ch_c,
        [{"name": "config", "configMap": {"name": "clickhouse-config", "defaultMode": 420}}],
    )
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": dict(
            meta(
                "clickhouse",
                "analytics",
                T("2025-09-20T10:00:00Z"),
                labels,
                {"quillmark.io/last-scaled-by": "d.okafor"},
                kind="StatefulSet",
            ),
            generation=9,
        ),
        "spec": {
            "replicas": 4,
            "serviceName": "clickhouse-headless",
            "podManagementPolicy": "OrderedReady",
            "selector": {"matchLabels": {"app": "clickhouse"}},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
            "persistentVolumeClaimRetentionPolicy": {
                "whenDeleted": "Retain",
                "whenScaled": "Retain",
            },
            "revisionHistoryLimit": 10,
            "template": tm,
            "volumeClaimTemplates": [
                {
                    "apiVersion": "v1",
                    "kind": "PersistentVolumeClaim",
                    "metadata": {"name": "data", "creationTimestamp": None},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "storageClassName": "gp3",
                        "resources": {"requests": {"storage": "150Gi"}},
                        "volumeMode": "Filesystem",
                    },
                    "status": {"phase": "Pending"},
                }
            ],
        },
        "status": {
            "observedGeneration": 9,
            "replicas": 3,
            "readyReplicas": 3,
            "currentReplicas": 3,
            "updatedReplicas": 3,
            "availableReplicas": 3,
            "currentRevision": rev,
            "updateRevision": rev,
            "collisionCount": 0,
        },
    }
    sc.add(sts)
    ch_pods = []
    for i in range(3):
        pc = ncreated + timedelta(minutes=20 + 3 * i)
        pl = dict(
            labels,
            **{
                "controller-revision-hash": rev,
                "statefulset.kubernetes.io/pod-name": f"clickhouse-{i}",
                "apps.kubernetes.io/pod-index": str(i),
            },
        )
        p = pod(
            f"clickhouse-{i}",
            "analytics",
            node_name=N[i][0],
            host_ip=N[i][1],
            ip=f"10.40.{12 + i}.{110 + i}",
            created=pc,
            owner=("StatefulSet", "clickhouse"),
            labels=pl,
            containers=ch_c,
            volumes=[
                {"name": "data", "persistentVolumeClaim": {"claimName": f"data-clickhouse-{i}"}},
                {"name": "config", "configMap": {"name": "clickhouse-config", "defaultMode": 420}},
            ],
            hostname=f"clickhouse-{i}",
            subdomain="clickhouse-headless",
        )
        ch_pods.append(p)
        sc.add(p)
        sc.add(
            pvc(
                f"data-clickhouse-{i}",
                "analytics",
                created=T("2025-09-20T10:00:00Z") + timedelta(minutes=2 * i),
                size="150Gi",
                node_name=N[i][0],
                labels={"app": "clickhouse"},
            )
        )
    sc.add(
        pvc(
            "backups-staging",
            "analytics",
            created=T("2026-10-30T09:14:00Z"),
            size="100Gi",
            node_name=N[3][0],
        )
    )
    sc.add(
        pvc(
            "notebook-scratch",
            "analytics",
            created=T("2026-06-03T13:40:00Z"),
            size="50Gi",
            node_name=N[3][0],
        )
    )
    sc.add(
        service(
            "clickhouse-headless",
            "analytics",
            created=T("2025-09-20T10:00:00Z"),
            selector={"app": "clickhouse"},
            ports=[("http", 8123, 8123), ("native", 9000, 9000), ("interserver", 9009, 9009)],
            cluster_ip="None",
        )
    )
    sc.add(
        endpoints(
            "clickhouse-headless",
            "analytics",
            created=T("2025-09-20T10:00:00Z"),
            ready=[
                (p["status"]["podIP"], p["spec"]["nodeName"], p["metadata"]["name"])
                for p in ch_pods
            ],
            ports=[("http", 8123), ("native", 9000), ("interserver", 9009)],
        )
    )

    # ----------------------------------------------- other analytics workloads
    qg = Family(
        sc,
        "analytics",
        "query-gateway",
        containers=[
            container(
                "chproxy",
                "contentsquareplatform/chproxy:v1.26.4",
                cpu_req="500m",
                mem_req="256Mi",
                cpu_lim="1",
                mem_lim="512Mi",
                ports=[("http", 9090)],
                readiness=http_probe("/metrics", 9090),
            )
        ],
        replicas=2,
        placements=[
            (N[3][0], N[3][1], "10.40.12.190", T("2026-11-08T06:40:00Z")),
            (N[1][0], N[1][1], "10.40.13.171", T("2026-11-08T06:40:30Z")),
        ],
        created=T("2025-09-20T10:00:00Z"),
        rs_created=T("2026-10-02T10:00:00Z"),
        revision=8,
    )
    jup = Family(
        sc,
        "analytics",
        "notebooks",
        containers=[
            container(
                "jupyter",
                "quay.io/jupyter/scipy-notebook:2024-10-07",
                cpu_req="1",
                mem_req="4Gi",
                cpu_lim="2",
                mem_lim="8Gi",
                ports=[("http", 8888)],
                readiness=http_probe("/api", 8888),
                mounts=[{"name": "scratch", "mountPath": "/home/jovyan/scratch"}],
            )
        ],
        replicas=1,
        placements=[(N[3][0], N[3][1], "10.40.12.199", T("2026-11-08T06:42:00Z"))],
        created=T("2026-06-03T13:40:00Z"),
        rs_created=T("2026-06-03T13:40:00Z"),
        revision=1,
        volumes=[{"name": "scratch", "persistentVolumeClaim": {"claimName": "notebook-scratch"}}],
    )

    # ----------------------------------------------- ingest: a claim waiting for its first consumer
    sc.add(
        pvc(
            "connect-offsets",
            "ingest",
            created=NOW - timedelta(minutes=35),
            size="20Gi",
            phase="Pending",
        )
    )
    Family(
        sc,
        "ingest",
        "kafka-connect",
        containers=[
            container(
                "kafka-connect",
                "quay.io/strimzi/kafka:0.43.0-kafka-3.8.0",
                cpu_req="1",
                mem_req="2Gi",
                cpu_lim="2",
                mem_lim="3Gi",
                ports=[("rest", 8083)],
            )
        ],
        replicas=2,
        placements=[
            (N[0][0], N[0][1], "10.40.12.77", T("2026-11-08T06:50:00Z")),
            (N[2][0], N[2][1], "10.40.14.31", T("2026-11-08T06:50:40Z")),
        ],
        created=T("2025-04-02T10:00:00Z"),
        rs_created=T("2026-10-21T10:00:00Z"),
        revision=14,
    )
    # kube-system: the EBS CSI controller, with an old restart and last week's throttling noise
    csi = Family(
        sc,
        "kube-system",
        "ebs-csi-controller",
        containers=[
            container(
                "ebs-plugin",
                "602401143452.dkr.ecr.eu-west-1.amazonaws.com/eks/aws-ebs-csi-driver:v1.36.0",
                cpu_req="10m",
                mem_req="40Mi",
                mem_lim="256Mi",
                ports=[("healthz", 9808)],
            ),
            container(
                "csi-provisioner",
                "602401143452.dkr.ecr.eu-west-1.amazonaws.com/eks/csi-provisioner:v5.1.0-eks-1-31-5",
                cpu_req="10m",
                mem_req="40Mi",
                mem_lim="256Mi",
            ),
        ],
        replicas=2,
        placements=[
            (N[0][0], N[0][1], "10.40.12.15", T("2026-11-08T06:12:00Z")),
            (N[1][0], N[1][1], "10.40.13.15", T("2026-11-08T06:15:00Z")),
        ],
        created=T("2025-04-01T08:00:00Z"),
        rs_created=T("2026-10-15T08:00:00Z"),
        revision=7,
        labels={"app.kubernetes.io/component": "csi-driver"},
        pod_overrides={
            0: {
                "statuses": {
                    "ebs-plugin": {
                        "restartCount": 2,
                        "state": {"running": {"startedAt": "2026-11-09T22:14:09Z"}},
                        "lastState": {
                            "terminated": {
                                "exitCode": 2,
                                "reason": "Error",
                                "startedAt": "2026-11-09T03:01:55Z",
                                "finishedAt": "2026-11-09T22:14:07Z",
                            }
                        },
                    }
                }
            }
        },
    )

    # ----------------------------------------------- events
    ff = SCALE + timedelta(seconds=1)
    sc.add(
        event(
            "analytics",
            kind="StatefulSet",
            name="clickhouse",
            api="apps/v1",
            reason="FailedCreate",
            message=(
                "create Claim data-clickhouse-3 for Pod clickhouse-3 in StatefulSet clickhouse "
                f"failed error: {QUOTA_MSG}"
            ),
            first=ff,
            last=NOW - timedelta(minutes=2),
            count=27,
            type_="Warning",
            component="statefulset-controller",
        )
    )
    sc.add(
        event(
            "analytics",
            kind="StatefulSet",
            name="clickhouse",
            api="apps/v1",
            reason="FailedCreate",
            message=(
                "create Pod clickhouse-3 in StatefulSet clickhouse failed error: failed to "
                f"create PVC data-clickhouse-3: {QUOTA_MSG}"
            ),
            first=ff,
            last=NOW - timedelta(minutes=2),
            count=27,
            type_="Warning",
            component="statefulset-controller",
        )
    )
    sc.add(
        event(
            "ingest",
            kind="PersistentVolumeClaim",
            name="connect-offsets",
            reason="WaitForFirstConsumer",
            message="waiting for first consumer to be created before binding",
            first=NOW - timedelta(minutes=35),
            last=NOW - timedelta(minutes=1),
            count=141,
            component="persistentvolume-controller",
        )
    )
    sc.add(
        event(
            "analytics",
            kind="Pod",
            name=jup.pods[0]["metadata"]["name"],
            reason="Unhealthy",
            message=(
                'Readiness probe failed: Get "http://10.40.12.199:8888/api": dial tcp '
                "10.40.12.199:8888: connect: connection refused"
            ),
            first=NOW - timedelta(minutes=48),
            last=NOW - timedelta(minutes=48),
            type_="Warning",
            host=nodes[3][0],
            field_path="spec.containers{jupyter}",
        )
    )

    # ----------------------------------------------- logs
    def jl(p, t, level, msg, svc, cont=None, **kw):
        sc.log(
            t,
            ns=p["metadata"]["namespace"],
            pod=p["metadata"]["name"],
            container=cont or p["spec"]["containers"][0]["name"],
            service=svc,
            level=level,
            message=msg,
            **kw,
        )

    for t in steps(start, NOW, 60):
        for p in ch_pods:
            qid = hexid("q", p["metadata"]["name"], iso(t), n=8)
            ms = int(noise(rng, 2400 if t > start + timedelta(minutes=40) else 1500, 0.3))
            jl(
                p,
                t + timedelta(seconds=rng.uniform(0, 59)),
                "information",
                f"{t.strftime('%Y.%m.%d %H:%M:%S')}.{rng.randint(100000, 999999)} [ "
                f"{rng.randint(400, 900)} ] {{{qid}-4b1e-9f0d}} <Information> executeQuery: Read "
                f"{rng.randint(10, 90)}000000 rows, "
                f"{rng.randint(1, 9)}.{rng.randint(0, 99)} GiB in {ms / 1000:.3f} sec.",
                "clickhouse",
            )
        if rng.random() < 0.2:
            jl(
                ch_pods[rng.randrange(3)],
                t + timedelta(seconds=30),
                "warning",
                "<Warning> MergeTreeBackgroundExecutor: Number of running merges (16) is close to "
                "the pool size, merges may be delayed",
                "clickhouse",
            )
        for p in qg.pods:
            if rng.random() < 0.3:
                jl(
                    p,
                    t + timedelta(seconds=rng.uniform(0, 59)),
                    "info",
                    f'DEBUG: {iso_ms(t)} [ Id: {rng.randint(10**15, 10**16)}; User "bi"(1) '
                    f'proxying as "default"(1) to "clickhouse-{rng.randrange(3)}.clickhouse-headle'
                    'ss:8123"(1); '
                    f'RemoteAddr: "10.40.13.{rng.randint(2, 250)}:{rng.randint(30000, 60000)}"; '
                    'LocalAddr: "10.40.12.190:9090" ] request success; query: "SELECT ..."; URL: '
                    f'"http://clickhouse-{rng.randrange(3)}.clickhouse-headless:8123/"',
                    "query-gateway",
                )
    # ebs-csi: routine output, nothing about clickhouse (no CreateVolume was ever requested)
    cp = csi.pods[0]
    for t in steps(start + timedelta(minutes=4), NOW, 900):
        jl(
            cp,
            t,
            "info",
            f'I1112 {t.strftime("%H:%M:%S")}.118203       1 controller.go:1366] "Volume attach '
            f'status" volumeID="vol-0{hexid("v", iso(t), n=16)}" state="attached"',
            "ebs-csi-controller",
            cont="ebs-plugin",
        )
    jl(
        cp,
        NOW - timedelta(minutes=35),
        "info",
        'I1112 15:30:00.702918       1 controller.go:1293] provision "ingest/connect-offsets" '
        'class "gp3": waiting for first consumer',
        "ebs-csi-controller",
        cont="csi-provisioner",
    )

    # ----------------------------------------------- metrics
    for res, hard, used in (
        ("requests.storage", 600 * 2**30, 600 * 2**30),
        ("persistentvolumeclaims", 8, 5),
    ):
        for typ, v in (("hard", hard), ("used", used)):
            sc.metrics.gauge(
                "kube_resourcequota",
                "Information about resource quota.",
                {
                    "namespace": "analytics",
                    "resourcequota": "analytics-storage",
                    "resource": res,
                    "type": typ,
                },
                [(t, v) for t in times],
            )
    for res, hard, used in (("requests.cpu", 40, 11), ("pods", 40, 6)):
        for typ, v in (("hard", hard), ("used", used)):
            sc.metrics.gauge(
                "kube_resourcequota",
                "Information about resource quota.",
                {
                    "namespace": "analytics",
                    "resourcequota": "analytics-compute",
                    "resource": res,
                    "type": typ,
                },
                [(t, v) for t in times],
            )
    sc.metrics.gauge(
        "kube_statefulset_replicas",
        "Number of desired pods for a StatefulSet.",
        {"namespace": "analytics", "statefulset": "clickhouse"},
        [(t, 4 if t >= SCALE else 3) for t in times],
    )
    sc.metrics.gauge(
        "kube_statefulset_status_replicas_ready",
        "The number of ready replicas per StatefulSet.",
        {"namespace": "analytics", "statefulset": "clickhouse"},
        [(t, 3) for t in times],
    )
    for p in ch_pods:
        pod_usage(
            sc,
            p,
            "clickhouse",
            times,
            lambda t: noise(rng, 3.82, 0.04),
            lambda t: noise(rng, 2.31e10, 0.02),
        )
        restarts_metric(sc, p, "clickhouse", times)
    for p in ch_pods:
        sc.metrics.gauge(
            "ClickHouseMetrics_Query",
            "Number of executing queries",
            {"namespace": "analytics", "pod": p["metadata"]["name"]},
            [(t, rng.randint(14, 31)) for t in times],
        )
    return sc
