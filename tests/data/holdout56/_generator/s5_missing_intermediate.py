"""partner-api's renewed certificate is served without its intermediate."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from . import _kit as k

SID = "h56-partner-api-x509-clients"
NOW = "2026-12-17T10:50:00Z"

NODES = [
    ("ip-10-60-10-21.eu-west-2.compute.internal", "eu-west-2a"),
    ("ip-10-60-20-93.eu-west-2.compute.internal", "eu-west-2b"),
    ("ip-10-60-30-144.eu-west-2.compute.internal", "eu-west-2c"),
    ("ip-10-60-10-178.eu-west-2.compute.internal", "eu-west-2a"),
    ("ip-10-60-20-5.eu-west-2.compute.internal", "eu-west-2b"),
]
HOST = "partner-api.northpeak.io"
API_IMAGE = "ecr.northpeak.io/edge/partner-api:1.40.2"
ISSUER = (
    "CN=Sectigo RSA Domain Validation Secure Server CA,O=Sectigo Limited,L=Salford,"
    "ST=Greater Manchester,C=GB"
)


def build(root: Path) -> None:
    sc = k.Scenario(SID, NOW, seed=5605)
    node_names = [n for n, _ in NODES]
    for i, (name, zone) in enumerate(NODES):
        sc.add(
            k.node(
                name,
                zone,
                sc.ago(days=8 + 3 * i),
                sc.ago(minutes=0.2),
                region="eu-west-2",
                nodegroup="ng-main",
            )
        )
    plat = k.platform(sc, node_names)
    for ns in ("edge", "settlement", "ledger", "ops", "notify"):
        sc.add(k.namespace(ns, sc.ago(days=280)))
    restart = sc.ago(minutes=47, seconds=49)  # 10:02:11
    start = sc.ago(minutes=60)

    def broken(t: datetime) -> bool:
        return t >= restart + timedelta(seconds=20)

    # ---------------- edge/partner-api ----------------
    api_c = k.container(
        "partner-api",
        API_IMAGE,
        "500m",
        "512Mi",
        "2",
        "1Gi",
        [("https", 8443), ("metrics", 9090)],
        env=[
            ("TLS_CERT_FILE", "/etc/tls/tls.crt"),
            ("TLS_KEY_FILE", "/etc/tls/tls.key"),
            ("LISTEN_ADDR", ":8443"),
        ],
        readiness={
            "httpGet": {"path": "/healthz", "port": 8443, "scheme": "HTTPS"},
            "periodSeconds": 10,
            "timeoutSeconds": 2,
            "failureThreshold": 3,
        },
        mounts=[("tls", "/etc/tls")],
    )
    api = k.simple_deployment(
        sc,
        "edge",
        "partner-api",
        [api_c],
        node_names,
        3,
        created=sc.ago(days=270),
        rolled=restart,
        revision=15,
        annotations={"kubectl.kubernetes.io/restartedAt": k.iso(restart)},
        extra_spec={"volumes": [{"name": "tls", "secret": {"secretName": "partner-api-tls"}}]},
        old_revisions=[(14, sc.ago(days=4, hours=3), [api_c])],
        service=False,
    )
    old_rs = k.replicaset_names(sc, "edge", "partner-api")[0]
    new_rs = k.replicaset_names(sc, "edge", "partner-api")[1]
    old_pods = [f"{old_rs}-{sc.pod_suffix()}" for _ in range(3)]
    lb = k.service_and_endpoints(
        sc,
        "edge",
        "partner-api",
        {"app.kubernetes.io/name": "partner-api"},
        8443,
        api.pods,
        port_name="https",
        service_port=443,
    )
    lb[0]["spec"]["type"] = "LoadBalancer"
    lb[0]["metadata"]["annotations"] = {
        "service.beta.kubernetes.io/aws-load-balancer-type": "external",
        "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "ip",
        "service.beta.kubernetes.io/aws-load-balancer-scheme": "internet-facing",
        "external-dns.alpha.kubernetes.io/hostname": HOST,
    }
    lb[0]["status"] = {
        "loadBalancer": {
            "ingress": [
                {"hostname": "k8s-edge-partnera-3f9a1c2b7e-d41c9e8f.elb.eu-west-2.amazonaws.com"}
            ]
        }
    }
    sc.add(*lb)
    sc.event(
        "edge",
        "Deployment",
        "partner-api",
        "ScalingReplicaSet",
        f"Scaled up replica set {new_rs} to 1",
        restart,
        api_version="apps/v1",
    )
    for i, p in enumerate(api.pods):
        at = restart + timedelta(seconds=14 * i + 1)
        sc.event(
            "edge",
            "ReplicaSet",
            new_rs,
            "SuccessfulCreate",
            f"Created pod: {p.name}",
            at,
            api_version="apps/v1",
        )
        for reason, msg in (
            ("Scheduled", f"Successfully assigned edge/{p.name} to {p.node}"),
            ("Pulled", f'Container image "{API_IMAGE}" already present on machine'),
            ("Created", "Created container partner-api"),
            ("Started", "Started container partner-api"),
        ):
            sc.event("edge", "Pod", p.name, reason, msg, at + timedelta(seconds=1))
        sc.event(
            "edge",
            "Deployment",
            "partner-api",
            "ScalingReplicaSet",
            f"Scaled down replica set {old_rs} to {2 - i} from {3 - i}",
            at + timedelta(seconds=12),
            api_version="apps/v1",
        )
        if i < 2:
            sc.event(
                "edge",
                "Deployment",
                "partner-api",
                "ScalingReplicaSet",
                f"Scaled up replica set {new_rs} to {i + 2} from {i + 1}",
                at + timedelta(seconds=13),
                api_version="apps/v1",
            )

    # the previous pods' start, four days ago, and their last hour
    old_start = sc.ago(days=4, hours=3) + timedelta(seconds=20)
    for i, old in enumerate(old_pods):
        node = node_names[(i + 2) % len(node_names)]
        for line in (
            'level=info msg="partner-api 1.40.2 starting" listen=:8443 pid=1',
            'level=info msg="loaded TLS certificate" file=/etc/tls/tls.crt chain_len=2 '
            f'subject="CN={HOST}" issuer="{ISSUER}" not_after=2026-12-21T23:59:59Z',
            'level=info msg="serving HTTPS" addr=:8443',
        ):
            sc.log(
                old_start + timedelta(seconds=i * 15),
                "edge",
                old,
                "partner-api",
                "partner-api",
                "info",
                line,
                node,
            )
        for t in sc.poisson_times(start, restart + timedelta(seconds=14 * i + 13), lambda _t: 2):
            sc.log(
                t,
                "edge",
                old,
                "partner-api",
                "partner-api",
                "info",
                _access(sc),
                node,
            )
        sc.log(
            restart + timedelta(seconds=14 * i + 13),
            "edge",
            old,
            "partner-api",
            "partner-api",
            "info",
            'level=info msg="shutting down: SIGTERM received, draining connections"',
            node,
        )
    for i, p in enumerate(api.pods):
        at = restart + timedelta(seconds=14 * i + 3)
        for j, line in enumerate(
            (
                'level=info msg="partner-api 1.40.2 starting" listen=:8443 pid=1',
                'level=info msg="loaded TLS certificate" file=/etc/tls/tls.crt chain_len=1 '
                f'subject="CN={HOST}" issuer="{ISSUER}" not_after=2027-12-16T23:59:59Z',
                'level=info msg="serving HTTPS" addr=:8443',
            )
        ):
            sc.log(
                at + timedelta(milliseconds=40 * j),
                "edge",
                p.name,
                "partner-api",
                "partner-api",
                "info",
                line,
                p.node,
            )
            sc.pod_log("edge", p.name, "partner-api", at, f"ts={k.iso_ms(at)} {line}")
        for t in sc.poisson_times(at, sc.now, lambda _t: 0.8):
            line = _access(sc, browsers_only=True)
            sc.log(t, "edge", p.name, "partner-api", "partner-api", "info", line, p.node)
            sc.pod_log("edge", p.name, "partner-api", t, f"ts={k.iso_ms(t)} {line}")
        for t in sc.poisson_times(at + timedelta(seconds=30), sc.now, lambda _t: 2.2):
            alert = sc.rng.choice(
                [
                    "bad certificate",
                    "bad certificate",
                    "unknown certificate authority",
                    "unknown certificate",
                ]
            )
            line = (
                f"http: TLS handshake error from 10.60.{sc.rng.randint(10, 30)}."
                f"{sc.rng.randint(2, 250)}:{sc.rng.randint(30000, 61000)}: remote error: tls: "
                f"{alert}"
            )
            sc.log(t, "edge", p.name, "partner-api", "partner-api", "error", line, p.node)
            sc.pod_log(
                "edge", p.name, "partner-api", t, f"{t.strftime('%Y/%m/%d %H:%M:%S')} {line}"
            )

    # ---------------- clients ----------------
    clients: list[tuple[str, str, str, str, float, str, str, str]] = [
        (
            "settlement",
            "settlement-worker",
            "ecr.northpeak.io/settlement/settlement-worker:3.8.0",
            "worker",
            1.6,
            'level=info msg="settlement pushed" batch={id} items={n} took={ms}ms',
            f'level=error msg="push settlement batch failed" batch={{id}} err="Post '
            f'\\"https://{HOST}/v2/settlements\\": tls: failed to verify certificate: x509: '
            'certificate signed by unknown authority" attempt={n}',
            "x509.UnknownAuthorityError",
        ),
        (
            "ledger",
            "ledger-sync",
            "ecr.northpeak.io/ledger/ledger-sync:2.2.7",
            "ledger-sync",
            1.0,
            "i.n.l.sync.PartnerClient : synced {n} entries from partner-api in {ms}ms",
            "i.n.l.sync.PartnerClient : partner sync failed: javax.net.ssl.SSLHandshakeException: "
            "PKIX path building failed: sun.security.provider.certpath.SunCertPathBuilderException"
            ": unable to find valid certification path to requested target",
            "javax.net.ssl.SSLHandshakeException",
        ),
        (
            "ops",
            "reconciler",
            "ecr.northpeak.io/ops/reconciler:0.9.4",
            "reconciler",
            0.5,
            "INFO reconcile ok: {n} records matched",
            f"ERROR reconcile failed: HTTPSConnectionPool(host='{HOST}', port=443): Max retries "
            "exceeded with url: /v2/recon (Caused by SSLError(SSLCertVerificationError(1, "
            "'[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: unable to get local "
            "issuer certificate (_ssl.c:1006)')))",
            "requests.exceptions.SSLError",
        ),
        (
            "notify",
            "webhook-relay",
            "ecr.northpeak.io/notify/webhook-relay:4.1.0",
            "relay",
            0.7,
            "delivered partner webhook id={id} status=200 in {ms}ms",
            f"partner-api request failed: Error: unable to verify the first certificate "
            f"(code=UNABLE_TO_VERIFY_LEAF_SIGNATURE, host={HOST})",
            "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
        ),
    ]
    workloads: dict[str, k.Workload] = {}
    for ns, name, image, cname, rate, ok, err, etype in clients:
        rolled = (
            sc.ago(hours=16, minutes=48)
            if name == "settlement-worker"
            else sc.ago(days=sc.rng.randint(2, 6), hours=sc.rng.randint(1, 20))
        )
        w = k.simple_deployment(
            sc,
            ns,
            name,
            [k.container(cname, image, "200m", "256Mi", "1", "512Mi", [("metrics", 9102)])],
            node_names,
            2,
            created=sc.ago(days=250),
            rolled=rolled,
            revision=sc.rng.randint(12, 60),
            restarts={1: (1, k.terminated("OOMKilled", 137, rolled, sc.ago(days=2, hours=7)))}
            if name == "ledger-sync"
            else None,
        )
        workloads[name] = w
        for p in w.pods:
            for t in sc.poisson_times(start, sc.now, lambda t, r=rate: 0.0 if broken(t) else r):
                msg = ok.format(
                    id=sc.hexid(8), n=sc.rng.randint(1, 400), ms=sc.rng.randint(30, 240)
                )
                sc.log(t, ns, p.name, cname, name, "info", msg, p.node)
            for t in sc.poisson_times(start, sc.now, lambda t, r=rate: r if broken(t) else 0.0):
                msg = err.format(id=sc.hexid(8), n=sc.rng.randint(1, 5))
                sc.log(t, ns, p.name, cname, name, "error", msg, p.node, error__type=etype)
    sw = workloads["settlement-worker"]
    sw_rs = k.replicaset_names(sc, "settlement", "settlement-worker")[-1]
    for obj in sc.objects:
        if obj["kind"] == "ReplicaSet" and obj["metadata"]["name"] == sw_rs:
            obj["metadata"]["annotations"]["kubernetes.io/change-cause"] = (
                "bump base image to distroless/static-debian12:2026-12-16 (ca-certificates "
                "20250419)"
            )
    for p in sw.pods:
        for t in sc.poisson_times(start, sc.now, lambda _t: 0.1):
            sc.log(
                t,
                "settlement",
                p.name,
                "worker",
                "settlement-worker",
                "warn",
                'level=warn msg="slow downstream ack" queue=settlements wait_ms=1400',
                p.node,
            )

    # ---------------- monitoring/blackbox-exporter ----------------
    bb = k.simple_deployment(
        sc,
        "monitoring",
        "blackbox-exporter",
        [
            k.container(
                "blackbox-exporter",
                "quay.io/prometheus/blackbox-exporter:v0.25.0",
                "50m",
                "64Mi",
                "200m",
                "128Mi",
                [("http", 9115)],
            )
        ],
        node_names[:1],
        1,
        created=sc.ago(days=300),
        rolled=sc.ago(days=30),
        revision=4,
        port=9115,
    )
    for t in sc.poisson_times(start, sc.now, lambda t: 2.0 if broken(t) else 0.0):
        sc.log(
            t,
            "monitoring",
            bb.pods[0].name,
            "blackbox-exporter",
            "blackbox-exporter",
            "error",
            f"ts={k.iso_ms(t)} caller=main.go:190 module=http_2xx target=https://{HOST}/healthz "
            'level=error msg="Error for HTTP request" err="Get \\"https://'
            f'{HOST}/healthz\\": tls: failed to verify certificate: x509: certificate signed by '
            'unknown authority"',
            bb.pods[0].node,
        )

    portal = k.simple_deployment(
        sc,
        "edge",
        "partner-portal",
        [
            k.container(
                "portal",
                "ecr.northpeak.io/edge/partner-portal:6.2.0",
                "100m",
                "128Mi",
                "500m",
                "256Mi",
                [("http", 3000)],
            )
        ],
        node_names,
        2,
        created=sc.ago(days=260),
        rolled=sc.ago(days=5),
        revision=31,
        port=3000,
    )

    # ---------------- metrics ----------------
    probe = {"instance": f"https://{HOST}/healthz", "job": "blackbox", "module": "http_2xx"}
    sc.metrics.gauge(
        "probe_success",
        probe,
        lambda t: 0 if broken(t) else 1,
        help_text="Displays whether or not the probe was a success",
    )
    sc.metrics.gauge(
        "probe_ssl_earliest_cert_expiry",
        probe,
        lambda t: None if broken(t) else 1797897599,
        help_text="Returns last SSL chain expiry in unixtime",
    )
    sc.metrics.gauge(
        "probe_http_status_code",
        probe,
        lambda t: 0 if broken(t) else 200,
        help_text="Response HTTP status code",
    )
    for p in api.pods:
        for handler, rate in (("/v2/settlements", 1.6), ("/v2/partners", 6.0)):
            sc.metrics.counter(
                "http_requests",
                {"namespace": "edge", "pod": p.name, "handler": handler, "code": "200"},
                lambda t, h=handler, r=rate: (
                    (0.05 if h == "/v2/settlements" else r) if broken(t) else r
                ),
                start=0,
                integer=True,
                help_text="Requests served by partner-api.",
            )
    k.container_metrics(sc, "edge", api.pods, "partner-api", 0.12, 140 * k.MI)
    for name, w in workloads.items():
        cname = w.obj["spec"]["template"]["spec"]["containers"][0]["name"]
        k.container_metrics(sc, w.namespace, w.pods, cname, 0.05, 150 * k.MI)
        k.restarts_metric(sc, w.namespace, w.pods, cname, 1 if name == "ledger-sync" else 0)
    for t in sc.poisson_times(start, sc.now, lambda _t: 2.0):
        p = sc.rng.choice(plat.ingress.pods)
        sc.log(
            t,
            "ingress-nginx",
            p.name,
            "controller",
            "ingress-nginx",
            "info",
            k.ingress_line(
                sc,
                t,
                "GET",
                f"/portal/partners/{sc.rng.randint(100, 999)}",
                200,
                sc.rng.uniform(0.02, 0.15),
                "edge",
                "partner-portal",
                3000,
                sc.rng.choice(portal.pods).ip,
            ),
            p.node,
            http__response__status_code=200,
        )

    sc.write(
        root,
        title="Internal clients cannot call partner-api since this morning",
        report=f"""
