"""Shape 7, network: the cart Service publishes not-ready addresses, so every rollout sends
traffic to pods that are starting or terminating."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path

from ._kit import (
    Ctr,
    Line,
    Ref,
    Rev,
    Scenario,
    access_log,
    deployment,
    endpoints,
    event,
    gone_pods,
    iso,
    lines,
    namespace,
    service,
    standard_bystanders,
    worker_nodes,
)

SID = "storefront-cart-refused-on-deploy"
REG = "harbor.shopline.cloud/shop"


def build(root: Path) -> None:
    sc = Scenario(SID, "2026-12-01T11:30:00Z", seed=5407)
    old = sc.ago(days=700)
    nodes = worker_nodes(sc, [f"ip-10-16-{a}-{b}.ec2.internal"
                              for a, b in ((1, 70), (2, 5), (3, 121), (1, 230))])
    standard_bystanders(sc, nodes, ["cart.shop.svc.cluster.local",
                                    "redis-cart.shop.svc.cluster.local",
                                    "recommendations.shop.svc.cluster.local"])
    for ns in ("shop", "growth"):
        namespace(sc, ns, old)
    r1, r2, r3 = sc.ago(minutes=52), sc.ago(minutes=21), sc.ago(seconds=50)
    gap = 20

    def cart(version: str, env: dict[str, str]) -> list[Ctr]:
        return [Ctr("cart", f"{REG}/cart:{version}", env={"REDIS_ADDR": "redis-cart:6379",
                                                          **env},
                    readiness={"httpGet": {"path": "/ready", "port": 8080, "scheme": "HTTP"},
                               "initialDelaySeconds": 5, "periodSeconds": 5,
                               "timeoutSeconds": 1, "failureThreshold": 3,
                               "successThreshold": 1})]

    def hook(rev: int, idx: int) -> dict[str, object]:
        if rev == 2:
            return {"started": r2 + timedelta(seconds=gap * (idx + 1))}
        if rev == 3:
            kw: dict[str, object] = {"started": r3 + timedelta(seconds=gap * idx)}
            if idx == 2:
                kw["ready"] = False
            return kw
        return {}

    wl = deployment(sc, "shop", "cart", [
        Rev(cart("3.14.2", {"LOG_LEVEL": "debug"}), sc.ago(days=3, hours=6), 0,
            "cart 3.14.2"),
        Rev(cart("3.14.2", {"LOG_LEVEL": "info"}), r1, 0, "cart: LOG_LEVEL debug -> info"),
        Rev(cart("3.14.2", {"LOG_LEVEL": "info", "OTEL_TRACES_SAMPLER_ARG": "0.05"}), r2, 3,
            "cart: trace sampling 0.1 -> 0.05"),
        Rev(cart("3.14.2", {"LOG_LEVEL": "info", "OTEL_TRACES_SAMPLER_ARG": "0.05",
                            "FLAGS_REFRESH": "30s"}), r3, 3,
            "cart: feature-flag refresh 60s -> 30s"),
    ], nodes=nodes, created=old, replicas=4, first_rev=70, pod_hook=hook,
        strategy={"type": "RollingUpdate",
                  "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}})
    old_live = wl.pods[:3]
    new_live = wl.pods[3:]
    terminating = old_live[0]
    killed = r3 + timedelta(seconds=gap + 18)
    terminating.obj["metadata"]["deletionTimestamp"] = iso(killed)
    terminating.obj["metadata"]["deletionGracePeriodSeconds"] = 30
    cs = terminating.obj["status"]["containerStatuses"][0]
    cs["ready"] = False
    for c in terminating.obj["status"]["conditions"]:
        if c["type"] in ("Ready", "ContainersReady"):
            c.update({"status": "False", "lastTransitionTime": iso(killed),
                      "reason": "ContainersNotReady",
                      "message": "containers with unready status: [cart]"})
    # the replica sets' view at this moment
    wl.sets[2]["spec"]["replicas"] = 2
    wl.sets[2]["status"]["readyReplicas"] = wl.sets[2]["status"]["availableReplicas"] = 2
    svc = service(sc, "shop", "cart", selector={"app": "cart"}, ports=[("http", 8080, 8080)],
                  created=old, extra_spec={"publishNotReadyAddresses": True})
    svc["metadata"]["annotations"] = {
        "shopline.cloud/owner": "team-basket",
        "shopline.cloud/note": "warm-up traffic for new pods (BASKET-412)"}
    endpoints(sc, "shop", "cart", wl.pods, 8080, old)
    for p in new_live:
        event(sc, "shop", "Deployment", "cart", "ScalingReplicaSet",
              f"Scaled up replica set {wl.sets[3]['metadata']['name']} to "
              f"{new_live.index(p) + 1}", first=r3 + timedelta(seconds=gap * new_live.index(p)),
              last=r3 + timedelta(seconds=gap * new_live.index(p)),
              component="deployment-controller")
    event(sc, "shop", "Pod", new_live[2].ref.pod, "Unhealthy",
          'Readiness probe failed: Get "http://' + new_live[2].ref.ip + ':8080/ready": dial '
          "tcp " + new_live[2].ref.ip + ":8080: connect: connection refused", etype="Warning",
          count=2, first=sc.ago(seconds=6), last=sc.ago(seconds=1),
          host=new_live[2].ref.node)
    event(sc, "shop", "Pod", terminating.ref.pod, "Killing", "Stopping container cart",
          first=killed, last=killed, host=terminating.ref.node)

    gone0 = gone_pods(sc, wl, 0, 4, nodes)
    gone1 = gone_pods(sc, wl, 1, 4, nodes)
    gone2 = gone_pods(sc, wl, 2, 1, nodes)
    r2_pods = gone2 + [p.ref for p in old_live]
    windows: list[tuple[datetime, list[Ref], list[Ref]]] = [
        (r1, gone0, gone1), (r2, gone1, r2_pods), (r3, r2_pods, [p.ref for p in new_live])]
    refused: list[tuple[datetime, datetime, Ref]] = []
    for t0, olds, news in windows:
        for k, n in enumerate(news):
            s = t0 + timedelta(seconds=gap * k)
            if s > sc.now:
                continue
            refused.append((s, min(s + timedelta(seconds=12), sc.now), n))
            sc.log(s + timedelta(seconds=1), n, "info", "cart 3.14.2 starting (LOG_LEVEL=info)")
            sc.log(s + timedelta(seconds=11), n, "info", "redis-cart connected, warming price "
                   "cache")
            if s + timedelta(seconds=12) <= sc.now:
                sc.log(s + timedelta(seconds=12), n, "info", "listening on :8080")
        for k, o in enumerate(olds):
            s = t0 + timedelta(seconds=gap * k + 18)
            if s > sc.now:
                continue
            refused.append((s, min(s + timedelta(seconds=21), sc.now), o))
            sc.log(s, o, "info", "received SIGTERM, closing listener and draining")
            if s + timedelta(seconds=20) <= sc.now:
                sc.log(s + timedelta(seconds=20), o, "info",
                       "drained 0 in-flight requests, exiting")
    for k, o in enumerate(gone0):
        sc.chatter(o, access_log(["/v1/cart", "/v1/cart/items", "/v1/cart/total"],
                                 ms=(2, 18)), 1.0, end=r1 + timedelta(seconds=gap * k + 18))
    for k, o in enumerate(gone1):
        sc.chatter(o, access_log(["/v1/cart", "/v1/cart/items", "/v1/cart/total"],
                                 ms=(2, 18)), 1.0, start=r1 + timedelta(seconds=gap * k + 12),
                   end=r2 + timedelta(seconds=gap * k + 18))
    sc.chatter(gone2[0], access_log(["/v1/cart", "/v1/cart/items"], ms=(2, 18)), 1.0,
               start=r2 + timedelta(seconds=12), end=r3 + timedelta(seconds=18))
    for p in wl.pods:
        st = datetime.fromisoformat(p.obj["status"]["containerStatuses"][0]["state"]["running"]
                                    ["startedAt"].replace("Z", "+00:00"))
        end = killed if p is terminating else None
        sc.chatter(p.ref, access_log(["/v1/cart", "/v1/cart/items", "/v1/cart/total"],
                                     ms=(2, 18)), 1.0, start=max(st + timedelta(seconds=13),
                                                                 sc.ago(minutes=60)), end=end)
        sc.usage(p, 0.1, 140e6, since=st if st > sc.ago(minutes=60) else None)
    _storefront(sc, nodes, old, refused)

    def addr_count(t: datetime) -> float:
        live = 4.0
        for s, e, _ in refused:
            if s <= t <= e:
                live += 0.5
        return float(int(live))

    sc.gauge("kube_endpoint_address_available", "Number of addresses available in endpoint.",
             {"namespace": "shop", "endpoint": "cart"}, addr_count)
    sc.gauge("kube_endpoint_address_not_ready", "Number of addresses not ready in endpoint.",
             {"namespace": "shop", "endpoint": "cart"}, lambda t: 0.0)
    sc.write(root, title="storefront gets connection refused from cart on every deploy",
             report="every time we deploy cart, even trivial stuff like the log level change "
                    "this morning, storefront throws a burst of connection refused errors for a "
                    "minute or two and checkouts fail. there's a deploy going on right now again. "
                    "is the new cart build slow to start? maybe its readiness probe is wrong?\n",
             truth={"category": "network",
                    "culprit": {"kind": "Service", "namespace": "shop", "name": "cart"},
                    "evidence": ["publishNotReadyAddresses: true", "connect: connection refused",
                                 "received SIGTERM, closing listener and draining"],
                    "fix": "Remove publishNotReadyAddresses from the cart Service (keep it only "
                           "on a headless peer-discovery Service if one is needed) so that "
                           "starting and terminating pods leave the endpoints; the cart build "
                           "and its readiness probe are fine."})


def _storefront(sc: Scenario, nodes: list[str], old: datetime,
                refused: list[tuple[datetime, datetime, Ref]]) -> None:
    last = {"terminated": {"exitCode": 137, "reason": "Error",
                           "startedAt": iso(sc.ago(days=4)),
                           "finishedAt": iso(sc.ago(days=3, hours=2))}}
    sf = deployment(sc, "shop", "storefront", [
        Rev([Ctr("storefront", f"{REG}/storefront:12.8.0", port=3000, mem_lim="768Mi")],
            sc.ago(days=4), 3)], nodes=nodes, created=old, first_rev=301,
        pod_hook=lambda r, i: {"restarts": 1, "last_state": last,
                               "started": sc.ago(days=3, hours=2)} if i == 2 else {})
    rng = sc.rng
    for s, e, target in refused:
        t = s
        while t < e:
            if rng.random() < 0.7 and t + timedelta(seconds=1) <= sc.now:
                p = rng.choice(sf.pods)
                path = rng.choice(["/v1/cart/items", "/v1/cart", "/v1/cart/total"])
                sc.log(t + timedelta(milliseconds=rng.randint(0, 999)), p.ref, "error",
                       f"cart: POST http://cart.shop.svc:8080{path}: dial tcp "
                       f"{target.ip}:8080: connect: connection refused",
                       {"error.type": "ECONNREFUSED", "http.response.status_code": 502})
            t += timedelta(seconds=1)

    def gen(rng: random.Random, t: datetime) -> Line:
        page = rng.choice(["/", "/c/shoes", "/p/77120", "/basket", "/checkout"])
        return ("info", f"GET {page} 200 {rng.randint(40, 260)}ms",
                {"http.response.status_code": 200})

    for p in sf.pods:
        sc.chatter(p.ref, gen, 2.0)
        sc.chatter(p.ref, lines([("warn", "recommendations timeout after 300ms, rendering "
                                          "without carousel"),
                                 ("info", "ssr cache hit ratio 0.{n}")]), 0.3)
        sc.usage(p, 0.3, 520e6, restarts=1 if p is sf.pods[2] else 0)

        def refused_rate(t: datetime) -> float:
            n = sum(1 for s, e, _ in refused if s <= t <= e + timedelta(seconds=59))
            return 0.0 if not n else 0.25 * n

        sc.counter("http_client_requests_total", "Outgoing HTTP calls.",
                   {"namespace": "shop", "service": "storefront", "pod": p.ref.pod,
                    "target": "cart", "outcome": "connection_refused"}, refused_rate,
                   start=float(rng.randint(200, 400)))
        sc.counter("http_client_requests_total", "Outgoing HTTP calls.",
                   {"namespace": "shop", "service": "storefront", "pod": p.ref.pod,
                    "target": "cart", "outcome": "success"}, lambda t: 6.0,
                   start=rng.uniform(1e5, 1e6))
    rec = deployment(sc, "growth", "recommendations", [
        Rev([Ctr("recommendations", f"{REG}/recommendations:0.41.0", mem_lim="1Gi")],
            sc.ago(days=1, hours=2), 2)], nodes=nodes, created=old, first_rev=58)
    for p in rec.pods:
        sc.chatter(p.ref, lines([("warn", "model cache miss for segment s{n}, loading from "
                                          "gcs (took {ms}0ms)"),
                                 ("info", "served 12 recs for u_{id} in {ms}ms")]), 1.0)
        sc.usage(p, 0.4, 700e6)
