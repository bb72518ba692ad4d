"""What every story shares: the bundle it builds, and the ordinary parts of a cluster.

The ordinary parts (nodes, kube-system, healthy neighbours and their metrics) are what make
a scenario realistic: the analyzer must find the cause among workloads that look normal.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from tests.scenario_tools.kube import (
    Cluster,
    Ctr,
    Obj,
    Template,
    ago,
    http_probe,
    running,
)
from tests.scenario_tools.telemetry import (
    Logs,
    Metrics,
    gauge_points,
    histogram_points,
    integrate,
    minutes,
)

STORIES: dict[str, Callable[[], Story]] = {}
BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
MIB = 1024 * 1024


@dataclass
class Story:
    """One scenario under construction."""

    id: str
    title: str
    now: datetime
    report: str
    truth: dict[str, Any]
    hours: float = 3.0
    interventions: list[dict[str, Any]] = field(default_factory=list)
    nested_logs: bool = False

    def __post_init__(self) -> None:
        self.rng = random.Random(self.id)
        self.cluster = Cluster(self.now, self.id)
        self.logs = Logs(nested=self.nested_logs)
        self.metrics = Metrics()
        self.pod_logs: dict[str, str] = {}
        self.times = minutes(self.now, self.hours)

    def ago(self, **delta: float) -> datetime:
        return ago(self.now, **delta)

    def header(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "title": self.title,
                               "now": self.now.strftime("%Y-%m-%dT%H:%M:%SZ"),
                               "report": self.report.strip() + "\n", "truth": self.truth}
        if self.interventions:
            out["interventions"] = self.interventions
        return out

    def pod_log(self, pod: Obj, container: str, lines: Sequence[str], *,
                previous: bool = False) -> None:
        meta = pod["metadata"]
        suffix = ".previous.log" if previous else ".log"
        path = f"pod-logs/{meta['namespace']}/{meta['name']}/{container}{suffix}"
        self.pod_logs[path] = "".join(line + "\n" for line in lines)


def story(func: Callable[[], Story]) -> Callable[[], Story]:
    """Register a story under the id it builds (the function name with '-' for '_')."""
    STORIES[func.__name__.replace("_", "-")] = func
    return func


def truth(category: str, kind: str, namespace: str, name: str, evidence: list[str],
          fix: str) -> dict[str, Any]:
    return {"category": category,
            "culprit": {"kind": kind, "namespace": namespace, "name": name},
            "evidence": evidence, "fix": fix}


# ------------------------------------------------------------------ cluster basics


def nodes(story: Story, count: int, *, subnet: int = 20, region: str = "eu-west-1",
          pool: str = "general", instance: str = "m6i.xlarge", days: float = 5.0,
          stagger_hours: float = 1.0, **kwargs: Any) -> list[Obj]:
    """`count` ordinary nodes spread across three zones."""
    out = []
    for i in range(count):
        ip = f"10-{subnet}-{i % 3 + 1}-{story.rng.randrange(10, 250)}"
        out.append(story.cluster.node(
            f"ip-{ip}.{region}.compute.internal",
            created=story.ago(days=days, hours=i * stagger_hours),
            zone=f"{region}{'abc'[i % 3]}", pool=pool, instance=instance, **kwargs))
    return out


def namespaces(story: Story, *names: str) -> None:
    for name in ("default", "kube-system", *names):
        story.cluster.namespace(name, story.ago(days=200 if name in {"default", "kube-system"}
                                                else 90 + len(name)))


def simple_deployment(story: Story, namespace: str, name: str, image: str, *,
                      replicas: int, node_list: list[Obj], revision: int = 3,
                      rollout: datetime | None = None, port: int = 8080,
                      memory: str = "256Mi", cpu: str = "100m",
                      ctr: Ctr | None = None, template: Template | None = None,
                      restarts: dict[int, Obj] | None = None, service: bool = True,
                      ) -> tuple[Any, list[Obj]]:
    """A healthy Deployment with one revision's pods, ready since the rollout."""
    rollout = rollout or story.ago(days=story.rng.uniform(1.5, 6.0))
    container = ctr or Ctr(name, image, port=port, requests={"cpu": cpu, "memory": memory},
                           limits={"memory": memory},
                           readiness=http_probe("/healthz", delay=5),
                           liveness=http_probe("/healthz", delay=15, period=20))
    tpl = template or Template([container], service_account=name)
    work = story.cluster.workload("Deployment", namespace, name, tpl, replicas=replicas,
                                  created=rollout - timedelta(days=60))
    rs = story.cluster.revision(work, revision, rollout, replicas=replicas)
    pods = []
    for i in range(replicas):
        node = node_list[i % len(node_list)]
        node_born = datetime.fromisoformat(
            node["metadata"]["creationTimestamp"].replace("Z", "+00:00"))
        started = max(rollout, node_born + timedelta(seconds=60)) + timedelta(seconds=20 + 25 * i)
        status = (restarts or {}).get(i) or running(started)
        statuses = {c.name: status if c.name == container.name else running(started)
                    for c in tpl.containers}
        pods.append(story.cluster.pod(work, rs, node=node, created=started - timedelta(seconds=8),
                                      statuses=statuses))
    if service:
        story.cluster.service(namespace, name, dict(work.obj["spec"]["selector"]["matchLabels"]),
                              created=rollout - timedelta(days=60))
    return work, pods


