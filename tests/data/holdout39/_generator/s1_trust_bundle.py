"""Lumen Freight: the shared CA bundle dropped the retired 2022 CA; rate-engine still serves
a certificate that CA issued, so its clients fail "unknown authority" and nothing else."""

from __future__ import annotations

from datetime import datetime, timedelta

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519
from cryptography.x509.oid import NameOID

from .common import (
    Scenario,
    configmap,
    cumulative,
    event,
    managed_field,
    namespace,
    node,
    parse,
    pod_hash,
    simple_service,
    steps,
    ts_ms,
)

NOW = parse("2026-11-24T13:40:00Z")
NS = "freight"
CHANGE = NOW - timedelta(minutes=52)  # trust-manager rewrote the bundle
NODES = [
    f"ip-10-40-{i}-{n}.eu-west-1.compute.internal" for i, n in ((1, 37), (2, 118), (3, 9), (1, 201))
]


def _key(seed: str) -> ed25519.Ed25519PrivateKey:
    return ed25519.Ed25519PrivateKey.from_private_bytes(seed.encode().ljust(32, b"0")[:32])


def _name(cn: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, cn),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Lumen Freight"),
        ]
    )


def _ca(
    cn: str,
    seed: str,
    not_before: datetime,
    not_after: datetime,
    issuer: tuple[str, ed25519.Ed25519PrivateKey] | None = None,
) -> str:
    key = _key(seed)
    issuer_name, issuer_key = (_name(issuer[0]), issuer[1]) if issuer else (_name(cn), key)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(cn))
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(int.from_bytes(seed.encode()[:8], "big"))
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(
            x509.BasicConstraints(ca=True, path_length=1 if not issuer else 0), critical=True
        )
        .sign(issuer_key, None)
    )
    return cert.public_bytes(serialization.Encoding.PEM).decode()


def _bundle() -> str:
    root = "Lumen Root CA R2"
    root_pem = _ca(
        root, "lumen-root-r2", parse("2024-09-01T00:00:00Z"), parse("2034-09-01T00:00:00Z")
    )
    inter = _ca(
        "Lumen Internal CA 2025",
        "lumen-int-2025",
        parse("2025-01-15T00:00:00Z"),
        parse("2028-01-15T00:00:00Z"),
        (root, _key("lumen-root-r2")),
    )
    return f"# Lumen Root CA R2\n{root_pem}# Lumen Internal CA 2025\n{inter}"


