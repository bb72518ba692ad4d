"""A StatefulSet scaled from 3 to 5 replicas: the new ordinal's claim names a StorageClass
that a storage clean-up deleted last week (the bound volumes of the old ordinals kept
working), so it is never provisioned and the pod stays Pending; OrderedReady holds back
the next one. Elsewhere a batch Deployment is Pending too, for want of CPU in its small
node pool: a louder, unrelated Pending.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from tests.data.holdout29._generator.common import (
    Obj,
    Scenario,
    cond,
    container,
    deployment,
    event,
    healthy,
    http_probe,
    iso,
    meta,
    namespace,
    node,
    pod,
    pod_ip,
    replicaset,
    resources,
    rs_hash,
    running,
    service,
    suffix,
    template,
)

NOW = "2026-03-17T15:50:00Z"
NS = "analytics"
STS = "clickhouse"
SC_NAME = "gp3-encrypted-retain"


def pvc(sc: Scenario, name: str, created_days: float, bound: bool) -> Obj:
    created = sc.ago(days=created_days)
    spec: Obj = {"accessModes": ["ReadWriteOnce"], "storageClassName": SC_NAME,
                 "resources": {"requests": {"storage": "500Gi"}}, "volumeMode": "Filesystem"}
    status: Obj = {"phase": "Pending"}
    annotations = {}
    if bound:
        spec["volumeName"] = "pvc-" + suffix(name, 8) + "-4e1b-9a77-" + suffix(name + "v", 12)
        status = {"phase": "Bound", "accessModes": ["ReadWriteOnce"],
                  "capacity": {"storage": "500Gi"}}
        annotations = {"pv.kubernetes.io/bind-completed": "yes",
                       "pv.kubernetes.io/bound-by-controller": "yes",
                       "volume.kubernetes.io/storage-provisioner": "ebs.csi.aws.com"}
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": meta("PersistentVolumeClaim", name, NS, created,
                             {"app": STS}, annotations or None),
            "spec": spec, "status": status}


def build() -> Path:
    sc = Scenario("clickhouse-scale-out-stuck", NOW)
    old = sc.ago(days=300)
    general = [f"ip-10-1-{a}.eu-central-1.compute.internal"
               for a in ("4-21", "5-133", "6-12", "4-190", "6-77")]
    batch = [f"ip-10-1-{a}.eu-central-1.compute.internal" for a in ("8-40", "9-6")]
    for i, name in enumerate(general):
        sc.add(node(name, sc.ago(days=30 + i), "general-r6i", "8", "65023560Ki",
                    sc.ago(seconds=9), zone=f"eu-central-1{'abc'[i % 3]}",
                    instance="r6i.2xlarge"))
    for i, name in enumerate(batch):
        sc.add(node(name, sc.ago(days=9 + i), "batch-small", "2", "3933456Ki",
                    sc.ago(seconds=11), zone=f"eu-central-1{'ab'[i]}", instance="c6i.large",
                    taints=[{"key": "workload", "value": "batch", "effect": "NoSchedule"}],
                    allocatable={"cpu": "1930m", "memory": "3364112Ki", "pods": "29",
                                 "ephemeral-storage": "95551679124"}))
    for ns in (NS, "batch", "web", "kube-system"):
        sc.add(namespace(ns, old))

    for name, default, kind in (("gp2", True, "kubernetes.io/aws-ebs"),
                                ("gp3", False, "ebs.csi.aws.com"),
                                ("gp3-retain", False, "ebs.csi.aws.com")):
        annotations = {"storageclass.kubernetes.io/is-default-class": "true"} if default else None
        obj: Obj = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                    "metadata": meta("StorageClass", name, None, sc.ago(days=10 if
                                                                          name == "gp3-retain"
                                                                          else 400),
                                     annotations=annotations),
                    "provisioner": kind, "reclaimPolicy": "Retain" if "retain" in name
                    else "Delete", "volumeBindingMode": "WaitForFirstConsumer",
                    "allowVolumeExpansion": True}
        if kind == "ebs.csi.aws.com":
            obj["parameters"] = {"type": "gp3", "encrypted": "true"}
        sc.add(obj)

    labels = {"app": STS, "app.kubernetes.io/part-of": "analytics"}
    c = container("clickhouse", "clickhouse/clickhouse-server:24.3.2.23",
                  resources("3", "24Gi", None, "28Gi"), 8123,
                  volumeMounts=[{"name": "data", "mountPath": "/var/lib/clickhouse"}],
                  readinessProbe=http_probe("/ping", 8123, period=10))
    tmpl = template(labels, [c], serviceAccountName="clickhouse",
                    affinity={"podAntiAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {"weight": 100, "podAffinityTerm": {
                                "topologyKey": "kubernetes.io/hostname",
                                "labelSelector": {"matchLabels": {"app": STS}}}}]}})
    scaled = sc.ago(minutes=38)
    revision = f"{STS}-{rs_hash('ch7')}"
    sc.add({"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {**meta("StatefulSet", STS, NS, sc.ago(days=212), labels),
                         "generation": 9},
            "spec": {"replicas": 5, "serviceName": f"{STS}-headless",
                     "podManagementPolicy": "OrderedReady",
                     "selector": {"matchLabels": labels}, "template": tmpl,
                     "updateStrategy": {"type": "RollingUpdate",
                                        "rollingUpdate": {"partition": 0}},
                     "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain",
                                                              "whenScaled": "Retain"},
                     "volumeClaimTemplates": [{
                         "apiVersion": "v1", "kind": "PersistentVolumeClaim",
                         "metadata": {"name": "data"},
                         "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": SC_NAME,
                                  "resources": {"requests": {"storage": "500Gi"}},
                                  "volumeMode": "Filesystem"}}]},
            "status": {"observedGeneration": 9, "replicas": 4, "readyReplicas": 3,
                       "currentReplicas": 4, "updatedReplicas": 4, "availableReplicas": 3,
                       "currentRevision": revision, "updateRevision": revision,
                       "collisionCount": 0}})
    for i in range(4):
        name = f"{STS}-{i}"
        sc.add(pvc(sc, f"data-{name}", 212 - i * 0.01 if i < 3 else 38 / 1440, i < 3))
        extra = {"statefulset.kubernetes.io/pod-name": name,
                 "controller-revision-hash": revision, "apps.kubernetes.io/pod-index": str(i)}
        if i < 3:
            started = sc.ago(days=4, hours=2, minutes=i * 6)
            sc.add(pod(NS, name, started, tmpl, general[i], [
                {"name": "clickhouse", **running(started + timedelta(seconds=40))}],
                ("StatefulSet", STS), ip=pod_ip(name), extra_labels=extra))
        else:
            sc.add(pod(NS, name, scaled + timedelta(seconds=2), tmpl, None, None,
                       ("StatefulSet", STS), phase="Pending", extra_labels=extra,
                       conditions=[cond("PodScheduled", "False", "Unschedulable",
                                        "0/7 nodes are available: pod has unbound immediate "
                                        "PersistentVolumeClaims. preemption: 0/7 nodes are "
                                        "available: 7 Preemption is not helpful for "
                                        "scheduling.", scaled + timedelta(seconds=2),
                                        probe=True)]))
    sc.add(service(NS, f"{STS}-headless", sc.ago(days=212), labels, 8123, 8123,
                   cluster_ip="None"))
    sc.add(service(NS, STS, sc.ago(days=212), labels, 8123, 8123))

    # Bystanders: the query API in front of ClickHouse, and web.
    api_pods = healthy(sc, NS, "analytics-api", "registry.corp/analytics/api:5.12.0", 3,
                       general, resources("500m", "1Gi", "2", "2Gi"), sc.ago(days=200),
                       revision=63, rollout_at=sc.ago(days=1, hours=20))
    healthy(sc, "web", "dashboard", "registry.corp/web/dashboard:2026.03.2", 2, general[2:],
            resources("200m", "256Mi", "1", "512Mi"), sc.ago(days=260), revision=88,
            rollout_at=sc.ago(days=2, hours=4))

    # The decoy: a batch renderer scaled for a backlog, with no CPU left in its pool.
    blabels = {"app": "pdf-renderer"}
    btmpl = template(blabels, [container(
        "renderer", "registry.corp/batch/pdf-renderer:3.1.4",
        resources("750m", "1Gi", "1500m", "1536Mi"), 8080)],
        nodeSelector={"eks.amazonaws.com/nodegroup": "batch-small"},
        tolerations=[{"key": "workload", "operator": "Equal", "value": "batch",
                      "effect": "NoSchedule"}])
    bhash = rs_hash("pdf-renderer-21")
    scaled_b = sc.ago(minutes=52)
    sc.add(deployment("batch", "pdf-renderer", sc.ago(days=90), btmpl, 6, 21, status={
        "observedGeneration": 40, "replicas": 6, "updatedReplicas": 6, "readyReplicas": 2,
        "availableReplicas": 2, "unavailableReplicas": 4,
        "conditions": [cond("Available", "False", "MinimumReplicasUnavailable",
                            "Deployment does not have minimum availability.", scaled_b),
                       cond("Progressing", "True", "NewReplicaSetAvailable",
                            f'ReplicaSet "pdf-renderer-{bhash}" has successfully progressed.',
                            sc.ago(days=5))]}))
    sc.add(replicaset("batch", "pdf-renderer", bhash, sc.ago(days=5), btmpl, 6, 21, ready=2))
    sc.add({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": meta("HorizontalPodAutoscaler", "pdf-renderer", "batch",
                             sc.ago(days=90), api="autoscaling/v2"),
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                        "name": "pdf-renderer"},
                     "minReplicas": 2, "maxReplicas": 6,
                     "metrics": [{"type": "External", "external": {
                         "metric": {"name": "sqs_queue_depth",
                                    "selector": {"matchLabels": {"queue": "pdf-jobs"}}},
                         "target": {"type": "AverageValue", "averageValue": "50"}}}]},
            "status": {"currentReplicas": 6, "desiredReplicas": 6,
                       "lastScaleTime": iso(scaled_b),
                       "currentMetrics": [{"type": "External", "external": {
                           "metric": {"name": "sqs_queue_depth"},
                           "current": {"averageValue": "412"}}}],
                       "conditions": [
                           cond("AbleToScale", "True", "ReadyForNewScale",
                                "recommended size matches current size", scaled_b),
                           cond("ScalingActive", "True", "ValidMetricFound",
                                "the HPA was able to successfully calculate a replica count "
                                "from external metric sqs_queue_depth", sc.ago(days=5)),
                           cond("ScalingLimited", "True", "TooManyReplicas",
                                "the desired replica count is more than the maximum replica "
                                "count", scaled_b)]}})
    bmsg = ("0/7 nodes are available: 2 Insufficient cpu, 5 node(s) didn't match Pod's node "
            "affinity/selector. preemption: 0/7 nodes are available: 2 No preemption victims "
            "found for incoming pod, 5 Preemption is not helpful for scheduling.")
    for i in range(6):
        pname = f"pdf-renderer-{bhash}-{suffix('pdf' + str(i))}"
        extra = {"pod-template-hash": bhash}
        if i < 2:
            started = sc.ago(days=5) + timedelta(seconds=30 * i)
            sc.add(pod("batch", pname, started, btmpl, batch[i], [
                {"name": "renderer", **running(started + timedelta(seconds=15))}],
                ("ReplicaSet", f"pdf-renderer-{bhash}"), ip=pod_ip(pname), extra_labels=extra))
            continue
        sc.add(pod("batch", pname, scaled_b, btmpl, None, None,
                   ("ReplicaSet", f"pdf-renderer-{bhash}"), phase="Pending", extra_labels=extra,
                   conditions=[cond("PodScheduled", "False", "Unschedulable", bmsg, scaled_b,
                                    probe=True)]))
        sc.add(event("batch", "Pod", pname, "FailedScheduling", bmsg, scaled_b,
                     sc.ago(minutes=3 + i), count=9 + i, type_="Warning",
                     component="default-scheduler"))
    sc.add(event("batch", "HorizontalPodAutoscaler", "pdf-renderer", "SuccessfulRescale",
                 "New size: 6; reason: external metric sqs_queue_depth(&LabelSelector{"
                 "MatchLabels:map[string]string{queue: pdf-jobs,},MatchExpressions:[]"
                 "LabelSelectorRequirement{},}) above target", scaled_b,
                 component="horizontal-pod-autoscaler", api="autoscaling/v2"))

    # Events of the scale-out.
    sc.add(event(NS, "StatefulSet", STS, "SuccessfulCreate",
                 f"create Claim data-{STS}-3 Pod {STS}-3 in StatefulSet {STS} success", scaled,
                 component="statefulset-controller", api="apps/v1"))
    sc.add(event(NS, "StatefulSet", STS, "SuccessfulCreate",
                 f"create Pod {STS}-3 in StatefulSet {STS} successful", scaled + timedelta(
                     seconds=1), component="statefulset-controller", api="apps/v1"))
    sc.add(event(NS, "PersistentVolumeClaim", f"data-{STS}-3", "ProvisioningFailed",
                 f'storageclass.storage.k8s.io "{SC_NAME}" not found', scaled + timedelta(
                     seconds=2), sc.ago(minutes=1, seconds=12), count=152, type_="Warning",
                 component="persistentvolume-controller"))
    sc.add(event(NS, "Pod", f"{STS}-3", "FailedScheduling",
                 "0/7 nodes are available: pod has unbound immediate PersistentVolumeClaims. "
                 "preemption: 0/7 nodes are available: 7 Preemption is not helpful for "
                 "scheduling.", scaled + timedelta(seconds=2), sc.ago(minutes=4), count=8,
                 type_="Warning", component="default-scheduler"))
    sc.add(event(NS, "Pod", f"{STS}-1", "Unhealthy",
                 "Readiness probe failed: Get \"http://{}:8123/ping\": context deadline "
                 "exceeded (Client.Timeout exceeded while awaiting headers)".format(
                     pod_ip(f"{STS}-1")), sc.ago(minutes=17), sc.ago(minutes=16), count=2,
                 type_="Warning", host=general[1], field="spec.containers{clickhouse}"))
    sc.add(event("kube-system", "Node", general[3], "NodeSysctlChange",
                 "{\"unmanaged\": {\"net.ipv4.tcp_rmem\": \"4096 131072 6291456\"}}",
                 sc.ago(minutes=44), type_="Warning", component="sysctl-monitor",
                 host=general[3]))

    # Logs: the analytics API sees slow queries on the three old shards.
    for i in range(0, 180, 2):
        at = sc.ago(minutes=180 - i)
        p = api_pods[i % 3]
        slow = at > scaled - timedelta(minutes=90)
        ms = 900 + (i % 17) * 140 if slow else 180 + (i % 11) * 20
        sc.log(at, "analytics-api", NS, p, "info",
               f"query dashboard_sessions_by_country shard=all took {ms}ms rows=18244")
        if slow and i % 6 == 0:
            sc.log(at + timedelta(seconds=20), "analytics-api", NS, p, "warn",
                   f"clickhouse: Code: 241. DB::Exception: Memory limit (for query) exceeded "
                   f"on {STS}-{i % 3}: would use 9.31 GiB, maximum: 9.31 GiB; falling back to "
                   "sampled query")
    for i in range(0, 30, 3):
        at = scaled + timedelta(minutes=i)
        sc.log(at, "analytics-api", NS, api_pods[0], "warn",
               f"shard map: expected 5 replicas of {STS}, 3 reachable "
               f"({STS}-3.{STS}-headless: no such host)")
    sc.pod_log(NS, f"{STS}-0", "clickhouse", [
        f"{iso(sc.ago(minutes=m))} <Information> executeQuery: Read 18244 rows, 1.21 GiB in "
        f"{0.8 + m % 7 / 5:.3f} sec." for m in range(90, 0, -6)])

    return sc.write({
        "title": "ClickHouse scale-out never finished; pending pods across the cluster",
        "report": "we scaled clickhouse from 3 to 5 ~40 min ago for the quarter-end dashboards "
                  "and the new shards never came up, dashboards are crawling. I also see a "
                  "bunch of pending pods in batch. are we out of capacity? should we add "
                  "nodes?\n",
        "truth": {"category": "unschedulable",
                  "culprit": {"kind": "StatefulSet", "namespace": NS, "name": STS},
                  "evidence": ["ProvisioningFailed",
                               f'storageclass.storage.k8s.io "{SC_NAME}" not found',
                               "pod has unbound immediate PersistentVolumeClaims"],
                  "fix": f"Recreate the StorageClass {SC_NAME} (ebs.csi.aws.com, gp3, "
                         "encrypted, Retain) or point the claim data-clickhouse-3 at an "
                         "existing class; the volumeClaimTemplate of clickhouse names a class "
                         "that no longer exists. The batch pool's CPU shortage is unrelated."},
    })
