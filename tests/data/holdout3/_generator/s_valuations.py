"""Real estate: the price estimate disappears from every listing. The valuation team moved
valuation-api to version 2 of their Helm chart at 13:34: the chart labels pods with
app.kubernetes.io/name and app.kubernetes.io/instance instead of app, so the Deployment was
deleted and created again with the new selector. The Service valuation-api lives in the
networking repo (Argo CD) and still selects app=valuation-api: it has no endpoints since the
old pods went away. The new pods are Ready and idle; the mesh answers every caller with 503
no_healthy_upstream (UH)."""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import partial

from tests.data.holdout._generator.base import add_service, daemonset, gauge, set_times
from tests.data.holdout2._generator.kit import (
    NodeKind,
    app_counter,
    deleted,
    deploy,
    drift,
    restarts_series,
    working_set,
)
from tests.scenario_tools.common import MIB, truth
from tests.scenario_tools.kube import Ctr, Obj, http_probe, iso, running

from .kit3 import (
    Incident,
    chatter,
    log_pod,
    namespaces,
    service_range,
    steady,
    times_of,
    vultr_nodes,
)

ID = "property-valuations-missing"
NOW = datetime.fromisoformat("2027-05-19T14:08:00+00:00")
NS = "property-search"
REG = "ams.vultrcr.com/immoblick"
SVC_HOST = "valuation-api.property-search.svc.cluster.local"
ISTIO = "docker.io/istio/proxyv2:1.25.2"


def _proxy() -> Ctr:
    return Ctr("istio-proxy", ISTIO, port=15090, port_name="http-envoy-prom",
               requests={"cpu": "100m", "memory": "128Mi"}, limits={"memory": "1Gi"},
               args=["proxy", "sidecar", "--domain", "$(POD_NAMESPACE).svc.cluster.local",
                     "--proxyLogLevel=warning", "--log_output_level=default:info"],
               readiness=http_probe("/healthz/ready", 15021, delay=0, period=15, failures=4))


def _mesh(pods: list[Obj]) -> None:
    for pod in pods:
        pod["metadata"].setdefault("annotations", {}).update({
            "istio.io/rev": "default", "prometheus.io/path": "/stats/prometheus",
            "prometheus.io/port": "15020", "prometheus.io/scrape": "true",
            "sidecar.istio.io/status": '{"initContainers":["istio-init"],"containers":'
            '["istio-proxy"],"volumes":["workload-socket","credential-socket",'
            '"workload-certs","istio-envoy","istio-data","istio-podinfo","istio-token",'
            '"istiod-ca-cert"],"imagePullSecrets":null,"revision":"default"}'})
        pod["metadata"]["labels"]["security.istio.io/tlsMode"] = "istio"
        pod["metadata"]["labels"]["service.istio.io/canonical-name"] = \
            pod["metadata"]["labels"].get("app.kubernetes.io/name") or \
            pod["metadata"]["labels"].get("app", "")


