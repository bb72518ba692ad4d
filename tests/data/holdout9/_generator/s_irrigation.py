"""Irrigation cooperative: schedules do not reach the fields since the early morning. The
field controllers (LTE, outside the cluster) connect over mutual TLS to the StatefulSet
valve-gateway, which serves the certificate CN=fields.aquafield.coop from the secret
valve-gateway-tls, issued by the cooperative's own CA a year ago and never renewed. It
expired at 06:00: from then on every controller that reconnects rejects the handshake
("remote error: tls: expired certificate"), the connected controllers fall from ~1400 to a
few hundred and schedule-planner queues the schedules of "offline" controllers. The pods
stay Running and Ready (the probes use plain HTTP); the cause is in logs and metrics
(x509-certificate-exporter). Red herrings: weather-ingest 3.8.0 rolled out 80 min ago in the
same namespace (healthy), an old OOM restart of telemetry-store, LTE keepalive timeouts at
the usual rate, and cert-manager in its own namespace failing an unrelated ACME order."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import gauge, set_times
from tests.data.holdout2._generator.kit import app_counter, cpu_seconds, statefulset
from tests.data.holdout3._generator.kit3 import (
    chatter,
    log_pod,
    namespaces,
    quiet,
    steady,
)
from tests.data.holdout4._generator.kit4 import ramp
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, Template, http_probe

from .kit9 import Incident, NodeKind, provider_nodes

ID = "valve-schedules-not-applied"
NOW = datetime.fromisoformat("2028-05-21T07:52:00+00:00")
NS = "irrigation"
REG = "registry.aquafield.coop/irrigation"
EXPIRY = datetime.fromisoformat("2028-05-21T06:00:00+00:00")
ISSUED = datetime.fromisoformat("2027-05-21T06:00:00+00:00")


def build() -> Incident:
    s = Incident(
        id=ID, title="Irrigation schedules not applied in the fields", now=NOW,
        report="""\
