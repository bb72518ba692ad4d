"""Shape 5, cpu_throttling: the ingress controller's 500m limit meets a flood of full TLS
handshakes after a big partner client stops resuming sessions."""

from __future__ import annotations

import random
from datetime import datetime
from pathlib import Path

from ._kit import (
    Ctr,
    Gen,
    Line,
    Rev,
    Scenario,
    configmap,
    deployment,
    event,
    lines,
    meta,
    namespace,
    service,
    standard_bystanders,
    worker_nodes,
)

SID = "public-ingress-everything-slow"
REG = "registry.gitlab.com/northwind/platform"
BACKENDS = {"shop-catalog": ("shop", "catalog", "/api/v2/products"),
            "accounts-accounts-api": ("accounts", "accounts-api", "/api/v1/me"),
            "search-search-api": ("search", "search-api", "/api/v1/search")}
LOG_FORMAT = ('$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent '
              '"$http_referer" "$http_user_agent" $request_length request_time=$request_time '
              "[$proxy_upstream_name] $upstream_addr upstream_response_time="
              "$upstream_response_time $upstream_status $req_id "
              "ssl_session_reused=$ssl_session_reused")


def build(root: Path) -> None:
    sc = Scenario(SID, "2026-10-02T19:05:00Z", seed=5405)
    old = sc.ago(days=620)
    nodes = worker_nodes(sc, [f"ip-10-70-{a}-{b}.ec2.internal"
                              for a, b in ((1, 40), (2, 199), (3, 18), (1, 122), (2, 63))])
    standard_bystanders(sc, nodes, ["catalog.shop.svc.cluster.local",
                                    "accounts-api.accounts.svc.cluster.local",
                                    "accounts-db.accounts.svc.cluster.local"])
    for ns in ("ingress-nginx", "shop", "accounts", "search"):
        namespace(sc, ns, old)
    flood = sc.ago(minutes=36)

    def after(t: datetime) -> bool:
        return t >= flood

    ctrl = deployment(sc, "ingress-nginx", "ingress-nginx-controller", [
        Rev([Ctr("controller", "registry.k8s.io/ingress-nginx/controller:v1.11.2", port=443,
                 args=["/nginx-ingress-controller", "--publish-service=ingress-nginx/"
                       "ingress-nginx-controller", "--election-id=ingress-nginx-leader",
                       "--controller-class=k8s.io/ingress-nginx",
                       "--configmap=ingress-nginx/ingress-nginx-controller"],
                 cpu_req="200m", cpu_lim="500m", mem_req="256Mi", mem_lim="512Mi",
                 readiness={"httpGet": {"path": "/healthz", "port": 10254, "scheme": "HTTP"},
                            "periodSeconds": 10, "timeoutSeconds": 1, "failureThreshold": 3,
                            "successThreshold": 1})],
            sc.ago(days=6, hours=1), 2, "helm upgrade ingress-nginx 4.11.2")],
        nodes=nodes, created=old, first_rev=19)
    configmap(sc, "ingress-nginx", "ingress-nginx-controller", {
        "allow-snippet-annotations": "false", "log-format-upstream": LOG_FORMAT,
        "ssl-session-cache": "true", "ssl-session-cache-size": "10m",
        "ssl-session-timeout": "10m", "ssl-session-tickets": "false",
        "worker-processes": "auto", "use-http2": "true"}, old)
    service(sc, "ingress-nginx", "ingress-nginx-controller",
            selector={"app": "ingress-nginx-controller"},
            ports=[("http", 80, 80), ("https", 443, 443)], created=old, stype="LoadBalancer",
            annotations={"service.beta.kubernetes.io/aws-load-balancer-type": "nlb"})
    for ns, svc, path in BACKENDS.values():
        host = {"shop": "shop.northwind.io", "accounts": "accounts.northwind.io",
                "search": "search.northwind.io"}[ns]
        sc.add({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                "metadata": meta(sc, svc, ns, old, {"app": svc}),
                "spec": {"ingressClassName": "nginx",
                         "tls": [{"hosts": [host], "secretName": f"{ns}-tls"}],
                         "rules": [{"host": host, "http": {"paths": [{
                             "path": path.rsplit("/", 1)[0], "pathType": "Prefix",
                             "backend": {"service": {"name": svc, "port": {"number": 80}}}}]}}]},
                "status": {"loadBalancer": {"ingress": [{
                    "hostname": "a1b2c3-ingress-nginx.elb.us-east-1.amazonaws.com"}]}}})

    partner_ua = "northwind-partner-sync/4.0.0 (okhttp/4.12.0)"
    uas = ["Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X)",
           "Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/129.0", "NorthwindApp/7.2 (Android)"]

    def access(rng: random.Random, t: datetime) -> Line:
        ing = rng.choice(list(BACKENDS))
        ns, svc, path = BACKENDS[ing]
        partner = rng.random() < (0.55 if after(t) else 0.3)
        ua = partner_ua if partner else rng.choice(uas)
        up = rng.randint(4, 38) / 1000
        if after(t):
            total = up + rng.uniform(0.4, 2.6)
            reused = "." if partner or rng.random() < 0.5 else "r"
        else:
            total = up + rng.uniform(0.001, 0.02)
            reused = "r" if rng.random() < 0.85 else "."
        addr = f"10.42.{rng.randint(1, 5)}.{rng.randint(2, 250)}:8080"
        client = f"198.51.100.{rng.randint(2, 250)}" if partner else \
            f"203.0.113.{rng.randint(2, 250)}"
        msg = (f'{client} - - [{t:%d/%b/%Y:%H:%M:%S} +0000] "GET {path}?page={rng.randint(1, 9)}'
               f' HTTP/1.1" 200 {rng.randint(400, 9000)} "-" "{ua}" {rng.randint(200, 600)} '
               f"request_time={total:.3f} [{ns}-{svc}-80] {addr} "
               f"upstream_response_time={up:.3f} 200 {rng.getrandbits(64):016x} "
               f"ssl_session_reused={reused}")
        return "info", msg, {"http.response.status_code": 200, "user_agent.original": ua}

    for p in ctrl.pods:
        sc.chatter(p.ref, access, 3.5)
        sc.chatter(p.ref, lines([
            ("info", "I1002 store.go:440] \"Found valid IngressClass\" ingress=\"shop/catalog\""),
            ("warn", "W1002 controller.go:1110] Error getting SSL certificate "
                     "\"search/search-tls\": local SSL certificate search/search-tls was not "
                     "found. Using default certificate")]), 0.15)
        sc.usage(p, lambda t: 0.49 if after(t) else 0.21, 300e6, ksm=True,
                 cfs=lambda t: 0.74 if after(t) else 0.03, step=60)
        sc.counter("nginx_ingress_controller_nginx_process_connections_total",
                   "total number of connections with state", {
                       "namespace": "ingress-nginx", "pod": p.ref.pod, "state": "accepted",
                       "controller_class": "k8s.io/ingress-nginx"},
                   lambda t: 260.0 if after(t) else 38.0, start=sc.rng.uniform(1e7, 3e7))
    for ns, svc, _ in BACKENDS.values():
        base = {"exported_namespace": ns, "ingress": svc, "service": svc, "status": "200"}
        sc.counter("nginx_ingress_controller_requests_total",
                   "The total number of client requests", base, lambda t: 140.0,
                   start=sc.rng.uniform(1e7, 5e7))
        lab = {k: v for k, v in base.items() if k != "status"}
        sc.histogram("nginx_ingress_controller_request_duration_seconds",
                     "The request processing time in seconds (client side)", lab,
                     lambda t: 140.0, lambda t: 1.1 if after(t) else 0.035, step=180)
        sc.histogram("nginx_ingress_controller_response_duration_seconds",
                     "The time spent on receiving the response from the upstream server",
                     lab, lambda t: 140.0, lambda t: 0.016, step=180)
    _backends(sc, nodes, old)
    sc.write(root, title="Everything behind the public ingress is slow",
             report="everything behind the public ingress is slow, p99 is over 2s on shop, "
                    "accounts and search at the same time. accounts-api deployed ~30 min ago, "
                    "could it be hammering the shared db and dragging the others? backend "
                    "owners please take a look.\n",
             truth={"category": "cpu_throttling",
                    "culprit": {"kind": "Deployment", "namespace": "ingress-nginx",
                                "name": "ingress-nginx-controller"},
                    "evidence": ["container_cpu_cfs_throttled_periods_total",
                                 "ssl_session_reused=.", "cpu: 500m"],
                    "fix": "Raise (or remove) the ingress-nginx-controller CPU limit and add "
                           "replicas so TLS handshakes are not throttled; ask the partner "
                           "(northwind-partner-sync 4.0) to reuse connections / TLS sessions "
                           "again. The backends answer in milliseconds "
                           "(upstream_response_time) and need no change."})


