"""quota_exceeded: an injected mesh sidecar's memory limit pushes new pods over the quota."""

from __future__ import annotations

import json
from pathlib import Path

from . import _kit as k

SID = "order-api-rollout-zero-new-pods"
NOW = "2026-11-24T10:30:00Z"
NODES = [
    "ip-10-7-16-55.ec2.internal",
    "ip-10-7-33-201.ec2.internal",
    "ip-10-7-49-18.ec2.internal",
    "ip-10-7-62-140.ec2.internal",
]
IMG_OLD = "registry.internal/orders/order-api:3.14.0"
IMG_NEW = "registry.internal/orders/order-api:3.14.1"
PROXY = "docker.io/istio/proxyv2:1.23.2"
ROLLOUT = 24.0
DRAINED = 60 * 5 + 12.0


def proxy_container() -> dict[str, object]:
    c = k.container("istio-proxy", PROXY, port=15090, cpu_req="100m", mem_req="128Mi",
                    cpu_lim="2", mem_lim="1Gi", readiness=k.http_probe("/healthz/ready", 15021,
                                                                         delay=1, period=2))
    c["args"] = ["proxy", "sidecar", "--domain", "$(POD_NAMESPACE).svc.cluster.local",
                 "--proxyLogLevel=warning", "--log_output_level=default:info"]
    c["ports"] = [{"name": "http-envoy-prom", "containerPort": 15090, "protocol": "TCP"}]
    return c


def init_container() -> dict[str, object]:
    c = k.container("istio-init", PROXY, port=None, cpu_req="100m", mem_req="128Mi",
                    cpu_lim="2", mem_lim="1Gi")
    c["args"] = ["istio-iptables", "-p", "15001", "-z", "15006", "-u", "1337", "-m", "REDIRECT",
                 "-i", "*", "-x", "", "-b", "*", "-d", "15090,15021,15020"]
    return c


