"""Recruiting SaaS: CV uploads and candidate searches fail now and then. At 11:39 the
platform repo bumped the NodeLocal DNSCache DaemonSet from 1.24.0 to "1.42.0", a tag that
does not exist. With maxUnavailable 2 the controller replaced the pods of two nodes first;
the new pods cannot pull their image and the rollout stops there. The kubelets point every
pod at 169.254.20.10, so pods on those two nodes get no DNS answers at all (timeouts,
EAI_AGAIN), while the same services on the other four nodes work: hence "intermittent".
CoreDNS itself is healthy."""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import partial

from tests.data.holdout._generator.base import daemonset, gauge, host_network, set_times
from tests.data.holdout2._generator.kit import NodeKind, app_counter, requests, restarts_series
from tests.scenario_tools.common import truth
from tests.scenario_tools.failures import image_pull_events
from tests.scenario_tools.kube import Ctr, Obj, Template, http_probe, waiting

from .kit3 import (
    Incident,
    chatter,
    exoscale_nodes,
    ghosts,
    log_pod,
    namespaces,
    service_range,
    steady,
    times_of,
)

ID = "resume-uploads-failing"
NOW = datetime.fromisoformat("2027-06-08T12:31:00+00:00")
NS = "hiring"
REG = "registry.gitlab.com/talentlane/platform"
GOOD = "registry.k8s.io/dns/k8s-dns-node-cache:1.24.0"
BAD = "registry.k8s.io/dns/k8s-dns-node-cache:1.42.0"
PG = "hiring-prod-talentlane-3f7a1c.a.aivencloud.com"
PULL_ERROR = (f'rpc error: code = NotFound desc = failed to pull and unpack image "{BAD}": '
              f'failed to resolve reference "{BAD}": {BAD}: not found')


