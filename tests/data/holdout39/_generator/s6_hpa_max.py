"""Kestrel Stays: a GitOps values change meant for staging set availability-api's HPA
maxReplicas from 20 to 4 last night; at today's evening peak the four pods saturate (CPU far
over target, event-loop lag, queueing) and the HPA cannot add any. Nothing errs in the
deployment itself."""

from __future__ import annotations

from datetime import datetime, timedelta

from .common import (
    Scenario,
    cumulative,
    event,
    histogram_samples,
    namespace,
    node,
    parse,
    simple_service,
    steps,
    ts,
    ts_ms,
    uid,
)

NOW = parse("2026-11-28T18:40:00Z")
NS = "bookings"
CHANGE = parse("2026-11-27T22:12:10Z")
PEAK = parse("2026-11-28T17:30:00Z")
NODES = [
    f"gke-kestrel-prod-general-8f21c0de-{s}"
    for s in ("2m4x", "7bqz", "c9lk", "fh3w", "k0pd", "vx8r", "wq55")
]
BOUNDS = [0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0]


def _hpa(
    name: str,
    created: datetime,
    minimum: int,
    maximum: int,
    current: int,
    desired: int,
    utilization: int,
    limited: bool,
    managed_at: datetime,
    limited_since: datetime,
    scaled_at: datetime,
) -> dict[str, object]:
    conditions = [
        {
            "type": "AbleToScale",
            "status": "True",
            "reason": "ReadyForNewScale",
            "message": "recommended size matches current size",
            "lastTransitionTime": ts(scaled_at),
        },
        {
            "type": "ScalingActive",
            "status": "True",
            "reason": "ValidMetricFound",
            "message": "the HPA was able to successfully calculate a replica count from cpu "
            "resource utilization (percentage of request)",
            "lastTransitionTime": ts(created),
        },
        {
            "type": "ScalingLimited",
            "status": "True" if limited else "False",
            "reason": "TooManyReplicas" if limited else "DesiredWithinRange",
            "message": "the desired replica count is more than the maximum replica count"
            if limited
            else "the desired count is within the acceptable range",
            "lastTransitionTime": ts(limited_since),
        },
    ]
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": uid("HorizontalPodAutoscaler", NS, name),
            "creationTimestamp": ts(created),
            "labels": {
                "app.kubernetes.io/name": name,
                "app.kubernetes.io/instance": f"{name}-prod",
                "argocd.argoproj.io/instance": f"bookings-{name}",
            },
            "managedFields": [
                {
                    "manager": "argocd-controller",
                    "operation": "Apply",
                    "apiVersion": "autoscaling/v2",
                    "time": ts(managed_at),
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:spec": {"f:maxReplicas": {}, "f:minReplicas": {}}},
                },
                {
                    "manager": "kube-controller-manager",
                    "operation": "Update",
                    "apiVersion": "autoscaling/v2",
                    "time": ts(scaled_at),
                    "fieldsType": "FieldsV1",
                    "subresource": "status",
                    "fieldsV1": {"f:status": {}},
                },
            ],
        },
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
            "minReplicas": minimum,
            "maxReplicas": maximum,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": 65},
                    },
                }
            ],
            "behavior": {"scaleDown": {"stabilizationWindowSeconds": 300}},
        },
        "status": {
            "currentReplicas": current,
            "desiredReplicas": desired,
            "lastScaleTime": ts(scaled_at),
            "currentMetrics": [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "current": {
                            "averageUtilization": utilization,
                            "averageValue": f"{utilization * 5}m",
                        },
                    },
                }
            ],
            "conditions": conditions,
        },
    }


