# ruff: noqa: E501  (data literals: log lines and event messages are kept whole)
"""Shape 4: an init container that loads reference data is OOM-killed because the dataset grew."""

from __future__ import annotations

from datetime import timedelta

from .common import (
    Scenario,
    available_status,
    container,
    deployment,
    endpoints,
    healthy_deployment,
    iso,
    namespace,
    pod,
    replicaset,
    running,
    service,
    std_nodes,
    steps,
    terminated,
    ts,
    waiting,
)

NS = "routing"


def build() -> Scenario:
    s = Scenario(
        "routing-geocoder-init-oom",
        "geocoder cannot scale out, new pods never start",
        "2026-11-29T08:41:00Z",
        "geocoder lookups are slow this morning (p99 ~4s). HPA wants 6 pods but the new ones just sit there "
        "not starting. old ones are fine. did the 4.2 image break something? cc @maps-team",
        {
            "category": "oom_killed",
            "culprit": {"kind": "Deployment", "namespace": NS, "name": "geocoder"},
            "evidence": ["OOMKilled", "load-gazetteer", "Init:CrashLoopBackOff", "768Mi"],
            "fix": "Raise the load-gazetteer init container's memory limit (768Mi) above what the grown "
            "gazetteer snapshot needs, or make the loader stream the import",
        },
    )
    now = s.now
    nodes = std_nodes(s, "10.12.8", 4, zone="ap-southeast-2")
    s.add(namespace(NS, s.ago(days=250)))
    img = "quay.io/wayfarer/geocoder:4.2.1"
    loader_img = "quay.io/wayfarer/gazetteer-loader:1.6.0"
    vol = [{"name": "gazetteer", "emptyDir": {"sizeLimit": "6Gi"}}]
    init = [
        container(
            "load-gazetteer",
            loader_img,
            env={
                "GAZETTEER_SOURCE": "s3://wayfarer-refdata/gazetteer/latest/",
                "GAZETTEER_OUT": "/data/gaz",
            },
            requests={"cpu": "500m", "memory": "512Mi"},
            limits={"memory": "768Mi"},
            volumeMounts=[{"name": "gazetteer", "mountPath": "/data"}],
        )
    ]
    main = container(
        "geocoder",
        img,
        ports=[8080],
        env={"JAVA_TOOL_OPTIONS": "-XX:MaxRAMPercentage=70", "GAZETTEER_DIR": "/data/gaz"},
        requests={"cpu": "1", "memory": "3Gi"},
        limits={"memory": "3Gi"},
        volumeMounts=[{"name": "gazetteer", "mountPath": "/data", "readOnly": True}],
        readinessProbe={
            "httpGet": {"path": "/actuator/health/readiness", "port": 8080},
            "initialDelaySeconds": 20,
            "periodSeconds": 10,
        },
    )
    h = "68c9d7f4b7"
    labels = {"app": "geocoder", "pod-template-hash": h}
    s.add(
        deployment(
            "geocoder",
            NS,
            {"app": "geocoder"},
            labels,
            [main],
            6,
            s.ago(days=240),
            19,
            14,
            available_status(6, s.ago(minutes=38), ready=3, available=3),
            init=init,
            volumes=vol,
        )
    )
    s.add(
        replicaset(
            f"geocoder-{h}", NS, "geocoder", labels, [main], 6, 3, s.ago(days=4), 14, init=init
        )
    )
    s.add(
        {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": __import__(
                "tests.data.holdout37._generator.common", fromlist=["meta"]
            ).meta("geocoder", NS, {"app": "geocoder"}, s.ago(days=240)),
            "spec": {
                "scaleTargetRef": {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": "geocoder",
                },
                "minReplicas": 3,
                "maxReplicas": 10,
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
                "currentReplicas": 6,
                "desiredReplicas": 6,
                "lastScaleTime": iso(s.ago(minutes=38)),
                "currentMetrics": [
                    {
                        "type": "Resource",
                        "resource": {
                            "name": "cpu",
                            "current": {"averageUtilization": 91, "averageValue": "912m"},
                        },
                    }
                ],
                "conditions": [
                    {
                        "type": "AbleToScale",
                        "status": "True",
                        "reason": "ReadyForNewScale",
                        "message": "recommended size matches current size",
                        "lastTransitionTime": iso(s.ago(minutes=38)),
                    },
                    {
                        "type": "ScalingActive",
                        "status": "True",
                        "reason": "ValidMetricFound",
                        "message": "the HPA was able to successfully calculate a replica count from "
                        "cpu resource utilization (percentage of request)",
                        "lastTransitionTime": iso(s.ago(days=5)),
                    },
                    {
                        "type": "ScalingLimited",
                        "status": "False",
                        "reason": "DesiredWithinRange",
                        "message": "the desired count is within the acceptable range",
                        "lastTransitionTime": iso(s.ago(days=5)),
                    },
                ],
            },
        }
    )
    old = []
    for i, sfx in enumerate(("4bq7n", "pz2cx", "g8kls")):
        pn = f"geocoder-{h}-{sfx}"
        ip = f"10.12.{9 + i}.{44 + i}"
        s.add(
            pod(
                pn,
                NS,
                labels,
                ("ReplicaSet", f"geocoder-{h}"),
                nodes[i],
                [main],
                [running("geocoder", img, s.ago(days=4, minutes=-3 * i))],
                s.ago(days=4),
                ip=ip,
                init=init,
                init_statuses=[
                    {
                        "name": "load-gazetteer",
                        "image": loader_img,
                        "ready": True,
                        "restartCount": 0,
                        "started": False,
                        "lastState": {},
                        "imageID": "quay.io/wayfarer/gazetteer-loader@"
                        "sha256:0c4a9e1f7b3d5a2c8e6f0b4d2a6c8e0f1b3d5a7c9e1f3b5d7a9c1e3f5b7d9a1c",
                        "state": {
                            "terminated": terminated(
                                "Completed",
                                0,
                                s.ago(days=4, minutes=-3 * i),
                                s.ago(days=4, minutes=-3 * i - 4),
                            )
                        },
                    }
                ],
                volumes=vol,
            )
        )
        old.append((ip, pn, nodes[i]))
    new = []
    for k, sfx in enumerate(("t6wrj", "x2mfd", "l9hcv")):
        pn = f"geocoder-{h}-{sfx}"
        ip = f"10.12.{9 + k}.{101 + k}"
        restarts = 8 - k
        ls = s.ago(minutes=3 + k, seconds=10)
        st_init = {
            "name": "load-gazetteer",
            "image": loader_img,
            "ready": False,
            "restartCount": restarts,
            "started": False,
            "imageID": "quay.io/wayfarer/gazetteer-loader@sha256:0c4a9e1f7b3d5a2c8e6f0b4d2a6c8e0f1b3d5a7c9e1f3b5d7a9c1e3f5b7d9a1c",
            "state": {
                "waiting": {
                    "reason": "CrashLoopBackOff",
                    "message": f"back-off 5m0s restarting failed container=load-gazetteer pod={pn}_{NS}",
                }
            },
            "lastState": {
                "terminated": terminated("OOMKilled", 137, ls, ls + timedelta(seconds=96))
            },
        }
        s.add(
            pod(
                pn,
                NS,
                labels,
                ("ReplicaSet", f"geocoder-{h}"),
                nodes[(k + 1) % 4],
                [main],
                [waiting("geocoder", img, "PodInitializing")],
                s.ago(minutes=38),
                phase="Pending",
                ready=False,
                ip=ip,
                init=init,
                init_statuses=[st_init],
                volumes=vol,
                conditions=[
                    {
                        "type": "PodScheduled",
                        "status": "True",
                        "lastTransitionTime": iso(s.ago(minutes=38)),
                    },
                    {
                        "type": "Initialized",
                        "status": "False",
                        "reason": "ContainersNotInitialized",
                        "message": "containers with incomplete status: [load-gazetteer]",
                        "lastTransitionTime": iso(s.ago(minutes=38)),
                    },
                    {
                        "type": "ContainersReady",
                        "status": "False",
                        "reason": "ContainersNotReady",
                        "message": "containers with unready status: [geocoder]",
                        "lastTransitionTime": iso(s.ago(minutes=38)),
                    },
                    {
                        "type": "Ready",
                        "status": "False",
                        "reason": "ContainersNotReady",
                        "message": "containers with unready status: [geocoder]",
                        "lastTransitionTime": iso(s.ago(minutes=38)),
                    },
                ],
            )
        )
        new.append((ip, pn, nodes[(k + 1) % 4]))
        lines = [
            f"{iso(ls)} loader 1.6.0: source s3://wayfarer-refdata/gazetteer/latest/ (snapshot 2026-11-28)",
            f"{iso(ls + timedelta(seconds=2))} manifest: 41 shards, 19,874,551 places (previous snapshot 12,402,907)",
        ]
        for j in range(1, 27):
            lines.append(
                f"{iso(ls + timedelta(seconds=3 + j * 3))} shard {j:02d}/41 imported, index entries "
                f"{j * 484_745:,}, heap in use {190 + j * 22} MiB"
            )
        s.log(NS, pn, "load-gazetteer", lines, previous=True)
        s.log(NS, pn, "load-gazetteer", lines[:6])
        ev = s.events
        ev.add(
            NS,
            "Pod",
            pn,
            "Pulled",
            f'Container image "{loader_img}" already present on machine',
            s.ago(minutes=37, seconds=50),
            ls,
            count=restarts + 1,
            host=new[-1][2],
            field_path="spec.initContainers{load-gazetteer}",
        )
        ev.add(
            NS,
            "Pod",
            pn,
            "Started",
            "Started container load-gazetteer",
            s.ago(minutes=37, seconds=49),
            ls,
            count=restarts + 1,
            host=new[-1][2],
            field_path="spec.initContainers{load-gazetteer}",
        )
        ev.add(
            NS,
            "Pod",
            pn,
            "BackOff",
            f"Back-off restarting failed container load-gazetteer in pod {pn}_{NS}",
            s.ago(minutes=34),
            s.ago(seconds=30 + k * 20),
            count=31 - k,
            type_="Warning",
            host=new[-1][2],
            field_path="spec.initContainers{load-gazetteer}",
        )
    s.add(service("geocoder", NS, {"app": "geocoder"}, 80, 8080, s.ago(days=240), "172.20.140.9"))
    s.add(endpoints("geocoder", NS, old, 8080, s.ago(days=240)))
    s.events.add(
        NS,
        "HorizontalPodAutoscaler",
        "geocoder",
        "SuccessfulRescale",
        "New size: 6; reason: cpu resource utilization (percentage of request) above target",
        s.ago(minutes=38),
        component="horizontal-pod-autoscaler",
        api="autoscaling/v2",
    )
    s.events.add(
        NS,
        "ReplicaSet",
        f"geocoder-{h}",
        "SuccessfulCreate",
        f"Created pod: {new[0][1]}",
        s.ago(minutes=38),
        component="replicaset-controller",
        api="apps/v1",
    )
    s.events.add(
        NS,
        "Deployment",
        "geocoder",
        "ScalingReplicaSet",
        f"Scaled up replica set geocoder-{h} to 6 from 3",
        s.ago(minutes=38),
        component="deployment-controller",
        api="apps/v1",
    )
    # metrics: the loader climbing to its limit again and again; the old pods' CPU saturated
    start = s.ago(minutes=40)
    for _ip, pn, _nd in new:
        samples = []
        for t in steps(start + timedelta(minutes=2), now, 15):
            phase = int((t - start).total_seconds()) % 330
            v = min(805_306_368, 140_000_000 + phase * 6_800_000) if phase < 100 else 0
            if v:
                samples.append((v, ts(t)))
        s.series(
            "container_memory_working_set_bytes",
            "gauge",
            "Current working set of the container in bytes",
            {"namespace": NS, "pod": pn, "container": "load-gazetteer"},
            samples,
        )
    for _ip, pn, _nd in old:
        s.series(
            "container_memory_working_set_bytes",
            "gauge",
            "Current working set of the container in bytes",
            {"namespace": NS, "pod": pn, "container": "geocoder"},
            [
                (2_410_000_000 + (i * 7919) % 40_000_000, ts(t))
                for i, t in enumerate(steps(s.ago(hours=2), now, 60))
            ],
        )
    for i, (_ip, pn, _nd) in enumerate(old):
        c = 4_000_000.0 + i * 1000
        samples = []
        for t in steps(s.ago(hours=2), now, 60):
            c += 38 if t < s.ago(minutes=50) else 58.5
            samples.append((round(c, 2), ts(t)))
        s.series(
            "container_cpu_usage_seconds_total",
            "counter",
            "Cumulative cpu time consumed in seconds",
            {"namespace": NS, "pod": pn, "container": "geocoder"},
            samples,
        )
    for _ip, pn, _nd in new:
        s.series(
            "kube_pod_init_container_status_restarts_total",
            "counter",
            "The number of restarts for the init container",
            {"namespace": NS, "pod": pn, "container": "load-gazetteer"},
            [
                (min(8, int((t - start).total_seconds()) // 330), ts(t))
                for t in steps(start, now, 60)
            ],
        )
    for m in range(0, 90):
        t = s.ago(minutes=m, seconds=7)
        for _ip, pn, _nd in old:
            slow = t > s.ago(minutes=50)
            s.doc(
                t,
                f"GET /v1/geocode 200 {3900 if slow else 180}ms",
                "warn" if slow and m % 3 == 0 else "info",
                "geocoder",
                NS,
                pn,
                "geocoder",
                **{
                    "http.response.status_code": 200,
                    "event.duration": (3_900 if slow else 180) * 1_000_000,
                },
            )
    tr = healthy_deployment(
        s,
        "route-planner",
        NS,
        "quay.io/wayfarer/route-planner:9.0.3",
        nodes,
        "10.12.13",
        port=8080,
        replicas=2,
        age_days=1,
        hash_="7c6b5d9f48",
    )
    for m in range(2, 80, 5):
        s.doc(
            s.ago(minutes=m),
            "geocoder upstream latency high (3.8s), using cached origin",
            "warn",
            "route-planner",
            NS,
            tr[m % 2],
            "planner",
        )
    s.events.add(
        NS,
        "Pod",
        tr[0],
        "Unhealthy",
        'Readiness probe failed: Get "http://10.12.13.20:8080/healthz": context deadline exceeded',
        s.ago(minutes=29),
        count=1,
        type_="Warning",
        host=nodes[0],
        field_path="spec.containers{planner}",
    )
    s.log(
        NS,
        old[0][1],
        "geocoder",
        [
            f"{iso(s.ago(minutes=m))} INFO  c.w.g.GeocodeController - served {1200 + m} "
            f"lookups/min, p99 {3.9 if m < 50 else 0.2}s"
            for m in range(70, 0, -5)
        ],
    )
    return s
