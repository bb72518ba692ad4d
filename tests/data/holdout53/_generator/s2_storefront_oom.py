"""oom_killed: Node.js --max-old-space-size above a recently lowered memory limit."""

from __future__ import annotations

from pathlib import Path

from . import _kit as k

SID = "storefront-flapping-during-campaign"
NOW = "2026-05-08T19:45:00Z"
NODES = [
    "ip-10-1-17-40.ec2.internal",
    "ip-10-1-33-182.ec2.internal",
    "ip-10-1-49-5.ec2.internal",
    "ip-10-1-50-231.ec2.internal",
    "ip-10-1-66-98.ec2.internal",
]
IMG = "ghcr.io/acme-retail/storefront-ssr:8.4.1"
LIMIT = 1024 * 1024 * 1024
ROLLOUT = 60 * 24 * 2 + 137.0
CAMPAIGN = 46.0
MB = 1024 * 1024
BASE = 360 * MB


def build(root: Path) -> None:
    sc = k.Scenario(SID, NOW, seed=5302)
    created = "2024-11-02T12:00:00Z"
    sc.add(*(k.namespace(n, created) for n in ("default", "web", "search", "data",
                                                "kube-system", "monitoring")))
    k.add_nodes(sc, NODES, "2026-05-03T04:40:00Z", memory="15634508Ki")

    def traffic(m: float) -> float:
        return 1.0 if m > CAMPAIGN else 1.22

    # ------------------------------------------------------------- bystanders
    search = k.AppSpec("search", "search-api", "ghcr.io/acme-retail/search-api:3.2.0", 3, NODES,
                       revision=57, rs_age_min=31, rps=40, mem_lim="2Gi", mem_mb=900,
                       routes=("/search", "/suggest", "/facets"))
    s_refs = k.add_app(sc, search)
    sc.event("search", "Deployment", "search-api", "ScalingReplicaSet",
             f"Scaled up replica set {s_refs.replicaset['metadata']['name']} to 3 from 2",
             first=30.5, component="deployment-controller", api="apps/v1")
    for r in s_refs.refs:
        sc.log(30.6, r, "info", "search-api 3.2.0 started, index generation 20260508-1830")
    reco = k.AppSpec("web", "recommendations", "ghcr.io/acme-retail/reco:2.9.4", 2, NODES[2:],
                     revision=18, rps=30, routes=("/reco/home", "/reco/pdp"), mem_lim="768Mi",
                     mem_mb=410)
    reco_refs = k.add_app(sc, reco)
    cart = k.AppSpec("web", "cart-api", "ghcr.io/acme-retail/cart-api:6.1.0", 3, NODES,
                     revision=33, rps=25, routes=("/cart", "/cart/items", "/cart/checkout"))
    k.add_app(sc, cart)
    redis = k.AppSpec("data", "session-redis", "redis:7.2.5-alpine", 1, NODES[4:], revision=4,
                      port=6379, readiness=None, kind="worker", mem_lim="2Gi", mem_mb=780,
                      worker_lines=("DB saved on disk", "Background saving started by pid {n}",
                                    "10000 changes in 60 seconds. Saving..."), log_every=3)
    k.add_app(sc, redis)
    rr = k.AppSpec("data", "report-renderer", "ghcr.io/acme-retail/report-renderer:1.4.0", 2,
                   NODES[:2], revision=5, rps=1, mem_req="6Gi", mem_lim="8Gi", mem_mb=2100)
    rr_refs = k.add_app(sc, rr)
    pend_name = f"{rr_refs.replicaset['metadata']['name']}-{sc.hash(5)}"
    pend = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {**rr_refs.pods[0]["metadata"], "name": pend_name, "uid": sc.uid(),
                     "creationTimestamp": sc.t(52)},
        "spec": {k2: v for k2, v in rr_refs.pods[0]["spec"].items() if k2 != "nodeName"},
        "status": {"phase": "Pending", "qosClass": "Burstable", "conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
             "lastTransitionTime": sc.t(52),
             "message": "0/5 nodes are available: 5 Insufficient memory. preemption: 0/5 nodes "
                        "are available: 5 No preemption victims found for incoming pod."}]},
    }
    sc.add(pend)
    rr_refs.replicaset["spec"]["replicas"] = 3
    rr_refs.deployment["spec"]["replicas"] = 3
    sc.event("data", "Pod", pend_name, "FailedScheduling",
             "0/5 nodes are available: 5 Insufficient memory. preemption: 0/5 nodes are "
             "available: 5 No preemption victims found for incoming pod.", type_="Warning",
             count=14, first=52, last=3.5, component="default-scheduler")
    dns = k.AppSpec("kube-system", "coredns", "registry.k8s.io/coredns/coredns:v1.11.3", 2,
                    NODES[:2], revision=1, port=53, readiness=None, kind="none", service=False)
    k.add_app(sc, dns)
    npd = k.add_daemonset(sc, "kube-system", "node-problem-detector",
                          "registry.k8s.io/node-problem-detector/node-problem-detector:v0.8.19",
                          NODES)

    # ------------------------------------------------------------- storefront
    spec = k.AppSpec("web", "storefront-ssr", IMG, 6, NODES, port=3000, cpu_req="500m",
                     mem_req="768Mi", mem_lim="1Gi")
    env = [{"name": "NODE_ENV", "value": "production"},
           {"name": "NODE_OPTIONS", "value": "--max-old-space-size=1536"},
           {"name": "RENDER_CACHE_ENTRIES", "value": "40000"},
           {"name": "API_BASE", "value": "http://api-gateway.web.svc"}]

    def ssr(lim: str, req: str) -> dict[str, object]:
        return k.container("storefront-ssr", IMG, port=3000, cpu_req="500m", mem_req=req,
                           mem_lim=lim, env=env, readiness=k.http_probe("/_health", delay=10),
                           liveness=k.http_probe("/_health", delay=30, period=20))

    old_c, new_c = ssr("2Gi", "1Gi"), ssr("1Gi", "768Mi")
    # kill schedule: minutes-before-now of each OOM kill in the last 70 minutes, per pod
    kills = [[58.0, 27.5], [49.0, 17.0], [63.5, 33.0, 4.5], [41.0, 9.5], [55.5, 22.0],
             [66.0, 36.5, 6.0]]
    restarts = [38, 41, 44, 39, 37, 45]

    def running(i: int) -> k.Callable[[str], k.NewPod]:
        def f(created: str) -> k.NewPod:
            last_kill = kills[i][-1]
            start = last_kill - 0.05
            prev_start = kills[i][-2] - 0.05 if len(kills[i]) > 1 else last_kill + 30.5
            st = k.cstatus("storefront-ssr", IMG, {"running": {"startedAt": sc.t(start)}},
                           ready=True, restarts=restarts[i],
                           last={"terminated": {"exitCode": 137, "reason": "OOMKilled",
                                                "startedAt": sc.t(prev_start),
                                                "finishedAt": sc.t(last_kill)}})
            return k.NewPod(NODES[i % 5], "Running", [st], True)
        return f

    conds = [
        k.cond("Available", "True", "MinimumReplicasAvailable",
               "Deployment has minimum availability.", sc.t(4.0)),
        k.cond("Progressing", "True", "NewReplicaSetAvailable",
               'ReplicaSet "x" has successfully progressed.', sc.t(ROLLOUT - 4)),
    ]
    ro = k.add_rollout(
        sc, spec, [old_c], [new_c], old_rev=22, new_rev=23, rollout_min=ROLLOUT, old_count=0,
        new_pods=[running(i) for i in range(6)], dep_conditions=conds,
        change_cause="rightsizing: storefront-ssr memory 2Gi -> 1Gi per VPA recommendation "
                     "(FINOPS-212)",
        old_rs_age_min=60 * 24 * 6 + 300,
    )
    ro.deployment["status"]["conditions"][1]["message"] = (
        f'ReplicaSet "{ro.new_rs["metadata"]["name"]}" has successfully progressed.')
    sel = {"app.kubernetes.io/name": "storefront-ssr", "app.kubernetes.io/instance":
           "storefront-ssr"}
    sc.add(k.service(sc, "web", "storefront-ssr", sel, 80, "http"),
           k.endpoints("web", "storefront-ssr", ro.new_refs, [], 3000))
    sc.add({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "storefront-ssr", "namespace": "web",
                     "creationTimestamp": "2025-02-10T09:00:00Z"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                    "name": "storefront-ssr"},
                 "minReplicas": 4, "maxReplicas": 12,
                 "metrics": [{"type": "Resource", "resource": {
                     "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}]},
        "status": {"currentReplicas": 6, "desiredReplicas": 6,
                   "lastScaleTime": sc.t(44),
                   "currentMetrics": [{"type": "Resource", "resource": {
                       "name": "cpu", "current": {"averageUtilization": 51,
                                                  "averageValue": "255m"}}}],
                   "conditions": [
                       {"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale",
                        "message": "recommended size matches current size",
                        "lastTransitionTime": sc.t(44)},
                       {"type": "ScalingActive", "status": "True", "reason": "ValidMetricFound",
                        "message": "the HPA was able to successfully calculate a replica count "
                                   "from cpu resource utilization (percentage of request)",
                        "lastTransitionTime": sc.t(60 * 24 * 3)},
                       {"type": "ScalingLimited", "status": "False", "reason": "DesiredWithinRange",
                        "message": "the desired count is within the acceptable range",
                        "lastTransitionTime": sc.t(44)}]},
    })
    sc.event("web", "HorizontalPodAutoscaler", "storefront-ssr", "SuccessfulRescale",
             "New size: 6; reason: cpu resource utilization (percentage of request) above target",
             first=44, component="horizontal-pod-autoscaler", api="autoscaling/v2")

    hrefs = {r.node: r for r in npd}
    for i, (ref, p) in enumerate(zip(ro.new_refs, ro.new_pods, strict=True)):
        pn = p["metadata"]["name"]
        ks = kills[i]
        starts = [70.0] + [x - 0.05 for x in ks]
        lab = {"namespace": "web", "pod": pn, "container": "storefront-ssr", "node": ref.node}

        windows = list(zip([ks[0] + 30.5, *[x - 0.05 for x in ks]], [*ks, None],
                           strict=True))

        def mem(m: float, windows: list[tuple[float, float | None]] = windows) -> float:
            for s0, kill in windows:
                if kill is not None and m >= kill:
                    frac = min(1.0, (s0 - m) / (s0 - kill))
                    break
                if kill is None:
                    frac = min(0.97, (s0 - m) / 31.0)
                    break
            else:
                frac = 0.0
            return BASE + (LIMIT * 0.995 - BASE) * frac + sc.rng.uniform(-4, 4) * MB

        sc.gauge("container_memory_working_set_bytes",
                 "Current working set of the container in bytes", lab,
                 lambda m, f=mem: float(int(f(m))))
        sc.gauge("container_spec_memory_limit_bytes", "Memory limit for the container.", lab,
                 lambda m: float(LIMIT))
        sc.gauge("nodejs_heap_size_used_bytes", "Process heap size used from Node.js in bytes.",
                 {"namespace": "web", "pod": pn, "service": "storefront-ssr"},
                 lambda m, f=mem: float(int(max(120 * MB, f(m) - 210 * MB))))
        sc.gauge("nodejs_heap_size_total_bytes", "Process heap size from Node.js in bytes.",
                 {"namespace": "web", "pod": pn, "service": "storefront-ssr"},
                 lambda m, f=mem: float(int(max(150 * MB, f(m) - 150 * MB))))
        k.restarts_series(sc, {"namespace": "web", "pod": pn, "container": "storefront-ssr"},
                          lambda m, ks=ks, r=restarts[i]: float(r - sum(1 for x in ks if x < m)))
        sc.gauge("kube_pod_container_status_last_terminated_reason",
                 "Describes the last reason the container was in terminated state.",
                 {"namespace": "web", "pod": pn, "container": "storefront-ssr",
                  "reason": "OOMKilled"}, lambda m: 1.0)
        sc.counter("container_cpu_usage_seconds_total", "Cumulative cpu time consumed in seconds",
                   lab, lambda m: sc.noisy(0.22 * traffic(m), 0.2), start=40.0,
                   resets=tuple(ks))
        for code, frac in (("200", 0.975), ("502", 0.004), ("500", 0.001)):
            sc.counter("http_requests_total", "Total HTTP requests handled.",
                       {"namespace": "web", "service": "storefront-ssr", "pod": pn, "code": code},
                       lambda m, f=frac: sc.noisy(14 * f * traffic(m), 0.15), start=0.0,
                       resets=tuple(ks))
        # logs: startup, access, gc traces; nothing from V8 before the kill
        lines: list[tuple[float, str, str]] = []
        for s0 in starts[1:]:
            lines += [
                (s0 - 0.02, "info", "storefront-ssr 8.4.1 (node v20.12.2) starting, pid 1"),
                (s0 - 0.03, "info", "v8 heap_size_limit=1660944384 bytes "
                                    "(NODE_OPTIONS=--max-old-space-size=1536)"),
                (s0 - 0.15, "info", "render cache warmed: 0/40000 entries, lazy fill enabled"),
                (s0 - 0.16, "info", "listening on 0.0.0.0:3000"),
            ]
        for m in sc.spread(60, 0, 1.6):
            if any(x - 0.2 < m < x + 0.01 for x in ks):
                continue
            route = sc.rng.choice(("/", "/c/shoes", "/p/{sku}", "/c/new-in", "/p/{sku}",
                                   "/search"))
            lines.append((m, "info", f"GET {route} 200 {sc.rng.randint(40, 380)}ms"))
        for m in sc.spread(60, 0, 3.0):
            if any(x - 0.2 < m < x + 0.01 for x in ks):
                continue
            used = int(mem(m) / MB) - 210
            lines.append((m, "info", f"gc: scavenge heap_used={used}MB "
                                     f"heap_total={used + 60}MB rss={int(mem(m) / MB) + 12}MB "
                                     f"cache_entries={min(40000, used * 41)}"))
        for m in sc.spread(60, 0, 8.0):
            lines.append((m, "warn", "recommendations slow (812ms > 800ms budget), "
                                     "rendering fallback rail"))
        lines.sort(key=lambda x: -x[0])
        cur: list[str] = []
        prev: list[str] = []
        for m, lvl, msg in lines:
            extra = {}
            if msg.startswith("GET "):
                extra = {"http.response.status_code": 200}
            sc.log(m, ref, lvl, msg, **extra)
            text = f"{k.iso_ms(sc.ago(m))} {lvl.upper():5} {msg}"
            if m < ks[-1]:
                cur.append(text)
            elif len(ks) == 1 or m < ks[-2]:
                prev.append(text)
        sc.pod_log("web", pn, "storefront-ssr", cur, previous=False)
        sc.pod_log("web", pn, "storefront-ssr", prev, previous=True)
        for kill in ks:
            if kill < 60:
                pid = sc.rng.randint(2000, 90000)
                sc.log(kill, hrefs[ref.node], "warn",
                       f"kernel: Memory cgroup out of memory: Killed process {pid} (node) "
                       f"total-vm:{sc.rng.randint(22000000, 23000000)}kB, "
                       f"anon-rss:{sc.rng.randint(1030000, 1046000)}kB, file-rss:"
                       f"{sc.rng.randint(30000, 40000)}kB, shmem-rss:0kB, UID:1000 "
                       "pgtables:2788kB oom_score_adj:984")
        recent = [x for x in ks if x < 58]
        if recent:
            sc.event("", "Node", ref.node, "OOMKilling",
                     "Memory cgroup out of memory: Killed process "
                     f"{sc.rng.randint(2000, 90000)} (node) total-vm:22514332kB, "
                     "anon-rss:1043112kB, file-rss:35312kB, shmem-rss:0kB, UID:1000 "
                     "pgtables:2788kB oom_score_adj:984", type_="Warning", count=len(recent),
                     first=recent[0], last=recent[-1], component="kernel-monitor",
                     host=ref.node)
        sc.event("web", "Pod", pn, "Pulled", f'Container image "{IMG}" already present on machine',
                 count=restarts[i], first=ks[-1] + 0.5, last=ks[-1] - 0.02, host=ref.node)
        sc.event("web", "Pod", pn, "Started", "Started container storefront-ssr",
                 count=restarts[i] + 1, first=ks[-1] + 0.5, last=ks[-1] - 0.03, host=ref.node)
        if i in (2, 5):
            sc.event("web", "Pod", pn, "Unhealthy",
                     f'Readiness probe failed: Get "http://{ref.ip}:3000/_health": dial tcp '
                     f"{ref.ip}:3000: connect: connection refused", type_="Warning", count=2,
                     first=ks[-1] - 0.05, last=ks[-1] - 0.1, host=ref.node)
    k.deployment_available(sc, "web", "storefront-ssr",
                           lambda m: 6.0 if all(abs(m - x) > 0.6 for y in kills for x in y)
                           else 5.0)
    for r in reco_refs.refs:
        for m in sc.spread(60, 0, 9):
            sc.log(m, r, "warn", "feature store p99 above 700ms, using cached embeddings")

    sc.write(root, {
        "id": SID,
        "title": "storefront pods restarting since the spring campaign",
        "now": NOW,
        "report": (
            "storefront-ssr in web is flapping since the spring campaign email went out ~45 "
            "min ago: pods restarting and the edge shows 502 spikes. Looks like the traffic "
            "spike is too much for it, HPA only went to 6. Should we raise minReplicas / add "
            "nodes? search-api also deployed half an hour ago, not sure if related."
        ),
        "truth": {
            "category": "oom_killed",
            "culprit": {"kind": "Deployment", "namespace": "web", "name": "storefront-ssr"},
            "evidence": ["OOMKilled", "--max-old-space-size=1536", "1Gi",
                         "Memory cgroup out of memory"],
            "fix": (
                "Make storefront-ssr's V8 heap fit its container: set --max-old-space-size to "
                "about 700 (75% of the 1Gi limit) or restore the 2Gi limit lowered two days "
                "ago; the heap grows past 1Gi under normal traffic and the kernel kills it "
                "before V8 would collect."
            ),
        },
    })
