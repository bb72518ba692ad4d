"""Shape 4: a sidecar proxy with a tiny CPU limit is throttled and slows every request.

order-api's pods carry an Istio sidecar whose CPU limit the team capped at 100m months
ago (`sidecar.istio.io/proxyCPULimit`). On Cyber Monday traffic is 2.5x the usual; the
proxy hits its CFS quota, its throttled share climbs to ~70 %, and every request waits in
the proxy: the mesh sees p99 above a second, the application itself still answers in
~25 ms and uses a fraction of its own 2-core limit. The HPA scales on pod CPU, which the
main container dominates, so it stays at its floor.
"""

from __future__ import annotations

import itertools
import math
import random
from datetime import datetime, timedelta

from . import kube
from .emit import Scenario, steps
from .fleet import (
    BUCKETS,
    App,
    app,
    basic_signals,
    chatter,
    cpu_series,
    http_series,
    make_nodes,
    memory_series,
    platform,
    simple,
)

ID = "orders-page-slow"
NOW = datetime.fromisoformat("2026-11-30T10:35:00+00:00")
RAMP = datetime.fromisoformat("2026-11-30T07:10:00+00:00")
NS = "orders"


def load(at: datetime) -> float:
    """Traffic in multiples of a normal morning: 1 before 07:10, 2.5 from ~08:30."""
    if at < RAMP:
        return 1.0
    return 1.0 + 1.5 * min(1.0, (at - RAMP).total_seconds() / 4800)


def proxy_demand(at: datetime) -> float:
    """Cores the proxy would use unthrottled: 45m per unit of load."""
    return 0.045 * load(at) * 1.05


def throttled(at: datetime) -> float:
    demand = proxy_demand(at)
    return min(0.78, 0.02 + max(0.0, demand - 0.07) * 15.0)


def mesh_median(at: datetime) -> float:
    """Seconds: the app's 25 ms plus the wait in a throttled proxy."""
    share = throttled(at)
    return 0.027 + (0.0 if share < 0.1 else 0.9 * (share - 0.08) ** 1.6)


