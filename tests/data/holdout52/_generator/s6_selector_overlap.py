"""Shape 6, network: a Service selector also matches a new worker that serves no HTTP."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from . import _kit as k

SID = "profile-api-connection-refused"
NOW = "2026-12-13T12:45:00Z"
WORKER = 52.0  # profile-reindexer created this many minutes before now


def build(root: Path) -> None:
    st = k.Story(SID, NOW, seed=5206)
    nodes = k.standard_nodes(st, [f"ip-10-0-{i}-{70 + i * 4}.eu-west-1.compute.internal"
                                  for i in range(1, 6)])
    k.kube_system(st, nodes)
    for ns in ("accounts", "web", "search"):
        k.namespace(st, ns)

    # --- profile-api (server) and the new reindexer -------------------------------------
    srv_labels = {"app": "profile", "component": "server"}
    ctr = k.container("profile-api", "registry.corp.example/accounts/profile-api:2.14.1",
                      cpu="300m", memory="512Mi", mem_limit="1Gi")
    dep = k.deployment(st, "accounts", "profile-api", labels=srv_labels, containers=[ctr],
                       replicas=3, revision=48, created=st.ago(days=700), updated=st.ago(19))
    dep["spec"]["template"]["metadata"]["annotations"] = {
        "kubectl.kubernetes.io/restartedAt": st.ts(19)}
    old = k.replicaset(st, dep, "8c6d5f7b9", revision=47, replicas=0, created=st.ago(days=4))
    h = "77f5b9d6c8"
    rs = k.replicaset(st, dep, h, revision=48, replicas=3, created=st.ago(19))
    srv = []
    for i in range(3):
        p = k.pod(st, "accounts", f"profile-api-{h}-{st.suffix()}",
                  labels={**srv_labels, "pod-template-hash": h}, containers=[ctr],
                  node_name=nodes[i], owner=rs, created=st.ago(19 - i * 0.5))
        srv.append(p)
        st.add(p)
    for i, msg in enumerate(("Scaled up replica set profile-api-77f5b9d6c8 to 1",
                             f"Scaled down replica set {old['metadata']['name']} to 2 from 3",
                             "Scaled up replica set profile-api-77f5b9d6c8 to 3 from 2",
                             f"Scaled down replica set {old['metadata']['name']} to 0 from 1")):
        st.event(ns="accounts", kind="Deployment", name="profile-api", api_version="apps/v1",
                 reason="ScalingReplicaSet", component="deployment-controller", message=msg,
                 first=st.ago(19 - i * 0.4))
    wlabels = {"app": "profile", "component": "reindexer"}
    wctr = k.container("reindexer", "registry.corp.example/accounts/profile-reindexer:0.3.0",
                       cpu="500m", memory="768Mi", mem_limit="1536Mi", port=None,
                       env={"SEARCH_URL": "http://profiles-es.search:9200", "BATCH": "500"})
    wdep = k.deployment(st, "accounts", "profile-reindexer", labels=wlabels, containers=[wctr],
                        replicas=1, revision=1, created=st.ago(WORKER), updated=st.ago(WORKER))
    wh = "5c8f7d6b49"
    wrs = k.replicaset(st, wdep, wh, revision=1, replicas=1, created=st.ago(WORKER))
    wp = k.pod(st, "accounts", f"profile-reindexer-{wh}-{st.suffix()}",
               labels={**wlabels, "pod-template-hash": wh}, containers=[wctr],
               node_name=nodes[3], owner=wrs, created=st.ago(WORKER - 0.1))
    st.add(wp)
    wip = wp["status"]["podIP"]
    st.event(ns="accounts", kind="Deployment", name="profile-reindexer", api_version="apps/v1",
             reason="ScalingReplicaSet", component="deployment-controller",
             message=f"Scaled up replica set profile-reindexer-{wh} to 1", first=st.ago(WORKER))
    svc = k.service(st, "accounts", "profile-api", {"app": "profile"}, days=700)
    k.endpoints(st, svc, [*srv, wp])
    st.add({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": k.meta(st, "accounts", "allow-web-to-profile", days=300),
            "spec": {"podSelector": {"matchLabels": {"app": "profile"}},
                     "policyTypes": ["Ingress"],
                     "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {
                         "kubernetes.io/metadata.name": "web"}}}],
                         "ports": [{"protocol": "TCP", "port": 8080}]}]}})
    for p in srv:
        k.access_log(st, p, "profile-api", "profile-api", every=40, lat_ms=18,
                     paths=("/v1/profile", "/v1/profile/preferences"), start_min=18.5)
        k.pod_metrics(st, p, "profile-api", mem_mb=410, cpu_cores=0.09)
    for _ in range(3):  # the pods before the restart
        pn = f"{old['metadata']['name']}-{st.suffix()}"
        t = st.ago(60) + timedelta(seconds=st.rng.randint(0, 30))
        while t < st.ago(19):
            st.log(t, "accounts", pn, "profile-api", "profile-api", "info",
                   f"GET /v1/profile 200 {st.rng.randint(9, 40)}ms",
                   http__response__status_code=200)
            t += timedelta(seconds=st.rng.randint(35, 45))
    k.http_counters(st, "accounts", "profile-api",
                    rps=lambda m: 40.0 if m > WORKER - 1 else 30.0, err=lambda m: 0.02)
    for j in range(int(WORKER // 2)):
        t = st.ago(WORKER - 0.5) + timedelta(seconds=j * 120 + st.rng.randint(0, 20))
        st.log(t, "accounts", wp["metadata"]["name"], "reindexer", "profile-reindexer", "info",
               f"reindex batch {1200 + j}/9000: 500 profiles upserted to profiles-v7 in "
               f"{st.rng.uniform(1.5, 4.0):.1f}s")
    st.log(st.ago(WORKER - 0.2), "accounts", wp["metadata"]["name"], "reindexer",
           "profile-reindexer", "info",
           "profile-reindexer 0.3.0: worker mode, no HTTP listener; resuming from checkpoint 1200")
    k.pod_metrics(st, wp, "reindexer", mem_mb=600, cpu_cores=0.4)

    # --- web-bff: the caller that sees connection refused ----------------------------------
    bff = k.app(st, "web", "web-bff", "registry.corp.example/web/web-bff:6.1.0", nodes=nodes,
                replicas=3, rps=45, access_logs=False, lat_ms=60, rollout_hours=26)
    for p in bff.pods:
        t = st.ago(60) + timedelta(seconds=st.rng.randint(0, 20))
        pn = p["metadata"]["name"]
        while t < st.now:
            m = (st.now - t).total_seconds() / 60
            if m < WORKER - 0.5 and st.rng.random() < 0.25:
                st.log(t, "web", pn, "web-bff", "web-bff", "error",
                       f"GET http://profile-api.accounts/v1/profile/{st.rng.randint(10**6, 10**7)}"
                       f" failed: dial tcp {wip}:8080: connect: connection refused",
                       error__type="ECONNREFUSED", http__response__status_code=502)
            else:
                st.log(t, "web", pn, "web-bff", "web-bff", "info",
                       f"GET /api/me 200 {st.rng.randint(40, 120)}ms",
                       http__response__status_code=200)
            t += timedelta(seconds=st.rng.randint(12, 22))
        k.noise(st, p, "web-bff", "web-bff", "warn", [
            "recommendations timeout after 300ms, rendering without recs",
        ], every=180)
    for code, fn in (("200", lambda m: 30.0 if m > WORKER else 22.5),
                     ("connect_error", lambda m: 0.0 if m > WORKER else 7.5)):
        k.counter_fn(st, "http_client_requests", "Outbound HTTP requests by outcome.",
                     {"namespace": "web", "service": "web-bff", "target": "profile-api",
                      "outcome": code}, fn, start=float(st.rng.randint(10**5, 10**6)))
    k.app(st, "search", "profiles-es", "docker.elastic.co/elasticsearch/elasticsearch:8.15.3",
          nodes=nodes, replicas=3, port=9200, rps=12, log_every=300, http=False, mem_mb=3000,
          cpu_cores=0.3)
    k.app(st, "accounts", "auth-api", "registry.corp.example/accounts/auth-api:5.0.2",
          nodes=nodes, replicas=2, rps=20, log_every=90, lat_ms=9, paths=("/v1/token",))
    st.keep_pod_logs(*srv, wp, *bff.pods)
    st.write(root, title="web-bff calls to profile-api failing with connection refused", report=(
        "profile-api is flaky since ~11:55, roughly 1 in 4 calls from web-bff fail with "
        "connection refused. profile-api pods all look healthy and ready, we already did a "
        "rollout restart at 12:26 and it didn't help. did something change in the network "
        "policies / CNI? nobody touched profile-api code\n"),
        truth={"category": "network",
               "culprit": {"kind": "Service", "namespace": "accounts", "name": "profile-api"},
               "evidence": ["connection refused", f"{wip}:8080", "profile-reindexer"],
               "fix": "The profile-api Service selects app=profile only, so since profile-"
                      "reindexer (labels app=profile, component=reindexer) was created its pod "
                      f"({wip}) is an endpoint with nothing listening on 8080. Add component: "
                      "server to the Service's selector (or relabel the reindexer)."})