def kube_system(story: Story, node_list: list[Obj]) -> list[Obj]:
    """CoreDNS and kube-proxy, as every EKS cluster has them."""
    tpl = Template([Ctr("coredns", "602401143452.dkr.ecr.eu-west-1.amazonaws.com/eks/coredns:"
                        "v1.11.4-eksbuild.2", port=53, port_name="dns",
                        requests={"cpu": "100m", "memory": "70Mi"}, limits={"memory": "170Mi"},
                        readiness=http_probe("/ready", 8181), args=["-conf", "/etc/coredns/"
                                                                   "Corefile"])],
                   service_account="coredns")
    _, pods = simple_deployment(story, "kube-system", "coredns", "", replicas=2,
                                   node_list=node_list, revision=2, template=tpl,
                                   service=False)
    proxy = Template([Ctr("kube-proxy", "602401143452.dkr.ecr.eu-west-1.amazonaws.com/eks/"
                          "kube-proxy:v1.33.3-minimal-eksbuild.6", port=None,
                          requests={"cpu": "100m"}, limits={},
                          command=["kube-proxy", "--v=2", "--config=/var/lib/kube-proxy-config/"
                                   "config"])], service_account="kube-proxy",
                     tolerations=[{"operator": "Exists"}])
    ds = story.cluster.workload("DaemonSet", "kube-system", "kube-proxy", proxy,
                                created=story.ago(days=200),
                                labels={"k8s-app": "kube-proxy", "app": "kube-proxy"})
    rev = story.cluster.revision(ds, 4, story.ago(days=30))
    for node in node_list:
        start = datetime.fromisoformat(
            node["metadata"]["creationTimestamp"].replace("Z", "+00:00")) + timedelta(seconds=30)
        pods.append(story.cluster.pod(ds, rev, node=node, created=start,
                                      statuses={"kube-proxy": running(start)}))
    return pods


# ------------------------------------------------------------------ metrics


def container_metrics(story: Story, pod: Obj, container: str, *,
                      memory: Callable[[int], float | None],
                      cpu: Callable[[int], float] | None = None,
                      restarts: Sequence[int] = (), restart_base: int = 0,
                      throttle: Callable[[int], float] | None = None,
                      limit_memory: float | None = None, limit_cpu: float | None = None,
                      ) -> None:
    """cAdvisor and kube-state-metrics series of one container.

    `memory` gives bytes and `cpu` cores at a time; `restarts` are the kill times inside
    the window (the restart counter rises by one at each, the CPU counters reset). Without
    `cpu` only memory and restarts are written: enough for a neighbour, and small. CFS
    throttling counters exist only with `limit_cpu`, as in cAdvisor.
    """
    m, rng = story.metrics, story.rng
    labels = {"namespace": pod["metadata"]["namespace"], "pod": pod["metadata"]["name"],
              "container": container}
    times = _alive(story, pod)
    m.gauge("container_memory_working_set_bytes", labels,
            gauge_points(times, memory, rng, 0.01), "Current working set of the container in "
            "bytes")
    count = [(t, restart_base + sum(1 for r in restarts if r <= t)) for t in times]
    if cpu is None and not (restarts or restart_base):
        return
    m.counter("kube_pod_container_status_restarts_total", labels, count,
              "The number of container restarts per container.")
    if cpu is None:
        return
    m.counter("container_cpu_usage_seconds_total", labels,
              integrate(times, cpu, start=rng.uniform(500, 5000), resets=restarts, rng=rng,
                        whole=False), "Cumulative cpu time consumed in seconds.")
    if limit_memory:
        m.gauge("kube_pod_container_resource_limits",
                {**labels, "resource": "memory", "unit": "byte"},
                [(t, limit_memory) for t in times], "The number of requested limit resource "
                "by a container.")
    if not limit_cpu:
        return  # cAdvisor has CFS counters only for containers with a CPU quota
    m.gauge("kube_pod_container_resource_limits", {**labels, "resource": "cpu", "unit": "core"},
            [(t, limit_cpu) for t in times], "The number of requested limit resource by a "
            "container.")
    periods = 10.0  # 100ms CFS periods per second while the container is busy
    throttled = throttle or (lambda t: 0.01)
    m.counter("container_cpu_cfs_periods_total", labels,
              integrate(times, lambda t: periods, start=rng.randrange(10_000, 90_000),
                        resets=restarts, rng=rng), "Number of elapsed enforcement period "
              "intervals.")
    m.counter("container_cpu_cfs_throttled_periods_total", labels,
              integrate(times, lambda t: periods * throttled(t),
                        start=rng.randrange(10, 900), resets=restarts, rng=rng),
              "Number of throttled period intervals.")


