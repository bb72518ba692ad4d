"""1. certificate: settlement-worker's mTLS client certificate expired (cert-manager stopped
renewing its Secret); ledger-api, the server, logs the handshake failures and gets the blame."""

import json
from datetime import timedelta

from ._kit import (
    Family,
    Scenario,
    T,
    cm_vol,
    configmap,
    container,
    cumulate,
    endpoints,
    event,
    http_probe,
    iso,
    iso_ms,
    namespace,
    node,
    noise,
    pod_usage,
    restarts_metric,
    secret_vol,
    service,
    steps,
)

SID = "ledger-mtls-client-cert-expired"

NOW = T("2026-11-03T07:40:00Z")
EXPIRY = T("2026-11-03T05:58:17Z")


def build():
    sc = Scenario(
        SID,
        "Settlements stuck, ledger-api full of TLS handshake errors",
        NOW,
        (
            "settlements have been stuck since around 6am, payments team says ledger-api is "
            "refusing\n"
            'their calls. ledger-api logs are full of "TLS handshake error" lines. ledger shipped '
            "2.31.1\n"
            "yesterday afternoon, I bet its server cert or TLS config got broken in that release. "
            "can you confirm\n"
            "and tell me if we should roll ledger-api back?\n"
        ),
        {
            "category": "certificate",
            "culprit": {"kind": "Deployment", "namespace": "payments", "name": "settlement-worker"},
            "evidence": [
                "x509: certificate has expired or is not yet valid",
                "is after 2026-11-03T05:58:17Z",
                "settlement-worker-client-tls",
                "sslv3 alert bad certificate",
                "failed to initialise vault client for signing",
            ],
            "fix": "Renew settlement-worker's client certificate: fix the vault-payments Issuer's "
            "Vault "
            "role (403 permission denied) so cert-manager can re-issue the Secret "
            "settlement-worker-client-tls, then restart settlement-worker. ledger-api needs no "
            "rollback.",
        },
        seed=4501,
    )
    rng = sc.rng
    start = NOW - timedelta(hours=3)
    times = list(steps(start, NOW, 180))

    # -------------------------------------------------------- nodes, namespaces
    nodes = [
        ("ip-10-40-12-71.eu-west-1.compute.internal", "10.40.12.71", "eu-west-1a"),
        ("ip-10-40-13-148.eu-west-1.compute.internal", "10.40.13.148", "eu-west-1b"),
        ("ip-10-40-14-22.eu-west-1.compute.internal", "10.40.14.22", "eu-west-1c"),
    ]
    ncreated = T("2026-10-28T09:14:03Z")
    for n, ip, z in nodes:
        sc.add(
            node(
                n,
                ncreated,
                NOW,
                ip=ip,
                cpu=8,
                mem_gi=32,
                instance_type="m6i.2xlarge",
                zone=z,
                pool="general-2024b",
            )
        )
    nscreated = T("2025-03-11T10:02:00Z")
    for ns in ("payments", "ledger", "billing", "cert-manager", "monitoring"):
        sc.add(
            namespace(
                ns,
                nscreated,
                {
                    "quillmark.io/team": {
                        "payments": "payments",
                        "ledger": "ledger",
                        "billing": "billing",
                    }.get(ns, "platform")
                },
            )
        )

    def nd(i):
        return nodes[i % 3][0], nodes[i % 3][1]

    # -------------------------------------------------------- ledger-api (server)
    lcont = [
        container(
            "ledger-api",
            "registry.quillmark.io/ledger/ledger-api:2.31.1",
            cpu_req="500m",
            mem_req="512Mi",
            cpu_lim="2",
            mem_lim="1Gi",
            ports=[("https", 8443), ("metrics", 9090)],
            env=[
                ("LEDGER_TLS_CERT", "/etc/ledger/tls/tls.crt"),
                ("LEDGER_TLS_KEY", "/etc/ledger/tls/tls.key"),
                ("LEDGER_CLIENT_CA", "/etc/ledger/tls/ca.crt"),
                ("LEDGER_CLIENT_AUTH", "RequireAndVerifyClientCert"),
                ("LEDGER_DB_HOST", "ledger-db.cluster-cq81kzt0wx4e.eu-west-1.rds.amazonaws.com"),
            ],
            readiness=http_probe("/readyz", 9090),
            liveness=http_probe("/healthz", 9090, period=20),
            mounts=[{"name": "tls", "mountPath": "/etc/ledger/tls", "readOnly": True}],
        )
    ]
    lrs = T("2026-11-02T15:22:41Z")
    ledger = Family(
        sc,
        "ledger",
        "ledger-api",
        containers=lcont,
        replicas=3,
        placements=[
            (nd(i)[0], nd(i)[1], ip, lrs + timedelta(seconds=20 * i))
            for i, ip in enumerate(["10.40.12.104", "10.40.13.31", "10.40.14.187"])
        ],
        created=T("2025-03-12T08:00:00Z"),
        rs_created=lrs,
        revision=14,
        sa="ledger-api",
        volumes=[secret_vol("tls", "ledger-api-server-tls")],
        old=[
            (
                13,
                {"ledger-api": "registry.quillmark.io/ledger/ledger-api:2.31.0"},
                T("2026-10-27T10:05:12Z"),
            )
        ],
        ann={"kubernetes.io/change-cause": "ledger-api 2.31.1: journal export pagination fix"},
    )
    sc.add(
        service(
            "ledger-api",
            "ledger",
            created=T("2025-03-12T08:00:00Z"),
            selector={"app": "ledger-api"},
            ports=[("https", 8443, 8443), ("metrics", 9090, 9090)],
            cluster_ip="172.20.41.17",
        )
    )
    sc.add(
        endpoints(
            "ledger-api",
            "ledger",
            created=T("2025-03-12T08:00:00Z"),
            ready=[
                (p["status"]["podIP"], p["spec"]["nodeName"], p["metadata"]["name"])
                for p in ledger.pods
            ],
            ports=[("https", 8443), ("metrics", 9090)],
        )
    )

    # -------------------------------------------------------- settlement-worker (client, culprit)
    scont = [
        container(
            "settlement-worker",
            "registry.quillmark.io/payments/settlement-worker:5.4.0",
            cpu_req="250m",
            mem_req="384Mi",
            cpu_lim="1",
            mem_lim="768Mi",
            ports=[("metrics", 8000)],
            env=[
                ("LEDGER_URL", "https://ledger-api.ledger.svc.cluster.local:8443"),
                ("LEDGER_CLIENT_CERT", "/etc/ledger-client-tls/tls.crt"),
                ("LEDGER_CLIENT_KEY", "/etc/ledger-client-tls/tls.key"),
                ("LEDGER_CA_BUNDLE", "/etc/ledger-client-tls/ca.crt"),
                ("SETTLEMENT_BATCH_SIZE", "200"),
            ],
            readiness=http_probe("/health", 8000),
            mounts=[
                {
                    "name": "ledger-client-tls",
                    "mountPath": "/etc/ledger-client-tls",
                    "readOnly": True,
                },
                {"name": "config", "mountPath": "/app/config"},
            ],
        )
    ]
    src = T("2026-10-14T13:40:09Z")
    spc = T("2026-11-01T10:12:30Z")
    settle = Family(
        sc,
        "payments",
        "settlement-worker",
        containers=scont,
        replicas=2,
        placements=[
            (nd(1)[0], nd(1)[1], "10.40.13.92", spc),
            (nd(2)[0], nd(2)[1], "10.40.14.56", spc + timedelta(seconds=35)),
        ],
        created=T("2025-05-20T09:30:00Z"),
        rs_created=src,
        revision=22,
        sa="settlement-worker",
        volumes=[
            secret_vol("ledger-client-tls", "settlement-worker-client-tls"),
            cm_vol("config", "settlement-worker-config"),
        ],
        old=[
            (
                21,
                {"settlement-worker": "registry.quillmark.io/payments/settlement-worker:5.3.2"},
                T("2026-09-29T11:02:44Z"),
            )
        ],
    )
    sc.add(
        configmap(
            "settlement-worker-config",
            "payments",
            created=T("2025-05-20T09:30:00Z"),
            data={
                "settings.toml": (
                    "[ledger]\ntimeout_seconds = 10\nretries = 3\n\n[batch]\ninterval_seconds = "
                    "120\nmax_items = 200\n"
                )
            },
        )
    )
    # payments-api (healthy neighbour)
    pcont = [
        container(
            "payments-api",
            "registry.quillmark.io/payments/payments-api:3.18.4",
            cpu_req="500m",
            mem_req="512Mi",
            cpu_lim="2",
            mem_lim="1Gi",
            ports=[("http", 8080)],
            readiness=http_probe("/ready", 8080),
        )
    ]
    prs = T("2026-10-30T14:11:00Z")
    papi = Family(
        sc,
        "payments",
        "payments-api",
        containers=pcont,
        replicas=3,
        placements=[
            (nd(i)[0], nd(i)[1], ip, prs + timedelta(seconds=15 * i))
            for i, ip in enumerate(["10.40.12.33", "10.40.13.201", "10.40.14.90"])
        ],
        created=T("2025-03-12T08:00:00Z"),
        rs_created=prs,
        revision=57,
    )
    sc.add(
        service(
            "payments-api",
            "payments",
            created=T("2025-03-12T08:00:00Z"),
            selector={"app": "payments-api"},
            ports=[("http", 80, 8080)],
            cluster_ip="172.20.8.140",
        )
    )
    sc.add(
        endpoints(
            "payments-api",
            "payments",
            created=T("2025-03-12T08:00:00Z"),
            ready=[
                (p["status"]["podIP"], p["spec"]["nodeName"], p["metadata"]["name"])
                for p in papi.pods
            ],
            ports=[("http", 8080)],
        )
    )

    # -------------------------------------------------------- billing/invoice-sync (healthy client)
    icont = [
        container(
            "invoice-sync",
            "registry.quillmark.io/billing/invoice-sync:1.9.7",
            cpu_req="100m",
            mem_req="256Mi",
            cpu_lim="500m",
            mem_lim="512Mi",
            env=[("LEDGER_URL", "https://ledger-api.ledger.svc.cluster.local:8443")],
            mounts=[{"name": "ledger-client-tls", "mountPath": "/var/run/tls", "readOnly": True}],
        )
    ]
    irs = T("2026-10-08T08:45:10Z")
    inv = Family(
        sc,
        "billing",
        "invoice-sync",
        containers=icont,
        replicas=1,
        placements=[(nd(0)[0], nd(0)[1], "10.40.12.150", T("2026-10-28T09:22:10Z"))],
        created=T("2025-06-02T12:00:00Z"),
        rs_created=irs,
        revision=9,
        volumes=[secret_vol("ledger-client-tls", "invoice-sync-client-tls")],
    )

    # -------------------------------------------------------- cert-manager
    cmrs = T("2026-08-19T07:30:00Z")
    cm = Family(
        sc,
        "cert-manager",
        "cert-manager",
        containers=[
            container(
                "cert-manager-controller",
                "quay.io/jetstack/cert-manager-controller:v1.15.3",
                cpu_req="10m",
                mem_req="64Mi",
                ports=[("http-metrics", 9402)],
                args=[
                    "--v=2",
                    "--cluster-resource-namespace=$(POD_NAMESPACE)",
                    "--leader-election-namespace=kube-system",
                    "--max-concurrent-challenges=60",
                ],
            )
        ],
        replicas=1,
        placements=[(nd(0)[0], nd(0)[1], "10.40.12.9", T("2026-10-28T09:20:11Z"))],
        created=T("2025-03-11T10:05:00Z"),
        rs_created=cmrs,
        revision=6,
        sa="cert-manager",
        labels={
            "app.kubernetes.io/instance": "cert-manager",
            "app.kubernetes.io/component": "controller",
        },
    )
    for nm, img, ip in (
        ("cert-manager-webhook", "quay.io/jetstack/cert-manager-webhook:v1.15.3", "10.40.13.12"),
        (
            "cert-manager-cainjector",
            "quay.io/jetstack/cert-manager-cainjector:v1.15.3",
            "10.40.14.14",
        ),
    ):
        Family(
            sc,
            "cert-manager",
            nm,
            containers=[container(nm.split("-", 2)[-1], img, cpu_req="10m", mem_req="32Mi")],
            replicas=1,
            placements=[(nd(1)[0], nd(1)[1], ip, T("2026-10-28T09:20:40Z"))],
            created=T("2025-03-11T10:05:00Z"),
            rs_created=cmrs,
            revision=6,
            sa=nm,
        )

    # -------------------------------------------------------- monitoring
    bb = Family(
        sc,
        "monitoring",
        "blackbox-exporter",
        containers=[
            container(
                "blackbox-exporter",
                "quay.io/prometheus/blackbox-exporter:v0.25.0",
                cpu_req="25m",
                mem_req="32Mi",
                ports=[("http", 9115)],
                args=["--config.file=/config/blackbox.yaml"],
            )
        ],
        replicas=1,
        placements=[(nd(0)[0], nd(0)[1], "10.40.12.201", T("2026-10-28T09:21:00Z"))],
        created=T("2025-03-11T10:30:00Z"),
        rs_created=T("2025-11-04T10:00:00Z"),
        revision=3,
    )
    Family(
        sc,
        "monitoring",
        "kube-state-metrics",
        containers=[
            container(
                "kube-state-metrics",
                "registry.k8s.io/kube-state-metrics/kube-state-metrics:v2.13.0",
                cpu_req="50m",
                mem_req="128Mi",
                ports=[("http-metrics", 8080)],
            )
        ],
        replicas=1,
        placements=[(nd(2)[0], nd(2)[1], "10.40.14.8", T("2026-10-28T09:21:30Z"))],
        created=T("2025-03-11T10:30:00Z"),
        rs_created=T("2026-07-01T10:00:00Z"),
        revision=4,
    )
    # decoy: a Pending pod elsewhere
    adc = [
        container(
            "alert-digest",
            "registry.quillmark.io/platform/alert-digest:0.7.0",
            cpu_req="200m",
            mem_req="30Gi",
            mem_lim="30Gi",
        )
    ]
    ad_created = NOW - timedelta(minutes=52)
    ad = Family(
        sc,
        "monitoring",
        "alert-digest",
        containers=adc,
        replicas=1,
        placements=[(None, None, None, ad_created)],
        created=ad_created,
        rs_created=ad_created,
        revision=1,
        pod_overrides={0: {"phase": "Pending", "ready": False}},
    )
    adp = ad.pods[0]
    adp["status"]["conditions"] = [
        {
            "type": "PodScheduled",
            "status": "False",
            "lastProbeTime": None,
            "lastTransitionTime": iso(ad_created),
            "reason": "Unschedulable",
            "message": (
                "0/3 nodes are available: 3 Insufficient memory. preemption: 0/3 nodes are "
                "available: 3 No preemption victims found for incoming pod."
            ),
        }
    ]
    ad.deploy["status"]["conditions"][1].update(
        {"reason": "ReplicaSetUpdated", "message": f'ReplicaSet "{ad.rs_name}" is progressing.'}
    )
    sc.add(
        event(
            "monitoring",
            kind="Pod",
            name=adp["metadata"]["name"],
            reason="FailedScheduling",
            message=(
                "0/3 nodes are available: 3 Insufficient memory. preemption: 0/3 nodes are "
                "available: 3 No preemption victims found for incoming pod."
            ),
            first=ad_created,
            last=NOW - timedelta(minutes=3),
            count=11,
            type_="Warning",
            component="default-scheduler",
        )
    )

    # -------------------------------------------------------- events
    cr = "settlement-worker-client-tls-4"
    vault_err = (
        "error reading Kubernetes service account token from vault-issuer-token: error calling "
        "Vault server: "
        "Error making API request.\n\nURL: POST https://vault.quillmark.internal:8200/v1/auth/kubernetes/login\n"
        "Code: 403. Errors:\n\n* permission denied"
    )
    sc.add(
        event(
            "ledger",
            kind="Pod",
            name=ledger.pods[1]["metadata"]["name"],
            reason="Unhealthy",
            message=(
                'Readiness probe failed: Get "http://10.40.13.31:9090/readyz": context deadline '
                "exceeded (Client.Timeout exceeded while awaiting headers)"
            ),
            first=NOW - timedelta(minutes=33),
            last=NOW - timedelta(minutes=33),
            type_="Warning",
            host=nodes[1][0],
            field_path="spec.containers{ledger-api}",
        )
    )

    # -------------------------------------------------------- logs
    def lg(t, fam_pod, svc, level, msg, container_=None, **kw):
        p = fam_pod
        sc.log(
            t,
            ns=p["metadata"]["namespace"],
            pod=p["metadata"]["name"],
            container=container_ or p["spec"]["containers"][0]["name"],
            service=svc,
            level=level,
            message=msg,
            **kw,
        )

    ledger_lines = {p["metadata"]["name"]: [] for p in ledger.pods}
    settle_lines = {p["metadata"]["name"]: [] for p in settle.pods}

    def ledger_log(t, p, level, msg, **kw):
        lg(t, p, "ledger-api", level, msg, **kw)
        ledger_lines[p["metadata"]["name"]].append(
            json.dumps({"time": iso_ms(t), "level": level.upper(), "msg": msg})
        )

    def settle_log(t, p, level, msg, **kw):
        lg(t, p, "settlement-worker", level, msg, **kw)
        settle_lines[p["metadata"]["name"]].append(
            f"{t.strftime('%Y-%m-%d %H:%M:%S')},{t.microsecond // 1000:03d} {level.upper():<7} "
            f"settlement_worker {msg}"
        )

    for i, p in enumerate(ledger.pods):
        st = lrs + timedelta(seconds=20 * i + 5)
        ledger_lines[p["metadata"]["name"]] += [
            json.dumps(
                {
                    "time": iso_ms(st),
                    "level": "INFO",
                    "msg": "ledger-api starting",
                    "version": "2.31.1",
                    "go": "go1.23.2",
                }
            ),
            json.dumps(
                {
                    "time": iso_ms(st + timedelta(milliseconds=40)),
                    "level": "INFO",
                    "msg": "loaded server certificate",
                    "subject": "CN=ledger-api.ledger.svc",
                    "not_after": "2026-12-18T03:11:09Z",
                }
            ),
            json.dumps(
                {
                    "time": iso_ms(st + timedelta(milliseconds=45)),
                    "level": "INFO",
                    "msg": "client auth enabled",
                    "mode": "RequireAndVerifyClientCert",
                    "client_ca": "CN=Quillmark Internal Services CA",
                }
            ),
            json.dumps(
                {
                    "time": iso_ms(st + timedelta(milliseconds=310)),
                    "level": "INFO",
                    "msg": "listening",
                    "addr": ":8443",
                }
            ),
        ]
    settle_ips = [p["status"]["podIP"] for p in settle.pods]
    bb_ip = bb.pods[0]["status"]["podIP"]
    inv_ip = inv.pods[0]["status"]["podIP"]
    batch = 88110
    for t in steps(start, NOW, 120):
        # invoice-sync calls keep succeeding
        lp = ledger.pods[rng.randrange(3)]
        if rng.random() < 0.7:
            ledger_log(
                t + timedelta(seconds=rng.uniform(0, 50)),
                lp,
                "info",
                "request completed",
                http__request__method="GET",
                url__path="/v1/accounts/balances",
                http__response__status_code=200,
                source__ip=inv_ip,
                client__subject="CN=invoice-sync.billing.svc",
            )
        # blackbox probe without client certificate: constant noise for weeks
        bp = ledger.pods[int(t.timestamp() // 60) % 3]
        ledger_log(
            t + timedelta(seconds=12.4),
            bp,
            "error",
            f"http: TLS handshake error from {bb_ip}:{40000 + rng.randrange(20000)}: tls: client "
            "didn't provide a certificate",
        )
        # settlement batches
        for k, sp in enumerate(settle.pods):
            tt = t + timedelta(seconds=20 + 17 * k + rng.uniform(0, 3))
            if tt > NOW:
                continue
            batch += 1
            if tt < EXPIRY:
                n = rng.randint(120, 200)
                settle_log(
                    tt,
                    sp,
                    "info",
                    f"settlement batch {batch} posted to ledger: {n} entries, "
                    f"{rng.randint(80, 240)}ms",
                )
                ledger_log(
                    tt + timedelta(milliseconds=90),
                    ledger.pods[rng.randrange(3)],
                    "info",
                    "request completed",
                    http__request__method="POST",
                    url__path="/v1/journal/entries",
                    http__response__status_code=201,
                    source__ip=settle_ips[k],
                    client__subject="CN=settlement-worker.payments.svc",
                )
            else:
                for attempt in (1, 2, 3):
                    ta = tt + timedelta(seconds=2 * (attempt - 1))
                    lp = ledger.pods[rng.randrange(3)]
                    ledger_log(
                        ta,
                        lp,
                        "error",
                        f"http: TLS handshake error from {settle_ips[k]}:"
                        f"{32768 + rng.randrange(28000)}: tls: failed to verify certificate: "
                        "x509: certificate has expired or is not yet valid: current time "
                        f"{iso(ta)} is after 2026-11-03T05:58:17Z",
                    )
                    settle_log(
                        ta + timedelta(milliseconds=4),
                        sp,
                        "warning",
                        f"ledger POST /v1/journal/entries attempt {attempt}/3 failed: "
                        "httpx.ConnectError: "
                        "[SSL: SSLV3_ALERT_BAD_CERTIFICATE] sslv3 alert bad certificate "
                        "(_ssl.c:2580)",
                    )
                settle_log(
                    tt + timedelta(seconds=4, milliseconds=30),
                    sp,
                    "error",
                    f"settlement batch {batch} failed after 3 attempts, re-queued (pending "
                    f"batches: {int((tt - EXPIRY).total_seconds() // 120) + 1})",
                    error__type="httpx.ConnectError",
                )
    # settlement-worker startup lines (pods started two days ago) go in pod logs only
    for k, sp in enumerate(settle.pods):
        t0 = spc + timedelta(seconds=35 * k + 4)
        head = [
            (
                f"{t0.strftime('%Y-%m-%d %H:%M:%S')},118 INFO    settlement_worker starting "
                "settlement-worker 5.4.0 (python 3.12.7, httpx 0.27.2)"
            ),
            f"{t0.strftime('%Y-%m-%d %H:%M:%S')},240 INFO    settlement_worker ledger client: "
            "https://ledger-api.ledger.svc.cluster.local:8443 "
            "client cert /etc/ledger-client-tls/tls.crt (subject "
            "CN=settlement-worker.payments.svc, not after 2026-11-03T05:58:17Z)",
            (
                f"{t0.strftime('%Y-%m-%d %H:%M:%S')},251 INFO    settlement_worker polling "
                "settlement queue every 120s"
            ),
        ]
        settle_lines[sp["metadata"]["name"]] = head + settle_lines[sp["metadata"]["name"]]
    # cert-manager: the renewal has been failing for a month
    cmp = cm.pods[0]
    t = start + timedelta(minutes=3)
    while t < NOW:
        lg(
            t,
            cmp,
            "cert-manager",
            "error",
            "E1103 "
            + t.strftime("%H:%M:%S")
            + '.402118       1 controller.go:157] "re-queuing item due to error processing" '
            f'err="failed to initialise vault client for signing: {vault_err}" '
            f'logger="cert-manager.controller" key="payments/{cr}"',
        )
        lg(
            t + timedelta(seconds=1),
            cmp,
            "cert-manager",
            "info",
            "I1103 "
            + (t + timedelta(seconds=1)).strftime("%H:%M:%S")
            + '.021933       1 conditions.go:263] "Setting lastTransitionTime for '
            'CertificateRequest condition" '
            f'logger="cert-manager.controller" resource_name="{cr}" resource_namespace="payments" '
            'resource_kind="CertificateRequest" condition="Ready" reason="Pending"',
        )
        t += timedelta(minutes=5)
    for name, lines in ledger_lines.items():
        sc.pod_log("ledger", name, "ledger-api", lines[:4] + lines[-300:])
    for name, lines in settle_lines.items():
        sc.pod_log("payments", name, "settlement-worker", lines[:3] + lines[-250:])

    # -------------------------------------------------------- metrics
    cm_lab = {"issuer_group": "cert-manager.io", "issuer_kind": "Issuer"}
    certs = [
        ("payments", "settlement-worker-client-tls", "vault-payments", EXPIRY, False),
        ("billing", "invoice-sync-client-tls", "vault-billing", T("2027-01-02T08:41:55Z"), True),
        ("ledger", "ledger-api-server-tls", "vault-ledger", T("2026-12-18T03:11:09Z"), True),
        ("payments", "payments-api-tls", "vault-payments-public", T("2027-01-20T12:00:31Z"), True),
    ]
    for ns, name, iss, exp, _ok in certs:
        lab = {"name": name, "namespace": ns, "issuer_name": iss, **cm_lab}
        sc.metrics.gauge(
            "certmanager_certificate_expiration_timestamp_seconds",
            "The date after which the certificate expires. Expressed as a Unix Epoch Time.",
            lab,
            [(t, int(exp.timestamp())) for t in times],
        )
    for ns, name, iss, _exp, ok in certs:
        for cond in ("True", "False"):

            def v(t, cond=cond, ok=ok):
                ready = ok or t < EXPIRY
                return 1 if (cond == "True") == ready and cond != "Unknown" else 0

            sc.metrics.gauge(
                "certmanager_certificate_ready_status",
                "The ready status of the certificate.",
                {"name": name, "namespace": ns, "condition": cond, "issuer_name": iss, **cm_lab},
                [(t, v(t)) for t in times],
            )
    sc.metrics.counter(
        "certmanager_controller_sync_call_count",
        "The number of sync() calls made by a controller.",
        {"controller": "certificaterequests-issuer-vault"},
        cumulate(times, step=120, f=lambda t: 1 / 300, start_value=118220),
    )
    # settlement batches
    for k, sp in enumerate(settle.pods):
        lab = {"namespace": "payments", "pod": sp["metadata"]["name"], "job": "settlement-worker"}
        sc.metrics.counter(
            "settlement_batches",
            "Settlement batches processed, by result.",
            dict(lab, result="posted"),
            cumulate(
                times, step=120, f=lambda t: 1 / 120 if t < EXPIRY else 0, start_value=2790 + k * 13
            ),
        )
        sc.metrics.counter(
            "settlement_batches",
            "Settlement batches processed, by result.",
            dict(lab, result="failed"),
            cumulate(times, step=120, f=lambda t: 1 / 120 if t >= EXPIRY else 0, start_value=3),
        )
        sc.metrics.gauge(
            "settlement_pending_batches",
            "Batches waiting to be posted to the ledger.",
            lab,
            [(t, 0 if t < EXPIRY else int((t - EXPIRY).total_seconds() // 120) + 1) for t in times],
        )
    # ledger-api http, by client: invoice-sync stays flat, settlement-worker disappears at the
    # expiry
    for p in ledger.pods:
        base = {"namespace": "ledger", "pod": p["metadata"]["name"], "job": "ledger-api"}
        sc.metrics.counter(
            "http_requests",
            "Total HTTP requests handled.",
            dict(base, handler="/v1/journal/entries", method="POST", code="201"),
            cumulate(times, step=120, f=lambda t: 0.0056 if t < EXPIRY else 0, start_value=41877),
        )
        sc.metrics.counter(
            "http_requests",
            "Total HTTP requests handled.",
            dict(base, handler="/v1/accounts/balances", method="GET", code="200"),
            cumulate(times, step=120, f=lambda t: noise(rng, 0.24), start_value=903311),
        )
        sc.metrics.counter(
            "http_requests",
            "Total HTTP requests handled.",
            dict(base, handler="/v1/accounts/balances", method="GET", code="500"),
            cumulate(times, step=120, f=lambda t: 0.0004, start_value=211),
        )
    for p in ledger.pods:
        pod_usage(
            sc,
            p,
            "ledger-api",
            times,
            lambda t: noise(rng, 0.21),
            lambda t: noise(rng, 3.1e8, 0.03),
        )
    for p in settle.pods:
        pod_usage(
            sc,
            p,
            "settlement-worker",
            times,
            lambda t: noise(rng, 0.06),
            lambda t: noise(rng, 2.2e8, 0.03),
        )
    for p in ledger.pods + settle.pods:
        restarts_metric(sc, p, p["spec"]["containers"][0]["name"], times)
    return sc
