# ruff: noqa: E501  (verbatim log lines and Kubernetes messages are kept whole)
"""Scenario 4: order-history's liveness probe (timeout 1 s) calls /actuator/health, which
includes the database check. At the evening peak the check takes 1-2 s, the kubelet
kills busy pods, the survivors take their traffic and slow down further.

orders-pg is healthy (no restarts, no errors), only slower under the peak load; the HPA
is well under its maximum.
"""

from __future__ import annotations

from .k8s import (
    Clock,
    Obj,
    container,
    cstatus,
    deployment,
    endpoints,
    event,
    hpa,
    http_probe,
    meta,
    namespace,
    node,
    pod,
    pod_hash,
    replicaset,
    running,
    service,
    suffix,
    template,
    terminated,
)
from .out import Metrics, ecs, healthy_app, write

SID = "orders-history-evening"
NOW = "2026-11-25T19:50:00Z"
NS = "orders"
APP = "order-history"
PEAK = 85  # minutes ago the evening peak began


def _ts(c: Clock, m: float) -> str:
    return c.dt(m).strftime("%Y-%m-%dT%H:%M:%S.") + f"{int(m * 7919) % 1000:03d}Z"


def build() -> None:
    c = Clock(NOW)
    nodes = [
        f"ip-172-22-{a}-{b}.ec2.internal"
        for a, b in ((10, 31), (10, 77), (11, 140), (11, 9), (12, 200), (12, 55), (10, 180))
    ]
    zones = ["us-east-1a", "us-east-1a", "us-east-1b", "us-east-1b", "us-east-1c", "us-east-1c", "us-east-1a"]
    objs: list[Obj] = [namespace(n, c.at(60 * 24 * 600)) for n in (NS, "orders-db")]
    objs += [
        node(c, n, z, "apps-m6i", region="us-east-1", instance="m6i.2xlarge", cpu="7910m", memory="31482924Ki")
        for n, z in zip(nodes, zones, strict=False)
    ]
    img = f"123456789012.dkr.ecr.us-east-1.amazonaws.com/brightcart/{APP}:4.6.2"
    env = [
        {"name": "SPRING_PROFILES_ACTIVE", "value": "prod"},
        {"name": "SPRING_DATASOURCE_URL", "value": "jdbc:postgresql://orders-pg.orders-db.svc:5432/orders"},
        {"name": "SPRING_DATASOURCE_HIKARI_MAXIMUM_POOL_SIZE", "value": "20"},
        {"name": "JAVA_TOOL_OPTIONS", "value": "-XX:MaxRAMPercentage=70"},
    ]
    tmpl = template(
        {"app": APP, "team": "orders"},
        [
            container(
                APP,
                img,
                port=8080,
                cpu="1",
                memory="1536Mi",
                mem_limit="2Gi",
                env=env,
                readiness=http_probe("/actuator/health/readiness", delay=20, period=5, timeout=1, failures=3),
                liveness=http_probe("/actuator/health", delay=45, period=10, timeout=1, failures=3),
            )
        ],
    )
    h = pod_hash(APP, 31)
    replicas = 8
    objs.append(
        deployment(
            c,
            NS,
            APP,
            tmpl,
            replicas=replicas,
            revision=31,
            created_days=500,
            ready=6,
            updated=8,
            available=6,
            unavailable=2,
            progressing=(
                "True",
                "NewReplicaSetAvailable",
                f'ReplicaSet "{APP}-{h}" has successfully progressed.',
                60 * 24 * 5,
            ),
        )
    )
    objs.append(replicaset(c, NS, APP, tmpl, revision=31, created_min=60 * 24 * 5 + 10, replicas=replicas, ready=6))
    objs.append(hpa(c, NS, APP, min_r=6, max_r=20, current=8, desired=8, cpu_target=65, cpu_now=61, last_scale_min=71))
    pods, ready, not_ready, restarts_at = [], [], [], {}  # type: ignore[var-annotated]
    pod_logs: dict[tuple[str, str, str, bool], list[str]] = {}
    for i in range(replicas):
        name, nd, ip = (f"{APP}-{h}-{suffix('p' + str(i))}", nodes[i % 7], f"172.22.{10 + i % 3}.{100 + i * 13}")
        created = 60 * 24 * 5 + 9 - i if i < 6 else 71 - (i - 6) * 0.1
        kills = sorted(
            (
                k
                for k in (PEAK - 14 - i * 3.1, PEAK - 33 - i * 2.3, PEAK - 51 - i * 1.7, PEAK - 70 - i * 0.9)
                if 1.0 < k < min(created, PEAK - 5)
            ),
            reverse=True,
        )[: 4 if i % 3 else 2]
        if i in (2, 5):  # killed again a minute ago, not Ready yet
            kills.append(0.9 + i * 0.05)
        restarts_at[name] = kills
        is_ready = i not in (2, 5)
        cur_started = kills[-1] - 0.02 if kills else created - 0.3
        prev_start = (kills[-2] - 0.02 if len(kills) > 1 else created - 0.3) if kills else None
        last = terminated(c, "Error", 143, prev_start, kills[-1]) if kills and prev_start else None
        objs.append(
            pod(
                c,
                NS,
                name,
                ("ReplicaSet", f"{APP}-{h}"),
                tmpl["metadata"]["labels"],
                tmpl["spec"],
                node_name=nd,
                ip=ip,
                started_min=created,
                hash_label=h,
                ready=is_ready,
                statuses=[
                    cstatus(c, APP, img, ready=is_ready, state=running(cur_started, c), restarts=len(kills), last=last)
                ],
            )
        )
        (ready if is_ready else not_ready).append((ip, name, nd))
        pods.append((name, nd, ip, kills))
        if kills:
            fails = [k + 0.34 for k in kills]
            objs.append(
                event(
                    c,
                    NS,
                    "Pod",
                    name,
                    "Unhealthy",
                    f'Liveness probe failed: Get "http://{ip}:8080/actuator/health": context deadline '
                    "exceeded (Client.Timeout exceeded while awaiting headers)",
                    first_min=max(fails) + 0.4,
                    last_min=min(fails) - 0.1,
                    count=len(fails) * 3 + 2,
                    type_="Warning",
                    host=nd,
                    field_path=f"spec.containers{{{APP}}}",
                )
            )
            objs.append(
                event(
                    c,
                    NS,
                    "Pod",
                    name,
                    "Killing",
                    f"Container {APP} failed liveness probe, will be restarted",
                    first_min=max(fails),
                    last_min=min(fails) - 0.15,
                    count=len(fails),
                    host=nd,
                    field_path=f"spec.containers{{{APP}}}",
                )
            )
            objs.append(
                event(
                    c,
                    NS,
                    "Pod",
                    name,
                    "Unhealthy",
                    f'Readiness probe failed: Get "http://{ip}:8080/actuator/health/readiness": context '
                    "deadline exceeded (Client.Timeout exceeded while awaiting headers)",
                    first_min=max(fails) + 0.6,
                    last_min=min(fails) - 0.05,
                    count=len(fails) * 4 + 5,
                    type_="Warning",
                    host=nd,
                    field_path=f"spec.containers{{{APP}}}",
                )
            )
        pod_logs[(NS, name, APP, False)] = _spring_log(c, cur_started, name, slow=True)
        if kills and prev_start:
            pod_logs[(NS, name, APP, True)] = _spring_log(c, prev_start, name, slow=True, until=kills[-1])
    objs.append(service(c, NS, APP, {"app": APP}, port=80, target="http", cluster_ip="10.100.44.8"))
    objs.append(endpoints(c, NS, APP, ready, not_ready, 8080))
    objs.append(
        event(
            c,
            NS,
            "HorizontalPodAutoscaler",
            APP,
            "SuccessfulRescale",
            "New size: 8; reason: cpu resource utilization (percentage of request) above target",
            first_min=71,
            last_min=58,
            count=1,
            component="horizontal-pod-autoscaler",
            api_version="autoscaling/v2",
        )
    )
    objs += healthy_app(
        c,
        NS,
        "order-api",
        "123456789012.dkr.ecr.us-east-1.amazonaws.com/brightcart/order-api:9.1.0",
        replicas=6,
        nodes=nodes,
        ip_prefix="172.22.11",
        cluster_ip="10.100.44.2",
        cpu="500m",
        memory="1Gi",
        mem_limit="1536Mi",
        probe_path="/actuator/health/liveness",
    )
    objs += healthy_app(
        c,
        NS,
        "basket-pricing",
        "123456789012.dkr.ecr.us-east-1.amazonaws.com/brightcart/basket-pricing:2.0.7",
        replicas=4,
        nodes=nodes[2:],
        ip_prefix="172.22.12",
        cluster_ip="10.100.44.30",
    )
    objs += _database(c, nodes)

    logs = []
    for m10 in range(1200, 0, -1):
        m = m10 / 10
        peak = m < PEAK
        name, nd, ip, kills = pods[m10 % replicas]
        code = 200 if (not peak or m10 % 11) else 503
        dur = 0.09 if not peak else 0.6 + (m10 % 7) * 0.2
        logs.append(
            ecs(
                c,
                m,
                f"GET /v1/customers/{m10 * 31 % 90000}/orders?page=1 {code} {int(dur * 1000)}ms",
                "INFO" if code == 200 else "WARN",
                APP,
                NS,
                name,
                APP,
                **{"http.response.status_code": code, "event.duration": int(dur * 1e9)},
            )
        )
        if peak and m10 % 4 == 0:
            logs.append(
                ecs(
                    c,
                    m - 0.01,
                    f"Health contributor db (db) took {1100 + (m10 * 37) % 900}ms to respond",
                    "WARN",
                    APP,
                    NS,
                    pods[(m10 // 4) % replicas][0],
                    APP,
                    **{"log.logger": "o.s.b.a.health.HealthEndpointSupport"},
                )
            )
        for k in kills:
            if k <= m < k + 0.1:
                logs.append(
                    ecs(
                        c,
                        k + 0.01,
                        "Commencing graceful shutdown. Waiting for active requests to complete",
                        "INFO",
                        APP,
                        NS,
                        name,
                        APP,
                        **{"log.logger": "o.s.b.w.e.tomcat.GracefulShutdown"},
                    )
                )
                logs.append(
                    ecs(
                        c,
                        k - 0.42,
                        "Started OrderHistoryApplication in 24.817 seconds (process running for 26.02)",
                        "INFO",
                        APP,
                        NS,
                        name,
                        APP,
                    )
                )
        if m10 % 25 == 0:
            logs.append(
                ecs(
                    c,
                    m,
                    f"duration: {40 if not peak else 180 + (m10 * 13) % 400}.{m10 % 1000:03d} ms  execute "
                    "S_3: SELECT o.id, o.status, o.total FROM orders o WHERE o.customer_id = $1 ORDER BY "
                    "o.created_at DESC LIMIT 20",
                    "LOG",
                    "orders-pg",
                    "orders-db",
                    "orders-pg-0",
                    "postgres",
                )
            )
    metrics = _metrics(c, pods)
    scenario = {
        "id": SID,
        "title": "Order history timing out at the evening peak",
        "now": NOW,
        "report": """
            order history page is timing out again tonight, same as yesterday around this time. pods keep
            restarting. my bet is orders-pg can't keep up with the evening peak - can someone look at the db?
        """.replace("            ", ""),
        "truth": {
            "category": "probe_failure",
            "culprit": {"kind": "Deployment", "namespace": NS, "name": APP},
            "evidence": [
                "Liveness probe failed",
                "context deadline exceeded",
                "failed liveness probe, will be restarted",
                "Health contributor db (db) took",
            ],
            "fix": "Point the liveness probe at /actuator/health/liveness (no database check) with a "
            "realistic timeout (3-5 s); keep the database out of liveness.",
        },
    }
    write(SID, scenario, objs, pod_logs=pod_logs, logs=logs, metrics=metrics)


def _spring_log(c: Clock, start: float, pod_name: str, *, slow: bool, until: float = 0.0) -> list[str]:
    lines = [
        f"{_ts(c, start)}  INFO 1 --- [order-history] [main] c.b.o.OrderHistoryApplication : Starting "
        f"OrderHistoryApplication v4.6.2 using Java 21.0.5 with PID 1",
        f"{_ts(c, start - 0.2)}  INFO 1 --- [order-history] [main] com.zaxxer.hikari.HikariDataSource : "
        "HikariPool-1 - Start completed.",
        f"{_ts(c, start - 0.4)}  INFO 1 --- [order-history] [main] o.s.b.w.embedded.tomcat.TomcatWebServer : "
        "Tomcat started on port 8080 (http) with context path '/'",
        f"{_ts(c, start - 0.41)}  INFO 1 --- [order-history] [main] c.b.o.OrderHistoryApplication : Started "
        "OrderHistoryApplication in 24.817 seconds (process running for 26.02)",
    ]
    t = start - 0.5
    k = 0
    while t > until + 0.1:
        if slow and t < PEAK:
            lines.append(
                f"{_ts(c, t)}  WARN 1 --- [order-history] [nio-8080-exec-{k % 40 + 1}] "
                f"o.s.b.a.health.HealthEndpointSupport : Health contributor db (db) took "
                f"{1050 + (k * 53) % 950}ms to respond"
            )
        else:
            lines.append(
                f"{_ts(c, t)}  INFO 1 --- [order-history] [scheduling-1] c.b.o.cache.RecentOrdersCache : "
                f"refreshed 412 hot customers in {180 + k % 60}ms"
            )
        t -= 0.7
        k += 1
    if until:
        lines += [
            f"{_ts(c, until + 0.02)}  INFO 1 --- [order-history] [ionShutdownHook] "
            "o.s.b.w.e.tomcat.GracefulShutdown : Commencing graceful shutdown. Waiting for active requests "
            "to complete",
            f"{_ts(c, until + 0.01)}  INFO 1 --- [order-history] [tomcat-shutdown] "
            "o.s.b.w.e.tomcat.GracefulShutdown : Graceful shutdown complete",
            f"{_ts(c, until)}  INFO 1 --- [order-history] [ionShutdownHook] com.zaxxer.hikari.HikariDataSource "
            ": HikariPool-1 - Shutdown completed.",
        ]
    return lines[-60:] if len(lines) > 60 else lines


def _database(c: Clock, nodes: list[str]) -> list[Obj]:
    ns, name = "orders-db", "orders-pg"
    img = "docker.io/bitnami/postgresql:15.8.0"
    spec = template({"app": name}, [container("postgres", img, port=5432, cpu="4", memory="16Gi", mem_limit="16Gi")])
    spec["spec"]["containers"][0]["ports"][0]["name"] = "tcp-postgresql"
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": meta(name, ns, c.at(60 * 24 * 600), {"app": name}),
        "spec": {
            "replicas": 1,
            "serviceName": name,
            "selector": {"matchLabels": {"app": name}},
            "template": spec,
            "podManagementPolicy": "OrderedReady",
            "updateStrategy": {"type": "RollingUpdate"},
        },
        "status": {
            "replicas": 1,
            "readyReplicas": 1,
            "currentReplicas": 1,
            "updatedReplicas": 1,
            "availableReplicas": 1,
            "observedGeneration": 9,
            "currentRevision": f"{name}-6d8f9c7b54",
            "updateRevision": f"{name}-6d8f9c7b54",
        },
    }
    p = pod(
        c,
        ns,
        f"{name}-0",
        ("StatefulSet", name),
        {"app": name},
        spec["spec"],
        node_name=nodes[6],
        ip="172.22.10.250",
        started_min=60 * 24 * 6,
        statuses=[cstatus(c, "postgres", img, ready=True, state=running(60 * 24 * 6 - 0.5, c))],
    )
    return [
        sts,
        p,
        service(
            c,
            ns,
            name,
            {"app": name},
            port=5432,
            target="tcp-postgresql",
            cluster_ip="10.100.90.4",
            port_name="tcp-postgresql",
        ),
        endpoints(c, ns, name, [("172.22.10.250", f"{name}-0", nodes[6])], [], 5432, "tcp-postgresql"),
    ]


def _metrics(c: Clock, pods: list[tuple[str, str, str, list[float]]]) -> Metrics:
    mx = Metrics(c)
    span = range(120, -1, -1)
    for name, _nd, _ip, kills in pods:
        lab = {"namespace": NS, "pod": name, "container": APP}
        mx.series(
            "kube_pod_container_status_restarts", "counter", lab, [(m, sum(1 for k in kills if k >= m)) for m in span]
        )
        mx.series(
            "prober_probe",
            "counter",
            {**lab, "probe_type": "Liveness", "result": "failed"},
            [(m, sum(1 for mm in range(120, m - 1, -1) if mm < PEAK and (mm + len(name)) % 3 == 0)) for m in span],
        )
        mx.series(
            "container_cpu_usage_seconds",
            "counter",
            lab,
            [(m, sum(0.35 if mm > PEAK else 0.82 for mm in range(120, m - 1, -1)) * 60) for m in span],
        )
    bounds = [0.1, 0.5, 1.0, 2.5]
    pts = []
    total = cnt = 0.0
    cum = [0.0] * 5
    for m in span:
        rate = 1800 if m > PEAK else 4200
        shares = [0.93, 0.99, 0.995, 0.999, 1.0] if m > PEAK else [0.21, 0.52, 0.74, 0.97, 1.0]
        cum = [cum[i] + rate * shares[i] for i in range(5)]
        cnt += rate
        total += rate * (0.07 if m > PEAK else 0.82)
        pts.append((m, list(cum), total, cnt))
    mx.histogram(
        "http_server_requests_seconds",
        {"namespace": NS, "service": APP, "uri": "/v1/customers/{id}/orders"},
        bounds,
        pts,
    )
    mx.series(
        "pg_stat_activity_count",
        "gauge",
        {"namespace": "orders-db", "pod": "orders-pg-0", "datname": "orders", "state": "active"},
        [(m, 9 + (m % 4) if m > PEAK else 38 + (m * 7) % 15) for m in span],
    )
    mx.series(
        "container_cpu_usage_seconds",
        "counter",
        {"namespace": "orders-db", "pod": "orders-pg-0", "container": "postgres"},
        [(m, sum(1.2 if mm > PEAK else 2.6 for mm in range(120, m - 1, -1)) * 60) for m in span],
    )
    mx.series("pg_up", "gauge", {"namespace": "orders-db", "pod": "orders-pg-0"}, [(m, 1) for m in span])
    mx.series(
        "kube_pod_container_status_restarts",
        "counter",
        {"namespace": "orders-db", "pod": "orders-pg-0", "container": "postgres"},
        [(m, 0) for m in span],
    )
    return mx
