"""storefront-slow-after-evictions: a VPA in Auto mode shrinks the SSR pods' CPU.

The vertical pod autoscaler's updater evicted the four storefront-ssr pods 52 minutes ago
and its admission webhook recreated them with a CPU request of 180m and a limit of 360m
(the Deployment template says 1 and 2). Node.js rendering now sits at its CFS quota:
throttling, event-loop lag and latency rise under ordinary traffic. The report blames
product-api, which shipped this afternoon.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

from ._kit import Container, Workload
from ._scene import Line, Scene, while_alive
from ._signals import restarted

SID = "storefront-slow-after-evictions"
NODES = [f"ip-172-31-{a}-{b}.us-east-2.compute.internal"
         for a, b in ((11, 40), (27, 9), (38, 201), (44, 63))]
VPA_NOTE = ("Pod resources updated by storefront-ssr: container 0: cpu request, memory "
            "request, cpu limit, memory limit")


def build(root: Path) -> None:
    """Write the scenario."""
    s = Scene(SID, "2026-05-21T16:40:00Z", seed=5903)
    evict = s.ago(52)
    s.nodes(NODES, itype="c6i.4xlarge", cpu="16")
    s.namespaces("web", "api", "kube-system", "seo")

    def shrink(i: int, pod: dict[str, object]) -> None:
        meta = pod["metadata"]
        spec = pod["spec"]
        assert isinstance(meta, dict) and isinstance(spec, dict)
        meta["annotations"] = {**meta.get("annotations", {}), "vpaUpdates": VPA_NOTE,
                               "vpaObservedContainers": "storefront-ssr"}
        spec["containers"][0]["resources"] = {
            "requests": {"cpu": "180m", "memory": "410Mi"},
            "limits": {"cpu": "360m", "memory": "820Mi"}}

    ssr_c = Container("storefront-ssr", "ghcr.io/northwind/storefront-ssr:5.14.2", port=3000,
                      cpu_req="1", cpu_lim="2", mem_req="1Gi", mem_lim="2Gi",
                      env={"NODE_ENV": "production", "UV_THREADPOOL_SIZE": "8",
                           "PRODUCT_API_URL": "http://product-api.api.svc.cluster.local"})
    started = [evict + timedelta(seconds=20 + 95 * i) for i in range(4)]
    ssr = s.cluster.workload(Workload(
        "web", "storefront-ssr", [ssr_c], NODES, s.ago(60 * 24 * 420), replicas=4,
        revision=63, rollout_at=s.ago(60 * 24 * 9), pod_started=started, mutate_pod=shrink,
        labels={"app.kubernetes.io/part-of": "storefront"}))
    prod_roll = s.ago(128)
    product = s.cluster.workload(Workload(
        "api", "product-api",
        [Container("product-api", "ghcr.io/northwind/product-api:11.2.0", cpu_req="500m",
                   cpu_lim="2", mem_req="768Mi", mem_lim="1536Mi")],
        NODES, s.ago(60 * 24 * 500), replicas=3, revision=88, rollout_at=prod_roll,
        previous_images={"product-api": "ghcr.io/northwind/product-api:11.1.4"}))

    def cart_pod(i: int, pod: dict[str, object]) -> None:
        if i == 0:
            restarted(pod, count=2, finished=s.ago(60 * 26), reason="Error", exit_code=1)

    cart = s.cluster.workload(Workload(
        "api", "cart-api",
        [Container("cart-api", "ghcr.io/northwind/cart-api:4.8.9", cpu_req="250m")],
        NODES[1:], s.ago(60 * 24 * 300), replicas=2, rollout_at=s.ago(60 * 24 * 4),
        mutate_pod=cart_pod))
    vpa_c = [Container(n, f"registry.k8s.io/autoscaling/vpa-{n.split('-', 1)[1]}:1.2.1",
                       port=8943 if n.endswith("admission-controller") else None,
                       probe_path=None, cpu_req="50m", cpu_lim=None, mem_req="200Mi",
                       mem_lim="1Gi")
             for n in ("vpa-updater", "vpa-recommender", "vpa-admission-controller")]
    vpa = [s.cluster.workload(Workload("kube-system", c.name, [c], NODES[:1],
                                       s.ago(60 * 24 * 200), replicas=1,
                                       rollout_at=s.ago(60 * 24 * 5),
                                       service_port=443 if c.port else None))[0]
           for c in vpa_c]
    s.pending_pod("seo", "sitemap-build-29126040-5hgxq", "sitemap-build",
                  "ghcr.io/northwind/sitemap:2.0.1", cpu="12", memory="8Gi", since=s.ago(40),
                  message="0/4 nodes are available: 4 Insufficient cpu. preemption: 0/4 nodes "
                  "are available: 4 No preemption victims found for incoming pod.")

    rs = ssr[0].pod.rsplit("-", 1)[0]
    for i, ref in enumerate(ssr):
        s.cluster.event("web", "ReplicaSet", rs, "SuccessfulCreate", f"Created pod: {ref.pod}",
                        first=started[i] - timedelta(seconds=9),
                        component="replicaset-controller")
        s.cluster.event("web", "Pod", ref.pod, "Started", "Started container storefront-ssr",
                        first=started[i], host=ref.node)
        s.cluster.event("web", "Pod", ref.pod, "Unhealthy", "Readiness probe failed: Get "
                        f"\"http://{ref.ip}:3000/healthz\": context deadline exceeded "
                        "(Client.Timeout exceeded while awaiting headers)", first=s.ago(30 - i),
                        last=s.ago(3 + i), count=7 + i, type_="Warning", host=ref.node)

    # --- logs
    old = [f"storefront-ssr-6f8b9c7d5-{x}" for x in ("2xqlp", "9kdzv", "hn4tw", "wc7rb")]
    for i, ref in enumerate(ssr):
        s.logs.add(evict + timedelta(seconds=95 * i), vpa[0], "info",
                   f"evicting pod web/{old[i]}", **{"log.logger": "updater"})
        s.logs.add(started[i] - timedelta(seconds=8), vpa[2], "info",
                   f"Sending patches: [{{add /metadata/annotations map[vpaObservedContainers:"
                   f"storefront-ssr vpaUpdates:{VPA_NOTE}]}} {{replace /spec/containers/0/"
                   "resources/requests/cpu 180m} {replace /spec/containers/0/resources/limits/"
                   "cpu 360m}]", **{"log.logger": "admission-controller"})
        s.logs.add(started[i] + timedelta(seconds=2), ref, "info",
                   "storefront-ssr 5.14.2 listening on :3000 (node v22.11.0, 8 render workers)")

    def ssr_line(pod_i: int) -> Callable[[datetime], Line | None]:
        def make(t: datetime) -> Line | None:
            slow = t >= started[pod_i]
            r = s.rng.random()
            path = s.pick(["/", "/c/shoes", "/p/air-runner-2", "/c/outdoor", "/search?q=tent"])
            ms = s.rng.randrange(900, 4200) if slow else s.rng.randrange(120, 420)
            if r < 0.82:
                return ("info", f"GET {path} 200 {ms}ms render", {"http.response.status_code": 200,
                        "url.path": path, "event.duration": ms * 1_000_000})
            if r < 0.9:
                return ("warn", "Warning: Text content did not match. Server: \"Sale\" Client: "
                        "\"SALE\" (hydration)", {})
            if slow and r < 0.97:
                return ("warn", f"upstream product-api responded in {s.rng.randrange(40, 90)}ms; "
                        f"render queue depth {s.rng.randrange(9, 30)}", {})
            return ("info", "ISR revalidated /c/new-arrivals", {})
        return make

    for i, ref in enumerate(ssr):
        old_ref = type(ref)(ref.ns, old[i], ref.container, ref.service, ref.node, ref.ip)
        s.chatter(old_ref, ssr_line(i), every_s=9, minutes=160,
                  until=(s.clock.now - evict).total_seconds() / 60 - 1.6 * i)
        s.chatter(ref, ssr_line(i), every_s=9,
                  minutes=(s.clock.now - started[i]).total_seconds() / 60)
    for ref in product:
        s.chatter(ref, lambda t: s.pick([
            ("info", f"GET /v3/products/{s.rng.randrange(1000, 99999)} 200 "
             f"{s.rng.randrange(8, 60)}ms", {"http.response.status_code": 200}),
            ("warn", "price cache stale for 3 SKUs, refreshing", {}),
        ]), every_s=15, minutes=120)
    for ref in cart:
        s.chatter(ref, lambda t: s.pick([
            ("info", "POST /v1/cart/items 200 23ms", {"http.response.status_code": 200}),
            ("error", "redis: connection pool timeout (retry 1 ok)", {}),
        ]), every_s=40, minutes=160)
    s.chatter(vpa[1], lambda t: ("info", "Recommender run: 212 VPA objects, 640 containers, "
                                 "checkpoints written", {"log.logger": "recommender"}),
              every_s=60, minutes=160)

    # --- metrics
    for i, ref in enumerate(ssr):
        st = started[i]
        gone = evict + timedelta(seconds=95 * i)
        old_ref = type(ref)(ref.ns, old[i], ref.container, ref.service, ref.node, ref.ip)
        s.usage(old_ref, 0.62, 540e6, cpu_limit=2, throttle=lambda t: 0.004, until=gone)
        s.usage(ref, 0.355, 520e6, cpu_limit=2, throttle=lambda t: 0.74, since=st)
        s.http(old_ref, "/*", lambda t: 14.0, lambda t: 0.001, lambda t: 0.26, code="504",
               until=gone)
        s.http(ref, "/*", lambda t: 14.0, lambda t: 0.02, lambda t: 1.9, code="504", since=st)
        for r, lag, lim, since, until in ((old_ref, 0.012, 2.0, None, gone),
                                          (ref, 0.45, 0.36, st, None)):
            s.gauge("nodejs_eventloop_lag_p99_seconds", "The 99th percentile of the recorded "
                    "event loop delays.", {"namespace": "web", "pod": r.pod},
                    while_alive(lag, since=since, until=until,
                                spread=lambda: s.rng.uniform(0.7, 1.3)))
            s.gauge("kube_pod_container_resource_limits", "The number of requested limit "
                    "resource by a container.", {"namespace": "web", "pod": r.pod, "container":
                                                 "storefront-ssr", "resource": "cpu",
                                                 "unit": "core"},
                    while_alive(lim, since=since, until=until))
    for ref in product:
        s.http(ref, "/v3/products/{id}", lambda t: 40.0, lambda t: 0.001, lambda t: 0.03)
        s.usage(ref, 0.5, 600e6, cpu_limit=2)

    s.write(root, title="Storefront slow after an unrelated deploy",
            report="storefront is crawling - TTFB went from ~300ms to 2s+ in the last hour, "
            "CDN is serving 504s on some pages. product-api shipped 11.2.0 this afternoon, "
            "can you check if it's slow?",
            category="cpu_throttling", culprit=("Deployment", "web", "storefront-ssr"),
            evidence=["vpaUpdates", "360m", "container_cpu_cfs_throttled_periods_total",
                      "evicting pod web/"],
            fix="Set the storefront-ssr VerticalPodAutoscaler to updateMode Off (or give it a "
            "minAllowed CPU of 1 and controlledValues RequestsOnly) and restart the pods so "
            "they get the template's 1 CPU request / 2 CPU limit again.")