def build(root: Path) -> None:
    sc = k.Scenario(SID, NOW, seed=5308)
    created = "2025-01-20T08:00:00Z"
    sc.add(k.namespace("default", created),
           k.namespace("orders", created, {"istio-injection": "enabled",
                                           "team": "orders"}),
           k.namespace("istio-system", "2026-11-12T09:00:00Z"),
           k.namespace("web", created), k.namespace("kube-system", created))
    k.add_nodes(sc, NODES, "2026-11-19T03:00:00Z")

    # ------------------------------------------------------------- mesh
    istiod = k.AppSpec("istio-system", "istiod", "docker.io/istio/pilot:1.23.2", 2, NODES[:2],
                       revision=1, port=15017, readiness="/ready", kind="worker",
                       rs_age_min=60 * 24 * 6, log_every=2.5, mem_lim="2Gi", mem_mb=600,
                       worker_lines=("ads\tPush debounce stable[{n}] 1 for config "
                                     "ServiceEntry and 0 more configs: 100.2ms since last "
                                     "change, 100.2ms since last push, full=true",
                                     "ads\tXDS: Pushing Services:{n} ConnectedEndpoints:14 "
                                     "Version:2026-11-24T09:0{n}Z/41"))
    k.add_app(sc, istiod)
    sidecar_values = {
        "global": {"proxy": {"image": "proxyv2", "resources": {
            "requests": {"cpu": "100m", "memory": "128Mi"},
            "limits": {"cpu": "2000m", "memory": "1Gi"}}},
            "proxy_init": {"resources": {"limits": {"cpu": "2000m", "memory": "1Gi"},
                                         "requests": {"cpu": "100m", "memory": "128Mi"}}},
            "hub": "docker.io/istio", "tag": "1.23.2"},
        "sidecarInjectorWebhook": {"enableNamespacesByDefault": False, "rewriteAppHTTPProbe":
                                   True},
    }
    sc.add({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "istio-sidecar-injector", "namespace": "istio-system",
                     "creationTimestamp": "2026-11-12T09:02:00Z",
                     "labels": {"istio.io/rev": "default", "release": "istiod"}},
        "data": {"values": json.dumps(sidecar_values, indent=2),
                 "config": "defaultTemplates: [sidecar]\npolicy: enabled\n"},
    })

    # ------------------------------------------------------------- orders namespace
    pgb = k.AppSpec("orders", "pgbouncer", "bitnami/pgbouncer:1.23.1", 2, NODES[2:], revision=7,
                    port=6432, readiness=None, kind="worker", cpu_req="100m", mem_req="256Mi",
                    mem_lim="1Gi", log_every=5,
                    worker_lines=("stats: {n} xacts/s, {n} queries/s, xact 611 us, query 480 us",))
    pg = k.add_app(sc, pgb)
    pcs = pg.pods[1]["status"]["containerStatuses"][0]
    pcs["restartCount"] = 1
    pcs["lastState"] = {"terminated": {"exitCode": 0, "reason": "Completed",
                                       "startedAt": sc.t(60 * 24 * 5), "finishedAt":
                                       sc.t(60 * 24 * 3 + 400)}}
    worker = k.AppSpec("orders", "order-worker", "registry.internal/orders/order-worker:3.14.0",
                       3, NODES, revision=22, port=None, kind="worker", cpu_req="250m",
                       mem_req="512Mi", mem_lim="1Gi", rs_age_min=60 * 24 * 6 + 200,
                       worker_lines=("fulfilment batch {id}: {n} orders sent to WMS",
                                     "invoice job {id} done in {ms}ms"), log_every=1.3)
    w = k.add_app(sc, worker)
    # one worker pod was recreated after a node drain and got the sidecar injected
    wp = w.pods[2]
    wp["metadata"]["creationTimestamp"] = sc.t(DRAINED)
    wp["metadata"]["annotations"] = {
        "sidecar.istio.io/status": '{"initContainers":["istio-init"],"containers":'
                                   '["istio-proxy"],"volumes":["istio-envoy","istio-data",'
                                   '"istio-podinfo","istio-token","istiod-ca-cert"],'
                                   '"imagePullSecrets":null,"revision":"default"}',
        "prometheus.io/port": "15020", "prometheus.io/scrape": "true"}
    wp["metadata"]["labels"]["security.istio.io/tlsMode"] = "istio"
    wp["metadata"]["labels"]["service.istio.io/canonical-name"] = "order-worker"
    wp["spec"]["containers"].append(proxy_container())
    wp["spec"]["initContainers"] = [init_container()]
    started = sc.t(DRAINED - 0.3)
    wp["status"]["startTime"] = sc.t(DRAINED)
    for c in wp["status"]["conditions"]:
        c["lastTransitionTime"] = sc.t(DRAINED - 0.2)
    wp["status"]["containerStatuses"] = [
        k.cstatus("order-worker", worker.image, {"running": {"startedAt": started}}, ready=True),
        k.cstatus("istio-proxy", PROXY, {"running": {"startedAt": started}}, ready=True)]
    wp["status"]["initContainerStatuses"] = [
        k.cstatus("istio-init", PROXY, {"terminated": {
            "exitCode": 0, "reason": "Completed", "startedAt": sc.t(DRAINED - 0.1 - 0.2),
            "finishedAt": sc.t(DRAINED - 0.28)}}, ready=True)]
    wr = w.refs[2]
    for m in sc.spread(60, 0, 7):
        sc.log(m, wr, "warn", "gRPC config stream to istiod.istio-system.svc:15012 closed: "
                              "13, (forced reconnect, max connection age reached)",
               container="istio-proxy")
    for m in sc.spread(60, 0, 3):
        sc.log(m, wr, "info", f'[{k.iso_ms(sc.ago(m))}] "POST /api/v2/shipments HTTP/1.1" 201 '
                              f'- via_upstream - "-" 512 88 {sc.rng.randint(20, 200)} - '
                              '"wms.partner.example"', container="istio-proxy")

    # ------------------------------------------------------------- order-api
    spec = k.AppSpec("orders", "order-api", IMG_NEW, 6, NODES, cpu_req="500m", mem_req="1Gi",
                     mem_lim="2Gi", rps=0)

    def oa(img: str) -> dict[str, object]:
        return k.container("order-api", img, cpu_req="500m", mem_req="1Gi", mem_lim="2Gi",
                           readiness=k.http_probe("/healthz"),
                           liveness=k.http_probe("/healthz", delay=20, period=20),
                           env=[{"name": "DB_HOST", "value": "pgbouncer.orders.svc"},
                                {"name": "JAVA_TOOL_OPTIONS", "value": "-XX:MaxRAMPercentage=70"}])

    pod_name = f"order-api-{sc.hash(9)}-{sc.hash(5)}"
    quota_msg = (f'pods "{pod_name}" is forbidden: exceeded quota: orders-quota, requested: '
                 "limits.memory=3Gi, used: limits.memory=18Gi, limited: limits.memory=20Gi")
    conds = [
        k.cond("Available", "True", "MinimumReplicasAvailable",
               "Deployment has minimum availability.", sc.t(60 * 24 * 6)),
        k.cond("ReplicaFailure", "True", "FailedCreate", quota_msg, sc.t(ROLLOUT - 0.01)),
        k.cond("Progressing", "False", "ProgressDeadlineExceeded", "x", sc.t(ROLLOUT - 10.1)),
    ]
    ro = k.add_rollout(sc, spec, [oa(IMG_OLD)], [oa(IMG_NEW)], old_rev=40, new_rev=41,
                       rollout_min=ROLLOUT, old_count=6, new_pods=[], dep_conditions=conds,
                       strategy={"type": "RollingUpdate",
                                 "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
                       change_cause="3.14.1: fix rounding of tax totals (ORD-2291)",
                       old_rs_age_min=60 * 24 * 6 + 150, new_rs_replicas=1,
                       rs_conditions=[{"type": "ReplicaFailure", "status": "True",
                                       "reason": "FailedCreate", "message": quota_msg,
                                       "lastTransitionTime": sc.t(ROLLOUT - 0.01)}])
    new_rs = ro.new_rs["metadata"]["name"]
    quota_msg = quota_msg.replace(pod_name, f"{new_rs}-{pod_name.rsplit('-', 1)[1]}")
    ro.new_rs["status"]["conditions"][0]["message"] = quota_msg
    ro.deployment["status"]["conditions"][1]["message"] = quota_msg
    ro.deployment["status"]["conditions"][2]["message"] = (
        f'ReplicaSet "{new_rs}" has timed out progressing.')
    ro.deployment["status"]["replicas"] = 6
    ro.deployment["status"]["updatedReplicas"] = 0
    sel = {"app.kubernetes.io/name": "order-api", "app.kubernetes.io/instance": "order-api"}
    sc.add(k.service(sc, "orders", "order-api", sel, 80, "http"),
           k.endpoints("orders", "order-api", ro.old_refs, [], 8080))
    sc.event("orders", "Deployment", "order-api", "ScalingReplicaSet",
             f"Scaled up replica set {new_rs} to 1", first=ROLLOUT,
             component="deployment-controller", api="apps/v1")
    sc.event("orders", "ReplicaSet", new_rs, "FailedCreate", f"Error creating: {quota_msg}",
             type_="Warning", count=17, first=ROLLOUT - 0.01, last=1.8,
             component="replicaset-controller", api="apps/v1")
    # ResourceQuota and LimitRange
    sc.add({
        "apiVersion": "v1", "kind": "ResourceQuota",
        "metadata": {"name": "orders-quota", "namespace": "orders",
                     "creationTimestamp": "2025-05-07T10:00:00Z"},
        "spec": {"hard": {"requests.cpu": "16", "requests.memory": "14Gi",
                          "limits.memory": "20Gi", "pods": "30"}},
        "status": {"hard": {"limits.memory": "20Gi", "pods": "30", "requests.cpu": "16",
                            "requests.memory": "14Gi"},
                   "used": {"limits.memory": "18Gi", "pods": "11", "requests.cpu": "4050m",
                            "requests.memory": "8320Mi"}},
    }, {
        "apiVersion": "v1", "kind": "LimitRange",
        "metadata": {"name": "orders-defaults", "namespace": "orders",
                     "creationTimestamp": sc.t(60 * 24 * 6 + 20)},
        "spec": {"limits": [{"type": "Container",
                             "default": {"cpu": "1", "memory": "512Mi"},
                             "defaultRequest": {"cpu": "100m", "memory": "128Mi"},
                             "max": {"memory": "4Gi"}}]},
    })
    routes = ("/v1/orders", "/v1/orders/{id}", "/v1/carts/{id}/checkout")
    for r in ro.old_refs:
        for m in sc.spread(60, 0, 0.9):
            route = sc.rng.choice(routes)
            sc.log(m, r, "info", f"GET {route} 200 {sc.rng.randint(5, 140)}ms",
                   **{"http.response.status_code": 200, "url.path": route})
        k.healthy_metrics(sc, spec, r)
        sc.counter("http_requests_total", "Total HTTP requests handled.",
                   {"namespace": "orders", "service": "order-api", "pod": r.name, "code": "200"},
                   lambda m: sc.noisy(7.5, 0.1), start=sc.rng.uniform(1e6, 3e6))
    for r in ro.old_refs[:2]:
        for m in sc.spread(60, 0, 11):
            sc.log(m, r, "warn", "HikariPool-1 - Thread starvation or clock leap detected "
                                 "(housekeeper delta=1m2s).")
    for res, val in (("limits.memory", 18 * 1024 ** 3), ("requests.memory", 8320 * 1024 ** 2)):
        for typ, v in (("hard", 20 * 1024 ** 3 if res == "limits.memory" else 14 * 1024 ** 3),
                       ("used", val)):
            sc.gauge("kube_resourcequota", "Information about resource quota.",
                     {"namespace": "orders", "resourcequota": "orders-quota", "resource": res,
                      "type": typ}, lambda m, v=v: float(v))
    sc.gauge("kube_deployment_status_replicas_updated",
             "The number of updated replicas per deployment.",
             {"namespace": "orders", "deployment": "order-api"},
             lambda m: 6.0 if m > ROLLOUT else 0.0)
    k.deployment_available(sc, "orders", "order-api", lambda m: 6.0)
    sc.gauge("kube_replicaset_spec_replicas", "Number of desired pods for a ReplicaSet.",
             {"namespace": "orders", "replicaset": new_rs},
             lambda m: None if m > ROLLOUT else 1.0)
    sc.gauge("kube_replicaset_status_ready_replicas", "The number of ready replicas per "
             "ReplicaSet.", {"namespace": "orders", "replicaset": new_rs},
             lambda m: None if m > ROLLOUT else 0.0)

    # ------------------------------------------------------------- web
    fe = k.AppSpec("web", "shop-frontend", "registry.internal/web/shop-frontend:21.4.0", 3,
                   NODES, revision=140, rps=45, routes=("/", "/cart", "/checkout"))
    k.add_app(sc, fe)
    dns = k.AppSpec("kube-system", "coredns", "registry.k8s.io/coredns/coredns:v1.11.3", 2,
                    NODES[:2], revision=1, port=53, readiness=None, kind="none", service=False)
    k.add_app(sc, dns)
    sc.write(root, {
        "id": SID,
        "title": "order-api 3.14.1 rollout creates no new pods",
        "now": NOW,
        "report": (
            "order-api 3.14.1 deploy in orders has been stuck ~20 min, the new ReplicaSet has "
            "0 pods. 3.14.1 is a one-line tax fix, so did someone bump the memory in the chart "
            "too? or is it the LimitRange that was added last week? old pods still serve."
        ),
        "truth": {
            "category": "quota_exceeded",
            "culprit": {"kind": "Deployment", "namespace": "orders", "name": "order-api"},
            "evidence": ["exceeded quota: orders-quota", "limits.memory=3Gi", "istio-proxy",
                         "istio-injection: enabled"],
            "fix": (
                "Account for the injected istio-proxy sidecar (1Gi memory limit) in orders: "
                "set sidecar.istio.io/proxyMemoryLimit (e.g. 256Mi) on order-api's pod "
                "template or raise orders-quota's limits.memory; order-api's own resources "
                "(2Gi) did not change, each new pod now asks for 3Gi."
            ),
        },
    })
