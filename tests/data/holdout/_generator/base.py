"""Shared parts of the held-out stories: clouds other than one EKS region, system pods per
provider, metrics with a story's own buckets and scrape step, and small builders the library
does not have (Jobs, CronJobs, failed pods, Endpoints written by hand)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from tests.scenario_tools.common import MIB, Story, container_metrics, noise_logs
from tests.scenario_tools.kube import Ctr, Obj, Template, Workload, http_probe, iso, running
from tests.scenario_tools.telemetry import histogram_points, integrate

GIB = 1024 * MIB


def parse(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def set_times(story: Story, hours: float, step: int) -> None:
    """The scrape grid: every `step` seconds over the last `hours`, aligned to the step."""
    end = int(story.now.timestamp())
    end -= end % step
    story.hours = hours
    story.times = list(range(end - int(hours * 3600), end + 1, step))


# ------------------------------------------------------------------ nodes per provider


def _node_ip(node: Obj, ip: str) -> None:
    node["status"]["addresses"][0]["address"] = ip


def _node_info(node: Obj, **info: str) -> None:
    import hashlib

    name = node["metadata"]["name"]

    def h(kind: str, n: int = 32) -> str:
        return hashlib.sha256(f"{kind}/{name}".encode()).hexdigest()[:n]

    def guid(kind: str) -> str:
        x = h(kind)
        return f"{x[:8]}-{x[8:12]}-{x[12:16]}-{x[16:20]}-{x[20:32]}"
    node["status"]["nodeInfo"].update({"bootID": guid("boot"), "machineID": h("machine"),
                                       "systemUUID": guid("system"),
                                       "kubeProxyVersion": info.get("kubeletVersion", ""),
                                       **info})
    node["status"]["nodeInfo"] = dict(sorted(node["status"]["nodeInfo"].items()))


def eks_nodes(story: Story, count: int, *, region: str, subnet: int, pool: str,
              instance: str, kubelet: str, kernel: str, os_image: str, cpu: str, memory: str,
              alloc_cpu: str, alloc_memory: str, pods: str = "58", days: float = 6.0,
              runtime: str = "containerd://1.7.27", zones: str = "abc") -> list[Obj]:
    out = []
    for i in range(count):
        zone = f"{region}{zones[i % len(zones)]}"
        third = (i % 3) * 16 + story.rng.randrange(1, 15)
        ip = f"10.{subnet}.{third}.{story.rng.randrange(8, 250)}"
        name = f"ip-{ip.replace('.', '-')}.{region}.compute.internal"
        node = story.cluster.node(name, created=story.ago(days=days - i * 0.37, minutes=i * 13),
                                  zone=zone, pool=pool, instance=instance, cpu=cpu,
                                  memory=memory, allocatable_cpu=alloc_cpu,
                                  allocatable_memory=alloc_memory)
        node["status"]["allocatable"]["pods"] = pods
        node["status"]["capacity"]["pods"] = pods
        _node_info(node, kubeletVersion=kubelet, kernelVersion=kernel, osImage=os_image,
                   containerRuntimeVersion=runtime)
        out.append(node)
    return out


def gke_nodes(story: Story, count: int, *, project: str, cluster: str, pool: str,
              region: str, instance: str, kubelet: str, cpu: str, memory: str,
              alloc_cpu: str, alloc_memory: str, days: float = 5.0) -> list[Obj]:
    group = story.cluster.hexid("mig", pool, length=8)
    out = []
    for i in range(count):
        zone = f"{region}-{'abc'[i % 3]}"
        name = f"gke-{cluster}-{pool}-{group}-{story.cluster.token(4)}"
        node = story.cluster.node(name, created=story.ago(days=days - i * 0.21, hours=i),
                                  zone=zone + "x", pool=pool, instance=instance, cpu=cpu,
                                  memory=memory, allocatable_cpu=alloc_cpu,
                                  allocatable_memory=alloc_memory)
        labels = node["metadata"]["labels"]
        labels.pop("eks.amazonaws.com/nodegroup")
        labels["topology.kubernetes.io/zone"] = zone
        labels["topology.kubernetes.io/region"] = region
        labels.update({"cloud.google.com/gke-nodepool": pool,
                       "cloud.google.com/gke-os-distribution": "cos",
                       "cloud.google.com/machine-family": instance.split("-")[0],
                       "cloud.google.com/gke-boot-disk": "pd-balanced"})
        node["spec"] = {"podCIDR": f"10.60.{i * 4}.0/24", "podCIDRs": [f"10.60.{i * 4}.0/24"],
                        "providerID": f"gce://{project}/{zone}/{name}"}
        _node_ip(node, f"10.132.0.{story.rng.randrange(3, 120)}")
        node["status"]["allocatable"]["pods"] = "110"
        node["status"]["capacity"]["pods"] = "110"
        node["status"]["allocatable"]["ephemeral-storage"] = "47060071478"
        node["status"]["capacity"]["ephemeral-storage"] = "98831908Ki"
        _node_info(node, kubeletVersion=kubelet, kernelVersion="6.1.112+",
                   osImage="Container-Optimized OS from Google",
                   containerRuntimeVersion="containerd://1.7.24")
        out.append(node)
    return out


def aks_nodes(story: Story, count: int, *, pool: str, region: str, instance: str,
              kubelet: str, cpu: str, memory: str, alloc_cpu: str, alloc_memory: str,
              subscription: str, group: str, days: float = 4.0, first: int = 0) -> list[Obj]:
    scale_set = f"aks-{pool}-{story.rng.randrange(10_000_000, 99_999_999)}-vmss"
    out = []
    for i in range(count):
        n = first + i
        name = f"{scale_set}{n:06x}"
        zone = f"{region}-{i % 3 + 1}"
        node = story.cluster.node(name, created=story.ago(days=days - i * 0.5, minutes=i * 7),
                                  zone=zone + "x", pool=pool, instance=instance, cpu=cpu,
                                  memory=memory, allocatable_cpu=alloc_cpu,
                                  allocatable_memory=alloc_memory)
        labels = node["metadata"]["labels"]
        labels.pop("eks.amazonaws.com/nodegroup")
        labels["topology.kubernetes.io/zone"] = zone
        labels["topology.kubernetes.io/region"] = region
        labels.update({"kubernetes.azure.com/agentpool": pool, "agentpool": pool,
                       "kubernetes.azure.com/mode": "system" if pool == "system" else "user",
                       "kubernetes.azure.com/os-sku": "Ubuntu"})
        node["spec"] = {"podCIDR": f"10.244.{n + 2}.0/24", "podCIDRs": [f"10.244.{n + 2}.0/24"],
                        "providerID": f"azure:///subscriptions/{subscription}/resourceGroups/"
                        f"mc_{group}/providers/Microsoft.Compute/virtualMachineScaleSets/"
                        f"{scale_set}/virtualMachines/{n}"}
        _node_ip(node, f"10.224.0.{4 + n + (0 if pool == 'system' else 30)}")
        node["status"]["allocatable"]["pods"] = "110"
        node["status"]["capacity"]["pods"] = "110"
        _node_info(node, kubeletVersion=kubelet, kernelVersion="5.15.0-1079-azure",
                   osImage="Ubuntu 22.04.5 LTS", containerRuntimeVersion="containerd://1.7.25-1")
        out.append(node)
    return out


def metal_nodes(story: Story, names: Sequence[str], *, ips: Sequence[str], kubelet: str,
                kernel: str, cpu: str, memory: str, alloc_cpu: str, alloc_memory: str,
                rack: str, days: float = 6.5) -> list[Obj]:
    out = []
    for i, (name, ip) in enumerate(zip(names, ips, strict=True)):
        node = story.cluster.node(name, created=story.ago(days=days - i * 0.02),
                                  zone="dc2-hall1x", cpu=cpu, memory=memory,
                                  allocatable_cpu=alloc_cpu, allocatable_memory=alloc_memory)
        labels = node["metadata"]["labels"]
        for key in ("eks.amazonaws.com/nodegroup", "node.kubernetes.io/instance-type",
                    "topology.kubernetes.io/region", "topology.kubernetes.io/zone"):
            labels.pop(key)
        labels.update({"topology.kubernetes.io/zone": f"dc2-{rack}", "node-role/worker": "",
                       "hardware/class": "r650-512g"})
        node["spec"] = {"podCIDR": f"10.233.{64 + i}.0/24", "podCIDRs": [f"10.233.{64 + i}.0/24"]}
        _node_ip(node, ip)
        node["status"]["allocatable"]["pods"] = "110"
        node["status"]["capacity"]["pods"] = "110"
        node["status"]["allocatable"]["ephemeral-storage"] = "431107443712"
        node["status"]["capacity"]["ephemeral-storage"] = "467794572Ki"
        _node_info(node, kubeletVersion=kubelet, kernelVersion=kernel,
                   osImage="Ubuntu 22.04.5 LTS", containerRuntimeVersion="containerd://1.7.22")
        out.append(node)
    return out


# ------------------------------------------------------------------ workloads


@dataclass
class PCtr(Ctr):
    """A container with more than one port (`ports`: (name, port, protocol))."""

    ports: list[tuple[str, int, str]] = field(default_factory=list)

    def spec(self) -> Obj:
        out = super().spec()
        if self.ports:
            out["ports"] = [{"containerPort": p, "name": n, "protocol": proto}
                            for n, p, proto in self.ports]
            # keep the kubectl key order: ports before resources
        return out


def deployment(story: Story, namespace: str, name: str, ctrs: Sequence[Ctr], *,
               replicas: int, node_list: Sequence[Obj], revision: int, rollout: datetime,
               labels: dict[str, str] | None = None, statuses: Callable[[int, datetime],
                                                                       dict[str, Obj]] | None
               = None, service: int | None = 80, target: int | str = "http",
               sa: str | None = None, annotations: dict[str, str] | None = None,
               volumes: Sequence[Obj] = (), node_offset: int = 0,
               template_labels: dict[str, str] | None = None,
               selector: dict[str, str] | None = None, tolerations: Sequence[Obj] = (),
               created: datetime | None = None,
               ) -> tuple[Workload, list[Obj]]:
    """A Deployment at one revision with all pods of it, started after the rollout."""
    c = story.cluster
    tpl = Template(list(ctrs), service_account=sa or name, labels=dict(template_labels or {}),
                   annotations=dict(annotations or {}), volumes=list(volumes),
                   tolerations=list(tolerations))
    work = c.workload("Deployment", namespace, name, tpl, replicas=replicas,
                      created=created or rollout - timedelta(days=story.rng.uniform(40, 300)),
                      labels=labels)
    if selector:
        work.obj["spec"]["selector"]["matchLabels"] = dict(selector)
        tpl.labels = {**selector, **(template_labels or {})}
    rs = c.revision(work, revision, rollout, replicas=replicas)
    pods = []
    for i in range(replicas):
        node = node_list[(i + node_offset) % len(node_list)]
        born = max(rollout, parse(node["metadata"]["creationTimestamp"]) + timedelta(minutes=2))
        created = born + timedelta(seconds=3 + 17 * i + story.rng.randrange(0, 9))
        started = created + timedelta(seconds=story.rng.randrange(4, 15))
        states = statuses(i, started) if statuses else {}
        full = {x.name: states.get(x.name) or running(started) for x in ctrs}
        pods.append(c.pod(work, rs, node=node, created=created, statuses=full))
    if service:
        c.service(namespace, name, dict(work.obj["spec"]["selector"]["matchLabels"]),
                  port=service, target=target, created=work_created(work),
                  labels=dict(work.obj["metadata"].get("labels") or {}))
    return work, pods


def work_created(work: Workload) -> datetime:
    return parse(work.obj["metadata"]["creationTimestamp"])


def daemonset(story: Story, namespace: str, name: str, ctrs: Sequence[Ctr], *,
              node_list: Sequence[Obj], generation: int, since: datetime,
              labels: dict[str, str] | None = None, sa: str | None = None,
              tolerations: Sequence[Obj] = ({"operator": "Exists"},),
              statuses: Callable[[int, Obj, datetime], dict[str, Obj]] | None = None,
              volumes: Sequence[Obj] = (), annotations: dict[str, str] | None = None,
              stagger: float = 20.0, offset: float = 0.0,
              ) -> tuple[Workload, list[Obj]]:
    """A DaemonSet with one pod a node, of its template generation `generation`."""
    c = story.cluster
    tpl = Template(list(ctrs), service_account=sa or name, tolerations=list(tolerations),
                   volumes=list(volumes), annotations=dict(annotations or {}))
    work = c.workload("DaemonSet", namespace, name, tpl,
                      created=since - timedelta(days=story.rng.uniform(60, 250)),
                      labels=labels or {"app.kubernetes.io/name": name})
    work.obj["metadata"]["generation"] = generation
    work.obj["spec"]["updateStrategy"] = {"type": "RollingUpdate", "rollingUpdate": {
        "maxSurge": 0, "maxUnavailable": 1}}
    work.obj["spec"]["revisionHistoryLimit"] = 10
    rev = c.revision(work, generation, since)
    hash_ = rev["metadata"]["name"].rsplit("-", 1)[1]
    pods = []
    for i, node in enumerate(node_list):
        born = max(since + timedelta(seconds=stagger * i + offset),
                   parse(node["metadata"]["creationTimestamp"])
                   + timedelta(seconds=25))
        started = born + timedelta(seconds=story.rng.randrange(3, 12))
        states = statuses(i, node, started) if statuses else {}
        full = {x.name: states.get(x.name) or running(started) for x in ctrs}
        pod = c.pod(work, rev, node=node, created=born, statuses=full)
        pod["metadata"]["labels"]["controller-revision-hash"] = hash_
        pod["metadata"]["labels"]["pod-template-generation"] = str(generation)
        pod["spec"]["affinity"] = {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{
                "matchFields": [{"key": "metadata.name", "operator": "In",
                                 "values": [node["metadata"]["name"]]}]}]}}}
        pods.append(pod)
    return work, pods


def finish_daemonset(work: Workload) -> None:
    """After Cluster.objects(): a DaemonSet's observedGeneration is its generation."""
    work.obj["status"]["observedGeneration"] = work.obj["metadata"]["generation"]