Farmers are calling: today's irrigation schedules were not applied, valves stayed shut this
morning on lots of fields. The planner screen shows a big part of the field controllers as
"offline" since about 6am. Aquafield prod, please help, it's going to be 31 degrees today.
""",
        truth=truth(
            "certificate", "StatefulSet", NS, "valve-gateway",
            ["tls: expired certificate", "x509_cert_expired", "valve-gateway-tls",
             "fields.aquafield.coop"],
            "valve-gateway's serving certificate (secret valve-gateway-tls, "
            "CN=fields.aquafield.coop) expired at 06:00; field controllers reject it on "
            "reconnect, so they drop off and schedule-planner queues their schedules. Issue a "
            "new certificate from the cooperative CA into valve-gateway-tls and restart "
            "valve-gateway (kubectl rollout restart statefulset/valve-gateway), then move the "
            "certificate to cert-manager with automatic renewal."))
    set_times(s, 2.5, 60)
    c = s.cluster
    namespaces(s, {"default": 900, "kube-system": 900, NS: 860, "cert-manager": 860,
                   "telemetry": 700})
    kind = NodeKind("vsphere-6c24g", "6", "24608064Ki", "5850m", "23453504Ki",
                    "v1.30.8-eks-a-28", "6.1.119", "Bottlerocket OS 1.29.0 (vmware-k8s-1.30)",
                    runtime="containerd://1.7.24+bottlerocket")
    nodes = provider_nodes(s, "eksa", 4, kind, days=6.3, group="aqua-prod")

    # ---- valve-gateway
    gw = Ctr("valve-gateway", f"{REG}/valve-gateway:5.2.3", port=8883, port_name="mqtts",
             requests={"cpu": "500m", "memory": "768Mi"}, limits={"memory": "1Gi"},
             env={"TLS_CERT_FILE": "/etc/valve-gateway/tls/tls.crt",
                  "TLS_KEY_FILE": "/etc/valve-gateway/tls/tls.key",
                  "CLIENT_CA_FILE": "/etc/valve-gateway/tls/ca.crt",
                  "HEALTH_LISTEN": ":8080", "SESSION_STORE": "/data/sessions"},
             readiness=http_probe("/healthz", 8080, delay=10),
             liveness=http_probe("/healthz", 8080, delay=30, period=20),
             mounts=[{"name": "tls", "mountPath": "/etc/valve-gateway/tls", "readOnly": True},
                     {"name": "data", "mountPath": "/data"}])
    tpl = Template([gw], service_account="valve-gateway",
                   volumes=[{"name": "tls", "secret": {"secretName": "valve-gateway-tls",
                                                       "defaultMode": 420}}])
    rev_at = s.ago(days=5, hours=6, minutes=40)
    work, gws = statefulset(s, NS, "valve-gateway", tpl, replicas=3, nodes=nodes,
                            revisions=[(12, rev_at, tpl)], pod_revision=lambda i: 12,
                            born=lambda i: rev_at + timedelta(minutes=3 * (2 - i), seconds=9),
                            claim=("data", "10Gi", "vsphere-csi"), created=s.ago(days=380),
                            service="valve-gateway-headless")
    c.service(NS, "valve-gateway", dict(work.obj["spec"]["selector"]["matchLabels"]),
              port=8883, target="mqtts", created=s.ago(days=380))

    def broken(t: int) -> float:  # share of controllers that reconnected since the expiry
        return 0.78 * ramp(t, EXPIRY, 70) ** 0.6

    for i, pod in enumerate(gws):
        name = pod["metadata"]["name"]
        quiet(s, [pod], "valve-gateway", 420)
        cpu_seconds(s, pod, "valve-gateway", lambda t: 0.21 + 0.05 * broken(t))
        gauge(s, "valve_gateway_connected_controllers", {"namespace": NS, "pod": name},
              lambda t, k=i: (468 + 11 * k) * (1 - broken(t)),
              "Field controllers with an open session.")
        app_counter(s, "valve_gateway_tls_handshake_errors_total",
                    {"namespace": NS, "pod": name, "reason": "remote_expired_certificate"},
                    s.times, lambda t: 0.0 if t < EXPIRY.timestamp() else 1.9 + 1.2 * broken(t),
                    "TLS handshakes that failed, by alert.", start=0)
        app_counter(s, "valve_gateway_tls_handshake_errors_total",
                    {"namespace": NS, "pod": name, "reason": "eof"}, s.times,
                    lambda t: 0.02, "TLS handshakes that failed, by alert.")
        log_pod(s, pod, "valve-gateway", "valve-gateway", [
            ("info", "session FC-2231 established (TLS1.3, client OU=field-controllers)", {}),
            ("info", "applied schedule S-20280521-0417 to FC-0417: 3 zones, 04:30-06:10", {}),
            ("warn", "session FC-1187 keepalive timeout after 90s (LTE), closing", {}),
        ], 70, end=EXPIRY)
        log_pod(s, pod, "valve-gateway", "valve-gateway", [
            *[("warn", f"http: TLS handshake error from 100.72.{14 + 3 * i + k % 3}."
                f"{s.rng.randrange(2, 250)}:{s.rng.randrange(30000, 60000)}: remote error: "
                "tls: expired certificate", {"error.type": "tls.alert"}) for k in range(6)],
            ("warn", "session FC-0902 keepalive timeout after 90s (LTE), closing", {}),
            ("info", "applied schedule S-20280521-1312 to FC-1312: 2 zones, 07:00-08:20", {}),
        ], 160, start=EXPIRY + timedelta(seconds=40))
        s.logs.add(EXPIRY - timedelta(hours=1, seconds=-2), "warn",
                   "serving certificate CN=fields.aquafield.coop (secret valve-gateway-tls) "
                   "expires in 59m58s", namespace=NS, pod=name, container="valve-gateway",
                   service="valve-gateway", node=pod["spec"]["nodeName"])
    for labels_extra, value in ((("expired",), None), (("not_after",), EXPIRY.timestamp()),
                                (("not_before",), ISSUED.timestamp())):
        metric = f"x509_cert_{labels_extra[0]}"
        gauge(s, metric, {"job": "x509-certificate-exporter",
                          "secret_namespace": NS, "secret_name": "valve-gateway-tls",
                          "secret_key": "tls.crt", "subject_CN": "fields.aquafield.coop",
                          "issuer_CN": "Aquafield Internal CA 2024"},
              (lambda t: 1.0 if t >= EXPIRY.timestamp() else 0.0) if value is None
              else (lambda t, v=value: v),
              {"expired": "Indicates if the certificate is currently expired",
               "not_after": "Certificate expiration timestamp",
               "not_before": "Certificate start timestamp"}[labels_extra[0]])
    gauge(s, "x509_cert_expired", {"job": "x509-certificate-exporter",
                                   "secret_namespace": "telemetry",
                                   "secret_name": "telemetry-ingest-tls",
                                   "secret_key": "tls.crt",
                                   "subject_CN": "ingest.telemetry.aquafield.coop",
                                   "issuer_CN": "R11"}, lambda t: 0.0,
          "Indicates if the certificate is currently expired")

    # ---- schedule-planner: queues schedules for controllers it sees offline
    sp = Ctr("schedule-planner", f"{REG}/schedule-planner:8.0.5", port=8080,
             requests={"cpu": "250m", "memory": "512Mi"}, limits={"memory": "768Mi"},
             env={"GATEWAY_URL": "http://valve-gateway.irrigation.svc:9090"},
             readiness=http_probe("/ready"))
    _, sps = steady(s, NS, "schedule-planner", [sp], nodes=nodes, replicas=2, revision=33,
                    rollout=s.ago(days=2, hours=22), offset=1)
    for pod in sps:
        quiet(s, [pod], "schedule-planner", 330)
        app_counter(s, "irrigation_schedules_dispatched_total",
                    {"namespace": NS, "pod": pod["metadata"]["name"], "result": "delivered"},
                    s.times, lambda t: 1.6 * (1 - broken(t)),
                    "Schedules sent to field controllers, by result.")
        app_counter(s, "irrigation_schedules_dispatched_total",
                    {"namespace": NS, "pod": pod["metadata"]["name"],
                     "result": "queued_offline"}, s.times, lambda t: 0.02 + 1.6 * broken(t),
                    "Schedules sent to field controllers, by result.")
    chatter(s, sps, "schedule-planner", "schedule-planner", [
        ("info", "dispatched S-20280521-0417 to FC-0417 via valve-gateway-1", {}),
        ("info", "soil moisture below threshold on field F-2291, schedule extended by 20 min",
         {}),
    ], 60, end=EXPIRY + timedelta(minutes=5))
    chatter(s, sps, "schedule-planner", "schedule-planner", [
        ("warn", "controller FC-2231 offline since 06:07, schedule S-20280521-2231 queued", {}),
        ("warn", "controller FC-0877 offline since 06:19, schedule S-20280521-0877 queued", {}),
        ("warn", "412 schedules queued for offline controllers (oldest 06:04)", {}),
        ("info", "dispatched S-20280521-1312 to FC-1312 via valve-gateway-0", {}),
    ], 140, start=EXPIRY + timedelta(minutes=5))

    # ---- red herrings
    roll = NOW - timedelta(minutes=80)
    wi = Ctr("weather-ingest", f"{REG}/weather-ingest:3.8.0", port=8080,
             requests={"cpu": "100m", "memory": "256Mi"}, limits={"memory": "384Mi"},
             readiness=http_probe("/ready"))
    _, wis = steady(s, NS, "weather-ingest", [wi], nodes=nodes, replicas=2, revision=15,
                    rollout=roll, offset=2,
                    old=(14, s.ago(days=13), [Ctr("weather-ingest",
                                                 f"{REG}/weather-ingest:3.7.2")]))
    quiet(s, wis, "weather-ingest", 170)
    chatter(s, wis, "weather-ingest", "weather-ingest", [
        ("info", "weather-ingest 3.8.0 started, provider dwd-icon-d2", {}),
        ("info", "forecast run 2028-05-21T03Z ingested: 48 h, 2.2 km grid, 912 fields", {}),
        ("warn", "station AQ-W07 reported no rain gauge data for 3 h", {}),
    ], 30, start=roll + timedelta(minutes=1))
    ts_ = Ctr("telemetry-store", f"{REG}/telemetry-store:2.4.1", port=8080,
              requests={"cpu": "300m", "memory": "1Gi"}, limits={"memory": "1536Mi"},
              readiness=http_probe("/ready"))
    _, tss = steady(s, "telemetry", "telemetry-store", [ts_], nodes=nodes, replicas=2,
                    revision=9, rollout=s.ago(days=5, hours=1), offset=3,
                    restarted={1: (s.ago(days=4, hours=2), "OOMKilled", 137)})
    quiet(s, tss, "telemetry-store", 900)
    chatter(s, tss, "telemetry-store", "telemetry-store", [
        ("info", "flushed 18 204 soil moisture samples to partition 2028-05-21", {}),
    ], 30)
    cm = Ctr("cert-manager-controller", "quay.io/jetstack/cert-manager-controller:v1.16.2",
             port=9402, port_name="http-metrics", requests={"cpu": "50m", "memory": "128Mi"},
             limits={"memory": "256Mi"})
    _, cms = steady(s, "cert-manager", "cert-manager", [cm], nodes=nodes, replicas=1,
                    revision=8, rollout=s.ago(days=6, hours=1), service=9402,
                    target="http-metrics")
    quiet(s, cms, "cert-manager-controller", 95)
    chatter(s, cms, "cert-manager-controller", "cert-manager", [
        ("error", "propagation check failed: DNS record for \"_acme-challenge.staging-portal."
         "aquafield.coop\" not yet propagated", {"resource_name": "staging-portal-tls-1-"
                                                 "2981746112-1"}),
        ("info", "certificate telemetry/telemetry-ingest-tls is up to date, renewal "
         "scheduled for 2028-06-28T09:12:44Z", {}),
    ], 40)
    return s
