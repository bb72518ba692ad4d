"""Pinecrest Telemetry: the fluent-bit sidecar (log-shipper) in event-collector's pods buffers
log bursts in memory with no Mem_Buf_Limit and is OOM-killed at its 48Mi limit; the app
container never restarts, ingestion is fine, but the log store has holes and the restart
alerts keep firing."""

from __future__ import annotations

from datetime import datetime, timedelta

from .common import (
    Revision,
    Scenario,
    configmap,
    container,
    cumulative,
    deployment,
    endpoints,
    event,
    namespace,
    node,
    parse,
    pods_for,
    running,
    service,
    simple_service,
    steps,
    terminated,
    ts,
    ts_ms,
)

NOW = parse("2026-11-30T10:50:00Z")
NS = "ingest"
NODES = [f"k8s-prod-fra1-node-{s}" for s in ("a8f2k", "c41mz", "h09qd", "r7t3x")]
LIMIT = 48 * 1024**2
FLUENT = "cr.fluentbit.io/fluent/fluent-bit:3.1.9"
FIRST_BURST = parse("2026-11-30T07:05:00Z")
EVERY = timedelta(minutes=24)
BURST = timedelta(minutes=4)
FLUENT_CONF = """[SERVICE]
    Flush         5
    Log_Level     info
    Parsers_File  parsers.conf
    HTTP_Server   On

[INPUT]
    Name              tail
    Path              /var/log/app/*.log
    Parser            json
    Tag               app.*
    Refresh_Interval  5
    Buffer_Max_Size   5MB

[OUTPUT]
    Name            es
    Match           app.*
    Host            logs-es-http.logging.svc
    Port            9200
    Suppress_Type_Name On
    Logstash_Format On
    Logstash_Prefix event-collector
"""


def bursts() -> list[datetime]:
    out, moment = [], FIRST_BURST
    while moment < NOW:
        out.append(moment)
        moment += EVERY
    return out


