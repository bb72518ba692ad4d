"""3. node_failure: PIDPressure on one node; pdf-renderer (no init process, high priority)
leaves zombie chromium processes behind; the kubelet evicts lower-priority pods on that node and
the JVM and Go programs there cannot create threads."""

import json
from datetime import timedelta

from ._kit import (
    Family,
    Scenario,
    T,
    container,
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
from .s2_disk_pressure import evicted

SID = "node-pid-pressure-zombie-leak"

NOW = T("2026-11-10T03:15:00Z")
PRESSURE = T("2026-11-10T02:06:40Z")
PID_MAX = 32768


def build():
    sc = Scenario(
        SID,
        "invoice-api: unable to create native thread, one pod evicted",
        NOW,
        (
            "invoice-api is logging java.lang.OutOfMemoryError: unable to create native thread "
            "and one of its\n"
            "pods got evicted about half an hour ago. we shipped invoice-api 3.9.0 on Saturday, I "
            "suspect a thread\n"
            "leak in that version, or its memory limit is too low now. ingest-worker also "
            "restarted a few times.\n"
        ),
        {
            "category": "node_failure",
            "culprit": {
                "kind": "Node",
                "namespace": "",
                "name": "ip-10-40-14-133.eu-west-1.compute.internal",
            },
            "evidence": [
                "PIDPressure",
                "The node was low on resource: pids",
                "Attempting to reclaim pids",
                "KubeletHasInsufficientPID",
                "pthread_create failed",
                "node_processes_state",
            ],
            "fix": "Relieve ip-10-40-14-133: restart (or move) the pdf-renderer pod that holds "
            "~27k zombie "
            "processes, then fix pdf-renderer to reap its children (tini / shareProcessNamespace "
            "or "
            "closing chromium properly) and set a podPidsLimit on the kubelet.",
        },
        seed=4503,
    )
    rng = sc.rng
    start = NOW - timedelta(hours=4)
    times = list(steps(start, NOW, 180))
    ncreated = T("2026-11-05T04:00:12Z")
    nodes = [
        ("ip-10-40-12-87.eu-west-1.compute.internal", "10.40.12.87", "eu-west-1a"),
        ("ip-10-40-13-212.eu-west-1.compute.internal", "10.40.13.212", "eu-west-1b"),
        ("ip-10-40-14-133.eu-west-1.compute.internal", "10.40.14.133", "eu-west-1c"),
    ]
    BAD = nodes[2][0]
    for i, (n, ip, z) in enumerate(nodes):
        kw = {}
        if n == BAD:
            kw = dict(
                bad={"PIDPressure": PRESSURE},
                taints=[
                    {
                        "key": "node.kubernetes.io/pid-pressure",
                        "effect": "NoSchedule",
                        "timeAdded": iso(PRESSURE),
                    }
                ],
            )
        sc.add(
            node(
                n,
                ncreated + timedelta(minutes=4 * i),
                NOW,
                ip=ip,
                cpu=4,
                mem_gi=16,
                instance_type="m6i.xlarge",
                zone=z,
                pool="general-2026a",
                **kw,
            )
        )
    for ns in ("default", "reports", "billing", "batch", "kube-system"):
        sc.add(namespace(ns, T("2025-01-20T09:00:00Z")))
    N = {i: (nodes[i][0], nodes[i][1]) for i in range(3)}

    # ------------------------------------------- reports/pdf-renderer (the leaker)
    pr_rs = T("2026-10-22T10:10:00Z")
    pr = Family(
        sc,
        "reports",
        "pdf-renderer",
        containers=[
            container(
                "pdf-renderer",
                "registry.quillmark.io/reports/pdf-renderer:1.6.3",
                command=["node", "dist/server.js"],
                cpu_req="1",
                mem_req="1536Mi",
                cpu_lim="2",
                mem_lim="3Gi",
                ports=[("http", 3000)],
                env=[
                    ("PUPPETEER_EXECUTABLE_PATH", "/usr/bin/chromium"),
                    ("RENDER_CONCURRENCY", "4"),
                ],
                readiness=http_probe("/healthz", 3000),
            )
        ],
        replicas=2,
        placements=[
            (N[2][0], N[2][1], "10.40.14.61", T("2026-11-05T04:20:31Z")),
            (N[0][0], N[0][1], "10.40.12.140", T("2026-11-09T01:58:02Z")),
        ],
        created=T("2025-08-04T10:00:00Z"),
        rs_created=pr_rs,
        revision=17,
        priority=1000000,
        priority_class="business-critical",
    )
    sc.add(
        service(
            "pdf-renderer",
            "reports",
            created=T("2025-08-04T10:00:00Z"),
            selector={"app": "pdf-renderer"},
            ports=[("http", 80, 3000)],
            cluster_ip="172.20.90.4",
        )
    )
    sc.add(
        endpoints(
            "pdf-renderer",
            "reports",
            created=T("2025-08-04T10:00:00Z"),
            ready=[
                (p["status"]["podIP"], p["spec"]["nodeName"], p["metadata"]["name"])
                for p in pr.pods
            ],
            ports=[("http", 3000)],
        )
    )
    rs_sched = Family(
        sc,
        "reports",
        "report-scheduler",
        containers=[
            container(
                "report-scheduler",
                "registry.quillmark.io/reports/report-scheduler:0.9.4",
                cpu_req="100m",
                mem_req="128Mi",
                mem_lim="256Mi",
            )
        ],
        replicas=1,
        placements=[
            (N[2][0], N[2][1], "10.40.14.92", T("2026-11-05T04:21:00Z")),
            (N[1][0], N[1][1], "10.40.13.77", T("2026-11-10T02:21:15Z")),
        ],
        created=T("2025-08-04T10:00:00Z"),
        rs_created=T("2026-09-30T08:00:00Z"),
        revision=6,
    )
    ev_rs = T("2026-11-10T02:21:14Z")
    m_rs = "The node was low on resource: pids. Threshold quantity: 3276, available: 3041. "
    evicted(rs_sched.pods[0], m_rs, ev_rs)
    rs_sched.deploy["status"].update({"replicas": 1, "readyReplicas": 1, "availableReplicas": 1})

    # ------------------------------------------- billing/invoice-api (Java)
    ia_rs = T("2026-11-08T10:31:00Z")
    ia_c = [
        container(
            "invoice-api",
            "registry.quillmark.io/billing/invoice-api:3.9.0",
            cpu_req="1",
            mem_req="2Gi",
            cpu_lim="2",
            mem_lim="2Gi",
            ports=[("http", 8080), ("management", 8081)],
            env=[("JAVA_TOOL_OPTIONS", "-XX:MaxRAMPercentage=70 -Xss1m")],
            readiness=http_probe("/actuator/health/readiness", 8081),
            liveness=http_probe("/actuator/health/liveness", 8081, period=20, delay=60),
        )
    ]
    ev_ia = T("2026-11-10T02:38:52Z")
    ia = Family(
        sc,
        "billing",
        "invoice-api",
        containers=ia_c,
        replicas=3,
        placements=[
            (N[2][0], N[2][1], "10.40.14.17", ia_rs),
            (N[0][0], N[0][1], "10.40.12.201", ia_rs + timedelta(seconds=70)),
            (N[1][0], N[1][1], "10.40.13.45", ia_rs + timedelta(seconds=140)),
            (N[1][0], N[1][1], "10.40.13.118", ev_ia + timedelta(seconds=1)),
        ],
        created=T("2025-01-20T10:00:00Z"),
        rs_created=ia_rs,
        revision=52,
        old=[
            (
                51,
                {"invoice-api": "registry.quillmark.io/billing/invoice-api:3.8.4"},
                T("2026-10-27T09:12:00Z"),
            )
        ],
        ann={"kubernetes.io/change-cause": "invoice-api 3.9.0"},
    )
    m_ia = "The node was low on resource: pids. Threshold quantity: 3276, available: 2987. "
    evicted(ia.pods[0], m_ia, ev_ia)
    ia.deploy["status"].update({"replicas": 3, "readyReplicas": 3, "availableReplicas": 3})
    sc.add(
        service(
            "invoice-api",
            "billing",
            created=T("2025-01-20T10:00:00Z"),
            selector={"app": "invoice-api"},
            ports=[("http", 80, 8080)],
            cluster_ip="172.20.14.200",
        )
    )
    sc.add(
        endpoints(
            "invoice-api",
            "billing",
            created=T("2025-01-20T10:00:00Z"),
            ready=[
                (p["status"]["podIP"], p["spec"]["nodeName"], p["metadata"]["name"])
                for p in ia.pods[1:]
            ],
            ports=[("http", 8080)],
        )
    )

    # ------------------------------------------- batch/ingest-worker (Go), restarts on the bad node
    iw_rs = T("2026-11-03T13:00:00Z")
    iw = Family(
        sc,
        "batch",
        "ingest-worker",
        containers=[
            container(
                "ingest-worker",
                "registry.quillmark.io/batch/ingest-worker:2.2.1",
                cpu_req="500m",
                mem_req="512Mi",
                cpu_lim="1",
                mem_lim="1Gi",
            )
        ],
        replicas=2,
        placements=[
            (N[2][0], N[2][1], "10.40.14.200", T("2026-11-05T04:22:00Z")),
            (N[1][0], N[1][1], "10.40.13.9", T("2026-11-05T04:02:00Z")),
        ],
        created=T("2025-05-05T10:00:00Z"),
        rs_created=iw_rs,
        revision=23,
        pod_overrides={
            0: {
                "statuses": {
                    "ingest-worker": {
                        "restartCount": 3,
                        "state": {"running": {"startedAt": "2026-11-10T02:57:41Z"}},
                        "lastState": {
                            "terminated": {
                                "exitCode": 2,
                                "reason": "Error",
                                "startedAt": "2026-11-10T02:44:10Z",
                                "finishedAt": "2026-11-10T02:57:22Z",
                            }
                        },
                    }
                }
            }
        },
    )
    iwp = iw.pods[0]
    wl = Family(
        sc,
        "billing",
        "ledger-sync",
        containers=[
            container(
                "ledger-sync",
                "registry.quillmark.io/billing/ledger-sync:1.1.0",
                cpu_req="100m",
                mem_req="128Mi",
                mem_lim="256Mi",
            )
        ],
        replicas=1,
        placements=[(N[0][0], N[0][1], "10.40.12.66", T("2026-11-05T04:03:00Z"))],
        created=T("2025-05-05T10:00:00Z"),
        rs_created=T("2026-10-01T10:00:00Z"),
        revision=4,
    )
    Family(
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
                ports=[("dns", 53)],
            )
        ],
        replicas=2,
        placements=[
            (N[0][0], N[0][1], "10.40.12.4", T("2026-11-05T04:05:00Z")),
            (N[1][0], N[1][1], "10.40.13.4", T("2026-11-05T04:09:00Z")),
        ],
        created=T("2025-01-20T08:00:00Z"),
        rs_created=T("2026-08-12T08:00:00Z"),
        revision=5,
        labels={"k8s-app": "kube-dns"},
    )
    # a Pending pod elsewhere: a CronJob-made pod whose node selector matches nothing (unrelated)
    # (kept as a Deployment to stay simple: the gpu-thumbnails deployment waits for a GPU node pool
    # that is scaled to 0)
    gt_created = NOW - timedelta(minutes=44)
    gt = Family(
        sc,
        "batch",
        "gpu-thumbnails",
        containers=[
            container(
                "gpu-thumbnails",
                "registry.quillmark.io/batch/gpu-thumbnails:0.3.0",
                cpu_req="2",
                mem_req="8Gi",
                mem_lim="8Gi",
            )
        ],
        replicas=1,
        placements=[(None, None, None, gt_created)],
        created=gt_created,
        rs_created=gt_created,
        revision=1,
        node_selector={"eks.amazonaws.com/nodegroup": "gpu-g5"},
        pod_overrides={0: {"phase": "Pending", "ready": False}},
    )
    gt.pods[0]["status"]["conditions"] = [
        {
            "type": "PodScheduled",
            "status": "False",
            "lastProbeTime": None,
            "lastTransitionTime": iso(gt_created),
            "reason": "Unschedulable",
            "message": (
                "0/3 nodes are available: 1 node(s) had untolerated taint "
                "{node.kubernetes.io/pid-pressure: }, 3 node(s) didn't match Pod's node "
                "affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not "
                "helpful for scheduling."
            ),
        }
    ]
    gt.deploy["status"]["conditions"][1].update(
        {"reason": "ReplicaSetUpdated", "message": f'ReplicaSet "{gt.rs_name}" is progressing.'}
    )
    sc.add(
        event(
            "batch",
            kind="Pod",
            name=gt.pods[0]["metadata"]["name"],
            reason="FailedScheduling",
            message=gt.pods[0]["status"]["conditions"][0]["message"],
            first=gt_created,
            last=NOW - timedelta(minutes=2),
            count=9,
            type_="Warning",
            component="default-scheduler",
        )
    )

    # ------------------------------------------- events
    sc.add(
        event(
            "",
            kind="Node",
            name=BAD,
            obj_ns="",
            reason="EvictionThresholdMet",
            message="Attempting to reclaim pids",
            first=PRESSURE + timedelta(seconds=11),
            last=NOW - timedelta(minutes=5),
            count=14,
            type_="Warning",
            host=BAD,
        )
    )
    for p, msg, at, cname in (
        (rs_sched.pods[0], m_rs, ev_rs, "report-scheduler"),
        (ia.pods[0], m_ia, ev_ia, "invoice-api"),
    ):
        ns, pn = p["metadata"]["namespace"], p["metadata"]["name"]
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
            "batch",
            kind="Pod",
            name=iwp["metadata"]["name"],
            reason="BackOff",
            message=(
                "Back-off restarting failed container ingest-worker in pod "
                f"{iwp['metadata']['name']}_batch({iwp['metadata']['uid']})"
            ),
            first=T("2026-11-10T02:31:40Z"),
            last=T("2026-11-10T02:57:30Z"),
            count=4,
            type_="Warning",
            host=BAD,
            field_path="spec.containers{ingest-worker}",
        )
    )
    sc.add(
        event(
            "batch",
            kind="Pod",
            name=iwp["metadata"]["name"],
            reason="Pulled",
            message=(
                'Container image "registry.quillmark.io/batch/ingest-worker:2.2.1" already '
                "present on machine"
            ),
            first=T("2026-11-10T02:30:58Z"),
            last=T("2026-11-10T02:57:40Z"),
            count=3,
            host=BAD,
            field_path="spec.containers{ingest-worker}",
        )
    )
    sc.add(
        event(
            "billing",
            kind="Pod",
            name=ia.pods[3]["metadata"]["name"],
            reason="Scheduled",
            message=(
                f"Successfully assigned billing/{ia.pods[3]['metadata']['name']} to {nodes[1][0]}"
            ),
            first=ev_ia + timedelta(seconds=1),
            last=ev_ia + timedelta(seconds=1),
            component="default-scheduler",
        )
    )
    sc.add(
        event(
            "reports",
            kind="Pod",
            name=rs_sched.pods[1]["metadata"]["name"],
            reason="Scheduled",
            message=(
                f"Successfully assigned reports/{rs_sched.pods[1]['metadata']['name']} to "
                f"{nodes[1][0]}"
            ),
            first=ev_rs + timedelta(seconds=1),
            last=ev_rs + timedelta(seconds=1),
            component="default-scheduler",
        )
    )

    # ------------------------------------------- logs
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

    chrome_pid = 41210
    for t in steps(start, NOW, 60):
        for _k, p in enumerate(pr.pods):
            for _ in range(rng.randint(0, 2)):
                chrome_pid += rng.randint(5, 11)
                jl(
                    p,
                    t + timedelta(seconds=rng.uniform(0, 59)),
                    "info",
                    f"rendered invoice INV-{rng.randint(2400000, 2499999)} ({rng.randint(1, 14)} "
                    f"pages) in {rng.uniform(0.8, 3.5):.1f}s, browser pid {chrome_pid}",
                    "pdf-renderer",
                )
        for p in ia.pods:
            pc = T(p["metadata"]["creationTimestamp"])
            if t < pc + timedelta(seconds=40) or (p["status"]["phase"] == "Failed" and t > ev_ia):
                continue
            if rng.random() < 0.5:
                jl(
                    p,
                    t + timedelta(seconds=rng.uniform(0, 59)),
                    "INFO",
                    "c.q.invoice.api.InvoiceController : GET "
                    f"/v2/invoices/{rng.randint(100000, 999999)} -> 200 ({rng.randint(9, 80)} ms)",
                    "invoice-api",
                )
    # invoice-api on the bad node fails to start threads after the pressure begins
    iap = ia.pods[0]
    t = PRESSURE + timedelta(minutes=3)
    thread_lines = []
    while t < ev_ia:
        w = (
            f"[{t.strftime('%Y-%m-%dT%H:%M:%S.')}{rng.randint(100, 999)}+0000][warning][os,thread]"
            ' Failed to start thread "Unknown thread" - pthread_create failed (EAGAIN) for '
            "attributes: stacksize: 1024k, guardsize: 0k, detached."
        )
        e = (
            "o.a.c.c.C.[.[.[/].[dispatcherServlet] : Servlet.service() for servlet "
            "[dispatcherServlet] threw exception "
            "java.lang.OutOfMemoryError: unable to create native thread: possibly out of memory "
            "or process/resource limits reached"
        )
        jl(iap, t, "WARN", w, "invoice-api")
        jl(
            iap,
            t + timedelta(milliseconds=3),
            "ERROR",
            e,
            "invoice-api",
            error__type="java.lang.OutOfMemoryError",
        )
        thread_lines += [
            w,
            f"{iso_ms(t)} ERROR 1 --- [nio-8080-exec-{rng.randint(1, 200)}] {e}",
            "\tat java.base/java.lang.Thread.start0(Native Method)",
            "\tat java.base/java.lang.Thread.start(Thread.java:1553)",
            (
                "\tat java.base/java.util.concurrent.ThreadPoolExecutor.addWorker(ThreadPoolExecut"
                "or.java:945)"
            ),
        ]
        t += timedelta(seconds=rng.randint(40, 110))
    sc.pod_log(
        "billing",
        iap["metadata"]["name"],
        "invoice-api",
        [
            (
                f"{iso_ms(ia_rs + timedelta(seconds=9))}  INFO 1 --- [           main] "
                "c.q.invoice.api.InvoiceApiApplication    : Started InvoiceApiApplication in "
                "21.7 seconds (process running for 23.4)"
            ),
            *thread_lines,
        ],
    )
    # ingest-worker crashes: runtime/cgo cannot create threads
    crash = [
        "runtime/cgo: pthread_create failed: Resource temporarily unavailable",
        "SIGABRT: abort",
        "PC=0x7f3e9d28a9fc m=6 sigcode=18446744073709551610",
        "",
        "goroutine 0 gp=0xc000602a80 m=6 mp=0xc000580008 [idle]:",
        "runtime: g 0 gp=0xc000602a80: unknown pc 0x7f3e9d28a9fc",
        "stack: frame={sp:0x7f3e5effcb78, fp:0x0} stack=[0x7f3e5e7fd000,0x7f3e5effd000)",
        "",
        "goroutine 1 gp=0xc000002380 m=nil [select]:",
        "main.(*Worker).Run(0xc0001c4000, {0x1a2b640, 0xc000190000})",
        "\t/src/internal/worker/worker.go:142 +0x3c5",
    ]
    sc.pod_log(
        "batch",
        iwp["metadata"]["name"],
        "ingest-worker",
        [
            json.dumps(
                {
                    "time": "2026-11-10T02:44:11.204Z",
                    "level": "INFO",
                    "msg": "ingest-worker 2.2.1 starting",
                    "partitions": 8,
                }
            ),
            *crash,
        ],
        previous=True,
    )
    sc.pod_log(
        "batch",
        iwp["metadata"]["name"],
        "ingest-worker",
        [
            json.dumps(
                {
                    "time": "2026-11-10T02:57:42.031Z",
                    "level": "INFO",
                    "msg": "ingest-worker 2.2.1 starting",
                    "partitions": 8,
                }
            )
        ],
    )
    for tt in ("2026-11-10T02:30:51.880Z", "2026-11-10T02:44:09.312Z", "2026-11-10T02:57:22.406Z"):
        jl(
            iwp,
            T(tt[:19] + "Z"),
            "error",
            "runtime/cgo: pthread_create failed: Resource temporarily unavailable",
            "ingest-worker",
        )
    for t in steps(start + timedelta(minutes=2), NOW, 300):
        jl(
            iw.pods[1],
            t,
            "info",
            f"committed offsets for 8 partitions (lag {rng.randint(0, 40)})",
            "ingest-worker",
        )
    # noisy, unrelated: ledger-sync retries a slow partner API
    for t in steps(start + timedelta(minutes=9), NOW, 900):
        jl(
            wl.pods[0],
            t,
            "warning",
            "partner ledger API answered 429 Too Many Requests, retrying in 30s",
            "ledger-sync",
        )

    # ------------------------------------------- metrics
    def bad_pids(t):
        base = 28350 + 1650 * (t - start).total_seconds() / (4 * 3600)
        if t >= ev_rs:
            base -= 60
        if t >= ev_ia:
            base -= 310
        return int(base + rng.uniform(-15, 15))

    pid_fn = {
        nodes[0][0]: lambda t: int(noise(rng, 7400, 0.02)),
        nodes[1][0]: lambda t: int(noise(rng, 1850, 0.03)),
        BAD: bad_pids,
    }
    for n, ip, _z in nodes:
        lab = {"instance": f"{ip}:9100", "node": n}
        sc.metrics.gauge(
            "node_processes_pids", "Number of PIDs", lab, [(t, pid_fn[n](t)) for t in times]
        )
    for n, ip, _z in nodes:
        lab = {"instance": f"{ip}:9100", "node": n}
        sc.metrics.gauge(
            "node_processes_max_processes",
            "Number of max PIDs limit",
            lab,
            [(t, PID_MAX) for t in times],
        )
    for n, ip, _z in nodes:
        zfn = {
            nodes[0][0]: lambda t: int(5600 + 170 * (t - start).total_seconds() / 3600),
            nodes[1][0]: lambda t: 0,
            BAD: lambda t: int(26900 + 410 * (t - start).total_seconds() / 3600),
        }[n]
        sc.metrics.gauge(
            "node_processes_state",
            "Number of processes in each state.",
            {"instance": f"{ip}:9100", "node": n, "state": "Z"},
            [(t, zfn(t)) for t in times],
        )
    for n, _ip, _z in nodes:
        for stv in ("true", "false"):

            def val(t, n=n, stv=stv):
                on = n == BAD and t >= PRESSURE
                return 1 if (stv == "true") == on else 0

            sc.metrics.gauge(
                "kube_node_status_condition",
                "The condition of a cluster node.",
                {"node": n, "condition": "PIDPressure", "status": stv},
                [(t, val(t)) for t in times],
            )
    sc.metrics.counter(
        "kubelet_evictions",
        "Cumulative number of pod evictions by eviction signal",
        {"node": BAD, "instance": f"{nodes[2][1]}:10250", "eviction_signal": "pid.available"},
        [(t, (t >= ev_rs) + (t >= ev_ia)) for t in times],
    )
    # per container process and thread counts
    procs = {
        pr.pods[0]["metadata"]["name"]: lambda t: int(
            26950 + 410 * (t - start).total_seconds() / 3600
        ),
        pr.pods[1]["metadata"]["name"]: lambda t: int(
            5620 + 170 * (t - start).total_seconds() / 3600
        ),
    }
    for p in pr.pods:
        lab = {
            "namespace": "reports",
            "pod": p["metadata"]["name"],
            "container": "pdf-renderer",
            "node": p["spec"]["nodeName"],
        }
        sc.metrics.gauge(
            "container_processes",
            "Number of processes running inside the container.",
            lab,
            [(t, procs[p["metadata"]["name"]](t)) for t in times],
        )
        sc.metrics.gauge(
            "container_threads",
            "Number of threads running inside the container.",
            lab,
            [(t, procs[p["metadata"]["name"]](t) + rng.randint(40, 60)) for t in times],
        )
    for p in ia.pods:
        pc = T(p["metadata"]["creationTimestamp"])
        end = ev_ia if p["status"]["phase"] == "Failed" else NOW
        ts = [t for t in times if max(pc, start) <= t <= end]
        lab = {
            "namespace": "billing",
            "pod": p["metadata"]["name"],
            "container": "invoice-api",
            "node": p["spec"]["nodeName"],
        }
        sc.metrics.gauge(
            "container_threads",
            "Number of threads running inside the container.",
            lab,
            [(t, rng.randint(78, 96)) for t in ts],
        )
        pod_usage(
            sc, p, "invoice-api", ts, lambda t: noise(rng, 0.31), lambda t: noise(rng, 1.05e9, 0.03)
        )
    for p in pr.pods:
        pod_usage(
            sc,
            p,
            "pdf-renderer",
            times,
            lambda t: noise(rng, 0.62),
            lambda t: noise(rng, 1.3e9, 0.05),
        )
    restarts_metric(
        sc,
        iwp,
        "ingest-worker",
        times,
        lambda t: sum(
            1
            for x in ("2026-11-10T02:30:52Z", "2026-11-10T02:44:10Z", "2026-11-10T02:57:41Z")
            if T(x) <= t
        ),
    )
    restarts_metric(sc, iw.pods[1], "ingest-worker", times)
    return sc
