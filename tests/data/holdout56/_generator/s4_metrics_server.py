"""search-api saturates at the morning ramp: every HPA is blind, metrics-server is at 0."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from . import _kit as k

SID = "h56-search-api-saturated"
NOW = "2026-12-16T08:50:00Z"

NODES = [
    ("ip-172-19-32-14.ap-southeast-2.compute.internal", "ap-southeast-2a"),
    ("ip-172-19-48-201.ap-southeast-2.compute.internal", "ap-southeast-2b"),
    ("ip-172-19-64-77.ap-southeast-2.compute.internal", "ap-southeast-2c"),
    ("ip-172-19-33-150.ap-southeast-2.compute.internal", "ap-southeast-2a"),
    ("ip-172-19-49-9.ap-southeast-2.compute.internal", "ap-southeast-2b"),
]
SEARCH_IMAGE = "harbor.tidewater.dev/catalog/search-api:2.14.0"
METRICS_ERR = (
    "unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: "
    "the server is currently unable to handle the request (get pods.metrics.k8s.io)"
)
BUCKETS = [0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0]


def build(root: Path) -> None:
    sc = k.Scenario(SID, NOW, seed=5604)
    node_names = [n for n, _ in NODES]
    for i, (name, zone) in enumerate(NODES):
        sc.add(
            k.node(
                name,
                zone,
                sc.ago(days=14 + 2 * i),
                sc.ago(minutes=0.2),
                instance_type="c6i.2xlarge",
                cpu="8",
                allocatable_cpu="7910m",
                region="ap-southeast-2",
                nodegroup="ng-apps-c6i",
            )
        )
    plat = k.platform(sc, node_names, metrics_server=False)
    for ns in ("catalog", "checkout", "web"):
        sc.add(k.namespace(ns, sc.ago(days=260)))
    scaled_down = sc.ago(hours=9, minutes=37, seconds=19)  # 23:12:41 last night

    # ---------------- kube-system/metrics-server: scaled to 0 last night ---------------
    ms_c = k.container(
        "metrics-server",
        "registry.k8s.io/metrics-server/metrics-server:v0.7.2",
        "100m",
        "200Mi",
        None,
        "400Mi",
        [("https", 10250)],
        args=[
            "--secure-port=10250",
            "--cert-dir=/tmp",
            "--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname",
            "--kubelet-use-node-status-port",
            "--metric-resolution=15s",
        ],
        readiness=k.http_probe("/readyz", "https", period=10, delay=20),
    )
    ms_labels = {"app.kubernetes.io/name": "metrics-server", "app.kubernetes.io/instance": "ms"}
    ms_tmpl = k.template(ms_labels, [ms_c], extra_spec={"serviceAccountName": "metrics-server"})
    ms_uid = sc.uid()
    ms_hash = sc.rs_hash()
    ms_dep = k.deployment_obj(
        "kube-system",
        "metrics-server",
        ms_uid,
        sc.ago(days=390),
        0,
        ms_tmpl,
        6,
        ready=0,
        updated=0,
        available=0,
        generation=9,
        labels={
            **ms_labels,
            "app.kubernetes.io/managed-by": "Helm",
            "helm.sh/chart": "metrics-server-3.12.1",
        },
        annotations={
            "meta.helm.sh/release-name": "ms",
            "meta.helm.sh/release-namespace": "kube-system",
        },
        new_rs=f"metrics-server-{ms_hash}",
        available_cond=(
            "True",
            "MinimumReplicasAvailable",
            "Deployment has minimum availability.",
            sc.ago(days=40),
        ),
        extra_meta={
            "managedFields": [
                {
                    "manager": "helm",
                    "operation": "Update",
                    "apiVersion": "apps/v1",
                    "time": k.iso(sc.ago(days=40)),
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:spec": {"f:template": {}, "f:selector": {}}},
                },
                {
                    "manager": "kubectl",
                    "operation": "Update",
                    "apiVersion": "autoscaling/v1",
                    "subresource": "scale",
                    "time": k.iso(scaled_down),
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:spec": {"f:replicas": {}}},
                },
            ]
        },
    )
    ms_dep["status"]["replicas"] = 0
    sc.add(ms_dep)
    sc.add(
        k.replicaset_obj(
            "kube-system",
            "metrics-server",
            ms_uid,
            ms_hash,
            sc.uid(),
            sc.ago(days=40),
            ms_tmpl,
            6,
            0,
        )
    )
    sc.add(
        *k.service_and_endpoints(
            sc,
            "kube-system",
            "metrics-server",
            ms_labels,
            10250,
            [],
            port_name="https",
            service_port=443,
        )
    )

    # ---------------- workloads under HPAs ----------------
    ramp_start = sc.ago(minutes=55)
    ramp_end = sc.ago(minutes=8)

    def total_rps(t: datetime) -> float:
        return k.ramp(t, ramp_start, ramp_end, 290.0, 1180.0)

    def per_pod(t: datetime) -> float:
        return total_rps(t) / 3

    def demand(t: datetime) -> float:
        return 0.0051 * per_pod(t)

    def rho(t: datetime) -> float:
        return min(0.985, demand(t) / 2.0)

    def median(t: datetime) -> float:
        return min(4.0, 0.038 / (1 - rho(t)))

    search_c = k.container(
        "search-api",
        SEARCH_IMAGE,
        "1",
        "1Gi",
        None,
        "2Gi",
        [("http", 8080), ("metrics", 9090)],
        env=[("GOMAXPROCS", "2"), ("OPENSEARCH_URL", "https://search-os.catalog.svc:9200")],
        readiness=k.http_probe("/readyz", 8080),
        liveness=k.http_probe("/livez", 8080, period=20, delay=15),
    )
    search = k.simple_deployment(
        sc,
        "catalog",
        "search-api",
        [search_c],
        node_names,
        3,
        created=sc.ago(days=250),
        rolled=sc.ago(hours=15, minutes=50),
        revision=73,
        port=8080,
        old_revisions=[
            (
                72,
                sc.ago(days=7, hours=1),
                [k.container("search-api", "harbor.tidewater.dev/catalog/search-api:2.13.4")],
            )
        ],
    )
    frontend = k.simple_deployment(
        sc,
        "web",
        "frontend",
        [
            k.container(
                "frontend",
                "harbor.tidewater.dev/web/frontend:9.3.1",
                "500m",
                "512Mi",
                None,
                "1Gi",
                [("http", 3000)],
                readiness=k.http_probe("/healthz", 3000),
            )
        ],
        node_names,
        3,
        created=sc.ago(days=250),
        rolled=sc.ago(days=4),
        revision=120,
        port=3000,
        restarts={1: (1, k.terminated("Error", 137, sc.ago(days=4), sc.ago(days=3, hours=5)))},
    )
    checkout = k.simple_deployment(
        sc,
        "checkout",
        "checkout-api",
        [
            k.container(
                "checkout-api",
                "harbor.tidewater.dev/checkout/checkout-api:3.3.0",
                "500m",
                "768Mi",
                None,
                "1Gi",
                [("http", 8080)],
            )
        ],
        node_names,
        2,
        created=sc.ago(days=250),
        rolled=sc.ago(days=2, hours=3),
        revision=48,
        port=8080,
    )
    os_ss = k.statefulset(
        sc,
        "catalog",
        "search-os",
        [
            k.container(
                "opensearch",
                "opensearchproject/opensearch:2.17.1",
                "2",
                "8Gi",
                None,
                "8Gi",
                [("http", 9200), ("transport", 9300)],
            )
        ],
        node_names[2:],
        3,
        sc.ago(days=240),
        sc.ago(days=20),
        claim=("data", "200Gi", "gp3"),
        port=9200,
    )
    for name, ns, target, mn, mx, util in (
        ("search-api", "catalog", "search-api", 3, 30, 60),
        ("frontend", "web", "frontend", 3, 20, 70),
        ("checkout-api", "checkout", "checkout-api", 2, 12, 70),
    ):
        sc.add(_hpa(sc, ns, name, target, mn, mx, util, scaled_down))
        sc.event(
            ns,
            "HorizontalPodAutoscaler",
            name,
            "FailedGetResourceMetric",
            f"failed to get cpu utilization: {METRICS_ERR}",
            scaled_down + timedelta(seconds=sc.rng.randint(5, 15)),
            sc.ago(seconds=sc.rng.randint(3, 14)),
            count=2271,
            etype="Warning",
            api_version="autoscaling/v2",
            component="horizontal-pod-autoscaler",
        )
        sc.event(
            ns,
            "HorizontalPodAutoscaler",
            name,
            "FailedComputeMetricsReplicas",
            "invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource "
            f"metric value: failed to get cpu utilization: {METRICS_ERR}",
            scaled_down + timedelta(seconds=sc.rng.randint(5, 15)),
            sc.ago(seconds=sc.rng.randint(3, 14)),
            count=2271,
            etype="Warning",
            api_version="autoscaling/v2",
            component="horizontal-pod-autoscaler",
        )
    for p in search.pods:
        sc.event(
            "catalog",
            "Pod",
            p.name,
            "Unhealthy",
            'Readiness probe failed: Get "http://'
            f'{p.ip}:8080/readyz": context deadline exceeded (Client.Timeout exceeded while '
            "awaiting headers)",
            sc.ago(minutes=19, seconds=sc.rng.randint(0, 50)),
            sc.ago(minutes=sc.rng.randint(1, 4)),
            count=sc.rng.randint(4, 11),
            etype="Warning",
            field_path="spec.containers{search-api}",
        )

    # ---------------- metrics ----------------
    for name, ns, mn, mx in (
        ("search-api", "catalog", 3, 30),
        ("frontend", "web", 3, 20),
        ("checkout-api", "checkout", 2, 12),
    ):
        labels = {"namespace": ns, "horizontalpodautoscaler": name}
        sc.metrics.gauge(
            "kube_horizontalpodautoscaler_status_current_replicas",
            labels,
            lambda _t, v=mn: v,
            help_text="Current number of replicas of pods managed by this autoscaler.",
        )
        sc.metrics.gauge(
            "kube_horizontalpodautoscaler_status_desired_replicas",
            labels,
            lambda _t, v=mn: v,
            help_text="Desired number of replicas of pods managed by this autoscaler.",
        )
        sc.metrics.gauge(
            "kube_horizontalpodautoscaler_spec_min_replicas", labels, lambda _t, v=mn: v
        )
        sc.metrics.gauge(
            "kube_horizontalpodautoscaler_spec_max_replicas", labels, lambda _t, v=mx: v
        )
        for status, val in (("true", 0), ("false", 1), ("unknown", 0)):
            sc.metrics.gauge(
                "kube_horizontalpodautoscaler_status_condition",
                {**labels, "condition": "ScalingActive", "status": status},
                lambda _t, v=val: v,
                help_text="The condition of this autoscaler.",
            )
    for dep, ns, replicas in (
        ("metrics-server", "kube-system", 0),
        ("search-api", "catalog", 3),
        ("frontend", "web", 3),
    ):
        sc.metrics.gauge(
            "kube_deployment_spec_replicas",
            {"namespace": ns, "deployment": dep},
            lambda _t, v=replicas: v,
            help_text="Number of desired pods for a deployment.",
        )
        sc.metrics.gauge(
            "kube_deployment_status_replicas_available",
            {"namespace": ns, "deployment": dep},
            lambda _t, v=replicas: v,
            help_text="The number of available replicas per deployment.",
        )
    sc.metrics.gauge(
        "aggregator_unavailable_apiservice",
        {"name": "v1beta1.metrics.k8s.io"},
        lambda _t: 1,
        help_text="Gauge of APIServices which are marked as unavailable broken down by "
        "APIService name.",
    )
    sc.metrics.counter(
        "apiserver_request",
        {
            "group": "metrics.k8s.io",
            "resource": "pods",
            "verb": "LIST",
            "code": "503",
            "version": "v1beta1",
        },
        lambda _t: 0.2,
        start=7020,
        integer=True,
        help_text="Counter of apiserver requests broken out for each verb, group, version, "
        "resource and HTTP response code.",
    )
    for p in search.pods:
        sc.metrics.counter(
            "container_cpu_usage_seconds",
            {"namespace": "catalog", "pod": p.name, "container": "search-api"},
            k.noisy(sc, lambda t: min(1.97, demand(t)), 0.02),
            start=sc.rng.uniform(20_000, 30_000),
            help_text="Cumulative cpu time consumed in seconds.",
        )
        sc.metrics.gauge(
            "kube_pod_container_resource_requests",
            {
                "namespace": "catalog",
                "pod": p.name,
                "container": "search-api",
                "node": p.node,
                "resource": "cpu",
                "unit": "core",
            },
            lambda _t: 1,
            help_text="The number of requested request resource by a container.",
        )
    for p in search.pods:
        sc.metrics.gauge(
            "container_memory_working_set_bytes",
            {"namespace": "catalog", "pod": p.name, "container": "search-api"},
            k.wobble(sc, 710 * k.MI, 0.03),
        )
    k.container_metrics(
        sc, "web", frontend.pods, "frontend", lambda t: 0.12 + total_rps(t) / 3300, 340 * k.MI
    )
    k.container_metrics(sc, "checkout", checkout.pods, "checkout-api", 0.16, 520 * k.MI)
    k.container_metrics(sc, "catalog", os_ss.pods, "opensearch", 0.6, 5.8 * k.GI)
    for p in search.pods:
        for code, share in (("200", 1.0), ("503", 0.0)):
            sc.metrics.counter(
                "http_requests",
                {"namespace": "catalog", "pod": p.name, "code": code, "handler": "/v1/search"},
                lambda t, c=code: per_pod(t) * (max(0.0, rho(t) - 0.9) * 1.5 if c == "503" else 1),
                start=sc.rng.uniform(2e7, 3e7) if share else 1200,
                integer=True,
                help_text="Total HTTP requests.",
            )
    for p in search.pods:
        sc.metrics.histogram(
            "http_request_duration_seconds",
            {"namespace": "catalog", "pod": p.name, "handler": "/v1/search"},
            per_pod,
            median,
            0.7,
            BUCKETS,
            start_count=sc.rng.uniform(2e7, 3e7),
            help_text="HTTP request latency.",
        )
    k.restarts_metric(sc, "catalog", search.pods, "search-api")
    k.restarts_metric(sc, "web", frontend.pods[1:2], "frontend", 1)

    # ---------------- logs ----------------
    start = sc.ago(minutes=60)
    for p in search.pods:
        for t in sc.poisson_times(start, sc.now, lambda _t: 1.2):
            took = max(4, round(1000 * median(t) * sc.rng.lognormvariate(0, 0.6)))
            sc.log(
                t,
                "catalog",
                p.name,
                "search-api",
                "search-api",
                "info",
                f'{{"level":"info","msg":"search served","q_len":{sc.rng.randint(3, 40)},'
                f'"hits":{sc.rng.randint(0, 900)},"took_ms":{took},"ranker":"bm25+ltr-v7"}}',
                p.node,
            )
        for t in sc.poisson_times(start, sc.now, lambda t: 6 * max(0.0, rho(t) - 0.82)):
            sc.log(
                t,
                "catalog",
                p.name,
                "search-api",
                "search-api",
                "warn",
                f'{{"level":"warn","msg":"request queue saturated","queued":'
                f'{sc.rng.randint(40, 400)},"wait_ms":{round(1000 * median(t))}}}',
                p.node,
            )
        for t in sc.poisson_times(start, sc.now, lambda t: 10 * max(0.0, rho(t) - 0.92)):
            sc.log(
                t,
                "catalog",
                p.name,
                "search-api",
                "search-api",
                "error",
                '{"level":"error","msg":"search failed","error":"context deadline exceeded",'
                '"deadline_ms":3000}',
                p.node,
                error__type="context.DeadlineExceeded",
            )
        for t in sc.poisson_times(start, sc.now, lambda _t: 0.1):
            sc.log(
                t,
                "catalog",
                p.name,
                "search-api",
                "search-api",
                "warn",
                '{"level":"warn","msg":"ltr model feature missing, using default",'
                '"feature":"ctr_7d"}',
                p.node,
            )
    for p in frontend.pods:
        for t in sc.poisson_times(start, sc.now, lambda t: 5 * max(0.0, rho(t) - 0.9)):
            sc.log(
                t,
                "web",
                p.name,
                "frontend",
                "frontend",
                "error",
                "upstream search-api failed: 504 Gateway Timeout after 3001ms "
                "(GET /v1/search?q=...)",
                p.node,
            )
        for t in sc.poisson_times(start, sc.now, lambda _t: 0.4):
            sc.log(
                t,
                "web",
                p.name,
                "frontend",
                "frontend",
                "info",
                f"GET /p/{sc.rng.randint(10000, 99999)} 200 {sc.rng.randint(30, 200)}ms",
                p.node,
            )
    k.background_logs(
        sc,
        "checkout",
        checkout.pods,
        "checkout-api",
        "checkout-api",
        0.5,
        [("info", "POST /v1/checkout 201 {ms}ms", 10), ("warn", "coupon {id} expired", 1)],
    )
    k.background_logs(
        sc,
        "catalog",
        os_ss.pods,
        "opensearch",
        "search-os",
        0.15,
        [
            (
                "info",
                "[INFO ][o.o.i.g.GatewayService] [search-os] recovered indices, took [{ms}ms]",
                1,
            ),
            (
                "warn",
                "[WARN ][o.o.m.j.JvmGcMonitorService] [search-os] [gc][young][{n}] duration "
                "[{ms}ms], collections [1]/[1.1s]",
                2,
            ),
        ],
    )
    for t in sc.poisson_times(start, sc.now, lambda t: 1.5 + total_rps(t) / 250):
        p = sc.rng.choice(plat.ingress.pods)
        target = sc.rng.choice(search.pods)
        lat = median(t) * sc.rng.lognormvariate(0, 0.7)
        status = 504 if lat > 3 else 200
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
                f"/api/search?q={sc.hexid(6)}",
                status,
                min(lat, 3.001),
                "catalog",
                "search-api",
                8080,
                target.ip,
            ),
            p.node,
            http__response__status_code=status,
        )

    sc.write(
        root,
        title="search-api saturated at the morning peak",
        report="""
