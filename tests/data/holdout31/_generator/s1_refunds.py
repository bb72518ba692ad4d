"""Shape 1: a caller's mutual-TLS client certificate expired.

refund-worker reads a static client certificate from a Secret volume that nobody renews
(the other callers get theirs from the cert-manager CSI driver, rotated daily). At
03:00 the certificate's notAfter passed; ledger-api rejects the handshake of that one
caller and the worker logs "remote error: tls: bad certificate". The report blames the
server. The side to fix is the caller: its certificate must be re-issued.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from . import kube
from .emit import Scenario
from .fleet import App, app, basic_signals, chatter, make_nodes, platform, simple

ID = "refunds-not-going-out"
NOW = datetime.fromisoformat("2026-11-29T09:40:00+00:00")
EXPIRY = datetime.fromisoformat("2026-11-29T03:00:00+00:00")
NS = "payments"


def _csi_volume(name: str) -> dict[str, object]:
    attributes = {"csi.cert-manager.io/issuer-name": "payments-mtls-ca",
                  "csi.cert-manager.io/issuer-kind": "ClusterIssuer",
                  "csi.cert-manager.io/dns-names": f"{name}.payments.svc",
                  "csi.cert-manager.io/duration": "72h",
                  "csi.cert-manager.io/renew-before": "24h"}
    return {"name": "client-tls", "csi": {"driver": "csi.cert-manager.io", "readOnly": True,
                                          "volumeAttributes": attributes}}


def _client(name: str, image: str) -> list[dict[str, object]]:
    mounts = [{"name": "client-tls", "mountPath": "/etc/mtls", "readOnly": True}]
    env = {"LEDGER_ADDR": "ledger-api.payments.svc.cluster.local:8443",
           "TLS_CERT_FILE": "/etc/mtls/tls.crt", "TLS_KEY_FILE": "/etc/mtls/tls.key",
           "TLS_CA_FILE": "/etc/mtls/ca.crt"}
    return [kube.container(name, image, requests={"cpu": "100m", "memory": "128Mi"},
                           limits={"memory": "256Mi"}, port=8080, env=env,
                           readiness="/readyz", liveness="/healthz", mounts=mounts)]


def build() -> Scenario:
    rng = random.Random(31_01)
    sc = Scenario(
        id=ID, title="Refunds stuck since early morning", now=NOW,
        report=(
            "refunds haven't gone out since sometime last night, support has ~40 tickets. "
            "ledger-api is logging a ton of TLS handshake errors - did someone rotate the "
            "ledger cert?? checkout still works as far as I can tell\n"),
        truth={"category": "certificate",
               "culprit": {"kind": "Deployment", "namespace": NS, "name": "refund-worker"},
               "evidence": ["remote error: tls: bad certificate",
                            "x509: certificate has expired or is not yet valid",
                            "not_after=2026-11-29T03:00:00Z", "refund-worker-client-tls"],
               "fix": "Re-issue refund-worker's client certificate (Secret "
                      "refund-worker-client-tls) and move it to the cert-manager CSI driver "
                      "like the other callers so it renews; ledger-api is fine."})
    created = NOW - timedelta(days=210)
    sc.add(kube.namespace(NS, created, {"team": "payments"}))
    nodes = make_nodes(sc, ["ip-10-0-1-21.eu-west-1.compute.internal",
                            "ip-10-0-1-22.eu-west-1.compute.internal",
                            "ip-10-0-2-23.eu-west-1.compute.internal"],
                       created=NOW - timedelta(days=19),
                       labels={"node.kubernetes.io/instance-type": "m6i.2xlarge",
                               "eks.amazonaws.com/nodegroup": "general-2026-11"})
    since = NOW - timedelta(days=6, hours=3)
    platform(sc, rng, nodes, created, since=since)

    ledger_images = [("registry.internal/payments/ledger-api:4.11.0", NOW - timedelta(days=23)),
                     ("registry.internal/payments/ledger-api:4.12.1",
                      NOW - timedelta(days=2, hours=5))]
    ledger = app(sc, rng, "ledger-api", NS, images=ledger_images, replicas=3, nodes=nodes,
                 created=created, port=8443,
                 containers=simple("ledger-api", port=8443, cpu="500m", memory="1Gi",
                                   limit_memory="2Gi", probe="/healthz",
                                   env={"MTLS_CLIENT_AUTH": "require",
                                        "MTLS_CA_FILE": "/etc/ledger-tls/ca.crt"}))
    refund_spec = {"volumes": [{"name": "client-tls", "secret": {
        "secretName": "refund-worker-client-tls", "defaultMode": 420}}]}
    refund_started = NOW - timedelta(days=4, hours=19, minutes=28)
    refund = app(sc, rng, "refund-worker", NS, replicas=2, nodes=nodes[1:], created=created,
                 images=[("registry.internal/payments/refund-worker:2.7.3",
                          NOW - timedelta(days=41))],
                 pod_started=refund_started, spec_extra=refund_spec,
                 containers=lambda image: _client("refund-worker", image))
    clients: list[App] = []
    for name, replicas, image in (
            ("checkout-gateway", 3, "registry.internal/payments/checkout-gateway:7.2.0"),
            ("payout-scheduler", 1, "registry.internal/payments/payout-scheduler:1.19.4")):
        clients.append(app(sc, rng, name, NS, replicas=replicas, nodes=nodes, created=created,
                           images=[(image, NOW - timedelta(days=9, hours=rng.randint(1, 20)))],
                           spec_extra={"volumes": [_csi_volume(name)]},
                           containers=lambda image, n=name: _client(n, image)))
    fraud = app(sc, rng, "fraud-scorer", NS, replicas=2, nodes=nodes, created=created,
                images=[("registry.internal/risk/fraud-scorer:0.33.0", NOW - timedelta(days=12))],
                containers=simple("fraud-scorer", cpu="250m", memory="512Mi",
                                  limit_memory="1Gi", probe="/ready"))
    sc.add({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": kube.meta("refund-worker-config", NS, created,
                                  labels={"app": "refund-worker"}),
            "data": {"BATCH_SIZE": "50", "RETRY_MAX_ATTEMPTS": "10",
                     "LEDGER_TIMEOUT": "5s", "QUEUE_ALERT_DEPTH": "1000"}})

    _ledger_logs(sc, rng, ledger, refund, clients)
    _refund_logs(sc, rng, refund, ledger)
    _bystanders(sc, rng, clients, fraud)
    start = NOW - timedelta(hours=6)
    for target, rps in ((ledger, 22.0), (clients[0], 14.0), (clients[1], 0.4), (fraud, 9.0)):
        basic_signals(sc, target, start, NOW, rps=rps, cores=0.2, mem_mib=600,
                      )
    basic_signals(sc, refund, start, NOW, cores=0.03, mem_mib=90)
    return sc


def _ledger_logs(sc: Scenario, rng: random.Random, ledger: App, refund: App,
                 clients: list[App]) -> None:
    peers = [(p["status"]["podIP"], c.name) for c in clients for p in c.pods]
    refund_ips = [p["status"]["podIP"] for p in refund.pods]
    before = peers + [(ip, "refund-worker") for ip in refund_ips]
    start = NOW - timedelta(hours=12)
    for pod_obj in ledger.pods:
        pod_name = pod_obj["metadata"]["name"]
        at = start + timedelta(seconds=rng.randint(0, 40))
        while at < NOW:
            ip, cn = rng.choice(before if at < EXPIRY else peers)
            method = rng.choice(["PostEntry", "PostEntry", "GetBalance", "ListEntries"])
            ms = rng.randint(4, 38)
            sc.both(at, service="ledger-api", ns=NS, pod=pod_name, container="ledger-api",
                    level="info", message=f"grpc /ledger.v1.Ledger/{method} code=OK "
                    f"peer={ip}:{rng.randint(32768, 60999)} peer_cn={cn}.payments.svc "
                    f"duration={ms}ms")
            at += timedelta(seconds=rng.randint(40, 100))
        at = EXPIRY + timedelta(seconds=rng.randint(2, 30))
        while at < NOW:
            ip = rng.choice(refund_ips)
            port = rng.randint(32768, 60999)
            sc.both(at, service="ledger-api", ns=NS, pod=pod_name, container="ledger-api",
                    level="warn", message=f"tls handshake failed peer={ip}:{port} "
                    f"alert=bad_certificate error=\"tls: failed to verify certificate: x509: "
                    f"certificate has expired or is not yet valid: current time "
                    f"{kube.ts(at)} is after {kube.ts(EXPIRY)}\"")
            at += timedelta(seconds=rng.randint(20, 75))
        for hours in (11, 7, 3, 1):
            at = NOW - timedelta(hours=hours, minutes=rng.randint(0, 50))
            sc.both(at, service="ledger-api", ns=NS, pod=pod_name, container="ledger-api",
                    level="info", message="reloaded serving certificate /etc/ledger-tls/tls.crt "
                    "not_after=2026-12-01T21:14:09Z (unchanged)")
        sc.both(NOW - timedelta(minutes=rng.randint(15, 50)), service="ledger-api", ns=NS,
                pod=pod_name, container="ledger-api", level="warn",
                message="slow query: SELECT ... FROM entries WHERE account_id=$1 took 812ms")


def _refund_logs(sc: Scenario, rng: random.Random, refund: App, ledger: App) -> None:
    del ledger
    for index, pod_obj in enumerate(refund.pods):
        pod_name = pod_obj["metadata"]["name"]
        boot = datetime.fromisoformat(
            pod_obj["status"]["containerStatuses"][0]["state"]["running"]["startedAt"]
            .replace("Z", "+00:00"))
        for offset, (level, message) in enumerate((
                ("info", "refund-worker 2.7.3 starting (go1.22.7)"),
                ("info", "config: batch_size=50 retry_max_attempts=10 ledger_timeout=5s"),
                ("info", "client certificate loaded subject=\"CN=refund-worker.payments.svc\" "
                         "issuer=\"CN=payments-mtls-ca\" serial=5e:19:a4:0c:77 "
                         f"not_after={kube.ts(EXPIRY)}"),
                ("info", "connected to ledger ledger-api.payments.svc.cluster.local:8443"),
                ("info", "consuming queue refunds.pending (prefetch=50)"))):
            sc.both(boot + timedelta(seconds=1 + offset), service="refund-worker", ns=NS,
                    pod=pod_name, container="refund-worker", level=level, message=message)
        at = boot + timedelta(minutes=1, seconds=index * 13)
        batch = 7100 + index * 5000
        while at < EXPIRY:
            batch += 1
            n = rng.randint(3, 48)
            sc.log(NS, pod_name, "refund-worker", at, f"INFO  refund batch {batch} posted "
                   f"to ledger refunds={n} duration={rng.randint(80, 420)}ms")
            if at > NOW - timedelta(hours=12):
                sc.doc(at, service="refund-worker", ns=NS, pod=pod_name,
                       container="refund-worker", level="info",
                       message=f"refund batch {batch} posted to ledger refunds={n} "
                       f"duration={rng.randint(80, 420)}ms")
            at += timedelta(minutes=rng.randint(4, 9))
        at = EXPIRY + timedelta(seconds=rng.randint(3, 40))
        attempt = 0
        depth = 180
        while at < NOW:
            attempt = attempt % 10 + 1
            depth += rng.randint(3, 14)
            sc.both(at, service="refund-worker", ns=NS, pod=pod_name, container="refund-worker",
                    level="error", message="ledger PostEntry failed: rpc error: code = "
                    "Unavailable desc = connection error: desc = \"transport: authentication "
                    "handshake failed: remote error: tls: bad certificate\"",
                    error__type="grpc.Unavailable")
            if attempt == 10:
                sc.both(at + timedelta(seconds=1), service="refund-worker", ns=NS,
                        pod=pod_name, container="refund-worker", level="warn",
                        message=f"refund batch {batch} parked after 10 attempts, will retry "
                        "from dead-letter in 15m")
                batch += 1
            if depth > 1000 and attempt == 5:
                sc.both(at + timedelta(seconds=2), service="refund-worker", ns=NS,
                        pod=pod_name, container="refund-worker", level="warn",
                        message=f"queue refunds.pending depth {depth} above alert threshold 1000")
            at += timedelta(seconds=rng.randint(30, 90))


def _bystanders(sc: Scenario, rng: random.Random, clients: list[App], fraud: App) -> None:
    start = NOW - timedelta(hours=12)
    chatter(sc, clients[0], start, NOW, timedelta(minutes=3), [
        ("info", "POST /v1/checkout/authorize 200 {ms}ms"),
        ("info", "ledger entry posted order={id} duration={ms}ms"),
        ("info", "POST /v1/checkout/capture 200 {ms}ms"),
        ("warn", "card network soft decline order={id} code=51, not retried"),
    ], rng)
    chatter(sc, clients[1], start, NOW, timedelta(minutes=10), [
        ("info", "payout run scheduled merchants={n}"),
        ("info", "ledger balance read merchant={id} duration={ms}ms"),
    ], rng)
    chatter(sc, fraud, start, NOW, timedelta(minutes=4), [
        ("info", "scored txn={id} score=0.0{ms} model=gbm-2026-11-02"),
        ("info", "scored txn={id} score=0.1{ms} model=gbm-2026-11-02"),
        ("warn", "feature store lookup slow key=merchant:{id} {n}ms"),
    ], rng)
    pod_name = fraud.pods[1]["metadata"]["name"]
    ip = fraud.pods[1]["status"]["podIP"]
    sc.add(kube.event(NS, kind="Pod", name=pod_name, reason="Unhealthy", type="Warning",
                      message=f'Readiness probe failed: Get "http://{ip}:8080/ready": '
                              "context deadline exceeded (Client.Timeout exceeded while "
                              "awaiting headers)",
                      first=NOW - timedelta(minutes=38), last=NOW - timedelta(minutes=37),
                      count=2, host=fraud.pods[1]["spec"]["nodeName"],
                      field_path="spec.containers{fraud-scorer}"))