def _backends(sc: Scenario, nodes: list[str], old: datetime) -> None:
    for ns, svc, path in BACKENDS.values():
        revs = [Rev([Ctr(svc, f"{REG}/{svc}:2.{sc.rng.randint(10, 40)}.0")],
                    sc.ago(days=sc.rng.randint(2, 5), hours=3), 3)]
        if svc == "accounts-api":
            revs = [Rev([Ctr(svc, f"{REG}/{svc}:3.4.1")], sc.ago(days=4), 0),
                    Rev([Ctr(svc, f"{REG}/{svc}:3.5.0",
                             env={"FEATURE_PASSKEYS": "true"})], sc.ago(minutes=31), 3,
                        "accounts-api 3.5.0 (passkeys beta)")]
        wl = deployment(sc, ns, svc, revs, nodes=nodes, created=old,
                        first_rev=sc.rng.randint(20, 90))
        service(sc, ns, svc, selector={"app": svc}, ports=[("http", 80, 8080)], created=old)
        if svc == "accounts-api":
            event(sc, ns, "Deployment", svc, "ScalingReplicaSet",
                  f"Scaled down replica set {wl.sets[0]['metadata']['name']} to 0 from 1",
                  first=sc.ago(minutes=29), last=sc.ago(minutes=29),
                  component="deployment-controller")

        def gen_for(pth: str, slow_note: bool) -> Gen:
            def gen(rng: random.Random, t: datetime) -> Line:
                if slow_note and rng.random() < 0.07:
                    return ("warn", f"slow query {rng.randint(200, 420)}ms: SELECT * FROM "
                                    "sessions WHERE user_id = $1", {})
                d = rng.randint(3, 34)
                return ("info", f"GET {pth} 200 {d}ms", {"http.response.status_code": 200,
                                                          "event.duration": d * 10**6})
            return gen

        for p in wl.pods:
            sc.chatter(p.ref, gen_for(path, svc == "accounts-api"), 0.7)
            sc.usage(p, 0.18, 240e6)
        sc.histogram("http_request_duration_seconds", "Server-side request latency.",
                     {"namespace": ns, "service": svc}, lambda t: 46.0, lambda t: 0.014,
                     step=180)
