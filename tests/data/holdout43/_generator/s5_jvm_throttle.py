# ruff: noqa: E501 - log lines, event messages and object literals are kept verbatim on one line
"""Nordwind Bank: card-auth (Spring Boot, Java 21) runs with a 500m CPU limit. At start the
JIT compilers and the GC threads need several cores; after each HPA scale-out the new pods
pass readiness, get traffic, and sit CFS-throttled for minutes: requests to them time out."""

from __future__ import annotations

import random
from datetime import timedelta as td

from ._kit import (
    Story,
    container,
    counter,
    deployment,
    endpoints,
    event,
    http_probe,
    namespace,
    parse,
    pod,
    pod_template,
    replicaset,
    series,
    service,
    ts,
    uid,
)


def build() -> Story:
    now = parse("2026-11-29T11:28:00Z")
    scale = parse("2026-11-29T11:02:10Z")
    y_scale = parse("2026-11-28T11:05:40Z")
    y_in = parse("2026-11-28T14:12:00Z")
    old = parse("2025-01-20T08:00:00Z")
    s = Story(
        id="card-auth-timeouts-on-scale-up",
        title="card-auth timeouts whenever it scales up",
        now=now,
        report=(
            "card-auth: authorisations time out again (~11:00, same as yesterday late morning), acquirer "
            "sees 504s for a few minutes then it calms down. it always seems to coincide with the HPA "
            "kicking in. is the HPA misconfigured or are we just too small?"
        ),
        truth={
            "category": "cpu_throttling",
            "culprit": {"kind": "Deployment", "namespace": "cards", "name": "card-auth"},
            "evidence": [
                "container_cpu_cfs_throttled_periods_total",
                "cpu: 500m",
                "Started CardAuthApplication in",
                "upstream request timeout",
            ],
            "fix": (
                "Raise card-auth's CPU limit (or drop it and keep a request) so start-up JIT/GC is not "
                "throttled; add a startupProbe or warm-up before readiness; -XX:ActiveProcessorCount "
                "and a smaller CICompilerCount help"
            ),
        },
    )
    s.add(namespace("cards", old, {"pci": "true"}), namespace("edge", old))
    nodes = [
        "aks-cards-31274455-vmss000004",
        "aks-cards-31274455-vmss000007",
        "aks-cards-31274455-vmss00000a",
    ]
    tpl = pod_template(
        {"app": "card-auth", "app.kubernetes.io/version": "7.12.4"},
        [
            container(
                "card-auth",
                "nordwind.azurecr.io/cards/card-auth:7.12.4",
                cpu_req="500m",
                mem_req="1536Mi",
                cpu_lim="500m",
                mem_lim="1536Mi",
                port=8080,
                readiness=http_probe(
                    "/actuator/health/readiness", 8080, period=5, delay=45, timeout=2
                ),
                liveness=http_probe(
                    "/actuator/health/liveness", 8080, period=15, delay=120, timeout=3
                ),
                env=[
                    {
                        "name": "JAVA_TOOL_OPTIONS",
                        "value": "-XX:MaxRAMPercentage=70 -XX:+UseG1GC -Xlog:gc:stdout",
                    },
                    {"name": "SPRING_PROFILES_ACTIVE", "value": "prod"},
                ],
            )
        ],
        topologySpreadConstraints=[
            {
                "maxSkew": 1,
                "topologyKey": "kubernetes.io/hostname",
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": {"app": "card-auth"}},
            }
        ],
    )
    dep = deployment("card-auth", "cards", old, tpl, 7, 44, labels={"app": "card-auth"})
    rs = "card-auth-6f5b8d9c47"
    s.add(dep, replicaset(dep, "6f5b8d9c47", now - td(days=5, hours=3), 44, tpl, 7))
    s.add(
        {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {
                "name": "card-auth",
                "namespace": "cards",
                "uid": uid("hpa-card-auth"),
                "creationTimestamp": ts(old),
            },
            "spec": {
                "scaleTargetRef": {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": "card-auth",
                },
                "minReplicas": 4,
                "maxReplicas": 16,
                "metrics": [
                    {
                        "type": "Resource",
                        "resource": {
                            "name": "cpu",
                            "target": {"type": "Utilization", "averageUtilization": 65},
                        },
                    }
                ],
            },
            "status": {
                "currentReplicas": 7,
                "desiredReplicas": 7,
                "lastScaleTime": ts(scale),
                "currentMetrics": [
                    {
                        "type": "Resource",
                        "resource": {
                            "name": "cpu",
                            "current": {"averageUtilization": 58, "averageValue": "291m"},
                        },
                    }
                ],
                "conditions": [
                    {
                        "type": "AbleToScale",
                        "status": "True",
                        "reason": "ReadyForNewScale",
                        "message": "recommended size matches current size",
                        "lastTransitionTime": ts(scale),
                    },
                    {
                        "type": "ScalingActive",
                        "status": "True",
                        "reason": "ValidMetricFound",
                        "message": "the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)",
                        "lastTransitionTime": ts(old),
                    },
                    {
                        "type": "ScalingLimited",
                        "status": "False",
                        "reason": "DesiredWithinRange",
                        "message": "the desired count is within the acceptable range",
                        "lastTransitionTime": ts(scale),
                    },
                ],
            },
        }
    )
    olds = [
        (f"{rs}-{x}", nodes[i % 3], f"10.30.{i % 3}.{21 + i}", now - td(days=5, hours=3))
        for i, x in enumerate(["8fzq2", "d4kxm", "hp7wn", "s2vtc"])
    ]
    news = [
        (f"{rs}-{x}", nodes[i % 3], f"10.30.{i % 3}.{61 + i}", scale + td(seconds=2 + i))
        for i, x in enumerate(["b9rjl", "m3qhz", "w6dkp"])
    ]
    ydays = [
        (f"{rs}-{x}", nodes[i % 3], f"10.30.{i % 3}.{51 + i}", y_scale + td(seconds=2 + i))
        for i, x in enumerate(["c7npx", "t4gwb"])
    ]
    for name, n, ip, created in olds + news:
        s.add(
            pod(
                name,
                "cards",
                created,
                tpl,
                n,
                ip,
                "ReplicaSet",
                rs,
                started=created + td(seconds=6),
            )
        )
    s.add(
        service("card-auth", "cards", old, {"app": "card-auth"}, 8080, 8080, "10.0.61.17"),
        endpoints(
            "card-auth", "cards", scale, [(ip, name, n) for name, n, ip, _ in olds + news], [], 8080
        ),
    )
    s.add(
        event(
            "cards",
            "HorizontalPodAutoscaler",
            "card-auth",
            "SuccessfulRescale",
            "New size: 7; reason: cpu resource utilization (percentage of request) above target",
            scale,
            scale,
            component="horizontal-pod-autoscaler",
            obj_uid=uid("hpa-card-auth"),
        ),
        event(
            "cards",
            "ReplicaSet",
            rs,
            "SuccessfulCreate",
            f"Created pod: {news[-1][0]}",
            scale,
            scale + td(seconds=4),
            count=3,
            component="replicaset-controller",
        ),
    )
    for name, n, ip, created in news:
        s.add(
            event(
                "cards",
                "Pod",
                name,
                "Scheduled",
                f"Successfully assigned cards/{name} to {n}",
                created,
                created,
                component="default-scheduler",
            ),
            event(
                "cards",
                "Pod",
                name,
                "Started",
                "Started container card-auth",
                created + td(seconds=6),
                created + td(seconds=6),
                host=n,
                field_path="spec.containers{card-auth}",
            ),
            event(
                "cards",
                "Pod",
                name,
                "Unhealthy",
                f'Readiness probe failed: Get "http://{ip}:8080/actuator/health/readiness": dial tcp {ip}:8080: connect: connection refused',
                created + td(seconds=51),
                created + td(seconds=96),
                count=9,
                type_="Warning",
                host=n,
                field_path="spec.containers{card-auth}",
            ),
            event(
                "cards",
                "Pod",
                name,
                "Unhealthy",
                f'Liveness probe failed: Get "http://{ip}:8080/actuator/health/liveness": context deadline exceeded (Client.Timeout exceeded while awaiting headers)',
                created + td(seconds=140),
                created + td(seconds=215),
                count=2,
                type_="Warning",
                host=n,
                field_path="spec.containers{card-auth}",
            ),
        )

    # ---- metrics
    rng = random.Random(5)
    start = now - td(hours=25)

    def throttle_share(born: object, t: object) -> float:
        age = (t - born).total_seconds()  # type: ignore[operator]
        if age < 600:
            return 0.93 + 0.05 * rng.random()
        return 0.12 + 0.1 * rng.random()

    lives = (
        [(name, n, created, now) for name, n, ip, created in olds]
        + [(name, n, created, now) for name, n, ip, created in news]
        + [(name, n, created, y_in) for name, n, ip, created in ydays]
    )
    for name, n, created, end in lives:
        begin = max(start, created)
        lab = {"namespace": "cards", "pod": name, "container": "card-auth", "node": n}
        s.metric(
            "container_cpu_cfs_periods",
            "counter",
            "Number of elapsed enforcement period intervals.",
            lab,
            counter(begin, end, 60, lambda t: 10.0),
        )
        s.metric(
            "container_cpu_cfs_throttled_periods",
            "counter",
            "Number of throttled period intervals.",
            lab,
            counter(begin, end, 60, lambda t, c=created: 10.0 * throttle_share(c, t)),
        )
        s.metric(
            "container_cpu_usage_seconds",
            "counter",
            "Cumulative cpu time consumed in seconds.",
            lab,
            counter(
                begin,
                end,
                30,
                lambda t, c=created: (
                    0.5 if (t - c).total_seconds() < 600 else 0.22 + 0.1 * rng.random()
                ),
                integer=False,
            ),
        )
    s.metric(
        "kube_horizontalpodautoscaler_status_current_replicas",
        "gauge",
        "Current number of replicas of pods managed by this autoscaler.",
        {"namespace": "cards", "horizontalpodautoscaler": "card-auth"},
        series(start, now, 60, lambda t: 7 if t >= scale else (6 if y_scale <= t < y_in else 4)),
    )
    s.metric(
        "kube_horizontalpodautoscaler_spec_max_replicas",
        "gauge",
        "Upper limit for the number of pods that can be set by the autoscaler.",
        {"namespace": "cards", "horizontalpodautoscaler": "card-auth"},
        series(start, now, 60, lambda t: 16),
    )

    def timeouts(t: object) -> float:
        for born in (y_scale, scale):
            age = (t - born).total_seconds()  # type: ignore[operator]
            if 50 <= age < 640:
                return 2.5 + rng.random() * 2
        return 0.01

    s.metric(
        "envoy_cluster_upstream_rq_timeout",
        "counter",
        "Total requests that timed out waiting for a response.",
        {"namespace": "edge", "envoy_cluster_name": "cards_card-auth_8080"},
        counter(start, now, 60, timeouts, base=1400),
    )
    s.metric(
        "envoy_cluster_upstream_rq_completed",
        "counter",
        "Total upstream requests completed.",
        {"namespace": "edge", "envoy_cluster_name": "cards_card-auth_8080"},
        counter(start, now, 60, lambda t: 210 + 30 * rng.random(), base=610_000_000),
    )

    # ---- logs
    for born, group in ((y_scale, ydays), (scale, news)):
        t = born + td(seconds=50)
        while t < born + td(seconds=640):
            name, n, ip, _ = rng.choice(group)
            s.doc(
                t,
                "warn",
                "api-gateway",
                "edge",
                "api-gateway-7d6c5b8f9-q4xlz",
                "envoy",
                f'[{ts(t)}] "POST /v3/authorisations HTTP/2" 504 UT 0 24 2001 - "{ip}:8080" upstream request timeout',
                http__response__status_code=504,
                destination__address=ip,
            )
            t += td(seconds=rng.uniform(0.3, 1.2))
    t = now - td(days=1, hours=2)
    while t < now:
        name, n, ip, _ = rng.choice(olds)
        s.doc(
            t,
            "info",
            "card-auth",
            "cards",
            name,
            "card-auth",
            f"authorisation approved scheme={rng.choice(['VISA', 'MC'])} latencyMs={rng.randint(18, 90)}",
        )
        t += td(seconds=rng.uniform(20, 90))
    name, n, ip, born = news[0]
    st = born + td(seconds=6)
    lines = [
        "Picked up JAVA_TOOL_OPTIONS: -XX:MaxRAMPercentage=70 -XX:+UseG1GC -Xlog:gc:stdout",
        "[0.011s][info][gc] Using G1",
        f"{st + td(seconds=3):%Y-%m-%dT%H:%M:%S}.402Z  INFO 1 --- [card-auth] [           main] c.n.cards.CardAuthApplication            : Starting CardAuthApplication v7.12.4 using Java 21.0.5 with PID 1",
        f'{st + td(seconds=9):%Y-%m-%dT%H:%M:%S}.118Z  INFO 1 --- [card-auth] [           main] c.n.cards.CardAuthApplication            : The following 1 profile is active: "prod"',
        "[21.734s][info][gc] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 64M->18M(1076M) 412.331ms",
        "[48.902s][info][gc] GC(1) Pause Young (Concurrent Start) (Metadata GC Threshold) 141M->39M(1076M) 1187.604ms",
        f"{st + td(seconds=71):%Y-%m-%dT%H:%M:%S}.877Z  INFO 1 --- [card-auth] [           main] o.s.b.w.embedded.tomcat.TomcatWebServer  : Tomcat started on port 8080 (http) with context path '/'",
        f"{st + td(seconds=88):%Y-%m-%dT%H:%M:%S}.260Z  INFO 1 --- [card-auth] [           main] c.n.cards.CardAuthApplication            : Started CardAuthApplication in 87.9 seconds (process running for 91.3)",
        f"{st + td(seconds=92):%Y-%m-%dT%H:%M:%S}.015Z  INFO 1 --- [card-auth] [nio-8080-exec-1] o.s.web.servlet.DispatcherServlet        : Completed initialization in 3711 ms",
        "[97.441s][info][gc] GC(2) Pause Young (Normal) (G1 Evacuation Pause) 312M->97M(1076M) 1843.551ms",
        f"{st + td(seconds=104):%Y-%m-%dT%H:%M:%S}.630Z  WARN 1 --- [card-auth] [nio-8080-exec-7] c.n.cards.auth.AuthorisationController   : authorisation took 6120 ms (issuer lookup 5870 ms)",
        f"{st + td(seconds=131):%Y-%m-%dT%H:%M:%S}.912Z  WARN 1 --- [card-auth] [io-8080-exec-12] o.a.c.c.C.[Tomcat].[localhost]           : Exception Processing ErrorPage[errorCode=0, location=/error] org.apache.catalina.connector.ClientAbortException: java.io.IOException: Broken pipe",
        "[164.207s][info][gc] GC(3) Pause Young (Normal) (G1 Evacuation Pause) 402M->131M(1076M) 1210.078ms",
        "[411.560s][info][gc] GC(4) Pause Young (Normal) (G1 Evacuation Pause) 498M->140M(1076M) 38.214ms",
    ]
    t = born + td(seconds=660)
    while t < now:
        lines.append(
            f"{t:%Y-%m-%dT%H:%M:%S}.{rng.randint(100, 999)}Z  INFO 1 --- [card-auth] [nio-8080-exec-{rng.randint(1, 40)}] c.n.cards.auth.AuthorisationController   : authorisation approved latencyMs={rng.randint(18, 90)}"
        )
        t += td(seconds=rng.randint(20, 80))
    s.pod_log("cards", name, "card-auth", lines)
    return s
