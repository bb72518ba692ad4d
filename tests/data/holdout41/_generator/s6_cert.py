"""Shape 6: cert-manager could not renew member-registry's serving certificate for a month
(its Certificate points at an Issuer that was replaced by a ClusterIssuer); the certificate
expired at 01:12 tonight. member-registry still runs and answers its probes over plain
HTTP; its TLS callers fail with "certificate has expired"."""

from __future__ import annotations

from .fleet import counter, healthy, series
from .kit import Clock, Scenario, event, namespace, node

NOW = "2026-11-30T03:41:00Z"
EXPIRED = 149  # minutes ago the certificate's notAfter passed (01:12:00Z)


def build() -> Scenario:
    c = Clock(NOW)
    not_after = c.at(EXPIRED).strftime("%Y-%m-%dT%H:%M:%SZ")
    sc = Scenario(
        "claims-eligibility-failing",
        "Claims adjudication failing on member eligibility lookups",
        NOW,
        "claims-adjudicator is throwing handshake errors on every eligibility lookup since "
        "around 1am, "
        "claims are piling up in the retry queue. benefits-portal members also can't see their "
        "plan. "
        "did the network team change something on the mesh again?\n",
        {
            "category": "certificate",
            "culprit": {"kind": "Deployment", "namespace": "members", "name": "member-registry"},
            "evidence": [
                "certificate has expired",
                not_after,
                'issuer.cert-manager.io "members-ca" not found',
            ],
            "fix": "Point member-registry's Certificate at the existing ClusterIssuer "
            "(members-ca-cluster), "
            "let cert-manager reissue member-registry-tls and restart member-registry to load it",
        },
    )
    nodes = [
        (f"gke-nimbus-prod-default-{suffix}", f"10.20.0.{n}")
        for suffix, n in (("7a1c2f3e-0kq1", 5), ("7a1c2f3e-j2hx", 6), ("9f0b11aa-w8mt", 7))
    ]
    for ns in ("members", "claims", "portal", "cert-manager"):
        sc.objects.append(namespace(ns, c.ago(650 * 1440)))
    sc.objects += [
        node(
            n,
            c.ago(50 * 1440),
            c.ago(0.3),
            ip=ip,
            zone="us-central1-" + "abf"[i],
            cpu="8",
            memory="32Gi",
            kubelet="v1.30.5-gke.1014001",
            transition=c.ago(4 * 1440),
        )
        for i, (n, ip) in enumerate(nodes)
    ]
    reg = healthy(
        sc,
        c,
        "members",
        "member-registry",
        "us-docker.pkg.dev/nimbus-health/prod/member-registry:6.2.3",
        replicas=3,
        nodes=nodes,
        port=8443,
        revision=17,
        rollout_hours=5 * 24 + 3,
        cluster_ip="10.12.4.18",
        ip_base="10.8.1",
        requests={"cpu": "300m", "memory": "512Mi"},
        limits={"memory": "768Mi"},
    )
    spec = reg.dep["spec"]["template"]["spec"]
    spec["volumes"] = [{"name": "tls", "secret": {"secretName": "member-registry-tls"}}]
    cont = spec["containers"][0]
    cont["volumeMounts"] = [{"name": "tls", "mountPath": "/etc/tls", "readOnly": True}]
    cont["ports"] = [
        {"name": "https", "containerPort": 8443, "protocol": "TCP"},
        {"name": "admin", "containerPort": 9090, "protocol": "TCP"},
    ]
    cont["readinessProbe"]["httpGet"]["port"] = 9090
    cont["livenessProbe"]["httpGet"]["port"] = 9090
    cont["env"] = [
        {"name": "TLS_CERT_FILE", "value": "/etc/tls/tls.crt"},
        {"name": "TLS_KEY_FILE", "value": "/etc/tls/tls.key"},
    ]
    for p in reg.pods:
        p["spec"] = {**p["spec"], "volumes": spec["volumes"], "containers": [cont]}
    reg.rs["spec"]["template"]["spec"] = {
        **reg.rs["spec"]["template"]["spec"],
        "volumes": spec["volumes"],
        "containers": [cont],
    }
    adj = healthy(
        sc,
        c,
        "claims",
        "claims-adjudicator",
        "us-docker.pkg.dev/nimbus-health/prod/claims-adjudicator:11.0.4",
        replicas=3,
        nodes=nodes,
        port=8080,
        cluster_ip="10.12.7.3",
        ip_base="10.8.2",
        requests={"cpu": "1", "memory": "2Gi"},
        limits={"memory": "3Gi"},
        probe="/actuator/health",
    )
    portal = healthy(
        sc,
        c,
        "portal",
        "benefits-portal",
        "us-docker.pkg.dev/nimbus-health/prod/benefits-portal:2.19.0",
        replicas=2,
        nodes=nodes,
        port=8080,
        cluster_ip="10.12.9.30",
        ip_base="10.8.3",
    )
    cm = healthy(
        sc,
        c,
        "cert-manager",
        "cert-manager",
        "quay.io/jetstack/cert-manager-controller:v1.15.3",
        replicas=1,
        nodes=nodes,
        port=9402,
        cluster_ip="10.12.0.90",
        ip_base="10.8.4",
        probe="/livez",
        rollout_hours=6 * 24,
    )
    healthy(
        sc,
        c,
        "cert-manager",
        "cert-manager-webhook",
        "quay.io/jetstack/cert-manager-webhook:v1.15.3",
        replicas=1,
        nodes=nodes,
        port=10250,
        cluster_ip="10.12.0.91",
        ip_base="10.8.5",
        probe="/healthz",
        rollout_hours=6 * 24,
    )
    sc.objects.append(
        event(
            "claims",
            "Pod",
            adj.names[1],
            "Unhealthy",
            "Readiness probe failed: HTTP probe failed with statuscode: 503",
            first=c.ago(49),
            last=c.ago(47),
            count=2,
            type_="Warning",
            host=nodes[1][0],
        )
    )
    # cert-manager's controller log (klog style), retrying with backoff for weeks
    cml = []
    for h in range(0, 6 * 24, 5):
        m = h * 60 + 17
        cml.append(
            f"E11{c.at(m).strftime('%d %H:%M:%S')}.{311000 + h:06d}       1 controller.go:162] "
            f'"re-queuing item '
            'due to error processing" err="issuer.cert-manager.io \\"members-ca\\" not found" '
            'logger="cert-manager.controller" key="members/member-registry-tls-1"'
        )
        sc.doc(
            c.ms(m),
            "error",
            "cert-manager",
            "cert-manager",
            cm.names[0],
            "app",
            're-queuing item due to error processing: issuer.cert-manager.io "members-ca" not '
            "found",
            **{"labels.key": "members/member-registry-tls-1"},
        )
    for h in range(0, 6 * 24, 7):
        m = h * 60 + 3
        sc.doc(
            c.ms(m),
            "info",
            "cert-manager",
            "cert-manager",
            cm.names[0],
            "app",
            'Certificate "portal/benefits-portal-tls" is up to date and has no issues',
        )
    sc.log("cert-manager", cm.names[0], "app", list(reversed(cml)))
    # the server: up, serving, with handshakes failing on the callers' side
    sl = [
        f'{c.ms(5 * 1440 + 178)} level=INFO msg="loaded TLS certificate" file=/etc/tls/tls.crt '
        f'subject="CN=member-registry.members.svc" not_after={not_after}',
        f'{c.ms(5 * 1440 + 177)} level=INFO msg="listening" https=:8443 admin=:9090',
    ]
    for k in range(200, 0, -1):
        if k > EXPIRED:
            sl.append(
                f'{c.ms(k)} level=INFO msg="request" method=POST path=/v3/eligibility status=200 '
                f"ms={9 + k % 7}"
            )
        else:
            sl.append(
                f'{c.ms(k)} level=INFO msg="http: TLS handshake error from '
                f"10.8.2.{20 + (k % 3) * 7}:{40000 + k * 13}: "
                'remote error: tls: bad certificate"'
            )
    for p in reg.pods:
        sc.log("members", p["metadata"]["name"], "app", sl)
    for _i, pn in enumerate(adj.names):
        lines = []
        for k in range(EXPIRED + 20, 0, -2):
            if k > EXPIRED:
                lines.append(
                    f"{c.ms(k)} INFO  [claims-worker-{k % 6}] c.n.claims.EligibilityClient : "
                    f"eligibility ok "
                    f"member=M{40020000 + k}"
                )
                continue
            lines.append(
                f"{c.ms(k)} ERROR [claims-worker-{k % 6}] c.n.claims.EligibilityClient : "
                f"eligibility lookup "
                "failed: javax.net.ssl.SSLHandshakeException: PKIX path validation failed: "
                "java.security.cert.CertPathValidatorException: validity check failed"
            )
            lines.append(
                "Caused by: java.security.cert.CertificateExpiredException: NotAfter: "
                f"{c.at(EXPIRED).strftime('%a %b %d %H:%M:%S UTC %Y')}"
            )
            sc.doc(
                c.ms(k),
                "error",
                "claims-adjudicator",
                "claims",
                pn,
                "app",
                "eligibility lookup failed: javax.net.ssl.SSLHandshakeException: PKIX path "
                "validation failed: "
                "java.security.cert.CertPathValidatorException: validity check failed",
                **{
                    "error.type": "javax.net.ssl.SSLHandshakeException",
                    "url.domain": "member-registry.members.svc",
                },
            )
        sc.log("claims", pn, "app", lines)
    for _i, pn in enumerate(portal.names):
        for k in range(EXPIRED - 1, 0, -5):
            sc.doc(
                c.ms(k),
                "error",
                "benefits-portal",
                "portal",
                pn,
                "app",
                'GET /plan 502: Get "https://member-registry.members.svc:8443'
                '/v3/members/self/plan": tls: failed '
                f"to verify certificate: x509: certificate has expired or is not yet valid: "
                f"current time "
                f"{c.ago(k)} is after {not_after}",
                **{"http.response.status_code": 502},
            )
    series(
        sc,
        c,
        "certmanager_certificate_expiration_timestamp_seconds",
        "gauge",
        "expiry",
        {
            "namespace": "members",
            "name": "member-registry-tls",
            "issuer_name": "members-ca",
            "issuer_kind": "Issuer",
        },
        lambda m: c.unix(EXPIRED),
        start_min=720,
        step_min=5,
    )
    series(
        sc,
        c,
        "certmanager_certificate_expiration_timestamp_seconds",
        "gauge",
        "expiry",
        {
            "namespace": "portal",
            "name": "benefits-portal-tls",
            "issuer_name": "members-ca-cluster",
            "issuer_kind": "ClusterIssuer",
        },
        lambda m: c.unix(-61 * 1440),
        start_min=720,
        step_min=5,
    )
    for ns_, name, ready in (
        ("members", "member-registry-tls", 0),
        ("portal", "benefits-portal-tls", 1),
    ):
        for cond, val in (("True", ready), ("False", 1 - ready)):
            series(
                sc,
                c,
                "certmanager_certificate_ready_status",
                "gauge",
                "ready",
                {"namespace": ns_, "name": name, "condition": cond},
                lambda m, v=val: v,
                start_min=720,
                step_min=5,
            )
    for pn in adj.names:
        series(
            sc,
            c,
            "eligibility_client_calls",
            "counter",
            "calls",
            {"namespace": "claims", "pod": pn, "outcome": "error"},
            counter(lambda m: 0.0 if m > EXPIRED else 4.0, 400, 1, pn),
            start_min=400,
            step_min=2,
            sample="eligibility_client_calls_total",
        )
    return sc
