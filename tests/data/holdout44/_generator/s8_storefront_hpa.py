"""8. autoscaling_limit: an HPA pinned at an old maxReplicas while a campaign doubled traffic."""

from __future__ import annotations

import math
from datetime import timedelta

from . import _kit as k

SID = "storefront-hpa-at-ceiling"
NOW = "2026-12-14T19:30:00Z"
NS = "shop"
IMG = "registry.quillmark.io/shop/storefront:11.8.2"


def build() -> None:
    s = k.Scn(SID, NOW, 4408)
    now = s.now
    grid = k.grid(s.ago(hours=3), now, 120)
    old = s.ago(days=800)
    big = dict(
        instance="c6i.4xlarge",
        cpu="16",
        alloc_cpu="15890m",
        memory="32408900Ki",
        alloc_mem="31372100Ki",
    )
    nodes = [
        k.node(
            f"ip-10-12-{a}-{b}.eu-west-1.compute.internal",
            z,
            s.ago(days=d),
            s.ago(seconds=s.rng.randint(2, 35)),
            **big,
        )
        for a, b, z, d in [
            (3, 77, "eu-west-1a", 9),
            (14, 120, "eu-west-1a", 9),
            (22, 9, "eu-west-1b", 9),
            (29, 244, "eu-west-1b", 4),
            (40, 61, "eu-west-1c", 9),
            (47, 18, "eu-west-1c", 2),
        ]
    ]
    nn = [n["metadata"]["name"] for n in nodes]
    s.add(*(k.namespace(n, old) for n in (NS, "data", "marketing")))
    s.add(*nodes)

    campaign = s.ago(minutes=50)
    # HPA steps during the surge (minutes after the campaign send)
    steps = [(2.5, 7), (6.0, 9), (10.5, 11), (17.0, 12)]

    def replicas_at(t: float) -> int:
        r = 5
        for dm, n in steps:
            if t >= campaign.timestamp() + dm * 60:
                r = n
        return r

    def rps_at(t: float) -> float:
        base = 370 + 40 * math.sin((t - grid[0]) / 3600)
        if t < campaign.timestamp():
            return base
        ramp = min(1.0, (t - campaign.timestamp()) / 600)
        return base + ramp * 1680

    c = k.container(
        "storefront",
        IMG,
        ports=[{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
        env=[
            {"name": "NODE_OPTIONS", "value": "--max-old-space-size=768"},
            {"name": "CATALOG_DB_HOST", "value": "catalog-db.data.svc"},
            {"name": "UV_THREADPOOL_SIZE", "value": "8"},
        ],
        resources=k.res("500m", "1Gi", "1", "1Gi"),
        readiness=k.http_probe("/healthz", "http", period=5, timeout=2),
        liveness=k.http_probe("/livez", "http", period=10, initial=20, timeout=3, failure=6),
    )
    tm = k.template(
        {"app.kubernetes.io/name": "storefront", "app.kubernetes.io/part-of": "shop"}, [c]
    )
    dep = k.deployment(
        "storefront",
        NS,
        s.ago(days=780),
        tm,
        12,
        88,
        {"replicas": 12, "updatedReplicas": 12, "readyReplicas": 12, "availableReplicas": 12},
        [],
        generation=301,
    )
    h = s.rs_hash()
    rs = k.replicaset(dep, h, s.ago(days=4, hours=6), 88, tm, 12)
    rs_prev = k.replicaset(dep, s.rs_hash(), s.ago(days=11), 87, tm, 0)
    rs_prev["spec"]["template"]["spec"]["containers"][0]["image"] = (
        "registry.quillmark.io/shop/storefront:11.8.1"
    )
    dep["status"]["conditions"] = k.dep_conditions(
        s.ago(days=4, hours=6) + timedelta(minutes=2),
        campaign + timedelta(minutes=17, seconds=40),
        rs["metadata"]["name"],
    )
    s.add(dep, rs, rs_prev)
    pods, created_at = [], []
    for i in range(12):
        if i < 5:
            cr = s.ago(days=4, hours=6) + timedelta(seconds=30 * i)
        else:
            dm = next(d for d, n in steps if n > i)
            cr = campaign + timedelta(minutes=dm, seconds=2 * (i - 4))
        node_name = nn[i % 6]
        pn = f"storefront-{h}-{s.pod_suffix()}"
        p = k.pod(
            s,
            rs,
            pn,
            node_name,
            k.pod_ip(s, node_name),
            cr,
            [k.cs_running(c, cr + timedelta(seconds=2))],
            True,
            ready_since=cr + timedelta(seconds=9),
        )
        pods.append(p)
        created_at.append(cr.timestamp())
        s.add(p)

    last_scale = campaign + timedelta(minutes=17)
    hpa = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {
            "name": "storefront",
            "namespace": NS,
            "uid": k.uid("hpa", NS, "storefront"),
            "creationTimestamp": k.ts(s.ago(days=431)),
            "labels": {"app.kubernetes.io/name": "storefront"},
        },
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "storefront"},
            "minReplicas": 4,
            "maxReplicas": 12,
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
            "observedGeneration": 1,
            "lastScaleTime": k.ts(last_scale),
            "currentReplicas": 12,
            "desiredReplicas": 12,
            "currentMetrics": [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "current": {"averageValue": "697m", "averageUtilization": 139},
                    },
                }
            ],
            "conditions": [
                {
                    "type": "AbleToScale",
                    "status": "True",
                    "lastTransitionTime": k.ts(last_scale),
                    "reason": "ReadyForNewScale",
                    "message": "recommended size matches current size",
                },
                {
                    "type": "ScalingActive",
                    "status": "True",
                    "lastTransitionTime": k.ts(s.ago(days=6, hours=20)),
                    "reason": "ValidMetricFound",
                    "message": "the HPA was able to successfully calculate a replica count from "
                    "cpu resource "
                    "utilization (percentage of request)",
                },
                {
                    "type": "ScalingLimited",
                    "status": "True",
                    "lastTransitionTime": k.ts(last_scale),
                    "reason": "TooManyReplicas",
                    "message": "the desired replica count is more than the maximum replica count",
                },
            ],
        },
    }
    s.add(hpa)

    # ---- neighbours
    _sd, _srs, _spods = k.healthy_deployment(
        s,
        nn,
        "search",
        NS,
        "registry.quillmark.io/shop/search:5.2.0",
        4,
        s.ago(days=600),
        req_cpu="500m",
        req_mem="512Mi",
        lim_mem="1Gi",
    )
    shpa = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {
            "name": "search",
            "namespace": NS,
            "uid": k.uid("hpa", NS, "search"),
            "creationTimestamp": k.ts(s.ago(days=200)),
        },
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "search"},
            "minReplicas": 2,
            "maxReplicas": 20,
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
            "observedGeneration": 1,
            "lastScaleTime": k.ts(campaign + timedelta(minutes=4)),
            "currentReplicas": 4,
            "desiredReplicas": 4,
            "currentMetrics": [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "current": {"averageValue": "301m", "averageUtilization": 60},
                    },
                }
            ],
            "conditions": [
                {
                    "type": "AbleToScale",
                    "status": "True",
                    "lastTransitionTime": k.ts(campaign + timedelta(minutes=4)),
                    "reason": "ReadyForNewScale",
                    "message": "recommended size matches current size",
                },
                {
                    "type": "ScalingActive",
                    "status": "True",
                    "lastTransitionTime": k.ts(s.ago(days=6)),
                    "reason": "ValidMetricFound",
                    "message": "the HPA was able to successfully calculate a replica count from "
                    "cpu resource "
                    "utilization (percentage of request)",
                },
                {
                    "type": "ScalingLimited",
                    "status": "False",
                    "lastTransitionTime": k.ts(s.ago(days=6)),
                    "reason": "DesiredWithinRange",
                    "message": "the desired count is within the acceptable range",
                },
            ],
        },
    }
    s.add(shpa)
    _cd, _crs, _cpods = k.healthy_deployment(
        s, nn, "cart-api", NS, "registry.quillmark.io/shop/cart-api:3.3.0", 3, s.ago(days=600)
    )
    _md, _mrs, mpods = k.healthy_deployment(
        s,
        nn,
        "campaign-scheduler",
        "marketing",
        "registry.quillmark.io/marketing/campaign-scheduler:1.11.0",
        1,
        s.ago(days=300),
    )
    dbc = k.container(
        "postgres",
        "postgres:15.7",
        ports=[{"name": "postgres", "containerPort": 5432, "protocol": "TCP"}],
        resources=k.res("4", "16Gi", None, "16Gi"),
        readiness={
            "exec": {"command": ["pg_isready", "-U", "postgres"]},
            "periodSeconds": 10,
            "timeoutSeconds": 5,
            "successThreshold": 1,
            "failureThreshold": 6,
        },
    )
    dtm = k.template({"app.kubernetes.io/name": "catalog-db"}, [dbc])
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {
            "name": "catalog-db",
            "namespace": "data",
            "uid": k.uid("sts", "data", "catalog-db"),
            "generation": 6,
            "creationTimestamp": k.ts(s.ago(days=790)),
            "labels": {"app.kubernetes.io/name": "catalog-db"},
        },
        "spec": {
            "replicas": 1,
            "serviceName": "catalog-db",
            "podManagementPolicy": "OrderedReady",
            "selector": {"matchLabels": {"app.kubernetes.io/name": "catalog-db"}},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
            "template": dtm,
        },
        "status": {
            "replicas": 1,
            "readyReplicas": 1,
            "currentReplicas": 1,
            "updatedReplicas": 1,
            "availableReplicas": 1,
            "observedGeneration": 6,
            "currentRevision": "catalog-db-7b8f9d6c4d",
            "updateRevision": "catalog-db-7b8f9d6c4d",
            "collisionCount": 0,
        },
    }
    dst = s.ago(days=6, hours=11)
    dbp = k.pod(
        s,
        None,
        "catalog-db-0",
        nn[4],
        k.pod_ip(s, nn[4]),
        dst,
        [k.cs_running(dbc, dst + timedelta(seconds=3))],
        True,
        owner={
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "name": "catalog-db",
            "uid": sts["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
            "namespace": "data",
        },
        tmpl=dtm,
    )
    dbp["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"] = "catalog-db-0"
    s.add(sts, dbp)
    s.add(
        k.service(
            "storefront",
            NS,
            s.ago(days=780),
            {"app.kubernetes.io/name": "storefront"},
            [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": "http"}],
            "172.20.120.5",
        )
    )
    s.add(
        k.endpoints(
            "storefront",
            NS,
            s.ago(days=780),
            pods,
            [{"name": "http", "port": 8080, "protocol": "TCP"}],
        )
    )

    # ---- events
    evs = []
    prev = 5
    for dm, n in steps:
        t = campaign + timedelta(minutes=dm)
        evs.append(
            k.event(
                NS,
                hpa,
                "SuccessfulRescale",
                f"New size: {n}; reason: cpu resource utilization (percentage of request) above "
                "target",
                t,
                t,
                1,
                "Normal",
                "horizontal-pod-autoscaler",
            )
        )
        evs.append(
            k.event(
                NS,
                dep,
                "ScalingReplicaSet",
                f"Scaled up replica set {rs['metadata']['name']} to {n} from {prev}",
                t,
                t,
                1,
                "Normal",
                "deployment-controller",
            )
        )
        prev = n
    t = campaign + timedelta(minutes=4)
    evs.append(
        k.event(
            NS,
            shpa,
            "SuccessfulRescale",
            "New size: 4; reason: cpu resource utilization (percentage of request) above target",
            t,
            t,
            1,
            "Normal",
            "horizontal-pod-autoscaler",
        )
    )
    for p, cr in zip(pods[5:], created_at[5:], strict=False):
        pn = p["metadata"]["name"]
        ct = k.datetime.fromtimestamp(cr, k.UTC)
        evs.append(
            k.event(
                NS,
                p,
                "Scheduled",
                f"Successfully assigned {NS}/{pn} to {p['spec']['nodeName']}",
                ct,
                ct,
                1,
                "Normal",
                "default-scheduler",
            )
        )
        evs.append(
            k.event(
                NS,
                p,
                "Unhealthy",
                f'Readiness probe failed: Get "http://{p["status"]["podIP"]}:8080/healthz": '
                "context deadline "
                "exceeded (Client.Timeout exceeded while awaiting headers)",
                ct + timedelta(minutes=6),
                s.ago(minutes=s.rng.randint(2, 12)),
                s.rng.randint(1, 3),
                "Warning",
                "kubelet",
                p["spec"]["nodeName"],
                "spec.containers{storefront}",
            )
        )
    s.add(*evs)

    # ---- logs
    mp = mpods[0]["metadata"]["name"]
    s.log(
        campaign - timedelta(minutes=1),
        "marketing",
        mp,
        "campaign-scheduler",
        "campaign-scheduler",
        "info",
        "campaign winter-sale-2026 starting: channels=email,push audience=1652345",
    )
    s.log(
        campaign + timedelta(seconds=40),
        "marketing",
        mp,
        "campaign-scheduler",
        "campaign-scheduler",
        "info",
        "campaign winter-sale-2026 sent: email=1241112 push=411233 landing=https://shop.quillmark.io/sale/winter",
    )
    dbn = "catalog-db-0"
    lt0 = s.ago(hours=2)
    t = lt0
    while t < now:
        dur = s.rng.uniform(1100, 2900)
        s.log(
            t,
            "data",
            dbn,
            "postgres",
            "postgres",
            "warn",
            f"{t.strftime('%Y-%m-%d %H:%M:%S')}.{s.rng.randint(100, 999)} UTC "
            f"[{s.rng.randint(20000, 40000)}] "
            f"metabase@catalog LOG:  duration: {dur:.3f} ms  execute <unnamed>: SELECT "
            "date_trunc('hour', o.created_at) AS "
            "h, count(*), sum(o.total_cents) FROM orders o JOIN order_lines l ON l.order_id = "
            "o.id WHERE o.created_at > "
            "$1 GROUP BY 1 ORDER BY 1",
            **{"event.duration": int(dur * 1e6)},
        )
        t += timedelta(minutes=s.rng.randint(3, 8))
    t = lt0
    while t < now:
        i = s.rng.randint(0, 11)
        if created_at[i] < t.timestamp():
            surge = t >= campaign + timedelta(minutes=3)
            lat = s.rng.randint(400, 1400) if surge else s.rng.randint(40, 160)
            lvl = "warn" if lat > 1000 else "info"
            p = pods[i]["metadata"]["name"]
            path = s.rng.choice(
                ["/sale/winter", "/p/merino-crew", "/c/outerwear", "/", "/sale/winter?page=2"]
            )
            s.log(
                t,
                NS,
                p,
                "storefront",
                "storefront",
                lvl,
                f'{{"level":"{lvl}","msg":"request","method":"GET","path":"{path}","status":200,"ms":{lat},'
                f'"db_ms":{s.rng.randint(2, 11)},"eventLoopLagMs":'
                f"{s.rng.randint(120, 600) if surge else s.rng.randint(1, 9)}}}",
                **{"http.response.status_code": 200, "event.duration": lat * 1000000},
            )
        t += timedelta(seconds=s.rng.uniform(3, 7))
    for p in pods:
        cr = k.parse(p["metadata"]["creationTimestamp"])
        s.podlog(
            NS,
            p["metadata"]["name"],
            "storefront",
            [
                (
                    f'{{"level":"info","msg":"storefront 11.8.2 listening on '
                    f':8080","time":"{k.ts(cr + timedelta(seconds=3))}"}}'
                ),
                (
                    f'{{"level":"info","msg":"connected to catalog-db.data.svc:5432 '
                    f'pool=20","time":"{k.ts(cr + timedelta(seconds=4))}"}}'
                ),
            ],
        )

    # ---- metrics
    m = s.metrics
    for name, pts in [
        ("kube_horizontalpodautoscaler_spec_max_replicas", [(t, 12) for t in grid][::5]),
        ("kube_horizontalpodautoscaler_spec_min_replicas", [(t, 4) for t in grid][::5]),
        (
            "kube_horizontalpodautoscaler_status_current_replicas",
            [(t, replicas_at(t)) for t in grid],
        ),
        (
            "kube_horizontalpodautoscaler_status_desired_replicas",
            [
                (t, min(12, math.ceil(replicas_at(t) * _util(rps_at(t), replicas_at(t)) / 70)))
                for t in grid
            ],
        ),
    ]:
        m.series(
            name,
            "gauge",
            HELP[name],
            {"namespace": NS, "horizontalpodautoscaler": "storefront"},
            pts,
        )
    m.series(
        "kube_horizontalpodautoscaler_spec_target_metric",
        "gauge",
        "The metric specifications used by this autoscaler.",
        {
            "namespace": NS,
            "horizontalpodautoscaler": "storefront",
            "metric_name": "cpu",
            "metric_target_type": "utilization",
        },
        [(t, 70) for t in grid][::5],
    )
    m.series(
        "kube_horizontalpodautoscaler_status_target_metric",
        "gauge",
        "The current metric status used by this autoscaler.",
        {
            "namespace": NS,
            "horizontalpodautoscaler": "storefront",
            "metric_name": "cpu",
            "metric_target_type": "utilization",
        },
        [(t, round(_util(rps_at(t), replicas_at(t)))) for t in grid],
    )
    for i, p in enumerate(pods):
        pn = p["metadata"]["name"]
        pts = [t for t in grid if t >= created_at[i]]

        def cores(t):
            return min(0.97, _util(rps_at(t), replicas_at(t)) / 100 * 0.5)

        m.series(
            "container_cpu_usage_seconds",
            "counter",
            "Cumulative cpu time consumed by the container in core-seconds",
            {"namespace": NS, "pod": pn, "container": "storefront"},
            k.counter_points(
                pts,
                cores,
                start=0.0 if i >= 5 else float(s.rng.randint(10**5, 2 * 10**5)),
                jitter=lambda: s.rng.uniform(0.95, 1.05),
            ),
        )
        if i % 3 == 0:
            per = k.counter_points(
                pts, lambda t: 10.0, start=0.0 if i >= 5 else float(s.rng.randint(10**6, 2 * 10**6))
            )
            thr = k.counter_points(
                pts,
                lambda t: 10.0 * (0.09 if rps_at(t) > 900 else 0.004),
                start=0.0 if i >= 5 else float(s.rng.randint(1000, 9000)),
            )
            m.series(
                "container_cpu_cfs_periods",
                "counter",
                "Number of elapsed enforcement period intervals.",
                {"namespace": NS, "pod": pn, "container": "storefront"},
                per,
            )
            m.series(
                "container_cpu_cfs_throttled_periods",
                "counter",
                "Number of throttled period intervals.",
                {"namespace": NS, "pod": pn, "container": "storefront"},
                thr,
            )
    for code, share in (("200", 0.994), ("504", 0.006)):

        def rf(t, share=share, code=code):
            sat = rps_at(t) > 900
            if code == "504":
                return rps_at(t) * (0.006 if sat else 0.0002)
            return rps_at(t) * (0.994 if sat else 0.9998)

        m.series(
            "http_requests",
            "counter",
            "Total HTTP requests",
            {"namespace": NS, "service": "storefront", "code": code},
            k.counter_points(
                grid,
                rf,
                start=float(s.rng.randint(10**8, 2 * 10**8)) if code == "200" else 51234.0,
                jitter=lambda: s.rng.uniform(0.97, 1.03),
            ),
        )
    # latency histogram, aggregated over pods
    les = ["0.1", "0.25", "0.5", "1", "2.5", "+Inf"]
    shares_ok = [0.55, 0.93, 0.985, 0.996, 0.9995, 1.0]
    shares_sat = [0.04, 0.16, 0.42, 0.83, 0.985, 1.0]
    parts: dict[str, list] = {f"_bucket|{le}": [] for le in les}
    parts["_sum"], parts["_count"] = [], []
    acc = [0.0] * len(les)
    asum, acnt = 0.0, 0.0
    prev_t = None
    for t in grid:
        if prev_t is not None:
            n = rps_at(t) * (t - prev_t)
            sat = rps_at(t) > 900
            sh = shares_sat if sat else shares_ok
            for j in range(len(les)):
                acc[j] += n * sh[j]
            acnt += n
            asum += n * (0.74 if sat else 0.096)
        for j, le in enumerate(les):
            parts[f"_bucket|{le}"].append((t, round(acc[j])))
        parts["_sum"].append((t, round(asum, 1)))
        parts["_count"].append((t, round(acnt)))
        prev_t = t
    m.multi(
        "http_request_duration_seconds",
        "histogram",
        "HTTP request latency",
        {"namespace": NS, "service": "storefront"},
        parts,
    )
    m.series(
        "pg_stat_activity_count",
        "gauge",
        "number of connections in this state",
        {"namespace": "data", "pod": "catalog-db-0", "datname": "catalog", "state": "active"},
        [(t, s.rng.randint(6, 14)) for t in grid][::2],
    )
    m.series(
        "storefront_db_query_duration_seconds_p95",
        "gauge",
        "p95 of catalog-db query time seen by storefront (recording rule)",
        {"namespace": NS, "service": "storefront"},
        [(t, round(s.rng.uniform(0.006, 0.011), 4)) for t in grid][::2],
    )
    for n in nodes:
        m.series(
            "kube_node_status_allocatable",
            "gauge",
            "The allocatable for different resources of a node.",
            {"node": n["metadata"]["name"], "resource": "cpu", "unit": "core"},
            [(t, 15.89) for t in grid][::10],
        )

    s.write(
        "storefront slow during the winter sale",
        "storefront p95 went from ~150ms to almost 1s since about 18:45, right when the winter "
        "sale went out. pages are "
        "crawling. postgres is logging slow queries (2-3 s) - is catalog-db the bottleneck? the "
        "HPA should be taking "
        "care of the load on our side.\n",
        {
            "category": "autoscaling_limit",
            "culprit": {"kind": "Deployment", "namespace": NS, "name": "storefront"},
            "evidence": [
                "ScalingLimited",
                "TooManyReplicas",
                "maxReplicas: 12",
                "the desired replica count is more than the maximum replica count",
            ],
            "fix": "The storefront HPA has sat at maxReplicas 12 (set 14 months ago) since 19:07 "
            "with CPU at ~139% of "
            "requests against a 70% target; the nodes have spare capacity. Raise maxReplicas "
            "(about 24 for this "
            "traffic) and revisit it before campaigns; the slow queries come from the metabase "
            "reporting user, "
            "not from storefront.",
        },
    )


HELP = {
    "kube_horizontalpodautoscaler_spec_max_replicas": (
        "Upper limit for the number of pods that can be set by the autoscaler; cannot be smaller "
        "than MinReplicas."
    ),
    "kube_horizontalpodautoscaler_spec_min_replicas": (
        "Lower limit for the number of pods that can be set by the autoscaler, default 1."
    ),
    "kube_horizontalpodautoscaler_status_current_replicas": (
        "Current number of replicas of pods managed by this autoscaler."
    ),
    "kube_horizontalpodautoscaler_status_desired_replicas": (
        "Desired number of replicas of pods managed by this autoscaler."
    ),
}


def _util(rps: float, replicas: int) -> float:
    """Average CPU utilisation (% of the 500m request) for a given load."""
    return min(194.0, rps * 0.0041 / replicas / 0.5 * 100)
