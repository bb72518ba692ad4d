"""A year-old node's kubelet client certificate expires; the node goes NotReady."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from . import _kit as k

SID = "h56-rabbitmq-2-stuck-terminating"
NOW = "2026-12-14T09:20:00Z"

BAD = "ip-10-8-5-77.us-east-2.compute.internal"
NODES = [
    ("ip-10-8-1-23.us-east-2.compute.internal", "us-east-2a", "ng-general-v2"),
    ("ip-10-8-2-190.us-east-2.compute.internal", "us-east-2b", "ng-general-v2"),
    ("ip-10-8-3-44.us-east-2.compute.internal", "us-east-2c", "ng-general-v2"),
    ("ip-10-8-1-131.us-east-2.compute.internal", "us-east-2a", "ng-general-v2"),
    (BAD, "us-east-2b", "ng-stateful-legacy"),
    ("ip-10-8-6-12.us-east-2.compute.internal", "us-east-2c", "ng-stateful-legacy"),
]
RABBIT_IMAGE = "rabbitmq:3.13.7-management"


def build(root: Path) -> None:
    sc = k.Scenario(SID, NOW, seed=5603)
    expired = sc.ago(minutes=38, seconds=48)  # 08:41:12
    last_beat = expired - timedelta(seconds=3)
    not_ready = last_beat + timedelta(seconds=43)
    evicted = not_ready + timedelta(seconds=300)
    node_names = [n for n, _, _ in NODES]
    for i, (name, zone, group) in enumerate(NODES):
        legacy = group == "ng-stateful-legacy"
        if name == BAD:
            created = expired - timedelta(days=365, minutes=3, seconds=22)
        elif legacy:
            created = sc.ago(days=301, hours=4)
        else:
            created = sc.ago(days=9 + i, hours=i)
        extra = {"acme.io/ami-family": "al2-legacy-2025.11" if legacy else "al2023-2026.10"}
        conditions = None
        taints = None
        if name == BAD:
            msg = "Kubelet stopped posting node status."
            conditions = [
                k.node_condition(c, "Unknown", "NodeStatusUnknown", msg, last_beat, not_ready)
                for c in ("MemoryPressure", "DiskPressure", "PIDPressure", "Ready")
            ]
            taints = [
                {
                    "key": "node.kubernetes.io/unreachable",
                    "effect": "NoSchedule",
                    "timeAdded": k.iso(not_ready),
                },
                {
                    "key": "node.kubernetes.io/unreachable",
                    "effect": "NoExecute",
                    "timeAdded": k.iso(not_ready + timedelta(seconds=1)),
                },
            ]
        sc.add(
            k.node(
                name,
                zone,
                created,
                last_beat if name == BAD else sc.ago(minutes=0.3),
                instance_type="r5.xlarge" if legacy else "m6i.2xlarge",
                nodegroup=group,
                cpu="4" if legacy else "8",
                allocatable_cpu="3920m" if legacy else "7910m",
                memory_ki=32_000_000,
                allocatable_mem_ki=30_400_000,
                region="us-east-2",
                kubelet_version="v1.28.13-eks-a737599" if legacy else "v1.29.8-eks-a737599",
                runtime="containerd://1.7.11" if legacy else "containerd://1.7.22",
                conditions=conditions,
                taints=taints,
                extra_labels=extra,
            )
        )
    general = node_names[:4]
    plat = k.platform(sc, general, not_ready_nodes=[BAD], ds_nodes=node_names)
    for ns in ("messaging", "ledger", "payments"):
        sc.add(k.namespace(ns, sc.ago(days=330)))
    sc.event(
        "default",
        "Node",
        BAD,
        "NodeNotReady",
        f"Node {BAD} status is now: NodeNotReady",
        not_ready,
        component="node-controller",
        obj_namespace="",
    )

    # ---------------- messaging/rabbitmq ----------------
    rabbit_c = k.container(
        "rabbitmq",
        RABBIT_IMAGE,
        "1",
        "4Gi",
        "2",
        "4Gi",
        [("amqp", 5672), ("management", 15672), ("epmd", 4369), ("prometheus", 15692)],
        env=[("RABBITMQ_USE_LONGNAME", "true"), ("K8S_SERVICE_NAME", "rabbitmq-headless")],
        readiness={
            "exec": {"command": ["rabbitmq-diagnostics", "-q", "check_running"]},
            "periodSeconds": 30,
            "timeoutSeconds": 20,
            "failureThreshold": 3,
        },
    )
    rabbit = k.statefulset(
        sc,
        "messaging",
        "rabbitmq",
        [rabbit_c],
        [node_names[5], node_names[5], BAD],
        3,
        sc.ago(days=320),
        sc.ago(days=18),
        claim=("data", "100Gi", "gp3"),
        skip=[2],
        port=5672,
        ready_replicas=2,
    )
    r2_uid = sc.uid()
    r2_ip = sc.pod_ip(BAD)
    r2_start = sc.ago(days=18) + timedelta(seconds=95)
    r2_tmpl = k.template(
        {"app.kubernetes.io/name": "rabbitmq"},
        [rabbit_c],
        extra_spec={"hostname": "rabbitmq-2", "subdomain": "rabbitmq"},
    )
    r2 = k.pod(
        "messaging",
        "rabbitmq-2",
        r2_uid,
        k.owner("StatefulSet", "rabbitmq", rabbit.uid),
        r2_tmpl,
        BAD,
        r2_ip,
        k.node_ip(BAD),
        r2_start,
        [k.running_status("rabbitmq", RABBIT_IMAGE, r2_start, 0, False)],
        conditions=_lost_conditions(r2_start, not_ready, evicted),
        extra_labels={"statefulset.kubernetes.io/pod-name": "rabbitmq-2"},
        deletion=evicted + timedelta(seconds=30),
    )
    sc.add(r2)
    _lost_pod_events(sc, "messaging", "rabbitmq-2", not_ready, evicted)
    for obj in sc.objects:
        if obj["kind"] == "Endpoints" and obj["metadata"]["name"] == "rabbitmq":
            obj["subsets"][0]["notReadyAddresses"] = [
                {
                    "ip": r2_ip,
                    "nodeName": BAD,
                    "targetRef": {
                        "kind": "Pod",
                        "name": "rabbitmq-2",
                        "namespace": "messaging",
                        "uid": r2_uid,
                    },
                }
            ]

    # ---------------- ledger/ledger-worker: one pod was on the bad node -------------
    worker_img = "ghcr.io/northwind-pay/ledger-worker:5.4.2"
    worker = k.simple_deployment(
        sc,
        "ledger",
        "ledger-worker",
        [
            k.container(
                "worker",
                worker_img,
                "500m",
                "768Mi",
                "1",
                "1Gi",
                [("metrics", 9102)],
                env=[("AMQP_URL", "amqp://ledger@rabbitmq.messaging.svc:5672/ledger")],
            )
        ],
        general,
        3,
        created=sc.ago(days=300),
        rolled=sc.ago(days=5, hours=2),
        revision=27,
    )
    replacement = worker.pods[2]
    lost_worker = _lost_replica(sc, worker, worker_img, "worker", not_ready, evicted)
    _move_pod(sc, replacement.name, evicted + timedelta(seconds=2))
    sc.event(
        "ledger",
        "ReplicaSet",
        replacement.name.rsplit("-", 1)[0],
        "SuccessfulCreate",
        f"Created pod: {replacement.name}",
        evicted + timedelta(seconds=1),
        api_version="apps/v1",
    )
    sc.event(
        "ledger",
        "Pod",
        replacement.name,
        "Scheduled",
        f"Successfully assigned ledger/{replacement.name} to {replacement.node}",
        evicted + timedelta(seconds=2),
    )
    ledger_api = k.simple_deployment(
        sc,
        "ledger",
        "ledger-api",
        [
            k.container(
                "api",
                "ghcr.io/northwind-pay/ledger-api:5.5.0",
                "300m",
                "512Mi",
                "1",
                "768Mi",
                [("http", 8080)],
                readiness=k.http_probe("/ready", 8080),
            )
        ],
        general,
        3,
        created=sc.ago(days=300),
        rolled=sc.ago(minutes=24),
        revision=44,
        port=8080,
    )
    rs_api = ledger_api.pods[0].name.rsplit("-", 1)[0]
    sc.event(
        "ledger",
        "Deployment",
        "ledger-api",
        "ScalingReplicaSet",
        f"Scaled up replica set {rs_api} to 3",
        sc.ago(minutes=24),
        api_version="apps/v1",
    )
    payouts = k.simple_deployment(
        sc,
        "payments",
        "payout-scheduler",
        [
            k.container(
                "scheduler",
                "ghcr.io/northwind-pay/payout-scheduler:1.12.0",
                "100m",
                "256Mi",
                "500m",
                "512Mi",
            )
        ],
        general[1:2],
        1,
        created=sc.ago(days=280),
        rolled=sc.ago(days=12),
        revision=9,
        restarts={0: (2, k.terminated("Error", 1, sc.ago(days=3), sc.ago(days=2, hours=20)))},
    )
    gateway = k.simple_deployment(
        sc,
        "payments",
        "payments-gateway",
        [
            k.container(
                "gateway",
                "ghcr.io/northwind-pay/payments-gateway:8.1.4",
                "400m",
                "512Mi",
                "2",
                "1Gi",
                [("http", 8080)],
            )
        ],
        general,
        4,
        created=sc.ago(days=300),
        rolled=sc.ago(days=2, hours=6),
        revision=61,
        port=8080,
    )

    # ---------------- metrics ----------------
    def bad_since(t: datetime) -> bool:
        return t >= not_ready

    for n in node_names:
        for status in ("true", "false", "unknown"):

            def cond(t: datetime, n: str = n, status: str = status) -> float:
                if n == BAD and bad_since(t):
                    return 1.0 if status == "unknown" else 0.0
                return 1.0 if status == "true" else 0.0

            sc.metrics.gauge(
                "kube_node_status_condition",
                {"node": n, "condition": "Ready", "status": status},
                cond,
                help_text="The condition of a cluster node.",
            )
    for n in node_names:
        sc.metrics.gauge(
            "up",
            {"job": "kubelet", "instance": f"{k.node_ip(n)}:10250", "node": n},
            lambda t, n=n: 0 if n == BAD and t >= expired else 1,
        )
    for n in node_names:
        sc.metrics.gauge(
            "up",
            {"job": "node-exporter", "instance": f"{k.node_ip(n)}:9100", "node": n},
            lambda _t: 1,
        )
    for n in node_names:
        sc.metrics.gauge(
            "node_load1",
            {"instance": f"{k.node_ip(n)}:9100", "node": n},
            k.wobble(sc, 0.9 if n != BAD else 0.7, 0.3),
            help_text="1m load average.",
        )
    for n in node_names:
        sc.metrics.gauge(
            "node_memory_MemAvailable_bytes",
            {"instance": f"{k.node_ip(n)}:9100", "node": n},
            k.wobble(sc, 14 * k.GI, 0.03),
            help_text="Memory information field MemAvailable_bytes.",
        )
    sc.metrics.gauge(
        "kube_statefulset_status_replicas_ready",
        {"namespace": "messaging", "statefulset": "rabbitmq"},
        lambda t: 2 if bad_since(t) else 3,
        help_text="The number of ready replicas per StatefulSet.",
    )
    sc.metrics.gauge(
        "kube_statefulset_replicas",
        {"namespace": "messaging", "statefulset": "rabbitmq"},
        lambda _t: 3,
        help_text="Number of desired pods for a StatefulSet.",
    )
    for p in [*rabbit.pods, k.PodRef("rabbitmq-2", r2_ip, BAD, r2_uid)]:
        sc.metrics.gauge(
            "kube_pod_status_ready",
            {"namespace": "messaging", "pod": p.name, "condition": "true"},
            lambda t, p=p: 0 if p.node == BAD and bad_since(t) else 1,
            help_text="Describes whether the pod is ready to serve requests.",
        )
    for p in rabbit.pods:
        sc.metrics.gauge(
            "rabbitmq_queue_messages_ready",
            {
                "namespace": "messaging",
                "pod": p.name,
                "queue": "ledger.postings",
                "vhost": "ledger",
            },
            k.wobble(sc, 38, 0.5),
            help_text="Messages ready to be delivered to consumers.",
        )
    k.container_metrics(sc, "messaging", rabbit.pods, "rabbitmq", 0.35, 1.4 * k.GI)
    k.container_metrics(sc, "ledger", worker.pods, "worker", 0.2, 420 * k.MI)
    k.restarts_metric(sc, "payments", payouts.pods, "scheduler", 2)
    k.restarts_metric(sc, "ledger", worker.pods, "worker")

    # ---------------- logs ----------------
    start = sc.ago(minutes=60)

    shipper = next(p for p in plat.filebeat.pods if p.node == BAD)

    def kubelet(t: datetime, level: str, text: str) -> None:
        prefix = {"error": "E", "warn": "W", "info": "I"}[level]
        line = f"{prefix}{k.klog_time(t)}    2087 {text}"
        sc.log(
            t,
            "logging",
            shipper.name,
            "filebeat",
            "kubelet",
            level,
            line,
            BAD,
            host__name=BAD,
            log__file__path="/var/log/journal",
            systemd__unit="kubelet.service",
            event__dataset="kubelet",
        )

    for t in sc.poisson_times(start, expired, lambda _t: 1.5):
        kubelet(
            t,
            "info",
            sc.rng.choice(
                [
                    'kubelet_getters.go:187] "Pod status updated" pod="messaging/rabbitmq-2" '
                    'status="Running"',
                    'prober.go:107] "Probe succeeded" probeType="Readiness" '
                    'pod="messaging/rabbitmq-2" containerName="rabbitmq"',
                    'kubelet_pods.go:1051] "Unable to retrieve pull secret, the image pull may '
                    'not succeed." pod="ledger/' + lost_worker + '" secret="" err="secret '
                    '\\"ghcr-pull\\" not found"',
                ]
            ),
        )
    kubelet(
        expired,
        "error",
        'certificate_manager.go:562] "kubernetes.io/kube-apiserver-client-kubelet: certificate '
        "has expired and rotation is disabled (--rotate-certificates=false), not requesting a "
        'new one" expiration="2026-12-14 08:41:12 +0000 UTC"',
    )
    t = expired + timedelta(seconds=2)
    while t < sc.now:
        choice = sc.rng.random()
        if choice < 0.35:
            kubelet(
                t,
                "error",
                'kubelet_node_status.go:540] "Error updating node status, will retry" '
                f'err="error getting node \\"{BAD}\\": Unauthorized"',
            )
        elif choice < 0.6:
            kubelet(
                t,
                "error",
                'controller.go:145] "Failed to ensure lease exists, will retry" err="Unauthorized"'
                ' interval="7s"',
            )
        elif choice < 0.85:
            kubelet(
                t,
                "error",
                'transport.go:123] "Client certificate is invalid" err="x509: certificate has '
                "expired or is not yet valid: current time "
                f'{k.iso(t)} is after 2026-12-14T08:41:12Z" '
                'path="/var/lib/kubelet/pki/kubelet-client-current.pem"',
            )
        else:
            kind = sc.rng.choice(["*v1.Pod", "*v1.Service", "*v1.Node", "*v1.CSIDriver"])
            kubelet(
                t,
                "warn",
                f"reflector.go:539] k8s.io/client-go/informers/factory.go:159: failed to list "
                f"{kind}: Unauthorized",
            )
        t += timedelta(seconds=sc.rng.uniform(6, 14))
    for p in [*rabbit.pods]:
        for t in sc.poisson_times(start, sc.now, lambda _t: 0.4):
            sc.log(
                t,
                "messaging",
                p.name,
                "rabbitmq",
                "rabbitmq",
                "info",
                f"{k.iso_ms(t)} [info] <0.{sc.rng.randint(1000, 9999)}.0> accepting AMQP "
                f"connection <0.{sc.rng.randint(1000, 9999)}.0> "
                f"({sc.rng.choice([w.ip for w in worker.pods])}:{sc.rng.randint(30000, 60000)} -> "
                f"{p.ip}:5672)",
                p.node,
            )
        for t in sc.poisson_times(start, sc.now, lambda _t: 0.25):
            sc.log(
                t,
                "messaging",
                p.name,
                "rabbitmq",
                "rabbitmq",
                "warn",
                f"{k.iso_ms(t)} [warning] <0.{sc.rng.randint(1000, 9999)}.0> closing AMQP "
                f"connection <0.{sc.rng.randint(1000, 9999)}.0> "
                f"({sc.rng.choice([w.ip for w in gateway.pods])}:{sc.rng.randint(30000, 60000)} "
                f"-> {p.ip}:5672, vhost: 'payments', user: 'gateway'): client unexpectedly "
                "closed TCP connection",
                p.node,
            )
    for p in worker.pods:
        for t in sc.poisson_times(start, sc.now, lambda _t: 1.2):
            sc.log(
                t,
                "ledger",
                p.name,
                "worker",
                "ledger-worker",
                "info",
                f"posted batch id={sc.hexid(10)} entries={sc.rng.randint(20, 400)} "
                f"took={sc.rng.randint(20, 140)}ms",
                p.node,
            )
    for t in sc.poisson_times(start, sc.now, lambda _t: 1.0):
        sc.log(
            t,
            "ledger",
            lost_worker,
            "worker",
            "ledger-worker",
            "info",
            f"posted batch id={sc.hexid(10)} entries={sc.rng.randint(20, 400)} "
            f"took={sc.rng.randint(20, 140)}ms",
            BAD,
        )
    rep_start = evicted + timedelta(seconds=9)
    for msg, lvl, dt in (
        ("ledger-worker 5.4.2 starting, prefetch=50", "info", 0),
        (
            "amqp: connection to rabbitmq.messaging.svc:5672 established, consuming "
            "ledger.postings",
            "info",
            2,
        ),
    ):
        sc.log(
            rep_start + timedelta(seconds=dt),
            "ledger",
            replacement.name,
            "worker",
            "ledger-worker",
            lvl,
            msg,
            replacement.node,
        )
    k.background_logs(
        sc,
        "ledger",
        ledger_api.pods,
        "api",
        "ledger-api",
        0.5,
        [
            ("info", "GET /v2/accounts/{id}/balance 200 {ms}ms", 10),
            ("error", "GET /v2/accounts/{id}/statement 404 account not found", 1),
        ],
        start=sc.ago(minutes=23),
    )
    k.background_logs(
        sc,
        "payments",
        gateway.pods,
        "gateway",
        "payments-gateway",
        0.6,
        [
            ("info", "authorised payment id={id} in {ms}ms", 10),
            ("warn", "3DS challenge timeout id={id}, falling back to frictionless", 1),
        ],
    )
    k.background_logs(
        sc,
        "payments",
        payouts.pods,
        "scheduler",
        "payout-scheduler",
        0.2,
        [("info", "payout window check: {n} payouts due", 1)],
    )
    sc.pod_log(
        "messaging",
        "rabbitmq-0",
        "rabbitmq",
        sc.ago(minutes=5),
        f"{k.iso_ms(sc.ago(minutes=5))} [info] <0.4412.0> cluster status: running nodes "
        "[rabbit@rabbitmq-0.rabbitmq.messaging.svc.cluster.local,"
        "rabbit@rabbitmq-1.rabbitmq.messaging.svc.cluster.local,"
        "rabbit@rabbitmq-2.rabbitmq.messaging.svc.cluster.local]",
    )

    sc.write(
        root,
        title="rabbitmq-2 stuck Terminating, ledger postings delayed",
        report="""
