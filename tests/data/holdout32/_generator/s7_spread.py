# ruff: noqa: E501  (verbatim log lines and Kubernetes messages are kept whole)
"""Scenario 7: playback-api spreads over zones with whenUnsatisfiable: DoNotSchedule.
This afternoon the apps node group of us-west-2c was scaled to zero (cost saving), but the
tainted transcode pool still has a node in us-west-2c, so the zone still counts as a
spread domain (nodeTaintsPolicy defaults to Ignore) with zero playback-api pods in it.
Every new replica would raise the skew: the three pods evicted from 2c and the six the HPA
wants for tonight's premiere all stay Pending. Other workloads schedule fine.
"""

from __future__ import annotations

from .k8s import (
    Clock,
    Obj,
    configmap,
    container,
    cstatus,
    deployment,
    endpoints,
    event,
    hpa,
    http_probe,
    namespace,
    node,
    pod,
    pod_hash,
    replicaset,
    running,
    service,
    suffix,
    template,
)
from .out import Metrics, ecs, healthy_app, write

SID = "playback-premiere-latency"
NOW = "2026-11-30T21:10:00Z"
NS = "playback"
APP = "playback-api"
DRAIN = 305  # minutes ago the 2c apps group was scaled to zero
PEAK = 32  # minutes ago the HPA scaled 10 -> 16
SCHED_MSG = (
    "0/9 nodes are available: 3 node(s) had untolerated taint {dedicated: transcode}, 6 node(s) didn't "
    "match pod topology spread constraints. preemption: 0/9 nodes are available: 3 Preemption is not helpful "
    "for scheduling, 6 No preemption victims found for incoming pod."
)


