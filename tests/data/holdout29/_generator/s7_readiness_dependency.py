"""Storefront's readiness probe checks its session store. The session Redis (no maxmemory,
2Gi limit) is OOMKilled and spends ~70s loading its RDB after each restart; for that
time every storefront replica is unready, the Service has no endpoints and the ingress
answers 503. The symptom is all on storefront; the fault is session-redis's.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path

from tests.data.holdout29._generator.common import (
    Scenario,
    container,
    cumulative,
    deployment,
    endpoints,
    event,
    healthy,
    http_probe,
    iso,
    meta,
    namespace,
    node,
    pod,
    pod_ip,
    pod_metrics,
    replicaset,
    resources,
    rs_hash,
    running,
    service,
    steps,
    suffix,
    template,
    terminated,
)

NOW = "2026-04-02T20:10:00Z"
NS = "shop"
EVERY = 60
LIMIT = 2147483648


def build() -> Path:
    sc = Scenario("storefront-503-bursts", NOW)
    rng = random.Random(29007)
    nodes = [f"gke-prod-pool-2-7f3a{c}-{suffix(c, 4)}" for c in "abcdef"]
    for i, name in enumerate(nodes):
        sc.add(node(name, sc.ago(days=6, hours=i), "pool-2", "8", "32880852Ki",
                    sc.ago(seconds=4), zone=f"europe-west1-{'bcd'[i % 3]}",
                    instance="n2-standard-8"))
    for ns in (NS, "ingress-nginx"):
        sc.add(namespace(ns, sc.ago(days=800)))
    times = steps(sc.ago(hours=3), sc.now, EVERY)
    kills = [sc.ago(minutes=47), sc.ago(minutes=13)]
    loading = timedelta(seconds=71)

    # session-redis: the dependency that fails.
    rlabels = {"app": "session-redis"}
    rtmpl = template(rlabels, [container(
        "redis", "redis:7.2.4-alpine", resources("500m", "1536Mi", "1", "2Gi"), 6379,
        args=["redis-server", "/etc/redis/redis.conf"],
        readinessProbe={"exec": {"command": ["redis-cli", "ping"]}, "periodSeconds": 10,
                        "failureThreshold": 3, "timeoutSeconds": 2},
        volumeMounts=[{"name": "data", "mountPath": "/data"}])])
    rev = f"session-redis-{rs_hash('sr')}"
    sc.add({"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": meta("StatefulSet", "session-redis", NS, sc.ago(days=420), rlabels),
            "spec": {"replicas": 1, "serviceName": "session-redis", "selector": {
                "matchLabels": rlabels}, "template": rtmpl,
                "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                    "accessModes": ["ReadWriteOnce"], "storageClassName": "premium-rwo",
                    "resources": {"requests": {"storage": "20Gi"}}}}]},
            "status": {"replicas": 1, "readyReplicas": 1, "currentReplicas": 1,
                       "updatedReplicas": 1, "availableReplicas": 1, "currentRevision": rev,
                       "updateRevision": rev, "observedGeneration": 5}})
    rstart = kills[-1] + timedelta(seconds=2)
    sc.add(pod(NS, "session-redis-0", sc.ago(days=5), rtmpl, nodes[4], [
        {"name": "redis", **running(rstart, restarts=2, last=terminated(
            "OOMKilled", 137, kills[0] + timedelta(seconds=2), kills[-1]))}],
        ("StatefulSet", "session-redis"), ip=pod_ip("redis"),
        extra_labels={"statefulset.kubernetes.io/pod-name": "session-redis-0",
                      "controller-revision-hash": rev}))
    sc.add(service(NS, "session-redis", sc.ago(days=420), rlabels, 6379, 6379))
    sc.add({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": meta("ConfigMap", "session-redis-config", NS, sc.ago(days=420)),
            "data": {"redis.conf": "appendonly no\nsave 300 100\ndir /data\n"
                                   "maxmemory-policy noeviction\ntimeout 0\n"}})

    def redis_mem(t: datetime) -> float:
        prior = [k for k in kills if k <= t]
        origin = prior[-1] if prior else sc.ago(hours=3, minutes=45)
        base = 1.95e9 if not prior else 1.68e9
        grow = (t - origin).total_seconds() / 60 * (3.4e6 if not prior else 14e6)
        return min(LIMIT * 0.999, base + grow) if t >= origin + loading or not prior else \
            base * (t - origin).total_seconds() / loading.total_seconds()

    pod_metrics(sc.metrics, NS, "session-redis-0", "redis", times, redis_mem,
                lambda t: 0.18, 1.0, LIMIT, restarts_at=kills, last_reason="OOMKilled",
                every=EVERY)
    lines = []
    for k in kills:
        s = k + timedelta(seconds=2)
        lines += [f"1:C {s:%d %b %Y %H:%M:%S}.114 # oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo",
                  f"1:M {s:%d %b %Y %H:%M:%S}.117 * Server initialized",
                  f"1:M {s:%d %b %Y %H:%M:%S}.118 * Loading RDB produced by version 7.2.4",
                  f"1:M {s + loading:%d %b %Y %H:%M:%S}.402 * Done loading RDB, keys loaded: "
                  "6912044, keys expired: 1181.",
                  f"1:M {s + loading:%d %b %Y %H:%M:%S}.403 * DB loaded from disk: 70.861 "
                  "seconds",
                  f"1:M {s + loading:%d %b %Y %H:%M:%S}.403 * Ready to accept connections tcp"]
    sc.pod_log(NS, "session-redis-0", "redis", lines[6:])
    sc.pod_log(NS, "session-redis-0", "redis", [
        *lines[:6],
        f"1:M {kills[0] + timedelta(minutes=20):%d %b %Y %H:%M:%S}.001 * 100 changes in 300 "
        "seconds. Saving...", f"1:M {kills[0] + timedelta(minutes=20):%d %b %Y %H:%M:%S}.004 "
        "* Background saving started by pid 412"], previous=True)
    sc.add(event(NS, "Pod", "session-redis-0", "Unhealthy", "Readiness probe failed: LOADING "
                 "Redis is loading the dataset in memory", kills[0] + timedelta(seconds=12),
                 kills[-1] + timedelta(seconds=62), count=14, type_="Warning", host=nodes[4],
                 field="spec.containers{redis}"))
    sc.add(event(NS, "Pod", "session-redis-0", "Pulled", "Container image \"redis:7.2.4-alpine\" "
                 "already present on machine", kills[0], kills[-1], count=2, host=nodes[4],
                 field="spec.containers{redis}"))

    # storefront: readiness probe /healthz/ready checks redis and catalog.
    flabels = {"app": "storefront"}
    ftmpl = template(flabels, [container(
        "storefront", "europe-docker.pkg.dev/nw-prod/shop/storefront:2026.04.1",
        resources("500m", "768Mi", "2", "1536Mi"), 8080,
        {"SESSION_REDIS_URL": "redis://session-redis.shop:6379/0",
         "CATALOG_URL": "http://catalog.shop"},
        readinessProbe=http_probe("/healthz/ready", period=5, failure=2, timeout=2),
        livenessProbe=http_probe("/healthz/live", period=10, failure=3, delay=20))])
    fh = rs_hash("front140")
    sc.add(deployment(NS, "storefront", sc.ago(days=600), ftmpl, 6, 140))
    sc.add(replicaset(NS, "storefront", fh, sc.ago(days=1, hours=4), ftmpl, 6, 140))
    fpods = [f"storefront-{fh}-{suffix('sf' + str(i))}" for i in range(6)]
    for i, p in enumerate(fpods):
        at = sc.ago(days=1, hours=4) + timedelta(seconds=20 * i)
        sc.add(pod(NS, p, at, ftmpl, nodes[i], [{"name": "storefront", **running(
            at + timedelta(seconds=15))}], ("ReplicaSet", f"storefront-{fh}"), ip=pod_ip(p),
            extra_labels={"pod-template-hash": fh}))
        sc.add(event(NS, "Pod", p, "Unhealthy",
                     "Readiness probe failed: HTTP probe failed with statuscode: 503",
                     kills[0] + timedelta(seconds=4 + i), kills[-1] + timedelta(seconds=66),
                     count=26 + i, type_="Warning", host=nodes[i],
                     field="spec.containers{storefront}"))

        def down(t: datetime) -> bool:
            return any(k <= t < k + loading + timedelta(seconds=8) for k in kills)

        pod_metrics(sc.metrics, NS, p, "storefront", times,
                    lambda t: 520e6 + rng.uniform(-2e7, 2e7), lambda t: 0.35, 2.0, 1610612736,
                    throttle=lambda t: 0.0, every=EVERY)
        base = {"namespace": NS, "pod": p, "service": "storefront"}
        sc.metrics.counter("http_requests_total", {**base, "code": "200"}, cumulative(
            times, lambda t: 0.0 if down(t) else 55.0, EVERY))
        sc.metrics.counter("http_requests_total", {**base, "code": "500"}, cumulative(
            times, lambda t: 0.02, EVERY))
        for k in kills:
            for s in range(0, 75, 5):
                sc.log(k + timedelta(seconds=s + i * 0.3), "storefront", NS, p, "warn",
                       "readiness: dependency session-redis unhealthy: " + (
                           "dial tcp 10.8.12.40:6379: connect: connection refused" if s < 5
                           else "LOADING Redis is loading the dataset in memory"))
        for m in range(0, 180, 5):
            at = sc.ago(minutes=180 - m)
            sc.log(at, "storefront", NS, p, "info", f"GET /p/{rng.randint(1000, 9999)} 200 "
                   f"{rng.randint(30, 140)}ms", **{"http.response.status_code": 200})
    sc.add(service(NS, "storefront", sc.ago(days=600), flabels))
    sc.add(endpoints(NS, "storefront", sc.ago(days=600),
                     [(p, pod_ip(p)) for p in fpods]))
    sc.add({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": meta("Ingress", "storefront", NS, sc.ago(days=600)),
            "spec": {"ingressClassName": "nginx", "rules": [{"host": "www.northwind.shop",
                     "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": {
                         "service": {"name": "storefront", "port": {"number": 80}}}}]}}]},
            "status": {"loadBalancer": {"ingress": [{"ip": "34.117.62.18"}]}}})
    ing = healthy(sc, "ingress-nginx", "ingress-nginx-controller",
                  "registry.k8s.io/ingress-nginx/controller:v1.10.0", 2, nodes[2:],
                  resources("100m", "90Mi", None, "512Mi"), sc.ago(days=300), revision=19,
                  probe=None, rollout_at=sc.ago(days=4))
    for k in kills:
        for s in range(0, 80, 2):
            at = k + timedelta(seconds=s)
            sc.log(at, "ingress-nginx", "ingress-nginx", ing[s % 2], "warn",
                   f"35.{s % 200}.14.9 - - [{at:%d/%b/%Y:%H:%M:%S} +0000] \"GET / HTTP/2.0\" 503 "
                   "190 \"-\" \"Mozilla/5.0\" 312 0.000 [shop-storefront-80] [] - - - - "
                   f"{suffix(iso(at), 16)}", container="controller",
                   **{"http.response.status_code": 503})
        sc.log(k + timedelta(seconds=6), "ingress-nginx", "ingress-nginx", ing[0], "warn",
               "W0402 service shop/storefront does not have any active Endpoint.",
               container="controller")
    for p in ing:
        base = {"namespace": "ingress-nginx", "pod": p, "ingress": "storefront",
                "exported_namespace": NS, "service": "storefront"}
        sc.metrics.counter("nginx_ingress_controller_requests", {**base, "status": "200"},
                           cumulative(times, lambda t: 0.0 if any(
                               k <= t < k + loading for k in kills) else 165.0, EVERY))
        sc.metrics.counter("nginx_ingress_controller_requests", {**base, "status": "503"},
                           cumulative(times, lambda t: 165.0 if any(
                               k <= t < k + loading for k in kills) else 0.0, EVERY))
    healthy(sc, NS, "catalog", "europe-docker.pkg.dev/nw-prod/shop/catalog:3.3.0", 3, nodes,
            resources("200m", "512Mi", "1", "1Gi"), sc.ago(days=500), revision=71,
            rollout_at=sc.ago(days=3))
    return sc.write({
        "title": "Storefront 503 bursts",
        "report": "www is throwing 503s in bursts, ~1-2 minutes each, twice in the last hour. "
                  "storefront pods don't restart and CPU/memory look fine. is the ingress "
                  "flaky? or is the new storefront 2026.04.1 build broken?\n",
        "truth": {"category": "oom_killed",
                  "culprit": {"kind": "StatefulSet", "namespace": NS, "name": "session-redis"},
                  "evidence": ["OOMKilled", "LOADING Redis is loading the dataset in memory",
                               "Readiness probe failed: HTTP probe failed with statuscode: 503"],
                  "fix": "Give session-redis a maxmemory below its 2Gi limit with an eviction "
                         "policy (or a larger limit); then take the session-store check out of "
                         "storefront's readiness probe so a cache blip cannot empty the "
                         "Service."},
    })
