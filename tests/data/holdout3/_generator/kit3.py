"""What the third held-out set adds to the earlier building blocks: nodes of providers no
earlier set used (Hetzner Cloud, RKE2 on vSphere, Alibaba ACK, IBM Cloud IKS, EKS on
Bottlerocket with resource names, Vultr VKE, Civo, GKE Autopilot, OpenShift on bare metal,
Exoscale SKS), steady neighbours with an old restart, deleted pods of a rollout and the
events a rolling update leaves."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from tests.data.holdout._generator.base import alive, logs_for, parse
from tests.data.holdout2._generator.kit import (
    Incident,
    NodeKind,
    deleted,
    deploy,
    drift,
    node,
    restarts_series,
    working_set,
)
from tests.scenario_tools.common import MIB, Story
from tests.scenario_tools.kube import Ctr, Obj, Workload, ended, iso, running

__all__ = ["Incident", "NodeKind", "hexof", "uuid_of"]

Entries = Sequence[tuple[str, str, dict[str, Any]]]


def hexof(s: Story, *parts: str, n: int = 32) -> str:
    return hashlib.sha256("/".join((s.id, *parts)).encode()).hexdigest()[:n]


def uuid_of(s: Story, *parts: str) -> str:
    x = hexof(s, *parts)
    return f"{x[:8]}-{x[8:12]}-4{x[13:16]}-a{x[17:20]}-{x[20:32]}"


def namespaces(s: Story, ages: dict[str, float]) -> None:
    for name, days in ages.items():
        s.cluster.namespace(name, s.ago(days=days))


# ------------------------------------------------------------------ nodes by provider


def hetzner_nodes(s: Story, count: int, *, cluster: str, pool: str, kind: NodeKind,
                  location: str, subnet: int, days: float, first: int = 0) -> list[Obj]:
    """k3s on Hetzner Cloud (kube-hetzner): private network 10.0.x.0/24, flannel 10.42/16."""
    out = []
    for i in range(count):
        n = first + i
        name = f"{cluster}-{pool}-{s.cluster.token(3)}"
        out.append(node(
            s, name, ip=f"10.0.{subnet}.{101 + i}", kind=kind,
            created=s.ago(days=days - i * 0.09, minutes=7 * i), region=location,
            zone=f"{location}-dc{14 + i % 2}",
            labels={"csi.hetzner.cloud/location": location,
                    "instance.hetzner.cloud/provided-by": "cloud",
                    "node.kubernetes.io/instance-type": kind.instance,
                    "k3s.io/hostname": name},
            provider_id=f"hcloud://{5_800_000_0 + int(hexof(s, 'hc', name, n=6), 16) % 9_000_000}",
            pod_cidr=f"10.42.{n}.0/24"))
    return out


def rke2_vsphere_nodes(s: Story, names: Sequence[str], *, ips: Sequence[str], kind: NodeKind,
                       zone: str, days: float, first: int = 0) -> list[Obj]:
    """RKE2 on vSphere, provisioned by Rancher: canal with 10.42.N.0/24 per node."""
    out = []
    for i, (name, ip) in enumerate(zip(names, ips, strict=True)):
        x = hexof(s, "vm", name)
        out.append(node(
            s, name, ip=ip, kind=kind, created=s.ago(days=days - i * 0.04), region="",
            zone=zone, labels={"node-role.kubernetes.io/worker": "true",
                               "cattle.io/os": "linux",
                               "rke.cattle.io/machine": uuid_of(s, "machine", name),
                               "node.kubernetes.io/instance-type": "vsphere-vm.cpu-8.mem-32gb",
                               "plan.upgrade.cattle.io/system-agent-upgrader": x[:40]},
            provider_id=f"vsphere://42{x[2:8]}-{x[8:12]}-{x[12:16]}-{x[16:20]}-{x[20:32]}",
            pod_cidr=f"10.42.{first + i}.0/24"))
    return out


def ack_nodes(s: Story, count: int, *, region: str, zones: str, subnet: str, kind: NodeKind,
              pool_id: str, cluster_id: str, days: float) -> list[Obj]:
    """Alibaba Cloud ACK: node names `<region>.<ip>`, Terway pods in the vSwitch."""
    out = []
    for i in range(count):
        ip = f"{subnet}.{s.rng.randrange(20, 240)}"
        name = f"{region}.{ip}"
        zone = f"{region}{zones[i % len(zones)]}"
        out.append(node(
            s, name, ip=ip, kind=kind, created=s.ago(days=days - i * 0.13, minutes=3 * i),
            region=region, zone=zone,
            labels={"alibabacloud.com/nodepool-id": pool_id, "ack.aliyun.com": cluster_id,
                    "node.kubernetes.io/instance-type": kind.instance,
                    "alibabacloud.com/instance-id": f"i-gw8{hexof(s, 'ecs', name, n=17)}",
                    "node.csi.alibabacloud.com/disktype.cloud_essd": "available"},
            provider_id=f"{region}.i-gw8{hexof(s, 'ecs', name, n=17)}"))
    return out


def iks_nodes(s: Story, count: int, *, account: str, cluster_id: str, pool: str,
              kind: NodeKind, region: str, subnet: str, days: float) -> list[Obj]:
    """IBM Cloud Kubernetes Service on VPC: the node name is its private IP."""
    out = []
    for i in range(count):
        ip = f"{subnet}.{4 + i * 3 + s.rng.randrange(0, 2)}"
        zone = f"{region}-{i % 3 + 1}"
        worker = f"kube-{cluster_id}-{pool}-{hexof(s, 'w', ip, n=8)}"
        out.append(node(
            s, ip, ip=ip, kind=kind, created=s.ago(days=days - i * 0.2, minutes=11 * i),
            region=region, zone=zone,
            labels={"ibm-cloud.kubernetes.io/worker-pool-name": pool,
                    "ibm-cloud.kubernetes.io/worker-id": worker,
                    "ibm-cloud.kubernetes.io/zone": zone,
                    "ibm-cloud.kubernetes.io/region": region,
                    "ibm-cloud.kubernetes.io/machine-type": kind.instance,
                    "ibm-cloud.kubernetes.io/os": "UBUNTU_24_64",
                    "node.kubernetes.io/instance-type": kind.instance},
            provider_id=f"ibm://{account}///{cluster_id}/{worker}",
            pod_cidr=f"172.17.{i * 4}.0/24"))
    return out


def bottlerocket_nodes(s: Story, count: int, *, region: str, subnet: int, group: str,
                       kind: NodeKind, days: float, ami: str) -> list[Obj]:
    """EKS managed node group on Bottlerocket with resource-based host names."""
    out = []
    for i in range(count):
        iid = f"i-0{hexof(s, 'ec2', str(i), group, n=16)}"
        name = f"{iid}.{region}.compute.internal"
        zone = f"{region}{'acd'[i % 3]}"
        ip = f"10.{subnet}.{(i % 3) * 32 + s.rng.randrange(1, 30)}.{s.rng.randrange(10, 250)}"
        out.append(node(
            s, name, ip=ip, kind=kind, created=s.ago(days=days - i * 0.31, minutes=5 * i),
            region=region, zone=zone,
            labels={"eks.amazonaws.com/nodegroup": group,
                    "eks.amazonaws.com/nodegroup-image": ami,
                    "eks.amazonaws.com/capacityType": "ON_DEMAND",
                    "eks.amazonaws.com/sourceLaunchTemplateId": "lt-0"
                    + hexof(s, "lt", group, n=16),
                    "node.kubernetes.io/instance-type": kind.instance,
                    "k8s.io/cloud-provider-aws": hexof(s, "cp", n=32)},
            provider_id=f"aws:///{zone}/{iid}"))
    return out


def vultr_nodes(s: Story, count: int, *, pool: str, kind: NodeKind, region: str,
                days: float) -> list[Obj]:
    out = []
    for i in range(count):
        name = f"{pool}-{hexof(s, 'vke', str(i), n=12)}"
        out.append(node(
            s, name, ip=f"10.7.96.{3 + i}", kind=kind,
            created=s.ago(days=days - i * 0.05, minutes=2 * i), region=region, zone="",
            labels={"vke.vultr.com/node-pool": pool,
                    "node.kubernetes.io/instance-type": kind.instance},
            provider_id=f"vultr://{uuid_of(s, 'vultr', name)}", pod_cidr=f"10.244.{i + 1}.0/24"))
    return out


def civo_nodes(s: Story, count: int, *, cluster: str, pool_id: str, size: str,
               kind: NodeKind, region: str, days: float) -> list[Obj]:
    out = []
    for i in range(count):
        name = f"k3s-{cluster}-node-pool-{pool_id[:4]}-{s.cluster.token(5)}"
        out.append(node(
            s, name, ip=f"192.168.1.{4 + i}", kind=kind,
            created=s.ago(days=days - i * 0.02, minutes=i), region=region, zone="",
            labels={"kubernetes.civo.com/civo-node-pool": pool_id,
                    "kubernetes.civo.com/node-size": size,
                    "node.kubernetes.io/instance-type": size, "k3s.io/hostname": name},
            provider_id=f"civo://{uuid_of(s, 'civo', name)}", pod_cidr=f"10.42.{i}.0/24"))
    return out


def autopilot_nodes(s: Story, pools: Sequence[tuple[str, int]], *, project: str, cluster: str,
                    region: str, kind: NodeKind, days: float) -> list[Obj]:
    """GKE Autopilot: nodes of auto-provisioned pools, pods from the node's alias range."""
    out: list[Obj] = []
    for pool, count in pools:
        group = hexof(s, "mig", pool, n=8)
        for i in range(count):
            zone = f"{region}-{'bcd'[(len(out) + i) % 3]}"
            name = f"gk3-{cluster}-{pool}-{group}-{s.cluster.token(4)}"
            n = len(out)
            out.append(node(
                s, name, ip=f"10.156.0.{21 + n * 2}", kind=kind,
                created=s.ago(days=days - n * 0.4, hours=n), region=region, zone=zone,
                labels={"cloud.google.com/gke-nodepool": pool,
                        "cloud.google.com/gke-provisioning": "standard",
                        "cloud.google.com/compute-class": "autopilot",
                        "cloud.google.com/gke-os-distribution": "cos",
                        "cloud.google.com/gke-boot-disk": "pd-balanced",
                        "cloud.google.com/machine-family": kind.instance.split("-")[0],
                        "node.kubernetes.io/instance-type": kind.instance,
                        "topology.gke.io/zone": zone},
                provider_id=f"gce://{project}/{zone}/{name}", pod_cidr=f"10.88.{n * 2}.0/24"))
    return out


