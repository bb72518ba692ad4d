"""Pharmacy: e-prescriptions stop reaching the pharmacies at 06:00. prescription-relay calls
eprescribe-gateway with mutual TLS; its client certificate (Secret prescription-relay-mtls,
issued for 30 days by the internal CA) expired at 06:00:00. The gateway rejects every
handshake from the relay ("certificate has expired"), the relay retries and queues; the
gateway itself and its other client (refill-reminder, whose certificate is valid) are fine."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from tests.data.holdout._generator.base import daemonset, gauge, logs_for, set_times
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, Obj, ended, http_probe, running

from .kit import (
    Incident,
    NodeKind,
    after,
    app_counter,
    deploy,
    node,
    plain,
    requests,
    restarts_series,
)

ID = "eprescriptions-not-delivered"
NOW = datetime.fromisoformat("2027-03-09T06:41:00+00:00")
NS = "pharmacy"
GW_NS = "integrations"
OCIR = "iad.ocir.io/idq8kx2rmz0p/medirx"
EXPIRY = datetime.fromisoformat("2027-03-09T06:00:00+00:00")
GATEWAY = "https://eprescribe-gateway.integrations.svc:8443"


def build() -> Incident:
    s = Incident(
        id=ID,
        title="E-prescriptions not reaching pharmacies",
        now=NOW,
        report="""\
