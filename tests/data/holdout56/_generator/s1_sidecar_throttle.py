"""quote-api slow at the morning ramp: its Envoy sidecar has a 100m CPU limit."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from . import _kit as k

SID = "h56-quote-api-latency"
NOW = "2026-12-08T09:40:00Z"

NODES = [
    ("ip-10-20-11-37.eu-west-1.compute.internal", "eu-west-1a"),
    ("ip-10-20-12-118.eu-west-1.compute.internal", "eu-west-1b"),
    ("ip-10-20-13-204.eu-west-1.compute.internal", "eu-west-1c"),
    ("ip-10-20-11-92.eu-west-1.compute.internal", "eu-west-1a"),
    ("ip-10-20-12-63.eu-west-1.compute.internal", "eu-west-1b"),
]

QUOTE_IMAGE = "registry.acme-retail.io/pricing/quote-api:3.21.4"
ENVOY_IMAGE = "envoyproxy/envoy:v1.30.4"
ENVOY_LIMIT = 0.1
LAT_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5]
ENVOY_BUCKETS_MS = [25.0, 50.0, 100.0, 250.0, 500.0, 1000.0, 2500.0]


def build(root: Path) -> None:
    sc = k.Scenario(SID, NOW, seed=5601)
    node_names = [n for n, _ in NODES]
    for i, (name, zone) in enumerate(NODES):
        sc.add(
            k.node(
                name,
                zone,
                sc.ago(days=20 + i * 3),
                sc.ago(minutes=0.3),
                nodegroup="ng-general-m6i",
            )
        )
    plat = k.platform(sc, node_names)
    for ns in ("pricing", "web", "shop"):
        sc.add(k.namespace(ns, sc.ago(days=300)))

    ramp_start = sc.ago(minutes=45)
    ramp_end = sc.ago(minutes=20)

    def rps(t: datetime) -> float:
        """Requests per second that one quote-api pod receives."""
        return k.ramp(t, ramp_start, ramp_end, 24.0, 138.0) + k.ramp(t, ramp_end, sc.now, 0.0, 10.0)

    def envoy_demand(t: datetime) -> float:
        return 0.00082 * rps(t)

    def throttle_ratio(t: datetime) -> float:
        load = envoy_demand(t) / ENVOY_LIMIT
        return min(0.86, max(0.015, (load - 0.45) * 1.45))

    def envoy_median(t: datetime) -> float:
        return 0.032 + 0.95 * throttle_ratio(t) ** 1.6

    # ---------------- pricing/quote-api ----------------
    app = k.container(
        "app",
        QUOTE_IMAGE,
        "1",
        "512Mi",
        "2",
        "1Gi",
        [("http", 8080), ("metrics", 9090)],
        env=[
            ("QUOTE_RULES_REDIS", "pricing-redis.pricing.svc:6379"),
            ("GOMAXPROCS", "2"),
            ("QUOTE_CACHE_TTL", "30s"),
        ],
        readiness=k.http_probe("/healthz", 8080),
        liveness=k.http_probe("/healthz", 8080, period=20, delay=10),
    )
    envoy = k.container(
        "envoy",
        ENVOY_IMAGE,
        "50m",
        "64Mi",
        "100m",
        "128Mi",
        [("http-envoy", 10000), ("admin", 9901)],
        args=["-c", "/etc/envoy/envoy.yaml", "--concurrency", "2", "--log-level", "warn"],
        readiness=k.http_probe("/ready", 9901),
        mounts=[("envoy-config", "/etc/envoy")],
    )
    quote = k.simple_deployment(
        sc,
        "pricing",
        "quote-api",
        [app, envoy],
        node_names,
        3,
        created=sc.ago(days=290),
        rolled=sc.ago(days=9, hours=3),
        revision=17,
        labels={"app.kubernetes.io/name": "quote-api", "app.kubernetes.io/part-of": "pricing"},
        annotations={"prometheus.io/scrape": "true", "prometheus.io/port": "9090"},
        extra_spec={
            "volumes": [{"name": "envoy-config", "configMap": {"name": "quote-api-envoy"}}]
        },
        service=False,
    )
    sc.add(
        *k.service_and_endpoints(
            sc,
            "pricing",
            "quote-api",
            {"app.kubernetes.io/name": "quote-api", "app.kubernetes.io/part-of": "pricing"},
            10000,
            quote.pods,
            port_name="http",
            service_port=80,
        )
    )
    sc.add(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": "quote-api-envoy",
                "namespace": "pricing",
                "creationTimestamp": k.iso(sc.ago(days=160)),
            },
            "data": {
                "envoy.yaml": (
                    "admin:\n  address:\n    socket_address: {address: 0.0.0.0, port_value: 9901}\n"
                    "static_resources:\n  listeners:\n  - name: ingress\n    address:\n"
                    "      socket_address: {address: 0.0.0.0, port_value: 10000}\n"
                    "    filter_chains:\n    - filters:\n"
                    "      - name: envoy.filters.network.http_connection_manager\n"
                    "        typed_config:\n"
                    '          "@type": type.googleapis.com/envoy.extensions.filters.network.'
                    "http_connection_manager.v3.HttpConnectionManager\n"
                    "          stat_prefix: ingress_http\n"
                    "          access_log:\n          - name: envoy.access_loggers.stdout\n"
                    "          http_filters:\n          - name: envoy.filters.http.ext_authz\n"
                    "          - name: envoy.filters.http.ratelimit\n"
                    "          - name: envoy.filters.http.router\n"
                    "          route_config:\n            virtual_hosts:\n"
                    "            - name: local\n              domains: ['*']\n"
                    "              routes:\n              - match: {prefix: /}\n"
                    "                route: {cluster: local_app, timeout: 5s}\n"
                    "  clusters:\n  - name: local_app\n    connect_timeout: 0.25s\n"
                    "    load_assignment:\n      cluster_name: local_app\n      endpoints:\n"
                    "      - lb_endpoints:\n        - endpoint:\n            address:\n"
                    "              socket_address: {address: 127.0.0.1, port_value: 8080}\n"
                ),
            },
        }
    )
    sc.add(
        {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {
                "name": "quote-api",
                "namespace": "pricing",
                "creationTimestamp": k.iso(sc.ago(days=200)),
            },
            "spec": {
                "scaleTargetRef": {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": "quote-api",
                },
                "minReplicas": 3,
                "maxReplicas": 20,
                "metrics": [
                    {
                        "type": "Resource",
                        "resource": {
                            "name": "cpu",
                            "target": {"type": "Utilization", "averageUtilization": 70},
                        },
                    }
                ],
            },
            "status": {
                "currentReplicas": 3,
                "desiredReplicas": 3,
                "lastScaleTime": k.iso(sc.ago(days=2, hours=5)),
                "currentMetrics": [
                    {
                        "type": "Resource",
                        "resource": {
                            "name": "cpu",
                            "current": {"averageUtilization": 34, "averageValue": "357m"},
                        },
                    }
                ],
                "conditions": [
                    {
                        "type": "AbleToScale",
                        "status": "True",
                        "reason": "ReadyForNewScale",
                        "message": "recommended size matches current size",
                        "lastTransitionTime": k.iso(sc.ago(days=2, hours=5)),
                    },
                    {
                        "type": "ScalingActive",
                        "status": "True",
                        "reason": "ValidMetricFound",
                        "message": "the HPA was able to successfully calculate a replica count "
                        "from cpu resource utilization (percentage of request)",
                        "lastTransitionTime": k.iso(sc.ago(days=40)),
                    },
                    {
                        "type": "ScalingLimited",
                        "status": "True",
                        "reason": "TooFewReplicas",
                        "message": "the desired replica count is less than the minimum replica "
                        "count",
                        "lastTransitionTime": k.iso(sc.ago(days=2, hours=4)),
                    },
                ],
            },
        }
    )

    # ---------------- pricing/rules-loader (red herring: rolled at 09:02) -------------
    rules_rolled = sc.ago(minutes=38)
    rules = k.simple_deployment(
        sc,
        "pricing",
        "rules-loader",
        [
            k.container(
                "rules-loader",
                "registry.acme-retail.io/pricing/rules-loader:1.9.0",
                "100m",
                "128Mi",
                "500m",
                "256Mi",
                [("metrics", 9090)],
                env=[("RULES_SOURCE", "s3://acme-pricing-rules/prod/"), ("PUSH_INTERVAL", "60s")],
            )
        ],
        node_names[2:3],
        1,
        created=sc.ago(days=250),
        rolled=rules_rolled,
        revision=8,
        old_revisions=[
            (
                7,
                sc.ago(days=16),
                [
                    k.container(
                        "rules-loader",
                        "registry.acme-retail.io/pricing/rules-loader:1.8.2",
                        "100m",
                        "128Mi",
                        "500m",
                        "256Mi",
                        [("metrics", 9090)],
                    )
                ],
            )
        ],
        service=False,
    )
    old_rs = k.replicaset_names(sc, "pricing", "rules-loader")[0]
    old_pod = f"{old_rs}-{sc.pod_suffix()}"
    sc.event(
        "pricing",
        "Deployment",
        "rules-loader",
        "ScalingReplicaSet",
        f"Scaled up replica set {rules.pods[0].name.rsplit('-', 1)[0]} to 1",
        rules_rolled,
        api_version="apps/v1",
    )
    sc.event(
        "pricing",
        "Deployment",
        "rules-loader",
        "ScalingReplicaSet",
        f"Scaled down replica set {old_rs} to 0 from 1",
        rules_rolled + timedelta(seconds=21),
        api_version="apps/v1",
    )
    rp = rules.pods[0]
    for ev, msg in (
        ("Scheduled", f"Successfully assigned pricing/{rp.name} to {rp.node}"),
        ("Pulling", 'Pulling image "registry.acme-retail.io/pricing/rules-loader:1.9.0"'),
        (
            "Pulled",
            'Successfully pulled image "registry.acme-retail.io/pricing/rules-loader:1.9.0" '
            "in 3.81s (3.81s including waiting)",
        ),
        ("Created", "Created container rules-loader"),
        ("Started", "Started container rules-loader"),
    ):
        sc.event("pricing", "Pod", rp.name, ev, msg, rules_rolled + timedelta(seconds=2))
    redis = k.simple_deployment(
        sc,
        "pricing",
        "pricing-redis",
        [
            k.container(
                "redis",
                "redis:7.2.5-alpine",
                "200m",
                "512Mi",
                "1",
                "1Gi",
                [("redis", 6379)],
            )
        ],
        node_names[1:2],
        1,
        created=sc.ago(days=280),
        rolled=sc.ago(days=30),
        revision=3,
        port=6379,
        restarts={0: (1, k.terminated("Error", 1, sc.ago(days=30), sc.ago(days=4, hours=6)))},
    )

    # ---------------- web/storefront-bff (the caller) ----------------
    bff = k.simple_deployment(
        sc,
        "web",
        "storefront-bff",
        [
            k.container(
                "bff",
                "registry.acme-retail.io/web/storefront-bff:2.4.1",
                "300m",
                "384Mi",
                "1",
                "768Mi",
                [("http", 3000)],
                env=[
                    ("QUOTE_API_URL", "http://quote-api.pricing.svc"),
                    ("QUOTE_TIMEOUT_MS", "2000"),
                ],
                readiness=k.http_probe("/health", 3000),
            )
        ],
        node_names,
        6,
        created=sc.ago(days=310),
        rolled=sc.ago(days=3, hours=2),
        revision=41,
        port=3000,
    )
    cart = k.simple_deployment(
        sc,
        "shop",
        "cart",
        [
            k.container(
                "cart",
                "registry.acme-retail.io/shop/cart:5.2.0",
                "200m",
                "256Mi",
                "1",
                "512Mi",
                [("http", 8080)],
            )
        ],
        node_names,
        3,
        created=sc.ago(days=300),
        rolled=sc.ago(days=6),
        revision=22,
        port=8080,
    )
    checkout = k.simple_deployment(
        sc,
        "shop",
        "checkout",
        [
            k.container(
                "checkout",
                "registry.acme-retail.io/shop/checkout:7.0.3",
                "300m",
                "384Mi",
                "1",
                "768Mi",
                [("http", 8080)],
            )
        ],
        node_names,
        3,
        created=sc.ago(days=300),
        rolled=sc.ago(days=12),
        revision=35,
        port=8080,
    )

    # ---------------- metrics ----------------
    for p in quote.pods:
        share = sc.rng.uniform(0.93, 1.07)
        app_labels = {"namespace": "pricing", "pod": p.name, "container": "app"}
        env_labels = {"namespace": "pricing", "pod": p.name, "container": "envoy"}
        sc.metrics.counter(
            "container_cpu_usage_seconds",
            app_labels,
            k.noisy(sc, lambda t, s=share: (0.05 + 0.0015 * rps(t)) * s, 0.06),
            start=sc.rng.uniform(40_000, 60_000),
            help_text="Cumulative cpu time consumed in seconds.",
        )
        sc.metrics.counter(
            "container_cpu_usage_seconds",
            env_labels,
            k.noisy(sc, lambda t, s=share: min(0.0995, envoy_demand(t) * s), 0.01),
            start=sc.rng.uniform(8_000, 12_000),
        )
    for p in quote.pods:
        for cname in ("app", "envoy"):
            labels = {"namespace": "pricing", "pod": p.name, "container": cname}
            sc.metrics.counter(
                "container_cpu_cfs_periods",
                labels,
                lambda t, c=cname: 9.6 if c == "envoy" or rps(t) > 10 else 8.0,
                start=sc.rng.uniform(6e6, 8e6),
                integer=True,
                help_text="Number of elapsed enforcement period intervals.",
            )
    for p in quote.pods:
        for cname, ratio in (("app", lambda _t: 0.0), ("envoy", throttle_ratio)):
            labels = {"namespace": "pricing", "pod": p.name, "container": cname}
            start = sc.rng.uniform(2e4, 9e4) if cname == "envoy" else 12.0
            sc.metrics.counter(
                "container_cpu_cfs_throttled_periods",
                labels,
                k.noisy(sc, lambda t, r=ratio: 9.6 * r(t), 0.05),
                start=start,
                integer=True,
                help_text="Number of throttled period intervals.",
            )
    for p in quote.pods:
        labels = {"namespace": "pricing", "pod": p.name, "container": "envoy"}
        sc.metrics.counter(
            "container_cpu_cfs_throttled_seconds",
            labels,
            k.noisy(sc, lambda t: 9.6 * throttle_ratio(t) * 0.031, 0.05),
            start=sc.rng.uniform(900, 2500),
            help_text="Total time duration the container has been throttled.",
        )
    for p in quote.pods:
        for cname, mem in (("app", 310 * k.MI), ("envoy", 41 * k.MI)):
            sc.metrics.gauge(
                "container_memory_working_set_bytes",
                {"namespace": "pricing", "pod": p.name, "container": cname},
                k.wobble(sc, mem, 0.02),
            )
    for p in quote.pods:
        for cname, lim in (("app", 2.0), ("envoy", 0.1)):
            sc.metrics.gauge(
                "kube_pod_container_resource_limits",
                {
                    "namespace": "pricing",
                    "pod": p.name,
                    "container": cname,
                    "node": p.node,
                    "resource": "cpu",
                    "unit": "core",
                },
                lambda _t, v=lim: v,
                help_text="The number of requested limit resource by a container.",
            )
    for p in quote.pods:
        sc.metrics.counter(
            "http_requests",
            {"namespace": "pricing", "pod": p.name, "service": "quote-api", "code": "200"},
            k.noisy(sc, rps, 0.05),
            start=sc.rng.uniform(3e6, 5e6),
            integer=True,
            help_text="Requests handled by the quote-api application.",
        )
    for p in quote.pods:
        sc.metrics.histogram(
            "http_request_duration_seconds",
            {"namespace": "pricing", "pod": p.name, "service": "quote-api", "handler": "/v1/quote"},
            rps,
            k.wobble(sc, 0.021, 0.08),
            0.55,
            LAT_BUCKETS,
            start_count=sc.rng.uniform(3e6, 5e6),
            help_text="Time the quote-api application spent handling a request.",
        )
    for p in quote.pods:
        sc.metrics.histogram(
            "envoy_http_downstream_rq_time",
            {
                "namespace": "pricing",
                "pod": p.name,
                "envoy_http_conn_manager_prefix": "ingress_http",
            },
            rps,
            lambda t: 1000 * envoy_median(t),
            0.62,
            ENVOY_BUCKETS_MS,
            start_count=sc.rng.uniform(3e6, 5e6),
            help_text="Envoy downstream request time in milliseconds.",
        )
    hpa_labels = {"namespace": "pricing", "horizontalpodautoscaler": "quote-api"}
    sc.metrics.gauge(
        "kube_horizontalpodautoscaler_status_current_replicas", hpa_labels, lambda _t: 3
    )
    sc.metrics.gauge(
        "kube_horizontalpodautoscaler_status_desired_replicas", hpa_labels, lambda _t: 3
    )
    sc.metrics.gauge("kube_horizontalpodautoscaler_spec_max_replicas", hpa_labels, lambda _t: 20)
    sc.metrics.gauge("kube_horizontalpodautoscaler_spec_min_replicas", hpa_labels, lambda _t: 3)
    k.container_metrics(sc, "pricing", rules.pods, "rules-loader", 0.03, 90 * k.MI)
    k.container_metrics(sc, "pricing", redis.pods, "redis", 0.06, 180 * k.MI)
    k.container_metrics(sc, "web", bff.pods, "bff", lambda t: 0.08 + 0.0012 * rps(t), 260 * k.MI)
    for w, cname in ((quote, "app"), (quote, "envoy")):
        k.restarts_metric(sc, w.namespace, w.pods, cname)
    k.restarts_metric(sc, "pricing", redis.pods, "redis", 1)
    # ---------------- logs ----------------
    start = sc.ago(minutes=60)
    for p in quote.pods:
        for t in sc.poisson_times(start, sc.now, lambda t: 0.3 + rps(t) / 90):
            total_ms = max(3, round(1000 * envoy_median(t) * sc.rng.lognormvariate(0, 0.62)))
            upstream_ms = max(2, round(21 * sc.rng.lognormvariate(0, 0.5)))
            total_ms = max(total_ms, upstream_ms + 1)
            sku = f"SKU-{sc.rng.randint(100000, 999999)}"
            caller = sc.rng.choice(bff.pods)
            line = (
                f'[{k.iso_ms(t)}] "GET /v1/quote?sku={sku}&qty={sc.rng.randint(1, 4)} HTTP/1.1" '
                f'200 - 0 {sc.rng.randint(380, 900)} {total_ms} {upstream_ms} "{caller.ip}" '
                f'"storefront-bff/2.4.1" "{sc.uid()}" "quote-api.pricing.svc" "127.0.0.1:8080"'
            )
            sc.log(t, "pricing", p.name, "envoy", "quote-api", "info", line, p.node)
            if sc.rng.random() < 0.5:
                sc.pod_log("pricing", p.name, "envoy", t, line)
        for t in sc.poisson_times(start, sc.now, lambda _t: 0.7):
            took = max(3, round(19 * sc.rng.lognormvariate(0, 0.45)))
            msg = (
                f'level=info msg="quote computed" sku=SKU-{sc.rng.randint(100000, 999999)} '
                f"rules_evaluated={sc.rng.randint(30, 412)} took={took}ms cache="
                f"{sc.rng.choice(['hit', 'hit', 'hit', 'miss'])}"
            )
            sc.log(t, "pricing", p.name, "app", "quote-api", "info", msg, p.node)
            sc.pod_log("pricing", p.name, "app", t, f"ts={k.iso_ms(t)} {msg}")
        for t in sc.poisson_times(start, sc.now, lambda _t: 0.25):
            msg = (
                'level=warn msg="pricing rule expired, skipping" rule=BF-2026-EXT '
                "expired_at=2026-12-01T00:00:00Z"
            )
            sc.log(t, "pricing", p.name, "app", "quote-api", "warn", msg, p.node)
        refresh = sc.ago(minutes=59, seconds=sc.rng.randint(0, 50))
        while refresh < sc.now:
            version = (
                "2026-12-08.3"
                if refresh > rules_rolled + timedelta(seconds=40)
                else ("2026-12-08.2")
            )
            msg = (
                f'level=info msg="rules cache refreshed" version={version} rules=412 '
                f"took={sc.rng.randint(8, 22)}ms"
            )
            sc.log(refresh, "pricing", p.name, "app", "quote-api", "info", msg, p.node)
            refresh += timedelta(seconds=300)
    for t in sc.poisson_times(start, sc.now, lambda _t: 1.0):
        batch = "2026-12-08.3" if t > rules_rolled else "2026-12-08.2"
        sc.log(
            t,
            "pricing",
            rp.name if t > rules_rolled else old_pod,
            "rules-loader",
            "rules-loader",
            "info",
            f"pushed 412 rules to pricing-redis.pricing.svc:6379 version={batch}",
            rp.node,
        )
    sc.log(
        rules_rolled + timedelta(seconds=9),
        "pricing",
        rp.name,
        "rules-loader",
        "rules-loader",
        "info",
        "rules-loader 1.9.0 starting: source=s3://acme-pricing-rules/prod/ interval=60s",
        rp.node,
    )
    for p in redis.pods:
        for t in sc.poisson_times(start, sc.now, lambda _t: 0.2):
            sc.log(
                t,
                "pricing",
                p.name,
                "redis",
                "pricing-redis",
                "info",
                f"1:M {t.strftime('%d %b %Y %H:%M:%S')}.{sc.rng.randint(100, 999)} * "
                f"{sc.rng.randint(100, 999)} changes in 300 seconds. Saving...",
                p.node,
            )
    for p in bff.pods:
        for t in sc.poisson_times(start, sc.now, lambda _t: 0.3):
            sc.log(
                t,
                "web",
                p.name,
                "bff",
                "storefront-bff",
                "info",
                f"GET /api/product/{sc.rng.randint(10000, 99999)} 200 {sc.rng.randint(40, 160)}ms",
                p.node,
            )

        def slow_rate(t: datetime) -> float:
            return 1.2 * max(0.0, throttle_ratio(t) - 0.2)

        for t in sc.poisson_times(start, sc.now, slow_rate):
            took = round(1000 * envoy_median(t) * sc.rng.lognormvariate(0.5, 0.3))
            if took > 2000:
                sc.log(
                    t,
                    "web",
                    p.name,
                    "bff",
                    "storefront-bff",
                    "error",
                    "quote-api request failed: TimeoutError: timeout of 2000ms exceeded "
                    "(GET http://quote-api.pricing.svc/v1/quote) - serving cached price",
                    p.node,
                    error__type="TimeoutError",
                )
            else:
                sc.log(
                    t,
                    "web",
                    p.name,
                    "bff",
                    "storefront-bff",
                    "warn",
                    f"slow upstream quote-api: {took}ms (budget 800ms)",
                    p.node,
                )
    ing = plat.ingress.pods
    for t in sc.poisson_times(start, sc.now, lambda t: 1 + rps(t) / 90):
        p = sc.rng.choice(ing)
        slow = envoy_median(t) * sc.rng.lognormvariate(0, 0.5) + 0.06
        status = 504 if slow > 2.2 else 200
        target = sc.rng.choice(bff.pods)
        sc.log(
            t,
            "ingress-nginx",
            p.name,
            "controller",
            "ingress-nginx",
            "info",
            k.ingress_line(
                sc,
                t,
                "GET",
                f"/api/product/{sc.rng.randint(10000, 99999)}/price",
                status,
                min(slow, 2.1),
                "web",
                "storefront-bff",
                3000,
                target.ip,
            ),
            p.node,
            http__response__status_code=status,
        )
    for w, cname in ((cart, "cart"), (checkout, "checkout")):
        k.background_logs(
            sc,
            "shop",
            w.pods,
            cname,
            w.name,
            0.5,
            [
                ("info", "POST /v1/" + cname + " 200 {ms}ms", 8),
                ("info", "GET /v1/" + cname + "/{id} 200 {ms}ms", 8),
                ("warn", "retrying inventory reservation attempt=2 id={id}", 1),
            ],
        )

    sc.write(
        root,
        title="quote-api latency climbing with the morning traffic",
        report="""
quote-api in prod (pricing ns) got really slow since ~9:05, p99 went from under 100ms to 2-3s
and storefront-bff is timing out on prices and serving cached ones. app CPU on the quote-api pods
looks totally normal so I don't think it's load. rules-loader shipped 1.9.0 right around then and
pushed a new rules version, my bet is the new pricing rules make the quote engine slow, or redis is
struggling. can you confirm and tell me if we should roll back rules-loader?
""",
        category="cpu_throttling",
        culprit=("Deployment", "pricing", "quote-api"),
        evidence=[
            "100m",
            "container_cpu_cfs_throttled_periods_total",
            "envoy_http_downstream_rq_time",
        ],
        fix=(
            "Raise (or remove) the CPU limit of quote-api's envoy sidecar, which is 100m and "
            "throttled most periods at peak traffic; the app container and the new rules are "
            "fine. Give envoy e.g. 500m-1 CPU and request enough for peak."
        ),
    )