def build() -> None:
    c = Clock(NOW)
    apps = [
        (f"ip-10-9-{a}-{b}.us-west-2.compute.internal", z)
        for a, b, z in (
            (16, 12, "us-west-2a"),
            (17, 200, "us-west-2a"),
            (18, 91, "us-west-2a"),
            (32, 7, "us-west-2b"),
            (33, 150, "us-west-2b"),
            (34, 66, "us-west-2b"),
        )
    ]
    trans = [
        (f"ip-10-9-{a}-{b}.us-west-2.compute.internal", z)
        for a, b, z in ((19, 40, "us-west-2a"), (35, 18, "us-west-2b"), (50, 231, "us-west-2c"))
    ]
    objs: list[Obj] = [namespace(n, c.at(60 * 24 * 800)) for n in (NS, "kube-system", "media")]
    objs += [
        node(c, n, z, "apps", region="us-west-2", instance="c7i.2xlarge", cpu="7910m", memory="14208812Ki")
        for n, z in apps
    ]
    taint = [{"key": "dedicated", "value": "transcode", "effect": "NoSchedule"}]
    objs += [
        node(
            c,
            n,
            z,
            "transcode",
            region="us-west-2",
            instance="g5.2xlarge",
            cpu="7910m",
            memory="31482924Ki",
            taints=taint,
        )
        for n, z in trans
    ]
    img = f"public.ecr.aws/reelhouse/{APP}:14.2.0"
    spread = [
        {
            "maxSkew": 1,
            "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": APP}},
        },
        {
            "maxSkew": 2,
            "topologyKey": "kubernetes.io/hostname",
            "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {"matchLabels": {"app": APP}},
        },
    ]
    tmpl = template(
        {"app": APP, "tier": "edge-api"},
        [
            container(
                APP,
                img,
                port=8080,
                cpu="1500m",
                memory="2Gi",
                cpu_limit=None,
                mem_limit="3Gi",
                env=[
                    {"name": "GOMAXPROCS", "value": "2"},
                    {"name": "DRM_LICENSE_URL", "value": "http://drm-proxy.media.svc"},
                ],
                readiness=http_probe("/ready", delay=3, period=5, timeout=2),
                liveness=http_probe("/healthz", delay=10, period=10, timeout=3),
            )
        ],
        topologySpreadConstraints=spread,
    )
    h = pod_hash(APP, 58)
    objs.append(
        deployment(
            c,
            NS,
            APP,
            tmpl,
            replicas=16,
            revision=58,
            created_days=700,
            ready=7,
            updated=16,
            available=7,
            unavailable=9,
            observed_replicas=16,
            avail_ok=False,
            progressing=(
                "True",
                "NewReplicaSetAvailable",
                f'ReplicaSet "{APP}-{h}" has successfully progressed.',
                60 * 24 * 3,
            ),
        )
    )
    objs.append(replicaset(c, NS, APP, tmpl, revision=58, created_min=60 * 24 * 3 + 12, replicas=16, ready=7))
    objs.append(
        hpa(
            c,
            NS,
            APP,
            min_r=8,
            max_r=30,
            current=16,
            desired=16,
            cpu_target=60,
            cpu_now=131,
            last_scale_min=PEAK,
            able=("True", "SucceededRescale", "the HPA controller was able to update the target scale to 16"),
        )
    )
    placement = [apps[0], apps[1], apps[2], apps[0], apps[3], apps[4], apps[5]]
    ready, running_pods = [], []
    for i, (nd, _z) in enumerate(placement):
        name, ip = f"{APP}-{h}-{suffix('run' + str(i))}", f"10.9.{16 if i < 4 else 32}.{30 + i * 9}"
        st = 60 * 24 * 3 + 10 - i
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
                started_min=st,
                hash_label=h,
                statuses=[cstatus(c, APP, img, ready=True, state=running(st - 0.1, c))],
            )
        )
        ready.append((ip, name, nd))
        running_pods.append(name)
    for i in range(9):
        name = f"{APP}-{h}-{suffix('pend' + str(i))}"
        created = DRAIN - 0.2 if i < 3 else PEAK - 0.05
        p = pod(
            c,
            NS,
            name,
            ("ReplicaSet", f"{APP}-{h}"),
            tmpl["metadata"]["labels"],
            tmpl["spec"],
            node_name=None,
            ip=None,
            started_min=created,
            hash_label=h,
            phase="Pending",
            statuses=[],
            conditions_extra=[
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": SCHED_MSG,
                    "lastProbeTime": None,
                    "lastTransitionTime": c.at(created - 0.01),
                }
            ],
        )
        objs.append(p)
        objs.append(
            event(
                c,
                NS,
                "Pod",
                name,
                "FailedScheduling",
                SCHED_MSG,
                first_min=created - 0.01,
                last_min=0.5 + i * 0.2,
                count=(61 if i < 3 else 9) + i,
                type_="Warning",
                component="default-scheduler",
            )
        )
        objs.append(
            event(
                c,
                NS,
                "Pod",
                name,
                "NotTriggerScaleUp",
                "pod didn't trigger scale-up: 2 node(s) didn't "
                "match pod topology spread constraints, 1 max node group size reached, 1 node(s) had "
                "untolerated taint {dedicated: transcode}",
                first_min=created - 0.2,
                last_min=1 + i * 0.3,
                count=(180 if i < 3 else 19) + i,
                component="cluster-autoscaler",
            )
        )
    objs.append(service(c, NS, APP, {"app": APP}, port=80, target="http", cluster_ip="172.20.60.15"))
    objs.append(endpoints(c, NS, APP, ready, [], 8080))
    objs.append(
        event(
            c,
            NS,
            "Deployment",
            APP,
            "ScalingReplicaSet",
            f"Scaled up replica set {APP}-{h} to 16 from 10",
            first_min=PEAK,
            last_min=PEAK,
            component="deployment-controller",
            api_version="apps/v1",
        )
    )
    objs.append(
        event(
            c,
            NS,
            "HorizontalPodAutoscaler",
            APP,
            "SuccessfulRescale",
            "New size: 16; reason: cpu resource utilization (percentage of request) above target",
            first_min=PEAK,
            last_min=PEAK,
            component="horizontal-pod-autoscaler",
            api_version="autoscaling/v2",
        )
    )
    manifest = healthy_app(
        c,
        NS,
        "playback-manifest",
        "public.ecr.aws/reelhouse/playback-manifest:6.0.3",
        replicas=8,
        nodes=[n for n, _ in apps],
        ip_prefix="10.9.33",
        cluster_ip="172.20.60.40",
        rollout_min=60 * 24 * 2,
        cpu="500m",
        memory="512Mi",
    )
    for o in manifest:
        if o["kind"] == "Pod" and o["metadata"]["name"].endswith(
            tuple(suffix("playback-manifest" + str(i)) for i in range(4, 8))
        ):
            o["metadata"]["creationTimestamp"] = c.at(PEAK - 1)
            o["status"]["startTime"] = c.at(PEAK - 1)
            o["status"]["containerStatuses"][0]["state"] = running(PEAK - 1.1, c)
            for cond in o["status"]["conditions"]:
                cond["lastTransitionTime"] = c.at(PEAK - 1.2)
    objs += manifest
    objs.append(
        hpa(
            c,
            NS,
            "playback-manifest",
            min_r=4,
            max_r=20,
            current=8,
            desired=8,
            cpu_target=60,
            cpu_now=57,
            last_scale_min=PEAK - 1,
        )
    )
    objs.append(
        event(
            c,
            NS,
            "HorizontalPodAutoscaler",
            "playback-manifest",
            "SuccessfulRescale",
            "New size: 8; reason: cpu resource utilization (percentage of request) above target",
            first_min=PEAK - 1,
            last_min=PEAK - 1,
            component="horizontal-pod-autoscaler",
            api_version="autoscaling/v2",
        )
    )
    objs += healthy_app(
        c,
        "media",
        "drm-proxy",
        "public.ecr.aws/reelhouse/drm-proxy:2.3.1",
        replicas=3,
        nodes=[n for n, _ in apps[::2]],
        ip_prefix="10.9.17",
        cluster_ip="172.20.61.8",
    )
    objs += healthy_app(  # the GPU transcoders: the only tenants of the tainted pool, one per zone
        c,
        "media",
        "live-transcoder",
        "public.ecr.aws/reelhouse/live-transcoder:9.4.0",
        replicas=3,
        nodes=[n for n, _ in trans],
        ip_prefix="10.9.50",
        cluster_ip="172.20.61.30",
        cpu="6",
        memory="20Gi",
        mem_limit="24Gi",
        spec_extra={
            "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "transcode", "effect": "NoSchedule"}],
            "nodeSelector": {"nodepool": "transcode"},
        },
    )
    objs.append(
        configmap(
            c,
            "kube-system",
            "cluster-autoscaler-status",
            {"status": _ca_status(c)},
            created_min=60 * 24 * 300,
            annotations={
                "cluster-autoscaler.kubernetes.io/last-updated": c.at(0.2).replace("T", " ").replace("Z", " +0000 UTC")
            },
        )
    )

    logs, mx = [], Metrics(c)
    for m10 in range(900, 0, -1):
        m = m10 / 10
        p = running_pods[m10 % 7]
        slow = m < PEAK
        dur = 0.21 if not slow else 1.4 + (m10 % 9) * 0.25
        code = 200 if not slow or m10 % 13 else 504
        logs.append(
            ecs(
                c,
                m,
                f"POST /v3/sessions {code} {int(dur * 1000)}ms title=tt-premiere-{m10 % 3}",
                "info" if code == 200 else "warn",
                APP,
                NS,
                p,
                APP,
                **{"http.response.status_code": code, "event.duration": int(dur * 1e9)},
            )
        )
        if slow and m10 % 17 == 0:
            logs.append(ecs(c, m, "session queue depth 412 > 200, shedding prefetch", "warn", APP, NS, p, APP))
    span = range(90, -1, -1)
    for name in running_pods:
        mx.series(
            "container_cpu_usage_seconds",
            "counter",
            {"namespace": NS, "pod": name, "container": APP},
            [(m, sum(0.8 if mm > PEAK else 1.95 for mm in range(90, m - 1, -1)) * 60) for m in span],
        )
    mx.series(
        "kube_horizontalpodautoscaler_status_desired_replicas",
        "gauge",
        {"namespace": NS, "horizontalpodautoscaler": APP},
        [(m, 10 if m > PEAK else 16) for m in span],
    )
    mx.series(
        "kube_horizontalpodautoscaler_spec_max_replicas",
        "gauge",
        {"namespace": NS, "horizontalpodautoscaler": APP},
        [(m, 30) for m in span],
    )
    mx.series(
        "kube_deployment_status_replicas_available",
        "gauge",
        {"namespace": NS, "deployment": APP},
        [(m, 7) for m in span],
    )
    bounds = [0.25, 0.5, 1.0, 2.5]
    cum, total, cnt, pts = [0.0] * 5, 0.0, 0.0, []
    for m in span:
        rate = 2400 if m > PEAK else 6100
        shares = [0.9, 0.97, 0.995, 0.999, 1.0] if m > PEAK else [0.05, 0.12, 0.31, 0.88, 1.0]
        cum = [cum[i] + rate * shares[i] for i in range(5)]
        cnt += rate
        total += rate * (0.2 if m > PEAK else 1.7)
        pts.append((m, list(cum), total, cnt))
    mx.histogram(
        "http_request_duration_seconds", {"namespace": NS, "service": APP, "route": "/v3/sessions"}, bounds, pts
    )
    scenario = {
        "id": SID,
        "title": "Playback start latency during the premiere",
        "now": NOW,
        "report": """
            playback start latency is through the roof for tonight's premiere (p95 > 2s). HPA wants 16 playback-api
            pods but only 7 are up, the rest are Pending. do we need more nodes? cluster autoscaler isn't adding any
        """.replace("            ", ""),
        "truth": {
            "category": "unschedulable",
            "culprit": {"kind": "Deployment", "namespace": NS, "name": APP},
            "evidence": [
                "didn't match pod topology spread constraints",
                "DoNotSchedule",
                "max node group size reached",
            ],
            "fix": "Relax playback-api's zone spread (whenUnsatisfiable: ScheduleAnyway, or nodeTaintsPolicy: "
            "Honor so the transcode-only zone stops counting), or bring the us-west-2c apps node group back.",
        },
    }
    write(SID, scenario, objs, logs=logs, metrics=mx)


