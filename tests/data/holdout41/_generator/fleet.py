"""Whole workloads in one call: a Deployment with its ReplicaSets and pods (healthy unless
told otherwise), its Service and Endpoints, and the series a scrape would have kept for
them. The stories use it for their bystanders and as the skeleton of their culprits."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass

from .kit import (
    Clock,
    Obj,
    Scenario,
    container,
    deployment,
    endpoints,
    http_probe,
    pod,
    pod_hash,
    replicaset,
    running,
    service,
    suffix,
    template,
)


@dataclass
class Workload:
    dep: Obj
    rs: Obj
    pods: list[Obj]
    svc: Obj | None

    @property
    def names(self) -> list[str]:
        return [p["metadata"]["name"] for p in self.pods]


def healthy(
    sc: Scenario,
    clock: Clock,
    ns: str,
    name: str,
    image: str,
    *,
    replicas: int,
    nodes: list[tuple[str, str]],
    port: int = 8080,
    revision: int = 3,
    age_days: float = 40,
    rollout_hours: float = 90,
    requests: dict[str, str] | None = None,
    limits: dict[str, str] | None = None,
    cluster_ip: str = "172.20.0.10",
    ip_base: str = "10.1.0",
    with_service: bool = True,
    restarts: int = 0,
    labels: dict[str, str] | None = None,
    probe: str = "/healthz",
    extra_containers: list[Obj] | None = None,
) -> Workload:
    lab = {"app": name, **(labels or {})}
    c = container(
        "app",
        image,
        requests=requests or {"cpu": "100m", "memory": "128Mi"},
        limits=limits or {"memory": "256Mi"},
        port=port,
        readiness=http_probe(probe, port),
        liveness=http_probe(probe, port, 20, 15),
    )
    tpl = template(lab, [c] + (extra_containers or []))
    created, rolled = clock.ago(age_days * 1440), clock.ago(rollout_hours * 60)
    dep = deployment(
        ns, name, lab, tpl, replicas=replicas, revision=revision, created=created, progressed=rolled
    )
    rs = replicaset(dep, revision, tpl, replicas=replicas, created=rolled)
    pods = []
    for i in range(replicas):
        pn = f"{rs['metadata']['name']}-{suffix(name + str(i))}"
        node_name, node_ip = nodes[i % len(nodes)]
        start = clock.ago(rollout_hours * 60 - i * 1.5)
        pods.append(
            pod(
                rs,
                tpl,
                pn,
                node_name=node_name,
                host_ip=node_ip,
                ip=f"{ip_base}.{20 + i * 7}",
                created=start,
                statuses=[running("app", image, start, restarts=restarts)],
            )
        )
    sc.objects += [dep, rs, *pods]
    svc = None
    if with_service:
        svc = service(ns, name, {"app": name}, 80, port, cluster_ip, created)
        sc.objects += [svc, endpoints(svc, pods, port)]
    return Workload(dep, rs, pods, svc)


def old_rs(sc: Scenario, dep: Obj, tpl: Obj, revision: int, created: str) -> Obj:
    rs = replicaset(dep, revision, tpl, replicas=0, created=created, ready=0)
    rs["status"] = {"replicas": 0, "observedGeneration": 2}
    sc.objects.append(rs)
    return rs


def series(
    sc: Scenario,
    clock: Clock,
    family: str,
    kind: str,
    help_: str,
    labels: dict[str, str],
    shape: Callable[[float], float | None],
    *,
    start_min: float,
    end_min: float = 0,
    step_min: float = 1,
    sample: str | None = None,
) -> None:
    """Samples of `shape(minutes_ago)` from start_min ago to end_min ago; None skips."""
    m = start_min
    while m >= end_min - 1e-9:
        v = shape(m)
        if v is not None:
            sc.metrics.add(family, kind, help_, sample or family, labels, v, clock.unix(m))
        m -= step_min


def counter(
    rate_per_s: Callable[[float], float],
    start_min: float,
    step_min: float,
    seed: str,
    jitter: float = 0.05,
    whole: bool = True,
) -> Callable[[float], float]:
    """A monotonic counter whose per-second rate follows rate_per_s(minutes_ago); `whole`
    counts events (integers), otherwise it sums seconds (three decimals)."""
    rnd = random.Random(seed)
    values: dict[float, float] = {}
    total = 0.0
    m = start_min
    while m >= -1e-9:
        total += max(0.0, rate_per_s(m) * (1 + rnd.uniform(-jitter, jitter))) * step_min * 60
        values[round(m, 3)] = math.floor(total) if whole else round(total, 3)
        m -= step_min
    return lambda minutes: values.get(round(minutes, 3), 0.0)


def wobble(seed: str, amount: float) -> Callable[[float], float]:
    rnd = random.Random(seed)
    cache: dict[float, float] = {}

    def f(m: float) -> float:
        key = round(m, 3)
        if key not in cache:
            cache[key] = 1 + rnd.uniform(-amount, amount)
        return cache[key]

    return f


def histogram(
    sc: Scenario,
    clock: Clock,
    family: str,
    help_: str,
    labels: dict[str, str],
    rate_per_s: Callable[[float], float],
    latency: Callable[[float], float],
    buckets: list[float],
    *,
    start_min: float,
    end_min: float = 0,
    step_min: float = 1,
) -> None:
    """A cumulative latency histogram: each step's requests spread around latency(m) (a
    log-normal-ish share per bucket), accumulated so every bucket only rises."""
    totals = [0.0] * (len(buckets) + 1)
    total_sum = 0.0
    m = start_min
    while m >= end_min - 1e-9:
        n = rate_per_s(m) * step_min * 60
        mean = latency(m)
        for i, b in enumerate(buckets):
            totals[i] += n * min(1.0, (b / mean) ** 4 / (1 + (b / mean) ** 4) * 1.02)
        totals[-1] += n
        total_sum += n * mean
        ts = clock.unix(m)
        running_max = 0
        for i, b in enumerate(buckets):
            running_max = max(running_max, int(totals[i]))
            sc.metrics.add(
                family,
                "histogram",
                help_,
                family + "_bucket",
                labels | {"le": str(b)},
                min(running_max, int(totals[-1])),
                ts,
            )
        sc.metrics.add(
            family,
            "histogram",
            help_,
            family + "_bucket",
            labels | {"le": "+Inf"},
            int(totals[-1]),
            ts,
        )
        sc.metrics.add(family, "histogram", help_, family + "_count", labels, int(totals[-1]), ts)
        sc.metrics.add(family, "histogram", help_, family + "_sum", labels, round(total_sum, 3), ts)
        m -= step_min


__all__ = ["Workload", "counter", "healthy", "histogram", "old_rs", "pod_hash", "series", "wobble"]
