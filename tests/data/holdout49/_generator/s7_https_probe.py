"""7. probe_failure: TLS moved to the linkerd sidecar, the app serves plain HTTP, the readiness
probe still says HTTPS."""

from __future__ import annotations

import json
import random
from datetime import timedelta

from ._kit import (
    Container,
    Scenario,
    app,
    cond,
    cstatus,
    cumulate,
    deploy_status,
    env,
    event,
    http_probe,
    iso,
    namespace,
    parse,
    pod,
    replicaset,
    resources,
    sport,
    std_nodes,
    template,
    terminated,
    times,
    token,
    ts_dt,
)

SID = "accounts-mesh-https-probe"


def build() -> Scenario:
    rng = random.Random(4907)
    now = parse("2026-12-15T13:10:00Z")
    sc = Scenario(
        id=SID,
        title="accounts-api mesh rollout stuck, new pods never Ready",
        now=now,
        report=(
            "accounts-api rollout (linkerd onboarding) has been stuck for ~25 min, the new pods "
            "never go Ready. old pods still serve so no outage yet. the linkerd-proxy logs show "
            "'Failed to connect ... Connection refused', is the mesh control plane broken?\n"
        ),
        truth={
            "category": "probe_failure",
            "culprit": {"kind": "Deployment", "namespace": "identity", "name": "accounts-api"},
            "evidence": [
                "http: server gave HTTP response to HTTPS client",
                "scheme: HTTPS",
                "TLS_MODE=disabled",
                "ProgressDeadlineExceeded",
            ],
            "fix": (
                "Change accounts-api's readinessProbe to scheme: HTTP (TLS is now done by the "
                "linkerd proxy), then let the rollout finish."
            ),
        },
    )
    nodes_objs, nodes = std_nodes(
        "10.44.2", [12, 58, 119, 230], "ap-southeast-2", now, cpu="8", memory_ki=32386544
    )
    sc.add(*nodes_objs)
    for ns in ("identity", "linkerd", "web"):
        sc.add(
            namespace(
                ns,
                now - timedelta(days=260),
                {"linkerd.io/is-control-plane": "true"} if ns == "linkerd" else None,
            )
        )
    roll = now - timedelta(minutes=26)

    ports = [
        {"containerPort": 8443, "name": "https", "protocol": "TCP"},
        {"containerPort": 9090, "name": "metrics", "protocol": "TCP"},
    ]
    probe = http_probe("/readyz", "https", scheme="HTTPS", delay=5, period=10)
    live = {
        "failureThreshold": 3,
        "initialDelaySeconds": 10,
        "periodSeconds": 20,
        "successThreshold": 1,
        "tcpSocket": {"port": "https"},
        "timeoutSeconds": 1,
    }
    old_c = Container(
        "accounts-api",
        "ghcr.io/kestrel-id/accounts-api:6.3.0",
        ports=ports,
        env=env(
            TLS_MODE="server",
            TLS_CERT_FILE="/etc/tls/tls.crt",
            TLS_KEY_FILE="/etc/tls/tls.key",
            LISTEN_ADDR=":8443",
            DB_HOST="accounts-db.identity.svc",
        ),
        resources=resources("250m", "256Mi", None, "512Mi"),
        readiness=probe,
        liveness=live,
        volume_mounts=[{"mountPath": "/etc/tls", "name": "tls", "readOnly": True}],
    )
    new_c = Container(
        "accounts-api",
        "ghcr.io/kestrel-id/accounts-api:6.4.0",
        ports=ports,
        env=env(TLS_MODE="disabled", LISTEN_ADDR=":8443", DB_HOST="accounts-db.identity.svc"),
        resources=resources("250m", "256Mi", None, "512Mi"),
        readiness=probe,
        liveness=live,
    )
    old_t = template(
        {"app": "accounts-api"},
        [old_c],
        volumes=[{"name": "tls", "secret": {"defaultMode": 420, "secretName": "accounts-api-tls"}}],
        service_account="accounts-api",
    )
    new_t = template(
        {"app": "accounts-api"},
        [new_c],
        annotations={"linkerd.io/inject": "enabled"},
        service_account="accounts-api",
    )
    old_start = now - timedelta(days=5, hours=4)
    d = app(
        rng,
        "accounts-api",
        "identity",
        [new_c],
        created=now - timedelta(days=260),
        rs_created=roll,
        replicas=4,
        nodes=nodes,
        pod_cidr="10.44.3",
        revision=9,
    ).deploy
    d["spec"]["template"] = new_t
    d["spec"]["strategy"] = {
        "rollingUpdate": {"maxSurge": 2, "maxUnavailable": 0},
        "type": "RollingUpdate",
    }
    new_h, old_h = token(rng, 10), "7d9b6c5f8d"
    new_rs_name, old_rs_name = f"accounts-api-{new_h}", f"accounts-api-{old_h}"
    d["status"] = deploy_status(
        6,
        4,
        2,
        available=4,
        gen=11,
        unavailable=2,
        conditions=[
            cond(
                "Available",
                "True",
                "MinimumReplicasAvailable",
                "Deployment has minimum availability.",
                old_start + timedelta(minutes=1),
            ),
            cond(
                "Progressing",
                "False",
                "ProgressDeadlineExceeded",
                f'ReplicaSet "{new_rs_name}" has timed out progressing.',
                roll + timedelta(seconds=601),
                roll + timedelta(seconds=601),
            ),
        ],
    )
    sc.add(d)
    new_rs = replicaset(d, new_h, roll, new_t, replicas=2, ready=0, revision=9)
    new_rs["status"] = {"fullyLabeledReplicas": 2, "observedGeneration": 1, "replicas": 2}
    old_rs = replicaset(d, old_h, old_start, old_t, replicas=4, ready=4, revision=8)
    sc.add(old_rs, new_rs)
    # old pods: serving
    for i in range(4):
        pn = f"{old_rs_name}-{token(rng, 5)}"
        pc = old_start + timedelta(seconds=10 + 30 * i)
        n, ip = nodes[i]
        sc.add(
            pod(
                pn,
                "identity",
                "ReplicaSet",
                old_rs_name,
                old_rs["spec"]["template"],
                pc,
                node_name=n,
                pod_ip=f"10.44.3.{rng.randint(10, 250)}",
                host_ip=ip,
                statuses=[
                    cstatus(
                        old_c,
                        ready=True,
                        state={"running": {"startedAt": iso(pc + timedelta(seconds=3))}},
                        rng=rng,
                    )
                ],
            )
        )
    # new pods: injected proxy, app not Ready
    proxy = Container(
        "linkerd-proxy",
        "cr.l5d.io/linkerd/proxy:edge-24.11.8",
        ports=[
            {"containerPort": 4143, "name": "linkerd-proxy", "protocol": "TCP"},
            {"containerPort": 4191, "name": "linkerd-admin", "protocol": "TCP"},
        ],
        env=env(
            LINKERD2_PROXY_LOG="warn,linkerd=info,hickory=error",
            LINKERD2_PROXY_INBOUND_PORTS="8443,9090",
            LINKERD2_PROXY_IDENTITY_SVC_ADDR="linkerd-identity-headless.linkerd.svc.cluster.local.:8080",
            LINKERD2_PROXY_DESTINATION_SVC_ADDR="linkerd-dst-headless.linkerd.svc.cluster.local.:8086",
        ),
        resources={},
        readiness=http_probe("/ready", 4191, delay=2),
        liveness=http_probe("/live", 4191, delay=10),
    )
    init = Container(
        "linkerd-init",
        "cr.l5d.io/linkerd/proxy-init:v2.4.1",
        args=[
            "--incoming-proxy-port",
            "4143",
            "--outgoing-proxy-port",
            "4140",
            "--proxy-uid",
            "2102",
            "--inbound-ports-to-ignore",
            "4190,4191,4567,4568",
            "--outbound-ports-to-ignore",
            "4567,4568",
        ],
    )
    new_pods = []
    for i in range(2):
        pn = f"{new_rs_name}-{token(rng, 5)}"
        pc = roll + timedelta(seconds=1 + i)
        n, hip = nodes[(i + 1) % 4]
        ip = f"10.44.3.{rng.randint(10, 250)}"
        t = json.loads(json.dumps(new_rs["spec"]["template"]))
        t["spec"]["containers"] = [proxy.spec()] + t["spec"]["containers"]
        t["metadata"]["annotations"] |= {
            "linkerd.io/created-by": "linkerd/proxy-injector edge-24.11.8",
            "linkerd.io/proxy-version": "edge-24.11.8",
            "linkerd.io/inject": "enabled",
        }
        t["metadata"]["labels"] |= {
            "linkerd.io/control-plane-ns": "linkerd",
            "linkerd.io/proxy-deployment": "accounts-api",
            "linkerd.io/workload-ns": "identity",
        }
        st = pc + timedelta(seconds=6)
        p = pod(
            pn,
            "identity",
            "ReplicaSet",
            new_rs_name,
            t,
            pc,
            node_name=n,
            pod_ip=ip,
            host_ip=hip,
            ready=False,
            statuses=[
                cstatus(
                    new_c,
                    ready=False,
                    state={"running": {"startedAt": iso(st + timedelta(seconds=1))}},
                    rng=rng,
                ),
                cstatus(proxy, ready=True, state={"running": {"startedAt": iso(st)}}, rng=rng),
            ],
            extra_init=[init],
            init_statuses=[
                cstatus(
                    init,
                    ready=True,
                    started=False,
                    state=terminated(
                        "Completed", 0, pc + timedelta(seconds=3), pc + timedelta(seconds=4)
                    ),
                    rng=rng,
                )
            ],
        )
        new_pods.append(p)
        sc.add(p)
        fp = "spec.containers{accounts-api}"
        cnt = int((now - st).total_seconds() // 10) - 1
        sc.add(
            event(
                "identity",
                "Pod",
                pn,
                "Scheduled",
                f"Successfully assigned identity/{pn} to {n}",
                pc,
                pc,
                component="default-scheduler",
            ),
            event(
                "identity",
                "Pod",
                pn,
                "Pulled",
                'Container image "cr.l5d.io/linkerd/proxy-init:v2.4.1" already present on machine',
                pc + timedelta(seconds=2),
                pc + timedelta(seconds=2),
                host=n,
                field_path="spec.initContainers{linkerd-init}",
            ),
            event(
                "identity",
                "Pod",
                pn,
                "Started",
                "Started container linkerd-init",
                pc + timedelta(seconds=3),
                pc + timedelta(seconds=3),
                host=n,
                field_path="spec.initContainers{linkerd-init}",
            ),
            event(
                "identity",
                "Pod",
                pn,
                "Started",
                "Started container linkerd-proxy",
                st,
                st,
                host=n,
                field_path="spec.containers{linkerd-proxy}",
            ),
            event(
                "identity",
                "Pod",
                pn,
                "Pulled",
                f'Successfully pulled image "{new_c.image}" in 2.114s (2.114s including '
                "waiting). Image size: 19284113 bytes.",
                st,
                st,
                host=n,
                field_path=fp,
            ),
            event(
                "identity",
                "Pod",
                pn,
                "Started",
                "Started container accounts-api",
                st + timedelta(seconds=1),
                st + timedelta(seconds=1),
                host=n,
                field_path=fp,
            ),
            event(
                "identity",
                "Pod",
                pn,
                "Unhealthy",
                f'Readiness probe failed: Get "https://{ip}:8443/readyz": http: server gave '
                "HTTP response to HTTPS client",
                st + timedelta(seconds=6),
                now - timedelta(seconds=4 + 3 * i),
                count=cnt,
                type_="Warning",
                host=n,
                field_path=fp,
            ),
        )
    sc.add(
        event(
            "identity",
            "Deployment",
            "accounts-api",
            "ScalingReplicaSet",
            f"Scaled up replica set {new_rs_name} to 2",
            roll,
            roll,
            component="deployment-controller",
            api_version="apps/v1",
        )
    )
    sc.add(
        event(
            "identity",
            "ReplicaSet",
            new_rs_name,
            "SuccessfulCreate",
            f"Created pod: {new_pods[0]['metadata']['name']}",
            roll,
            roll,
            component="replicaset-controller",
            api_version="apps/v1",
        ),
        event(
            "identity",
            "ReplicaSet",
            new_rs_name,
            "SuccessfulCreate",
            f"Created pod: {new_pods[1]['metadata']['name']}",
            roll,
            roll,
            component="replicaset-controller",
            api_version="apps/v1",
        ),
    )
    old_pods = [
        o
        for o in sc.objects
        if o["kind"] == "Pod" and o["metadata"]["name"].startswith(old_rs_name)
    ]
    from ._kit import endpoints, service

    sc.add(
        service(
            "accounts-api",
            "identity",
            now - timedelta(days=260),
            {"app": "accounts-api"},
            [sport(443, "https", name="https")],
            "172.20.40.77",
        ),
        endpoints(
            "accounts-api",
            "identity",
            now - timedelta(days=260),
            old_pods,
            [{"name": "https", "port": 8443, "protocol": "TCP"}],
            not_ready=new_pods,
        ),
    )

    # linkerd control plane: healthy; identity had one old restart
    for name, img, port, restarts in (
        ("linkerd-identity", "cr.l5d.io/linkerd/controller:edge-24.11.8", 8080, 1),
        ("linkerd-destination", "cr.l5d.io/linkerd/controller:edge-24.11.8", 8086, 0),
        ("linkerd-proxy-injector", "cr.l5d.io/linkerd/controller:edge-24.11.8", 8443, 0),
    ):
        c = Container(
            name.replace("linkerd-", ""),
            img,
            ports=[{"containerPort": port, "name": "grpc", "protocol": "TCP"}],
            resources=resources("100m", "50Mi", None, "250Mi"),
            readiness=http_probe("/ready", 9990),
        )
        st = now - timedelta(days=3, hours=2)
        a = app(
            rng,
            name,
            "linkerd",
            [c],
            created=now - timedelta(days=260),
            rs_created=st,
            replicas=1 if name != "linkerd-destination" else 2,
            nodes=nodes,
            pod_cidr="10.44.4",
            revision=6,
            labels={"linkerd.io/control-plane-component": name.replace("linkerd-", "")},
            restarts={0: (1, terminated("Error", 1, st, st + timedelta(minutes=2)))}
            if restarts
            else None,
        )
        sc.add(*a.objects)
    # web: portal, a caller of accounts-api
    pc_ = Container(
        "portal",
        "ghcr.io/kestrel-id/portal:2026.12.14",
        ports=[{"containerPort": 3000, "name": "http", "protocol": "TCP"}],
        env=env(ACCOUNTS_API="https://accounts-api.identity.svc.cluster.local"),
        resources=resources("100m", "256Mi", None, "512Mi"),
        readiness=http_probe("/healthz", "http"),
    )
    pa = app(
        rng,
        "portal",
        "web",
        [pc_],
        created=now - timedelta(days=260),
        rs_created=now - timedelta(hours=20),
        replicas=2,
        nodes=nodes,
        pod_cidr="10.44.5",
        revision=57,
        svc_ports=[sport(80, "http")],
    )
    sc.add(*pa.objects)

    # ---------------------------------------------------------------- metrics
    ts = times(now, 2)
    m = sc.metrics
    for o in sc.objects:
        if o["kind"] == "Pod" and o["metadata"]["namespace"] == "identity":
            pn = o["metadata"]["name"]
            ready = o["status"]["conditions"][1]["status"] == "True"
            t0 = int(parse(o["metadata"]["creationTimestamp"]).timestamp())
            m.gauge(
                "kube_pod_status_ready",
                "Describes whether the pod is ready to serve requests.",
                {"namespace": "identity", "pod": pn, "condition": "true"},
                [(t, 1 if ready else 0) for t in ts if t >= t0 + 60],
            )
            if ready:
                m.counter(
                    "http_requests",
                    "Requests served.",
                    {"namespace": "identity", "pod": pn, "service": "accounts-api", "code": "200"},
                    cumulate(ts, lambda t: 11.0, start=2.4e6),
                )
    m.gauge(
        "kube_deployment_status_replicas_unavailable",
        "The number of unavailable replicas per deployment.",
        {"namespace": "identity", "deployment": "accounts-api"},
        [(t, 2 if t >= int(roll.timestamp()) else 0) for t in ts],
    )

    # ---------------------------------------------------------------- logs
    L = sc.logs
    for p in new_pods:
        pn = p["metadata"]["name"]
        st = parse(p["status"]["containerStatuses"][1]["state"]["running"]["startedAt"])
        plines = []
        proxy_msgs = [
            (
                0.0012,
                "INFO",
                "ThreadId(01)",
                "linkerd2_proxy: release 2.266.0 (a1f2b3c) by linkerd on 2024-11-20T17:02:11Z",
            ),
            (
                0.0031,
                "INFO",
                "ThreadId(01)",
                "linkerd2_proxy::rt: Using single-threaded proxy runtime",
            ),
            (0.0039, "INFO", "ThreadId(01)", "linkerd2_proxy: Admin interface on 0.0.0.0:4191"),
            (0.0040, "INFO", "ThreadId(01)", "linkerd2_proxy: Inbound interface on 0.0.0.0:4143"),
            (
                0.0041,
                "INFO",
                "ThreadId(01)",
                "linkerd2_proxy: Outbound interface on 127.0.0.1:4140",
            ),
            (
                0.0052,
                "INFO",
                "ThreadId(01)",
                "linkerd2_proxy: Local identity is accounts-api.identity.serviceaccount.identity"
                ".linkerd.cluster.local",
            ),
            (
                0.0130,
                "WARN",
                "ThreadId(02)",
                "identity:identity{server.addr=linkerd-identity-headless.linkerd.svc.cluster.lo"
                "cal:8080}:controller{addr=linkerd-identity-headless.linkerd.svc.cluster.local"
                ":8080}:endpoint{addr=10.44.4.61:8080}: linkerd_reconnect: Failed to connect "
                "error=Connection refused (os error 111)",
            ),
            (
                0.1204,
                "WARN",
                "ThreadId(02)",
                "identity:identity{server.addr=linkerd-identity-headless.linkerd.svc.cluster.lo"
                "cal:8080}:controller{addr=linkerd-identity-headless.linkerd.svc.cluster.local"
                ":8080}:endpoint{addr=10.44.4.61:8080}: linkerd_reconnect: Failed to connect "
                "error=Connection refused (os error 111)",
            ),
            (
                0.4811,
                "INFO",
                "ThreadId(02)",
                "daemon:identity: linkerd_app: Certified identity "
                "id=accounts-api.identity.serviceaccount.identity.linkerd.cluster.local",
            ),
        ]
        for off, lvl, th, msg in proxy_msgs:
            at = st + timedelta(seconds=off)
            plines.append(f"[{off:>14.6f}s] {lvl:>5} {th} {msg}")
            L.add(at, "linkerd-proxy", "identity", pn, "linkerd-proxy", lvl.lower(), msg)
        sc.pod_log("identity", pn, "linkerd-proxy", plines)
        ast = st + timedelta(seconds=1)
        alines = []
        for k, (lvl, msg, extra) in enumerate(
            [
                ("info", "accounts-api starting", '"version":"6.4.0","commit":"e3c19a7"'),
                ("info", "connected to database", '"host":"accounts-db.identity.svc","pool":25'),
                (
                    "warn",
                    "TLS termination disabled (TLS_MODE=disabled); serving plain HTTP, "
                    "transport security is provided by the mesh",
                    '"addr":":8443"',
                ),
                ("info", "http server listening", '"addr":":8443","tls":false'),
            ]
        ):
            at = ast + timedelta(milliseconds=150 * k)
            alines.append(
                f'{{"level":"{lvl}","ts":"{at.isoformat().replace("+00:00", "Z")}",'
                f'"msg":"{msg}",{extra}}}'
            )
            L.add(at, "accounts-api", "identity", pn, "accounts-api", lvl, msg)
        sc.pod_log("identity", pn, "accounts-api", alines)
    for o in old_pods:
        pn = o["metadata"]["name"]
        t = ts[0]
        while t < ts[-1]:
            if rng.random() < 0.2:
                at = ts_dt(t) + timedelta(seconds=rng.randint(0, 59))
                L.add(
                    at,
                    "accounts-api",
                    "identity",
                    pn,
                    "accounts-api",
                    "info",
                    f"session refreshed for account acc_{rng.randint(10**6, 10**7)}",
                )
            if rng.random() < 0.03:
                at = ts_dt(t) + timedelta(seconds=rng.randint(0, 59))
                L.add(
                    at,
                    "accounts-api",
                    "identity",
                    pn,
                    "accounts-api",
                    "warn",
                    "http: TLS handshake error from "
                    f"10.44.5.{rng.randint(10, 250)}:{rng.randint(30000, 60000)}: EOF",
                )
            t += 60
    return sc