rabbitmq-2 in messaging has been stuck in Terminating for half an hour and the statefulset won't
bring it back, only 2/3 ready. one ledger-worker pod is stuck Terminating too while a new one runs.
kubectl logs / exec on rabbitmq-2 just errors out. is the rabbit cluster broken, should we force
delete rabbitmq-2? ledger-api also deployed 5.5.0 about 20 min ago fwiw, and payout-scheduler has
been restarting this week
""",
        category="node_failure",
        culprit=("Node", "", BAD),
        evidence=["NodeNotReady", "x509: certificate has expired", "Kubelet stopped posting"],
        fix=(
            f"Node {BAD} lost its API credentials: its kubelet client certificate expired "
            "(rotation disabled on ng-stateful-legacy). Renew the kubelet certificate or replace "
            "the node (cordon/drain, then terminate), enable certificate rotation on that node "
            "group; rabbitmq-2 returns once the old pod is confirmed gone."
        ),
    )


def _lost_conditions(start: datetime, not_ready: datetime, evicted: datetime) -> list[k.Obj]:
    conds = k.pod_conditions(start, not_ready, False)
    conds.append(
        {
            "type": "DisruptionTarget",
            "status": "True",
            "reason": "DeletionByTaintManager",
            "message": "Taint manager: deleting due to NoExecute taint",
            "lastTransitionTime": k.iso(evicted),
        }
    )
    for c in conds:
        if c["type"] == "Ready":
            c["status"] = "False"
    return conds


def _lost_pod_events(
    sc: k.Scenario, namespace: str, name: str, not_ready: datetime, evicted: datetime
) -> None:
    sc.event(
        namespace,
        "Pod",
        name,
        "NodeNotReady",
        "Node is not ready",
        not_ready,
        etype="Warning",
        component="node-controller",
    )
    sc.event(
        namespace,
        "Pod",
        name,
        "TaintManagerEviction",
        f"Marking for deletion Pod {namespace}/{name}",
        evicted,
        component="taint-eviction-controller",
    )


def _lost_replica(
    sc: k.Scenario,
    w: k.Workload,
    image: str,
    cname: str,
    not_ready: datetime,
    evicted: datetime,
) -> str:
    rs_name = w.pods[0].name.rsplit("-", 1)[0]
    rs = next(
        o for o in sc.objects if o["kind"] == "ReplicaSet" and o["metadata"]["name"] == rs_name
    )
    name = f"{rs_name}-{sc.pod_suffix()}"
    start = sc.ago(days=5, hours=2) + timedelta(seconds=21)
    p = k.pod(
        w.namespace,
        name,
        sc.uid(),
        k.owner("ReplicaSet", rs_name, rs["metadata"]["uid"]),
        rs["spec"]["template"],
        BAD,
        sc.pod_ip(BAD),
        k.node_ip(BAD),
        start,
        [k.running_status(cname, image, start, 0, False)],
        conditions=_lost_conditions(start, not_ready, evicted),
        deletion=evicted + timedelta(seconds=30),
    )
    sc.add(p)
    _lost_pod_events(sc, w.namespace, name, not_ready, evicted)
    return name


def _move_pod(sc: k.Scenario, name: str, when: datetime) -> None:
    for o in sc.objects:
        if o["kind"] == "Pod" and o["metadata"]["name"] == name:
            o["metadata"]["creationTimestamp"] = k.iso(when)
            o["status"]["startTime"] = k.iso(when)
            o["status"]["conditions"] = k.pod_conditions(when, when + timedelta(seconds=11))
            for cs in o["status"]["containerStatuses"]:
                cs["state"] = {"running": {"startedAt": k.iso(when + timedelta(seconds=6))}}
