"""EV charging: drivers cannot start charging from the app at many locations. session-starter
authorises every remote start with the e-roaming hub (an external API, api.eroam-hub.eu):
from about 18:13 the hub answers 503 Service Unavailable or not at all within the 8 s read
timeout, while TCP connects and TLS handshakes still succeed in milliseconds. The pods are
healthy; the dependency is not. Red herrings: a NetworkPolicy added to the namespace 47 min
before the onset (the report blames the "firewall change"; it allows 443 anywhere),
csms-gateway's missed-heartbeat warnings, an old OOM restart of charge-telemetry, and a
tariff importer in another namespace with a few ordinary upstream timeouts."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import gke_nodes, set_times
from tests.data.holdout2._generator.kit import app_counter, cpu_seconds, requests
from tests.data.holdout3._generator.kit3 import chatter, ksm_deployment, namespaces, quiet, steady
from tests.data.holdout15._generator.kit15 import network_policy
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, http_probe
from tests.scenario_tools.telemetry import histogram_points

from .kit18 import Incident, timed_logs

ID = "ev-charge-starts-failing"
NOW = datetime.fromisoformat("2028-05-19T18:41:00+00:00")
NS = "charging"
REG = "europe-west4-docker.pkg.dev/voltway-prod/apps"
HUB = "api.eroam-hub.eu"


def build() -> Incident:
    s = Incident(
        id=ID, title="Charging sessions fail to start from the app", now=NOW,
        report="""\