def build() -> Incident:
    s = Incident(
        id=ID,
        title="Price estimates missing on listing pages",
        now=NOW,
        report="""\
Since about 13:35 the "estimated market value" box is missing on every listing page and the
mortgage calculator says "Bewertung derzeit nicht verfügbar". In the browser the estimate
call returns 503. The valuation team says valuation-api is up, all pods green, but they
don't see any requests coming in. Nothing changed on the web side today.
""",
        truth=truth(
            "network", "Service", NS, "valuation-api",
            ["app: valuation-api", "no healthy upstream", "no_healthy_upstream", "UH",
             "app.kubernetes.io/name: valuation-api"],
            "The Service property-search/valuation-api still selects app=valuation-api, but "
            "the Deployment recreated at 13:34 by chart 2.0 labels its pods "
            "app.kubernetes.io/name/app.kubernetes.io/instance=valuation-api: the Service has "
            "no endpoints and the mesh answers 503 UH. Change the Service's selector in the "
            "networking repo to the new labels (or add app=valuation-api to the pod template)."))
    set_times(s, 2.0, 20)
    service_range(s, lambda a, b: f"10.96.{a % 200 + 10}.{b}")
    c = s.cluster
    namespaces(s, {"default": 640, "kube-system": 640, "istio-system": 600, NS: 590,
                   "property-web": 590, "media-pipeline": 380})
    for ns in (NS, "property-web"):
        c.objects_of("Namespace")[[n["metadata"]["name"] for n in c.objects_of(
            "Namespace")].index(ns)]["metadata"]["labels"]["istio-injection"] = "enabled"
    kind = NodeKind("vc2-4c-8gb", "4", "8132164Ki", "3800m", "6993220Ki", "v1.31.5",
                    "6.1.0-31-amd64", "Debian GNU/Linux 12 (bookworm)",
                    runtime="containerd://1.7.25", storage="165009444Ki",
                    alloc_storage="152073232406")
    nodes = vultr_nodes(s, 4, pool="immo-prod-pool", kind=kind, region="ams", days=6.6)

    # ---- valuation-api: the old Deployment deleted, the new one created at 13:34
    t_r = NOW - timedelta(minutes=34, seconds=20)
    gone_at = t_r - timedelta(seconds=19)
    env = {"MODEL_URI": "s3://immo-models/avm/2027-05-12/", "COMPARABLES_DB":
           "postgres://avm@pg-avm.internal.immoblick.de:5432/avm", "WORKERS": "4"}

    def api(version: str) -> Ctr:
        return Ctr("valuation-api", f"{REG}/valuation-api:{version}", port=8080,
                   requests={"cpu": "500m", "memory": "1Gi"}, limits={"memory": "2Gi"},
                   env=dict(env), readiness=http_probe("/health/ready", "http", delay=15),
                   liveness=http_probe("/health/live", "http", delay=30, period=20))
    chart = {"app.kubernetes.io/name": "valuation-api", "app.kubernetes.io/instance":
             "valuation-api", "app.kubernetes.io/managed-by": "Helm",
             "app.kubernetes.io/version": "4.6.1", "helm.sh/chart": "service-2.0.3"}
    started = [t_r + timedelta(seconds=11.5 + 1.3 * i) for i in range(3)]
    work, pods = deploy(s, NS, "valuation-api", [api("4.6.1"), _proxy()], replicas=3,
                        nodes=nodes, revision=1, rollout=t_r, created=t_r, labels=chart,
                        template_labels={"app.kubernetes.io/instance": "valuation-api",
                                         "app.kubernetes.io/version": "4.6.1"},
                        born=lambda i: t_r + timedelta(seconds=0.6 + 0.2 * i),
                        statuses=lambda i, n, st: {
                            "valuation-api": running(started[i]),
                            "istio-proxy": running(started[i] - timedelta(seconds=1.2))},
                        service=None, sa="valuation-api")
    work.obj["spec"]["selector"]["matchLabels"] = {
        "app.kubernetes.io/name": "valuation-api", "app.kubernetes.io/instance":
        "valuation-api"}
    work.revisions[-1]["spec"]["selector"]["matchLabels"]["app.kubernetes.io/instance"] = \
        "valuation-api"
    _mesh(pods)
    for pod in pods:
        for cond in pod["status"]["conditions"]:
            if cond["type"] in ("Ready", "ContainersReady"):
                cond["lastTransitionTime"] = iso(started[pods.index(pod)]
                                                 + timedelta(seconds=21))
    rs = work.revisions[-1]
    work.progressing = ("NewReplicaSetAvailable", f'ReplicaSet "{rs["metadata"]["name"]}" has '
                        "successfully progressed.", started[-1] + timedelta(seconds=23))
    c.event(work.obj, "ScalingReplicaSet", f"Scaled up replica set {rs['metadata']['name']} "
            "from 0 to 3", first=t_r + timedelta(seconds=0.3),
            component="deployment-controller")
    for i, pod in enumerate(pods):
        name = pod["metadata"]["name"]
        born = t_r + timedelta(seconds=0.6 + 0.2 * i)
        c.event(rs, "SuccessfulCreate", f"Created pod: {name}", first=born,
                component="replicaset-controller")
        c.event(pod, "Scheduled", f"Successfully assigned {NS}/{name} to "
                f"{pod['spec']['nodeName']}", first=born + timedelta(seconds=0.1),
                component="default-scheduler", host="")
        for ctr, when in (("istio-proxy", started[i] - timedelta(seconds=1.2)),
                          ("valuation-api", started[i])):
            image = ISTIO if ctr == "istio-proxy" else f"{REG}/valuation-api:4.6.1"
            fp = f"spec.containers{{{ctr}}}"
            c.event(pod, "Pulled", f'Container image "{image}" already present on machine',
                    first=when - timedelta(seconds=0.4), field_path=fp)
            c.event(pod, "Created", f"Created container: {ctr}",
                    first=when - timedelta(seconds=0.2), field_path=fp)
            c.event(pod, "Started", f"Started container {ctr}", first=when, field_path=fp)
    old_hash = c.token(10)
    old_pods = [deleted(s, NS, f"valuation-api-{old_hash}-{c.token(5)}",
                        nodes[(i + 2) % 4]["metadata"]["name"],
                        s.ago(days=4, hours=6, minutes=2) + timedelta(seconds=40 * i),
                        gone_at + timedelta(seconds=0.4 * i)) for i in range(3)]
    old_ips = [f"10.244.{(i + 2) % 4 + 1}.{s.rng.randrange(20, 240)}" for i in range(3)]

    # the Service of the networking repo and its (now empty) Endpoints
    svc = add_service(s, NS, "valuation-api", {"app": "valuation-api"},
                      [{"name": "http-api", "port": 8080, "protocol": "TCP",
                        "targetPort": 8080}], created=s.ago(days=401),
                      cluster_ip="10.96.148.23",
                      labels={"app": "valuation-api",
                              "argocd.argoproj.io/instance": "property-networking"})
    svc["metadata"]["annotations"] = {
        "argocd.argoproj.io/tracking-id": "property-networking:/Service:property-search/"
        "valuation-api"}
    ep_meta = c.meta("Endpoints", "valuation-api", NS, s.ago(days=401),
                     {"app": "valuation-api",
                      "argocd.argoproj.io/instance": "property-networking"})
    ep_meta["annotations"] = {"endpoints.kubernetes.io/last-change-trigger-time":
                              iso(gone_at + timedelta(seconds=0.8))}
    c.add({"apiVersion": "v1", "kind": "Endpoints", "metadata": ep_meta})

    # ---- valuation-api metrics: old pods served, new pods get nothing
    def share(t: int) -> float:
        return 1.0 if t < gone_at.timestamp() else 0.0

    def served(rate: float, t: int) -> float:
        return rate * share(t)

    for pod, ip in zip(old_pods, old_ips, strict=True):
        times = times_of(s, pod)
        app_counter(s, "http_requests_total", {"namespace": NS, "service": "valuation-api",
                                               "pod": pod["metadata"]["name"], "code": "200"},
                    times, lambda t: 3.1, "Total number of HTTP requests by status code.")
        gauge(s, "kube_endpoint_address", {"namespace": NS, "endpoint": "valuation-api",
                                           "ip": ip, "ready": "true"},
              lambda t: 1.0, "Information about Endpoint available and non available "
              "addresses.", times=times)
        log_pod(s, pod, "valuation-api", "valuation-api", [
            ("info", "POST /v2/estimate listing=IB-8841207 estimate=EUR 412,000 (+-6.1%) 84ms",
             {"http.response.status_code": 200}),
            ("info", "GET /v2/estimate?listing=IB-7713090 200 61ms",
             {"http.response.status_code": 200}),
            ("warn", "listing IB-9920183 has no living area, estimate from plot size only",
             {}),
        ], 40)
    for pod in pods:
        working_set(s, pod, "valuation-api", drift(s, 1260 * MIB), times=times_of(s, pod))
        name = pod["metadata"]["name"]
        st = started[pods.index(pod)]
        for off, level, msg in (
                (0.9, "info", "valuation-api 4.6.1 starting, 4 workers"),
                (6.2, "info", "loaded AVM model avm-2027-05-12 (gradient boosting, 1840 trees) "
                 "from s3://immo-models/avm/2027-05-12/"),
                (9.8, "info", "comparables cache warmed: 2.1M sales in 3.5s"),
                (10.1, "warn", "comparables cache warm-up slower than 3s budget"),
                (18.4, "info", "listening on :8080")):
            s.logs.add(st + timedelta(seconds=off), level, msg, namespace=NS, pod=name,
                       container="valuation-api", service="valuation-api",
                       node=pod["spec"]["nodeName"])
        log_pod(s, pod, "valuation-api", "valuation-api", [
            ("info", "model drift check: PSI 0.03 (ok)", {}),
        ], 2)

    # ---- callers in property-web
    bff = Ctr("listing-bff", f"{REG}/listing-bff:2027.20.1", port=3000,
              requests={"cpu": "250m", "memory": "384Mi"}, limits={"memory": "768Mi"},
              env={"VALUATION_URL": f"http://{SVC_HOST}:8080", "NODE_ENV": "production"},
              readiness=http_probe("/healthz", "http", delay=5))
    _, bffs = steady(s, "property-web", "listing-bff", [bff, _proxy()], nodes=nodes,
                     replicas=2, revision=93, rollout=s.ago(days=1, hours=3, minutes=8))
    _mesh(bffs)
    calc = Ctr("mortgage-calculator", f"{REG}/mortgage-calculator:1.19.0", port=8080,
               requests={"cpu": "250m", "memory": "768Mi"}, limits={"memory": "1Gi"},
               env={"VALUATION_URL": f"http://{SVC_HOST}:8080",
                    "JAVA_TOOL_OPTIONS": "-XX:MaxRAMPercentage=70"},
               readiness=http_probe("/actuator/health/readiness", "http", delay=20))
    _, calcs = steady(s, "property-web", "mortgage-calculator", [calc, _proxy()],
                      nodes=nodes, replicas=1, revision=27,
                      rollout=s.ago(days=3, hours=22), offset=2)
    _mesh(calcs)
    cut = gone_at.timestamp()
    for pod, workload, rate in ((bffs[0], "listing-bff", 1.6), (bffs[1], "listing-bff", 1.5),
                                (calcs[0], "mortgage-calculator", 0.6)):
        base = {"namespace": "property-web", "pod": pod["metadata"]["name"],
                "reporter": "source", "source_workload": workload,
                "destination_service": SVC_HOST}
        times = times_of(s, pod)
        app_counter(s, "istio_requests_total", {**base, "destination_workload": "valuation-api",
                                                "response_code": "200",
                                                "response_flags": "-"},
                    times, partial(served, rate), "Total requests.")
        app_counter(s, "istio_requests_total", {**base, "destination_workload": "unknown",
                                                "response_code": "503",
                                                "response_flags": "UH"},
                    [t for t in times if t >= cut], partial(_flat, rate), "Total requests.",
                    start=0)
    for pod in bffs:
        log_pod(s, pod, "listing-bff", "listing-bff", [
            ("info", "GET /api/listings/IB-8841207 200 (valuation 81ms)",
             {"http.response.status_code": 200}),
            ("warn", "GET /api/listings/IB-1102291 404: listing withdrawn",
             {"http.response.status_code": 404}),
        ], 40, end=gone_at)
        log_pod(s, pod, "listing-bff", "listing-bff", [
            ("error", f"valuation call failed: 503 Service Unavailable from http://{SVC_HOST}"
             ":8080/v2/estimate (body: \"no healthy upstream\"); rendering listing without "
             "estimate", {"http.response.status_code": 503}),
            ("info", "GET /api/listings/IB-7713090 200 (valuation unavailable)",
             {"http.response.status_code": 200}),
            ("warn", "GET /api/listings/IB-1102291 404: listing withdrawn",
             {"http.response.status_code": 404}),
        ], 45, start=gone_at)
        t = gone_at + timedelta(seconds=2)
        while t < NOW:
            listing = f"IB-{s.rng.randrange(10**6, 10**7)}"
            s.logs.add(t, "info", f'[{t.strftime("%Y-%m-%dT%H:%M:%S.")}'
                       f'{t.microsecond // 1000:03d}Z] "GET /v2/estimate?listing={listing} '
                       f'HTTP/1.1" 503 UH no_healthy_upstream - "-" 0 19 0 - "-" "undici" '
                       f'"{c.hexid("rq", listing, length=8)}-{c.hexid("rq2", listing, length=4)}'
                       f'" "{SVC_HOST}:8080" "-" outbound|8080||{SVC_HOST} - '
                       f'{svc["spec"]["clusterIP"]}:8080 {pod["status"]["podIP"]}:'
                       f'{s.rng.randrange(32768, 60999)} - default',
                       namespace="property-web", pod=pod["metadata"]["name"],
                       container="istio-proxy", service="listing-bff",
                       node=pod["spec"]["nodeName"])
            t += timedelta(seconds=s.rng.uniform(70, 190))
    log_pod(s, calcs[0], "mortgage-calculator", "mortgage-calculator", [
        ("info", "POST /api/mortgage/offer 200 (valuation EUR 389,000)", {}),
        ("warn", "rate feed Interhyp delayed 3m, using cached rates", {}),
    ], 20, end=gone_at)
    log_pod(s, calcs[0], "mortgage-calculator", "mortgage-calculator", [
        ("error", "ValuationClient: 503 Service Unavailable: no healthy upstream "
         f"[GET http://{SVC_HOST}:8080/v2/estimate]",
         {"error.type": "org.springframework.web.client.HttpServerErrorException"}),
        ("warn", "rate feed Interhyp delayed 3m, using cached rates", {}),
    ], 24, start=gone_at)

    # ---- property-search neighbours: the policy, listing-search
    c.add({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
           "metadata": c.meta("NetworkPolicy", "allow-web-and-mesh", NS, s.ago(days=230),
                              {"argocd.argoproj.io/instance": "property-networking"},
                              generation=3),
           "spec": {"podSelector": {}, "policyTypes": ["Ingress"], "ingress": [{
               "from": [{"namespaceSelector": {"matchExpressions": [{
                   "key": "kubernetes.io/metadata.name", "operator": "In",
                   "values": ["property-web", NS, "istio-system"]}]}}]}]}})
    search = Ctr("listing-search", f"{REG}/listing-search:3.4.0", port=8080,
                 requests={"cpu": "300m", "memory": "512Mi"}, limits={"memory": "1Gi"},
                 readiness=http_probe("/ready", "http", delay=10))
    _, searches = steady(s, NS, "listing-search", [search, _proxy()], nodes=nodes, replicas=2,
                         revision=51, rollout=s.ago(days=2, hours=1), offset=1)
    _mesh(searches)
    chatter(s, searches, "listing-search", "listing-search", [
        ("info", "search q='3-Zimmer Wohnung Leipzig' hits=1182 took=41ms", {}),
        ("warn", "opensearch slow query 1.2s on index listings-2027.05 (geo_distance + "
         "aggregations)", {}),
    ], 40)

    # ---- istio-system: istiod pushes an empty cluster since the change
    istiod = Ctr("discovery", "docker.io/istio/pilot:1.25.2", port=15010, port_name="grpc-xds",
                 requests={"cpu": "500m", "memory": "2Gi"}, limits={"memory": "4Gi"},
                 readiness=http_probe("/ready", 8080, delay=1, period=3))
    _, istiods = steady(s, "istio-system", "istiod", [istiod], nodes=nodes, replicas=2,
                        revision=14, rollout=s.ago(days=6, hours=2), service=None,
                        labels={"app": "istiod", "istio.io/rev": "default"})
    for pod in istiods:
        log_pod(s, pod, "discovery", "istiod", [
            ("info", "ads\tEDS: PUSH request for node:listing-bff-7c9f8.property-web "
             "resources:64 size:29.8kB empty:0 cached:63/64 filtered:0", {}),
            ("info", "ads\tXDS: Pushing Services:71 ConnectedEndpoints:38 Version:"
             "2027-05-19T12:51:07Z/311", {}),
        ], 14, end=gone_at)
        log_pod(s, pod, "discovery", "istiod", [
            ("info", "ads\tEDS: PUSH request for node:listing-bff-7c9f8.property-web "
             "resources:64 size:29.1kB empty:1 cached:63/64 filtered:0", {}),
            ("info", "ads\tXDS: Pushing Services:71 ConnectedEndpoints:38 Version:"
             "2027-05-19T13:33:41Z/318", {}),
            ("warn", "ads\tADS: \"10.244.3.41:51022\" sidecar~10.244.3.41~photo-resizer-x."
             "media-pipeline timeout waiting for ack, retrying", {}),
        ], 12, start=gone_at)

    # ---- media-pipeline: a restart yesterday, noisy warnings
    resizer = Ctr("photo-resizer", f"{REG}/photo-resizer:2.3.5", port=8080,
                  requests={"cpu": "500m", "memory": "512Mi"}, limits={"memory": "1Gi"},
                  readiness=http_probe("/healthz", "http", delay=5))
    _, resizers = steady(s, "media-pipeline", "photo-resizer", [resizer], nodes=nodes,
                         replicas=2, revision=38, rollout=s.ago(days=3, hours=1),
                         restarted={1: (s.ago(hours=21, minutes=14), "OOMKilled", 137)},
                         offset=3)
    restarts_series(s, resizers[1], "photo-resizer", 1, [])
    chatter(s, resizers, "photo-resizer", "photo-resizer", [
        ("info", "resized IB-8841207/photo-07.jpg to 4 variants in 380ms", {}),
        ("warn", "source image IB-1183390/photo-02.heic has no EXIF orientation, assuming 1",
         {}),
    ], 30)
    cilium = Ctr("cilium-agent", "quay.io/cilium/cilium:v1.16.7", port=None,
                 requests={"cpu": "100m", "memory": "10Mi"}, limits={})
    _, ciliums = daemonset(s, "kube-system", "cilium", [cilium], node_list=nodes,
                           generation=6, since=s.ago(days=6.5), labels={"k8s-app": "cilium"})
    chatter(s, ciliums, "cilium-agent", "cilium", [
        ("info", "level=info msg=\"regenerating all endpoints\" reason=\"one or more identities "
         "created or deleted\" subsys=endpoint-manager", {}),
    ], 8)
    return s


def _flat(rate: float, t: int) -> float:
    return rate
