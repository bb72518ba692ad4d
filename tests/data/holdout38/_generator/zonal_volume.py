"""Nimbus Analytics: the data pool in us-west-2c was removed, its volume was not.

A cost-saving change folded the three search-data node groups into two (2a and 2b). Last
night's removal drained opensearch-data-2, whose EBS volume lives in us-west-2c: the
recreated pod can go to no remaining node ("volume node affinity conflict") and stays
Pending; the autoscaler has no 2c group left to grow. The cluster is yellow with replicas
unassigned, and the rumour is a full disk.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout38._generator import kube as k
from tests.data.holdout38._generator.story import Story

NOW = datetime(2026, 11, 28, 8, 10, 0)
NS = "search"
APP = "opensearch-data"
IMAGE = "opensearchproject/opensearch:2.17.1"
REMOVED = NOW - timedelta(hours=9, minutes=24)
GONE_NODE = "ip-10-70-160-23.us-west-2.compute.internal"
SCHEDULING = ("0/7 nodes are available: 3 node(s) had untolerated taint {dedicated: ingest}, "
              "4 node(s) had volume node affinity conflict. preemption: 0/7 nodes are "
              "available: 7 Preemption is not helpful for scheduling.")
GI = 2**30
SPREAD = "preferredDuringSchedulingIgnoredDuringExecution"


def build() -> Story:
    story = Story(
        id="opensearch-data-volume-zone-removed",
        title="OpenSearch cluster yellow since last night, one data node missing",
        now=NOW,
        report="""
