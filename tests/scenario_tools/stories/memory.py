"""oom_killed stories: a leak after a rollout, a JVM heap larger than its limit, a sidecar."""

from __future__ import annotations

import bisect
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from tests.scenario_tools.common import (
    MIB,
    Story,
    const,
    container_metrics,
    deployment_metrics,
    http_metrics,
    kube_system,
    namespaces,
    nodes,
    noise_logs,
    simple_deployment,
    story,
    truth,
)
from tests.scenario_tools.kube import Ctr, Obj, Template, ended, http_probe, iso, running
from tests.scenario_tools.sim import Run, container_status, deaths, lifecycle, restart_events

ECR = "312907938451.dkr.ecr.eu-west-1.amazonaws.com"


class Leak:
    """Memory that grows with traffic from `base` until the cgroup limit kills the process."""

    def __init__(self, start: datetime, now: datetime, base: float, limit: float,
                 per_second: Callable[[float], float]) -> None:
        self.base, self.limit, self.step = base, limit, 10
        t0 = int(start.timestamp()) - 3600
        self.grid = list(range(t0, int(now.timestamp()) + 3600, self.step))
        total, self.cum = 0.0, []
        for t in self.grid:
            self.cum.append(total)
            total += per_second(t) * self.step

    def _at(self, t: float) -> float:
        return self.cum[max(0, bisect.bisect_right(self.grid, t) - 1)]

    def life(self, start: datetime) -> float:
        """Seconds until an instance started at `start` reaches the limit."""
        begin = self._at(start.timestamp())
        need = self.limit - self.base
        i = bisect.bisect_left(self.cum, begin + need)
        return float(self.grid[min(i, len(self.grid) - 1)] - start.timestamp())

    def memory(self, runs: list[Run]) -> Callable[[int], float | None]:
        def value(t: int) -> float | None:
            for run in runs:
                end = run.end.timestamp() if run.end else float("inf")
                if run.start.timestamp() <= t < end:
                    used = self._at(t) - self._at(run.start.timestamp())
                    return min(self.limit * 0.995, self.base + used)
            return None
        return value


def ramp(start_hour: float, start: float, end_hour: float, end: float) -> Callable[[float], float]:
    """Traffic that climbs linearly through the morning (requests per second)."""
    def value(t: float) -> float:
        hour = (t % 86400) / 3600
        frac = min(1.0, max(0.0, (hour - start_hour) / (end_hour - start_hour)))
        return start + (end - start) * frac
    return value


