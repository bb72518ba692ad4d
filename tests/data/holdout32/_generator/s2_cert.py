# ruff: noqa: E501  (verbatim log lines and Kubernetes messages are kept whole)
"""Scenario 2: authz now answers behind the new Service name `policy`, but its serving
certificate still lists only the authz names.

The platform team published the new name and pointed the callers' service directory at
it (hot-reloaded, no rollout). Every caller fails TLS verification; authz itself is
healthy and only logs handshake errors from its callers.
"""

from __future__ import annotations

import datetime as dt

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from .k8s import Clock, Obj, configmap, event, hpa, namespace, node, service
from .out import Metrics, ecs, healthy_app, pods_of, write

SID = "billing-503-invoices"
NOW = "2026-11-26T09:15:00Z"
OLD_NAMES = "authz, authz.access, authz.access.svc, authz.access.svc.cluster.local"
NEW_HOST = "policy.access.svc.cluster.local"


def _ca_pem(clock: Clock) -> str:
    """A real CA certificate (valid, not near expiry): the trust bundle is not the problem."""
    key = ec.derive_private_key(0x51A1C0FFEE2026, ec.SECP256R1())  # fixed: reproducible output
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Quillmark"),
            x509.NameAttribute(NameOID.COMMON_NAME, "Quillmark Internal Services CA R2"),
        ]
    )
    start = clock.now - dt.timedelta(days=212)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(0x5A1C0FFEE)
        .not_valid_before(start)
        .not_valid_after(start + dt.timedelta(days=1825))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .sign(key, hashes.SHA256(), ecdsa_deterministic=True)
    )
    return cert.public_bytes(serialization.Encoding.PEM).decode()