def build() -> Incident:
    s = Incident(
        id=ID,
        title="CV uploads and candidate search failing intermittently",
        now=NOW,
        report="""\
Since about 11:40 UTC uploading a CV on our customers' career pages fails now and then
("Upload failed, please try again") and recruiters get random errors in candidate search.
Retrying often works. The logs have "EAI_AGAIN" and DNS timeouts in them, but CoreDNS looks
fine to us. What is going on?
""",
        truth=truth(
            "image_pull", "DaemonSet", "kube-system", "node-local-dns",
            ["k8s-dns-node-cache:1.42.0", "not found", "ImagePullBackOff", "169.254.20.10",
             "numberUnavailable"],
            "The node-local-dns DaemonSet was updated at 11:39 to the tag 1.42.0, which does "
            "not exist (1.24.0 was meant): its new pods on two nodes cannot pull the image, so "
            "pods there get no DNS at 169.254.20.10. Fix the tag (or roll the DaemonSet back); "
            "the two pods start and DNS on those nodes recovers."))
    set_times(s, 2.0, 30)
    service_range(s, lambda a, b: f"10.96.{a % 200 + 10}.{b}")
    c = s.cluster
    namespaces(s, {"default": 430, "kube-system": 430, NS: 401, "cert-manager": 401})
    kind = NodeKind("standard.large", "4", "8130784Ki", "3900m", "7048416Ki", "v1.31.4",
                    "5.15.0-130-generic", "Ubuntu 22.04.5 LTS", runtime="containerd://1.7.24",
                    storage="51287520Ki", alloc_storage="47265483932")
    nodes = exoscale_nodes(s, 6, pool_id="8a1c2f40-5b3e-4c7d-9e21-0f6a8b3c2d11", kind=kind,
                           zone="ch-gva-2", days=5.9)
    t_r = NOW - timedelta(minutes=51, seconds=37)  # 11:39:23
    broken = [nodes[1], nodes[4]]
    healthy = [n for n in nodes if n not in broken]
    r = t_r.timestamp()

    # ---- node-local-dns: generation 4 on four nodes, generation 5 waiting on two
    def cache(image: str) -> Ctr:
        return Ctr("node-cache", image, port=53, port_name="dns",
                   requests={"cpu": "25m", "memory": "5Mi"}, limits={"memory": "100Mi"},
                   args=["-localip", "169.254.20.10,10.96.0.10", "-conf", "/etc/Corefile",
                         "-upstreamsvc", "kube-dns-upstream"],
                   liveness=http_probe("/health", 8080, delay=60, timeout=5),
                   mounts=[{"name": "config-volume", "mountPath": "/etc/coredns"},
                           {"name": "xtables-lock", "mountPath": "/run/xtables.lock"}])
    volumes = [{"name": "xtables-lock", "hostPath": {"path": "/run/xtables.lock",
                                                     "type": "FileOrCreate"}},
               {"name": "config-volume", "configMap": {"name": "node-local-dns", "items": [
                   {"key": "Corefile", "path": "Corefile.base"}]}}]
    tolerations = [{"operator": "Exists", "effect": "NoExecute"},
                   {"operator": "Exists", "effect": "NoSchedule"}]
    ds, olds = daemonset(s, "kube-system", "node-local-dns", [cache(GOOD)], node_list=healthy,
                         generation=4, since=s.ago(days=5.85), labels={"k8s-app":
                                                                       "node-local-dns"},
                         tolerations=tolerations, volumes=volumes,
                         annotations={"prometheus.io/port": "9253",
                                      "prometheus.io/scrape": "true"})
    host_network(olds)
    ds.obj["spec"]["updateStrategy"] = {"type": "RollingUpdate", "rollingUpdate": {
        "maxSurge": 0, "maxUnavailable": 2}}
    ds.obj["metadata"]["generation"] = 5
    old_rev = ds.revisions[-1]
    tpl = Template([cache(BAD)], service_account="node-local-dns",
                   tolerations=list(tolerations), volumes=list(volumes),
                   annotations={"prometheus.io/port": "9253", "prometheus.io/scrape": "true"})
    rev = c.revision(ds, 5, t_r, tpl)
    hash_ = rev["metadata"]["name"].rsplit("-", 1)[1]
    news: list[Obj] = []
    for i, n in enumerate(broken):
        born = t_r + timedelta(seconds=1.4 + 0.3 * i)
        pod = c.pod(ds, rev, node=n, created=born, statuses={"node-cache": waiting(
            "ImagePullBackOff", f'Back-off pulling image "{BAD}"')})
        pod["metadata"]["labels"]["controller-revision-hash"] = hash_
        pod["metadata"]["labels"]["pod-template-generation"] = "5"
        pod["spec"]["affinity"] = {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{
                "matchFields": [{"key": "metadata.name", "operator": "In",
                                 "values": [n["metadata"]["name"]]}]}]}}}
        news.append(pod)
    host_network(news)
    for pod in [*olds, *news]:
        pod["spec"]["priorityClassName"] = "system-node-critical"
        pod["spec"]["priority"] = 2000001000
        pod["spec"]["dnsPolicy"] = "Default"
    gone = ghosts(s, old_rev, broken, [s.ago(days=5.85) + timedelta(seconds=20 * k)
                                       for k in range(2)],
                  [t_r + timedelta(seconds=0.4 + 0.2 * k) for k in range(2)])
    for g, n in zip(gone, broken, strict=True):
        g["metadata"]["name"] = f"node-local-dns-{c.token(5)}"
        g["spec"]["nodeName"] = n["metadata"]["name"]

    def ds_status(objects: list[Obj]) -> None:
        ds.obj["status"]["updatedNumberScheduled"] = 2
        ds.obj["status"]["observedGeneration"] = 5
    s.fixes.append(ds_status)
    for g in gone:
        c.event(ds.obj, "SuccessfulDelete", f"Deleted pod: {g['metadata']['name']}",
                first=datetime.fromtimestamp(g["metadata"]["_deleted"], NOW.tzinfo),
                component="daemonset-controller")
    for pod in news:
        born = datetime.fromisoformat(pod["metadata"]["creationTimestamp"].replace("Z",
                                                                                   "+00:00"))
        c.event(ds.obj, "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}",
                first=born, component="daemonset-controller")
        c.event(pod, "Scheduled", f"Successfully assigned kube-system/{pod['metadata']['name']}"
                f" to {pod['spec']['nodeName']}", first=born + timedelta(seconds=0.1),
                component="default-scheduler", host="")
        image_pull_events(s, pod, "node-cache", BAD, PULL_ERROR,
                          since=born + timedelta(seconds=0.6))
    for metric, before, after_, help_ in (
            ("kube_daemonset_status_number_unavailable", 0.0, 2.0,
             "The number of nodes that should be running the daemon pod and have none of the "
             "daemon pod running and available"),
            ("kube_daemonset_status_updated_number_scheduled", 6.0, 2.0,
             "The total number of nodes that are running updated daemon pod")):
        gauge(s, metric, {"namespace": "kube-system", "daemonset": "node-local-dns"},
              partial(_step, r + 2, before, after_), help_)
    for pod in news:
        gauge(s, "kube_pod_container_status_waiting_reason", {
            "namespace": "kube-system", "pod": pod["metadata"]["name"],
            "container": "node-cache", "reason": "ImagePullBackOff"},
            lambda t: 1.0, "Describes the reason the container is currently in waiting state.",
            times=times_of(s, pod))
    for pod in [*olds, *gone]:
        app_counter(s, "coredns_dns_requests_total", {
            "namespace": "kube-system", "pod": pod["metadata"]["name"],
            "server": "dns://169.254.20.10:53", "zone": "."}, times_of(s, pod),
            lambda t: s.rng.uniform(38, 55), "Counter of DNS requests made per zone, protocol "
            "and family.")
        log_pod(s, pod, "node-cache", "node-local-dns", [
            ("info", "[INFO] Updated Corefile with 0 custom stubdomains and upstream servers "
             "/etc/resolv.conf", {}),
            ("info", "[INFO] Using config file /etc/Corefile", {}),
        ], 2)

    # ---- hiring: the services, the ones on the broken nodes without DNS
    def on_broken(pod: Obj) -> bool:
        return pod["spec"]["nodeName"] in {n["metadata"]["name"] for n in broken}

    api = Ctr("candidate-api", f"{REG}/candidate-api:9.4.2", port=3000,
              requests={"cpu": "250m", "memory": "384Mi"}, limits={"memory": "768Mi"},
              env={"PGHOST": PG, "PGPORT": "21699", "SEARCH_URL": "http://candidate-search:9200",
                   "NODE_ENV": "production"},
              readiness=http_probe("/healthz", "http", delay=5))
    _, apis = steady(s, NS, "candidate-api", [api], nodes=nodes, replicas=4, revision=211,
                     rollout=s.ago(days=2, hours=5, minutes=33),
                     labels={"app.kubernetes.io/name": "candidate-api",
                             "app.kubernetes.io/part-of": "hiring"})
    for pod in apis:
        bad = on_broken(pod)
        requests(s, pod, "candidate-api", rps=lambda t: 6.5, times=times_of(s, pod), codes={
            "200": partial(_step, r if bad else float("inf"), 0.99, 0.12),
            "500": partial(_step, r if bad else float("inf"), 0.004, 0.874)})
        log_pod(s, pod, "candidate-api", "candidate-api", [
            ("info", "GET /v1/candidates?q=java+zurich 200 84ms", {"http.response.status_code":
                                                                   200}),
            ("info", "POST /v1/applications 201 112ms", {"http.response.status_code": 201}),
            ("warn", "GET /v1/candidates/cand_8812 404", {"http.response.status_code": 404}),
        ], 30 if not bad else 16, end=None if not bad else t_r)
        if bad:
            log_pod(s, pod, "candidate-api", "candidate-api", [
                ("error", f"GET /v1/candidates?q=devops+basel 500: getaddrinfo EAI_AGAIN {PG}",
                 {"http.response.status_code": 500, "error.type": "Error"}),
                ("error", "POST /v1/applications 500: getaddrinfo EAI_AGAIN candidate-search."
                 "hiring.svc.cluster.local", {"http.response.status_code": 500,
                                              "error.type": "Error"}),
                ("error", f"pg pool: connection error: getaddrinfo EAI_AGAIN {PG}",
                 {"error.type": "Error"}),
            ], 40, start=t_r + timedelta(seconds=5))
    parser = Ctr("resume-parser", f"{REG}/resume-parser:3.8.0", port=8080,
                 requests={"cpu": "500m", "memory": "512Mi"}, limits={"memory": "1Gi"},
                 env={"SOS_ENDPOINT": "https://sos-ch-gva-2.exo.io", "SOS_BUCKET":
                      "talentlane-cv-prod"},
                 readiness=http_probe("/ready", "http", delay=3))
    _, parsers = steady(s, NS, "resume-parser", [parser], nodes=nodes, replicas=3, revision=57,
                        rollout=s.ago(days=4, hours=1), offset=1,
                        restarted={2: (s.ago(days=1, hours=22, minutes=40), "OOMKilled", 137)})
    restarts_series(s, parsers[2], "resume-parser", 1, [])
    for pod in parsers:
        bad = on_broken(pod)
        for result in ("stored", "failed"):
            app_counter(s, "resume_uploads_total", {"namespace": NS, "pod":
                                                    pod["metadata"]["name"], "result": result},
                        times_of(s, pod), partial(
                            _step, r if bad else float("inf"),
                            0.7 * (0.995 if result == "stored" else 0.005),
                            0.7 * (0.0 if result == "stored" else 1.0)),
                        "CV uploads by result.")
        log_pod(s, pod, "resume-parser", "resume-parser", [
            ("info", "parsed cv_41f2.pdf (2 pages, lang=de) and stored to sos://talentlane-cv-"
             "prod/2027/06/cv_41f2.pdf", {}),
            ("warn", "cv_77aa.docx: embedded font not found, text extraction degraded", {}),
        ], 30 if not bad else 14, end=None if not bad else t_r)
        if bad:
            ip = pod["status"]["podIP"]
            log_pod(s, pod, "resume-parser", "resume-parser", [
                ("error", "upload cv_9c1e.pdf failed: PutObject: dial tcp: lookup sos-ch-gva-2."
                 f"exo.io on 169.254.20.10:53: read udp {ip}:52817->169.254.20.10:53: i/o "
                 "timeout", {"error.type": "*net.OpError"}),
                ("error", "upload cv_31d0.docx failed: PutObject: dial tcp: lookup sos-ch-gva-2."
                 f"exo.io on 169.254.20.10:53: read udp {ip}:40913->169.254.20.10:53: i/o "
                 "timeout", {"error.type": "*net.OpError"}),
            ], 34, start=t_r + timedelta(seconds=8))
    sender = Ctr("notification-sender", f"{REG}/notification-sender:1.5.1", port=None,
                 requests={"cpu": "100m", "memory": "192Mi"}, limits={"memory": "384Mi"},
                 env={"SMTP_HOST": "smtp.postmarkapp.com"})
    _, senders = steady(s, NS, "notification-sender", [sender], nodes=broken[1:], replicas=1,
                        revision=12, rollout=s.ago(days=3, hours=2), service=None)
    log_pod(s, senders[0], "notification-sender", "notification-sender", [
        ("info", "sent 'application received' mail to c***@bluewin.ch", {}),
    ], 18, end=t_r)
    log_pod(s, senders[0], "notification-sender", "notification-sender", [
        ("error", "send failed for job ntf_4410: socket.gaierror: [Errno -3] Temporary "
         "failure in name resolution (smtp.postmarkapp.com), retry in 60s",
         {"error.type": "socket.gaierror"}),
    ], 30, start=t_r + timedelta(seconds=20))
    board = Ctr("job-board", f"{REG}/job-board:2027.23.1", port=3000,
                requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "512Mi"},
                readiness=http_probe("/api/health", "http", delay=5))
    _, boards = steady(s, NS, "job-board", [board], nodes=healthy, replicas=2, revision=402,
                       rollout=s.ago(days=1, hours=4))
    chatter(s, boards, "job-board", "job-board", [
        ("info", "GET /jobs/senior-backend-engineer-zurich 200", {}),
        ("warn", "GET /jobs/expired-posting-2026 410", {}),
        ("info", "POST /api/upload-cv -> candidate-api 201", {}),
    ], 40)
    chatter(s, boards, "job-board", "job-board", [
        ("error", "POST /api/upload-cv -> candidate-api 500 (getaddrinfo EAI_AGAIN)", {}),
    ], 16, start=t_r + timedelta(seconds=30))

    # ---- kube-system: CoreDNS is fine (search-path NXDOMAINs as always)
    dns = Ctr("coredns", "registry.k8s.io/coredns/coredns:v1.11.3", port=53, port_name="dns",
              requests={"cpu": "100m", "memory": "70Mi"}, limits={"memory": "170Mi"},
              args=["-conf", "/etc/coredns/Corefile"],
              readiness=http_probe("/ready", 8181, delay=0, period=2))
    _, dnss = steady(s, "kube-system", "coredns", [dns], nodes=healthy, replicas=2, revision=2,
                     rollout=s.ago(days=5.8), service=None, labels={"k8s-app": "kube-dns"})
    chatter(s, dnss, "coredns", "coredns", [
        ("info", "[INFO] 169.254.20.10:44102 - 5533 \"AAAA IN sos-ch-gva-2.exo.io.hiring.svc."
         "cluster.local. udp 75 false 1232\" NXDOMAIN qr,aa,rd 168 0.000113s", {}),
        ("info", "[INFO] 169.254.20.10:38811 - 1210 \"A IN candidate-search.hiring.svc.cluster."
         "local. udp 83 false 1232\" NOERROR qr,aa,rd 142 0.000097s", {}),
    ], 40)
    for pod in dnss:
        app_counter(s, "coredns_dns_requests_total", {
            "namespace": "kube-system", "pod": pod["metadata"]["name"],
            "server": "dns://:53", "zone": "."}, times_of(s, pod),
            lambda t: s.rng.uniform(60, 80) * (1.0 if t < r else 0.7),
            "Counter of DNS requests made per zone, protocol and family.")
    csi = Ctr("exoscale-csi-plugin", "exoscale/csi-driver:0.31.2", port=None,
              requests={"cpu": "10m", "memory": "32Mi"}, limits={"memory": "128Mi"})
    _, csis = daemonset(s, "kube-system", "exoscale-csi-node", [csi], node_list=nodes,
                        generation=3, since=s.ago(days=5.8), labels={"app": "exoscale-csi-node"},
                        stagger=7)
    chatter(s, csis, "exoscale-csi-plugin", "exoscale-csi-node", [
        ("info", "NodeGetCapabilities called", {}),
        ("warn", "failed to get instance metadata, using cached zone ch-gva-2", {}),
    ], 10)
    cmw = Ctr("cert-manager-webhook", "quay.io/jetstack/cert-manager-webhook:v1.17.2",
              port=10250, port_name="https", requests={"cpu": "10m", "memory": "32Mi"},
              limits={"memory": "128Mi"})
    _, cmws = steady(s, "cert-manager", "cert-manager-webhook", [cmw], nodes=healthy,
                     replicas=1, revision=6, rollout=s.ago(days=5, hours=2))
    chatter(s, cmws, "cert-manager-webhook", "cert-manager-webhook", [
        ("warn", "http: TLS handshake error from 192.168.40.1:51166: EOF", {}),
    ], 6)
    return s


def _step(edge: float, before: float, after: float, t: int) -> float:
    return before if t < edge else after
