"""Energy retailer: supplier switches stay "pending transmission". switch-dispatcher sends
the switch messages over AS4 to the market communication hub with an mTLS client
certificate mounted from the secret as4-client-tls; that certificate expired at 06:00:00Z
and was never renewed (it is issued by the hub's PKI, outside cert-manager), so the hub
rejects every handshake ("remote error: tls: expired certificate"). Signal: logs and the
x509-certificate-exporter's x509_cert_expired / x509_cert_not_after series, an outbox
gauge that grows. Red herrings: cert-manager renewed the customer portal's certificate at
05:52 (certificate-flavoured noise), tariff-engine 5.2.0 rolled out in the same namespace 41
min before the onset, an alert-looking "retry budget" warning in switch-dispatcher before
the onset, slow-redis warnings of the customer portal."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.scenario_tools.common import (
    Story,
    const,
    kube_system,
    namespaces,
    nodes,
    truth,
)
from tests.scenario_tools.kube import Ctr, Template, running
from tests.scenario_tools.parts import app, neighbour, rollout

from .kit13 import chatter, counter, gauge, line, plain_metrics

ID = "supplier-switches-pending"
NOW = datetime(2028, 6, 2, 6, 47, tzinfo=UTC)
NS = "switching"
REG = "ghcr.io/voltwerk-energie"
HUB = "as4.mako-hub-nord.de"


def build() -> Story:
    s = Story(ID, "Supplier switches stuck in pending transmission", NOW, """\
