"""partner-tls-handshakes: a must-staple certificate behind a proxy that does not staple.

The cert-renewer CronJob now asks certbot for ``--must-staple`` (added in the last
renewal job template). This morning's renewal put such a certificate on edge/tls-proxy,
whose nginx config has had ``ssl_stapling off`` since an OCSP-responder outage. Clients
that honour the TLS Feature extension refuse the handshake; browsers' soft-fail paths,
the blackbox probe and most partners keep working.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from ._base import iso, uid
from ._kit import Container, Workload
from ._scene import Line, Scene
from ._signals import restarted

SID = "partner-tls-handshakes"
NODES = [f"ip-10-8-{a}-{b}.us-west-2.compute.internal" for a, b in ((16, 5), (33, 144),
                                                                      (48, 220))]
HOST = "api.partners.globex.example"
NGINX_CONF = f"""server {{
    listen 443 ssl;
    http2 on;
    server_name {HOST};
    ssl_certificate     /etc/tls/live/{HOST}/fullchain.pem;
    ssl_certificate_key /etc/tls/live/{HOST}/privkey.pem;
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_session_cache shared:SSL:20m;
    # OCSP stapling disabled 2025-02-11 (INC-4471, responder timeouts stalled workers)
    ssl_stapling off;
    ssl_stapling_verify off;
    location / {{
        proxy_pass http://partner-api.partners.svc.cluster.local;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
    }}
}}
"""


def build(root: Path) -> None:
    """Write the scenario."""
    s = Scene(SID, "2026-10-27T10:30:00Z", seed=5908, window_min=420, step_s=120)
    renew = s.ago(262)
    reload = renew + timedelta(seconds=95)
    s.nodes(NODES, itype="m7i.2xlarge")
    s.namespaces("edge", "partners", "integrations", "monitoring", "batch")
    s.cluster.add({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "tls-proxy-conf", "namespace": "edge",
                                "uid": uid("cm", "edge", "tls-proxy-conf"),
                                "creationTimestamp": "2025-02-11T19:02:10Z"},
                   "data": {"partners.conf": NGINX_CONF}})
    proxy = s.cluster.workload(Workload(
        "edge", "tls-proxy",
        [Container("nginx", "docker.io/library/nginx:1.27.2", port=443, probe_path=None,
                   cpu_req="250m", cpu_lim="1", mem_req="128Mi", mem_lim="256Mi",
                   mounts=[{"name": "conf", "mountPath": "/etc/nginx/conf.d"},
                           {"name": "tls", "mountPath": "/etc/tls"}]),
         Container("cert-watcher", "ghcr.io/globex/inotify-reload:0.4.1", port=None,
                   probe_path=None, cpu_req="10m", cpu_lim="50m", mem_req="16Mi",
                   mem_lim="32Mi", env={"WATCH": "/etc/tls/live", "SIGNAL": "HUP"})],
        NODES, s.ago(60 * 24 * 620), replicas=2, revision=12, rollout_at=s.ago(60 * 24 * 30),
        service_port=443,
        pod_spec_extra={"volumes": [{"name": "conf", "configMap": {"name": "tls-proxy-conf"}},
                                    {"name": "tls", "persistentVolumeClaim":
                                     {"claimName": "partner-certs"}}]}))
    s.cluster.add({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                   "metadata": {"name": "partner-certs", "namespace": "edge",
                                "creationTimestamp": "2025-01-20T12:00:00Z"},
                   "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": "efs-sc",
                            "resources": {"requests": {"storage": "1Gi"}}},
                   "status": {"phase": "Bound", "capacity": {"storage": "1Gi"}}})
    args = ["certonly", "--non-interactive", "--dns-route53", "--keep-until-expiring",
            "--must-staple", "--key-type", "ecdsa", "--config-dir", "/etc/tls", "-d", HOST]
    job_tpl = {"spec": {"backoffLimit": 1, "template": {"spec": {
        "restartPolicy": "Never", "serviceAccountName": "cert-renewer",
        "containers": [{"name": "certbot", "image": "docker.io/certbot/dns-route53:v3.0.1",
                        "args": args, "volumeMounts": [{"name": "tls",
                                                        "mountPath": "/etc/tls"}]}],
        "volumes": [{"name": "tls", "persistentVolumeClaim": {"claimName": "partner-certs"}}]}}}}
    s.cluster.add({"apiVersion": "batch/v1", "kind": "CronJob",
                   "metadata": {"name": "cert-renewer", "namespace": "edge",
                                "uid": uid("cj", "edge", "cert-renewer"),
                                "creationTimestamp": "2025-01-20T12:00:00Z",
                                "annotations": {"globex.io/last-change":
                                                "SEC-2210 harden partner cert (ecdsa, "
                                                "must-staple)"}},
                   "spec": {"schedule": "15 6 * * *", "concurrencyPolicy": "Forbid",
                            "jobTemplate": job_tpl},
                   "status": {"lastScheduleTime": iso(renew),
                              "lastSuccessfulTime": iso(renew + timedelta(seconds=88))}})
    s.cluster.add({"apiVersion": "batch/v1", "kind": "Job",
                   "metadata": {"name": "cert-renewer-29360535", "namespace": "edge",
                                "uid": uid("job", "edge", "cert-renewer-29360535"),
                                "creationTimestamp": iso(renew),
                                "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob",
                                                     "name": "cert-renewer", "controller": True,
                                                     "uid": uid("cj", "edge", "cert-renewer")}]},
                   "spec": job_tpl["spec"],
                   "status": {"succeeded": 1, "startTime": iso(renew),
                              "completionTime": iso(renew + timedelta(seconds=88))}})
    api_roll = s.ago(64)

    def api_pod(i: int, pod: dict[str, object]) -> None:
        if i == 0:
            restarted(pod, count=1, finished=s.ago(41), reason="Error", exit_code=1)

    papi = s.cluster.workload(Workload(
        "partners", "partner-api",
        [Container("partner-api", "ghcr.io/globex/partner-api:4.2.0")], NODES,
        s.ago(60 * 24 * 640), replicas=3, revision=58, rollout_at=api_roll, mutate_pod=api_pod,
        previous_images={"partner-api": "ghcr.io/globex/partner-api:4.1.7"}))
    edi = s.cluster.workload(Workload(
        "integrations", "edi-gateway",
        [Container("edi-gateway", "ghcr.io/globex/edi-gateway:1.8.3",
                   env={"PARTNER_API_URL": f"https://{HOST}", "TLS_REVOCATION": "strict"})],
        NODES[1:], s.ago(60 * 24 * 300), replicas=2, rollout_at=s.ago(60 * 24 * 6)))
    bb = s.cluster.workload(Workload(
        "monitoring", "blackbox-exporter",
        [Container("blackbox-exporter", "quay.io/prometheus/blackbox-exporter:v0.25.0",
                   port=9115, probe_path=None)], NODES[:1], s.ago(60 * 24 * 400), replicas=1,
        rollout_at=s.ago(60 * 24 * 6)))
    s.pending_pod("batch", "invoice-pdf-render-29360580-t6wzc", "invoice-pdf-render",
                  "ghcr.io/globex/pdf-render:0.9.4", cpu="3", memory="30Gi", since=s.ago(44),
                  message="0/3 nodes are available: 3 Insufficient memory. preemption: 0/3 "
                  "nodes are available: 3 No preemption victims found for incoming pod.")

    s.cluster.event("partners", "Pod", papi[0].pod, "BackOff", "Back-off restarting failed "
                    f"container partner-api in pod {papi[0].pod}", first=s.ago(42),
                    type_="Warning", host=papi[0].node)

    # --- logs
    job_ref = type(proxy[0])("edge", "cert-renewer-29360535-4kq9z", "certbot", "cert-renewer",
                             NODES[2], "10.244.3.40")
    for k, msg in enumerate([
            "Saving debug log to /var/log/letsencrypt/letsencrypt.log",
            f"Renewing an existing certificate for {HOST}",
            "Successfully received certificate.",
            f"Certificate is saved at: /etc/tls/live/{HOST}/fullchain.pem",
            "This certificate expires on 2027-01-25."]):
        s.logs.add(renew + timedelta(seconds=20 + 15 * k), job_ref, "info", msg)
    for ref in proxy:
        watcher = type(ref)(ref.ns, ref.pod, "cert-watcher", ref.service, ref.node, ref.ip)
        s.logs.add(reload, watcher, "info", f"change in /etc/tls/live/{HOST}/fullchain.pem, "
                   "sending SIGHUP to nginx (pid 1)")
        s.logs.add(reload + timedelta(seconds=1), ref, "notice", "signal 1 (SIGHUP) received "
                   "from 41, reconfiguring")
        s.logs.add(reload + timedelta(seconds=1), ref, "notice", "reconfiguring")

    def proxy_line(t: datetime) -> Line | None:
        ip = f"{s.pick(['198.51.100', '203.0.113', '192.0.2'])}.{s.rng.randrange(2, 250)}"
        r = s.rng.random()
        if t >= reload and r < 0.2:
            return ("info", f"SSL_do_handshake() failed (SSL: error:0A000412:SSL routines::"
                    f"ssl/tls alert bad certificate:SSL alert number 42) while SSL handshaking, "
                    f"client: {ip}, server: 0.0.0.0:443", {"log.logger": "error_log"})
        if r < 0.8:
            path = s.pick(["/v2/shipments", "/v2/orders", "/v2/rates", "/v2/tracking"])
            return ("info", f'{ip} - - "POST {path} HTTP/2.0" 200 {s.rng.randrange(90, 4000)} '
                    f'"partner-sdk/3.1" rt={s.rng.uniform(0.02, 0.4):.3f} ssl=TLSv1.3',
                    {"http.response.status_code": 200, "log.logger": "access_log"})
        return ("info", f'45.{s.rng.randrange(1, 250)}.{s.rng.randrange(1, 250)}.9 - - '
                f'"GET /{s.pick(["actuator/env", "wp-admin", ".aws/credentials"])} HTTP/1.1" '
                '404 153 "zgrab/0.x" rt=0.000', {"http.response.status_code": 404,
                                                 "log.logger": "access_log"})

    for ref in proxy:
        s.chatter(ref, proxy_line, every_s=14, minutes=400)

    def edi_line(t: datetime) -> Line | None:
        if t >= reload and s.rng.random() < 0.8:
            return ("error", f"POST https://{HOST}/v2/orders failed: tls: certificate requires "
                    "OCSP stapling (TLS Feature status_request) but the server did not staple "
                    "an OCSP response; retry 3/3 exhausted",
                    {"error.type": "tls.CertificateVerificationError"})
        return ("info", f"pushed EDI 850 batch ({s.rng.randrange(1, 40)} orders) to partner "
                "api 200", {})

    for ref in edi:
        s.chatter(ref, edi_line, every_s=30, minutes=400)

    def api_line(t: datetime) -> Line | None:
        if s.rng.random() < 0.1:
            return ("warn", "carrier rate provider UPS slow (1.9s), served cached rates", {})
        return ("info", f"POST /v2/shipments 200 {s.rng.randrange(20, 200)}ms",
                {"http.response.status_code": 200})

    for ref in papi:
        s.chatter(ref, api_line, every_s=12, minutes=400)
    s.logs.add(s.ago(41.2), papi[0], "error", "panic: runtime error: invalid memory address or "
               "nil pointer dereference [recovered] in rates.(*Cache).Refresh")

    # --- metrics
    blab = {"namespace": "monitoring", "job": "blackbox", "instance": f"https://{HOST}/healthz"}
    s.gauge("probe_success", "Displays whether or not the probe was a success", blab,
            lambda t: 1)
    s.gauge("probe_ssl_earliest_cert_expiry", "Returns last SSL chain expiry in unixtime",
            blab, lambda t: 1800374400 if t >= reload else 1793952000)
    s.gauge("probe_http_status_code", "Response HTTP status code", blab, lambda t: 200)
    s.usage(bb[0], 0.02, 25e6)
    for ref in proxy:
        s.counter("nginx_http_requests", "Total http requests",
                  {"namespace": "edge", "pod": ref.pod}, lambda t: 18.0 if t >= reload else 21.0)
        s.counter("nginx_connections_accepted", "Accepted client connections",
                  {"namespace": "edge", "pod": ref.pod}, lambda t: 6.0)
        s.counter("nginx_connections_handled", "Handled client connections",
                  {"namespace": "edge", "pod": ref.pod}, lambda t: 6.0)
        s.usage(ref, 0.15, 60e6, cpu_limit=1)
    for ref in papi:
        s.http(ref, "/v2/*", lambda t: 9.0, lambda t: 0.002, lambda t: 0.06, method="POST")

    s.write(root, title="One partner's TLS handshakes fail, monitoring green",
            report="Acme Logistics and our own EDI gateway say the partner API rejects their "
            "TLS connection since early this morning; our uptime checks are all green and "
            "most partners are fine. partner-api was deployed an hour ago and one pod "
            "crashed - related?",
            category="certificate", culprit=("Deployment", "edge", "tls-proxy"),
            evidence=["ssl_stapling off", "--must-staple", "certificate requires OCSP stapling",
                      "SSL alert number 42"],
            fix="Enable OCSP stapling on tls-proxy (ssl_stapling on; ssl_stapling_verify on "
            "with a resolver, or staple from a pre-fetched ssl_stapling_file), or reissue "
            "the certificate without must-staple.")
