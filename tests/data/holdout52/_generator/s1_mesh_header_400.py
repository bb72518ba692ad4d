"""Shape 1, bad_rollout: an istiod upgrade makes sidecars reject a legacy client's headers."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from . import _kit as k

SID = "billing-invoice-400s"
NOW = "2026-12-08T10:40:00Z"
OLD = "docker.io/istio/pilot:1.22.4"
NEW = "docker.io/istio/pilot:1.23.1"
PROXY = "docker.io/istio/proxyv2:1.22.4"
ROLL = 36.0  # minutes before now that istiod 1.23.1 rolled out
BROKEN = 35.0  # minutes before now that the sidecars got the new listeners


def build(root: Path) -> None:
    st = k.Story(SID, NOW, seed=5201)
    nodes = k.standard_nodes(st, [f"ip-10-0-{i}-{20 + i * 7}.eu-west-1.compute.internal"
                                  for i in range(1, 6)])
    k.kube_system(st, nodes)
    for ns in ("istio-system", "payments", "billing", "shop", "analytics"):
        k.namespace(st, ns)

    # --- istiod: the control plane upgrade ---------------------------------------------
    env = {"PILOT_TRACE_SAMPLING": "1", "PILOT_ENABLE_ANALYSIS": "false",
           "CLUSTER_ID": "prod-euw1", "REVISION": "default"}
    ictr = k.container("discovery", NEW, cpu="500m", memory="2Gi", mem_limit="4Gi", port=8080,
                       env=env, readiness="/ready")
    ictr["args"] = ["discovery", "--monitoringAddr=:15014", "--log_output_level=default:info",
                    "--domain", "cluster.local", "--keepaliveMaxServerConnectionAge", "30m"]
    ictr["ports"] += [{"name": "grpc-xds", "containerPort": 15010, "protocol": "TCP"},
                      {"name": "https-webhooks", "containerPort": 15017, "protocol": "TCP"}]
    labels = {"app": "istiod", "istio": "pilot"}
    idep = k.deployment(st, "istio-system", "istiod", labels=labels, containers=[ictr],
                        replicas=2, revision=14, created=st.ago(days=310), updated=st.ago(ROLL - 2),
                        annotations={"meta.helm.sh/release-name": "istiod",
                                     "meta.helm.sh/release-namespace": "istio-system"},
                        service_account="istiod")
    idep["metadata"]["labels"].update({"app.kubernetes.io/version": "1.23.1",
                                       "helm.sh/chart": "istiod-1.23.1"})
    octr = dict(ictr, image=OLD)
    old_rs = k.replicaset(st, idep, "6d9f7b8c4", revision=13, replicas=0,
                          created=st.ago(days=41), containers=[octr])
    new_rs = k.replicaset(st, idep, "7c5f94d6bb", revision=14, replicas=2, created=st.ago(ROLL))
    ipods = []
    for i, n in enumerate((nodes[0], nodes[3])):
        p = k.pod(st, "istio-system", f"istiod-7c5f94d6bb-{st.suffix()}",
                  labels={**labels, "pod-template-hash": "7c5f94d6bb"}, containers=[ictr],
                  node_name=n, owner=new_rs, created=st.ago(ROLL - i * 1.2),
                  service_account="istiod")
        ipods.append(p)
        st.add(p)
    isvc = k.service(st, "istio-system", "istiod", labels, port=15012, target=15012,
                     port_name="tls-xds")
    k.endpoints(st, isvc, ipods, port=15012)
    st.event(ns="istio-system", kind="Deployment", name="istiod", api_version="apps/v1",
             reason="ScalingReplicaSet", component="deployment-controller",
             message="Scaled up replica set istiod-7c5f94d6bb to 1", first=st.ago(ROLL),
             obj_uid=idep["metadata"]["uid"])
    st.event(ns="istio-system", kind="Deployment", name="istiod", api_version="apps/v1",
             reason="ScalingReplicaSet", component="deployment-controller",
             message="Scaled down replica set istiod-6d9f7b8c4 to 1 from 2",
             first=st.ago(ROLL - 1), obj_uid=idep["metadata"]["uid"])
    st.event(ns="istio-system", kind="Deployment", name="istiod", api_version="apps/v1",
             reason="ScalingReplicaSet", component="deployment-controller",
             message="Scaled up replica set istiod-7c5f94d6bb to 2 from 1",
             first=st.ago(ROLL - 1.2), obj_uid=idep["metadata"]["uid"])
    st.event(ns="istio-system", kind="Deployment", name="istiod", api_version="apps/v1",
             reason="ScalingReplicaSet", component="deployment-controller",
             message="Scaled down replica set istiod-6d9f7b8c4 to 0 from 1",
             first=st.ago(ROLL - 2), obj_uid=idep["metadata"]["uid"])
    _ = old_rs
    for i, p in enumerate(ipods):
        pn = p["metadata"]["name"]
        nd = p["spec"]["nodeName"]
        t0 = st.ago(ROLL - i * 1.2 - 0.2)
        boot = [
            "info\tFLAG: --domain=\"cluster.local\"",
            "info\tIstio version: 1.23.1 (git 4c2d0e6d, go1.22.6, Clean)",
            "info\tLoaded MeshNetworks config from file: {\"networks\":{}}",
            "info\tmesh configuration updated to: {\"accessLogFile\":\"/dev/stdout\","
            "\"defaultConfig\":{\"discoveryAddress\":\"istiod.istio-system.svc:15012\","
            "\"holdApplicationUntilProxyStarts\":true},\"enableTracing\":true,"
            "\"rootNamespace\":\"istio-system\",\"trustDomain\":\"cluster.local\"}",
            "info\tfeatures\tHTTP/1.1 codec: strict header validation enabled (default since "
            "1.23): headers_with_underscores_action=REJECT_REQUEST",
            "info\tads\tStarting ADS server on :15010",
            "info\tklog\tsuccessfully acquired lease istio-system/istio-leader",
            "info\tDiscovery service started",
        ]
        for j, line in enumerate(boot):
            st.log(t0 + timedelta(seconds=j), "istio-system", pn, "discovery", "istiod", "info",
                   line, node=nd)
        k.noise(st, p, "discovery", "istiod", "info", [
            "info\tads\tPush debounce stable[412] 3 for config ServiceEntry and Endpoint: "
            "100.2ms since last change, 100.3ms since last push, full=false",
            "info\tads\tXDS: Incremental Pushing ConnectedEndpoints:38 Version:2026-12-08",
            "info\tads\tLDS: PUSH for node:invoice-sync resources:24 size:118.2kB",
            "info\tads\tEDS: PUSH INC for node:payments-api resources:41 removed:0 size:9.8kB",
        ], every=60, start_min=ROLL - i * 1.2 - 0.5)
        k.noise(st, p, "discovery", "istiod", "warn", [
            "warn\tvalidation\tEnvoyFilter istio-system/stats-filter-1.18: deprecated Lua "
            "filter, consider Wasm telemetry",
        ], every=900, start_min=ROLL - 2)
        k.pod_metrics(st, p, "discovery", mem_mb=610, cpu_cores=0.18)
    # old istiod lines before the upgrade (pods gone, logs remain in the store)
    for i in range(2):
        pn = f"istiod-6d9f7b8c4-{st.suffix()}"
        t = st.ago(60)
        while t < st.ago(ROLL):
            st.log(t, "istio-system", pn, "discovery", "istiod", "info",
                   "info\tads\tPush debounce stable[388] 2 for config ServiceEntry: 100.1ms since "
                   "last change, 100.2ms since last push, full=false", node=nodes[i])
            t += timedelta(seconds=st.rng.randint(30, 55))
    for tag, lo, hi in (("1.22.4", 60, ROLL - 2), ("1.23.1", ROLL, 0)):
        pts = [(t, 2.0) for t in st.times() if hi <= st.mins_before(t) <= lo]
        st.metrics.gauge("istio_build", "Istio component build info", {
            "component": "pilot", "tag": tag}, pts)

    # --- payments-api (server), billing/invoice-sync (legacy client), checkout ----------
    pay = k.app(st, "payments", "payments-api", "registry.corp.example/payments/payments-api:7.3.0",
                nodes=nodes, replicas=3, rps=11, log_every=60, lat_ms=45, rollout_hours=72,
                revision=31, paths=("/v1/charges", "/v1/refunds", "/v1/charges/status"),
                sidecar=PROXY, http=False, mem_mb=420, cpu_cores=0.22, method="POST")
    k.http_counters(st, "payments", "payments-api",
                    rps=lambda m: 11.0 if m > BROKEN else 8.0, err=lambda m: 0.01)
    for p in pay.pods:
        k.noise(st, p, "payments-api", "payments-api", "warn", [
            "slow query on charges_idx_created_at took 1184ms (threshold 1000ms)",
            "slow query on refunds_by_merchant took 1032ms (threshold 1000ms)",
        ], every=420)
    inv_h = "58d7c6f9b4"
    inv_labels = {"app": "invoice-sync"}
    ictr2 = k.container("invoice-sync", "registry.corp.example/billing/invoice-sync:4.2.0",
                        cpu="200m", memory="384Mi", mem_limit="768Mi",
                        env={"PAYMENTS_URL": "http://payments-api.payments:8080",
                             "LEGACY_TENANT_HEADER": "X_Tenant_Id"})
    idp = k.deployment(st, "billing", "invoice-sync", labels=inv_labels, containers=[ictr2],
                       replicas=2, revision=22, created=st.ago(days=600), updated=st.ago(19.5 * 60))
    k.replicaset(st, idp, "6b4f8d7c95", revision=21, replicas=0, created=st.ago(days=16),
                 containers=[dict(ictr2, image="registry.corp.example/billing/invoice-sync:4.1.3")])
    irs = k.replicaset(st, idp, inv_h, revision=22, replicas=2, created=st.ago(19.5 * 60))
    inv_pods = []
    for i in range(2):
        p = k.pod(st, "billing", f"invoice-sync-{inv_h}-{st.suffix()}",
                  labels={**inv_labels, "pod-template-hash": inv_h},
                  containers=[ictr2, k.istio_proxy(PROXY)], node_name=nodes[1 + i * 2], owner=irs,
                  created=st.ago(19.5 * 60 - i))
        inv_pods.append(p)
        st.add(p)
        k.pod_metrics(st, p, "invoice-sync", mem_mb=300, cpu_cores=0.08)
        k.pod_metrics(st, p, "istio-proxy", mem_mb=64, cpu_cores=0.02)
    for p in inv_pods:
        pn, nd = p["metadata"]["name"], p["spec"]["nodeName"]
        t0 = parse_created(p) + timedelta(seconds=12)
        for j, line in enumerate([
            "Starting invoice-sync 4.2.0 (build 2026-12-07.3, okhttp 2.7.5)",
            "payments client: base url http://payments-api.payments:8080, legacy tenant header "
            "X_Tenant_Id enabled",
            "scheduler: batch window every 30s, max 40 invoices per batch",
            "ready: listening on :8080",
        ]):
            st.log(t0 + timedelta(seconds=j), "billing", pn, "invoice-sync", "invoice-sync",
                   "info", line, node=nd)
        # hours of good batches before the break, then 400s
        t = st.ago(60) + timedelta(seconds=st.rng.randint(0, 30))
        while t < st.now:
            m = (st.now - t).total_seconds() / 60
            n = st.rng.randint(4, 30)
            if m > BROKEN:
                st.log(t, "billing", pn, "invoice-sync", "invoice-sync", "info",
                       f"batch done: {n} invoices charged, 0 failed", node=nd)
            else:
                inv = st.rng.randint(880000, 899999)
                st.log(t, "billing", pn, "invoice-sync", "invoice-sync", "error",
                       f"charge failed for invoice INV-{inv}: POST "
                       "http://payments-api.payments:8080/v1/charges -> 400 Bad Request "
                       "(body: 'Bad Request')", node=nd, http__response__status_code=400,
                       error__type="PaymentsClientException")
                st.log(t + timedelta(milliseconds=40), "billing", pn, "invoice-sync",
                       "invoice-sync", "warn",
                       f"batch done: 0 invoices charged, {n} failed; will retry next window",
                       node=nd)
                st.log(t + timedelta(milliseconds=3), "billing", pn, "istio-proxy",
                       "invoice-sync", "info",
                       f'[{k.iso_ms(t)}] "POST /v1/charges HTTP/1.1" 400 DPE '
                       'http1.unexpected_underscore - "-" 0 11 0 - "-" '
                       '"okhttp/2.7.5 invoice-sync/4.2.0" "-" "payments-api.payments:8080" "-" '
                       f'- - 172.20.41.12:8080 {p["status"]["podIP"]}:'
                       f'{st.rng.randint(33000, 60000)} - -', node=nd,
                       http__response__status_code=400)
            t += timedelta(seconds=30 + st.rng.randint(-3, 3))
    k.service(st, "billing", "invoice-sync", inv_labels)
    st.keep_pod_logs(*inv_pods, *ipods, *pay.pods)

    shop_nodes = nodes[2:]
    chk = k.app(st, "shop", "checkout", "registry.corp.example/shop/checkout:12.8.1",
                nodes=shop_nodes, replicas=3, rps=8, log_every=90, lat_ms=80,
                paths=("/api/checkout", "/api/checkout/confirm"), sidecar=PROXY, revision=54,
                rollout_hours=30, mem_mb=350, cpu_cores=0.15, method="POST")
    for p in chk.pods:
        k.noise(st, p, "checkout", "checkout", "error", [
            "failed to refresh feature flags from flagd (context deadline exceeded), using cached "
            "flags from 10s ago",
        ], every=300)
    k.app(st, "shop", "web-frontend", "registry.corp.example/shop/web-frontend:3.41.0",
          nodes=nodes, replicas=4, rps=40, log_every=90, lat_ms=15,
          paths=("/", "/products", "/cart", "/static/app.js"), sidecar=PROXY, revision=120,
          rollout_hours=5, mem_mb=180)
    cache = k.app(st, "shop", "cart-cache", "docker.io/library/redis:7.2.5", nodes=nodes[:2],
                  replicas=1, port=6379, access_logs=False, http=False, mem_mb=230, revision=4,
                  rollout_hours=24 * 6.5,
                  restarts={0: {"count": 1, "started": st.ago(days=3, hours=2),
                                "last": {"terminated": {"exitCode": 137, "reason": "Error",
                                                        "startedAt": st.ts(days=6.4),
                                                        "finishedAt": st.ts(days=3, hours=2)}}}})
    _ = cache
    # a Pending pod elsewhere
    sctr = k.container("spark-kubernetes-executor", "docker.io/apache/spark:3.5.3", cpu="4",
                       memory="14Gi", mem_limit="14Gi", port=None)
    sp = k.pod(st, "analytics", "nightly-agg-exec-7", labels={"spark-role": "executor"},
               containers=[sctr], node_name=None, owner=None, created=st.ago(14))
    sp["status"] = {"phase": "Pending", "qosClass": "Burstable", "conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
         "lastTransitionTime": st.ts(14),
         "message": "0/5 nodes are available: 5 Insufficient cpu. preemption: 0/5 nodes are "
                    "available: 5 No preemption victims found for incoming pod."}]}
    st.add(sp)
    st.event(ns="analytics", kind="Pod", name="nightly-agg-exec-7", reason="FailedScheduling",
             type_="Warning", component="default-scheduler", count=9, first=st.ago(14),
             last=st.ago(2), message="0/5 nodes are available: 5 Insufficient cpu. preemption: "
             "0/5 nodes are available: 5 No preemption victims found for incoming pod.")

    # --- mesh telemetry ----------------------------------------------------------------
    def req_series(src: str, src_ns: str, dst: str, dst_ns: str, code: str, flags: str,
                   rate: float, lo: float, hi: float) -> None:
        acc = st.rng.uniform(1e4, 9e4) if lo >= 60 else 0.0
        pts = []
        for t in st.times():
            m = st.mins_before(t)
            if m > lo or m < hi:
                if m < hi:
                    pts.append((t, float(int(acc))))
                continue
            acc += rate * k.STEP * st.rng.uniform(0.85, 1.15)
            pts.append((t, float(int(acc))))
        st.metrics.counter("istio_requests", "Total requests.", {
            "reporter": "source", "source_workload": src, "source_workload_namespace": src_ns,
            "destination_workload": dst, "destination_workload_namespace": dst_ns,
            "destination_service_name": dst, "response_code": code, "response_flags": flags,
        }, pts)

    req_series("checkout", "shop", "payments-api", "payments", "200", "-", 8.0, 60, 0)
    req_series("invoice-sync", "billing", "payments-api", "payments", "200", "-", 3.0, 60,
               BROKEN)
    req_series("invoice-sync", "billing", "unknown", "unknown", "400", "DPE", 3.0, BROKEN, 0)
    req_series("web-frontend", "shop", "checkout", "shop", "200", "-", 8.0, 60, 0)

    st.write(root, title="invoice-sync charge calls to payments-api fail with 400",
             report=(
                 "billing here. since about 10:05 every charge call from invoice-sync to "
                 "payments-api comes back 400 Bad Request, invoices are piling up. we shipped "
                 "invoice-sync 4.2.0 yesterday (okhttp bump), so it's probably something in how we "
                 "build the request now? payments team says their side looks fine and checkout "
                 "is charging OK. can you tell us what's wrong with our payload?\n"),
             truth={"category": "bad_rollout",
                    "culprit": {"kind": "Deployment", "namespace": "istio-system",
                                "name": "istiod"},
                    "evidence": ["http1.unexpected_underscore",
                                 "headers_with_underscores_action=REJECT_REQUEST",
                                 "Scaled up replica set istiod-7c5f94d6bb to 1"],
                    "fix": "Roll istiod back to 1.22.4 (or set headers_with_underscores_action "
                           "to ALLOW for the mesh) and then move invoice-sync off the "
                           "X_Tenant_Id header; invoice-sync 4.2.0 ran cleanly for 19 hours "
                           "before the istiod upgrade."})


def parse_created(p: k.Obj) -> datetime:
    return k.parse(p["metadata"]["creationTimestamp"])