def openshift_nodes(s: Story, names: Sequence[str], *, ips: Sequence[str], kind: NodeKind,
                    days: float) -> list[Obj]:
    """OpenShift 4.17 on bare metal (agent-based install): no provider id, OVN-Kubernetes."""
    out = []
    for i, (name, ip) in enumerate(zip(names, ips, strict=True)):
        out.append(node(
            s, name, ip=ip, kind=kind, created=s.ago(days=days - i * 0.03), region="", zone="",
            labels={"node-role.kubernetes.io/worker": "", "node.openshift.io/os_id": "rhcos",
                    "beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
                    "node.kubernetes.io/instance-type": ""},
            provider_id=""))
    return out


def openshift_pod_ips(s: Story, nodes: Sequence[Obj]) -> None:
    """Pod IPs of the node's OVN-Kubernetes subnet (10.128.0.0/14 in /23 a node)."""
    index = {n["metadata"]["name"]: i for i, n in enumerate(nodes)}
    for pod in s.cluster.objects_of("Pod"):
        where = pod["spec"].get("nodeName")
        status = pod["status"]
        if where not in index or "podIP" not in status or pod["spec"].get("hostNetwork"):
            continue
        k = index[where]
        last = int(status["podIP"].rsplit(".", 1)[1])
        ip = f"10.{128 + k // 128}.{(k % 128) * 2 + last % 2}.{last}"
        status["podIP"] = ip
        status["podIPs"] = [{"ip": ip}]


