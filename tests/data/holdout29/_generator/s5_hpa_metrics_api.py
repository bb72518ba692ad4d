"""A busy search API cannot scale: its HPA fails to read CPU from the resource metrics API
(FailedGetResourceMetric) and holds the minimum. The metrics API is down because the
single metrics-server pod is OOMKilled over and over at its 200Mi limit since the cluster
grew. The search pods are pinned at their CPU limit, a tempting but shallower answer.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path

from tests.data.holdout29._generator.common import (
    Scenario,
    cond,
    container,
    cumulative,
    deployment,
    event,
    healthy,
    http_probe,
    iso,
    latency_hist,
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
    steps,
    suffix,
    template,
    terminated,
    waiting,
)

NOW = "2026-03-26T18:30:00Z"
EVERY = 120
METRICS_ERR = ("unable to get metrics for resource cpu: unable to fetch metrics from resource "
               "metrics API: the server is currently unable to handle the request (get "
               "pods.metrics.k8s.io)")


def hpa(sc: Scenario, ns: str, name: str, lo: int, hi: int, broken_since: datetime) -> None:
    sc.add({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": meta("HorizontalPodAutoscaler", name, ns, sc.ago(days=220),
                             api="autoscaling/v2"),
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                        "name": name},
                     "minReplicas": lo, "maxReplicas": hi,
                     "metrics": [{"type": "Resource", "resource": {
                         "name": "cpu", "target": {"type": "Utilization",
                                                   "averageUtilization": 70}}}]},
            "status": {"currentReplicas": lo, "desiredReplicas": lo,
                       "lastScaleTime": iso(sc.ago(hours=9, minutes=12)),
                       "currentMetrics": [{"type": "Resource", "resource": {
                           "name": "cpu", "current": {}}}],
                       "conditions": [
                           cond("AbleToScale", "True", "SucceededGetScale",
                                "the HPA controller was able to get the target's current "
                                "scale", broken_since),
                           cond("ScalingActive", "False", "FailedGetResourceMetric",
                                f"the HPA was unable to compute the replica count: failed to "
                                f"get cpu utilization: {METRICS_ERR}", broken_since),
                           cond("ScalingLimited", "False", "DesiredWithinRange",
                                "the desired count is within the acceptable range",
                                sc.ago(hours=9))]}})
    sc.add(event(ns, "HorizontalPodAutoscaler", name, "FailedGetResourceMetric",
                 f"failed to get cpu utilization: {METRICS_ERR}", sc.ago(minutes=59),
                 sc.ago(seconds=25), count=118, type_="Warning",
                 component="horizontal-pod-autoscaler", api="autoscaling/v2"))
    sc.add(event(ns, "HorizontalPodAutoscaler", name, "FailedComputeMetricsReplicas",
                 "invalid metrics (1 invalid out of 1), first error is: failed to get cpu "
                 f"resource metric value: failed to get cpu utilization: {METRICS_ERR}",
                 sc.ago(minutes=59), sc.ago(seconds=25), count=118, type_="Warning",
                 component="horizontal-pod-autoscaler", api="autoscaling/v2"))


def build() -> Path:
    sc = Scenario("search-latency-evening-peak", NOW)
    rng = random.Random(29005)
    nodes = [f"aks-general-3818{i}-vmss00000{c}" for i, c in enumerate("0123456789ab")]
    for i, name in enumerate(nodes):
        sc.add(node(name, sc.ago(days=5 + i % 4), "general", "8", "32863804Ki",
                    sc.ago(seconds=6), zone=f"westeurope-{i % 3 + 1}",
                    instance="Standard_D8s_v5"))
    for ns in ("kube-system", "search", "shop"):
        sc.add(namespace(ns, sc.ago(days=600)))
    times = steps(sc.ago(hours=4), sc.now, EVERY)
    broken = sc.ago(hours=2, minutes=50)

    # metrics-server: one replica, OOMKilled at 200Mi, in CrashLoopBackOff.
    mlabels = {"k8s-app": "metrics-server"}
    mtmpl = template(mlabels, [container(
        "metrics-server", "mcr.microsoft.com/oss/kubernetes/metrics-server:v0.6.3",
        resources("44m", "55Mi", "1", "200Mi"), 4443,
        args=["--kubelet-insecure-tls", "--kubelet-preferred-address-types=InternalIP",
              "--cert-dir=/tmp", "--secure-port=4443", "--metric-resolution=15s"],
        readinessProbe=http_probe("/readyz", "https", period=10, failure=3, delay=20),
        livenessProbe=http_probe("/livez", "https", period=10, failure=3))],
        priorityClassName="system-cluster-critical", serviceAccountName="metrics-server")
    mh = rs_hash("metrics-server2")
    mpod = f"metrics-server-{mh}-{suffix('ms')}"
    sc.add(deployment("kube-system", "metrics-server", sc.ago(days=600), mtmpl, 1, 7, status={
        "observedGeneration": 9, "replicas": 1, "updatedReplicas": 1, "unavailableReplicas": 1,
        "conditions": [cond("Progressing", "True", "NewReplicaSetAvailable",
                            f'ReplicaSet "metrics-server-{mh}" has successfully progressed.',
                            sc.ago(days=30)),
                       cond("Available", "False", "MinimumReplicasUnavailable",
                            "Deployment does not have minimum availability.", broken)]}))
    sc.add(replicaset("kube-system", "metrics-server", mh, sc.ago(days=30), mtmpl, 1, 7,
                      ready=0))
    kills = [broken + timedelta(minutes=m) for m in (0, 4, 9, 16, 27, 44, 66, 93, 121, 149,
                                                     167)]
    kills = [k for k in kills if k < sc.now]
    last_start = sc.ago(minutes=1, seconds=50)
    sc.add(pod("kube-system", mpod, sc.ago(days=3, hours=4), mtmpl, nodes[2], [
        {"name": "metrics-server", **waiting(
            "CrashLoopBackOff", "back-off 5m0s restarting failed container=metrics-server "
            f"pod={mpod}_kube-system({mpod[-5:]})", restarts=len(kills),
            last=terminated("OOMKilled", 137, kills[-1] - timedelta(minutes=1, seconds=40),
                            kills[-1]))}],
        ("ReplicaSet", f"metrics-server-{mh}"), ip=pod_ip(mpod),
        extra_labels={"pod-template-hash": mh}))
    sc.add(event("kube-system", "Pod", mpod, "BackOff", "Back-off restarting failed container "
                 f"metrics-server in pod {mpod}_kube-system({mpod[-5:]})", sc.ago(minutes=58),
                 sc.ago(minutes=1), count=41, type_="Warning", host=nodes[2],
                 field="spec.containers{metrics-server}"))
    sc.add(event("kube-system", "Pod", mpod, "Unhealthy",
                 f"Readiness probe failed: Get \"https://{pod_ip(mpod)}:4443/readyz\": dial tcp "
                 f"{pod_ip(mpod)}:4443: connect: connection refused", sc.ago(minutes=55),
                 sc.ago(minutes=4), count=22, type_="Warning", host=nodes[2],
                 field="spec.containers{metrics-server}"))
    sc.add(event("kube-system", "Pod", mpod, "Pulled", "Container image \"mcr.microsoft.com/oss/"
                 "kubernetes/metrics-server:v0.6.3\" already present on machine",
                 sc.ago(minutes=57), sc.ago(minutes=4), count=9, host=nodes[2],
                 field="spec.containers{metrics-server}"))

    def ms_memory(t: datetime) -> float:
        prior = [k for k in kills if k <= t]
        if not prior and t < broken - timedelta(minutes=20):
            return 150e6 + 0.18e6 * (t - times[0]).total_seconds() / 60
        since = (t - prior[-1]).total_seconds() if prior else 600
        return min(209e6, 60e6 + since * 1.6e6)

    pod_metrics(sc.metrics, "kube-system", mpod, "metrics-server", times, ms_memory,
                lambda t: 0.09, 1.0, 209715200, restarts_at=kills, last_reason="OOMKilled",
                every=EVERY)
    prev_start = kills[-1] - timedelta(minutes=1, seconds=40)
    sc.pod_log("kube-system", mpod, "metrics-server", [
        f"I{prev_start:%m%d %H:%M:%S}.112341       1 serving.go:342] Generated self-signed "
        "cert (/tmp/apiserver.crt, /tmp/apiserver.key)",
        f"I{prev_start:%m%d %H:%M:%S}.901877       1 secure_serving.go:267] Serving securely on "
        "[::]:4443",
        f"I{prev_start + timedelta(seconds=16):%m%d %H:%M:%S}.220114       1 server.go:187] "
        "\"Scraping metrics\" nodes=12 pods=1904",
        f"W{prev_start + timedelta(seconds=61):%m%d %H:%M:%S}.004120       1 scraper.go:140] "
        "\"Slow scrape\" node=\"aks-general-38185-vmss000005\" duration=\"11.2s\""],
        previous=True)
    sc.pod_log("kube-system", mpod, "metrics-server", [
        f"I{last_start:%m%d %H:%M:%S}.031522       1 serving.go:342] Generated self-signed cert "
        "(/tmp/apiserver.crt, /tmp/apiserver.key)"])

    # search-api: HPA 3..24, pinned at 3, CPU at its 1-core limit, latency climbing.
    hpa(sc, "search", "search-api", 3, 24, broken)
    stmpl = template({"app": "search-api"}, [container(
        "search-api", "registry.corp/search/search-api:9.3.2",
        resources("800m", "1Gi", "1", "2Gi"), 8080, readinessProbe=http_probe("/ready"))])
    sh = rs_hash("search-api88")
    sc.add(deployment("search", "search-api", sc.ago(days=400), stmpl, 3, 88))
    sc.add(replicaset("search", "search-api", sh, sc.ago(days=2, hours=5), stmpl, 3, 88))
    spods = [f"search-api-{sh}-{suffix('sa' + str(i))}" for i in range(3)]

    def load(t: datetime) -> float:
        x = (t - sc.ago(hours=2, minutes=30)).total_seconds() / 7200
        return 1.0 + 2.2 * min(1.0, max(0.0, x)) + rng.uniform(-0.05, 0.05)

    for i, p in enumerate(spods):
        started = sc.ago(days=2, hours=5) + timedelta(seconds=30 * i)
        sc.add(pod("search", p, started, stmpl, nodes[i * 3], [
            {"name": "search-api", **running(started + timedelta(seconds=25))}],
            ("ReplicaSet", f"search-api-{sh}"), ip=pod_ip(p),
            extra_labels={"pod-template-hash": sh}))
        pod_metrics(sc.metrics, "search", p, "search-api", times,
                    lambda t: 1.1e9 + rng.uniform(-3e7, 3e7),
                    lambda t: min(0.99, 0.31 * load(t)), 1.0, 2147483648,
                    throttle=lambda t: min(0.7, max(0.02, 0.45 * (load(t) - 1.9))),
                    every=EVERY)
        base = {"namespace": "search", "pod": p, "service": "search-api"}
        sc.metrics.counter("http_requests_total", {**base, "code": "200"},
                           cumulative(times, lambda t: 40 * load(t), EVERY))
        sc.metrics.counter("http_requests_total", {**base, "code": "504"},
                           cumulative(times, lambda t: 40 * load(t) * max(
                               0.0005, 0.02 * (load(t) - 2.4)), EVERY))
        latency_hist(sc.metrics, "http_request_duration_seconds", base, times,
                     lambda t: 40 * load(t) / 10,
                     lambda t: 0.09 * (1 + max(0.0, load(t) - 1.9) ** 2 * 3), rng, EVERY,
                     bounds=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5))
        for k in range(0, 240, 4):
            at = sc.ago(minutes=240 - k)
            ms = int(90 * (1 + max(0.0, load(at) - 1.9) ** 2 * 3) * rng.uniform(0.8, 2.2))
            level = "warn" if ms > 600 else "info"
            sc.log(at, "search-api", "search", p, level,
                   f"GET /v3/search?q=... 200 {ms}ms" + (" (slow)" if ms > 600 else ""),
                   **{"http.response.status_code": 200})
    sc.log(sc.ago(minutes=12), "search-api", "search", spods[1], "error",
           "request timed out after 5000ms: upstream index shard 4 (context deadline exceeded)")
    # Other HPAs of the cluster read the same broken API; shop is quiet, so nobody noticed.
    hpa(sc, "shop", "checkout", 2, 10, broken)
    healthy(sc, "shop", "checkout", "registry.corp/shop/checkout:4.8.0", 2, nodes[4:],
            resources("300m", "512Mi", "1", "1Gi"), sc.ago(days=300), revision=61,
            rollout_at=sc.ago(days=1, hours=2))
    healthy(sc, "search", "indexer", "registry.corp/search/indexer:9.3.0", 2, nodes[6:],
            resources("500m", "2Gi", "2", "3Gi"), sc.ago(days=400), revision=40,
            rollout_at=sc.ago(days=5))
    return sc.write({
        "title": "Search latency climbing at the evening peak",
        "report": "search is getting slower and slower since ~17:00, p99 over 2s now. the "
                  "evening campaign traffic is bigger than usual but we have an HPA up to 24 "
                  "pods... it's still sitting at 3. do we need to raise the CPU limit?\n",
        "truth": {"category": "oom_killed",
                  "culprit": {"kind": "Deployment", "namespace": "kube-system",
                              "name": "metrics-server"},
                  "evidence": ["FailedGetResourceMetric", "OOMKilled",
                               "the server is currently unable to handle the request"],
                  "fix": "Raise metrics-server's 200Mi memory limit (it scrapes 12 nodes and "
                         "~1900 pods now) and run two replicas; with the resource metrics API "
                         "back the HPA scales search-api out of its minimum of 3."},
    })
