"""Shape 4, certificate: payments-gw serves a renewed certificate whose notBefore is ahead."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path

from ._kit import (
    Ctr,
    Line,
    Rev,
    Scenario,
    access_log,
    deployment,
    event,
    iso,
    lines,
    namespace,
    service,
    standard_bystanders,
    worker_nodes,
)

SID = "payments-gw-client-tls-errors"
REG = "quay.io/finco"
NOT_BEFORE = "2026-09-09T08:07:12Z"


def build(root: Path) -> None:
    sc = Scenario(SID, "2026-09-09T07:50:00Z", seed=5404)
    old = sc.ago(days=380)
    nodes = worker_nodes(sc, [f"ip-10-12-{a}-{b}.ec2.internal"
                              for a, b in ((4, 20), (5, 133), (6, 71), (4, 202))])
    standard_bystanders(sc, nodes, ["payments-gw.payments.svc.cluster.local",
                                    "vault.security.svc.cluster.local",
                                    "ledger-db.ledger.svc.cluster.local"])
    for ns in ("payments", "ledger", "refunds", "shop", "cert-manager"):
        namespace(sc, ns, old)
    renewed = sc.ago(minutes=28)
    reload_at = renewed + timedelta(seconds=47)

    tls_mount = {"volumeMounts": [{"name": "tls", "mountPath": "/etc/tls", "readOnly": True}]}
    gw = deployment(sc, "payments", "payments-gw", [
        Rev([Ctr("payments-gw", f"{REG}/payments-gw:5.6.2", port=8443,
                 env={"TLS_CERT_FILE": "/etc/tls/tls.crt", "TLS_KEY_FILE": "/etc/tls/tls.key",
                      "TLS_RELOAD": "fsnotify"}, cpu_req="250m", mem_lim="384Mi",
                 readiness={"httpGet": {"path": "/healthz", "port": 9090, "scheme": "HTTP"},
                            "periodSeconds": 10, "timeoutSeconds": 1, "failureThreshold": 3,
                            "successThreshold": 1}, extra=tls_mount)],
            sc.ago(days=4, hours=2), 3, "payments-gw 5.6.2")],
        nodes=nodes, created=old, first_rev=61,
        extra_spec={"volumes": [{"name": "tls", "secret": {"secretName": "payments-gw-tls",
                                                             "defaultMode": 420}}]})
    service(sc, "payments", "payments-gw", selector={"app": "payments-gw"},
            ports=[("https", 443, 8443)], created=old)
    for p in gw.pods:
        t = reload_at + timedelta(milliseconds=sc.rng.randint(5, 900))
        sc.log(t, p.ref, "info", "tls: certificate file changed, reloading /etc/tls/tls.crt")
        sc.log(t + timedelta(milliseconds=12), p.ref, "info",
               "tls: loaded certificate subject=CN=payments-gw.payments.svc "
               "issuer=CN=FinCo Internal Issuing CA 2 serial=5e:1c:a0:93:7f:d2 "
               f"notBefore={NOT_BEFORE} notAfter=2026-12-08T08:07:12Z")

        def serve(rng: random.Random, t: datetime) -> Line:
            if t >= reload_at and rng.random() < 0.45:
                ip = f"10.42.{rng.randint(1, 4)}.{rng.randint(2, 250)}"
                return ("warn", f"http: TLS handshake error from {ip}:{rng.randint(30000, 61000)}"
                                ": remote error: tls: bad certificate", {})
            path = rng.choice(["/v1/authorize", "/v1/capture", "/v1/refund", "/v1/ledger/post"])
            return ("info", f"POST {path} 200 {rng.randint(20, 140)}ms",
                    {"http.response.status_code": 200})

        sc.chatter(p.ref, serve, 2.4)
        sc.chatter(p.ref, lines([("warn", "acquirer adyen-eu slow: {ms}0ms for authorize"),
                                 ("info", "settlement batch b_{id} flushed")]), 0.2)
        sc.usage(p, 0.12, 160e6)
        sc.counter("tls_handshake_errors_total", "Failed TLS handshakes on the listener.",
                   {"namespace": "payments", "service": "payments-gw", "pod": p.ref.pod},
                   lambda t: 0.9 if t >= reload_at else 0.001, start=float(sc.rng.randint(3, 40)))
        sc.counter("http_requests_total", "Total HTTP requests.",
                   {"namespace": "payments", "service": "payments-gw", "pod": p.ref.pod,
                    "code": "200"}, lambda t: 2.1 if t >= reload_at else 5.6,
                   start=sc.rng.uniform(1e5, 5e5))
    sc.gauge("certmanager_certificate_expiration_timestamp_seconds",
             "The date after which the certificate expires.",
             {"namespace": "payments", "name": "payments-gw-tls",
              "issuer_name": "vault-pki", "issuer_kind": "ClusterIssuer"},
             lambda t: 1796717232.0 if t >= renewed else 1789109232.0)
    sc.gauge("certmanager_certificate_ready_status", "The ready status of the certificate.",
             {"namespace": "payments", "name": "payments-gw-tls", "condition": "True"},
             lambda t: 1.0)
    cm = deployment(sc, "cert-manager", "cert-manager", [
        Rev([Ctr("cert-manager-controller", "quay.io/jetstack/cert-manager-controller:v1.15.3",
                 port=9402)], sc.ago(days=6), 1)], nodes=nodes, created=old, first_rev=9)
    c = cm.pods[0].ref
    sc.log(renewed, c, "info", '"msg"="Certificate must be re-issued" "logger"="cert-manager'
           '.certificates-trigger" "key"="payments/payments-gw-tls" "reason"="Renewing"')
    sc.log(renewed + timedelta(seconds=2), c, "info",
           '"msg"="certificate request approved, signed by issuer" "logger"="cert-manager'
           '.certificaterequests-issuer-vault" "resource_name"="payments-gw-tls-8" '
           '"resource_namespace"="payments" "issuer"="vault-pki"')
    sc.log(renewed + timedelta(seconds=3), c, "info",
           '"msg"="issued certificate" "logger"="cert-manager.certificates-issuing" '
           '"key"="payments/payments-gw-tls" "serial"="5e:1c:a0:93:7f:d2" '
           f'"not_before"="{NOT_BEFORE}" "not_after"="2026-12-08T08:07:12Z"')
    sc.chatter(c, lines([("info", '"msg"="certificate does not need re-issuance" "key"='
                                  '"shop/checkout-tls"'),
                         ("info", '"msg"="skipping, certificate request already approved"')]),
               0.4)
    sc.usage(cm.pods[0], 0.02, 70e6)
    _clients(sc, nodes, old, reload_at)
    sc.write(root, title="ledger-sync and refund-worker failing TLS against payments-gw",
             report="ledger-sync and refund-worker started throwing TLS errors talking to "
                    "payments-gw about 25 min ago. ledger-sync got a new base image this "
                    "morning (temurin 21), maybe the truststore changed? payments-gw itself "
                    "looks healthy, only 200s on its dashboard.\n",
             truth={"category": "certificate",
                    "culprit": {"kind": "Deployment", "namespace": "payments",
                                "name": "payments-gw"},
                    "evidence": ["certificate is not yet valid", f"notBefore={NOT_BEFORE}",
                                 "remote error: tls: bad certificate"],
                    "fix": "Make payments-gw serve a certificate that is already valid: roll "
                           "back to the previous payments-gw-tls certificate (valid to "
                           "2026-09-13) or re-issue it with a backdated notBefore; then fix the "
                           "clock of the Vault PKI that stamped notBefore 45 minutes ahead. "
                           "The clients and their truststores are fine."})


def _clients(sc: Scenario, nodes: list[str], old: datetime, broke: datetime) -> None:
    ledger = deployment(sc, "ledger", "ledger-sync", [
        Rev([Ctr("ledger-sync", f"{REG}/ledger-sync:3.2.0-temurin17")], sc.ago(days=8), 0),
        Rev([Ctr("ledger-sync", f"{REG}/ledger-sync:3.2.0-temurin21")], sc.ago(minutes=55), 2,
            "rebuild ledger-sync 3.2.0 on eclipse-temurin:21-jre"),
    ], nodes=nodes, created=old, first_rev=14)
    event(sc, "ledger", "Deployment", "ledger-sync", "ScalingReplicaSet",
          f"Scaled down replica set {ledger.sets[0]['metadata']['name']} to 0 from 1",
          first=sc.ago(minutes=53), last=sc.ago(minutes=53), component="deployment-controller")

    def ledger_gen(rng: random.Random, t: datetime) -> Line:
        if t >= broke and rng.random() < 0.8:
            return ("error", "ERROR [sync-worker-3] c.f.l.PaymentsGwClient - post failed: "
                             "javax.net.ssl.SSLHandshakeException: PKIX path validation failed: "
                             "java.security.cert.CertPathValidatorException: validity check "
                             "failed; caused by java.security.cert.CertificateNotYetValidException"
                             ": NotBefore: Wed Sep 09 08:07:12 UTC 2026",
                    {"error.type": "javax.net.ssl.SSLHandshakeException"})
        return ("info", f"INFO [sync-worker-{rng.randint(1, 4)}] c.f.l.SyncJob - posted "
                        f"{rng.randint(10, 300)} ledger entries to payments-gw", {})

    for p in ledger.pods:
        sc.log(sc.ago(minutes=54), p.ref, "info", "Picked up JAVA_TOOL_OPTIONS: "
               "-XX:MaxRAMPercentage=75 -Djavax.net.ssl.trustStore=/etc/pki/finco.jks")
        sc.chatter(p.ref, ledger_gen, 2.0, start=sc.ago(minutes=53))
        sc.usage(p, 0.2, 420e6)
    refund = deployment(sc, "refunds", "refund-worker", [
        Rev([Ctr("refund-worker", f"{REG}/refund-worker:1.18.4", port=3000)],
            sc.ago(days=5, hours=11), 2)], nodes=nodes, created=old, first_rev=30)

    def refund_gen(rng: random.Random, t: datetime) -> Line:
        if t >= broke and rng.random() < 0.75:
            return ("error", f"refund r_{rng.getrandbits(36):09x} failed: Error: certificate is "
                             "not yet valid (code=CERT_NOT_YET_VALID) calling "
                             "https://payments-gw.payments.svc/v1/refund; will retry",
                    {"error.type": "CERT_NOT_YET_VALID"})
        return ("info", f"refund r_{rng.getrandbits(36):09x} submitted, status=accepted", {})

    for p in refund.pods:
        sc.chatter(p.ref, refund_gen, 1.6)
        sc.chatter(p.ref, lines([("warn", "(node:1) [DEP0040] DeprecationWarning: The "
                                          "`punycode` module is deprecated.")]), 0.05)
        sc.usage(p, 0.05, 110e6)
    checkout = deployment(sc, "shop", "checkout", [
        Rev([Ctr("checkout", f"{REG}/checkout:9.1.7")], sc.ago(days=2, hours=3), 3)],
        nodes=nodes, created=old, first_rev=140)

    def checkout_gen(rng: random.Random, t: datetime) -> Line:
        if t >= broke and rng.random() < 0.04:
            return ("error", "payments-gw: new connection failed: tls: failed to verify "
                             "certificate: x509: certificate has expired or is not yet valid: "
                             f"current time {iso(t)} is before {NOT_BEFORE}", {})
        return ("info", f"order o_{rng.getrandbits(36):09x} authorized via payments-gw "
                        f"(h2 conn reused) in {rng.randint(30, 160)}ms", {})

    for p in checkout.pods:
        sc.chatter(p.ref, checkout_gen, 1.2)
        sc.chatter(p.ref, access_log(["/checkout", "/checkout/pay"], ms=(60, 300),
                                     method="POST"), 0.5)
        sc.usage(p, 0.15, 210e6)
    for wl, rate in ((ledger, 1.2), (refund, 0.6), (checkout, 2.0)):
        for p in wl.pods:
            for outcome in ("ok", "tls_error"):
                def fn(t: datetime, o: str = outcome, r: float = rate,
                       name: str = wl.name) -> float:
                    bad = t >= broke
                    share = {"ledger-sync": 0.8, "refund-worker": 0.75, "checkout": 0.04}[name]
                    if o == "ok":
                        return r * (1 - share) if bad else r
                    return r * share if bad else 0.0
                sc.counter("http_client_requests_total", "Outgoing HTTP calls.",
                           {"namespace": wl.ns, "service": wl.name, "pod": p.ref.pod,
                            "target": "payments-gw", "outcome": outcome}, fn,
                           start=sc.rng.uniform(1e4, 1e5) if outcome == "ok" else 12.0)
