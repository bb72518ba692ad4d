"""What the second held-out set adds to the first one's building blocks: nodes of other
providers (DigitalOcean, Linode, Oracle, Scaleway, Cluster API on OpenStack, bare metal
racks, Karpenter), a Deployment helper that knows its pods' names before it makes them,
StatefulSets with their claims, crash-loop runs turned into status, events and metrics."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from tests.data.holdout._generator.base import alive, fix_pod_ips, parse
from tests.scenario_tools.common import MIB, Story
from tests.scenario_tools.kube import Ctr, Obj, Template, Workload, iso, running
from tests.scenario_tools.sim import MAX_BACKOFF, RESET_AFTER, Run
from tests.scenario_tools.telemetry import (
    Family,
    _labels,
    gauge_points,
    histogram_points,
    integrate,
)

Fix = Callable[[list[Obj]], None]


@dataclass
class Incident(Story):
    """A story with fixes applied to the objects after the controllers' derivation."""

    fixes: list[Fix] = field(default_factory=list)


def at(story: Story, **delta: float) -> datetime:
    return story.now - timedelta(**delta)


# ------------------------------------------------------------------ nodes


def _hash(*parts: str, n: int = 32) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()[:n]


def _guid(*parts: str) -> str:
    x = _hash(*parts)
    return f"{x[:8]}-{x[8:12]}-{x[12:16]}-{x[16:20]}-{x[20:32]}"


@dataclass
class NodeKind:
    """What the nodes of one pool share."""

    instance: str
    cpu: str
    memory: str
    alloc_cpu: str
    alloc_memory: str
    kubelet: str
    kernel: str
    os_image: str
    runtime: str = "containerd://1.7.24"
    pods: str = "110"
    arch: str = "amd64"
    storage: str = "101430960Ki"
    alloc_storage: str = "93478772582"


def node(story: Story, name: str, *, ip: str, kind: NodeKind, created: datetime,
         region: str, zone: str, labels: dict[str, str], provider_id: str,
         pod_cidr: str | None = None, taints: Sequence[Obj] = (),
         hostname: str | None = None) -> Obj:
    """A Node of any provider: the library's node with the provider's labels and ids."""
    obj = story.cluster.node(name, created=created, zone=zone + "x", instance=kind.instance,
                             cpu=kind.cpu, memory=kind.memory, allocatable_cpu=kind.alloc_cpu,
                             allocatable_memory=kind.alloc_memory,
                             taints=list(taints) or None)
    meta_labels = obj["metadata"]["labels"]
    meta_labels.pop("eks.amazonaws.com/nodegroup")
    meta_labels.update({"kubernetes.io/arch": kind.arch, "kubernetes.io/hostname":
                        hostname or name, "topology.kubernetes.io/region": region,
                        "topology.kubernetes.io/zone": zone, **labels})
    if not region:
        meta_labels.pop("topology.kubernetes.io/region")
    if not zone:
        meta_labels.pop("topology.kubernetes.io/zone")
    obj["metadata"]["labels"] = dict(sorted(meta_labels.items()))
    spec: Obj = {}
    if pod_cidr:
        spec.update({"podCIDR": pod_cidr, "podCIDRs": [pod_cidr]})
    if provider_id:
        spec["providerID"] = provider_id
    if taints:
        spec["taints"] = list(taints)
    obj["spec"] = spec
    status = obj["status"]
    status["addresses"] = [{"type": "InternalIP", "address": ip},
                           {"type": "Hostname", "address": hostname or name}]
    status["allocatable"].update({"pods": kind.pods, "ephemeral-storage": kind.alloc_storage})
    status["capacity"].update({"pods": kind.pods, "ephemeral-storage": kind.storage})
    info = {"architecture": kind.arch, "bootID": _guid(story.id, "boot", name),
            "containerRuntimeVersion": kind.runtime, "kernelVersion": kind.kernel,
            "kubeProxyVersion": kind.kubelet, "kubeletVersion": kind.kubelet,
            "machineID": _hash(story.id, "machine", name), "operatingSystem": "linux",
            "osImage": kind.os_image, "systemUUID": _guid(story.id, "system", name)}
    status["nodeInfo"] = dict(sorted(info.items()))
    return obj


# ------------------------------------------------------------------ workloads


Statuses = Callable[[int, str, datetime], dict[str, Obj]]


