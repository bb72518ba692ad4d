"""8. quota_exceeded: a new workload filled the namespace's limits.memory quota; an existing
Deployment's rollout cannot create its surge pod."""

from __future__ import annotations

from datetime import timedelta

from ._kit import (
    Cluster,
    Metrics,
    Scenario,
    add_nodes,
    container,
    cstatus,
    deploy_status,
    endpoints,
    event,
    http_probe,
    iso,
    jitter,
    namespace,
    pod,
    pod_template,
    rng,
    service,
    statefulset,
    terminated,
    uid,
)

SID = "report-api-rollout-quota-full"
NOW = "2026-11-26T15:20:00Z"
ROLL = 38
QUOTA = "analytics-compute"


def gi(q: str) -> float:
    if q.endswith("Gi"):
        return float(q[:-2])
    if q.endswith("Mi"):
        return float(q[:-2]) / 1024
    raise ValueError(q)


def cores(q: str) -> float:
    return float(q[:-1]) / 1000 if q.endswith("m") else float(q)


def build() -> Scenario:
    sc = Scenario(SID, NOW)
    ck = sc.clock
    cl = Cluster(sc, pod_net="10.130")
    for ns in ("analytics", "web", "platform"):
        sc.add(namespace(ns, ck.t(days=365), labels={"team": ns}))
    nodes = add_nodes(
        cl,
        ck,
        "eu-west-3",
        [
            ("90.12", "a", "50"),
            ("91.140", "b", "51"),
            ("92.77", "c", "52"),
            ("90.203", "a", "53"),
            ("91.35", "b", "54"),
            ("92.180", "c", "55"),
        ],
        itype="r6i.4xlarge",
        cpu="16",
        memory="130393360Ki",
        alloc_cpu="15890m",
        alloc_mem="127669520Ki",
    )
    t_roll = ck.ago(minutes=ROLL)

    # ------------------------------------- analytics workloads
    def c(name, image, rc, rm, lc, lm, **kw):
        return container(name, image, cpu_req=rc, mem_req=rm, cpu_lim=lc, mem_lim=lm, **kw)

    reg = "registry.orchardlane.fr/analytics"
    ra_new = c(
        "report-api",
        f"{reg}/report-api:2.14.0",
        "500m",
        "2Gi",
        "2",
        "3Gi",
        ports=[("http", 8080)],
        readiness=http_probe("/healthz", "http"),
    )
    ra_old = c(
        "report-api",
        f"{reg}/report-api:2.13.2",
        "500m",
        "2Gi",
        "2",
        "3Gi",
        ports=[("http", 8080)],
        readiness=http_probe("/healthz", "http"),
    )
    new_hash, old_hash = "7b9c6d5f8", "5d8f7c6b94"
    ra = cl.deployment(
        "analytics",
        "report-api",
        [ra_new],
        replicas=4,
        created=ck.t(days=365),
        rs_created=iso(t_roll),
        revision=52,
        hash_=new_hash,
        add_pods=False,
        max_surge=1,
        max_unavailable=0,
        change_cause="report-api 2.14.0: quarterly revenue export",
        old=[(old_hash, ck.t(days=6, hours=4), 51, [ra_old], 4)],
    )
    dep = ra["deployment"]
    new_rs, old_rs = ra["current_rs"], ra["rs"][0]
    blocked = f"report-api-{new_hash}-k2xqz"
    quota_msg_tail = (
        "exceeded quota: analytics-compute, requested: limits.memory=3Gi, used: "
        "limits.memory=126Gi, limited: limits.memory=128Gi"
    )
    fc_msg = f'pods "{blocked}" is forbidden: {quota_msg_tail}'
    new_rs["spec"]["replicas"] = 1
    new_rs["status"] = {
        "replicas": 0,
        "observedGeneration": 1,
        "conditions": [
            {
                "type": "ReplicaFailure",
                "status": "True",
                "lastTransitionTime": iso(t_roll + timedelta(seconds=1)),
                "reason": "FailedCreate",
                "message": fc_msg,
            }
        ],
    }
    t_dead = t_roll + timedelta(seconds=601)
    dep["status"] = {
        "observedGeneration": 52,
        **deploy_status(
            4,
            4,
            updated=0,
            available=4,
            rs_name=new_rs["metadata"]["name"],
            progress_time=iso(t_dead),
            available_time=ck.t(days=6, hours=4),
            progressing=("False", "ProgressDeadlineExceeded", None),
            extra_conditions=[
                {
                    "type": "ReplicaFailure",
                    "status": "True",
                    "lastUpdateTime": iso(t_roll + timedelta(seconds=1)),
                    "lastTransitionTime": iso(t_roll + timedelta(seconds=1)),
                    "reason": "FailedCreate",
                    "message": fc_msg,
                }
            ],
        ),
    }
    dep["status"]["updatedReplicas"] = 0
    ra_pods = [
        cl.make_pod(old_rs, ra["old_templates"][0], i, ck.t(days=6, hours=4, seconds=-30 * i), None)
        for i in range(4)
    ]
    svc = service(
        "analytics",
        "report-api",
        ck.t(days=365),
        selector={"app": "report-api"},
        ports=[("http", 80, "http")],
        cluster_ip="172.20.130.20",
    )
    sc.add(svc, endpoints(svc, ra_pods))
    sc.add(
        event(
            dep,
            "ScalingReplicaSet",
            f"Scaled up replica set {new_rs['metadata']['name']} to 1",
            first=iso(t_roll),
            component="deployment-controller",
        ),
        event(
            new_rs,
            "FailedCreate",
            f'Error creating: pods "report-api-{new_hash}-9fw4d" is forbidden: {quota_msg_tail}',
            first=iso(t_roll + timedelta(seconds=1)),
            type_="Warning",
            component="replicaset-controller",
        ),
        event(
            new_rs,
            "FailedCreate",
            f"(combined from similar events): Error creating: {fc_msg}",
            first=iso(t_roll + timedelta(seconds=2)),
            last=ck.t(minutes=1, seconds=40),
            count=22,
            type_="Warning",
            component="replicaset-controller",
            seed="combined",
        ),
    )

    workloads = []  # (pods, template containers)
    t_fs = ck.ago(hours=22, minutes=10)
    fs_c = c(
        "feature-store",
        f"{reg}/feature-store:0.9.0",
        "2",
        "12Gi",
        "4",
        "16Gi",
        ports=[("grpc", 6566)],
        readiness={
            "grpc": {"port": 6566, "service": ""},
            "initialDelaySeconds": 10,
            "periodSeconds": 10,
            "timeoutSeconds": 1,
            "successThreshold": 1,
            "failureThreshold": 3,
        },
    )
    fs_tpl = pod_template({"app": "feature-store"}, [fs_c])
    fs = statefulset(
        "analytics",
        "feature-store",
        iso(t_fs),
        fs_tpl,
        replicas=3,
        ready=3,
        service="feature-store",
        revision_hash="6f7b8d9c5b",
        volume_claims=[
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": "data"},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": "gp3",
                    "resources": {"requests": {"storage": "200Gi"}},
                },
            }
        ],
    )
    fs["metadata"]["generation"] = 1
    fs["status"]["observedGeneration"] = 1
    fs["metadata"]["annotations"] = {
        "argocd.argoproj.io/tracking-id": "analytics:apps/StatefulSet:analytics/feature-store"
    }
    sc.add(fs)
    fs_pods = []
    for i in range(3):
        pn = f"feature-store-{i}"
        nd = nodes[(i + 3) % 6]
        t0 = t_fs + timedelta(seconds=70 * i + 5)
        p = pod(
            fs,
            pn,
            iso(t0),
            fs_tpl,
            node_name=nd,
            pod_ip=cl.pod_ip(nd),
            host_ip=cl.host_ip(nd),
            statuses=[
                cstatus(
                    "feature-store",
                    fs_c["image"],
                    running_since=iso(t0 + timedelta(seconds=9)),
                    pod_seed=pn,
                )
            ],
            ready_since=iso(t0 + timedelta(seconds=40)),
            labels_extra={
                "controller-revision-hash": "feature-store-6f7b8d9c5b",
                "statefulset.kubernetes.io/pod-name": pn,
            },
        )
        sc.add(p)
        fs_pods.append(p)
    fsvc = service(
        "analytics",
        "feature-store",
        ck.t(hours=22, minutes=10),
        selector={"app": "feature-store"},
        ports=[("grpc", 6566, "grpc")],
        headless=True,
    )
    sc.add(fsvc, endpoints(fsvc, fs_pods))
    workloads.append((fs_pods, [fs_c]))
    workloads.append((ra_pods, [ra_old]))

    t_etl = ck.ago(days=2, hours=7)
    others = [
        (
            "etl-runner",
            3,
            c("etl-runner", f"{reg}/etl-runner:5.2.1", "2", "8Gi", "4", "12Gi"),
            ck.t(days=5, hours=20),
            "84f6c9d7b",
            lambda i, n, nd: (
                {
                    "containers": {
                        "etl-runner": {
                            "restarts": 1,
                            "running_since": iso(t_etl),
                            "last_terminated": terminated(
                                "Error",
                                1,
                                ck.t(days=5, hours=20),
                                iso(t_etl - timedelta(seconds=3)),
                                seed=n,
                            ),
                        }
                    }
                }
                if i == 1
                else None
            ),
        ),
        (
            "notebook-hub",
            1,
            c(
                "notebook-hub",
                "quay.io/jupyterhub/k8s-hub:3.3.8",
                "1",
                "4Gi",
                "2",
                "8Gi",
                ports=[("http", 8081)],
            ),
            ck.t(days=6, hours=1),
            "6b5c7d8f9",
            None,
        ),
        (
            "metabase",
            2,
            c(
                "metabase",
                "docker.io/metabase/metabase:v0.51.4",
                "1",
                "4Gi",
                "2",
                "6Gi",
                ports=[("http", 3000)],
            ),
            ck.t(days=4, hours=3),
            "5f9d6c7b8",
            None,
        ),
        (
            "dbt-scheduler",
            1,
            c("dbt-scheduler", f"{reg}/dbt-scheduler:1.8.7", "500m", "2Gi", "1", "4Gi"),
            ck.t(days=3, hours=9),
            "7c8b5d6f4",
            None,
        ),
        (
            "query-cache",
            1,
            c(
                "query-cache",
                "docker.io/library/redis:7.2.5",
                "500m",
                "4Gi",
                "1",
                "6Gi",
                ports=[("redis", 6379)],
            ),
            ck.t(days=6, hours=12),
            "9d6f8b7c5",
            None,
        ),
    ]
    other_deps = {}
    for name, n, cont, created, h, ps in others:
        d = cl.deployment(
            "analytics",
            name,
            [cont],
            replicas=n,
            created=ck.t(days=300),
            rs_created=created,
            revision=7,
            hash_=h,
            pod_status=ps,
        )
        other_deps[name] = d
        workloads.append((d["pods"], [cont]))
    ms = service(
        "analytics",
        "metabase",
        ck.t(days=300),
        selector={"app": "metabase"},
        ports=[("http", 80, "http")],
        cluster_ip="172.20.130.44",
    )
    sc.add(ms, endpoints(ms, other_deps["metabase"]["pods"]))

    # quota used = sum over running pods
    used = {
        "limits.memory": 0.0,
        "requests.memory": 0.0,
        "limits.cpu": 0.0,
        "requests.cpu": 0.0,
        "pods": 0,
    }
    for pods_, conts in workloads:
        for _ in pods_:
            for cc in conts:
                used["limits.memory"] += gi(cc["resources"]["limits"]["memory"])
                used["requests.memory"] += gi(cc["resources"]["requests"]["memory"])
                used["limits.cpu"] += cores(cc["resources"]["limits"]["cpu"])
                used["requests.cpu"] += cores(cc["resources"]["requests"]["cpu"])
            used["pods"] += 1
    assert used["limits.memory"] == 126, used
    hard = {
        "limits.cpu": "80",
        "limits.memory": "128Gi",
        "pods": "60",
        "requests.cpu": "40",
        "requests.memory": "96Gi",
    }
    fmt_cpu = lambda v: str(int(v)) if v == int(v) else f"{int(v * 1000)}m"  # noqa: E731
    used_s = {
        "limits.cpu": fmt_cpu(used["limits.cpu"]),
        "limits.memory": f"{int(used['limits.memory'])}Gi",
        "pods": str(used["pods"]),
        "requests.cpu": fmt_cpu(used["requests.cpu"]),
        "requests.memory": f"{int(used['requests.memory'])}Gi",
    }
    sc.add(
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {
                "name": QUOTA,
                "namespace": "analytics",
                "uid": uid("quota", "analytics", QUOTA),
                "creationTimestamp": ck.t(days=200),
                "labels": {"team": "analytics"},
            },
            "spec": {"hard": hard},
            "status": {"hard": hard, "used": used_s},
        }
    )
    sc.add(
        {
            "apiVersion": "v1",
            "kind": "LimitRange",
            "metadata": {
                "name": "analytics-defaults",
                "namespace": "analytics",
                "uid": uid("lr", "analytics"),
                "creationTimestamp": ck.t(days=200),
            },
            "spec": {
                "limits": [
                    {
                        "type": "Container",
                        "default": {"cpu": "1", "memory": "1Gi"},
                        "defaultRequest": {"cpu": "250m", "memory": "512Mi"},
                        "max": {"memory": "32Gi"},
                    }
                ]
            },
        }
    )

    # ------------------------------------- web: the report's consumer, plus an unrelated pull error
    dash_c = c(
        "revenue-dashboard",
        "registry.orchardlane.fr/web/revenue-dashboard:3.1.0",
        "200m",
        "256Mi",
        "1",
        "512Mi",
        ports=[("http", 3000)],
        env=[{"name": "REPORT_API_URL", "value": "http://report-api.analytics.svc.cluster.local"}],
    )
    dash = cl.deployment(
        "web",
        "revenue-dashboard",
        [dash_c],
        replicas=2,
        created=ck.t(days=300),
        rs_created=ck.t(days=1, hours=5),
        revision=40,
        hash_="6c9f7b5d8",
    )
    lp_c = c(
        "landing-preview",
        "registry.orchardlane.fr/web/landing-preview:pr-1182",
        "100m",
        "128Mi",
        "500m",
        "256Mi",
        ports=[("http", 8080)],
    )
    t_lp = ck.ago(minutes=57)
    pull_msg = (
        'Failed to pull image "registry.orchardlane.fr/web/landing-preview:pr-1182": rpc error: '
        "code = NotFound "
        'desc = failed to pull and unpack image "registry.orchardlane.fr/web/landing-preview:pr-11'
        '82": failed to '
        'resolve reference "registry.orchardlane.fr/web/landing-preview:pr-1182": '
        "registry.orchardlane.fr/web/"
        "landing-preview:pr-1182: not found"
    )
    lp = cl.deployment(
        "web",
        "landing-preview",
        [lp_c],
        replicas=1,
        created=iso(t_lp),
        rs_created=iso(t_lp),
        revision=1,
        hash_="58d7f6c9b",
        pod_status=lambda i, n, nd: {
            "containers": {
                "landing-preview": {
                    "ready": False,
                    "waiting": (
                        "ImagePullBackOff",
                        'Back-off pulling image "registry.orchardlane.fr/web/landing-preview:pr-11'
                        '82"',
                    ),
                }
            }
        },
    )
    lp["deployment"]["status"] = {
        "observedGeneration": 1,
        **deploy_status(
            1,
            0,
            available=0,
            rs_name=lp["current_rs"]["metadata"]["name"],
            progress_time=iso(t_lp + timedelta(seconds=601)),
            available_time=iso(t_lp),
            progressing=("False", "ProgressDeadlineExceeded", None),
            available_cond=("False", "MinimumReplicasUnavailable"),
        ),
    }
    lp["current_rs"]["status"] = {"replicas": 1, "fullyLabeledReplicas": 1, "observedGeneration": 1}
    lpp = lp["pods"][0]
    nd = lpp["spec"]["nodeName"]
    fp = "spec.containers{landing-preview}"
    sc.add(
        event(
            lpp,
            "Failed",
            pull_msg,
            first=iso(t_lp + timedelta(seconds=3)),
            last=ck.t(minutes=3),
            count=15,
            type_="Warning",
            component="kubelet",
            host=nd,
            field_path=fp,
        ),
        event(
            lpp,
            "Failed",
            "Error: ErrImagePull",
            first=iso(t_lp + timedelta(seconds=3)),
            last=ck.t(minutes=3),
            count=15,
            type_="Warning",
            component="kubelet",
            host=nd,
            field_path=fp,
            seed="e",
        ),
        event(
            lpp,
            "BackOff",
            'Back-off pulling image "registry.orchardlane.fr/web/landing-preview:pr-1182"',
            first=iso(t_lp + timedelta(seconds=5)),
            last=ck.t(seconds=50),
            count=240,
            type_="Normal",
            component="kubelet",
            host=nd,
            field_path=fp,
        ),
    )

    # ------------------------------------- metrics
    m = Metrics(ck.ago(minutes=150), ck.now, 60)
    rollts = t_roll.timestamp()
    ql = {"namespace": "analytics", "resourcequota": QUOTA}
    for res, h in (("limits.memory", 128 * 1024**3), ("requests.memory", 96 * 1024**3)):
        m.gauge(
            "kube_resourcequota",
            "Information about resource quota.",
            {**ql, "resource": res, "type": "hard"},
            lambda t, h=h: h,
        )
        u = used[res] * 1024**3
        m.gauge(
            "kube_resourcequota",
            "Information about resource quota.",
            {**ql, "resource": res, "type": "used"},
            lambda t, u=u: u,
        )
    for res, h in (("limits.cpu", 80), ("pods", 60)):
        m.gauge(
            "kube_resourcequota",
            "Information about resource quota.",
            {**ql, "resource": res, "type": "hard"},
            lambda t, h=h: h,
        )
        m.gauge(
            "kube_resourcequota",
            "Information about resource quota.",
            {**ql, "resource": res, "type": "used"},
            lambda t, v=used[res]: v,
        )
    dl = {"namespace": "analytics", "deployment": "report-api"}
    m.gauge(
        "kube_deployment_spec_replicas", "Number of desired pods for a deployment.", dl, lambda t: 4
    )
    m.gauge(
        "kube_deployment_status_replicas_available",
        "The number of available replicas per deployment.",
        dl,
        lambda t: 4,
    )
    m.gauge(
        "kube_deployment_status_replicas_updated",
        "The number of updated replicas per deployment.",
        dl,
        lambda t: 4 if t < rollts else 0,
    )
    m.gauge(
        "kube_deployment_metadata_generation",
        "Sequence number representing a specific generation of the desired state.",
        dl,
        lambda t: 51 if t < rollts else 52,
    )
    m.gauge(
        "kube_deployment_status_condition",
        "The current status conditions of a deployment.",
        {**dl, "condition": "Progressing", "status": "false"},
        lambda t: 1 if t >= t_dead.timestamp() else 0,
    )
    for p in ra_pods:
        m.counter(
            "http_requests",
            "Total HTTP requests served.",
            {
                "namespace": "analytics",
                "pod": p["metadata"]["name"],
                "service": "report-api",
                "code": "200",
            },
            lambda t: 3.1,
        )
    for p in fs_pods:
        j = jitter(p["metadata"]["name"], 2e8)
        m.gauge(
            "container_memory_working_set_bytes",
            "Current working set in bytes.",
            {
                "namespace": "analytics",
                "pod": p["metadata"]["name"],
                "container": "feature-store",
                "node": p["spec"]["nodeName"],
            },
            lambda t, j=j: round(10.6 * 1024**3 + j(t)),
        )
    sc.metrics = m

    # ------------------------------------- logs
    r = rng(SID)
    L = sc.logs
    for minute in range(150, -1, -1):
        t0 = ck.ago(minutes=minute)
        if minute % 3 == 0:
            for p in ra_pods:
                L.add(
                    t0 + timedelta(seconds=r.randint(0, 59)),
                    "analytics",
                    p["metadata"]["name"],
                    "report-api",
                    "report-api",
                    "info",
                    f"GET /v1/reports: {r.randint(520, 600)} served in 180s, p95 "
                    f"{r.randint(180, 260)}ms",
                )
        if minute % 5 == 0:
            for p in fs_pods:
                L.add(
                    t0 + timedelta(seconds=r.randint(0, 59)),
                    "analytics",
                    p["metadata"]["name"],
                    "feature-store",
                    "feature-store",
                    "info",
                    f"online store: {r.randint(41000, 47000)} lookups/5m, hit ratio "
                    f"0.9{r.randint(3, 8)}, resident set 10.{r.randint(4, 8)}GiB",
                )
            for p in dash["pods"]:
                L.add(
                    t0 + timedelta(seconds=r.randint(0, 59)),
                    "web",
                    p["metadata"]["name"],
                    "revenue-dashboard",
                    "revenue-dashboard",
                    "info",
                    "GET /quarterly 200",
                )
        if minute % 7 == 0:
            p = other_deps["etl-runner"]["pods"][minute % 3]
            L.add(
                t0 + timedelta(seconds=r.randint(0, 59)),
                "analytics",
                p["metadata"]["name"],
                "etl-runner",
                "etl-runner",
                "warn",
                "spark: WARN TaskSetManager: Stage 14 contains a task of very large size (1187 "
                "KiB). The maximum recommended task size is 1000 KiB.",
            )
    for p in dash["pods"]:
        for k in range(4):
            L.add(
                ck.ago(minutes=30 - 7 * k, seconds=-r.randint(0, 59)),
                "web",
                p["metadata"]["name"],
                "revenue-dashboard",
                "revenue-dashboard",
                "warn",
                "GET /v1/reports/revenue-export -> 404 from report-api (endpoint ships in "
                "report-api 2.14.0)",
            )

    sc.meta = {
        "title": "report-api 2.14.0 rollout never starts",
        "report": (
            "report-api 2.14.0 deploy has been hanging for ~40 min, argo says Progressing then "
            "Degraded, no new pod "
            "ever shows up. finance needs the revenue export today. I saw image pull errors in "
            "the cluster, is the "
            "registry down?\n"
        ),
        "truth": {
            "category": "quota_exceeded",
            "culprit": {"kind": "Deployment", "namespace": "analytics", "name": "report-api"},
            "evidence": [
                "exceeded quota: analytics-compute",
                "requested: limits.memory=3Gi",
                "used: limits.memory=126Gi, limited: limits.memory=128Gi",
                "FailedCreate",
            ],
            "fix": (
                "The analytics ResourceQuota (limits.memory 128Gi) is at 126Gi since "
                "feature-store (3 x 16Gi) was "
                "added yesterday; report-api's surge pod (3Gi, maxUnavailable 0) is refused. "
                "Raise the quota, "
                "trim feature-store's limits, or roll report-api with maxUnavailable 1. The image "
                "pull errors "
                "belong to web/landing-preview (a missing PR tag), not the registry."
            ),
        },
    }
    return sc