def exoscale_nodes(s: Story, count: int, *, pool_id: str, kind: NodeKind, zone: str,
                   days: float) -> list[Obj]:
    out = []
    for i in range(count):
        suffix = "".join(s.rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(5))
        name = f"pool-{pool_id[:5]}-{suffix}"
        out.append(node(
            s, name, ip=f"172.16.40.{11 + i * 4}", kind=kind,
            created=s.ago(days=days - i * 0.06, minutes=4 * i), region=zone, zone=zone,
            labels={"node.exoscale.net/nodepool-id": pool_id,
                    "node.exoscale.net/instance-type": kind.instance,
                    "node.kubernetes.io/instance-type": kind.instance},
            provider_id=f"exoscale://{uuid_of(s, 'exo', name)}",
            pod_cidr=f"192.168.{40 + i * 4}.0/24"))
    return out


# ------------------------------------------------------------------ workloads


def steady(s: Story, ns: str, name: str, ctrs: Sequence[Ctr], *, nodes: Sequence[Obj],
           replicas: int, revision: int, rollout: datetime,
           restarted: dict[int, tuple[datetime, str, int]] | None = None,
           **kw: Any) -> tuple[Workload, list[Obj]]:
    """A Deployment whose pods all run since `rollout`; `restarted[i]` = (when, reason,
    exit code) gives pod i one old restart of its first container."""
    main = ctrs[0].name

    def states(i: int, pod_name: str, started: datetime) -> dict[str, Obj]:
        if not restarted or i not in restarted:
            return {}
        when, reason, code = restarted[i]
        return {main: running(when, restarts=1, last=ended(reason, code, started,
                                                             when - timedelta(seconds=1)))}
    return deploy(s, ns, name, ctrs, replicas=replicas, nodes=nodes, revision=revision,
                  rollout=rollout, statuses=states, **kw)


