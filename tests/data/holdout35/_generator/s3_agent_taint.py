"""Brindle Analytics: a new dedicated node pool is tainted by its bootstrap a few seconds after
the nodes register. The log agent DaemonSet does not tolerate the taint: the pods it created on
those nodes in the gap stay Pending, its status counts them as misscheduled (desired = ready),
and the logs of the workload moved to the pool never reach the log store."""

from __future__ import annotations

import random
from datetime import timedelta

from .kube import (
    at,
    config_map,
    container,
    event,
    healthy_deployment,
    ms,
    namespace,
    node,
    pod,
    running,
    suffix,
    template,
    ts,
    uid,
)
from .write import Metrics, Scenario, counter, doc, gauge

NOW = at("2026-11-29T11:05:00Z")
ID = "clickstream-logs-missing"
MOVE = NOW - timedelta(hours=1, minutes=12)  # clickstream-ingest moved to the ingest pool
POOL_UP = MOVE - timedelta(minutes=14)
AGENT = "timberio/vector:0.42.0-distroless-libc"
DS_TOLERATIONS = [
    {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
]


def _daemonset(
    name: str, image: str, created, tolerations, status, *, port: int, mounts, volumes, resources
) -> dict:
    labels = {"app": name, "app.kubernetes.io/part-of": "observability"}
    tmpl = template(
        labels,
        [
            container(
                name,
                image,
                ports=[port],
                mounts=mounts,
                **resources,
                env=[
                    {
                        "name": "VECTOR_SELF_NODE_NAME",
                        "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}},
                    }
                ]
                if name == "vector-agent"
                else None,
            )
        ],
        volumes=volumes,
        tolerations=tolerations,
        service_account=name,
    )
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {
            "name": name,
            "namespace": "observability",
            "creationTimestamp": ts(created),
            "uid": uid(f"ds/{name}"),
            "generation": 7,
            "labels": labels,
            "annotations": {"deprecated.daemonset.template.generation": "7"},
        },
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": tmpl,
            "updateStrategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0},
            },
            "revisionHistoryLimit": 10,
        },
        "status": status,
    }


