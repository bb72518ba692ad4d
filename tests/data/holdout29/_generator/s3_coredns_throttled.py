"""Intermittent DNS timeouts across many services: an add-on configuration update rolled
CoreDNS with a 100m CPU limit (it had none). Quiet at night, the limit throttles CoreDNS as
the morning traffic builds; lookups queue, clients time out, and every app logs
`i/o timeout` towards a different host. CoreDNS's own log blames its upstream.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path

from tests.data.holdout29._generator.common import (
    Obj,
    Scenario,
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
    service,
    steps,
    suffix,
    template,
)

NOW = "2026-03-19T09:40:00Z"
EVERY = 120
DNS_IP = "172.20.0.10"
UPSTREAM = "10.2.0.2"


def coredns_template(cpu_limit: str | None) -> Obj:
    c = container("coredns", "602401143452.dkr.ecr.eu-west-1.amazonaws.com/eks/coredns:"
                  "v1.11.1-eksbuild.4", resources("100m", "70Mi", cpu_limit, "170Mi"), None,
                  args=["-conf", "/etc/coredns/Corefile"],
                  ports=[{"name": "dns", "containerPort": 53, "protocol": "UDP"},
                         {"name": "dns-tcp", "containerPort": 53, "protocol": "TCP"},
                         {"name": "metrics", "containerPort": 9153, "protocol": "TCP"}],
                  livenessProbe=http_probe("/health", 8080, period=10, failure=5, delay=60,
                                           timeout=5),
                  readinessProbe=http_probe("/ready", 8181, period=10, failure=3, delay=0),
                  volumeMounts=[{"name": "config-volume", "mountPath": "/etc/coredns",
                                 "readOnly": True}])
    return template({"k8s-app": "kube-dns", "eks.amazonaws.com/component": "coredns"}, [c],
                    priorityClassName="system-cluster-critical", serviceAccountName="coredns",
                    dnsPolicy="Default",
                    volumes=[{"name": "config-volume", "configMap": {
                        "name": "coredns", "items": [{"key": "Corefile",
                                                      "path": "Corefile"}]}}])


def build() -> Path:
    sc = Scenario("random-timeouts-everywhere", NOW)
    rng = random.Random(29003)
    old = sc.ago(days=400)
    nodes = [f"ip-10-2-{a}.eu-west-1.compute.internal"
             for a in ("17-4", "18-90", "19-201", "17-133", "18-12", "19-66")]
    for i, name in enumerate(nodes):
        sc.add(node(name, sc.ago(days=12 + i), "general", "8", "32408920Ki", sc.ago(seconds=7),
                    zone=f"eu-west-1{'abc'[i % 3]}", instance="m6i.2xlarge"))
    for ns in ("kube-system", "shop", "search", "comms"):
        sc.add(namespace(ns, old))

    rolled = sc.ago(hours=2, minutes=35)
    start = sc.ago(hours=4)
    times = steps(start, sc.now, EVERY)

    def load(t: datetime) -> float:
        """Traffic, 0.3 at night to 1.0 at the morning peak."""
        morning = (t - sc.ago(hours=2, minutes=20)).total_seconds() / 5400
        return 0.3 + 0.7 * min(1.0, max(0.0, morning)) + rng.uniform(-0.03, 0.03)

    # CoreDNS: revision 5 (no CPU limit) replaced by revision 6 (limit 100m).
    old_t, new_t = coredns_template(None), coredns_template("100m")
    h5, h6 = rs_hash("coredns5x"), rs_hash("coredns6")
    dep = deployment("kube-system", "coredns", sc.ago(days=400), new_t, 2, 6)
    dep["metadata"]["labels"] = {"k8s-app": "kube-dns", "eks.amazonaws.com/component": "coredns"}
    dep["metadata"]["annotations"]["kubernetes.io/change-cause"] = (
        "eks addon update coredns v1.11.1-eksbuild.4 (configuration values)")
    dep["spec"]["strategy"] = {"type": "RollingUpdate",
                               "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}}
    sc.add(dep)
    sc.add(replicaset("kube-system", "coredns", h5, sc.ago(days=41), old_t, 0, 5))
    sc.add(replicaset("kube-system", "coredns", h6, rolled, new_t, 2, 6))
    sc.add({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": meta("ConfigMap", "coredns", "kube-system", old,
                             {"eks.amazonaws.com/component": "coredns"}),
            "data": {"Corefile": ".:53 {\n    errors\n    health {\n        lameduck 5s\n    }\n"
                                 "    ready\n    kubernetes cluster.local in-addr.arpa ip6.arpa {\n"
                                 "      pods insecure\n      fallthrough in-addr.arpa ip6.arpa\n"
                                 "    }\n    prometheus :9153\n    forward . /etc/resolv.conf\n"
                                 "    cache 30\n    loop\n    reload\n    loadbalance\n}\n"}})
    sc.add(service("kube-system", "kube-dns", old, {"k8s-app": "kube-dns"}, 53, 53,
                   cluster_ip=DNS_IP))
    new_pods = [f"coredns-{h6}-{suffix('cd' + str(i))}" for i in range(2)]
    old_pods = [f"coredns-{h5}-{suffix('co' + str(i))}" for i in range(2)]
    for i, pname in enumerate(new_pods):
        created = rolled + timedelta(seconds=40 * i)
        sc.add(pod("kube-system", pname, created, new_t, nodes[i * 3],
                   [{"name": "coredns", **running(created + timedelta(seconds=4))}],
                   ("ReplicaSet", f"coredns-{h6}"), ip=pod_ip(pname),
                   extra_labels={"pod-template-hash": h6}))
    for pname, cut in (zip(old_pods, (rolled + timedelta(seconds=20),
                                                    rolled + timedelta(seconds=60)),
                                         strict=True)):
        window = [t for t in times if t <= cut]
        pod_metrics(sc.metrics, "kube-system", pname, "coredns", window,
                    lambda t: 31e6 + rng.uniform(-1e6, 1e6),
                    lambda t: 0.16 * load(t) + 0.004, None, 178257920, every=EVERY)
    for i, pname in enumerate(new_pods):
        window = [t for t in times if t > rolled + timedelta(seconds=40 * i)]
        pod_metrics(sc.metrics, "kube-system", pname, "coredns", window,
                    lambda t: 34e6 + rng.uniform(-1e6, 1.5e6),
                    lambda t: min(0.1, 0.16 * load(t) + 0.004) - rng.uniform(0, 0.004),
                    0.1, 178257920,
                    throttle=lambda t: min(0.93, max(0.0, 1.15 * load(t) - 0.2)), every=EVERY)

    def dns_median(t: datetime) -> float:
        if t < rolled:
            return 0.0009
        return 0.0012 + 0.35 * max(0.0, load(t) - 0.45) ** 2

    for pname, window in [(p, [t for t in times if t <= rolled + timedelta(seconds=60)])
                          for p in old_pods] + [(p, [t for t in times if t > rolled +
                                                     timedelta(seconds=40)])
                                                for p in new_pods]:
        labels = {"namespace": "kube-system", "pod": pname, "server": "dns://:53", "zone": "."}
        sc.metrics.counter("coredns_dns_requests_total", {**labels, "type": "A", "proto": "udp"},
                           cumulative(window, lambda t: 900 * load(t), EVERY))
        latency_hist(sc.metrics, "coredns_dns_request_duration_seconds",
                     {**labels, "type": "A"}, window, lambda t: 900 * load(t) / 20, dns_median,
                     rng, EVERY, bounds=(0.0005, 0.001, 0.002, 0.004, 0.016, 0.064, 0.256,
                                         1.024, 4.096))

    # Applications that resolve names on every new connection.
    apps = {("shop", "checkout"): (4, 40.0, ["orders-db.shop.svc.cluster.local",
                                             "payments-gateway.shop.svc.cluster.local",
                                             "api.adyen.com"]),
            ("search", "search-api"): (3, 110.0, ["opensearch-master.search.svc.cluster.local",
                                                  "query-cache.search.svc.cluster.local"]),
            ("comms", "notifications"): (2, 12.0, ["email-smtp.eu-west-1.amazonaws.com",
                                                   "push-relay.comms.svc.cluster.local",
                                                   "sqs.eu-west-1.amazonaws.com"])}
    for (ns, name), (count, rate, hosts) in apps.items():
        pods = healthy(sc, ns, name, f"registry.corp/{ns}/{name}:{3 + count}.{count * 7}.1",
                       count, nodes, resources("250m", "512Mi", "1", "1Gi"),
                       sc.ago(days=200), revision=20 + count, rollout_at=sc.ago(days=3, hours=
                                                                                count))

        def err(t: datetime) -> float:
            return 0.001 if t < rolled else 0.002 + 0.11 * max(0.0, load(t) - 0.55)

        for p in pods:
            pod_metrics(sc.metrics, ns, p, name, times,
                        lambda t: 410e6 + rng.uniform(-8e6, 8e6),
                        lambda t, r=rate, n=count: 0.004 * r * load(t) / n, 1.0, 1073741824,
                        throttle=lambda t: rng.uniform(0.0, 0.02), every=EVERY)
            base = {"namespace": ns, "pod": p, "service": name}
            per_pod = rate / count
            sc.metrics.counter("http_requests_total", {**base, "code": "200"}, cumulative(
                times, lambda t, r=per_pod: r * load(t) * (1 - err(t)), EVERY))
            sc.metrics.counter("http_requests_total", {**base, "code": "504"}, cumulative(
                times, lambda t, r=per_pod: r * load(t) * err(t) * 0.7, EVERY))
            sc.metrics.counter("http_requests_total", {**base, "code": "500"}, cumulative(
                times, lambda t, r=per_pod: r * load(t) * err(t) * 0.3, EVERY))
            if name != "notifications":
                latency_hist(sc.metrics, "http_request_duration_seconds", base, times,
                             lambda t, r=per_pod: r * load(t) / 4,
                             lambda t: 0.06 if t < rolled else 0.06 + 1.2 * err(t), rng,
                             EVERY, bounds=(0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5))
        for i in range(0, 240, 1):
            at = sc.ago(minutes=240 - i) + timedelta(seconds=rng.randint(0, 59))
            p = pods[i % count]
            if rng.random() < err(at) * 9 * (rate / 40) ** 0.5:
                host = hosts[rng.randrange(len(hosts))]
                port = 5432 if "db" in host else 443 if "." in host[-5:] else 6379
                msg = rng.choice([
                    f"dial tcp: lookup {host} on {DNS_IP}:53: read udp {pod_ip(p)}:"
                    f"{rng.randint(30000, 60999)}->{DNS_IP}:53: i/o timeout",
                    f"upstream {host}:{port} request failed: context deadline exceeded "
                    f"(lookup {host}: i/o timeout)",
                    f"retrying connection to {host}:{port} (attempt 2/3): dial tcp: lookup "
                    f"{host}: i/o timeout"])
                sc.log(at, name, ns, p, "error", msg, **{"error.type": "net.OpError"})
            elif i % 4 == 0:
                sc.log(at, name, ns, p, "info", f"GET /v2/{name}/health-summary 200 "
                       f"{rng.randint(8, 40)}ms", **{"http.response.status_code": 200})
    catalog = healthy(sc, "shop", "catalog", "registry.corp/shop/catalog:8.2.0", 2, nodes,
            resources("200m", "384Mi", "1", "768Mi"), sc.ago(days=150), revision=57,
            rollout_at=sc.ago(days=1, hours=3))

    # CoreDNS's own log: upstream timeouts (a decoy) and slow health checks.
    for pname in new_pods:
        lines = [f"{iso(rolled)} .:53", f"{iso(rolled)} [INFO] plugin/reload: Running "
                 "configuration SHA512 = 8a3f1b55e5ad67b6d4e5ec2bd1b6e6c0b1f2",
                 f"{iso(rolled)} CoreDNS-1.11.1", f"{iso(rolled)} linux/amd64, go1.21.5"]
        for i in range(150):
            at = rolled + timedelta(minutes=i)
            if at > sc.now:
                break
            if load(at) > 0.6 and i % 3 == 0:
                lines.append(f"{iso(at)} [WARNING] plugin/health: Local health request to "
                             f"\"http://:8080/health\" took more than 1s: "
                             f"{1 + load(at) * rng.uniform(0.2, 1.4):.3f}s")
            if load(at) > 0.7 and i % 2 == 0:
                q = rng.choice(["api.adyen.com", "email-smtp.eu-west-1.amazonaws.com",
                                "sqs.eu-west-1.amazonaws.com"])
                lines.append(f"{iso(at)} [ERROR] plugin/errors: 2 {q}. A: read udp "
                             f"{pod_ip(pname)}:{rng.randint(30000, 60999)}->{UPSTREAM}:53: "
                             "i/o timeout")
        sc.pod_log("kube-system", pname, "coredns", lines)
        sc.add(event("kube-system", "Pod", pname, "Unhealthy",
                     f"Readiness probe failed: Get \"http://{pod_ip(pname)}:8181/ready\": "
                     "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
                     sc.ago(minutes=48), sc.ago(minutes=6), count=7, type_="Warning",
                     host=nodes[0], field="spec.containers{coredns}"))
    # An unrelated warning: a node's image pull was slow.
    sc.add(event("shop", "Pod", catalog[1], "FailedMount",
                 "MountVolume.SetUp failed for volume \"kube-api-access-7qk2x\" : object "
                 "\"shop\"/\"kube-root-ca.crt\" not registered", sc.ago(minutes=33),
                 type_="Warning", host=nodes[1]))
    sc.add({"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": meta("DaemonSet", "kube-proxy", "kube-system", old,
                             {"k8s-app": "kube-proxy"}),
            "spec": {"selector": {"matchLabels": {"k8s-app": "kube-proxy"}},
                     "template": template({"k8s-app": "kube-proxy"}, [container(
                         "kube-proxy", "602401143452.dkr.ecr.eu-west-1.amazonaws.com/eks/"
                         "kube-proxy:v1.29.0-minimal-eksbuild.1",
                         resources("100m", "64Mi"), None)], hostNetwork=True)},
            "status": {"currentNumberScheduled": 6, "desiredNumberScheduled": 6,
                       "numberAvailable": 6, "numberReady": 6, "updatedNumberScheduled": 6,
                       "numberMisscheduled": 0, "observedGeneration": 4}})

    return sc.write({
        "title": "Random timeouts across many services since the morning",
        "report": "since ~8am we get random timeouts all over the place: checkout, search-api "
                  "and notifications all log i/o timeouts, each to different hosts (db, "
                  "opensearch, adyen, SES). it's not one service. is AWS having network "
                  "trouble in eu-west-1? or is it the CNI again?\n",
        "truth": {"category": "cpu_throttling",
                  "culprit": {"kind": "Deployment", "namespace": "kube-system",
                              "name": "coredns"},
                  "evidence": ["i/o timeout", "100m",
                               "container_cpu_cfs_throttled_periods_total",
                               "took more than 1s"],
                  "fix": "Remove CoreDNS's 100m CPU limit (or raise it well above the peak "
                         "use, ~0.2 cores a pod) and add replicas; the add-on update of "
                         f"{iso(rolled)} added the limit that throttles it at peak traffic."},
    })
