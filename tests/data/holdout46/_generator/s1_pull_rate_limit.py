"""1. image_pull: Docker Hub anonymous pull rate limit on the nodes the autoscaler just added."""

from __future__ import annotations

from datetime import timedelta

from . import _kit as k

SID = "bf-edge-proxy-new-nodes"

ENVOY = "docker.io/envoyproxy/envoy:v1.28.1"
ECR = "318204675530.dkr.ecr.eu-central-1.amazonaws.com"
NG = "eks-general-2026a-5ec5f1d2-8a3b-4c2e-9d11-7e0c3b9a4f21"


def build(root) -> None:
    s = k.Scenario(SID, "2026-11-27T19:42:00Z", 4601)
    now = s.now
    old_created = s.ago(days=19, hours=3)
    new_created = s.ago(minutes=19, seconds=40)
    scale_t = s.ago(minutes=24, seconds=10)

    for ns in ("default", "kube-system", "storefront", "search", "platform"):
        s.add(k.namespace(s, ns, s.ago(days=240)))

    ds_images = [
        {
            "names": [
                "602401143452.dkr.ecr.eu-central-1.amazonaws.com/amazon-k8s-cni@" + s.digest("cni"),
                "602401143452.dkr.ecr.eu-central-1.amazonaws.com/amazon-k8s-cni:v1.15.4-eksbuild.1",
            ],
            "sizeBytes": 46231874,
        },
        {
            "names": [
                "602401143452.dkr.ecr.eu-central-1.amazonaws.com/eks/kube-proxy@" + s.digest("kp"),
                "602401143452.dkr.ecr.eu-central-1.amazonaws.com/eks/kube-proxy:v1.28.5-minimal-eksbuild.2",
            ],
            "sizeBytes": 33451120,
        },
        {
            "names": [
                "cr.fluentbit.io/fluent/fluent-bit@" + s.digest("fb"),
                "cr.fluentbit.io/fluent/fluent-bit:2.2.1",
            ],
            "sizeBytes": 28733190,
        },
    ]
    app_images = [
        {"names": ["docker.io/envoyproxy/envoy@" + s.digest(ENVOY), ENVOY], "sizeBytes": 61544218},
        {
            "names": [f"{ECR}/catalog-api@" + s.digest("catalog"), f"{ECR}/catalog-api:2.14.3"],
            "sizeBytes": 98211433,
        },
        {
            "names": [f"{ECR}/query-service@" + s.digest("query"), f"{ECR}/query-service:1.9.0"],
            "sizeBytes": 88120456,
        },
    ]
    old, new = [], []
    for i, (zone, ipx) in enumerate(
        [
            ("eu-central-1a", "10.30.11.42"),
            ("eu-central-1b", "10.30.12.17"),
            ("eu-central-1c", "10.30.13.88"),
        ]
    ):
        name = f"ip-{ipx.replace('.', '-')}.eu-central-1.compute.internal"
        old.append(
            k.node(
                s,
                name,
                old_created + timedelta(minutes=i * 3),
                zone,
                "m6i.2xlarge",
                cpu="8",
                memory="32408536Ki",
                alloc_cpu="7910m",
                alloc_mem="31387608Ki",
                extra_labels={
                    "eks.amazonaws.com/nodegroup": "general-2026a",
                    "eks.amazonaws.com/capacityType": "ON_DEMAND",
                },
                images=app_images + ds_images,
                internal_ip=ipx,
                provider_id=f"aws:///{zone}/i-0{s.suffix(16)}",
            )
        )
    for i, (zone, ipx) in enumerate(
        [
            ("eu-central-1a", "10.30.11.203"),
            ("eu-central-1b", "10.30.12.156"),
            ("eu-central-1c", "10.30.13.61"),
        ]
    ):
        name = f"ip-{ipx.replace('.', '-')}.eu-central-1.compute.internal"
        imgs = ds_images + ([app_images[1]] if i < 2 else [])
        new.append(
            k.node(
                s,
                name,
                new_created + timedelta(seconds=i * 7),
                zone,
                "m6i.2xlarge",
                cpu="8",
                memory="32408536Ki",
                alloc_cpu="7910m",
                alloc_mem="31387608Ki",
                extra_labels={
                    "eks.amazonaws.com/nodegroup": "general-2026a",
                    "eks.amazonaws.com/capacityType": "ON_DEMAND",
                },
                images=imgs,
                internal_ip=ipx,
                provider_id=f"aws:///{zone}/i-0{s.suffix(16)}",
            )
        )
    s.add(*old, *new)
    for n in new:
        nm = n["metadata"]["name"]
        t0 = k.parse(n["metadata"]["creationTimestamp"])
        s.add(
            k.event(
                s,
                "",
                "Node",
                nm,
                "Starting",
                "Starting kubelet.",
                t0,
                host=nm,
                involved_uid=n["metadata"]["uid"],
            ),
            k.event(
                s,
                "",
                "Node",
                nm,
                "RegisteredNode",
                f"Node {nm} event: Registered Node {nm} in Controller",
                t0 + timedelta(seconds=3),
                component="node-controller",
                involved_uid=n["metadata"]["uid"],
            ),
            k.event(
                s,
                "",
                "Node",
                nm,
                "NodeReady",
                f"Node {nm} status is now: NodeReady",
                t0 + timedelta(seconds=41),
                host=nm,
                involved_uid=n["metadata"]["uid"],
            ),
        )

    # --- the culprit: edge-proxy --------------------------------------------------------------
    ns = "storefront"
    labels = {"app": "edge-proxy", "app.kubernetes.io/part-of": "storefront"}
    c = k.container(
        "envoy",
        ENVOY,
        ports=[
            {"name": "http", "containerPort": 10000, "protocol": "TCP"},
            {"name": "admin", "containerPort": 9901, "protocol": "TCP"},
        ],
        cpu="1",
        memory="512Mi",
        limit_cpu="2",
        limit_memory="1Gi",
        args=[
            "-c",
            "/etc/envoy/envoy.yaml",
            "--service-cluster",
            "edge-proxy",
            "--log-level",
            "info",
        ],
        readiness=k.http_probe("/ready", "admin", delay=3, period=5),
        mounts=[{"name": "config", "mountPath": "/etc/envoy", "readOnly": True}],
    )
    spec = k.pod_spec(
        [c],
        volumes=[{"name": "config", "configMap": {"name": "edge-proxy-envoy", "defaultMode": 420}}],
    )
    dep_created = s.ago(days=61)
    rs_created = s.ago(days=6, hours=2)
    dep = k.deployment(
        s,
        ns,
        "edge-proxy",
        10,
        labels,
        spec,
        dep_created,
        14,
        k.deploy_status(
            10,
            4,
            10,
            4,
            31,
            ("True", "ReplicaSetUpdated", "", scale_t),
            (
                "False",
                "MinimumReplicasUnavailable",
                "Deployment does not have minimum availability.",
                scale_t + timedelta(seconds=1),
            ),
            rs_created,
        ),
    )
    pth = "6d9f7c8b54"
    rs_name = f"edge-proxy-{pth}"
    dep["status"]["conditions"][1]["message"] = f'ReplicaSet "{rs_name}" is progressing.'
    rs = k.replicaset(s, dep, rs_name, pth, 10, 4, rs_created, 14, spec, labels)
    rs["status"]["observedGeneration"] = 31
    s.add(dep, rs)
    plabels = dict(labels, **{"pod-template-hash": pth})
    image_id = "docker.io/envoyproxy/envoy@" + s.digest(ENVOY)
    running = []
    for i in range(4):
        nd = old[i % 3]
        pc = rs_created + timedelta(seconds=25 * i + 7)
        st = k.cs_running("envoy", ENVOY, image_id, pc + timedelta(seconds=3))
        p = k.pod(
            s,
            ns,
            f"{rs_name}-{s.suffix()}",
            k.owner_of(rs),
            plabels,
            spec,
            nd["metadata"]["name"],
            nd["status"]["addresses"][0]["address"],
            pc,
            "Running",
            k.pod_conditions(pc, ready_at=pc + timedelta(seconds=9)),
            [st],
        )
        running.append(p)
    s.add(*running)
    stuck = []
    manifest_digest = s.digest("envoy-manifest")
    for i in range(6):
        nd = new[i % 3]
        nm = nd["metadata"]["name"]
        pc = scale_t + timedelta(seconds=1 + i // 3)
        sched = k.parse(nd["metadata"]["creationTimestamp"]) + timedelta(seconds=48 + i)
        st = k.cs_waiting(
            "envoy",
            ENVOY,
            "ImagePullBackOff" if i != 4 else "ErrImagePull",
            f'Back-off pulling image "{ENVOY}"'
            if i != 4
            else f'failed to pull and unpack image "{ENVOY}": failed to copy: httpReadSeeker: '
            "failed open: "
            "unexpected status code https://registry-1.docker.io/v2/envoyproxy/envoy/manifests/"
            f"{manifest_digest}: "
            "429 Too Many Requests - Server message: toomanyrequests: You have reached your pull "
            "rate limit. "
            f"You may increase the limit by authenticating and upgrading: https://www.docker.com/increase-rate-limit",
        )
        pname = f"{rs_name}-{s.suffix()}"
        p = k.pod(
            s,
            ns,
            pname,
            k.owner_of(rs),
            plabels,
            spec,
            nm,
            nd["status"]["addresses"][0]["address"],
            pc,
            "Pending",
            k.pod_conditions(pc, ready=False, message="containers with unready status: [envoy]"),
            [st],
        )
        p["status"]["conditions"][-1]["lastTransitionTime"] = k.rfc(sched)
        p["status"]["startTime"] = k.rfc(sched)
        stuck.append(p)
        puid = p["metadata"]["uid"]
        fp = "spec.containers{envoy}"
        pulls = 5 + (i % 2)
        s.add(
            k.event(
                s,
                ns,
                "Pod",
                pname,
                "FailedScheduling",
                "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: "
                "3 No preemption victims found for incoming pod.",
                pc,
                pc + timedelta(seconds=30),
                count=2,
                etype="Warning",
                component="default-scheduler",
                involved_uid=puid,
            ),
            k.event(
                s,
                ns,
                "Pod",
                pname,
                "TriggeredScaleUp",
                f"pod triggered scale-up: [{{{NG} 3->6 (max: 9)}}]",
                pc + timedelta(seconds=11),
                component="cluster-autoscaler",
                involved_uid=puid,
            ),
            k.event(
                s,
                ns,
                "Pod",
                pname,
                "Scheduled",
                f"Successfully assigned {ns}/{pname} to {nm}",
                sched,
                component="default-scheduler",
                involved_uid=puid,
            ),
            k.event(
                s,
                ns,
                "Pod",
                pname,
                "Pulling",
                f'Pulling image "{ENVOY}"',
                sched + timedelta(seconds=2),
                s.ago(minutes=3 + i % 4),
                count=pulls,
                host=nm,
                field_path=fp,
                involved_uid=puid,
            ),
            k.event(
                s,
                ns,
                "Pod",
                pname,
                "Failed",
                f'Failed to pull image "{ENVOY}": rpc error: code = Unknown desc = failed to pull '
                "and unpack image "
                f'"{ENVOY}": failed to copy: httpReadSeeker: failed open: unexpected status code '
                f"https://registry-1.docker.io/v2/envoyproxy/envoy/manifests/{manifest_digest}: "
                "429 Too Many Requests - "
                "Server message: toomanyrequests: You have reached your pull rate limit. You may "
                "increase the limit "
                f"by authenticating and upgrading: https://www.docker.com/increase-rate-limit",
                sched + timedelta(seconds=3),
                s.ago(minutes=3 + i % 4, seconds=-1),
                count=pulls,
                etype="Warning",
                host=nm,
                field_path=fp,
                involved_uid=puid,
            ),
            k.event(
                s,
                ns,
                "Pod",
                pname,
                "Failed",
                "Error: ErrImagePull",
                sched + timedelta(seconds=3),
                s.ago(minutes=3 + i % 4, seconds=-1),
                count=pulls,
                etype="Warning",
                host=nm,
                field_path=fp,
                involved_uid=puid,
            ),
            k.event(
                s,
                ns,
                "Pod",
                pname,
                "BackOff",
                f'Back-off pulling image "{ENVOY}"',
                sched + timedelta(seconds=4),
                s.ago(seconds=20 + 9 * i),
                count=58 + 3 * i,
                host=nm,
                field_path=fp,
                involved_uid=puid,
            ),
            k.event(
                s,
                ns,
                "Pod",
                pname,
                "Failed",
                "Error: ImagePullBackOff",
                sched + timedelta(seconds=4),
                s.ago(seconds=20 + 9 * i),
                count=58 + 3 * i,
                etype="Warning",
                host=nm,
                field_path=fp,
                involved_uid=puid,
            ),
        )
    s.add(*stuck)
    svc = k.service(
        s,
        ns,
        "edge-proxy",
        {"app": "edge-proxy"},
        [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 10000}],
        dep_created,
        stype="LoadBalancer",
        lb_hostname="a3f1c09e7b2d44c1a8e0-1642097731.eu-central-1.elb.amazonaws.com",
        annotations={"service.beta.kubernetes.io/aws-load-balancer-type": "nlb"},
    )
    ep = k.endpoints(s, svc, running)
    ep["subsets"][0]["ports"] = [{"name": "http", "port": 10000, "protocol": "TCP"}]
    s.add(svc, ep)
    s.add(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": k.meta(s, "ConfigMap", "edge-proxy-envoy", ns, dep_created),
            "data": {
                "envoy.yaml": "admin:\n  address:\n    socket_address: {address: 0.0.0.0, "
                "port_value: 9901}\n"
                "static_resources:\n  listeners:\n  - name: ingress\n    address:\n"
                "      socket_address: {address: 0.0.0.0, port_value: 10000}\n"
                "  clusters:\n  - name: catalog-api\n    type: STRICT_DNS\n"
                "    load_assignment:\n      cluster_name: catalog-api\n      endpoints:\n"
                "      - lb_endpoints:\n        - endpoint: {address: {socket_address: "
                "{address: catalog-api.storefront.svc.cluster.local, port_value: 80}}}\n"
            },
        }
    )
    hpa = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": k.meta(s, "HorizontalPodAutoscaler", "edge-proxy", ns, dep_created),
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "edge-proxy"},
            "minReplicas": 4,
            "maxReplicas": 20,
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
            "currentReplicas": 10,
            "desiredReplicas": 10,
            "lastScaleTime": k.rfc(scale_t),
            "currentMetrics": [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "current": {"averageUtilization": 93, "averageValue": "934m"},
                    },
                }
            ],
            "conditions": [
                {
                    "type": "AbleToScale",
                    "status": "True",
                    "reason": "ReadyForNewScale",
                    "message": "recommended size matches current size",
                    "lastTransitionTime": k.rfc(scale_t),
                },
                {
                    "type": "ScalingActive",
                    "status": "True",
                    "reason": "ValidMetricFound",
                    "message": "the HPA was able to successfully calculate a replica count from "
                    "cpu resource "
                    "utilization (percentage of request)",
                    "lastTransitionTime": k.rfc(s.ago(days=61)),
                },
                {
                    "type": "ScalingLimited",
                    "status": "False",
                    "reason": "DesiredWithinRange",
                    "message": "the desired count is within the acceptable range",
                    "lastTransitionTime": k.rfc(scale_t),
                },
            ],
        },
    }
    s.add(hpa)
    s.add(
        k.event(
            s,
            ns,
            "HorizontalPodAutoscaler",
            "edge-proxy",
            "SuccessfulRescale",
            "New size: 10; reason: cpu resource utilization (percentage of request) above target",
            scale_t,
            component="horizontal-pod-autoscaler",
            api_version="autoscaling/v2",
            involved_uid=hpa["metadata"]["uid"],
        ),
        k.event(
            s,
            ns,
            "Deployment",
            "edge-proxy",
            "ScalingReplicaSet",
            f"Scaled up replica set {rs_name} to 10 from 4",
            scale_t,
            component="deployment-controller",
            api_version="apps/v1",
            involved_uid=dep["metadata"]["uid"],
        ),
    )

    # --- catalog-api: scaled too, from ECR; its new pods on the new nodes run -----------------
    cat = k.healthy_deployment(
        s,
        ns,
        "catalog-api",
        f"{ECR}/catalog-api:2.14.3",
        5,
        old[:3] + new[:2],
        s.ago(days=200),
        s.ago(days=4, hours=5),
        revision=37,
        cpu="500m",
        memory="768Mi",
    )
    for p in cat["pods"][3:]:
        pc = scale_t + timedelta(seconds=40)
        p["metadata"]["creationTimestamp"] = k.rfc(pc)
        p["status"]["startTime"] = k.rfc(new_created + timedelta(seconds=55))
        cs = p["status"]["containerStatuses"][0]
        cs["state"]["running"]["startedAt"] = k.rfc(new_created + timedelta(seconds=75))
        for cond in p["status"]["conditions"]:
            cond["lastTransitionTime"] = k.rfc(new_created + timedelta(seconds=84))
        nm = p["spec"]["nodeName"]
        s.add(
            k.event(
                s,
                ns,
                "Pod",
                p["metadata"]["name"],
                "Pulled",
                f'Successfully pulled image "{ECR}/catalog-api:2.14.3" in 6.412s (6.412s '
                "including waiting)",
                new_created + timedelta(seconds=70),
                host=nm,
                field_path="spec.containers{catalog-api}",
                involved_uid=p["metadata"]["uid"],
            )
        )
    k.add_parts(s, cat)
    cat_hpa = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": k.meta(s, "HorizontalPodAutoscaler", "catalog-api", ns, s.ago(days=200)),
        "spec": {
            "scaleTargetRef": {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "name": "catalog-api",
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
            "currentReplicas": 5,
            "desiredReplicas": 5,
            "lastScaleTime": k.rfc(scale_t + timedelta(seconds=30)),
            "currentMetrics": [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "current": {"averageUtilization": 58, "averageValue": "290m"},
                    },
                }
            ],
        },
    }
    s.add(
        cat_hpa,
        k.event(
            s,
            ns,
            "HorizontalPodAutoscaler",
            "catalog-api",
            "SuccessfulRescale",
            "New size: 5; reason: cpu resource utilization (percentage of request) above target",
            scale_t + timedelta(seconds=30),
            component="horizontal-pod-autoscaler",
            api_version="autoscaling/v2",
            involved_uid=cat_hpa["metadata"]["uid"],
        ),
    )
    cart = k.healthy_deployment(
        s, ns, "cart", f"{ECR}/cart:5.2.0", 3, old, s.ago(days=300), s.ago(days=9)
    )
    k.add_parts(s, cart)

    # --- search: OpenSearch with a disk watermark warning (decoy), query-service --------------
    q = k.healthy_deployment(
        s,
        "search",
        "query-service",
        f"{ECR}/query-service:1.9.0",
        2,
        old,
        s.ago(days=150),
        s.ago(days=12),
        revision=9,
        restarts={1: 1},
    )
    k.add_parts(s, q)
    os_labels = {"app": "opensearch"}
    osc = k.container(
        "opensearch",
        "opensearchproject/opensearch:2.11.1",
        ports=[
            {"name": "http", "containerPort": 9200, "protocol": "TCP"},
            {"name": "transport", "containerPort": 9300, "protocol": "TCP"},
        ],
        cpu="1",
        memory="4Gi",
        readiness=k.tcp_probe(9200, delay=20, period=10),
        mounts=[{"name": "data", "mountPath": "/usr/share/opensearch/data"}],
    )
    os_spec = k.pod_spec([osc])
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": k.meta(
            s, "StatefulSet", "opensearch", "search", s.ago(days=150), labels=os_labels
        ),
        "spec": {
            "replicas": 3,
            "serviceName": "opensearch-headless",
            "selector": {"matchLabels": os_labels},
            "podManagementPolicy": "Parallel",
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {"metadata": {"labels": os_labels}, "spec": os_spec},
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "data"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "storageClassName": "gp3",
                        "resources": {"requests": {"storage": "100Gi"}},
                    },
                }
            ],
        },
        "status": {
            "replicas": 3,
            "readyReplicas": 3,
            "currentReplicas": 3,
            "updatedReplicas": 3,
            "availableReplicas": 3,
            "currentRevision": "opensearch-7b9c6d5f4d",
            "updateRevision": "opensearch-7b9c6d5f4d",
            "observedGeneration": 4,
            "collisionCount": 0,
        },
    }
    s.add(sts)
    for i in range(3):
        pc = s.ago(days=5, hours=3 + i)
        nd = old[i]
        s.add(
            k.pod(
                s,
                "search",
                f"opensearch-{i}",
                k.owner_of(sts),
                dict(
                    os_labels,
                    **{
                        "controller-revision-hash": "opensearch-7b9c6d5f4d",
                        "statefulset.kubernetes.io/pod-name": f"opensearch-{i}",
                    },
                ),
                os_spec,
                nd["metadata"]["name"],
                nd["status"]["addresses"][0]["address"],
                pc,
                "Running",
                k.pod_conditions(pc, ready_at=pc + timedelta(seconds=50)),
                [
                    k.cs_running(
                        "opensearch",
                        "opensearchproject/opensearch:2.11.1",
                        "docker.io/opensearchproject/opensearch@" + s.digest("os"),
                        pc + timedelta(seconds=5),
                    )
                ],
            )
        )
        s.add(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": k.meta(
                    s,
                    "PersistentVolumeClaim",
                    f"data-opensearch-{i}",
                    "search",
                    s.ago(days=150),
                    labels=os_labels,
                ),
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": "gp3",
                    "volumeMode": "Filesystem",
                    "resources": {"requests": {"storage": "100Gi"}},
                    "volumeName": f"pvc-{s.uid('pv', str(i))}",
                },
                "status": {
                    "phase": "Bound",
                    "accessModes": ["ReadWriteOnce"],
                    "capacity": {"storage": "100Gi"},
                },
            }
        )

    # --- platform: a harmless rollout 35 minutes ago ------------------------------------------
    ff = k.healthy_deployment(
        s,
        "platform",
        "feature-flags",
        f"{ECR}/feature-flags:0.31.2",
        2,
        old,
        s.ago(days=90),
        s.ago(minutes=36),
        revision=22,
        memory="128Mi",
    )
    k.add_parts(s, ff)
    s.add(
        k.event(
            s,
            "platform",
            "Deployment",
            "feature-flags",
            "ScalingReplicaSet",
            f"Scaled up replica set {ff['replicaset']['metadata']['name']} to 2 from 0",
            s.ago(minutes=36),
            component="deployment-controller",
            api_version="apps/v1",
            involved_uid=ff["deployment"]["metadata"]["uid"],
        )
    )

    # --- kube-system: cluster-autoscaler, fluent-bit --------------------------------------------
    ca = k.healthy_deployment(
        s,
        "kube-system",
        "cluster-autoscaler",
        "registry.k8s.io/autoscaling/cluster-autoscaler:v1.28.2",
        1,
        old[:1],
        s.ago(days=240),
        s.ago(days=40),
        revision=3,
        port=8085,
        readiness_path="/health-check",
        with_service=False,
    )
    k.add_parts(s, ca)
    fb_labels = {"app.kubernetes.io/name": "fluent-bit"}
    fbc = k.container(
        "fluent-bit",
        "cr.fluentbit.io/fluent/fluent-bit:2.2.1",
        ports=[{"name": "http", "containerPort": 2020, "protocol": "TCP"}],
        cpu="50m",
        memory="64Mi",
        limit_memory="128Mi",
    )
    fb_spec = k.pod_spec([fbc])
    ds = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": k.meta(
            s, "DaemonSet", "fluent-bit", "kube-system", s.ago(days=240), labels=fb_labels
        ),
        "spec": {
            "selector": {"matchLabels": fb_labels},
            "template": {"metadata": {"labels": fb_labels}, "spec": fb_spec},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
        },
        "status": {
            "currentNumberScheduled": 6,
            "desiredNumberScheduled": 6,
            "numberAvailable": 6,
            "numberMisscheduled": 0,
            "numberReady": 6,
            "observedGeneration": 5,
            "updatedNumberScheduled": 6,
        },
    }
    s.add(ds)
    for nd in old + new:
        nm = nd["metadata"]["name"]
        pc = max(k.parse(nd["metadata"]["creationTimestamp"]), s.ago(days=6, hours=4)) + timedelta(
            seconds=5
        )
        s.add(
            k.pod(
                s,
                "kube-system",
                f"fluent-bit-{s.suffix()}",
                k.owner_of(ds),
                dict(fb_labels, **{"controller-revision-hash": "5c8d9f7b6"}),
                fb_spec,
                nm,
                nd["status"]["addresses"][0]["address"],
                pc,
                "Running",
                k.pod_conditions(pc, ready_at=pc + timedelta(seconds=20)),
                [
                    k.cs_running(
                        "fluent-bit",
                        "cr.fluentbit.io/fluent/fluent-bit:2.2.1",
                        "cr.fluentbit.io/fluent/fluent-bit@" + s.digest("fb"),
                        pc + timedelta(seconds=15),
                    )
                ],
            )
        )

    # --- logs ----------------------------------------------------------------------------------
    ca_pod = ca["pods"][0]["metadata"]["name"]
    s.log(
        scale_t + timedelta(seconds=12),
        "kube-system",
        ca_pod,
        "cluster-autoscaler",
        "info",
        f"I1127 {k.rfc(scale_t + timedelta(seconds=12))[11:19]}.402113       1 scale_up.go:477] "
        f"Best option to resize: {NG}",
    )
    s.log(
        scale_t + timedelta(seconds=12),
        "kube-system",
        ca_pod,
        "cluster-autoscaler",
        "info",
        f"I1127 {k.rfc(scale_t + timedelta(seconds=12))[11:19]}.402190       1 scale_up.go:481] "
        f"Estimated 3 nodes needed in {NG}",
    )
    s.log(
        scale_t + timedelta(seconds=13),
        "kube-system",
        ca_pod,
        "cluster-autoscaler",
        "info",
        f"I1127 {k.rfc(scale_t + timedelta(seconds=13))[11:19]}.011562       1 scale_up.go:601] "
        f"Final scale-up plan: [{{{NG} 3->6 (max: 9)}}]",
    )
    paths = [
        "/api/catalog/search?q=parka",
        "/api/cart",
        "/api/catalog/items/88213",
        "/",
        "/api/checkout/quote",
        "/static/app.4f1c2.js",
        "/api/catalog/items/10442",
    ]
    start = s.ago(hours=2)
    t = start
    i = 0
    promo = s.ago(minutes=27)
    while t < now:
        busy = t > promo
        p = running[i % 4]
        pn = p["metadata"]["name"]
        dur = s.rng.randint(900, 4200) if busy else s.rng.randint(18, 140)
        code = 503 if busy and s.rng.random() < 0.12 else 200
        flags = "UO" if code == 503 else "-"
        path = s.rng.choice(paths)
        s.log(
            t,
            ns,
            pn,
            "envoy",
            "info",
            f'[{k.rfc_ms(t)}] "GET {path} HTTP/1.1" {code} {flags} 0 '
            f"{s.rng.randint(300, 9000) if code == 200 else 81} "
            f'{dur} {dur - 3 if code == 200 else "-"} "{s.rng.randint(1, 254)}.'
            f'{s.rng.randint(1, 254)}.{s.rng.randint(1, 254)}.{s.rng.randint(1, 254)}" '
            f'"Mozilla/5.0" "{s.uid("req", str(i))}" "catalog-api.storefront.svc.cluster.local" '
            '"-"',
            service="edge-proxy",
            **{"http.response.status_code": code, "event.duration": dur * 1_000_000},
        )
        t += timedelta(seconds=s.rng.randint(4, 9) if busy else s.rng.randint(20, 45))
        i += 1
    # OpenSearch watermark warnings (decoy)
    t = s.ago(hours=3)
    while t < now:
        s.log(
            t,
            "search",
            "opensearch-1",
            "opensearch",
            "warn",
            "[WARN ][o.o.c.r.a.DiskThresholdMonitor] [opensearch-1] high disk watermark [90%] "
            "exceeded on "
            "[Qx7hV2pTR1aN3m8cYk0fLw][opensearch-1][/usr/share/opensearch/data/nodes/0] free: "
            "9.1gb[9.1%], "
            "shards will be relocated away from this node; currently relocating away shards "
            "totalling [0] bytes; "
            "the node is expected to continue to exceed the high disk watermark when these "
            "relocations are complete",
            service="opensearch",
        )
        t += timedelta(seconds=30 * 60 + s.rng.randint(0, 50))
    for p in ff["pods"]:
        s.log(
            k.parse(p["metadata"]["creationTimestamp"]) + timedelta(seconds=6),
            "platform",
            p["metadata"]["name"],
            "feature-flags",
            "info",
            "flagd: loaded 212 flags from configmap feature-flags/flags.json (revision 22)",
        )
    for p in cat["pods"]:
        tt = s.ago(minutes=90)
        while tt < now:
            s.log(
                tt,
                ns,
                p["metadata"]["name"],
                "catalog-api",
                "info",
                f"GET /v2/items status=200 took={s.rng.randint(8, 60)}ms",
                service="catalog-api",
                **{"http.response.status_code": 200},
            )
            tt += timedelta(seconds=s.rng.randint(60, 120))

    # --- metrics -------------------------------------------------------------------------------
    pts = s.steps(180)
    ksm = {"job": "kube-state-metrics"}
    s.series(
        "kube_deployment_spec_replicas",
        "gauge",
        "Number of desired pods for a deployment.",
        dict(ksm, namespace=ns, deployment="edge-proxy"),
        [(t, 10 if t >= scale_t else 4) for t in pts],
    )
    s.series(
        "kube_deployment_status_replicas_available",
        "gauge",
        "The number of available replicas per deployment.",
        dict(ksm, namespace=ns, deployment="edge-proxy"),
        [(t, 4) for t in pts],
    )
    s.series(
        "kube_deployment_spec_replicas",
        "gauge",
        "",
        dict(ksm, namespace=ns, deployment="catalog-api"),
        [(t, 5 if t >= scale_t + timedelta(seconds=30) else 3) for t in pts],
    )
    s.series(
        "kube_deployment_status_replicas_available",
        "gauge",
        "",
        dict(ksm, namespace=ns, deployment="catalog-api"),
        [(t, 5 if t >= new_created + timedelta(seconds=90) else 3) for t in pts],
    )
    for p in stuck:
        sched = k.parse(p["status"]["startTime"])
        s.series(
            "kube_pod_container_status_waiting_reason",
            "gauge",
            "Describes the reason the container is currently in waiting state.",
            dict(
                ksm,
                namespace=ns,
                pod=p["metadata"]["name"],
                container="envoy",
                reason="ImagePullBackOff",
            ),
            [(t, 1) for t in pts if t >= sched + timedelta(seconds=30)],
        )
    for j, p in enumerate(running):
        acc = 0.0
        vals = []
        for t in pts:
            rate = (
                0.25 + 0.05 * j
                if t < promo
                else min(1.95, 0.85 + (t - promo).total_seconds() / 600)
            )
            acc += rate * 60
            vals.append((t, round(acc, 3)))
        s.series(
            "container_cpu_usage_seconds_total",
            "counter",
            "Cumulative cpu time consumed in seconds.",
            {"namespace": ns, "pod": p["metadata"]["name"], "container": "envoy", "job": "kubelet"},
            vals,
        )
    for p in running:
        acc = 0.0
        vals = []
        for t in pts:
            acc += (35 if t < promo else 160) * 60
            vals.append((t, acc))
        s.series(
            "envoy_http_downstream_rq_total",
            "counter",
            "Total downstream requests.",
            {
                "namespace": ns,
                "pod": p["metadata"]["name"],
                "envoy_http_conn_manager_prefix": "ingress_http",
            },
            vals,
        )
    acc = [0.0, 0.0, 0.0, 0.0]
    total = 0.0
    hp = []
    for t in pts:
        n = 4 * (35 if t < promo else 160) * 60
        fr = (0.97, 0.999, 1.0, 1.0) if t < promo else (0.08, 0.31, 0.98, 1.0)
        for b in range(4):
            acc[b] += n * fr[b]
        total += n * (0.045 if t < promo else 1.9)
        hp.append((t, [round(a) for a in acc], round(total, 1)))
    s.histogram(
        "envoy_http_downstream_rq_time_seconds",
        "Request time of downstream requests.",
        {"namespace": ns, "envoy_http_conn_manager_prefix": "ingress_http"},
        ["0.1", "1", "5", "+Inf"],
        hp,
    )

    s.write(
        root,
        {
            "title": (
                "Storefront slow during the Black Friday promo; edge-proxy scaled but no faster"
            ),
            "report": "storefront is crawling since the promo email went out (~19:15 UTC), "
            "edge-proxy p99 is "
            "several seconds and some 503s. HPA did scale edge-proxy to 10 but it's not helping "
            "at all. "
            "are the nodes the autoscaler just added broken? or was it the feature-flags deploy "
            "earlier?\n",
            "truth": {
                "category": "image_pull",
                "culprit": {"kind": "Deployment", "namespace": "storefront", "name": "edge-proxy"},
                "evidence": [
                    "toomanyrequests: You have reached your pull rate limit",
                    "ImagePullBackOff",
                    "docker.io/envoyproxy/envoy:v1.28.1",
                    "429 Too Many Requests",
                ],
                "fix": "Stop pulling envoy anonymously from Docker Hub: mirror "
                "docker.io/envoyproxy/envoy:v1.28.1 into "
                "ECR (or a pull-through cache) and point edge-proxy at it, or add an "
                "imagePullSecret for a paid "
                "Docker Hub account; the six pods on the new nodes then start and take the promo "
                "load.",
            },
        },
    )
