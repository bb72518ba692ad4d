"""Shape 7, autoscaling_limit: the HPA two hops down the call chain sits at maxReplicas."""

from __future__ import annotations

from pathlib import Path

from . import _kit as k

SID = "storefront-timeouts-sale"
NOW = "2026-12-14T13:40:00Z"
SALE = 42.0  # the sale's traffic starts this many minutes before now
CAP = 33.0  # pricing-engine reached maxReplicas


def build(root: Path) -> None:
    st = k.Story(SID, NOW, seed=5207)
    nodes = k.standard_nodes(st, [f"ip-10-0-{i}-{90 + i * 6}.eu-west-1.compute.internal"
                                  for i in range(1, 8)])
    k.kube_system(st, nodes)
    for ns in ("storefront", "shop", "payments"):
        k.namespace(st, ns)

    def load(m: float) -> float:
        return k.ramp(m, SALE, SALE - 10, 1.0, 2.7)

    def pricing_lat(m: float) -> float:  # seconds
        return 0.04 if m > CAP + 2 else 0.04 + k.ramp(m, CAP + 2, CAP - 8, 0.0, 1.9)

    # --- pricing-engine: at its max of 6 ------------------------------------------------
    pr = k.app(st, "shop", "pricing-engine", "registry.corp.example/shop/pricing-engine:3.11.2",
               nodes=nodes, replicas=6, cpu="500m", memory="1Gi", mem_limit="2Gi",
               access_logs=False, metrics=False, revision=27, rollout_hours=24 * 4)
    scale_at = {3: 60.0, 4: 39.0, 5: 36.0, 6: CAP}
    for i, p in enumerate(pr.pods):
        made = scale_at.get(i + 1, 60.0) if i >= 3 else None
        if made is not None:
            k.retime(st, p, made)
        k.pod_metrics(st, p, "pricing-engine", mem_mb=820,
                      cpu_fn=lambda m: min(0.78, 0.26 * load(m) * 3 / _replicas(m))
                      * st.rng.uniform(0.93, 1.05))
        k.access_log(st, p, "pricing-engine", "pricing-engine", every=60,
                     paths=("/v1/price/batch", "/v1/price"), method="POST",
                     lat_fn=lambda m: pricing_lat(m) * 1000,
                     start_min=min(60.0, made if made is not None else 60.0))
        k.noise(st, p, "pricing-engine", "pricing-engine", "warn", [
            "worker pool saturated: 32/32 busy, queue depth 214, p95 queue wait 1.7s",
            "worker pool saturated: 32/32 busy, queue depth 251, p95 queue wait 2.1s",
        ], every=50, start_min=CAP - 1)
    conds = [
        {"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale",
         "message": "recommended size matches current size", "lastTransitionTime": st.ts(CAP)},
        {"type": "ScalingActive", "status": "True", "reason": "ValidMetricFound",
         "message": "the HPA was able to successfully calculate a replica count from cpu "
                    "resource utilization (percentage of request)",
         "lastTransitionTime": st.ts(days=4)},
        {"type": "ScalingLimited", "status": "True", "reason": "TooManyReplicas",
         "message": "the desired replica count is more than the maximum replica count",
         "lastTransitionTime": st.ts(CAP - 1)},
    ]
    k.hpa(st, "shop", "pricing-engine", "Deployment", min_r=3, max_r=6, current=6, desired=6,
          cpu_target=70, cpu_now=151, conditions=conds, last_scale=st.ago(CAP))
    for n, at in ((4, 39.0), (5, 36.0), (6, CAP)):
        st.event(ns="shop", kind="HorizontalPodAutoscaler", name="pricing-engine",
                 api_version="autoscaling/v2", reason="SuccessfulRescale",
                 component="horizontal-pod-autoscaler", first=st.ago(at),
                 message=f"New size: {n}; reason: cpu resource utilization (percentage of "
                         "request) above target")
        st.event(ns="shop", kind="Deployment", name="pricing-engine", api_version="apps/v1",
                 reason="ScalingReplicaSet", component="deployment-controller",
                 first=st.ago(at),
                 message=f"Scaled up replica set {pr.rs['metadata']['name']} to {n} from "
                         f"{n - 1}")
    for what, fn in (("current_replicas", _replicas), ("desired_replicas",
                                                       lambda m: min(11.0, _desired(m)))):
        k.gauge_fn(st, f"kube_horizontalpodautoscaler_status_{what}",
                   f"HPA {what.replace('_', ' ')}.",
                   {"namespace": "shop", "horizontalpodautoscaler": "pricing-engine"}, fn)
    k.gauge_fn(st, "kube_horizontalpodautoscaler_spec_max_replicas", "HPA max replicas.",
               {"namespace": "shop", "horizontalpodautoscaler": "pricing-engine"},
               lambda m: 6.0)
    k.latency_hist(st, "shop", "pricing-engine", rps=lambda m: 90 * load(m),
                   median_s=pricing_lat)
    k.http_counters(st, "shop", "pricing-engine", rps=lambda m: 90 * load(m),
                    err=lambda m: 0.05)

    # --- product-api: one hop down, plenty of HPA room ------------------------------------
    pa = k.app(st, "shop", "product-api", "registry.corp.example/shop/product-api:7.2.0",
               nodes=nodes, replicas=7, cpu="500m", memory="768Mi", mem_limit="1536Mi",
               access_logs=False, metrics=False, revision=64, rollout_hours=24 * 2)

    def product_lat(m: float) -> float:
        return 0.03 + pricing_lat(m)

    for p in pa.pods:
        k.access_log(st, p, "product-api", "product-api", every=70,
                     paths=("/v2/products", "/v2/products/search"),
                     lat_fn=lambda m: product_lat(m) * 1000)
        k.noise(st, p, "product-api", "product-api", "warn", [
            "pricing-engine call took 2412ms (slow threshold 500ms)",
            "pricing-engine call took 1876ms (slow threshold 500ms)",
        ], every=60, start_min=CAP)
        k.noise(st, p, "product-api", "product-api", "error", [
            "POST http://pricing-engine.shop/v1/price/batch: context deadline exceeded "
            "(Client.Timeout 2.5s), returning list prices",
        ], every=110, start_min=CAP - 4)
        k.pod_metrics(st, p, "product-api", mem_mb=500,
                      cpu_fn=lambda m: 0.16 * st.rng.uniform(0.9, 1.1) * min(load(m), 1.8))
    k.hpa(st, "shop", "product-api", "Deployment", min_r=4, max_r=20, current=7, desired=7,
          cpu_target=70, cpu_now=52, last_scale=st.ago(35),
          conditions=k.hpa_ok_conditions(st, st.ago(35)))
    k.latency_hist(st, "shop", "product-api", rps=lambda m: 60 * load(m), median_s=product_lat)

    # --- web-frontend: where the timeouts are seen; its deploy is the red herring ---------
    wf = k.app(st, "storefront", "web-frontend", "registry.corp.example/web/web-frontend:12.4.0",
               nodes=nodes, replicas=4, access_logs=False, metrics=False, revision=88,
               rollout_hours=55 / 60, cpu="250m", memory="512Mi", mem_limit="1Gi")
    old = next(o for o in st.objs if o["kind"] == "ReplicaSet"
               and o["metadata"]["namespace"] == "storefront" and o["spec"]["replicas"] == 0)
    for i in range(4):
        st.event(ns="storefront", kind="Deployment", name="web-frontend", api_version="apps/v1",
                 reason="ScalingReplicaSet", component="deployment-controller",
                 first=st.ago(55 - i),
                 message=f"Scaled up replica set {wf.rs['metadata']['name']} to {i + 1}"
                         + (f" from {i}" if i else ""))
        st.event(ns="storefront", kind="Deployment", name="web-frontend", api_version="apps/v1",
                 reason="ScalingReplicaSet", component="deployment-controller",
                 first=st.ago(54.6 - i),
                 message=f"Scaled down replica set {old['metadata']['name']} to {3 - i} from "
                         f"{4 - i}")
    for p in wf.pods:
        k.access_log(st, p, "web-frontend", "web-frontend", every=60,
                     paths=("/", "/product/", "/category/"),
                     lat_fn=lambda m: 80 + product_lat(m) * 1000, start_min=54)
        k.noise(st, p, "web-frontend", "web-frontend", "error", [
            "upstream timeout: GET http://product-api.shop/v2/products?ids=... after 3000ms",
        ], every=45, start_min=CAP - 5)
        k.noise(st, p, "web-frontend", "web-frontend", "warn", [
            "hero-banner: experiment pdp_banner_v2 assigned variant B",
        ], every=240, start_min=54)
        k.pod_metrics(st, p, "web-frontend", mem_mb=330,
                      cpu_fn=lambda m: 0.08 * load(m) * st.rng.uniform(0.9, 1.1))
    k.latency_hist(st, "storefront", "web-frontend", rps=lambda m: 70 * load(m),
                   median_s=lambda m: 0.08 + product_lat(m))
    k.http_counters(st, "storefront", "web-frontend", rps=lambda m: 70 * load(m),
                    err=lambda m: k.ramp(m, CAP, CAP - 8, 0.1, 9.0), err_code="504")
    k.app(st, "shop", "inventory-api", "registry.corp.example/shop/inventory-api:1.30.0",
          nodes=nodes, replicas=3, rps=30, log_every=90, lat_ms=14, paths=("/v1/stock",))
    k.app(st, "payments", "payments-api", "registry.corp.example/payments/payments-api:7.3.0",
          nodes=nodes, replicas=3, rps=6, log_every=120, lat_ms=60, paths=("/v1/charges",),
          method="POST")
    st.keep_pod_logs(*pr.pods, *wf.pods)
    st.write(root, title="storefront timeouts during the winter sale", report=(
        "storefront is timing out for lots of users since ~13:05, web-frontend p99 is over 5s "
        "and we see 504s. the frontend team pushed the new PDP banner release (12.4.0) at 12:45 "
        "right before the sale — is that it? should we roll back web-frontend?\n"),
        truth={"category": "autoscaling_limit",
               "culprit": {"kind": "Deployment", "namespace": "shop", "name": "pricing-engine"},
               "evidence": ["ScalingLimited",
                            "the desired replica count is more than the maximum replica count",
                            "maxReplicas: 6"],
               "fix": "Raise pricing-engine's HPA maxReplicas (6 is reached at 151% of target "
                      "CPU during the sale) and check the cluster has room for it; product-api "
                      "and web-frontend only wait on pricing-engine. Rolling back web-frontend "
                      "12.4.0 would not help."})


def _replicas(m: float) -> float:
    if m > 39:
        return 3.0
    if m > 36:
        return 4.0
    if m > CAP:
        return 5.0
    return 6.0


def _desired(m: float) -> float:
    return 3.0 if m > 40 else max(_replicas(m), k.ramp(m, 40, CAP - 6, 3.0, 11.0))
