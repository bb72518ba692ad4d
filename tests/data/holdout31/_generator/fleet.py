"""Workloads and their signals: a Deployment with its ReplicaSets, pods, Service and
Endpoints in one call, the platform every cluster runs (CoreDNS, ingress, metrics), and
the metric series cAdvisor, kube-state-metrics and an HTTP middleware would export.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from . import kube
from .emit import Scenario, steps
from .kube import Obj

BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


@dataclass
class Node:
    name: str
    index: int  # pods on it get 10.42.<index>.x
    ip: str
    used: int = 10

    def pod_ip(self) -> str:
        self.used += 1
        return f"10.42.{self.index}.{self.used}"


@dataclass
class App:
    name: str
    ns: str
    deployment: Obj
    replicasets: list[Obj]
    pods: list[Obj] = field(default_factory=list)

    @property
    def pod_names(self) -> list[str]:
        return [p["metadata"]["name"] for p in self.pods]


def make_nodes(sc: Scenario, names: Sequence[str], *, created: datetime, labels: dict[str, str],
               first_index: int = 1, cpu: str = "8", memory: str = "32Gi") -> list[Node]:
    nodes = []
    for offset, name in enumerate(names):
        index = first_index + offset
        ip = f"10.0.{index // 4 + 1}.{20 + index}"
        sc.add(kube.node(name, created, labels=labels, cpu=cpu, memory=memory,
                         ready_since=created + timedelta(minutes=1),
                         heartbeat=sc.now - timedelta(seconds=23 + offset * 7), internal_ip=ip))
        nodes.append(Node(name, index, ip))
    return nodes


def app(sc: Scenario, rng: random.Random, name: str, ns: str, *,
        containers: Callable[[str], list[Obj]], images: Sequence[tuple[str, datetime]],
        replicas: int, nodes: Sequence[Node], created: datetime, port: int | None = 8080,
        pod_started: datetime | None = None, extra_labels: dict[str, str] | None = None,
        spec_extra: dict[str, object] | None = None, service: bool = True,
        restarts: Callable[[int], int] | None = None, add_pods: bool = True,
        serving: int | None = None, new_desired: int = 0) -> App:
    """A Deployment whose revisions ran `images` (oldest first; the last is current),
    its ReplicaSets, `replicas` running pods of the current revision, and a Service.

    `serving` (1-based) names the revision whose pods run when a rollout is stuck; the
    newest ReplicaSet then wants `new_desired` pods and has none."""
    serving = serving or len(images)
    labels = {"app": name, **(extra_labels or {})}
    replicasets = []
    current_spec: Obj = {}
    newest_spec: Obj = {}
    for revision, (image, rs_created) in enumerate(images, start=1):
        spec = kube.pod_spec(containers(image), **(spec_extra or {}))  # type: ignore[arg-type]
        template_hash = kube.pod_hash(f"{ns}/{name}/{revision}/{image}")
        wanted = replicas if revision == serving else 0
        if revision == len(images) and revision != serving:
            wanted = new_desired
        replicasets.append(kube.replicaset(
            name, ns, template_hash=template_hash, spec=spec, labels=labels,
            replicas=wanted, created=rs_created, revision=revision,
            ready=0 if revision != serving else None))
        if revision == serving:
            current_spec = spec
        if revision == len(images):
            newest_spec = spec
    last_created = images[serving - 1][1]
    deploy = kube.deployment(name, ns, template_labels=labels, spec=newest_spec,
                             replicas=replicas, created=created, revision=len(images),
                             labels={"app": name, **({"app.kubernetes.io/part-of": ns})})
    serving_rs = replicasets[serving - 1]["metadata"]["name"]
    for condition in deploy["status"]["conditions"]:
        condition["lastUpdateTime"] = kube.ts(last_created + timedelta(seconds=40))
        if condition["type"] == "Progressing":
            condition["message"] = f'ReplicaSet "{serving_rs}" has successfully progressed.'
            condition["lastTransitionTime"] = condition["lastUpdateTime"]
    result = App(name, ns, deploy, replicasets)
    sc.add(deploy, *replicasets)
    if add_pods:
        template_hash = replicasets[serving - 1]["metadata"]["labels"]["pod-template-hash"]
        for index in range(replicas):
            host = nodes[index % len(nodes)]
            started = pod_started or (last_created + timedelta(seconds=5 + 20 * index))
            count = restarts(index) if restarts else 0
            statuses = [kube.running(c["name"], c["image"], started + timedelta(seconds=3),
                                     restarts=count) for c in current_spec["containers"]]
            result.pods.append(kube.pod(
                f"{name}-{template_hash}-{kube.suffix(rng)}", ns,
                owner=("apps/v1", "ReplicaSet", f"{name}-{template_hash}"),
                labels={**labels, "pod-template-hash": template_hash}, spec=current_spec,
                created=started, node_name=host.name, ip=host.pod_ip(), host_ip=host.ip,
                statuses=statuses))
        sc.add(*result.pods)
    if service and port:
        sc.add(kube.service(name, ns, selector={"app": name}, port=80, target="http",
                            created=created, cluster_ip=f"10.96.{rng.randint(1, 250)}."
                            f"{rng.randint(2, 250)}"),
               kube.endpoints(name, ns, pods=result.pods, port=port, created=created))
    return result


def simple(name: str, *, port: int | None = 8080, cpu: str = "100m", memory: str = "256Mi",
           limit_memory: str | None = "512Mi", limit_cpu: str | None = None,
           env: dict[str, str] | None = None, probe: str | None = "/healthz"
           ) -> Callable[[str], list[Obj]]:
    """One-container pods: the shape most bystanders have."""
    def build(image: str) -> list[Obj]:
        limits = {k: v for k, v in (("cpu", limit_cpu), ("memory", limit_memory)) if v}
        return [kube.container(name, image, requests={"cpu": cpu, "memory": memory},
                               limits=limits or None, port=port, env=env,
                               readiness=probe, liveness=probe)]
    return build


def platform(sc: Scenario, rng: random.Random, nodes: Sequence[Node], created: datetime,
             *, since: datetime) -> list[App]:
    """kube-system and ingress bystanders: CoreDNS, metrics-server, ingress-nginx."""
    sc.add(kube.namespace("default", created), kube.namespace("kube-system", created),
           kube.namespace("ingress-nginx", created),
           kube.namespace("monitoring", created))
    coredns = app(sc, rng, "coredns", "kube-system", replicas=2, nodes=nodes, created=created,
                  images=[("registry.k8s.io/coredns/coredns:v1.11.1", created)], port=None,
                  pod_started=since, extra_labels={"k8s-app": "kube-dns"},
                  containers=simple("coredns", port=None, memory="70Mi", limit_memory="170Mi",
                                    probe=None))
    sc.add(kube.service("kube-dns", "kube-system", selector={"k8s-app": "kube-dns"}, port=53,
                        target=53, port_name="dns", created=created, cluster_ip="10.96.0.10",
                        labels={"k8s-app": "kube-dns"}))
    metrics_server = app(sc, rng, "metrics-server", "kube-system", replicas=1, nodes=nodes,
                         created=created, port=None, pod_started=since,
                         images=[("registry.k8s.io/metrics-server/metrics-server:v0.7.1",
                                  created)],
                         containers=simple("metrics-server", port=None, probe=None))
    ingress = app(sc, rng, "ingress-nginx-controller", "ingress-nginx", replicas=2,
                  nodes=nodes, created=created, port=80, pod_started=since,
                  images=[("registry.k8s.io/ingress-nginx/controller:v1.11.2", created)],
                  containers=simple("controller", port=80, cpu="100m", memory="90Mi",
                                    probe="/healthz"))
    prometheus = app(sc, rng, "prometheus-server", "monitoring", replicas=1, nodes=nodes,
                     created=created, port=9090, pod_started=since,
                     images=[("quay.io/prometheus/prometheus:v2.54.1", created)],
                     containers=simple("prometheus-server", port=9090, cpu="500m",
                                       memory="2Gi", limit_memory="4Gi", probe="/-/ready"))
    return [coredns, metrics_server, ingress, prometheus]


def chatter(sc: Scenario, target: App, start: datetime, end: datetime, every: timedelta,
            lines: Sequence[tuple[str, str]], rng: random.Random, *,
            container: str | None = None, pod_log: bool = True) -> None:
    """Routine output of a healthy workload: (level, message) drawn at random."""
    name = container or target.name
    for pod_obj in target.pods:
        pod_name = pod_obj["metadata"]["name"]
        at = start + timedelta(seconds=rng.randint(0, int(every.total_seconds())))
        while at <= end:
            level, message = rng.choice(lines)
            text = message.format(ms=rng.randint(3, 90), n=rng.randint(1, 400),
                                  id=f"{rng.getrandbits(48):012x}")
            sc.doc(at, service=target.name, ns=target.ns, pod=pod_name, container=name,
                   level=level, message=text)
            if pod_log:
                sc.log(target.ns, pod_name, name, at, f"{level.upper():5} {text}")
            at += every + timedelta(seconds=rng.randint(0, int(every.total_seconds())))


# --- metrics -------------------------------------------------------------------------


def cpu_series(sc: Scenario, ns: str, pod: str, container: str, times: Sequence[datetime],
               cores: Callable[[datetime], float], *, limit: float | None = None,
               throttle: Callable[[datetime], float] | None = None) -> None:
    """cAdvisor CPU counters; `throttle` is the share of CFS periods throttled."""
    labels = {"namespace": ns, "pod": pod, "container": container}
    total = 1000.0 + random.Random(pod + container).random() * 500
    periods = 50000.0
    throttled = 120.0
    for previous, at in itertools.pairwise(times):
        seconds = (at - previous).total_seconds()
        total += max(cores(at), 0.0) * seconds
        sc.sample("container_cpu_usage_seconds_total", "counter", labels, at, total,
                  "Cumulative cpu time consumed in seconds.")
        if limit is not None:
            count = seconds / 0.1
            periods += count
            throttled += count * (throttle(at) if throttle else 0.0)
            sc.sample("container_cpu_cfs_periods_total", "counter", labels, at, periods,
                      "Number of elapsed enforcement period intervals.")
            sc.sample("container_cpu_cfs_throttled_periods_total", "counter", labels, at,
                      throttled, "Number of throttled period intervals.")
    if limit is not None:
        for at in times[1:]:
            sc.sample("kube_pod_container_resource_limits", "gauge",
                      {**labels, "resource": "cpu", "unit": "core", "node": ""}, at, limit,
                      "The number of requested limit resource by a container.")


def memory_series(sc: Scenario, ns: str, pod: str, container: str, times: Sequence[datetime],
                  working_set: Callable[[datetime], float | None], *,
                  limit: float | None = None) -> None:
    labels = {"namespace": ns, "pod": pod, "container": container}
    for at in times:
        value = working_set(at)
        if value is None:
            continue
        sc.sample("container_memory_working_set_bytes", "gauge", labels, at, float(int(value)),
                  "Current working set in bytes.")
        if limit is not None:
            sc.sample("kube_pod_container_resource_limits", "gauge",
                      {**labels, "resource": "memory", "unit": "byte", "node": ""}, at, limit,
                      "The number of requested limit resource by a container.")


def _lognormal_cdf(x: float, median: float, sigma: float) -> float:
    return 0.5 * (1 + math.erf((math.log(x) - math.log(median)) / (sigma * math.sqrt(2))))


def http_series(sc: Scenario, ns: str, pod: str, service: str, times: Sequence[datetime],
                rps: Callable[[datetime], float], errors: Callable[[datetime], float],
                median: Callable[[datetime], float], *, sigma: float = 0.6,
                container: str | None = None, path: str = "/") -> None:
    """Request counters by status and a latency histogram for one pod."""
    base = {"namespace": ns, "pod": pod, "service": service, "container": container or service}
    rng = random.Random(pod + path)
    ok = 10000.0 * rng.random() + 5000
    bad = float(int(ok * 0.0004))
    buckets = [ok * min(1.0, _lognormal_cdf(le, 0.04, sigma)) for le in BUCKETS]
    count = ok
    total_seconds = ok * 0.045
    for previous, at in itertools.pairwise(times):
        seconds = (at - previous).total_seconds()
        n = max(rps(at), 0.0) * seconds * (0.9 + 0.2 * rng.random())
        share = min(max(errors(at), 0.0), 1.0)
        bad += n * share
        ok += n * (1 - share)
        mid = median(at)
        for index, le in enumerate(BUCKETS):
            buckets[index] += n * min(1.0, _lognormal_cdf(le, mid, sigma))
        count += n
        total_seconds += n * mid * math.exp(sigma * sigma / 2)
        for code, value in (("200", ok), ("500", bad)):
            sc.sample("http_requests_total", "counter",
                      {**base, "method": "GET", "code": code}, at, float(int(value)),
                      "Total HTTP requests by status code.")
        for le, value in zip(BUCKETS, buckets, strict=True):
            sc.sample("http_request_duration_seconds_bucket", "histogram",
                      {**base, "le": f"{le:g}"}, at, float(int(value)),
                      "HTTP request latency.")
        sc.sample("http_request_duration_seconds_bucket", "histogram",
                  {**base, "le": "+Inf"}, at, float(int(count)), "HTTP request latency.")
        sc.sample("http_request_duration_seconds_count", "histogram", base, at,
                  float(int(count)), "HTTP request latency.")
        sc.sample("http_request_duration_seconds_sum", "histogram", base, at,
                  round(total_seconds, 3), "HTTP request latency.")


def restarts_series(sc: Scenario, ns: str, pod: str, container: str,
                    times: Sequence[datetime], count: Callable[[datetime], int]) -> None:
    labels = {"namespace": ns, "pod": pod, "container": container, "uid": kube.uid("Pod", ns, pod)}
    for at in times:
        sc.sample("kube_pod_container_status_restarts_total", "counter", labels, at,
                  float(count(at)), "The number of container restarts per container.")


def basic_signals(sc: Scenario, target: App, start: datetime, end: datetime, *,
                  cores: float = 0.08, mem_mib: float = 180, rps: float = 0.0,
                  median: float = 0.03, step: timedelta = timedelta(minutes=5),
                  container: str | None = None) -> None:
    """Flat, healthy CPU, memory and (when `rps`) HTTP series for each pod of a workload,
    from the pod's creation on."""
    name = container or target.name
    for pod_obj in target.pods:
        pod_name = pod_obj["metadata"]["name"]
        born = datetime.fromisoformat(
            pod_obj["metadata"]["creationTimestamp"].replace("Z", "+00:00"))
        times = [t for t in steps(start, end, step) if t > born]
        rng = random.Random(pod_name)
        cpu_series(sc, target.ns, pod_name, name, times,
                   lambda _at, r=rng: cores * (0.8 + 0.4 * r.random()))
        memory_series(sc, target.ns, pod_name, name, times,
                      lambda _at, r=rng: mem_mib * 2**20 * (0.97 + 0.06 * r.random()))
        if rps:
            http_series(sc, target.ns, pod_name, target.name, times, lambda _at: rps,
                        lambda _at: 0.0005, lambda _at: median, container=name)