@story
def checkout_oom() -> Story:
    s = Story("checkout-oom", "Checkout pods restarting under load",
              datetime(2026, 11, 30, 10, 0, tzinfo=UTC),
              "checkout in prod keeps restarting, customers get 502s on payment",
              truth("oom_killed", "Deployment", "shop", "checkout",
                    ["OOMKilled", "256Mi", "exit code 137", "2.3.1"],
                    "Raise checkout's memory limit above its working set or roll back to "
                    "2.3.0 and fix the memory leak shipped in 2.3.1"), hours=2.5,
              interventions=[{"after_step": 2, "text": "ignore the redis warnings in cart, "
                              "they are expected since last night's redis failover"}])
    c = s.cluster
    namespaces(s, "shop", "monitoring")
    node_list = nodes(s, 3, subnet=20)
    kube_system(s, node_list)

    rollout = s.ago(hours=3, minutes=25)
    per_pod = ramp(6.0, 13.0, 10.0, 60.0)
    probes = dict(readiness=http_probe("/ready", delay=3, period=5),
                  liveness=http_probe("/live", delay=10, period=10))

    def checkout_ctr(version: str) -> Ctr:
        return Ctr("checkout", f"{ECR}/shop/checkout:{version}",
                   requests={"cpu": "250m", "memory": "192Mi"},
                   limits={"cpu": "1", "memory": "256Mi"},
                   env={"CART_URL": "http://cart.shop.svc.cluster.local",
                        "PAYMENTS_URL": "https://api.payments-provider.example.com/v2",
                        "LOG_FORMAT": "json", "GOMAXPROCS": "1"}, **probes)

    old = Template([checkout_ctr("2.3.0")], labels={"app.kubernetes.io/version": "2.3.0"},
                   service_account="checkout")
    new = Template([checkout_ctr("2.3.1")], labels={"app.kubernetes.io/version": "2.3.1"},
                   service_account="checkout")
    checkout = c.workload("Deployment", "shop", "checkout", new, replicas=3,
                          created=s.ago(days=210),
                          labels={"app.kubernetes.io/name": "checkout",
                                  "app.kubernetes.io/part-of": "shop"})
    c.revision(checkout, 14, s.ago(days=12, hours=3), old)
    rs = c.revision(checkout, 15, rollout, new, replicas=3)
    c.service("shop", "checkout", {"app.kubernetes.io/name": "checkout"}, created=s.ago(days=210))

    image = f"{ECR}/shop/checkout:2.3.1"
    pods: list[tuple[Obj, list[Run]]] = []
    for i, share in enumerate((1.22, 0.93, 0.85)):  # uneven: keep-alive connections stick
        leak = Leak(rollout, s.now, 104 * MIB, 256 * MIB,
                    lambda t, k=share: per_pod(t) * k * 0.0041 * MIB)
        created = rollout + timedelta(seconds=5 + 38 * i)
        runs = lifecycle(created + timedelta(seconds=6), s.now, leak.life)
        name = f"{rs['metadata']['name']}-{c.token(5)}"
        uid = c.uid("Pod", "shop", name)
        status = container_status(runs, name, "shop", "checkout", reason="OOMKilled", code=137,
                                  uid=uid)
        pod = c.pod(checkout, rs, node=node_list[i], created=created, name=name,
                    statuses={"checkout": status},
                    ready_since=runs[-1].start + timedelta(seconds=4))
        pods.append((pod, runs))
        ip = pod["status"]["podIP"]
        restart_events(s, pod, "checkout", runs, now=s.now, image=image,
                       probe_message=f'Readiness probe failed: Get "http://{ip}:8080/ready": '
                       f"dial tcp {ip}:8080: connect: connection refused")
        kills = [int(d.timestamp()) for d in deaths(runs)]
        in_window = [k for k in kills if k >= s.times[0]]
        container_metrics(s, pod, "checkout", memory=leak.memory(runs),
                          cpu=lambda t, k=share: per_pod(t) * k * 0.006, restarts=in_window,
                          restart_base=len(kills) - len(in_window),
                          throttle=const(0.04), limit_memory=256 * MIB, limit_cpu=1.0)
        http_metrics(s, "checkout", pod, rps=lambda t, k=share: per_pod(t) * k,
                     codes={"200": const(0.955), "402": const(0.04), "500": const(0.005)},
                     median=const(0.11), resets=in_window, histogram=True)
        _checkout_pod_logs(s, pod, runs)
    all_kills = sorted(d for _, runs in pods for d in deaths(runs))
    down = [(r.end, next_start(runs, r)) for _, runs in pods for r in runs if r.end]
    deployment_metrics(s, checkout, lambda t: 3 - sum(1 for a, b in down
                                                      if a.timestamp() <= t < b.timestamp()))
    unready = [runs[-1].end for _, runs in pods if runs[-1].end is not None]
    checkout.availability_changed = max(unready) if unready else None
    _checkout_logs(s, [p for p, _ in pods])
    _neighbours(s, node_list, all_kills)
    return s


def next_start(runs: list[Run], run: Run) -> datetime:
    i = runs.index(run)
    return runs[i + 1].start if i + 1 < len(runs) else datetime.max.replace(tzinfo=UTC)


