"""What the fifth held-out set adds: nodes of providers no earlier set used (Naver Cloud NKS,
Gcore, Magalu Cloud, VMware Tanzu TKG, Nutanix NKE, kubeadm on Proxmox, MicroK8s, EKS
Anywhere, Rackspace Spot, Sakura Cloud), Jobs with their pods, and small helpers."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from tests.data.holdout2._generator.kit import NodeKind
from tests.data.holdout3._generator.kit3 import hexof, uuid_of
from tests.data.holdout4._generator.kit4 import Incident, pool
from tests.scenario_tools.common import Story
from tests.scenario_tools.kube import Obj, Template, Workload, iso

__all__ = ["Incident", "NodeKind", "hexof", "uuid_of"]


def provider_nodes(s: Story, flavour: str, count: int, kind: NodeKind, *, days: float,
                   first: int = 0) -> list[Obj]:
    """`count` nodes of one of the set's providers."""
    if flavour == "nks":
        return pool(s, count, kind=kind, days=days, region="KR", zones=["KR-1", "KR-2"],
                    namer=lambda i: (f"nks-pool-w-{hexof(s, 'n', str(i), n=4)}",
                                     f"10.30.{i % 2}.{21 + i}"),
                    labels=lambda i, n: {"ncloud.com/nks-nodepool": "pool-w",
                                         "node.kubernetes.io/instance-type": kind.instance},
                    provider=lambda i, n: f"navercloudplatform://{1890000 + 37 * i}",
                    cidr=lambda i: f"198.18.{i}.0/24", first=first)
    if flavour == "gcore":
        return pool(s, count, kind=kind, days=days, region="luxembourg-2", zones=[],
                    namer=lambda i: (f"k8s-prod-pool-a-{hexof(s, 'g', str(i), n=5)}",
                                     f"10.110.8.{14 + i}"),
                    labels=lambda i, n: {"gcore.com/pool": "pool-a",
                                         "node.kubernetes.io/instance-type": kind.instance},
                    provider=lambda i, n: f"openstack:///{uuid_of(s, 'vm', n)}",
                    cidr=lambda i: f"10.244.{i}.0/24", first=first)
    if flavour == "magalu":
        return pool(s, count, kind=kind, days=days, region="br-se1",
                    zones=["br-se1-a", "br-se1-b", "br-se1-c"],
                    namer=lambda i: (f"mke-np-general-{hexof(s, 'm', str(i), n=6)}",
                                     f"172.18.{i % 3}.{40 + i}"),
                    labels=lambda i, n: {"mgc.magalu.cloud/nodepool": "np-general",
                                         "node.kubernetes.io/instance-type": kind.instance},
                    provider=lambda i, n: f"mgc://{uuid_of(s, 'mgc', n)}",
                    cidr=lambda i: f"10.64.{i}.0/24", first=first)
    if flavour == "tkg":
        return pool(s, count, kind=kind, days=days, region="", zones=["az-rack-1", "az-rack-2"],
                    namer=lambda i: (f"tkg-prd-md-0-{hexof(s, 't', n=5)}-"
                                     f"{hexof(s, 'tt', str(i), n=5)}", f"10.220.4.{61 + i}"),
                    labels=lambda i, n: {"node.cluster.x-k8s.io/esxi-host":
                                         f"esx{i % 3 + 1}.dc2.corp",
                                         "run.tanzu.vmware.com/kubernetesDistributionVersion":
                                         "v1.29.4---vmware.3-fips.1-tkg.1",
                                         "node.kubernetes.io/instance-type": "vsphere-vm.cpu-8"},
                    provider=lambda i, n: f"vsphere://{uuid_of(s, 'vs', n)}",
                    cidr=lambda i: f"100.96.{i}.0/24", first=first)
    if flavour == "proxmox":
        return pool(s, count, kind=kind, days=days, region="", zones=[],
                    namer=lambda i: (f"pve-k8s-w{i + 1}", f"192.168.50.{31 + i}"),
                    labels=lambda i, n: {"node-role.kubernetes.io/worker": "",
                                         "proxmox.host": f"pve{i % 2 + 1}"},
                    provider=lambda i, n: "", cidr=lambda i: f"10.233.{64 + i}.0/24",
                    first=first)
    if flavour == "nke":
        return pool(s, count, kind=kind, days=days, region="", zones=[],
                    namer=lambda i: (f"karbon-vault-{hexof(s, 'k', n=6)}-k8s-worker-{i}",
                                     f"10.40.12.{101 + i}"),
                    labels=lambda i, n: {"nke.nutanix.com/nodepool": "worker",
                                         "node-role.kubernetes.io/node": ""},
                    provider=lambda i, n: f"nutanix://{uuid_of(s, 'ntnx', n)}",
                    cidr=lambda i: f"172.20.{i * 2}.0/23", first=first)
    if flavour == "microk8s":
        return pool(s, count, kind=kind, days=days, region="", zones=[],
                    namer=lambda i: (f"studio-node-{i + 1:02d}", f"10.8.0.{11 + i}"),
                    labels=lambda i, n: {"microk8s.io/cluster": "true",
                                         "node.kubernetes.io/microk8s-worker": "microk8s-worker"},
                    provider=lambda i, n: "", cidr=lambda i: f"10.1.{100 + i}.0/24",
                    first=first)
    if flavour == "eksa":
        return pool(s, count, kind=kind, days=days, region="", zones=[],
                    namer=lambda i: ("ops-md-0-" + hexof(s, "e", n=9) + "-"
                                     + hexof(s, "ee", str(i), n=5),
                                     f"10.60.3.{71 + i}"),
                    labels=lambda i, n: {"cluster.x-k8s.io/cluster-name": "ops",
                                         "anywhere.eks.amazonaws.com/version": "v0.20.4",
                                         "node.kubernetes.io/instance-type": "tinkerbell"},
                    provider=lambda i, n: f"tinkerbell://eksa-system/ops-{i + 1}",
                    cidr=lambda i: f"192.168.{i}.0/24", first=first)
    if flavour == "spot":
        return pool(s, count, kind=kind, days=days, region="us-east-iad-1", zones=[],
                    namer=lambda i: (f"prod-spot-{hexof(s, 'sp', str(i), n=8)}",
                                     f"10.0.{16 + i}.{5 + i}"),
                    labels=lambda i, n: {"ngpc.rxt.io/cloudspace": "prod-spot",
                                         "node.kubernetes.io/instance-type": kind.instance},
                    provider=lambda i, n: f"openstack:///{uuid_of(s, 'rxt', n)}",
                    cidr=lambda i: f"10.42.{i}.0/24", first=first)
    # sakura
    return pool(s, count, kind=kind, days=days, region="is1", zones=["is1a", "is1b"],
                namer=lambda i: (f"sks-prd-wk{i + 1:02d}", f"192.168.100.{21 + i}"),
                labels=lambda i, n: {"sakura.ad.jp/zone": "is1a" if i % 2 == 0 else "is1b",
                                     "node.kubernetes.io/instance-type": kind.instance},
                provider=lambda i, n: f"sakuracloud://{113600000000 + 1031 * i}",
                cidr=lambda i: f"10.96.{i}.0/24", first=first)