def quiet(s: Story, pods: Sequence[Obj], container: str, mib: float) -> None:
    """A neighbour's working set, and its restart counter when it restarted before."""
    for pod in pods:
        working_set(s, pod, container, drift(s, mib * MIB * s.rng.uniform(0.9, 1.1)))
        status = next(x for x in pod["status"]["containerStatuses"] if x["name"] == container)
        if status["restartCount"]:
            restarts_series(s, pod, container, status["restartCount"], [])


def chatter(s: Story, pods: Sequence[Obj], container: str, service: str, entries: Entries,
            count: int, *, start: datetime | None = None, end: datetime | None = None) -> None:
    logs_for(s, pods, container, service, entries, count, start=start, end=end)


def ghosts(s: Story, rs: Obj, nodes: Sequence[Obj], born: Sequence[datetime],
           gone: Sequence[datetime]) -> list[dict[str, Any]]:
    """Pods of an old ReplicaSet that a rolling update deleted (metrics and logs only)."""
    ns = rs["metadata"]["namespace"]
    return [deleted(s, ns, f"{rs['metadata']['name']}-{s.cluster.token(5)}",
                    nodes[i % len(nodes)]["metadata"]["name"], b, g)
            for i, (b, g) in enumerate(zip(born, gone, strict=True))]


def rolling_events(s: Story, work: Workload, old_rs: Obj, new_rs: Obj, new_pods: Sequence[Obj],
                   old: Sequence[dict[str, Any]], *, image: str, size: int,
                   pull: Callable[[int], float] | None = None) -> None:
    """The deployment controller's steps of a rolling update (one new pod up, one old pod
    down), the ReplicaSets' create and delete events and the new pods' start events."""
    c = s.cluster
    n = len(new_pods)
    new_name, old_name = new_rs["metadata"]["name"], old_rs["metadata"]["name"]
    for i, pod in enumerate(new_pods):
        born = parse(pod["metadata"]["creationTimestamp"])
        c.event(work.obj, "ScalingReplicaSet", f"Scaled up replica set {new_name} from {i} "
                f"to {i + 1}", first=born - timedelta(seconds=0.4),
                component="deployment-controller")
        c.event(new_rs, "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}",
                first=born, component="replicaset-controller")
        c.event(pod, "Scheduled", f"Successfully assigned {pod['metadata']['namespace']}/"
                f"{pod['metadata']['name']} to {pod['spec']['nodeName']}", first=born,
                component="default-scheduler", host="")
        status = pod["status"]["containerStatuses"][0]
        started = parse(status["state"]["running"]["startedAt"]) if "running" in \
            status["state"] else born + timedelta(seconds=5)
        field_ = f"spec.containers{{{status['name']}}}"
        seconds = pull(i) if pull else 0.0
        if seconds:
            c.event(pod, "Pulling", f'Pulling image "{image}"',
                    first=max(started - timedelta(seconds=seconds + 0.5),
                              born + timedelta(seconds=0.4)), field_path=field_)
            c.event(pod, "Pulled", f'Successfully pulled image "{image}" in {seconds:.3f}s '
                    f"({seconds:.3f}s including waiting). Image size: {size} bytes.",
                    first=started - timedelta(seconds=0.4), field_path=field_)
        else:
            c.event(pod, "Pulled", f'Container image "{image}" already present on machine',
                    first=started - timedelta(seconds=0.4), field_path=field_)
        c.event(pod, "Created", f"Created container: {status['name']}",
                first=started - timedelta(seconds=0.2), field_path=field_)
        c.event(pod, "Started", f"Started container {status['name']}", first=started,
                field_path=field_)
    for i, ghost in enumerate(old):
        gone = datetime.fromtimestamp(ghost["metadata"]["_deleted"], s.now.tzinfo)
        c.event(work.obj, "ScalingReplicaSet", f"Scaled down replica set {old_name} from "
                f"{n - i} to {n - i - 1}", first=gone - timedelta(seconds=0.6),
                component="deployment-controller")
        c.event(old_rs, "SuccessfulDelete", f"Deleted pod: {ghost['metadata']['name']}",
                first=gone - timedelta(seconds=0.5), component="replicaset-controller")


