"""4. crash_loop: the new image moved its entrypoint script; the Deployment's explicit command no
longer exists."""

from __future__ import annotations

from datetime import timedelta

from ._kit import (
    Cluster,
    Metrics,
    Scenario,
    add_nodes,
    container,
    deploy_status,
    endpoints,
    event,
    http_probe,
    iso,
    jitter,
    namespace,
    rng,
    service,
    terminated,
    uid,
)

SID = "pdf-renderer-entrypoint-moved"
NOW = "2026-11-16T16:05:00Z"
ROLL = 42  # minutes ago
START_ERR = (
    "failed to create containerd task: failed to create shim task: OCI runtime create failed: "
    "runc create "
    'failed: unable to start container process: exec: "/app/start.sh": stat /app/start.sh: no '
    "such file or "
    "directory: unknown"
)


def backoff_starts(t0: float, now: float) -> list[float]:
    """Start attempts of a container that fails at once, with the kubelet's 10 s doubling back-off
    up to 5 m."""
    out, t, delay = [], t0, 10
    while t <= now:
        out.append(t)
        t += delay + 1
        delay = min(delay * 2, 300)
    return out


def build() -> Scenario:
    sc = Scenario(SID, NOW)
    ck = sc.clock
    cl = Cluster(sc, pod_net="10.8")
    for ns in ("default", "docs", "web", "platform"):
        sc.add(namespace(ns, ck.t(days=250)))
    nodes = add_nodes(
        cl,
        ck,
        "eu-west-2",
        [("40.12", "a", "20"), ("41.99", "b", "21"), ("42.150", "c", "22"), ("40.230", "a", "23")],
        itype="m6i.xlarge",
        cpu="4",
        memory="16083916Ki",
        alloc_cpu="3920m",
        alloc_mem="15066060Ki",
    )
    nowts = ck.now.timestamp()
    t_roll = ck.ago(minutes=ROLL)

    # ------------------------------------------------------------- docs/pdf-renderer: stuck rollout
    def pr(image):
        return container(
            "pdf-renderer",
            image,
            command=["/app/start.sh"],
            args=["--workers", "4", "--port", "8080"],
            cpu_req="500m",
            mem_req="768Mi",
            cpu_lim="2",
            mem_lim="1536Mi",
            ports=[("http", 8080)],
            env=[
                {"name": "CHROMIUM_FLAGS", "value": "--no-sandbox --disable-gpu"},
                {"name": "RENDER_TIMEOUT_MS", "value": "30000"},
            ],
            readiness=http_probe("/healthz", "http", delay=5, period=10),
            liveness=http_probe("/healthz", "http", delay=20, period=20),
        )

    new_c = pr("registry.quirehouse.io/docs/pdf-renderer:4.0.0")
    old_c = pr("registry.quirehouse.io/docs/pdf-renderer:3.9.4")
    new_hash, old_hash = "5c8f9d7b6", "69b7c4d8f5"
    t_old = ck.ago(days=5, hours=2)
    pd = cl.deployment(
        "docs",
        "pdf-renderer",
        [new_c],
        replicas=4,
        created=ck.t(days=250),
        rs_created=iso(t_roll),
        revision=19,
        hash_=new_hash,
        add_pods=False,
        max_surge="25%",
        max_unavailable="25%",
        change_cause="pdf-renderer 4.0.0: rebase on the distroless node22 base image",
        old=[(old_hash, iso(t_old), 18, [old_c], 3)],
    )
    dep = pd["deployment"]
    new_rs = pd["current_rs"]
    old_rs = pd["rs"][0]
    old_tpl = pd["old_templates"][0]
    new_tpl = pd["template"]
    new_rs["spec"]["replicas"] = 2
    new_rs["status"] = {"replicas": 2, "fullyLabeledReplicas": 2, "observedGeneration": 1}
    old_rs["status"] = {
        "replicas": 3,
        "fullyLabeledReplicas": 3,
        "readyReplicas": 3,
        "availableReplicas": 3,
        "observedGeneration": 2,
    }
    old_rs["metadata"]["generation"] = 2
    t_deadline = t_roll + timedelta(seconds=600 + 41)
    dep["status"] = {
        "observedGeneration": 19,
        **deploy_status(
            4,
            3,
            updated=2,
            available=3,
            total=5,
            rs_name=new_rs["metadata"]["name"],
            progress_time=iso(t_deadline),
            available_time=iso(t_old),
            progressing=("False", "ProgressDeadlineExceeded", None),
        ),
    }
    old_pods = []
    for i in range(3):
        p = cl.make_pod(
            old_rs, old_tpl, i, iso(t_old + timedelta(seconds=20 * i)), nodes[i : i + 1] or None
        )
        old_pods.append(p)
    # new pods in CrashLoopBackOff
    new_pods = []
    starts = {}
    for i in range(2):
        t0 = t_roll + timedelta(seconds=1 + 40 * i)
        nd = nodes[3] if i == 0 else nodes[1]
        pname = f"pdf-renderer-{new_hash}-{['x7tqk', 'm2b9w'][i]}"
        st = backoff_starts(t0.timestamp() + 3, nowts)
        starts[pname] = st
        last = st[-1]
        puid = uid("pod", "docs", pname)
        p = cl.make_pod(
            new_rs,
            new_tpl,
            i,
            iso(t0),
            [nd],
            pod_status=lambda i_, n_, nd_, st=st, last=last, pname=pname, puid=puid: {
                "containers": {
                    "pdf-renderer": {
                        "ready": False,
                        "restarts": len(st) - 1,
                        "waiting": (
                            "CrashLoopBackOff",
                            "back-off 5m0s restarting failed container=pdf-renderer "
                            f"pod={pname}_docs({puid})",
                        ),
                        "last_terminated": terminated(
                            "StartError",
                            128,
                            iso(ck.ago(seconds=nowts - last)),
                            iso(ck.ago(seconds=nowts - last)),
                            message=START_ERR,
                            seed=pname,
                        ),
                    }
                },
                "phase": "Running",
            },
        )
        p["metadata"]["name"] = pname
        p["metadata"]["uid"] = puid
        new_pods.append(p)
    svc = service(
        "docs",
        "pdf-renderer",
        ck.t(days=250),
        selector={"app": "pdf-renderer"},
        ports=[("http", 80, "http")],
        cluster_ip="172.20.61.33",
    )
    sc.add(svc, endpoints(svc, old_pods, not_ready=new_pods))
    # rollout events
    sc.add(
        event(
            dep,
            "ScalingReplicaSet",
            f"Scaled up replica set {new_rs['metadata']['name']} to 1",
            first=iso(t_roll),
            component="deployment-controller",
        ),
        event(
            dep,
            "ScalingReplicaSet",
            f"Scaled down replica set {old_rs['metadata']['name']} to 3 from 4",
            first=iso(t_roll + timedelta(seconds=1)),
            component="deployment-controller",
        ),
        event(
            dep,
            "ScalingReplicaSet",
            f"Scaled up replica set {new_rs['metadata']['name']} to 2 from 1",
            first=iso(t_roll + timedelta(seconds=41)),
            component="deployment-controller",
        ),
    )
    for p in new_pods:
        pn, nd = p["metadata"]["name"], p["spec"]["nodeName"]
        st = starts[pn]
        first = ck.ago(seconds=nowts - st[0])
        lastt = ck.ago(seconds=nowts - st[-1])
        fp = "spec.containers{pdf-renderer}"
        n = len(st)
        sc.add(
            event(
                p,
                "Scheduled",
                f"Successfully assigned docs/{pn} to {nd}",
                first=iso(first - timedelta(seconds=4)),
                component="default-scheduler",
            ),
            event(
                p,
                "Pulling",
                f'Pulling image "{new_c["image"]}"',
                first=iso(first - timedelta(seconds=3)),
                component="kubelet",
                host=nd,
                field_path=fp,
            ),
            event(
                p,
                "Pulled",
                f'Successfully pulled image "{new_c["image"]}" in 2.204s (2.204s including '
                "waiting). Image size: 201573310 bytes.",
                first=iso(first - timedelta(seconds=1)),
                component="kubelet",
                host=nd,
                field_path=fp,
            ),
            event(
                p,
                "Pulled",
                f'Container image "{new_c["image"]}" already present on machine',
                first=iso(ck.ago(seconds=nowts - st[1])),
                last=iso(lastt),
                count=n - 1,
                component="kubelet",
                host=nd,
                field_path=fp,
                seed="present",
            ),
            event(
                p,
                "Created",
                "Created container pdf-renderer",
                first=iso(first),
                last=iso(lastt),
                count=n,
                component="kubelet",
                host=nd,
                field_path=fp,
            ),
            event(
                p,
                "Failed",
                f"Error: {START_ERR}",
                first=iso(first),
                last=iso(lastt),
                count=n,
                type_="Warning",
                component="kubelet",
                host=nd,
                field_path=fp,
            ),
            event(
                p,
                "BackOff",
                "Back-off restarting failed container pdf-renderer in pod "
                f"{pn}_docs({p['metadata']['uid']})",
                first=iso(first + timedelta(seconds=2)),
                last=ck.t(seconds=9),
                count=7 * n + 3,
                type_="Warning",
                component="kubelet",
                host=nd,
                field_path=fp,
            ),
        )
    # decoy: an image GC warning on the node of the first crashing pod (its disk is fine:
    # DiskPressure False)
    sc.add(
        event(
            cl.nodes[3],
            "ImageGCFailed",
            "Failed to garbage collect required amount of images. Attempted to free 1873563238 "
            "bytes, but only found 0 bytes eligible to free.",
            first=ck.t(minutes=55),
            last=ck.t(minutes=5),
            count=11,
            type_="Warning",
            component="kubelet",
            host=nodes[3],
        )
    )

    # docs/thumbnailer: same new base image, no explicit command, rolled out yesterday, healthy
    th_c = container(
        "thumbnailer",
        "registry.quirehouse.io/docs/thumbnailer:2.0.0",
        cpu_req="250m",
        mem_req="384Mi",
        cpu_lim="1",
        mem_lim="768Mi",
        ports=[("http", 8080)],
        readiness=http_probe("/healthz", "http"),
    )
    th = cl.deployment(
        "docs",
        "thumbnailer",
        [th_c],
        replicas=2,
        created=ck.t(days=180),
        rs_created=ck.t(hours=20),
        revision=8,
        hash_="7b5d8c4f9",
        change_cause="thumbnailer 2.0.0: rebase on the distroless node22 base image",
    )
    tsvc = service(
        "docs",
        "thumbnailer",
        ck.t(days=180),
        selector={"app": "thumbnailer"},
        ports=[("http", 80, "http")],
        cluster_ip="172.20.61.90",
    )
    sc.add(tsvc, endpoints(tsvc, th["pods"]))

    # web/docs-portal: the caller
    dp_c = container(
        "docs-portal",
        "registry.quirehouse.io/web/docs-portal:12.7.0",
        cpu_req="300m",
        mem_req="512Mi",
        cpu_lim="1",
        mem_lim="1Gi",
        ports=[("http", 3000)],
        env=[{"name": "PDF_RENDERER_URL", "value": "http://pdf-renderer.docs.svc.cluster.local"}],
        readiness=http_probe("/healthz", "http"),
    )
    dp = cl.deployment(
        "web",
        "docs-portal",
        [dp_c],
        replicas=3,
        created=ck.t(days=250),
        rs_created=ck.t(days=2, hours=1),
        revision=77,
        hash_="6f4c9b8d7",
    )
    dsvc = service(
        "web",
        "docs-portal",
        ck.t(days=250),
        selector={"app": "docs-portal"},
        ports=[("http", 80, "http")],
        cluster_ip="172.20.12.4",
    )
    sc.add(dsvc, endpoints(dsvc, dp["pods"]))
    # platform/cluster-autoscaler, healthy
    ca_c = container(
        "cluster-autoscaler",
        "registry.k8s.io/autoscaling/cluster-autoscaler:v1.30.2",
        cpu_req="100m",
        mem_req="600Mi",
        cpu_lim="100m",
        mem_lim="600Mi",
        command=[
            "./cluster-autoscaler",
            "--cloud-provider=aws",
            "--expander=least-waste",
            "--node-group-auto-discovery=asg:tag=k8s.io/cluster-autoscaler/enabled,k8s.io/cluster-autoscaler/quire-prod",
        ],
    )
    ca = cl.deployment(
        "platform",
        "cluster-autoscaler",
        [ca_c],
        replicas=1,
        created=ck.t(days=250),
        rs_created=ck.t(days=6),
        revision=4,
        hash_="86c7d5f9b",
        sa="cluster-autoscaler",
    )

    # ------------------------------------------------------------- metrics
    m = Metrics(ck.ago(minutes=120), ck.now, 60)
    rollts = t_roll.timestamp()
    for p in new_pods:
        pn = p["metadata"]["name"]
        st = starts[pn]
        born = st[0] - 4
        lab = {"namespace": "docs", "pod": pn, "container": "pdf-renderer"}
        m.counter_values(
            "kube_pod_container_status_restarts",
            "The number of container restarts per container.",
            lab,
            lambda t, st=st, born=born: (
                (sum(1 for x in st[1:] if x <= t)) if t >= born + 30 else None
            ),
        )
        m.gauge(
            "kube_pod_container_status_waiting_reason",
            "Describes the reason the container is currently in waiting state.",
            {**lab, "reason": "CrashLoopBackOff"},
            lambda t, born=born: (1 if t >= born + 60 else 0) if t >= born + 30 else None,
        )
    m.gauge(
        "kube_deployment_spec_replicas",
        "Number of desired pods for a deployment.",
        {"namespace": "docs", "deployment": "pdf-renderer"},
        lambda t: 4,
    )
    m.gauge(
        "kube_deployment_status_replicas_available",
        "The number of available replicas per deployment.",
        {"namespace": "docs", "deployment": "pdf-renderer"},
        lambda t: 4 if t < rollts + 1 else 3,
    )
    m.gauge(
        "kube_deployment_status_replicas_unavailable",
        "The number of unavailable replicas per deployment.",
        {"namespace": "docs", "deployment": "pdf-renderer"},
        lambda t: 0 if t < rollts + 1 else (1 if t < rollts + 41 else 2),
    )
    jobs = 5.6  # renders/s across the fleet
    for p in old_pods:
        pn = p["metadata"]["name"]
        j = jitter(pn, 0.05)
        lab = {
            "namespace": "docs",
            "pod": pn,
            "container": "pdf-renderer",
            "node": p["spec"]["nodeName"],
        }
        m.counter(
            "container_cpu_usage_seconds",
            "Cumulative cpu time consumed in seconds.",
            lab,
            lambda t, j=j: (jobs / (4 if t < rollts else 3)) * 0.21 + j(t),
        )
        m.counter(
            "pdf_renders",
            "PDF documents rendered.",
            {"namespace": "docs", "pod": pn, "result": "ok"},
            lambda t: jobs / (4 if t < rollts else 3),
            integer=True,
        )
    for p in dp["pods"]:
        m.counter(
            "http_requests",
            "Total HTTP requests served.",
            {
                "namespace": "web",
                "pod": p["metadata"]["name"],
                "service": "docs-portal",
                "route": "/api/export/pdf",
                "code": "200",
            },
            lambda t: jobs / 3,
        )
    sc.metrics = m

    # ------------------------------------------------------------- logs
    r = rng(SID)
    L = sc.logs
    # the fourth 3.9.4 pod, scaled down at the rollout
    gone = f"pdf-renderer-{old_hash}-q4hzn"
    for minute in range(120, -1, -1):
        t0 = ck.ago(minutes=minute)
        for pn, alive in [(p["metadata"]["name"], True) for p in old_pods] + [(gone, t0 < t_roll)]:
            if not alive:
                continue
            for _ in range(2 if minute % 2 == 0 else 1):
                doc = r.choice(["invoice", "contract", "statement", "delivery-note"])
                L.add(
                    t0 + timedelta(seconds=r.randint(0, 59), milliseconds=r.randint(0, 999)),
                    "docs",
                    pn,
                    "pdf-renderer",
                    "pdf-renderer",
                    "info",
                    f"rendered {doc}-{r.randint(100000, 999999)}.pdf ({r.randint(1, 14)} pages) "
                    f"in {r.uniform(0.9, 2.9):.2f}s",
                )
            if r.random() < 0.03:
                L.add(
                    t0 + timedelta(seconds=r.randint(0, 59)),
                    "docs",
                    pn,
                    "pdf-renderer",
                    "pdf-renderer",
                    "warn",
                    'Fontconfig warning: "/etc/fonts/fonts.conf", line 5: unknown element "blank"',
                )
        if minute % 5 == 0:
            for p in th["pods"]:
                L.add(
                    t0 + timedelta(seconds=r.randint(0, 59)),
                    "docs",
                    p["metadata"]["name"],
                    "thumbnailer",
                    "thumbnailer",
                    "info",
                    f"generated {r.randint(80, 140)} thumbnails in the last 5m",
                )
            for p in dp["pods"]:
                L.add(
                    t0 + timedelta(seconds=r.randint(0, 59)),
                    "web",
                    p["metadata"]["name"],
                    "docs-portal",
                    "docs-portal",
                    "info",
                    f"GET /api/export/pdf 200 p95={r.uniform(2.1, 3.6):.1f}s over 5m",
                )
        if minute % 10 == 0:
            L.add(
                t0 + timedelta(seconds=2),
                "platform",
                ca["pods"][0]["metadata"]["name"],
                "cluster-autoscaler",
                "cluster-autoscaler",
                "info",
                "I1116 static_autoscaler.go:598] No unschedulable pods; scale down: no candidates",
            )
    sc.pod_log(
        "docs",
        old_pods[0]["metadata"]["name"],
        "pdf-renderer",
        [
            (
                f"{iso(t_old + timedelta(seconds=6))} pdf-renderer 3.9.4 starting: 4 workers, "
                "chromium 129.0.6668.58"
            ),
            f"{iso(t_old + timedelta(seconds=8))} listening on 0.0.0.0:8080",
            f"{ck.t(minutes=3)} rendered invoice-812230.pdf (2 pages) in 1.31s",
            f"{ck.t(minutes=1)} rendered contract-449102.pdf (9 pages) in 2.74s",
        ],
    )
    for p in new_pods:
        sc.pod_log("docs", p["metadata"]["name"], "pdf-renderer", [])
        sc.pod_log("docs", p["metadata"]["name"], "pdf-renderer", [], previous=True)

    sc.meta = {
        "title": "pdf-renderer 4.0.0 rollout stuck",
        "report": (
            "the pdf-renderer 4.0.0 deploy has been stuck for 40 min, CI gave up. the new pods "
            "keep restarting. "
            "one of them sits on ip-10-20-40-230 which has disk/image GC warnings, maybe that "
            "node is bad? "
            "old pods still serve but PDF exports are slower\n"
        ),
        "truth": {
            "category": "crash_loop",
            "culprit": {"kind": "Deployment", "namespace": "docs", "name": "pdf-renderer"},
            "evidence": [
                "StartError",
                'exec: "/app/start.sh": stat /app/start.sh: no such file or directory',
                "CrashLoopBackOff",
                "command: [/app/start.sh]",
                "pdf-renderer:4.0.0",
            ],
            "fix": (
                "The 4.0.0 image (distroless base) no longer ships /app/start.sh, but the "
                "Deployment still sets "
                "command: [/app/start.sh]; drop the explicit command (use the image's entrypoint) "
                "or point it at "
                "the new path, or roll back to 3.9.4. The node's image GC warning is unrelated "
                "(the other crashing "
                "pod runs on a different node)."
            ),
        },
    }
    return sc
