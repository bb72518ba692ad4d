"""Online tutoring: the certificate in the tutoring/tutor-web-tls secret (served by the
Ingress tutor-web through HAProxy) expired 74 minutes ago. cert-manager tried to renew it
for weeks but its DNS-01 solver's Cloudflare token was revoked, so every order failed. Browsers
and the blackbox checks refuse the handshake, tutor-web itself is healthy and idle. By the
scoring rule the culprit is the workload behind the Ingress: Deployment tutoring/tutor-web.
Red herrings: the session Redis reconnecting after a failover (plausible alternative), the
video-room provider's webhook 401s, a tutor-web pod restarted a day ago."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import set_times
from tests.data.holdout2._generator.kit import app_counter, requests
from tests.data.holdout3._generator.kit3 import chatter, namespaces, quiet, steady
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, http_probe

from .kit6 import Incident, NodeKind, ingress, provider_nodes

ID = "tutor-sessions-cert-warnings"
NOW = datetime.fromisoformat("2027-05-19T13:04:00+00:00")
NS = "tutoring"
REG = "registry.gitlab.com/studybuddy/platform"
HOST = "learn.studybuddy.de"


def build() -> Incident:
    s = Incident(
        id=ID, title="Students cannot open the tutoring site", now=NOW,
        report="""\