def cronjob(s: Story, ns: str, name: str, tpl: Template, *, schedule: str,
            created: datetime, last: datetime, history: tuple[int, int] = (3, 1)) -> Obj:
    c = s.cluster
    obj: Obj = {"apiVersion": "batch/v1", "kind": "CronJob",
                "metadata": c.meta("CronJob", name, ns, created,
                                   {"app.kubernetes.io/name": name}, generation=1),
                "spec": {"concurrencyPolicy": "Forbid", "failedJobsHistoryLimit": history[1],
                         "schedule": schedule, "startingDeadlineSeconds": 600,
                         "successfulJobsHistoryLimit": history[0], "suspend": False,
                         "timeZone": "Etc/UTC",
                         "jobTemplate": {"spec": {"backoffLimit": 4, "template": {
                             "metadata": {"labels": dict(tpl.labels)},
                             "spec": {**tpl.spec(), "restartPolicy": "Never"}}}}},
                "status": {"lastScheduleTime": iso(last)}}
    return c.add(obj)


def job(s: Story, cron: Obj, scheduled: datetime, tpl: Template) -> Workload:
    """A Job the CronJob created at `scheduled` (name suffix: minutes since the epoch)."""
    c = s.cluster
    ns = cron["metadata"]["namespace"]
    name = f"{cron['metadata']['name']}-{int(scheduled.timestamp() // 60)}"
    uid = c.uid("Job", ns, name)
    labels = {"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": name,
              "controller-uid": uid, "job-name": name}
    tpl.labels = {**tpl.labels, **labels}
    meta = c.meta("Job", name, ns, scheduled, dict(labels),
                  annotations={"batch.kubernetes.io/job-tracking": ""}, generation=1,
                  ownerReferences=[c.owner(cron)])
    spec = {**tpl.spec(), "restartPolicy": "Never"}
    obj: Obj = {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
                "spec": {"backoffLimit": 4, "completionMode": "NonIndexed", "completions": 1,
                         "manualSelector": False, "parallelism": 1, "podReplacementPolicy":
                         "TerminatingOrFailed", "selector": {"matchLabels": {
                             "batch.kubernetes.io/controller-uid": uid}}, "suspend": False,
                         "template": {"metadata": {"labels": dict(tpl.labels)}, "spec": spec}},
                "status": {}}
    c.add(obj)
    return Workload(obj, tpl, 1)


def never_restart(pods: Sequence[Obj]) -> None:
    for pod in pods:
        pod["spec"]["restartPolicy"] = "Never"


def node_ip(n: Obj) -> str:
    return str(n["status"]["addresses"][0]["address"])


def mins(t: datetime, m: float) -> datetime:
    return t + timedelta(minutes=m)