New customers' supplier switches aren't going out this morning, the switching backoffice
shows everything since about 6 o'clock as "pending transmission". Nothing looks down on
our side as far as I can tell. We have regulatory deadlines on these (24h), please check.
""", truth("certificate", "Deployment", NS, "switch-dispatcher",
           ["tls: expired certificate", "as4-client-tls", "x509_cert_expired",
            "2028-06-02T06:00:00Z"],
           "switch-dispatcher's AS4 client certificate (secret as4-client-tls, CN "
           "switch-dispatcher.voltwerk.de) expired at 06:00:00Z and the hub refuses the mTLS "
           "handshake. Request a new certificate from the hub PKI, update the secret and "
           "restart switch-dispatcher; the outbox then drains. Add the secret to expiry "
           "alerting."),
        hours=2.0)
    namespaces(s, NS, "customer-portal", "cert-manager", "billing", "monitoring")
    node_list = nodes(s, 4, subnet=37, region="eu-central-1", instance="c7i.xlarge",
                      days=3.8, stagger_hours=2.0)
    kube_system(s, node_list)
    expiry = datetime(2028, 6, 2, 6, 0, tzinfo=UTC)
    cut = expiry.timestamp()
    mount = [{"name": "as4-client-tls", "mountPath": "/etc/as4/tls", "readOnly": True}]
    vol = [{"name": "as4-client-tls", "secret": {"secretName": "as4-client-tls",
                                                 "defaultMode": 0o440}}]
    _, disp = app(
        s, NS, "switch-dispatcher", f"{REG}/switch-dispatcher:3.7.2", node_list, replicas=2,
        revision=29, rollout_at=s.ago(days=3, hours=1), rps=const(0.6),
        codes={"200": const(0.995), "500": const(0.005)}, median=const(0.03),
        cpu=const(0.04), memory_mib=95, limits={"memory": "256Mi"},
        requests={"cpu": "50m", "memory": "128Mi"},
        env={"AS4_ENDPOINT": f"https://{HUB}/msh", "AS4_CLIENT_CERT": "/etc/as4/tls/tls.crt",
             "AS4_CLIENT_KEY": "/etc/as4/tls/tls.key", "OUTBOX_POLL": "15s"},
        mounts=mount, volumes=vol)
    for pod in disp:
        labels = {"namespace": NS, "pod": pod["metadata"]["name"]}
        counter(s, "as4_messages_sent", {**labels, "result": "ok"},
                lambda t: 0.05 if t < cut else 0.0, "AS4 messages delivered to the hub.",
                start=s.rng.randrange(3000, 9000))
        counter(s, "as4_messages_sent", {**labels, "result": "failed"},
                lambda t: 0.0005 if t < cut else 0.07, "AS4 messages not delivered.",
                start=s.rng.randrange(10, 60))
        line(s, pod, "switch-dispatcher", s.ago(days=3, hours=1) + timedelta(seconds=40),
             "info", "loaded AS4 client certificate CN=switch-dispatcher.voltwerk.de "
             "issuer=MaKo-Hub-Nord Issuing CA 2 serial=4F:1A:92:0C notAfter=2028-06-02T06:00:00Z")
    gauge(s, "switch_outbox_pending_messages", {"namespace": NS, "queue": "utilmd-out"},
          lambda t: 3.0 + (0.0 if t < cut else (t - cut) / 60 * 2.1),
          "Switch messages waiting in the outbox.")
    for name, after, cn, sns in (
            ("as4-client-tls", expiry, "switch-dispatcher.voltwerk.de", NS),
            ("portal-tls", NOW + timedelta(days=89, minutes=-55), "mein.voltwerk.de",
             "customer-portal")):
        labels = {"secret_namespace": sns, "secret_name": name, "secret_key": "tls.crt",
                  "subject_CN": cn}
        gauge(s, "x509_cert_not_after", labels, const(after.timestamp()),
              "Indicates the certificate's not after timestamp")
        gauge(s, "x509_cert_expired", labels, lambda t, a=after: 1.0 if t >= a.timestamp()
              else 0.0, "Indicates if the certificate is expired")
    chatter(s, disp, "switch-dispatcher", [
        ("info", "UTILMD E01 switch SW-2028-0611790 sent to hub, receipt MDN ok", {}),
        ("info", "UTILMD E01 switch SW-2028-0611873 sent to hub, receipt MDN ok", {}),
        ("info", "APERAK received for SW-2028-0611802: accepted", {}),
    ], 60, end=expiry)
    chatter(s, disp, "switch-dispatcher", [
        ("warn", "retry budget 70% used for partner 9900080000007 (APERAK late)", {}),
    ], 5, end=expiry - timedelta(minutes=10))
    chatter(s, disp, "switch-dispatcher", [
        ("error", f'AS4 send failed for SW-2028-0612044: Post "https://{HUB}/msh": remote '
         "error: tls: expired certificate", {"error.type": "tls.alert"}),
        ("error", f'AS4 send failed for SW-2028-0612051: Post "https://{HUB}/msh": remote '
         "error: tls: expired certificate", {"error.type": "tls.alert"}),
        ("warn", "outbox: 40 messages pending, next attempt in 15s", {}),
    ], 120, start=expiry + timedelta(seconds=9))

    # ---- cert-manager renewed another certificate shortly before
    c = s.cluster
    cm = Ctr("cert-manager-controller", "quay.io/jetstack/cert-manager-controller:v1.16.2",
             port=9402, port_name="http-metrics", requests={"cpu": "10m", "memory": "64Mi"},
             limits={"memory": "256Mi"})
    cmw = c.workload("Deployment", "cert-manager", "cert-manager",
                     Template([cm], service_account="cert-manager"), replicas=1,
                     created=s.ago(days=500))
    cm_rs = c.revision(cmw, 9, s.ago(days=3, hours=5))
    cm_pod = c.pod(cmw, cm_rs, node=node_list[0], created=s.ago(days=3, hours=5),
                   statuses={"cert-manager-controller": running(s.ago(days=3, hours=5) +
                                                                timedelta(seconds=7))})
    plain_metrics(s, [cm_pod], "cert-manager-controller", 48, 0.005)
    renewed = expiry - timedelta(minutes=8)
    for k, msg in enumerate((
            'cert-manager/certificates-trigger "msg"="Certificate must be re-issued" '
            '"reason"="Renewing" "message"="Renewing certificate as renewal was scheduled at '
            '2028-06-02 05:52:00 +0000 UTC" "key"="customer-portal/portal-tls"',
            'cert-manager/orders "msg"="acme order is in pending state" '
            '"resource_name"="portal-tls-1-3310027512"',
            'cert-manager/certificates-issuing "msg"="Issued certificate" '
            '"key"="customer-portal/portal-tls"')):
        line(s, cm_pod, "cert-manager-controller", renewed + timedelta(seconds=25 * k),
             "info", msg, service="cert-manager")
    chatter(s, [cm_pod], "cert-manager-controller", [
        ("info", 'cert-manager/challenges "msg"="propagation check passed" '
         '"dnsName"="mein.voltwerk.de"', {}),
    ], 4, start=renewed, end=renewed + timedelta(minutes=2), service="cert-manager")

    # ---- red herring rollout in the same namespace
    at = expiry - timedelta(minutes=41)

    def engine(version: str) -> Ctr:
        return Ctr("tariff-engine", f"{REG}/tariff-engine:{version}", port=8080,
                   requests={"cpu": "200m", "memory": "384Mi"}, limits={"memory": "512Mi"})
    roll = rollout(s, NS, "tariff-engine", engine, old="5.1.9", new="5.2.0", at=at,
                   revision=61, replicas=2, node_list=node_list)
    plain_metrics(s, roll.new_pods + roll.old_pods, "tariff-engine", 260, 0.06)
    chatter(s, roll.new_pods, "tariff-engine", [
        ("info", "grid fee table 2028-H2 loaded for 862 network operators", {}),
        ("warn", "postcode 25999 maps to 2 grid areas, using default DSO", {}),
        ("info", "POST /quotes 200 (14ms)", {}),
    ], 40, start=at + timedelta(minutes=1))
    neighbour(s, "customer-portal", "portal-web", f"{REG}/portal-web:2028.5.4", node_list,
              replicas=2, memory_mib=180, port=3000, logs=[
                  ("info", "GET /vertrag 200", {}),
                  ("warn", "session store: slow redis GET 212ms", {})], n_logs=20)
    neighbour(s, "billing", "invoice-run", f"{REG}/invoice-run:8.0.1", node_list,
              replicas=1, memory_mib=300, logs=[
                  ("info", "invoice batch 2028-05 chunk 14/40 done", {})], n_logs=8)
    return s
