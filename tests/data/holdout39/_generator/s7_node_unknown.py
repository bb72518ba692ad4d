"""Harrow Ledger: the kubelet of one node lost its network and stopped posting status; the
node is Unknown/NotReady, the StatefulSet replica ledger-pg-2 on it is stuck Terminating and
never replaced, so one read replica carries all the reads and statements-api gets slow."""

from __future__ import annotations

from datetime import timedelta

from .common import (
    Scenario,
    container,
    cumulative,
    endpoints,
    event,
    histogram_samples,
    namespace,
    node,
    owner_ref,
    parse,
    pod,
    running,
    service,
    simple_service,
    steps,
    suffix,
    ts,
    uid,
)

NOW = parse("2026-11-29T11:25:00Z")
NS = "ledger"
LOST = NOW - timedelta(minutes=49)  # last heartbeat
UNKNOWN = LOST + timedelta(seconds=40)
EVICT = UNKNOWN + timedelta(seconds=300)
DEAD = "ip-10-12-4-77.eu-north-1.compute.internal"
NODES = [
    "ip-10-12-1-23.eu-north-1.compute.internal",
    "ip-10-12-2-190.eu-north-1.compute.internal",
    DEAD,
    "ip-10-12-1-141.eu-north-1.compute.internal",
    "ip-10-12-2-58.eu-north-1.compute.internal",
]
LIVE = [n for n in NODES if n != DEAD]
BOUNDS = [0.05, 0.1, 0.25, 0.5, 1.0, 2.5]