def deploy(s: Story, ns: str, name: str, ctrs: Sequence[Ctr], *, replicas: int,
           nodes: Sequence[Obj], revision: int, rollout: datetime,
           init: Sequence[Ctr] = (), labels: dict[str, str] | None = None,
           statuses: Statuses | None = None, init_statuses: Statuses | None = None,
           born: Callable[[int], datetime] | None = None,
           service: int | None = 80, target: int | str = "http", sa: str | None = None,
           annotations: dict[str, str] | None = None, volumes: Sequence[Obj] = (),
           offset: int = 0, tolerations: Sequence[Obj] = (),
           node_selector: dict[str, str] | None = None, pull_secrets: Sequence[str] = (),
           created: datetime | None = None, old: tuple[int, datetime, Sequence[Ctr]] |
           None = None, template_labels: dict[str, str] | None = None,
           old_template_labels: dict[str, str] | None = None,
           strategy: Obj | None = None) -> tuple[Workload, list[Obj]]:
    """A Deployment at `revision` (rolled out at `rollout`) with `replicas` pods of it.

    `statuses(i, pod_name, started)` gives container states by name (default: running since
    `started`), `init_statuses` the init containers'. `old` = (revision, created, containers)
    adds the previous ReplicaSet, scaled to zero. `born(i)` sets a pod's creation time.
    """
    c = s.cluster

    def template(containers: Sequence[Ctr], extra: dict[str, str] | None) -> Template:
        return Template(list(containers), init=list(init), service_account=sa or name,
                        labels=dict(extra or {}), annotations=dict(annotations or {}),
                        volumes=list(volumes), tolerations=list(tolerations),
                        node_selector=dict(node_selector or {}),
                        image_pull_secrets=list(pull_secrets))
    tpl = template(ctrs, template_labels)
    work = c.workload("Deployment", ns, name, tpl, replicas=replicas,
                      created=created or rollout - timedelta(days=s.rng.uniform(60, 400)),
                      labels=labels or {"app.kubernetes.io/name": name},
                      extra_spec={"strategy": strategy} if strategy else None)
    if old is not None:
        number, when, old_ctrs = old
        c.revision(work, number, when, template(old_ctrs, old_template_labels), replicas=0)
    rs = c.revision(work, revision, rollout, replicas=replicas)
    pods = []
    for i in range(replicas):
        where = nodes[(i + offset) % len(nodes)]
        node_born = parse(where["metadata"]["creationTimestamp"]) + timedelta(minutes=2)
        when = born(i) if born else max(rollout, node_born) + timedelta(
            seconds=4 + 19 * i + s.rng.randrange(0, 7))
        pod_name = f"{rs['metadata']['name']}-{c.token(5)}"
        started = when + timedelta(seconds=s.rng.randrange(5, 13))
        states = statuses(i, pod_name, started) if statuses else {}
        full = {x.name: states.get(x.name) or running(started) for x in ctrs}
        inits = init_statuses(i, pod_name, started) if init_statuses else None
        pods.append(c.pod(work, rs, node=where, created=when, statuses=full,
                          init_statuses=inits, name=pod_name))
    if service:
        c.service(ns, name, dict(work.obj["spec"]["selector"]["matchLabels"]), port=service,
                  target=target, created=parse(work.obj["metadata"]["creationTimestamp"]),
                  labels=dict(work.obj["metadata"].get("labels") or {}))
    fix_pod_ips(s)  # the pod IPs the nodes' ranges give: stories quote them in events
    return work, pods


