"""Whole workloads at once: a Deployment with its ReplicaSets, pods spread over nodes, its
Service and Endpoints, and the usual container metrics, so that the stories spend their
lines on what differs (the fault) and bystanders stay cheap but complete."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from tests.data.holdout34._generator import kit
from tests.data.holdout34._generator.kit import Obj, Scenario


@dataclass
class Workload:
    dep: Obj
    rs: list[Obj]
    pods: list[Obj]
    service: Obj | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        return [p["metadata"]["name"] for p in self.pods]


def ip(rng: random.Random, prefix: str = "10.52") -> str:
    return f"{prefix}.{rng.randint(0, 15)}.{rng.randint(2, 250)}"


def app(
    sc: Scenario,
    rng: random.Random,
    ns: str,
    name: str,
    containers: list[Obj],
    nodes: list[str],
    *,
    replicas: int,
    created: datetime,
    rolled: datetime,
    revision: int,
    labels: dict[str, str] | None = None,
    port: int | None = 8080,
    svc_port: int = 80,
    cluster_ip: str | None = None,
    extra_spec: Obj | None = None,
    annotations: dict[str, str] | None = None,
    old: tuple[datetime, int] | None = None,
    with_service: bool = True,
) -> Workload:
    """A healthy Deployment whose current revision was rolled out at `rolled`."""
    labels = labels or {"app": name}
    tmpl = kit.template(
        {**labels, "version": containers[0]["image"].rsplit(":", 1)[-1]}
        if "version" not in labels
        else labels,
        containers,
        annotations=annotations,
        extra_spec=extra_spec,
    )
    tmpl["metadata"]["labels"] = dict(labels)
    dep = kit.deployment(
        ns,
        name,
        created,
        labels,
        tmpl,
        replicas=replicas,
        revision=revision,
        progressing=(
            "True",
            "NewReplicaSetAvailable",
            f'ReplicaSet "{name}-HASH" has successfully progressed.',
            rolled + timedelta(seconds=70),
        ),
    )
    pod_hash = kit.suffix(rng, 10)
    dep["status"]["conditions"][1]["message"] = dep["status"]["conditions"][1]["message"].replace(
        "HASH", pod_hash
    )
    rs = kit.replicaset(dep, pod_hash, rolled, revision, tmpl, replicas=replicas)
    sets = [rs]
    if old:
        old_rs = kit.replicaset(dep, kit.suffix(rng, 10), old[0], old[1], tmpl, replicas=0, ready=0)
        old_rs["status"] = {"replicas": 0, "observedGeneration": 2}
        sets.insert(0, old_rs)
    pods = []
    for i in range(replicas):
        started = rolled + timedelta(seconds=5 + 9 * i)
        sts = [kit.cstatus(c, started + timedelta(seconds=2)) for c in containers]
        pods.append(
            kit.pod(
                rs,
                f"{rs['metadata']['name']}-{kit.suffix(rng)}",
                started,
                nodes[i % len(nodes)],
                tmpl,
                sts,
                ip=ip(rng),
            )
        )
    sc.add(dep, *sets, *pods)
    w = Workload(dep, sets, pods)
    if with_service and port:
        svc = kit.service(
            ns,
            name,
            created,
            labels,
            [("http", svc_port, "http")],
            cluster_ip=cluster_ip or f"10.96.{rng.randint(0, 255)}.{rng.randint(2, 254)}",
        )
        sc.add(svc, kit.endpoints(ns, name, created, pods, [("http", port)], labels))
        w.service = svc
    return w


def grid(now: datetime, hours: float, step: int = 60) -> list[int]:
    end = int(now.timestamp())
    return list(range(end - int(hours * 3600), end + 1, step))


def container_metrics(
    sc: Scenario,
    ns: str,
    pod_name: str,
    cname: str,
    times: list[int],
    *,
    mem: Any,
    cpu: Any,
    mem_limit: float | None,
    cpu_limit: float | None,
    throttle: Any = None,
    restarts: Any = None,
    node_name: str = "",
    rng: random.Random,
) -> None:
    """mem(i) bytes, cpu(i) cores used, throttle(i) share of periods throttled, restarts(i)
    count."""
    labels = {"namespace": ns, "pod": pod_name, "container": cname}
    if node_name:
        labels["node"] = node_name
    m = sc.metrics
    m.gauge(
        "container_memory_working_set_bytes",
        labels,
        [(t, round(mem(i))) for i, t in enumerate(times)],
    )
    if mem_limit:
        m.gauge("container_spec_memory_limit_bytes", labels, [(t, mem_limit) for t in times])
    step = times[1] - times[0]
    cpu_used = kit.cumulate(
        [max(0.0, cpu(i) * rng.uniform(0.93, 1.07)) for i in range(len(times))], step, 1000.0
    )
    m.counter("container_cpu_usage_seconds_total", labels, list(zip(times, cpu_used, strict=False)))
    if cpu_limit:
        periods = kit.cumulate([10.0] * len(times), step, 50000.0)  # 100ms CFS period
        m.counter(
            "container_cpu_cfs_periods_total", labels, list(zip(times, periods, strict=False))
        )
        thr = kit.cumulate(
            [10.0 * (throttle(i) if throttle else 0.0) for i in range(len(times))], step, 400.0
        )
        m.counter(
            "container_cpu_cfs_throttled_periods_total",
            labels,
            list(zip(times, [round(x) for x in thr], strict=False)),
        )
    ksm = {"namespace": ns, "pod": pod_name, "container": cname}
    m.counter(
        "kube_pod_container_status_restarts_total",
        ksm,
        [(t, restarts(i) if restarts else 0) for i, t in enumerate(times)],
    )
    if mem_limit:
        m.gauge(
            "kube_pod_container_resource_limits",
            {**ksm, "resource": "memory", "unit": "byte"},
            [(t, mem_limit) for t in times],
        )
    if cpu_limit:
        m.gauge(
            "kube_pod_container_resource_limits",
            {**ksm, "resource": "cpu", "unit": "core"},
            [(t, cpu_limit) for t in times],
        )


def requests(
    sc: Scenario,
    name: str,
    labels: dict[str, str],
    times: list[int],
    rate: Any,
    err: Any,
    codes: tuple[str, str] = ("200", "503"),
    extra: dict[str, str] | None = None,
) -> None:
    """rate(i) req/s and err(i) share of 5xx, as http_requests_total by code."""
    step = times[1] - times[0]
    ok = kit.cumulate([rate(i) * (1 - err(i)) for i in range(len(times))], step, 12000.0)
    bad = kit.cumulate([rate(i) * err(i) for i in range(len(times))], step, 3.0)
    base = {**labels, **(extra or {})}
    sc.metrics.counter(
        name, {**base, "code": codes[0]}, [(t, round(v)) for t, v in zip(times, ok, strict=False)]
    )
    sc.metrics.counter(
        name, {**base, "code": codes[1]}, [(t, round(v)) for t, v in zip(times, bad, strict=False)]
    )


MiB = 1024 * 1024
