"""Metric series of a pod (cAdvisor, kube-state-metrics, an HTTP histogram) and the
healthy bystander workloads every scenario carries, with their metrics and log noise.

A pod's series cover only its lifetime; counters reset when its container restarts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from .k8s import GiB, MiB, PodState, Revision, backends, container, deployment, http_probe, service
from .kit import World, iso

BUCKETS = (0.005, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


def wobble(world: World, base: float, spread: float = 0.08) -> float:
    return base * (1 + world.rng.uniform(-spread, spread))


def daily(moment: datetime, low: float = 0.8, high: float = 1.2) -> float:
    """A smooth day curve: busier in the European afternoon."""
    hour = moment.hour + moment.minute / 60
    return low + (high - low) * (0.5 + 0.5 * math.sin((hour - 9) / 24 * 2 * math.pi))


@dataclass
class PodSeries:
    ns: str
    pod: str
    container: str
    node: str
    times: list[datetime]


def pod_series(world: World, ns: str, pod: str, cname: str, node: str, start: datetime,
               end: datetime | None = None, step: int = 60, hours: float = 3.0) -> PodSeries:
    begin = max(start, world.now - timedelta(hours=hours))
    return PodSeries(ns, pod, cname, node, world.steps(start=begin, end=end, step=step))


def container_metrics(world: World, p: PodSeries, *, memory: Callable[[datetime], float],
                      cpu: Callable[[datetime], float], memory_limit: float | None,
                      cpu_limit: float | None = None,
                      throttle: Callable[[datetime], float] | None = None,
                      restarts: int = 0, restart_at: Iterable[datetime] = (),
                      last_reason: str | None = None) -> None:
    """Memory working set (bytes), CPU use (cores), throttling (share of periods),
    restarts, limits; `restart_at` are moments the restart counter goes up."""
    cad = {"namespace": p.ns, "pod": p.pod, "container": p.container, "node": p.node}
    ksm = {"namespace": p.ns, "pod": p.pod, "container": p.container}
    world.gauge("container_memory_working_set_bytes", cad, p.times,
                lambda t: round(max(memory(t), 1) * world.rng.uniform(0.985, 1.015)))
    world.counter("container_cpu_usage_seconds_total", cad, p.times,
                  lambda t: max(cpu(t), 0.0005) * world.rng.uniform(0.9, 1.1))
    if cpu_limit:
        world.counter("container_cpu_cfs_periods_total", cad, p.times, lambda t: 10.0)
        world.counter("container_cpu_cfs_throttled_periods_total", cad, p.times,
                      lambda t: 10.0 * (throttle(t) if throttle else 0.0))
        world.gauge("kube_pod_container_resource_limits", {**ksm, "resource": "cpu",
                    "unit": "core"}, p.times, lambda t: cpu_limit)
    if memory_limit:
        world.gauge("kube_pod_container_resource_limits", {**ksm, "resource": "memory",
                    "unit": "byte"}, p.times, lambda t: memory_limit)
    moments = sorted(restart_at)

    def restart_count(t: datetime) -> float:
        return restarts - sum(1 for m in moments if m > t)
    world.gauge("kube_pod_container_status_restarts_total", ksm, p.times, restart_count)
    if last_reason:
        world.gauge("kube_pod_container_status_last_terminated_reason",
                    {**ksm, "reason": last_reason}, p.times,
                    lambda t: 1.0 if restart_count(t) > 0 else 0.0)


def http_metrics(world: World, p: PodSeries, *, rate: Callable[[datetime], float],
                 error_share: Callable[[datetime], float],
                 latency: Callable[[datetime], float], handler: str = "/",
                 extra_codes: dict[str, float] | None = None, error_code: str = "503",
                 histogram: bool = True) -> None:
    """http_requests_total by code and http_request_duration_seconds by a log-normal-ish
    spread around the `latency(t)` median."""
    labels = {"namespace": p.ns, "pod": p.pod, "service": p.pod.rsplit("-", 2)[0],
              "handler": handler, "method": "GET"}
    codes = {"200": 1.0, **(extra_codes or {})}
    for code, share in codes.items():
        world.counter("http_requests_total", {**labels, "code": code}, p.times,
                      lambda t, s=share: rate(t) * (1 - error_share(t)) * s)
    world.counter("http_requests_total", {**labels, "code": error_code}, p.times,
                  lambda t: rate(t) * error_share(t))

    if not histogram:
        return

    def shares(t: datetime) -> dict[float, float]:
        median = latency(t)
        return {b: _lognormal_cdf(b, median) for b in BUCKETS}
    world.histogram("http_request_duration_seconds", labels, p.times, rate, shares)


def _lognormal_cdf(x: float, median: float, sigma: float = 0.6) -> float:
    z = (math.log(x) - math.log(median)) / sigma
    return round(0.5 * (1 + math.erf(z / math.sqrt(2))), 5)


def bystander(world: World, ns: str, name: str, *, replicas: int, nodes: list[str],
              image: str, created: datetime, rev_created: datetime, memory_mib: float,
              memory_limit: str, cpu_cores: float, rps: float, median_s: float,
              messages: list[tuple[str, str]] | None = None, port: int = 8080,
              team: str = "platform", revision: int = 7, log_every_s: int = 240,
              with_service: bool = True) -> Revision:
    """A healthy workload: Deployment, pods, Service, steady metrics and some log lines."""
    rev = Revision(revision, rev_created, [container(
        name, image, port=port, memory=memory_limit,
        liveness=http_probe("/healthz", port, delay=10), readiness=http_probe("/ready", port))],
        pods=[PodState(node=nodes[i % len(nodes)], created=rev_created +
                       timedelta(seconds=40 * i)) for i in range(replicas)])
    deployment(world, ns, name, created, [rev], replicas=replicas, team=team)
    if with_service:
        service(world, ns, name, created, target=port, backends=backends(world, ns, [rev]))
    limit = _bytes(memory_limit)
    for pod_name, state in zip(rev.pod_names, rev.pods, strict=True):
        series = pod_series(world, ns, pod_name, name, state.node, state.created)
        base = wobble(world, memory_mib * MiB, 0.1)
        container_metrics(world, series, memory=lambda t, b=base: b * daily(t, 0.95, 1.05),
                          cpu=lambda t: cpu_cores * daily(t), memory_limit=limit)
        if rps:
            http_metrics(world, series, rate=lambda t: rps * daily(t) / replicas,
                         error_share=lambda t: 0.0004, latency=lambda t: median_s,
                         histogram=False)
    for text, level in messages or []:
        moment = world.now - timedelta(hours=3)
        while moment < world.now:
            pod = world.rng.choice(rev.pod_names)
            world.log(moment + timedelta(seconds=world.rng.randint(0, log_every_s)), ns, pod,
                      name, name, level, text.format(n=world.rng.randint(2, 900),
                                                     ms=world.rng.randint(3, 90)))
            moment += timedelta(seconds=log_every_s * world.rng.uniform(0.6, 1.4))
    return rev


def _bytes(text: str) -> float:
    if text.endswith("Gi"):
        return float(text[:-2]) * GiB
    return float(text.rstrip("Mi")) * MiB


def access_logs(world: World, ns: str, pod: str, *, host: str, upstreams: list[str],
                rate_per_min: float, status: Callable[[datetime, str], int],
                paths: dict[str, list[str]], start: datetime | None = None,
                duration: Callable[[datetime, str, int], float] | None = None) -> None:
    """ingress-nginx access lines for `host` routed to `upstreams` (ns/svc-port)."""
    moment = start or world.now - timedelta(hours=2)
    while moment < world.now:
        upstream = world.rng.choice(upstreams)
        path = world.rng.choice(paths[upstream])
        code = status(moment, upstream)
        took = duration(moment, upstream, code) if duration else world.rng.uniform(0.01, 0.2)
        world.log(moment, "ingress-nginx", pod, "controller", "ingress-nginx",
                  "error" if code >= 500 else "info",
                  f'{world.ip("10.0")} - - "GET {path} HTTP/2.0" {code} '
                  f"{world.rng.randint(120, 9000)} \"-\" \"Mozilla/5.0\" {took:.3f} "
                  f"[{upstream}] {code if code != 502 else '-'}",
                  http__response__status_code=code, url__path=path, url__domain=host)
        moment += timedelta(seconds=60 / rate_per_min * world.rng.uniform(0.5, 1.5))


def timeline(world: World, start: datetime, every_s: float, jitter: float = 0.4,
             end: datetime | None = None) -> list[datetime]:
    out = []
    moment = start
    stop = end or world.now
    while moment < stop:
        out.append(moment)
        moment += timedelta(seconds=every_s * world.rng.uniform(1 - jitter, 1 + jitter))
    return out


__all__ = ["iso", "timeline"]


@dataclass
class Http:
    """Per-pod request rate, 5xx share and median latency over time."""

    rate: Callable[[datetime], float]
    errors: Callable[[datetime], float]
    latency: Callable[[datetime], float]
    handler: str = "/"
    error_code: str = "503"
    histogram: bool = True


def revision_metrics(world: World, ns: str, name: str, revs: list[Revision], *,
                     memory: Callable[[datetime], float], cpu: Callable[[datetime], float],
                     memory_limit: float, cpu_limit: float | None = None,
                     throttle: Callable[[datetime], float] | None = None,
                     http: Http | None = None) -> None:
    """Steady container (and HTTP) series for every Running pod of the revisions."""
    for rev in revs:
        for pod_name, state in zip(rev.pod_names, rev.pods, strict=True):
            if state.phase != "Running" or state.waiting:
                continue
            series = pod_series(world, ns, pod_name, name, state.node, state.created)
            scale = wobble(world, 1.0, 0.07)
            container_metrics(world, series, memory=lambda t, k=scale: memory(t) * k,
                              cpu=lambda t, k=scale: cpu(t) * k, memory_limit=memory_limit,
                              cpu_limit=cpu_limit, throttle=throttle, restarts=state.restarts)
            if http:
                http_metrics(world, series, rate=http.rate, error_share=http.errors,
                             latency=http.latency, handler=http.handler,
                             error_code=http.error_code, histogram=http.histogram)


def ramp(start: datetime, minutes: float = 5.0) -> Callable[[datetime], float]:
    """0 before `start`, rising to 1 over `minutes`."""
    def level(t: datetime) -> float:
        seconds = (t - start).total_seconds()
        return 0.0 if seconds <= 0 else min(1.0, seconds / (minutes * 60))
    return level