def build() -> Scenario:
    sc = Scenario(
        id="freight-quotes-unknown-authority",
        title="Quote requests fail with 502 after lunch; label-service was deployed around then",
        now=NOW,
        report="""
quotes on the customer portal are failing since roughly 12:50, shipment-api returns 502 on
/v1/quotes. label-service got deployed right around then (ticket FRT-4410), can someone check
if that rollout broke shipment-api? tracking and labels look fine for customers
""",
        truth={
            "category": "certificate",
            "culprit": {"kind": "Deployment", "namespace": NS, "name": "rate-engine"},
            "evidence": [
                "x509: certificate signed by unknown authority",
                "issuer=CN=Lumen Internal CA 2022",
                "Lumen Internal CA 2025",
                "rate-engine.freight.svc:8443",
            ],
            "fix": "Re-issue rate-engine's serving certificate (Secret rate-engine-tls) from "
            "Lumen Internal CA 2025 and restart it: it is the last server still on "
            "the retired 2022 CA, which the corp-ca-bundle no longer trusts. Until "
            "then, re-adding the 2022 CA to the bundle restores the clients.",
        },
    )
    created = NOW - timedelta(days=410)
    sc.add(
        namespace(NS, created, {"team": "freight-core"}),
        namespace("argocd", created),
        namespace("cert-manager", created),
    )
    for i, name in enumerate(NODES):
        sc.add(node(name, NOW - timedelta(days=30 + i * 6), NOW, zone="abc"[i % 3]))
    bundle_mount = [{"name": "corp-ca", "mountPath": "/etc/ssl/corp", "readOnly": True}]
    bundle_volume = [
        {"name": "corp-ca", "configMap": {"name": "corp-ca-bundle", "defaultMode": 420}}
    ]
    tls_env = [{"name": "SSL_CERT_FILE", "value": "/etc/ssl/corp/ca-bundle.crt"}]
    sc.add(
        configmap(
            NS,
            "corp-ca-bundle",
            NOW - timedelta(days=300),
            {"ca-bundle.crt": _bundle()},
            labels={"trust.cert-manager.io/bundle": "corp-ca-bundle"},
            managed=[
                {
                    **managed_field("trust-manager", NOW - timedelta(days=300)),
                    "operation": "Update",
                },
                managed_field("trust-manager", CHANGE),
            ],
        )
    )

    def server_volumes(secret: str) -> list[dict[str, object]]:
        return [{"name": "tls", "secret": {"secretName": secret, "defaultMode": 420}}]

    tls_mount = [{"name": "tls", "mountPath": "/etc/tls", "readOnly": True}]
    _, ship = simple_service(
        sc,
        NS,
        "shipment-api",
        "registry.lumen.io/freight/shipment-api:3.18.2",
        replicas=3,
        nodes=NODES,
        created=created,
        rolled=NOW - timedelta(days=2, hours=5),
        env=[
            *tls_env,
            {"name": "RATE_ENGINE_URL", "value": "https://rate-engine.freight.svc:8443"},
            {"name": "ADDRESS_CHECK_URL", "value": "https://address-check.freight.svc:8443"},
            {"name": "LABEL_SERVICE_URL", "value": "https://label-service.freight.svc:8443"},
        ],
        volumes=bundle_volume,
        mounts=bundle_mount,
        number=41,
    )
    _, rate = simple_service(
        sc,
        NS,
        "rate-engine",
        "registry.lumen.io/freight/rate-engine:2.7.0",
        replicas=2,
        nodes=NODES[1:],
        created=created,
        rolled=NOW - timedelta(days=5, hours=2),
        port=8443,
        number=14,
        memory="768Mi",
        memory_limit="1Gi",
        readiness=None,
        volumes=server_volumes("rate-engine-tls"),
        mounts=tls_mount,
        env=[{"name": "JAVA_TOOL_OPTIONS", "value": "-XX:MaxRAMPercentage=70"}],
    )
    _, addr = simple_service(
        sc,
        NS,
        "address-check",
        "registry.lumen.io/freight/address-check:1.9.4",
        replicas=2,
        nodes=NODES,
        created=created,
        rolled=NOW - timedelta(days=3, hours=7),
        port=8443,
        number=22,
        readiness=None,
        volumes=server_volumes("address-check-tls"),
        mounts=tls_mount,
    )
    _, label = simple_service(
        sc,
        NS,
        "label-service",
        "registry.lumen.io/freight/label-service:5.3.0",
        replicas=2,
        nodes=NODES[2:],
        created=created,
        rolled=NOW - timedelta(minutes=47),
        port=8443,
        number=63,
        readiness=None,
        volumes=server_volumes("label-service-tls"),
        mounts=tls_mount,
    )
    _, quote = simple_service(
        sc,
        NS,
        "quote-worker",
        "registry.lumen.io/freight/quote-worker:0.31.1",
        replicas=2,
        nodes=NODES,
        created=created,
        rolled=NOW - timedelta(days=6, hours=1),
        expose=False,
        volumes=bundle_volume,
        mounts=bundle_mount,
        number=17,
        env=[
            {"name": "REQUESTS_CA_BUNDLE", "value": "/etc/ssl/corp/ca-bundle.crt"},
            {"name": "RATE_ENGINE_URL", "value": "https://rate-engine.freight.svc:8443"},
        ],
        readiness=None,
    )
    _, ui = simple_service(
        sc,
        NS,
        "tracking-ui",
        "registry.lumen.io/freight/tracking-ui:2025.11.3",
        replicas=2,
        nodes=NODES,
        created=created,
        rolled=NOW - timedelta(days=6, hours=4),
        port=8080,
        number=88,
        memory="64Mi",
    )
    # events: label-service rollout (the red herring), an unrelated probe blip
    label_rs = label[0]["metadata"]["ownerReferences"][0]["name"]
    sc.add(
        event(
            NS,
            "Deployment",
            "label-service",
            "ScalingReplicaSet",
            f"Scaled up replica set {label_rs} to 2",
            NOW - timedelta(minutes=47),
            component="deployment-controller",
        ),
        event(
            NS,
            "Deployment",
            "label-service",
            "ScalingReplicaSet",
            f"Scaled down replica set label-service-{pod_hash(f'{NS}/label-service/62')} "
            "to 0 from 2",
            NOW - timedelta(minutes=46),
            component="deployment-controller",
        ),
        event(
            NS,
            "Pod",
            ui[1]["metadata"]["name"],
            "Unhealthy",
            'Readiness probe failed: Get "http://10.244.7.21:8080/healthz": context '
            "deadline exceeded (Client.Timeout exceeded while awaiting headers)",
            NOW - timedelta(minutes=38),
            NOW - timedelta(minutes=37),
            count=2,
            type_="Warning",
            host=ui[1]["spec"]["nodeName"],
        ),
    )
    for p in label:
        sc.add(
            event(
                NS,
                "Pod",
                p["metadata"]["name"],
                "Pulled",
                'Successfully pulled image "registry.lumen.io/freight/label-service:5.3.0" '
                "in 2.114s (2.114s including waiting)",
                NOW - timedelta(minutes=47),
                host=p["spec"]["nodeName"],
            )
        )

    # --- logs
    rng = sc.rng
    start = NOW - timedelta(hours=3)
    servers = {"rate-engine": rate, "address-check": addr, "label-service": label}
    # servers' start-up lines (what each one serves)
    issuers = {
        "rate-engine": "Lumen Internal CA 2022",
        "address-check": "Lumen Internal CA 2025",
        "label-service": "Lumen Internal CA 2025",
    }
    expiry = {
        "rate-engine": "2027-02-28T00:00:00Z",
        "address-check": "2027-06-02T00:00:00Z",
        "label-service": "2027-08-19T00:00:00Z",
    }
    for name, pods in servers.items():
        for p in pods:
            pod_name = p["metadata"]["name"]
            began = parse(p["status"]["startTime"]) + timedelta(seconds=4)
            if name == "rate-engine":
                lines = [
                    (0, "INFO", "c.l.rates.Main", "Starting rate-engine 2.7.0 on JVM 21.0.5"),
                    (
                        3,
                        "INFO",
                        "c.l.rates.tls.KeyStoreLoader",
                        f"Loaded serving certificate from /etc/tls/tls.crt subject=CN=rate-engine."
                        f"freight.svc issuer=CN={issuers[name]},O=Lumen Freight "
                        f"notAfter={expiry[name]}",
                    ),
                    (4, "INFO", "c.l.rates.Server", "Netty listening on 0.0.0.0:8443 (TLS)"),
                    (9, "INFO", "c.l.rates.tariffs.TariffCache", "Loaded 18412 tariff rows"),
                ]
                for sec, level, logger, msg in lines:
                    moment = began + timedelta(seconds=sec)
                    sc.log(NS, pod_name, name, f"{ts_ms(moment)} {level:5} [main] {logger} - {msg}")
                    sc.doc(
                        moment,
                        NS,
                        pod_name,
                        name,
                        name,
                        level.lower(),
                        msg,
                        **{"log.logger": logger},
                    )
            else:
                msg = (
                    f'tls: serving certificate CN={name}.freight.svc, issuer "CN='
                    f'{issuers[name]},O=Lumen Freight", expires {expiry[name]}'
                )
                sc.log(
                    NS,
                    pod_name,
                    name,
                    f'{{"time":"{ts_ms(began)}","level":"INFO",'
                    f'"msg":"{msg.replace(chr(34), chr(92) + chr(34))}"}}',
                )
                sc.doc(began, NS, pod_name, name, name, "info", msg)
                msg2 = "listening on :8443"
                sc.log(
                    NS,
                    pod_name,
                    name,
                    f'{{"time":"{ts_ms(began + timedelta(seconds=1))}",'
                    f'"level":"INFO","msg":"{msg2}"}}',
                )
                sc.doc(began + timedelta(seconds=1), NS, pod_name, name, name, "info", msg2)
    # client reload of the bundle
    for p in ship:
        pod_name = p["metadata"]["name"]
        moment = CHANGE + timedelta(seconds=48 + rng.randint(0, 30))
        msg = "trust store reloaded path=/etc/ssl/corp/ca-bundle.crt certs=2"
        sc.log(
            NS,
            pod_name,
            "shipment-api",
            f"level=info ts={ts_ms(moment)} caller=tlsreload.go:51 "
            f'msg="trust store reloaded" path=/etc/ssl/corp/ca-bundle.crt certs=2',
        )
        sc.doc(moment, NS, pod_name, "shipment-api", "shipment-api", "info", msg)
    broken_from = CHANGE + timedelta(seconds=80)
    t = start
    while t < NOW:
        t += timedelta(seconds=rng.randint(6, 20))
        if t >= NOW:
            break
        p = ship[rng.randrange(len(ship))]
        pod_name = p["metadata"]["name"]
        trace = f"{rng.getrandbits(64):016x}"
        kind = rng.random()
        if kind < 0.55:
            target = "rate-engine"
        elif kind < 0.8:
            target = "address-check"
        else:
            target = "label-service"
        if target == "rate-engine" and t >= broken_from:
            err = (
                'Post "https://rate-engine.freight.svc:8443/v2/rates": tls: failed to '
                "verify certificate: x509: certificate signed by unknown authority"
            )
            quoted = err.replace('"', '\\"')
            sc.log(
                NS,
                pod_name,
                "shipment-api",
                f"level=error ts={ts_ms(t)} caller=quote.go:88 "
                f'msg="rate lookup failed" trace_id={trace} err="{quoted}"',
            )
            sc.doc(
                t,
                NS,
                pod_name,
                "shipment-api",
                "shipment-api",
                "error",
                f"rate lookup failed: {err}",
                **{"trace.id": trace, "error.type": "x509.UnknownAuthorityError"},
            )
            t2 = t + timedelta(milliseconds=3)
            sc.log(
                NS,
                pod_name,
                "shipment-api",
                f"level=warn ts={ts_ms(t2)} caller=http.go:140 "
                f'msg="request failed" method=POST path=/v1/quotes status=502 trace_id={trace}',
            )
            sc.doc(
                t2,
                NS,
                pod_name,
                "shipment-api",
                "shipment-api",
                "warn",
                "request failed method=POST path=/v1/quotes status=502",
                **{"trace.id": trace, "http.response.status_code": 502},
            )
        else:
            ms = rng.randint(6, 40) if target != "rate-engine" else rng.randint(30, 120)
            path = {
                "rate-engine": "/v1/quotes",
                "address-check": "/v1/addresses/validate",
                "label-service": "/v1/labels",
            }[target]
            sc.log(
                NS,
                pod_name,
                "shipment-api",
                f"level=info ts={ts_ms(t)} caller=http.go:131 "
                f'msg="request" method=POST path={path} status=200 upstream={target} '
                f"duration_ms={ms} trace_id={trace}",
            )
            if rng.random() < 0.3:
                sc.doc(
                    t,
                    NS,
                    pod_name,
                    "shipment-api",
                    "shipment-api",
                    "info",
                    f"request method=POST path={path} status=200 upstream={target} "
                    f"duration_ms={ms}",
                    **{"trace.id": trace, "http.response.status_code": 200},
                )
    # rate-engine side: handshake failures after the change
    t = broken_from
    while t < NOW:
        t += timedelta(seconds=rng.randint(8, 25))
        if t >= NOW:
            break
        p = rate[rng.randrange(len(rate))]
        pod_name = p["metadata"]["name"]
        thread = f"nioEventLoopGroup-3-{rng.randint(1, 8)}"
        msg = (
            "Handshake failed: io.netty.handler.codec.DecoderException: "
            "javax.net.ssl.SSLHandshakeException: Received fatal alert: bad_certificate"
        )
        sc.log(
            NS,
            pod_name,
            "rate-engine",
            f"{ts_ms(t)} WARN  [{thread}] i.n.handler.ssl.SslHandler - {msg}",
        )
        sc.doc(
            t,
            NS,
            pod_name,
            "rate-engine",
            "rate-engine",
            "warn",
            msg,
            **{"log.logger": "io.netty.handler.ssl.SslHandler"},
        )
    # quote-worker (python) against rate-engine
    t = start
    while t < NOW:
        t += timedelta(seconds=rng.randint(40, 90))
        if t >= NOW:
            break
        p = quote[rng.randrange(len(quote))]
        pod_name = p["metadata"]["name"]
        batch = rng.randint(20000, 99999)
        if t >= broken_from:
            msg = (
                f"batch {batch} failed: HTTPSConnectionPool(host='rate-engine.freight.svc', "
                "port=8443): Max retries exceeded with url: /v2/rates/bulk (Caused by "
                "SSLError(SSLCertVerificationError(1, '[SSL: CERTIFICATE_VERIFY_FAILED] "
                "certificate verify failed: unable to get local issuer certificate "
                "(_ssl.c:1006)')))"
            )
            sc.log(
                NS,
                pod_name,
                "quote-worker",
                f"{t.strftime('%Y-%m-%d %H:%M:%S,%f')[:-3]} ERROR quote_worker.batch {msg}",
            )
            sc.doc(t, NS, pod_name, "quote-worker", "quote-worker", "error", msg)
        else:
            msg = f"batch {batch} priced {rng.randint(40, 400)} lanes in {rng.randint(300, 2100)}ms"
            sc.log(
                NS,
                pod_name,
                "quote-worker",
                f"{t.strftime('%Y-%m-%d %H:%M:%S,%f')[:-3]} INFO quote_worker.batch {msg}",
            )
            sc.doc(t, NS, pod_name, "quote-worker", "quote-worker", "info", msg)
    # tracking-ui noise
    for p in ui:
        pod_name = p["metadata"]["name"]
        t = start
        while t < NOW:
            t += timedelta(seconds=rng.randint(30, 120))
            if t >= NOW:
                break
            code = 200 if rng.random() > 0.03 else 404
            line = (
                f"10.244.3.{rng.randint(2, 250)} - - [{t.strftime('%d/%b/%Y:%H:%M:%S +0000')}] "
                f'"GET /track/{rng.randint(10**8, 10**9)} HTTP/1.1" {code} '
                f'{rng.randint(900, 4200)} "-" "Mozilla/5.0"'
            )
            sc.log(NS, pod_name, "tracking-ui", line)
    # argocd noise: label-service sync
    sc.doc(
        NOW - timedelta(minutes=48),
        "argocd",
        "argocd-application-controller-0",
        "application-controller",
        "argocd",
        "info",
        "Sync operation to 9c41e2d succeeded application=freight-label-service",
    )
    sc.doc(
        CHANGE - timedelta(minutes=1),
        "argocd",
        "argocd-application-controller-0",
        "application-controller",
        "argocd",
        "info",
        "Sync operation to 4f0aa17 succeeded application=platform-trust-bundles",
    )

    # --- metrics: shipment-api requests by code
    times = steps(start, NOW)
    for i, p in enumerate(ship):
        pod_name = p["metadata"]["name"]
        for code in ("200", "502"):

            def rate_fn(m: datetime, code: str = code, i: int = i) -> float:
                quotes = 1.9 + 0.1 * i
                if code == "200":
                    return quotes * (0.45 if m >= broken_from else 1.0) + 1.1
                return quotes * 0.55 if m >= broken_from else 0.004

            sc.metrics.counter(
                "http_requests",
                {"namespace": NS, "pod": pod_name, "service": "shipment-api", "code": code},
                cumulative(times, rate_fn),
            )
    for p in rate:
        pod_name = p["metadata"]["name"]
        sc.metrics.counter(
            "http_requests",
            {"namespace": NS, "pod": pod_name, "service": "rate-engine", "code": "200"},
            cumulative(times, lambda m: 0.15 if m >= broken_from else 2.2),
        )
    for group in (ship, rate, addr, label, quote, ui):
        for p in group:
            pod_name = p["metadata"]["name"]
            cont = p["spec"]["containers"][0]["name"]
            base = {"rate-engine": 610e6, "tracking-ui": 31e6}.get(cont, 120e6)
            sc.metrics.gauge(
                "container_memory_working_set_bytes",
                {"namespace": NS, "pod": pod_name, "container": cont},
                [(m, base * (1 + 0.02 * ((k % 7) - 3) / 3)) for k, m in enumerate(times[::5])],
            )
            sc.metrics.counter(
                "kube_pod_container_status_restarts",
                {"namespace": NS, "pod": pod_name, "container": cont},
                [(m, 0) for m in times[::5]],
            )
    return sc