# ------------------------------------------------------------------ services by hand


def add_service(story: Story, namespace: str, name: str, selector: dict[str, str] | None,
                ports: Sequence[Obj], *, created: datetime, cluster_ip: str | None = None,
                labels: dict[str, str] | None = None, headless: bool = False) -> Obj:
    c = story.cluster
    spec: Obj = {"type": "ClusterIP"}
    ip = "None" if headless else (cluster_ip or f"172.20.{story.rng.randrange(1, 250)}."
                                  f"{story.rng.randrange(2, 250)}")
    spec.update({"clusterIP": ip, "clusterIPs": [ip], "internalTrafficPolicy": "Cluster",
                 "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
                 "ports": list(ports), "sessionAffinity": "None"})
    if selector:
        spec["selector"] = dict(selector)
    return c.add({"apiVersion": "v1", "kind": "Service",
                  "metadata": c.meta("Service", name, namespace, created,
                                     labels or {"app.kubernetes.io/name": name}),
                  "spec": spec, "status": {"loadBalancer": {}}})


def add_endpoints(story: Story, service: Obj, pods: Sequence[Obj], ports: Sequence[Obj]) -> Obj:
    c = story.cluster
    meta = service["metadata"]
    ready = [p for p in pods if _ready(p)]
    unready = [p for p in pods if not _ready(p)]
    obj: Obj = {"apiVersion": "v1", "kind": "Endpoints",
                "metadata": c.meta("Endpoints", meta["name"], meta["namespace"],
                                   parse(meta["creationTimestamp"]), meta.get("labels"))}
    subset: Obj = {}
    if ready:
        subset["addresses"] = [_address(p) for p in ready]
    if unready:
        subset["notReadyAddresses"] = [_address(p) for p in unready]
    if subset:
        subset["ports"] = list(ports)
        obj["subsets"] = [subset]
    return c.add(obj)