def build() -> Scenario:
    sc = Scenario(
        id="ledger-reads-slow-replica-missing",
        title="statements-api reads slow, exports take forever",
        now=NOW,
        report="""
statements-api is slow on reads since before 11, p95 went from ~300ms to ~900ms and CSV
exports time out for some customers. is a ledger-pg replica lagging? the primary looks fine
and writes are ok. nothing deployed this weekend
""",
        truth={
            "category": "node_failure",
            "culprit": {"kind": "Node", "namespace": "", "name": DEAD},
            "evidence": [
                "Kubelet stopped posting node status.",
                "NodeNotReady",
                "Marking for deletion Pod ledger/ledger-pg-2",
                "node.kubernetes.io/unreachable",
            ],
            "fix": f"Recover or replace node {DEAD} (its kubelet lost the network at "
            f"{LOST.strftime('%H:%M')}); once the node is confirmed gone, delete it (or "
            "force-delete ledger-pg-2) so the StatefulSet recreates the replica "
            "elsewhere and ledger-pg-ro has two replicas again.",
        },
    )
    created = NOW - timedelta(days=380)
    for ns in (NS, "default", "kube-system", "monitoring"):
        sc.add(namespace(ns, created))
    taints = [
        {"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule", "timeAdded": ts(UNKNOWN)},
        {
            "key": "node.kubernetes.io/unreachable",
            "effect": "NoExecute",
            "timeAdded": ts(UNKNOWN + timedelta(seconds=1)),
        },
    ]
    for i, name in enumerate(NODES):
        dead = name == DEAD
        obj = node(
            name,
            NOW - timedelta(days=6, hours=2 * i),
            NOW,
            cpu="8",
            memory="64Gi",
            region="eu-north-1",
            zone="abcab"[i],
            instance="r6i.2xlarge",
            ready="Unknown" if dead else "True",
            heartbeat=LOST if dead else None,
            taints=taints if dead else None,
            pressure={
                "MemoryPressure": "Unknown",
                "DiskPressure": "Unknown",
                "PIDPressure": "Unknown",
            }
            if dead
            else None,
            kubelet="v1.30.4-eks-a737599",
        )
        if dead:
            for cond in obj["status"]["conditions"]:
                cond["lastTransitionTime"] = ts(UNKNOWN)
        sc.add(obj)
    rng = sc.rng
    # --- the StatefulSet
    sts = "ledger-pg"
    pg = container(
        "postgres",
        "ghcr.io/zalando/spilo-16:3.3-p1",
        cpu="2",
        memory="12Gi",
        readiness=None,
        env=[
            {"name": "SCOPE", "value": "ledger-pg"},
            {"name": "PGROOT", "value": "/home/postgres/pgdata/pgroot"},
        ],
        mounts=[{"name": "pgdata", "mountPath": "/home/postgres/pgdata"}],
    )
    pg["ports"] = [
        {"name": "postgresql", "containerPort": 5432, "protocol": "TCP"},
        {"name": "patroni", "containerPort": 8008, "protocol": "TCP"},
    ]
    pg["readinessProbe"] = {
        "httpGet": {"path": "/readiness", "port": 8008},
        "periodSeconds": 10,
        "failureThreshold": 3,
    }
    exporter = container(
        "exporter",
        "quay.io/prometheuscommunity/postgres-exporter:v0.15.0",
        cpu="50m",
        memory="64Mi",
        readiness=None,
    )
    sc.add(
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {
                "name": sts,
                "namespace": NS,
                "uid": uid("StatefulSet", NS, sts),
                "creationTimestamp": ts(created),
                "generation": 9,
                "labels": {"app.kubernetes.io/name": sts, "team": "ledger-core"},
            },
            "spec": {
                "replicas": 3,
                "serviceName": sts,
                "podManagementPolicy": "Parallel",
                "selector": {"matchLabels": {"app.kubernetes.io/name": sts}},
                "updateStrategy": {"type": "OnDelete"},
                "template": {
                    "metadata": {"labels": {"app.kubernetes.io/name": sts}},
                    "spec": {"containers": [pg, exporter]},
                },
                "volumeClaimTemplates": [
                    {
                        "metadata": {"name": "pgdata"},
                        "spec": {
                            "accessModes": ["ReadWriteOnce"],
                            "storageClassName": "gp3",
                            "resources": {"requests": {"storage": "500Gi"}},
                        },
                    }
                ],
            },
            "status": {
                "replicas": 3,
                "readyReplicas": 2,
                "currentReplicas": 3,
                "updatedReplicas": 3,
                "availableReplicas": 2,
                "observedGeneration": 9,
                "currentRevision": "ledger-pg-79f4c5d8b6",
                "updateRevision": "ledger-pg-79f4c5d8b6",
                "collisionCount": 0,
            },
        }
    )
    members = {}
    for i, (role, node_name) in enumerate(
        (("master", NODES[0]), ("replica", NODES[1]), ("replica", DEAD))
    ):
        pod_name = f"{sts}-{i}"
        started = NOW - timedelta(days=5, hours=7 - i)
        dead = node_name == DEAD
        labels = {
            "app.kubernetes.io/name": sts,
            "spilo-role": role,
            "statefulset.kubernetes.io/pod-name": pod_name,
            "controller-revision-hash": "ledger-pg-79f4c5d8b6",
        }
        conditions = None
        if dead:
            conditions = [
                {"type": "Initialized", "status": "True", "lastTransitionTime": ts(started)},
                {
                    "type": "Ready",
                    "status": "False",
                    "lastTransitionTime": ts(UNKNOWN),
                    "lastProbeTime": None,
                },
                {
                    "type": "ContainersReady",
                    "status": "True",
                    "lastTransitionTime": ts(started + timedelta(seconds=40)),
                },
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": ts(started)},
                {
                    "type": "DisruptionTarget",
                    "status": "True",
                    "reason": "DeletionByTaintManager",
                    "message": "Taint manager: deleting due to NoExecute taint",
                    "lastTransitionTime": ts(EVICT),
                },
            ]
        p = pod(
            NS,
            pod_name,
            ("StatefulSet", sts),
            node_name,
            [pg, exporter],
            [running(started, ready=True), running(started, ready=True)],
            started,
            labels=labels,
            conditions=conditions,
            deletion=EVICT if dead else None,
            volumes=[
                {"name": "pgdata", "persistentVolumeClaim": {"claimName": f"pgdata-{pod_name}"}}
            ],
            extra_spec={
                "tolerations": [
                    {
                        "key": "node.kubernetes.io/not-ready",
                        "operator": "Exists",
                        "effect": "NoExecute",
                        "tolerationSeconds": 300,
                    },
                    {
                        "key": "node.kubernetes.io/unreachable",
                        "operator": "Exists",
                        "effect": "NoExecute",
                        "tolerationSeconds": 300,
                    },
                ]
            },
        )
        p["metadata"]["ownerReferences"] = [owner_ref("StatefulSet", sts, NS)]
        if dead:
            p["metadata"]["finalizers"] = []
        members[pod_name] = p
        sc.add(p)
        sc.add(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {
                    "name": f"pgdata-{pod_name}",
                    "namespace": NS,
                    "uid": uid("PersistentVolumeClaim", NS, f"pgdata-{pod_name}"),
                    "creationTimestamp": ts(created + timedelta(minutes=i)),
                    "labels": {"app.kubernetes.io/name": sts},
                },
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": "gp3",
                    "resources": {"requests": {"storage": "500Gi"}},
                    "volumeName": f"pvc-{uid('pv', pod_name)}",
                },
                "status": {
                    "phase": "Bound",
                    "accessModes": ["ReadWriteOnce"],
                    "capacity": {"storage": "500Gi"},
                },
            }
        )
    for svc_name, selector, ready, waiting in (
        (
            "ledger-pg",
            {"app.kubernetes.io/name": sts, "spilo-role": "master"},
            [members["ledger-pg-0"]],
            [],
        ),
        (
            "ledger-pg-ro",
            {"app.kubernetes.io/name": sts, "spilo-role": "replica"},
            [members["ledger-pg-1"]],
            [members["ledger-pg-2"]],
        ),
    ):
        sc.add(
            service(NS, svc_name, created, 5432, 5432, selector, port_name="postgresql"),
            endpoints(
                NS, svc_name, created, ready, 5432, not_ready=waiting, port_name="postgresql"
            ),
        )
    # --- apps
    _, statements = simple_service(
        sc,
        NS,
        "statements-api",
        "482913557210.dkr.ecr.eu-north-1.amazonaws.com/ledger/statements-api:2.40.1",
        replicas=3,
        nodes=LIVE,
        created=created,
        rolled=NOW - timedelta(days=4, hours=3),
        port=8000,
        number=81,
        memory="512Mi",
        env=[
            {"name": "DB_READ_HOST", "value": "ledger-pg-ro.ledger.svc"},
            {"name": "DB_WRITE_HOST", "value": "ledger-pg.ledger.svc"},
            {"name": "DB_POOL_SIZE", "value": "20"},
        ],
        readiness="/healthz",
    )
    _, posting = simple_service(
        sc,
        NS,
        "posting-engine",
        "482913557210.dkr.ecr.eu-north-1.amazonaws.com/ledger/posting-engine:5.2.0",
        replicas=3,
        nodes=LIVE,
        created=created,
        rolled=NOW - timedelta(days=2, hours=20),
        port=8080,
        number=133,
        memory="1Gi",
        env=[{"name": "DB_HOST", "value": "ledger-pg.ledger.svc"}],
    )
    # fx-rates had a pod on the dead node: it is Terminating, its replacement runs elsewhere
    rev, fx = simple_service(
        sc,
        NS,
        "fx-rates",
        "482913557210.dkr.ecr.eu-north-1.amazonaws.com/ledger/fx-rates:1.7.3",
        replicas=2,
        nodes=[NODES[3], NODES[4]],
        created=created,
        rolled=NOW - timedelta(days=3, hours=5),
        port=8080,
        number=27,
        memory="256Mi",
    )
    fx_replacement = fx[1]
    stale_name = f"fx-rates-{rev.hash(NS, 'fx-rates')}-{suffix('fx-stale')}"
    stale = pod(
        NS,
        stale_name,
        ("ReplicaSet", f"fx-rates-{rev.hash(NS, 'fx-rates')}"),
        DEAD,
        rev.containers,
        [running(NOW - timedelta(days=3, hours=5, seconds=-6))],
        NOW - timedelta(days=3, hours=5, seconds=-2),
        labels={
            "app.kubernetes.io/name": "fx-rates",
            "pod-template-hash": rev.hash(NS, "fx-rates"),
        },
        deletion=EVICT,
        conditions=[
            {"type": "Ready", "status": "False", "lastTransitionTime": ts(UNKNOWN)},
            {
                "type": "DisruptionTarget",
                "status": "True",
                "reason": "DeletionByTaintManager",
                "message": "Taint manager: deleting due to NoExecute taint",
                "lastTransitionTime": ts(EVICT),
            },
        ],
    )
    sc.add(stale)
    # replacement was created at EVICT: rewrite its times
    for key in ("creationTimestamp",):
        fx_replacement["metadata"][key] = ts(EVICT + timedelta(seconds=1))
    fx_replacement["status"]["startTime"] = ts(EVICT + timedelta(seconds=3))
    fx_replacement["status"]["containerStatuses"][0]["state"]["running"]["startedAt"] = ts(
        EVICT + timedelta(seconds=5)
    )
    for c in fx_replacement["status"]["conditions"]:
        c["lastTransitionTime"] = ts(EVICT + timedelta(seconds=18))
    # a DaemonSet pod on the dead node
    ds = "node-exporter"
    ds_container = container(
        "node-exporter",
        "quay.io/prometheus/node-exporter:v1.8.2",
        cpu="50m",
        memory="64Mi",
        readiness=None,
    )
    sc.add(
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {
                "name": ds,
                "namespace": "monitoring",
                "uid": uid("DaemonSet", "monitoring", ds),
                "creationTimestamp": ts(created),
                "generation": 3,
                "labels": {"app.kubernetes.io/name": ds},
            },
            "spec": {
                "selector": {"matchLabels": {"app.kubernetes.io/name": ds}},
                "template": {
                    "metadata": {"labels": {"app.kubernetes.io/name": ds}},
                    "spec": {"containers": [ds_container], "tolerations": [{"operator": "Exists"}]},
                },
                "updateStrategy": {"type": "RollingUpdate"},
            },
            "status": {
                "currentNumberScheduled": 5,
                "desiredNumberScheduled": 5,
                "numberAvailable": 4,
                "numberReady": 4,
                "numberUnavailable": 1,
                "numberMisscheduled": 0,
                "updatedNumberScheduled": 5,
                "observedGeneration": 3,
            },
        }
    )
    for i, node_name in enumerate(NODES):
        started = NOW - timedelta(days=6, hours=2 * i) + timedelta(minutes=1)
        p = pod(
            "monitoring",
            f"{ds}-{suffix(node_name)}",
            ("DaemonSet", ds),
            node_name,
            [ds_container],
            [running(started, ready=node_name != DEAD)],
            started,
            labels={"app.kubernetes.io/name": ds},
            conditions=[{"type": "Ready", "status": "False", "lastTransitionTime": ts(UNKNOWN)}]
            if node_name == DEAD
            else None,
        )
        sc.add(p)
    # --- events
    node_event = event(
        "default",
        "Node",
        DEAD,
        "NodeNotReady",
        f"Node {DEAD} status is now: NodeNotReady",
        UNKNOWN,
        component="node-controller",
    )
    del node_event["involvedObject"]["namespace"]
    node_event["involvedObject"]["uid"] = uid("Node", "", DEAD)
    sc.add(node_event)
    for p in (members["ledger-pg-2"], stale):
        pod_name = p["metadata"]["name"]
        sc.add(
            event(
                NS,
                "Pod",
                pod_name,
                "NodeNotReady",
                "Node is not ready",
                UNKNOWN + timedelta(seconds=1),
                type_="Warning",
                component="node-controller",
            ),
            event(
                NS,
                "Pod",
                pod_name,
                "TaintManagerEviction",
                f"Marking for deletion Pod {NS}/{pod_name}",
                EVICT,
                component="taint-eviction-controller",
            ),
        )
    sc.add(
        event(
            NS,
            "ReplicaSet",
            f"fx-rates-{rev.hash(NS, 'fx-rates')}",
            "SuccessfulCreate",
            f"Created pod: {fx_replacement['metadata']['name']}",
            EVICT + timedelta(seconds=1),
            component="replicaset-controller",
        ),
        event(
            NS,
            "Pod",
            fx_replacement["metadata"]["name"],
            "Scheduled",
            f"Successfully assigned {NS}/{fx_replacement['metadata']['name']} to "
            f"{fx_replacement['spec']['nodeName']}",
            EVICT + timedelta(seconds=1),
            component="default-scheduler",
        ),
        event(
            NS,
            "Pod",
            posting[0]["metadata"]["name"],
            "Unhealthy",
            'Readiness probe failed: Get "http://10.12.1.77:8080/healthz": context '
            "deadline exceeded",
            NOW - timedelta(minutes=21),
            type_="Warning",
            host=posting[0]["spec"]["nodeName"],
        ),
    )
    # --- logs
    t = NOW - timedelta(hours=2)
    while t < NOW:
        t += timedelta(seconds=30)
        if t >= NOW:
            break
        stamp = t.strftime("%Y-%m-%d %H:%M:%S,") + f"{rng.randint(0, 999):03d}"
        sc.log(
            NS,
            "ledger-pg-0",
            "postgres",
            f"{stamp} INFO: no action. I am (ledger-pg-0), the leader with the lock",
        )
        sc.log(
            NS,
            "ledger-pg-1",
            "postgres",
            f"{stamp} INFO: no action. I am (ledger-pg-1), a "
            "secondary, and following a leader (ledger-pg-0)",
        )
        # ledger-pg-2's node is unreachable: its log cannot be read (the kubelet does not answer)
    moment = LOST + timedelta(seconds=61)
    msg = "terminating walsender process due to replication timeout"
    sc.log(
        NS,
        "ledger-pg-0",
        "postgres",
        f"{moment.strftime('%Y-%m-%d %H:%M:%S.%f')[:-3]} UTC "
        f"[28811] standby_ledger_pg_2 LOG:  {msg}",
    )
    sc.doc(moment, NS, "ledger-pg-0", "postgres", "ledger-pg", "info", msg)
    for p in statements:
        pod_name = p["metadata"]["name"]
        t = NOW - timedelta(hours=2)
        while t < NOW:
            t += timedelta(seconds=rng.randint(3, 12))
            if t >= NOW:
                break
            slow = t >= LOST
            ms = int(rng.lognormvariate(4.9 if not slow else 5.9, 0.45))
            path = rng.choice(
                [
                    "/v1/accounts/{id}/statements",
                    "/v1/accounts/{id}/balance",
                    "/v1/exports/{id}.csv",
                ]
            )
            line = (
                f"{t.strftime('%Y-%m-%d %H:%M:%S')} INFO  uvicorn.access: 10.12.3."
                f'{rng.randint(2, 250)}:0 - "GET {path} HTTP/1.1" 200 {ms}ms'
            )
            sc.log(NS, pod_name, "statements-api", line)
            if ms > 1500:
                w = f"slow read query on ledger-pg-ro took {ms / 1000:.2f}s (statement export)"
                sc.log(
                    NS,
                    pod_name,
                    "statements-api",
                    f"{t.strftime('%Y-%m-%d %H:%M:%S')} WARNING statements.db: {w}",
                )
                sc.doc(t, NS, pod_name, "statements-api", "statements-api", "warn", w)
            elif rng.random() < 0.07:
                sc.doc(
                    t,
                    NS,
                    pod_name,
                    "statements-api",
                    "statements-api",
                    "info",
                    f"GET {path} 200 {ms}ms",
                    **{"http.response.status_code": 200},
                )
    # --- metrics
    times = steps(NOW - timedelta(hours=3), NOW)
    for p in statements:
        pod_name = p["metadata"]["name"]

        def shape(m: object) -> list[float]:
            if m < LOST:  # type: ignore[operator]
                return [0.08, 0.35, 0.86, 0.97, 0.995, 1.0]
            return [0.01, 0.06, 0.31, 0.66, 0.89, 0.985]

        sc.metrics.histogram(
            "http_request_duration_seconds",
            {"namespace": NS, "pod": pod_name, "service": "statements-api"},
            BOUNDS,
            histogram_samples(times, lambda m: 11.0, shape, BOUNDS),
        )
        sc.metrics.counter(
            "http_requests",
            {"namespace": NS, "pod": pod_name, "service": "statements-api", "code": "200"},
            cumulative(times, lambda m: 11.0),
        )
    for name in ("ledger-pg-1", "ledger-pg-2"):
        series = [m for m in times if name == "ledger-pg-1" or m < LOST]
        sc.metrics.counter(
            "container_cpu_usage_seconds",
            {"namespace": NS, "pod": name, "container": "postgres"},
            cumulative(series, lambda m: 1.1 if m < LOST else 2.3, 4.1e5),
        )
        sc.metrics.gauge(
            "pg_replication_lag_seconds",
            {"namespace": NS, "pod": name, "service": sts},
            [(m, round(rng.uniform(0.0, 0.4), 2)) for m in series],
        )
    for node_name in NODES:
        sc.metrics.gauge(
            "kube_node_status_condition",
            {"node": node_name, "condition": "Ready", "status": "true"},
            [(m, 0 if node_name == DEAD and m >= UNKNOWN else 1) for m in times],
        )
        sc.metrics.gauge(
            "kube_node_status_condition",
            {"node": node_name, "condition": "Ready", "status": "unknown"},
            [(m, 1 if node_name == DEAD and m >= UNKNOWN else 0) for m in times],
        )
    sc.metrics.gauge(
        "kube_statefulset_status_replicas_ready",
        {"namespace": NS, "statefulset": sts},
        [(m, 3 if m < UNKNOWN else 2) for m in times],
    )
    return sc