def build() -> Scenario:
    rng = random.Random(31_04)
    sc = Scenario(
        id=ID, title="'My orders' page slow since this morning", now=NOW,
        report=(
            "the 'my orders' page is crawling since ~8am (cyber monday, so of course). "
            "order-api's own dashboard looks fine though - cpu low, p99 ~30ms - so is it "
            "storefront-bff? or the mesh? people are refreshing and making it worse\n"),
        truth={"category": "cpu_throttling",
               "culprit": {"kind": "Deployment", "namespace": NS, "name": "order-api"},
               "evidence": ["istio-proxy", "container_cpu_cfs_throttled_periods_total",
                            "sidecar.istio.io/proxyCPULimit: 100m"],
               "fix": "Raise order-api's sidecar CPU limit (sidecar.istio.io/proxyCPULimit) "
                      "or drop the proxy's CPU limit; the application container is fine."})
    created = NOW - timedelta(days=500)
    sc.add(kube.namespace(NS, created, {"istio-injection": "enabled"}),
           kube.namespace("istio-system", created))
    nodes = make_nodes(sc, [f"aks-apps-31468077-vmss0000{i}" for i in ("0c", "0f", "0g", "0h")],
                       created=NOW - timedelta(days=26), cpu="8", memory="32Gi",
                       labels={"kubernetes.azure.com/agentpool": "apps",
                               "node.kubernetes.io/instance-type": "Standard_D8s_v5",
                               "topology.kubernetes.io/zone": "westeurope-1"})
    since = NOW - timedelta(days=6, hours=1)
    platform(sc, rng, nodes, created, since=since)
    istiod = app(sc, rng, "istiod", "istio-system", replicas=2, nodes=nodes, created=created,
                 images=[("docker.io/istio/pilot:1.23.2", NOW - timedelta(days=40))],
                 pod_started=since, port=15014,
                 containers=simple("discovery", port=15014, cpu="500m", memory="2Gi",
                                   limit_memory=None, probe="/ready"))

    proxy_notes = {"sidecar.istio.io/proxyCPU": "50m", "sidecar.istio.io/proxyCPULimit": "100m",
                   "sidecar.istio.io/proxyMemory": "128Mi",
                   "sidecar.istio.io/proxyMemoryLimit": "256Mi",
                   "kubectl.kubernetes.io/default-container": "order-api"}

    def order_containers(image: str) -> list[dict]:
        return [kube.container("order-api", image, requests={"cpu": "1", "memory": "1Gi"},
                               limits={"cpu": "2", "memory": "2Gi"}, port=8080,
                               readiness="/ready", liveness="/healthz",
                               env={"DB_POOL_SIZE": "40",
                                    "ORDERS_DB_HOST": "orders-pg.orders.svc"}),
                kube.container("istio-proxy", "docker.io/istio/proxyv2:1.23.2",
                               requests={"cpu": "50m", "memory": "128Mi"},
                               limits={"cpu": "100m", "memory": "256Mi"},
                               args=["proxy", "sidecar", "--domain",
                                     "$(POD_NAMESPACE).svc.cluster.local",
                                     "--proxyLogLevel=warning", "--concurrency", "2"])]

    orders = app(sc, rng, "order-api", NS, replicas=4, nodes=nodes, created=created,
                 images=[("acr.example.io/orders/order-api:12.6.0", NOW - timedelta(days=19)),
                         ("acr.example.io/orders/order-api:12.7.1",
                          NOW - timedelta(days=5, hours=6))],
                 containers=order_containers)
    for obj in [orders.deployment, *orders.replicasets, *orders.pods]:
        template = obj["spec"].get("template")
        spec_meta = template["metadata"] if template else obj["metadata"]
        spec_meta.setdefault("annotations", {}).update(proxy_notes)
    bff = app(sc, rng, "storefront-bff", NS, replicas=6, nodes=nodes, created=created,
              images=[("acr.example.io/web/storefront-bff:4.1.9",
                       NOW - timedelta(days=2, hours=3))],
              containers=simple("storefront-bff", cpu="300m", memory="512Mi",
                                limit_memory="1Gi", probe="/healthz"))
    pg_exporter = app(sc, rng, "orders-pg-exporter", NS, replicas=1, nodes=nodes, created=created,
                      images=[("quay.io/prometheuscommunity/postgres-exporter:v0.15.0",
                               NOW - timedelta(days=90))], pod_started=since, port=9187,
                      containers=simple("postgres-exporter", port=9187, cpu="50m",
                                        memory="64Mi", limit_memory="128Mi", probe="/"))
    sc.add(_hpa(created))
    _signals(sc, orders, bff)
    basic_signals(sc, istiod, NOW - timedelta(hours=5), NOW, cores=0.2, mem_mib=700)
    _logs(sc, rng, orders, bff, pg_exporter)
    sc.add(kube.event(NS, kind="Pod", name=bff.pods[2]["metadata"]["name"], reason="Unhealthy",
                      type="Warning", host=bff.pods[2]["spec"]["nodeName"],
                      field_path="spec.containers{storefront-bff}",
                      message=f'Readiness probe failed: Get "http://{bff.pods[2]["status"]["podIP"]}'
                              ':8080/healthz": context deadline exceeded (Client.Timeout '
                              "exceeded while awaiting headers)",
                      count=3, first=NOW - timedelta(minutes=41), last=NOW - timedelta(minutes=17)))
    return sc


def _hpa(created: datetime) -> dict:
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": kube.meta("order-api", NS, created),
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                        "name": "order-api"},
                     "minReplicas": 4, "maxReplicas": 16,
                     "metrics": [{"type": "Resource", "resource": {
                         "name": "cpu",
                         "target": {"type": "Utilization", "averageUtilization": 70}}}]},
            "status": {"currentReplicas": 4, "desiredReplicas": 4,
                       "currentMetrics": [{"type": "Resource", "resource": {
                           "name": "cpu", "current": {"averageUtilization": 41,
                                                      "averageValue": "431m"}}}],
                       "conditions": [
                           {"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale",
                            "message": "recommended size matches current size",
                            "lastTransitionTime": kube.ts(NOW - timedelta(days=3))},
                           {"type": "ScalingActive", "status": "True", "reason": "ValidMetricFound",
                            "message": "the HPA was able to successfully calculate a replica count "
                                       "from cpu resource utilization (percentage of request)",
                            "lastTransitionTime": kube.ts(NOW - timedelta(days=5))},
                           {"type": "ScalingLimited", "status": "True", "reason": "TooFewReplicas",
                            "message": "the desired replica count is less than the minimum "
                                       "replica count",
                            "lastTransitionTime": kube.ts(NOW - timedelta(days=3))}]}}


