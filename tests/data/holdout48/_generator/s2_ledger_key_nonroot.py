"""2. crash_loop: a hardening change runs ledger-api as non-root; its signing key is mode 0400,
owned by root."""

from __future__ import annotations

import datetime as dt

from ._kit import (
    Cluster,
    Scenario,
    configmap,
    container,
    deploy_status,
    deployment,
    env,
    hexid,
    http_probe,
    iso,
    iso_ms,
    namespace,
    node,
    pod,
    replicaset,
    running,
    suffix,
    template,
    terminated,
    uid,
    waiting,
)

SID = "ledger-key-nonroot"


def build() -> Scenario:
    sc = Scenario(
        SID,
        "ledger-api rollout stuck, new pod crash-looping",
        "2026-04-02T16:40:00Z",
        "ledger-api deploy in payments has been stuck for half an hour, the new pod is "
        "crashlooping. The monthly signing-key rotation job ran this morning, I suspect it "
        "mangled the ledger-signing-key secret. Old pods are still serving so no customer "
        "impact yet, but we can't ship the release.\n",
        {
            "category": "crash_loop",
            "culprit": {"kind": "Deployment", "namespace": "payments", "name": "ledger-api"},
            "evidence": [
                "open /etc/ledger/keys/signing.pem: permission denied",
                "runAsUser: 10001",
                "defaultMode: 256",
                "CrashLoopBackOff",
            ],
            "fix": "Let the non-root user read the key: set fsGroup: 10001 in the pod "
            "securityContext (and defaultMode 0440), or keep 0400 and set the Secret volume's "
            "ownership via fsGroup; the rotated Secret is fine.",
        },
    )
    now = sc.now
    old = now - dt.timedelta(days=400)
    sc.add(
        namespace(
            "payments",
            old,
            {
                "team": "payments",
                "pod-security.kubernetes.io/warn": "restricted",
                "pod-security.kubernetes.io/audit": "restricted",
            },
        )
    )
    sc.add(namespace("payments-batch", old, {"team": "payments"}))
    sc.add(namespace("kube-system", old))
    nodes = []
    for i, ip in enumerate(("10.30.12.41", "10.30.14.77", "10.30.16.103")):
        name = f"ip-{ip.replace('.', '-')}.eu-central-1.compute.internal"
        nodes.append((name, ip, i + 1))
        sc.add(
            node(
                name,
                created=now - dt.timedelta(days=11, hours=3 * i),
                now=now,
                cpu="4",
                memory="16069712Ki",
                alloc_cpu="3920m",
                alloc_memory="15052880Ki",
                internal_ip=ip,
                kubelet="v1.29.8-eks-a737599",
                os_image="Amazon Linux 2023.5.20240916",
                kernel="6.1.109-118.189.amzn2023.x86_64",
                runtime="containerd://1.7.20",
                pods="58",
                labels={
                    "eks.amazonaws.com/nodegroup": "general-m6i",
                    "node.kubernetes.io/instance-type": "m6i.xlarge",
                    "topology.kubernetes.io/zone": "eu-central-1" + "abc"[i],
                },
                provider_id=f"aws:///eu-central-1{'abc'[i]}/i-0{hexid(name, 16)}",
            )
        )
    cl = Cluster(sc, "10.30")

    # ------------------------------------------------------------------ ledger-api
    image = "123456789012.dkr.ecr.eu-central-1.amazonaws.com/payments/ledger-api:4.12.0"
    created = now - dt.timedelta(days=700)
    labels = {"app": "ledger-api", "app.kubernetes.io/part-of": "ledger"}
    vols = [
        {"name": "signing-key", "secret": {"secretName": "ledger-signing-key", "defaultMode": 256}},
        {"name": "config", "configMap": {"name": "ledger-api-config", "defaultMode": 420}},
        {"name": "tmp", "emptyDir": {}},
    ]
    mounts = [
        {"name": "signing-key", "mountPath": "/etc/ledger/keys", "readOnly": True},
        {"name": "config", "mountPath": "/etc/ledger/config", "readOnly": True},
        {"name": "tmp", "mountPath": "/tmp"},
    ]
    env_ = env(LEDGER_CONFIG="/etc/ledger/config/ledger.yaml", GOMAXPROCS="2")
    env_.append(
        {
            "name": "DB_PASSWORD",
            "valueFrom": {"secretKeyRef": {"name": "ledger-db", "key": "password"}},
        }
    )

    def c(sec: dict | None) -> dict:
        return container(
            "ledger-api",
            image,
            ports=[8080, 9090],
            requests={"cpu": "500m", "memory": "512Mi"},
            limits={"memory": "512Mi"},
            env=env_,
            mounts=mounts,
            readiness=http_probe("/readyz", 8080, delay=5),
            liveness=http_probe("/livez", 8080, delay=15),
            security=sec,
        )

    tpl13 = template(labels, [c(None)], volumes=vols, service_account="ledger-api")
    tpl14 = template(
        labels,
        [
            c(
                {
                    "allowPrivilegeEscalation": False,
                    "readOnlyRootFilesystem": True,
                    "capabilities": {"drop": ["ALL"]},
                }
            )
        ],
        volumes=vols,
        service_account="ledger-api",
        security={
            "runAsNonRoot": True,
            "runAsUser": 10001,
            "runAsGroup": 10001,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
    )
    h13, h14 = suffix("ledger-13", 10), suffix("ledger-14", 10)
    rs13n, rs14n = f"ledger-api-{h13}", f"ledger-api-{h14}"
    roll13 = now - dt.timedelta(days=6, hours=2, minutes=31)
    roll14 = now.replace(hour=16, minute=8, second=21)
    dep = deployment(
        "payments",
        "ledger-api",
        created=created,
        replicas=3,
        tpl=tpl14,
        revision=14,
        annotations={
            "kubernetes.io/change-cause": "SEC-2291: run ledger-api as non-root, drop "
            "capabilities (restricted PSS)"
        },
        strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
        status=deploy_status(
            3,
            3,
            updated=1,
            available=3,
            total=4,
            progressing=(
                "False",
                "ProgressDeadlineExceeded",
                f'ReplicaSet "{rs14n}" has timed out progressing.',
            ),
            avail_since=roll13 + dt.timedelta(minutes=1),
            progress_time=roll14 + dt.timedelta(seconds=601),
            name="ledger-api",
            rs_name=rs14n,
        ),
    )
    sc.add(dep)
    sc.add(
        replicaset(
            "payments",
            "ledger-api",
            tpl=tpl13,
            h=h13,
            revision=13,
            created=roll13,
            replicas=3,
            ready=3,
            annotations={"kubernetes.io/change-cause": "4.12.0: idempotency keys for transfers"},
        )
    )
    sc.add(
        replicaset(
            "payments",
            "ledger-api",
            tpl=tpl14,
            h=h14,
            revision=14,
            created=roll14,
            replicas=1,
            ready=0,
            annotations={
                "kubernetes.io/change-cause": "SEC-2291: run ledger-api as non-root, drop "
                "capabilities (restricted PSS)"
            },
        )
    )
    old_pods = []
    from ._kit import _with_hash

    for i in range(3):
        pn = f"{rs13n}-{suffix(rs13n + str(i), 5)}"
        nn, hip, ni = nodes[i]
        ip = cl.pod_ip(ni)
        st = running("ledger-api", image, roll13 + dt.timedelta(seconds=12 + 30 * i))
        sc.add(
            pod(
                "payments",
                pn,
                tpl=_with_hash(tpl13, h13),
                owner=("ReplicaSet", rs13n),
                node_name=nn,
                created=roll13 + dt.timedelta(seconds=30 * i),
                statuses=[st],
                ip=ip,
                host_ip=hip,
            )
        )
        old_pods.append((ip, pn, nn))
    newp = f"{rs14n}-{suffix(rs14n + '0', 5)}"
    nn, hip, ni = nodes[1]
    new_ip = cl.pod_ip(ni)
    starts = [
        roll14 + dt.timedelta(seconds=s)
        for s in (3, 14, 35, 76, 157, 318, 619, 920, 1221, 1522, 1823)
    ]
    starts = [s for s in starts if s < now - dt.timedelta(seconds=20)]
    restarts = len(starts) - 1
    last_start = starts[-1]
    st = waiting(
        "ledger-api",
        image,
        reason="CrashLoopBackOff",
        message=f"back-off 5m0s restarting failed container=ledger-api pod={newp}_payments"
        f"({uid('payments/pod/' + newp)})",
        restarts=restarts,
        last=terminated(
            "Error", 1, last_start, last_start + dt.timedelta(milliseconds=412), newp, message=None
        ),
    )
    sc.add(
        pod(
            "payments",
            newp,
            tpl=_with_hash(tpl14, h14),
            owner=("ReplicaSet", rs14n),
            node_name=nn,
            created=roll14,
            statuses=[st],
            ip=new_ip,
            host_ip=hip,
            ready=False,
        )
    )
    sc.add(
        configmap(
            "payments",
            "ledger-api-config",
            {
                "ledger.yaml": (
                    "listen: :8080\nmetrics_listen: :9090\ndatabase:\n"
                    "  host: ledger-prod.cluster-c8x2fz1k9qwe.eu-central-1.rds.amazonaws.com\n"
                    "  port: 5432\n  name: ledger\n  user: ledger_api\n  max_conns: 40\n"
                    "signing:\n  key_path: /etc/ledger/keys/signing.pem\n"
                    "  previous_key_path: /etc/ledger/keys/signing-prev.pem\n"
                    "  reload_interval: 60s\n"
                )
            },
            created,
        )
    )
    from ._kit import endpoints, service

    sc.add(
        service(
            "payments",
            "ledger-api",
            selector={"app": "ledger-api"},
            ports=[("http", 80, 8080)],
            cluster_ip="10.100.41.17",
            created=created,
        )
    )
    sc.add(
        endpoints(
            "payments",
            "ledger-api",
            ready=old_pods,
            not_ready=[(new_ip, newp, nn)],
            ports=[("http", 8080)],
            created=created,
        )
    )

    # events of the stuck rollout
    sc.event(
        "Deployment",
        "payments",
        "ledger-api",
        "ScalingReplicaSet",
        f"Scaled up replica set {rs14n} to 1",
        first=roll14,
        component="deployment-controller",
    )
    sc.event(
        "ReplicaSet",
        "payments",
        rs14n,
        "SuccessfulCreate",
        f"Created pod: {newp}",
        first=roll14,
        component="replicaset-controller",
    )
    sc.event(
        "Pod",
        "payments",
        newp,
        "Scheduled",
        f"Successfully assigned payments/{newp} to {nn}",
        first=roll14,
        component="default-scheduler",
    )
    for reason, msg in (
        ("Pulled", f'Container image "{image}" already present on machine'),
        ("Created", "Created container ledger-api"),
        ("Started", "Started container ledger-api"),
    ):
        sc.event(
            "Pod",
            "payments",
            newp,
            reason,
            msg,
            count=len(starts),
            first=starts[0] - dt.timedelta(seconds=1),
            last=last_start,
            host=nn,
            field_path="spec.containers{ledger-api}",
        )
    sc.event(
        "Pod",
        "payments",
        newp,
        "BackOff",
        "Back-off restarting failed container ledger-api in pod "
        f"{newp}_payments({uid('payments/pod/' + newp)})",
        type_="Warning",
        count=143,
        first=roll14 + dt.timedelta(seconds=6),
        last=now - dt.timedelta(seconds=14),
        host=nn,
        field_path="spec.containers{ledger-api}",
    )

    def crash_lines(t0: dt.datetime) -> list[tuple[dt.datetime, str, str]]:
        return [
            (
                t0 + dt.timedelta(milliseconds=180),
                "info",
                f'{{"level":"info","ts":"{iso_ms(t0 + dt.timedelta(milliseconds=180))}",'
                '"caller":"ledger-api/main.go:61","msg":"starting '
                'ledger-api","version":"4.12.0","commit":"9f3c2ab","go":"go1.22.7"}',
            ),
            (
                t0 + dt.timedelta(milliseconds=214),
                "info",
                f'{{"level":"info","ts":"{iso_ms(t0 + dt.timedelta(milliseconds=214))}",'
                '"caller":"config/load.go:48","msg":"configuration '
                'loaded","path":"/etc/ledger/config/ledger.yaml","signing_key":"/etc/'
                'ledger/keys/signing.pem"}',
            ),
            (
                t0 + dt.timedelta(milliseconds=221),
                "fatal",
                '{"level":"fatal",'
                f'"ts":"{iso_ms(t0 + dt.timedelta(milliseconds=221))}","caller":"ledger-ap'
                'i/main.go:94","msg":"cannot initialise signer","error":"load signing '
                "key: open /etc/ledger/keys/signing.pem: permission "
                'denied","uid":10001,"gid":10001}',
            ),
        ]

    for k, s in enumerate(starts):
        lines = crash_lines(s)
        for t, lvl, ln in lines:
            sc.log(
                t,
                "payments",
                newp,
                "ledger-api",
                "ledger-api",
                lvl,
                ln,
                **({"error.type": "os.PathError"} if lvl == "fatal" else {}),
            )
        if k == len(starts) - 1:
            sc.pod_log("payments", newp, "ledger-api", [ln for _, _, ln in lines])
        if k == len(starts) - 2:
            sc.pod_log("payments", newp, "ledger-api", [ln for _, _, ln in lines], previous=True)

    # old pods: normal traffic and the key reload after this morning's rotation
    rot = now.replace(hour=6, minute=0, second=14)
    for i, (_, pn, _) in enumerate(old_pods):
        t = rot + dt.timedelta(seconds=75 + 9 * i)
        sc.log(
            t,
            "payments",
            pn,
            "ledger-api",
            "ledger-api",
            "info",
            f'{{"level":"info","ts":"{iso_ms(t)}","caller":"signer/reload.go:37",'
            '"msg":"signing key reloaded","kid":"ledger-2026-04",'
            '"previous_kid":"ledger-2026-03"}',
        )
    t = now - dt.timedelta(hours=3)
    k = 0
    while t < now:
        _ip, pn, _ = old_pods[k % 3]
        sc.log(
            t,
            "payments",
            pn,
            "ledger-api",
            "ledger-api",
            "info",
            f'{{"level":"info","ts":"{iso_ms(t)}","caller":"httpx/log.go:52",'
            '"msg":"request","method":"POST","path":"/v1/transfers","status":201,'
            f'"duration_ms":{18 + k % 23},"kid":"ledger-2026-04"}}',
            **{"http.response.status_code": 201},
        )
        if k % 17 == 5:
            sc.log(
                t + dt.timedelta(seconds=2),
                "payments",
                pn,
                "ledger-api",
                "ledger-api",
                "warn",
                f'{{"level":"warn","ts":"{iso_ms(t)}","caller":"transfers/'
                'idem.go:88","msg":"duplicate idempotency key, returning stored '
                'response","status":200}',
            )
        t += dt.timedelta(seconds=47)
        k += 1

    # rotation CronJob and its finished Job
    cj_created = now - dt.timedelta(days=300)
    job_name = "signing-key-rotator-29585160"
    job_tpl = template(
        {"app": "signing-key-rotator", "batch.kubernetes.io/job-name": job_name},
        [
            container(
                "rotate",
                "123456789012.dkr.ecr.eu-central-1.amazonaws.com/platform/keyrotator:1.6.2",
                args=["--secret=ledger-signing-key", "--namespace=payments", "--keep-previous"],
                requests={"cpu": "50m", "memory": "64Mi"},
                limits={"memory": "128Mi"},
            )
        ],
        service_account="signing-key-rotator",
    )
    job_tpl["spec"]["restartPolicy"] = "Never"
    sc.add(
        {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": {
                "name": "signing-key-rotator",
                "namespace": "payments",
                "uid": uid("payments/cronjob/rot"),
                "creationTimestamp": iso(cj_created),
            },
            "spec": {
                "schedule": "0 6 2 * *",
                "concurrencyPolicy": "Forbid",
                "suspend": False,
                "successfulJobsHistoryLimit": 3,
                "failedJobsHistoryLimit": 1,
                "jobTemplate": {"spec": {"backoffLimit": 2, "template": job_tpl}},
            },
            "status": {
                "lastScheduleTime": iso(now.replace(hour=6, minute=0, second=0)),
                "lastSuccessfulTime": iso(rot + dt.timedelta(seconds=3)),
            },
        }
    )
    sc.add(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": job_name,
                "namespace": "payments",
                "uid": uid(f"payments/job/{job_name}"),
                "creationTimestamp": iso(now.replace(hour=6, minute=0, second=0)),
                "labels": {"app": "signing-key-rotator"},
                "ownerReferences": [
                    {
                        "apiVersion": "batch/v1",
                        "kind": "CronJob",
                        "name": "signing-key-rotator",
                        "uid": uid("payments/cronjob/rot"),
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            },
            "spec": {"backoffLimit": 2, "completions": 1, "parallelism": 1, "template": job_tpl},
            "status": {
                "startTime": iso(now.replace(hour=6, minute=0, second=0)),
                "completionTime": iso(rot + dt.timedelta(seconds=3)),
                "succeeded": 1,
                "conditions": [
                    {
                        "type": "Complete",
                        "status": "True",
                        "lastProbeTime": iso(rot + dt.timedelta(seconds=3)),
                        "lastTransitionTime": iso(rot + dt.timedelta(seconds=3)),
                    }
                ],
            },
        }
    )
    jp = f"{job_name}-{suffix(job_name, 5)}"
    jst = {
        "name": "rotate",
        "image": job_tpl["spec"]["containers"][0]["image"],
        "imageID": "123456789012.dkr.ecr.eu-central-1.amazonaws.com/platform/keyrotator@sha256:"
        + hexid("kr", 64),
        "ready": False,
        "started": False,
        "restartCount": 0,
        "lastState": {},
        "state": {
            "terminated": terminated(
                "Completed",
                0,
                now.replace(hour=6, minute=0, second=9),
                rot + dt.timedelta(seconds=2),
                jp,
            )
        },
    }
    sc.add(
        pod(
            "payments",
            jp,
            tpl=job_tpl,
            owner=("Job", job_name),
            node_name=nodes[0][0],
            created=now.replace(hour=6, minute=0, second=0),
            statuses=[jst],
            ip=cl.pod_ip(1),
            host_ip=nodes[0][1],
            phase="Succeeded",
            ready=False,
        )
    )
    for t, msg in (
        (
            rot - dt.timedelta(seconds=5),
            "loaded secret payments/ledger-signing-key, current kid=ledger-2026-03",
        ),
        (rot - dt.timedelta(seconds=2), "generated ECDSA P-256 key kid=ledger-2026-04"),
        (
            rot,
            "updated secret payments/ledger-signing-key keys=[signing.pem signing-prev.pem] "
            "kid=ledger-2026-04 previous=ledger-2026-03",
        ),
        (
            rot + dt.timedelta(seconds=1),
            "published public key kid=ledger-2026-04 to jwks configmap payments/ledger-jwks",
        ),
    ):
        sc.log(
            t, "payments", jp, "rotate", "signing-key-rotator", "info", f"{iso_ms(t)} INFO {msg}"
        )

    # ------------------------------------------------------------------ neighbours
    gw = cl.healthy(
        "payments",
        "payments-gateway",
        image="123456789012.dkr.ecr.eu-central-1.amazonaws.com/payments/payments-gateway:2.30.1",
        nodes=nodes,
        replicas=3,
        created=created,
        rollout=now - dt.timedelta(days=3, hours=5),
        revision=57,
        requests={"cpu": "300m", "memory": "256Mi"},
        limits={"memory": "512Mi"},
        env_=env(LEDGER_URL="http://ledger-api.payments.svc"),
    )
    cl.healthy(
        "payments-batch",
        "settlement-worker",
        image="123456789012.dkr.ecr.eu-central-1.amazonaws.com/payments/settlement-worker:1.8.4",
        nodes=nodes[1:],
        replicas=2,
        created=created,
        rollout=now - dt.timedelta(days=5, hours=1),
        revision=22,
        port=9090,
        svc=False,
    )
    rec = cl.healthy(
        "payments-batch",
        "reconciler",
        image="123456789012.dkr.ecr.eu-central-1.amazonaws.com/payments/reconciler:0.14.2",
        nodes=[nodes[2]],
        replicas=1,
        created=created,
        rollout=now - dt.timedelta(days=4, hours=9),
        revision=9,
        port=9090,
        svc=False,
        restarts={
            0: (
                1,
                terminated(
                    "Error",
                    2,
                    now - dt.timedelta(days=4, hours=9),
                    now - dt.timedelta(days=2, hours=3, minutes=40),
                    "rec",
                ),
            )
        },
    )
    rec["pods"][0]["status"]["containerStatuses"][0]["state"]["running"]["startedAt"] = iso(
        now - dt.timedelta(days=2, hours=3, minutes=39)
    )
    cl.healthy(
        "kube-system",
        "coredns",
        image="602401143452.dkr.ecr.eu-central-1.amazonaws.com/eks/coredns:v1.11.3-eksbuild.1",
        nodes=nodes[:2],
        replicas=2,
        created=old,
        rollout=now - dt.timedelta(days=6, hours=22),
        revision=4,
        port=53,
        svc=False,
        probe_path="/ready",
        extra_labels={"k8s-app": "kube-dns"},
    )
    rp = rec["pods"][0]["metadata"]["name"]
    t = now - dt.timedelta(days=2, hours=3, minutes=40, seconds=2)
    sc.log(
        t,
        "payments-batch",
        rp,
        "reconciler",
        "reconciler",
        "error",
        "panic: runtime error: index out of range [3] with length 3 (statement batch 2026-03-31)",
    )
    for k in range(6):
        t = now - dt.timedelta(minutes=55 - 9 * k)
        gp = gw["pods"][k % 3]["metadata"]["name"]
        sc.log(
            t,
            "payments",
            gp,
            "payments-gateway",
            "payments-gateway",
            "warn",
            '{"level":"warn","msg":"upstream slow","upstream":"psp-adyen",'
            f'"duration_ms":{1900 + 37 * k}}}',
        )

    # ------------------------------------------------------------------ metrics
    grid = sc.grid(2)
    m = sc.metrics
    m.cumulative(
        "kube_pod_container_status_restarts_total",
        "The number of container restarts per container.",
        {
            "namespace": "payments",
            "pod": newp,
            "uid": uid("payments/pod/" + newp),
            "container": "ledger-api",
        },
        [t for t in grid if t >= roll14],
        lambda t: max(0, sum(1 for s in starts if s <= t) - 1),
    )
    for _, pn, _ in old_pods:
        m.cumulative(
            "kube_pod_container_status_restarts_total",
            "The number of container restarts per container.",
            {
                "namespace": "payments",
                "pod": pn,
                "uid": uid("payments/pod/" + pn),
                "container": "ledger-api",
            },
            grid,
            lambda t: 0,
        )
    m.gauge(
        "kube_deployment_status_replicas_unavailable",
        "The number of unavailable replicas per deployment.",
        {"namespace": "payments", "deployment": "ledger-api"},
        grid,
        lambda t: 1 if t >= roll14 else 0,
    )
    m.gauge(
        "kube_deployment_status_replicas_updated",
        "The number of updated replicas per deployment.",
        {"namespace": "payments", "deployment": "ledger-api"},
        grid,
        lambda t: 1 if t >= roll14 else 3,
    )
    for code, r in (("201", 21.0), ("200", 34.0), ("409", 0.3)):
        m.counter(
            "http_requests",
            "Total HTTP requests.",
            {"namespace": "payments", "service": "ledger-api", "code": code},
            grid,
            lambda t, r=r: r,
            start=4_400_000 * r,
        )
    return sc