def statefulset(s: Story, ns: str, name: str, tpl: Template, *, replicas: int,
                nodes: Sequence[Obj], revisions: Sequence[tuple[int, datetime, Template]],
                pod_revision: Callable[[int], int], born: Callable[[int], datetime],
                statuses: Callable[[int, datetime], dict[str, Obj]] | None = None,
                claim: tuple[str, str, str] | None = None, labels: dict[str, str] | None = None,
                created: datetime, service: str | None = None,
                selected: Callable[[int], Obj] | None = None,
                pending: dict[int, str] | None = None) -> tuple[Workload, list[Obj]]:
    """A StatefulSet with its revisions (number, created, template), its pods (pod i of
    revision `pod_revision(i)`, created `born(i)`) and, with `claim` = (name, size, class),
    one bound claim a pod. `pending[i]` leaves pod i unscheduled with that message."""
    c = s.cluster
    work = c.workload("StatefulSet", ns, name, tpl, replicas=replicas, created=created,
                      labels=labels)
    work.obj["spec"]["serviceName"] = service or name
    work.obj["spec"]["updateStrategy"] = {"type": "RollingUpdate",
                                          "rollingUpdate": {"partition": 0}}
    work.obj["spec"]["revisionHistoryLimit"] = 10
    work.obj["spec"]["persistentVolumeClaimRetentionPolicy"] = {"whenDeleted": "Retain",
                                                                "whenScaled": "Retain"}
    revs = {number: c.revision(work, number, when, t) for number, when, t in revisions}
    if claim:
        claim_name, size, klass = claim
        work.obj["spec"]["volumeClaimTemplates"] = [{
            "apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": claim_name},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {
                "storage": size}}, "storageClassName": klass, "volumeMode": "Filesystem"},
            "status": {"phase": "Pending"}}]
    pods = []
    for i in range(replicas):
        rev = revs[pod_revision(i)]
        when = born(i)
        where = nodes[i % len(nodes)]
        started = when + timedelta(seconds=s.rng.randrange(3, 9))
        pod_tpl: Template = rev["_template"]
        if pending and i in pending:
            pod = c.pod(work, rev, node=None, created=when, statuses={},
                        name=f"{name}-{i}", scheduled_message=pending[i])
        else:
            states = statuses(i, started) if statuses else {}
            full = {x.name: states.get(x.name) or running(started) for x in pod_tpl.containers}
            pod = c.pod(work, rev, node=where, created=when, statuses=full, name=f"{name}-{i}")
        pod["metadata"]["labels"]["apps.kubernetes.io/pod-index"] = str(i)
        pod["spec"]["hostname"] = f"{name}-{i}"
        pod["spec"]["subdomain"] = service or name
        if claim:
            claim_name, size, klass = claim
            pod["spec"]["volumes"] = [{"name": claim_name, "persistentVolumeClaim": {
                "claimName": f"{claim_name}-{name}-{i}"}}, *pod["spec"].get("volumes", [])]
            home = selected(i) if selected else where
            pvc(s, ns, f"{claim_name}-{name}-{i}", size, klass, created=created + timedelta(
                seconds=40 * i + 2), node_name=home["metadata"]["name"],
                labels=dict(work.obj["spec"]["selector"]["matchLabels"]))
        pods.append(pod)
    fix_pod_ips(s)
    return work, pods


def pvc(s: Story, ns: str, name: str, size: str, klass: str, *, created: datetime,
        node_name: str, labels: dict[str, str] | None = None,
        provisioner: str = "", capacity: str | None = None) -> Obj:
    c = s.cluster
    annotations = {"pv.kubernetes.io/bind-completed": "yes",
                   "pv.kubernetes.io/bound-by-controller": "yes",
                   "volume.kubernetes.io/selected-node": node_name}
    if provisioner:
        annotations["volume.beta.kubernetes.io/storage-provisioner"] = provisioner
        annotations["volume.kubernetes.io/storage-provisioner"] = provisioner
    return c.add({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                  "metadata": c.meta("PersistentVolumeClaim", name, ns, created, labels,
                                     annotations=annotations,
                                     finalizers=["kubernetes.io/pvc-protection"]),
                  "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {
                      "storage": size}}, "storageClassName": klass, "volumeMode": "Filesystem",
                      "volumeName": f"pvc-{c.uid('pv', ns, name)}"},
                  "status": {"accessModes": ["ReadWriteOnce"],
                             "capacity": {"storage": capacity or size}, "phase": "Bound"}})


def storage_class(s: Story, name: str, provisioner: str, params: dict[str, str], *,
                  created: datetime, mode: str = "WaitForFirstConsumer",
                  default: bool = False, reclaim: str = "Delete") -> Obj:
    c = s.cluster
    meta = c.meta("StorageClass", name, "", created)
    if default:
        meta["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    return c.add({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": meta,
                  "provisioner": provisioner, "parameters": dict(params),
                  "reclaimPolicy": reclaim, "volumeBindingMode": mode,
                  "allowVolumeExpansion": True})


# ------------------------------------------------------------------ container lives