search-api (catalog) is melting since ~8:30, p99 over 3s, frontend getting 504s on search. all 3
pods are pinned at ~2 cores. 2.14.0 with the new LTR ranker went out yesterday evening, I'm pretty
sure something in it is burning CPU. should we roll back search-api to 2.13.4?
""",
        category="autoscaling_limit",
        culprit=("Deployment", "kube-system", "metrics-server"),
        evidence=[
            "FailedGetResourceMetric",
            "unable to get metrics for resource cpu",
            "aggregator_unavailable_apiservice",
        ],
        fix=(
            "Scale kube-system/metrics-server back up (it was scaled to 0 with kubectl at 23:12 "
            "last night, outside Helm); every HPA has been unable to read CPU since then and sits "
            "at its minimum. Once metrics flow, the search-api HPA scales out (desired ~9-10)."
        ),
    )


def _hpa(
    sc: k.Scenario,
    ns: str,
    name: str,
    target: str,
    mn: int,
    mx: int,
    util: int,
    broken: datetime,
) -> k.Obj:
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name, "namespace": ns, "creationTimestamp": k.iso(sc.ago(days=200))},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
            "minReplicas": mn,
            "maxReplicas": mx,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": util},
                    },
                }
            ],
        },
        "status": {
            "currentReplicas": mn,
            "desiredReplicas": mn,
            "lastScaleTime": k.iso(broken - timedelta(minutes=42)),
            "currentMetrics": [{"type": ""}],
            "conditions": [
                {
                    "type": "AbleToScale",
                    "status": "True",
                    "reason": "SucceededGetScale",
                    "message": "the HPA controller was able to get the target's current scale",
                    "lastTransitionTime": k.iso(sc.ago(days=30)),
                },
                {
                    "type": "ScalingActive",
                    "status": "False",
                    "reason": "FailedGetResourceMetric",
                    "message": "the HPA was unable to compute the replica count: failed to get "
                    f"cpu utilization: {METRICS_ERR}",
                    "lastTransitionTime": k.iso(broken + timedelta(seconds=9)),
                },
                {
                    "type": "ScalingLimited",
                    "status": "True",
                    "reason": "TooFewReplicas",
                    "message": "the desired replica count is less than the minimum replica count",
                    "lastTransitionTime": k.iso(broken - timedelta(minutes=42)),
                },
            ],
        },
    }