def _checkout_pod_logs(s: Story, pod: Obj, runs: list[Run]) -> None:
    """The last two instances' output; the killed one simply stops (SIGKILL leaves no line)."""
    def instance(run: Run) -> list[str]:
        lines = [_zap(run.start, "info", "main.go:41", "starting checkout",
                      version="2.3.1", commit="9f3c2e1", addr=":8080"),
                 _zap(run.start + timedelta(milliseconds=310), "info", "pricing/cache.go:57",
                      "price cache enabled", ttl="0s", backend="memory"),
                 _zap(run.start + timedelta(milliseconds=420), "info", "main.go:77",
                      "listening", addr=":8080")]
        end = run.end or s.now
        span = (end - run.start).total_seconds()
        for k in range(1, 14):
            when = run.start + timedelta(seconds=span * k / 14)
            order = f"ord_{s.rng.randrange(10**7, 10**8)}"
            if s.rng.random() < 0.15:
                lines.append(_zap(when, "warn", "payment/authorize.go:112", "payment declined",
                                  order_id=order, decline_code="card_declined"))
            else:
                lines.append(_zap(when, "info", "payment/authorize.go:98", "payment authorized",
                                  order_id=order, amount_cents=s.rng.randrange(900, 25000)))
        return lines
    s.pod_log(pod, "checkout", instance(runs[-1]))
    if len(runs) > 1:
        s.pod_log(pod, "checkout", instance(runs[-2]), previous=True)


def _zap(when: datetime, level: str, caller: str, msg: str, **fields: object) -> str:
    import json
    stamp = when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"
    return json.dumps({"level": level, "ts": stamp, "caller": caller, "msg": msg, **fields},
                      separators=(",", ":"))


def _checkout_logs(s: Story, pods: list[Obj]) -> None:
    for pod in pods:
        noise_logs(s, pod, "checkout", "checkout", [
            ("info", "payment authorized", {"http.response.status_code": 200}),
            ("info", "payment authorized", {"http.response.status_code": 200}),
            ("info", "order confirmed", {"http.response.status_code": 200}),
            ("warn", "payment declined", {"http.response.status_code": 402,
                                          "error.type": "card_declined"}),
        ], 30)


def _neighbours(s: Story, node_list: list[Obj], kills: list[datetime]) -> None:
    """frontend sees the 502s; cart warns about redis; catalog logs ordinary 404s."""
    _, fpods = simple_deployment(s, "shop", "frontend", f"{ECR}/shop/frontend:5.12.0",
                                        replicas=2, node_list=node_list[1:], port=3000,
                                        memory="512Mi", revision=41)
    _, cpods = simple_deployment(
        s, "shop", "cart", f"{ECR}/shop/cart:1.19.4", replicas=2, node_list=node_list,
        revision=23, restarts={1: running(s.ago(days=2, hours=7, minutes=12), restarts=1,
                                          last=ended("Error", 2, s.ago(days=4, hours=1),
                                                     s.ago(days=2, hours=7, minutes=12)))})
    _, kpods = simple_deployment(s, "shop", "catalog", f"{ECR}/shop/catalog:3.4.2",
                                       replicas=2, node_list=node_list[::-1], revision=17)
    redis = s.cluster.workload(
        "StatefulSet", "shop", "redis-master",
        Template([Ctr("redis", "docker.io/bitnami/redis:7.2.5-debian-12-r4", port=6379,
                      port_name="redis", requests={"cpu": "100m", "memory": "256Mi"},
                      limits={"memory": "1Gi"})], service_account="redis"),
        replicas=1, created=s.ago(days=300), labels={"app.kubernetes.io/name": "redis",
                                                     "app.kubernetes.io/component": "master"})
    rev = s.cluster.revision(redis, 3, s.ago(days=40))
    redis_pod = s.cluster.pod(redis, rev, node=node_list[2], created=s.ago(hours=15, minutes=4),
                              statuses={"redis": running(s.ago(hours=15, minutes=3))})
    _, gpods = simple_deployment(s, "monitoring", "grafana", "docker.io/grafana/grafana:"
                                       "11.3.0", replicas=1, node_list=node_list, port=3000,
                                       revision=9)
    ip = gpods[0]["status"]["podIP"]
    s.cluster.event(gpods[0], "Unhealthy", f'Readiness probe failed: Get "http://{ip}:3000/'
                    'healthz": context deadline exceeded (Client.Timeout exceeded while awaiting '
                    'headers)', first=s.ago(minutes=52), last=s.ago(minutes=51, seconds=30),
                    count=2, type_="Warning", field_path="spec.containers{grafana}")
    traffic = ramp(6.0, 40.0, 10.0, 220.0)
    window = [k for k in kills if k.timestamp() >= s.times[0]]
    edges = [int(k.timestamp()) for k in window]
    def bad(t: int) -> float:
        return sum(0.02 for e in edges if e - 30 <= t < e + 30)
    for pod in fpods:
        container_metrics(s, pod, "frontend", memory=lambda t: 301 * MIB)
        http_metrics(s, "frontend", pod, rps=lambda t: traffic(t) / 2,
                     codes={"200": lambda t: 0.99 - bad(t), "404": const(0.01), "502": bad},
                     median=const(0.09), histogram=False)
    for pod in cpods + kpods + [redis_pod]:
        name = pod["spec"]["containers"][0]["name"]
        base = s.rng.uniform(90, 190) * MIB
        container_metrics(s, pod, name, memory=lambda t, b=base: b,
                          restart_base=pod["status"]["containerStatuses"][0]["restartCount"])
    _neighbour_logs(s, fpods, cpods, kpods, window)


