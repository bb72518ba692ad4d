"""E-signature: signing a contract fails at the last step. The internal timestamp authority
(RFC 3161) is served over HTTPS by a ghostunnel sidecar in front of the TSA; its serving
certificate, issued by hand from the internal CA a year ago and mounted from the Secret
timestamp-authority-tls, expired at 07:00 UTC. Every client now rejects the handshake:
envelope-service (Go) with an x509 expiry error, audit-trail (Java) with a PKIX validity
error, and ghostunnel logs the clients' alerts. Nothing restarted; the TSA behind the proxy
simply receives no requests any more."""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import partial

from tests.data.holdout._generator.base import configmap, gauge, set_times
from tests.data.holdout2._generator.kit import NodeKind, app_counter, requests
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, http_probe, tcp_probe

from .kit3 import (
    Incident,
    chatter,
    civo_nodes,
    log_pod,
    namespaces,
    quiet,
    service_range,
    steady,
    times_of,
)

ID = "contract-signing-errors"
NOW = datetime.fromisoformat("2027-04-27T08:05:00+00:00")
EXPIRY = datetime.fromisoformat("2027-04-27T07:00:00+00:00")
REG = "registry.signwise.eu"
TSA = "timestamp-authority.trust-services.svc"


def build() -> Incident:
    s = Incident(
        id=ID,
        title="Contracts cannot be signed: timestamping fails",
        now=NOW,
        report="""\
Since 09:00 our time customers cannot complete signing: the final "Sign" step shows
"Signature could not be timestamped, please try again later" for every envelope. The audit
trail PDF export fails too. It started exactly on the hour and nothing was deployed this
morning. Big customers are escalating, please help.
""",
        truth=truth(
            "certificate", "Deployment", "trust-services", "timestamp-authority",
            ["x509: certificate has expired or is not yet valid",
             "is after 2027-04-27T07:00:00Z", "CertificateExpiredException",
             "remote error: tls: bad certificate", "timestamp-authority-tls"],
            "The serving certificate of timestamp-authority (ghostunnel sidecar, Secret "
            "timestamp-authority-tls, issued by hand from the internal CA) expired at 07:00 "
            "UTC and every client rejects it: issue a new certificate for "
            f"{TSA}, update the Secret and restart timestamp-authority; then let cert-manager "
            "issue and rotate it so it cannot lapse again."))
    set_times(s, 2.0, 60)
    service_range(s, lambda a, b: f"10.43.{a}.{b}")
    c = s.cluster
    namespaces(s, {"default": 488, "kube-system": 488, "trust-services": 470, "signing": 470,
                   "accounting": 320, "cert-manager": 470})
    kind = NodeKind("g4s.kube.large", "4", "8139256Ki", "4", "8139256Ki", "v1.30.5+k3s1",
                    "5.15.0-126-generic", "Ubuntu 22.04.5 LTS",
                    runtime="containerd://1.7.21-k3s2", storage="81106868Ki",
                    alloc_storage="78901208620")
    nodes = civo_nodes(s, 4, cluster="signwise-prod-7c31", pool_id="a4e1c9d2-77f0",
                       size="g4s.kube.large", kind=kind, region="LON1", days=6.1)
    exp = EXPIRY.timestamp()

    # ---- timestamp-authority: the TSA behind a ghostunnel sidecar
    tsa = Ctr("tsa", f"{REG}/trust/timestamp-authority:2.4.0", port=8080,
              requests={"cpu": "250m", "memory": "512Mi"}, limits={"memory": "1Gi"},
              env={"TSA_POLICY_OID": "1.3.6.1.4.1.58231.1.3.1", "HSM_SLOT": "2",
                   "JAVA_TOOL_OPTIONS": "-XX:MaxRAMPercentage=60", "BIND": "127.0.0.1:8080"},
              readiness=http_probe("/health", "http", delay=15))
    proxy = Ctr("tls-proxy", "ghcr.io/ghostunnel/ghostunnel:v1.8.4", port=8443,
                port_name="https", requests={"cpu": "50m", "memory": "32Mi"},
                limits={"memory": "128Mi"},
                args=["server", "--listen=0.0.0.0:8443", "--target=127.0.0.1:8080",
                      "--cert=/etc/tsa-tls/tls.crt", "--key=/etc/tsa-tls/tls.key",
                      "--disable-authentication", "--status=localhost:6060"],
                readiness=tcp_probe("https"),
                mounts=[{"name": "tls", "mountPath": "/etc/tsa-tls", "readOnly": True}])
    rollout = s.ago(days=3, hours=21, minutes=48)
    _, tsas = steady(s, "trust-services", "timestamp-authority", [tsa, proxy], nodes=nodes,
                     replicas=2, revision=12, rollout=rollout, service=8443, target="https",
                     volumes=[{"name": "tls", "secret": {"secretName": "timestamp-authority-tls",
                                                         "defaultMode": 420}}],
                     labels={"app.kubernetes.io/name": "timestamp-authority",
                             "app.kubernetes.io/part-of": "trust-services"})

    def tsa_rate(t: int) -> float:
        return 2.2 * (1 + 0.4 * min(1.0, max(0.0, (t % 86400 / 3600 - 5.5) / 2)))

    for pod in tsas:
        times = times_of(s, pod)
        requests(s, pod, "timestamp-authority", rps=lambda t: tsa_rate(t) / 2 if t < exp
                 else 0.0, times=times, codes={"200": lambda t: 1.0})
        app_counter(s, "tsa_tokens_issued_total", {"namespace": "trust-services",
                                                   "pod": pod["metadata"]["name"]},
                    times, lambda t: tsa_rate(t) / 2 * 0.999 if t < exp else 0.0,
                    "RFC 3161 time-stamp tokens issued.")
    quiet(s, tsas, "tsa", 590)
    for pod in tsas:
        log_pod(s, pod, "tsa", "timestamp-authority", [
            ("info", "issued token serial 0x5c1e... policy 1.3.6.1.4.1.58231.1.3.1 for SHA-256 "
             "digest", {}),
            ("info", "HSM slot 2 session pool 8/8 healthy", {}),
        ], 30, end=EXPIRY)
        log_pod(s, pod, "tsa", "timestamp-authority", [
            ("info", "HSM slot 2 session pool 8/8 healthy", {}),
        ], 4, start=EXPIRY)

    # ---- callers in signing
    def client(ok: bool, t: int) -> float:
        return tsa_rate(t) * 0.8 / 3 * (float(t < exp) if ok else float(t >= exp))

    env_ctr = Ctr("envelope-service", f"{REG}/signing/envelope-service:7.2.1", port=8080,
                  requests={"cpu": "250m", "memory": "256Mi"}, limits={"memory": "512Mi"},
                  env={"TSA_URL": f"https://{TSA}:8443/tsa", "TSA_CA_FILE":
                       "/etc/ssl/internal/ca-bundle.pem"},
                  readiness=http_probe("/readyz", "http", delay=5),
                  mounts=[{"name": "internal-ca", "mountPath": "/etc/ssl/internal"}])
    _, envs = steady(s, "signing", "envelope-service", [env_ctr], nodes=nodes, replicas=3,
                     revision=146, rollout=s.ago(days=1, hours=22, minutes=5),
                     volumes=[{"name": "internal-ca", "configMap": {
                         "name": "internal-ca-bundle"}}], offset=1)
    for pod in envs:
        times = times_of(s, pod)
        requests(s, pod, "envelope-service", rps=lambda t: tsa_rate(t) * 0.8 / 3 * 4,
                 times=times, codes={
                     "200": lambda t: 0.985 if t < exp else 0.76,
                     "400": lambda t: 0.015,
                     "502": lambda t: 0.0 if t < exp else 0.225})
        for result in ("ok", "tls_error"):
            app_counter(s, "tsa_client_requests_total", {"namespace": "signing",
                                                         "pod": pod["metadata"]["name"],
                                                         "result": result}, times,
                        partial(client, result == "ok"),
                        "Requests to the timestamp authority by result.", start=0
                        if result == "tls_error" else None)
    quiet(s, envs, "envelope-service", 140)
    for pod in envs:
        log_pod(s, pod, "envelope-service", "envelope-service", [
            ("info", "envelope ENV-7Q2K91 signed by 2/2 signers, timestamp token received "
             "(TSA serial 0x5c1e..)", {}),
            ("warn", "webhook https://hooks.customer-a.example/esign returned 410 Gone, "
             "disabling after 5 failures", {}),
            ("info", "POST /v2/envelopes 201", {"http.response.status_code": 201}),
        ], 40, end=EXPIRY)
        where = pod["spec"]["nodeName"]
        t = EXPIRY + timedelta(seconds=s.rng.uniform(0.5, 20))
        while t < NOW:
            env_id = f"ENV-{c.token(6).upper()}"
            s.logs.add(t, "error", f"timestamping envelope {env_id} failed: Post \"https://"
                       f"{TSA}:8443/tsa\": tls: failed to verify certificate: x509: certificate "
                       f"has expired or is not yet valid: current time "
                       f"{t.strftime('%Y-%m-%dT%H:%M:%SZ')} is after 2027-04-27T07:00:00Z",
                       namespace="signing", pod=pod["metadata"]["name"],
                       container="envelope-service", service="envelope-service", node=where,
                       **{"error.type": "*tls.CertificateVerificationError"})
            if s.rng.random() < 0.4:
                s.logs.add(t + timedelta(milliseconds=4), "warn", f"POST /v2/envelopes/{env_id}"
                           "/complete 502: signature could not be timestamped",
                           namespace="signing", pod=pod["metadata"]["name"],
                           container="envelope-service", service="envelope-service",
                           node=where, **{"http.response.status_code": 502})
            t += timedelta(seconds=s.rng.uniform(25, 70))
    audit = Ctr("audit-trail", f"{REG}/signing/audit-trail:3.0.7", port=8080,
                requests={"cpu": "200m", "memory": "768Mi"}, limits={"memory": "1Gi"},
                env={"TSA_URL": f"https://{TSA}:8443/tsa",
                     "JAVA_TOOL_OPTIONS": "-Djavax.net.ssl.trustStore=/etc/ssl/internal/"
                     "truststore.p12 -XX:MaxRAMPercentage=70"},
                readiness=http_probe("/actuator/health/readiness", "http", delay=25))
    _, audits = steady(s, "signing", "audit-trail", [audit], nodes=nodes, replicas=2,
                       revision=58, rollout=s.ago(days=5, hours=3), offset=2)
    quiet(s, audits, "audit-trail", 655)
    for pod in audits:
        log_pod(s, pod, "audit-trail", "audit-trail", [
            ("info", "audit trail PDF for ENV-7Q2K91 sealed and timestamped (3 pages)", {}),
            ("warn", "font cache rebuilt (took 1.8s)", {}),
        ], 16, end=EXPIRY)
        log_pod(s, pod, "audit-trail", "audit-trail", [
            ("error", "Sealing audit trail failed: javax.net.ssl.SSLHandshakeException: PKIX "
             "path validation failed: java.security.cert.CertPathValidatorException: validity "
             "check failed; Caused by: java.security.cert.CertificateExpiredException: NotAfter: "
             "Tue Apr 27 07:00:00 UTC 2027",
             {"error.type": "javax.net.ssl.SSLHandshakeException"}),
            ("warn", "retrying TSA request in 30s (attempt 3/5)", {}),
        ], 26, start=EXPIRY)

    # ghostunnel in front of the TSA sees the clients' alerts
    callers = [(p["status"]["podIP"], "bad certificate") for p in envs] + \
        [(p["status"]["podIP"], "unknown certificate") for p in audits]
    for pod in tsas:
        name = pod["metadata"]["name"]
        where = pod["spec"]["nodeName"]
        born = datetime.fromisoformat(pod["metadata"]["creationTimestamp"].replace("Z",
                                                                                   "+00:00"))
        start = born + timedelta(seconds=9)
        for off, msg in ((0.01, "starting ghostunnel in server mode"),
                         (0.02, "using target address 127.0.0.1:8080"),
                         (0.05, "listening for connections on 0.0.0.0:8443")):
            s.logs.add(start + timedelta(seconds=off), "info", msg, namespace="trust-services",
                       pod=name, container="tls-proxy", service="timestamp-authority",
                       node=where)
        t = EXPIRY + timedelta(seconds=s.rng.uniform(1, 30))
        while t < NOW:
            ip, alert = s.rng.choice(callers)
            port = s.rng.randrange(33000, 60999)
            s.logs.add(t, "error", f"error on TLS handshake from {ip}:{port}: remote error: "
                       f"tls: {alert}", namespace="trust-services",
                       pod=name, container="tls-proxy", service="timestamp-authority",
                       node=where)
            t += timedelta(seconds=s.rng.uniform(30, 80))

    # the CA bundle (trust-manager) changed yesterday: a plausible suspect, unrelated
    configmap(s, "signing", "internal-ca-bundle", {
        "ca-bundle.pem": "-----BEGIN CERTIFICATE-----\nMIIFazCCA1OgAwIBAgIUQ3b6...(SignWise "
        "Internal Root CA G2)\n-----END CERTIFICATE-----\n-----BEGIN CERTIFICATE-----\n"
        "MIIF2TCCA8GgAwIBAgIUBk1p...(SignWise Internal Issuing CA 2026)\n-----END "
        "CERTIFICATE-----\n"},
              created=s.ago(days=470), labels={"trust.cert-manager.io/bundle":
                                               "internal-ca-bundle"},
              edited=("trust-manager", s.ago(hours=15, minutes=53)))

    # ---- the public side: signing-web behind Traefik with a valid certificate
    web = Ctr("signing-web", f"{REG}/signing/signing-web:2027.17.0", port=3000,
              requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "512Mi"},
              readiness=http_probe("/api/health", "http", delay=5))
    _, webs = steady(s, "signing", "signing-web", [web], nodes=nodes, replicas=2, revision=311,
                     rollout=s.ago(days=1, hours=3), offset=3)
    quiet(s, webs, "signing-web", 190)
    chatter(s, webs, "signing-web", "signing-web", [
        ("info", "GET /sign/ENV-7Q2K91 200", {"http.response.status_code": 200}),
        ("warn", "GET /sign/ENV-0000 404", {"http.response.status_code": 404}),
    ], 30)
    chatter(s, webs, "signing-web", "signing-web", [
        ("error", "POST /api/envelopes/complete -> envelope-service 502 'signature could not be "
         "timestamped'", {"http.response.status_code": 502}),
    ], 20, start=EXPIRY)
    c.add({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
           "metadata": c.meta("Ingress", "signing-web", "signing", s.ago(days=470),
                              {"app.kubernetes.io/name": "signing-web"},
                              annotations={"cert-manager.io/cluster-issuer": "letsencrypt-prod"},
                              generation=2),
           "spec": {"ingressClassName": "traefik",
                    "rules": [{"host": "app.signwise.eu", "http": {"paths": [{
                        "path": "/", "pathType": "Prefix", "backend": {"service": {
                            "name": "signing-web", "port": {"number": 80}}}}]}}],
                    "tls": [{"hosts": ["app.signwise.eu"], "secretName": "signing-web-tls"}]},
           "status": {"loadBalancer": {"ingress": [{"ip": "74.220.21.137"}]}}})
    traefik = Ctr("traefik", "rancher/mirrored-library-traefik:2.11.18", port=8000,
                  port_name="web", requests={"cpu": "100m", "memory": "64Mi"},
                  limits={"memory": "256Mi"})
    _, traefiks = steady(s, "kube-system", "traefik", [traefik], nodes=nodes, replicas=1,
                         revision=3, rollout=s.ago(days=6), service=None,
                         labels={"app.kubernetes.io/name": "traefik",
                                 "app.kubernetes.io/instance": "traefik-kube-system"})
    chatter(s, traefiks, "traefik", "traefik", [
        ("error", "http: TLS handshake error from 185.224.128.17:51234: tls: client offered "
         "only unsupported versions: [302 301]", {}),
        ("error", "http: TLS handshake error from 45.148.10.92:40118: remote error: tls: "
         "unknown certificate", {}),
        ("info", "Configuration loaded from provider kubernetes", {}),
    ], 24)
    cm = Ctr("cert-manager-controller", "quay.io/jetstack/cert-manager-controller:v1.17.2",
             port=9402, port_name="http-metrics", requests={"cpu": "10m", "memory": "64Mi"},
             limits={"memory": "256Mi"})
    _, cms = steady(s, "cert-manager", "cert-manager", [cm], nodes=nodes, replicas=1,
                    revision=9, rollout=s.ago(days=4, hours=2), service=None)
    chatter(s, cms, "cert-manager-controller", "cert-manager", [
        ("info", "\"certificate does not require re-issuance. certificate renewal scheduled "
         "near expiry time\" logger=\"cert-manager.certificates-trigger\" key=\"signing/"
         "signing-web-tls\"", {}),
        ("info", "\"re-queuing item due to optimistic locking on resource\" key=\"signing/"
         "signing-web-tls\"", {}),
    ], 10)
    gauge(s, "certmanager_certificate_expiration_timestamp_seconds",
          {"namespace": "signing", "name": "signing-web-tls", "issuer_name": "letsencrypt-prod",
           "issuer_kind": "ClusterIssuer"}, lambda t: 1813190400.0,
          "The date after which the certificate expires. Expressed as a Unix Epoch Time.")

    # ---- accounting: a worker that restarted yesterday, a probe blip now
    sync = Ctr("invoice-sync", f"{REG}/accounting/invoice-sync:1.3.2", port=8080,
               requests={"cpu": "100m", "memory": "256Mi"}, limits={"memory": "384Mi"},
               readiness=http_probe("/ready", "http", delay=5, timeout=1))
    _, syncs = steady(s, "accounting", "invoice-sync", [sync], nodes=nodes, replicas=1,
                      revision=22, rollout=s.ago(days=5, hours=6),
                      restarted={0: (s.ago(hours=19, minutes=42), "Error", 1)})
    quiet(s, syncs, "invoice-sync", 160)
    chatter(s, syncs, "invoice-sync", "invoice-sync", [
        ("info", "pushed 14 invoices to Xero", {}),
        ("warn", "Xero API rate limit: 57/60 calls this minute, backing off 4s", {}),
    ], 16)
    blip = NOW - timedelta(minutes=12, seconds=33)
    c.event(syncs[0], "Unhealthy", f'Readiness probe failed: Get "http://'
            f'{syncs[0]["status"]["podIP"]}:8080/ready": context deadline exceeded (Client.'
            "Timeout exceeded while awaiting headers)", first=blip, type_="Warning",
            field_path="spec.containers{invoice-sync}")
    return s