def runs_from(first: datetime, now: datetime, life: Callable[[datetime], float], *,
              pull: float = 1.2, jitter: Callable[[], float] = lambda: 0.0) -> list[Run]:
    """Instances of a container that lives `life(start)` seconds, restarted by the kubelet
    with its back-off (10 s doubling to 5 min, reset after 10 min of life)."""
    runs: list[Run] = []
    start, backoff = first, 0.0
    while start <= now:
        death = start + timedelta(seconds=life(start))
        if death > now:
            runs.append(Run(start, None))
            break
        runs.append(Run(start, death))
        lived = (death - start).total_seconds()
        backoff = 10.0 if lived >= RESET_AFTER or backoff == 0 else min(backoff * 2, MAX_BACKOFF)
        start = death + timedelta(seconds=backoff + pull + jitter())
    return runs


def up_at(runs: Sequence[Run], t: float) -> Run | None:
    for r in runs:
        if r.start.timestamp() <= t and (r.end is None or t < r.end.timestamp()):
            return r
    return None


def kills(runs: Sequence[Run]) -> list[int]:
    """The restart times (starts after the first) as Unix seconds."""
    return [int(r.start.timestamp()) for r in runs[1:]]


def scraped(s: Story, runs: Sequence[Run], pod: Obj, grace: float = 20.0) -> list[int]:
    """The scrape times at which a container of `runs` was up long enough to be scraped."""
    return [t for t in alive(s, pod)
            if (r := up_at(runs, t)) is not None and t - r.start.timestamp() >= grace]


def app_counter(s: Story, name: str, labels: dict[str, str], times: Sequence[int],
                rate: Callable[[int], float], help_: str, *, resets: Sequence[int] = (),
                start: float | None = None) -> None:
    s.metrics.counter(name, labels, integrate(
        times, rate, start=s.rng.randrange(500, 90_000) if start is None else start,
        resets=resets, rng=s.rng), help_)


def requests(s: Story, pod: Obj, service: str, *, rps: Callable[[int], float],
             codes: dict[str, Callable[[int], float]], times: Sequence[int] | None = None,
             resets: Sequence[int] = (), extra: dict[str, str] | None = None,
             median: Callable[[int], float] | None = None,
             buckets: Sequence[float] = ()) -> None:
    """http_requests_total by code (and optionally the latency histogram) of one pod."""
    labels = {"namespace": pod["metadata"]["namespace"], "service": service,
              "pod": pod["metadata"]["name"], **(extra or {})}
    when = list(times) if times is not None else alive(s, pod)
    for code, share in codes.items():
        app_counter(s, "http_requests_total", {**labels, "code": code}, when,
                    product(rps, share),
                    "Total number of HTTP requests by status code.", resets=resets,
                    start=0 if resets else None)
    if median is not None and buckets:
        fam = s.metrics.family("http_request_duration_seconds", "histogram",
                               "HTTP request latency in seconds.", buckets=tuple(buckets))
        fam.add(labels, histogram_points(when, tuple(buckets), rps, median, s.rng, resets))


def working_set(s: Story, pod: Obj, container: str, value: Callable[[int], float | None],
                times: Sequence[int] | None = None) -> None:
    labels = {"namespace": pod["metadata"]["namespace"], "pod": pod["metadata"]["name"],
              "container": container}
    s.metrics.gauge("container_memory_working_set_bytes", labels,
                    gauge_points(times if times is not None else alive(s, pod), value, s.rng,
                                 0.006), "Current working set of the container in bytes")


def cpu_seconds(s: Story, pod: Obj, container: str, cores: Callable[[int], float],
                times: Sequence[int] | None = None, resets: Sequence[int] = ()) -> None:
    labels = {"namespace": pod["metadata"]["namespace"], "pod": pod["metadata"]["name"],
              "container": container}
    s.metrics.counter("container_cpu_usage_seconds_total", labels, integrate(
        times if times is not None else alive(s, pod), cores, start=s.rng.uniform(40, 9000)
        if not resets else 0.0, resets=resets, rng=s.rng, whole=False),
        "Cumulative cpu time consumed in seconds.")


def restarts_series(s: Story, pod: Obj, container: str, base: int, deaths: Sequence[int],
                    *, init: bool = False) -> None:
    labels = {"namespace": pod["metadata"]["namespace"], "pod": pod["metadata"]["name"],
              "container": container}
    name = ("kube_pod_init_container_status_restarts_total" if init
            else "kube_pod_container_status_restarts_total")
    s.metrics.counter(name, labels, [(t, base + sum(1 for d in deaths if d <= t))
                                     for t in alive(s, pod)],
                      "The number of restarts for the init container." if init else
                      "The number of container restarts per container.")


