"""2. crash_loop: a ConfigMap key renamed in a refactor; a reloader recycled the pods."""

from __future__ import annotations

import json
from datetime import timedelta

from . import _kit as k

SID = "mailer-env-key-renamed"
NOW = "2026-12-08T09:40:00Z"
NS = "messaging"
IMG = "registry.quillmark.io/messaging/notification-worker:3.4.2"


def _zap(t, level, msg, **kw) -> str:
    d = {
        "level": level,
        "ts": round(t.timestamp(), 3),
        "caller": kw.pop("caller", "worker/main.go:58"),
        "msg": msg,
    }
    d.update(kw)
    return json.dumps(d, separators=(",", ":"))


def build() -> None:
    s = k.Scn(SID, NOW, 4402)
    now = s.now
    grid = k.grid(s.ago(hours=3), now)
    old = s.ago(days=400)
    nodes = [
        k.node(
            "ip-10-44-3-51.eu-central-1.compute.internal",
            "eu-central-1a",
            s.ago(days=11),
            s.ago(seconds=12),
            region="eu-central-1",
        ),
        k.node(
            "ip-10-44-21-7.eu-central-1.compute.internal",
            "eu-central-1b",
            s.ago(days=11),
            s.ago(seconds=40),
            region="eu-central-1",
        ),
        k.node(
            "ip-10-44-40-188.eu-central-1.compute.internal",
            "eu-central-1c",
            s.ago(days=4),
            s.ago(seconds=3),
            region="eu-central-1",
        ),
    ]
    nn = [n["metadata"]["name"] for n in nodes]
    s.add(*(k.namespace(n, old) for n in (NS, "web", "platform")))
    s.add(*nodes)

    edit = s.ago(minutes=26, seconds=14)
    recycle = edit + timedelta(seconds=21)

    # ---- the ConfigMap after the refactor: SMTP_* became MAIL_RELAY_*
    s.add(
        k.configmap(
            "notification-worker-env",
            NS,
            s.ago(days=380),
            {
                "AMQP_QUEUE": "notifications.email",
                "AMQP_URL": "amqp://notification-worker@rabbitmq.messaging.svc:5672/notify",
                "LOG_LEVEL": "info",
                "MAIL_FROM_ADDRESS": "no-reply@quillmark.io",
                "MAIL_RELAY_HOST": "smtp-relay.eu.mailgate.net",
                "MAIL_RELAY_PORT": "587",
                "MAIL_RELAY_STARTTLS": "true",
                "TEMPLATE_BUCKET": "s3://quillmark-mail-templates/prod",
                "WORKER_CONCURRENCY": "16",
            },
            labels={
                "app.kubernetes.io/name": "notification-worker",
                "app.kubernetes.io/part-of": "messaging",
            },
            annotations={
                "config-sync.quillmark.io/revision": "a41c9e2",
                "config-sync.quillmark.io/synced-at": k.ts(edit),
            },
        )
    )
    s.add(
        k.configmap(
            "sms-worker-env",
            NS,
            s.ago(days=300),
            {
                "AMQP_QUEUE": "notifications.sms",
                "SMS_PROVIDER_URL": "https://api.textpost.example/v2",
                "LOG_LEVEL": "info",
            },
            annotations={"config-sync.quillmark.io/revision": "77be0d1"},
        )
    )

    # ---- notification-worker: same ReplicaSet (revision 14) for 9 days, pods recreated 25 min ago
    c = k.container(
        "notification-worker",
        IMG,
        ports=[{"name": "metrics", "containerPort": 9102, "protocol": "TCP"}],
        resources=k.res("200m", "192Mi", None, "384Mi"),
        liveness=k.http_probe("/livez", "metrics", period=15, initial=10),
        envFrom=[{"configMapRef": {"name": "notification-worker-env"}}],
    )
    tm = k.template(
        {"app.kubernetes.io/name": "notification-worker", "app.kubernetes.io/part-of": "messaging"},
        [c],
        serviceAccountName="notification-worker",
    )
    dep = k.deployment(
        "notification-worker",
        NS,
        s.ago(days=380),
        tm,
        3,
        14,
        {"replicas": 3, "updatedReplicas": 3, "unavailableReplicas": 3},
        [],
        annotations={"reloader.quillmark.io/watch-configmaps": "notification-worker-env"},
        generation=31,
    )
    h = s.rs_hash()
    rs = k.replicaset(dep, h, s.ago(days=9, hours=3), 14, tm, 3, ready=0)
    rs_prev = k.replicaset(dep, s.rs_hash(), s.ago(days=37), 13, tm, 0)
    dep["status"]["conditions"] = k.dep_conditions(
        recycle + timedelta(seconds=50),
        s.ago(days=6, hours=3),
        rs["metadata"]["name"],
        available=False,
    )
    s.add(dep, rs, rs_prev)

    old_pods = [f"notification-worker-{h}-{s.pod_suffix()}" for _ in range(3)]
    backoffs = [10, 20, 40, 80, 160, 300, 300, 300]
    pods = []
    for i in range(3):
        name = f"notification-worker-{h}-{s.pod_suffix()}"
        node_name = nn[i]
        created = recycle + timedelta(seconds=1 + i)
        t = created + timedelta(seconds=3)
        starts = []
        for b in backoffs:
            starts.append(t)
            nt = t + timedelta(seconds=1) + timedelta(seconds=b)
            if nt > now:
                break
            t = nt
        restarts = len(starts) - 1
        last_start = starts[-1]
        last = k.terminated(
            "Error", 1, last_start, last_start + timedelta(milliseconds=800), name + str(restarts)
        )
        bo = backoffs[min(len(starts) - 1, len(backoffs) - 1)]
        bos = f"{bo // 60}m{bo % 60}s" if bo >= 60 else f"{bo}s"
        cur = k.cs_waiting(
            c,
            "CrashLoopBackOff",
            f"back-off {bos} restarting failed container=notification-worker "
            f"pod={name}_{NS}({k.uid('pod', NS, name)})",
            restarts,
            last,
        )
        p = k.pod(
            s,
            rs,
            name,
            node_name,
            k.pod_ip(s, node_name),
            created,
            [cur],
            False,
            ready_since=created + timedelta(seconds=4),
        )
        pods.append((p, starts))
        s.add(p)
        # pod logs: current attempt crashed the same way
        lines = _crash_lines(last_start)
        s.podlog(NS, name, "notification-worker", lines, previous=True)
        for st in starts:
            for line in _crash_lines(st):
                d = json.loads(line)
                s.log(
                    st + timedelta(milliseconds=300 if d["level"] == "fatal" else 20),
                    NS,
                    name,
                    "notification-worker",
                    "notification-worker",
                    d["level"],
                    d["msg"] + (f": {d['error']}" if "error" in d else ""),
                    **({"error.message": d["error"]} if "error" in d else {}),
                )

    # ---- neighbours
    sto_roll = s.ago(minutes=32, seconds=40)
    sd, srs, spods = k.healthy_deployment(
        s,
        nn,
        "storefront",
        "web",
        "registry.quillmark.io/web/storefront:2.44.0",
        3,
        s.ago(days=700),
        port=3000,
        req_mem="256Mi",
        lim_mem="512Mi",
        rollout=sto_roll,
        revision=58,
    )
    sold = k.replicaset(
        sd,
        s.rs_hash(),
        s.ago(days=2, hours=5),
        57,
        json.loads(json.dumps(srs["spec"]["template"])),
        0,
    )
    sold["spec"]["template"]["spec"]["containers"][0]["image"] = (
        "registry.quillmark.io/web/storefront:2.43.3"
    )
    s.add(sold)
    _ad, _ars, _apods = k.healthy_deployment(
        s,
        nn,
        "account-service",
        "web",
        "registry.quillmark.io/web/account-service:1.19.2",
        2,
        s.ago(days=500),
    )
    _smsd, _smsrs, smspods = k.healthy_deployment(
        s,
        nn,
        "sms-worker",
        NS,
        "registry.quillmark.io/messaging/sms-worker:1.6.0",
        1,
        s.ago(days=300),
        port=9102,
        probe_path="/livez",
    )
    _rd, _rrs, rpods = k.healthy_deployment(
        s,
        nn,
        "config-reloader",
        "platform",
        "registry.quillmark.io/platform/config-reloader:0.9.3",
        1,
        s.ago(days=150),
        port=9090,
        probe_path="/healthz",
    )
    # rabbitmq StatefulSet
    rc = k.container(
        "rabbitmq",
        "rabbitmq:3.13.2-management",
        ports=[
            {"name": "amqp", "containerPort": 5672, "protocol": "TCP"},
            {"name": "prometheus", "containerPort": 15692, "protocol": "TCP"},
        ],
        resources=k.res("500m", "1Gi", None, "2Gi"),
        readiness={
            "tcpSocket": {"port": "amqp"},
            "periodSeconds": 10,
            "timeoutSeconds": 1,
            "successThreshold": 1,
            "failureThreshold": 3,
            "initialDelaySeconds": 10,
        },
    )
    rtm = k.template({"app.kubernetes.io/name": "rabbitmq"}, [rc])
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {
            "name": "rabbitmq",
            "namespace": NS,
            "uid": k.uid("sts", NS, "rabbitmq"),
            "generation": 3,
            "creationTimestamp": k.ts(s.ago(days=600)),
            "labels": {"app.kubernetes.io/name": "rabbitmq"},
        },
        "spec": {
            "replicas": 1,
            "serviceName": "rabbitmq-headless",
            "podManagementPolicy": "OrderedReady",
            "selector": {"matchLabels": {"app.kubernetes.io/name": "rabbitmq"}},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
            "template": rtm,
        },
        "status": {
            "replicas": 1,
            "readyReplicas": 1,
            "currentReplicas": 1,
            "updatedReplicas": 1,
            "availableReplicas": 1,
            "observedGeneration": 3,
            "currentRevision": "rabbitmq-6d9f7c8b5c",
            "updateRevision": "rabbitmq-6d9f7c8b5c",
            "collisionCount": 0,
        },
    }
    s.add(sts)
    rstart = s.ago(days=5, hours=7)
    rp = k.pod(
        s,
        None,
        "rabbitmq-0",
        nn[2],
        k.pod_ip(s, nn[2]),
        rstart,
        [k.cs_running(rc, rstart + timedelta(seconds=4))],
        True,
        owner={
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "name": "rabbitmq",
            "uid": sts["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
            "namespace": NS,
        },
        tmpl=rtm,
    )
    rp["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"] = "rabbitmq-0"
    s.add(rp)

    s.add(
        k.service(
            "rabbitmq",
            NS,
            s.ago(days=600),
            {"app.kubernetes.io/name": "rabbitmq"},
            [{"name": "amqp", "port": 5672, "protocol": "TCP", "targetPort": "amqp"}],
            "172.20.12.9",
        )
    )
    s.add(
        k.service(
            "storefront",
            "web",
            s.ago(days=700),
            {"app.kubernetes.io/name": "storefront"},
            [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": "http"}],
            "172.20.99.31",
        )
    )
    s.add(
        k.endpoints(
            "storefront",
            "web",
            s.ago(days=700),
            spods,
            [{"name": "http", "port": 3000, "protocol": "TCP"}],
        )
    )

    # ---- events
    evs = []
    rsobj = rs
    for (p, starts), _oname in zip(pods, old_pods, strict=False):
        pn = p["metadata"]["name"]
        node_name = p["spec"]["nodeName"]
        fp = "spec.containers{notification-worker}"
        evs.append(
            k.event(
                NS,
                rsobj,
                "SuccessfulCreate",
                f"Created pod: {pn}",
                p_created(p),
                p_created(p),
                1,
                "Normal",
                "replicaset-controller",
            )
        )
        evs.append(
            k.event(
                NS,
                p,
                "Scheduled",
                f"Successfully assigned {NS}/{pn} to {node_name}",
                p_created(p),
                p_created(p),
                1,
                "Normal",
                "default-scheduler",
            )
        )
        evs.append(
            k.event(
                NS,
                p,
                "Pulled",
                f'Container image "{IMG}" already present on machine',
                starts[0],
                starts[-1],
                len(starts),
                "Normal",
                "kubelet",
                node_name,
                fp,
            )
        )
        evs.append(
            k.event(
                NS,
                p,
                "Created",
                "Created container notification-worker",
                starts[0],
                starts[-1],
                len(starts),
                "Normal",
                "kubelet",
                node_name,
                fp,
            )
        )
        evs.append(
            k.event(
                NS,
                p,
                "Started",
                "Started container notification-worker",
                starts[0],
                starts[-1],
                len(starts),
                "Normal",
                "kubelet",
                node_name,
                fp,
            )
        )
        evs.append(
            k.event(
                NS,
                p,
                "BackOff",
                "Back-off restarting failed container notification-worker in pod "
                f"{pn}_{NS}({p['metadata']['uid']})",
                starts[0] + timedelta(seconds=2),
                now - timedelta(seconds=s.rng.randint(5, 40)),
                4 * len(starts) + s.rng.randint(0, 5),
                "Warning",
                "kubelet",
                node_name,
                fp,
            )
        )
    # storefront rollout events (the decoy)
    evs.append(
        k.event(
            "web",
            sd,
            "ScalingReplicaSet",
            f"Scaled up replica set {srs['metadata']['name']} to 1",
            sto_roll,
            sto_roll,
            1,
            "Normal",
            "deployment-controller",
        )
    )
    evs.append(
        k.event(
            "web",
            sd,
            "ScalingReplicaSet",
            f"Scaled down replica set {sold['metadata']['name']} to 0 from 1",
            sto_roll + timedelta(seconds=74),
            sto_roll + timedelta(seconds=74),
            1,
            "Normal",
            "deployment-controller",
        )
    )
    s.add(*evs)

    # ---- logs: reloader, storefront, sms, old workers before the edit
    rpn = rpods[0]["metadata"]["name"]
    s.log(
        edit + timedelta(seconds=20),
        "platform",
        rpn,
        "config-reloader",
        "config-reloader",
        "info",
        "configmap changed namespace=messaging name=notification-worker-env "
        "resourceVersion=48812231 "
        "previousHash=5c1e09f3 hash=b7a2d4e0",
    )
    s.log(
        recycle,
        "platform",
        rpn,
        "config-reloader",
        "config-reloader",
        "info",
        "recycling pods workload=deployment/notification-worker namespace=messaging pods=3 "
        "strategy=delete",
    )
    for oname in old_pods:
        s.log(
            recycle + timedelta(milliseconds=150),
            "platform",
            rpn,
            "config-reloader",
            "config-reloader",
            "info",
            f"deleted pod namespace=messaging pod={oname}",
        )
    t = s.ago(hours=3)
    while t < now:
        s.log(
            t,
            "platform",
            rpn,
            "config-reloader",
            "config-reloader",
            "info",
            "resync complete watched=14 changed=0",
        )
        t += timedelta(minutes=15)
    # old workers delivering mail until the recycle
    t = s.ago(hours=2)
    while t < recycle:
        on = old_pods[s.rng.randint(0, 2)]
        s.log(
            t,
            NS,
            on,
            "notification-worker",
            "notification-worker",
            "info",
            "delivered message template=order-confirmation "
            f"msgid=<{k.sha(str(t))[:16]}@quillmark.io> "
            f"relay=smtp-relay.eu.mailgate.net:587 took_ms={s.rng.randint(80, 420)}",
        )
        t += timedelta(seconds=s.rng.randint(20, 70))
    for oname in old_pods:
        s.log(
            recycle + timedelta(milliseconds=400),
            NS,
            oname,
            "notification-worker",
            "notification-worker",
            "info",
            "received signal terminated, draining consumers",
        )
    # storefront: the new version starts fine and publishes events
    for p in spods:
        st = k.parse(p["status"]["startTime"])
        s.log(
            st + timedelta(seconds=3),
            "web",
            p["metadata"]["name"],
            "storefront",
            "storefront",
            "info",
            "storefront 2.44.0 listening on :3000",
        )
    t = s.ago(hours=2)
    while t < now:
        p = spods[s.rng.randint(0, 2)]
        if k.parse(p["status"]["startTime"]) < t:
            s.log(
                t,
                "web",
                p["metadata"]["name"],
                "storefront",
                "storefront",
                "info",
                f"published order.confirmed order_id=ord_{s.rng.randint(10**6, 10**7)} "
                "exchange=notify",
            )
        if s.rng.random() < 0.08:
            s.log(
                t + timedelta(seconds=1),
                "web",
                p["metadata"]["name"],
                "storefront",
                "storefront",
                "warn",
                "deprecated header X-Quill-Session used by client; will be removed in 2.46",
            )
        t += timedelta(seconds=s.rng.randint(30, 90))
    t = s.ago(hours=2)
    while t < now:
        s.log(
            t,
            NS,
            smspods[0]["metadata"]["name"],
            "sms-worker",
            "sms-worker",
            "info",
            f"sent sms id=sms_{s.rng.randint(10**5, 10**6)} provider_status=queued",
        )
        t += timedelta(seconds=s.rng.randint(120, 300))

    # ---- metrics
    m = s.metrics
    ready = []
    backlog = 40.0
    for t in grid:
        if t < recycle.timestamp():
            backlog = max(20.0, backlog + s.rng.uniform(-8, 8))
        else:
            backlog += s.rng.uniform(6, 11) * 60 / 60
        ready.append((t, round(backlog)))
    m.series(
        "rabbitmq_queue_messages_ready",
        "gauge",
        "Messages ready to be delivered to consumers",
        {"namespace": NS, "pod": "rabbitmq-0", "vhost": "notify", "queue": "notifications.email"},
        ready,
    )
    m.series(
        "rabbitmq_queue_consumers",
        "gauge",
        "Consumers on a queue",
        {"namespace": NS, "pod": "rabbitmq-0", "vhost": "notify", "queue": "notifications.email"},
        [(t, 48 if t < recycle.timestamp() else 0) for t in grid][::2],
    )
    for oname in old_pods:
        pts = k.counter_points(
            [t for t in grid if t <= recycle.timestamp()],
            lambda t: 0.35,
            start=float(s.rng.randint(40000, 60000)),
            jitter=lambda: s.rng.uniform(0.6, 1.4),
        )
        m.series(
            "notifications_sent",
            "counter",
            "Notifications handed to the relay",
            {"namespace": NS, "pod": oname, "channel": "email"},
            pts,
        )
    for p, starts in pods:
        pn = p["metadata"]["name"]
        pts, rcount = [], 0
        for t in grid:
            if t < starts[0].timestamp():
                continue
            rcount = sum(1 for st in starts[1:] if st.timestamp() <= t)
            pts.append((t, rcount))
        m.series(
            "kube_pod_container_status_restarts",
            "counter",
            "The number of container restarts per container.",
            {
                "namespace": NS,
                "pod": pn,
                "container": "notification-worker",
                "uid": k.uid("pod", NS, pn),
            },
            pts,
        )
        m.series(
            "kube_pod_container_status_waiting_reason",
            "gauge",
            "Describes the reason the container is currently in waiting state.",
            {
                "namespace": NS,
                "pod": pn,
                "container": "notification-worker",
                "reason": "CrashLoopBackOff",
                "uid": k.uid("pod", NS, pn),
            },
            [(t, 1) for t, _ in pts if t > starts[3].timestamp()],
        )
    m.series(
        "kube_deployment_metadata_generation",
        "gauge",
        "Sequence number representing a specific generation of the desired state.",
        {"namespace": NS, "deployment": "notification-worker"},
        [(t, 31) for t in grid][::5],
    )
    m.series(
        "kube_deployment_status_replicas_available",
        "gauge",
        "The number of available replicas per deployment.",
        {"namespace": NS, "deployment": "notification-worker"},
        [(t, 3 if t < recycle.timestamp() else 0) for t in grid],
    )
    for p in spods:
        pn = p["metadata"]["name"]
        st = k.parse(p["status"]["startTime"]).timestamp()
        pts = k.counter_points(
            [t for t in grid if t >= st], lambda t: 14.0, jitter=lambda: s.rng.uniform(0.8, 1.2)
        )
        m.series(
            "http_requests",
            "counter",
            "Total HTTP requests",
            {"namespace": "web", "pod": pn, "service": "storefront", "code": "200"},
            pts,
        )
        pts5 = k.counter_points(
            [t for t in grid if t >= st], lambda t: 0.02, jitter=lambda: s.rng.uniform(0, 2)
        )
        m.series(
            "http_requests",
            "counter",
            "Total HTTP requests",
            {"namespace": "web", "pod": pn, "service": "storefront", "code": "500"},
            pts5,
        )

    s.write(
        "Order confirmation emails stopped",
        "no order confirmation emails since ~09:15, support is getting tickets. storefront "
        "shipped 2.44 "
        "right before that, so I guess the new version publishes something the mailer chokes on? "
        "notification-worker pods look unhappy too. should we roll back storefront?\n",
        {
            "category": "crash_loop",
            "culprit": {"kind": "Deployment", "namespace": NS, "name": "notification-worker"},
            "evidence": [
                "required key SMTP_RELAY_HOST missing value",
                "MAIL_RELAY_HOST",
                "CrashLoopBackOff",
            ],
            "fix": "The ConfigMap notification-worker-env was refactored (SMTP_RELAY_* renamed to "
            "MAIL_RELAY_*) and "
            "config-reloader recreated the pods on the same revision; notification-worker 3.4.2 "
            "still "
            "requires SMTP_RELAY_HOST. Restore the SMTP_* keys (or ship a worker that reads "
            "MAIL_RELAY_*); "
            "storefront 2.44 is unrelated.",
        },
    )


def p_created(p):
    return k.parse(p["metadata"]["creationTimestamp"])


def _crash_lines(st) -> list:
    return [
        _zap(st, "info", "starting notification-worker", version="3.4.2", commit="9f2e1ab"),
        _zap(
            st + timedelta(milliseconds=4),
            "info",
            "loading configuration from environment",
            caller="config/config.go:41",
            prefix="",
        ),
        _zap(
            st + timedelta(milliseconds=300),
            "fatal",
            "invalid configuration",
            caller="worker/main.go:64",
            error="required key SMTP_RELAY_HOST missing value",
        ),
    ]