def _lognormal(x: float, median: float, sigma: float) -> float:
    return 0.5 * (1 + math.erf((math.log(x) - math.log(median)) / (sigma * math.sqrt(2))))


def _signals(sc: Scenario, orders: App, bff: App) -> None:
    start = NOW - timedelta(hours=5)
    times = steps(start, NOW, timedelta(minutes=5))
    fine = steps(start, NOW, timedelta(minutes=1))  # CPU against a limit wants the scrape rate
    for pod_obj in orders.pods:
        pod_name = pod_obj["metadata"]["name"]
        rng = random.Random(pod_name)
        cpu_series(sc, NS, pod_name, "order-api", fine,
                   lambda at, r=rng: 0.14 * load(at) * (0.9 + 0.2 * r.random()), limit=2.0,
                   throttle=lambda _at: 0.0)
        cpu_series(sc, NS, pod_name, "istio-proxy", fine,
                   lambda at, r=rng: min(proxy_demand(at), 0.099) * (0.96 + 0.04 * r.random()),
                   limit=0.1, throttle=lambda at, r=rng: throttled(at) * (0.95 + 0.1 * r.random()))
        memory_series(sc, NS, pod_name, "order-api", times,
                      lambda _at, r=rng: 780 * 2**20 * (1 + 0.02 * r.random()), limit=2 * 2**30)
        memory_series(sc, NS, pod_name, "istio-proxy", times,
                      lambda at, r=rng: (96 + 20 * load(at)) * 2**20 * (1 + 0.02 * r.random()),
                      limit=256 * 2**20)
        http_series(sc, NS, pod_name, "order-api", times, lambda at: 11.0 * load(at),
                    lambda _at: 0.0008, lambda _at: 0.024, container="order-api",
                    path="/v1/orders")
        _mesh(sc, pod_name, times, rng)
    for pod_obj in bff.pods:
        pod_name = pod_obj["metadata"]["name"]
        rng = random.Random(pod_name)
        cpu_series(sc, NS, pod_name, "storefront-bff", times,
                   lambda at, r=rng: 0.09 * load(at) * (0.9 + 0.2 * r.random()))
        memory_series(sc, NS, pod_name, "storefront-bff", times,
                      lambda _at, r=rng: 410 * 2**20 * (1 + 0.03 * r.random()), limit=2**30)


def _mesh(sc: Scenario, pod_name: str, times: list[datetime], rng: random.Random) -> None:
    """Istio's standard metrics as the destination sidecar reports them (milliseconds)."""
    labels = {"namespace": NS, "pod": pod_name, "container": "istio-proxy",
              "reporter": "destination", "destination_workload": "order-api",
              "destination_workload_namespace": NS, "source_workload": "storefront-bff",
              "destination_service": "order-api.orders.svc.cluster.local"}
    count = 20000.0 + rng.random() * 4000
    buckets_ms = [b * 1000 for b in BUCKETS]
    cumulative = [count * _lognormal(le / 1000, 0.027, 0.5) for le in buckets_ms]
    total = count * 30.0
    timeouts = 3.0
    for previous, at in itertools.pairwise(times):
        n = 11.0 * load(at) * (at - previous).total_seconds() * (0.95 + 0.1 * rng.random())
        median = mesh_median(at)
        for index, le in enumerate(buckets_ms):
            cumulative[index] += n * _lognormal(le / 1000, median, 0.7)
        count += n
        total += n * median * 1000 * 1.28
        timeouts += n * (1 - _lognormal(2.5, median, 0.7))
        for le, value in zip(buckets_ms, cumulative, strict=True):
            sc.sample("istio_request_duration_milliseconds_bucket", "histogram",
                      {**labels, "le": f"{le:g}"}, at, float(int(value)),
                      "Request duration as the sidecar measures it.")
        sc.sample("istio_request_duration_milliseconds_bucket", "histogram",
                  {**labels, "le": "+Inf"}, at, float(int(count)),
                  "Request duration as the sidecar measures it.")
        sc.sample("istio_request_duration_milliseconds_count", "histogram", labels, at,
                  float(int(count)), "Request duration as the sidecar measures it.")
        sc.sample("istio_request_duration_milliseconds_sum", "histogram", labels, at,
                  round(total, 1), "Request duration as the sidecar measures it.")
        for code, value in (("200", count - timeouts), ("504", timeouts)):
            sc.sample("istio_requests_total", "counter", {**labels, "response_code": code}, at,
                      float(int(value)), "Requests as the sidecar counts them.")


