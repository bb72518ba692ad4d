"""Shape 3, cpu_throttling: the shared rate-limit service is throttled at a traffic peak."""

from __future__ import annotations

from pathlib import Path

from . import _kit as k

SID = "orders-latency-evening-peak"
NOW = "2026-12-10T19:20:00Z"
PEAK = 29.0  # minutes before now that the evening campaign traffic started


def build(root: Path) -> None:
    st = k.Story(SID, NOW, seed=5203)
    nodes = k.standard_nodes(st, [f"ip-10-0-{i}-{12 + i * 9}.eu-west-1.compute.internal"
                                  for i in range(1, 6)])
    k.kube_system(st, nodes)
    for ns in ("platform", "orders", "catalog", "accounts", "edge"):
        k.namespace(st, ns)

    def load(m: float) -> float:
        return k.ramp(m, PEAK, PEAK - 8, 1.0, 2.6)

    # --- ratelimit: cpu limit 250m ------------------------------------------------------
    rl = k.app(st, "platform", "ratelimit", "docker.io/envoyproxy/ratelimit:1f4ea68e",
               nodes=nodes, replicas=3, cpu="100m", memory="64Mi", cpu_limit="250m",
               mem_limit="128Mi", port=8081, access_logs=False, metrics=False, revision=9,
               rollout_hours=24 * 5, env={"REDIS_URL": "ratelimit-redis.platform:6379",
                                           "RUNTIME_ROOT": "/data", "LOG_LEVEL": "warn",
                                           "GOMAXPROCS": "4"})
    rl.deploy["spec"]["template"]["spec"]["containers"][0]["ports"].append(
        {"name": "grpc", "containerPort": 8081, "protocol": "TCP"})
    for p in rl.pods:
        k.pod_metrics(st, p, "ratelimit", mem_mb=48,
                      cpu_fn=lambda m: min(0.249, 0.11 * load(m) * st.rng.uniform(0.9, 1.1)),
                      throttle_fn=lambda m: min(0.78, max(0.01, (load(m) - 1.3) * 0.6)))
        k.noise(st, p, "ratelimit", "ratelimit", "warn", [
            "caught error during call: redis pipeline: i/o timeout (retrying once)",
        ], every=600)
        k.noise(st, p, "ratelimit", "ratelimit", "warn", [
            "grpc: Server.processUnaryRPC failed to write status: connection error: desc = "
            "\"transport is closing\"",
        ], every=50, start_min=PEAK - 6)
    k.latency_hist(st, "platform", "ratelimit", rps=lambda m: 330 * load(m),
                   median_s=lambda m: 0.0015 if load(m) < 1.4 else 0.0015 + (load(m) - 1.4) * 0.3,
                   sigma=0.9, buckets=(0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0))
    redis = k.app(st, "platform", "ratelimit-redis", "docker.io/library/redis:7.2.5",
                  nodes=nodes[2:], replicas=1, port=6379, access_logs=False, http=False,
                  mem_mb=210, cpu_cores=0.04, revision=2, rollout_hours=24 * 6)
    k.gauge_fn(st, "redis_commands_duration_seconds_avg", "Average command latency (exporter).",
               {"namespace": "platform", "service": "ratelimit-redis"},
               lambda m: 0.00011 * st.rng.uniform(0.8, 1.2))
    _ = redis

    # --- callers ------------------------------------------------------------------------
    callers = (("orders", "orders-api", "registry.corp.example/orders/orders-api:9.4.0", 60, 150),
               ("catalog", "catalog-api", "registry.corp.example/catalog/catalog-api:4.2.7", 140,
                60),
               ("accounts", "accounts-api", "registry.corp.example/accounts/accounts-api:2.19.0",
                40, 90))
    for ns, name, image, rps, base in callers:
        a = k.app(st, ns, name, image, nodes=nodes, replicas=3, cpu="500m", cpu_limit="2",
                  memory="512Mi", mem_limit="1Gi", access_logs=False, metrics=False,
                  revision=40 if name != "orders-api" else 77,
                  rollout_hours=0.8 if name == "orders-api" else 24 * 3)

        def lat(m: float, base: float = base) -> float:
            return base + max(0.0, load(m) - 1.4) * 900

        for p in a.pods:
            k.access_log(st, p, name, name, every=80, lat_fn=lat, err_ratio=0.003,
                         paths=(f"/v1/{name.split('-')[0]}", f"/v1/{name.split('-')[0]}/search"))
            k.noise(st, p, name, name, "warn", [
                "ratelimit check slow: 612ms (budget 250ms) domain=public-api",
                "ratelimit check slow: 884ms (budget 250ms) domain=public-api",
            ], every=45, start_min=PEAK - 5)
            k.noise(st, p, name, name, "error", [
                "ratelimit check timed out after 1000ms, failing open (domain=public-api)",
            ], every=70, start_min=PEAK - 9)
            k.pod_metrics(st, p, name, mem_mb=600,
                          cpu_fn=lambda m, rps=rps: 0.004 * rps * load(m) * st.rng.uniform(0.9, 1),
                          throttle_fn=lambda m: 0.0)
        k.latency_hist(st, ns, name, rps=lambda m, rps=rps: rps * load(m),
                       median_s=lambda m, lat=lat: lat(m) / 1000)
        k.http_counters(st, ns, name, rps=lambda m, rps=rps: rps * load(m),
                        err=lambda m, rps=rps: rps * 0.002)
        if name == "orders-api":
            old = next(o for o in st.objs if o["kind"] == "ReplicaSet"
                       and o["metadata"]["namespace"] == ns and o["spec"]["replicas"] == 0)
            st.event(ns=ns, kind="Deployment", name=name, api_version="apps/v1",
                     reason="ScalingReplicaSet", component="deployment-controller",
                     message=f"Scaled up replica set {a.rs['metadata']['name']} to 3 from 2",
                     first=st.ago(47))
            st.event(ns=ns, kind="Deployment", name=name, api_version="apps/v1",
                     reason="ScalingReplicaSet", component="deployment-controller",
                     message=f"Scaled down replica set {old['metadata']['name']} to 0 from 1",
                     first=st.ago(46))
            for p in a.pods:
                st.log(st.ago(47.5), ns, p["metadata"]["name"], name, name, "info",
                       "orders-api 9.4.0 starting: new coupon stacking rules enabled")
            st.keep_pod_logs(*a.pods)
    gw = k.app(st, "edge", "api-gateway", "docker.io/envoyproxy/envoy:v1.31.2", nodes=nodes,
               replicas=3, rps=240, log_every=60, lat_ms=130, paths=("/orders", "/catalog"),
               metrics=False, revision=18)
    for p in gw.pods:
        k.pod_metrics(st, p, "api-gateway", mem_mb=120,
                      cpu_fn=lambda m: 0.15 * load(m) * st.rng.uniform(0.9, 1.1))
    k.http_counters(st, "edge", "api-gateway", rps=lambda m: 240 * load(m),
                    err=lambda m: 0.3 + max(0.0, load(m) - 2.0) * 2)
    k.app(st, "platform", "feature-flags", "ghcr.io/open-feature/flagd:v0.11.4", nodes=nodes,
          replicas=2, port=8013, rps=20, log_every=240, lat_ms=2)
    st.keep_pod_logs(*rl.pods)
    st.write(root, title="orders-api latency spike during evening peak", report=(
        "orders-api p99 went from ~150ms to over 1.5s in the last 20-25 min, checkout funnel is "
        "dropping. we deployed orders-api 9.4.0 at ~18:33 (coupon stacking). should we roll it "
        "back? catalog also feels a bit sluggish but that's probably just the campaign traffic\n"),
        truth={"category": "cpu_throttling",
               "culprit": {"kind": "Deployment", "namespace": "platform", "name": "ratelimit"},
               "evidence": ["container_cpu_cfs_throttled_periods_total", "cpu: 250m",
                            "ratelimit check timed out after 1000ms, failing open"],
               "fix": "Raise (or drop) the ratelimit Deployment's 250m CPU limit and add "
                      "replicas/an HPA for it; every API waits on it per request, so its "
                      "throttling at the campaign peak is what slowed orders, catalog and "
                      "accounts alike. orders-api 9.4.0 is not the cause."})
