"""6. unschedulable: required one-per-zone anti-affinity, scaled past the number of zones."""

from __future__ import annotations

from datetime import timedelta

from . import _kit as k

SID = "ingest-zone-antiaffinity-cap"
NOW = "2026-12-12T07:55:00Z"
NS = "telemetry"
IMG = "registry.quillmark.io/telemetry/event-ingest:6.3.1"


def build() -> None:
    s = k.Scn(SID, NOW, 4406)
    now = s.now
    grid = k.grid(s.ago(hours=3), now)
    old = s.ago(days=500)
    big = dict(
        instance="m6i.2xlarge",
        cpu="8",
        alloc_cpu="7910m",
        memory="32408900Ki",
        alloc_mem="31372100Ki",
    )
    spec = [
        ("ip-10-80-5-18", "eu-west-1a", 14),
        ("ip-10-80-7-230", "eu-west-1a", 14),
        ("ip-10-80-12-91", "eu-west-1a", 6),
        ("ip-10-80-20-44", "eu-west-1b", 14),
        ("ip-10-80-27-160", "eu-west-1b", 9),
        ("ip-10-80-36-7", "eu-west-1c", 14),
        ("ip-10-80-44-213", "eu-west-1c", 3),
    ]
    cordon = s.ago(minutes=41, seconds=12)
    nodes = []
    for host, zone, age in spec:
        name = f"{host}.eu-west-1.compute.internal"
        n = k.node(
            name,
            zone,
            s.ago(days=age, hours=3),
            s.ago(seconds=s.rng.randint(2, 38)),
            unschedulable=(host == "ip-10-80-7-230"),
            pool="general-" + zone[-1],
            **big,
        )
        if host == "ip-10-80-7-230":
            n["spec"]["taints"][0]["timeAdded"] = k.ts(cordon)
        nodes.append(n)
    nn = [n["metadata"]["name"] for n in nodes]
    s.add(*(k.namespace(n, old) for n in (NS, "platform", "kube-system")))
    s.add(*nodes)

    scale = s.ago(minutes=23, seconds=30)
    c = k.container(
        "event-ingest",
        IMG,
        ports=[
            {"name": "http", "containerPort": 8080, "protocol": "TCP"},
            {"name": "metrics", "containerPort": 9090, "protocol": "TCP"},
        ],
        env=[
            {
                "name": "KAFKA_BROKERS",
                "value": "b-1.events.kafka.eu-west-1.amazonaws.com:9098,"
                "b-2.events.kafka.eu-west-1.amazonaws.com:9098",
            },
            {"name": "KAFKA_TOPIC", "value": "client-events"},
            {"name": "CONSUMER_GROUP", "value": "event-ingest"},
        ],
        resources=k.res("1500m", "3Gi", None, "4Gi"),
        readiness=k.http_probe("/ready", "http", period=10),
    )
    aff = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchLabels": {"app.kubernetes.io/name": "event-ingest"}},
                    "topologyKey": "topology.kubernetes.io/zone",
                }
            ]
        }
    }
    tm = k.template(
        {"app.kubernetes.io/name": "event-ingest", "app.kubernetes.io/part-of": "telemetry"},
        [c],
        affinity=aff,
        serviceAccountName="event-ingest",
        nodeSelector={"kubernetes.io/os": "linux"},
    )
    dep = k.deployment(
        "event-ingest",
        NS,
        s.ago(days=480),
        tm,
        6,
        12,
        {
            "replicas": 6,
            "updatedReplicas": 6,
            "readyReplicas": 3,
            "availableReplicas": 3,
            "unavailableReplicas": 3,
        },
        [],
        generation=19,
        labels={"app.kubernetes.io/name": "event-ingest", "app.kubernetes.io/managed-by": "Helm"},
        annotations={
            "meta.helm.sh/release-name": "event-ingest",
            "meta.helm.sh/release-namespace": NS,
        },
    )
    h = s.rs_hash()
    rs = k.replicaset(dep, h, s.ago(days=5, hours=2), 12, tm, 6, ready=3)
    rs["metadata"]["generation"] = 3
    rs_prev = k.replicaset(dep, s.rs_hash(), s.ago(days=33), 11, tm, 0)
    rs_prev["spec"]["template"]["spec"]["containers"][0]["image"] = (
        "registry.quillmark.io/telemetry/event-ingest:6.2.0"
    )
    dep["status"]["conditions"] = [
        {
            "type": "Progressing",
            "status": "True",
            "lastUpdateTime": k.ts(s.ago(days=5, hours=2) + timedelta(minutes=3)),
            "lastTransitionTime": k.ts(s.ago(days=5, hours=2)),
            "reason": "NewReplicaSetAvailable",
            "message": f'ReplicaSet "{rs["metadata"]["name"]}" has successfully progressed.',
        },
        {
            "type": "Available",
            "status": "False",
            "lastUpdateTime": k.ts(scale),
            "lastTransitionTime": k.ts(scale),
            "reason": "MinimumReplicasUnavailable",
            "message": "Deployment does not have minimum availability.",
        },
    ]
    s.add(dep, rs, rs_prev)

    running_nodes = [nn[0], nn[3], nn[5]]
    pods, pending = [], []
    for node_name in running_nodes:
        pn = f"event-ingest-{h}-{s.pod_suffix()}"
        cr = s.ago(days=5, hours=2) + timedelta(seconds=s.rng.randint(20, 200))
        p = k.pod(
            s,
            rs,
            pn,
            node_name,
            k.pod_ip(s, node_name),
            cr,
            [k.cs_running(c, cr + timedelta(seconds=4))],
            True,
        )
        pods.append(p)
        s.add(p)
    msg = (
        "0/7 nodes are available: 1 node(s) were unschedulable, 6 node(s) didn't match pod "
        "anti-affinity rules. "
        "preemption: 0/7 nodes are available: 1 Preemption is not helpful for scheduling, "
        "6 No preemption victims found for incoming pod."
    )
    for i in range(3):
        pn = f"event-ingest-{h}-{s.pod_suffix()}"
        cr = scale + timedelta(milliseconds=300 * i)
        p = k.pod(
            s, rs, pn, "", "", cr, [], False, phase="Pending", scheduled=False, pending_msg=msg
        )
        pending.append(p)
        s.add(p)

    # ---- neighbours
    _rd, _rrs, rpods = k.healthy_deployment(
        s,
        nn,
        "event-router",
        NS,
        "registry.quillmark.io/telemetry/event-router:2.0.7",
        3,
        s.ago(days=400),
        port=8080,
        req_cpu="500m",
        req_mem="512Mi",
        lim_mem="1Gi",
    )
    _sd, _srs, _spods = k.healthy_deployment(
        s,
        nn,
        "schema-registry",
        NS,
        "confluentinc/cp-schema-registry:7.6.1",
        2,
        s.ago(days=400),
        port=8081,
        req_mem="1Gi",
        lim_mem="2Gi",
        probe_path="/subjects",
    )
    _cmd, _cmrs, _cmpods = k.healthy_deployment(
        s,
        nn,
        "cert-manager",
        "platform",
        "quay.io/jetstack/cert-manager-controller:v1.14.5",
        1,
        s.ago(days=300),
        port=9402,
        probe_path="/livez",
        restarts=(1, k.terminated("Error", 1, s.ago(days=4), s.ago(days=2, hours=7), "cm")),
        pod_started=s.ago(days=4),
    )
    _cad, _cars, capods = k.healthy_deployment(
        s,
        nn,
        "cluster-autoscaler",
        "kube-system",
        "registry.k8s.io/autoscaling/cluster-autoscaler:v1.29.3",
        1,
        s.ago(days=500),
        port=8085,
        probe_path="/health-check",
        req_mem="600Mi",
        lim_mem="600Mi",
        cname="cluster-autoscaler",
    )
    s.add(
        k.service(
            "event-ingest",
            NS,
            s.ago(days=480),
            {"app.kubernetes.io/name": "event-ingest"},
            [{"name": "http", "port": 8080, "protocol": "TCP", "targetPort": "http"}],
            "172.20.14.77",
        )
    )
    s.add(
        k.endpoints(
            "event-ingest",
            NS,
            s.ago(days=480),
            pods,
            [{"name": "http", "port": 8080, "protocol": "TCP"}],
        )
    )
    s.add(
        k.configmap(
            "cluster-autoscaler-status",
            "kube-system",
            s.ago(days=500),
            {
                "status": (
                    "time: " + now.strftime("%Y-%m-%d %H:%M:%S") + ".412951318 +0000 UTC\n"
                    "autoscalerStatus: Running\nclusterWide:\n  health:\n    status: Healthy\n"
                    "    nodeCounts:\n      registered:\n        total: 7\n        ready: 7\n     "
                    "   notStarted: 0\n"
                    "      longUnregistered: 0\n      unregistered: 0\n"
                    "  scaleUp:\n    status: NoActivity\n  scaleDown:\n    status: NoCandidates\n"
                    "nodeGroups:\n- name: eks-general-a-58c6b1f2\n  health:\n    status: Healthy\n"
                    "    nodeCounts:\n      registered:\n        total: 3\n  scaleUp:\n    "
                    "status: NoActivity\n"
                    "- name: eks-general-b-38c6b1f2\n  health:\n    status: Healthy\n  scaleUp:\n "
                    "   status: NoActivity\n"
                    "- name: eks-general-c-a6c6b1f3\n  health:\n    status: Healthy\n  scaleUp:\n "
                    "   status: NoActivity\n"
                )
            },
            annotations={
                "cluster-autoscaler.kubernetes.io/last-updated": now.strftime("%Y-%m-%d %H:%M:%S")
                + ".412951318 +0000 UTC"
            },
        )
    )

    # ---- events
    evs = [
        k.event(
            NS,
            dep,
            "ScalingReplicaSet",
            f"Scaled up replica set {rs['metadata']['name']} to 6 from 3",
            scale,
            scale,
            1,
            "Normal",
            "deployment-controller",
        )
    ]
    for p in pending:
        pn = p["metadata"]["name"]
        evs.append(
            k.event(
                NS,
                rs,
                "SuccessfulCreate",
                f"Created pod: {pn}",
                scale,
                scale,
                1,
                "Normal",
                "replicaset-controller",
            )
        )
        evs.append(
            k.event(
                NS,
                p,
                "FailedScheduling",
                msg,
                scale + timedelta(seconds=1),
                s.ago(seconds=s.rng.randint(20, 90)),
                s.rng.randint(7, 11),
                "Warning",
                "default-scheduler",
            )
        )
        evs.append(
            k.event(
                NS,
                p,
                "NotTriggerScaleUp",
                "pod didn't trigger scale-up: 3 node(s) didn't match pod anti-affinity rules",
                scale + timedelta(seconds=12),
                s.ago(seconds=s.rng.randint(5, 60)),
                s.rng.randint(60, 120),
                "Normal",
                "cluster-autoscaler",
            )
        )
    cn = nodes[1]
    evs.append(
        k.event(
            "default",
            cn,
            "NodeNotSchedulable",
            f"Node {cn['metadata']['name']} status is now: NodeNotSchedulable",
            cordon,
            cordon,
            1,
            "Normal",
            "kubelet",
            cn["metadata"]["name"],
        )
    )
    s.add(k.namespace("default", old))
    s.add(*evs)

    # ---- logs
    cap = capods[0]["metadata"]["name"]
    t = scale + timedelta(seconds=9)
    while t < now:
        ms = f"{t.strftime('%m%d %H:%M:%S')}.{s.rng.randint(100000, 999999)}"
        for p in pending:
            s.log(
                t,
                "kube-system",
                cap,
                "cluster-autoscaler",
                "cluster-autoscaler",
                "info",
                f"I{ms}       1 klogx.go:87] Pod {NS}/{p['metadata']['name']} is unschedulable",
            )
        for ng, _zone in (
            ("eks-general-a-58c6b1f2", "a"),
            ("eks-general-b-38c6b1f2", "b"),
            ("eks-general-c-a6c6b1f3", "c"),
        ):
            s.log(
                t + timedelta(milliseconds=40),
                "kube-system",
                cap,
                "cluster-autoscaler",
                "cluster-autoscaler",
                "info",
                f"I{ms}       1 orchestrator.go:546] Pod {pending[0]['metadata']['name']} can't "
                f"be scheduled on {ng}, "
                "predicate checking error: node(s) didn't match pod anti-affinity rules; "
                "predicateName=InterPodAffinity; "
                "reasons: node(s) didn't match pod anti-affinity rules; debugInfo=",
            )
        s.log(
            t + timedelta(milliseconds=60),
            "kube-system",
            cap,
            "cluster-autoscaler",
            "cluster-autoscaler",
            "info",
            f"I{ms}       1 orchestrator.go:150] No expansion options",
        )
        t += timedelta(seconds=s.rng.randint(55, 75))
    lt0 = s.ago(hours=2)
    t = lt0
    while t < now:
        p = pods[s.rng.randint(0, 2)]
        lag = _lag(t, scale)
        s.log(
            t,
            NS,
            p["metadata"]["name"],
            "event-ingest",
            "event-ingest",
            "info",
            f"committed offsets group=event-ingest partitions=8 batch={s.rng.randint(4000, 9000)} "
            f"lag={lag}",
        )
        t += timedelta(seconds=s.rng.randint(25, 45))
    t = lt0
    while t < now:
        p = rpods[s.rng.randint(0, 2)]
        s.log(
            t,
            NS,
            p["metadata"]["name"],
            "event-router",
            "event-router",
            "warn",
            "schema cache miss for subject client-events-value, fetching from registry",
        )
        t += timedelta(minutes=s.rng.randint(7, 16))
    for p in pods:
        st = k.parse(p["status"]["startTime"])
        s.podlog(
            NS,
            p["metadata"]["name"],
            "event-ingest",
            [
                (
                    f"{k.ts(st + timedelta(seconds=5))} INFO event-ingest 6.3.1 starting, "
                    "consumer group event-ingest"
                ),
                f"{k.ts(st + timedelta(seconds=9))} INFO partitions assigned: 8 of 24",
            ]
            + [
                (
                    f"{k.ts(s.ago(minutes=m))} INFO committed offsets group=event-ingest "
                    f"partitions=8 lag={_lag(s.ago(minutes=m), scale)}"
                )
                for m in range(60, 0, -2)
            ],
        )

    # ---- metrics
    m = s.metrics
    m.series(
        "kube_deployment_spec_replicas",
        "gauge",
        "Number of desired pods for a deployment.",
        {"namespace": NS, "deployment": "event-ingest"},
        [(t, 3 if t < scale.timestamp() else 6) for t in grid],
    )
    m.series(
        "kube_deployment_status_replicas_available",
        "gauge",
        "The number of available replicas per deployment.",
        {"namespace": NS, "deployment": "event-ingest"},
        [(t, 3) for t in grid],
    )
    for p in pending:
        pn = p["metadata"]["name"]
        m.series(
            "kube_pod_status_phase",
            "gauge",
            "The pods current phase.",
            {"namespace": NS, "pod": pn, "phase": "Pending", "uid": p["metadata"]["uid"]},
            [(t, 1) for t in grid if t >= scale.timestamp() + 30],
        )
        m.series(
            "kube_pod_status_unschedulable",
            "gauge",
            "Describes the unschedulable status for the pod.",
            {"namespace": NS, "pod": pn, "uid": p["metadata"]["uid"]},
            [(t, 1) for t in grid if t >= scale.timestamp() + 30],
        )
    m.series(
        "kafka_consumergroup_lag_sum",
        "gauge",
        "Current approximate sum of lag of a ConsumerGroup across all partitions",
        {"namespace": NS, "consumergroup": "event-ingest", "topic": "client-events"},
        [(t, _lag(k.datetime.fromtimestamp(t, k.UTC), scale) * 3) for t in grid],
    )
    for n in nodes:
        name = n["metadata"]["name"]
        m.series(
            "kube_node_status_allocatable",
            "gauge",
            "The allocatable for different resources of a node.",
            {"node": name, "resource": "cpu", "unit": "core"},
            [(t, 7.91) for t in grid][::10],
        )
        m.series(
            "kube_node_spec_unschedulable",
            "gauge",
            "Whether a node can schedule new pods.",
            {"node": name},
            [(t, 1 if (name == nn[1] and t >= cordon.timestamp()) else 0) for t in grid][::2],
        )
    for p in pods:
        m.series(
            "container_cpu_usage_seconds",
            "counter",
            "Cumulative cpu time consumed by the container in core-seconds",
            {"namespace": NS, "pod": p["metadata"]["name"], "container": "event-ingest"},
            k.counter_points(
                grid,
                lambda t: 1.35,
                start=float(s.rng.randint(10**5, 2 * 10**5)),
                jitter=lambda: s.rng.uniform(0.92, 1.05),
            ),
        )

    s.write(
        "event-ingest scale-up stuck with Pending pods",
        "kafka lag on client-events keeps growing so I bumped event-ingest from 3 to 6 replicas "
        "20 min ago, but 3 pods "
        "are stuck Pending. someone cordoned ip-10-80-7-230 for kernel patching this morning, I "
        "think we're out of "
        "capacity because of that - can we uncordon it or add nodes?\n",
        {
            "category": "unschedulable",
            "culprit": {"kind": "Deployment", "namespace": NS, "name": "event-ingest"},
            "evidence": [
                "didn't match pod anti-affinity rules",
                "topology.kubernetes.io/zone",
                "requiredDuringSchedulingIgnoredDuringExecution",
            ],
            "fix": "event-ingest requires one pod per zone (required podAntiAffinity on "
            "topology.kubernetes.io/zone) and "
            "the cluster has three zones, so at most 3 replicas can ever schedule; uncordoning or "
            "adding nodes "
            "does not help. Relax it to preferredDuringScheduling or a topologySpreadConstraint "
            "(maxSkew 1), or "
            "use kubernetes.io/hostname as the topology key.",
        },
    )


def _lag(t, scale) -> int:
    base = 180000
    growth = max(0.0, (t - (scale - timedelta(hours=1, minutes=30))).total_seconds()) * 95
    return int(base + growth)
