"""Concert hall box office: the seat map of the spring season's on-sale (19:02) takes five
seconds and more to load, some loads end in 504. The platform team installed NodeLocal
DNSCache three weeks ago with a Helm chart whose values cap the `node-cache` container at
`cpu: 50m`. At the on-sale the DNS query rate of every pod on the nodes rises about eight-
fold: the node-local-dns pods hit their CPU quota, the CFS throttles them in most periods,
and lookups through 169.254.20.10 queue and time out. Every caller on the nodes suffers
(seat-map most, checkout a little); the backends and CoreDNS stay fast and idle. The
culprit is the DaemonSet kube-system/node-local-dns (cpu_throttling).

Red herrings: seat-map 7.3.0 rolled out 48 minutes before the on-sale (healthy until the
traffic came), an analytics collector's 429s logged at ERROR by seat-map all afternoon,
checkout's old OOMKilled restart two days ago and a few payment provider time-outs, a
readiness blip of the sales dashboard in another namespace."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import (
    PCtr,
    daemonset,
    eks_nodes,
    host_network,
    set_times,
)
from tests.data.holdout2._generator.kit import cpu_seconds, deploy, requests
from tests.data.holdout3._generator.kit3 import chatter, ghosts, log_pod, namespaces, quiet, steady
from tests.scenario_tools.common import MIB, container_metrics, truth
from tests.scenario_tools.kube import Ctr, http_probe
from tests.scenario_tools.parts import readiness_blip
from tests.scenario_tools.telemetry import histogram_points, integrate

from .kit import Incident, ramp

ID = "seat-maps-stalling"
NOW = datetime.fromisoformat("2028-03-09T19:42:00+00:00")
NS = "boxoffice"
ECR = "418277390114.dkr.ecr.eu-central-1.amazonaws.com"
LOCAL = "169.254.20.10"
KUBE_DNS = "172.20.0.10"


def build() -> Incident:
    s = Incident(
        id=ID, title="Seat maps stalling during the on-sale", now=NOW,
        report="""\