def http_metrics(story: Story, service: str, pod: Obj, *, rps: Callable[[int], float],
                 codes: dict[str, Callable[[int], float]], median: Callable[[int], float],
                 resets: Sequence[int] = (), histogram: bool = False) -> None:
    """The app's own request counters (by status code) and latency histogram.

    `codes` maps a status code to its share of `rps` at a time; shares need not sum to 1.
    """
    labels = {"namespace": pod["metadata"]["namespace"], "service": service,
              "pod": pod["metadata"]["name"]}
    times = _alive(story, pod)
    for code, share in codes.items():
        story.metrics.counter(
            "http_requests_total", {**labels, "code": code},
            integrate(times, lambda t, s=share: rps(t) * s(t), resets=resets,
                      start=story.rng.randrange(1000, 90_000) if not resets else 0,
                      rng=story.rng),
            "Total number of HTTP requests by status code.")
    if histogram:
        fam = story.metrics.family("http_request_duration_seconds", "histogram",
                                   "HTTP request latency in seconds.", buckets=BUCKETS)
        fam.add(labels, histogram_points(times, BUCKETS, rps, median, story.rng, resets))


def _alive(story: Story, pod: Obj) -> list[int]:
    """The window's minutes during which the pod existed."""
    created = datetime.fromisoformat(pod["metadata"]["creationTimestamp"].replace("Z", "+00:00"))
    end = pod["metadata"].get("_deleted")
    return [t for t in story.times if t >= created.timestamp() + 30
            and (end is None or t <= end)]


def daily(base: float, amplitude: float = 0.3, peak_hour: float = 13.0) -> Callable[[int], float]:
    """A daily traffic curve: `base` per second, highest around `peak_hour` UTC."""
    def value(t: int) -> float:
        hour = (t % 86400) / 3600
        return base * (1 + amplitude * math.cos((hour - peak_hour) / 24 * 2 * math.pi))
    return value


def const(v: float) -> Callable[[int], float]:
    return lambda t: v


def step(before: float, after: float, when: datetime) -> Callable[[int], float]:
    edge = when.timestamp()
    return lambda t: after if t >= edge else before


def deployment_metrics(story: Story, work: Any, available: Callable[[int], float] | None = None,
                       spec: Callable[[int], float] | None = None) -> None:
    labels = {"namespace": work.namespace, "deployment": work.name}
    desired = spec or const(work.replicas)
    story.metrics.gauge("kube_deployment_spec_replicas", labels,
                        [(t, desired(t)) for t in story.times],
                        "Number of desired pods for a deployment.")
    avail = available or const(work.replicas)
    story.metrics.gauge("kube_deployment_status_replicas_available", labels,
                        [(t, avail(t)) for t in story.times],
                        "The number of available replicas per deployment.")


def node_conditions(story: Story, node_list: list[Obj],
                    override: dict[tuple[str, str], Callable[[int], bool]] | None = None) -> None:
    """kube_node_status_condition for every node; `override[(node, condition)]` says when
    the condition is true (Ready is true by default, the pressures false)."""
    for node in node_list:
        name = node["metadata"]["name"]
        for cond in ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure"):
            when = (override or {}).get((name, cond)) or (lambda t, c=cond: c == "Ready")
            if cond != "Ready" and not any(k[1] == cond for k in override or {}):
                continue  # the pressures are all false: only written when a story needs them
            for status in ("true", "false", "unknown"):
                def value(t: int, s: str = status, w: Callable[[int], bool] = when) -> float:
                    state = w(t)
                    now_status = "unknown" if state is None else ("true" if state else "false")
                    return 1.0 if now_status == s else 0.0
                story.metrics.gauge("kube_node_status_condition",
                                    {"node": name, "condition": cond, "status": status},
                                    [(t, value(t)) for t in story.times],
                                    "The condition of a cluster node.")


def mib(v: float) -> float:
    return v * MIB


def pods_running_since(pod: Obj) -> datetime:
    status = pod["status"]["containerStatuses"][0]["state"]
    return datetime.fromisoformat(status["running"]["startedAt"].replace("Z", "+00:00"))


def timeline_ok(when: datetime, now: datetime) -> bool:
    return now - timedelta(days=7) <= when <= now


def ago_s(story: Story, seconds: float) -> datetime:
    return story.now - timedelta(seconds=seconds)


def noise_logs(story: Story, pod: Obj, container: str, service: str,
               entries: Sequence[tuple[str, str, dict[str, Any]]], count: int,
               *, start: datetime | None = None, end: datetime | None = None) -> None:
    """`count` ordinary log lines for a pod, drawn from (level, message, fields) entries."""
    start = start or story.ago(hours=story.hours)
    end = end or story.now
    span = (end - start).total_seconds()
    node = pod["spec"].get("nodeName", "")
    for _ in range(count):
        level, message, fields = story.rng.choice(entries)
        when = start + timedelta(milliseconds=int(story.rng.uniform(0, span) * 1000))
        story.logs.add(when, level, message, namespace=pod["metadata"]["namespace"],
                       pod=pod["metadata"]["name"], container=container, service=service,
                       node=node, **fields)
