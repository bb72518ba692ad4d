# ruff: noqa: E501 - log lines, event messages and object literals are kept verbatim on one line
"""Brightpath Education: a ResourceQuota scoped to the lms-critical PriorityClass caps those
pods at 10. The morning peak makes the HPA ask for 8 live-classroom pods; the four new
ones are refused by that quota while pods of other priorities (a course-catalog rollout)
start. The namespace-wide quota the team checks has plenty of room."""

from __future__ import annotations

import random
from datetime import timedelta as td

from ._kit import (
    Story,
    cond,
    container,
    counter,
    deployment,
    endpoints,
    event,
    http_probe,
    meta,
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
    now = parse("2026-11-24T09:14:00Z")
    peak = parse("2026-11-24T08:55:30Z")
    cat_roll = parse("2026-11-24T09:01:00Z")
    old = parse("2023-08-21T06:00:00Z")
    s = Story(
        id="live-classroom-stuck-at-four",
        title="live-classroom not scaling for the 9am peak",
        now=now,
        report=(
            "live classes are laggy and some students can't join (9am peak). HPA says it wants 8 "
            "live-classroom pods but there are only 4. I checked the lms quota (lms-compute), we're "
            "nowhere near it. cluster autoscaler broken? catalog deployed fine at 9:01"
        ),
        truth={
            "category": "quota_exceeded",
            "culprit": {"kind": "Deployment", "namespace": "lms", "name": "live-classroom"},
            "evidence": [
                "exceeded quota: critical-pods",
                "pods=10",
                "lms-critical",
                "FailedCreate",
            ],
            "fix": (
                "Raise the pods/cpu limits of ResourceQuota lms/critical-pods (scoped to PriorityClass "
                "lms-critical) or move grading-api off lms-critical so live-classroom can scale to 8"
            ),
        },
    )
    s.add(namespace("lms", old, {"team": "learning-platform"}), namespace("lms-reports", old))
    nodes = [
        "gke-bp-prod-general-4c1a7e20-0rkd",
        "gke-bp-prod-general-4c1a7e20-6xmv",
        "gke-bp-prod-general-9b27f1c3-jt2q",
        "gke-bp-prod-general-9b27f1c3-w8sl",
    ]
    scope = {
        "scopeSelector": {
            "matchExpressions": [
                {"scopeName": "PriorityClass", "operator": "In", "values": ["lms-critical"]}
            ]
        }
    }
    s.add(
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": meta(
                "critical-pods",
                "lms",
                parse("2025-10-02T09:00:00Z"),
                annotations={
                    "brightpath.io/reason": "cap preemption-capable pods per namespace (PLAT-884)"
                },
            ),
            "spec": {
                "hard": {"pods": "10", "requests.cpu": "10", "requests.memory": "20Gi"},
                **scope,
            },
            "status": {
                "hard": {"pods": "10", "requests.cpu": "10", "requests.memory": "20Gi"},
                "used": {"pods": "10", "requests.cpu": "6", "requests.memory": "13824Mi"},
            },
        },
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": meta("lms-compute", "lms", parse("2024-01-15T09:00:00Z")),
            "spec": {
                "hard": {
                    "pods": "120",
                    "requests.cpu": "64",
                    "requests.memory": "160Gi",
                    "limits.memory": "240Gi",
                }
            },
            "status": {
                "hard": {
                    "pods": "120",
                    "requests.cpu": "64",
                    "requests.memory": "160Gi",
                    "limits.memory": "240Gi",
                },
                "used": {
                    "pods": "13",
                    "requests.cpu": "6750m",
                    "requests.memory": "15360Mi",
                    "limits.memory": "23Gi",
                },
            },
        },
        {
            "apiVersion": "v1",
            "kind": "LimitRange",
            "metadata": meta("lms-defaults", "lms", parse("2024-01-15T09:00:00Z")),
            "spec": {
                "limits": [
                    {
                        "type": "Container",
                        "default": {"cpu": "1", "memory": "1Gi"},
                        "defaultRequest": {"cpu": "250m", "memory": "512Mi"},
                    }
                ]
            },
        },
    )
    lc_tpl = pod_template(
        {"app": "live-classroom"},
        [
            container(
                "live-classroom",
                "europe-west4-docker.pkg.dev/brightpath/lms/live-classroom:2026.11.2",
                cpu_req="750m",
                mem_req="1536Mi",
                cpu_lim="2",
                mem_lim="2Gi",
                port=4000,
                readiness=http_probe("/health", 4000),
                env=[
                    {"name": "RELEASE_NODE", "value": "live_classroom"},
                    {"name": "PHX_HOST", "value": "live.brightpath.edu"},
                ],
            )
        ],
        priorityClassName="lms-critical",
    )
    lc = deployment(
        "live-classroom",
        "lms",
        old,
        lc_tpl,
        8,
        19,
        ready=4,
        updated=4,
        available=4,
        total_replicas=4,
        generation=61,
        conditions=[
            cond(
                "Available",
                "True",
                "MinimumReplicasAvailable",
                "Deployment has minimum availability.",
                now - td(days=3),
            ),
            cond(
                "ReplicaFailure",
                "True",
                "FailedCreate",
                'pods "live-classroom-6c8d7b9f5-5tq2x" is forbidden: exceeded quota: critical-pods, '
                "requested: pods=1, used: pods=10, limited: pods=10",
                peak + td(seconds=2),
            ),
            cond(
                "Progressing",
                "True",
                "NewReplicaSetAvailable",
                'ReplicaSet "live-classroom-6c8d7b9f5" has successfully progressed.',
                now - td(days=3),
            ),
        ],
    )
    lc["status"]["unavailableReplicas"] = 4  # the ReplicaSets ask for 8, four are available
    lc_rs = replicaset(
        lc,
        "6c8d7b9f5",
        now - td(days=3),
        19,
        lc_tpl,
        8,
        ready=4,
        conditions=[
            {
                "type": "ReplicaFailure",
                "status": "True",
                "reason": "FailedCreate",
                "message": 'pods "live-classroom-6c8d7b9f5-5tq2x" is forbidden: exceeded quota: '
                "critical-pods, requested: pods=1, used: pods=10, limited: pods=10",
                "lastTransitionTime": ts(peak + td(seconds=2)),
            }
        ],
    )
    lc_rs["status"]["replicas"] = 4
    lc_rs["status"]["fullyLabeledReplicas"] = 4
    s.add(lc, lc_rs)
    lc_pods = [
        (f"live-classroom-6c8d7b9f5-{x}", nodes[i], f"10.64.{i}.{30 + i}")
        for i, x in enumerate(["8bk2v", "gd5wz", "n7qxr", "x2hfm"])
    ]
    for name, n, ip in lc_pods:
        s.add(
            pod(
                name,
                "lms",
                now - td(days=3),
                lc_tpl,
                n,
                ip,
                "ReplicaSet",
                "live-classroom-6c8d7b9f5",
            )
        )
    s.add(
        service("live-classroom", "lms", old, {"app": "live-classroom"}, 80, 4000, "10.12.7.80"),
        endpoints(
            "live-classroom",
            "lms",
            now - td(days=3),
            [(ip, name, n) for name, n, ip in lc_pods],
            [],
            4000,
        ),
    )
    s.add(
        event(
            "lms",
            "ReplicaSet",
            "live-classroom-6c8d7b9f5",
            "FailedCreate",
            'Error creating: pods "live-classroom-6c8d7b9f5-5tq2x" is forbidden: exceeded quota: critical-pods, '
            "requested: pods=1, used: pods=10, limited: pods=10",
            peak + td(seconds=2),
            now - td(seconds=50),
            count=38,
            type_="Warning",
            component="replicaset-controller",
        ),
        event(
            "lms",
            "Deployment",
            "live-classroom",
            "ScalingReplicaSet",
            "Scaled up replica set live-classroom-6c8d7b9f5 to 8 from 4",
            peak,
            peak,
            component="deployment-controller",
        ),
    )
    s.add(
        {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": meta("live-classroom", "lms", old) | {"uid": uid("hpa-live-classroom")},
            "spec": {
                "scaleTargetRef": {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": "live-classroom",
                },
                "minReplicas": 4,
                "maxReplicas": 14,
                "metrics": [
                    {
                        "type": "Resource",
                        "resource": {
                            "name": "cpu",
                            "target": {"type": "Utilization", "averageUtilization": 60},
                        },
                    }
                ],
            },
            "status": {
                "currentReplicas": 4,
                "desiredReplicas": 8,
                "lastScaleTime": ts(peak),
                "currentMetrics": [
                    {
                        "type": "Resource",
                        "resource": {
                            "name": "cpu",
                            "current": {"averageUtilization": 118, "averageValue": "887m"},
                        },
                    }
                ],
                "conditions": [
                    {
                        "type": "AbleToScale",
                        "status": "True",
                        "reason": "SucceededRescale",
                        "message": "the HPA controller was able to update the target scale to 8",
                        "lastTransitionTime": ts(peak),
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
                        "lastTransitionTime": ts(peak),
                    },
                ],
            },
        }
    )
    s.add(
        event(
            "lms",
            "HorizontalPodAutoscaler",
            "live-classroom",
            "SuccessfulRescale",
            "New size: 8; reason: cpu resource utilization (percentage of request) above target",
            peak,
            peak,
            component="horizontal-pod-autoscaler",
            obj_uid=uid("hpa-live-classroom"),
        )
    )
    # grading-api: the other lms-critical workload, holding six of the ten slots
    gr_tpl = pod_template(
        {"app": "grading-api"},
        [
            container(
                "grading-api",
                "europe-west4-docker.pkg.dev/brightpath/lms/grading-api:5.4.0",
                cpu_req="500m",
                mem_req="1280Mi",
                mem_lim="2Gi",
                port=8000,
                readiness=http_probe("/ping", 8000),
            )
        ],
        priorityClassName="lms-critical",
    )
    gr = deployment("grading-api", "lms", old, gr_tpl, 6, 33)
    s.add(gr, replicaset(gr, "7d9c5f6b8", now - td(days=6), 33, gr_tpl, 6))
    for i, x in enumerate(["2vbn7", "5kwq9", "9dzt4", "fm6hr", "lq3xc", "tz8pw"]):
        s.add(
            pod(
                f"grading-api-7d9c5f6b8-{x}",
                "lms",
                now - td(days=6),
                gr_tpl,
                nodes[i % 4],
                f"10.64.{i % 4}.{60 + i}",
                "ReplicaSet",
                "grading-api-7d9c5f6b8",
            )
        )

    # course-catalog: default priority, rolled at 09:01 without trouble
    def cat_tpl(v: str) -> dict:
        return pod_template(
            {"app": "course-catalog"},
            [
                container(
                    "course-catalog",
                    f"europe-west4-docker.pkg.dev/brightpath/lms/course-catalog:{v}",
                    cpu_req="250m",
                    mem_req="512Mi",
                    mem_lim="1Gi",
                    port=8080,
                    readiness=http_probe("/status", 8080),
                )
            ],
        )

    ct_old, ct_new = cat_tpl("1.42.0"), cat_tpl("1.43.0")
    ct = deployment("course-catalog", "lms", old, ct_new, 3, 72)
    s.add(
        ct,
        replicaset(ct, "58f7c6d9b", now - td(days=9), 71, ct_old, 0, ready=0),
        replicaset(ct, "6b9d8c7f4", cat_roll, 72, ct_new, 3),
    )
    for i, x in enumerate(["4hx9q", "c2mvz", "p8rtd"]):
        name = f"course-catalog-6b9d8c7f4-{x}"
        s.add(
            pod(
                name,
                "lms",
                cat_roll + td(seconds=20 * i),
                ct_new,
                nodes[(i + 1) % 4],
                f"10.64.{(i + 1) % 4}.{90 + i}",
                "ReplicaSet",
                "course-catalog-6b9d8c7f4",
            ),
            event(
                "lms",
                "Pod",
                name,
                "Started",
                "Started container course-catalog",
                cat_roll + td(seconds=20 * i + 5),
                cat_roll + td(seconds=20 * i + 5),
                host=nodes[(i + 1) % 4],
                field_path="spec.containers{course-catalog}",
            ),
        )
    s.add(
        event(
            "lms",
            "Deployment",
            "course-catalog",
            "ScalingReplicaSet",
            "Scaled down replica set course-catalog-58f7c6d9b to 0 from 1",
            cat_roll + td(seconds=60),
            cat_roll + td(seconds=60),
            component="deployment-controller",
        )
    )
    # an unrelated batch warning
    s.add(
        event(
            "lms",
            "Pod",
            "grading-api-7d9c5f6b8-tz8pw",
            "Unhealthy",
            'Readiness probe failed: Get "http://10.64.1.65:8000/ping": context deadline exceeded',
            now - td(minutes=40),
            now - td(minutes=40),
            type_="Warning",
            host=nodes[1],
            field_path="spec.containers{grading-api}",
        )
    )

    # ---- metrics
    rng = random.Random(7)
    start = now - td(days=1, hours=2)

    def load(t: object) -> float:
        h = t.hour + t.minute / 60  # type: ignore[attr-defined]
        return 0.25 + (0.95 if 8.8 <= h <= 11 else 0.1) + 0.05 * rng.random()

    for name, _n, _ip in lc_pods:
        s.metric(
            "container_cpu_usage_seconds",
            "counter",
            "Cumulative cpu time consumed in seconds.",
            {"namespace": "lms", "pod": name, "container": "live-classroom"},
            counter(start, now, 60, load, integer=False),
        )
    for res, hard, used in (("pods", 10, 10), ("requests.cpu", 10, 6)):
        for typ, val in (("hard", hard), ("used", used)):
            s.metric(
                "kube_resourcequota",
                "gauge",
                "Information about resource quota.",
                {
                    "namespace": "lms",
                    "resourcequota": "critical-pods",
                    "resource": res,
                    "type": typ,
                },
                series(start, now, 60, lambda t, v=val: v),
            )
    for typ, val in (("hard", 120), ("used", 13)):
        s.metric(
            "kube_resourcequota",
            "gauge",
            "Information about resource quota.",
            {"namespace": "lms", "resourcequota": "lms-compute", "resource": "pods", "type": typ},
            series(start, now, 60, lambda t, v=val: v),
        )
    s.metric(
        "kube_horizontalpodautoscaler_status_desired_replicas",
        "gauge",
        "Desired number of replicas of pods managed by this autoscaler.",
        {"namespace": "lms", "horizontalpodautoscaler": "live-classroom"},
        series(start, now, 60, lambda t: 8 if t >= peak else 4),
    )
    s.metric(
        "kube_horizontalpodautoscaler_status_current_replicas",
        "gauge",
        "Current number of replicas of pods managed by this autoscaler.",
        {"namespace": "lms", "horizontalpodautoscaler": "live-classroom"},
        series(start, now, 60, lambda t: 4),
    )

    # ---- logs
    t = now - td(hours=1, minutes=30)
    while t < now:
        name, n, ip = rng.choice(lc_pods)
        if t > peak and rng.random() < 0.3:
            s.doc(
                t,
                "warning",
                "live-classroom",
                "lms",
                name,
                "live-classroom",
                f"channel join timeout room:{rng.randint(1000, 9999)} after 5000ms (run queue {rng.randint(40, 180)})",
            )
        else:
            s.doc(
                t,
                "info",
                "live-classroom",
                "lms",
                name,
                "live-classroom",
                f"JOINED room:{rng.randint(1000, 9999)} in {rng.randint(1, 40)}ms",
            )
        t += td(seconds=rng.uniform(2, 12))
    lines = []
    t = now - td(minutes=20)
    while t < now:
        if t > peak and rng.random() < 0.35:
            lines.append(
                f"{t:%H:%M:%S}.{rng.randint(100, 999)} [warning] channel join timeout room:{rng.randint(1000, 9999)} after 5000ms"
            )
        else:
            lines.append(
                f"{t:%H:%M:%S}.{rng.randint(100, 999)} [info] JOINED room:{rng.randint(1000, 9999)} in {rng.randint(1, 40)}ms"
            )
        t += td(seconds=rng.randint(3, 20))
    s.pod_log("lms", lc_pods[0][0], "live-classroom", lines)
    return s