Since around 06:00 UTC pharmacies don't receive e-prescriptions from the clinics: the
clinic app says "sent" but they never show up at the pharmacy counter. Refill reminders
still arrive fine. Nothing was deployed overnight and all pods look healthy. Can you check
the prescription flow?
""",
        truth=truth(
            "certificate", "Deployment", NS, "prescription-relay",
            ["certificate has expired", "SSLV3_ALERT_CERTIFICATE_EXPIRED",
             "prescription-relay-mtls", "x509_cert_expired", "2027-03-09T06:00:00Z"],
            "The mTLS client certificate of prescription-relay (Secret prescription-relay-mtls) "
            "expired at 06:00 UTC and the gateway rejects it: issue a new certificate from the "
            "internal CA into that Secret and restart prescription-relay so it loads it; the "
            "queued prescriptions are then forwarded. Automate the renewal (cert-manager) and "
            "alert on x509_cert_not_after."))
    set_times(s, 2.5, 60)
    c = s.cluster
    for ns, days in (("default", 500), ("kube-system", 500), (NS, 430), (GW_NS, 470),
                     ("telemetry", 410)):
        c.namespace(ns, s.ago(days=days))
    kind = NodeKind("VM.Standard.E4.Flex", "8", "64105256Ki", "7800m", "60634408Ki",
                    "v1.31.1", "5.15.0-300.163.18.el8uek.x86_64", "Oracle Linux Server 8.10",
                    runtime="cri-o://1.31.1-1.el8", storage="40223552Ki",
                    alloc_storage="37070049684")
    nodes: list[Obj] = []
    for i in range(4):
        ip = f"10.0.10.{23 + 17 * i}"
        ad = f"US-ASHBURN-AD-{i % 3 + 1}"
        display = f"oke-c4qvlr5b2xa-n7kgmwdtx3q-s{c.token(10)}-{i}"
        nodes.append(node(s, ip, ip=ip, kind=kind, created=s.ago(days=6.4 - i * 0.2),
                          region="us-ashburn-1", zone=ad,
                          labels={"oci.oraclecloud.com/fault-domain":
                                  f"FAULT-DOMAIN-{i % 3 + 1}",
                                  "node.info.ds_proxymux_client": "true",
                                  "node.info/kubeletVersion": "v1.31.1",
                                  "displayName": display, "hostname": display,
                                  "internal_addr": ip, "name": "pool-prod-e4"},
                          provider_id="ocid1.instance.oc1.iad." + c.hexid("oci", ip, length=60),
                          pod_cidr=f"10.244.{i}.0/24"))
    edge = EXPIRY.timestamp()

    # ---- the client whose certificate expired
    relay = Ctr("prescription-relay", f"{OCIR}/prescription-relay:2.6.1", port=8080,
                requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "512Mi"},
                env={"GATEWAY_URL": f"{GATEWAY}/v1/prescriptions",
                     "CLIENT_CERT": "/etc/relay/tls/tls.crt",
                     "CLIENT_KEY": "/etc/relay/tls/tls.key", "CA_BUNDLE":
                     "/etc/relay/tls/ca.crt", "SOURCE_QUEUE": "ehr.prescriptions.signed",
                     "WORKERS": "4"},
                readiness=http_probe("/healthz", delay=5), liveness=http_probe("/healthz",
                                                                               delay=15),
                mounts=[{"mountPath": "/etc/relay/tls", "name": "mtls", "readOnly": True}])
    _, relays = deploy(s, NS, "prescription-relay", [relay], replicas=2, nodes=nodes,
                       revision=18, rollout=s.ago(days=6, hours=2),
                       volumes=[{"name": "mtls", "secret": {"secretName":
                                                            "prescription-relay-mtls",
                                                            "defaultMode": 256}}],
                       labels={"app.kubernetes.io/name": "prescription-relay",
                               "app.kubernetes.io/part-of": "eprescribing"})
    for pod in relays:
        name = pod["metadata"]["name"]
        plain(s, pod, "prescription-relay", 131, 0.05)
        app_counter(s, "relay_forward_total", {"namespace": NS, "pod": name, "result": "ok"},
                    s.times, lambda t: 0.0 if t >= edge else 0.31,
                    "Prescriptions forwarded to the gateway, by result.")
        app_counter(s, "relay_forward_total", {"namespace": NS, "pod": name,
                                               "result": "tls_error"},
                    s.times, after(edge, 0.0, 0.74),
                    "Prescriptions forwarded to the gateway, by result.", start=3)
    gauge(s, "relay_queue_depth", {"namespace": NS, "service": "prescription-relay"},
          lambda t: 2 + s.rng.randrange(0, 4) if t < edge else 3 + 0.62 * (t - edge),
          "Signed prescriptions waiting to be forwarded.")
    start = NOW - timedelta(hours=2.5)
    logs_for(s, relays, "prescription-relay", "prescription-relay", [
        ("info", "forwarded rx_7f3a21 (clinic CL-0412 -> pharmacy PH-2291) 201 in 84ms", {}),
        ("info", "forwarded rx_7f3a44 (clinic CL-0107 -> pharmacy PH-0038) 201 in 61ms", {}),
        ("warn", "rx_7f39c0 rejected by gateway: 422 pharmacy PH-9912 not accepting "
         "e-prescriptions", {"http.response.status_code": 422}),
    ], 66, start=start, end=EXPIRY)
    logs_for(s, relays, "prescription-relay", "prescription-relay", [
        ("error", f"POST {GATEWAY}/v1/prescriptions failed: httpx.ConnectError: [SSL: "
         "SSLV3_ALERT_CERTIFICATE_EXPIRED] sslv3 alert certificate expired (_ssl.c:2580)",
         {"error.type": "httpx.ConnectError"}),
        ("warn", "rx_7f3b12 requeued after TLS failure (attempt 9), next try in 60s", {}),
        ("warn", "forward queue growing, oldest waiting prescription signed at 06:00:14", {}),
    ], 114, start=EXPIRY + timedelta(seconds=2), end=NOW)

    # ---- the gateway: healthy, rejects the expired client certificate
    gw = Ctr("eprescribe-gateway", f"{OCIR}/eprescribe-gateway:1.14.0", port=8443,
             port_name="https", requests={"cpu": "300m", "memory": "256Mi"},
             limits={"memory": "512Mi"},
             env={"TLS_CERT": "/etc/gateway/tls/tls.crt", "TLS_KEY": "/etc/gateway/tls/tls.key",
                  "CLIENT_CA": "/etc/gateway/client-ca/ca.crt", "CLIENT_AUTH":
                  "RequireAndVerifyClientCert", "UPSTREAM": "https://api.surescripts-"
                  "sandbox.example/v7"},
             readiness=http_probe("/healthz", 8081, delay=5),
             liveness=http_probe("/healthz", 8081, delay=15),
             mounts=[{"mountPath": "/etc/gateway/tls", "name": "tls", "readOnly": True},
                     {"mountPath": "/etc/gateway/client-ca", "name": "client-ca",
                      "readOnly": True}])
    _, gws = deploy(s, GW_NS, "eprescribe-gateway", [gw], replicas=2, nodes=nodes, revision=9,
                    rollout=s.ago(days=4, hours=20), service=8443, target="https", offset=1,
                    volumes=[{"name": "tls", "secret": {"secretName": "eprescribe-gateway-tls",
                                                        "defaultMode": 256}},
                             {"name": "client-ca", "configMap": {"name": "internal-ca"}}])
    relay_ips = [p["status"]["podIP"] for p in relays]
    for pod in gws:
        name = pod["metadata"]["name"]
        plain(s, pod, "eprescribe-gateway", 88, 0.07)
        requests(s, pod, "eprescribe-gateway", rps=lambda t: 0.6, codes={
            "201": lambda t: 0.55 if t < edge else 0.0,
            "200": lambda t: 0.42 if t < edge else 0.97,
            "422": lambda t: 0.03})
        for reason, rate in (("cert_expired", after(edge, 0.0, 0.74)),
                             ("eof", lambda t: 0.033)):
            app_counter(s, "gateway_tls_handshake_errors_total",
                        {"namespace": GW_NS, "pod": name, "reason": reason}, s.times, rate,
                        "Failed TLS handshakes, by reason.", start=s.rng.randrange(100, 900))
    logs_for(s, gws, "eprescribe-gateway", "eprescribe-gateway", [
        ("info", "POST /v1/prescriptions 201 client=CN=prescription-relay.pharmacy.svc "
         "pharmacy=PH-2291 upstream 212ms", {"http.response.status_code": 201}),
        ("info", "POST /v1/refills/remind 200 client=CN=refill-reminder.pharmacy.svc",
         {"http.response.status_code": 200}),
    ], 54, start=start, end=EXPIRY)
    logs_for(s, gws, "eprescribe-gateway", "eprescribe-gateway", [
        ("info", "POST /v1/refills/remind 200 client=CN=refill-reminder.pharmacy.svc",
         {"http.response.status_code": 200}),
        ("warn", f"http: TLS handshake error from {nodes[0]['metadata']['name']}:41822: EOF",
         {}),
    ], 42, start=start, end=NOW)
    for pod in gws:
        t = EXPIRY + timedelta(seconds=s.rng.uniform(1, 4))
        while t < NOW:
            ip = s.rng.choice(relay_ips)
            now_s = t.strftime("%Y-%m-%dT%H:%M:%SZ")
            port = s.rng.randrange(32768, 60999)
            s.logs.add(t, "warn", f"http: TLS handshake error from {ip}:{port}: tls: failed "
                       "to verify certificate: x509: certificate has "
                       f"expired or is not yet valid: current time {now_s} is after "
                       "2027-03-09T06:00:00Z", namespace=GW_NS, pod=pod["metadata"]["name"],
                       container="eprescribe-gateway", service="eprescribe-gateway",
                       node=pod["spec"]["nodeName"])
            t += timedelta(seconds=s.rng.uniform(15, 40))

    # ---- the other client of the gateway, with a valid certificate
    rr = Ctr("refill-reminder", f"{OCIR}/refill-reminder:1.3.7", port=8080,
             requests={"cpu": "100m", "memory": "128Mi"}, limits={"memory": "256Mi"},
             env={"GATEWAY_URL": f"{GATEWAY}/v1/refills/remind",
                  "CLIENT_CERT": "/etc/reminder/tls/tls.crt"},
             readiness=http_probe("/ready", delay=5),
             mounts=[{"mountPath": "/etc/reminder/tls", "name": "mtls", "readOnly": True}])
    _, rrs = deploy(s, NS, "refill-reminder", [rr], replicas=1, nodes=nodes, revision=11,
                    rollout=s.ago(days=3, hours=7), offset=2, service=None,
                    volumes=[{"name": "mtls", "secret": {"secretName": "refill-reminder-mtls",
                                                         "defaultMode": 256}}])
    plain(s, rrs[0], "refill-reminder", 74)
    logs_for(s, rrs, "refill-reminder", "refill-reminder", [
        ("info", "sent 18 refill reminders for pharmacy PH-0038 (gateway 200)", {}),
        ("warn", "patient p_88121 has no SMS consent, reminder sent by email only", {}),
    ], 30, start=start, end=NOW)

    # ---- certificate expiry as the exporter sees it
    ex = Ctr("x509-certificate-exporter", "docker.io/enix/x509-certificate-exporter:3.18.1",
             port=9793, port_name="metrics", requests={"cpu": "10m", "memory": "20Mi"},
             limits={"memory": "150Mi"},
             args=["--watch-kube-secrets", "--secret-type=kubernetes.io/tls",
                   "--max-cache-duration=300s", "--listen-address=:9793"])
    _, exs = deploy(s, "telemetry", "x509-certificate-exporter", [ex], replicas=1,
                    nodes=nodes, revision=4, rollout=s.ago(days=5, hours=9), service=9793,
                    target="metrics", offset=3)
    plain(s, exs[0], "x509-certificate-exporter", 27)
    certs = [(NS, "prescription-relay-mtls", "prescription-relay.pharmacy.svc", EXPIRY),
             (NS, "refill-reminder-mtls", "refill-reminder.pharmacy.svc",
              datetime.fromisoformat("2027-04-02T11:20:00+00:00")),
             (GW_NS, "eprescribe-gateway-tls", "eprescribe-gateway.integrations.svc",
              datetime.fromisoformat("2027-04-20T00:00:00+00:00")),
             (GW_NS, "partner-sftp-tls", "sftp-in.medirx-partners.example",
              datetime.fromisoformat("2027-03-18T23:59:59+00:00"))]
    for ns, secret, cn, until in certs:
        labels = {"secret_namespace": ns, "secret_name": secret, "secret_key": "tls.crt",
                  "subject_CN": cn, "issuer_CN": "MediRx Internal Issuing CA 2"
                  if "partner" not in secret else "R11"}
        gauge(s, "x509_cert_not_after", labels, _const(until.timestamp()),
              "Certificate expiration timestamp", times=s.times[::2])
        gauge(s, "x509_cert_expired", labels, after(until.timestamp(), 0.0, 1.0),
              "Indicates if the certificate is currently expired", times=s.times[::2])
    c.add({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": c.meta("ConfigMap", "internal-ca", GW_NS, s.ago(days=470)),
           "data": {"ca.crt": "-----BEGIN CERTIFICATE-----\nMIIFhDCCA2ygAwIBAgIUTVh0c0lzQW5J"
                    "bnRlcm5hbENBMA0GCSqGSIb3DQEBCwUA\n...\n-----END CERTIFICATE-----\n"}})

    # ---- red herrings
    loc = Ctr("pharmacy-locator", f"{OCIR}/pharmacy-locator:4.0.2", port=8080,
              requests={"cpu": "150m", "memory": "256Mi"}, limits={"memory": "512Mi"},
              readiness=http_probe("/ready", delay=5, timeout=1))
    _, locs = deploy(s, NS, "pharmacy-locator", [loc], replicas=2, nodes=nodes, revision=47,
                     rollout=s.ago(days=2, hours=11), offset=1)
    blip = NOW - timedelta(minutes=19, seconds=44)
    ip = locs[0]["status"]["podIP"]
    c.event(locs[0], "Unhealthy", f'Readiness probe failed: Get "http://{ip}:8080/ready": '
            "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
            first=blip, last=blip + timedelta(seconds=20), count=3, type_="Warning",
            field_path="spec.containers{pharmacy-locator}")
    logs_for(s, locs, "pharmacy-locator", "pharmacy-locator", [
        ("info", "GET /v1/pharmacies/near?lat=38.9&lon=-77.0 200", {}),
        ("warn", "geocoder rate limited (429), using cached result for 'Main St 12, Reston'",
         {}),
    ], 30, start=start, end=NOW)
    fl = Ctr("kube-flannel", "ghcr.io/flannel-io/flannel:v0.26.2", port=None,
             requests={"cpu": "100m", "memory": "50Mi"}, limits={"memory": "50Mi"},
             command=["/opt/bin/flanneld", "--ip-masq", "--kube-subnet-mgr"])
    flip = s.ago(days=2, hours=6, minutes=40)

    def fl_states(i: int, n: Obj, started: datetime) -> dict[str, Obj]:
        return {"kube-flannel": running(flip, restarts=1, last=ended(
            "Error", 1, started, flip - timedelta(seconds=2)))} if i == 2 else {}
    _, fls = daemonset(s, "kube-system", "kube-flannel-ds", [fl], node_list=nodes,
                       generation=3, since=s.ago(days=6.4), statuses=fl_states,
                       labels={"app": "flannel", "tier": "node"})
    for pod in fls:
        pod["spec"]["hostNetwork"] = True
        pod["status"]["podIP"] = pod["status"]["hostIP"]
        pod["status"]["podIPs"] = [{"ip": pod["status"]["hostIP"]}]
    restarts_series(s, fls[2], "kube-flannel", 1, [])
    logs_for(s, fls, "kube-flannel", "kube-flannel", [
        ("info", "Handling initial subnet events", {}),
        ("warn", "Failed to check iptables rule: exit status 4 (iptables: Resource temporarily "
         "unavailable.), retrying", {}),
    ], 12, start=start, end=NOW)
    return s


def _const(v: float) -> Callable[[int], float]:
    return lambda t: v