def limit_series(s: Story, pod: Obj, container: str, memory_bytes: float,
                 cpu: float | None = None, *, init: bool = False) -> None:
    labels = {"namespace": pod["metadata"]["namespace"], "pod": pod["metadata"]["name"],
              "container": container}
    name = ("kube_pod_init_container_resource_limits" if init
            else "kube_pod_container_resource_limits")
    times = alive(s, pod)
    s.metrics.gauge(name, {**labels, "resource": "memory", "unit": "byte"},
                    [(t, memory_bytes) for t in times],
                    "The number of requested limit resource by an init container." if init
                    else "The number of requested limit resource by a container.")
    if cpu:
        s.metrics.gauge(name, {**labels, "resource": "cpu", "unit": "core"},
                        [(t, cpu) for t in times],
                        "The number of requested limit resource by a container.")


def product(f: Callable[[int], float], g: Callable[[int], float]) -> Callable[[int], float]:
    return lambda t: f(t) * g(t)


def after(when: float, before: float = 0.0, then: float = 1.0) -> Callable[[int], float]:
    """`before` until `when` (Unix seconds), `then` from it on."""
    return lambda t: then if t >= when else before


def drift(s: Story, base: float, spread: float = 0.03, period: float = 1900.0
          ) -> Callable[[int], float]:
    phase = s.rng.uniform(0, 2 * math.pi)
    return lambda t: base * (1 + spread * math.sin(t / period + phase))


def plain(s: Story, pod: Obj, container: str, mib: float, cpu: float | None = None,
          restarts: int = 0) -> None:
    """An ordinary container: a working set near `mib`, CPU near `cpu` cores, its restarts."""
    working_set(s, pod, container, drift(s, mib * MIB))
    if cpu is not None:
        cpu_seconds(s, pod, container, lambda t: cpu * s.rng.uniform(0.85, 1.15))
    if restarts:
        restarts_series(s, pod, container, restarts, [])


def daily(peak_hour: float, amplitude: float = 0.3) -> Callable[[int], float]:
    def value(t: int) -> float:
        hour = (t % 86400) / 3600
        return 1 + amplitude * math.cos((hour - peak_hour) / 24 * 2 * math.pi)
    return value


def lines(start: datetime, entries: Sequence[tuple[float, str]]) -> list[str]:
    """Log lines `<RFC 3339 ms> <text>` at offsets (seconds) from `start`."""
    out = []
    for offset, text in entries:
        when = start + timedelta(seconds=offset)
        out.append(when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z "
                   + text)
    return out


def deleted(s: Story, ns: str, name: str, node_name: str, created: datetime,
            gone: datetime) -> dict[str, Any]:
    """A pod deleted before `now`: not in cluster.yaml, but in metrics and logs."""
    return {"kind": "Pod", "metadata": {"name": name, "namespace": ns,
                                        "creationTimestamp": iso(created),
                                        "_deleted": int(gone.timestamp())},
            "spec": {"nodeName": node_name}, "status": {}}


def set_condition(obj: Obj, kind: str, **fields: Any) -> None:
    for cond in obj["status"].get("conditions", []):
        if cond["type"] == kind:
            cond.update(fields)
            for key in [k for k, v in fields.items() if v is None]:
                cond.pop(key)


class SummaryFamily(Family):
    """A summary as client libraries expose it: quantile samples, then _count and _sum."""

    def render(self) -> list[str]:
        out = [f"# TYPE {self.name} summary", f"# HELP {self.name} {self.help}"]
        for labels, points in self.series:
            for q in sorted({q for _, quantiles, _, _ in points for q in quantiles}):
                text = _labels({**labels, "quantile": q})
                out.extend(f"{self.name}{text} {v[q]:g} {t}" for t, v, _, _ in points if q in v)
            text = _labels(labels)
            out.extend(f"{self.name}_count{text} {n:g} {t}" for t, _, n, _ in points)
            out.extend(f"{self.name}_sum{text} {round(total, 3):g} {t}"
                       for t, _, _, total in points)
        return out


