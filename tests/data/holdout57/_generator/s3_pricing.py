"""network: topology-aware routing pins zone c's callers on the one pricing pod in zone c."""

from __future__ import annotations

from pathlib import Path

from ._kit import App, Scenario, rollout_events, rs_hash, worker_nodes

SID = "storefront-pricing-timeouts"
NOW = "2026-06-02T14:10:00Z"
MOVE = 48.0


def build(root: Path) -> None:
    s = Scenario(SID, NOW, 5703)
    nodes = worker_nodes(s, 8)
    s.node("ip-10-0-33-131.eu-west-1.compute.internal", "eu-west-1c", "general",
           created_days=47 / 1440)
    nodes.append("ip-10-0-33-131.eu-west-1.compute.internal")
    zone = s.node_zone
    s.background(nodes, ["catalog", "web"])

    pricing = s.app("catalog", "pricing", "registry.internal/catalog/pricing:6.12.0",
                    [nodes[0], nodes[3], nodes[1], nodes[4], nodes[2], nodes[6]],
                    cpu="500m", mem="384Mi", mem_lim="768Mi", revision=57,
                    created_min=4 * 1440,
                    env=[{"name": "GOMAXPROCS", "value": "2"},
                         {"name": "MAX_INFLIGHT", "value": "64"}],
                    svc_annotations={"service.kubernetes.io/topology-mode": "Auto"})
    s.retime_pod(pricing.pods[5], MOVE)
    zc_pod = pricing.pods[4]
    s.event("catalog", "Pod", pricing.pods[5], "Scheduled",
            f"Successfully assigned catalog/{pricing.pods[5]} to {nodes[6]}", first=MOVE,
            last=MOVE, component="default-scheduler")
    s.event("catalog", "ReplicaSet", pricing.rs, "SuccessfulCreate",
            f"Created pod: {pricing.pods[5]}", first=MOVE, last=MOVE,
            component="replicaset-controller")
    s.event("", "Node", "ip-10-0-33-131.eu-west-1.compute.internal", "RegisteredNode",
            "Node ip-10-0-33-131.eu-west-1.compute.internal event: Registered Node "
            "ip-10-0-33-131.eu-west-1.compute.internal in Controller", first=47, last=47,
            component="node-controller")
    s.event("", "Node", "ip-10-0-33-131.eu-west-1.compute.internal", "NodeReady",
            "Node ip-10-0-33-131.eu-west-1.compute.internal status is now: NodeReady",
            first=46, last=46, host="ip-10-0-33-131.eu-west-1.compute.internal")

    front = s.app("web", "storefront", "registry.internal/web/storefront:2026.06.01-3",
                  [nodes[0], nodes[3], nodes[1], nodes[4], nodes[2], nodes[5], nodes[8],
                   nodes[5], nodes[2]], cpu="300m", mem="512Mi", revision=88,
                  created_min=3 * 1440)
    s.retime_pod(front.pods[6], 45)
    pz = {p: zone[n] for p, n in zip(pricing.pods, pricing.nodes, strict=True)}
    fz = {p: zone[n] for p, n in zip(front.pods, front.nodes, strict=True)}

    # pricing: the zone-c pod takes all of zone c's calls after the zone-c pod moved
    def p_rps(m: float, i: int) -> float:
        z = pz[pricing.pods[i]]
        if i == 5 and m > MOVE:
            return 0.0
        if z == "eu-west-1c":
            return 75.0 if m > MOVE else 150.0
        if z == "eu-west-1a":
            return 30.0 if m > MOVE else 20.0
        return 30.0

    def served(m: float, i: int) -> float:
        return min(p_rps(m, i), 92.0) if pricing.pods[i] == zc_pod else p_rps(m, i)

    s.pod_basics(pricing, cpu=lambda m, i: 1.96 if pricing.pods[i] == zc_pod and m < MOVE
                 else (0.0 if i == 5 and m > MOVE else 0.04 + p_rps(m, i) * 0.011),
                 mem_mb=lambda m, i: 310.0 if pricing.pods[i] != zc_pod or m > MOVE else 590.0,
                 rps=served,
                 err=lambda m, i: (p_rps(m, i) - 92.0) if pricing.pods[i] == zc_pod
                 and m < MOVE else 0.0)
    for i, p in enumerate(pricing.pods):
        hot = p == zc_pod
        s.gauge("pricing_inflight_requests", "Requests in flight.",
                {"namespace": "catalog", "pod": p},
                lambda m, hot=hot, i=i: None if i == 5 and m > MOVE else
                (64 if hot and m < MOVE - 1 else (5 + s.rng.randint(0, 6) if hot else
                                                  s.rng.randint(0, 3))))
        s.histogram("http_request_duration_seconds", "Request latency.",
                    {"namespace": "catalog", "pod": p, "service": "pricing"},
                    lambda m, i=i: served(m, i),
                    lambda m, le, hot=hot: (1.7 if hot and m < MOVE else 0.012) if le < 0
                    else ((0.02 if le < 1 else (0.35 if le < 2 else 0.9)) if hot and m < MOVE
                          else (0.97 if le < 0.1 else 1.0)),
                    [0.25, 2.5])
    for i, p in enumerate(pricing.pods):
        hot = p == zc_pod
        start = MOVE if i == 5 else 60.0
        every = 8.0 if hot else 45.0
        m = start - s.rng.uniform(0, 0.1)
        while m > 0:
            sku = s.rng.randint(100000, 999999)
            if hot and m < MOVE:
                r = s.rng.random()
                if r < 0.45:
                    s.log(s.ago(m), "warn", "pricing", "catalog", p, "pricing",
                          f"request queue saturated ({64}/64 in flight), shedding "
                          f"GET /v2/price?sku={sku} with 503")
                elif r < 0.8:
                    s.log(s.ago(m), "info", "pricing", "catalog", p, "pricing",
                          f"GET /v2/price?sku={sku} 200 {s.rng.randint(1400, 2400)}ms",
                          http__response__status_code=200)
                else:
                    s.log(s.ago(m), "warn", "pricing", "catalog", p, "pricing",
                          f"GET /v2/price?sku={sku}: client went away after "
                          f"{s.rng.randint(1990, 2010)}ms (context canceled)")
            else:
                s.log(s.ago(m), "info", "pricing", "catalog", p, "pricing",
                      f"GET /v2/price?sku={sku} 200 {s.rng.randint(4, 19)}ms",
                      http__response__status_code=200)
            m -= every / 60 * s.rng.uniform(0.6, 1.4)
    s.chatter(App("catalog", "pricing", pricing.rs, pricing.pods[:5], [], [], ""),
              [("info", "price book refreshed: 48211 skus, 3 currencies, took {ms}ms")],
              every_s=600)

    # storefront: only the pods in zone c time out
    def f_err(m: float, i: int) -> float:
        return 11.0 if fz[front.pods[i]] == "eu-west-1c" and m < MOVE - 1 else 0.0
    s.pod_basics(front, cpu=lambda m, i: 0.25, mem_mb=lambda m, i: 410.0,
                 rps=lambda m, i: 30.0 - f_err(m, i), err=f_err, svc="storefront")
    for i, p in enumerate(front.pods):
        cz = fz[p] == "eu-west-1c"
        start = 45.0 if i == 6 else 60.0
        m = start - s.rng.uniform(0, 0.3)
        while m > 0:
            if cz and m < MOVE - 1 and s.rng.random() < 0.6:
                sku = s.rng.randint(100000, 999999)
                s.log(s.ago(m), "error", "storefront", "web", p, "storefront",
                      "pricing lookup failed: Get \"http://pricing.catalog.svc.cluster.local/"
                      f"v2/price?sku={sku}\": context deadline exceeded (Client.Timeout "
                      "exceeded while awaiting headers) after 2000ms; rendering without price",
                      error__type="timeout")
            else:
                path = s.rng.choice(["/", f"/product/{s.rng.randint(1, 9999)}", "/cart",
                                     "/search?q=lamp"])
                s.log(s.ago(m), "info", "storefront", "web", p, "storefront",
                      f"GET {path} 200 {s.rng.randint(20, 140)}ms",
                      http__response__status_code=200)
            m -= 35 / 60 * s.rng.uniform(0.6, 1.4)

    # --- bystanders --------------------------------------------------------------------
    search = s.app("catalog", "search", "registry.internal/catalog/search:4.1.0",
                   [nodes[1], nodes[5]], cpu="1", mem="2Gi", revision=23, created_min=21,
                   prev_image="registry.internal/catalog/search:4.0.9")
    rollout_events(s, "catalog", "search", search.rs, "search-" + rs_hash("catalogsearch22"),
                   21, 2)
    s.chatter(search, [("info", "query '{id}' took {ms}ms hits={n}"),
                       ("warn", "index segment merge took {rnd}ms")], every_s=40)
    s.pod_basics(search, cpu=lambda m, i: 0.4, mem_mb=lambda m, i: 1300.0, rps=lambda m, i: 6.0)
    inv = s.app("catalog", "inventory", "registry.internal/catalog/inventory:3.3.2",
                [nodes[3], nodes[7]], revision=15, created_min=5 * 1440)
    s.chatter(inv, [("info", "stock sync batch {n} applied"),
                    ("error", "supplier feed acme-eu returned 429, retrying in 30s")], every_s=70)
    s.pod_basics(inv, cpu=lambda m, i: 0.1, mem_mb=lambda m, i: 200.0, rps=lambda m, i: 3.0)
    o = s.find("Pod", inv.pods[1])
    cs = o["status"]["containerStatuses"][0]
    cs["restartCount"] = 2
    cs["lastState"] = {"terminated": {"exitCode": 137, "reason": "Error",
                                      "startedAt": s.t(5 * 1440 - 1),
                                      "finishedAt": s.t(3 * 1440)}}
    cs["state"] = {"running": {"startedAt": s.t(3 * 1440 - 0.2)}}

    s.scenario_yaml = {
        "id": SID,
        "title": "storefront pods in eu-west-1c time out calling pricing",
        "now": NOW,
        "report": "storefront is showing products without prices for part of our users. "
                  "Only the storefront pods running in eu-west-1c log pricing timeouts, the "
                  "ones in 1a/1b are fine - a new node joined 1c right before this started, so "
                  "I think the 1c nodes (or those storefront pods) are broken. Should we cordon "
                  "1c and restart storefront?\n",
        "truth": {
            "category": "network",
            "culprit": {"kind": "Service", "namespace": "catalog", "name": "pricing"},
            "evidence": ["service.kubernetes.io/topology-mode", "request queue saturated",
                         "eu-west-1c"],
            "fix": "The pricing Service has topology-aware routing "
                   "(service.kubernetes.io/topology-mode: Auto), so zone c's callers only reach "
                   "pricing pods in zone c; since the node rotation left a single pricing pod in "
                   "eu-west-1c, that pod is saturated (64/64 in flight) while the others idle. "
                   "Remove the annotation (or add a zone topologySpreadConstraint to pricing "
                   "and rebalance); the storefront pods and the new node are fine.",
        },
    }
    s.write(root)