def _logs(sc: Scenario, rng: random.Random, orders: App, bff: App, pg: App) -> None:
    start = NOW - timedelta(hours=5)
    for pod_obj in orders.pods:
        pod_name = pod_obj["metadata"]["name"]
        ip = pod_obj["status"]["podIP"]
        at = start + timedelta(seconds=rng.randint(0, 30))
        while at < NOW:
            app_ms = rng.randint(9, 41)
            customer = rng.randint(100000, 999999)
            sc.both(at, service="order-api", ns=NS, pod=pod_name, container="order-api",
                    level="info", message=f"GET /v1/orders?customer={customer} 200 "
                    f"items={rng.randint(1, 30)} took={app_ms}ms")
            median = mesh_median(at) * 1000
            total = int(app_ms + max(0.0, rng.lognormvariate(math.log(max(median - 25, 1)), 0.6)))
            code, flags, details, upstream = ("200", "-", "via_upstream", str(app_ms))
            if total >= 2500:
                code, flags, details, upstream, total = "504", "UT", "response_timeout", "-", 2500
            request_id = f"{rng.getrandbits(64):016x}"
            begun = at - timedelta(milliseconds=total)
            line = (f'[{begun.strftime("%Y-%m-%dT%H:%M:%S")}.{begun.microsecond // 1000:03d}Z] '
                    f'"GET /v1/orders?customer={customer} HTTP/1.1" {code} {flags} {details} - '
                    f'"-" 0 {rng.randint(900, 9000) if code == "200" else 24} {total} {upstream} '
                    f'"-" "storefront-bff/4.1.9" "{request_id}" '
                    f'"order-api.orders.svc.cluster.local" "{ip}:8080" '
                    'inbound|8080|| 127.0.0.6:0 {ip}:8080 10.42.0.0:0 '
                    'outbound_.80_._.order-api.orders.svc.cluster.local default')
            line = line.replace("{ip}", ip)
            sc.both(at, service="order-api", ns=NS, pod=pod_name, container="istio-proxy",
                    level="info", message=line, pod_line=line)
            at += timedelta(seconds=rng.randint(50, 160) / load(at))
    for pod_obj in bff.pods:
        pod_name = pod_obj["metadata"]["name"]
        at = start + timedelta(seconds=rng.randint(0, 30))
        while at < NOW:
            median = mesh_median(at) * 1000
            took = int(median * rng.lognormvariate(0, 0.6)) + rng.randint(5, 20)
            if took > 2500:
                sc.both(at, service="storefront-bff", ns=NS, pod=pod_name,
                        container="storefront-bff", level="error",
                        message="GET /account/orders 502: order-api: upstream request timeout "
                        "(504 from order-api.orders.svc.cluster.local)",
                        http__response__status_code=502)
            elif took > 800:
                sc.both(at, service="storefront-bff", ns=NS, pod=pod_name,
                        container="storefront-bff", level="warn",
                        message=f"slow upstream order-api GET /v1/orders took={took}ms "
                        "budget=800ms")
            else:
                sc.both(at, service="storefront-bff", ns=NS, pod=pod_name,
                        container="storefront-bff", level="info",
                        message=f"GET /account/orders 200 took={took + rng.randint(5, 30)}ms")
            at += timedelta(seconds=rng.randint(60, 180) / load(at))
    chatter(sc, pg, start, NOW, timedelta(minutes=15), [
        ("info", "scrape ok duration=0.0{n}s"),
        ("warn", "collector pg_stat_statements skipped: extension not installed"),
    ], rng, container="postgres-exporter")
