"""7. node_failure: a node's container runtime hangs (PLEG is not healthy); its pods stop answering
until evicted."""

from __future__ import annotations

from datetime import timedelta

from ._kit import (
    Cluster,
    Metrics,
    Scenario,
    add_nodes,
    container,
    cstatus,
    daemonset,
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
)

SID = "node-pleg-unhealthy-runtime-hang"
NOW = "2026-11-25T03:40:00Z"
HANG = 34  # minutes ago: root volume I/O stalls, containerd stops answering
NOTREADY = 31  # PLEG threshold (3m) passed
EVICT = 26  # not-ready:NoExecute tolerationSeconds 300 ran out


def build() -> Scenario:
    sc = Scenario(SID, NOW)
    ck = sc.clock
    cl = Cluster(sc, pod_net="10.70")
    for ns in ("default", "payments", "ingress-nginx", "kube-system"):
        sc.add(namespace(ns, ck.t(days=600)))
    region = "ap-southeast-2"
    bad = f"ip-10-20-72-45.{region}.compute.internal"
    t_hang, t_nr, t_ev = ck.ago(minutes=HANG), ck.ago(minutes=NOTREADY), ck.ago(minutes=EVICT)
    nodes = add_nodes(
        cl,
        ck,
        region,
        [
            ("70.18", "a", "1"),
            ("71.133", "b", "2"),
            (
                "72.45",
                "c",
                "3",
                {
                    "ready": False,
                    "ready_since": iso(t_nr),
                    "ready_reason": "KubeletNotReady",
                    "ready_message": (
                        "PLEG is not healthy: pleg was last seen active 34m6.118s ago; threshold "
                        "is 3m0s"
                    ),
                    "heartbeat": ck.t(seconds=14),
                    "taints": [
                        {
                            "key": "node.kubernetes.io/not-ready",
                            "effect": "NoSchedule",
                            "timeAdded": iso(t_nr + timedelta(seconds=2)),
                        },
                        {
                            "key": "node.kubernetes.io/not-ready",
                            "effect": "NoExecute",
                            "timeAdded": iso(t_nr + timedelta(seconds=2)),
                        },
                    ],
                },
            ),
            ("70.201", "a", "4"),
        ],
        itype="m6i.xlarge",
        cpu="4",
        memory="16083916Ki",
        alloc_cpu="3920m",
        alloc_mem="15066060Ki",
    )
    assert bad in nodes
    good = [n for n in nodes if n != bad]
    bad_node_obj = cl.nodes[2]

    def not_ready_conditions(p):
        for c in p["status"]["conditions"]:
            if c["type"] == "Ready":
                c["status"] = "False"
                c["lastTransitionTime"] = iso(t_nr + timedelta(seconds=3))
                c.pop("reason", None)
                c.pop("message", None)

    # ---------------------- payments/payments-api (5 replicas, 2 on the bad node)
    pa_c = container(
        "payments-api",
        "registry.koalapay.com.au/payments/payments-api:6.14.2",
        cpu_req="500m",
        mem_req="768Mi",
        cpu_lim="1500m",
        mem_lim="1536Mi",
        ports=[("http", 8080)],
        readiness=http_probe("/health/ready", "http", period=5, timeout=2),
        liveness=http_probe("/health/live", "http", delay=30, period=10, timeout=2),
    )
    placement = [good[0], bad, good[1], bad, good[2]]
    pa = cl.deployment(
        "payments",
        "payments-api",
        [pa_c],
        replicas=5,
        created=ck.t(days=600),
        rs_created=ck.t(days=2, hours=11),
        revision=118,
        hash_="6d8b7c9f45",
        nodes=placement,
    )
    pa_rs = pa["current_rs"]
    bad_pa = [p for p in pa["pods"] if p["spec"]["nodeName"] == bad]
    ok_pa = [p for p in pa["pods"] if p["spec"]["nodeName"] != bad]
    repl_pa = [
        cl.make_pod(
            pa_rs,
            pa["template"],
            10 + k,
            iso(t_ev + timedelta(seconds=1)),
            [good[k % 3]],
            seed="repl",
        )
        for k in range(2)
    ]
    # ---------------------- payments/checkout-worker (3 replicas, 1 on the bad node)
    cw_c = container(
        "checkout-worker",
        "registry.koalapay.com.au/payments/checkout-worker:2.9.0",
        cpu_req="250m",
        mem_req="384Mi",
        cpu_lim="1",
        mem_lim="768Mi",
        env=[
            {"name": "PAYMENTS_API_URL", "value": "http://payments-api.payments.svc.cluster.local"}
        ],
    )
    cw = cl.deployment(
        "payments",
        "checkout-worker",
        [cw_c],
        replicas=3,
        created=ck.t(days=400),
        rs_created=ck.t(days=4),
        revision=33,
        hash_="7c5f9b8d6",
        nodes=[bad, good[0], good[1]],
    )
    bad_cw = [p for p in cw["pods"] if p["spec"]["nodeName"] == bad]
    repl_cw = [
        cl.make_pod(
            cw["current_rs"],
            cw["template"],
            10,
            iso(t_ev + timedelta(seconds=1)),
            [good[2]],
            seed="repl",
        )
    ]
    # ---------------------- payments/ledger-writer (2 replicas, big; the replacement stays Pending)
    lw_c = container(
        "ledger-writer",
        "registry.koalapay.com.au/payments/ledger-writer:1.22.0",
        cpu_req="1",
        mem_req="6Gi",
        cpu_lim="2",
        mem_lim="6Gi",
    )
    lw = cl.deployment(
        "payments",
        "ledger-writer",
        [lw_c],
        replicas=2,
        created=ck.t(days=300),
        rs_created=ck.t(days=5),
        revision=12,
        hash_="5b9d6f7c8",
        nodes=[good[1], bad],
    )
    bad_lw = [p for p in lw["pods"] if p["spec"]["nodeName"] == bad]
    sched_msg = (
        "0/4 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: "
        "}, "
        "3 Insufficient memory. preemption: 0/4 nodes are available: 1 Preemption is not helpful "
        "for "
        "scheduling, 3 No preemption victims found for incoming pod."
    )
    repl_lw = cl.make_pod(
        lw["current_rs"],
        lw["template"],
        10,
        iso(t_ev + timedelta(seconds=1)),
        [good[0]],
        pod_status=lambda i, n, nd: {
            "scheduled": False,
            "phase": "Pending",
            "sched_message": sched_msg,
        },
        seed="repl",
    )
    repl_lw["status"].pop("containerStatuses", None)
    # ---------------------- statuses of the stuck pods and the workloads
    stuck = bad_pa + bad_cw + bad_lw
    for p in stuck:
        not_ready_conditions(p)
        p["metadata"]["deletionTimestamp"] = iso(t_ev + timedelta(seconds=30))
        p["metadata"]["deletionGracePeriodSeconds"] = 30
        p["status"]["conditions"].insert(
            0,
            {
                "type": "DisruptionTarget",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": iso(t_ev),
                "reason": "DeletionByTaintManager",
                "message": "Taint manager: deleting due to NoExecute taint",
            },
        )
    from ._kit import deploy_status

    pa["deployment"]["status"] = {
        "observedGeneration": 118,
        **deploy_status(
            5,
            5,
            rs_name=pa_rs["metadata"]["name"],
            progress_time=ck.t(days=2, hours=11),
            available_time=iso(t_ev + timedelta(seconds=40)),
        ),
    }
    pa_rs["status"] = {
        "replicas": 5,
        "fullyLabeledReplicas": 5,
        "readyReplicas": 5,
        "availableReplicas": 5,
        "observedGeneration": 1,
    }
    cw["deployment"]["status"] = {
        "observedGeneration": 33,
        **deploy_status(
            3,
            3,
            rs_name=cw["current_rs"]["metadata"]["name"],
            progress_time=ck.t(days=4),
            available_time=ck.t(days=4),
        ),
    }
    lw["deployment"]["status"] = {
        "observedGeneration": 12,
        **deploy_status(
            2,
            1,
            available=1,
            rs_name=lw["current_rs"]["metadata"]["name"],
            progress_time=ck.t(days=5),
            available_time=ck.t(days=5),
        ),
    }
    lw["current_rs"]["status"] = {
        "replicas": 2,
        "fullyLabeledReplicas": 2,
        "readyReplicas": 1,
        "availableReplicas": 1,
        "observedGeneration": 1,
    }
    svc = service(
        "payments",
        "payments-api",
        ck.t(days=600),
        selector={"app": "payments-api"},
        ports=[("http", 80, "http")],
        cluster_ip="172.20.44.8",
    )
    sc.add(svc, endpoints(svc, ok_pa + repl_pa))

    # ---------------------- kube-system/node-exporter DaemonSet and ingress-nginx
    ne_c = container(
        "node-exporter",
        "quay.io/prometheus/node-exporter:v1.8.2",
        cpu_req="50m",
        mem_req="64Mi",
        cpu_lim="250m",
        mem_lim="128Mi",
        ports=[("metrics", 9100)],
        args=["--path.rootfs=/host"],
    )
    ne_tpl = pod_template(
        {"app.kubernetes.io/name": "node-exporter"}, [ne_c], tolerations=[{"operator": "Exists"}]
    )
    ne_tpl["spec"]["hostNetwork"] = True
    ne_tpl["spec"]["hostPID"] = True
    ne_tpl["spec"]["dnsPolicy"] = "ClusterFirstWithHostNet"
    ne = daemonset("kube-system", "node-exporter", ck.t(days=600), ne_tpl, desired=4, ready=3)
    sc.add(ne)
    for k, nd in enumerate(nodes):
        pn = f"node-exporter-{['7xq2d', 'k9m4w', 'p5z8c', 'f2b6t'][k]}"
        created = cl.nodes[k]["metadata"]["creationTimestamp"]
        p = pod(
            ne,
            pn,
            created,
            ne_tpl,
            node_name=nd,
            pod_ip=cl.host_ip(nd),
            host_ip=cl.host_ip(nd),
            statuses=[cstatus("node-exporter", ne_c["image"], running_since=created, pod_seed=pn)],
            labels_extra={"controller-revision-hash": "6c7d9b8f5", "pod-template-generation": "2"},
        )
        p["metadata"]["ownerReferences"][0]["kind"] = "DaemonSet"
        if nd == bad:
            not_ready_conditions(p)
        sc.add(p)
    ing_c = container(
        "controller",
        "registry.k8s.io/ingress-nginx/controller:v1.11.3",
        cpu_req="200m",
        mem_req="256Mi",
        cpu_lim="1",
        mem_lim="512Mi",
        ports=[("http", 80), ("https", 443), ("metrics", 10254)],
        args=[
            "/nginx-ingress-controller",
            "--election-id=ingress-nginx-leader",
            "--controller-class=k8s.io/ingress-nginx",
            "--ingress-class=nginx",
        ],
    )
    ing = cl.deployment(
        "ingress-nginx",
        "ingress-nginx-controller",
        [ing_c],
        replicas=2,
        created=ck.t(days=600),
        rs_created=ck.t(days=6, hours=2),
        revision=9,
        hash_="75d8c6b9f4",
        nodes=[good[0], good[2]],
        labels={
            "app.kubernetes.io/name": "ingress-nginx",
            "app.kubernetes.io/component": "controller",
        },
    )

    # ---------------------- events
    ev = []
    ev.append(
        event(
            bad_node_obj,
            "NodeNotReady",
            f"Node {bad} status is now: NodeNotReady",
            first=iso(t_nr),
            component="kubelet",
            host=bad,
            seed="kubelet",
        )
    )
    ev.append(
        event(
            bad_node_obj,
            "NodeNotReady",
            f"Node {bad} status is now: NodeNotReady",
            first=iso(t_nr + timedelta(seconds=3)),
            component="node-controller",
        )
    )
    ev.append(
        event(
            bad_node_obj,
            "TaskHung",
            "INFO: task containerd:1187 blocked for more than 122 seconds.",
            first=iso(t_hang + timedelta(seconds=124)),
            last=ck.t(minutes=2),
            count=16,
            type_="Warning",
            component="kernel-monitor",
            host=bad,
        )
    )
    ev.append(
        event(
            bad_node_obj,
            "TaskHung",
            "INFO: task jbd2/nvme0n1p1-8:312 blocked for more than 122 seconds.",
            first=iso(t_hang + timedelta(seconds=123)),
            last=ck.t(minutes=2),
            count=16,
            type_="Warning",
            component="kernel-monitor",
            host=bad,
        )
    )
    for p in stuck:
        pn, ns = p["metadata"]["name"], p["metadata"]["namespace"]
        ev.append(
            event(
                p,
                "NodeNotReady",
                "Node is not ready",
                first=iso(t_nr + timedelta(seconds=3)),
                type_="Warning",
                component="node-controller",
            )
        )
        ev.append(
            event(
                p,
                "TaintManagerEviction",
                f"Marking for deletion Pod {ns}/{pn}",
                first=iso(t_ev),
                component="taint-eviction-controller",
            )
        )
        c = p["spec"]["containers"][0]["name"]
        ev.append(
            event(
                p,
                "Killing",
                f"Stopping container {c}",
                first=iso(t_ev + timedelta(seconds=1)),
                component="kubelet",
                host=bad,
                field_path=f"spec.containers{{{c}}}",
            )
        )
        ev.append(
            event(
                p,
                "FailedKillPod",
                f'error killing pod: [failed to "KillContainer" for "{c}" with '
                'KillContainerError: "rpc error: '
                'code = DeadlineExceeded desc = context deadline exceeded", failed to '
                '"KillPodSandbox" for '
                f'"{p["metadata"]["uid"]}" with KillPodSandboxError: "rpc error: code = '
                "DeadlineExceeded desc = "
                f'context deadline exceeded"]',
                first=iso(t_ev + timedelta(minutes=2, seconds=1)),
                last=ck.t(minutes=1),
                count=12,
                type_="Warning",
                component="kubelet",
                host=bad,
            )
        )
    for rs, newp in ((pa_rs, repl_pa), (cw["current_rs"], repl_cw), (lw["current_rs"], [repl_lw])):
        for p in newp:
            ev.append(
                event(
                    rs,
                    "SuccessfulCreate",
                    f"Created pod: {p['metadata']['name']}",
                    first=iso(t_ev + timedelta(seconds=1)),
                    component="replicaset-controller",
                )
            )
    for p in repl_pa + repl_cw:
        pn, nd = p["metadata"]["name"], p["spec"]["nodeName"]
        c = p["spec"]["containers"][0]
        fp = f"spec.containers{{{c['name']}}}"
        ev += [
            event(
                p,
                "Scheduled",
                f"Successfully assigned payments/{pn} to {nd}",
                first=iso(t_ev + timedelta(seconds=1)),
                component="default-scheduler",
            ),
            event(
                p,
                "Pulled",
                f'Container image "{c["image"]}" already present on machine',
                first=iso(t_ev + timedelta(seconds=2)),
                component="kubelet",
                host=nd,
                field_path=fp,
            ),
            event(
                p,
                "Created",
                f"Created container {c['name']}",
                first=iso(t_ev + timedelta(seconds=2)),
                component="kubelet",
                host=nd,
                field_path=fp,
            ),
            event(
                p,
                "Started",
                f"Started container {c['name']}",
                first=iso(t_ev + timedelta(seconds=3)),
                component="kubelet",
                host=nd,
                field_path=fp,
            ),
        ]
    ev.append(
        event(
            repl_lw,
            "FailedScheduling",
            sched_msg,
            first=iso(t_ev + timedelta(seconds=1)),
            last=ck.t(minutes=1),
            count=19,
            type_="Warning",
            component="default-scheduler",
        )
    )
    sc.add(*ev)

    # ---------------------- metrics
    m = Metrics(ck.ago(minutes=90), ck.now, 60)
    hangts, nrts, evts = t_hang.timestamp(), t_nr.timestamp(), t_ev.timestamp()
    for nd in nodes:
        isbad = nd == bad
        m.gauge(
            "kube_node_status_condition",
            "The condition of a cluster node.",
            {"node": nd, "condition": "Ready", "status": "true"},
            lambda t, b=isbad: 0 if (b and t >= nrts) else 1,
        )
        m.gauge(
            "kube_node_spec_taint",
            "The taint of a cluster node.",
            {"node": nd, "key": "node.kubernetes.io/not-ready", "value": "", "effect": "NoExecute"},
            (lambda t: 1 if t >= nrts + 2 else None) if isbad else (lambda t: None),
        )
        m.gauge(
            "kubelet_pleg_last_seen_seconds",
            "Timestamp in seconds when PLEG was last seen active.",
            {"node": nd, "instance": nd, "job": "kubelet"},
            lambda t, b=isbad: float(int(min(t, hangts) if b else t) - 1),
        )
        j = jitter(nd, 0.4)
        m.gauge(
            "node_load1",
            "1m load average.",
            {"instance": cl.host_ip(nd) + ":9100", "node": nd},
            (lambda t, j=j: round(1.3 + j(t), 2) if t < hangts else None)
            if isbad
            else (lambda t, j=j: round(1.2 + j(t), 2)),
        )
    total_rps = 48.0

    def served_by(p, born=None, bad_=False):
        def f(t):
            if born is not None and t < born + 30:
                return None
            if bad_ and t >= hangts:
                return None
            n_ok = (
                len(ok_pa)
                + (len(repl_pa) if t >= evts + 30 else 0)
                + (len(bad_pa) if t < hangts else 0)
            )
            return total_rps / max(n_ok + (len(bad_pa) if hangts <= t < nrts + 30 else 0), 1)

        return f

    for p in pa["pods"]:
        m.counter(
            "http_requests",
            "Total HTTP requests served.",
            {
                "namespace": "payments",
                "pod": p["metadata"]["name"],
                "service": "payments-api",
                "code": "200",
            },
            served_by(p, bad_=p in bad_pa),
        )
    for p in repl_pa:
        m.counter(
            "http_requests",
            "Total HTTP requests served.",
            {
                "namespace": "payments",
                "pod": p["metadata"]["name"],
                "service": "payments-api",
                "code": "200",
            },
            served_by(p, born=evts),
            age=0,
        )

    def timeouts(t):
        # requests routed to the two hung pods until the endpoints drop them (a few seconds after
        # NotReady)
        return total_rps * 2 / 5 if hangts <= t < nrts + 20 else 0.0

    for k, p in enumerate(ing["pods"]):
        lab = {
            "namespace": "ingress-nginx",
            "controller_pod": p["metadata"]["name"],
            "ingress": "payments-api",
            "exported_namespace": "payments",
            "service": "payments-api",
            "host": "api.koalapay.com.au",
            "method": "POST",
        }
        m.counter(
            "nginx_ingress_controller_requests",
            "The total number of client requests",
            {**lab, "status": "200"},
            lambda t: (total_rps - timeouts(t)) / 2,
            integer=True,
        )
        m.counter(
            "nginx_ingress_controller_requests",
            "The total number of client requests",
            {**lab, "status": "504"},
            lambda t: timeouts(t) / 2,
            integer=True,
            start_value=11 + k,
        )
    m.gauge(
        "kube_pod_status_phase",
        "The pods current phase.",
        {"namespace": "payments", "pod": repl_lw["metadata"]["name"], "phase": "Pending"},
        lambda t: 1 if t >= evts + 1 else None,
    )
    sc.metrics = m

    # ---------------------- logs
    r = rng(SID)
    L = sc.logs
    bad_ips = [p["status"]["podIP"] for p in bad_pa]
    for minute in range(90, -1, -1):
        t0 = ck.ago(minutes=minute)
        ts = t0.timestamp()
        for p in pa["pods"] + repl_pa:
            if p in repl_pa and ts < evts + 30:
                continue
            if p in bad_pa and ts >= hangts:
                continue
            if minute % 3 == 0:
                L.add(
                    t0 + timedelta(seconds=r.randint(0, 59)),
                    "payments",
                    p["metadata"]["name"],
                    "payments-api",
                    "payments-api",
                    "info",
                    f"POST /v1/charges: {r.randint(1500, 2100)} ok, 0 failed in the last 180s "
                    f"(p99 {r.randint(140, 220)}ms)",
                )
        if hangts <= ts < nrts + 20:
            for _ in range(6):
                ip = r.choice(bad_ips)
                ctrl = r.choice(ing["pods"])["metadata"]["name"]
                when = t0 + timedelta(seconds=r.randint(0, 59), milliseconds=r.randint(0, 999))
                if when.timestamp() >= nrts + 20:
                    continue
                L.add(
                    when,
                    "ingress-nginx",
                    ctrl,
                    "controller",
                    "ingress-nginx",
                    "error",
                    f"{when.strftime('%Y/%m/%d %H:%M:%S')} [error] 31#31: "
                    f"*{r.randint(4_000_000, 4_999_999)} upstream timed out "
                    "(110: Operation timed out) while reading response header from upstream, "
                    f"client: 10.20.{r.randint(70, 72)}.{r.randint(2, 250)}, "
                    'server: api.koalapay.com.au, request: "POST /v1/charges HTTP/1.1", '
                    f'upstream: "http://{ip}:8080/v1/charges", '
                    f'host: "api.koalapay.com.au"',
                    http__response__status_code=504,
                )
            for p in cw["pods"]:
                if p in bad_cw:
                    continue
                L.add(
                    t0 + timedelta(seconds=r.randint(0, 59)),
                    "payments",
                    p["metadata"]["name"],
                    "checkout-worker",
                    "checkout-worker",
                    "warn",
                    "charge request to payments-api timed out after 10s, requeueing order",
                )
        for p in cw["pods"] + repl_cw:
            if (p in bad_cw and ts >= hangts) or (p in repl_cw and ts < evts + 30):
                continue
            if minute % 5 == 0:
                L.add(
                    t0 + timedelta(seconds=r.randint(0, 59)),
                    "payments",
                    p["metadata"]["name"],
                    "checkout-worker",
                    "checkout-worker",
                    "info",
                    f"processed {r.randint(900, 1200)} orders in the last 5m",
                )
        if minute % 4 == 0:
            for p in lw["pods"]:
                if p in bad_lw and ts >= hangts:
                    continue
                L.add(
                    t0 + timedelta(seconds=r.randint(0, 59)),
                    "payments",
                    p["metadata"]["name"],
                    "ledger-writer",
                    "ledger-writer",
                    "info",
                    f"flushed {r.randint(3000, 5200)} journal entries",
                )
    for p in repl_pa:
        t0 = t_ev + timedelta(seconds=4)
        for off, msg in (
            (0, "payments-api 6.14.2 starting"),
            (9, "connected to postgres payments-db (pool 20)"),
            (14, "listening on :8080"),
        ):
            L.add(
                t0 + timedelta(seconds=off),
                "payments",
                p["metadata"]["name"],
                "payments-api",
                "payments-api",
                "info",
                msg,
            )
    # an unrelated, long-running noisy warning
    for minute in range(90, -1, -7):
        p = ok_pa[minute % len(ok_pa)]
        L.add(
            ck.ago(minutes=minute, seconds=-13),
            "payments",
            p["metadata"]["name"],
            "payments-api",
            "payments-api",
            "warn",
            "fraud-score cache miss ratio 0.31 above 0.25 (warming after deploy?)",
        )

    sc.meta = {
        "title": "Payments 504s overnight, ledger-writer Pending",
        "report": (
            "got paged: payments API threw a burst of 504s from ~03:06 for several minutes, "
            "checkout-worker was "
            "requeueing orders. mostly recovered but one ledger-writer pod is stuck Pending for "
            "memory and a few pods "
            "show Terminating forever. db issue? do we need bigger nodes?\n"
        ),
        "truth": {
            "category": "node_failure",
            "culprit": {"kind": "Node", "namespace": "", "name": bad},
            "evidence": [
                "PLEG is not healthy",
                "NodeNotReady",
                "TaintManagerEviction",
                "task containerd:1187 blocked for more than 122 seconds",
                "context deadline exceeded",
            ],
            "fix": (
                f"{bad} went NotReady when its container runtime hung (PLEG is not healthy; "
                "containerd blocked on "
                "the root volume); its pods stopped answering and were evicted after 300 s. "
                "Cordon and drain/replace "
                "the node (the stuck Terminating pods go with it); the Pending ledger-writer "
                "schedules once capacity "
                "returns. The database is fine."
            ),
        },
    }
    return sc