def ksm_deployment(s: Story, ns: str, name: str, spec: Callable[[int], float],
                   available: Callable[[int], float], unavailable: Callable[[int], float]
                   | None = None) -> None:
    labels = {"namespace": ns, "deployment": name}
    for metric, value, help_ in (
            ("kube_deployment_spec_replicas", spec, "Number of desired pods for a deployment."),
            ("kube_deployment_status_replicas_available", available,
             "The number of available replicas per deployment."),
            ("kube_deployment_status_replicas_unavailable", unavailable,
             "The number of unavailable replicas per deployment.")):
        if value is None:
            continue
        s.metrics.gauge(metric, labels, [(t, float(value(t))) for t in s.times], help_)


def ready_since(pod: Obj, when: datetime) -> None:
    for cond in pod["status"]["conditions"]:
        if cond["type"] in ("Ready", "ContainersReady"):
            cond["lastTransitionTime"] = iso(when)


def span(s: Story, pod: Obj | dict[str, Any]) -> tuple[datetime, datetime]:
    """When a pod (alive or deleted) could log: from its start to its deletion or now."""
    born = parse(pod["metadata"]["creationTimestamp"]) + timedelta(seconds=8)
    end = pod["metadata"].get("_deleted")
    return born, (datetime.fromtimestamp(end, s.now.tzinfo) if end else s.now)


def log_pod(s: Story, pod: Obj | dict[str, Any], container: str, service: str,
            entries: Entries, count: int, *, start: datetime | None = None,
            end: datetime | None = None) -> None:
    """Ordinary log lines of one pod, deleted or not, within its life."""
    born, gone = span(s, pod)
    first = max(born, start or s.now - timedelta(hours=s.hours))
    last = min(gone, end) if end else gone
    if last <= first:
        return
    total = (last - first).total_seconds()
    where = pod["spec"].get("nodeName", "")
    for _ in range(count):
        level, message, fields = s.rng.choice(entries)
        when = first + timedelta(milliseconds=int(s.rng.uniform(0, total) * 1000))
        s.logs.add(when, level, message, namespace=pod["metadata"]["namespace"],
                   pod=pod["metadata"]["name"], container=container, service=service,
                   node=where, **fields)


def times_of(s: Story, pod: Obj | dict[str, Any]) -> list[int]:
    return alive(s, pod)


def service_range(s: Incident, address: Callable[[int, int], str]) -> None:
    """Give the cluster's Services addresses of its own service range: `address(third,
    fourth)` maps the library's 172.20.x.y ClusterIPs."""
    def fix(objects: list[Obj]) -> None:
        for obj in objects:
            spec = obj.get("spec") or {}
            ip = spec.get("clusterIP") if obj["kind"] == "Service" else None
            if ip and ip.startswith("172.20."):
                third, fourth = (int(x) for x in ip.split(".")[2:])
                spec["clusterIP"] = address(third, fourth)
                spec["clusterIPs"] = [spec["clusterIP"]]
    s.fixes.append(fix)