opensearch in the search namespace has been yellow since last night and search p95 is up
a bit. one data node is missing from _cat/nodes. someone in #infra said its EBS volume is
full? can you check before it goes red, the nightly reindex starts at 10:00
""",
        truth={"category": "unschedulable",
               "culprit": {"kind": "StatefulSet", "namespace": NS, "name": APP},
               "evidence": ["volume node affinity conflict", "data-opensearch-data-2"],
               "fix": "Bring back search-data capacity in us-west-2c (a node group there), or "
                      "move the replica off the 2c volume: snapshot it, delete claim "
                      "data-opensearch-data-2 and let the pod get a new volume in 2a/2b "
                      "(OpenSearch re-replicates the shards). The disk is not full."})
    made = NOW - timedelta(days=260)
    story.add(k.namespace(NS, made, {"team": "search-platform"}), k.namespace("default", made),
              k.namespace("kube-system", made))
    data_nodes = {"us-west-2a": ["ip-10-70-32-14.us-west-2.compute.internal",
                                 "ip-10-70-47-201.us-west-2.compute.internal"],
                  "us-west-2b": ["ip-10-70-98-7.us-west-2.compute.internal",
                                 "ip-10-70-101-66.us-west-2.compute.internal"]}
    ingest = [f"ip-10-70-{a}.us-west-2.compute.internal" for a in ("33-90", "99-140",
                                                                   "161-12")]
    for zone, names in data_nodes.items():
        for i, name in enumerate(names):
            story.add(k.node(name, NOW - timedelta(days=30 + 11 * i), cpu="7910m",
                             memory="61Gi", heartbeat=NOW - timedelta(seconds=19),
                             labels={"eks.amazonaws.com/nodegroup": f"search-data-{zone[-2:]}",
                                     "node.kubernetes.io/instance-type": "r6i.2xlarge",
                                     "topology.kubernetes.io/zone": zone,
                                     "topology.ebs.csi.aws.com/zone": zone,
                                     "nimbus.io/pool": "search-data"}))
    for i, name in enumerate(ingest):
        story.add(k.node(name, NOW - timedelta(days=30), cpu="3920m", memory="15Gi",
                         heartbeat=NOW - timedelta(seconds=8),
                         taints=[{"key": "dedicated", "value": "ingest", "effect": "NoSchedule"}],
                         labels={"eks.amazonaws.com/nodegroup": "ingest",
                                 "topology.kubernetes.io/zone": f"us-west-2{'abc'[i]}",
                                 "nimbus.io/pool": "ingest"}))
    node_list = [n for names in data_nodes.values() for n in names]

    opensearch = k.container(
        "opensearch", IMAGE, cpu="3", memory="24Gi", memory_limit="24Gi",
        ports=[{"containerPort": 9200, "name": "http"}, {"containerPort": 9300,
                                                         "name": "transport"}],
        env=[{"name": "OPENSEARCH_JAVA_OPTS", "value": "-Xms12g -Xmx12g"},
             {"name": "node.roles", "value": "data,ingest"},
             {"name": "cluster.routing.allocation.awareness.attributes", "value": "zone"}],
        readinessProbe={"tcpSocket": {"port": 9200}, "periodSeconds": 10, "timeoutSeconds": 3,
                        "failureThreshold": 3, "successThreshold": 1},
        volumeMounts=[{"name": "data", "mountPath": "/usr/share/opensearch/data"}])
    sts = k.workload(
        "StatefulSet", NS, APP, made, [opensearch], replicas=3,
        pod_spec={"nodeSelector": {"nimbus.io/pool": "search-data"},
                  "affinity": {"podAntiAffinity": {SPREAD: [{"weight": 100, "podAffinityTerm": {
                      "topologyKey": "topology.kubernetes.io/zone",
                      "labelSelector": {"matchLabels": {"app.kubernetes.io/name": APP}}}}]}}},
        serviceName="opensearch-data", podManagementPolicy="Parallel",
        updateStrategy={"type": "RollingUpdate"},
        volumeClaimTemplates=[{"metadata": {"name": "data"}, "spec": {
            "accessModes": ["ReadWriteOnce"], "storageClassName": "gp3-wffc",
            "resources": {"requests": {"storage": "500Gi"}}}}],
        status={"replicas": 3, "readyReplicas": 2, "currentReplicas": 3, "updatedReplicas": 3,
                "availableReplicas": 2, "currentRevision": f"{APP}-6c8d9f7b54",
                "updateRevision": f"{APP}-6c8d9f7b54", "observedGeneration": 4})
    story.add(sts)
    story.add({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
               "metadata": {"name": "gp3-wffc", "creationTimestamp": k.ts(made)},
               "provisioner": "ebs.csi.aws.com", "volumeBindingMode": "WaitForFirstConsumer",
               "reclaimPolicy": "Retain", "allowVolumeExpansion": True,
               "parameters": {"type": "gp3", "throughput": "250", "encrypted": "true"}})
    homes = [(node_list[0], "10.70.32.77"), (node_list[2], "10.70.98.140"), (None, None)]
    for ordinal, (host, ip) in enumerate(homes):
        name = f"{APP}-{ordinal}"
        claim = f"data-{name}"
        selected = host or GONE_NODE
        story.add({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                   "metadata": {"name": claim, "namespace": NS,
                                "creationTimestamp": k.ts(made + timedelta(minutes=ordinal)),
                                "labels": {"app.kubernetes.io/name": APP},
                                "annotations": {
                                    "pv.kubernetes.io/bind-completed": "yes",
                                    "volume.beta.kubernetes.io/storage-provisioner":
                                    "ebs.csi.aws.com",
                                    "volume.kubernetes.io/selected-node":
                                    selected if ordinal < 2 else GONE_NODE}},
                   "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "gp3-wffc",
                            "resources": {"requests": {"storage": "500Gi"}},
                            "volumeName": f"pvc-{k.uid('pv', claim)}", "volumeMode": "Filesystem"},
                   "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"],
                              "capacity": {"storage": "500Gi"}}})
        if host:
            started = NOW - timedelta(days=6, hours=ordinal)
            story.add(k.pod(sts, name, host, started, {"opensearch": k.running(
                started + timedelta(seconds=5))}, ip=ip, owner_kind="StatefulSet",
                qos="Burstable", containers=[opensearch]))
            story.objects[-1]["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {
                "claimName": claim}}]
            _data_logs(story, name)
            continue
        created = REMOVED + timedelta(seconds=48)
        pending = k.pod(sts, name, None, created, {}, phase="Pending", owner_kind="StatefulSet",
                        qos="Burstable", containers=[opensearch],
                        conditions=[{"type": "PodScheduled", "status": "False",
                                     "reason": "Unschedulable", "message": SCHEDULING,
                                     "lastTransitionTime": k.ts(created)}])
        pending["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {
            "claimName": claim}}]
        story.add(pending)
        story.add(k.event(NS, "Pod", name, "FailedScheduling", SCHEDULING,
                          NOW - timedelta(minutes=58), NOW - timedelta(minutes=1), count=61,
                          type_="Warning", component="default-scheduler"),
                  k.event(NS, "Pod", name, "NotTriggerScaleUp",
                          "pod didn't trigger scale-up: 1 node(s) had untolerated taint "
                          "{dedicated: ingest}, 2 node(s) had volume node affinity conflict",
                          NOW - timedelta(minutes=59), NOW - timedelta(minutes=2), count=57,
                          type_="Normal", component="cluster-autoscaler"))
    story.add(k.service(NS, APP, made, {"app.kubernetes.io/name": APP},
                        [{"name": "http", "port": 9200, "targetPort": 9200}], "None"),
              k.endpoints(NS, APP, [("10.70.32.77", f"{APP}-0", node_list[0]),
                                    ("10.70.98.140", f"{APP}-1", node_list[2])], [],
                          [{"name": "http", "port": 9200}]))
    story.objects[-2]["spec"]["clusterIP"] = "None"
    story.add(k.configmap("kube-system", "cluster-autoscaler-status", NOW - timedelta(days=90),
                          {"status": _autoscaler_status()},
                          {"cluster-autoscaler.kubernetes.io/last-updated":
                           f"{NOW - timedelta(seconds=9):%Y-%m-%d %H:%M:%S}.412983 +0000 UTC"}))
    _bystanders(story, made, node_list)
    _volume_metrics(story)
    return story


def _autoscaler_status() -> str:
    groups = [("eks-search-data-2a-64c5b0e1", 2, 2, 6), ("eks-search-data-2b-a2c5b0e1", 2, 2, 6),
              ("eks-ingest-1ac5b0e1", 3, 3, 6)]
    lines = [f"Cluster-autoscaler status at {NOW:%Y-%m-%d %H:%M:%S}.412983 +0000 UTC:",
             "Cluster-wide:", "  Health:      Healthy (ready=7 unready=0 notStarted=0 "
             "longNotStarted=0 registered=7 longUnregistered=0)",
             "  ScaleUp:     NoActivity (ready=7 registered=7)",
             "  ScaleDown:   NoCandidates (candidates=0)", "", "NodeGroups:"]
    for name, ready, target, top in groups:
        lines += [f"  Name:        {name}",
                  f"  Health:      Healthy (ready={ready} unready=0 notStarted=0 "
                  f"longNotStarted=0 registered={ready} longUnregistered=0 "
                  f"cloudProviderTarget={target} (minSize=1, maxSize={top}))",
                  "  ScaleUp:     NoActivity", "  ScaleDown:   NoCandidates (candidates=0)", ""]
    return "\n".join(lines)


def _data_logs(story: Story, pod: str) -> None:
    rng = story.rng

    def line(at: datetime, level: str, logger: str, text: str) -> tuple[datetime, str]:
        return at, (f"[{at:%Y-%m-%dT%H:%M:%S},{rng.randint(0, 999):03d}][{level:<5}]"
                    f"[{logger}] [{pod}] {text}")

    entries = [
        line(REMOVED + timedelta(seconds=31), "INFO", "o.o.c.s.ClusterApplierService",
             f"removed {{{{{APP}-2}}{{Xb3kQ1}}{{10.70.160.88:9300}}}}, term: 41, version: "
             "90211, reason: ApplyCommitRequest{term=41, version=90211, "
             "sourceNode={opensearch-master-1}}"),
        line(REMOVED + timedelta(seconds=32), "INFO", "o.o.c.r.a.AllocationService",
             "Cluster health status changed from [GREEN] to [YELLOW] (reason: "
             f"[{{{APP}-2}} left]).")]
    moment = NOW - timedelta(hours=10)
    while moment < NOW:
        shard = rng.randint(0, 5)
        entries.append(line(moment, "INFO", "o.o.i.s.IndexShard",
                            f"[logs-app-2026.11.28][{shard}] refresh took "
                            f"[{rng.randint(40, 600)}ms]"))
        if moment > REMOVED and rng.random() < 0.2:
            count = rng.randint(6, 9)
            entries.append(line(moment, "WARN", "o.o.c.r.DelayedAllocationService",
                                f"delayed allocation of [{count}] unassigned shards expired, "
                                f"[{count}] replica shards remain unassigned (NODE_LEFT)"))
        elif rng.random() < 0.1:
            entries.append(line(moment, "INFO", "o.o.m.j.JvmGcMonitorService",
                                f"[gc][{rng.randint(10000, 99999)}] overhead, spent "
                                f"[{rng.randint(200, 700)}ms] collecting in the last [1s]"))
        moment += timedelta(seconds=rng.randint(60, 240))
    entries.sort(key=lambda entry: entry[0])
    story.log(NS, pod, "opensearch", [text for _, text in entries])
    story.mirror(NS, pod, "opensearch", "opensearch")


def _bystanders(story: Story, made: datetime, nodes: list[str]) -> None:
    story.add(*k.healthy_deployment(
        NS, "search-api", "ghcr.io/nimbus-analytics/search-api:8.4.2", made,
        NOW - timedelta(days=3), nodes, ["10.70.33.201", "10.70.99.17", "10.70.47.9"],
        replicas=3, cpu="500m", memory="1Gi", port=8080, revision=52))
    story.add(*k.healthy_deployment(
        NS, "opensearch-dashboards", "opensearchproject/opensearch-dashboards:2.17.1", made,
        NOW - timedelta(days=6), nodes[1:2], ["10.70.47.150"], replicas=1, cpu="250m",
        memory="1Gi", port=5601, revision=6, probe_path="/api/status"))
    story.add(k.event(NS, "Pod", story.objects[-3]["metadata"]["name"], "Unhealthy",
                      "Readiness probe failed: HTTP probe failed with statuscode: 503",
                      NOW - timedelta(minutes=44), NOW - timedelta(minutes=42), count=3,
                      type_="Warning", host=nodes[1]))


def _volume_metrics(story: Story) -> None:
    for ordinal, used in ((0, 352.0), (1, 349.0)):
        labels = {"namespace": NS, "persistentvolumeclaim": f"data-{APP}-{ordinal}"}
        for at in story.steps(NOW - timedelta(hours=12), NOW, timedelta(minutes=5)):
            growth = 0.35 * (at - (NOW - timedelta(hours=12))).total_seconds() / 3600
            story.sample("kubelet_volume_stats_used_bytes", "gauge", labels, at,
                         (used + growth) * GI)
            story.sample("kubelet_volume_stats_capacity_bytes", "gauge", labels, at, 492 * GI)
