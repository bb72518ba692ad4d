"""probe_failure: the readiness path now sits behind a new auth middleware and answers 401."""

from __future__ import annotations

from pathlib import Path

from . import _kit as k

SID = "catalog-api-rollout-not-ready"
NOW = "2026-09-10T13:05:00Z"
NODES = [
    "ip-10-5-21-8.ec2.internal",
    "ip-10-5-38-97.ec2.internal",
    "ip-10-5-55-164.ec2.internal",
    "ip-10-5-60-30.ec2.internal",
]
IMG_OLD = "registry.internal/catalog/catalog-api:4.1.3"
IMG_NEW = "registry.internal/catalog/catalog-api:4.2.0"
ROLLOUT = 31.0


def build(root: Path) -> None:
    sc = k.Scenario(SID, NOW, seed=5306)
    created = "2024-12-02T08:00:00Z"
    sc.add(*(k.namespace(n, created) for n in ("default", "catalog", "web", "data",
                                                "kube-system")))
    k.add_nodes(sc, NODES, "2026-09-06T01:30:00Z")

    # ------------------------------------------------------------- bystanders
    web = k.AppSpec("web", "storefront", "registry.internal/web/storefront:12.3.0", 3, NODES,
                    revision=88, rps=40, routes=("/", "/c/{slug}", "/p/{sku}"), log_every=1.5)
    wr = k.add_app(sc, web)
    cs = wr.pods[0]["status"]["containerStatuses"][0]
    cs["restartCount"] = 2
    cs["lastState"] = {"terminated": {"exitCode": 137, "reason": "OOMKilled",
                                      "startedAt": sc.t(60 * 24 * 2 + 300),
                                      "finishedAt": sc.t(60 * 24 * 2 + 10)}}
    idx = k.AppSpec("data", "search-indexer", "registry.internal/data/search-indexer:0.9.8", 2,
                    NODES[2:], revision=6, port=None, kind="worker", mem_req="3Gi",
                    mem_lim="4Gi", mem_mb=2600, log_every=3,
                    worker_lines=("indexed {n} catalog documents in {ms}ms",))
    ir = k.add_app(sc, idx)
    pend = f"{ir.replicaset['metadata']['name']}-{sc.hash(5)}"
    msg = ("0/4 nodes are available: 4 Insufficient memory. preemption: 0/4 nodes are "
           "available: 4 No preemption victims found for incoming pod.")
    sc.add({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {**ir.pods[0]["metadata"], "name": pend, "uid": sc.uid(),
                     "creationTimestamp": sc.t(48)},
        "spec": {a: b for a, b in ir.pods[0]["spec"].items() if a != "nodeName"},
        "status": {"phase": "Pending", "qosClass": "Burstable", "conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
             "message": msg, "lastTransitionTime": sc.t(48)}]},
    })
    ir.deployment["spec"]["replicas"] = 3
    ir.replicaset["spec"]["replicas"] = 3
    sc.event("data", "Pod", pend, "FailedScheduling", msg, type_="Warning", count=16, first=48,
             last=2.5, component="default-scheduler")
    db = k.AppSpec("data", "catalog-db-proxy", "bitnami/pgbouncer:1.23.1", 2, NODES[:2],
                   revision=3, port=6432, readiness=None, kind="worker", log_every=5,
                   worker_lines=("stats: {n} xacts/s, {n} queries/s, xact 930 us, query 701 us",))
    dr = k.add_app(sc, db)
    for m in sc.spread(60, 0, 4):
        sc.log(m, sc.rng.choice(dr.refs), "warn",
               f"slow query ({sc.rng.randint(1100, 4200)} ms): SELECT p.* FROM products p JOIN "
               "price_rules r ON r.sku = p.sku WHERE r.valid_to > now() ORDER BY p.rank")
    dns = k.AppSpec("kube-system", "coredns", "registry.k8s.io/coredns/coredns:v1.11.3", 2,
                    NODES[:2], revision=1, port=53, readiness=None, kind="none", service=False)
    k.add_app(sc, dns)

    # ------------------------------------------------------------- catalog-api
    spec = k.AppSpec("catalog", "catalog-api", IMG_NEW, 4, NODES, cpu_req="300m",
                     mem_req="384Mi", mem_lim="768Mi", rps=0)

    def ca(img: str) -> dict[str, object]:
        c = k.container("catalog-api", img, cpu_req="300m", mem_req="384Mi", mem_lim="768Mi",
                        readiness=k.http_probe("/ready", delay=10, period=10),
                        env=[{"name": "DB_HOST", "value": "catalog-db-proxy.data.svc"},
                             {"name": "AUTH_MODE", "value": "api-key"}]
                        if img == IMG_NEW else
                        [{"name": "DB_HOST", "value": "catalog-db-proxy.data.svc"}])
        c["livenessProbe"] = {"tcpSocket": {"port": "http"}, "initialDelaySeconds": 15,
                              "periodSeconds": 20, "timeoutSeconds": 1, "successThreshold": 1,
                              "failureThreshold": 3}
        return c

    started = ROLLOUT - 0.2

    def notready(created: str) -> k.NewPod:
        st = k.cstatus("catalog-api", IMG_NEW, {"running": {"startedAt": sc.t(started)}},
                       ready=False, started=True)
        conds = [
            {"type": "PodReadyToStartContainers", "status": "True",
             "lastTransitionTime": created},
            {"type": "Initialized", "status": "True", "lastTransitionTime": created},
            {"type": "Ready", "status": "False", "reason": "ContainersNotReady",
             "message": "containers with unready status: [catalog-api]",
             "lastTransitionTime": created},
            {"type": "ContainersReady", "status": "False", "reason": "ContainersNotReady",
             "message": "containers with unready status: [catalog-api]",
             "lastTransitionTime": created},
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": created},
        ]
        return k.NewPod(NODES[2], "Running", [st], False, conds)

    conds = [
        k.cond("Available", "True", "MinimumReplicasAvailable",
               "Deployment has minimum availability.", sc.t(60 * 24 * 4)),
        k.cond("Progressing", "False", "ProgressDeadlineExceeded", "x", sc.t(ROLLOUT - 10.1)),
    ]
    ro = k.add_rollout(sc, spec, [ca(IMG_OLD)], [ca(IMG_NEW)], old_rev=26, new_rev=27,
                       rollout_min=ROLLOUT, old_count=4, new_pods=[notready],
                       dep_conditions=conds,
                       strategy={"type": "RollingUpdate",
                                 "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
                       change_cause="4.2.0: API key auth middleware for partner access (SEC-118)",
                       old_rs_age_min=60 * 24 * 4 + 25)
    new_rs = ro.new_rs["metadata"]["name"]
    ro.deployment["status"]["conditions"][1]["message"] = (
        f'ReplicaSet "{new_rs}" has timed out progressing.')
    sel = {"app.kubernetes.io/name": "catalog-api", "app.kubernetes.io/instance": "catalog-api"}
    sc.add(k.service(sc, "catalog", "catalog-api", sel, 80, "http"),
           k.endpoints("catalog", "catalog-api", ro.old_refs, ro.new_refs, 8080))
    sc.event("catalog", "Deployment", "catalog-api", "ScalingReplicaSet",
             f"Scaled up replica set {new_rs} to 1", first=ROLLOUT,
             component="deployment-controller", api="apps/v1")
    np_ = ro.new_pods[0]
    nr = ro.new_refs[0]
    pn = np_["metadata"]["name"]
    sc.event("catalog", "Pod", pn, "Scheduled", f"Successfully assigned catalog/{pn} to "
             f"{nr.node}", first=ROLLOUT - 0.02, component="default-scheduler")
    sc.event("catalog", "Pod", pn, "Pulled", f'Successfully pulled image "{IMG_NEW}" in 3.412s '
             "(3.412s including waiting). Image size: 48213901 bytes.", first=ROLLOUT - 0.15,
             host=nr.node)
    sc.event("catalog", "Pod", pn, "Started", "Started container catalog-api",
             first=ROLLOUT - 0.2, host=nr.node)
    sc.event("catalog", "Pod", pn, "Unhealthy",
             "Readiness probe failed: HTTP probe failed with statuscode: 401", type_="Warning",
             count=184, first=ROLLOUT - 0.4, last=0.1, host=nr.node)
    sc.log(started - 0.01, nr, "info", "catalog-api 4.2.0 starting (AUTH_MODE=api-key)")
    sc.log(started - 0.03, nr, "info", "migrations: 0042_add_partner_api_keys applied in 212ms")
    sc.log(started - 0.04, nr, "warn", "config: key 'cache.ttl_seconds' is deprecated, use "
                                       "'cache.ttl'")
    sc.log(started - 0.05, nr, "info", "auth: api-key middleware enabled on all routes "
                                       "(exempt: /metrics)")
    sc.log(started - 0.06, nr, "info", "listening on :8080")
    for m in sc.spread(started - 0.15, 0, 1 / 3, jitter=0.05):
        sc.log(m, nr, "info", "GET /ready 401 0.2ms ua=kube-probe/1.30 auth=missing-api-key",
               **{"http.response.status_code": 401, "url.path": "/ready",
                  "user_agent.original": "kube-probe/1.30"})
    for m in sc.spread(started - 0.2, 0, 2.0):
        sc.log(m, nr, "info", "GET /metrics 200 1.1ms ua=Prometheus/2.53.1",
               **{"http.response.status_code": 200, "url.path": "/metrics"})
    lab = {"namespace": "catalog", "pod": pn, "container": "catalog-api"}
    sc.gauge("kube_pod_container_status_ready",
             "Describes whether the containers readiness check succeeded.", lab,
             lambda m: None if m > ROLLOUT else 0.0)
    k.healthy_metrics(sc, spec, nr, since=ROLLOUT)
    sc.counter("http_requests_total", "Total HTTP requests handled.",
               {"namespace": "catalog", "service": "catalog-api", "pod": pn, "code": "401",
                "path": "/ready"}, lambda m: 0.1, since=ROLLOUT)
    routes = ("/v1/products", "/v1/products/{sku}", "/v1/categories", "/v1/prices")
    for r in ro.old_refs:
        for m in sc.spread(60, 0, 0.9):
            route = sc.rng.choice(routes)
            sc.log(m, r, "info", f"GET {route} 200 {sc.rng.randint(3, 90)}ms",
                   **{"http.response.status_code": 200, "url.path": route})
        for m in sc.spread(60, 0, 6):
            sc.log(m, r, "info", "GET /ready 200 0.3ms ua=kube-probe/1.30",
                   **{"http.response.status_code": 200, "url.path": "/ready"})
        k.healthy_metrics(sc, spec, r)
        sc.gauge("kube_pod_container_status_ready",
                 "Describes whether the containers readiness check succeeded.",
                 {"namespace": "catalog", "pod": r.name, "container": "catalog-api"},
                 lambda m: 1.0)
        sc.counter("http_requests_total", "Total HTTP requests handled.",
                   {"namespace": "catalog", "service": "catalog-api", "pod": r.name,
                    "code": "200", "path": "/v1"}, lambda m: sc.noisy(9.0, 0.1),
                   start=sc.rng.uniform(1e6, 3e6))
    k.deployment_available(sc, "catalog", "catalog-api", lambda m: 4.0)
    sc.gauge("kube_deployment_status_replicas_unavailable",
             "The number of unavailable replicas per deployment.",
             {"namespace": "catalog", "deployment": "catalog-api"}, lambda m: 0.0)
    sc.gauge("kube_deployment_status_replicas_updated",
             "The number of updated replicas per deployment.",
             {"namespace": "catalog", "deployment": "catalog-api"},
             lambda m: 4.0 if m > ROLLOUT else 1.0)
    sc.write(root, {
        "id": SID,
        "title": "catalog-api 4.2.0 rollout not progressing",
        "now": NOW,
        "report": (
            "catalog-api 4.2.0 has been rolling out for 30 min and isn't moving: the new pod "
            "is Running but never gets Ready. 4.2.0 ships a DB migration, maybe it's still "
            "running or the catalog DB is slow (seeing slow query warnings)? old pods still "
            "serve fine. there's also a Pending search-indexer pod, no idea if related."
        ),
        "truth": {
            "category": "probe_failure",
            "culprit": {"kind": "Deployment", "namespace": "catalog", "name": "catalog-api"},
            "evidence": ["Readiness probe failed: HTTP probe failed with statuscode: 401",
                         "auth: api-key middleware enabled on all routes (exempt: /metrics)"],
            "fix": (
                "Exempt the readiness path /ready from the new api-key middleware (or point "
                "the readinessProbe at an unauthenticated health endpoint) in catalog-api 4.2.0; "
                "the probe gets 401 so the new pod never becomes Ready and the rollout stalls."
            ),
        },
    })