def _ready(pod: Obj) -> bool:
    return any(x["type"] == "Ready" and x["status"] == "True"
               for x in pod["status"].get("conditions", []))


def _address(pod: Obj) -> Obj:
    return {"ip": pod["status"]["podIP"], "nodeName": pod["spec"]["nodeName"],
            "targetRef": {"kind": "Pod", "name": pod["metadata"]["name"],
                          "namespace": pod["metadata"]["namespace"],
                          "uid": pod["metadata"]["uid"]}}


def configmap(story: Story, namespace: str, name: str, data: dict[str, str], *,
              created: datetime, labels: dict[str, str] | None = None,
              edited: tuple[str, datetime] | None = None) -> Obj:
    c = story.cluster
    meta = c.meta("ConfigMap", name, namespace, created, labels)
    if edited:
        manager, when = edited
        meta["managedFields"] = [{"apiVersion": "v1", "fieldsType": "FieldsV1",
                                  "fieldsV1": {"f:data": {".": {}, **{f"f:{k}": {} for k in data}}},
                                  "manager": manager, "operation": "Update", "time": iso(when)}]
    return c.add({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": dict(data)})


# ------------------------------------------------------------------ metrics


def http_series(story: Story, pod: Obj | dict[str, Any], service: str, *,
                rps: Callable[[int], float], codes: dict[str, Callable[[int], float]],
                median: Callable[[int], float], buckets: Sequence[float],
                extra: dict[str, str] | None = None, method_path: bool = False,
                histogram: bool = True) -> None:
    """http_requests_total by code and the latency histogram of one pod (alive or deleted)."""
    labels = {"namespace": pod["metadata"]["namespace"], "service": service,
              "pod": pod["metadata"]["name"], **(extra or {})}
    times = alive(story, pod)
    for code, share in codes.items():
        story.metrics.counter(
            "http_requests_total", {**labels, "code": code},
            integrate(times, lambda t, s=share: rps(t) * s(t), rng=story.rng,
                      start=story.rng.randrange(2_000, 400_000)),
            "Total number of HTTP requests by status code.")
    if histogram:
        fam = story.metrics.family("http_request_duration_seconds", "histogram",
                                   "HTTP request latency in seconds.", buckets=tuple(buckets))
        fam.add(labels, histogram_points(times, tuple(buckets), rps, median, story.rng))


def alive(story: Story, pod: Obj | dict[str, Any]) -> list[int]:
    created = parse(pod["metadata"]["creationTimestamp"]).timestamp() + 25
    end = pod["metadata"].get("_deleted")
    return [t for t in story.times if t >= created and (end is None or t <= end)]


def gauge(story: Story, name: str, labels: dict[str, str], value: Callable[[int], float | None],
          help_: str, times: Sequence[int] | None = None) -> None:
    points = []
    for t in times if times is not None else story.times:
        v = value(t)
        if v is not None:
            points.append((t, round(v, 4)))
    story.metrics.gauge(name, labels, points, help_)


def wobble(story: Story, base: float, spread: float = 0.04,
           period: float = 2400.0) -> Callable[[int], float]:
    """A value near `base` that drifts slowly, as a working set does."""
    phase = story.rng.uniform(0, 2 * math.pi)
    return lambda t: base * (1 + spread * math.sin(t / period + phase))


def quiet_container(story: Story, pod: Obj, container: str, mib: float,
                    cpu: float | None = None, limit_mib: float | None = None) -> None:
    """An ordinary container's working set (and CPU, restarts) around `mib`."""
    restarts = next((s.get("restartCount", 0) for s in pod["status"].get("containerStatuses", [])
                     if s["name"] == container), 0)
    drift = wobble(story, mib * MIB)
    container_metrics(story, pod, container, memory=drift,
                      cpu=(lambda t, v=cpu: v * story.rng.uniform(0.8, 1.2)) if cpu else None,
                      restart_base=restarts,
                      limit_memory=limit_mib * MIB if limit_mib else None)


def logs_for(story: Story, pods: Sequence[Obj], container: str, service: str,
             entries: Sequence[tuple[str, str, dict[str, Any]]], count: int, *,
             start: datetime | None = None, end: datetime | None = None,
             ends: dict[str, datetime] | None = None) -> None:
    """Ordinary log lines of each pod, only while it existed (`ends`: pod name -> its end)."""
    for pod in pods:
        born = parse(pod["metadata"]["creationTimestamp"]) + timedelta(seconds=6)
        first = max(start, born) if start else born
        last = min(end or story.now, (ends or {}).get(pod["metadata"]["name"], story.now))
        if last <= first:
            continue
        noise_logs(story, pod, container, service, entries, max(1, count // len(pods)),
                   start=first, end=last)


__all__ = ["GIB", "MIB", "Ctr", "Obj", "Story", "Template", "http_probe", "iso", "running"]


# ------------------------------------------------------------------ crash loops


def crash_runs(story: Story, first_start: datetime, first_end: datetime,
               life: Callable[[datetime], float], *, pull: float = 0.8) -> list[Any]:
    """Runs of a container whose long first instance died at `first_end` and whose later
    instances live `life(start)` seconds, with the kubelet's back-off between them."""
    from tests.scenario_tools.sim import MAX_BACKOFF, RESET_AFTER, Run

    runs = [Run(first_start, first_end)]
    backoff = 10.0
    start = first_end + timedelta(seconds=backoff + pull)
    while start <= story.now:
        death = start + timedelta(seconds=life(start))
        if death > story.now:
            runs.append(Run(start, None))
            break
        runs.append(Run(start, death))
        lived = (death - start).total_seconds()
        backoff = 10.0 if lived >= RESET_AFTER else min(backoff * 2, MAX_BACKOFF)
        start = death + timedelta(seconds=backoff + pull + story.rng.uniform(0, 0.6))
    return runs


def running_at(runs: Sequence[Any], t: int) -> bool:
    return any(r.start.timestamp() <= t and (r.end is None or t < r.end.timestamp())
               for r in runs)


def fix_pod_ips(story: Story) -> None:
    """Pod IPs from the node's podCIDR (Calico, kubenet, GKE alias ranges) where the node has
    one; host-network pods keep the node's address. EKS (VPC CNI) pods stay in the node's
    subnet, as the library makes them."""
    nodes = {n["metadata"]["name"]: n for n in story.cluster.objects_of("Node")}
    for pod in story.cluster.objects_of("Pod"):
        node = nodes.get(pod["spec"].get("nodeName", ""))
        status = pod["status"]
        if node is None or "podIP" not in status:
            continue
        if pod["spec"].get("hostNetwork"):
            ip = node["status"]["addresses"][0]["address"]
        elif node["spec"].get("podCIDR"):
            prefix = node["spec"]["podCIDR"].split("/")[0].rsplit(".", 1)[0]
            ip = f"{prefix}.{status['podIP'].rsplit('.', 1)[1]}"
        else:
            continue
        status["podIP"] = ip
        status["podIPs"] = [{"ip": ip}]


def host_network(pods: Sequence[Obj]) -> None:
    for pod in pods:
        pod["spec"]["hostNetwork"] = True
        pod["spec"]["dnsPolicy"] = "ClusterFirstWithHostNet"
        pod["status"]["podIP"] = pod["status"]["hostIP"]
        pod["status"]["podIPs"] = [{"ip": pod["status"]["hostIP"]}]