def _neighbour_logs(s: Story, fpods: list[Obj], cpods: list[Obj], kpods: list[Obj],
                    kills: list[datetime]) -> None:
    for kill in kills:
        for _ in range(s.rng.randrange(1, 4)):
            pod = s.rng.choice(fpods)
            when = kill + timedelta(milliseconds=s.rng.randrange(0, 4000))
            s.logs.add(when, "error", "POST /api/checkout/pay 502: upstream "
                       "checkout.shop.svc.cluster.local:80 socket hang up",
                       namespace="shop", pod=pod["metadata"]["name"], container="frontend",
                       service="frontend", node=pod["spec"]["nodeName"],
                       http__request__method="POST", http__response__status_code=502,
                       url__path="/api/checkout/pay", error__type="ECONNRESET",
                       trace__id=s.cluster.hexid("trace", iso(when), length=32))
    for pod in fpods:
        noise_logs(s, pod, "frontend", "frontend", [
            ("info", "GET /api/cart 200", {"http.response.status_code": 200}),
            ("info", "GET /api/products 200", {"http.response.status_code": 200}),
            ("warn", "GET /api/products/sku-unknown 404", {"http.response.status_code": 404}),
        ], 20)
    for pod in cpods:
        noise_logs(s, pod, "cart", "cart", [
            ("warn", "redis: discarding bad PubSub connection: read tcp: i/o timeout", {}),
            ("warn", "redis: connection pool timeout, retrying on redis-master-0", {}),
            ("info", "cart updated", {}),
            ("info", "cart updated", {}),
        ], 35)
    for pod in kpods:
        noise_logs(s, pod, "catalog", "catalog", [
            ("warn", "product not found", {"http.response.status_code": 404}),
            ("error", "search request failed: context canceled", {"error.type":
                                                                  "context.Canceled"}),
            ("info", "GET /products 200", {"http.response.status_code": 200}),
        ], 30)
    cart_pod = cpods[1]
    died = s.ago(days=2, hours=7, minutes=12)
    s.pod_log(cart_pod, "cart", [
        f"{iso(died - timedelta(seconds=40))} WARN redis: connection pool timeout",
        f"{iso(died - timedelta(seconds=2))} ERROR redis: dial tcp 172.20.81.4:6379: connect: "
        "connection refused",
        "panic: redis: connection refused",
        "",
        "goroutine 1 [running]:",
        "main.mustConnect(...)",
        "\t/src/cmd/cart/main.go:64 +0x1a5",
    ], previous=True)
    s.pod_log(cart_pod, "cart", [f"{iso(died + timedelta(seconds=12))} INFO starting cart "
                                 "version=1.19.4",
                                 f"{iso(died + timedelta(seconds=13))} INFO connected to redis "
                                 "redis-master-0"])