Lots of drivers say "Start charging" in the app spins and then fails, started around
18:15. Not every location but many, evening peak so the support queue is exploding.
The network team rolled out new firewall rules for the charging namespace this afternoon,
can you check if that broke something?
""",
        truth=truth(
            "dependency_failure", "Deployment", NS, "session-starter",
            ["503 Service Unavailable", HUB, "read timeout after 8000ms"],
            "The e-roaming hub (api.eroam-hub.eu), which session-starter calls to authorise "
            "every remote start, has been answering 503 Service Unavailable or timing out "
            "since about 18:13; connections and TLS handshakes succeed, so the new egress "
            "policy is not at fault. Escalate to the hub operator, and let session-starter "
            "fail fast (circuit breaker) and fall back to the locally cached authorisation "
            "list for known RFID/contract IDs until the hub recovers."))
    set_times(s, 3.0, 30)
    c = s.cluster
    namespaces(s, {"default": 700, "kube-system": 700, NS: 655, "billing": 640})
    nodes = gke_nodes(s, 4, project="voltway-prod", cluster="ev-prod", pool="apps-n2d",
                      region="europe-west4", instance="n2d-standard-8", kubelet="v1.32.4-gke."
                      "1415000", cpu="8", memory="32882012Ki", alloc_cpu="7910m",
                      alloc_memory="29214556Ki", days=6.2)
    onset = NOW - timedelta(minutes=28)
    t_on = onset.timestamp()

    # ---- session-starter: healthy pods, failing upstream
    ctr = Ctr("session-starter", f"{REG}/session-starter:7.3.2", port=8080,
              requests={"cpu": "250m", "memory": "320Mi"}, limits={"memory": "640Mi"},
              env={"EROAMING_BASE_URL": f"https://{HUB}/ocpi/2.2.1",
                   "EROAMING_READ_TIMEOUT": "8s", "EROAMING_CONNECT_TIMEOUT": "2s",
                   "DATABASE_URL": "postgres://sessions@10.61.0.5:5432/sessions",
                   "OCPP_CSMS_URL": "http://csms-gateway.charging.svc"},
              readiness=http_probe("/ready", delay=5, period=10),
              liveness=http_probe("/live", delay=15, period=20))
    _, pods = steady(s, NS, "session-starter", [ctr], nodes=nodes, replicas=4, revision=41,
                     rollout=s.ago(days=3, hours=19, minutes=7), service=80,
                     labels={"app.kubernetes.io/name": "session-starter",
                             "app.kubernetes.io/part-of": "charging"},
                     old=(40, s.ago(days=10), [Ctr("session-starter",
                                                   f"{REG}/session-starter:7.3.1")]))

    def down(t: int) -> bool:
        return t >= t_on

    for i, pod in enumerate(pods):
        quiet(s, [pod], "session-starter", 270 + 12 * i)
        cpu_seconds(s, pod, "session-starter", lambda t: 0.08 if down(t) else 0.11)
        requests(s, pod, "session-starter", rps=lambda t: 1.6, codes={
            "201": lambda t: 0.31 if down(t) else 0.985,
            "409": lambda t: 0.012,
            "502": lambda t: 0.41 if down(t) else 0.002,
            "504": lambda t: 0.27 if down(t) else 0.001},
            median=lambda t: 4.8 if down(t) else 0.32, buckets=(0.25, 0.5, 1.0, 2.5, 5.0,
                                                                10.0))
        labels = {"namespace": NS, "pod": pod["metadata"]["name"], "peer": HUB}
        times = [t for t in s.times if t >= s.times[0]]
        for code, share in (("200", lambda t: 0.33 if down(t) else 0.994),
                            ("503", lambda t: 0.39 if down(t) else 0.004),
                            ("timeout", lambda t: 0.28 if down(t) else 0.002)):
            app_counter(s, "http_client_requests_total", {**labels, "code": code}, times,
                        lambda t, f=share: 1.7 * f(t),
                        "Outbound HTTP requests by peer and result.")
        fam = s.metrics.family("http_client_request_duration_seconds", "histogram",
                               "Outbound HTTP request latency in seconds.",
                               buckets=(0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 8.0))
        fam.add(labels, histogram_points(times, (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 8.0),
                                         lambda t: 1.7, lambda t: 3.9 if down(t) else 0.21,
                                         s.rng))
        app_counter(s, "db_queries_total", {"namespace": NS, "pod": pod["metadata"]["name"],
                                            "db": "sessions"}, times,
                    lambda t: 6.2, "Queries run against the sessions database.")
        chatter(s, [pod], "session-starter", "session-starter", [
            ("info", f"remote start CP-NL-AMS-0412/2 token NL-VLT-C83F1A authorised by {HUB} "
             "in 188ms", {}),
            ("info", "START_TRANSACTION accepted by charger CP-NL-UTR-0090/1", {}),
            ("warn", "charger CP-NL-RTM-2203/1 rejected RemoteStartTransaction: Occupied",
             {"http.response.status_code": 409}),
            ("info", "session 8841127 stopped by driver, 23.4 kWh", {}),
        ], 130, end=onset)
        entries = []
        t = onset + timedelta(seconds=5 + 11 * i)
        n = 0
        while t < NOW:
            k = (n + i) % 5
            if k in (0, 3):
                entries.append((t, "error", f"POST https://{HUB}/ocpi/2.2.1/tokens/NL-VLT-"
                                f"{s.rng.randrange(0x100000, 0xFFFFFF):06X}/authorize -> 503 "
                                "Service Unavailable (connect 9ms, tls 31ms, retry-after 30)",
                                {"http.response.status_code": 503, "url.domain": HUB}))
            elif k == 1:
                entries.append((t, "error", f"POST https://{HUB}/ocpi/2.2.1/tokens/authorize: "
                                "read timeout after 8000ms (connect 11ms, tls 29ms)",
                                {"error.type": "ReadTimeout", "url.domain": HUB}))
            elif k == 2:
                entries.append((t, "warn", "remote start CP-NL-AMS-0977/1 failed: authorisation "
                                "unavailable, answered 502 to app", {
                                    "http.response.status_code": 502}))
            else:
                entries.append((t, "info", "START_TRANSACTION accepted by charger "
                                "CP-NL-HAG-0310/2 (cached whitelist token)", {}))
            n += 1
            t += timedelta(seconds=14 + s.rng.randrange(0, 20))
        timed_logs(s, pod, "session-starter", "session-starter", entries)
    ksm_deployment(s, NS, "session-starter", lambda t: 4.0, lambda t: 4.0)

    # ---- red herring: the egress policy added 47 min before the onset
    network_policy(s, NS, "charging-egress", {
        "podSelector": {"matchLabels": {"app.kubernetes.io/part-of": "charging"}},
        "policyTypes": ["Egress"],
        "egress": [
            {"to": [{"namespaceSelector": {"matchLabels": {
                "kubernetes.io/metadata.name": "kube-system"}},
                "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}],
             "ports": [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}]},
            {"to": [{"ipBlock": {"cidr": "10.61.0.5/32"}}],
             "ports": [{"port": 5432, "protocol": "TCP"}]},
            {"to": [{"podSelector": {"matchLabels": {"app.kubernetes.io/name":
                                                     "csms-gateway"}}}],
             "ports": [{"port": 8080, "protocol": "TCP"}]},
            {"to": [{"ipBlock": {"cidr": "0.0.0.0/0", "except": ["10.0.0.0/8",
                                                                  "172.16.0.0/12"]}}],
             "ports": [{"port": 443, "protocol": "TCP"}]}]},
        created=onset - timedelta(minutes=47),
        labels={"app.kubernetes.io/managed-by": "argocd", "team": "netsec"},
        annotations={"argocd.argoproj.io/tracking-id":
                     "charging-netpol:networking.k8s.io/NetworkPolicy:charging/charging-egress"})

    # ---- neighbours: csms gateway with noisy heartbeats, telemetry
    gw = Ctr("csms-gateway", f"{REG}/csms-gateway:3.12.0", port=8080,
             requests={"cpu": "400m", "memory": "512Mi"}, limits={"memory": "1Gi"},
             readiness=http_probe("/ready"))
    _, gws = steady(s, NS, "csms-gateway", [gw], nodes=nodes, replicas=2, revision=29,
                    rollout=s.ago(days=5, hours=2), offset=1,
                    labels={"app.kubernetes.io/name": "csms-gateway",
                            "app.kubernetes.io/part-of": "charging"})
    quiet(s, gws, "csms-gateway", 610)
    chatter(s, gws, "csms-gateway", "csms-gateway", [
        ("warn", "OCPP heartbeat missed from charger CP-NL-EIN-0044 (last 312s ago)", {}),
        ("info", "BootNotification from CP-NL-AMS-1180 (firmware 4.2.7) accepted", {}),
        ("error", "charger CP-NL-GRO-0007 websocket closed abnormally (1006)", {}),
        ("info", "MeterValues CP-NL-UTR-0090/1 11.2 kW", {}),
    ], 160)
    tel = Ctr("charge-telemetry", f"{REG}/charge-telemetry:2.4.5", port=9102,
              requests={"cpu": "150m", "memory": "256Mi"}, limits={"memory": "512Mi"})
    _, tels = steady(s, NS, "charge-telemetry", [tel], nodes=nodes, replicas=1, revision=12,
                     rollout=s.ago(days=2, hours=7), offset=2,
                     restarted={0: (s.ago(days=1, hours=20), "OOMKilled", 137)})
    quiet(s, tels, "charge-telemetry", 390)
    chatter(s, tels, "charge-telemetry", "charge-telemetry", [
        ("warn", "kafka producer: 3 records retried for topic meter-values", {}),
        ("info", "flushed 12044 meter values to bigquery in 1.9s", {}),
    ], 60)

    # ---- elsewhere: tariff import with ordinary upstream timeouts
    imp = Ctr("tariff-import", f"{REG}/tariff-import:1.8.0", port=8080,
              requests={"cpu": "100m", "memory": "192Mi"}, limits={"memory": "384Mi"},
              readiness=http_probe("/ready", timeout=1))
    _, imps = steady(s, "billing", "tariff-import", [imp], nodes=nodes, replicas=1,
                     revision=9, rollout=s.ago(days=4, hours=11), offset=3)
    quiet(s, imps, "tariff-import", 150)
    chatter(s, imps, "tariff-import", "tariff-import", [
        ("info", "imported 2291 CPO tariffs (delta 14)", {}),
        ("warn", "GET https://api.energy-prices.example.net/day-ahead timed out after 10s, "
         "retrying (1/3)", {"error.type": "Timeout"}),
        ("info", "day-ahead prices for 2028-05-20 stored (24 slots)", {}),
    ], 40)
    ip = imps[0]["status"]["podIP"]
    first = NOW - timedelta(minutes=44)
    c.event(imps[0], "Unhealthy", f'Readiness probe failed: Get "http://{ip}:8080/ready": '
            "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
            first=first, last=first + timedelta(seconds=10), count=2, type_="Warning",
            field_path="spec.containers{tariff-import}")
    return s
