"""5. certificate: cert-manager renewed token-service's certificate, but the server still serves
the expired one."""

from __future__ import annotations

import datetime as dt

from ._kit import (
    Cluster,
    Scenario,
    configmap,
    container,
    env,
    http_probe,
    iso,
    iso_ms,
    namespace,
    node,
    parse,
    terminated,
    uid,
)

SID = "token-cert-not-reloaded"

REG = "harbor.corvid.internal"


def build() -> Scenario:
    sc = Scenario(
        SID,
        "api-gateway returning 500 on every authenticated call",
        "2026-07-08T09:50:00Z",
        "Since ~09:15 api-gateway returns 500 on basically every authenticated request, login "
        "in the account portal is broken too. cert-manager shows token-service-tls as Ready "
        "(renewed on Monday), so it is not a cert problem. The gateway got 4.18.0 this morning, "
        "I think that release broke token introspection?\n",
        {
            "category": "certificate",
            "culprit": {"kind": "Deployment", "namespace": "identity", "name": "token-service"},
            "evidence": [
                "x509: certificate has expired or is not yet valid",
                "is after 2026-07-08T09:12:00Z",
                "probe_ssl_earliest_cert_expiry",
                "certmanager_certificate_expiration_timestamp_seconds",
                'not_after":"2026-07-08T09:12:00Z',
            ],
            "fix": "Restart token-service (kubectl rollout restart deployment/token-service -n "
            "identity) so it loads the renewed certificate, and make it reload tls.crt on "
            "change (or add a reloader annotation); the gateway release is not the cause.",
        },
    )
    now = sc.now
    old = now - dt.timedelta(days=600)
    for ns in ("identity", "edge", "cert-manager", "monitoring"):
        sc.add(namespace(ns, old))
    nodes = []
    for i in range(4):
        name = f"wrk-ams1-{7 + i:02d}"
        ip = f"10.8.20.{17 + i}"
        nodes.append((name, ip, i + 1))
        sc.add(
            node(
                name,
                created=now - dt.timedelta(days=90 + i),
                now=now,
                cpu="16",
                memory="65842892Ki",
                alloc_cpu="15800m",
                alloc_memory="63643340Ki",
                internal_ip=ip,
                kubelet="v1.30.4",
                os_image="Debian GNU/Linux 12 (bookworm)",
                kernel="6.1.0-22-amd64",
                runtime="containerd://1.7.18",
                labels={
                    "node-role.kubernetes.io/worker": "",
                    "topology.kubernetes.io/zone": "ams1-r" + str(i % 2 + 1),
                },
            )
        )
    cl = Cluster(sc, "10.42")

    old_after = parse("2026-07-08T09:12:00Z")
    old_before = old_after - dt.timedelta(days=7)
    renewed = parse("2026-07-06T01:12:00Z")
    new_after = renewed + dt.timedelta(days=7)

    # ------------------------------------------------------------------ callers
    gw_roll = now.replace(hour=7, minute=40, second=12)
    gwc = container(
        "api-gateway",
        f"{REG}/edge/api-gateway:4.18.0",
        ports=[8080],
        requests={"cpu": "500m", "memory": "256Mi"},
        limits={"memory": "512Mi"},
        env=env(
            INTROSPECTION_URL="https://token-service.identity.svc:8443/oauth2/introspect",
            INTERNAL_CA_FILE="/etc/ssl/corvid/ca.crt",
        ),
        readiness=http_probe("/ready", 8080),
    )
    gw = cl.healthy(
        "edge",
        "api-gateway",
        image=gwc["image"],
        nodes=nodes,
        replicas=3,
        created=old,
        rollout=gw_roll,
        revision=112,
        containers=[gwc],
        annotations={"kubernetes.io/change-cause": "4.18.0: RateLimit-* response headers"},
    )
    portal = cl.healthy(
        "identity",
        "account-portal",
        image=f"{REG}/identity/account-portal:2.9.5",
        nodes=nodes[::2],
        replicas=2,
        created=old,
        rollout=now - dt.timedelta(days=4, hours=3),
        revision=44,
        port=3000,
        env_=env(
            NODE_EXTRA_CA_CERTS="/etc/ssl/corvid/ca.crt",
            TOKEN_URL="https://token-service.identity.svc:8443/oauth2/token",
        ),
    )
    callers = [p["status"]["podIP"] for p in gw["pods"]] + [portal["pods"][0]["status"]["podIP"]]

    # ------------------------------------------------------------------ token-service (the culprit)
    ts_start = parse("2026-07-02T14:10:04Z")
    vols = [
        {"name": "tls", "secret": {"secretName": "token-service-tls", "defaultMode": 420}},
        {"name": "signing", "secret": {"secretName": "token-service-jwk", "defaultMode": 288}},
    ]
    mounts = [
        {"name": "tls", "mountPath": "/etc/token-service/tls", "readOnly": True},
        {"name": "signing", "mountPath": "/etc/token-service/jwk", "readOnly": True},
    ]
    c = container(
        "token-service",
        f"{REG}/identity/token-service:7.3.2",
        ports=[8443, 8081],
        requests={"cpu": "250m", "memory": "256Mi"},
        limits={"memory": "512Mi"},
        env=env(
            TLS_CERT_FILE="/etc/token-service/tls/tls.crt",
            TLS_KEY_FILE="/etc/token-service/tls/tls.key",
            LISTEN_ADDR=":8443",
            HEALTH_ADDR=":8081",
            ISSUER="https://id.corvid.io",
        ),
        readiness=http_probe("/healthz", 8081),
        liveness=http_probe("/healthz", 8081, delay=10),
        mounts=mounts,
    )
    c["ports"][0]["name"] = "https"
    ts = cl.healthy(
        "identity",
        "token-service",
        image=c["image"],
        nodes=nodes[1:3],
        replicas=2,
        created=now - dt.timedelta(days=540),
        rollout=ts_start,
        revision=38,
        containers=[c],
        svc=False,
        volumes=vols,
        annotations={"kubernetes.io/change-cause": "7.3.2: PAR endpoint"},
    )
    ts_pods = [(p["metadata"]["name"], p["status"]["podIP"]) for p in ts["pods"]]
    sc.add(_svc("identity", "token-service", 8443, "https", "10.43.12.40", old))
    sc.add(_eps("identity", "token-service", ts["pods"], 8443, "https", old))
    sc.add(
        configmap(
            "identity",
            "token-service-ca",
            {"ca.crt": "# corvid internal CA (see internal-ca ClusterIssuer)\n"},
            old,
            annotations={"trust.cert-manager.io/source": "internal-ca"},
        )
    )

    serial_old = "5e:3a:91:0c:7d:22:e4:8f:b0:13:6a:c2:9e:41:d7:08"
    for pn, _ip in ts_pods:
        t0 = ts_start + dt.timedelta(
            seconds=8 + (5 if pn == ts_pods[1][0] else 0), milliseconds=311
        )
        lines = [
            (
                t0,
                "info",
                f'{{"level":"info","time":"{iso(t0)}","msg":"starting '
                'token-service","version":"7.3.2"}',
            ),
            (
                t0 + dt.timedelta(milliseconds=40),
                "info",
                f'{{"level":"info","time":"{iso(t0)}","msg":"loaded TLS '
                'certificate","file":"/etc/token-service/tls/tls.crt",'
                '"subject":"CN=token-service.identity.svc","issuer":"CN=Corvid Internal '
                f'CA G2","serial":"{serial_old}","not_before":"{iso(old_before)}",'
                f'"not_after":"{iso(old_after)}"}}',
            ),
            (
                t0 + dt.timedelta(milliseconds=52),
                "info",
                f'{{"level":"info","time":"{iso(t0)}","msg":"listening","addr":":8443","tls":true,"health_addr":":8081"}}',
            ),
        ]
        # pod output since start: startup, a request summary every 30 min, then the handshake errors
        out = [ln for _, _, ln in lines]
        for t, lvl, ln in lines:
            if t >= now - dt.timedelta(days=7):
                sc.log(t, "identity", pn, "token-service", "token-service", lvl, ln)
        t = now - dt.timedelta(hours=6)
        t = t.replace(minute=0, second=0)
        while t < old_after:
            ln = (
                f'{{"level":"info","time":"{iso(t)}","msg":"stats",'
                f'"introspections":{8200 + (t.hour * 131) % 900},'
                f'"tokens_issued":{1900 + (t.hour * 71) % 400},"p99_ms":7}}'
            )
            sc.log(t, "identity", pn, "token-service", "token-service", "info", ln)
            out.append(ln)
            t += dt.timedelta(minutes=30)
        t = old_after + dt.timedelta(seconds=3 if pn == ts_pods[0][0] else 4)
        k = 0
        while t < now:
            client_ip = callers[k % len(callers)]
            go_client = k % 4 != 3
            alert = "bad certificate" if go_client else "expired certificate"
            ln = (
                f"{t.strftime('%Y/%m/%d %H:%M:%S')} http: TLS handshake error from "
                f"{client_ip}:{40000 + (k * 733) % 20000}: remote error: tls: {alert}"
            )
            out.append(ln)
            if (
                k % 3 == 0
            ):  # the log shipper samples this noisy line; the pod's own log has all of them
                sc.log(
                    t,
                    "identity",
                    pn,
                    "token-service",
                    "token-service",
                    "error",
                    ln,
                    **{"error.type": "tls"},
                )
            t += dt.timedelta(seconds=9 + k % 5)
            k += 1
        sc.pod_log("identity", pn, "token-service", out[:3] + out[-400:])

    gw_pods = [p["metadata"]["name"] for p in gw["pods"]]
    t = now - dt.timedelta(hours=3)
    k = 0
    while t < now:
        gp = gw_pods[k % 3]
        if t <= old_after:
            sc.log(
                t,
                "edge",
                gp,
                "api-gateway",
                "api-gateway",
                "info",
                f'{{"level":"info","ts":"{iso_ms(t)}","msg":"request","method":"GET","route":"/v1/orders",'
                f'"status":200,"duration_ms":{21 + k % 17},"auth":"introspected"}}',
                **{"http.response.status_code": 200},
            )
        else:
            tt = t + dt.timedelta(milliseconds=170)
            sc.log(
                t,
                "edge",
                gp,
                "api-gateway",
                "api-gateway",
                "error",
                f'{{"level":"error","ts":"{iso_ms(t)}","msg":"token introspection '
                'failed","route":"/v1/orders","upstream":"token-service.identity.svc:844'
                '3","error":"Post \\"https://token-service.identity.svc:8443/oauth2/'
                'introspect\\": tls: failed to verify certificate: x509: certificate has '
                f'expired or is not yet valid: current time {iso(t)} is after {iso(old_after)}"}}',
                **{"error.type": "x509.CertificateInvalidError"},
            )
            sc.log(
                tt,
                "edge",
                gp,
                "api-gateway",
                "api-gateway",
                "warn",
                f'{{"level":"warn","ts":"{iso_ms(tt)}","msg":"request","method":"GET","route":"/v1/orders",'
                f'"status":500,"duration_ms":3,"auth":"error"}}',
                **{"http.response.status_code": 500},
            )
        t += dt.timedelta(seconds=20)
        k += 1
    t = gw_roll + dt.timedelta(seconds=20)
    for gp in gw_pods:
        sc.log(
            t,
            "edge",
            gp,
            "api-gateway",
            "api-gateway",
            "info",
            f'{{"level":"info","ts":"{iso_ms(t)}","msg":"api-gateway starting","version":"4.18.0",'
            f'"routes":214,"ratelimit_headers":true}}',
        )
        sc.log(
            t + dt.timedelta(seconds=1),
            "edge",
            gp,
            "api-gateway",
            "api-gateway",
            "warn",
            f'{{"level":"warn","ts":"{iso_ms(t)}","msg":"deprecated config '
            'key","key":"ratelimit.legacy_headers","use":"ratelimit.headers"}',
        )
        t += dt.timedelta(seconds=35)
    pp = [p["metadata"]["name"] for p in portal["pods"]]
    t = old_after + dt.timedelta(seconds=41)
    k = 0
    while t < now:
        sc.log(
            t,
            "identity",
            pp[k % 2],
            "account-portal",
            "account-portal",
            "error",
            f'{{"level":50,"time":{int(t.timestamp() * 1000)},"pid":1,'
            f'"hostname":"{pp[k % 2]}","msg":"token refresh '
            'failed","err":{"type":"Error","message":"certificate has '
            'expired","stack":"Error: certificate has expired\\n    at '
            "TLSSocket.onConnectSecure (node:_tls_wrap:1674:34)\\n    at TLSSocket.emit "
            '(node:events:519:28)","code":"CERT_HAS_EXPIRED"}}',
            **{"error.type": "CERT_HAS_EXPIRED"},
        )
        t += dt.timedelta(seconds=47)
        k += 1

    # decoy: a cleanup CronJob in identity failing on its own
    job = "session-cleanup-29725050"
    jlab = {"app": "session-cleanup", "batch.kubernetes.io/job-name": job}
    from ._kit import pod, template

    jt = template(
        jlab,
        [
            container(
                "cleanup",
                f"{REG}/identity/session-cleanup:1.2.0",
                env=env(REDIS_URL="redis://sessions-redis.identity.svc:6379/0"),
                requests={"cpu": "50m", "memory": "64Mi"},
                limits={"memory": "128Mi"},
            )
        ],
    )
    jt["spec"]["restartPolicy"] = "Never"
    j_start = now.replace(hour=9, minute=30, second=0)
    sc.add(
        {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": {
                "name": "session-cleanup",
                "namespace": "identity",
                "uid": uid("identity/cronjob/session-cleanup"),
                "creationTimestamp": iso(now - dt.timedelta(days=30)),
            },
            "spec": {
                "schedule": "30 */3 * * *",
                "concurrencyPolicy": "Forbid",
                "suspend": False,
                "jobTemplate": {"spec": {"backoffLimit": 1, "template": jt}},
            },
            "status": {
                "lastScheduleTime": iso(j_start),
                "lastSuccessfulTime": iso(now - dt.timedelta(days=1, hours=3, minutes=29)),
            },
        }
    )
    sc.add(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": job,
                "namespace": "identity",
                "uid": uid(f"identity/job/{job}"),
                "creationTimestamp": iso(j_start),
                "labels": {"app": "session-cleanup"},
                "ownerReferences": [
                    {
                        "apiVersion": "batch/v1",
                        "kind": "CronJob",
                        "name": "session-cleanup",
                        "uid": uid("identity/cronjob/session-cleanup"),
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            },
            "spec": {"backoffLimit": 1, "completions": 1, "parallelism": 1, "template": jt},
            "status": {
                "startTime": iso(j_start),
                "failed": 2,
                "conditions": [
                    {
                        "type": "Failed",
                        "status": "True",
                        "reason": "BackoffLimitExceeded",
                        "message": "Job has reached the specified backoff limit",
                        "lastProbeTime": iso(j_start + dt.timedelta(seconds=44)),
                        "lastTransitionTime": iso(j_start + dt.timedelta(seconds=44)),
                    }
                ],
            },
        }
    )
    for i in range(2):
        pn = f"{job}-{['x7kq2', 'm4pzd'][i]}"
        c_at = j_start + dt.timedelta(seconds=1 + 20 * i)
        st = {
            "name": "cleanup",
            "image": jt["spec"]["containers"][0]["image"],
            "ready": False,
            "started": False,
            "restartCount": 0,
            "lastState": {},
            "imageID": f"{REG}/identity/session-cleanup@sha256:" + "ab" * 32,
            "state": {
                "terminated": terminated(
                    "Error", 1, c_at + dt.timedelta(seconds=3), c_at + dt.timedelta(seconds=4), pn
                )
            },
        }
        sc.add(
            pod(
                "identity",
                pn,
                tpl=jt,
                owner=("Job", job),
                node_name=nodes[3][0],
                created=c_at,
                statuses=[st],
                ip=cl.pod_ip(4),
                host_ip=nodes[3][1],
                phase="Failed",
                ready=False,
            )
        )
        ln = "error: cannot scan sessions: NOAUTH Authentication required."
        sc.log(
            c_at + dt.timedelta(seconds=4),
            "identity",
            pn,
            "cleanup",
            "session-cleanup",
            "error",
            ln,
        )
        sc.pod_log(
            "identity",
            pn,
            "cleanup",
            ["connecting to redis://sessions-redis.identity.svc:6379/0", ln],
        )
        sc.event(
            "Job",
            "identity",
            job,
            "SuccessfulCreate",
            f"Created pod: {pn}",
            first=c_at,
            component="job-controller",
            api_version="batch/v1",
        )
    sc.event(
        "Job",
        "identity",
        job,
        "BackoffLimitExceeded",
        "Job has reached the specified backoff limit",
        type_="Warning",
        first=j_start + dt.timedelta(seconds=44),
        component="job-controller",
        api_version="batch/v1",
    )
    sc.event(
        "CronJob",
        "identity",
        "session-cleanup",
        "SuccessfulCreate",
        f"Created job {job}",
        first=j_start,
        component="cronjob-controller",
        api_version="batch/v1",
    )
    sc.event(
        "CronJob",
        "identity",
        "session-cleanup",
        "SawCompletedJob",
        f"Saw completed job: {job}, status: Failed",
        first=j_start + dt.timedelta(seconds=45),
        component="cronjob-controller",
        api_version="batch/v1",
    )
    cl.healthy(
        "identity",
        "sessions-redis",
        image="redis:7.2.5",
        nodes=[nodes[0]],
        replicas=1,
        created=old,
        rollout=now - dt.timedelta(days=2, hours=20),
        revision=6,
        port=6379,
        requests={"cpu": "100m", "memory": "512Mi"},
        limits={"memory": "512Mi"},
    )

    # ------------------------------------------------------------------ cert-manager and monitoring
    cm = cl.healthy(
        "cert-manager",
        "cert-manager",
        image="quay.io/jetstack/cert-manager-controller:v1.15.1",
        nodes=[nodes[0]],
        replicas=1,
        created=old,
        rollout=now - dt.timedelta(days=6, hours=2),
        revision=9,
        port=9402,
        svc=False,
        probe_path="/livez",
    )
    cl.healthy(
        "cert-manager",
        "cert-manager-webhook",
        image="quay.io/jetstack/cert-manager-webhook:v1.15.1",
        nodes=[nodes[1]],
        replicas=1,
        created=old,
        rollout=now - dt.timedelta(days=6, hours=2),
        revision=9,
        port=10250,
        svc=False,
        probe_path="/livez",
    )
    cmp = cm["pods"][0]["metadata"]["name"]
    k8s_t = lambda t: f"I{t.strftime('%m%d %H:%M:%S')}.{t.microsecond:06d}       1 "  # noqa: E731
    for t, src, msg in (
        (
            renewed + dt.timedelta(milliseconds=118),
            "trigger_controller.go:223",
            '"Certificate must be re-issued" logger="cert-manager.controller" '
            'key="identity/token-service-tls" reason="Renewing" message="Renewing '
            'certificate as renewal was scheduled at 2026-07-06 01:12:00 +0000 UTC"',
        ),
        (
            renewed + dt.timedelta(milliseconds=120),
            "conditions.go:203",
            'Setting lastTransitionTime for Certificate "token-service-tls" condition "Issuing" to '
            "2026-07-06 01:12:00.120031 +0000 UTC m=+310331.112877",
        ),
        (
            renewed + dt.timedelta(milliseconds=361),
            "conditions.go:263",
            'Setting lastTransitionTime for CertificateRequest "token-service-tls-9" '
            'condition "Approved" to 2026-07-06 01:12:00.361822 +0000 UTC m=+310331.354668',
        ),
        (
            renewed + dt.timedelta(milliseconds=402),
            "conditions.go:263",
            'Setting lastTransitionTime for CertificateRequest "token-service-tls-9" '
            'condition "Ready" to 2026-07-06 01:12:00.402317 +0000 UTC m=+310331.395163',
        ),
        (
            renewed + dt.timedelta(milliseconds=455),
            "issuing_controller.go:337",
            '"Issued certificate" logger="cert-manager.controller" '
            'key="identity/token-service-tls" resource_name="token-service-tls-9" '
            'resource_kind="CertificateRequest" not_after="2026-07-13T01:12:00Z"',
        ),
        (
            renewed + dt.timedelta(milliseconds=470),
            "secret_manager.go:118",
            '"Updated Secret" logger="cert-manager.controller" key="identity/token-service-tls" '
            'secret="identity/token-service-tls"',
        ),
    ):
        sc.log(
            t,
            "cert-manager",
            cmp,
            "cert-manager-controller",
            "cert-manager",
            "info",
            f"{k8s_t(t)}{src}] {msg}",
        )
    t = now - dt.timedelta(hours=3)
    while t < now:
        sc.log(
            t,
            "cert-manager",
            cmp,
            "cert-manager-controller",
            "cert-manager",
            "info",
            f'{k8s_t(t)}sync.go:93] "certificate is up to date" logger="cert-manager.controller" '
            f'key="edge/api-gateway-tls"',
        )
        t += dt.timedelta(minutes=20)
    cl.healthy(
        "monitoring",
        "blackbox-exporter",
        image="quay.io/prometheus/blackbox-exporter:v0.25.0",
        nodes=[nodes[3]],
        replicas=1,
        created=old,
        rollout=now - dt.timedelta(days=5, hours=7),
        revision=4,
        port=9115,
    )
    sc.add(
        configmap(
            "monitoring",
            "blackbox-exporter-config",
            {
                "blackbox.yaml": (
                    "modules:\n  tls_connect_insecure:\n    prober: tcp\n    timeout: 5s\n"
                    "    tcp:\n      tls: true\n      tls_config:\n"
                    "        insecure_skip_verify: true\n  http_2xx:\n    prober: http\n"
                    "    timeout: 5s\n"
                )
            },
            old,
        )
    )

    # ------------------------------------------------------------------ metrics
    grid = sc.grid(3)
    m = sc.metrics
    for name, ns_, na, iss in (
        ("token-service-tls", "identity", new_after, "internal-ca"),
        ("api-gateway-tls", "edge", parse("2026-09-02T04:00:00Z"), "letsencrypt-prod"),
        ("account-portal-tls", "identity", parse("2026-07-11T22:40:00Z"), "internal-ca"),
    ):
        lab = {
            "name": name,
            "namespace": ns_,
            "issuer_name": iss,
            "issuer_kind": "ClusterIssuer",
            "issuer_group": "cert-manager.io",
        }
        m.gauge(
            "certmanager_certificate_expiration_timestamp_seconds",
            "The timestamp after which the certificate expires, expressed in Unix Epoch Time.",
            lab,
            grid,
            lambda t, v=na: int(v.timestamp()),
        )
    for name, ns_ in (
        ("token-service-tls", "identity"),
        ("api-gateway-tls", "edge"),
        ("account-portal-tls", "identity"),
    ):
        for cond, v in (("True", 1), ("False", 0)):
            m.gauge(
                "certmanager_certificate_ready_status",
                "The ready status of the certificate.",
                {
                    "name": name,
                    "namespace": ns_,
                    "condition": cond,
                    "issuer_name": "internal-ca",
                    "issuer_kind": "ClusterIssuer",
                    "issuer_group": "cert-manager.io",
                },
                grid,
                lambda t, v=v: v,
            )
    for inst, exp in (
        ("token-service.identity.svc:8443", old_after),
        ("account-portal.identity.svc:443", parse("2026-07-11T22:40:00Z")),
        ("api.corvid.io:443", parse("2026-09-02T04:00:00Z")),
    ):
        lab = {"instance": inst, "job": "blackbox-tls", "module": "tls_connect_insecure"}
        m.gauge(
            "probe_ssl_earliest_cert_expiry",
            "Returns last SSL chain expiry in unixtime",
            lab,
            grid,
            lambda t, e=exp: int(e.timestamp()),
        )
        m.gauge(
            "probe_success",
            "Displays whether or not the probe was a success",
            lab,
            grid,
            lambda t: 1,
        )

    def gw_rate(code: str):
        def f(t: dt.datetime) -> float:
            base = 140.0 if t.hour >= 8 else 95.0
            bad = t >= old_after
            return {
                "200": base * (0.08 if bad else 0.995),
                "500": base * (0.91 if bad else 0.001),
                "429": base * 0.004,
            }[code]

        return f

    for code in ("200", "429", "500"):
        m.counter(
            "http_requests",
            "Total HTTP requests.",
            {"namespace": "edge", "service": "api-gateway", "code": code},
            [t for t in grid if t >= gw_roll],
            gw_rate(code),
            start=0,
        )
    for pn, _ in ts_pods:
        m.counter(
            "token_service_introspections",
            "Token introspection requests handled.",
            {"namespace": "identity", "pod": pn},
            grid,
            lambda t: (60.0 if t.hour >= 8 else 41.0) if t < old_after else 0.0,
            start=31_882_000,
        )
    return sc


def _svc(ns, name, port, pname, ip, created):
    from ._kit import service

    return service(
        ns,
        name,
        selector={"app": name},
        ports=[(pname, port, port)],
        cluster_ip=ip,
        created=created,
    )


def _eps(ns, name, pods, port, pname, created):
    from ._kit import endpoints

    return endpoints(
        ns,
        name,
        ready=[(p["status"]["podIP"], p["metadata"]["name"], p["spec"]["nodeName"]) for p in pods],
        ports=[(pname, port)],
        created=created,
    )
