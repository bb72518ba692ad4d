"""8. certificate: Quillmark moves its API from api.quillmark.io to api.quillmark.com; the
api-gateway answers for both names but its certificate only lists the .io names, so every
client that calls the new name fails hostname verification while the old name works."""

from __future__ import annotations

from datetime import timedelta

from . import _kit as k

REG = "ghcr.io/quillmark"
GW = f"{REG}/api-gateway:1.17.2"
ERR_GO = (
    "tls: failed to verify certificate: x509: certificate is valid for api.quillmark.io, "
    "www.quillmark.io, "
    "not api.quillmark.com"
)

SID = "api-domain-move-san-mismatch"


def build(root) -> None:
    s = k.Scenario(SID, "2026-12-08T13:10:00Z", 4608)
    for ns in ("default", "kube-system", "edge", "partners", "billing", "monitoring"):
        s.add(k.namespace(s, ns, s.ago(days=800)))
    nodes = []
    for i in range(4):
        ip = f"10.20.{16 * i}.{41 + i}"
        nodes.append(
            k.node(
                s,
                f"gke-quill-prod-default-pool-5a7c{i}e21-{s.suffix(4)}",
                s.ago(days=5, hours=9 + i),
                ["us-central1-a", "us-central1-b", "us-central1-c", "us-central1-f"][i],
                "n2-standard-4",
                memory="16393292Ki",
                alloc_cpu="3920m",
                alloc_mem="13287476Ki",
                kubelet="v1.28.3-gke.1203001",
                internal_ip=ip,
                extra_labels={"cloud.google.com/gke-nodepool": "default-pool"},
            )
        )
    s.add(*nodes)

    # --- api-gateway (serves TLS itself) ----------------------------------------------------------
    ns = "edge"
    cm_changed = s.ago(days=2, hours=3)
    gw = k.healthy_deployment(
        s,
        ns,
        "api-gateway",
        GW,
        3,
        nodes[:3],
        s.ago(days=700),
        cm_changed + timedelta(minutes=4),
        revision=88,
        port=8443,
        cpu="500m",
        memory="512Mi",
        readiness_path=None,
        mounts=[
            {"name": "tls", "mountPath": "/etc/tls", "readOnly": True},
            {"name": "config", "mountPath": "/etc/gateway", "readOnly": True},
        ],
        volumes=[
            {"name": "tls", "secret": {"secretName": "api-gateway-tls", "defaultMode": 420}},
            {"name": "config", "configMap": {"name": "api-gateway-config", "defaultMode": 420}},
        ],
        with_service=False,
    )
    c = gw["deployment"]["spec"]["template"]["spec"]["containers"][0]
    c["ports"] = [
        {"name": "https", "containerPort": 8443, "protocol": "TCP"},
        {"name": "health", "containerPort": 8080, "protocol": "TCP"},
    ]
    c["readinessProbe"] = k.http_probe("/healthz", "health", delay=3, period=5)
    c["args"] = ["--config", "/etc/gateway/gateway.yaml"]
    gw["replicaset"]["spec"]["template"]["spec"] = gw["deployment"]["spec"]["template"]["spec"]
    for p in gw["pods"]:
        p["spec"] = dict(
            gw["deployment"]["spec"]["template"]["spec"], nodeName=p["spec"]["nodeName"]
        )
    k.add_parts(s, gw)
    gsvc = k.service(
        s,
        ns,
        "api-gateway",
        {"app": "api-gateway"},
        [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": "https"}],
        s.ago(days=700),
        stype="LoadBalancer",
        cluster_ip="10.24.9.118",
        annotations={
            "cloud.google.com/l4-rbs": "enabled",
            "external-dns.alpha.kubernetes.io/hostname": "api.quillmark.io,api.quillmark.com",
        },
    )
    gsvc["status"] = {"loadBalancer": {"ingress": [{"ip": "34.118.201.77", "ipMode": "VIP"}]}}
    gep = k.endpoints(s, gsvc, gw["pods"])
    gep["subsets"][0]["ports"] = [{"name": "https", "port": 8443, "protocol": "TCP"}]
    s.add(gsvc, gep)
    s.add(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": k.meta(
                s,
                "ConfigMap",
                "api-gateway-config",
                ns,
                s.ago(days=700),
                annotations={
                    "quillmark.io/change": (
                        "DOM-77 serve api.quillmark.com alongside api.quillmark.io"
                    )
                },
            ),
            "data": {
                "gateway.yaml": "listen: :8443\nhealth_listen: :8080\ntls:\n  cert_file: "
                "/etc/tls/tls.crt\n"
                '  key_file: /etc/tls/tls.key\n  min_version: "1.2"\nserver_names:\n'
                "  - api.quillmark.io\n  - www.quillmark.io\n  - api.quillmark.com   # DOM-77 "
                "domain move\n"
                "routes:\n  - prefix: /v2/partner-events\n    upstream: http://partner-ingest.partners.svc:8080\n"
                "  - prefix: /v2/invoices\n    upstream: http://invoice-api.billing.svc:8080\n"
                "  - prefix: /v2/ledger\n    upstream: http://ledger-api.billing.svc:8080\n"
            },
        }
    )
    for _j, p in enumerate(gw["pods"]):
        pn = p["metadata"]["name"]
        t0 = k.parse(p["status"]["containerStatuses"][0]["state"]["running"]["startedAt"])
        boot = [
            (
                0,
                "info",
                'msg="api-gateway starting" version=1.17.2 config=/etc/gateway/gateway.yaml',
            ),
            (
                0.2,
                "info",
                'msg="tls: loaded certificate" file=/etc/tls/tls.crt subject="CN=api.quillmark.io" '
                'issuer="CN=Sectigo RSA Domain Validation Secure Server CA,O=Sectigo '
                'Limited,L=Salford,ST=Greater Manchester,C=GB" '
                'dns_names="api.quillmark.io,www.quillmark.io" not_after=2027-04-18T23:59:59Z',
            ),
            (
                0.3,
                "info",
                'msg="server names" names="api.quillmark.io,www.quillmark.io,api.quillmark.com"',
            ),
            (0.4, "info", 'msg="listening" addr=:8443 tls=true'),
            (0.4, "info", 'msg="listening" addr=:8080 tls=false purpose=health'),
        ]
        text = []
        for off, lvl, msg in boot:
            at = t0 + timedelta(seconds=off)
            s.log(at, ns, pn, "api-gateway", lvl, f"level={lvl} {msg}", service="api-gateway")
            text.append(f"time={k.rfc_ms(at)} level={lvl} {msg}")
        t = s.ago(hours=3)
        while t < s.now:
            rate = 0.15 if t < s.ago(hours=2, minutes=40) else 0.55
            if t > s.ago(minutes=52):
                rate = 0.8
            if s.rng.random() < rate:
                line = (
                    f"http: TLS handshake error from 10.{s.rng.randint(0, 40)}."
                    f"{s.rng.randint(0, 255)}."
                    f"{s.rng.randint(2, 254)}:{s.rng.randint(20000, 65000)}: remote error: tls: "
                    "bad certificate"
                )
                s.log(t, ns, pn, "api-gateway", "error", line, service="api-gateway")
                text.append(f"{t.strftime('%Y/%m/%d %H:%M:%S')} {line}")
            if s.rng.random() < 0.5:
                path = s.rng.choice(["/v2/ledger/batches", "/v2/invoices", "/v2/invoices/{id}"])
                s.log(
                    t + timedelta(seconds=1),
                    ns,
                    pn,
                    "api-gateway",
                    "info",
                    f"level=info msg=request host=api.quillmark.io method=POST path={path} "
                    "status=201 "
                    f"dur={s.rng.randint(40, 260)}ms",
                    service="api-gateway",
                    **{"http.response.status_code": 201, "url.domain": "api.quillmark.io"},
                )
            t += timedelta(seconds=s.rng.randint(20, 50))
        s.pod_log(ns, pn, "api-gateway", text)

    # decoy: status page with a cert close to expiry (different host, not used by the failing
    # clients)
    sp = k.healthy_deployment(
        s,
        ns,
        "status-page",
        f"{REG}/status-page:2.3.0",
        1,
        nodes[3:],
        s.ago(days=400),
        s.ago(days=6),
        revision=9,
        memory="128Mi",
    )
    k.add_parts(s, sp)
    spn = sp["pods"][0]["metadata"]["name"]
    t = s.ago(hours=6)
    while t < s.now:
        s.log(
            t,
            ns,
            spn,
            "status-page",
            "warn",
            'level=warn msg="certificate expires soon" host=status.quillmark.io '
            "not_after=2026-12-20T11:04:09Z "
            "days_left=11",
            service="status-page",
        )
        t += timedelta(hours=1)

    # --- clients ----------------------------------------------------------------------------------
    relay = k.healthy_deployment(
        s,
        "partners",
        "webhook-relay",
        f"{REG}/webhook-relay:4.0.1",
        2,
        nodes[1:3],
        s.ago(days=500),
        s.ago(minutes=52),
        revision=33,
        memory="128Mi",
        env=[{"name": "QUILLMARK_API_BASE", "value": "https://api.quillmark.com"}],
    )
    k.add_parts(s, relay)
    rrs = relay["replicaset"]["metadata"]["name"]
    s.add(
        k.event(
            s,
            "partners",
            "Deployment",
            "webhook-relay",
            "ScalingReplicaSet",
            f"Scaled up replica set {rrs} to 2 from 1",
            s.ago(minutes=51, seconds=30),
            component="deployment-controller",
            api_version="apps/v1",
            involved_uid=relay["deployment"]["metadata"]["uid"],
        ),
        k.event(
            s,
            "partners",
            "Deployment",
            "webhook-relay",
            "ScalingReplicaSet",
            "Scaled down replica set webhook-relay-5bd7f6c8d9 to 0 from 1",
            s.ago(minutes=51),
            component="deployment-controller",
            api_version="apps/v1",
            involved_uid=relay["deployment"]["metadata"]["uid"],
        ),
    )
    mailer = k.healthy_deployment(
        s,
        "billing",
        "invoice-mailer",
        f"{REG}/invoice-mailer:2.12.0",
        2,
        nodes[:2],
        s.ago(days=400),
        s.ago(hours=2, minutes=44),
        revision=57,
        memory="768Mi",
        env=[{"name": "API_BASE_URL", "value": "https://api.quillmark.com/v2"}],
    )
    k.add_parts(s, mailer)
    ledger = k.healthy_deployment(
        s,
        "billing",
        "ledger-sync",
        f"{REG}/ledger-sync:6.4.3",
        2,
        nodes[2:],
        s.ago(days=400),
        s.ago(days=3),
        revision=71,
        memory="512Mi",
        restarts={0: 1},
        env=[{"name": "API_BASE_URL", "value": "https://api.quillmark.io/v2"}],
    )
    k.add_parts(s, ledger)
    partners = ["acme-logistics", "northwind", "bluefin-retail", "kappa-freight"]
    t = s.ago(hours=3)
    i = 0
    relay_start = s.ago(minutes=51, seconds=40)
    while t < s.now:
        p = relay["pods"][i % 2]
        prt = partners[i % 4]
        if t < relay_start:
            s.log(
                t,
                "partners",
                p["metadata"]["name"],
                "webhook-relay",
                "info",
                f'level=info msg="delivered" partner={prt} '
                "url=https://api.quillmark.io/v2/partner-events status=202 "
                f"dur={s.rng.randint(60, 180)}ms",
                service="webhook-relay",
            )
        else:
            s.log(
                t,
                "partners",
                p["metadata"]["name"],
                "webhook-relay",
                "error",
                f'level=error msg="deliver failed, will retry" partner={prt} attempt={1 + i % 5} '
                f'err="Post \\"https://api.quillmark.com/v2/partner-events\\": {ERR_GO}"',
                service="webhook-relay",
                **{"error.type": "x509.HostnameError", "url.domain": "api.quillmark.com"},
            )
        t += timedelta(seconds=s.rng.randint(15, 35))
        i += 1
    t = s.ago(hours=3)
    mailer_start = s.ago(hours=2, minutes=43)
    while t < s.now:
        p = mailer["pods"][i % 2]
        inv = f"INV-2026-{s.rng.randint(100000, 999999)}"
        if t < mailer_start:
            s.log(
                t,
                "billing",
                p["metadata"]["name"],
                "invoice-mailer",
                "info",
                f"c.q.mailer.InvoiceClient : fetched {inv} from "
                "https://api.quillmark.io/v2/invoices in "
                f"{s.rng.randint(40, 200)}ms",
                service="invoice-mailer",
            )
        else:
            s.log(
                t,
                "billing",
                p["metadata"]["name"],
                "invoice-mailer",
                "error",
                f"c.q.mailer.InvoiceClient : fetch {inv} failed: "
                "javax.net.ssl.SSLPeerUnverifiedException: Hostname "
                "api.quillmark.com not verified:\n    certificate: "
                "sha256/Xr4hG0pXj2bN1yS8q6c9K3wF7mZtV5aLdE2uQ0oR1iY=\n"
                "    DN: CN=api.quillmark.io\n    subjectAltNames: [api.quillmark.io, "
                "www.quillmark.io]",
                service="invoice-mailer",
                **{
                    "error.type": "javax.net.ssl.SSLPeerUnverifiedException",
                    "url.domain": "api.quillmark.com",
                },
            )
        t += timedelta(seconds=s.rng.randint(40, 90))
        i += 1
    t = s.ago(hours=3)
    while t < s.now:
        p = ledger["pods"][i % 2]
        s.log(
            t,
            "billing",
            p["metadata"]["name"],
            "ledger-sync",
            "info",
            f"POST https://api.quillmark.io/v2/ledger/batches 201 ({s.rng.randint(90, 300)}ms) "
            f"batch={s.rng.randint(10000, 99999)} entries={s.rng.randint(50, 400)}",
            service="ledger-sync",
        )
        t += timedelta(seconds=s.rng.randint(45, 90))
        i += 1

    # --- monitoring: blackbox exporter ------------------------------------------------------------
    bb = k.healthy_deployment(
        s,
        "monitoring",
        "blackbox-exporter",
        "quay.io/prometheus/blackbox-exporter:v0.24.0",
        1,
        nodes[3:],
        s.ago(days=600),
        s.ago(days=6),
        port=9115,
        readiness_path="/-/healthy",
        memory="64Mi",
    )
    k.add_parts(s, bb)
    bpn = bb["pods"][0]["metadata"]["name"]
    t = s.ago(hours=3)
    while t < s.now:
        s.log(
            t,
            "monitoring",
            bpn,
            "blackbox-exporter",
            "error",
            "ts="
            + k.rfc_ms(t)
            + " caller=main.go:181 module=http_2xx target=https://api.quillmark.com/healthz "
            'level=error msg="Error for HTTP request" err="Get '
            '\\"https://34.118.201.77/healthz\\": ' + ERR_GO + '"',
            service="blackbox-exporter",
        )
        t += timedelta(minutes=5)

    # --- metrics ----------------------------------------------------------------------------------
    pts = s.steps(180)
    for target, ok, expiry in (
        ("https://api.quillmark.io/healthz", 1, 1808092799),
        ("https://api.quillmark.com/healthz", 0, 1808092799),
        ("https://status.quillmark.io/", 1, 1797764649),
    ):
        lab = {"job": "blackbox", "module": "http_2xx", "instance": target}
        s.series(
            "probe_success",
            "gauge",
            "Displays whether or not the probe was a success",
            lab,
            [(t, ok) for t in pts],
        )
        s.series(
            "probe_ssl_earliest_cert_expiry",
            "gauge",
            "Returns last SSL chain expiry in unixtime",
            lab,
            [(t, expiry) for t in pts],
        )
    acc = 0
    vals = []
    for t in pts:
        acc += 12 if t < s.ago(hours=2, minutes=40) else (40 if t < s.ago(minutes=52) else 95)
        vals.append((t, acc))
    s.series(
        "gateway_tls_handshake_errors_total",
        "counter",
        "TLS handshakes that failed.",
        {"job": "api-gateway", "namespace": ns, "reason": "remote_bad_certificate"},
        vals,
    )
    for host, per_min in (("api.quillmark.io", 2400), ("api.quillmark.com", 0)):
        acc = 0
        vals = []
        for t in pts:
            acc += per_min + (s.rng.randint(-100, 100) if per_min else 0)
            vals.append((t, acc))
        s.series(
            "gateway_requests_total",
            "counter",
            "Requests served, by SNI host.",
            {"job": "api-gateway", "namespace": ns, "host": host, "code": "2xx"},
            vals,
        )
    for result in ("ok", "error"):
        acc = 0
        vals = []
        for t in pts:
            if result == "ok":
                acc += 0 if t >= relay_start else 160
            else:
                acc += 170 if t >= relay_start else 0
            vals.append((t, acc))
        s.series(
            "webhook_deliveries_total",
            "counter",
            "Partner webhook deliveries.",
            {"job": "webhook-relay", "namespace": "partners", "result": result},
            vals,
        )

    s.write(
        root,
        {
            "title": "Partner webhooks and invoice mails failing with TLS errors",
            "report": "partner webhooks stopped going out since the webhook-relay deploy ~12:18, "
            "and invoice-mailer "
            "is erroring too. both mention SSL/x509. did the api-gateway certificate expire? "
            "ledger-sync "
            "looks fine weirdly\n",
            "truth": {
                "category": "certificate",
                "culprit": {"kind": "Deployment", "namespace": "edge", "name": "api-gateway"},
                "evidence": [
                    (
                        "x509: certificate is valid for api.quillmark.io, www.quillmark.io, not "
                        "api.quillmark.com"
                    ),
                    "Hostname api.quillmark.com not verified",
                    'dns_names="api.quillmark.io,www.quillmark.io"',
                    "not_after=2027-04-18T23:59:59Z",
                ],
                "fix": "api-gateway now answers for api.quillmark.com (DOM-77) but its "
                "certificate's SANs only cover "
                "api.quillmark.io and www.quillmark.io; issue a certificate that includes "
                "api.quillmark.com "
                "(or a SAN list with both domains), update api-gateway-tls and restart the "
                "gateway. The "
                "certificate is not expired (valid to 2027-04-18); clients on the old name keep "
                "working.",
            },
        },
    )