def build() -> None:
    c = Clock(NOW)
    nodes = [
        f"gke-quill-prod-pool-2-{s}"
        for s in ("7f3a1c2d-0k4m", "7f3a1c2d-7x9q", "9b81e4f0-2wzn", "9b81e4f0-h5lt", "c04d77aa-m8rd")
    ]
    zones = ["europe-west4-a", "europe-west4-a", "europe-west4-b", "europe-west4-b", "europe-west4-c"]
    objs: list[Obj] = [namespace(n, c.at(60 * 24 * 500)) for n in ("access", "billing", "integrations")]
    objs += [
        node(c, n, z, "pool-2", region="europe-west4", instance="n2-standard-4", kubelet="v1.30.5-gke.1443001")
        for n, z in zip(nodes, zones, strict=False)
    ]
    cert_env = [
        {"name": "TLS_CERT_FILE", "value": "/etc/authz/tls/tls.crt"},
        {"name": "TLS_KEY_FILE", "value": "/etc/authz/tls/tls.key"},
        {"name": "LISTEN", "value": ":8443"},
    ]
    authz = healthy_app(
        c,
        "access",
        "authz",
        "europe-docker.pkg.dev/quillmark/prod/authz:3.11.2",
        replicas=3,
        nodes=nodes,
        ip_prefix="10.44.1",
        cluster_ip="10.52.7.19",
        port=8443,
        svc_port=8443,
        rollout_min=60 * 24 * 4,
        env=cert_env,
        probe_path="/healthz",
        cpu="300m",
    )
    for o in authz:
        if o["kind"] in ("Deployment", "ReplicaSet"):
            tspec = o["spec"]["template"]["spec"]
        elif o["kind"] == "Pod":
            tspec = o["spec"]
        else:
            continue
        tspec["volumes"] = [{"name": "tls", "secret": {"secretName": "authz-serving-tls", "defaultMode": 420}}]
        tspec["containers"][0]["volumeMounts"] = [{"name": "tls", "mountPath": "/etc/authz/tls", "readOnly": True}]
        for probe in ("readinessProbe", "livenessProbe"):
            tspec["containers"][0][probe]["httpGet"]["scheme"] = "HTTPS"
    objs += authz
    authz_pods = [p["metadata"]["name"] for p in pods_of(authz, "authz-")]
    authz_eps = next(o for o in authz if o["kind"] == "Endpoints")
    policy = service(
        c,
        "access",
        "policy",
        {"app": "authz"},
        port=8443,
        target="http",
        cluster_ip="10.52.9.240",
        created_days=1.1,
        annotations={"platform.quillmark.io/ticket": "PLAT-2231", "platform.quillmark.io/replaces": "authz.access.svc"},
    )
    objs.append(policy)
    objs.append(
        {
            **authz_eps,
            "metadata": {**authz_eps["metadata"], "name": "policy", "uid": "e1b5c0de-7a44-4f0e-9c1d-policy000001"},
        }
    )
    objs.append(
        configmap(c, "access", "authz-policies", {"policies.rego.version": "2026-11-20.3"}, created_min=60 * 24 * 6)
    )

    callers = []
    for ns, name, img, n in (
        ("billing", "billing-api", "europe-docker.pkg.dev/quillmark/prod/billing-api:7.4.0", 4),
        ("billing", "invoice-renderer", "europe-docker.pkg.dev/quillmark/prod/invoice-renderer:2.2.9", 2),
        ("integrations", "webhooks-dispatcher", "europe-docker.pkg.dev/quillmark/prod/webhooks-dispatcher:1.18.1", 2),
    ):
        env = [{"name": "SERVICE_DIRECTORY", "value": "/etc/quill/directory/services.yaml"}]
        app = healthy_app(
            c,
            ns,
            name,
            img,
            replicas=n,
            nodes=nodes[::-1],
            ip_prefix="10.44.3" if ns == "billing" else "10.44.5",
            cluster_ip=f"10.52.{11 if ns == 'billing' else 14}.{len(name) * 7}",
            rollout_min=60 * 24 * (2 + n),
            env=env,
            probe_path="/livez",
        )
        _mount_directory(app)
        objs += app
        callers.append((ns, name, [p["metadata"]["name"] for p in pods_of(objs, name + "-")]))
    objs += healthy_app(
        c,
        "billing",
        "billing-worker",
        "europe-docker.pkg.dev/quillmark/prod/billing-worker:7.4.0",
        replicas=2,
        nodes=nodes,
        ip_prefix="10.44.3",
        cluster_ip="10.52.11.200",
        with_service=False,
    )
    directory = (
        "services:\n  authz: https://" + NEW_HOST + ":8443\n  ledger: http://ledger.billing.svc:8080\n"
        "  mailer: http://mailer.integrations.svc:8080\n"
    )
    for ns in ("billing", "integrations"):
        objs.append(
            configmap(
                c,
                ns,
                "service-directory",
                {"services.yaml": directory},
                created_min=60 * 24 * 90,
                labels={"platform.quillmark.io/managed-by": "svc-directory-sync"},
                annotations={
                    "platform.quillmark.io/synced-at": c.at(17.5),
                    "platform.quillmark.io/change": "PLAT-2231 authz -> policy",
                },
            )
        )
    objs.append(configmap(c, "billing", "internal-ca", {"ca.crt": _ca_pem(c)}, created_min=60 * 24 * 200))
    objs.append(
        hpa(
            c,
            "billing",
            "billing-api",
            min_r=3,
            max_r=12,
            current=4,
            desired=4,
            cpu_target=70,
            cpu_now=38,
            last_scale_min=52,
        )
    )
    objs += [
        event(
            c,
            "billing",
            "HorizontalPodAutoscaler",
            "billing-api",
            "SuccessfulRescale",
            "New size: 4; reason: cpu resource utilization (percentage of request) below target",
            first_min=52,
            last_min=52,
            component="horizontal-pod-autoscaler",
            api_version="autoscaling/v2",
        ),
        event(
            c,
            "integrations",
            "Pod",
            callers[2][2][0],
            "Unhealthy",
            'Readiness probe failed: Get "http://10.44.5.73:8080/livez": context deadline exceeded '
            "(Client.Timeout exceeded while awaiting headers)",
            first_min=48,
            last_min=48,
            type_="Warning",
            host=nodes[1],
            field_path="spec.containers{webhooks-dispatcher}",
        ),
    ]

    logs = []
    switch = 17.3
    for m10 in range(900, 0, -1):
        m = m10 / 10
        ns, name, pods = callers[m10 % 3]
        p = pods[m10 % len(pods)]
        if m > switch:
            if name == "billing-api":
                logs.append(
                    ecs(
                        c,
                        m,
                        f"GET /api/v2/invoices/INV-{40000 + m10} 200",
                        "INFO",
                        name,
                        ns,
                        p,
                        name,
                        **{"http.response.status_code": 200},
                    )
                )
            elif m10 % 5 == 0:
                logs.append(ecs(c, m, f"delivered webhook evt_{m10:05d} to endpoint", "info", name, ns, p, name))
        else:
            if name == "billing-api":
                logs.append(
                    ecs(
                        c,
                        m,
                        "authz check failed: requests.exceptions.SSLError: HTTPSConnectionPool("
                        f"host='{NEW_HOST}', port=8443): Max retries exceeded with url: /v1/check (Caused by "
                        'SSLError(SSLCertVerificationError(1, "[SSL: CERTIFICATE_VERIFY_FAILED] certificate '
                        f"verify failed: Hostname mismatch, certificate is not valid for '{NEW_HOST}'. "
                        '(_ssl.c:1006)")))',
                        "ERROR",
                        name,
                        ns,
                        p,
                        name,
                        **{"error.type": "SSLError"},
                    )
                )
                logs.append(
                    ecs(
                        c,
                        m - 0.01,
                        f"GET /api/v2/invoices/INV-{40000 + m10} 503",
                        "WARNING",
                        name,
                        ns,
                        p,
                        name,
                        **{"http.response.status_code": 503},
                    )
                )
            else:
                logs.append(
                    ecs(
                        c,
                        m,
                        f'authz: Post "https://{NEW_HOST}:8443/v1/check": tls: failed to verify '
                        f"certificate: x509: certificate is valid for {OLD_NAMES}, not {NEW_HOST}",
                        "error",
                        name,
                        ns,
                        p,
                        name,
                        **{"error.type": "*tls.CertificateVerificationError"},
                    )
                )
            ap = authz_pods[m10 % 3]
            logs.append(
                ecs(
                    c,
                    m - 0.002,
                    f"http: TLS handshake error from 10.44.{3 if ns == 'billing' else 5}."
                    f"{(m10 * 7) % 200 + 20}:{40000 + (m10 * 131) % 20000}: remote error: tls: bad certificate",
                    "warn",
                    "authz",
                    "access",
                    ap,
                    "authz",
                )
            )
        if m10 % 40 == 0:
            logs.append(
                ecs(
                    c,
                    m,
                    "decision cache hit ratio 0.97, p99 3.1ms",
                    "info",
                    "authz",
                    "access",
                    authz_pods[m10 % 3],
                    "authz",
                )
            )
    for ns, name, pods in callers:
        for p in pods:
            logs.append(
                ecs(
                    c,
                    switch + 0.2,
                    "service directory reloaded (3 entries, changed: authz)",
                    "INFO" if name == "billing-api" else "info",
                    name,
                    ns,
                    p,
                    name,
                )
            )
    pod_logs = {
        ("access", p, "authz", False): [
            f"{c.at(60 * 24 * 4 - 1.2)} INFO authz 3.11.2 listening on :8443 (tls cert /etc/authz/tls/tls.crt)",
            f"{c.at(60 * 24 * 4 - 1.1)} INFO loaded 214 policies (2026-11-20.3)",
            *[
                f"{c.at(switch - k * 0.7)} WARN http: TLS handshake error from 10.44.3.{41 + k}:{51000 + k * 17}: remote "
                f"error: tls: bad certificate"
                for k in range(12)
            ],
        ]
        for p in authz_pods
    }
    metrics = Metrics(c)
    for k, p in enumerate(authz_pods):
        metrics.series(
            "http_requests",
            "counter",
            {"namespace": "access", "pod": p, "service": "authz", "code": "200"},
            [
                (m, sum(40 if mm > switch else 3 for mm in range(90, m - 1, -1)) * 60 + k * 900)
                for m in range(90, -1, -1)
            ],
        )
    for p in callers[0][2]:
        for code in ("200", "503"):
            metrics.series(
                "http_requests",
                "counter",
                {"namespace": "billing", "pod": p, "service": "billing-api", "code": code},
                [
                    (
                        m,
                        sum(
                            (22 if mm > switch else 2) if code == "200" else (0 if mm > switch else 20)
                            for mm in range(90, m - 1, -1)
                        )
                        * 60,
                    )
                    for m in range(90, -1, -1)
                ],
            )
    scenario = {
        "id": SID,
        "title": "Invoice pages return 503 since the morning",
        "now": NOW,
        "report": """
            billing-api is throwing 503s on the invoice pages since about 9, customers are noticing.
            nothing was deployed in billing today afaik. authz dashboards are green. network/mesh issue?
        """.replace("            ", ""),
        "interventions": [
            {"after_step": 2, "text": "authz team says their pods are healthy and their last deploy was on Sunday"}
        ],
        "truth": {
            "category": "certificate",
            "culprit": {"kind": "Deployment", "namespace": "access", "name": "authz"},
            "evidence": [
                f"x509: certificate is valid for {OLD_NAMES}, not {NEW_HOST}",
                "remote error: tls: bad certificate",
            ],
            "fix": "Reissue authz's serving certificate (authz-serving-tls) with the new names "
            "policy.access.svc(.cluster.local) as SANs; until then point the service directory "
            "back at authz.access.svc.",
        },
    }
    write(SID, scenario, objs, pod_logs=pod_logs, logs=logs, metrics=metrics)


def _mount_directory(objs: list[Obj]) -> None:
    """The callers read the service directory from a ConfigMap volume (hot-reloaded)."""
    for o in objs:
        spec = o["spec"] if o["kind"] == "Pod" else o.get("spec", {}).get("template", {}).get("spec")
        if not spec:
            continue
        spec["volumes"] = [{"name": "directory", "configMap": {"name": "service-directory", "defaultMode": 420}}]
        spec["containers"][0]["volumeMounts"] = [
            {"name": "directory", "mountPath": "/etc/quill/directory", "readOnly": True}
        ]