def build() -> Scenario:
    rng = random.Random(3)
    s = Scenario(
        id=ID,
        title="No logs from clickstream-ingest in Kibana",
        now=ts(NOW),
        report=(
            "clickstream-ingest logs are gone from kibana since ~9:50, last line I see is from "
            "before that. the service itself is up, kafka lag is fine and events land in the "
            "warehouse. is elasticsearch dropping stuff again or did someone change the index "
            "template? I can't debug the dedupe issue without logs\n"
        ),
        truth={
            "category": "unschedulable",
            "culprit": {"kind": "DaemonSet", "namespace": "observability", "name": "vector-agent"},
            "evidence": ["untolerated taint {dedicated: ingest}", "Pending", "numberMisscheduled"],
            "fix": (
                "Add a toleration for dedicated=ingest:NoSchedule (or operator: Exists) to "
                "the vector-agent DaemonSet so its pods run on the ingest nodes; the log "
                "store is fine."
            ),
        },
    )
    s.objects += [
        namespace(n, NOW - timedelta(days=d))
        for n, d in (("observability", 600), ("pipelines", 420), ("api", 600), ("default", 900))
    ]
    general = [
        (
            f"ip-172-31-{10 + k}-{41 + 9 * k}.us-east-2.compute.internal",
            f"172.31.{10 + k}.{41 + 9 * k}",
        )
        for k in range(6)
    ]
    ingest = [
        (
            f"ip-172-31-{40 + k}-{7 + 13 * k}.us-east-2.compute.internal",
            f"172.31.{40 + k}.{7 + 13 * k}",
        )
        for k in range(3)
    ]
    taint = {"key": "dedicated", "value": "ingest", "effect": "NoSchedule", "timeAdded": None}
    for k, (n, ip) in enumerate(general):
        s.objects.append(
            node(
                n,
                NOW - timedelta(days=23 + k),
                address=ip,
                cpu="8",
                memory="32Gi",
                labels={
                    "karpenter.sh/nodepool": "general",
                    "node.kubernetes.io/instance-type": "m7i.2xlarge",
                },
                heartbeat=NOW - timedelta(seconds=9 + k),
            )
        )
    for k, (n, ip) in enumerate(ingest):
        created = POOL_UP + timedelta(seconds=40 * k)
        nd = node(
            n,
            created,
            address=ip,
            cpu="16",
            memory="64Gi",
            labels={
                "karpenter.sh/nodepool": "ingest",
                "workload": "ingest",
                "node.kubernetes.io/instance-type": "c7i.4xlarge",
            },
            taints=[{k2: v for k2, v in taint.items() if k2 != "timeAdded"}],
            heartbeat=NOW - timedelta(seconds=5 + k),
        )
        nd["metadata"]["managedFields"] = [
            {
                "manager": "kubelet",
                "operation": "Update",
                "apiVersion": "v1",
                "time": ts(created),
                "fieldsType": "FieldsV1",
            },
            {
                "manager": "ingest-pool-bootstrap",
                "operation": "Update",
                "apiVersion": "v1",
                "time": ts(created + timedelta(seconds=6)),
                "fieldsType": "FieldsV1",
            },
        ]
        s.objects.append(nd)

    every = general + ingest
    vec_status = {
        "currentNumberScheduled": 6,
        "desiredNumberScheduled": 6,
        "numberAvailable": 6,
        "numberMisscheduled": 3,
        "numberReady": 6,
        "observedGeneration": 7,
        "updatedNumberScheduled": 6,
    }
    res = {"requests": {"cpu": "200m", "memory": "256Mi"}, "limits": {"memory": "512Mi"}}
    vec = _daemonset(
        "vector-agent",
        AGENT,
        NOW - timedelta(days=280),
        DS_TOLERATIONS,
        vec_status,
        port=9598,
        resources=res,
        mounts=[
            {"name": "varlog", "mountPath": "/var/log", "readOnly": True},
            {"name": "config", "mountPath": "/etc/vector", "readOnly": True},
        ],
        volumes=[
            {"name": "varlog", "hostPath": {"path": "/var/log"}},
            {"name": "config", "configMap": {"name": "vector-agent"}},
        ],
    )
    ne_status = {
        "currentNumberScheduled": 9,
        "desiredNumberScheduled": 9,
        "numberAvailable": 9,
        "numberMisscheduled": 0,
        "numberReady": 9,
        "observedGeneration": 3,
        "updatedNumberScheduled": 9,
    }
    ne = _daemonset(
        "node-exporter",
        "quay.io/prometheus/node-exporter:v1.8.2",
        NOW - timedelta(days=600),
        [{"operator": "Exists"}],
        ne_status,
        port=9100,
        resources={"requests": {"cpu": "50m"}},
        mounts=[{"name": "root", "mountPath": "/host", "readOnly": True}],
        volumes=[{"name": "root", "hostPath": {"path": "/"}}],
    )
    s.objects += [vec, ne]
    s.objects.append(
        config_map(
            "observability",
            "vector-agent",
            NOW - timedelta(days=280),
            {
                "vector.yaml": (
                    "data_dir: /vector-data-dir\n"
                    "sources:\n  kubernetes_logs:\n    type: kubernetes_logs\n"
                    '    exclude_paths_glob_patterns: ["**/kube-system_*/**"]\n'
                    "transforms:\n  ecs:\n    type: remap\n    inputs: [kubernetes_logs]\n"
                    "    source: |\n      .service.name = .kubernetes.pod_labels.app\n"
                    "sinks:\n  es_out:\n    type: elasticsearch\n    inputs: [ecs]\n"
                    '    endpoints: ["https://logs-es.observability:9200"]\n'
                    '    bulk:\n      index: "logs-%Y.%m.%d"\n'
                )
            },
        )
    )
    vec_pods: list[str] = []
    for k, (n, ip) in enumerate(every):
        for ds, image, name in (
            (vec, AGENT, "vector-agent"),
            (ne, "quay.io/prometheus/node-exporter:v1.8.2", "node-exporter"),
        ):
            pname = f"{name}-{suffix(name + n)}"
            affinity = {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {
                                    "matchFields": [
                                        {"key": "metadata.name", "operator": "In", "values": [n]}
                                    ]
                                }
                            ]
                        }
                    }
                }
            }
            if k < 6 or name == "node-exporter":
                started = (
                    (NOW - timedelta(days=4, hours=k))
                    if k < 6
                    else POOL_UP + timedelta(seconds=40 * (k - 6) + 30)
                )
                s.objects.append(
                    pod(
                        ds,
                        pname,
                        started - timedelta(seconds=5),
                        node_name=n,
                        ip=ip,
                        host_ip=ip,
                        statuses=[running(name, image, started)],
                        extra_spec=affinity,
                    )
                )
                if name == "vector-agent":
                    vec_pods.append(pname)
            else:
                created = POOL_UP + timedelta(seconds=40 * (k - 6) + 2)
                msg = (
                    "0/9 nodes are available: 1 node(s) had untolerated taint {dedicated: ingest}, "
                    "8 node(s) didn't match Pod's node affinity/selector. preemption: 0/9 nodes are "
                    "available: 9 Preemption is not helpful for scheduling."
                )
                pd = pod(
                    ds,
                    pname,
                    created,
                    node_name=None,
                    ip=None,
                    statuses=[],
                    phase="Pending",
                    ready=False,
                    scheduled=False,
                    unschedulable_message=msg,
                    extra_spec=affinity,
                )
                s.objects.append(pd)
                s.objects.append(
                    event(
                        "observability",
                        "Pod",
                        pname,
                        "FailedScheduling",
                        msg,
                        first=created + timedelta(seconds=1),
                        last=NOW - timedelta(minutes=2, seconds=13 * k),
                        count=31 + k,
                        type_="Warning",
                        source="default-scheduler",
                    )
                )
    # the workload on the new pool, and bystanders
    objs, ingest_pods = healthy_deployment(
        "pipelines",
        "clickstream-ingest",
        "123456789012.dkr.ecr.us-east-2.amazonaws.com/clickstream-ingest:5.3.1",
        replicas=3,
        created=NOW - timedelta(days=400),
        rolled=MOVE,
        revision=71,
        nodes=ingest,
        ip_prefix="172.31.40",
        requests={"cpu": "3", "memory": "8Gi"},
        limits={"memory": "10Gi"},
        tolerations=[
            {"key": "dedicated", "operator": "Equal", "value": "ingest", "effect": "NoSchedule"}
        ],
        node_selector={"workload": "ingest"},
    )
    s.objects += objs
    objs, enrich = healthy_deployment(
        "pipelines",
        "session-enricher",
        "123456789012.dkr.ecr.us-east-2.amazonaws.com/session-enricher:2.9.0",
        replicas=2,
        created=NOW - timedelta(days=300),
        rolled=NOW - timedelta(days=3),
        revision=33,
        nodes=general,
        ip_prefix="172.31.11",
    )
    s.objects += objs
    objs, api = healthy_deployment(
        "api",
        "reporting-api",
        "123456789012.dkr.ecr.us-east-2.amazonaws.com/reporting-api:8.14.2",
        replicas=3,
        created=NOW - timedelta(days=500),
        rolled=NOW - timedelta(hours=26),
        revision=301,
        nodes=general,
        ip_prefix="172.31.12",
    )
    s.objects += objs
    s.objects.append(
        event(
            "api",
            "Pod",
            api[1],
            "Unhealthy",
            'Readiness probe failed: Get "http://172.31.12.27:8080/healthz": dial tcp '
            "172.31.12.27:8080: connect: connection refused",
            first=NOW - timedelta(minutes=33),
            last=NOW - timedelta(minutes=33),
            type_="Warning",
            host=general[1][0],
        )
    )
    # log store: clickstream-ingest logs until it moved (old pods on general nodes), then none
    old = [f"clickstream-ingest-7d9c4b8f5c-{suffix('old' + str(k))}" for k in range(3)]
    t = NOW - timedelta(hours=3)
    k = 0
    while t < NOW:
        if t < MOVE + timedelta(minutes=2):
            s.docs.append(
                doc(
                    ms(t),
                    f"committed batch partition={k % 24} offset={8_812_000 + 400 * k} "
                    f"events=400 dedup_dropped={rng.randint(0, 9)}",
                    "INFO",
                    "clickstream-ingest",
                    "pipelines",
                    old[k % 3],
                    "clickstream-ingest",
                )
            )
        s.docs.append(
            doc(
                ms(t + timedelta(seconds=4)),
                f"enriched {rng.randint(180, 260)} sessions",
                "INFO",
                "session-enricher",
                "pipelines",
                enrich[k % 2],
                "session-enricher",
            )
        )
        if k % 3 == 0:
            s.docs.append(
                doc(
                    ms(t + timedelta(seconds=9)),
                    "GET /v3/reports/daily 200",
                    "INFO",
                    "reporting-api",
                    "api",
                    api[k % 3],
                    "reporting-api",
                    http__response__status_code=200,
                )
            )
        if k % 17 == 0:
            s.docs.append(
                doc(
                    ms(t + timedelta(seconds=2)),
                    "slow query: 2.4s select from fact_sessions",
                    "WARN",
                    "reporting-api",
                    "api",
                    api[(k + 1) % 3],
                    "reporting-api",
                )
            )
        t += timedelta(seconds=45)
        k += 1
    for p in ingest_pods:
        s.log(
            "pipelines",
            p,
            "clickstream-ingest",
            [
                f"{(NOW - timedelta(seconds=30 * j)).strftime('%Y-%m-%dT%H:%M:%S')}Z INFO  committed batch "
                f"partition={(j * 5) % 24} offset={8_990_000 + 400 * (40 - j)} events=400 "
                f"dedup_dropped={rng.randint(0, 9)}"
                for j in range(40, 0, -1)
            ],
        )
    for p in vec_pods[:2]:
        s.log(
            "observability",
            p,
            "vector-agent",
            [
                f'{(NOW - timedelta(minutes=40)).strftime("%Y-%m-%dT%H:%M:%S.%f")}Z  WARN sink{{component_kind="sink" '
                "component_id=es_out component_type=elasticsearch}: vector::sinks::util::retries: Retrying after "
                "response. reason=too many requests internal_log_rate_limit=true",
                f"{(NOW - timedelta(minutes=5)).strftime('%Y-%m-%dT%H:%M:%S.%f')}Z  INFO vector::topology::running: "
                "Running healthchecks.",
            ],
        )

    # metrics: the ingest keeps working; the agents on the pool ship nothing (they do not exist)
    m = Metrics()
    start = NOW - timedelta(hours=3)
    for p in vec_pods:
        counter(
            m,
            "vector_component_sent_events",
            "Events sent by a component.",
            {"namespace": "observability", "pod": p, "component_id": "es_out"},
            [
                (int((start + timedelta(minutes=2 * j)).timestamp()), rng.uniform(2000, 4000))
                for j in range(91)
            ],
        )
    for j in range(91):
        when = int((start + timedelta(minutes=2 * j)).timestamp())
        gauge(
            m,
            "kafka_consumergroup_lag",
            "Consumer group lag (kafka-exporter).",
            {"consumergroup": "clickstream-ingest", "topic": "clickstream.raw"},
            [(when, float(rng.randint(200, 1900)))],
        )
    s.metrics = m
    return s