def _ca_status(c: Clock) -> str:
    return (
        f"Cluster-autoscaler status at {c.at(0.2)}:\n"
        "Cluster-wide:\n  Health:      Healthy (ready=9 unready=0 notStarted=0 longNotStarted=0 registered=9)\n"
        "  ScaleUp:     NoActivity (ready=9 registered=9)\n  ScaleDown:   NoCandidates (candidates=0)\n\n"
        "NodeGroups:\n"
        "  Name:        eks-apps-usw2a\n  Health:      Healthy (ready=3 registered=3 cloudProviderTarget=3 "
        "(minSize=2, maxSize=12))\n  ScaleUp:     NoActivity\n"
        "  Name:        eks-apps-usw2b\n  Health:      Healthy (ready=3 registered=3 cloudProviderTarget=3 "
        "(minSize=2, maxSize=12))\n  ScaleUp:     NoActivity\n"
        "  Name:        eks-apps-usw2c\n  Health:      Healthy (ready=0 registered=0 cloudProviderTarget=0 "
        "(minSize=0, maxSize=0))\n  ScaleUp:     NoActivity\n"
        "  Name:        eks-transcode\n  Health:      Healthy (ready=3 registered=3 cloudProviderTarget=3 "
        "(minSize=3, maxSize=6))\n  ScaleUp:     NoActivity\n"
    )
