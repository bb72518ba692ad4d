"""Larkspur Freight: Harbor's retention rule purged route-planner:1.18.4 while the Deployment
still runs it. Nothing was deployed; a node-pool upgrade drained the old nodes, and the pods
rescheduled onto fresh nodes cannot pull the image. Pods left on old nodes run from cache."""

from __future__ import annotations

from datetime import timedelta

from .kube import (
    at,
    container,
    deploy_status,
    deployment,
    event,
    healthy_deployment,
    http_probe,
    ms,
    namespace,
    node,
    pod,
    pod_hash,
    replicaset,
    running,
    suffix,
    template,
    ts,
    waiting,
)
from .write import Scenario, doc

NOW = at("2026-11-24T07:40:00Z")
ID = "route-planner-new-nodes"
NS = "dispatch"
IMAGE = "harbor.larkspur.io/dispatch/route-planner:1.18.4"
PULL = (
    f'Failed to pull image "{IMAGE}": rpc error: code = Unknown desc = reading manifest 1.18.4 '
    "in harbor.larkspur.io/dispatch/route-planner: manifest unknown: manifest unknown"
)


def build() -> Scenario:
    s = Scenario(
        id=ID,
        title="route-planner degraded after the node pool upgrade",
        now=ts(NOW),
        report=(
            "route-planner in dispatch has been degraded since the node pool upgrade this "
            "morning, dispatchers say ETAs take forever to load. nothing was deployed to "
            "dispatch since october so I guess the new node image (1.29 AMI) broke something? "
            "eta-service looks fine on the new nodes though, weird\n"
        ),
        truth={
            "category": "image_pull",
            "culprit": {"kind": "Deployment", "namespace": NS, "name": "route-planner"},
            "evidence": ["manifest unknown", "route-planner:1.18.4", "ImagePullBackOff"],
            "fix": (
                "The tag 1.18.4 no longer exists in Harbor (purged by the project's "
                "retention policy); restore it or roll route-planner to a retained tag, and "
                "exclude deployed tags from retention. The new nodes are fine."
            ),
        },
    )
    old_created = NOW - timedelta(days=96)
    new_created = NOW - timedelta(minutes=47)
    old_nodes = [
        ("ip-10-20-1-11.eu-west-1.compute.internal", "10.20.1.11"),
        ("ip-10-20-2-37.eu-west-1.compute.internal", "10.20.2.37"),
    ]
    new_nodes = [
        ("ip-10-20-3-101.eu-west-1.compute.internal", "10.20.3.101"),
        ("ip-10-20-3-142.eu-west-1.compute.internal", "10.20.3.142"),
        ("ip-10-20-4-18.eu-west-1.compute.internal", "10.20.4.18"),
    ]
    s.objects += [
        namespace(NS, NOW - timedelta(days=400)),
        namespace("default", NOW - timedelta(days=700)),
        namespace("kube-system", NOW - timedelta(days=700)),
        namespace("fleet-ops", NOW - timedelta(days=300)),
    ]
    eta_image = "harbor.larkspur.io/dispatch/eta-service:3.7.2"
    ui_image = "harbor.larkspur.io/dispatch/dispatch-ui:2026.11.19-1"
    for name, ip in old_nodes:
        s.objects.append(
            node(
                name,
                old_created,
                address=ip,
                kubelet="v1.28.11",
                labels={
                    "eks.amazonaws.com/nodegroup": "general-v128",
                    "node.kubernetes.io/instance-type": "m6i.2xlarge",
                },
                heartbeat=NOW - timedelta(seconds=31),
                runtime="cri-o://1.28.4",
                cached_images=[IMAGE, eta_image, ui_image, "registry.k8s.io/kube-proxy:v1.28.11"],
            )
        )
    for name, ip in new_nodes:
        s.objects.append(
            node(
                name,
                new_created,
                address=ip,
                kubelet="v1.29.6",
                labels={
                    "eks.amazonaws.com/nodegroup": "general-v129",
                    "node.kubernetes.io/instance-type": "m6i.2xlarge",
                },
                heartbeat=NOW - timedelta(seconds=12),
                runtime="cri-o://1.29.5",
                image="Amazon Linux 2023.5.20241104",
                cached_images=[eta_image, "registry.k8s.io/kube-proxy:v1.29.6"],
            )
        )

    # route-planner: unchanged for 63 days; 2 pods still on old nodes, 3 rescheduled at 06:58-07:04
    rolled = NOW - timedelta(days=63, hours=3)
    labels = {"app": "route-planner", "team": "dispatch-core"}
    tmpl = template(
        labels,
        [
            container(
                "route-planner",
                IMAGE,
                ports=[8080],
                requests={"cpu": "500m", "memory": "1Gi"},
                limits={"memory": "1536Mi"},
                env=[
                    {"name": "JAVA_TOOL_OPTIONS", "value": "-XX:MaxRAMPercentage=70"},
                    {"name": "OSRM_URL", "value": "http://osrm.fleet-ops:5000"},
                ],
                readiness=http_probe("/actuator/health/readiness", 8080, 20),
                liveness=http_probe("/actuator/health/liveness", 8080, 60, 20),
            )
        ],
        service_account="route-planner",
    )
    d = deployment(
        NS,
        "route-planner",
        NOW - timedelta(days=210),
        tmpl,
        replicas=5,
        revision=12,
        updated=rolled,
        labels={"team": "dispatch-core"},
        status=deploy_status(
            5,
            2,
            5,
            2,
            since=NOW - timedelta(minutes=36),
            progressing=(
                "True",
                "NewReplicaSetAvailable",
                'ReplicaSet "route-planner-' + pod_hash("rp12") + '" has successfully progressed.',
            ),
            generation=14,
        ),
    )
    h = pod_hash("rp12")
    rs = replicaset(d, h, rolled, 12, replicas=5, ready=2)
    s.objects += [d, rs]
    for i, (n, ip) in enumerate(old_nodes):
        pname = f"route-planner-{h}-{suffix(f'rp-old{i}')}"
        started = NOW - timedelta(days=5, hours=2 + i * 5)
        s.objects.append(
            pod(
                rs,
                pname,
                started,
                node_name=n,
                ip=f"10.20.{1 + i}.{140 + i}",
                host_ip=ip,
                statuses=[running("route-planner", IMAGE, started)],
            )
        )
        for m in range(0, 60, 4):
            t = NOW - timedelta(minutes=60 - m, seconds=i * 7)
            s.docs.append(
                doc(
                    ms(t),
                    f"Computed plan for depot={['DUB2', 'ORK1', 'SNN3'][m % 3]} "
                    f"stops={18 + m % 11} in {420 + 25 * m + i * 300}ms",
                    "INFO",
                    "route-planner",
                    NS,
                    pname,
                    "route-planner",
                    **{"log__logger": "c.l.dispatch.planner.PlanService"},
                )
            )
        s.log(
            NS,
            pname,
            "route-planner",
            [
                f"{(NOW - timedelta(minutes=9 - k)).strftime('%Y-%m-%d %H:%M:%S.%f')[:-3]}  INFO 1 --- "
                f"[nio-8080-exec-{k + 1}] c.l.dispatch.planner.PlanService : Computed plan for depot=DUB2 "
                f"stops={20 + k} in {1900 + 130 * k}ms"
                for k in range(8)
            ]
            + [
                f"{(NOW - timedelta(minutes=1)).strftime('%Y-%m-%d %H:%M:%S.%f')[:-3]}  WARN 1 --- "
                "[nio-8080-exec-4] o.a.tomcat.util.threads.ThreadPoolExecutor : Pool nearly saturated: "
                "active=190 max=200"
            ],
        )
    pending_msg = f'Back-off pulling image "{IMAGE}"'
    for i, (n, ip) in enumerate(new_nodes):
        created = NOW - timedelta(minutes=42 - 2 * i)
        pname = f"route-planner-{h}-{suffix(f'rp-new{i}')}"
        s.objects.append(
            pod(
                rs,
                pname,
                created,
                node_name=n,
                ip=f"10.20.{3 + i // 2}.{60 + i}",
                host_ip=ip,
                phase="Pending",
                ready=False,
                statuses=[waiting("route-planner", IMAGE, "ImagePullBackOff", pending_msg)],
            )
        )
        s.objects += [
            event(
                NS,
                "Pod",
                pname,
                "Scheduled",
                f"Successfully assigned {NS}/{pname} to {n}",
                first=created,
                last=created,
                source="default-scheduler",
            ),
            event(
                NS,
                "Pod",
                pname,
                "Pulling",
                f'Pulling image "{IMAGE}"',
                first=created + timedelta(seconds=2),
                last=NOW - timedelta(minutes=3 + i),
                count=10 - i,
                host=n,
            ),
            event(
                NS,
                "Pod",
                pname,
                "Failed",
                PULL,
                first=created + timedelta(seconds=3),
                last=NOW - timedelta(minutes=3 + i),
                count=10 - i,
                type_="Warning",
                host=n,
            ),
            event(
                NS,
                "Pod",
                pname,
                "Failed",
                "Error: ErrImagePull",
                first=created + timedelta(seconds=3),
                last=NOW - timedelta(minutes=3 + i),
                count=10 - i,
                type_="Warning",
                host=n,
            ),
            event(
                NS,
                "Pod",
                pname,
                "BackOff",
                pending_msg,
                first=created + timedelta(seconds=30),
                last=NOW - timedelta(seconds=40 + 20 * i),
                count=160 - 9 * i,
                type_="Warning",
                host=n,
            ),
            event(
                NS,
                "ReplicaSet",
                f"route-planner-{h}",
                "SuccessfulCreate",
                f"Created pod: {pname}",
                first=created,
                last=created,
                source="replicaset-controller",
                api="apps/v1",
            ),
        ]
    for n, _ in new_nodes:
        s.objects.append(
            event(
                "",
                "Node",
                n,
                "NodeReady",
                f"Node {n} status is now: NodeReady",
                first=new_created + timedelta(seconds=50),
                last=new_created + timedelta(seconds=50),
                host=n,
            )
        )

    # bystanders
    objs, eta_pods = healthy_deployment(
        NS,
        "eta-service",
        eta_image,
        replicas=3,
        created=NOW - timedelta(days=300),
        rolled=NOW - timedelta(minutes=41),
        revision=57,
        nodes=new_nodes,
        ip_prefix="10.20.3",
    )
    # eta-service was *rescheduled* by the drain, not deployed: keep its rollout old
    objs[0]["metadata"]["managedFields"][0]["time"] = ts(NOW - timedelta(days=6))
    objs[0]["metadata"]["managedFields"][1]["time"] = ts(NOW - timedelta(days=6))
    objs[1]["metadata"]["creationTimestamp"] = ts(NOW - timedelta(days=6))
    s.objects += objs
    objs, ui_pods = healthy_deployment(
        NS,
        "dispatch-ui",
        ui_image,
        replicas=2,
        created=NOW - timedelta(days=380),
        rolled=NOW - timedelta(days=5, hours=2),
        revision=131,
        nodes=old_nodes,
        ip_prefix="10.20.1",
        port=3000,
    )
    s.objects += objs
    objs, _ = healthy_deployment(
        "fleet-ops",
        "osrm",
        "ghcr.io/project-osrm/osrm-backend:v5.27.1",
        replicas=2,
        created=NOW - timedelta(days=290),
        rolled=NOW - timedelta(days=88),
        revision=4,
        nodes=old_nodes,
        ip_prefix="10.20.2",
        port=5000,
        requests={"cpu": "1", "memory": "6Gi"},
        limits={"memory": "8Gi"},
    )
    s.objects += objs
    s.objects.append(
        event(
            NS,
            "Pod",
            ui_pods[0],
            "Unhealthy",
            'Readiness probe failed: Get "http://10.20.1.20:3000/healthz": context '
            "deadline exceeded (Client.Timeout exceeded while awaiting headers)",
            first=NOW - timedelta(minutes=52),
            last=NOW - timedelta(minutes=52),
            type_="Warning",
            host=old_nodes[0][0],
        )
    )
    for m in range(0, 60, 2):
        t = NOW - timedelta(minutes=60 - m, seconds=11)
        p = eta_pods[m % 3]
        slow = m > 16
        s.docs.append(
            doc(
                ms(t),
                (
                    "GET /v2/eta route-planner responded in "
                    f"{(2600 + 90 * m) if slow else 480 + m}ms"
                    if slow or m % 4
                    else "eta cache refreshed: 1422 depots"
                ),
                "warn" if slow else "info",
                "eta-service",
                NS,
                p,
                "eta-service",
                **{"event__duration": (2600 + 90 * m) * 1_000_000},
            )
        )
        if slow and m % 6 == 0:
            s.docs.append(
                doc(
                    ms(t + timedelta(seconds=3)),
                    "upstream request failed: GET http://route-planner.dispatch:8080/plan: "
                    "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
                    "error",
                    "eta-service",
                    NS,
                    p,
                    "eta-service",
                    **{"error__type": "timeout"},
                )
            )
        if m % 10 == 0:
            s.docs.append(
                doc(
                    ms(t + timedelta(seconds=7)),
                    "GET /dashboard 200",
                    "info",
                    "dispatch-ui",
                    NS,
                    ui_pods[m % 2],
                    "dispatch-ui",
                    **{"http__response__status_code": 200},
                )
            )
    return s
