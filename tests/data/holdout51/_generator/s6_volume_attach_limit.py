"""The stateful node pool is at its VM size's data-disk limit; new OpenSearch replicas wait."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ._kit import (
    PState,
    Story,
    Workload,
    access,
    ctr,
    deployment,
    event,
    fix_host_ips,
    http_probe,
    meta,
    namespace,
    node,
    platform,
    service,
    statefulset,
)

SID = "opensearch-scaleup-stuck-pending"
NOW = "2026-07-09T11:50:00Z"
SUB = "/subscriptions/6f1c2a7e-90d4-4b1e-8c55-2b9e3f10a7d1/resourceGroups/mc_prod_weu"
SCALE_AT = 34.0
SCHED = ("0/7 nodes are available: 3 node(s) exceed max volume count, 4 node(s) didn't match "
         "Pod's node affinity/selector. preemption: 0/7 nodes are available: 3 No preemption "
         "victims found for incoming pod, 4 Preemption is not helpful for scheduling.")


def _aks(n: dict[str, Any], pool: str, idx: int) -> None:
    n["spec"]["providerID"] = (f"azure://{SUB}/providers/Microsoft.Compute/"
                               f"virtualMachineScaleSets/aks-{pool}-38112740-vmss/"
                               f"virtualMachines/{idx}")
    n["metadata"]["labels"].update({"agentpool": pool, "kubernetes.azure.com/agentpool": pool,
                                    "kubernetes.azure.com/cluster": "mc_prod_weu"})
    n["status"]["nodeInfo"].update({"kernelVersion": "5.15.0-1071-azure",
                                    "osImage": "Ubuntu 22.04.5 LTS",
                                    "containerRuntimeVersion": "containerd://1.7.20-1",
                                    "kubeletVersion": "v1.30.5", "kubeProxyVersion": "v1.30.5"})


def _pvc(st: Story, ns: str, name: str, size: str, bound: bool, created_min: float) -> str:
    vol = f"pvc-{st.uid('PersistentVolumeClaim', ns, name)}"
    obj: dict[str, Any] = {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": meta(st, "PersistentVolumeClaim", name, ns, created=st.ts(created_min),
                         annotations={"volume.kubernetes.io/selected-node":
                                      "aks-stateful-38112740-vmss000000"} if bound else None),
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "managed-csi-premium",
                 "resources": {"requests": {"storage": size}}, "volumeMode": "Filesystem"},
        "status": {"phase": "Bound" if bound else "Pending"}}
    if bound:
        obj["spec"]["volumeName"] = vol
        obj["status"].update({"accessModes": ["ReadWriteOnce"], "capacity": {"storage": size}})
    else:
        obj["metadata"].pop("annotations", None)
    st.add(obj)
    return vol


def build(root: Path) -> None:
    st = Story(SID, NOW, 5106)
    stateful = [f"aks-stateful-38112740-vmss00000{i}" for i in range(3)]
    general = [f"aks-general-21907733-vmss00000{i}" for i in range(4)]
    taint = [{"key": "workload", "value": "stateful", "effect": "NoSchedule"}]
    nobjs = []
    for i, n in enumerate(stateful):
        o = node(st, n, zone=f"westeurope-{i + 1}", itype="Standard_D4s_v5", cpu="4",
                 mem="16364Mi", age_days=40, labels={"workload": "stateful"}, taints=taint,
                 ip=f"10.224.1.{10 + i}")
        _aks(o, "stateful", i)
        nobjs.append(o)
    for i, n in enumerate(general):
        o = node(st, n, zone=f"westeurope-{i % 3 + 1}", itype="Standard_D8s_v5", cpu="8",
                 mem="32864Mi", age_days=12, ip=f"10.224.0.{20 + i}")
        _aks(o, "general", i)
        nobjs.append(o)
    st.add(*nobjs)
    platform(st, general, busy=0.3)
    for ns in ("search", "streaming", "observability", "analytics", "web"):
        st.add(namespace(st, ns))
    st.add({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": meta(st, "StorageClass", "managed-csi-premium", None,
                             created=st.ts(500 * 1440)),
            "provisioner": "disk.csi.azure.com", "parameters": {"skuName": "Premium_LRS"},
            "reclaimPolicy": "Delete", "volumeBindingMode": "WaitForFirstConsumer",
            "allowVolumeExpansion": True})

    sel = {"nodeSelector": {"workload": "stateful"},
           "tolerations": [{"key": "workload", "operator": "Equal", "value": "stateful",
                            "effect": "NoSchedule"}]}
    per_node: dict[str, list[str]] = {n: [] for n in stateful}

    def stateful_set(ns: str, name: str, image: str, claims: list[tuple[str, str]],
                     port: int, replicas: int = 3, states: list[PState] | None = None,
                     created: list[float] | None = None) -> Workload:
        w = statefulset(st, ns, name, [ctr(name.split("-")[0], image, port=port, cpu="500m",
                                           mem="2Gi", mem_limit="4Gi",
                                           readiness=http_probe("/", port, 10, 3))],
                        stateful, replicas=replicas, claim=claims[0][0], storage=claims[0][1],
                        storage_class="managed-csi-premium", spec_extra=sel, states=states,
                        pod_created_min=created)
        sts = w.objects[0]
        for cname, size in claims[1:]:
            tmpl = dict(sts["spec"]["volumeClaimTemplates"][0])
            tmpl = {**tmpl, "metadata": {"name": cname},
                    "spec": {**tmpl["spec"], "resources": {"requests": {"storage": size}}}}
            sts["spec"]["volumeClaimTemplates"].append(tmpl)
        for i, pod in enumerate(w.objects[1:]):
            pod["spec"]["volumes"] = [{"name": c, "persistentVolumeClaim": {
                "claimName": f"{c}-{pod['metadata']['name']}"}} for c, _ in claims]
            bound = pod["status"]["phase"] == "Running"
            for c, size in claims:
                vol = _pvc(st, ns, f"{c}-{pod['metadata']['name']}", size, bound,
                           SCALE_AT if not bound else 30 * 1440)
                if bound:
                    per_node[stateful[i % 3]].append(vol)
        return w

    states = [PState(), PState(), PState(),
              PState(phase="Pending", scheduled=False, unschedulable=SCHED),
              PState(phase="Pending", scheduled=False, unschedulable=SCHED)]
    osd = stateful_set("search", "opensearch-data", "opensearchproject/opensearch:2.15.0",
                       [("data", "512Gi")], 9200, replicas=5, states=states,
                       created=[20 * 1440, 20 * 1440, 20 * 1440, SCALE_AT, SCALE_AT])
    osd.objects[0]["status"].update({"replicas": 5, "readyReplicas": 3, "availableReplicas": 3,
                                     "currentReplicas": 5, "updatedReplicas": 5})
    osm = stateful_set("search", "opensearch-master", "opensearchproject/opensearch:2.15.0",
                       [("data", "16Gi")], 9200)
    kafka = stateful_set("streaming", "kafka", "bitnami/kafka:3.7.1",
                         [("log-dir-0", "256Gi"), ("log-dir-1", "256Gi")], 9092)
    zk = stateful_set("streaming", "zookeeper", "bitnami/zookeeper:3.9.2", [("data", "8Gi")],
                      2181)
    loki = stateful_set("observability", "loki-ingester", "grafana/loki:3.1.1",
                        [("wal", "50Gi")], 3100)
    tempo = stateful_set("observability", "tempo-ingester", "grafana/tempo:2.5.0",
                         [("data", "50Gi")], 3200)
    ch = stateful_set("analytics", "clickhouse", "clickhouse/clickhouse-server:24.6",
                      [("data", "200Gi")], 8123)
    for o in nobjs[:3]:
        vols = per_node[o["metadata"]["name"]]
        names = [f"kubernetes.io/csi/disk.csi.azure.com^{SUB}/providers/Microsoft.Compute/"
                 f"disks/{v}" for v in vols]
        o["status"]["volumesAttached"] = [{"name": n, "devicePath": ""} for n in names]
        o["status"]["volumesInUse"] = names
    service(st, "search", "opensearch", {"app.kubernetes.io/name": "opensearch-data"}, 9200,
            9200, pods=osd.pods[:3])
    for p in osd.pods[3:]:
        event(st, "search", "Pod", p.name, "FailedScheduling", SCHED, type_="Warning",
              count=22, first_min=SCALE_AT, last_min=1.5, component="default-scheduler")
        event(st, "search", "PersistentVolumeClaim", f"data-{p.name}", "WaitForFirstConsumer",
              "waiting for first consumer to be created before binding", count=137,
              first_min=SCALE_AT, last_min=0.2, component="persistentvolume-controller")
        event(st, "search", "StatefulSet", "opensearch-data", "SuccessfulCreate",
              f"create Pod {p.name} in StatefulSet opensearch-data successful",
              first_min=SCALE_AT, component="statefulset-controller", api="apps/v1")
        event(st, "search", "StatefulSet", "opensearch-data", "SuccessfulCreate",
              f"create Claim data-{p.name} Pod {p.name} in StatefulSet opensearch-data "
              "success", first_min=SCALE_AT, component="statefulset-controller",
              api="apps/v1")
        event(st, "search", "Pod", p.name, "NotTriggerScaleUp",
              "pod didn't trigger scale-up: 1 max node group size reached, 1 node(s) didn't "
              "match Pod's node affinity/selector", count=18, first_min=SCALE_AT - 1,
              last_min=3, component="cluster-autoscaler")

    st.chatter(osd.pods[:3], lambda r: (
        "info", f"[INFO ][o.o.i.s.IndexShard] [{r.choice(osd.pods[:3]).name}] "
                f"[logs-2026.07.09][{r.randint(0, 11)}] primary-replica resync completed with "
                f"{r.randint(0, 40)} operations"), every_s=200)
    st.log(st.at(SCALE_AT - 2), osd.pods[0], "info",
           "[INFO ][o.o.c.m.MetadataUpdateSettingsService] [opensearch-data-0] updating "
           "number_of_replicas to [2] for indices [logs-2026.07.09, traces-2026.07.09]")
    st.log(st.at(SCALE_AT - 1.9), osd.pods[0], "warn",
           "[WARN ][o.o.c.r.a.AllocationService] [opensearch-data-0] Cluster health status "
           "changed from [GREEN] to [YELLOW] (reason: [settings updated]).")
    st.chatter(osd.pods[:3], lambda r: (
        "warn", "[WARN ][o.o.c.r.a.DiskThresholdMonitor] [opensearch-data-1] high disk "
                "watermark [90%] exceeded on [opensearch-data-1][/usr/share/opensearch/data]"
                " free: 48.2gb[9.4%], shards will be relocated away from this node"),
        every_s=600)
    st.chatter(kafka.pods, lambda r: ("info", f"[2026-07-09] INFO [LocalLog partition=events-"
                                              f"{r.randint(0, 23)}] Rolled new log segment "
                                              "(kafka.log.LocalLog)"), every_s=180)
    web = deployment(st, "web", "portal",
                     [ctr("portal", "acr.example.io/portal:8.3.0", cpu="200m", mem="256Mi",
                          readiness=http_probe("/healthz"))], general, age_days=200,
                     revision=90, rollout_min=52)
    event(st, "web", "Deployment", "portal", "ScalingReplicaSet",
          f"Scaled up replica set {web.objects[1]['metadata']['name']} to 4 from 3",
          first_min=52, component="deployment-controller", api="apps/v1")
    st.chatter(web.pods, access(["/", "/account", "/search?q=invoice"], "portal", 40),
               every_s=30)

    # metrics
    for w in (osd, osm, kafka, zk, loki, tempo, ch):
        for p in w.pods:
            if p.node:
                st.pod_metrics(p, cpu=0.3, mem_mib=1500)
    for p in web.pods:
        st.pod_metrics(p, cpu=0.1, mem_mib=200)
    for n in stateful:
        st.node_metrics(n, busy=0.22, used=0.41)
    for p in osd.pods[3:]:
        st.gauge("kube_pod_status_phase", "The pods current phase.",
                 {"namespace": "search", "pod": p.name, "phase": "Pending"},
                 lambda m: 1 if m < SCALE_AT else 0)
        st.gauge("kube_persistentvolumeclaim_status_phase",
                 "The phase the persistent volume claim is currently in.",
                 {"namespace": "search", "persistentvolumeclaim": f"data-{p.name}",
                  "phase": "Pending"}, lambda m: 1 if m < SCALE_AT else 0)
    st.gauge("kube_statefulset_replicas", "Number of desired pods for a StatefulSet.",
             {"namespace": "search", "statefulset": "opensearch-data"},
             lambda m: 5 if m < SCALE_AT else 3)
    st.gauge("kube_statefulset_status_replicas_ready",
             "The number of ready replicas per StatefulSet.",
             {"namespace": "search", "statefulset": "opensearch-data"}, lambda m: 3)
    st.gauge("elasticsearch_cluster_health_unassigned_shards",
             "The number of shards that are not allocated.", {"cluster": "search-prod"},
             lambda m: 96 if m < SCALE_AT - 2 else 0)
    for color in ("green", "yellow", "red"):
        st.gauge("elasticsearch_cluster_health_status",
                 "Whether all primary and replica shards are allocated.",
                 {"cluster": "search-prod", "color": color},
                 lambda m, c=color: (1 if c == "yellow" else 0) if m < SCALE_AT - 2
                 else (1 if c == "green" else 0))
    fix_host_ips(st.objects)
    st.write(root, "OpenSearch scale-up stuck, new data nodes Pending",
             "scaled opensearch-data from 3 to 5 half an hour ago for the disk watermark "
             "alerts, the two new\npods are still Pending and their PVCs are Pending too. Is "
             "the storage class / Azure disk\nprovisioning broken? Cluster is yellow.\n",
             {"category": "unschedulable",
              "culprit": {"kind": "StatefulSet", "namespace": "search",
                          "name": "opensearch-data"},
              "evidence": ["exceed max volume count", "Standard_D4s_v5",
                           "waiting for first consumer to be created before binding"],
              "fix": "The three stateful nodes (Standard_D4s_v5, 8 data disks each) already "
                     "hold 8 disks apiece; add nodes to the stateful pool or move it to a VM "
                     "size with more data disks (e.g. Standard_D8s_v5, 16), or let "
                     "opensearch-data schedule elsewhere. The storage class is fine."})