Since around lunchtime students write in that learn.studybuddy.de shows a "Your connection
is not private" page (NET::ERR_CERT_DATE_INVALID in Chrome). Our external checks for the site
are failing as well. Sessions booked for 14:00 are at risk.
""",
        truth=truth(
            "certificate", "Deployment", NS, "tutor-web",
            ["certificate has expired", "tutor-web-tls", "NET::ERR_CERT_DATE_INVALID",
             "probe_ssl_earliest_cert_expiry", "Invalid access token"],
            "The certificate of learn.studybuddy.de in the secret tutor-web-tls (Ingress "
            "tutor-web) expired at 11:50 UTC; cert-manager's renewals failed for weeks because "
            "the Cloudflare API token of the DNS-01 solver was revoked. By the scoring rule the "
            "culprit is the workload behind the Ingress, Deployment tutoring/tutor-web. Put a "
            "valid token into the issuer's secret and renew the certificate (cmctl renew "
            "tutor-web-tls); the pods themselves are healthy."))
    set_times(s, 2.2, 60)
    c = s.cluster
    namespaces(s, {"default": 480, "kube-system": 480, "cert-manager": 480,
                   "haproxy-controller": 480, NS: 455, "monitoring": 470})
    kind = NodeKind("g1.c4m16", "4", "16393580Ki", "3920m", "15242604Ki", "v1.30.9",
                    "6.6.62-gardenlinux-cloud-amd64", "Garden Linux 1592.4",
                    runtime="containerd://1.7.24")
    nodes = provider_nodes(s, "gardener", 4, kind, days=6.1)
    expired = NOW - timedelta(minutes=74)
    issued = expired - timedelta(days=90)

    web = Ctr("tutor-web", f"{REG}/tutor-web:4.22.1", port=8000,
              requests={"cpu": "300m", "memory": "512Mi"}, limits={"memory": "1Gi"},
              env={"DJANGO_SETTINGS_MODULE": "studybuddy.settings.prod",
                   "SESSION_REDIS_URL": "redis://session-redis.tutoring.svc:6379/1"},
              readiness=http_probe("/health/ready", delay=10, period=10),
              liveness=http_probe("/health/live", delay=30, period=20))
    _, webs = steady(s, NS, "tutor-web", [web], nodes=nodes, replicas=3, revision=212,
                     rollout=s.ago(days=2, hours=3, minutes=40),
                     restarted={1: (s.ago(hours=23, minutes=12), "OOMKilled", 137)})
    ingress(s, NS, "tutor-web", HOST, "tutor-web", 80, klass="haproxy",
            created=s.ago(days=455), tls="tutor-web-tls", address="80.158.41.77",
            annotations={"cert-manager.io/cluster-issuer": "letsencrypt-dns01",
                         "haproxy.org/ssl-redirect": "true"})
    cut = expired.timestamp()
    for pod in webs:
        quiet(s, [pod], "tutor-web", 620)
        requests(s, pod, "tutor-web", rps=lambda t: 0.35 if t >= cut + 60 else 7.8, codes={
            "200": lambda t: 0.97, "302": lambda t: 0.025, "404": lambda t: 0.005})
    chatter(s, webs, "tutor-web", "tutor-web", [
        ("info", "GET /sessions/upcoming 200 61ms", {}),
        ("info", "POST /sessions/SB-77120/join 200 140ms", {}),
        ("info", "GET /tutors?subject=mathe&grade=10 200 95ms", {}),
    ], 120, end=expired)
    chatter(s, webs, "tutor-web", "tutor-web", [
        ("info", "GET /health/ready 200 2ms", {}),
        ("info", "GET /api/calendar/sync 200 48ms (internal)", {}),
    ], 24, start=expired)
    chatter(s, webs, "tutor-web", "tutor-web", [
        ("warn", "redis.exceptions.ConnectionError: Error 111 connecting to "
         "session-redis.tutoring.svc:6379. Connection refused. Retrying (1/5)", {}),
        ("info", "session store reconnected to session-redis.tutoring.svc:6379", {}),
    ], 12, start=s.ago(minutes=49), end=s.ago(minutes=46))

    # ---- the HAProxy ingress controller
    hap = Ctr("kubernetes-ingress-controller", "haproxytech/kubernetes-ingress:3.0.5",
              port=8080, requests={"cpu": "250m", "memory": "400Mi"},
              limits={"memory": "800Mi"})
    _, haps = steady(s, "haproxy-controller", "haproxy-kubernetes-ingress", [hap],
                     nodes=nodes, replicas=2, revision=6, rollout=s.ago(days=4, hours=8),
                     service=None, offset=2)
    quiet(s, haps, "kubernetes-ingress-controller", 210)
    chatter(s, haps, "kubernetes-ingress-controller", "haproxy-ingress", [
        ("info", "93.104.12.88:51022 [19/May/2027:11:02:41.117] public-https~ "
         "tutoring_svc_tutor-web_http/SRV_1 0/0/1/61/62 200 4211 - - ---- "
         "\"GET /sessions/upcoming HTTP/2.0\"", {}),
    ], 50, end=expired)
    for i in range(60):
        pod = haps[i % 2]
        when = expired + timedelta(seconds=20 + (NOW - expired).total_seconds() * i / 61)
        client = f"{91 + i % 5}.{(i * 29) % 250}.{(i * 13) % 250}.{(i * 7) % 250 + 1}"
        s.logs.add(when, "info", f"{client}:{40000 + i * 97} [{when:%d/%b/%Y:%H:%M:%S}.231] "
                   "public-https/1: SSL handshake failure (error:0A000416:SSL routines::sslv3 "
                   "alert certificate unknown)", namespace="haproxy-controller",
                   pod=pod["metadata"]["name"], container="kubernetes-ingress-controller",
                   service="haproxy-ingress", node=pod["spec"]["nodeName"])

    # ---- cert-manager
    cm = Ctr("cert-manager-controller", "quay.io/jetstack/cert-manager-controller:v1.16.3",
             port=9402, port_name="http-metrics", requests={"cpu": "10m", "memory": "64Mi"},
             limits={"memory": "256Mi"})
    _, cms = steady(s, "cert-manager", "cert-manager", [cm], nodes=nodes, replicas=1,
                    revision=14, rollout=s.ago(days=5, hours=1), service=None, offset=1)
    quiet(s, cms, "cert-manager-controller", 88)
    app_counter(s, "certmanager_http_acme_client_request_count",
                {"method": "POST", "path": "/acme/new-order", "scheme": "https",
                 "host": "acme-v02.api.letsencrypt.org", "status": "201"}, s.times,
                lambda t: 1 / 3600, "The number of requests made by the ACME client.")
    s.metrics.gauge("certmanager_certificate_expiration_timestamp_seconds",
                    {"name": "tutor-web-tls", "namespace": NS, "issuer_name":
                     "letsencrypt-dns01", "issuer_kind": "ClusterIssuer",
                     "issuer_group": "cert-manager.io"},
                    [(t, float(int(cut))) for t in s.times],
                    "The date after which the certificate expires. Expressed as a Unix Epoch "
                    "Time.")
    s.metrics.gauge("certmanager_certificate_ready_status",
                    {"name": "tutor-web-tls", "namespace": NS, "condition": "False",
                     "issuer_name": "letsencrypt-dns01", "issuer_kind": "ClusterIssuer",
                     "issuer_group": "cert-manager.io"},
                    [(t, 1.0 if t >= cut else 0.0) for t in s.times],
                    "The ready status of the certificate.")
    chatter(s, cms, "cert-manager-controller", "cert-manager", [
        ("error", "\"error presenting challenge\" err=\"Cloudflare API Error for GET "
         "\\\"/zones?name=studybuddy.de\\\"\\n Error: 9109: Invalid access token\" "
         "resource_name=\"tutor-web-tls-1-2418876502-1890321147\" resource_namespace="
         "\"tutoring\" resource_kind=\"Challenge\" dnsName=\"learn.studybuddy.de\" "
         "type=\"DNS-01\"", {}),
        ("info", "\"propagation check failed\" resource_kind=\"Challenge\" "
         "dnsName=\"learn.studybuddy.de\"", {}),
    ], 40)
    chatter(s, cms, "cert-manager-controller", "cert-manager", [
        ("info", "\"certificate does not require re-issuance. certificate renewal scheduled "
         "near expiry time\" resource_name=\"grafana-tls\" resource_namespace=\"monitoring\"",
         {}),
    ], 6)
    _ = issued

    # ---- the blackbox exporter
    bb = Ctr("blackbox-exporter", "quay.io/prometheus/blackbox-exporter:v0.25.0", port=9115,
             requests={"cpu": "20m", "memory": "32Mi"}, limits={"memory": "64Mi"})
    _, bbs = steady(s, "monitoring", "blackbox-exporter", [bb], nodes=nodes, replicas=1,
                    revision=3, rollout=s.ago(days=5, hours=20), offset=3)
    quiet(s, bbs, "blackbox-exporter", 24)
    labels = {"job": "blackbox-https", "instance": f"https://{HOST}/health/live",
              "module": "http_2xx"}
    s.metrics.gauge("probe_success", labels,
                    [(t, 0.0 if t >= cut else 1.0) for t in s.times],
                    "Displays whether or not the probe was a success")
    s.metrics.gauge("probe_ssl_earliest_cert_expiry", labels,
                    [(t, float(int(cut))) for t in s.times if t < cut],
                    "Returns last SSL chain expiry in unixtime")
    chatter(s, bbs, "blackbox-exporter", "blackbox-exporter", [
        ("error", f"msg=\"Error for HTTP request\" target=https://{HOST}/health/live "
         "err=\"Get \\\"https://learn.studybuddy.de/health/live\\\": tls: failed to verify "
         "certificate: x509: certificate has expired or is not yet valid: current time "
         f"{NOW - timedelta(minutes=20):%Y-%m-%dT%H:%M:%SZ} is after "
         f"{expired:%Y-%m-%dT%H:%M:%SZ}\"", {}),
    ], 30, start=expired)

    # ---- red herrings
    video = Ctr("room-broker", f"{REG}/room-broker:1.9.0", port=8080,
                requests={"cpu": "100m", "memory": "192Mi"}, limits={"memory": "384Mi"})
    _, vids = steady(s, NS, "room-broker", [video], nodes=nodes, replicas=2, revision=40,
                     rollout=s.ago(days=1, hours=2), offset=2)
    quiet(s, vids, "room-broker", 150)
    chatter(s, vids, "room-broker", "room-broker", [
        ("warn", "webhook from daily.co rejected: signature mismatch (401), room sb-77120", {}),
        ("info", "room sb-77133 created for session SB-77133 (2 participants)", {}),
    ], 40)
    redis = Ctr("redis", "docker.io/library/redis:7.2.7", port=6379, port_name="redis",
                requests={"cpu": "100m", "memory": "256Mi"}, limits={"memory": "512Mi"})
    _, rds = steady(s, NS, "session-redis", [redis], nodes=nodes, replicas=1, revision=6,
                    rollout=s.ago(minutes=47, seconds=30), service=6379, target="redis",
                    offset=1)
    quiet(s, rds, "redis", 90)
    born = datetime.fromisoformat(rds[0]["metadata"]["creationTimestamp"].replace("Z",
                                                                                "+00:00"))
    started = datetime.fromisoformat(rds[0]["status"]["containerStatuses"][0]["state"][
        "running"]["startedAt"].replace("Z", "+00:00"))
    c.event(rds[0], "Scheduled", f"Successfully assigned {NS}/{rds[0]['metadata']['name']} to "
            f"{rds[0]['spec']['nodeName']}", first=born, component="default-scheduler",
            host="")
    c.event(rds[0], "Pulled", 'Container image "docker.io/library/redis:7.2.7" already '
            "present on machine", first=started - timedelta(seconds=1),
            field_path="spec.containers{redis}")
    c.event(rds[0], "Started", "Started container redis", first=started,
            field_path="spec.containers{redis}")
    return s