The seat map on the box office site is crawling since the spring season on-sale opened at
7pm. Customers wait 5-10 seconds for the hall plan, some get a "something went wrong"
page. Checkout seems mostly ok. We rolled seat-map 7.3.0 this afternoon, is that it?
""",
        truth=truth(
            "cpu_throttling", "DaemonSet", "kube-system", "node-local-dns",
            ["container_cpu_cfs_throttled_periods_total", "cpu: 50m",
             f"{LOCAL}:53: i/o timeout", "node-cache"],
            "The node-local-dns DaemonSet's node-cache container is limited to 50m CPU; "
            "with the on-sale traffic the DNS query rate rose eightfold and the cache is "
            "throttled in most CFS periods, so lookups through 169.254.20.10 queue and time "
            "out for every pod on the nodes. Raise or remove its CPU limit (keep the "
            "request) in the Helm values; seat-map 7.3.0 is not at fault."))
    set_times(s, 2.5, 60)
    namespaces(s, {"default": 420, "kube-system": 420, NS: 388, "reporting": 201})
    nodes = eks_nodes(s, 3, region="eu-central-1", subnet=31, pool="apps-m7i",
                      instance="m7i.2xlarge", kubelet="v1.32.3-eks-473151a",
                      kernel="6.1.130-139.222.amzn2023.x86_64",
                      os_image="Amazon Linux 2023.7.20250414", cpu="8", memory="32329876Ki",
                      alloc_cpu="7910m", alloc_memory="31312020Ki", pods="58", days=5.2)
    onsale = NOW - timedelta(minutes=40)
    load = ramp(onsale, 5)

    def mult(t: int) -> float:  # traffic multiplier of the on-sale
        return 1.0 + 7.0 * load(t)

    # ---- kube-system: CoreDNS (idle, healthy) and the node-local DNS cache
    cdns = Ctr("coredns", "602401143452.dkr.ecr.eu-central-1.amazonaws.com/eks/coredns:"
               "v1.11.4-eksbuild.10", port=53, port_name="dns",
               requests={"cpu": "100m", "memory": "70Mi"}, limits={"memory": "170Mi"},
               readiness=http_probe("/ready", 8181), liveness=http_probe(
                   "/health", 8080, delay=60, timeout=5, failures=5),
               args=["-conf", "/etc/coredns/Corefile"])
    _, dns_pods = steady(s, "kube-system", "coredns", [cdns], nodes=nodes, replicas=2,
                         revision=4, rollout=s.ago(days=5, hours=1), service=None,
                         labels={"k8s-app": "kube-dns", "eks.amazonaws.com/component":
                                 "coredns"})
    for pod in dns_pods:
        container_metrics(s, pod, "coredns", memory=lambda t: 31 * MIB,
                          cpu=lambda t: 0.006 + 0.004 * load(t))
    cache = PCtr("node-cache", "registry.k8s.io/dns/k8s-dns-node-cache:1.24.0", port=None,
                 ports=[("dns", 53, "UDP"), ("dns-tcp", 53, "TCP"), ("metrics", 9253, "TCP")],
                 requests={"cpu": "25m", "memory": "16Mi"},
                 limits={"cpu": "50m", "memory": "64Mi"},
                 liveness=http_probe("/health", 8080, delay=60, timeout=5, failures=5),
                 args=["-localip", f"{LOCAL},{KUBE_DNS}", "-conf", "/etc/Corefile",
                       "-upstreamsvc", "kube-dns-upstream", "-skipteardown=true",
                       "-setupinterface=false", "-setupiptables=true"],
                 mounts=[{"mountPath": "/run/xtables.lock", "name": "xtables-lock"},
                         {"mountPath": "/etc/coredns", "name": "config-volume"}])
    _, caches = daemonset(s, "kube-system", "node-local-dns", [cache], node_list=nodes,
                           generation=3, since=s.ago(days=23, hours=4),
                           labels={"k8s-app": "node-local-dns",
                                   "app.kubernetes.io/managed-by": "Helm",
                                   "helm.sh/chart": "node-local-dns-2.1.4"},
                           volumes=[{"name": "xtables-lock", "hostPath": {
                               "path": "/run/xtables.lock", "type": "FileOrCreate"}},
                               {"name": "config-volume", "configMap": {
                                   "name": "node-local-dns", "items": [{
                                       "key": "Corefile", "path": "Corefile.base"}]}}],
                           annotations={"prometheus.io/scrape": "true",
                                        "prometheus.io/port": "9253"})
    host_network(caches)
    for pod in caches:
        pod["spec"]["priorityClassName"] = "system-node-critical"

    def demand(t: int) -> float:
        return 0.0135 * mult(t)

    def throttled(t: int) -> float:
        return min(0.93, 0.015 + max(0.0, demand(t) - 0.032) / 0.085)

    dns_buckets = (0.00025, 0.001, 0.004, 0.016, 0.064, 0.256, 1.024, 2.048)
    lat_fam = s.metrics.family("coredns_dns_request_duration_seconds", "histogram",
                               "Histogram of the time (in seconds) each request took per zone.",
                               buckets=dns_buckets)
    for pod in caches:
        container_metrics(s, pod, "node-cache", memory=lambda t: (19 + 6 * load(t)) * MIB,
                          cpu=lambda t: min(0.0494, demand(t)), limit_memory=64 * MIB,
                          limit_cpu=0.05, throttle=throttled)
        labels = {"namespace": "kube-system", "pod": pod["metadata"]["name"],
                  "server": f"dns://{LOCAL}:53", "zone": "."}
        times = list(s.times)
        s.metrics.counter("coredns_dns_requests_total", {**labels, "proto": "udp",
                                                         "type": "A"},
                          integrate(times, lambda t: 210 * mult(t), start=s.rng.randrange(
                              10**7, 4 * 10**7), rng=s.rng),
                          "Counter of DNS requests made per zone, protocol and family.")
        lat_fam.add(labels, histogram_points(
            times, dns_buckets, lambda t: 210 * mult(t),
            lambda t: 0.0004 + 0.21 * load(t), s.rng))
    for pod in caches:
        ip = pod["status"]["podIP"]
        chatter(s, [pod], "node-cache", "node-local-dns", [
            ("error", f"[ERROR] plugin/errors: 2 seat-inventory.{NS}.svc.cluster.local. A: "
             f"read udp {ip}:{40000 + s.rng.randrange(9999)}->{KUBE_DNS}:53: i/o timeout", {}),
            ("error", f"[ERROR] plugin/errors: 2 pricing-rules.{NS}.svc.cluster.local. AAAA: "
             f"read udp {ip}:{40000 + s.rng.randrange(9999)}->{KUBE_DNS}:53: i/o timeout", {}),
            ("error", "[ERROR] plugin/errors: 2 api.paylane.example. A: read udp "
             f"{ip}:{40000 + s.rng.randrange(9999)}->{KUBE_DNS}:53: i/o timeout", {}),
        ], 30, start=onsale + timedelta(minutes=3))

    # ---- seat-map: rolled to 7.3.0 at 18:14, healthy until the traffic came
    roll = onsale - timedelta(minutes=48)
    sm = Ctr("seat-map", f"{ECR}/boxoffice/seat-map:7.3.0", port=8080,
             requests={"cpu": "500m", "memory": "512Mi"}, limits={"memory": "768Mi"},
             env={"SEAT_INVENTORY_URL": f"http://seat-inventory.{NS}.svc.cluster.local:8080",
                  "PRICING_URL": f"http://pricing-rules.{NS}.svc.cluster.local:8080",
                  "UPSTREAM_BUDGET": "8s", "ANALYTICS_URL": "https://collect.hallmetrics.example"},
             readiness=http_probe("/ready"), liveness=http_probe("/live", delay=20, period=15))
    work, maps = deploy(s, NS, "seat-map", [sm], replicas=6, nodes=nodes, revision=57,
                        rollout=roll, born=lambda i: roll + timedelta(seconds=3 + 41 * i),
                        old=(56, s.ago(days=6, hours=2), [Ctr(
                            "seat-map", f"{ECR}/boxoffice/seat-map:7.2.4")]))
    old_rs = work.revisions[0]
    gone = ghosts(s, old_rs, nodes, [s.ago(days=6, hours=2) + timedelta(seconds=30 * i)
                                     for i in range(6)],
                  [roll + timedelta(seconds=50 + 41 * i) for i in range(6)])
    buckets = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

    def sm_lat(t: int) -> float:
        return 0.11 + 2.6 * load(t)
    for pod in maps + gone:
        requests(s, pod, "seat-map", rps=lambda t: 7.0 * mult(t), codes={
            "200": lambda t: 0.994 - 0.07 * load(t), "504": lambda t: 0.001 + 0.07 * load(t),
            "404": lambda t: 0.005}, median=sm_lat, buckets=buckets)
        if pod in maps:
            quiet(s, [pod], "seat-map", 402)
        cpu_seconds(s, pod, "seat-map", lambda t: 0.16 * (1 + 2.2 * load(t)))
    normal = [
        ("info", "GET /api/v3/events/88412/seatmap 200 in 96ms", {"http.response.status_code":
                                                                  200}),
        ("info", "GET /api/v3/events/88377/seatmap 200 in 121ms", {"http.response.status_code":
                                                                   200}),
        ("error", "analytics beacon rejected by collector: 429 Too Many Requests (dropped 50 "
         "events)", {"error.type": "AnalyticsRejected"}),
    ]
    for ghost in gone:
        log_pod(s, ghost, "seat-map", "seat-map", normal, 14)
    chatter(s, maps, "seat-map", "seat-map", [
        *normal, ("warn", "feature flag seatmap.heatmap_v2 unknown, defaulting to off", {}),
    ], 70, end=onsale)
    for pod in maps:
        ip = pod["status"]["podIP"]

        def lookup(host: str, ip: str = ip) -> str:
            port = 30000 + s.rng.randrange(30000)
            return (f"lookup {host} on {LOCAL}:53: read udp {ip}:{port}->{LOCAL}:53: "
                    "i/o timeout")
        chatter(s, [pod], "seat-map", "seat-map", [
            ("warn", "seat-inventory call failed: Get \"http://seat-inventory.boxoffice.svc."
             "cluster.local:8080/v2/blocks?event=90115\": dial tcp: "
             + lookup(f"seat-inventory.{NS}.svc.cluster.local"), {"error.type": "DNSError"}),
            ("info", "GET /api/v3/events/90115/seatmap 200 in 5312ms",
             {"http.response.status_code": 200}),
            ("info", "GET /api/v3/events/90115/seatmap 200 in 2870ms",
             {"http.response.status_code": 200}),
            ("error", "GET /api/v3/events/90115/seatmap 504 upstream budget 8s exceeded "
             "(seat-inventory, pricing-rules)", {"http.response.status_code": 504}),
            ("warn", "pricing-rules call retried: dial tcp: "
             + lookup(f"pricing-rules.{NS}.svc.cluster.local"), {"error.type": "DNSError"}),
            ("error", "analytics beacon rejected by collector: 429 Too Many Requests (dropped "
             "50 events)", {"error.type": "AnalyticsRejected"}),
        ], 27, start=onsale + timedelta(minutes=2))

    # ---- backends: fast all along
    for name, rev, mib in (("seat-inventory", 31, 610), ("pricing-rules", 18, 280)):
        bk = Ctr(name, f"{ECR}/boxoffice/{name}:{rev // 10}.{rev % 10}.2", port=8080,
                 requests={"cpu": "300m", "memory": "512Mi"}, limits={"memory": "1Gi"},
                 readiness=http_probe("/ready"))
        _, bks = steady(s, NS, name, [bk], nodes=nodes, replicas=3, revision=rev,
                        rollout=s.ago(days=4, hours=rev % 7), offset=1, service=8080)
        quiet(s, bks, name, mib)
        for pod in bks:
            requests(s, pod, name, rps=lambda t: 9.0 * (1 + 3.5 * load(t)), codes={
                "200": lambda t: 0.999, "500": lambda t: 0.001},
                median=lambda t: 0.014, buckets=buckets)
        chatter(s, bks, name, name, [
            ("info", f"{name}: served block query for event 90115 in 9ms", {}),
            ("info", f"{name}: cache refresh finished (4182 entries)", {}),
        ], 40)

    # ---- checkout: old OOM restart, a few payment provider time-outs, few DNS errors
    co = Ctr("checkout-api", f"{ECR}/boxoffice/checkout-api:12.4.1", port=8080,
             requests={"cpu": "250m", "memory": "384Mi"}, limits={"memory": "512Mi"},
             env={"PSP_URL": "https://api.paylane.example/v2"}, readiness=http_probe("/ready"))
    _, cos = steady(s, NS, "checkout-api", [co], nodes=nodes, replicas=3, revision=88,
                    rollout=s.ago(days=3, hours=5), offset=2,
                    restarted={1: (s.ago(days=2, hours=3), "OOMKilled", 137)})
    quiet(s, cos, "checkout-api", 301)
    for pod in cos:
        requests(s, pod, "checkout-api", rps=lambda t: 1.1 * (1 + 4 * load(t)), codes={
            "200": lambda t: 0.992, "502": lambda t: 0.006, "409": lambda t: 0.002})
    chatter(s, cos, "checkout-api", "checkout-api", [
        ("info", "order BX-7781204 confirmed, 2 seats, 96.00 EUR", {}),
        ("info", "order BX-7781290 confirmed, 4 seats, 212.00 EUR", {}),
        ("warn", "paylane authorise timed out after 10s, retrying (attempt 1/2)",
         {"error.type": "Timeout"}),
        ("warn", "seat hold H-55120 expired before payment, released 2 seats", {}),
    ], 90)
    chatter(s, cos, "checkout-api", "checkout-api", [
        ("warn", f"lookup api.paylane.example on {LOCAL}:53: i/o timeout, retrying",
         {"error.type": "DNSError"}),
        ("info", "order BX-7790021 confirmed, 2 seats, 148.00 EUR", {}),
    ], 24, start=onsale + timedelta(minutes=4))

    # ---- elsewhere: the sales dashboard's probe blip
    readiness_blip(s, "reporting", "sales-dashboard", f"{ECR}/reporting/sales-dashboard:2.9.0",
                   nodes, minutes_ago=51)
    return s