def summary(s: Story, name: str, help_: str, labels: dict[str, str], times: Sequence[int],
            rate: Callable[[int], float], quantiles: dict[str, Callable[[int], float]],
            mean: Callable[[int], float]) -> None:
    """A summary series: `rate` observations a second, `quantiles` by name, sum from `mean`."""
    fam = s.metrics.families.get(name)
    if fam is None:
        fam = SummaryFamily(name, "summary", help_)
        s.metrics.families[name] = fam
    count = float(s.rng.randrange(20_000, 90_000))
    total = count * mean(times[0]) if times else 0.0
    points = []
    for i, t in enumerate(times):
        if i:
            n = round(rate(t) * (t - times[i - 1]) * s.rng.uniform(0.9, 1.1))
            count += n
            total += n * mean(t)
        points.append((t, {q: round(f(t) * s.rng.uniform(0.95, 1.05), 4)
                           for q, f in quantiles.items()}, count, total))
    fam.add(labels, points)


def crash_events(s: Story, pod: Obj, container: str, runs: Sequence[Run], image: str, *,
                 fresh_pull: bool = False, init: bool = False, pull_seconds: float = 2.4,
                 size: int = 48_211_306) -> None:
    """The kubelet's events of a container restarted after each death: the pull of a new
    image at the first start, Pulled/Created/Started aggregated over the starts, and the
    back-off between them (counted as the kubelet's ten-second syncs during each wait)."""
    c = s.cluster
    field_ = f"spec.{'initContainers' if init else 'containers'}{{{container}}}"
    starts = [r.start for r in runs]
    first = starts[0]
    present = starts[1:] if fresh_pull else starts
    if fresh_pull:
        c.event(pod, "Pulling", f'Pulling image "{image}"',
                first=first - timedelta(seconds=pull_seconds + 0.4), field_path=field_)
        c.event(pod, "Pulled", f'Successfully pulled image "{image}" in {pull_seconds:.3f}s '
                f"({pull_seconds:.3f}s including waiting). Image size: {size} bytes.",
                first=first - timedelta(seconds=0.3), field_path=field_)
    if present:
        c.event(pod, "Pulled", f'Container image "{image}" already present on machine',
                first=present[0] - timedelta(seconds=0.2), last=present[-1] -
                timedelta(seconds=0.2), count=len(present), field_path=field_)
    c.event(pod, "Created", f"Created container: {container}", first=first - timedelta(
        seconds=0.1), last=starts[-1] - timedelta(seconds=0.1), count=len(starts),
        field_path=field_)
    c.event(pod, "Started", f"Started container {container}", first=first, last=starts[-1],
            count=len(starts), field_path=field_)
    waits: list[tuple[datetime, datetime]] = []
    for i, r in enumerate(runs):
        if r.end is None:
            break
        resume = runs[i + 1].start if i + 1 < len(runs) else s.now
        waits.append((r.end, resume))
    if waits:
        meta = pod["metadata"]
        count = sum(max(1, int((b - a).total_seconds() // 10)) for a, b in waits)
        last = min(s.now - timedelta(seconds=s.rng.uniform(2, 9)), waits[-1][1])
        c.event(pod, "BackOff", f"Back-off restarting failed container {container} in pod "
                f"{meta['name']}_{meta['namespace']}({meta['uid']})",
                first=waits[0][0] + timedelta(seconds=1), last=last, count=count,
                type_="Warning", field_path=field_)


def start_events(s: Story, pod: Obj, *, scheduled: datetime, started: datetime,
                 pull: float | None = None, size: int = 0) -> None:
    """Scheduled, then for each container: the pull (or the image already present),
    Created and Started, as a pod that started once shows them."""
    c = s.cluster
    meta = pod["metadata"]
    c.event(pod, "Scheduled", f"Successfully assigned {meta['namespace']}/{meta['name']} to "
            f"{pod['spec']['nodeName']}", first=scheduled, component="default-scheduler",
            host="")
    for ctr in pod["spec"]["containers"]:
        field_ = f"spec.containers{{{ctr['name']}}}"
        image = ctr["image"]
        if pull is None:
            c.event(pod, "Pulled", f'Container image "{image}" already present on machine',
                    first=started - timedelta(seconds=0.4), field_path=field_)
        else:
            c.event(pod, "Pulling", f'Pulling image "{image}"',
                    first=started - timedelta(seconds=pull + 0.6), field_path=field_)
            c.event(pod, "Pulled", f'Successfully pulled image "{image}" in {pull:.3f}s '
                    f"({pull:.3f}s including waiting). Image size: {size} bytes.",
                    first=started - timedelta(seconds=0.4), field_path=field_)
        c.event(pod, "Created", f"Created container: {ctr['name']}",
                first=started - timedelta(seconds=0.2), field_path=field_)
        c.event(pod, "Started", f"Started container {ctr['name']}", first=started,
                field_path=field_)
