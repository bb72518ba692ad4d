"""6. certificate: an admission webhook's serving certificate expired; pod creation fails where it
is enforced."""

from __future__ import annotations

import datetime as dt

from ._kit import (
    Cluster,
    Scenario,
    _with_hash,
    configmap,
    container,
    deploy_status,
    deployment,
    endpoints,
    http_probe,
    iso,
    iso_ms,
    namespace,
    node,
    parse,
    pod,
    replicaset,
    running,
    service,
    suffix,
    template,
    uid,
)

SID = "imagegate-webhook-cert-expired"

REG = "registry.tallow.dev"
HOOK = "verify.imagegate.io"
EXPIRY = parse("2026-08-27T14:20:00Z")


def hook_msg(t: dt.datetime) -> str:
    return (
        f'Internal error occurred: failed calling webhook "{HOOK}": failed to call webhook: '
        'Post "https://imagegate.platform-policy.svc:443/verify?timeout=5s": tls: failed to '
        "verify certificate: x509: certificate has expired or is not yet valid: current "
        f"time {iso(t)} is after {iso(EXPIRY)}"
    )


def build() -> Scenario:
    sc = Scenario(
        SID,
        "Deploys in orders and catalog create no pods",
        "2026-08-27T15:05:00Z",
        "checkout-api deploy in orders has been hanging for 20 min: the new replicaset has 0 "
        "pods, not even Pending. catalog-worker can't scale up either and price-sync didn't run "
        "at 15:00. Harbor had a maintenance window at 14:30, I guess image pulls/registry auth "
        "are broken? CI says the images pushed fine.\n",
        {
            "category": "certificate",
            "culprit": {"kind": "Deployment", "namespace": "platform-policy", "name": "imagegate"},
            "evidence": [
                'failed calling webhook "verify.imagegate.io"',
                "x509: certificate has expired",
                "is after 2026-08-27T14:20:00Z",
                "FailedCreate",
            ],
            "fix": "Issue a new serving certificate for imagegate "
            "(imagegate.platform-policy.svc), update the Secret and the webhook's caBundle, "
            "restart imagegate; move it to cert-manager so it renews. As a stop-gap, set the "
            "webhook's failurePolicy to Ignore. The registry is fine.",
        },
    )
    now = sc.now
    old = now - dt.timedelta(days=720)
    sc.add(namespace("platform-policy", old, {"team": "platform"}))
    for ns in ("orders", "catalog"):
        sc.add(namespace(ns, old, {"team": ns, "imagegate.io/enforce": "true"}))
    sc.add(namespace("kube-system", old))
    cp = []
    for i in range(3):
        name = f"prod-cp-{i + 1}"
        ip = f"10.20.0.{11 + i}"
        cp.append((name, ip, 0))
        sc.add(
            node(
                name,
                created=now - dt.timedelta(days=200),
                now=now,
                cpu="4",
                memory="8131216Ki",
                alloc_cpu="4",
                alloc_memory="8028816Ki",
                internal_ip=ip,
                kubelet="v1.29.9+rke2r1",
                os_image="Ubuntu 22.04.4 LTS",
                kernel="5.15.0-118-generic",
                runtime="containerd://1.7.21-k3s2",
                labels={
                    "node-role.kubernetes.io/control-plane": "true",
                    "node-role.kubernetes.io/etcd": "true",
                    "node-role.kubernetes.io/master": "true",
                },
                taints=[{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}],
            )
        )
    workers = []
    for i in range(4):
        name = f"prod-worker-a-{['1f3c', '7kd2', 'q9xm', 'w4bn'][i]}"
        ip = f"10.20.1.{21 + i}"
        workers.append((name, ip, i + 1))
        sc.add(
            node(
                name,
                created=now - dt.timedelta(days=60 + i),
                now=now,
                cpu="8",
                memory="32863044Ki",
                alloc_cpu="8",
                alloc_memory="32760644Ki",
                internal_ip=ip,
                kubelet="v1.29.9+rke2r1",
                os_image="Ubuntu 22.04.4 LTS",
                kernel="5.15.0-118-generic",
                runtime="containerd://1.7.21-k3s2",
                labels={"node-role.kubernetes.io/worker": "true", "pool": "a"},
            )
        )
    cl = Cluster(sc, "10.42")

    # ------------------------------------------------------------------ imagegate (culprit)
    igc = container(
        "imagegate",
        f"{REG}/platform/imagegate:0.9.4",
        ports=[8443, 8080],
        requests={"cpu": "100m", "memory": "128Mi"},
        limits={"memory": "256Mi"},
        args=[
            "--tls-cert-file=/tls/tls.crt",
            "--tls-private-key-file=/tls/tls.key",
            "--port=8443",
            "--health-port=8080",
            "--policy=/etc/imagegate/policy.yaml",
            "--cosign-key=/keys/cosign.pub",
        ],
        readiness=http_probe("/healthz", 8080),
        liveness=http_probe("/healthz", 8080, delay=10),
        mounts=[
            {"name": "tls", "mountPath": "/tls", "readOnly": True},
            {"name": "policy", "mountPath": "/etc/imagegate", "readOnly": True},
            {"name": "cosign", "mountPath": "/keys", "readOnly": True},
        ],
    )
    igc["ports"][0]["name"] = "https"
    ig_start = parse("2026-08-21T10:02:03Z")
    ig = cl.healthy(
        "platform-policy",
        "imagegate",
        image=igc["image"],
        nodes=workers[:2],
        replicas=2,
        created=now - dt.timedelta(days=367),
        rollout=ig_start,
        revision=11,
        containers=[igc],
        svc=False,
        volumes=[
            {"name": "tls", "secret": {"secretName": "imagegate-serving-cert", "defaultMode": 420}},
            {"name": "policy", "configMap": {"name": "imagegate-policy", "defaultMode": 420}},
            {"name": "cosign", "configMap": {"name": "imagegate-cosign-pub", "defaultMode": 420}},
        ],
        annotations={"kubernetes.io/change-cause": "0.9.4: allow digest-pinned images from mirror"},
    )
    sc.add(
        service(
            "platform-policy",
            "imagegate",
            selector={"app": "imagegate"},
            ports=[("https", 443, 8443)],
            cluster_ip="10.43.81.9",
            created=now - dt.timedelta(days=367),
        )
    )
    sc.add(
        endpoints(
            "platform-policy",
            "imagegate",
            ready=[
                (p["status"]["podIP"], p["metadata"]["name"], p["spec"]["nodeName"])
                for p in ig["pods"]
            ],
            ports=[("https", 8443)],
            created=now - dt.timedelta(days=367),
        )
    )
    sc.add(
        configmap(
            "platform-policy",
            "imagegate-policy",
            {
                "policy.yaml": (
                    "rules:\n- name: signed-images-only\n  match:\n    namespaceSelector:\n"
                    '      imagegate.io/enforce: "true"\n  require:\n'
                    "    registries: [registry.tallow.dev, harbor.tallow.dev]\n"
                    "    cosignSignature: true\nfailurePolicy: Fail  # mirrored in the "
                    "ValidatingWebhookConfiguration\n"
                )
            },
            now - dt.timedelta(days=367),
        )
    )
    sc.add(
        configmap(
            "platform-policy",
            "imagegate-cosign-pub",
            {
                "cosign.pub": "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE3"
                "Jq8cT1m6vCw2s0r9kqgG9O1fTq4\nb7yU2ZxkQp6dWnA1sQ0bVh5ZJr7Wm3dTqk8t1Yl0nXwQ2Ykz6J"
                "fP0aR1dw==\n-----END PUBLIC KEY-----\n"
            },
            now - dt.timedelta(days=367),
        )
    )
    igp = [p["metadata"]["name"] for p in ig["pods"]]
    for i, pn in enumerate(igp):
        t0 = ig_start + dt.timedelta(seconds=9 + 5 * i)
        lines = [
            f'{{"level":"info","ts":"{iso_ms(t0)}","msg":"imagegate starting","version":"0.9.4"}}',
            f'{{"level":"info","ts":"{iso_ms(t0)}","msg":"serving certificate '
            'loaded","cert":"/tls/tls.crt","dns_names":["imagegate.platform-policy.svc"'
            ',"imagegate.platform-policy.svc.cluster.local"],'
            f'"not_before":"2025-08-27T14:20:00Z","not_after":"{iso(EXPIRY)}"}}',
            f'{{"level":"info","ts":"{iso_ms(t0)}","msg":"listening","addr":":8443"}}',
        ]
        for ln in lines:
            sc.log(t0, "platform-policy", pn, "imagegate", "imagegate", "info", ln)
        out = list(lines)
        # daily expiry warnings nobody read
        for d in range(6, 0, -1):
            t = EXPIRY - dt.timedelta(days=d) + dt.timedelta(seconds=i)
            if t > ig_start:
                ln = (
                    f'{{"level":"warn","ts":"{iso_ms(t)}","msg":"serving certificate expires soon",'
                    f'"not_after":"{iso(EXPIRY)}","remaining":"{24 * d}h0m0s"}}'
                )
                sc.log(t, "platform-policy", pn, "imagegate", "imagegate", "warn", ln)
                out.append(ln)
        # admissions served until the expiry
        t = now - dt.timedelta(hours=3)
        k = 0
        while t < EXPIRY:
            ln = (
                f'{{"level":"info","ts":"{iso_ms(t)}","msg":"admission '
                f'reviewed","namespace":"{["orders", "catalog"][k % 2]}","kind":"Pod",'
                f'"allowed":true,"duration_ms":{31 + k % 40}}}'
            )
            sc.log(t, "platform-policy", pn, "imagegate", "imagegate", "info", ln)
            out.append(ln)
            t += dt.timedelta(minutes=7, seconds=13 * (i + 1))
            k += 1
        # after the expiry: every kube-apiserver call fails the handshake
        t = parse("2026-08-27T14:41:11Z") + dt.timedelta(seconds=i)
        k = 0
        while t < now:
            src = cp[k % 3][1]
            ln = (
                f"{t.strftime('%Y/%m/%d %H:%M:%S')} http: TLS handshake error from "
                f"{src}:{35000 + (k * 977) % 25000}: remote error: tls: bad certificate"
            )
            out.append(ln)
            sc.log(
                t,
                "platform-policy",
                pn,
                "imagegate",
                "imagegate",
                "error",
                ln,
                **{"error.type": "tls"},
            )
            t += dt.timedelta(seconds=23 + 11 * (k % 4))
            k += 1
        sc.pod_log("platform-policy", pn, "imagegate", out)

    # ----------------------------------------------------------- orders/checkout-api: stuck rollout
    def app_tpl(name: str, image: str, cpu: str = "250m") -> dict:
        return template(
            {"app": name},
            [
                container(
                    name,
                    image,
                    ports=[8080],
                    requests={"cpu": cpu, "memory": "256Mi"},
                    limits={"memory": "512Mi"},
                    readiness=http_probe("/ready", 8080),
                )
            ],
            service_account=name,
        )

    t72 = app_tpl("checkout-api", f"{REG}/orders/checkout-api:3.21.4")
    t73 = app_tpl("checkout-api", f"{REG}/orders/checkout-api:3.22.0")
    h72, h73 = suffix("co72", 10), suffix("co73", 10)
    rs72, rs73 = f"checkout-api-{h72}", f"checkout-api-{h73}"
    roll72 = now - dt.timedelta(days=2, hours=6, minutes=14)
    roll73 = parse("2026-08-27T14:41:10Z")
    fc = [
        {
            "type": "ReplicaFailure",
            "status": "True",
            "reason": "FailedCreate",
            "message": hook_msg(roll73 + dt.timedelta(seconds=1)),
            "lastUpdateTime": iso(roll73 + dt.timedelta(seconds=1)),
            "lastTransitionTime": iso(roll73 + dt.timedelta(seconds=1)),
        }
    ]
    sc.add(
        deployment(
            "orders",
            "checkout-api",
            created=old,
            replicas=4,
            tpl=t73,
            revision=73,
            annotations={"kubernetes.io/change-cause": "3.22.0: split payment intents"},
            status=deploy_status(
                4,
                4,
                updated=0,
                available=4,
                total=4,
                progressing=(
                    "False",
                    "ProgressDeadlineExceeded",
                    f'ReplicaSet "{rs73}" has timed out progressing.',
                ),
                avail_since=roll72 + dt.timedelta(minutes=1),
                progress_time=roll73 + dt.timedelta(seconds=601),
                name="checkout-api",
                rs_name=rs73,
                extra_conditions=fc,
            ),
        )
    )
    sc.add(
        replicaset(
            "orders",
            "checkout-api",
            tpl=t72,
            h=h72,
            revision=72,
            created=roll72,
            replicas=4,
            ready=4,
        )
    )
    sc.add(
        replicaset(
            "orders",
            "checkout-api",
            tpl=t73,
            h=h73,
            revision=73,
            created=roll73,
            replicas=1,
            ready=0,
            fully=0,
            conditions=fc,
        )
    )
    sc.objects[-1]["status"]["replicas"] = 0
    co_eps = []
    for i in range(4):
        pn = f"{rs72}-{suffix(rs72 + str(i), 5)}"
        nd = workers[i]
        ip = cl.pod_ip(nd[2])
        sc.add(
            pod(
                "orders",
                pn,
                tpl=_with_hash(t72, h72),
                owner=("ReplicaSet", rs72),
                node_name=nd[0],
                created=roll72 + dt.timedelta(seconds=20 * i),
                statuses=[
                    running(
                        "checkout-api",
                        t72["spec"]["containers"][0]["image"],
                        roll72 + dt.timedelta(seconds=20 * i + 6),
                    )
                ],
                ip=ip,
                host_ip=nd[1],
            )
        )
        co_eps.append((ip, pn, nd[0]))
    sc.add(
        service(
            "orders",
            "checkout-api",
            selector={"app": "checkout-api"},
            ports=[("http", 80, 8080)],
            cluster_ip="10.43.20.14",
            created=old,
        )
    )
    sc.add(endpoints("orders", "checkout-api", ready=co_eps, ports=[("http", 8080)], created=old))
    sc.event(
        "Deployment",
        "orders",
        "checkout-api",
        "ScalingReplicaSet",
        f"Scaled up replica set {rs73} to 1",
        first=roll73,
        component="deployment-controller",
    )
    sc.event(
        "ReplicaSet",
        "orders",
        rs73,
        "FailedCreate",
        "Error creating: " + hook_msg(now - dt.timedelta(minutes=2, seconds=40)),
        type_="Warning",
        count=17,
        first=roll73 + dt.timedelta(seconds=1),
        last=now - dt.timedelta(minutes=2, seconds=40),
        component="replicaset-controller",
    )
    cl.healthy(
        "orders",
        "order-history",
        image=f"{REG}/orders/order-history:1.12.0",
        nodes=workers[2:],
        replicas=2,
        created=old,
        rollout=now - dt.timedelta(days=5, hours=2),
        revision=30,
    )

    # -------------------------------------------------- catalog/catalog-worker: HPA cannot add pods
    cw = cl.healthy(
        "catalog",
        "catalog-worker",
        image=f"{REG}/catalog/catalog-worker:8.4.1",
        nodes=workers,
        replicas=3,
        created=old,
        rollout=now - dt.timedelta(days=4, hours=1),
        revision=58,
        port=9090,
        svc=False,
        requests={"cpu": "500m", "memory": "512Mi"},
        limits={"memory": "1Gi"},
    )
    scale = parse("2026-08-27T14:52:30Z")
    cw_rs = cw["rs_name"]
    d = cw["deployment"]
    d["spec"]["replicas"] = 5
    d["metadata"]["generation"] += 1
    d["status"]["observedGeneration"] = d["metadata"]["generation"]
    d["status"].update(
        {
            "replicas": 3,
            "updatedReplicas": 3,
            "readyReplicas": 3,
            "availableReplicas": 3,
            "unavailableReplicas": 2,
        }
    )
    d["status"]["conditions"][0].update(
        {
            "status": "False",
            "reason": "MinimumReplicasUnavailable",
            "message": "Deployment does not have minimum availability.",
            "lastUpdateTime": iso(scale),
            "lastTransitionTime": iso(scale),
        }
    )
    d["status"]["conditions"].append(
        {
            "type": "ReplicaFailure",
            "status": "True",
            "reason": "FailedCreate",
            "message": hook_msg(scale + dt.timedelta(seconds=1)),
            "lastUpdateTime": iso(scale + dt.timedelta(seconds=1)),
            "lastTransitionTime": iso(scale + dt.timedelta(seconds=1)),
        }
    )
    r = cw["rs"]
    r["spec"]["replicas"] = 5
    r["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] = "5"
    r["status"]["conditions"] = [
        {
            "type": "ReplicaFailure",
            "status": "True",
            "reason": "FailedCreate",
            "message": hook_msg(scale + dt.timedelta(seconds=1)),
            "lastTransitionTime": iso(scale + dt.timedelta(seconds=1)),
        }
    ]
    sc.add(
        {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {
                "name": "catalog-worker",
                "namespace": "catalog",
                "uid": uid("catalog/hpa/catalog-worker"),
                "creationTimestamp": iso(old),
            },
            "spec": {
                "scaleTargetRef": {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": "catalog-worker",
                },
                "minReplicas": 3,
                "maxReplicas": 12,
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
                "currentReplicas": 3,
                "desiredReplicas": 5,
                "lastScaleTime": iso(scale),
                "currentMetrics": [
                    {
                        "type": "Resource",
                        "resource": {
                            "name": "cpu",
                            "current": {"averageUtilization": 97, "averageValue": "486m"},
                        },
                    }
                ],
                "conditions": [
                    {
                        "type": "AbleToScale",
                        "status": "True",
                        "reason": "ScaleDownStabilized",
                        "message": "recent recommendations were higher than current one, "
                        "applying the highest recent recommendation",
                        "lastTransitionTime": iso(scale),
                    },
                    {
                        "type": "ScalingActive",
                        "status": "True",
                        "reason": "ValidMetricFound",
                        "message": "the HPA was able to successfully calculate a replica count "
                        "from cpu resource utilization (percentage of request)",
                        "lastTransitionTime": iso(now - dt.timedelta(days=6)),
                    },
                    {
                        "type": "ScalingLimited",
                        "status": "False",
                        "reason": "DesiredWithinRange",
                        "message": "the desired count is within the acceptable range",
                        "lastTransitionTime": iso(now - dt.timedelta(days=3)),
                    },
                ],
            },
        }
    )
    sc.event(
        "HorizontalPodAutoscaler",
        "catalog",
        "catalog-worker",
        "SuccessfulRescale",
        "New size: 5; reason: cpu resource utilization (percentage of request) above target",
        first=scale,
        component="horizontal-pod-autoscaler",
        api_version="autoscaling/v2",
    )
    sc.event(
        "Deployment",
        "catalog",
        "catalog-worker",
        "ScalingReplicaSet",
        f"Scaled up replica set {cw_rs} to 5 from 3",
        first=scale,
        component="deployment-controller",
    )
    sc.event(
        "ReplicaSet",
        "catalog",
        cw_rs,
        "FailedCreate",
        "Error creating: " + hook_msg(now - dt.timedelta(minutes=1, seconds=5)),
        type_="Warning",
        count=15,
        first=scale + dt.timedelta(seconds=1),
        last=now - dt.timedelta(minutes=1, seconds=5),
        component="replicaset-controller",
    )

    # ------------------------------------------------------------------ catalog/price-sync CronJob
    jt = template(
        {"app": "price-sync"},
        [
            container(
                "price-sync",
                f"{REG}/catalog/price-sync:2.0.3",
                requests={"cpu": "200m", "memory": "256Mi"},
                limits={"memory": "512Mi"},
            )
        ],
        service_account="price-sync",
    )
    jt["spec"]["restartPolicy"] = "OnFailure"
    jname = "price-sync-29797380"
    j_at = parse("2026-08-27T15:00:00Z")
    sc.add(
        {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": {
                "name": "price-sync",
                "namespace": "catalog",
                "uid": uid("catalog/cronjob/price-sync"),
                "creationTimestamp": iso(old),
            },
            "spec": {
                "schedule": "0 * * * *",
                "concurrencyPolicy": "Forbid",
                "suspend": False,
                "successfulJobsHistoryLimit": 3,
                "failedJobsHistoryLimit": 1,
                "jobTemplate": {"spec": {"backoffLimit": 3, "template": jt}},
            },
            "status": {
                "lastScheduleTime": iso(j_at),
                "lastSuccessfulTime": iso(parse("2026-08-27T14:03:12Z")),
                "active": [
                    {
                        "apiVersion": "batch/v1",
                        "kind": "Job",
                        "name": jname,
                        "namespace": "catalog",
                        "uid": uid(f"catalog/job/{jname}"),
                    }
                ],
            },
        }
    )
    jt2 = _with_hash(jt, "x")
    jt2["metadata"]["labels"].pop("pod-template-hash")
    jt2["metadata"]["labels"]["batch.kubernetes.io/job-name"] = jname
    sc.add(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": jname,
                "namespace": "catalog",
                "uid": uid(f"catalog/job/{jname}"),
                "creationTimestamp": iso(j_at),
                "labels": {"app": "price-sync"},
                "ownerReferences": [
                    {
                        "apiVersion": "batch/v1",
                        "kind": "CronJob",
                        "name": "price-sync",
                        "uid": uid("catalog/cronjob/price-sync"),
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            },
            "spec": {"backoffLimit": 3, "completions": 1, "parallelism": 1, "template": jt2},
            "status": {
                "startTime": iso(j_at),
                "active": 0,
                "ready": 0,
                "terminating": 0,
                "uncountedTerminatedPods": {},
            },
        }
    )
    sc.event(
        "CronJob",
        "catalog",
        "price-sync",
        "SuccessfulCreate",
        f"Created job {jname}",
        first=j_at,
        component="cronjob-controller",
        api_version="batch/v1",
    )
    sc.event(
        "Job",
        "catalog",
        jname,
        "FailedCreate",
        "Error creating: " + hook_msg(j_at + dt.timedelta(seconds=1)),
        type_="Warning",
        count=6,
        first=j_at + dt.timedelta(seconds=1),
        last=now - dt.timedelta(seconds=50),
        component="job-controller",
        api_version="batch/v1",
    )

    # ------------------------------------------------------------------ kube-system and decoys
    ms = cl.healthy(
        "kube-system",
        "metrics-server",
        image="rancher/hardened-k8s-metrics-server:v0.7.1-build20240910",
        nodes=[workers[3]],
        replicas=1,
        created=old,
        rollout=now - dt.timedelta(days=6, hours=3),
        revision=5,
        port=10250,
        svc=False,
        probe_path="/readyz",
        restarts={
            0: (
                2,
                {
                    "exitCode": 1,
                    "reason": "Error",
                    "startedAt": iso(now - dt.timedelta(days=5, hours=2)),
                    "finishedAt": iso(now - dt.timedelta(days=5, hours=1, minutes=58)),
                    "containerID": "containerd://" + "9c" * 32,
                },
            )
        },
    )
    cl.healthy(
        "kube-system",
        "rke2-coredns-rke2-coredns",
        image="rancher/hardened-coredns:v1.11.1-build20240910",
        nodes=workers[:2],
        replicas=2,
        created=old,
        rollout=now - dt.timedelta(days=6, hours=3),
        revision=3,
        port=53,
        svc=False,
        probe_path="/ready",
        extra_labels={"k8s-app": "kube-dns"},
    )
    msp = ms["pods"][0]["metadata"]["name"]
    for k in range(5):
        t = now - dt.timedelta(minutes=50 - 10 * k)
        sc.log(
            t,
            "kube-system",
            msp,
            "metrics-server",
            "metrics-server",
            "error",
            f"E{t.strftime('%m%d %H:%M:%S')}.{t.microsecond:06d}       1 scraper.go:149] "
            '"Failed to scrape node" err="Get \\"https://10.20.1.24:10250/metrics/'
            'resource\\": context deadline exceeded" node="prod-worker-a-w4bn"',
        )
    # registry maintenance chatter the report leans on: pulls worked afterwards
    # (order-history restarted fine)
    cwp = [p["metadata"]["name"] for p in cw["pods"]]
    t = now - dt.timedelta(hours=3)
    k = 0
    while t < now:
        sc.log(
            t,
            "catalog",
            cwp[k % 3],
            "catalog-worker",
            "catalog-worker",
            "info",
            '{"level":"info","msg":"batch processed","queue":"catalog-updates",'
            f'"items":{200 + k % 55},"lag":{(1200 + 90 * k) if t > scale else 300 + k % 40}}}',
        )
        if t > scale and k % 4 == 0:
            sc.log(
                t + dt.timedelta(seconds=1),
                "catalog",
                cwp[k % 3],
                "catalog-worker",
                "catalog-worker",
                "warn",
                '{"level":"warn","msg":"consumer lag above '
                f'threshold","lag":{1200 + 90 * k},"threshold":1000}}',
            )
        t += dt.timedelta(minutes=3)
        k += 1

    # ------------------------------------------------------------------ metrics
    grid = sc.grid(3)
    m = sc.metrics
    first_fail = parse("2026-08-27T14:41:11Z")
    for op, code in (("CREATE", "200"),):
        m.counter(
            "apiserver_admission_webhook_request",
            "Admission webhook request total, identified by name and "
            "broken out for each admission type (validating or mutating) and operation.",
            {
                "name": HOOK,
                "type": "validating",
                "operation": op,
                "code": code,
                "rejected": "false",
            },
            grid,
            lambda t: 0.0 if t >= EXPIRY else 0.035,
            start=118_402,
        )
    m.counter(
        "apiserver_admission_webhook_rejection_count",
        "Admission webhook rejection count, identified by name "
        "and broken out for each admission type (validating or admit) and operation.",
        {
            "name": HOOK,
            "type": "validating",
            "operation": "CREATE",
            "error_type": "calling_webhook_error",
            "rejection_code": "500",
        },
        grid,
        lambda t: 0.0 if t < first_fail else 0.045,
        start=0,
        mtype="unknown",
    )
    m.gauge(
        "kube_deployment_status_replicas_updated",
        "The number of updated replicas per deployment.",
        {"namespace": "orders", "deployment": "checkout-api"},
        grid,
        lambda t: 4 if t < roll73 else 0,
    )
    m.gauge(
        "kube_deployment_spec_replicas",
        "Number of desired pods for a deployment.",
        {"namespace": "catalog", "deployment": "catalog-worker"},
        grid,
        lambda t: 5 if t >= scale else 3,
    )
    m.gauge(
        "kube_deployment_status_replicas_available",
        "The number of available replicas per deployment.",
        {"namespace": "catalog", "deployment": "catalog-worker"},
        grid,
        lambda t: 3,
    )
    for pn in igp:
        m.counter(
            "imagegate_admission_reviews",
            "Admission reviews answered.",
            {"namespace": "platform-policy", "pod": pn, "allowed": "true"},
            grid,
            lambda t: 0.0 if t >= EXPIRY else 0.0175,
            start=9_311,
        )
    return sc