def build() -> Scenario:
    sc = Scenario(
        id="bookings-availability-peak-capped",
        title="Availability search crawling at the evening peak, nothing deployed today",
        now=NOW,
        report="""
availability search is crawling since ~17:30, p99 around 4s and the app shows spinners.
nothing was deployed today (checked argo). is the inventory db slow again or is it redis?
same traffic as every friday evening as far as I can tell
""",
        truth={
            "category": "autoscaling_limit",
            "culprit": {"kind": "Deployment", "namespace": NS, "name": "availability-api"},
            "evidence": [
                "ScalingLimited",
                "the desired replica count is more than the maximum replica count",
                "maxReplicas: 4",
                "averageUtilization",
            ],
            "fix": "Restore availability-api's HPA maxReplicas to 20 in the GitOps values "
            "(yesterday's 22:12 sync set min=max=4, staging values); the pods are "
            "CPU-saturated at the cap and queue requests. The database and Redis are "
            "fine.",
        },
    )
    created = NOW - timedelta(days=420)
    for ns in (NS, "argocd", "payments"):
        sc.add(namespace(ns, created))
    for i, name in enumerate(NODES):
        sc.add(
            node(
                name,
                NOW - timedelta(days=4, hours=5 * i),
                NOW,
                cpu="8",
                memory="32Gi",
                region="europe-west1",
                zone="bcdbcdb"[i],
                instance="e2-standard-8",
                kubelet="v1.30.5-gke.1443001",
            )
        )
    rng = sc.rng
    name = "availability-api"
    _, pods = simple_service(
        sc,
        NS,
        name,
        "europe-west1-docker.pkg.dev/kestrel-prod/services/availability-api:5.21.0",
        replicas=4,
        nodes=NODES,
        created=created,
        rolled=NOW - timedelta(days=3, hours=2),
        port=8080,
        number=96,
        cpu="500m",
        memory="512Mi",
        memory_limit="768Mi",
        env=[
            {"name": "NODE_ENV", "value": "production"},
            {"name": "UV_THREADPOOL_SIZE", "value": "8"},
            {"name": "INVENTORY_DB_HOST", "value": "10.31.0.5"},
            {"name": "REDIS_URL", "value": "redis://availability-cache.bookings.svc:6379"},
        ],
        readiness="/health/ready",
    )
    sc.add(
        _hpa(
            name,
            created,
            4,
            4,
            4,
            4,
            191,
            True,
            CHANGE,
            PEAK + timedelta(minutes=4),
            CHANGE + timedelta(minutes=20),
        )
    )
    simple_service(
        sc,
        NS,
        "booking-api",
        "europe-west1-docker.pkg.dev/kestrel-prod/services/booking-api:3.4.2",
        replicas=6,
        nodes=NODES,
        created=created,
        rolled=NOW - timedelta(days=2, hours=6),
        number=58,
        memory="512Mi",
        cpu="500m",
    )
    sc.add(
        _hpa(
            "booking-api",
            created,
            4,
            16,
            6,
            6,
            58,
            False,
            created + timedelta(days=3),
            created + timedelta(days=3),
            NOW - timedelta(minutes=40),
        )
    )
    _, pricing = simple_service(
        sc,
        NS,
        "pricing-worker",
        "europe-west1-docker.pkg.dev/kestrel-prod/services/pricing-worker:1.9.0",
        replicas=2,
        nodes=NODES,
        created=created,
        rolled=NOW - timedelta(days=5),
        number=21,
        expose=False,
        readiness=None,
    )
    sc.add(
        _hpa(
            "pricing-worker",
            created,
            2,
            10,
            2,
            2,
            12,
            False,
            created + timedelta(days=3),
            created + timedelta(days=3),
            NOW - timedelta(days=2),
        )
    )
    _, cache = simple_service(
        sc,
        NS,
        "availability-cache",
        "redis:7.2.4",
        replicas=1,
        nodes=NODES[3:],
        created=created,
        rolled=NOW - timedelta(days=6),
        port=6379,
        number=4,
        readiness=None,
        memory="1Gi",
    )
    _, gateway = simple_service(
        sc,
        NS,
        "search-gateway",
        "europe-west1-docker.pkg.dev/kestrel-prod/services/search-gateway:2.2.7",
        replicas=3,
        nodes=NODES,
        created=created,
        rolled=NOW - timedelta(days=1, hours=22),
        number=40,
        memory="256Mi",
    )
    sc.add(
        event(
            NS,
            "HorizontalPodAutoscaler",
            "pricing-worker",
            "FailedGetResourceMetric",
            "failed to get cpu utilization: unable to get metrics for resource cpu: no "
            "metrics returned from resource metrics API",
            NOW - timedelta(minutes=52),
            NOW - timedelta(minutes=51),
            count=2,
            type_="Warning",
            component="horizontal-pod-autoscaler",
            api="autoscaling/v2",
        )
    )
    # argocd log of yesterday's sync
    sc.doc(
        CHANGE - timedelta(seconds=9),
        "argocd",
        "argocd-application-controller-0",
        "application-controller",
        "argocd",
        "info",
        "Initiated automated sync to '3e9f0b2' application=bookings-availability-api",
    )
    sc.doc(
        CHANGE,
        "argocd",
        "argocd-application-controller-0",
        "application-controller",
        "argocd",
        "info",
        "autoscaling/HorizontalPodAutoscaler bookings/availability-api "
        "configured application=bookings-availability-api",
    )

    def load(m: datetime) -> float:
        """Offered requests per second to availability-api, all pods together."""
        hour = m.hour + m.minute / 60
        base = 260.0
        if 17.0 <= hour < 21.5:
            ramp = min((hour - 17.0) / 0.75, 1.0)
            return base + 1150.0 * ramp
        return base

    capacity = 4 * 128.0  # what four single-threaded pods serve per second

    # --- logs (pino JSON)
    for p in pods:
        pod_name = p["metadata"]["name"]
        t = NOW - timedelta(hours=2)
        while t < NOW:
            t += timedelta(seconds=rng.randint(3, 10))
            if t >= NOW:
                break
            over = max(load(t) / capacity, 0.3)
            ms = int(rng.lognormvariate(3.6, 0.4) * (1 if over < 0.9 else over**3.3))
            millis = int(t.timestamp() * 1000)
            line = (
                f'{{"level":30,"time":{millis},"pid":1,"hostname":"{pod_name}","req":'
                f'{{"method":"GET","url":"/v2/availability?hotel={rng.randint(1000, 99999)}'
                f'&nights={rng.randint(1, 9)}"}},"res":{{"statusCode":200}},'
                f'"responseTime":{ms},"msg":"request completed"}}'
            )
            sc.log(NS, pod_name, name, line)
            if rng.random() < 0.1:
                sc.doc(
                    t,
                    NS,
                    pod_name,
                    name,
                    name,
                    "info",
                    f"request completed in {ms}ms",
                    **{"http.response.status_code": 200, "event.duration": ms * 1_000_000},
                )
            if over > 1.1 and rng.random() < 0.12:
                lag = int(200 * over + rng.randint(0, 300))
                w = f"event loop lag {lag}ms exceeds 200ms"
                sc.log(
                    NS,
                    pod_name,
                    name,
                    f'{{"level":40,"time":{millis + 7},"pid":1,'
                    f'"hostname":"{pod_name}","lagMs":{lag},"msg":"{w}"}}',
                )
                sc.doc(t, NS, pod_name, name, name, "warn", w)
    for p in gateway:
        pod_name = p["metadata"]["name"]
        t = NOW - timedelta(hours=2)
        while t < NOW:
            t += timedelta(seconds=rng.randint(10, 40))
            if t >= NOW:
                break
            over = load(t) / capacity
            if over > 1.5 and rng.random() < 0.25:
                msg = (
                    "upstream availability-api.bookings.svc:8080 slow: 3000ms budget "
                    "exceeded, returned partial results"
                )
                sc.log(NS, pod_name, "search-gateway", f"{ts_ms(t)} WARN {msg}")
                sc.doc(t, NS, pod_name, "search-gateway", "search-gateway", "warn", msg)
            else:
                sc.log(
                    NS,
                    pod_name,
                    "search-gateway",
                    f"{ts_ms(t)} INFO search ok took={rng.randint(80, 400)}ms",
                )

    # --- metrics
    times = steps(NOW - timedelta(hours=3), NOW)
    for p in pods:
        pod_name = p["metadata"]["name"]
        lab = {"namespace": NS, "pod": pod_name, "container": name}

        def served(m: datetime) -> float:
            return min(load(m), capacity * 0.98) / 4

        def shape(m: datetime) -> list[float]:
            over = load(m) / capacity
            if over < 0.85:
                return [0.55, 0.9, 0.985, 0.996, 0.999, 1.0, 1.0]
            if over < 1.1:
                return [0.25, 0.55, 0.85, 0.95, 0.99, 0.998, 1.0]
            return [0.02, 0.05, 0.14, 0.3, 0.52, 0.86, 0.99]

        sc.metrics.counter(
            "http_requests",
            {"namespace": NS, "pod": pod_name, "service": name, "code": "200"},
            cumulative(times, served),
        )
        sc.metrics.histogram(
            "http_request_duration_seconds",
            {"namespace": NS, "pod": pod_name, "service": name},
            BOUNDS,
            histogram_samples(times, served, shape, BOUNDS),
        )
        sc.metrics.counter(
            "container_cpu_usage_seconds",
            lab,
            cumulative(
                times,
                lambda m: min(0.18 + load(m) / capacity * 0.8, 0.97) + rng.uniform(-0.02, 0.02),
            ),
        )
        sc.metrics.gauge(
            "container_memory_working_set_bytes",
            lab,
            [(m, 231e6 + rng.uniform(-8e6, 8e6)) for m in times[::5]],
        )
        sc.metrics.counter("kube_pod_container_status_restarts", lab, [(m, 0) for m in times[::5]])
        sc.metrics.gauge(
            "nodejs_eventloop_lag_p99_seconds",
            {"namespace": NS, "pod": pod_name, "service": name},
            [
                (
                    m,
                    0.012
                    if load(m) / capacity < 0.9
                    else round(0.2 * load(m) / capacity + rng.uniform(0, 0.2), 3),
                )
                for m in times
            ],
        )
    day = steps(NOW - timedelta(hours=26), NOW, 300)
    hpa_lab = {"namespace": NS, "horizontalpodautoscaler": name}

    def wanted(m: datetime) -> int:
        return max(4, min(20, -(-int(load(m) / 128.0 / 0.65 * 0.55) // 1)))

    sc.metrics.gauge(
        "kube_horizontalpodautoscaler_spec_max_replicas",
        hpa_lab,
        [(m, 20 if m < CHANGE else 4) for m in day],
    )
    sc.metrics.gauge(
        "kube_horizontalpodautoscaler_spec_min_replicas", hpa_lab, [(m, 4) for m in day]
    )
    sc.metrics.gauge(
        "kube_horizontalpodautoscaler_status_desired_replicas",
        hpa_lab,
        [(m, wanted(m) if m < CHANGE else 4) for m in day],
    )
    sc.metrics.gauge(
        "kube_horizontalpodautoscaler_status_current_replicas",
        hpa_lab,
        [(m, wanted(m) if m < CHANGE else 4) for m in day],
    )
    sc.metrics.gauge(
        "kube_deployment_status_replicas_available",
        {"namespace": NS, "deployment": name},
        [(m, wanted(m) if m < CHANGE else 4) for m in day],
    )
    _ = (cache, pricing)
    return sc