def build() -> Scenario:
    sc = Scenario(
        id="ingest-collector-missing-logs",
        title="Restart alerts for event-collector and holes in its logs; ingestion looks fine",
        now=NOW,
        report="""
alertmanager keeps firing KubePodRestarting for event-collector in ingest all morning, but
the ingest dashboards look normal (events/s as usual, no 5xx). on top of that kibana has holes
in event-collector's logs, whole minutes missing. is the ES cluster dropping documents?
""",
        truth={
            "category": "oom_killed",
            "culprit": {"kind": "Deployment", "namespace": NS, "name": "event-collector"},
            "evidence": ["OOMKilled", "log-shipper", "48Mi", "exit_code: 137"],
            "fix": "Give event-collector's log-shipper sidecar (fluent-bit) a bounded buffer "
            "(Mem_Buf_Limit on the tail input, or storage.type filesystem) and a "
            "higher memory limit than 48Mi; it is OOM-killed during the upload bursts "
            "and the lines it buffered are lost. The collector container and "
            "Elasticsearch are fine.",
        },
    )
    created = NOW - timedelta(days=530)
    for ns in (NS, "logging"):
        sc.add(namespace(ns, created))
    for i, name in enumerate(NODES):
        sc.add(
            node(
                name,
                NOW - timedelta(days=5, hours=4 * i),
                NOW,
                cpu="8",
                memory="32Gi",
                region="fra1",
                zone="",
                instance="s-8vcpu-32gb",
                kubelet="v1.31.1",
            )
        )
    rng = sc.rng
    name = "event-collector"
    app = container(
        "collector",
        "registry.pinecrest.dev/ingest/event-collector:3.9.2",
        port=8080,
        cpu="500m",
        memory="384Mi",
        memory_limit="512Mi",
        env=[
            {"name": "LOG_FILE", "value": "/var/log/app/collector.log"},
            {"name": "KAFKA_BROKERS", "value": "kafka-0.kafka.ingest.svc:9092"},
        ],
        mounts=[{"name": "app-logs", "mountPath": "/var/log/app"}],
        readiness="/readyz",
        liveness="/livez",
    )
    shipper = container(
        "log-shipper",
        FLUENT,
        cpu="20m",
        memory="48Mi",
        readiness=None,
        mounts=[
            {"name": "app-logs", "mountPath": "/var/log/app", "readOnly": True},
            {"name": "fluent-bit-config", "mountPath": "/fluent-bit/etc/"},
        ],
    )
    volumes = [
        {"name": "app-logs", "emptyDir": {"sizeLimit": "1Gi"}},
        {"name": "fluent-bit-config", "configMap": {"name": "event-collector-fluent-bit"}},
    ]
    rolled = NOW - timedelta(days=2, hours=21)
    old = Revision(
        38,
        [{**app, "image": app["image"].replace("3.9.2", "3.9.1")}, shipper],
        rolled - timedelta(days=8),
        0,
        volumes=volumes,
    )
    rev = Revision(39, [app, shipper], rolled, 4, volumes=volumes)
    sc.add(deployment(NS, name, created, [old, rev], 4))
    sc.add(
        configmap(
            NS,
            "event-collector-fluent-bit",
            created + timedelta(days=200),
            {
                "fluent-bit.conf": FLUENT_CONF,
                "parsers.conf": "[PARSER]\n    Name   json\n    Format json\n"
                "    Time_Key ts\n    Time_Format %Y-%m-%dT%H:%M:%S.%LZ\n",
            },
        )
    )
    # which bursts kill which pod's shipper: most bursts kill 2-4 shippers
    kills: dict[int, list[datetime]] = {i: [] for i in range(4)}
    for b in bursts():
        for i in range(4):
            if rng.random() < 0.72:
                kills[i].append(b + timedelta(seconds=rng.randint(70, 200)))
    last = {i: max(k) for i, k in kills.items()}

    def statuses(i: int, started: datetime) -> list[dict[str, object]]:
        killed = last[i]
        return [
            running(started),
            running(
                killed + timedelta(seconds=12),
                restarts=len(kills[i]),
                last=terminated(
                    "OOMKilled",
                    137,
                    kills[i][-2] + timedelta(seconds=12) if len(kills[i]) > 1 else started,
                    killed,
                ),
            ),
        ]

    pods = pods_for(sc, NS, name, rev, NODES, rolled + timedelta(seconds=4), statuses=statuses)
    sc.add(service(NS, name, created, 8080), endpoints(NS, name, created, pods, 8080))
    for i, p in enumerate(pods):
        pod_name = p["metadata"]["name"]
        host = p["spec"]["nodeName"]
        recent = [k for k in kills[i] if k > NOW - timedelta(hours=1)]
        if recent:
            sc.add(
                event(
                    NS,
                    "Pod",
                    pod_name,
                    "Pulled",
                    f'Container image "{FLUENT}" already present on machine',
                    kills[i][0] + timedelta(seconds=11),
                    recent[-1] + timedelta(seconds=11),
                    count=len(kills[i]),
                    host=host,
                ),
                event(
                    NS,
                    "Pod",
                    pod_name,
                    "Created",
                    "Created container log-shipper",
                    kills[i][0] + timedelta(seconds=11),
                    recent[-1] + timedelta(seconds=11),
                    count=len(kills[i]) + 1,
                    host=host,
                ),
                event(
                    NS,
                    "Pod",
                    pod_name,
                    "Started",
                    "Started container log-shipper",
                    kills[i][0] + timedelta(seconds=12),
                    recent[-1] + timedelta(seconds=12),
                    count=len(kills[i]) + 1,
                    host=host,
                ),
            )
            if len(kills[i]) > 5:
                sc.add(
                    event(
                        NS,
                        "Pod",
                        pod_name,
                        "BackOff",
                        f"Back-off restarting failed container log-shipper in pod "
                        f"{pod_name}_{NS}({p['metadata']['uid']})",
                        recent[0] + timedelta(seconds=1),
                        recent[-1] + timedelta(seconds=2),
                        count=len(recent) * 2,
                        type_="Warning",
                        host=host,
                    )
                )
    # bystanders
    _, router = simple_service(
        sc,
        NS,
        "ingest-router",
        "registry.pinecrest.dev/ingest/ingest-router:1.22.0",
        replicas=3,
        nodes=NODES,
        created=created,
        rolled=NOW - timedelta(days=4, hours=2),
        number=64,
        memory="256Mi",
    )
    _, schema = simple_service(
        sc,
        NS,
        "schema-registry",
        "confluentinc/cp-schema-registry:7.7.1",
        replicas=2,
        nodes=NODES,
        created=created,
        rolled=NOW - timedelta(days=6),
        port=8081,
        number=11,
        memory="1Gi",
        readiness="/subjects",
    )
    _, es = simple_service(
        sc,
        "logging",
        "logs-es-http",
        "docker.elastic.co/elasticsearch/elasticsearch:8.15.3",
        replicas=3,
        nodes=NODES,
        created=created,
        rolled=NOW - timedelta(days=6, hours=5),
        port=9200,
        number=19,
        memory="4Gi",
        readiness=None,
    )
    sc.add(
        event(
            NS,
            "Pod",
            schema[1]["metadata"]["name"],
            "Unhealthy",
            'Readiness probe failed: Get "http://10.108.2.44:8081/subjects": dial tcp '
            "10.108.2.44:8081: connect: connection refused",
            NOW - timedelta(minutes=46),
            type_="Warning",
            host=schema[1]["spec"]["nodeName"],
        )
    )

    # --- logs: the app writes to a file; only its start-up goes to stdout
    for i, p in enumerate(pods):
        pod_name = p["metadata"]["name"]
        began = parse(p["status"]["startTime"]) + timedelta(seconds=1)
        sc.log(
            NS,
            pod_name,
            "collector",
            f"{ts(began)} collector 3.9.2 starting; logging to /var/log/app/collector.log",
        )
        # shipper: current instance start-up, previous instance lines until it was killed
        k = kills[i]
        for previous, start_at, end_at in (
            (False, last[i] + timedelta(seconds=12), NOW),
            (True, (k[-2] + timedelta(seconds=12)) if len(k) > 1 else began, last[i]),
        ):
            stamp = start_at.strftime("[%Y/%m/%d %H:%M:%S]")
            for line in (
                "Fluent Bit v3.1.9",
                "* Copyright (C) 2015-2024 The Fluent Bit Authors",
                f"{stamp} [ info] [fluent bit] version=3.1.9, commit=431fa79ae2, pid=1",
                f"{stamp} [ info] [storage] ver=1.5.2, type=memory, sync=normal, "
                "checksum=off, max_chunks_up=128",
                f"{stamp} [ info] [input:tail:tail.0] initializing",
                f"{stamp} [ info] [input:tail:tail.0] storage_strategy='memory' (memory only)",
                f"{stamp} [ info] [output:es:es.0] worker #0 started",
                f"{stamp} [ info] [http_server] listen iface=0.0.0.0 tcp_port=2020",
                f"{stamp} [ info] [sp] stream processor started",
                f"{stamp} [ info] [input:tail:tail.0] inotify_fs_add(): inode=1835012 "
                "watch_fd=1 name=/var/log/app/collector.log",
            ):
                sc.log(NS, pod_name, "log-shipper", line, previous=previous)
            if previous:
                t = max(start_at, end_at - timedelta(minutes=3))
                while t < end_at - timedelta(seconds=5):
                    t += timedelta(seconds=rng.randint(8, 20))
                    st = t.strftime("[%Y/%m/%d %H:%M:%S]")
                    sc.log(
                        NS,
                        pod_name,
                        "log-shipper",
                        f"{st} [ warn] [engine] failed to flush "
                        f"chunk '1-{int(t.timestamp())}.{rng.randint(100000000, 999999999)}"
                        f".flb', retry in {rng.randint(6, 12)} seconds: task_id="
                        f"{rng.randint(0, 40)}, input=tail.0 > output=es.0 (out_id=0)",
                        previous=True,
                    )
    # what reached the log store: the collector's lines, except while a shipper was down
    # (lines buffered in memory die with it; lines written while it restarts are skipped by
    # tail's offset on a rotated file)
    start = NOW - timedelta(hours=4)
    for i, p in enumerate(pods):
        pod_name = p["metadata"]["name"]
        holes = [
            (k - timedelta(seconds=rng.randint(40, 90)), k + timedelta(seconds=12))
            for k in kills[i]
        ]
        t = start
        while t < NOW:
            in_burst = any(b <= t < b + BURST for b in bursts())
            t += timedelta(seconds=rng.uniform(0.5, 2.0) if in_burst else rng.uniform(4, 12))
            if t >= NOW:
                break
            if any(a <= t < b for a, b in holes):
                continue
            batch = rng.randint(10, 500) * (20 if in_burst else 1)
            tenant = rng.choice(["acme-rail", "northwind", "globex", "initech", "umbrella"])
            if in_burst and rng.random() < 0.3:
                msg = f"upload accepted tenant={tenant} objects={batch} source=bulk"
            else:
                msg = (
                    f"batch committed tenant={tenant} events={batch} partition={rng.randint(0, 23)}"
                )
            sc.doc(t, NS, pod_name, "collector", name, "info", msg)
    for p in router:
        pod_name = p["metadata"]["name"]
        t = start
        while t < NOW:
            t += timedelta(seconds=rng.uniform(20, 60))
            if t >= NOW:
                break
            msg = f"routed {rng.randint(1000, 9000)} events to event-collector in last interval"
            sc.log(NS, pod_name, "ingest-router", f"{ts_ms(t)} INFO {msg}")
            sc.doc(t, NS, pod_name, "ingest-router", "ingest-router", "info", msg)
    for p in es:
        pod_name = p["metadata"]["name"]
        t = start
        while t < NOW:
            t += timedelta(minutes=rng.uniform(6, 14))
            if t >= NOW:
                break
            line = (
                f'{{"@timestamp":"{ts_ms(t)}","log.level":"INFO","message":"[event-'
                f'collector-2026.11.30] update_mapping [_doc]","ecs.version":"1.2.0",'
                f'"service.name":"ES_ECS","log.logger":"org.elasticsearch.cluster.metadata.'
                f'MetadataMappingService"}}'
            )
            sc.log("logging", pod_name, "logs-es-http", line)

    # --- metrics
    times = steps(NOW - timedelta(hours=4), NOW)
    for i, p in enumerate(pods):
        pod_name = p["metadata"]["name"]
        lab = {"namespace": NS, "pod": pod_name}

        def shipper_mem(m: datetime, i: int = i) -> float | None:
            for k in kills[i]:
                if k <= m < k + timedelta(seconds=12):
                    return None  # not running
            burst = next((b for b in bursts() if b <= m < b + BURST + timedelta(minutes=2)), None)
            if burst is None:
                return 17.5e6 + rng.uniform(-1e6, 1.5e6)
            kill = next((k for k in kills[i] if burst <= k < burst + BURST), None)
            if kill and m < kill:
                frac = (m - burst) / (kill - burst)
                return min(LIMIT * (0.4 + 0.6 * frac), LIMIT * 0.995)
            return min(LIMIT * 0.82, 17.5e6 + (m - burst).total_seconds() * 0.12e6)

        mem = [(m, v) for m in times if (v := shipper_mem(m)) is not None]
        sc.metrics.gauge(
            "container_memory_working_set_bytes", {**lab, "container": "log-shipper"}, mem
        )
        sc.metrics.gauge(
            "container_memory_working_set_bytes",
            {**lab, "container": "collector"},
            [
                (
                    m,
                    151e6
                    + (25e6 if any(b <= m < b + BURST for b in bursts()) else 0)
                    + rng.uniform(-4e6, 4e6),
                )
                for m in times
            ],
        )
        sc.metrics.gauge(
            "kube_pod_container_resource_limits",
            {**lab, "container": "log-shipper", "resource": "memory", "unit": "byte"},
            [(m, LIMIT) for m in times[::5]],
        )
        sc.metrics.gauge(
            "kube_pod_container_resource_limits",
            {**lab, "container": "collector", "resource": "memory", "unit": "byte"},
            [(m, 512 * 1024**2) for m in times[::5]],
        )
        sc.metrics.counter(
            "kube_pod_container_status_restarts",
            {**lab, "container": "log-shipper"},
            [(m, sum(1 for k in kills[i] if k + timedelta(seconds=12) <= m)) for m in times],
        )
        sc.metrics.counter(
            "kube_pod_container_status_restarts",
            {**lab, "container": "collector"},
            [(m, 0) for m in times],
        )
        sc.metrics.gauge(
            "kube_pod_container_status_last_terminated_reason",
            {**lab, "container": "log-shipper", "reason": "OOMKilled"},
            [(m, 1) for m in times if kills[i] and m >= kills[i][0]],
        )
        sc.metrics.counter(
            "container_cpu_usage_seconds",
            {**lab, "container": "collector"},
            cumulative(
                times, lambda m: 0.22 + (0.25 if any(b <= m < b + BURST for b in bursts()) else 0)
            ),
        )
        sc.metrics.counter(
            "http_requests",
            {**lab, "service": name, "code": "202"},
            cumulative(
                times, lambda m: 38.0 + (60.0 if any(b <= m < b + BURST for b in bursts()) else 0)
            ),
        )
    return sc