since ~10:00 settlement-worker and ledger-sync can't talk to partner-api ({HOST}), x509 /
PKIX errors everywhere. the cert itself is fine: it was renewed this morning and chrome shows a
valid cert until Dec 2027, green lock. settlement-worker got a new distroless base image last night,
I'm guessing its CA bundle is broken (ledger-sync maybe the same java truststore issue?). can you
confirm it's the client images?
""",
        category="certificate",
        culprit=("Deployment", "edge", "partner-api"),
        evidence=[
            "chain_len=1",
            "unable to verify the first certificate",
            "certificate signed by unknown authority",
        ],
        fix=(
            "Re-issue the partner-api-tls secret with the full chain (leaf followed by the Sectigo "
            "intermediate) and restart partner-api; since the 10:02 restart it serves only the "
            "leaf, which browsers complete via AIA but Go/Java/Python/Node clients reject."
        ),
    )


BROWSERS = [
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0",
]
CLIENTS = ["Go-http-client/1.1", "Java/17.0.13", "python-requests/2.32.3", "node-fetch/1.0"]


def _access(sc: k.Scenario, browsers_only: bool = False) -> str:
    path = sc.rng.choice(["/v2/partners", "/v2/partners", "/v2/settlements", "/v2/recon"])
    agents = BROWSERS if browsers_only else BROWSERS + CLIENTS * 2
    return (
        f"level=info msg=request method={sc.rng.choice(['GET', 'POST'])} path={path} "
        f'status=200 dur={sc.rng.randint(3, 60)}ms ua="{sc.rng.choice(agents)}"'
    )
