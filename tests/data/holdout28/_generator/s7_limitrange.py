# ruff: noqa: E501  (log lines and messages are kept whole, as the systems print them)
"""Shape 7: thumbnailer declares no resources; the media namespace's LimitRange gives it a
512Mi limit. A campaign's upload surge brings large images, and the pods are OOM-killed."""

from __future__ import annotations

from datetime import datetime, timedelta

from . import _k8s as k
from ._common import NODES, app, backoff_moments, chatter, ip, nodes, restarts_counter
from ._out import Scenario, accumulate, grid
from ._workloads import Revision, deployment, pod_name

NOW = datetime(2026, 9, 22, 19, 30, 0)
SURGE = datetime(2026, 9, 22, 18, 5, 0)
IMAGE = "registry.internal/media/thumbnailer:2.6.4"
LIMIT = 512 * 1024**2


def build() -> Scenario:
    sc = Scenario(
        id="media-thumbnails-delayed",
        title="Thumbnails delayed since the campaign",
        now=NOW,
        seed=707,
        report="thumbnails for new listings are delayed by 30+ min since the campaign went live "
        "at 18:00. the uploads queue keeps growing. is rabbit ok? HPA already scaled "
        "thumbnailer up",
        truth={
            "category": "oom_killed",
            "culprit": {"kind": "Deployment", "namespace": "media", "name": "thumbnailer"},
            "evidence": ["OOMKilled", "512Mi", "LimitRanger plugin set"],
            "fix": "Give thumbnailer an explicit memory limit sized for large images (e.g. 2Gi) "
            "instead of the namespace default of 512Mi, or bound the decoder's memory.",
        },
    )
    nodes(sc)
    for ns in ("media", "messaging"):
        sc.add(k.namespace(ns, NOW - timedelta(days=500)))
    sc.add(
        {
            "apiVersion": "v1",
            "kind": "LimitRange",
            "metadata": {
                "name": "media-defaults",
                "namespace": "media",
                "uid": k.uid("lr"),
                "creationTimestamp": k.stamp(NOW - timedelta(days=480)),
            },
            "spec": {
                "limits": [
                    {
                        "type": "Container",
                        "default": {"cpu": "1", "memory": "512Mi"},
                        "defaultRequest": {"cpu": "250m", "memory": "256Mi"},
                        "max": {"memory": "8Gi"},
                    }
                ]
            },
        }
    )
    labels = {"app": "thumbnailer"}
    c = k.container(
        "thumbnailer",
        IMAGE,
        port=8080,
        resources={},
        env=[
            {"name": "AMQP_URL", "value": "amqp://rabbitmq.messaging.svc:5672/media"},
            {"name": "WORKERS", "value": "4"},
        ],
        liveness=k.http_probe("/healthz", 8080, delay=10, period=15),
    )
    old = Revision(
        k.template(labels, [dict(c, image="registry.internal/media/thumbnailer:2.6.3")]),
        NOW - timedelta(days=6, hours=3),
        0,
    )
    cur = Revision(k.template(labels, [c]), NOW - timedelta(days=2, hours=9), 6)
    dep, rss = deployment(
        "thumbnailer", "media", labels, [old, cur], created=NOW - timedelta(days=480), now=NOW
    )
    dep["spec"]["replicas"] = 6
    sc.add(dep, rss)
    ranger = {
        "kubernetes.io/limit-ranger": "LimitRanger plugin set: cpu, memory request for container thumbnailer; "
        "cpu, memory limit for container thumbnailer"
    }
    pod_res = {
        "limits": {"cpu": "1", "memory": "512Mi"},
        "requests": {"cpu": "250m", "memory": "256Mi"},
    }
    times = grid(NOW - timedelta(hours=3), NOW)
    pods = []
    for i in range(6):
        name = pod_name(cur, i)
        created = (
            cur.created + timedelta(seconds=9 * i)
            if i < 3
            else SURGE + timedelta(minutes=6 + 4 * i)
        )
        first_kill = SURGE + timedelta(minutes=14 + 7 * i)
        kills = [m for m in backoff_moments(first_kill.timestamp(), NOW.timestamp() - 90, cap=300)][
            ::3
        ]
        kills = [m for m in kills if m > created.timestamp()]
        last_kill = datetime.utcfromtimestamp(kills[-1]) if kills else None
        tmpl = {"metadata": dict(cur.template["metadata"]), "spec": dict(cur.template["spec"])}
        tmpl["spec"]["containers"] = [dict(c, resources=pod_res)]
        if last_kill:
            term = k.terminated(
                "OOMKilled", 137, last_kill - timedelta(minutes=3), last_kill, IMAGE
            )
            status = k.running(
                "thumbnailer",
                last_kill + timedelta(seconds=12),
                image=IMAGE,
                restarts=len(kills),
                last=term,
            )
        else:
            status = k.running("thumbnailer", created + timedelta(seconds=4), image=IMAGE)
        p = k.pod(
            name,
            "media",
            tmpl,
            owner=("ReplicaSet", cur.name),
            created=created,
            node=NODES[i % 3],
            ip=ip(sc, i % 3 + 1),
            statuses=[status],
            extra_annotations=ranger,
            extra_labels={"pod-template-hash": cur.hash},
        )
        sc.add(p)
        pods.append(name)
        restarts_counter(sc, "media", name, "thumbnailer", [t for t in times], kills)
        start_t = created.timestamp()

        def mem(t: float, kills: list[float] = kills, start_t: float = start_t) -> float:
            if t < start_t:
                return 0.0
            if t < SURGE.timestamp():
                return 190e6 + sc.rng.random() * 30e6
            since = max([start_t, SURGE.timestamp()] + [m for m in kills if m <= t])
            return min(LIMIT * 0.995, 230e6 + (t - since) * 1.9e6 + sc.rng.random() * 20e6)

        points = [(t, round(mem(t))) for t in times if t >= start_t]
        sc.gauge(
            "container_memory_working_set_bytes",
            "Current working set of the container in bytes",
            {"namespace": "media", "pod": name, "container": "thumbnailer"},
            points,
        )
        sc.gauge(
            "kube_pod_container_resource_limits",
            "The number of requested limit resource by a container.",
            {
                "namespace": "media",
                "pod": name,
                "container": "thumbnailer",
                "resource": "memory",
                "unit": "byte",
            },
            [(t, float(LIMIT)) for t, _ in points],
        )
        if last_kill:
            t = last_kill - timedelta(minutes=3)
            lines = [
                f"{k.stamp(t)} INFO thumbnailer 2.6.4 consuming queue=uploads prefetch=8 workers=4"
            ]
            for n in range(14):
                mp = sc.rng.choice([12, 24, 48, 61, 102])
                lines.append(
                    f"{k.stamp(t + timedelta(seconds=11 * n + 3))} INFO job={sc.rng.randint(10**6, 10**7)} "
                    f"decode {mp}MP jpeg -> 5 variants"
                )
            lines.append(
                f"{k.stamp(last_kill - timedelta(seconds=2))} INFO job={sc.rng.randint(10**6, 10**7)} "
                "decode 102MP jpeg -> 5 variants"
            )
            sc.log_file("media", name, "thumbnailer", lines, previous=True)
            sc.add(
                k.event(
                    "media",
                    "Pod",
                    name,
                    "BackOff",
                    f"Back-off restarting failed container thumbnailer in pod {name}_media"
                    f"({k.uid('Pod' + 'media' + name)})",
                    first=max(last_kill, NOW - timedelta(minutes=55)),
                    last=last_kill + timedelta(seconds=6),
                    count=1,
                    type="Warning",
                    host=NODES[i % 3],
                    field_path="spec.containers{thumbnailer}",
                )
            )
    sc.add(
        {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {
                "name": "thumbnailer",
                "namespace": "media",
                "uid": k.uid("HorizontalPodAutoscaler" + "media" + "thumbnailer"),
                "creationTimestamp": k.stamp(NOW - timedelta(days=400)),
            },
            "spec": {
                "scaleTargetRef": {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": "thumbnailer",
                },
                "minReplicas": 3,
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
                "currentReplicas": 6,
                "desiredReplicas": 6,
                "lastScaleTime": k.stamp(SURGE + timedelta(minutes=26)),
                "currentMetrics": [
                    {
                        "type": "Resource",
                        "resource": {
                            "name": "cpu",
                            "current": {"averageUtilization": 64, "averageValue": "160m"},
                        },
                    }
                ],
                "conditions": [
                    {
                        "type": "AbleToScale",
                        "status": "True",
                        "reason": "ReadyForNewScale",
                        "lastTransitionTime": k.stamp(SURGE + timedelta(minutes=26)),
                    },
                    {
                        "type": "ScalingActive",
                        "status": "True",
                        "reason": "ValidMetricFound",
                        "lastTransitionTime": k.stamp(NOW - timedelta(days=4)),
                    },
                    {
                        "type": "ScalingLimited",
                        "status": "False",
                        "reason": "DesiredWithinRange",
                        "lastTransitionTime": k.stamp(NOW - timedelta(days=4)),
                    },
                ],
            },
        }
    )
    sc.add(
        k.event(
            "media",
            "HorizontalPodAutoscaler",
            "thumbnailer",
            "SuccessfulRescale",
            "New size: 6; reason: cpu resource utilization (percentage of request) above target",
            first=NOW - timedelta(minutes=58),
            last=NOW - timedelta(minutes=58),
            component="horizontal-pod-autoscaler",
        )
    )
    rabbit, _ = app(sc, "rabbitmq", "messaging", "rabbitmq:3.13-management", replicas=1, port=5672)
    upl, _ = app(sc, "upload-api", "media", "registry.internal/media/upload-api:5.0.1", replicas=3)
    for moment in sc.every(NOW - timedelta(hours=3), NOW, 2):
        sc.doc(
            moment,
            "upload-api",
            "media",
            sc.rng.choice(upl),
            "info",
            f"POST /v1/uploads 201 bytes={sc.rng.randint(2, 40)}MB queued=uploads",
            http__response__status_code=201,
        )
    chatter(
        sc,
        "rabbitmq",
        "messaging",
        rabbit,
        SURGE + timedelta(minutes=20),
        [
            "accepting AMQP connection <0.9811.3> (10.0.2.61:41522 -> 10.0.1.40:5672)",
            "connection <0.9811.3> (10.0.2.61:41522 -> 10.0.1.40:5672): user 'thumbnailer' authenticated and granted access to vhost 'media'",
        ],
        gap=400,
    )
    chatter(
        sc,
        "rabbitmq",
        "messaging",
        rabbit,
        SURGE + timedelta(minutes=30),
        [
            "closing AMQP connection <0.9811.3> (10.0.2.61:41522 -> 10.0.1.40:5672): connection_closed_abruptly"
        ],
        gap=120,
        level="warn",
    )
    for pod in pods:
        chatter(
            sc,
            "thumbnailer",
            "media",
            [pod],
            NOW - timedelta(hours=3),
            ["job done variants=5 took=2.1s", "job done variants=5 took=3.8s"],
            gap=30,
        )
    depth = [
        (t, 40.0 if t < SURGE.timestamp() else min(9000.0, 40 + (t - SURGE.timestamp()) * 1.6))
        for t in times
    ]
    sc.gauge(
        "rabbitmq_queue_messages_ready",
        "Messages ready to be delivered to consumers",
        {"namespace": "messaging", "pod": rabbit[0], "queue": "uploads", "vhost": "media"},
        depth,
    )
    for pod in upl:
        sc.counter(
            "http_requests_total",
            "HTTP requests served.",
            {"namespace": "media", "pod": pod, "service": "upload-api", "code": "201"},
            accumulate(times, lambda t: 0.3 if t < SURGE.timestamp() else 1.4, 20000),
        )
    return sc
